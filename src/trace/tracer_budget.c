/* tracer_budget.c — the duty cycle and the budget. */
#include "trace/tracer_internal.h"

/* ---- budget --------------------------------------------------------------- */

/* gdb's part of a hit when no window could be measured: the median of the
 * recent gaps between a resume and the next hit (for a hot function a gap
 * is almost all gdb), clamped to [0.05, 1.5] ms. */
double tracer_median_gap_ns(const struct tracer *t)
{
	size_t n = t->duty_cycle.ngaps < 32 ? t->duty_cycle.ngaps : 32;
	double sorted[32];
	memcpy(sorted, t->duty_cycle.gaps, n * sizeof *sorted);
	double m = stats_percentile(sorted, n, 50);
	return m < 5e4 ? 5e4 : m > 1.5e6 ? 1.5e6 : m;
}

/* Whether the thread that just hit will be resumed from an inserted
 * breakpoint (gdb then steps it over the breakpoint first). */
bool tracer_resumes_over_breakpoint(const struct tracer *t)
{
	int bp = t->cur.event_bp;
	if (bp <= 0)
		return false;
	if (bp == t->probes.panic_hook_bp || bp == t->probes.rust_panic_bp)
		return true;
	if (tracer_is_return_bp(t, bp))
		return t->duty_cycle.duty != DUTY_OFF;
	return t->duty_cycle.duty == DUTY_ON;
}

static bool read_process_cpu(const struct process_cpu *c, uint64_t *ns)
{
	struct timespec ts;
	if (!c->readable || clock_gettime(c->clock, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

void tracer_process_cpu_start(struct process_cpu *c, pid_t pid)
{
	*c = (struct process_cpu){ 0 };
	c->readable = clock_getcpuclockid(pid, &c->clock) == 0;
	if (c->readable && !read_process_cpu(c, &c->last_ns))
		c->readable = false;
}

/* At a stop: the CPU time spent since the previous stop goes to the armed
 * share when the entry probes were on all that while. */
void tracer_process_cpu_mark(struct process_cpu *c, enum duty duty_before)
{
	uint64_t now;
	if (!read_process_cpu(c, &now) || now < c->last_ns)
		return;
	double spent = (double)(now - c->last_ns);
	c->total_ns += spent;
	if (duty_before == DUTY_ON)
		c->armed_ns += spent;
	c->last_ns = now;
}

/* Adds the part of a stop we cannot see — from the last resume until gdb
 * reported the stop — to the stopped time: measured when the hitting
 * thread's clocks bracket the window, else the current estimate. */
void tracer_account_hidden_part(struct tracer *t, bool handled, enum duty duty_at_stop, uint64_t when)
{
	tracer_process_cpu_mark(&t->duty_cycle.cpu, duty_at_stop);
	struct stop_clock_window w;
	stop_clock_stopped(&t->duty_cycle.clock, handled ? t->cur.event_tid : 0, when, &w);
	double gap = when > t->duty_cycle.window_start_ns ? (double)(when - t->duty_cycle.window_start_ns) : 0;
	if (handled) {
		t->duty_cycle.gaps[t->duty_cycle.ngaps++ % 32] = gap;
		double median = stop_clock_median(&t->duty_cycle.clock);
		t->duty_cycle.gdb_hit_ns = median >= 0 ? median : tracer_median_gap_ns(t);
	} else if (!w.read) {
		/* Not a hit and not measured: nothing says what it cost beyond
		 * what the caller counts itself. */
		return;
	}
	double part = tracer_hidden_part_ns(t->duty_cycle.gdb_hit_ns, handled, &w);
	t->duty_cycle.stopped_ns += part;
	t->estimates.last_hidden_ns = part;
}

/* What the window from our last resume to a stop adds to the stopped time,
 * given what the thread's clocks say of it (w) and the current figure for
 * a hit that was not measured (gdb_hit_ns). For a stop that is no hit, w
 * was read. */
double tracer_hidden_part_ns(double gdb_hit_ns, bool handled, const struct stop_clock_window *w)
{
	if (!handled)
		/* A window with the probes off is long: a wait for a CPU there
		 * is the machine's load, not our doing. Only the stopped part
		 * (gdb's step over the breakpoint, the interrupt) is ours; if
		 * the thread also slept, at most what a hit costs. */
		return w->exact || w->held_ns - w->waited_ns < gdb_hit_ns ? w->held_ns - w->waited_ns : gdb_hit_ns;
	/* Right after our resume the CPUs are busy with gdb and us: the
	 * thread's wait for one is part of what the hit cost. */
	return w->exact ? w->held_ns : w->read && w->held_ns < gdb_hit_ns ? w->held_ns : gdb_hit_ns;
}

/* An armed window opens when the entry probes go on and closes when they
 * go off (or the run ends), on the process's CPU clock as marked just
 * before. */
void tracer_armed_window_open(struct tracer *t)
{
	struct armed_window w = { .cpu_start_ns = t->duty_cycle.cpu.armed_ns, .entries_start = t->st->entries, .open = true };
	ARRAY_PUSH(t->estimates.windows, t->estimates.nwindows, t->estimates.windows_cap, w);
}

void tracer_armed_window_close(struct tracer *t)
{
	if (!t->estimates.nwindows || !t->estimates.windows[t->estimates.nwindows - 1].open)
		return;
	struct armed_window *w = &t->estimates.windows[t->estimates.nwindows - 1];
	w->cpu_ns = t->duty_cycle.cpu.armed_ns - w->cpu_start_ns;
	w->entries = t->st->entries - w->entries_start;
	w->open = false;
}

bool tracer_budgeted(const struct tracer *t)
{
	return !t->cfg->exact && t->cfg->max_stopped_percent > 0 && (t->probes.nduty > 0 || t->probes.panic_hook_bp > 0);
}

static bool read_process_cpu(const struct process_cpu *c, uint64_t *ns);

/* The clock armed windows are measured on: the target's CPU time (wall
 * time if the kernel does not give it). */
uint64_t tracer_window_clock_ns(const struct tracer *t, uint64_t now)
{
	uint64_t cpu;
	return read_process_cpu(&t->duty_cycle.cpu, &cpu) ? cpu : now;
}

/* Threads between the panic hook and rust_panic: their panic is reported
 * at the second breakpoint, which a drain keeps on for them. */
static bool panics_pending(const struct tracer *t)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].panic_pending)
			return true;
	return false;
}

