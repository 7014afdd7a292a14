/* test_events.c — the parts the sampler and the tracer share
 * (src/events/): the stop budget's token bucket, the run stats' stop
 * percentiles and notes, the sink helpers and the probe kinds. Links only
 * the events and util libraries. Exit 0 pass, 1 fail. */
#include "events/event.h"
#include "events/run_stats.h"
#include "events/stop_budget.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

#define MS 1000000ull
#define S (1000 * MS)

static void budget_basics(void)
{
	struct stop_budget b;
	stop_budget_init(&b, 5, 0, 0);
	CHECK(!stop_budget_overdrawn(&b));
	CHECK(stop_budget_clear_at(&b, 7) == 7);
	CHECK(!b.held_off);

	/* A 10 ms stop at the start, no credit: 200 ms of wall time pay it back. */
	stop_budget_charge(&b, 0.010, 0);
	CHECK(stop_budget_overdrawn(&b));
	uint64_t clear = stop_budget_clear_at(&b, 1 * MS);
	CHECK_MSG(clear == 200 * MS, "clear at %llu ns, want %llu", (unsigned long long)clear, 200 * MS);
	CHECK(b.held_off);
	stop_budget_charge(&b, 0.010, 200 * MS);   /* nothing more stopped */
	CHECK(!stop_budget_overdrawn(&b));

	/* Savings are capped at one second's allowance (50 ms at 5%): after a
	 * long idle stretch a 60 ms stop still overdraws, a 40 ms one does not. */
	stop_budget_init(&b, 5, 0, 0);
	stop_budget_charge(&b, 0.040, 100 * S);
	CHECK(!stop_budget_overdrawn(&b));
	stop_budget_init(&b, 5, 0, 0);
	stop_budget_charge(&b, 0.060, 100 * S);
	CHECK(stop_budget_overdrawn(&b));

	/* A starting credit lets the first stops through. */
	stop_budget_init(&b, 5, 0, 0.010);
	stop_budget_charge(&b, 0.008, 0);
	CHECK(!stop_budget_overdrawn(&b));

	/* No budget: never holds off, whatever is spent. */
	stop_budget_init(&b, 0, 0, 0);
	stop_budget_charge(&b, 10, 1);
	CHECK(!stop_budget_overdrawn(&b));
	CHECK(stop_budget_clear_at(&b, 5) == 5);
	CHECK(!b.held_off);
}

/* A producer that wants a stop every millisecond (far over budget), driven
 * by the budget as the sampler drives it: over 20 simulated seconds the
 * stopped share ends within one stop of the budget. */
static void budget_holds_share(double percent, double stop_s)
{
	struct stop_budget b;
	stop_budget_init(&b, percent, 0, 0);
	uint64_t now = 0, next = 0, end = 20 * S;
	double stopped = 0;
	int stops = 0;
	while (now < end) {
		if (now < next) {
			now = next;
			continue;
		}
		stopped += stop_s;
		stops++;
		now += (uint64_t)(stop_s * 1e9);
		stop_budget_charge(&b, stopped, now);
		next = stop_budget_clear_at(&b, now + 1 * MS);
	}
	double share = 100 * stopped / ((double)now / 1e9);
	double one_stop = 100 * stop_s / ((double)now / 1e9);
	CHECK_MSG(share <= percent + one_stop && share >= percent - one_stop - 0.5,
		  "%.0f%% budget, %.1f ms stops: stopped %.2f%% of the time over %d stops", percent, stop_s * 1e3,
		  share, stops);
	CHECK(b.held_off);
}

static void stop_percentiles(void)
{
	struct run_stats st;
	memset(&st, 0, sizeof st);
	run_stats_finish_stops(&st);   /* nothing logged: figures stay zero */
	CHECK(st.stop_median_ms == 0 && st.stops == 0);
	for (int i = 100; i >= 1; i--)
		CHECK(run_stats_add_stop(&st, i) == 0);
	CHECK(st.stops == 100);
	CHECK_MSG(fabs(st.stopped_s - 5.050) < 1e-9, "stopped %.6f s", st.stopped_s);
	run_stats_finish_stops(&st);
	CHECK_MSG(st.stop_median_ms == 50 && st.stop_p99_ms == 99 && st.stop_max_ms == 100,
		  "median %g p99 %g max %g", st.stop_median_ms, st.stop_p99_ms, st.stop_max_ms);
	CHECK(st.stop_ms_log == NULL && st.nstop_ms_log == 0);
}

static void notes(void)
{
	struct run_notes n;
	memset(&n, 0, sizeof n);
	for (int i = 0; i < RUN_MAX_NOTES + 3; i++)
		run_notes_add(&n, "note %d", i);
	CHECK(n.n == RUN_MAX_NOTES);
	CHECK_STR(n.text[0], "note 0");
	char last[32];
	snprintf(last, sizeof last, "note %d", RUN_MAX_NOTES - 1);
	CHECK_STR(n.text[RUN_MAX_NOTES - 1], last);
	CHECK_MSG(n.dropped == 3, "dropped %d", n.dropped);
	char long_text[1000];
	memset(long_text, 'x', sizeof long_text - 1);
	long_text[sizeof long_text - 1] = '\0';
	memset(&n, 0, sizeof n);
	run_notes_add(&n, "%s", long_text);
	CHECK(strlen(n.text[0]) == sizeof n.text[0] - 1);
}

struct counting_sink {
	int taken;
	int answer;
};

static int count_take(void *ctx, const struct event *ev, struct xerr *e)
{
	(void)e;
	struct counting_sink *c = ctx;
	c->taken += ev->kind == EVENT_SAMPLE;
	return c->answer;
}

static void sinks(void)
{
	struct xerr e;
	struct event ev = { .kind = EVENT_SAMPLE };
	CHECK(event_sink_take(NULL, &ev, &e) == 0);
	CHECK(event_sink_tick(NULL, 1, &e) == 0);
	struct counting_sink c = { .answer = 1 };
	const struct event_sink sink = { .ctx = &c, .take = count_take };
	CHECK(event_sink_take(&sink, &ev, &e) == 1);   /* the consumer's "end the run" comes back */
	CHECK(c.taken == 1);
	CHECK(event_sink_tick(&sink, 1, &e) == 0);     /* no tick callback: nothing to do */

	CHECK(probe_kind_traced(PROBE_FUNCTION) && probe_kind_traced(PROBE_SYSCALL_ENTRY));
	CHECK(!probe_kind_traced(PROBE_SAMPLE) && !probe_kind_traced(PROBE_INTERVAL));
	CHECK_STR(probe_kind_name(PROBE_RETURN), "return");
	CHECK_STR(probe_kind_name((enum probe_kind)99), "?");
}

int main(void)
{
	budget_basics();
	budget_holds_share(5, 0.003);
	budget_holds_share(1, 0.0005);
	budget_holds_share(20, 0.010);
	stop_percentiles();
	notes();
	sinks();
	return test_exit_code();
}
