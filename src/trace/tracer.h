/* tracer.h — breakpoint and catchpoint probes: function entry/return,
 * Rust panics, system calls, handed as events to a sink (events/event.h).
 *
 * tracer_run() resolves every function/return SPEC to addresses
 * (tracer_resolve.h), remembers the original code bytes (restore.h), inserts
 * one gdb address breakpoint per site (`-break-insert *ADDR`), a catchpoint
 * per system call set, and the panic breakpoints, then handles gdb's stops
 * until the duration, a signal, the sink asking to end (exit() in a
 * recipe), the sink failing or the target's exit. Each hit becomes one
 * event per probe it fires, with the probe's index in cfg->probes.
 *
 * Return probes: at an entry the return address is read at [rsp] and a
 * breakpoint is kept there; the matching return is the hit of that thread
 * whose rsp equals the entry rsp + 8, so recursion and threads pair up
 * correctly. elapsed is the wall time between the two stops as seen by
 * xgdbprof (it includes gdb's part of one hit, about a millisecond:
 * bench/README.md, "Figures behind the code").
 *
 * Budget (unless cfg->exact): the share of wall time the target spends
 * stopped by the probes (and waiting for a CPU right after our resumes) is
 * kept under max_stopped_percent by duty cycling: when the stop budget
 * (events/stop_budget.h) is overdrawn, the function and syscall probes are
 * disabled until it clears, then enabled again. The part of each stop only gdb sees is measured from the
 * hitting thread's scheduler clocks (stop_clock.h). Stats say which
 * fraction of the time was covered; counts are as measured, with an
 * extrapolation in the notes.
 *
 * Stop modes: in an all-stop session a hit holds every thread; in a
 * non-stop session (the default, session_non_stop) only the thread that
 * hit is stopped and resumed, and breakpoints are inserted, switched and
 * deleted with the target running. Before a breakpoint goes on a
 * RIP-relative instruction the tracer turns gdb's displaced stepping off
 * for the session (session_displaced_stepping_off says why).
 *
 * Exit contract: on every return path, with gdb alive, every breakpoint and
 * catchpoint this tracer created is deleted (all-stop: the target is
 * stopped for that and resumed after; non-stop: with it running) — the
 * caller then ends the session. Except the fork
 * catchpoint: it stays until the detach, so that forks reported after the
 * probes' removal still have their children cleaned (heal_fork_child). If
 * the target exec'd, the breakpoints are deleted and it is left stopped
 * for the detach (session_target_execed). If gdb died (or stopped
 * answering and was ended), session_rescue restores the original bytes
 * with our own ptrace before this returns and leaves the target running.
 * Returns 0 when the run ended normally
 * (duration, signal, exit(), target exit), -1 with e on an error (the stats
 * still hold what was done).
 *
 * Not supported together with `sample` probes (the fast walker's Dwfl serves
 * one unwinder); the caller refuses that combination.
 */
#ifndef XGDBPROF_TRACER_H
#define XGDBPROF_TRACER_H

#include "events/event.h"
#include "events/run_stats.h"
#include "util/error.h"
#include "session/restore.h"
#include "session/session.h"
#include "symbols/symbolize.h"
#include "trace/tracer_resolve.h"

#include <stdbool.h>
#include <stdint.h>

struct tracer_config {
	const struct probe_spec *probes;   /* the probes to arm (those the tracer does not arm are ignored) */
	size_t nprobes;
	double duration_s;            /* 0: until a signal, exit() or the target exits */
	double max_stopped_percent;   /* 0: no budget */
	bool exact;                   /* every hit, no budget */
	bool no_entry_counters;       /* under the budget, no counting jumps (entry_counter.h) */
	int max_frames;               /* machine frames per ustack; 0 means 64 */
	bool no_stacks;               /* skip stack walks (when no probe uses ustack/func) */
	bool verbose;                 /* a line per armed probe on stderr */
	uint64_t start_ns;            /* the run's start (events' since_start_ns); 0: now */
	struct tracer_progress *progress;  /* NULL, or kept up to date around the sink's ticks */
	/* NULL, or one list per probe: a function/return probe's sites as
	 * tracer_resolve(..., with_inlined true) gave them with this
	 * symbolizer before the attach (n 0: resolved here). The tracer takes
	 * the lists it uses (leaves them empty): resolving twice cost an
	 * attached run a second DWARF walk. */
	struct tracer_sites *resolved;
};

/* What the sink's tick (interval probes: snapshot()) may read and add. */
struct tracer_progress {
	/* in: the sink's own stopped time so far (it held the target stopped
	 * to read its heap); charged to the budget after the tick */
	double sink_stopped_s;
	/* out, before each tick: the share of the target's CPU time the
	 * probes were armed so far (1 when the budget never switched them
	 * off), what a measured count stands for at this point */
	double armed_fraction;
};

