/* sampler_policy.c — the sampler's decisions that are arithmetic on what
 * it tracks of a thread: the share of its time a thread was held, what a
 * stop really held it (the kernel's account), and which stops at a system
 * call's return are kept, and whether a run kept its budget. No gdb, no /proc: tests/unit/test_sampler_policy.c
 * holds them to constructed threads. */
#include "stacks/sampler_internal.h"

#include <math.h>
#include <stdio.h>

/* The share of its time a thread was held stopped, from its first listing
 * to `until`; negative for a thread seen for less than min_span_ns (a
 * share of a few milliseconds says little). */
double sampler_thread_share(const struct tracked_thread *t, uint64_t ns, uint64_t until, uint64_t min_span_ns)
{
	uint64_t span = until > t->first_seen_ns ? until - t->first_seen_ns : 0;
	if (span == 0 || span < min_span_ns)
		return -1;
	return 100.0 * (double)ns / (double)span;
}

/* The largest shares any thread was held (wall and the kernel's account)
 * and the most stops a second any thread got, folded in for one thread. */
void sampler_fold_thread_shares(struct sampler *sp, const struct tracked_thread *t, uint64_t until,
				uint64_t min_span_ns)
{
	double share = sampler_thread_share(t, t->stopped_ns, until, min_span_ns);
	if (share > sp->thread_stopped_max_pct)
		sp->thread_stopped_max_pct = share;
	share = sampler_thread_share(t, t->held_ns, until, min_span_ns);
	if (share > sp->thread_held_max_pct)
		sp->thread_held_max_pct = share;
	/* sampler_thread_share of a count: its per-second rate, times 100 */
	double rate = sampler_thread_share(t, t->stops * 1000000000u, until, min_span_ns) / 100.0;
	if (rate > sp->thread_rate_max_hz)
		sp->thread_rate_max_hz = rate;
}

/* The span a thread must have been listed for its share to count in a
 * run's end figures: a second, or, in a shorter run (a short -d, a Ctrl-C),
 * as long as the longest-listed thread was, so that the threads of the
 * first listing qualify and the run's figure is never 0 for want of any. */
uint64_t sampler_end_min_span(const struct sampler *sp, uint64_t end_ns)
{
	uint64_t earliest = end_ns;
	for (size_t i = 0; i < sp->nthreads; i++)
		if (sp->threads[i].first_seen_ns < earliest)
			earliest = sp->threads[i].first_seen_ns;
	uint64_t longest = end_ns - earliest;
	return longest < 1000000000u ? longest : 1000000000u;
}

/* The budget's figure while the run goes on (top's header): the largest
 * share of its time any thread was held, by the kernel's account, from its
 * first listing to now; threads gone are in sp->thread_held_max_pct, the
 * last stop of each thread not settled yet counts at its wall length.
 * Threads seen for under a second are left out; -1 when none qualifies. */
double sampler_held_max_pct_now(const struct sampler *sp, uint64_t now)
{
	double most = sp->thread_held_max_pct > 0 ? sp->thread_held_max_pct : -1;
	for (size_t i = 0; i < sp->nthreads; i++) {
		double share = sampler_thread_share(&sp->threads[i], sp->threads[i].held_ns, now, 1000000000u);
		if (share > most)
			most = share;
	}
	return most;
}

/* Settles a thread's last stop against a schedstat read taken since (see
 * tracked_thread): what it really lost, at most the wall stop. The
 * thread's budget, charged the wall stop, gets the difference back. */
void sampler_settle_held(struct sampler *sp, struct tracked_thread *t, uint64_t read_ns, uint64_t run_ns,
			 uint64_t wait_ns)
{
	if (!t->held_pending)
		return;
	t->held_pending = false;
	int64_t wall = (int64_t)(read_ns - t->pending_read_ns);
	int64_t ran = (int64_t)(run_ns - t->pending_run_ns), queued = (int64_t)(wait_ns - t->pending_wait_ns);
	int64_t held = wall - ran - queued;
	if (held < 0)
		held = 0;
	if ((uint64_t)held > t->pending_wall_ns)
		held = (int64_t)t->pending_wall_ns;
	/* held_ns counted the wall stop when it happened: take the excess out */
	t->held_ns -= t->pending_wall_ns - (uint64_t)held;
	stop_budget_refund(&t->budget, (double)(t->pending_wall_ns - (uint64_t)held) / 1e9);
	double ms = (double)held / 1e6;
	sp->held_sum_ms += ms;
	ARRAY_PUSH(sp->held_ms_log, sp->nheld_ms_log, sp->held_ms_log_cap, ms);
}

