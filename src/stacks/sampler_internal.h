/* sampler_internal.h — what the sampler's files share: the per-thread
 * tracking, struct sampler, and the functions one file gives the other.
 * Private to stacks/ (sampler.h is the module's contract).
 *   sampler.c        rounds, thread selection, budgets, the run and its figures
 *   sampler_walk.c   a stopped thread's registers and stack: capture, unwind, symbolize
 *   sampler_policy.c the arithmetic on a tracked thread: held shares and rates, a stop's
 *                    wall and kernel-account booking, which stops at a call's return are kept
 * Conventions as in sampler.h: 0 on success, -1 with e filled.
 */
#ifndef XGDBPROF_SAMPLER_INTERNAL_H
#define XGDBPROF_SAMPLER_INTERNAL_H

#include "stacks/sampler.h"
#include "stacks/weighed.h"

#include "arch/regs.h"
#include "arch/syscalls.h"
#include "procfs/proc.h"
#include "session/signals.h"
#include "stacks/unwind.h"
#include "util/array.h"
#include "util/clock.h"
#include "events/stop_budget.h"
#include "util/stats.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The registers a walk with every register reads (into uint64_t
 * regs[ARCH_NREGS], each at its enum arch_reg): the unwinder's, then the
 * three that say whether the thread sat in a waiting system call when it
 * was stopped (orig_rax: the call's number, -1 outside a call; rsi, the
 * call's second argument: futex's operation) and whether the call had
 * ended by itself (rax: its result, or the kernel's code for a call our
 * signal interrupted). */
static const enum arch_reg sampled_registers[] = {
	ARCH_RIP, ARCH_RSP, ARCH_RBP, ARCH_RBX, ARCH_R12, ARCH_R13, ARCH_R14, ARCH_R15,
	ARCH_ORIG_RAX, ARCH_RSI, ARCH_RAX,
};
enum { NSAMPLED_REGS = sizeof sampled_registers / sizeof sampled_registers[0] };

