/* tracer_internal.h — what the tracer's files share: struct tracer and the
 * functions one file defines for the others. Private to trace/: nothing
 * outside includes it (tracer.h is the module's contract).
 *
 * Which file owns what:
 *   tracer.c          the loop and the exit path; the target's memory, threads and stacks
 *   tracer_arm.c      arming: sites, gdb breakpoints and catchpoints
 *   tracer_args.c     arg(NAME): evaluation in the hit's frame
 *   tracer_panic.c    panic payloads and locations read from the target
 *   tracer_events.c   stops into events: entries, returns, panics, system calls
 *   tracer_cost.c     a hit's CPU cost against the program's, and calibration
 *   tracer_budget.c   the duty cycle and the budget
 *   tracer_estimate.c the estimators and the stats
 *
 * Conventions as in tracer.h: int functions return 0 on success (or a count,
 * or 1 for "yes"), -1 with e filled; the caller owns what a char * return
 * gives.
 */
#ifndef XGDBPROF_TRACER_INTERNAL_H
#define XGDBPROF_TRACER_INTERNAL_H

#include "trace/tracer.h"
#include "arch/insn.h"
#include "arch/regs.h"
#include "arch/syscalls.h"
#include "session/probes.h"
#include "procfs/proc.h"
#include "session/signals.h"
#include "util/array.h"
#include "util/stats.h"
#include "events/stop_budget.h"
#include "trace/stop_clock.h"
#include "trace/entry_counter.h"
#include "trace/syscall_sites.h"
#include "trace/tracer_resolve.h"
#include "stacks/unwind.h"
#include "util/clock.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


enum bp_kind { BP_ENTRY, BP_RETURN, BP_PANIC_HOOK, BP_RUST_PANIC, BP_SYSCALL };

struct probe_list {
	int *v;
	size_t n, cap;
};

struct site {
	uint64_t addr;
	char *name;
	bool inlined;
	uint64_t size;                /* bytes of the out-of-line function, 0 if unknown */
	/* a system call's site (syscall_sites.h): addr is its `mov $N,%eax`
	 * inside the function at `function` (name); its probes are
	 * syscall_site probes, its events EVENT_SYSCALL_SITE */
	bool syscall_site;
	int syscall_nr;
	uint64_t function;
	struct probe_list entry_probes, return_probes;
	/* every probe here only counts (probe_spec.count_only) and none
	 * returns: with a counter in the target it needs no breakpoint */
	bool counted_only;
	int bp;                       /* gdb number */
	uint64_t next_insn;           /* the instruction after addr, for calibration hits; 0 not looked up,
				       * UINT64_MAX none usable */
	/* The first two instructions at addr, decoded once (decode_site) for
	 * both the arming (does gdb step the first with a scratch register?)
	 * and the calibration (where is the next, and is it RIP-relative?). */
	bool decoded, first_rip, first_transfers, next_rip;
	uint64_t next_addr;           /* 0: not known */
};

struct return_site {
	uint64_t addr;
	int bp;
};

struct pending {
	pid_t tid;
	uint64_t sp_after;            /* rsp once the callee returned: entry rsp + 8 */
	uint64_t t0_ns;               /* the resume after the entry stop */
	double stopped_at_t0_ns;      /* the tracer's stopped_ns then */
	size_t site;
	/* The thread's own clocks frozen at its entry stop (schedstat and
	 * voluntary switches): the kernel's account of the call, which does
	 * not advance while we hold the thread. */
	bool clocks_read;
	struct proc_schedstat clocks;
	uint64_t hits_at_entry;       /* the tracer's hits then (all-stop: each other hit stops it too) */
};

struct thread_info {
	int gdb_id;
	pid_t tid;
	char name[64];
	uint64_t name_read_ns;        /* when name was last read from /proc */
	/* panic in flight: from panic_with_hook until reported */
	bool panic_pending;
	uint64_t payload_data, payload_vtable;
	char location[512];
};

enum duty { DUTY_ON, DUTY_DRAINING, DUTY_OFF };

