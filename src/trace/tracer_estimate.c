/* tracer_estimate.c — the estimators and the stats. */
#include "trace/tracer_internal.h"

#define XSTR_(x) #x
#define XSTR(x) XSTR_(x)

static double median_of(const double *v, size_t n)
{
	double *sorted = malloc((n ? n : 1) * sizeof *sorted);
	if (!sorted)
		return -1;
	memcpy(sorted, v, n * sizeof *sorted);
	double m = stats_percentile(sorted, n, 50);
	free(sorted);
	return m;
}

/* The armed share once the hits' own CPU is taken out of it (docs/
 * tracing.md, "Estimates"). A hit costs the target at least the
 * calibrated figure c (the step over the breakpoint and a report) and at
 * most TRACER_HIT_COST_SPAN c (that plus a continue, a trap and the caches
 * after it). With the program's own CPU between hits well above that
 * (TRACER_RESOLVABLE_GAP_RATIO), the share lies between the two
 * subtractions and the estimate gets an interval over that range; else
 * only the low subtraction is sure, and the estimate is a lower bound from
 * it (tighter than with none). Without calibration nothing is taken out
 * and the estimate is a lower bound: the raw share is at least the true
 * one. The last hit of each window is resumed, and costs its CPU, after
 * the probes are off: not subtracted from the armed time. */
void tracer_armed_share_without_hits(const struct tracer *t, struct tracer_stats *st)
{
	const struct hit_cpu *h = &t->hit_cpu;
	st->armed_fraction_low = st->armed_fraction_high = st->armed_fraction;
	st->calibrations = h->ncalibrations;
	st->estimate_lower_bound = true;
	/* What decides is the share of the armed CPU time the hits' cost
	 * takes: the armed CPU per hit, not the gaps between a thread's hits
	 * (a gap longer than a window is never closed inside one, and calls in
	 * bursts, malloc then calloc, give gaps of two sizes), against the
	 * calibrated cost. */
	double stops = (double)(st->hits + h->handled_calibrations);
	double in_armed = stops > (double)st->duty_cycles ? stops - (double)st->duty_cycles : 0;
	double armed = t->duty_cycle.cpu.armed_ns, total = t->duty_cycle.cpu.total_ns;
	double hitters_armed = 0, hitters_hits = 0;
	for (size_t i = 0; i < h->nhitters; i++) {
		hitters_armed += h->hitters[i].armed_ns;
		hitters_hits += (double)h->hitters[i].hits;
	}
	if (hitters_hits > 0)
		st->hit_gap_cpu_us = hitters_armed / hitters_hits / 1e3;
	if (h->ncalibrations < 3 || hitters_hits < 5 || in_armed < 5 || total <= 0)
		return;
	double cost = median_of(h->calibrations, h->ncalibrations);
	st->hit_cpu_cost_us = cost / 1e3;
	double high = (armed - in_armed * cost) / (total - in_armed * cost);
	double low = (armed - in_armed * cost * TRACER_HIT_COST_SPAN) / (total - in_armed * cost * TRACER_HIT_COST_SPAN);
	if (!(high > 0) || high > st->armed_fraction)
		return;
	st->armed_fraction_high = high;
	st->estimate_lower_bound = !(low > 0) || st->hit_gap_cpu_us * 1e3 < TRACER_RESOLVABLE_GAP_RATIO * cost;
	if (st->estimate_lower_bound) {
		st->armed_fraction = st->armed_fraction_low = high;
		return;
	}
	st->armed_fraction_low = low;
	st->armed_fraction = sqrt(low * high);
}

/* How much more the entries' per-window counts spread than Poisson counts
 * of the same rate would: each armed window is one sample of the calls'
 * rate (calls in bursts, or a thread that calls only now and then, put
 * many hits in few windows). The ratio estimator's variance over windows
 * (sum of (m_w - r a_w)^2, n/(n-1) corrected) against the Poisson one
 * (the count itself); at least 1. */
