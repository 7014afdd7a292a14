/* jemalloc_call.c — mallctl called through gdb at a safe point (jemalloc_call.h). */
#include "session/jemalloc_call.h"

#include "session/probes.h"
#include "session/session_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How deep a stack is searched for a jemalloc frame: mallctl's own locks
 * are taken within a few frames of the allocator's entry point. */
enum { SAFE_POINT_FRAMES = 64, SAFE_POINT_TRIES = 50 };

/* After the stub, what the calls read: each call's name (NAME_BYTES a
 * call), each one's value written (newp, 8 bytes a call), the dump's
 * path; after the mark, what they write: each one's value read (oldp) and
 * its length (oldlenp), 16 bytes a call. */
enum { NAME_BYTES = 32, AT_NEW = NAME_BYTES * TARGET_CALL_MAX_CALLS, NEW_BYTES = 8,
       AT_PATH = AT_NEW + NEW_BYTES * TARGET_CALL_MAX_CALLS, OLD_BYTES = 16 };
_Static_assert(TARGET_CALL_STUB_BYTES + AT_PATH + JEMALLOC_CALL_PATH_BYTES <= JEMALLOC_CALL_CODE_BYTES,
	       "the path fits after the stub");
_Static_assert(TARGET_CALL_MARK_BYTES + OLD_BYTES * TARGET_CALL_MAX_CALLS <= JEMALLOC_CALL_DATA_BYTES,
	       "the buffers fit");

/* How long a call may take: a dump writes every sampled stack. */
enum { CALL_MS = 3000, DUMP_MS = 30000 };

const char *jemalloc_state_text(enum jemalloc_state state)
{
	switch (state) {
	case JEMALLOC_ABSENT:
		return "the allocator is not jemalloc (no mallctl)";
	case JEMALLOC_NO_PROFILING:
		return "jemalloc was built without profiling (config.prof is false)";
	case JEMALLOC_PROF_OFF:
		return "jemalloc's profiling is off (opt.prof: start the program with MALLOC_CONF=prof:true)";
	case JEMALLOC_PROF_INACTIVE:
		return "jemalloc's profiling is on but inactive (prof.active is false): nothing is sampled";
	case JEMALLOC_PROF_ACTIVE:
		return "jemalloc is profiling";
	}
	return "?";
}

static bool jemalloc_frame(const struct gdb_frame *f)
{
	static const char *const entries[] = { "malloc", "calloc", "realloc", "free", "mallocx", "rallocx",
		"xallocx", "sdallocx", "dallocx", "nallocx", "posix_memalign", "aligned_alloc", "memalign",
		"valloc", "malloc_usable_size", "mallctl", "mallctlbymib", "mallctlnametomib" };
	if (f->library && strstr(f->library, "libjemalloc"))
		return true;
	const char *name = f->function;
	if (!name)
		return false;
	if (strncmp(name, "_rjem_", 6) == 0 || strncmp(name, "je_", 3) == 0)
		return true;
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
		if (strcmp(name, entries[i]) == 0)
			return true;
	return false;
}

/* 0 when no thread has a jemalloc frame and one can be sent through the
 * stub (*call_thread: its gdb id), 1 with the reason in e when not, -1
 * with e on failure. */
static int check_threads(struct session *s, const struct jemalloc_hooks *hooks, struct target_call *call,
			 int *call_thread, struct xerr *e)
{
	struct session_thread *threads = NULL;
	size_t n = 0;
	if (session_threads(s, &threads, &n, e) < 0)
		return -1;
	if (n == 0) {
		free(threads);
		return xerr_set(e, "the target has no threads to call jemalloc from");
	}
	*call_thread = -1;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct gdb_frame *frames = NULL;
		size_t nframes = 0;
		if (session_thread_frames(s, threads[i].gdb_id, SAFE_POINT_FRAMES, &frames, &nframes, e) < 0) {
			rc = -1;
			break;
		}
		for (size_t f = 0; f < nframes; f++)
			if (hooks && hooks->in_jemalloc ? hooks->in_jemalloc(hooks->ctx, frames[f].pc)
							 : jemalloc_frame(&frames[f])) {
				xerr_set(e, "thread %d is inside jemalloc (%s): not a safe point to call mallctl",
					 (int)threads[i].tid, frames[f].function ? frames[f].function : "?");
				rc = 1;
				break;
			}
		session_gdb_frames_free(frames, nframes);
		if (rc == 0 && *call_thread < 0) {
			int ok = target_call_thread_ok(call, threads[i].gdb_id, e);
			if (ok < 0)
				rc = -1;
			else if (ok)
				*call_thread = threads[i].gdb_id;
		}
	}
	if (rc == 0 && *call_thread < 0) {
		xerr_set(e, "every thread sits in a system call that holds a restart block: no thread to call "
			 "mallctl on");
		rc = 1;
	}
	free(threads);
	return rc;
}