/* Books a stop of wall_ns that held t: wall time now, the kernel's account
 * at the next read. */
void sampler_book_stop(struct sampler *sp, struct tracked_thread *t, uint64_t wall_ns, uint64_t end_ns)
{
	t->stopped_ns += wall_ns;
	t->held_ns += wall_ns;
	t->stops++;
	t->budget_spent_s += (double)wall_ns / 1e9;
	stop_budget_charge(&t->budget, t->budget_spent_s, end_ns);
	if (t->held_pending) {
		/* Two stops between reads (not in this sampler's rounds): the
		 * first stays charged at its wall length. */
		ARRAY_PUSH(sp->held_ms_log, sp->nheld_ms_log, sp->held_ms_log_cap, (double)t->pending_wall_ns / 1e6);
		t->held_pending = false;
	}
	if (!t->sched_ok)
		return;
	t->held_pending = true;
	t->pending_wall_ns = wall_ns;
	t->pending_read_ns = t->sched_read_ns;
	t->pending_run_ns = t->sched_run_ns;
	t->pending_wait_ns = t->sched_wait_ns;
}

/* Whether an on-CPU walk whose stop landed at a completed system call's
 * return (sampler_at_completed_return) is kept. Such a stop found the thread either
 * in the call (it was there when asked) or at the return of a call it made
 * after it was asked, while it ran user code; no register tells which. The
 * kernel's tick accounting does, in bulk: the share K of its CPU time the
 * thread spent in the kernel, which our stops do not bias (a timer tick
 * lands where the thread is). So system call returns get at most that
 * share of the thread's on-CPU walks: one is kept while the returns kept
 * stay under K/(1-K) times its other on-CPU walks, plus one (so a thread
 * that lives in system calls shows from its first walk). The CPU time of
 * the run says K once it is half a second; before, the thread's life. */
bool sampler_landing_kept(const struct tracked_thread *t)
{
	uint64_t all = t->proc.cpu_ticks - t->first_ticks;
	uint64_t kernel = t->proc.kernel_ticks - t->first_kernel_ticks;
	if (all < 50 || kernel > all) {
		all = t->proc.cpu_ticks;
		kernel = t->proc.kernel_ticks;
	}
	if (all == 0 || kernel >= all)
		return true;   /* no figure, or all of it in the kernel: as before */
	double share = (double)kernel / (double)all;
	return (double)t->on_cpu_at_return < share / (1 - share) * (double)(t->on_cpu_elsewhere + 1);
}

/* The budget's figure over the whole run, as the report's header prints it:
 * each thread's held share by the kernel's account in non-stop mode (its
 * stopped share when the kernel gave none), the target's stopped share in
 * all-stop mode. The rate is lowered as stops are measured, so a budget
 * missed by a fifth is said with the cost of a stop and the machine's load
 * that made it so (issue 29 item 5): the figure is not hidden behind a
 * promise. load and cpus are the machine's (NAN or 0: unknown, unsaid). */
double sampler_budget_share(const struct sampler_stats *st, bool non_stop, bool *held)
{
	*held = false;
	if (st->run.stops == 0 || st->run.elapsed_s <= 0)
		return NAN;
	if (!non_stop)
		return 100.0 * st->run.stopped_s / st->run.elapsed_s;
	*held = isfinite(st->thread_held_max_pct) && st->held_settled > 0;
	return *held ? st->thread_held_max_pct : st->thread_stopped_max_pct;
}

void sampler_note_budget_missed(const struct sampler_config *cfg, struct sampler_stats *st, bool non_stop,
				double load, long cpus)
{
	bool held;
	double share = sampler_budget_share(st, non_stop, &held);
	if (cfg->max_stopped_percent <= 0 || !(share > 1.2 * cfg->max_stopped_percent))
		return;
	double median = non_stop && isfinite(st->held_median_ms) ? st->held_median_ms : st->run.stop_median_ms;
	double p99 = non_stop && isfinite(st->held_p99_ms) ? st->held_p99_ms : st->run.stop_p99_ms;
	char machine[96];
	run_notes_machine_load(machine, sizeof machine, load, cpus);
	run_notes_add(&st->run.notes, "the %.0f%% budget was not kept: %s %.1f%% of %s time; a stop cost a median "
		      "%.2f ms (p99 %.2f ms) here%s, and the rate comes down only as stops are measured",
		      cfg->max_stopped_percent, non_stop ? "each thread held up to" : "the target stopped", share,
		      non_stop ? "its" : "the", median, p99, machine);
}
