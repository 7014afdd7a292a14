/* jemalloc_heap.c — the heap recipe from jemalloc's own profile (jemalloc_heap.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "cli/jemalloc_heap.h"

#include "cli/cli.h"
#include "procfs/jemalloc_profile.h"
#include "session/jemalloc_call.h"
#include "session/signals.h"
#include "util/clock.h"

#include <inttypes.h>
#include <pcre2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { FRAMES_PER_PC = 16, MAX_FRAMES = 512 };

/* The recipe's skip_leaf (an allocator's wrappers: Rust's alloc::, the
 * global allocator's functions), compiled; NULL code: none. */
struct leaf_filter {
	pcre2_code *code;
	pcre2_match_data *match;
};

static bool skipped_leaf(const struct leaf_filter *skip, const struct frame *f)
{
	if (f->module && strstr(f->module, "libjemalloc"))
		return true;
	return skip->code && f->function &&
	       pcre2_match(skip->code, (PCRE2_SPTR)f->function, PCRE2_ZERO_TERMINATED, 0, 0, skip->match, NULL) >= 0;
}

static int add_stack(struct profile *p, struct symbolizer *sym, const struct leaf_filter *skip,
		     const struct jemalloc_stack *js, struct xerr *e)
{
	struct frame *frames = calloc(MAX_FRAMES, sizeof *frames);
	if (!frames)
		return xerr_oom(e);
	size_t n = 0;
	bool leading = true;
	for (size_t i = 0; i < js->npcs && n + FRAMES_PER_PC <= MAX_FRAMES; i++) {
		size_t got = 0;
		if (symbolizer_lookup(sym, js->pcs[i], i > 0, frames + n, FRAMES_PER_PC, &got, e) < 0) {
			free(frames);
			return -1;
		}
		/* inline chains are leaf-first: drop allocator frames from the leaf
		 * end until the first that is not */
		size_t keep = 0;
		if (leading) {
			while (keep < got && skipped_leaf(skip, &frames[n + keep]))
				keep++;
			if (keep < got)
				leading = false;
			memmove(frames + n, frames + n + keep, (got - keep) * sizeof *frames);
		}
		n += got - keep;
	}
	struct stack st = { .nframes = n, .frames = frames };
	int rc = 0;
	uint64_t bytes = (uint64_t)llround(js->live.est_bytes);
	if (n > 0 && bytes > 0)
		rc = profile_add_events(p, "all threads", '?', &st, bytes, (uint64_t)llround(js->live.est_objects), e);
	free(frames);
	return rc;
}

static int find_functions(const struct symbolizer_function *f, void *arg)
{
	struct jemalloc_hooks *h = arg;
	const char *name = f->linkage ? f->linkage : f->name;
	if (!name)
		return 0;
	if (!h->mallctl && (strcmp(name, "mallctl") == 0 || strcmp(name, "_rjem_mallctl") == 0)) {
		h->mallctl = f->addr;
		snprintf(h->mallctl_name, sizeof h->mallctl_name, "%s", name);
	}
	return 0;
}

/* A PC in jemalloc: its shared library, or a function of a static copy
 * (tikv-jemallocator's _rjem_ prefix, je_ internals) or one of its entry
 * points. */
static bool pc_in_jemalloc(void *ctx, uint64_t pc)
{
	static const char *const entries[] = { "malloc", "calloc", "realloc", "free", "mallocx", "rallocx",
		"xallocx", "sdallocx", "dallocx", "nallocx", "posix_memalign", "aligned_alloc", "memalign",
		"valloc", "malloc_usable_size", "mallctl", "mallctlbymib", "mallctlnametomib" };
	struct symbolizer *sym = ctx;
	struct symbolizer_module m;
	if (symbolizer_module_info(sym, pc, &m, NULL) == 1 && m.path && strstr(m.path, "libjemalloc"))
		return true;
	struct frame frames[FRAMES_PER_PC];
	size_t n = 0;
	if (symbolizer_lookup(sym, pc, false, frames, FRAMES_PER_PC, &n, NULL) < 0)
		return true;   /* cannot tell: not a safe point */
	for (size_t i = 0; i < n; i++) {
		const char *name = frames[i].linkage ? frames[i].linkage : frames[i].function;
		if (!name)
			continue;
		if (strncmp(name, "_rjem_", 6) == 0 || strncmp(name, "je_", 3) == 0)
			return true;
		for (size_t k = 0; k < sizeof entries / sizeof entries[0]; k++)
			if (strcmp(name, entries[k]) == 0)
				return true;
	}
	return false;
}

/* A directory only we (and the target's user, who writes the dump) can
 * enter: mkdtemp's 0700, handed to the target's uid when it is not ours. */
static int private_dir(pid_t pid, char *dir, size_t size, struct xerr *e)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, size, "%s/xgdbprof-jemalloc-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return xerr_set(e, "cannot make a private directory for jemalloc's dump in %s", dir);
	char proc[64];
	struct stat st;
	snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
	if (stat(proc, &st) == 0 && st.st_uid != geteuid() && chown(dir, st.st_uid, (gid_t)-1) < 0) {
		rmdir(dir);
		return xerr_set(e, "cannot hand the dump's directory to the target's user %d", (int)st.st_uid);
	}
	return 0;
}

