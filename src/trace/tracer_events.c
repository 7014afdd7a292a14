/* tracer_events.c — stops into events: entries, returns, panics, system calls. */
#include "trace/tracer_internal.h"

/* ---- events ----------------------------------------------------------------- */


static int fire(struct tracer *t, const struct probe_list *probes, struct event *ev, struct xerr *e)
{
	for (size_t i = 0; i < probes->n; i++) {
		ev->probe = probes->v[i];
		int taken = event_sink_take(t->sink, ev, e);
		if (taken < 0)
			return -1;
		if (taken > 0) {
			t->sink_done = true;
			break;
		}
	}
	return 0;
}

/* When the current stop began: the hitting thread's trap, which gdb
 * reports 0.5-6 ms later (more on a loaded machine): the report less gdb's
 * median part of a hit (stop_clock.h), kept after the last resume. The
 * trap's own time is nowhere to be read: the scheduler's per-thread
 * timestamps (se.exec_start) run on a clock without steal time, which on
 * a VM drifts from the wall clock by milliseconds a second. */
static uint64_t stop_start(struct tracer *t, uint64_t when)
{
	if (t->target_clock.stop_start_ns)
		return t->target_clock.stop_start_ns;
	uint64_t start = when > (uint64_t)t->duty_cycle.gdb_hit_ns ? when - (uint64_t)t->duty_cycle.gdb_hit_ns : when;
	if (start > when)
		start = when;
	if (start < t->duty_cycle.last_resume_ns)
		start = t->duty_cycle.last_resume_ns <= when ? t->duty_cycle.last_resume_ns : when;
	t->target_clock.stop_start_ns = start;
	return start;
}

struct thread_frozen *tracer_thread_frozen(struct tracer *t, int gdb_id, bool add)
{
	for (size_t i = 0; i < t->target_clock.nfrozen_by_thread; i++)
		if (t->target_clock.frozen_by_thread[i].gdb_id == gdb_id)
			return &t->target_clock.frozen_by_thread[i];
	if (!add)
		return NULL;
	if (ARRAY_PUSH(t->target_clock.frozen_by_thread, t->target_clock.nfrozen_by_thread, t->target_clock.frozen_by_thread_cap,
		       ((struct thread_frozen){ gdb_id, 0 })) < 0)
		return NULL;
	return &t->target_clock.frozen_by_thread[t->target_clock.nfrozen_by_thread - 1];
}

/* What our stops have held the thread so far: in all-stop mode every stop
 * held every thread; in non-stop mode, its own. */
static double frozen_for(struct tracer *t, int gdb_id)
{
	if (!t->non_stop)
		return t->target_clock.frozen_ns;
	const struct thread_frozen *f = tracer_thread_frozen(t, gdb_id, false);
	return f ? f->ns : 0;
}

static void event_init(struct tracer *t, struct event *ev, enum event_kind kind,
		       const struct thread_info *th, uint64_t when)
{
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
	ev->timestamp_ns = when;
	ev->since_start_ns = when - t->start_ns;
	ev->target_ns = stop_start(t, when) - (uint64_t)frozen_for(t, th->gdb_id);
	ev->window = (int64_t)t->duty_cycle.duty_changes + 1;
	ev->pid = t->pid;
	ev->cpu = -1;
	ev->thread.id = th->tid;
	ev->thread.name = th->name;
	ev->thread.state = 'R';
	ev->stack = t->cur.stack.nframes ? &t->cur.stack : NULL;
}

static int pending_push(struct tracer *t, const struct pending *p, struct xerr *e)
{
	if (t->cur.npending >= 1u << 20)
		return xerr_set(e, "more than a million calls in flight: return probes cannot keep up");
	if (ARRAY_PUSH(t->cur.pending, t->cur.npending, t->cur.pending_cap, *p) < 0)
		return xerr_oom(e);
	return 0;
}

static int return_site_for(struct tracer *t, uint64_t addr, struct xerr *e)
{
	for (size_t i = 0; i < t->probes.nreturns; i++)
		if (t->probes.returns[i].addr == addr)
			return 0;
	struct return_site *g = array_grow(t->probes.returns, &t->probes.returns_cap, t->probes.nreturns + 1, sizeof *g);
	if (!g)
		return xerr_oom(e);
	t->probes.returns = g;
	struct return_site *rs = &t->probes.returns[t->probes.nreturns];
	rs->addr = addr;
	if (tracer_insert_breakpoint(t, addr, true, &rs->bp, e) < 0)
		return -1;
	t->probes.nreturns++;
	return 0;
}

