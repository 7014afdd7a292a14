/* sampler.h — periodic stack sampling of a target under a session.
 *
 * Each tick: call the sink's tick, read thread states from /proc (while the target runs), pick the
 * threads to sample (running / all / name regex), and only if some thread
 * needs a fresh stack, stop the target, read the registers of those threads
 * through gdb, unwind them (fast walker: libdwfl over /proc/PID/mem; or gdb's
 * own -stack-list-frames, the reference), resume, and only then symbolize
 * and hand each thread's stack to the sink as an EVENT_SAMPLE
 * (events/event.h).
 * A thread whose on-CPU time (schedstat) has not moved since its last stack
 * keeps that stack without being walked again (counted as reused).
 *
 * On CPU: with SAMPLER_THREADS_RUNNING a thread is sampled when /proc said
 * it was runnable and it used CPU since the previous tick, both read before
 * the stop — and its stack is kept only if, when gdb stopped it, it was not
 * sitting in a waiting system call (futex wait, sleep, poll, epoll...; read
 * from orig_rax at the stop). Threads are stopped one after another, so a
 * thread can run into a lock held by one stopped before it: counting that
 * wait as CPU time was the profiler's own artefact. In non-stop mode a
 * thread /proc showed on a CPU when asked and found in a futex wait is
 * kept: it went into the wait by itself meanwhile (sampler.c,
 * on_cpu_when_asked; docs/sampling.md). A stop that lands at
 * the return of a system call that ended by itself may have caught the
 * thread at a call made after it was asked to stop: such stops count up to
 * the kernel's share of the thread's CPU time (stime over utime + stime),
 * the rest are left out (landed_late; docs/sampling.md, "Where a stop
 * lands"). sampler_snapshot keeps them all. A stop in sched_yield counts as
 * on the CPU when /proc/PID/task/TID/stack, read just before the interrupt,
 * said the thread was on one (proc_thread_on_cpu; root only).
 *
 * Budget: the share of wall time the target spends stopped is held under
 * max_stopped_percent by the stop budget (events/stop_budget.h): the next
 * stop is put off while it is overdrawn (and the notes say the rate fell).
 *
 * Stats as it goes: sampler_run keeps ticks, walks, thread_samples,
 * run.stops, run.stopped_s and longest_thread_stops_s current during the
 * run, so a sink may read them from its callbacks (`xgdbprof top`'s header
 * does); rates, CPU figures and stop percentiles are set at the end.
 *
 * Contract: sampler_run returns when the duration is reached, a terminating
 * signal arrives, the target exits, the sink asks to end or fails; the target is
 * left running (resumed) in every case except a dead gdb, which the session
 * deals with. Returns 0, or -1 with e (the stats still hold what was done).
 */
#ifndef XGDBPROF_SAMPLER_H
#define XGDBPROF_SAMPLER_H

#include "events/event.h"
#include "events/run_stats.h"
#include "util/error.h"
#include "session/session.h"
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
	uint64_t start_ns;            /* the run's start (events' since_start_ns); 0: now */
};