/* The registers a hit reads (into uint64_t regs[ARCH_NREGS], each at its
 * enum arch_reg): the unwinder's, rax (a return's value, a system call's
 * result) and the six argument registers. */
static const enum arch_reg traced_registers[] = {
	ARCH_RIP, ARCH_RSP, ARCH_RBP, ARCH_RBX, ARCH_R12, ARCH_R13, ARCH_R14, ARCH_R15, ARCH_RAX,
	ARCH_RDI, ARCH_RSI, ARCH_RDX, ARCH_RCX, ARCH_R8, ARCH_R9,
};
enum { NTRACED_REGS = sizeof traced_registers / sizeof traced_registers[0] };

/* struct tracer is one run's state, in parts: each is kept by the file
 * named beside it, read by the others, and set up and freed by tracer.c. */

/* What arming put in place (tracer_arm.c): sites, breakpoints, catchpoints. */
struct tracer_probes {
	struct site *sites;
	size_t nsites, sites_cap;
	struct return_site *returns;  /* added as entries are hit (tracer_events.c) */
	size_t nreturns, returns_cap;
	int *all_bps;                 /* every number we created, for the final delete */
	size_t nall, all_cap;
	int *duty_bps;                /* the ones the budget switches off */
	size_t nduty, duty_cap;
	int panic_hook_bp, rust_panic_bp;
	bool panic_old_abi;
	bool has_panic_probe, has_syscall_entry, has_syscall_return;
	bool panic_hook_on, rust_panic_on;  /* the panic breakpoints enabled (set_panic_duty) */
	struct probe_list panic_probes, syscall_entry_probes, syscall_return_probes;
	/* a breakpoint went on a RIP-relative instruction, so gdb steps over
	 * in place (session_displaced_stepping_off) */
	bool displaced_off;
};

/* The stop being handled and what is open across stops (tracer_events.c;
 * arg() values, tracer_args.c). */
struct tracer_current {
	/* calls whose return breakpoint has not been hit yet */
	struct pending *pending;
	size_t npending, pending_cap;
	/* Per thread slot (by tid % 4096): the open system call's entry time
	 * and number, and whether our stop interrupted it and the kernel is
	 * restarting it. */
	uint64_t syscall_t0[4096];
	int16_t syscall_open_nr[4096];
	bool syscall_restarting[4096];
	/* the stack of the current event */
	struct frame *frames;
	size_t frames_cap;
	struct stack stack;
	/* arg() values of the current event */
	char **arg_strings;
	size_t narg_strings, arg_strings_cap;
	int event_gdb_id;
	pid_t event_tid;              /* the thread of the stop being handled, 0 if not ours */
	int event_bp;                 /* its breakpoint number, 0 for other stops */
	/* The hit being handled: its stop (the frame's parameter names among
	 * it) and whether its site is an inlined copy; valid while the stop is
	 * handled. */
	const struct session_stop *event;
	bool event_site_inlined;
};