bool tracer_is_return_bp_addr(const struct tracer *t, uint64_t addr)
{
	for (size_t i = 0; i < t->probes.nreturns; i++)
		if (t->probes.returns[i].addr == addr)
			return true;
	return false;
}

/* What an event at site is: a function's entry, or a call made at a
 * system call's site (its number and name), and its function. */
static enum event_kind site_event_kind(const struct site *site)
{
	return site->syscall_site ? EVENT_SYSCALL_SITE : EVENT_FUNCTION_ENTRY;
}

static void site_event_fields(const struct site *site, struct event *ev)
{
	ev->function = site->name;
	if (site->syscall_site) {
		ev->syscall_nr = site->syscall_nr;
		ev->syscall_name = arch_syscall_name(site->syscall_nr);
	}
}

int tracer_fire_counted_only(struct tracer *t, struct xerr *e)
{
	for (size_t i = 0; i < t->probes.nsites && i < t->ncounters && !t->sink_done; i++) {
		struct site *site = &t->probes.sites[i];
		const struct entry_counter *c = &t->counters[i];
		/* (no call: no event; a map of counts then has none) */
		if (!site->counted_only || site->bp || !c->installed || !c->count)
			continue;
		struct event ev = { .kind = site_event_kind(site), .probe = -1, .timestamp_ns = monotonic_ns() };
		site_event_fields(site, &ev);
		ev.since_start_ns = ev.timestamp_ns > t->start_ns ? ev.timestamp_ns - t->start_ns : 0;
		ev.pid = t->pid;
		ev.thread.id = -1;
		ev.weighted = true;
		ev.weight_site = (int)(i * ENTRY_COUNTER_STRATA + ENTRY_COUNTER_STRATA - 1);
		ev.weight = (double)c->count;
		/* its summed argument: 1, standing for the total the counter
		 * kept (as the site's whole-site sum scale says:
		 * tracer_counters_summarize) */
		if (c->sums) {
			uint64_t total = entry_counter_total_sum(c);
			ev.has_int_args = true;
			ev.int_args[c->sum_arg] = total ? 1 : 0;
			ev.sum_weight = (double)total;
		}
		t->st->weighted_hits++;
		if (fire(t, &site->entry_probes, &ev, e) < 0)
			return -1;
	}
	return 0;
}

bool tracer_is_return_bp(const struct tracer *t, int bp)
{
	for (size_t i = 0; i < t->probes.nreturns; i++)
		if (t->probes.returns[i].bp == bp)
			return true;
	return false;
}