/* Calibration hits per run: each measures, on the hitting thread's CPU
 * clock, a hit with no program time in it (docs/tracing.md, "Estimates"). */
#define TRACER_CALIBRATIONS 16

/* A hit's full cost to the target's CPU lies between the calibrated one
 * (a step over the breakpoint and a report) and this many times it: that
 * plus a continue, a trap and what the stop costs the program after it
 * (caches, and more so on a loaded machine). The span covers what was
 * measured against the programs' own counts (bench/README.md, "Figures
 * behind the code"). */
#define TRACER_HIT_COST_SPAN 20.0

/* The CPU the threads that hit ran per hit with the probes armed must be
 * this many calibrated hit costs (median calibration) before an estimate
 * gets an interval: 1.5 times the span, so that a hit costing anything in
 * it leaves at least a third of that CPU to the program. Below, our cost's
 * unknown part could be most of it, and the estimate is a lower bound. */
#define TRACER_RESOLVABLE_GAP_RATIO (1.5 * TRACER_HIT_COST_SPAN)

/* Under the budget an armed window lasts a whole number of these, of the
 * target's CPU time, ended on that clock, not by a hit: docs/tracing.md,
 * "Budget". */
#define TRACER_WINDOW_CPU_NS 8000000.0

/* Under the budget the first this many panics are reported whatever it
 * costs; those after follow the probes' duty (docs/tracing.md, "Panics
 * under the budget"). */
#define TRACER_PANICS_ALWAYS 20