/* What the sampler remembers of one thread between ticks. */
struct tracked_thread {
	pid_t tid;
	int gdb_id;               /* 0 until gdb's -thread-info has named it */
	uint64_t runtime_ns;      /* schedstat on-CPU time at its last walk */
	uint64_t tick_runtime_ns; /* schedstat on-CPU time at the previous tick */
	bool have_tick_runtime;
	char tick_state;          /* state reported at the previous tick */
	bool have_stack;
	struct stack stack;       /* last symbolized stack (frames owned here) */
	bool seen;                /* present in this tick's /proc listing */
	bool wanted;              /* selected this tick */
	bool walk;                /* needs a fresh walk this tick */
	struct proc_thread proc;  /* /proc view this tick */
	uint64_t *pcs;            /* raw walk result, this tick */
	size_t npcs;
	uint64_t *ref_pcs;        /* SAMPLER_WALKER_BOTH: gdb's walk of the same stop */
	size_t nref_pcs;
	int partial_regs_agree;   /* SAMPLER_WALKER_BOTH: 1 when the dwfl walk from rip, rsp and rbp alone
				   * (sampler_capture_from_proc's) found the same PCs as from all registers,
				   * 0 when not, -1 not tried */
	struct stack_capture capture;  /* fast walker: taken while stopped, unwound after */
	bool captured;            /* capture holds this tick's stop */
	const char *waiting_in;   /* the waiting system call it sat in when stopped, or NULL */
	const char *wait;         /* arch_syscall_wait_reason of that stop */
	bool at_return;           /* that stop landed at a completed system call's return */
	int64_t syscall_nr;       /* orig_rax at that stop: the call it was in or returning from, -1 none */
	int64_t faults_at_ask;    /* proc_thread_faults just before the interrupt, -1 unknown */
	bool faulted;             /* the thread took a page fault between the ask and the stop: the stop
				   * landed on a fault's way out, like at_return (sampler_note_faults) */
	int on_cpu_at_ask;        /* proc_thread_on_cpu just before the interrupt: 1, 0, -1 unknown */
	bool entered_wait;        /* this stop landed in a futex wait the thread, on a CPU when asked,
				   * went into by itself meanwhile (sampler_on_cpu_when_asked) */
	uint64_t first_ticks, first_kernel_ticks;  /* /proc CPU ticks (all, kernel) at its first listing */
	uint64_t on_cpu_elsewhere;  /* on-CPU walks kept that did not land at a completed call's return */
	uint64_t on_cpu_at_return;  /* on-CPU walks kept that did */
	uint64_t first_seen_ns;   /* its first /proc listing in this run */
	uint64_t last_seen_ns;    /* its latest one */
	uint64_t stopped_ns;      /* time our stops held it, over the run: wall, interrupt to resume */
	/* The kernel's account of a stop. Wall time from the interrupt to the
	 * resume overstates what the thread lost: until the signal lands it
	 * runs, or waits for a CPU as it would anyway. This tick's schedstat
	 * read (on-CPU and run-queue ns, and when it was read) brackets a stop
	 * with the next tick's read: held = wall less on-CPU less queued growth
	 * between the two, at most the wall stop (a thread that slept in
	 * between makes it an upper bound). */
	bool sched_ok;            /* this tick's schedstat read worked */
	uint64_t sched_read_ns, sched_run_ns, sched_wait_ns;
	bool held_pending;        /* a stop not yet settled by a later read */
	uint64_t pending_wall_ns, pending_read_ns, pending_run_ns, pending_wait_ns;
	uint64_t held_ns;         /* settled held time, over the run (unsettled stops: their wall time) */
	struct stop_budget budget;  /* non-stop: this thread's own share (charged the wall stop, refunded
				     * the difference once held is known) */
	double budget_spent_s;    /* what the budget has been charged, running total */
	bool planned;             /* wanted by this tick's plan, before the budget had its say */
	bool busy;                /* used at least 5% of a CPU since the previous tick, in any state */
	uint64_t stops;           /* times we stopped it */
	uint64_t sample_base_ns;  /* on-CPU ns accounted for (weighed or pooled): a sample this tick weighs the rest */
	/* What it ran in rounds that gave it no sample, and the stacks its
	 * samples were handed on with: the pool is spread over them in
	 * proportion at the run's end (weighed.h; sampler.c, weigh_tails). */
	uint64_t pool_ns;
	struct weighed_stacks weighed;
};

/* A thread gone with CPU its samples do not weigh: spread over them at
 * the run's end (weigh_tails). */
struct gone_tail {
	pid_t tid;
	char name[32];
	struct weighed_stacks weighed;  /* owned (the thread's, moved) */
	uint64_t pool_ns;
};

struct sampler {
	struct session *session;
	struct symbolizer *sym;
	const struct sampler_config *cfg;
	struct unwinder *unwinder;
	/* gdb's number of each of sampled_registers, at its enum arch_reg (-1
	 * for the others); asked at the first stop, since gdb needs a stopped
	 * target (regnums_known from then on). */
	int regnums[ARCH_NREGS];
	bool regnums_known;
	pcre2_code *name_regex;
	pcre2_match_data *match;
	struct tracked_thread *threads;
	size_t nthreads, cap;
	unsigned gdb_ids_generation; /* session_attach_generation the gdb ids are of */
	double reattach_ms_booked;   /* of session_reattaches' time, what rounds counted as stops */
	size_t max_chain;         /* frames one PC may expand to */
	uint64_t last_plan_ns;    /* when the previous tick read /proc */
	struct sampler_stats *stats;  /* the run's, for counters kept where the decisions are */
	uint64_t start_ns;        /* the run's start, for the events' since_start_ns */
	uint64_t end_ns;          /* when the duration is up (0: no duration): a round stops
				   * walking threads then, not at its last thread */
	uint64_t seen_cpu_ns;     /* CPU time of the threads /proc listed, between their listings
				   * (from birth for threads born during the run) */
	double thread_stopped_max_pct;  /* the largest share of its own time any thread was held
					 * (thread_stopped_share), over threads gone so far */
	bool snapshot;            /* one round of every thread (dump): every walked stack is kept */
	double *held_ms_log;      /* each settled stop's held time (per thread), for the percentiles */
	double held_sum_ms;       /* their sum */
	uint64_t sampled_cpu_ns;  /* the CPU time the samples handed on stand for (event cpu_ns), summed */
	uint64_t unsampled_gone_ns;  /* CPU of threads gone since, after their last sample (as last listed),
				      * of those with no kept sample to weigh it on */
	size_t unsampled_gone_threads;
	struct gone_tail *gone_tails;  /* the others' */
	size_t ngone_tails, gone_tails_cap;
	size_t nheld_ms_log, held_ms_log_cap;
	double thread_held_max_pct;  /* as thread_stopped_max_pct, of held time */
	double thread_rate_max_hz;   /* the most stops a second any thread got (over a second or more) */
	uint64_t *pc_buffer;      /* 2 * cap * max_frames PCs, carved per thread */
	size_t pc_buffer_threads;
};

