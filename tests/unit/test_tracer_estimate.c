/* test_tracer_estimate.c — the tracer's estimators and budget decisions on
 * constructed tracer state, no gdb and no session (src/trace/
 * tracer_estimate.c, tracer_budget.c), held to docs/tracing.md ("Budget",
 * "Estimates"): the per-window dispersion, the first-hit bound, the armed
 * share with the hits' cost taken out, what a stop's hidden window adds,
 * and when an armed window ends or drains. Exit 0 pass, 1 fail. */
#include "trace/tracer_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MS 1e6
#define US 1e3

static bool near(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fmax(fabs(want), 1e-12);
}

static struct tracer *new_tracer(struct tracer_stats *st)
{
	struct tracer *t = calloc(1, sizeof *t);
	if (!t) {
		fprintf(stderr, "out of memory\n");
		exit(99);
	}
	memset(st, 0, sizeof *st);
	t->st = st;
	return t;
}

static void add_window(struct tracer *t, double cpu_ns, uint64_t entries)
{
	struct armed_window w = { .cpu_ns = cpu_ns, .entries = entries };
	if (ARRAY_PUSH(t->estimates.windows, t->estimates.nwindows, t->estimates.windows_cap, w) < 0) {
		fprintf(stderr, "out of memory\n");
		exit(99);
	}
}

static double dispersion_of(const double *cpu_ms, const uint64_t *entries, size_t n, struct tracer_stats *st)
{
	struct tracer *t = new_tracer(st);
	for (size_t i = 0; i < n; i++)
		add_window(t, cpu_ms[i] * MS, entries[i]);
	tracer_window_dispersion(t, st);
	free(t->estimates.windows);
	free(t);
	return st->count_dispersion;
}

static void test_window_dispersion(void)
{
	struct tracer_stats st;
	/* counts in proportion to each window's CPU: steady calls, d = 1 */
	double cpu[] = { 1, 3, 2, 2 };
	uint64_t steady[] = { 10, 30, 20, 20 };
	CHECK(dispersion_of(cpu, steady, 4, &st) == 1);
	CHECK(st.windows_armed == 4 && st.windows_with_entries == 4);
	/* less spread than Poisson: still 1, never narrower */
	double even[] = { 1, 1, 1, 1 };
	uint64_t poissonish[] = { 9, 11, 10, 10 };
	CHECK(dispersion_of(even, poissonish, 4, &st) == 1);
	/* all 40 calls in one of four equal windows: (n/(n-1)) sum (m - r a)^2 / m
	 * = 4/3 * (30^2 + 3 * 10^2) / 40 = 40 */
	uint64_t burst[] = { 40, 0, 0, 0 };
	CHECK(near(dispersion_of(even, burst, 4, &st), 40, 1e-12));
	CHECK(st.windows_armed == 4 && st.windows_with_entries == 1);
	/* the rate is per CPU time: 30 in 1 ms and 10 in 3 ms against 10/ms,
	 * 2/1 * (20^2 + 20^2) / 40 = 40 */
	double unequal[] = { 1, 3 };
	uint64_t against[] = { 30, 10 };
	CHECK(near(dispersion_of(unequal, against, 2, &st), 40, 1e-12));
	/* a window with no CPU in it (the target never ran while armed) is no
	 * sample: the burst above is unchanged by one */
	double with_empty[] = { 1, 1, 0, 1, 1 };
	uint64_t burst_empty[] = { 40, 0, 0, 0, 0 };
	CHECK(near(dispersion_of(with_empty, burst_empty, 5, &st), 40, 1e-12));
	CHECK(st.windows_armed == 4);
	/* one window, or no entry: nothing to say about spread */
	uint64_t one[] = { 40 };
	CHECK(dispersion_of(even, one, 1, &st) == 1 && st.windows_armed == 1);
	uint64_t none[] = { 0, 0, 0, 0 };
	CHECK(dispersion_of(even, none, 4, &st) == 1 && st.windows_with_entries == 0);
	CHECK(dispersion_of(NULL, NULL, 0, &st) == 1 && st.windows_armed == 0);
}