/* The duty cycle and the budget (tracer_budget.c). */
struct tracer_duty_cycle {
	/* Arming stops the target (breakpoints, warming the unwinder) before
	 * anything is traced; under load that can take a few hundred ms. The
	 * budget runs from the first resume, and arming is reported apart: in
	 * the budget it would either be credit (elapsed without stops) or
	 * switch the probes off for seconds at the start. */
	uint64_t arm_stop_ns, budget_start_ns;
	enum duty duty;
	uint64_t duty_changed_ns, off_until_ns, covered_ns;
	/* An armed window ends at the first of its boundaries, every
	 * TRACER_WINDOW_CPU_NS of the target's CPU time, where the budget is
	 * overdrawn; never because a hit overdrew it (see
	 * budget_close_request). */
	uint64_t window_close_ns;
	bool close_requested;         /* interrupted to end the window: the next stop ends it */
	double stopped_ns;            /* the cost the budget holds: stopped + waiting for a CPU after */
	uint64_t duty_changes;        /* probes switched on, off or to draining: events' window numbers */
	struct stop_budget budget;
	/* gdb's own share of a hit (the -exec-continue round trip, stepping
	 * over the breakpoint, the trap, stopping every other thread, building
	 * the *stopped record) and the thread's wait for a CPU once resumed
	 * happen between our resume and the next stop report, where we cannot
	 * see them. They are measured from the hitting thread's scheduler
	 * clocks (stop_clock.h); a hit whose window cannot be measured exactly
	 * is counted at the median of the measured ones (at most its upper
	 * bound), or, with no measurement at all, at the median of the recent
	 * gaps between a resume and the next hit clamped to [0.05, 1.5] ms (for
	 * a hot function a gap is almost all gdb). */
	struct stop_clock clock;
	double gdb_hit_ns;            /* the current figure for a hit not measured */
	double gaps[32];
	size_t ngaps;
	/* gdb stepping in place (probes.displaced_off): how long the
	 * continues that started a step took to answer, which is how long gdb
	 * took to stop every other thread first (said in the report) */
	double in_place_resumes_ns;
	uint64_t in_place_resumes;
	uint64_t window_start_ns;     /* just before the last resume: the measured windows' start */
	uint64_t last_resume_ns;      /* once the last resume was acknowledged (elapsed's t0) */
	/* The target's CPU time (every thread, the ended ones too: the
	 * kernel's process CPU clock), split by whether the entry probes were
	 * on while it was spent. Read at each stop, when it stands still. */
	struct process_cpu {
		clockid_t clock;
		bool readable;
		uint64_t last_ns;
		double armed_ns, total_ns;
	} cpu;
};

/* The target's own clock (events' target_ns): wall time less the stops,
 * each counted from the hitting thread's trap to our resume
 * (tracer_events.c). */
struct tracer_target_clock {
	double frozen_ns;             /* the completed stops' share */
	uint64_t stop_start_ns;       /* the current stop's trap; 0 until an event asks */
	/* Non-stop: a stop holds only the thread that hit, so each thread's
	 * clock takes out its own stops (a wait or a hold is timed on one
	 * thread; the others' stops did not hold it), keyed by gdb's thread id */
	struct thread_frozen { int gdb_id; double ns; } *frozen_by_thread;
	size_t nfrozen_by_thread, frozen_by_thread_cap;
};

/* What a hit costs the hitting thread in CPU (tracer_cost.c; docs/
 * tracing.md, "Estimates"). Calibration hits put a one-shot breakpoint for
 * the hitting thread on the instruction right after the probed entry: the
 * thread's CPU between the two stops is ours alone (gdb's step over the
 * breakpoint, the trap, the report). */
struct hit_cpu {
	/* Per thread that hit (the first 64): its CPU time while the
	 * entry probes were on, read at its hits and at each switch of
	 * the probes, and the hits in it: what decides whether our cost
	 * hides the program's part. Other threads' CPU is left out: it
	 * runs on while a hitting thread is held (non-stop) or runs
	 * with it (all-stop), and made a hit look cheap. */
	struct hitter {
		pid_t tid;
		bool marked;
		uint64_t mark_ns, hits;
		double armed_ns;
		/* The thread's CPU from each window's opening to its first
		 * entry hit there (u_*), no stop of ours in it (docs/
		 * tracing.md, "Estimates"); windows it ran in past 0.1 ms
		 * without one, or whose first stop of it was another
		 * (censored); its CPU with the probes off. */
		bool in_window, hit_in_window, first_pending;
		uint64_t open_ns, off_mark_ns;
		bool off_marked;
		double pending_u_ns, u_sum, u_squares, off_ns;
		size_t n_u, censored;
	} hitters[64];
	size_t nhitters;
	double calibrations[TRACER_CALIBRATIONS];
	size_t ncalibrations;
	int pending_bp;           /* the calibration breakpoint in flight, 0 if none */
	pid_t pending_tid;
	uint64_t pending_run_ns;
	uint64_t handled_calibrations; /* stops at calibration breakpoints (not hits of a probe) */
};