int cli_jemalloc_heap(struct session *s, struct symbolizer *sym, double duration_s, const char *skip_leaf,
		      bool activate, struct profile *out, struct run_stats *stats, struct xerr *e)
{
	struct jemalloc_hooks hooks = { .in_jemalloc = pc_in_jemalloc, .ctx = sym };
	if (symbolizer_foreach_function(sym, NULL, find_functions, &hooks, e) < 0)
		return -1;
	if (!hooks.mallctl)
		return 0;   /* not jemalloc: the probes as before, nothing to say */
	struct symbolizer_slack room;
	int found = symbolizer_unused_room(sym, hooks.mallctl, JEMALLOC_CALL_CODE_BYTES, JEMALLOC_CALL_DATA_BYTES, &room, e);
	if (found < 0)
		return -1;
	if (found == 0) {
		fprintf(stderr, "xgdbprof: heap: jemalloc's profile cannot be read: no module of the target has %d unused "
			"bytes past its code and %d past its .bss to call mallctl from; using the allocator probes instead\n",
			JEMALLOC_CALL_CODE_BYTES, JEMALLOC_CALL_DATA_BYTES);
		return 0;
	}
	hooks.area = (struct target_call_area){ .code = room.code_lo, .code_len = room.code_hi - room.code_lo,
						.data = room.data_lo, .data_len = room.data_hi - room.data_lo };
	uint64_t t0 = monotonic_ns();
	if (session_stop(s, e) < 0)
		return -1;
	struct jemalloc_target jt;
	int rc = jemalloc_inspect(s, &hooks, &jt, e);
	bool activated = false;
	if (rc == 0 && jt.state == JEMALLOC_PROF_INACTIVE && activate) {
		rc = jemalloc_set_active(s, &jt, true, e);
		activated = rc == 0;
	}
	/* the calls run with the target running (target_call.h): not stopped */
	double stopped_s = (double)(monotonic_ns() - t0 - jt.running_ns) / 1e9;
	double first_stop_ms = stopped_s * 1e3;
	if (session_resume(s, rc < 0 ? NULL : e) < 0 || rc < 0)
		return -1;
	if (jt.state != JEMALLOC_PROF_ACTIVE) {
		if (jt.state != JEMALLOC_ABSENT)
			fprintf(stderr, "xgdbprof: heap: %s%s; using the allocator probes instead\n",
				jemalloc_state_text(jt.state),
				jt.state == JEMALLOC_PROF_INACTIVE ? " (--jemalloc-activate switches it on for the run)" : "");
		return 0;
	}
	uint64_t end = monotonic_ns() + (uint64_t)(duration_s * 1e9);
	while (!signals_pending() && monotonic_ns() < end)
		if (session_idle(s, 100, e) < 0 || session_resume_signal_stop(s, e) < 0)
			return -1;
	char dir[512], path[600];
	if (private_dir(session_pid(s), dir, sizeof dir, e) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/heap.prof", dir);
	uint64_t t1 = monotonic_ns(), ran_before = jt.running_ns;
	rc = session_stop(s, e);
	if (rc == 0)
		rc = jemalloc_dump(s, &jt, path, e);
	if (activated && session_is_stopped(s)) {
		/* off again as found, whether the dump worked or not */
		struct xerr off;
		if (jemalloc_set_active(s, &jt, false, &off) < 0 && rc == 0)
			rc = xerr_set(e, "switching jemalloc's prof.active off again: %s", off.msg);
	}
	double dump_stop_ms = (double)(monotonic_ns() - t1 - (jt.running_ns - ran_before)) / 1e6;
	stopped_s += dump_stop_ms / 1e3;
	if (session_resume(s, rc < 0 ? NULL : e) < 0)
		rc = -1;
	struct jemalloc_profile *jp = NULL;
	if (rc == 0)
		rc = jemalloc_profile_read(path, &jp, e);
	unlink(path);
	rmdir(dir);
	struct leaf_filter skip = { 0 };
	if (rc == 0 && skip_leaf && skip_leaf[0]) {
		int err;
		PCRE2_SIZE erroff;
		skip.code = pcre2_compile((PCRE2_SPTR)skip_leaf, PCRE2_ZERO_TERMINATED, 0, &err, &erroff, NULL);
		skip.match = skip.code ? pcre2_match_data_create_from_pattern(skip.code, NULL) : NULL;
		if (!skip.match)
			rc = xerr_set(e, "skip_leaf cannot be compiled");
	}
	for (size_t i = 0; rc == 0 && i < jp->nstacks; i++)
		rc = add_stack(out, sym, &skip, &jp->stacks[i], e);
	pcre2_match_data_free(skip.match);
	pcre2_code_free(skip.code);
	if (rc == 0) {
		char note[256];
		snprintf(note, sizeof note,
			 "heap from jemalloc's own profile (one allocation sampled per %" PRIu64 " bytes on average): "
			 "%.0f bytes live in %.0f objects, estimated from %" PRIu64 " sampled",
			 jp->sample_period, jp->live.est_bytes, jp->live.est_objects, jp->live.objects);
		profile_add_note(out, note, NULL);
		if (activated)
			profile_add_note(out, "jemalloc's prof.active was switched on for the run (--jemalloc-activate) "
					 "and off after it: only allocations made during the run were sampled", NULL);
		out->meta.value_types = "inuse_objects/count,inuse_space/bytes";
		out->meta.weight_unit = "bytes";
		stats->elapsed_s = (double)(monotonic_ns() - t0) / 1e9;
		/* the report's "per stop" figures are of these two stops */
		run_stats_add_stop(stats, first_stop_ms);
		run_stats_add_stop(stats, dump_stop_ms);
		run_stats_finish_stops(stats);
		stats->stopped_s = stopped_s;
	}
	jemalloc_profile_free(jp);
	return rc < 0 ? -1 : 1;
}