/* A hitting thread with first-hit waits u_us (its CPU from a window's
 * opening to its first entry there) and off_ms of CPU with the probes off. */
static void add_hitter(struct tracer *t, const double *u_us, size_t n, double off_ms, size_t censored)
{
	struct hitter *x = &t->hit_cpu.hitters[t->hit_cpu.nhitters++];
	for (size_t i = 0; i < n; i++) {
		x->u_sum += u_us[i] * US;
		x->u_squares += u_us[i] * US * u_us[i] * US;
	}
	x->n_u = n;
	x->off_ns = off_ms * MS;
	x->censored = censored;
}

static void test_first_hit_bound(void)
{
	struct tracer_stats st;
	/* Waits of 100 us every window, no spread: calls at least every
	 * 200 us of CPU, so 1 s with the probes off made at least 5000. */
	struct tracer *t = new_tracer(&st);
	double regular[] = { 100, 100, 100 };
	add_hitter(t, regular, 3, 1000, 0);
	st.entries = 100;
	tracer_first_hit_bound(t, &st);
	CHECK(near(st.entries_at_least, 100 + 5000, 1e-9));
	CHECK(near(st.first_hit_wait_us, 100, 1e-12));
	free(t);

	/* 100, 200, 300 us: mean 200, s 100; its 97.5% upper bound takes
	 * Student's t for 2 degrees of freedom (4.303): 200 + 4.303 * 100 / sqrt(3) */
	t = new_tracer(&st);
	double spread[] = { 100, 200, 300 };
	add_hitter(t, spread, 3, 1000, 0);
	st.entries = 100;
	tracer_first_hit_bound(t, &st);
	double high_us = 200 + 4.303 * 100 / sqrt(3);
	CHECK(near(st.entries_at_least, 100 + 1e9 / (2 * high_us * US), 1e-9));
	double three_waits = st.entries_at_least;
	free(t);

	/* The same mean and spread over 30 waits is known better: a higher bound */
	t = new_tracer(&st);
	double thirty[30];
	for (int i = 0; i < 30; i++)
		thirty[i] = spread[i % 3];
	add_hitter(t, thirty, 30, 1000, 0);
	st.entries = 100;
	tracer_first_hit_bound(t, &st);
	CHECK(st.entries_at_least > three_waits);
	CHECK(st.entries_at_least < 100 + 1e9 / (2 * 200 * US));   /* never past the mean's own figure */
	free(t);

	/* Threads that do not count: 2 waits, a censored window (long waits
	 * missing from the mean), no CPU with the probes off. They add
	 * nothing, to the bound or to the mean wait. */
	t = new_tracer(&st);
	double short_waits[] = { 10, 10 };
	double long_waits[] = { 1, 1, 1 };
	add_hitter(t, regular, 3, 1000, 0);
	add_hitter(t, short_waits, 2, 1000, 0);
	add_hitter(t, long_waits, 3, 1000, 1);
	add_hitter(t, long_waits, 3, 0, 0);
	st.entries = 100;
	tracer_first_hit_bound(t, &st);
	CHECK(near(st.entries_at_least, 5100, 1e-9) && near(st.first_hit_wait_us, 100, 1e-12));
	free(t);

	/* none counts, or nothing measured: no bound (0) */
	t = new_tracer(&st);
	add_hitter(t, short_waits, 2, 1000, 0);
	st.entries = 100;
	tracer_first_hit_bound(t, &st);
	CHECK(st.entries_at_least == 0);
	free(t);
	t = new_tracer(&st);
	add_hitter(t, regular, 3, 1000, 0);
	tracer_first_hit_bound(t, &st);
	CHECK(st.entries_at_least == 0);
	free(t);
}