/* What the estimators read (tracer_estimate.c). */
struct tracer_estimates {
	/* Each hit's stop as the hitting thread saw it (gdb's part measured at
	 * the stop plus ours), for the median and p99 in the summary. */
	double last_hidden_ns;
	double *hit_stops;
	size_t nhit_stops, hit_stops_cap;
	/* Each armed window's share of the process's armed CPU time and the
	 * entry hits in it: hits cluster in few windows, and the spread of
	 * the per-window counts, not a Poisson count, says how well the run's
	 * rate is known (docs/tracing.md, "Estimates"). */
	struct armed_window { double cpu_start_ns, cpu_ns; uint64_t entries_start, entries; bool open; } *windows;
	size_t nwindows, windows_cap;
};

/* One run (tracer.c: the loop, the threads, memory reads, stacks). */
struct tracer {
	struct session *s;
	struct symbolizer *sym;
	const struct event_sink *sink;
	bool sink_done;               /* the sink asked to end the run (exit() in a recipe) */
	bool main_thread_gone;        /* the target's main thread exited, its other threads run on */
	const struct tracer_config *cfg;
	struct tracer_stats *st;
	pid_t pid;
	int mem_fd;
	uint64_t start_ns, tracer_start_ns;
	/* gdb's non-stop mode: a hit stops only the thread that hit, which is
	 * resumed alone; the budget switches probes with the target running. */
	bool non_stop;
	struct thread_info *threads;
	size_t nthreads;
	unsigned threads_generation;   /* session_attach_generation when threads was listed */
	int regnums[NTRACED_REGS];     /* gdb's numbers of traced_registers */
	struct unwinder *unwinder;
	uint64_t fork_bytes_healed;   /* int3 copies removed from fork children by us */
	double fork_stopped_ns;       /* the stopped time the fork catchpoint's stops added */
	struct tracer_probes probes;
	struct tracer_current cur;
	struct tracer_duty_cycle duty_cycle;
	struct tracer_target_clock target_clock;
	struct hit_cpu hit_cpu;
	struct tracer_estimates estimates;
	/* exact entry counts under the budget (entry_counter.h): one per site,
	 * planned before the inserts */
	struct entry_counter *counters;
	struct entry_counter panic_counter;  /* at the panic hook's entry, under the budget */
	size_t ncounters;
	struct entry_counter_spaces counter_spaces;
	uint64_t counters_read_ns;    /* last read while the target ran (monotonic ns) */
	bool counters_removed;        /* and their final counts read */
};

/* Plans and installs the entry counters (budgeted runs), and removes
 * them (the target stopped for both); tracer_counters_finish fills the
 * stats. tracer_arm.c. */
struct arming;
int tracer_counters_plan(struct tracer *t, const struct arming *a, struct xerr *e);
int tracer_counters_install(struct tracer *t, struct xerr *e);
int tracer_counters_remove(struct tracer *t, struct xerr *e);
/* Whether any counter (a site's, the panic hook's) is in the target. */
bool tracer_counters_any(const struct tracer *t);
/* The stratum (events' weight_site) of the panics the hook's counter counts. */
size_t tracer_panic_stratum(const struct tracer *t);
/* At the end: one event per site that was only counted (no breakpoint),
 * weighted by its count (tracer_events.c). */
int tracer_fire_counted_only(struct tracer *t, struct xerr *e);
void tracer_counters_summarize(struct tracer *t);
/* Adds the kind of a thread named name (its name without digits: a pool's
 * threads are alike) to a slot's kinds, at most 4; false when it was
 * there already or there is no room. */
bool tracer_note_thread_kind(uint32_t kinds[4], uint8_t *nkinds, const char *name);


/* What arming inserts, resolved with the target running (tracer_resolve_probes). */
struct arming {
	int *sys_nrs;
	size_t nsys;
	bool sys_all, any_syscall;
	uint64_t hook, hook_size, rust_panic;
};

/* tracer.c */
int tracer_read_mem(struct tracer *t, uint64_t addr, void *buf, size_t len);
uint64_t tracer_read_word(struct tracer *t, uint64_t addr, bool *ok);
struct thread_info *tracer_thread_by_gdb_id(struct tracer *t, int gdb_id, struct xerr *e);
void tracer_thread_name_now(struct tracer *t, struct thread_info *th);
int tracer_take_stack(struct tracer *t, const struct thread_info *th, const uint64_t *regs, bool at_entry,
		      struct xerr *e);