static int on_entry(struct tracer *t, struct site *site, struct thread_info *th, const uint64_t *regs,
		    uint64_t when, struct xerr *e)
{
	t->st->entries++;
	/* (a system call's site lies inside its function: no entry's frame) */
	bool at_entry = !site->inlined && !site->syscall_site;
	if (site->entry_probes.n && tracer_take_stack(t, th, regs, at_entry, e) < 0)
		return -1;
	struct event ev;
	event_init(t, &ev, site_event_kind(site), th, when);
	site_event_fields(site, &ev);
	ev.arg = tracer_arg_lookup;
	ev.arg_ctx = t;
	t->cur.event_site_inlined = site->inlined;
	/* At the first instruction nothing has moved the arguments yet; an
	 * inlined copy has no entry, its registers mean nothing. */
	ev.has_int_args = at_entry;
	for (size_t i = 0; i < ARCH_ARG_REGS; i++)
		ev.int_args[i] = (int64_t)regs[arch_call_arg_reg(i)];
	/* Counted in the target: each hit stands for an equal share of the
	 * calls counted in its stratum (weighing a hit by the calls since the
	 * site's previous one gave the first hit after each off window all of
	 * that window's calls: 103 M for 52 M calls of one stack, 90 k for
	 * the other's 52 M). The share so far, read through /proc (a few us). */
	size_t index = (size_t)(site - t->probes.sites);
	if (index < t->ncounters && t->counters[index].installed && !t->counters[index].removed) {
		/* stratified by the counter's slot, mostly one per thread: a
		 * thread that calls rarely is seen at a larger share of its
		 * calls than a hot one, whose first hit closes the window (one
		 * share for the whole site gave a leak thread's 30 calls an
		 * estimate of 418,385, each hit standing for a hot thread's) */
		struct entry_counter *c = &t->counters[index];
		/* a hit that only counts read no registers: the stack pointer
		 * from /proc (~10 us), else the site as one stratum */
		uint64_t rsp = regs[ARCH_RSP];
		struct proc_syscall where;
		if (!rsp && proc_thread_syscall(t->pid, th->tid, &where) == 0)
			rsp = where.sp;
		entry_counter_read_one(t->mem_fd, c);
		ev.weighted = true;
		if (rsp) {
			unsigned slot = entry_counter_slot(c, rsp);
			c->slot_hits[slot]++;
			tracer_note_thread_kind(c->slot_hit_kinds[slot], &c->nslot_hit_kinds[slot], th->name);
			ev.weight_site = (int)(index * ENTRY_COUNTER_STRATA + slot);
			ev.weight = (double)c->slot_counts[slot] / (double)c->slot_hits[slot];
			if (c->sums) {
				/* every hit's value, whatever the probes then do with
				 * it (a predicate), as the code totals every call's */
				c->slot_hit_sums[slot] += (uint64_t)regs[arch_call_arg_reg(c->sum_arg)];
				if (c->slot_hit_sums[slot])
					ev.sum_weight = (double)c->slot_sums[slot] / (double)c->slot_hit_sums[slot];
			}
		} else {
			c->site_hits++;
			ev.weight_site = (int)(index * ENTRY_COUNTER_STRATA + ENTRY_COUNTER_STRATA - 1);
			ev.weight = (double)c->count / (double)c->site_hits;
		}
		t->st->weighted_hits++;
	}
	if (fire(t, &site->entry_probes, &ev, e) < 0)
		return -1;
	if (site->return_probes.n && t->duty_cycle.duty == DUTY_ON) {
		bool ok;
		uint64_t ret = tracer_read_word(t, regs[ARCH_RSP], &ok);
		if (!ok)
			return 0;
		if (return_site_for(t, ret, e) < 0)
			return -1;
		/* t0 is set when the thread is resumed: our own handling of this
		 * stop is not part of the call's elapsed time. */
		(void)when;
		struct pending p = { .tid = th->tid, .sp_after = regs[ARCH_RSP] + 8, .t0_ns = 0,
				     .site = (size_t)(site - t->probes.sites) };
		p.clocks_read = proc_thread_schedstat(t->pid, th->tid, &p.clocks) == 0;
		p.hits_at_entry = t->st->hits;
		if (pending_push(t, &p, e) < 0)
			return -1;
	}
	return 0;
}

/* The wall-clock account of a call: from the resume after its entry stop
 * to the report of its return, less what our stops cost it meanwhile — the
 * stops of other hits in between (all-stop mode holds every thread;
 * stopped_ns counts them; non-stop mode holds only the thread that hit)
 * and the median of gdb's part of a hit. What is left is mostly the spread
 * of our own stops: used only when the kernel's account is unreadable. */
static double call_wall_ns(const struct tracer *t, const struct pending *p, uint64_t when)
{
	if (!p->t0_ns || when <= p->t0_ns)
		return 0;
	double ours = (t->non_stop ? 0 : t->duty_cycle.stopped_ns - p->stopped_at_t0_ns) + t->duty_cycle.gdb_hit_ns;
	double wall = (double)(when - p->t0_ns);
	return wall > ours ? wall - ours : 0;
}

/* A call's own time by the kernel's account of the thread (docs/recipes.md,
 * "What elapsed is"): its CPU time between the entry stop and the return
 * stop, read from schedstat, which stands still while we hold the thread.
 * It holds the CPU the step over the entry breakpoint and the return trap
 * cost the thread (st->hit_cpu_cost_us bounds it) and leaves out waits for
 * a CPU (right after our resume they are mostly ours). A thread that also
 * slept in the call (more voluntary switches than our ptrace stops make:
 * the step and the trap, plus in all-stop one per other hit) was off the
 * CPU for reasons of its own too: that part can only come from the wall
 * clock, less our stops' median, and such returns are counted apart. */