void tracer_window_dispersion(const struct tracer *t, struct tracer_stats *st)
{
	double cpu = 0, entries = 0;
	size_t n = 0;
	for (size_t i = 0; i < t->estimates.nwindows; i++) {
		if (t->estimates.windows[i].cpu_ns <= 0)
			continue;
		n++;
		cpu += t->estimates.windows[i].cpu_ns;
		entries += (double)t->estimates.windows[i].entries;
		st->windows_with_entries += t->estimates.windows[i].entries > 0;
	}
	st->windows_armed = n;
	st->count_dispersion = 1;
	if (n < 2 || entries <= 0 || cpu <= 0)
		return;
	double rate = entries / cpu, squares = 0;
	for (size_t i = 0; i < t->estimates.nwindows; i++) {
		if (t->estimates.windows[i].cpu_ns <= 0)
			continue;
		double d = (double)t->estimates.windows[i].entries - rate * t->estimates.windows[i].cpu_ns;
		squares += d * d;
	}
	double dispersion = (double)n / (double)(n - 1) * squares / entries;
	if (dispersion > 1)
		st->count_dispersion = dispersion;
}

/* A lower bound on the entries over the whole run that no cost of our
 * stops can bias (docs/tracing.md, "Estimates"). In each armed window, a
 * thread's CPU from the opening to its first entry hit there is the
 * program's alone (in non-stop mode nothing of ours stopped it; in
 * all-stop mode other threads' hits may have, which only lengthens it),
 * and is a forward recurrence time U of its calls, whose mean is
 * E[X^2] / 2E[X] >= E[X] / 2 for any stationary sequence of calls with
 * mean spacing E[X] of CPU. So the thread's calls came at least every
 * 2E[U] of its CPU, and its CPU with the probes off made at least that
 * many. E[U] is taken at its 97.5% upper confidence bound. A thread
 * counts only with 3 waits or more and none censored (a window it ran in
 * past WAIT_CENSOR_NS without an entry hit: long waits would be missing
 * from the mean); the others add only what was measured. Sets
 * st->entries_at_least (0: no thread counted). */
void tracer_first_hit_bound(const struct tracer *t, struct tracer_stats *st)
{
	const struct hit_cpu *h = &t->hit_cpu;
	double extra = 0, waits = 0, nwaits = 0;
	for (size_t i = 0; i < h->nhitters; i++) {
		const struct hitter *x = &h->hitters[i];
		if (x->n_u < 3 || x->censored || x->off_ns <= 0)
			continue;
		double n = (double)x->n_u, mean = x->u_sum / n;
		double var = fmax(0, (x->u_squares - x->u_sum * x->u_sum / n) / (n - 1));
		double high = mean + stats_t975(x->n_u - 1) * sqrt(var / n);
		if (!(high > 0))
			continue;
		extra += x->off_ns / (2 * high);
		waits += x->u_sum;
		nwaits += n;
	}
	if (nwaits == 0 || st->entries == 0)
		return;
	st->first_hit_wait_us = waits / nwaits / 1e3;
	st->entries_at_least = (double)st->entries + extra;
}

/* The budget missed by more than a fifth (as the sampler says it,
 * sampler_note_budget_missed): the probes' stopped share, what a hit cost
 * here and the machine's load, not hidden behind the promise (issue 28
 * item 5). A hit is paid before the budget can switch the probes off, so
 * hits that cost more than a window's slack, under load or in a run too
 * short to spread them, overdraw it. The stops at forks have their own
 * note. */
static void note_budget_missed(const struct tracer *t, struct tracer_stats *st)
{
	double limit = t->cfg->max_stopped_percent;
	if (!tracer_budgeted(t) || limit <= 0 || st->run.elapsed_s <= 0 || !st->hits)
		return;
	double share = 100 * tracer_probes_stopped_ns(t) / 1e9 / st->run.elapsed_s;
	if (!(share > 1.2 * limit))
		return;
	char machine[96];
	run_notes_machine_load(machine, sizeof machine, proc_load_average(), sysconf(_SC_NPROCESSORS_ONLN));
	run_notes_add(&st->run.notes, "the %.0f%% budget was not kept: the probes held the target %.1f%% of the time "
		      "over %.1f s; a hit held it a median %.2f ms (p99 %.2f ms) here%s, and each is paid before the "
		      "budget can switch the probes off", limit, share, st->run.elapsed_s, st->hit_stop_median_ms,
		      st->hit_stop_p99_ms, machine);
}

