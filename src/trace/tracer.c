/* tracer.c — the loop and the exit path; the target's memory, threads and stacks. */
#include "trace/tracer_internal.h"
#include "procfs/proc.h"

#include <errno.h>

/* ---- memory ----------------------------------------------------------- */

int tracer_read_mem(struct tracer *t, uint64_t addr, void *buf, size_t len)
{
	if (t->mem_fd < 0)
		return -1;
	return pread(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

uint64_t tracer_read_word(struct tracer *t, uint64_t addr, bool *ok)
{
	uint64_t w = 0;
	*ok = tracer_read_mem(t, addr, &w, sizeof w) == 0;
	return w;
}


/* ---- threads -------------------------------------------------------------- */

static int refresh_threads(struct tracer *t, struct xerr *e)
{
	struct session_thread *list = NULL;
	size_t n = 0;
	if (session_threads(t->s, &list, &n, e) < 0)
		return -1;
	struct thread_info *fresh = calloc(n ? n : 1, sizeof *fresh);
	if (!fresh) {
		free(list);
		return xerr_oom(e);
	}
	for (size_t i = 0; i < n; i++) {
		fresh[i].gdb_id = list[i].gdb_id;
		fresh[i].tid = list[i].tid;
		snprintf(fresh[i].name, sizeof fresh[i].name, "%s", list[i].name);
		for (size_t j = 0; j < t->nthreads; j++)
			if (t->threads[j].tid == fresh[i].tid && t->threads[j].panic_pending) {
				fresh[i].panic_pending = true;
				fresh[i].payload_data = t->threads[j].payload_data;
				fresh[i].payload_vtable = t->threads[j].payload_vtable;
				memcpy(fresh[i].location, t->threads[j].location, sizeof fresh[i].location);
			}
	}
	free(list);
	free(t->threads);
	t->threads = fresh;
	t->nthreads = n;
	return 0;
}

/* The session attached again (session_attach_generation): gdb numbered the
 * threads anew. The list is read again and the held time kept by gdb id
 * follows each thread to its new id (a thread gone since drops out). */
static int follow_reattach(struct tracer *t, struct xerr *e)
{
	size_t nold = t->nthreads;
	struct thread_info *old = NULL;
	if (nold) {
		old = calloc(nold, sizeof *old);
		if (!old)
			return xerr_oom(e);
		for (size_t i = 0; i < nold; i++)
			old[i] = (struct thread_info){ .gdb_id = t->threads[i].gdb_id, .tid = t->threads[i].tid };
	}
	t->threads_generation = session_attach_generation(t->s);
	if (refresh_threads(t, e) < 0) {
		free(old);
		return -1;
	}
	struct tracer_target_clock *clock = &t->target_clock;
	size_t kept = 0;
	for (size_t i = 0; i < clock->nfrozen_by_thread; i++) {
		pid_t tid = 0;
		for (size_t j = 0; j < nold && !tid; j++)
			if (old[j].gdb_id == clock->frozen_by_thread[i].gdb_id)
				tid = old[j].tid;
		for (size_t j = 0; j < t->nthreads && tid; j++)
			if (t->threads[j].tid == tid) {
				clock->frozen_by_thread[kept] = clock->frozen_by_thread[i];
				clock->frozen_by_thread[kept++].gdb_id = t->threads[j].gdb_id;
				break;
			}
	}
	clock->nfrozen_by_thread = kept;
	free(old);
	return 0;
}

struct thread_info *tracer_thread_by_gdb_id(struct tracer *t, int gdb_id, struct xerr *e)
{
	if (t->threads_generation != session_attach_generation(t->s) && follow_reattach(t, e) < 0)
		return NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < t->nthreads; i++)
			if (t->threads[i].gdb_id == gdb_id)
				return &t->threads[i];
		if (attempt == 0 && refresh_threads(t, e) < 0)
			return NULL;
	}
	xerr_set(e, "gdb reported a stop in thread %d, which it does not list", gdb_id);
	return NULL;
}