/* sampler.c */
bool sampler_at_completed_return(uint64_t orig_rax, uint64_t rax);
void sampler_stack_release(struct stack *st);
int sampler_map_gdb_ids(struct sampler *sp, struct xerr *e);
void sampler_on_cpu_when_asked(const struct sampler *sp, struct tracked_thread *t, uint64_t orig_rax);
int sampler_learn_register_numbers(struct sampler *sp, struct xerr *e);
void sampler_note_faults(const struct sampler *sp, struct tracked_thread *t);

/* sampler_policy.c: pure (no gdb, no /proc). A share is in percent of the
 * span from the thread's first listing to `until`, -1 for a span under
 * min_span_ns; held times settle against the next schedstat read. */
double sampler_thread_share(const struct tracked_thread *t, uint64_t ns, uint64_t until, uint64_t min_span_ns);
uint64_t sampler_end_min_span(const struct sampler *sp, uint64_t end_ns);
void sampler_fold_thread_shares(struct sampler *sp, const struct tracked_thread *t, uint64_t until,
				uint64_t min_span_ns);
void sampler_settle_held(struct sampler *sp, struct tracked_thread *t, uint64_t read_ns, uint64_t run_ns,
			 uint64_t wait_ns);
double sampler_held_max_pct_now(const struct sampler *sp, uint64_t now);
void sampler_book_stop(struct sampler *sp, struct tracked_thread *t, uint64_t wall_ns, uint64_t end_ns);
bool sampler_landing_kept(const struct tracked_thread *t);
/* Adds a note to st's run when the run's budget figure exceeds the budget
 * by over a fifth; load and cpus are the machine's (NAN, 0: unknown). */
void sampler_note_budget_missed(const struct sampler_config *cfg, struct sampler_stats *st, bool non_stop,
				double load, long cpus);

/* sampler_walk.c */
int sampler_capture_from_proc(struct sampler *sp, struct tracked_thread *t, struct proc_syscall *where,
			     bool *captured);
int sampler_capture_fast_and_resume(struct sampler *sp, struct tracked_thread *t, uint64_t *resume_at,
				   struct xerr *e);
void sampler_compare_partial_walk(struct sampler *sp, struct tracked_thread *t);
int sampler_unwind_capture(struct sampler *sp, struct tracked_thread *t, struct xerr *e);
void sampler_fold_inline_runs(struct sampler *sp, uint64_t *pcs, size_t *npcs);
int sampler_symbolize_walk(struct sampler *sp, struct tracked_thread *t, struct xerr *e);
void sampler_walk_stopped_thread(struct sampler *sp, struct sampler_stats *st, struct tracked_thread *t);
struct tracked_thread *sampler_next_thread_to_walk(struct sampler *sp, size_t *cursor);
int sampler_stopped_round(struct sampler *sp, struct sampler_stats *st, struct xerr *e);

#endif