static uint64_t call_time_ns(struct tracer *t, const struct pending *p, uint64_t when)
{
	struct proc_schedstat now;
	if (!p->clocks_read || proc_thread_schedstat(t->pid, p->tid, &now) < 0 || now.run_ns < p->clocks.run_ns)
		return (uint64_t)call_wall_ns(t, p, when);
	double cpu = (double)(now.run_ns - p->clocks.run_ns);
	uint64_t our_switches = 2 + (t->non_stop ? 0 : t->st->hits - p->hits_at_entry);
	if (now.voluntary_switches - p->clocks.voluntary_switches > our_switches) {
		t->st->returns_slept++;
		double off = call_wall_ns(t, p, when) - cpu - (double)(now.wait_ns - p->clocks.wait_ns);
		return (uint64_t)(cpu + (off > 0 ? off : 0));
	}
	/* Less the least a hit costs the thread (the calibration's median):
	 * what remains is the call's, or ours beyond that least; below that
	 * figure the two cannot be told apart. */
	double least = 0;
	const struct hit_cpu *h = &t->hit_cpu;
	if (h->ncalibrations >= 3) {
		double sorted[TRACER_CALIBRATIONS];
		memcpy(sorted, h->calibrations, h->ncalibrations * sizeof *sorted);
		least = stats_percentile(sorted, h->ncalibrations, 50);
	}
	double own = cpu > least ? cpu - least : 0;
	t->st->returns_cpu_timed++;
	t->st->returns_cpu_ns += own;
	t->st->return_hit_cost_us = least / 1e3;
	if (least > 0 && own < least)
		t->st->returns_below_error++;
	return (uint64_t)own;
}

static int on_return(struct tracer *t, struct thread_info *th, const uint64_t *regs, uint64_t when, struct xerr *e)
{
	ssize_t match = -1;
	for (size_t i = t->cur.npending; i-- > 0;)
		if (t->cur.pending[i].tid == th->tid && t->cur.pending[i].sp_after == regs[ARCH_RSP]) {
			match = (ssize_t)i;
			break;
		}
	if (match < 0) {
		t->st->unmatched_returns++;
		return 0;
	}
	struct pending p = t->cur.pending[match];
	/* Calls of this thread deeper than this one were unwound (a panic
	 * crossed them): they will never return. */
	size_t kept = 0;
	for (size_t i = 0; i < t->cur.npending; i++) {
		struct pending *q = &t->cur.pending[i];
		if ((ssize_t)i == match || (q->tid == th->tid && q->sp_after < p.sp_after))
			continue;
		t->cur.pending[kept++] = *q;
	}
	t->cur.npending = kept;
	t->st->returns++;
	struct site *site = &t->probes.sites[p.site];
	if (tracer_take_stack(t, th, regs, false, e) < 0)
		return -1;
	char retval[32];
	snprintf(retval, sizeof retval, "%" PRId64, (int64_t)regs[ARCH_RAX]);
	struct event ev;
	event_init(t, &ev, EVENT_FUNCTION_RETURN, th, when);
	ev.function = site->name;
	ev.elapsed_ns = call_time_ns(t, &p, when);
	ev.retval = retval;
	ev.syscall_result = (int64_t)regs[ARCH_RAX];
	return fire(t, &site->return_probes, &ev, e);
}

static int report_panic(struct tracer *t, struct thread_info *th, const uint64_t *regs, uint64_t data,
			uint64_t vtable, uint64_t when, struct xerr *e)
{
	char *message = tracer_payload_message(t, data, vtable);
	th->panic_pending = false;
	t->st->panics++;
	int rc = tracer_take_stack(t, th, regs, false, e);
	if (rc == 0) {
		struct event ev;
		event_init(t, &ev, EVENT_PANIC, th, when);
		ev.panic_message = message ? message : "(message unreadable)";
		ev.panic_location = th->location[0] ? th->location : "(unknown location)";
		if (t->st->panic_counter_installed) {
			/* what each panic seen stands for: tracer_counters_summarize */
			ev.weighted = true;
			ev.weight_site = (int)tracer_panic_stratum(t);
			ev.weight = t->panic_counter.count > t->st->panics ? (double)t->panic_counter.count / (double)t->st->panics : 1;
			t->st->weighted_hits++;
		}
		rc = fire(t, &t->probes.panic_probes, &ev, e);
	}
	free(message);
	return rc;
}