/* Switched off with a panic still pending: its rust_panic may pass
 * unseen, and a later one must not take its location. */
static void pass_over_pending_panics(struct tracer *t)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].panic_pending) {
			t->threads[i].panic_pending = false;
			t->st->panics_passed_over++;
		}
}

/* The panic breakpoints follow the duty, but the first
 * TRACER_PANICS_ALWAYS panics are always reported: a short program's few
 * panics, the first walking cold symbol tables (~100 ms under load), are
 * what a user came for; a storm is switched off after them. A drain keeps
 * rust_panic on for the panics under way. */
static int set_panic_bp(struct tracer *t, int bp, bool *on_now, bool on, struct xerr *e)
{
	if (bp <= 0 || *on_now == on)
		return 0;
	if ((on ? session_breaks_enable : session_breaks_disable)(t->s, &bp, 1, e) < 0)
		return -1;
	*on_now = on;
	return 0;
}

static int set_panic_duty(struct tracer *t, enum duty next, struct xerr *e)
{
	bool on = next == DUTY_ON || t->st->panics < TRACER_PANICS_ALWAYS;
	bool rust_was_on = t->probes.rust_panic_on;
	if (set_panic_bp(t, t->probes.panic_hook_bp, &t->probes.panic_hook_on, on, e) < 0 ||
	    set_panic_bp(t, t->probes.rust_panic_bp, &t->probes.rust_panic_on, on || next == DUTY_DRAINING, e) < 0)
		return -1;
	if (rust_was_on && !t->probes.rust_panic_on)
		pass_over_pending_panics(t);
	return 0;
}