struct tracer_stats {
	struct run_stats run;         /* traced time (from the resume after arming), stopped time, end, notes */
	size_t sites;                 /* code addresses probed at entry */
	size_t breakpoints;           /* breakpoints + catchpoints inserted, return sites included */
	uint64_t hits;                /* stops handled */
	uint64_t entries, returns, unmatched_returns, panics, syscalls;
	/* Under the budget the panic breakpoints are switched off with the
	 * other probes: panics passed over then, and the total counted in the
	 * target at the panic hook's entry (panics_counted valid when
	 * panic_counter_installed). */
	uint64_t panics_passed_over;
	uint64_t panics_counted;
	bool panic_counter_installed;
	bool panic_counter_final;     /* read at its removal: else the last read while the target ran */
	char panic_counter_why[200];
	/* Returns timed by the kernel's account of the thread (elapsed is its
	 * CPU in the call), and those whose thread also slept in the call:
	 * their time off the CPU is wall time less a median of our stops. */
	uint64_t returns_cpu_timed, returns_slept;
	uint64_t returns_below_error;  /* CPU-timed, shorter than the least cost of a hit subtracted */
	double return_hit_cost_us;     /* that least cost: the correction's error is of its order */
	double returns_cpu_ns;        /* sum of elapsed over returns_cpu_timed */
	uint64_t syscalls_restarted;  /* calls our stops interrupted and the kernel restarted: one call each */
	bool bad_probe;               /* a function/return SPEC matched nothing: bad input, nothing armed */
	double attach_hold_s;         /* the target held stopped by the attach (session_attach_hold_ms) */
	double arm_stopped_s;         /* the target held stopped while arming, before run.elapsed_s; run.stopped_s
				       * is what the hits cost: held stopped, and waiting for a CPU once resumed
				       * (measured per hit, see stop_clock.h) */
	double waited_s;              /* of which waiting for a CPU, in the hits measured exactly */
	double covered_s;             /* time the duty-cycled probes were armed */
	uint64_t duty_cycles;         /* times the probes were switched off by the budget */
	uint64_t windows_cut;         /* of which at a hit, the budget far overdrawn, not on the clock */
	double hit_cost_ms;           /* mean stopped time per hit, gdb's share included (forks' stops not) */
	double gdb_hit_ms;            /* gdb's share of a hit (resume to report): median measured, else estimated */
	uint64_t hits_measured;       /* hits whose hidden part was read from the thread's scheduler clocks */
	uint64_t hits_bounded;        /* hits whose window also held a sleep: min(bound, median) counted */
	bool clocks_unavailable;      /* the kernel gives no schedstat: every hit estimated */
	/* Entry counters (entry_counter.h): the calls of the probed functions
	 * counted in the target itself, no stop per call. entries_counted is
	 * their sum when every entry site had one (counters_complete), and
	 * entries_seen_counted the entries the breakpoints saw meanwhile. */
	double entries_counted;
	bool counters_complete;
	size_t counters_installed, counters_wanted;
	size_t counter_threads_moved;  /* threads found between a counter's moved instructions at arming,
					* set to go on in its copy (entry_counter.h) */
	char counter_why[240];        /* the first site without one: which, and why */
	/* per stratum, ENTRY_COUNTER_STRATA per probed site (site * 9 +
	 * counter slot, or + 8: the whole site; events' weight_site): the
	 * calls counted there over its hits, what each of its hits stands for
	 * (0: no counter or no hit); owned by the stats (tracer_stats_release) */
	double *site_scales;
	size_t nsite_scales;
	/* per stratum too, where the counter totals the argument the site's
	 * probes sum (entry_counter.sums): that total over the hits' values
	 * of it, what each summed value stands for; 0: not totalled (the
	 * value is then weighed as its hit is, by site_scales) */
	double *site_sum_scales;
	/* Calls counted in slots no hit saw, whose threads are like none a hit
	 * came from (another kind, or gone before the end): no stack is known
	 * to stand for them, so they are in no stratum's scale; owned here. */
	struct tracer_apart {
		size_t site;              /* the site's index (its strata: site * 9 ...) */
		char function[128];
		double calls, sum;        /* sum: of the counter's totalled argument, 0 if none */
		double site_calls;        /* all the site's counted calls */
		char threads[96];         /* their names at the end, "" when gone */
	} *aparts;
	size_t naparts;
	size_t sites_summed;          /* sites whose counter totals their summed argument */
	char sum_why[240];            /* the first site with a summing probe whose counter does not: why */
	uint64_t weighted_hits;       /* hits at counted sites */
	size_t counted_no_stop_sites; /* sites that only count: a counter and no breakpoint at all */
	size_t counted_syscall_sites; /* of the counters installed, those at a system call's site */
	size_t counters_left;         /* counting code a thread stayed inside at removal: left there,
				       * unreachable (its jump taken out), with its slots */
	double call_cpu_bound_us;     /* > 0: with a count, the most a call's mean CPU can be (the
				       * target's CPU over the run / the calls counted) */
	double entries_estimated;     /* duty cycled: entries extrapolated to the whole run */
	double armed_fraction;        /* share of the target's CPU time spent with the entry probes armed:
				       * 1 unless duty cycled; what measured counts stand for */
	bool estimate_lower_bound;    /* our own cost hides the program's time between hits
				       * (TRACER_RESOLVABLE_GAP_RATIO): estimates are lower bounds */
	double armed_fraction_low, armed_fraction_high;  /* the range the armed share lies in once the
				       * hits' own CPU is taken out (intervals divide by these; both
				       * armed_fraction when nothing was calibrated) */
	uint64_t calibrations;        /* calibration hits measured */
	uint64_t calibration_stops;   /* stops at calibration breakpoints (not in hits; their cost is counted) */
	double hit_cpu_cost_us;       /* their median: a hit's CPU cost to the hitting thread, at least */
	double hit_gap_cpu_us;        /* the hitting threads' own armed CPU time per hit (mean) */
	uint64_t windows_armed;       /* armed windows (duty cycled), each a sample of the calls' rate */
	uint64_t windows_with_entries;/* of which held an entry hit */
	double entries_at_least;      /* > 0: the entries over the whole run are at least this many, from the
				       * target's CPU before each window's first hit (no cost of ours in it) */
	double first_hit_wait_us;     /* that wait's mean, of the target's CPU */
	bool interval_vetoed;         /* the calibrated cost's interval lay below that bound: a lower bound */
	double count_dispersion;      /* >= 1: the entries' per-window counts spread this many times
				       * more than Poisson counts would (calls in bursts): intervals widen */
	unsigned long forks;          /* forks seen (fork(), not vfork/posix_spawn): children detached */
	uint64_t fork_bytes_healed;   /* int3 bytes a child had inherited and gdb had not removed */
	double fork_stopped_s;        /* of run.stopped_s, what the stops at forks added */
	double hit_stop_median_ms, hit_stop_p99_ms;  /* a hit's stop of the hitting thread: ours + gdb's part */
	bool non_stop;                /* gdb non-stop mode: a hit stopped only the thread that hit */
	bool in_place_steps;          /* non-stop, but a breakpoint sits on a RIP-relative instruction:
				       * gdb stepped over in place, pausing the other threads meanwhile */
	double in_place_step_ms;      /* in_place_steps: a step's pause of every other thread, mean (a lower bound) */
	bool gdb_died;
	struct restore_report restore;/* gdb_died: what the byte restore did */
};

/* Whether some of the probes are ones only the tracer arms (function,
 * return, panic, syscall). */
bool tracer_wanted(const struct probe_spec *probes, size_t nprobes);

int tracer_run(struct session *s, struct symbolizer *sym, const struct tracer_config *cfg,
	       const struct event_sink *sink, struct tracer_stats *stats, struct xerr *e);

/* Frees what the stats own. */
void tracer_stats_release(struct tracer_stats *stats);

/* Prints the stats' summary (hits, stopped share, coverage, notes) to out,
 * for the end of a run. */
void tracer_stats_print(const struct tracer_stats *stats, FILE *out);

#endif