/* Whether a stop at breakpoint bp (0: not a breakpoint's) needs the
 * thread's registers: all do but an entry site whose probes read no
 * argument register, walk no stack and time no return. */
static bool needs_registers(const struct tracer *t, int bp)
{
	if (bp <= 0 || !t->cfg->no_stacks || bp == t->probes.panic_hook_bp || bp == t->probes.rust_panic_bp || tracer_is_return_bp(t, bp))
		return true;
	for (size_t i = 0; i < t->probes.nsites; i++) {
		const struct site *site = &t->probes.sites[i];
		if (site->bp != bp)
			continue;
		if (site->return_probes.n)
			return true;
		for (size_t k = 0; k < site->entry_probes.n; k++)
			if (t->cfg->probes[site->entry_probes.v[k]].entry_registers)
				return true;
		return false;
	}
	return true;
}

/* traced_registers of a stopped thread, each into regs[its enum arch_reg]. */
static int read_registers(struct tracer *t, int gdb_id, uint64_t regs[ARCH_NREGS], struct xerr *e)
{
	uint64_t values[NTRACED_REGS];
	if (session_thread_registers(t->s, gdb_id, t->regnums, NTRACED_REGS, values, e) < 0)
		return -1;
	for (size_t k = 0; k < NTRACED_REGS; k++)
		regs[traced_registers[k]] = values[k];
	return 0;
}

/* A syscall catchpoint's stop (entry or return): fires the syscall probes,
 * counting a call our stop interrupted and the kernel restarted as one. */
static int handle_syscall_stop(struct tracer *t, const struct session_stop *ev, struct thread_info *th,
			       const uint64_t *regs, bool is_sys_entry, uint64_t when, struct xerr *e)
{
	long long nr = ev->syscall_nr;
	const char *name = ev->syscall_name;
	if (!name)
		name = arch_syscall_name(nr);
	struct event rev;
	event_init(t, &rev, is_sys_entry ? EVENT_SYSCALL_ENTRY : EVENT_SYSCALL_RETURN, th, when);
	rev.stack = NULL;
	rev.syscall_nr = nr;
	rev.syscall_name = name ? name : "?";
	unsigned slot = (unsigned)th->tid % 4096;
	uint64_t *t0 = &t->cur.syscall_t0[slot];
	if (is_sys_entry) {
		if (t->cur.syscall_restarting[slot] &&
		    (nr == t->cur.syscall_open_nr[slot] || nr == ARCH_SYSCALL_RESTART_SYSCALL)) {
			/* The same call going on after our stop: one call. */
			t->cur.syscall_restarting[slot] = false;
			return 0;
		}
		t->cur.syscall_restarting[slot] = false;
		t->cur.syscall_open_nr[slot] = (int16_t)nr;
		*t0 = when;
		return fire(t, &t->probes.syscall_entry_probes, &rev, e);
	}
	if (arch_syscall_restarts((int64_t)regs[ARCH_RAX])) {
		/* Interrupted by a stop (ours: the program never sees these
		 * kernel-internal values, the ERESTART* codes) and about to
		 * be restarted. */
		t->cur.syscall_restarting[slot] = true;
		t->st->syscalls_restarted++;
		return 0;
	}
	if (nr == ARCH_SYSCALL_RESTART_SYSCALL && t->cur.syscall_open_nr[slot] > 0) {
		/* A sleep restarted through restart_syscall: report the call
		 * the program made. */
		nr = t->cur.syscall_open_nr[slot];
		const char *original = arch_syscall_name(nr);
		rev.syscall_nr = nr;
		rev.syscall_name = original ? original : "?";
	}
	t->cur.syscall_open_nr[slot] = 0;
	t->st->syscalls++;
	rev.elapsed_ns = *t0 && when >= *t0 ? when - *t0 : 0;
	*t0 = 0;
	rev.syscall_result = (int64_t)regs[ARCH_RAX];
	char retval[32];
	snprintf(retval, sizeof retval, "%" PRId64, (int64_t)regs[ARCH_RAX]);
	rev.retval = retval;
	return fire(t, &t->probes.syscall_return_probes, &rev, e);
}

