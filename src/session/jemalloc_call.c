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
enum { SAFE_POINT_FRAMES = 64, SAFE_POINT_TRIES = 50, PAGE_BYTES = 4096, PATH_MAX_BYTES = 1024 };

/* Offsets in the scratch page: the name asked, the value read (oldp), its
 * length (oldlenp), the value written (newp), then a path for prof.dump. */
enum { AT_NAME = 0, AT_OLD = 64, AT_OLDLEN = 80, AT_NEW = 96, AT_PATH = 128 };

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

static int eval_u64(struct session *s, int thread, const char *expr, uint64_t *out, struct xerr *e)
{
	char *value = NULL;
	if (session_evaluate(s, thread, 0, expr, &value, e) < 0)
		return -1;
	errno = 0;
	char *end = NULL;
	long long v = strtoll(value, &end, 0);
	bool ok = errno == 0 && end != value;
	free(value);
	if (!ok)
		return xerr_set(e, "gdb's value of %s is not a number", expr);
	*out = (uint64_t)v;
	return 0;
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

/* 0 when no thread has a jemalloc frame (*first_thread: the first thread's
 * gdb id, for the calls), 1 with the thread named in e when one has, -1
 * with e on failure. */
static int check_threads(struct session *s, const struct jemalloc_hooks *hooks, int *first_thread,
			 struct xerr *e)
{
	struct session_thread *threads = NULL;
	size_t n = 0;
	if (session_threads(s, &threads, &n, e) < 0)
		return -1;
	if (n == 0) {
		free(threads);
		return xerr_set(e, "the target has no threads to call jemalloc from");
	}
	*first_thread = threads[0].gdb_id;
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
	}
	free(threads);
	return rc;
}

/* Stops the target where no thread is inside jemalloc: a busy allocator is
 * often caught inside, so the target is let run a few milliseconds and
 * stopped again, up to SAFE_POINT_TRIES times (each try is one stop). */
static int check_safe_point(struct session *s, const struct jemalloc_hooks *hooks, int *first_thread,
			    struct xerr *e)
{
	for (int try = 1;; try++) {
		int rc = check_threads(s, hooks, first_thread, e);
		if (rc <= 0)
			return rc;
		if (try == SAFE_POINT_TRIES)
			return xerr_prefix(e, "after %d tries", SAFE_POINT_TRIES);
		struct timespec run = { 0, (long)(1 + try % 7) * 1000 * 1000 };
		if (session_resume(s, e) < 0)
			return -1;
		nanosleep(&run, NULL);
		if (session_stop(s, e) < 0)
			return -1;
	}
}

/* The calls' settings for one operation, and a scratch page in the target. */
struct call_scope {
	struct session *s;
	int thread;
	uint64_t page;
	uint64_t munmap;   /* 0: by gdb's name */
};

static int gdb_set(struct session *s, const char *name, const char *value, struct xerr *e)
{
	const char *args[] = { name, value, NULL };
	return session_call(s, NULL, e, "-gdb-set", args);
}

static int scope_open(struct call_scope *c, struct session *s, const struct jemalloc_target *t, struct xerr *e)
{
	*c = (struct call_scope){ .s = s, .thread = t->gdb_thread, .munmap = t->munmap };
	if (gdb_set(s, "scheduler-locking", "on", e) < 0 || gdb_set(s, "unwindonsignal", "on", e) < 0)
		return -1;
	/* PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS */
	char fn[32], expr[160];
	if (t->mmap)
		snprintf(fn, sizeof fn, "%" PRIu64, t->mmap);
	else
		snprintf(fn, sizeof fn, "mmap");
	snprintf(expr, sizeof expr, "((long (*)(long, long, long, long, long, long))%s)(0, 4096, 3, 34, -1, 0)", fn);
	if (eval_u64(s, c->thread, expr, &c->page, e) < 0)
		return xerr_prefix(e, "mapping a scratch page in the target");
	if (c->page == UINT64_MAX || c->page == 0) {
		c->page = 0;
		return xerr_set(e, "the target could not map a scratch page");
	}
	return 0;
}