/* The thread's name now (threads rename themselves after gdb saw them). */
void tracer_thread_name_now(struct tracer *t, struct thread_info *th)
{
	/* Read again at most every 100 ms: a read cost each hit ~20 us */
	uint64_t now = monotonic_ns();
	if (th->name_read_ns && now - th->name_read_ns < 100000000u)
		return;
	th->name_read_ns = now;
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)t->pid, (int)th->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(th->name, sizeof th->name, "%s", buf);
}

/* ---- stacks --------------------------------------------------------------- */

/* at_entry: the PC is a probed function's first instruction. The compiler
 * may have scheduled an inlined callee's instruction there, but the thread
 * is at the start of the function: its inline frames at that PC are
 * dropped so the probed function is the leaf. */
int tracer_take_stack(struct tracer *t, const struct thread_info *th, const uint64_t *regs, bool at_entry,
		      struct xerr *e)
{
	t->cur.stack.nframes = 0;
	t->cur.stack.frames = t->cur.frames;
	if (t->cfg->no_stacks)
		return 0;
	int max = t->cfg->max_frames > 0 ? t->cfg->max_frames : 64;
	if (!t->unwinder) {
		t->unwinder = unwinder_new(symbolizer_dwfl(t->sym), t->pid, e);
		if (!t->unwinder)
			return -1;
	}
	uint64_t pcs[256];
	if (max > 256)
		max = 256;
	size_t npcs = 0;
	bool complete;
	struct unwind_regs ur = {
		.rip = regs[ARCH_RIP], .rsp = regs[ARCH_RSP], .rbp = regs[ARCH_RBP], .rbx = regs[ARCH_RBX],
		.r12 = regs[ARCH_R12], .r13 = regs[ARCH_R13], .r14 = regs[ARCH_R14], .r15 = regs[ARCH_R15],
	};
	if (unwinder_walk(t->unwinder, th->tid, &ur, pcs, (size_t)max, &npcs, &complete, e) < 0)
		return -1;
	size_t need = npcs * 8 + 8;
	struct frame *g = array_grow(t->cur.frames, &t->cur.frames_cap, need, sizeof *g);
	if (!g)
		return xerr_oom(e);
	t->cur.frames = g;
	size_t used = 0;
	for (size_t i = 0; i < npcs && used < need; i++) {
		size_t n = 0;
		if (symbolizer_lookup(t->sym, pcs[i], i > 0, t->cur.frames + used, need - used, &n, e) < 0)
			return -1;
		if (i == 0 && at_entry) {
			size_t skip = 0;
			while (skip + 1 < n && t->cur.frames[skip].inlined)
				skip++;
			memmove(t->cur.frames, t->cur.frames + skip, (n - skip) * sizeof *t->cur.frames);
			n -= skip;
		}
		used += n;
	}
	t->cur.stack.frames = t->cur.frames;
	t->cur.stack.nframes = used;
	return 0;
}


/* The first hit's stack is symbolized with the target held, and the first
 * frame in a module reads that module's debug file and index: on
 * trace_hot, libc's frames below main took the first hit's symbolizing to
 * 92 ms, a hit's median being 2-4 ms. One lookup in each module while the
 * target runs reads them before the probes go in. */
static int warm_function(const struct symbolizer_function *f, void *sym)
{
	struct frame frames[8];
	size_t n;
	if (!f->size)
		return 0;
	symbolizer_lookup(sym, f->addr, false, frames, 8, &n, NULL);
	return 1;
}

static int warm_module(const struct symbolizer_module *m, void *sym)
{
	symbolizer_foreach_function(sym, m->path, warm_function, sym, NULL);
	return 0;
}

/* ---- the loop and the exit path ------------------------------------------ */

/* Forks pending when the target was last stopped are reported at the next
 * resume, as fork catchpoint stops (each child cleaned as the record is
 * read): resumes after each until gdb is quiet for a moment. */
static int settle_forks(struct tracer *t, struct xerr *e)
{
	for (int records = 0; records < 256; records++) {
		struct session_stop ev;
		int got = session_wait_stop(t->s, 50, &ev, e);
		if (got <= 0)
			return got;
		session_stop_release(&ev);
		if (session_is_stopped(t->s) && session_target_alive(t->s) && session_resume(t->s, e) < 0)
			return -1;
	}
	return 0;
}