int tracer_disarm(struct tracer *t, struct xerr *e);

/* tracer_arm.c */
void tracer_decode_site(struct tracer *t, struct site *site);
int tracer_insert_breakpoint(struct tracer *t, uint64_t addr, bool duty, int *number, struct xerr *e);
ssize_t tracer_find_site(const struct tracer *t, uint64_t addr);
int tracer_resolve_probes(struct tracer *t, struct arming *a, struct xerr *e);
int tracer_insert_probes(struct tracer *t, const struct arming *a, struct xerr *e);
void tracer_heal_children(struct tracer *t);

/* tracer_args.c */
void tracer_release_strings(struct tracer *t);
int tracer_arg_lookup(void *ctx, const char *name, struct event_value *out);

/* tracer_panic.c */
bool tracer_valid_utf8(const unsigned char *s, size_t n);
char *tracer_payload_message(struct tracer *t, uint64_t data, uint64_t vtable);
bool tracer_read_location(struct tracer *t, uint64_t addr, char *out, size_t size);

/* tracer_events.c */
struct thread_frozen *tracer_thread_frozen(struct tracer *t, int gdb_id, bool add);
bool tracer_is_return_bp_addr(const struct tracer *t, uint64_t addr);
bool tracer_is_return_bp(const struct tracer *t, int bp);
int tracer_handle_stop(struct tracer *t, const struct session_stop *ev, uint64_t when, bool *handled, struct xerr *e);

/* tracer_cost.c */
void tracer_hitters_at_switch(struct tracer *t, bool on_before, bool on_after);
void tracer_hitter_first_wait(struct tracer *t, pid_t tid, bool entry);
bool tracer_hit_cpu_at_stop(struct tracer *t, pid_t tid, int bp);
void tracer_calibrate_at(struct tracer *t, struct site *site, int gdb_id, pid_t tid);

/* tracer_budget.c. tracer_median_gap_ns, tracer_hidden_part_ns,
 * tracer_budget_duty_after_stop and tracer_budget_window_ends are the
 * budget's arithmetic and decisions: no gdb, no clock read (the callers
 * switch the probes and read the clocks). */
double tracer_median_gap_ns(const struct tracer *t);
double tracer_hidden_part_ns(double gdb_hit_ns, bool handled, const struct stop_clock_window *w);
enum duty tracer_budget_duty_after_stop(struct tracer *t, uint64_t now);
bool tracer_budget_window_ends(struct tracer *t, uint64_t clock, uint64_t now);
bool tracer_resumes_over_breakpoint(const struct tracer *t);
double tracer_probes_stopped_ns(const struct tracer *t);
void tracer_process_cpu_start(struct process_cpu *c, pid_t pid);
void tracer_process_cpu_mark(struct process_cpu *c, enum duty duty_before);
void tracer_account_hidden_part(struct tracer *t, bool handled, enum duty duty_at_stop, uint64_t when);
void tracer_armed_window_open(struct tracer *t);
void tracer_armed_window_close(struct tracer *t);
bool tracer_budgeted(const struct tracer *t);
uint64_t tracer_window_clock_ns(const struct tracer *t, uint64_t now);
int tracer_budget_after_stop(struct tracer *t, uint64_t now, struct xerr *e);
int tracer_budget_close_request(struct tracer *t, uint64_t now, struct xerr *e);
int tracer_budget_wake(struct tracer *t, uint64_t now, struct xerr *e);

/* tracer_estimate.c. The three estimators read only t's counts and clocks
 * (no gdb) and fill their figures in st. */
void tracer_armed_share_without_hits(const struct tracer *t, struct tracer_stats *st);
void tracer_window_dispersion(const struct tracer *t, struct tracer_stats *st);
void tracer_first_hit_bound(const struct tracer *t, struct tracer_stats *st);
void tracer_finish_stats(struct tracer *t, uint64_t end);

#endif