/* A duty-cycled run: the process ran 1 s of CPU, 0.5 s of it armed; 11
 * hits and 5 calibration stops in 1 window (whose last hit is resumed
 * after the switch-off: 15 inside), calibrated at `cost_us` (median), the
 * hitting thread's armed CPU `hitter_ms` over `hitter_hits` hits. */
static struct tracer *armed_run(struct tracer_stats *st, const double *calibrations_us, size_t ncal,
				double hitter_ms, uint64_t hitter_hits)
{
	struct tracer *t = new_tracer(st);
	t->duty_cycle.cpu.armed_ns = 0.5e9;
	t->duty_cycle.cpu.total_ns = 1e9;
	st->armed_fraction = 0.5;
	st->hits = 11;
	st->duty_cycles = 1;
	t->hit_cpu.handled_calibrations = 5;
	for (size_t i = 0; i < ncal; i++)
		t->hit_cpu.calibrations[i] = calibrations_us[i] * US;
	t->hit_cpu.ncalibrations = ncal;
	t->hit_cpu.nhitters = 1;
	t->hit_cpu.hitters[0].armed_ns = hitter_ms * MS;
	t->hit_cpu.hitters[0].hits = hitter_hits;
	return t;
}

/* The share with k hits of c ns each taken out of the armed and the total CPU. */
static double share_without(double k, double c)
{
	return (0.5e9 - k * c) / (1e9 - k * c);
}

static void test_armed_share(void)
{
	struct tracer_stats st;
	/* The median calibration is the cost (an outlier does not move it) */
	double cal[] = { 100, 90, 100, 5000, 100 };

	/* 5 ms of the hitter's CPU a hit, 50 costs: an interval between
	 * taking out c and 20 c a hit, the estimate at their geometric mean */
	struct tracer *t = armed_run(&st, cal, 5, 50, 10);
	tracer_armed_share_without_hits(t, &st);
	CHECK(near(st.hit_cpu_cost_us, 100, 1e-12) && near(st.hit_gap_cpu_us, 5000, 1e-12));
	CHECK(st.calibrations == 5);
	CHECK(!st.estimate_lower_bound);
	CHECK(near(st.armed_fraction_high, share_without(15, 100 * US), 1e-12));
	CHECK(near(st.armed_fraction_low, share_without(15, 20 * 100 * US), 1e-12));
	CHECK(near(st.armed_fraction, sqrt(st.armed_fraction_low * st.armed_fraction_high), 1e-12));
	CHECK(st.armed_fraction_low < st.armed_fraction && st.armed_fraction < st.armed_fraction_high &&
	      st.armed_fraction_high < 0.5);
	free(t);

	/* 2 ms a hit, 20 costs: our cost could be most of it; a lower bound
	 * from the one sure subtraction (c a hit) */
	t = armed_run(&st, cal, 5, 20, 10);
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound);
	CHECK(near(st.armed_fraction, share_without(15, 100 * US), 1e-12));
	CHECK(st.armed_fraction_low == st.armed_fraction && st.armed_fraction_high == st.armed_fraction);
	free(t);

	/* 2 ms calibrated: 20 c a hit is more than all the armed CPU (low
	 * below 0), however long the gaps: a lower bound from c */
	double dear[] = { 2000, 2000, 2000 };
	t = armed_run(&st, dear, 3, 500, 5);
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound && near(st.armed_fraction, share_without(15, 2 * MS), 1e-12));
	free(t);

	/* c a hit more than the armed CPU itself: the subtraction says
	 * nothing; the raw share stays, a lower bound */
	double absurd[] = { 100000, 100000, 100000 };
	t = armed_run(&st, absurd, 3, 50, 10);
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound && st.armed_fraction == 0.5 && st.armed_fraction_low == 0.5 &&
	      st.armed_fraction_high == 0.5);
	free(t);

	/* Too little to go on: under 3 calibrations, under 5 hits of the
	 * hitting threads, under 5 stops inside the windows. The raw share,
	 * a lower bound (it is at least the true one). */
	t = armed_run(&st, cal, 2, 50, 10);
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound && st.armed_fraction == 0.5 && st.armed_fraction_high == 0.5);
	CHECK(near(st.hit_gap_cpu_us, 5000, 1e-12));
	free(t);
	t = armed_run(&st, cal, 5, 50, 4);
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound && st.armed_fraction == 0.5);
	free(t);
	t = armed_run(&st, cal, 5, 50, 10);
	st.hits = 4;
	t->hit_cpu.handled_calibrations = 1;   /* 5 stops, the window's last after it: 4 inside */
	tracer_armed_share_without_hits(t, &st);
	CHECK(st.estimate_lower_bound && st.armed_fraction == 0.5);
	free(t);
}