int tracer_disarm(struct tracer *t, struct xerr *e)
{
	/* (sites that only count have a counter and no breakpoint) */
	if (!t->probes.nall && !tracer_counters_any(t))
		return 0;
	if (!session_gdb_alive(t->s) || !session_target_alive(t->s))
		return 0;
	/* Exec'd: stopped in the new program, where gdb re-set our breakpoints
	 * at the old addresses; delete them before the detach lets it run. */
	bool execed = session_exec_path(t->s) != NULL;
	/* Non-stop: deleted with the threads running; a thread that trapped
	 * on one meanwhile is reported (or resumed by gdb) as usual. */
	if (!execed && !t->non_stop && session_stop(t->s, e) < 0)
		return -1;
	/* Entry counters come off with every thread stopped, also in non-stop
	 * mode; their bytes went with the old program on an exec. */
	if (!execed && tracer_counters_any(t)) {
		if (!session_is_stopped(t->s) && session_stop(t->s, e) < 0)
			return -1;
		if (tracer_counters_remove(t, e) < 0)
			return -1;
	} else if (!execed) {
		tracer_counters_remove(t, e);
	}
	if (t->hit_cpu.pending_bp) {
		/* a calibration breakpoint its thread never reached (the thread
		 * ended, or the trace did first); gone already if it was hit */
		struct xerr ignored;
		session_breaks_delete(t->s, &t->hit_cpu.pending_bp, 1, &ignored);
		t->hit_cpu.pending_bp = 0;
	}
	if (session_breaks_delete(t->s, t->probes.all_bps, t->probes.nall, e) < 0)
		return -1;
	t->probes.nall = 0;
	if (execed)
		return 0;
	if (session_resume(t->s, e) < 0)
		return -1;
	return settle_forks(t, e);
}

static void tracer_release(struct tracer *t)
{
	for (size_t i = 0; i < t->probes.nsites; i++) {
		free(t->probes.sites[i].name);
		free(t->probes.sites[i].entry_probes.v);
		free(t->probes.sites[i].return_probes.v);
	}
	free(t->probes.sites);
	free(t->probes.returns);
	free(t->cur.pending);
	free(t->threads);
	free(t->probes.all_bps);
	free(t->probes.duty_bps);
	free(t->probes.panic_probes.v);
	free(t->probes.syscall_entry_probes.v);
	free(t->probes.syscall_return_probes.v);
	free(t->cur.frames);
	free(t->estimates.hit_stops);
	free(t->estimates.windows);
	free(t->target_clock.frozen_by_thread);
	free(t->counters);
	entry_counter_spaces_release(&t->counter_spaces);
	tracer_release_strings(t);
	free(t->cur.arg_strings);
	if (t->unwinder)
		unwinder_free(t->unwinder);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
}

static bool gdb_gone(struct tracer *t)
{
	return !session_gdb_alive(t->s);
}

/* Opens the target's memory, arms the probes, warms the unwinder and
 * resumes the target with the duty cycle on. Returns 0, or -1 with e. */