int tracer_handle_stop(struct tracer *t, const struct session_stop *ev, uint64_t when, bool *handled, struct xerr *e)
{
	int gdb_id = ev->gdb_thread, bkptno = ev->breakpoint;
	*handled = false;
	bool is_bp = ev->reason == SESSION_STOP_BREAKPOINT;
	bool is_sys_entry = ev->reason == SESSION_STOP_SYSCALL_ENTRY;
	bool is_sys_return = ev->reason == SESSION_STOP_SYSCALL_RETURN;
	bool is_signal = ev->reason == SESSION_STOP_SIGNAL;
	if (!is_bp && !is_sys_entry && !is_sys_return && !is_signal)
		return 0;
	struct thread_info *th = tracer_thread_by_gdb_id(t, (int)gdb_id, e);
	if (!th)
		return -1;
	tracer_thread_name_now(t, th);
	t->cur.event_gdb_id = (int)gdb_id;
	t->cur.event_tid = th->tid;
	t->cur.event = ev;
	*handled = true;
	t->st->hits++;
	if (tracer_hit_cpu_at_stop(t, th->tid, is_bp ? (int)bkptno : 0)) {
		/* a calibration stop: ours, not a probe's hit */
		t->st->hits--;
		return 0;
	}
	uint64_t regs[ARCH_NREGS] = { 0 };
	if (!needs_registers(t, is_bp ? (int)bkptno : 0)) {
		/* An entry that only counts: no registers to read (one MI
		 * round trip less per hit) */
	} else if (read_registers(t, (int)gdb_id, regs, e) < 0) {
		/* Gone while stopped: another thread exec'd (or exited the
		 * process). The resume lets gdb report that. */
		char task[64];
		snprintf(task, sizeof task, "/proc/%d/task/%d", (int)t->pid, (int)th->tid);
		if (!strstr(e->msg, "No such process") && access(task, F_OK) == 0)
			return -1;
		t->st->hits--;
		*handled = false;
		return 0;
	}
	t->cur.stack.nframes = 0;
	if (is_signal) {
		const char *sig = ev->signal_name;
		if (sig && strcmp(sig, "SIGABRT") == 0 && th->panic_pending)
			return report_panic(t, th, regs, th->payload_data, th->payload_vtable, when, e);
		return 0;
	}
	if (is_sys_entry || is_sys_return)
		return handle_syscall_stop(t, ev, th, regs, is_sys_entry, when, e);
	int bp = (int)bkptno;
	t->cur.event_bp = bp;
	if (bp == t->probes.panic_hook_bp && bp > 0) {
		/* panic_with_hook(payload: &mut dyn PanicPayload, location, ..);
		 * older std: rust_panic_with_hook(payload, message, location, ..). */
		th->panic_pending = true;
		th->payload_data = regs[arch_call_arg_reg(0)];
		th->payload_vtable = regs[arch_call_arg_reg(1)];
		th->location[0] = '\0';
		uint64_t first = regs[arch_call_arg_reg(t->probes.panic_old_abi ? 3 : 2)];
		uint64_t second = regs[arch_call_arg_reg(t->probes.panic_old_abi ? 2 : 3)];
		if (!tracer_read_location(t, first, th->location, sizeof th->location))
			tracer_read_location(t, second, th->location, sizeof th->location);
		return 0;
	}
	if (bp == t->probes.rust_panic_bp && bp > 0) {
		/* Its hook came while the probes were off: no location, and
		 * part of the budget's passing over. */
		if (!th->panic_pending && t->probes.panic_hook_bp > 0 && tracer_budgeted(t)) {
			t->st->panics_passed_over++;
			return 0;
		}
		return report_panic(t, th, regs, regs[arch_call_arg_reg(0)], regs[arch_call_arg_reg(1)], when, e);
	}
	if (tracer_is_return_bp(t, bp)) {
		if (on_return(t, th, regs, when, e) < 0)
			return -1;
		/* A return site can also be a probed entry (recursion into the
		 * same code): fall through to the entry check. */
	}
	for (size_t i = 0; i < t->probes.nsites; i++)
		if (t->probes.sites[i].bp == bp) {
			if (on_entry(t, &t->probes.sites[i], th, regs, when, e) < 0)
				return -1;
			tracer_calibrate_at(t, &t->probes.sites[i], (int)gdb_id, th->tid);
			return 0;
		}
	return 0;
}