static void test_hidden_part(void)
{
	double gdb_hit = 0.8 * MS;
	/* a hit measured exactly: all of it, the wait for a CPU included */
	struct stop_clock_window w = { .read = true, .exact = true, .held_ns = 1.5 * MS, .waited_ns = 0.4 * MS };
	CHECK(tracer_hidden_part_ns(gdb_hit, true, &w) == 1.5 * MS);
	/* it also slept: an upper bound, counted at the hit figure when lower */
	w.exact = false;
	CHECK(tracer_hidden_part_ns(gdb_hit, true, &w) == gdb_hit);
	w.held_ns = 0.5 * MS;
	CHECK(tracer_hidden_part_ns(gdb_hit, true, &w) == 0.5 * MS);
	/* not bracketed by the clocks: the hit figure */
	w.read = false;
	w.held_ns = 9 * MS;
	CHECK(tracer_hidden_part_ns(gdb_hit, true, &w) == gdb_hit);

	/* the probes' off window: the stopped part only, its waits are load */
	struct stop_clock_window off = { .read = true, .exact = true, .held_ns = 30 * MS, .waited_ns = 29 * MS };
	CHECK(tracer_hidden_part_ns(gdb_hit, false, &off) == 1 * MS);
	/* and when it slept, at most what a hit costs */
	off.exact = false;
	CHECK(tracer_hidden_part_ns(gdb_hit, false, &off) == gdb_hit);
	off.held_ns = 29.5 * MS;
	CHECK(tracer_hidden_part_ns(gdb_hit, false, &off) == 0.5 * MS);
}

static void push_gap(struct tracer *t, double ns)
{
	t->duty_cycle.gaps[t->duty_cycle.ngaps++ % 32] = ns;
}

static void test_median_gap(void)
{
	struct tracer_stats st;
	struct tracer *t = new_tracer(&st);
	push_gap(t, 0.3 * MS);
	push_gap(t, 0.1 * MS);
	push_gap(t, 0.2 * MS);
	CHECK(tracer_median_gap_ns(t) == 0.2 * MS);
	push_gap(t, 0.4 * MS);   /* even count: the lower middle (stats.h's nearest rank) */
	CHECK(tracer_median_gap_ns(t) == 0.2 * MS);
	CHECK(t->duty_cycle.gaps[0] == 0.3 * MS);   /* the median sorts a copy */
	/* clamped to [0.05, 1.5] ms */
	memset(t, 0, sizeof *t);
	push_gap(t, 1 * US);
	CHECK(tracer_median_gap_ns(t) == 0.05 * MS);
	memset(t, 0, sizeof *t);
	push_gap(t, 20 * MS);
	CHECK(tracer_median_gap_ns(t) == 1.5 * MS);
	/* the recent 32 only */
	memset(t, 0, sizeof *t);
	for (int i = 0; i < 32; i++)
		push_gap(t, 1.2 * MS);
	for (int i = 0; i < 32; i++)
		push_gap(t, 0.1 * MS);
	CHECK(tracer_median_gap_ns(t) == 0.1 * MS);
	free(t);
}