static int tracer_start(struct tracer *t, struct xerr *e)
{
	bool held_at_entry = session_held_at_entry(t->s);
	const struct tracer_config *cfg = t->cfg;
	struct tracer_stats *stats = t->st;
	t->mem_fd = proc_open_mem(t->pid, O_RDONLY);
	int rc = 0;
	if (t->mem_fd < 0)
		rc = xerr_set(e, "cannot open /proc/%d/mem to read the target's memory: %s", (int)t->pid,
			      strerror(errno));
	/* Everything that reads files (resolving the probes, the unwinder,
	 * the symbolizer's per-module index for the first hit) happens while
	 * the target runs; only the inserts hold it (docs/tracing.md). */
	struct arming arming = { 0 };
	if (rc == 0)
		rc = tracer_resolve_probes(t, &arming, e);
	if (rc == 0 && !cfg->no_stacks && t->probes.nsites) {
		t->unwinder = unwinder_new(symbolizer_dwfl(t->sym), t->pid, e);
		if (!t->unwinder)
			rc = -1;
		struct frame warm[8];
		size_t nwarm;
		for (size_t i = 0; rc == 0 && i < t->probes.nsites; i++)
			symbolizer_lookup(t->sym, t->probes.sites[i].addr, false, warm, 8, &nwarm, NULL);
		if (rc == 0)
			symbolizer_foreach_module(t->sym, warm_module, t->sym, NULL);
	}
	/* gdb lists the threads of a running target too; a thread born since
	 * is looked up at its first hit. */
	if (rc == 0)
		rc = refresh_threads(t, e);
	if (rc == 0)
		rc = tracer_counters_plan(t, &arming, e);
	if (rc == 0)
		rc = tracer_insert_probes(t, &arming, e);
	if (rc == 0)
		rc = tracer_counters_install(t, e);
	free(arming.sys_nrs);
	stop_clock_init(&t->duty_cycle.clock, t->pid);
	t->duty_cycle.clock.steps_stop_all = t->probes.displaced_off;
	if (rc == 0) {
		struct stop_clock_window unused;
		stop_clock_stopped(&t->duty_cycle.clock, 0, monotonic_ns(), &unused);
		t->duty_cycle.budget_start_ns = monotonic_ns();
		tracer_process_cpu_start(&t->duty_cycle.cpu, t->pid);
		/* A small starting credit lets the first on-window hold several hits. */
		stop_budget_init(&t->duty_cycle.budget, tracer_budgeted(t) ? cfg->max_stopped_percent : 0, t->duty_cycle.budget_start_ns,
				 cfg->max_stopped_percent / 100.0 * 0.2);
		stop_clock_resuming(&t->duty_cycle.clock, 0, false, t->duty_cycle.budget_start_ns);
		rc = session_resume(t->s, e);
	}
	if (rc == 0)
		fprintf(stderr, "xgdbprof: attached %zu probe%s (%zu breakpoint%s)%s%s\n", t->probes.nsites + t->probes.panic_probes.n +
			t->probes.syscall_entry_probes.n + t->probes.syscall_return_probes.n,
			t->probes.nsites + t->probes.panic_probes.n + t->probes.syscall_entry_probes.n + t->probes.syscall_return_probes.n == 1 ? "" : "s",
			stats->breakpoints, stats->breakpoints == 1 ? "" : "s",
			tracer_budgeted(t) ? "" : cfg->exact ? ", exact: no budget" : "",
			held_at_entry ? "; the command was held at its entry point until now (none of its own code had run)"
				      : "");
	t->duty_cycle.duty = DUTY_ON;
	tracer_armed_window_open(t);
	t->duty_cycle.duty_changed_ns = monotonic_ns();
	t->duty_cycle.window_close_ns = tracer_window_clock_ns(t, t->duty_cycle.duty_changed_ns) + (uint64_t)TRACER_WINDOW_CPU_NS;
	t->duty_cycle.last_resume_ns = t->duty_cycle.duty_changed_ns;
	t->duty_cycle.window_start_ns = t->duty_cycle.budget_start_ns ? t->duty_cycle.budget_start_ns : t->duty_cycle.duty_changed_ns;
	t->duty_cycle.gdb_hit_ns = 1e6;
	return rc;
}

/* The event loop's own clocks. */
struct loop_clock {
	uint64_t deadline;         /* 0: no duration */
	uint64_t last_tick, last_exec_check;
	uint64_t dead_since;       /* /proc first showed the target dead and gdb had not said so; 0: alive */
};

/* An exit gdb did not report within a second of /proc showing every
 * thread dead (session_target_dead_in_proc) ends the trace as an exit:
 * without this the trace waited for gdb forever. */
static bool exit_unreported(struct tracer *t, struct loop_clock *lc, uint64_t now)
{
	if (!session_target_dead_in_proc(t->s)) {
		lc->dead_since = 0;
		return false;
	}
	if (!lc->dead_since)
		lc->dead_since = now;
	if (now - lc->dead_since < 1000000000u)
		return false;
	session_note_target_exited(t->s);
	run_stats_target_ended(&t->st->run, NULL);
	run_notes_add(&t->st->run.notes, "the target exited and gdb did not report it within 1 s: the trace ended there");
	return true;
}