static int set_duty(struct tracer *t, enum duty next, uint64_t when, struct xerr *e)
{
	/* The CPU time up to the switch goes to the share it was spent in.
	 * All-stop: marked at the stop just before (nothing since). Non-stop
	 * switches with the target running, and with the probes off no stop
	 * comes to mark the off time: it would count as armed. */
	tracer_process_cpu_mark(&t->duty_cycle.cpu, t->duty_cycle.duty);
	tracer_hitters_at_switch(t, t->duty_cycle.duty == DUTY_ON, next == DUTY_ON);
	if (t->duty_cycle.duty == DUTY_ON && next != DUTY_ON)
		tracer_armed_window_close(t);
	else if (t->duty_cycle.duty != DUTY_ON && next == DUTY_ON)
		tracer_armed_window_open(t);
	if (t->duty_cycle.duty == DUTY_ON)
		t->duty_cycle.covered_ns += when - t->duty_cycle.duty_changed_ns;
	if (next == DUTY_ON) {
		if (session_breaks_enable(t->s, t->probes.duty_bps, t->probes.nduty, e) < 0)
			return -1;
		t->duty_cycle.window_close_ns = tracer_window_clock_ns(t, when) + (uint64_t)TRACER_WINDOW_CPU_NS;
	} else if (next == DUTY_OFF) {
		if (session_breaks_disable(t->s, t->probes.duty_bps, t->probes.nduty, e) < 0)
			return -1;
		t->cur.npending = 0;
	} else {
		/* Draining: entries off, returns stay until the calls in flight end. */
		for (size_t i = 0; i < t->probes.nsites; i++)
			if (session_breaks_disable(t->s, &t->probes.sites[i].bp, 1, e) < 0)
				return -1;
	}
	if (set_panic_duty(t, next, e) < 0)
		return -1;
	if (next == DUTY_OFF || (t->duty_cycle.duty == DUTY_ON && next != DUTY_ON))
		t->st->duty_cycles += t->duty_cycle.duty == DUTY_ON;
	t->duty_cycle.duty_changes += t->duty_cycle.duty != next;
	t->duty_cycle.duty = next;
	t->duty_cycle.duty_changed_ns = when;
	return 0;
}

/* All of the stopped time but the stops at forks, which the fork
 * catchpoint brings whether the probes are on or off: what the budget is
 * charged with, since switching the probes off for the forks' stops would
 * only starve the estimates (a target forking 190 times a second: 15% of
 * the trace in fork stops, and the probes were armed 1% of it), and what
 * the hits are said to cost. */
double tracer_probes_stopped_ns(const struct tracer *t)
{
	double ns = t->duty_cycle.stopped_ns - t->fork_stopped_ns;
	return ns > 0 ? ns : 0;
}

/* The duty the budget asks for after a stop (target still stopped), the
 * budget charged with the stopped time so far: a drain ends once no call
 * is in flight, or after 50 ms; an armed window ends when its close was
 * requested (tracer_budget_window_ends) or the budget is far overdrawn,
 * and drains first while calls are in flight. */
enum duty tracer_budget_duty_after_stop(struct tracer *t, uint64_t now)
{
	stop_budget_charge(&t->duty_cycle.budget, tracer_probes_stopped_ns(t) / 1e9, now);
	if (t->duty_cycle.duty == DUTY_DRAINING &&
	    ((t->cur.npending == 0 && !panics_pending(t)) || now - t->duty_cycle.duty_changed_ns > 50000000u))
		return DUTY_OFF;
	if (t->duty_cycle.duty != DUTY_ON)
		return t->duty_cycle.duty;
	/* Far over (a second's allowance and four hits: hits cost more
	 * than a window's slack, or calls come faster than a window's CPU
	 * time passes): cut the window here, and say so. More would let a
	 * window run longer but make the stops burstier (and the off time
	 * after them longer) for every target. */
	double cut_s = t->duty_cycle.budget.share * 1.0 + 4 * t->duty_cycle.gdb_hit_ns / 1e9;
	bool cut = !t->duty_cycle.close_requested && t->duty_cycle.budget.balance_s < -cut_s;
	if (t->duty_cycle.close_requested || cut) {
		t->st->windows_cut += cut;
		t->duty_cycle.close_requested = false;
		t->duty_cycle.off_until_ns = stop_budget_clear_at(&t->duty_cycle.budget, now);
		return t->cur.npending || panics_pending(t) ? DUTY_DRAINING : DUTY_OFF;
	}
	return DUTY_ON;
}

/* After a stop was handled (target still stopped): over budget? */
int tracer_budget_after_stop(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (!tracer_budgeted(t))
		return 0;
	enum duty next = tracer_budget_duty_after_stop(t, now);
	if (next != t->duty_cycle.duty)
		return set_duty(t, next, now, e);
	/* the panics always reported are done while the probes are off */
	return next == DUTY_ON ? 0 : set_panic_duty(t, next, e);
}

