/* sampler.h — periodic stack sampling of a target under a session.
 *
 * Each tick: read thread states from /proc (while the target runs), pick the
 * threads to sample (running / all / name regex), and only if some thread
 * needs a fresh stack, stop the target, read the registers of those threads
 * through gdb, unwind them (fast walker: libdwfl over /proc/PID/mem; or gdb's
 * own -stack-list-frames, the reference), resume, and only then symbolize.
 * A thread whose on-CPU time (schedstat) has not moved since its last stack
 * keeps that stack without being walked again (counted as reused).
 *
 * Budget: the share of wall time the target spends stopped is measured; when
 * it would exceed max_stopped_percent, the rate is lowered (and said so in
 * the stats' notes).
 *
 * Contract: sampler_run returns when the duration is reached, a terminating
 * signal arrives, the target exits, or the callback fails; the target is
 * left running (resumed) in every case except a dead gdb, which the session
 * deals with. Returns 0, or -1 with e (the stats still hold what was done).
 */
#ifndef XGDBPROF_SAMPLER_H
#define XGDBPROF_SAMPLER_H

#include "util/error.h"
#include "target/session.h"
#include "util/stack.h"
#include "symbols/symbolize.h"

#include <stdbool.h>
#include <stdint.h>

enum sampler_threads { SAMPLER_THREADS_RUNNING, SAMPLER_THREADS_ALL, SAMPLER_THREADS_REGEX };
enum sampler_walker {
	SAMPLER_WALKER_FAST,   /* registers from gdb, libdwfl over /proc/PID/mem */
	SAMPLER_WALKER_GDB,    /* gdb's -stack-list-frames: the reference */
	SAMPLER_WALKER_BOTH,   /* fast for the stack, gdb's too in ref_pcs (tests) */
};

struct sampler_config {
	double frequency_hz;
	double duration_s;            /* 0: until a signal or the target exits */
	enum sampler_threads threads;
	const char *threads_regex;    /* SAMPLER_THREADS_REGEX */
	double max_stopped_percent;   /* 0: no budget */
	enum sampler_walker walker;
	int max_frames;               /* machine frames per stack */
	bool progress;                /* a progress line on stderr */
	/* Called between ticks (e.g. to fire interval probes); may be NULL. */
	int (*tick)(void *ctx, uint64_t now_ns, struct xerr *e);
};

struct sampled_thread {
	pid_t tid;
	const char *name;
	char state;                   /* /proc state before the stop */
	int cpu;
	uint64_t timestamp_ns;        /* CLOCK_MONOTONIC of the stop */
	const struct stack *stack;    /* symbolized, leaf first */
	bool reused;                  /* stack kept from the previous walk */
	const uint64_t *pcs;          /* the walk's machine PCs (0 when reused) */
	size_t npcs;
	const uint64_t *ref_pcs;      /* SAMPLER_WALKER_BOTH: gdb's PCs */
	size_t nref_pcs;
};

#define SAMPLER_MAX_NOTES 4

struct sampler_stats {
	uint64_t ticks;               /* sampling rounds */
	uint64_t stops;               /* rounds that stopped the target */
	uint64_t walks;               /* threads walked, over all stops */
	uint64_t thread_samples;      /* stacks handed to the callback */
	uint64_t reused;              /* of which reused without a walk */
	uint64_t truncated;           /* walks that did not reach the outermost frame */
	double elapsed_s;
	double stopped_s;             /* total time the target was held stopped */
	double stop_median_ms, stop_p99_ms, stop_max_ms;
	double frequency_asked_hz, frequency_achieved_hz;
	double cpu_percent_min, cpu_percent_avg, cpu_percent_max;  /* target CPU%, per ~1 s window */
	int cpu_percent_avg_windows;
	double phase_stop_s, phase_walk_s, phase_resume_s;  /* where stopped time went */
	int max_threads;
	bool target_exited;
	bool target_execed;           /* it exec'd: sampling ended there (session_exec_path) */
	int nnotes;
	char notes[SAMPLER_MAX_NOTES][200];
};

typedef int (*sampler_callback)(void *ctx, const struct sampled_thread *t, struct xerr *e);

int sampler_run(struct session *s, struct symbolizer *sym, const struct sampler_config *cfg,
		sampler_callback cb, void *ctx, struct sampler_stats *stats, struct xerr *e);

/* One round over every thread (a snapshot): the target is stopped once,
 * each thread walked and symbolized, and the target resumed. */
int sampler_snapshot(struct session *s, struct symbolizer *sym, enum sampler_walker walker, int max_frames,
		     sampler_callback cb, void *ctx, struct sampler_stats *stats, struct xerr *e);

#endif
