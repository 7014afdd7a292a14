/* test_sampler_policy.c — the sampler's arithmetic on constructed threads
 * (src/stacks/sampler_policy.c), held to the rules docs/sampling.md states:
 * the share of its own time a thread was held (threads seen for at least
 * the minimum span), held = Δwall − Δon-CPU − Δrun-queue at most the wall
 * stop with the budget refunded the difference, and stops at a completed
 * system call's return kept up to the kernel's share K of the thread's
 * CPU. No gdb, no /proc. Exit 0 pass, 1 fail. */
#include "stacks/sampler_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MS 1000000u
#define SEC 1000000000u

static bool near(double got, double want)
{
	return fabs(got - want) < 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

static void test_thread_share(void)
{
	struct tracked_thread t;
	memset(&t, 0, sizeof t);
	t.first_seen_ns = 1 * (uint64_t)SEC;
	/* 50 ms held over the 1 s since its first listing: 5% */
	CHECK(near(sampler_thread_share(&t, 50 * MS, 2 * (uint64_t)SEC, SEC), 5.0));
	/* at least the minimum span counts; less says nothing */
	CHECK(near(sampler_thread_share(&t, 50 * MS, 2 * (uint64_t)SEC, SEC + 1), -1));
	CHECK(near(sampler_thread_share(&t, 50 * MS, 1500 * (uint64_t)MS, SEC), -1));
	/* zero span, even with no minimum: no share rather than a division by 0 */
	CHECK(near(sampler_thread_share(&t, 0, t.first_seen_ns, 0), -1));
	/* `until` before the first listing (clocks read out of order): no
	 * share, not a huge one from an unsigned difference */
	CHECK(near(sampler_thread_share(&t, 50 * MS, t.first_seen_ns - 1, 0), -1));
	/* held all of a 1 ns span */
	CHECK(near(sampler_thread_share(&t, 1, t.first_seen_ns + 1, 0), 100.0));
	/* listed first at time 0 */
	t.first_seen_ns = 0;
	CHECK(near(sampler_thread_share(&t, 3 * (uint64_t)SEC, 4 * (uint64_t)SEC, SEC), 75.0));
}

static struct tracked_thread seen_thread(uint64_t first_seen_ns, uint64_t stopped_ns, uint64_t held_ns, uint64_t stops)
{
	struct tracked_thread t;
	memset(&t, 0, sizeof t);
	t.first_seen_ns = first_seen_ns;
	t.stopped_ns = stopped_ns;
	t.held_ns = held_ns;
	t.stops = stops;
	return t;
}

static void test_fold_thread_shares(void)
{
	struct sampler sp;
	memset(&sp, 0, sizeof sp);
	uint64_t until = 3 * (uint64_t)SEC;
	/* 2 s seen: stopped 5%, held 2%, 10 stops a second */
	struct tracked_thread a = seen_thread(1 * (uint64_t)SEC, 100 * MS, 40 * MS, 20);
	sampler_fold_thread_shares(&sp, &a, until, SEC);
	CHECK(near(sp.thread_stopped_max_pct, 5.0) && near(sp.thread_held_max_pct, 2.0));
	CHECK(near(sp.thread_rate_max_hz, 10.0));
	/* 1 s seen: stopped 3%, held 3%, 30 a second; each maximum is its own */
	struct tracked_thread b = seen_thread(2 * (uint64_t)SEC, 30 * MS, 30 * MS, 30);
	sampler_fold_thread_shares(&sp, &b, until, SEC);
	CHECK(near(sp.thread_stopped_max_pct, 5.0) && near(sp.thread_held_max_pct, 3.0));
	CHECK(near(sp.thread_rate_max_hz, 30.0));
	/* seen half a second: its 80% says little and moves nothing */
	struct tracked_thread c = seen_thread(2500 * (uint64_t)MS, 400 * MS, 400 * MS, 100);
	sampler_fold_thread_shares(&sp, &c, until, SEC);
	CHECK(near(sp.thread_stopped_max_pct, 5.0) && near(sp.thread_held_max_pct, 3.0));
	CHECK(near(sp.thread_rate_max_hz, 30.0));
	/* the run shorter than a second: the caller lowers the minimum span to it */
	sampler_fold_thread_shares(&sp, &c, until, 500 * MS);
	CHECK(near(sp.thread_stopped_max_pct, 80.0) && near(sp.thread_held_max_pct, 80.0));
	CHECK(near(sp.thread_rate_max_hz, 200.0));
}

/* The end figures' minimum span: a second, or in a shorter run as long as
 * the longest-listed thread, so that a run cut at 0.7 s (its threads first
 * listed 20 ms in) still reports a share, never 0% for want of any. */
static void test_end_min_span(void)
{
	struct sampler sp;
	memset(&sp, 0, sizeof sp);
	struct tracked_thread threads[2] = {
		seen_thread(1020 * (uint64_t)MS, 20 * MS, 20 * MS, 3),   /* first listing */
		seen_thread(1500 * (uint64_t)MS, 0, 0, 0),              /* born later */
	};
	sp.threads = threads;
	sp.nthreads = 2;
	uint64_t end = 1700 * (uint64_t)MS;
	CHECK(sampler_end_min_span(&sp, end) == 680 * MS);
	for (size_t i = 0; i < sp.nthreads; i++)
		sampler_fold_thread_shares(&sp, &threads[i], end, sampler_end_min_span(&sp, end));
	/* the first listing's thread counts (20 ms over 680 ms); the late one not */
	CHECK(near(sp.thread_stopped_max_pct, 100.0 * 20 / 680));
	CHECK(near(sp.thread_rate_max_hz, 3 / 0.68));
	/* a long run: a second */
	CHECK(sampler_end_min_span(&sp, 9 * (uint64_t)SEC) == SEC);
	/* no thread listed: no span */
	sp.nthreads = 0;
	CHECK(sampler_end_min_span(&sp, end) == 0);
}

/* top's live figure: the most any thread listed now was held of its time
 * so far, or any gone thread's folded share, whichever is larger. */
static void test_held_max_now(void)
{
	struct sampler sp;
	memset(&sp, 0, sizeof sp);
	struct tracked_thread threads[2] = {
		seen_thread(1 * (uint64_t)SEC, 90 * MS, 40 * MS, 4),    /* 2 s seen at 3 s: held 2% */
		seen_thread(2500 * (uint64_t)MS, 0, 200 * MS, 1),      /* 0.5 s seen: left out */
	};
	sp.threads = threads;
	sp.nthreads = 2;
	uint64_t now = 3 * (uint64_t)SEC;
	/* none seen a second yet: -1, shown as "measuring" */
	CHECK(near(sampler_held_max_pct_now(&sp, 1500 * (uint64_t)MS), -1));
	/* held, not gdb's wall stop (4.5%): the budget's figure */
	CHECK(near(sampler_held_max_pct_now(&sp, now), 2.0));
	/* a gone thread's larger share is kept */
	sp.thread_held_max_pct = 3.5;
	CHECK(near(sampler_held_max_pct_now(&sp, now), 3.5));
	/* later, the young thread's 200 ms over 1.5 s (13.3%) leads */
	CHECK(near(sampler_held_max_pct_now(&sp, 4 * (uint64_t)SEC), 100.0 * 0.2 / 1.5));
}

/* A thread whose last schedstat read (this tick's plan) was at 1000 ms:
 * 500 ms on a CPU, 100 ms queued. Its budget starts at the stop's end
 * with nothing saved, so the balance is minus what it was charged. */
static struct tracked_thread read_thread(void)
{
	struct tracked_thread t;
	memset(&t, 0, sizeof t);
	t.sched_ok = true;
	t.sched_read_ns = 1000 * (uint64_t)MS;
	t.sched_run_ns = 500 * MS;
	t.sched_wait_ns = 100 * MS;
	stop_budget_init(&t.budget, 5, 1003 * (uint64_t)MS, 0);
	return t;
}

/* A 2 ms stop (1001-1003 ms), then the next read at 1010 ms with the
 * thread's clocks grown by ran_ms and queued_ms: returns what it held. */
static double stop_then_read(struct sampler *sp, struct tracked_thread *t, double ran_ms, double queued_ms)
{
	sampler_book_stop(sp, t, 2 * MS, 1003 * (uint64_t)MS);
	CHECK(t->held_pending && t->stopped_ns == 2 * MS && t->held_ns == 2 * MS && t->stops == 1);
	CHECK(near(t->budget.balance_s, -0.002));
	sampler_settle_held(sp, t, 1010 * (uint64_t)MS, 500 * MS + (uint64_t)(ran_ms * 1e6),
			    100 * MS + (uint64_t)(queued_ms * 1e6));
	CHECK(!t->held_pending);
	CHECK(t->stopped_ns == 2 * MS);   /* the wall figure stays */
	return (double)t->held_ns / 1e6;
}

static void test_settle_held(void)
{
	struct sampler sp;
	memset(&sp, 0, sizeof sp);

	/* ran 7 of the 10 ms, queued 1: held 2 ms, the whole stop */
	struct tracked_thread t = read_thread();
	CHECK(near(stop_then_read(&sp, &t, 7, 1), 2.0));
	CHECK(near(t.budget.balance_s, -0.002));
	CHECK(sp.nheld_ms_log == 1 && near(sp.held_ms_log[0], 2.0) && near(sp.held_sum_ms, 2.0));

	/* ran 8.5, queued 0.5: held 1 ms; the budget gets the other 1 ms back */
	t = read_thread();
	CHECK(near(stop_then_read(&sp, &t, 8.5, 0.5), 1.0));
	CHECK(near(t.budget.balance_s, -0.001));
	CHECK(sp.nheld_ms_log == 2 && near(sp.held_ms_log[1], 1.0) && near(sp.held_sum_ms, 3.0));

	/* ran and queued more than the wall time between the reads (the
	 * clocks' own slack): held 0, not negative, all of it refunded */
	t = read_thread();
	CHECK(near(stop_then_read(&sp, &t, 9, 3), 0.0));
	CHECK(near(t.budget.balance_s, 0.0));
	CHECK(sp.nheld_ms_log == 3 && near(sp.held_ms_log[2], 0.0));

	/* slept through the 10 ms (neither ran nor queued): the wall stop is
	 * the most a stop can have held, so 2 ms, not 10 */
	t = read_thread();
	CHECK(near(stop_then_read(&sp, &t, 0, 0), 2.0));
	CHECK(near(sp.held_ms_log[3], 2.0));

	/* the later read taken before the earlier one (out of order): held 0,
	 * not a wrapped difference */
	t = read_thread();
	sampler_book_stop(&sp, &t, 2 * MS, 1003 * (uint64_t)MS);
	sampler_settle_held(&sp, &t, 999 * (uint64_t)MS, 500 * MS, 100 * MS);
	CHECK(t.held_ns == 0 && near(sp.held_ms_log[4], 0.0));

	/* settled once: a second read finds nothing pending */
	size_t logged = sp.nheld_ms_log;
	sampler_settle_held(&sp, &t, 1020 * (uint64_t)MS, 500 * MS, 100 * MS);
	CHECK(sp.nheld_ms_log == logged && t.held_ns == 0);

	/* no read at the stop (schedstat unreadable): the wall time stays */
	t = read_thread();
	t.sched_ok = false;
	sampler_book_stop(&sp, &t, 2 * MS, 1003 * (uint64_t)MS);
	CHECK(!t.held_pending);
	sampler_settle_held(&sp, &t, 1010 * (uint64_t)MS, 510 * MS, 100 * MS);
	CHECK(t.held_ns == 2 * MS && sp.nheld_ms_log == logged);

	/* two stops between reads: the first stays at its wall length, the
	 * second settles against the read */
	t = read_thread();
	sampler_book_stop(&sp, &t, 2 * MS, 1003 * (uint64_t)MS);
	sampler_book_stop(&sp, &t, 3 * MS, 1007 * (uint64_t)MS);
	CHECK(sp.nheld_ms_log == logged + 1 && near(sp.held_ms_log[logged], 2.0));
	CHECK(t.stops == 2 && t.stopped_ns == 5 * MS && t.held_ns == 5 * MS);
	/* (its pending read is still the plan's, at 1000 ms) */
	sampler_settle_held(&sp, &t, 1010 * (uint64_t)MS, 509 * MS, 100 * MS);
	CHECK(t.held_ns == 3 * MS && near(sp.held_ms_log[logged + 1], 1.0));
	free(sp.held_ms_log);
}

/* A thread whose run so far used `all` ticks, `kernel` of them in the
 * kernel, with `life_all`/`life_kernel` before the run. */
static struct tracked_thread ticking(uint64_t life_all, uint64_t life_kernel, uint64_t all, uint64_t kernel)
{
	struct tracked_thread t;
	memset(&t, 0, sizeof t);
	t.first_ticks = life_all;
	t.first_kernel_ticks = life_kernel;
	t.proc.cpu_ticks = life_all + all;
	t.proc.kernel_ticks = life_kernel + kernel;
	return t;
}

static void test_landing_kept(void)
{
	/* no CPU time at all, or all of it in the kernel: kept */
	struct tracked_thread t = ticking(0, 0, 0, 0);
	t.on_cpu_at_return = 1000;
	CHECK(sampler_landing_kept(&t));
	t = ticking(0, 0, 100, 100);
	t.on_cpu_at_return = 1000;
	CHECK(sampler_landing_kept(&t));

	/* K = 1/4: returns kept while under K/(1-K) = 1/3 of (other walks + 1) */
	t = ticking(0, 0, 100, 25);
	CHECK(sampler_landing_kept(&t));   /* the first, with nothing else yet */
	t.on_cpu_at_return = 1;
	CHECK(!sampler_landing_kept(&t));
	t.on_cpu_elsewhere = 5;            /* (5 + 1) / 3 = 2 */
	CHECK(sampler_landing_kept(&t));
	t.on_cpu_at_return = 2;
	CHECK(!sampler_landing_kept(&t));

	/* No kernel time: no return is where the thread was (the "plus
	 * one" is times K) */
	t = ticking(0, 0, 100, 0);
	CHECK(!sampler_landing_kept(&t));
	t.on_cpu_elsewhere = 1000;
	CHECK(!sampler_landing_kept(&t));

	/* Half a second of CPU in the run (50 ticks): the run's K (1/10), not
	 * the life's (910/1100). Under it: the life's. */
	t = ticking(1000, 900, 100, 10);
	t.on_cpu_elsewhere = 8;            /* (8 + 1) / 9 = 1 */
	t.on_cpu_at_return = 1;
	CHECK(!sampler_landing_kept(&t));
	t = ticking(1000, 900, 49, 4);     /* life: 904/1049, K/(1-K) 6.2 */
	t.on_cpu_at_return = 6;
	CHECK(sampler_landing_kept(&t));
	t.on_cpu_at_return = 7;
	CHECK(!sampler_landing_kept(&t));
	t = ticking(1000, 900, 50, 5);     /* exactly half a second: the run's 1/10 */
	t.on_cpu_elsewhere = 8;
	t.on_cpu_at_return = 1;
	CHECK(!sampler_landing_kept(&t));

	/* The run's kernel ticks grown past its total (the two fields are
	 * read apart): no run figure, the life's */
	t = ticking(1000, 100, 60, 61);    /* life: 161/1060 */
	t.on_cpu_elsewhere = 10;           /* 11 * 0.179 = 1.97 */
	t.on_cpu_at_return = 1;
	CHECK(sampler_landing_kept(&t));
	t.on_cpu_at_return = 2;
	CHECK(!sampler_landing_kept(&t));
}

/* The rule in bulk: a thread whose every other stop lands at a completed
 * return has about K of its kept on-CPU walks there, however many land. */
static void test_landing_share(void)
{
	for (int pct = 5; pct <= 80; pct += 25) {
		struct tracked_thread t = ticking(0, 0, 1000, (uint64_t)pct * 10);
		for (int walk = 0; walk < 4000; walk++) {
			if (walk % 2 == 0)
				t.on_cpu_elsewhere++;
			else if (sampler_landing_kept(&t))
				t.on_cpu_at_return++;
		}
		double share = (double)t.on_cpu_at_return / (double)(t.on_cpu_at_return + t.on_cpu_elsewhere);
		double k = pct / 100.0;
		/* at most K, since at most every other walk could be a return,
		 * and at least min(K, 1/2) less one walk */
		double expect = k < 0.5 ? k : 0.5;
		CHECK_MSG(share <= expect + 1e-3 && share >= expect - 2e-3, "K %.2f: returns kept %.4f of walks", k, share);
	}
}

/* The rule as the sampler applies it to page faults: a stop after a fault
 * beyond the allowance stays a sample (without the kernel's marker),
 * counted with the thread's other walks. Then however many of its stops
 * land after faults, even all, the marked ones come to K of its walks. */
static void test_landing_marks_k(void)
{
	for (int pct = 5; pct <= 80; pct += 25)
		for (int every = 1; every <= 2; every++) {
			struct tracked_thread t = ticking(0, 0, 1000, (uint64_t)pct * 10);
			for (int walk = 0; walk < 4000; walk++) {
				if (walk % every != every - 1)
					t.on_cpu_elsewhere++;
				else if (sampler_landing_kept(&t))
					t.on_cpu_at_return++;
				else
					t.on_cpu_elsewhere++;
			}
			double share = (double)t.on_cpu_at_return / 4000.0;
			double k = pct / 100.0, expect = every == 1 || k < 0.5 ? k : 0.5;
			CHECK_MSG(fabs(share - expect) <= 2e-3, "K %.2f, every %d: returns marked %.4f of walks", k,
				  every, share);
		}
}

/* A run over its budget by more than a fifth says so, with the figure the
 * header prints (held in non-stop, stopped in all-stop), the stop's cost and
 * the machine's load; within a fifth, or with no budget, nothing. */
static void test_budget_missed(void)
{
	struct sampler_config cfg = { .max_stopped_percent = 5 };
	struct sampler_stats st;
	memset(&st, 0, sizeof st);
	st.run.stops = 40;
	st.run.elapsed_s = 2;
	st.held_settled = 40;
	st.thread_held_max_pct = 8.2;
	st.thread_stopped_max_pct = 11;
	st.held_median_ms = 3.5;
	st.held_p99_ms = 41;
	sampler_note_budget_missed(&cfg, &st, true, 6.3, 2);
	CHECK_MSG(st.run.notes.n == 1, "%d notes", st.run.notes.n);
	CHECK_STR(st.run.notes.text[0], "the 5% budget was not kept: each thread held up to 8.2% of its time; a stop "
					"cost a median 3.50 ms (p99 41.00 ms) here, the machine at load average 6.3 on 2 "
					"CPUs, and the rate comes down only as stops are measured");
	memset(&st.run.notes, 0, sizeof st.run.notes);
	st.thread_held_max_pct = 5.9;   /* within a fifth: kept */
	sampler_note_budget_missed(&cfg, &st, true, 6.3, 2);
	CHECK(st.run.notes.n == 0);
	st.held_settled = 0;            /* no held figure: the stopped one */
	sampler_note_budget_missed(&cfg, &st, true, NAN, 0);
	CHECK(st.run.notes.n == 1 && strstr(st.run.notes.text[0], "held up to 11.0% of its time") &&
	      !strstr(st.run.notes.text[0], "load average"));
	memset(&st.run.notes, 0, sizeof st.run.notes);
	st.run.stopped_s = 0.3;         /* all-stop: 15% of the 2 s */
	st.run.stop_median_ms = 7.5;
	st.run.stop_p99_ms = 30;
	sampler_note_budget_missed(&cfg, &st, false, 1, 2);
	CHECK(st.run.notes.n == 1 && strstr(st.run.notes.text[0], "the target stopped 15.0% of the time; a stop cost a "
								     "median 7.50 ms (p99 30.00 ms)"));
	memset(&st.run.notes, 0, sizeof st.run.notes);
	cfg.max_stopped_percent = 0;    /* no budget asked */
	sampler_note_budget_missed(&cfg, &st, false, 1, 2);
	CHECK(st.run.notes.n == 0);
}

/* weighed.h: one entry a distinct stack (pcs, names, inlining and the
 * sample's state), weights summed; the pool spread in proportion to the
 * weights (to the sample counts when all weigh 0), to the nanosecond; at
 * most WEIGHED_STACKS_MAX entries, the spread still whole. */
static void test_weighed_spread(void)
{
	struct frame a[2] = { { .pc = 0x1000, .function = "leaf_a" }, { .pc = 0x2000, .function = "main" } };
	struct frame b[2] = { { .pc = 0x1100, .function = "leaf_b" }, { .pc = 0x2000, .function = "main" } };
	struct stack sa = { 2, a }, sb = { 2, b };
	struct weighed_stacks w = {0};
	struct xerr e;
	CHECK(weighed_add(&w, &sa, 'R', "running", false, 100, &e) == 0);
	CHECK(weighed_add(&w, &sb, 'R', "running", true, 300, &e) == 0);
	CHECK(weighed_add(&w, &sa, 'R', "running", false, 0, &e) == 0);
	CHECK(w.n == 2 && w.v[0].samples == 2 && w.v[0].cpu_ns == 100 && w.v[1].cpu_ns == 300);
	CHECK(w.cpu_ns == 400 && w.samples == 3 && w.v[1].kernel);
	/* the entry owns its frames: the caller's may change */
	a[0].pc = 0x1001;
	CHECK(w.v[0].stack.frames[0].pc == 0x1000);
	uint64_t before = 0;
	CHECK(weighed_spread_next(&w, 0, 1000, &before) == 250);
	CHECK(weighed_spread_next(&w, 1, 1000, &before) == 750);
	/* rounding: the shares sum to the pool */
	struct weighed_stacks thirds = {0};
	struct frame c[1] = { { .pc = 0x3000, .function = "c" } };
	struct stack sc = { 1, c };
	for (int k = 0; k < 3; k++) {
		c[0].pc = 0x3000 + (uint64_t)k;
		CHECK(weighed_add(&thirds, &sc, 'R', "running", false, 7, &e) == 0);
	}
	CHECK(thirds.n == 3);
	before = 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < thirds.n; i++)
		sum += weighed_spread_next(&thirds, i, 1001, &before);
	CHECK(sum == 1001);
	/* another state is another entry */
	CHECK(weighed_add(&thirds, &sc, 'S', "futex", false, 0, &e) == 0);
	CHECK(thirds.n == 4);
	weighed_release(&thirds);
	CHECK(thirds.n == 0 && thirds.v == NULL);
	/* weights all 0: by sample counts */
	struct weighed_stacks zero = {0};
	CHECK(weighed_add(&zero, &sa, 'R', "running", false, 0, &e) == 0);
	CHECK(weighed_add(&zero, &sa, 'R', "running", false, 0, &e) == 0);
	CHECK(weighed_add(&zero, &sb, 'R', "running", false, 0, &e) == 0);
	before = 0;
	CHECK(weighed_spread_next(&zero, 0, 90, &before) == 60);
	CHECK(weighed_spread_next(&zero, 1, 90, &before) == 30);
	weighed_release(&zero);
	/* the cap: the stacks beyond it are not recorded; the spread is whole */
	struct weighed_stacks many = {0};
	for (uint64_t k = 0; k < WEIGHED_STACKS_MAX + 5; k++) {
		c[0].pc = 0x10000 + k;
		CHECK(weighed_add(&many, &sc, 'R', "running", false, 1 + k % 3, &e) == 0);
	}
	CHECK(many.n == WEIGHED_STACKS_MAX);
	before = sum = 0;
	for (size_t i = 0; i < many.n; i++)
		sum += weighed_spread_next(&many, i, 123456789, &before);
	CHECK(sum == 123456789);
	weighed_release(&many);
	weighed_release(&w);
}

int main(void)
{
	test_weighed_spread();
	test_budget_missed();
	test_thread_share();
	test_fold_thread_shares();
	test_end_min_span();
	test_held_max_now();
	test_settle_held();
	test_landing_kept();
	test_landing_share();
	test_landing_marks_k();
	return test_exit_code();
}