void tracer_finish_stats(struct tracer *t, uint64_t end)
{
	struct tracer_stats *st = t->st;
	if (t->duty_cycle.duty == DUTY_ON)
		t->duty_cycle.covered_ns += end - t->duty_cycle.duty_changed_ns;
	t->duty_cycle.duty_changed_ns = end;
	if (!t->duty_cycle.budget_start_ns || t->duty_cycle.budget_start_ns > end)
		t->duty_cycle.budget_start_ns = end;
	st->run.elapsed_s = (double)(end - t->duty_cycle.budget_start_ns) / 1e9;
	st->arm_stopped_s = t->duty_cycle.arm_stop_ns && t->duty_cycle.budget_start_ns > t->duty_cycle.arm_stop_ns
				    ? (double)(t->duty_cycle.budget_start_ns - t->duty_cycle.arm_stop_ns) / 1e9 : 0;
	st->in_place_step_ms = t->duty_cycle.in_place_resumes
				       ? t->duty_cycle.in_place_resumes_ns / 1e6 / (double)t->duty_cycle.in_place_resumes : 0;
	st->run.stopped_s = t->duty_cycle.stopped_ns / 1e9;
	st->run.stops = st->hits;
	st->covered_s = tracer_budgeted(t) ? (double)t->duty_cycle.covered_ns / 1e9 : st->run.elapsed_s;
	/* the forks' stops are not the hits' (said in their own note) */
	st->hit_cost_ms = st->hits ? tracer_probes_stopped_ns(t) / 1e6 / (double)st->hits : 0;
	st->gdb_hit_ms = t->duty_cycle.gdb_hit_ns / 1e6;
	if (t->estimates.nhit_stops) {
		st->hit_stop_median_ms = stats_percentile(t->estimates.hit_stops, t->estimates.nhit_stops, 50) / 1e6;
		st->hit_stop_p99_ms = stats_percentile(t->estimates.hit_stops, t->estimates.nhit_stops, 99) / 1e6;
	}
	st->hits_measured = t->duty_cycle.clock.measured;
	st->calibration_stops = t->hit_cpu.handled_calibrations;
	st->waited_s = t->duty_cycle.clock.waited_ns / 1e9;
	st->hits_bounded = t->duty_cycle.clock.bounded;
	st->clocks_unavailable = t->duty_cycle.clock.unavailable;
	struct run_notes *notes = &st->run.notes;
	st->armed_fraction = 1;
	if (st->duty_cycles && st->run.elapsed_s > 0) {
		/* Calls are made as the target's code runs: the share of its CPU
		 * time spent with the entry probes on is the share of the calls
		 * they could see. (Wall time would be wrong as soon as the number
		 * of running threads changes, and one thread's clock misses the
		 * others'.) */
		if (!st->run.target_exited) {
			tracer_process_cpu_mark(&t->duty_cycle.cpu, t->duty_cycle.duty);
			tracer_hitters_at_switch(t, t->duty_cycle.duty == DUTY_ON, false);
		}
		tracer_armed_window_close(t);
		st->armed_fraction = t->duty_cycle.cpu.total_ns > 0 ? fmin(1, t->duty_cycle.cpu.armed_ns / t->duty_cycle.cpu.total_ns) : 0;
		/* Each armed window also holds the CPU our stop and resume cost the
		 * threads (ptrace, gdb's step over the breakpoint): ~0.05-0.8 ms a
		 * hit here. When the windows are not much longer than that — calls
		 * come often, or between sleeps, with little CPU between them —
		 * the share over-counts the CPU that could have made calls. */
		tracer_armed_share_without_hits(t, st);
		tracer_window_dispersion(t, st);
		tracer_first_hit_bound(t, st);
		if (st->entries_at_least > 0) {
			/* The share the bound implies is the most the true one can be:
			 * an interval above it rests on a wrong cost (a stop that costs
			 * the program more than TRACER_HIT_COST_SPAN calibrated ones), and
			 * a lower bound from the calibrated cost alone may be weaker. */
			double share = (double)st->entries / st->entries_at_least;
			if (!st->estimate_lower_bound && st->armed_fraction_low > share) {
				st->estimate_lower_bound = true;
				st->interval_vetoed = true;
			}
			if (st->estimate_lower_bound && share < st->armed_fraction_high)
				st->armed_fraction = st->armed_fraction_low = st->armed_fraction_high = share;
		}
		bool counters_only = st->counted_no_stop_sites == st->counters_installed;
		if (st->counters_complete && st->entries_counted > 0 && !counters_only) {
			/* Counted in the target: what the breakpoints saw is a known
			 * share of the calls, whatever our stops cost. (Sites that
			 * only count have no breakpoint: the windows are the other
			 * probes', syscall catchpoints beside the wrappers' counts,
			 * and the CPU time armed stays their share.) */
			st->entries_estimated = st->entries_counted;
			st->armed_fraction = fmin(1, (double)st->entries / st->entries_counted);
			st->armed_fraction_low = st->armed_fraction_high = st->armed_fraction;
			st->estimate_lower_bound = st->interval_vetoed = false;
		} else if (st->entries && st->armed_fraction > 0) {
			st->entries_estimated = (double)st->entries / st->armed_fraction;
			run_notes_add(notes, "function entries: %" PRIu64 " measured while the probes were armed (%.2g%% "
				 "of the target's CPU time); %s %.0f over the whole run", st->entries,
				 100 * st->armed_fraction, st->estimate_lower_bound ? "at least about" : "about",
				 st->entries_estimated);
		}
		run_notes_add(notes, "probes were switched off %" PRIu64 " times to keep the target stopped <= %.0f%% "
			 "of the time%s: counts in the maps are as measured, each with an estimate for the whole run "
			 "and its 95%% interval", st->duty_cycles, t->cfg->max_stopped_percent,
			 t->fork_stopped_ns > 0 ? " by the probes (the stops at forks aside: their own note)" : "");
		if (st->windows_cut)
			run_notes_add(notes, "%" PRIu64 " of those windows ended at a hit, the budget far overdrawn (a hit "
				      "cost more than a window's slack): there the estimates lean towards the calls that "
				      "come first after the probes are armed", st->windows_cut);
	}
	note_budget_missed(t, st);
	if (st->panic_counter_installed && (st->panics_counted || st->panics))
		run_notes_add(notes, "panics: %" PRIu64 " in all, counted in the target (a counter at the panic hook's "
			      "entry: %s); %" PRIu64 " reported with message, location and stack%s",
			      st->panics_counted > st->panics ? st->panics_counted : st->panics,
			      st->panic_counter_final ? "exact" : "exact up to its last read, at most 10 ms before the end",
			      st->panics,
			      st->panics_counted <= st->panics ? ""
			      : st->duty_cycles ? ", the others passed over while the probes were off to keep the budget "
						  "(their locations are not known)"
						: ", the others still under way when the trace ended");
	else if (st->panics_passed_over)
		run_notes_add(notes, "panics: %" PRIu64 " reported with message, location and stack, %" PRIu64 " more "
			      "seen passing while the probes were off (not counted in the target: %s); others may have "
			      "passed unseen", st->panics, st->panics_passed_over,
			      st->panic_counter_why[0] ? st->panic_counter_why : "no counter");
	const char *counted_where = !st->counted_syscall_sites ? "each probed function's entry"
				    : st->counted_syscall_sites == st->counters_installed ? "each system call's site"
				    : "each probed function's entry and system call's site";
	if (st->counters_complete && st->counted_no_stop_sites == st->counters_installed)
		run_notes_add(notes, "%s: %.0f counted in the target (a counter at %s; the probes only count, so no "
			      "breakpoint was set: no stop, no trap)",
			      st->counted_syscall_sites == st->counters_installed ? "calls" : "function entries",
			      st->entries_counted, counted_where);
	else if (st->counters_complete)
		run_notes_add(notes, "function entries: %.0f counted in the target (a counter at each probed function's "
			      "entry, no stop per call: exact), %" PRIu64 " of them seen at the breakpoints%s",
			      st->entries_counted, st->entries,
			      st->duty_cycles ? ", whose maps are scaled to the count" : "");
	else if (st->counters_installed)
		run_notes_add(notes, "function entries: counted in the target at %zu of %zu probed sites only (%s): "
			      "estimates rest on the armed share", st->counters_installed, st->counters_wanted, st->counter_why);
	else if (st->counters_wanted && st->counter_why[0])
		run_notes_add(notes, "function entries: not counted in the target (%s): estimates rest on the armed share",
			      st->counter_why);
	if (st->counters_left)
		run_notes_add(notes, "function entries: %zu counter%s' code left in the target, a thread still inside it "
			      "after ~1 s of running at the end: unreachable (the jump to it was taken out), it and its "
			      "slots keep those bytes of the modules' unused tails, which a later run will not take",
			      st->counters_left, st->counters_left == 1 ? "" : "s");
	if (st->counter_threads_moved)
		run_notes_add(notes, "function entries: %zu time%s a thread stood between the instructions a counter moves "
			      "when the probes were armed (back from a system call the function's first instruction "
			      "set up): it went on in the counting code's copy of them", st->counter_threads_moved,
			      st->counter_threads_moved == 1 ? "" : "s");
	for (size_t i = 0; i < st->naparts; i++)
		run_notes_add(notes, "function entries: %.0f of %s's calls (%.1f%% of those counted there) came from "
			      "threads no hit saw (%s), like none a hit came from: no stack is known for them, so they "
			      "are in no map entry (print() says them under the map)", st->aparts[i].calls,
			      st->aparts[i].function,
			      st->aparts[i].site_calls > 0 ? 100 * st->aparts[i].calls / st->aparts[i].site_calls : 0,
			      st->aparts[i].threads);
	if (st->sites_summed)
		run_notes_add(notes, "summed arguments: totalled in the target at %zu site%s, a stack's sum its hits' share "
			      "of the total%s%s", st->sites_summed, st->sites_summed == 1 ? "" : "s",
			      st->sum_why[0] ? "; not at " : "", st->sum_why);
	else if (st->sum_why[0])
		run_notes_add(notes, "summed arguments: not totalled in the target (%s): sums weighed by calls", st->sum_why);
	if (st->returns_cpu_timed && st->return_hit_cost_us > 0)
		run_notes_add(notes, "elapsed: %" PRIu64 " return%s timed by the thread's own CPU in the call (the kernel's "
			      "schedstat, still while we hold it), less %.0f us, the least a hit costs the thread; "
			      "waits for a CPU left out; mean %.1f us", st->returns_cpu_timed,
			      st->returns_cpu_timed == 1 ? "" : "s", st->return_hit_cost_us,
			      st->returns_cpu_ns / 1e3 / (double)st->returns_cpu_timed);
	else if (st->returns_cpu_timed)
		run_notes_add(notes, "elapsed: %" PRIu64 " return%s timed by the thread's own CPU in the call (the kernel's "
			      "schedstat, still while we hold it), our hits' CPU not taken out (no calibration yet: each is "
			      "an upper bound by that CPU, 20-50 us a call on the test machine); waits for a CPU left out; mean %.1f us",
			      st->returns_cpu_timed, st->returns_cpu_timed == 1 ? "" : "s",
			      st->returns_cpu_ns / 1e3 / (double)st->returns_cpu_timed);
	/* Counted in the target: the calls' mean CPU is at most the target's
	 * CPU over the run divided by their number, whatever our stops did. A
	 * mean read above that is our stops' (issue 26: 0.5 ms printed for a
	 * 140 ns insert). */
	if (st->counters_complete && st->entries_counted > 0 && st->returns_cpu_timed && t->duty_cycle.cpu.total_ns > 0) {
		st->call_cpu_bound_us = t->duty_cycle.cpu.total_ns / st->entries_counted / 1e3;
		double mean_us = st->returns_cpu_ns / 1e3 / (double)st->returns_cpu_timed;
		if (mean_us > st->call_cpu_bound_us)
			run_notes_add(notes, "elapsed: NOT the function's: a call's mean CPU is at most %.3g us (the target's "
				      "CPU over the run, %.2f s, over the %.0f calls counted in the target), yet the returns "
				      "timed read a mean %.1f us: what they measured is our stops' cost", st->call_cpu_bound_us,
				      t->duty_cycle.cpu.total_ns / 1e9, st->entries_counted, mean_us);
	}
	if (st->returns_below_error)
		run_notes_add(notes, "elapsed: %" PRIu64 " of those read under %.0f us, within the error of that "
			      "correction: what remains of them may be ours", st->returns_below_error,
			      st->return_hit_cost_us);
	if (st->returns_slept)
		run_notes_add(notes, "elapsed: %" PRIu64 " return%s whose thread also slept in the call: %s time off the "
			      "CPU is wall time less our stops' median (%.2f ms), only an estimate, not to be "
			      "trusted below a few ms", st->returns_slept, st->returns_slept == 1 ? "" : "s",
			      st->returns_slept == 1 ? "its" : "their", st->gdb_hit_ms);
	if (st->unmatched_returns)
		run_notes_add(notes, "%" PRIu64 " stops at return sites matched no recorded entry (calls begun while "
			 "probes were off)", st->unmatched_returns);
}