/* A budgeted tracer at 5%, its budget started at 0 with no credit, gdb's
 * part of a hit 1 ms; `stopped_ms` charged by `now_ms`. */
static struct tracer *budgeted(struct tracer_stats *st, enum duty duty, double stopped_ms)
{
	struct tracer *t = new_tracer(st);
	stop_budget_init(&t->duty_cycle.budget, 5, 0, 0);
	t->duty_cycle.duty = duty;
	t->duty_cycle.gdb_hit_ns = 1 * MS;
	t->duty_cycle.stopped_ns = stopped_ms * MS;
	return t;
}

/* off_until_ns is now + ms, to the nanosecond the budget rounds up to */
static bool off_after(const struct tracer *t, uint64_t now, uint64_t ms)
{
	uint64_t want = now + ms * (uint64_t)MS;
	return t->duty_cycle.off_until_ns + 1 >= want && t->duty_cycle.off_until_ns <= want + 1;
}

static void test_duty_after_stop(void)
{
	struct tracer_stats st;
	uint64_t now = 1000 * (uint64_t)MS;

	/* within budget: armed */
	struct tracer *t = budgeted(&st, DUTY_ON, 10);
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_ON && !st.windows_cut);
	free(t);
	/* Overdrawn by a hit, but not far (a second's allowance, 50 ms, plus
	 * four hits, 4 ms): the window ends at its CPU boundary, not here. */
	t = budgeted(&st, DUTY_ON, 103);
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_ON && !st.windows_cut);
	CHECK(stop_budget_overdrawn(&t->duty_cycle.budget));
	free(t);
	/* Far overdrawn: cut at this hit, counted; off until the balance is
	 * back at zero: 150 ms over at 5% is 3 s after now */
	t = budgeted(&st, DUTY_ON, 200);
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_OFF && st.windows_cut == 1);
	CHECK(off_after(t, now, 3000));
	free(t);
	/* the same with calls in flight: their returns drain first */
	t = budgeted(&st, DUTY_ON, 200);
	t->cur.npending = 2;
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_DRAINING && st.windows_cut == 1);
	free(t);
	/* A close requested at the window's boundary: ends here, not counted
	 * as cut, and the request is used up */
	t = budgeted(&st, DUTY_ON, 60);
	t->duty_cycle.close_requested = true;
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_OFF && !st.windows_cut && !t->duty_cycle.close_requested);
	CHECK(off_after(t, now, 200));   /* 10 ms over at 5% */
	free(t);
	/* draining: until no call is in flight, or 50 ms */
	t = budgeted(&st, DUTY_DRAINING, 200);
	t->cur.npending = 1;
	t->duty_cycle.duty_changed_ns = now - 10 * (uint64_t)MS;
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_DRAINING);
	t->duty_cycle.duty_changed_ns = now - 51 * (uint64_t)MS;
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_OFF);
	t->cur.npending = 0;
	t->duty_cycle.duty_changed_ns = now;
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_OFF);
	free(t);
	/* off stays off (waking is the loop's, at off_until_ns) */
	t = budgeted(&st, DUTY_OFF, 0);
	CHECK(tracer_budget_duty_after_stop(t, now) == DUTY_OFF);
	free(t);
}

static void test_window_ends(void)
{
	struct tracer_stats st;
	uint64_t now = 1000 * (uint64_t)MS;
	const uint64_t window = (uint64_t)TRACER_WINDOW_CPU_NS;

	/* before its boundary on the CPU clock: on, whatever the budget */
	struct tracer *t = budgeted(&st, DUTY_ON, 500);
	t->duty_cycle.window_close_ns = 100 * window;
	CHECK(!tracer_budget_window_ends(t, 100 * window - 1, now));
	CHECK(t->duty_cycle.window_close_ns == 100 * window);
	/* at it, overdrawn: ends, the boundary left where it was */
	CHECK(tracer_budget_window_ends(t, 100 * window, now));
	CHECK(t->duty_cycle.window_close_ns == 100 * window);
	free(t);
	/* at it, within budget: on, the boundary a whole window later */
	t = budgeted(&st, DUTY_ON, 10);
	t->duty_cycle.window_close_ns = 100 * window;
	CHECK(!tracer_budget_window_ends(t, 100 * window, now));
	CHECK(t->duty_cycle.window_close_ns == 101 * window);
	/* long past it (the loop woke late): whole windows, past the clock */
	CHECK(!tracer_budget_window_ends(t, 103 * window + 5, now));
	CHECK(t->duty_cycle.window_close_ns == 104 * window);
	free(t);
}