static int scope_close(struct call_scope *c, struct xerr *e)
{
	int rc = 0;
	if (c->page) {
		char expr[128];
		uint64_t result = 0;
		char fn[32];
		if (c->munmap)
			snprintf(fn, sizeof fn, "%" PRIu64, c->munmap);
		else
			snprintf(fn, sizeof fn, "munmap");
		snprintf(expr, sizeof expr, "((int (*)(long, long))%s)(%" PRIu64 ", %d)", fn, c->page, PAGE_BYTES);
		if (eval_u64(c->s, c->thread, expr, &result, e) < 0 || result != 0)
			rc = -1;
		c->page = 0;
	}
	if (gdb_set(c->s, "scheduler-locking", "replay", rc < 0 ? NULL : e) < 0)
		rc = -1;
	return rc;
}

static int write_bytes(struct call_scope *c, uint64_t offset, const void *bytes, size_t n, struct xerr *e)
{
	return session_write_memory(c->s, c->page + offset, bytes, n, e);
}

/* mallctl(name, old?, old? &len, new?, newlen): returns mallctl's own result
 * in *status (0, or an errno such as ENOENT); *old_value the value read,
 * old_size bytes of it (0: none read). */
static int call_mallctl(struct call_scope *c, uint64_t mallctl, const char *name, size_t old_size,
			uint64_t *old_value, const void *new_value, size_t new_size, int *status, struct xerr *e)
{
	uint64_t zero = 0, len = old_size;
	if (write_bytes(c, AT_NAME, name, strlen(name) + 1, e) < 0 || write_bytes(c, AT_OLD, &zero, 8, e) < 0 ||
	    write_bytes(c, AT_OLDLEN, &len, 8, e) < 0 ||
	    (new_value && write_bytes(c, AT_NEW, new_value, new_size, e) < 0))
		return -1;
	char expr[256];
	snprintf(expr, sizeof expr,
		 "((int (*)(long, long, long, long, long))%" PRIu64 ")(%" PRIu64 ", %" PRIu64 ", %" PRIu64
		 ", %" PRIu64 ", %zu)",
		 mallctl, c->page + AT_NAME, old_size ? c->page + AT_OLD : 0, old_size ? c->page + AT_OLDLEN : 0,
		 new_value ? c->page + AT_NEW : 0, new_value ? new_size : 0);
	uint64_t result;
	if (eval_u64(c->s, c->thread, expr, &result, e) < 0)
		return xerr_prefix(e, "calling %s(\"%s\")", "mallctl", name);
	*status = (int)(int32_t)result;
	if (old_value) {
		*old_value = 0;
		if (*status == 0 && old_size) {
			snprintf(expr, sizeof expr, "*(unsigned long *)%" PRIu64, c->page + AT_OLD);
			if (eval_u64(c->s, c->thread, expr, old_value, e) < 0)
				return -1;
			if (old_size < 8)
				*old_value &= (1ull << (8 * old_size)) - 1;
		}
	}
	return 0;
}

static int read_bool(struct call_scope *c, uint64_t mallctl, const char *name, bool *out, int *status,
		     struct xerr *e)
{
	uint64_t v = 0;
	if (call_mallctl(c, mallctl, name, 1, &v, NULL, 0, status, e) < 0)
		return -1;
	*out = *status == 0 && v != 0;
	return 0;
}

static int find_mallctl(struct session *s, int thread, struct jemalloc_target *t)
{
	static const char *const names[] = { "_rjem_mallctl", "mallctl" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char expr[64];
		snprintf(expr, sizeof expr, "(long)&%s", names[i]);
		uint64_t addr = 0;
		if (eval_u64(s, thread, expr, &addr, NULL) == 0 && addr != 0) {
			snprintf(t->mallctl_name, sizeof t->mallctl_name, "%s", names[i]);
			t->mallctl = addr;
			return 1;
		}
	}
	return 0;
}