/* ", N WHAT" for a count that is not zero, after the first "(" */
static void put_count(FILE *out, const char **sep, uint64_t n, const char *one, const char *many)
{
	if (!n)
		return;
	fprintf(out, "%s%" PRIu64 " %s", *sep, n, n == 1 ? one : many);
	*sep = ", ";
}

/* One plain sentence per line (docs/tracing.md, "What a trace reports"). */
void tracer_stats_release(struct tracer_stats *stats)
{
	free(stats->site_scales);
	free(stats->site_sum_scales);
	stats->site_scales = stats->site_sum_scales = NULL;
	stats->nsite_scales = 0;
	free(stats->aparts);
	stats->aparts = NULL;
	stats->naparts = 0;
}

void tracer_stats_print(const struct tracer_stats *st, FILE *out)
{
	double armed_pct = st->run.elapsed_s > 0 ? 100 * st->covered_s / st->run.elapsed_s : 100;
	fprintf(out, "xgdbprof: traced %.1f s: %" PRIu64 " hit%s at %zu probe site%s", st->run.elapsed_s, st->hits,
		st->hits == 1 ? "" : "s", st->sites, st->sites == 1 ? "" : "s");
	const char *sep = " (";
	put_count(out, &sep, st->entries, "function entry", "function entries");
	put_count(out, &sep, st->returns, "return", "returns");
	put_count(out, &sep, st->panics, "panic", "panics");
	put_count(out, &sep, st->syscalls, "system call", "system calls");
	fprintf(out, "%s seen while the probes were armed (%.*f%% of the time); target held stopped %.1f%% of "
		"the time (%.2f s, %.3f ms per hit)\n", *sep == ',' ? ")" : "", armed_pct < 10 ? 1 : 0, armed_pct,
		st->run.elapsed_s > 0 ? 100 * st->run.stopped_s / st->run.elapsed_s : 0, st->run.stopped_s,
		st->hit_cost_ms);
	if (st->hits && st->hit_stop_median_ms > 0)
		fprintf(out, "xgdbprof: a hit held the thread that hit a median %.3f ms (p99 %.3f ms); %s\n",
			st->hit_stop_median_ms, st->hit_stop_p99_ms,
			!st->non_stop ? "every other thread was held as long (gdb all-stop mode)"
			: st->in_place_steps ? "the other threads ran on, but were paused while gdb stepped over a "
					       "breakpoint on a RIP-relative instruction (gdb non-stop mode, in-place steps)"
					     : "the other threads ran on (gdb non-stop mode)");
	if (st->in_place_steps && st->in_place_step_ms > 0)
		fprintf(out, "xgdbprof: a step in place paused every thread at least %.3f ms (gdb stopped them all before it "
			"answered the continue); the held share above counts these pauses\n", st->in_place_step_ms);
	if (st->syscalls_restarted)
		fprintf(out, "xgdbprof: %" PRIu64 " system call%s restarted after our stops: the kernel resumed %s, so "
			"each is counted once, with no error\n", st->syscalls_restarted,
			st->syscalls_restarted == 1 ? " was" : "s were", st->syscalls_restarted == 1 ? "it" : "them");
	if (st->attach_hold_s > 0)
		fprintf(out, "xgdbprof: before the trace began, attaching held the target stopped at most %.1f ms and "
			"arming the probes %.1f ms (not counted above)\n", st->attach_hold_s * 1e3,
			st->arm_stopped_s * 1e3);
	else if (st->arm_stopped_s > 0)
		fprintf(out, "xgdbprof: before the trace began, arming the probes held the target stopped %.1f ms "
			"(not counted above)\n", st->arm_stopped_s * 1e3);
	uint64_t stops = st->hits + st->calibration_stops;
	if (st->hits && st->hits_measured)
		fprintf(out, "xgdbprof: a hit cost gdb a median %.3f ms, read from the thread's schedstat (wall - on "
			"CPU) for %" PRIu64 " of %" PRIu64 " hits%s%s; waiting for a CPU after our resumes took %.3f s "
			"in all and counts as stopped\n", st->gdb_hit_ms, st->hits_measured, stops,
			st->calibration_stops ? " (calibration hits included)" : "",
			st->hits_measured < stops ? " (the others counted at that median, or their bound when "
						       "lower)" : "", st->waited_s);
	else if (st->hits)
		fprintf(out, "xgdbprof: gdb's part of each hit was estimated at %.3f ms from the gaps between a resume "
			"and the next hit, as %s\n", st->gdb_hit_ms,
			st->clocks_unavailable ? "this kernel gives no per-thread scheduler clocks"
					       : "no hit came in a window the thread's clocks could bracket");
	if (st->calibrations && st->hit_cpu_cost_us > 0)
		fprintf(out, "xgdbprof: a hit cost the thread that hit at least %.0f us of its CPU (median of %" PRIu64
			" calibration hits); a thread that hit ran a mean %.0f us of CPU per hit with the probes armed: %s\n",
			st->hit_cpu_cost_us, st->calibrations, st->hit_gap_cpu_us,
			st->estimate_lower_bound ? "mostly our own cost, or could be (a stop may cost the program up to " XSTR(TRACER_HIT_COST_SPAN) "x that with its caches), so estimates are lower bounds"
						 : "estimates take our cost out, and their intervals its range");
	if (st->entries_at_least > 0)
		fprintf(out, "xgdbprof: before each armed window's first hit the target ran a mean %.0f us of CPU, none of it "
			"our cost: the calls came at least every %.0f us of CPU (95%%), so the entries were at least %.0f%s\n",
			st->first_hit_wait_us, st->entries ? 2 * st->first_hit_wait_us : 0, st->entries_at_least,
			st->interval_vetoed ? "; the interval from the calibrated cost lay below that (a stop costs this "
					      "program more), so estimates are lower bounds" : "");
	if (st->windows_armed && st->sites)   /* (a panic-only recipe has no entries) */
		fprintf(out, "xgdbprof: the entries came in %" PRIu64 " of %" PRIu64 " armed windows, their per-window counts "
			"spread %.1fx what steady calls would give: intervals widen to it\n", st->windows_with_entries,
			st->windows_armed, st->count_dispersion);
	for (int i = 0; i < st->run.notes.n; i++)
		fprintf(out, "note: %s\n", st->run.notes.text[i]);
	if (st->run.notes.dropped > 0)
		fprintf(out, "note: %d more notes of the run were not kept (at most %d are)\n", st->run.notes.dropped,
			RUN_MAX_NOTES);
	if (st->gdb_died) {
		char what[200];
		restore_report_describe(&st->restore, what, sizeof what);
		fprintf(out, "note: gdb died; xgdbprof %s\n", what);
	}
}