/* The target's main thread exited while its other threads run on (/proc
 * shows the process a zombie; gdb reports nothing, and goes on stopping
 * and resuming the others). Not an exit: the trace goes on, and at its end
 * the probes come out as at any end the target lives through (taken for
 * an exit, as it was when a hit was pending at that look, the trace
 * ended there without taking them out). Said once, in a note. */
static bool main_thread_gone(struct tracer *t, uint64_t now)
{
	if (t->main_thread_gone)
		return true;
	if (session_target_alive(t->s) || !session_leader_exited(t->s))
		return false;
	t->main_thread_gone = true;
	run_notes_add(&t->st->run.notes, "the target's main thread exited %.1f s into the trace while its other "
		      "threads ran on: they were traced to the end", (double)(now - t->start_ns) / 1e9);
	return true;
}

/* After a failed switch of the probes ("Cannot insert breakpoint N. Cannot
 * access memory", seen when panic_storm exited as the probes woke): whether
 * the target is on its way out, dead in /proc within 500 ms. Then the trace
 * ends as at an exit, not as an error. */
static bool target_exiting(struct tracer *t)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int i = 0; i < 50; i++) {
		char state = proc_state(t->pid);
		if (state == 0 || state == 'Z' || state == 'X' || session_target_dead_in_proc(t->s))
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/* What ends the trace between events: a signal, exit(), the duration, the
 * target's exit or exec; also runs the recipe's timers and wakes the probes
 * after an off window. Returns 0, or -1 with e; *over says the trace ends. */
static int check_trace_end(struct tracer *t, struct loop_clock *lc, uint64_t now, bool *over, struct xerr *e)
{
	struct session *s = t->s;
	*over = true;
	if (signals_pending() || t->sink_done || (lc->deadline && now >= lc->deadline))
		return 0;
	if (session_is_stopped(s) && !session_target_alive(s) && !main_thread_gone(t, now)) {
		run_stats_target_ended(&t->st->run, session_exit_signal(s));
		return 0;
	}
	/* An exec gdb reported, or one it went silent on (session.h),
	 * looked for in /proc every 100 ms. */
	/* Counts kept should the target exit: its memory goes with it, and a
	 * program that exits on its own is gone before we can read them.
	 * Every 10 ms (a pread of a few cache lines each, ~2 us); every
	 * 100 ms past 16 counters (a regex over many functions). */
	uint64_t read_every = t->ncounters <= 16 ? 10000000u : 100000000u;
	if (tracer_counters_any(t) && now - t->counters_read_ns >= read_every) {
		if (t->st->counters_installed && entry_counters_read(t->mem_fd, t->counters, t->ncounters) == 0)
			t->counters_read_ns = now;
		if (t->st->panic_counter_installed && entry_counter_read_one(t->mem_fd, &t->panic_counter) == 0) {
			t->st->panics_counted = t->panic_counter.count;
			t->counters_read_ns = now;
		}
	}
	if (now - lc->last_exec_check >= 100000000u) {
		lc->last_exec_check = now;
		if (session_target_execed(s) || exit_unreported(t, lc, now))
			return 0;
		main_thread_gone(t, now);
	}
	if (session_exec_path(s))
		return 0;
	if (now - lc->last_tick >= 10000000u) {
		lc->last_tick = now;
		struct tracer_progress *pr = t->cfg->progress;
		if (pr) {
			pr->armed_fraction = 1;
			if (t->st->duty_cycles) {
				tracer_process_cpu_mark(&t->duty_cycle.cpu, t->duty_cycle.duty);
				if (t->duty_cycle.cpu.total_ns > 0)
					pr->armed_fraction = fmin(1, t->duty_cycle.cpu.armed_ns / t->duty_cycle.cpu.total_ns);
			}
		}
		double sink_stopped_before = pr ? pr->sink_stopped_s : 0;
		int ticked = event_sink_tick(t->sink, now, e);
		/* A snapshot's stop costs the target like a hit: the budget pays it. */
		if (pr && pr->sink_stopped_s > sink_stopped_before)
			t->duty_cycle.stopped_ns += (pr->sink_stopped_s - sink_stopped_before) * 1e9;
		if (ticked != 0) {
			t->sink_done = ticked > 0;
			return ticked < 0 ? -1 : 0;
		}
	}
	if (tracer_budgeted(t) && (tracer_budget_wake(t, now, e) < 0 || tracer_budget_close_request(t, now, e) < 0))
		return session_target_execed(s) || target_exiting(t) ? 0 : -1;
	*over = false;
	return 0;
}

/* One record from gdb, taken (freed here): a stop is handled, accounted and
 * resumed; anything else is dropped. Returns tracer_handle_stop's or the resume's
 * result (0, or -1 with e); *over says the target exited or exec'd. */
static int trace_event(struct tracer *t, struct session_stop *ev, uint64_t when, bool *over, struct xerr *e)
{
	struct session *s = t->s;
	*over = false;
	if (ev->reason == SESSION_STOP_NONE) {
		session_stop_release(ev);
		return 0;
	}
	int stopped_thread = ev->gdb_thread;
	if (ev->reason == SESSION_STOP_EXITED) {
		run_stats_target_ended(&t->st->run, session_exit_signal(s));
		session_stop_release(ev);
		*over = true;
		return 0;
	}
	if (ev->reason == SESSION_STOP_EXEC) {
		session_stop_release(ev);
		*over = true;
		return 0;
	}
	bool handled = false;
	bool at_fork = ev->reason == SESSION_STOP_FORK;
	double stopped_before_ns = t->duty_cycle.stopped_ns;
	enum duty duty_at_stop = t->duty_cycle.duty;
	t->cur.event_tid = 0;
	t->cur.event_bp = 0;
	uint64_t entries_before = t->st->entries;
	int rc = tracer_handle_stop(t, ev, when, &handled, e);
	if (handled)
		tracer_hitter_first_wait(t, t->cur.event_tid, t->st->entries > entries_before);
	tracer_release_strings(t);
	t->cur.event = NULL;
	session_stop_release(ev);
	if (rc < 0)
		return rc;
	tracer_account_hidden_part(t, handled, duty_at_stop, when);
	if (rc == 0)
		rc = tracer_budget_after_stop(t, monotonic_ns(), e);
	/* Every stop is resumed, ours or not (a signal gdb reports is
	 * delivered by the continue). */
	t->duty_cycle.window_start_ns = monotonic_ns();
	bool over_breakpoint = handled && tracer_resumes_over_breakpoint(t);
	stop_clock_resuming(&t->duty_cycle.clock, handled ? t->cur.event_tid : 0, over_breakpoint, t->duty_cycle.window_start_ns);
	/* Non-stop: only the thread of this record is stopped by it; others
	 * stopped meanwhile have records of their own still to read. */
	if (rc == 0 && t->non_stop && stopped_thread > 0)
		rc = session_resume_thread(s, stopped_thread, e);
	else if (rc == 0 && session_is_stopped(s) && session_target_alive(s))
		rc = session_resume(s, e);
	t->duty_cycle.last_resume_ns = monotonic_ns();
	t->duty_cycle.stopped_ns += (double)(t->duty_cycle.window_start_ns - when);
	if (rc == 0 && over_breakpoint && t->non_stop && t->probes.displaced_off && stopped_thread > 0) {
		t->duty_cycle.in_place_resumes_ns += (double)(t->duty_cycle.last_resume_ns - t->duty_cycle.window_start_ns);
		t->duty_cycle.in_place_resumes++;
	}
	if (at_fork)
		t->fork_stopped_ns += t->duty_cycle.stopped_ns - stopped_before_ns;
	if (handled && t->estimates.nhit_stops < (1u << 20)) {
		double *grown = array_grow(t->estimates.hit_stops, &t->estimates.hit_stops_cap, t->estimates.nhit_stops + 1, sizeof *grown);
		if (grown) {
			t->estimates.hit_stops = grown;
			t->estimates.hit_stops[t->estimates.nhit_stops++] = t->estimates.last_hidden_ns + (double)(t->duty_cycle.window_start_ns - when);
		}
	}
	double frozen = (double)(t->duty_cycle.last_resume_ns - (t->target_clock.stop_start_ns ? t->target_clock.stop_start_ns : when));
	t->target_clock.frozen_ns += frozen;
	if (t->non_stop && stopped_thread > 0) {
		struct thread_frozen *f = tracer_thread_frozen(t, stopped_thread, true);
		if (f)
			f->ns += frozen;
	}
	t->target_clock.stop_start_ns = 0;
	for (size_t i = t->cur.npending; i-- > 0 && t->cur.pending[i].t0_ns == 0;) {
		t->cur.pending[i].t0_ns = t->duty_cycle.last_resume_ns;
		t->cur.pending[i].stopped_at_t0_ns = t->duty_cycle.stopped_ns;
	}
	return rc;
}

/* Waits for gdb's records and handles them until the trace ends. Returns 0,
 * or -1 with e. */
/* How long the loop may wait for gdb: 10 ms, less while an armed window
 * may reach its boundary, which must be acted on when it passes, not at
 * the next hit (a CPU ms is at most a wall ms per busy thread). */
static int wait_ms(const struct tracer *t)
{
	if (!tracer_budgeted(t) || t->duty_cycle.duty != DUTY_ON || t->duty_cycle.close_requested)
		return 10;
	uint64_t clock = tracer_window_clock_ns(t, monotonic_ns());
	if (clock >= t->duty_cycle.window_close_ns)
		return 1;
	uint64_t left_ms = (t->duty_cycle.window_close_ns - clock + 999999) / 1000000;
	return left_ms < 1 ? 1 : left_ms > 10 ? 10 : (int)left_ms;
}

static int trace_loop(struct tracer *t, struct xerr *e)
{
	const struct tracer_config *cfg = t->cfg;
	/* The asked duration is traced time: it starts once the probes are
	 * armed and the target resumed (budget_start_ns). Resolving and
	 * arming can take seconds on a loaded machine; counted from before,
	 * they left traces of 0.00 s with no hit. */
	uint64_t traced_from = t->duty_cycle.budget_start_ns ? t->duty_cycle.budget_start_ns : t->tracer_start_ns;
	struct loop_clock lc = {
		.deadline = cfg->duration_s > 0 ? traced_from + (uint64_t)(cfg->duration_s * 1e9) : 0,
	};
	int rc = 0;
	while (rc == 0) {
		bool over;
		rc = check_trace_end(t, &lc, monotonic_ns(), &over, e);
		if (over)
			break;
		struct session_stop ev;
		int got = session_wait_stop(t->s, wait_ms(t), &ev, e);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			continue;
		rc = trace_event(t, &ev, monotonic_ns(), &over, e);
		if (over)
			break;
	}
	return rc;
}

/* The exit path, whatever ended the trace: heal the target if gdb died,
 * else take every breakpoint out; then the notes on forks and exec, and the
 * figures. Returns rc, or -1 with e when that failed on a clean run. */
static int tracer_end(struct tracer *t, int rc, struct xerr *e)
{
	struct session *s = t->s;
	struct tracer_stats *stats = t->st;
	struct xerr local;
	uint64_t end = monotonic_ns();
	if (gdb_gone(t)) {
		stats->gdb_died = true;
		if (session_rescue(s, &stats->restore, &local) < 0)
			run_notes_add(&stats->run.notes, "%s", local.msg);
		char fate[240], children[320];
		if (restore_report_fate(&stats->restore, fate, sizeof fate))
			run_notes_add(&stats->run.notes, "%s", fate);
		if (restore_report_children(session_pid(s), children, sizeof children))
			run_notes_add(&stats->run.notes, "%s", children);
		if (rc == 0)
			rc = xerr_set(e, "gdb died during the trace");
	} else if (!stats->run.target_exited && tracer_disarm(t, rc < 0 ? &local : e) < 0) {
		if (rc == 0)
			rc = -1;
		else
			run_notes_add(&stats->run.notes, "removing breakpoints: %s", local.msg);
	}
	if (stats->panic_counter_installed && !stats->counters_installed && !t->counters_removed)
		tracer_counters_summarize(t);   /* the panics' scale, from the last read */
	if (stats->counters_installed && !t->counters_removed) {
		/* Not removed: the target exited (before or during the
		 * removal), or gdb died (the rescue put the jumps back). What
		 * counts is the last read while it ran. */
		tracer_counters_summarize(t);
		const char *how = gdb_gone(t) ? "was rescued after gdb died" : session_exec_path(s) ? "exec'd" : "exited";
		if (!t->counters_read_ns) {
			stats->counters_complete = false;
			snprintf(stats->counter_why, sizeof stats->counter_why, "the target %s before they were read", how);
		} else {
			run_notes_add(&stats->run.notes, "function entries: the counters were last read %.0f ms before the "
				      "end of the trace (the target %s): the calls after that are not counted",
				      (double)(end > t->counters_read_ns ? end - t->counters_read_ns : 0) / 1e6, how);
		}
	}
	struct xerr fire_error;
	if (tracer_fire_counted_only(t, &fire_error) < 0 && rc == 0)
		rc = xerr_set(e, "%s", fire_error.msg);
	/* A target whose main thread exited alone is not "alive" to the
	 * session (its leader is a zombie), but its other threads fork on:
	 * their children are listed under their own tasks, and gdb still
	 * traces the zombie leader (TracerPid), which is what the heal reads. */
	if (!gdb_gone(t) && !session_exec_path(s) && (session_target_alive(s) || t->main_thread_gone))
		tracer_heal_children(t);
	session_on_fork(s, NULL, NULL);
	stats->forks = session_forks(s);
	stats->fork_bytes_healed = t->fork_bytes_healed;
	stats->fork_stopped_s = t->fork_stopped_ns / 1e9;
	if (stats->forks) {
		/* gdb stops the forking thread at every fork while the catchpoint
		 * is in, probes on or off: a share the budget cannot lower, and
		 * that a user must not read as the hits' cost. */
		char held[200] = "";
		double traced_s = (double)(end - t->start_ns) / 1e9;
		if (stats->fork_stopped_s > 0 && traced_s > 0)
			snprintf(held, sizeof held, "; gdb's stop at each fork held the thread that forked %.0f ms in all "
				 "(%.2f ms a fork, %.1f%% of the trace: the budget cannot switch these stops off)",
				 stats->fork_stopped_s * 1e3, stats->fork_stopped_s * 1e3 / (double)stats->forks,
				 100 * stats->fork_stopped_s / traced_s);
		run_notes_add(&stats->run.notes, "the target forked %lu time%s during the trace: each child was detached untraced%s%s",
			 stats->forks, stats->forks == 1 ? "" : "s",
			 t->fork_bytes_healed ? " (xgdbprof removed the int3 bytes a child had inherited)" : "", held);
	}
	if (session_exec_path(s)) {
		stats->run.target_execed = true;
		snprintf(stats->run.exec_path, sizeof stats->run.exec_path, "%s", session_exec_path(s));
		run_notes_add(&stats->run.notes, "the target exec'd %s: the trace ended at the exec (what was "
			      "collected before it is reported); the new program runs on untraced, with no breakpoint",
			      stats->run.exec_path);
	}
	tracer_finish_stats(t, end);
	return rc;
}

int tracer_run(struct session *s, struct symbolizer *sym, const struct tracer_config *cfg,
	       const struct event_sink *sink, struct tracer_stats *stats, struct xerr *e)
{
	memset(stats, 0, sizeof *stats);
	struct tracer *t = calloc(1, sizeof *t);
	if (!t)
		return xerr_oom(e);
	t->s = s;
	t->sym = sym;
	t->sink = sink;
	t->cfg = cfg;
	t->st = stats;
	t->pid = session_pid(s);
	t->non_stop = session_non_stop(s);
	stats->non_stop = t->non_stop;
	t->tracer_start_ns = monotonic_ns();
	stats->attach_hold_s = session_attach_hold_ms(s) / 1e3;
	t->start_ns = cfg->start_ns ? cfg->start_ns : t->tracer_start_ns;
	int rc = tracer_start(t, e);
	if (rc == 0)
		rc = trace_loop(t, e);
	rc = tracer_end(t, rc, e);
	tracer_release(t);
	free(t);
	return rc;
}

