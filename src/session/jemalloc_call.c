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

/* After the stub, what mallctl reads: the name asked, the value written
 * (newp), the dump's path; after the mark, what it writes: the value read
 * (oldp) and its length (oldlenp). */
enum { AT_NAME = 0, NAME_BYTES = 64, AT_NEW = 64, AT_PATH = 80, AT_OLD = 0, AT_OLDLEN = 8 };
_Static_assert(TARGET_CALL_STUB_BYTES + AT_PATH + JEMALLOC_CALL_PATH_BYTES <= JEMALLOC_CALL_CODE_BYTES,
	       "the path fits after the stub");
_Static_assert(TARGET_CALL_MARK_BYTES + AT_OLDLEN + 8 <= JEMALLOC_CALL_DATA_BYTES, "the buffers fit");

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

/* mallctl(name, old?, old? &len, new?, newlen): returns mallctl's own result
 * in *status (0, or an errno such as ENOENT); *old_value the value read,
 * old_size bytes of it (0: none read). path, when set, goes at AT_PATH
 * (new_value may point there: target_call_constants + AT_PATH). */
static int call_mallctl(struct call_scope *c, const char *name, size_t old_size, uint64_t *old_value,
			const void *new_value, size_t new_size, const char *path, int timeout_ms, int *status,
			struct xerr *e)
{
	uint64_t consts = target_call_constants(&c->call), buffers = target_call_buffers(&c->call);
	size_t path_len = path ? strlen(path) + 1 : 0;
	if (strlen(name) >= NAME_BYTES || new_size > AT_PATH - AT_NEW || path_len > JEMALLOC_CALL_PATH_BYTES)
		return xerr_set(e, "mallctl(\"%s\"): name, value or path too long", name);
	uint8_t constants[AT_PATH + JEMALLOC_CALL_PATH_BYTES] = { 0 };
	memcpy(constants + AT_NAME, name, strlen(name) + 1);
	if (new_value)
		memcpy(constants + AT_NEW, new_value, new_size);
	if (path)
		memcpy(constants + AT_PATH, path, path_len);
	uint64_t buffers_init[2] = { 0, old_size };   /* AT_OLD, AT_OLDLEN */
	const struct target_call_inputs in = { .constants = constants, .constants_len = AT_PATH + path_len,
					       .buffers = buffers_init, .buffers_len = sizeof buffers_init };
	const uint64_t args[6] = { consts + AT_NAME, old_size ? buffers + AT_OLD : 0, old_size ? buffers + AT_OLDLEN : 0,
				   new_value ? consts + AT_NEW : 0, new_value ? new_size : 0, 0 };
	uint64_t result = 0;
	if (target_call_run(&c->call, c->thread, c->mallctl, args, &in, timeout_ms, &result, e) < 0)
		return xerr_prefix(e, "calling mallctl(\"%s\")", name);
	*status = (int)(int32_t)result;
	if (old_value) {
		*old_value = 0;
		if (*status == 0 && old_size) {
			if (session_read_memory(c->s, buffers + AT_OLD, old_value, sizeof *old_value, e) < 0)
				return -1;
			if (old_size < 8)
				*old_value &= (1ull << (8 * old_size)) - 1;
		}
	}
	return 0;
}

static int read_bool(struct call_scope *c, const char *name, bool *out, int *status, struct xerr *e)
{
	uint64_t v = 0;
	if (call_mallctl(c, name, 1, &v, NULL, 0, NULL, CALL_MS, status, e) < 0)
		return -1;
	*out = *status == 0 && v != 0;
	return 0;
}

static int inspect_in(struct call_scope *c, struct jemalloc_target *t, struct xerr *e)
{
	int status;
	bool on;
	if (read_bool(c, "config.prof", &on, &status, e) < 0)
		return -1;
	if (!on) {
		t->state = JEMALLOC_NO_PROFILING;
		return 0;
	}
	if (read_bool(c, "opt.prof", &on, &status, e) < 0)
		return -1;
	if (!on) {
		t->state = JEMALLOC_PROF_OFF;
		return 0;
	}
	uint64_t lg = 0;
	if (call_mallctl(c, "opt.lg_prof_sample", sizeof(size_t), &lg, NULL, 0, NULL, CALL_MS, &status, e) < 0)
		return -1;
	t->lg_prof_sample = status == 0 && lg < 64 ? (unsigned)lg : 19;   /* jemalloc's default: 512 KiB */
	if (read_bool(c, "opt.prof_accum", &t->prof_accum, &status, e) < 0 ||
	    read_bool(c, "prof.active", &on, &status, e) < 0)
		return -1;
	t->state = on ? JEMALLOC_PROF_ACTIVE : JEMALLOC_PROF_INACTIVE;
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
	int status = 0;
	unsigned char value = on;
	if (scope_open(&c, s, t, e) < 0)
		return -1;
	int rc = call_mallctl(&c, "prof.active", 0, NULL, &value, 1, NULL, CALL_MS, &status, e);
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
	uint64_t path_at = target_call_constants(&c.call) + AT_PATH;
	int status = 0;
	int rc = call_mallctl(&c, "prof.dump", 0, NULL, &path_at, sizeof path_at, path, DUMP_MS, &status, e);
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	if (rc == 0 && status != 0)
		return xerr_set(e, "jemalloc could not dump its heap profile to %s (error %d: %s)", path, status,
				strerror(status));
	return rc;
}