/* Stops the target where no thread is inside jemalloc: a busy allocator is
 * often caught inside, so the target is let run a few milliseconds and
 * stopped again, up to SAFE_POINT_TRIES times (each try is one stop). */
static int check_safe_point(struct session *s, const struct jemalloc_hooks *hooks, struct target_call *call,
			    int *call_thread, uint64_t *running_ns, struct xerr *e)
{
	for (int try = 1;; try++) {
		int rc = check_threads(s, hooks, call, call_thread, e);
		if (rc <= 0)
			return rc;
		if (try == SAFE_POINT_TRIES)
			return xerr_prefix(e, "after %d tries", SAFE_POINT_TRIES);
		struct timespec run = { 0, (long)(1 + try % 7) * 1000 * 1000 };
		uint64_t resumed = monotonic_ns();
		if (session_resume(s, e) < 0)
			return -1;
		nanosleep(&run, NULL);
		if (session_stop(s, e) < 0)
			return -1;
		*running_ns += monotonic_ns() - resumed;
	}
}

/* One operation's calls: the stub's room, and the thread they run on. */
struct call_scope {
	struct session *s;
	struct jemalloc_target *target;
	struct target_call call;
	int thread;
	uint64_t mallctl;
};

/* Takes the room (the target stopped) and reaches a safe point. */
static int scope_open(struct call_scope *c, struct session *s, struct jemalloc_target *t, struct xerr *e)
{
	*c = (struct call_scope){ .s = s, .target = t, .thread = -1, .mallctl = t->mallctl };
	if (!t->hooks || !t->hooks->area.code)
		return xerr_set(e, "no unused bytes in the target are known to run mallctl from");
	if (target_call_open(&c->call, s, &t->hooks->area, e) < 0)
		return -1;
	if (check_safe_point(s, t->hooks, &c->call, &c->thread, &t->running_ns, e) < 0) {
		target_call_close(&c->call, NULL);
		return -1;
	}
	return 0;
}

static int scope_close(struct call_scope *c, struct xerr *e)
{
	int rc = target_call_close(&c->call, e);
	c->target->running_ns += c->call.running_ns;
	return rc;
}

/* One mallctl(name, old?, old? &len, new?, newlen) of a batch: status is
 * mallctl's own result (0, or an errno such as ENOENT), old_value the
 * value read, old_size bytes of it (0: none read). */
struct mallctl_ask {
	const char *name;
	size_t old_size;
	const void *new_value;   /* at most NEW_BYTES, or NULL */
	size_t new_size;
	bool new_is_path;        /* newp points to the path's address (prof.dump) */
	uint64_t old_value;
	int status;
};

/* Makes the asks in one trip through the stub (target_call_run), path
 * (when set) at AT_PATH. */