struct sampler_stats {
	struct run_stats run;         /* elapsed, stopped, stops and their percentiles, end, notes */
	uint64_t ticks;               /* sampling rounds */
	uint64_t walks;               /* threads walked, over all stops */
	uint64_t thread_samples;      /* stacks handed to the sink */
	uint64_t reused;              /* of which reused without a walk */
	uint64_t truncated;           /* walks that did not reach the outermost frame */
	uint64_t waiting_at_stop;     /* runnable threads found in a waiting system call when stopped: left out
				       * of on-CPU samples (threads running), reported as 'S' otherwise */
	uint64_t waiting_when_asked;  /* running threads not stopped (non-stop mode): just before the interrupt
				       * /proc showed them off the CPU in a waiting call (sampler.c,
				       * waits_in_kernel) */
	uint64_t off_cpu_when_asked;  /* runnable threads not stopped (threads running): /proc showed them
				       * queued for a CPU (behind anything) or asleep just before the interrupt */
	uint64_t displaced_by_stop;   /* runnable threads not stopped (the same): on the CPU of a thread stopped
				       * earlier in the round, perhaps running only because we stopped it */
	uint64_t cut_at_end;          /* non-stop: threads a round left unwalked, the duration being up */
	uint64_t entered_wait;        /* non-stop: on-CPU walks kept that landed in a futex wait the thread, on a
				       * CPU when asked, entered by itself meanwhile (sampler.c, on_cpu_when_asked) */
	uint64_t landed_late_fault;   /* of landed_late, those at a page fault's return (sampler_note_faults) */
	uint64_t landed_late;         /* on-CPU walks whose stop landed at the return of a system call (or a
				       * page fault) beyond the kernel's share of the thread's CPU time
				       * (sampler_policy.c, sampler_landing_kept): a call's left out, a
				       * fault's kept without the kernel's marker */
	double frequency_asked_hz, frequency_achieved_hz;
	double cpu_percent_min, cpu_percent_avg, cpu_percent_max;  /* target CPU%, per ~1 s window;
								    * NAN when the run was too short to measure */
	int cpu_percent_avg_windows;
	double phase_stop_s, phase_walk_s, phase_resume_s;  /* where stopped time went */
	double longest_thread_stops_s;  /* per round, the longest any one thread was held, summed: what
					 * the per-thread budget charges (all-stop: the rounds' stops) */
	double thread_stopped_max_pct;  /* the largest share of its own time (first to last listing,
					 * at least a second) any thread was held stopped */
	/* The kernel's account of what each stop cost its thread (sampler.c,
	 * tracked_thread): wall time from the interrupt to the resume less what
	 * the thread ran or waited for a CPU meanwhile, per thread and stop. */
	double held_median_ms, held_p99_ms;  /* per settled thread stop; NAN when none settled */
	uint64_t held_settled;        /* thread stops settled so */
	double thread_held_max_pct;   /* as thread_stopped_max_pct, of held time: what the non-stop budget bounds */
	double thread_held_now_pct;   /* non-stop, kept up to date after each round for a sink's tick (top):
				       * sampler_held_max_pct_now, the same figure so far; -1 until a
				       * thread has been seen a second */
	double thread_rate_max_hz;    /* the most stops a second any one thread got */
	uint64_t ran_rounds;          /* thread-rounds in which a thread had used >= 5% of a CPU since the
				       * previous round (threads running) */
	uint64_t ran_not_runnable;    /* of which it was not runnable when /proc was read: not sampled */
	uint64_t over_budget;         /* non-stop: threads passed over in a round, over their own budget */
	int max_threads;
	double cpu_total_s;           /* the target's CPU time over the run (/proc/PID/stat, every thread,
				       * the exited ones included) */
	double cpu_seen_s;            /* of which used by threads while a tick could see them */
	double cpu_sampled_kernel_s;  /* of cpu_sampled_s, what samples with an [in kernel: ...] frame stand for */
	double cpu_sampled_s;         /* of which the samples handed on stand for (event cpu_ns, summed) */
	double cpu_unsampled_listed_s;  /* CPU of listed threads that no sample stands for: after each one's
					 * last sample (to its exit, or the end) */
	uint64_t cpu_unsampled_threads; /* threads with such CPU */
};

int sampler_run(struct session *s, struct symbolizer *sym, const struct sampler_config *cfg,
		const struct event_sink *sink, struct sampler_stats *stats, struct xerr *e);

/* The observer effect the stop budget keeps, in percent of time, from a
 * finished run's stats: in non-stop mode each thread's largest held share
 * by the kernel's account (*held true), or, when no stop settled so, its
 * largest stopped share; in all-stop mode the target's stopped share. NAN
 * when the run made no stop. One figure for the report's header, the
 * budget's note, `top` and a window's outcome (issue 29 item 5). */
double sampler_budget_share(const struct sampler_stats *st, bool non_stop, bool *held);

/* One round over every thread (a snapshot): the target is stopped once,
 * each thread walked and symbolized, and the target resumed. */
int sampler_snapshot(struct session *s, struct symbolizer *sym, enum sampler_walker walker, int max_frames,
		     const struct event_sink *sink, struct sampler_stats *stats, struct xerr *e);

#endif