/* Calls counted in slots no hit saw (tracer_counters_summarize): to the
 * seen slots of threads of the same kind (a pool's, names alike but for
 * digits), else apart with the names found there at the end. Spread over
 * every seen slot, as before, a worker none of whose calls was hit gave
 * them to the other worker's stacks (tests/alloc_counted.sh under load). */
static void test_unseen_slots(void)
{
	struct tracer_stats st;
	struct tracer *t = new_tracer(&st);
	struct entry_counter c = { .installed = true, .nslots = 8 };
	struct site site = { .name = "realloc" };
	t->counters = &c;
	t->ncounters = 1;
	t->probes.sites = &site;
	t->probes.nsites = 1;
	/* slot 0: insert-worker, hit 5 times in 1000 calls */
	c.slot_counts[0] = 1000, c.slot_hits[0] = 5;
	tracer_note_thread_kind(c.slot_hit_kinds[0], &c.nslot_hit_kinds[0], "insert-worker");
	/* slot 1: session-worker's 1500 calls, never hit: like no hit's thread */
	c.slot_counts[1] = 1500;
	tracer_note_thread_kind(c.slot_end_kinds[1], &c.nslot_end_kinds[1], "session-worker");
	snprintf(c.slot_end_names[1], sizeof c.slot_end_names[1], "session-worker");
	/* slots 2 and 3: a pool's threads; 3 hit twice in 400 calls, 2 never in 600 */
	c.slot_counts[2] = 600;
	tracer_note_thread_kind(c.slot_end_kinds[2], &c.nslot_end_kinds[2], "pool-7");
	c.slot_counts[3] = 400, c.slot_hits[3] = 2;
	tracer_note_thread_kind(c.slot_hit_kinds[3], &c.nslot_hit_kinds[3], "pool-12");
	/* slot 4: a thread gone by the end, 50 calls */
	c.slot_counts[4] = 50;
	c.count = 1000 + 1500 + 600 + 400 + 50;
	tracer_counters_summarize(t);
	CHECK(st.nsite_scales >= 9);
	CHECK(near(st.site_scales[0], 200, 1e-9));       /* its own calls only */
	CHECK(near(st.site_scales[3], 500, 1e-9));       /* (400 + the pool's unseen 600) / 2 */
	CHECK(st.site_scales[1] == 0 && st.site_scales[2] == 0 && st.site_scales[4] == 0);
	CHECK(st.naparts == 1);
	if (st.naparts == 1) {
		CHECK(near(st.aparts[0].calls, 1550, 1e-9));
		CHECK(strcmp(st.aparts[0].threads, "session-worker, threads gone by the end") == 0);
		CHECK(strcmp(st.aparts[0].function, "realloc") == 0);
	}
	/* every slot hit: nothing apart */
	c.slot_hits[1] = c.slot_hits[2] = c.slot_hits[4] = 1;
	tracer_counters_summarize(t);
	CHECK(st.naparts == 0);
	CHECK(near(st.site_scales[1], 1500, 1e-9));
	tracer_stats_release(&st);
	free(t);
}

int main(void)
{
	test_unseen_slots();
	test_window_dispersion();
	test_first_hit_bound();
	test_armed_share();
	test_hidden_part();
	test_median_gap();
	test_duty_after_stop();
	test_window_ends();
	return test_exit_code();
}