static int call_mallctls(struct call_scope *c, struct mallctl_ask *asks, size_t n, const char *path, int timeout_ms,
			 struct xerr *e)
{
	uint64_t consts = target_call_constants(&c->call), buffers = target_call_buffers(&c->call);
	size_t path_len = path ? strlen(path) + 1 : 0;
	if (n > TARGET_CALL_MAX_CALLS || path_len > JEMALLOC_CALL_PATH_BYTES)
		return xerr_set(e, "too many mallctl calls, or the path too long");
	uint8_t constants[AT_PATH + JEMALLOC_CALL_PATH_BYTES] = { 0 };
	uint64_t olds[2 * TARGET_CALL_MAX_CALLS] = { 0 };
	struct target_call_one calls[TARGET_CALL_MAX_CALLS];
	uint64_t path_at = consts + AT_PATH;
	for (size_t i = 0; i < n; i++) {
		struct mallctl_ask *a = &asks[i];
		if (strlen(a->name) >= NAME_BYTES || a->new_size > NEW_BYTES || a->old_size > 8)
			return xerr_set(e, "mallctl(\"%s\"): name or value too long", a->name);
		memcpy(constants + NAME_BYTES * i, a->name, strlen(a->name) + 1);
		const void *new_value = a->new_is_path ? &path_at : a->new_value;
		size_t new_size = a->new_is_path ? sizeof path_at : a->new_size;
		if (new_value)
			memcpy(constants + AT_NEW + NEW_BYTES * i, new_value, new_size);
		olds[2 * i + 1] = a->old_size;   /* oldlenp's value */
		uint64_t old_at = buffers + OLD_BYTES * i;
		calls[i] = (struct target_call_one){ .fn = c->mallctl,
			.args = { consts + NAME_BYTES * i, a->old_size ? old_at : 0, a->old_size ? old_at + 8 : 0,
				  new_value ? consts + AT_NEW + NEW_BYTES * i : 0, new_value ? new_size : 0, 0 } };
	}
	if (path)
		memcpy(constants + AT_PATH, path, path_len);
	const struct target_call_inputs in = { .constants = constants, .constants_len = AT_PATH + path_len,
					       .buffers = olds, .buffers_len = OLD_BYTES * n };
	uint64_t results[TARGET_CALL_MAX_CALLS];
	if (target_call_run(&c->call, c->thread, calls, n, &in, timeout_ms, results, e) < 0)
		return xerr_prefix(e, "calling mallctl(\"%s\"%s)", asks[0].name, n > 1 ? ", ..." : "");
	bool any_read = false;
	for (size_t i = 0; i < n; i++) {
		asks[i].status = (int)(int32_t)results[i];
		any_read = any_read || (asks[i].old_size && asks[i].status == 0);
	}
	if (any_read && session_read_memory(c->s, buffers, olds, OLD_BYTES * n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct mallctl_ask *a = &asks[i];
		a->old_value = a->status == 0 && a->old_size ? olds[2 * i] : 0;
		if (a->old_size && a->old_size < 8)
			a->old_value &= (1ull << (8 * a->old_size)) - 1;
	}
	return 0;
}

/* The five settings in one trip through the stub; a name jemalloc does
 * not know (ENOENT: config.prof off) reads as false. */
static int inspect_in(struct call_scope *c, struct jemalloc_target *t, struct xerr *e)
{
	struct mallctl_ask asks[] = {
		{ .name = "config.prof", .old_size = 1 }, { .name = "opt.prof", .old_size = 1 },
		{ .name = "opt.lg_prof_sample", .old_size = sizeof(size_t) }, { .name = "opt.prof_accum", .old_size = 1 },
		{ .name = "prof.active", .old_size = 1 },
	};
	if (call_mallctls(c, asks, sizeof asks / sizeof asks[0], NULL, CALL_MS, e) < 0)
		return -1;
	if (!asks[0].old_value) {
		t->state = JEMALLOC_NO_PROFILING;
		return 0;
	}
	if (!asks[1].old_value) {
		t->state = JEMALLOC_PROF_OFF;
		return 0;
	}
	uint64_t lg = asks[2].old_value;
	t->lg_prof_sample = asks[2].status == 0 && lg < 64 ? (unsigned)lg : 19;   /* jemalloc's default: 512 KiB */
	t->prof_accum = asks[3].old_value != 0;
	t->state = asks[4].old_value ? JEMALLOC_PROF_ACTIVE : JEMALLOC_PROF_INACTIVE;
	return 0;
}

int jemalloc_inspect(struct session *s, const struct jemalloc_hooks *hooks, struct jemalloc_target *out,
		     struct xerr *e)
{
	*out = (struct jemalloc_target){ .state = JEMALLOC_ABSENT, .hooks = hooks };
	if (!hooks || !hooks->mallctl)
		return 0;   /* the caller's symbols have no mallctl */
	out->mallctl = hooks->mallctl;
	snprintf(out->mallctl_name, sizeof out->mallctl_name, "%s", hooks->mallctl_name);
	struct call_scope c;
	if (scope_open(&c, s, out, e) < 0)
		return -1;
	int rc = inspect_in(&c, out, e);
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	return rc;
}

int jemalloc_set_active(struct session *s, struct jemalloc_target *t, bool on, struct xerr *e)
{
	if (t->state != JEMALLOC_PROF_ACTIVE && t->state != JEMALLOC_PROF_INACTIVE)
		return xerr_set(e, "%s", jemalloc_state_text(t->state));
	struct call_scope c;
	unsigned char value = on;
	struct mallctl_ask ask = { .name = "prof.active", .new_value = &value, .new_size = 1 };
	if (scope_open(&c, s, t, e) < 0)
		return -1;
	int rc = call_mallctls(&c, &ask, 1, NULL, CALL_MS, e);
	int status = ask.status;
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	if (rc == 0 && status != 0)
		return xerr_set(e, "jemalloc refused prof.active=%s (error %d)", on ? "true" : "false", status);
	if (rc == 0)
		t->state = on ? JEMALLOC_PROF_ACTIVE : JEMALLOC_PROF_INACTIVE;
	return rc;
}

int jemalloc_dump(struct session *s, struct jemalloc_target *t, const char *path, struct xerr *e)
{
	if (t->state != JEMALLOC_PROF_ACTIVE && t->state != JEMALLOC_PROF_INACTIVE)
		return xerr_set(e, "%s", jemalloc_state_text(t->state));
	size_t len = strlen(path);
	if (path[0] != '/' || len >= JEMALLOC_CALL_PATH_BYTES)
		return xerr_set(e, "the dump's path must be absolute and shorter than %d bytes", JEMALLOC_CALL_PATH_BYTES);
	struct call_scope c;
	if (scope_open(&c, s, t, e) < 0)
		return -1;
	struct mallctl_ask ask = { .name = "prof.dump", .new_is_path = true };
	int rc = call_mallctls(&c, &ask, 1, path, DUMP_MS, e);
	int status = ask.status;
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	if (rc == 0 && status != 0)
		return xerr_set(e, "jemalloc could not dump its heap profile to %s (error %d: %s)", path, status,
				strerror(status));
	return rc;
}
