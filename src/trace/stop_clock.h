/* stop_clock.h — what the tracer's stops really cost the target, measured
 * from the scheduler clocks of the threads that stop at its probes.
 *
 * Why: between xgdbprof's -exec-continue and the next *stopped record gdb
 * steps the thread over the breakpoint, resumes every thread, takes the
 * trap, stops every other thread and builds the record. The target is
 * stopped for most of that and xgdbprof sees none of it. The kernel keeps,
 * per thread, the time spent on a CPU and the time spent runnable waiting
 * for one (proc_thread_schedstat). While the target sits in gdb's all-stop
 * both clocks are frozen, so reading them once at each stop (whenever it is
 * convenient) and noting the wall time at each resume brackets the window
 * from one resume to the next stop exactly:
 *
 *     held off the CPU = (stop - resume) - delta(on CPU)
 *                      = stopped by ptrace + delta(waiting for a CPU)
 *
 * for the thread that hit: the first to stop and among the last to run
 * again, so its stopped time is the process's. The wait is reported apart:
 * right after a resume it is largely ours (gdb and xgdbprof are busy on the
 * CPUs when the thread becomes runnable; bench/README.md, "Figures behind
 * the code"), over a long window it is the machine's load; the caller
 * decides (tracer_budget.c). A window is exact when the
 * thread did not also sleep of its own accord in it: a sleep shows up as
 * more voluntary context switches than the ptrace stops explain (each ptrace
 * stop is one), and such a window gives only an upper bound.
 *
 * Contract: call stop_clock_stopped() at every stop (target stopped, all
 * threads), then stop_clock_resuming() just before the resume. Nothing here
 * touches the target; a read costs about 20 us while the target is stopped,
 * for the hitting thread plus at most STOP_CLOCK_THREADS - 1 recent others.
 */
#ifndef XGDBPROF_STOP_CLOCK_H
#define XGDBPROF_STOP_CLOCK_H

#include "procfs/proc.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define STOP_CLOCK_THREADS 4
#define STOP_CLOCK_RECENT 32

struct stop_clock_mark {
	pid_t tid;
	struct proc_schedstat clocks;  /* frozen values, read during the last stop */
	bool read_this_stop;           /* read since the last resume */
	bool valid;                    /* read during the stop before the current window */
	unsigned expect_stops;         /* voluntary switches the ptrace stops explain in the window */
};

struct stop_clock {
	pid_t pid;
	bool unavailable;              /* no schedstat: every figure is the caller's estimate */
	struct stop_clock_mark marks[STOP_CLOCK_THREADS];
	size_t nmarks, replace_next;
	uint64_t window_start_ns;      /* wall time of the last resume; 0 before the first */
	pid_t window_tid;              /* the thread last resumed from a hit */
	/* gdb steps over breakpoints in place (non-stop, displaced stepping
	 * off): each step stops every thread once, not only the stepping one */
	bool steps_stop_all;
	double recent[STOP_CLOCK_RECENT];   /* exact hit windows' held-off time, ns */
	size_t nrecent;
	uint64_t measured, bounded;    /* hit windows measured exactly / only bounded */
	double waited_ns;              /* waits for a CPU in the exact hit windows */
};

/* What one window (last resume .. this stop) cost the thread measured. */
struct stop_clock_window {
	bool read;                     /* the thread's clocks bracket the window */
	bool exact;                    /* and it did not sleep in it: held_ns is the cost */
	double held_ns;                /* wall - on CPU; an upper bound when !exact */
	double waited_ns;              /* of which runnable, waiting for a CPU */
	double running_ns;             /* on a CPU */
};

void stop_clock_init(struct stop_clock *c, pid_t pid);

/* At a stop. when: the time the stop was reported, or for our own
 * interrupt the time it was requested (the thread's clocks then count what
 * it ran after that, and the caller counts the stop from there). tid: the
 * thread that hit a probe; 0 for a stop that is not a hit, whose window is
 * then measured on the thread last resumed from a hit. Fills *w (w->read
 * false: no reading brackets the window). Only hits feed the median and the
 * measured/bounded counts. */
void stop_clock_stopped(struct stop_clock *c, pid_t tid, uint64_t when, struct stop_clock_window *w);

/* Just before the resume, at now. tid: the thread that hit (0: none);
 * stepping: it is resumed from a breakpoint that stays inserted, so gdb
 * single-steps it over the breakpoint first: one more trip to a CPU. */
void stop_clock_resuming(struct stop_clock *c, pid_t tid, bool stepping, uint64_t now);

/* Median held-off time of the recent exact hit windows, ns; -1 if none. */
double stop_clock_median(const struct stop_clock *c);

#endif