static int inspect_in(struct call_scope *c, struct jemalloc_target *t, struct xerr *e)
{
	int status;
	bool on;
	if (read_bool(c, t->mallctl, "config.prof", &on, &status, e) < 0)
		return -1;
	if (!on) {
		t->state = JEMALLOC_NO_PROFILING;
		return 0;
	}
	if (read_bool(c, t->mallctl, "opt.prof", &on, &status, e) < 0)
		return -1;
	if (!on) {
		t->state = JEMALLOC_PROF_OFF;
		return 0;
	}
	uint64_t lg = 0;
	if (call_mallctl(c, t->mallctl, "opt.lg_prof_sample", sizeof(size_t), &lg, NULL, 0, &status, e) < 0)
		return -1;
	t->lg_prof_sample = status == 0 && lg < 64 ? (unsigned)lg : 19;   /* jemalloc's default: 512 KiB */
	if (read_bool(c, t->mallctl, "opt.prof_accum", &t->prof_accum, &status, e) < 0 ||
	    read_bool(c, t->mallctl, "prof.active", &on, &status, e) < 0)
		return -1;
	t->state = on ? JEMALLOC_PROF_ACTIVE : JEMALLOC_PROF_INACTIVE;
	return 0;
}

int jemalloc_inspect(struct session *s, const struct jemalloc_hooks *hooks, struct jemalloc_target *out,
		     struct xerr *e)
{
	*out = (struct jemalloc_target){ .state = JEMALLOC_ABSENT, .hooks = hooks };
	if (hooks && hooks->mallctl) {
		out->mallctl = hooks->mallctl;
		snprintf(out->mallctl_name, sizeof out->mallctl_name, "%s", hooks->mallctl_name);
		out->mmap = hooks->mmap;
		out->munmap = hooks->munmap;
		if (!out->mmap || !out->munmap)
			return xerr_set(e, "the target's mmap and munmap are not known");
	} else if (hooks) {
		return 0;   /* the caller's symbols have no mallctl */
	}
	int thread;
	if (check_safe_point(s, hooks, &thread, e) < 0)
		return -1;
	out->gdb_thread = thread;
	if (!out->mallctl && !find_mallctl(s, thread, out))
		return 0;
	struct call_scope c;
	int rc = scope_open(&c, s, out, e);
	if (rc == 0) {
		out->scratch_page = c.page;
		rc = inspect_in(&c, out, e);
	}
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	return rc;
}

int jemalloc_set_active(struct session *s, struct jemalloc_target *t, bool on, struct xerr *e)
{
	if (t->state != JEMALLOC_PROF_ACTIVE && t->state != JEMALLOC_PROF_INACTIVE)
		return xerr_set(e, "%s", jemalloc_state_text(t->state));
	if (check_safe_point(s, t->hooks, &t->gdb_thread, e) < 0)
		return -1;
	struct call_scope c;
	int status = 0;
	unsigned char value = on;
	int rc = scope_open(&c, s, t, e);
	if (rc == 0)
		rc = call_mallctl(&c, t->mallctl, "prof.active", 0, NULL, &value, 1, &status, e);
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	if (rc == 0 && status != 0)
		return xerr_set(e, "jemalloc refused prof.active=%s (error %d)", on ? "true" : "false", status);
	if (rc == 0)
		t->state = on ? JEMALLOC_PROF_ACTIVE : JEMALLOC_PROF_INACTIVE;
	return rc;
}

int jemalloc_dump(struct session *s, const struct jemalloc_target *t, const char *path, struct xerr *e)
{
	if (t->state != JEMALLOC_PROF_ACTIVE && t->state != JEMALLOC_PROF_INACTIVE)
		return xerr_set(e, "%s", jemalloc_state_text(t->state));
	size_t len = strlen(path);
	if (path[0] != '/' || len >= PATH_MAX_BYTES || len + 1 > PAGE_BYTES - AT_PATH)
		return xerr_set(e, "the dump's path must be absolute and shorter than %d bytes", PATH_MAX_BYTES);
	struct jemalloc_target at = *t;
	if (check_safe_point(s, t->hooks, &at.gdb_thread, e) < 0)
		return -1;
	struct call_scope c;
	int status = 0;
	int rc = scope_open(&c, s, &at, e);
	if (rc == 0)
		rc = write_bytes(&c, AT_PATH, path, len + 1, e);
	if (rc == 0) {
		uint64_t path_ptr = c.page + AT_PATH;
		rc = call_mallctl(&c, t->mallctl, "prof.dump", 0, NULL, &path_ptr, sizeof path_ptr, &status, e);
	}
	if (scope_close(&c, rc < 0 ? NULL : e) < 0)
		rc = -1;
	if (rc == 0 && status != 0)
		return xerr_set(e, "jemalloc could not dump its heap profile to %s (error %d: %s)", path, status,
				strerror(status));
	return rc;
}