/* With the target running: ends an armed window when one of its
 * boundaries has passed and the budget is overdrawn: in non-stop mode by
 * disabling the probes at once, in all-stop mode by interrupting the
 * target (the stop that follows switches the probes off). Ending windows
 * at a hit, as soon as that hit overdrew the budget, made every window
 * end just after a call: with one hit per window (a loaded machine, 20 ms
 * a hit), the calls that follow another closely (malloc then calloc, a
 * push then a clone) were never seen, and the estimates leaned towards
 * the calls that come first after the probes are armed (A:B 16:1 for a
 * true 1:1). Boundaries in wall time did no better (a hit outlasts the
 * window: the boundary passed during the hit and the close followed it),
 * nor in wall time less our stops (after a stop the thread waits for a
 * CPU on a loaded machine, and the window ran out before the next call).
 * Calls are made as the target's CPU runs: a boundary on its CPU clock,
 * fixed when the window opened, falls where the calls do not decide it. */
int tracer_budget_close_request(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (t->duty_cycle.duty != DUTY_ON || t->duty_cycle.close_requested || session_is_stopped(t->s))
		return 0;
	if (!tracer_budget_window_ends(t, tracer_window_clock_ns(t, now), now))
		return 0;
	t->duty_cycle.close_requested = true;
	/* Non-stop: gdb disables breakpoints with the threads running; no
	 * thread is interrupted (an interrupt could land in a step over a
	 * breakpoint). */
	if (t->non_stop)
		return tracer_budget_after_stop(t, now, e);
	if (session_interrupt_all(t->s, e) < 0)
		return -1;
	return 0;
}

/* Whether an armed window ends now, the target's CPU clock at `clock`:
 * once its boundary has passed, if the budget charged to now is
 * overdrawn; if it is not, the boundary moves on by whole windows past
 * clock (TRACER_WINDOW_CPU_NS each). */
bool tracer_budget_window_ends(struct tracer *t, uint64_t clock, uint64_t now)
{
	if (clock < t->duty_cycle.window_close_ns)
		return false;
	stop_budget_charge(&t->duty_cycle.budget, tracer_probes_stopped_ns(t) / 1e9, now);
	if (!stop_budget_overdrawn(&t->duty_cycle.budget)) {
		while (t->duty_cycle.window_close_ns <= clock)
			t->duty_cycle.window_close_ns += (uint64_t)TRACER_WINDOW_CPU_NS;
		return false;
	}
	return true;
}

int tracer_budget_wake(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (t->duty_cycle.duty != DUTY_OFF || now < t->duty_cycle.off_until_ns)
		return 0;
	if (t->non_stop) {
		/* Enabled with the target running: nothing is held. The off
		 * window is closed on the clocks as a stop would: its stopped
		 * part (gdb's step over the last hit's breakpoint) is ours, its
		 * waits for a CPU the machine's; left open, the next hit's window
		 * would span it and count every wait of the off time as that
		 * hit's (~1 s a hit at load 30). */
		tracer_account_hidden_part(t, false, DUTY_OFF, now);
		int rc = set_duty(t, DUTY_ON, now, e);
		t->duty_cycle.window_start_ns = monotonic_ns();
		stop_clock_resuming(&t->duty_cycle.clock, 0, false, t->duty_cycle.window_start_ns);
		return rc;
	}
	/* Counted from the interrupt request, a little before the target
	 * really stops: conservative. */
	uint64_t t0 = monotonic_ns();
	if (session_stop(t->s, e) < 0)
		return -1;
	/* The resume that switched the probes off was followed by gdb's step
	 * over the breakpoint: cost hidden in the off window, bracketed here. */
	tracer_account_hidden_part(t, false, DUTY_OFF, t0);
	int rc = set_duty(t, DUTY_ON, monotonic_ns(), e);
	t->duty_cycle.window_start_ns = monotonic_ns();
	stop_clock_resuming(&t->duty_cycle.clock, 0, false, t->duty_cycle.window_start_ns);
	if (rc == 0)
		rc = session_resume(t->s, e);
	t->duty_cycle.last_resume_ns = monotonic_ns();
	t->duty_cycle.stopped_ns += (double)(t->duty_cycle.window_start_ns - t0);
	t->target_clock.frozen_ns += (double)(t->duty_cycle.last_resume_ns - t0);
	return rc;
}
