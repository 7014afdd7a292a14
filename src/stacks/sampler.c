/* sampler.c — sampling rounds: which threads to stop and when, the budgets, the run and its figures (see sampler.h). */
#include "config.h"
#include "stacks/sampler_internal.h"

/* True when a stop landed on a system call's way out after the call had
 * ended by itself: orig_rax names a call and rax holds its own result, not
 * -EINTR or the -ERESTART* codes a call gets when a signal finds it inside
 * (arch_syscall_interrupted). The stopping signal is noticed on every
 * return to user mode, and the interrupt that should stop a thread
 * running in user code can come later than its next system call (on a VM
 * a few to hundreds of microseconds: bench/README.md, "Figures behind the
 * code"), so such a stop says where the thread went next, not where it
 * was. A thread that really was in the call when asked lands here too:
 * sampler_landing_kept tells the two apart in bulk. */
bool sampler_at_completed_return(uint64_t orig_rax, uint64_t rax)
{
	return (int64_t)orig_rax >= 0 && !arch_syscall_interrupted((int64_t)rax);
}

static struct tracked_thread *find_thread(struct sampler *sp, pid_t tid)
{
	for (size_t i = 0; i < sp->nthreads; i++)
		if (sp->threads[i].tid == tid)
			return &sp->threads[i];
	return NULL;
}

void sampler_stack_release(struct stack *st)
{
	free(st->frames);
	st->frames = NULL;
	st->nframes = 0;
}

/* A gone thread's stacks and its CPU they do not weigh move to the run's
 * pending tails. False when it has none to weigh it on (or no memory): the
 * CPU stays unsampled. */
static bool keep_gone_tail(struct sampler *sp, struct tracked_thread *gone)
{
	if (gone->weighed.n == 0)
		return false;
	if (sp->ngone_tails == sp->gone_tails_cap) {
		size_t cap = sp->gone_tails_cap ? 2 * sp->gone_tails_cap : 16;
		struct gone_tail *grown = realloc(sp->gone_tails, cap * sizeof *grown);
		if (!grown)
			return false;
		sp->gone_tails = grown;
		sp->gone_tails_cap = cap;
	}
	struct gone_tail *g = &sp->gone_tails[sp->ngone_tails++];
	*g = (struct gone_tail){ .tid = gone->tid, .weighed = gone->weighed, .pool_ns = gone->pool_ns };
	snprintf(g->name, sizeof g->name, "%s", gone->proc.name);
	gone->weighed = (struct weighed_stacks){0};
	return true;
}

/* What a thread ran since its last sample and before this tick: CPU of
 * rounds that gave it no sample. Into its pool, not onto its next sample
 * (weighed.h says why). */
static void pool_unweighed(struct tracked_thread *t, uint64_t upto)
{
	if (t->sample_base_ns != UINT64_MAX && upto > t->sample_base_ns) {
		t->pool_ns += upto - t->sample_base_ns;
		t->sample_base_ns = upto;
	}
}

/* Updates the thread table from /proc; marks which threads to sample and
 * which of those need a walk. Returns the number needing a walk, -1 if the
 * process is gone. */
static int plan_tick(struct sampler *sp, struct xerr *e)
{
	pid_t pid = session_pid(sp->session);
	struct proc_thread *listing;
	uint64_t now = monotonic_ns();
	int n = proc_threads(pid, &listing, e);
	if (n < 0)
		return -1;
	for (size_t i = 0; i < sp->nthreads; i++)
		sp->threads[i].seen = sp->threads[i].wanted = sp->threads[i].walk = sp->threads[i].planned = false;
	int walks = 0;
	for (int k = 0; k < n; k++) {
		struct tracked_thread *t = find_thread(sp, listing[k].tid);
		if (!t) {
			struct tracked_thread *grown = array_grow(sp->threads, &sp->cap, sp->nthreads + 1, sizeof *grown);
			if (!grown) {
				free(listing);
				return xerr_oom(e);
			}
			sp->threads = grown;
			t = &sp->threads[sp->nthreads++];
			memset(t, 0, sizeof *t);
			t->tid = listing[k].tid;
			t->first_seen_ns = now;
			t->first_ticks = listing[k].cpu_ticks;
			t->first_kernel_ticks = listing[k].kernel_ticks;
			stop_budget_init(&t->budget, sp->cfg->max_stopped_percent, now, 0);
			/* Born during the run: all its CPU is the run's. */
			t->sample_base_ns = sp->last_plan_ns > 0 ? 0 : UINT64_MAX;
		}
		t->seen = true;
		t->last_seen_ns = now;
		t->proc = listing[k];
		pool_unweighed(t, t->tick_runtime_ns);
		uint64_t runtime, queued;
		t->sched_ok = proc_thread_sched_ns(pid, t->tid, &runtime, &queued) == 0;
		if (!t->sched_ok && t->have_tick_runtime) {
			/* Gone between the listing and the read (its schedstat reads
			 * as 0): it ran nothing more that we know of. Taking the 0
			 * wrapped its CPU since the last tick to near 2^64 and lost
			 * what it ran before from the run's seen and gone CPU. */
			runtime = t->tick_runtime_ns;
			queued = t->sched_wait_ns;
		}
		t->sched_read_ns = monotonic_ns();
		t->sched_run_ns = runtime;
		t->sched_wait_ns = queued;
		if (t->sched_ok)
			sampler_settle_held(sp, t, t->sched_read_ns, runtime, queued);
		uint64_t ran_ns = t->have_tick_runtime ? runtime - t->tick_runtime_ns : 0;
		if (t->have_tick_runtime)
			sp->seen_cpu_ns += ran_ns;
		else if (sp->last_plan_ns > 0)
			sp->seen_cpu_ns += runtime;   /* born since the previous tick */
		bool had_history = t->have_tick_runtime && sp->last_plan_ns > 0;
		t->tick_runtime_ns = runtime;
		t->have_tick_runtime = true;
		if (t->sample_base_ns == UINT64_MAX)
			t->sample_base_ns = runtime;   /* listed at the start: its CPU before the run is not ours */
		/* Runnable but (almost) no CPU used since the last tick, after being
		 * asleep then: our resume woke it and it waits for a CPU to go back
		 * to sleep. It is still waiting where it was: report that state. */
		if (t->proc.state == 'R' && had_history && ran_ns * 20 < now - sp->last_plan_ns &&
		    t->tick_state && t->tick_state != 'R')
			t->proc.state = t->tick_state;
		t->tick_state = t->proc.state;
		t->busy = had_history && ran_ns * 20 >= now - sp->last_plan_ns;
		switch (sp->cfg->threads) {
		case SAMPLER_THREADS_RUNNING:
			if (t->busy) {
				sp->stats->ran_rounds++;
				sp->stats->ran_not_runnable += t->proc.state != 'R';
			}
			/* On CPU: runnable now and used at least 5% of a CPU since the
			 * previous tick. The second half keeps out sleeping threads
			 * that are runnable only because our last resume woke them
			 * and they wait for a CPU to go back to sleep. */
			t->wanted = t->proc.state == 'R' && t->busy;
			break;
		case SAMPLER_THREADS_ALL:
			t->wanted = true;
			break;
		case SAMPLER_THREADS_REGEX:
			t->wanted = pcre2_match(sp->name_regex, (PCRE2_SPTR)t->proc.name, strlen(t->proc.name), 0, 0,
						sp->match, NULL) >= 0;
			break;
		}
		if (!t->wanted)
			continue;
		t->planned = true;
		/* A thread that has not run since its last walk has the same stack. */
		t->walk = !(t->have_stack && runtime == t->runtime_ns && t->proc.state != 'R');
		t->runtime_ns = runtime;
		walks += t->walk;
	}
	free(listing);
	sp->last_plan_ns = now;
	/* Forget threads that exited. */
	size_t kept = 0;
	for (size_t i = 0; i < sp->nthreads; i++) {
		if (sp->threads[i].seen)
			sp->threads[kept++] = sp->threads[i];
		else {
			struct tracked_thread *gone = &sp->threads[i];
			pool_unweighed(gone, gone->tick_runtime_ns);
			if (gone->pool_ns > 0 && !keep_gone_tail(sp, gone)) {
				sp->unsampled_gone_ns += gone->pool_ns;
				sp->unsampled_gone_threads++;
			}
			sampler_fold_thread_shares(sp, &sp->threads[i], sp->threads[i].last_seen_ns, 1000000000u);
			sampler_stack_release(&sp->threads[i].stack);
			weighed_release(&sp->threads[i].weighed);
			unwinder_capture_release(&sp->threads[i].capture);
		}
	}
	sp->nthreads = kept;
	return walks;
}

/* Asks gdb for the thread list when a thread to walk has no gdb id yet. */
int sampler_map_gdb_ids(struct sampler *sp, struct xerr *e)
{
	/* gdb numbered the threads anew (session_attach_generation) */
	if (sp->gdb_ids_generation != session_attach_generation(sp->session)) {
		sp->gdb_ids_generation = session_attach_generation(sp->session);
		for (size_t i = 0; i < sp->nthreads; i++)
			sp->threads[i].gdb_id = 0;
	}
	bool missing = false;
	for (size_t i = 0; i < sp->nthreads; i++)
		missing |= sp->threads[i].walk && sp->threads[i].gdb_id == 0;
	if (!missing)
		return 0;
	struct session_thread *threads;
	size_t n;
	if (session_threads(sp->session, &threads, &n, e) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		struct tracked_thread *t = find_thread(sp, threads[k].tid);
		if (t)
			t->gdb_id = threads[k].gdb_id;
	}
	free(threads);
	return 0;
}

/* A thread found in sched_yield is a spinning waiter giving its CPU away,
 * runnable but mostly queued: off the CPU, unless /proc said it was on one
 * at the instant we asked it to stop (its spin, or the yield's own kernel
 * work, is CPU time perf counts). */
void sampler_on_cpu_when_asked(const struct sampler *sp, struct tracked_thread *t, uint64_t orig_rax)
{
	t->entered_wait = false;
	if (t->on_cpu_at_ask != 1)
		return;
	if ((int64_t)orig_rax == ARCH_SYSCALL_SCHED_YIELD)
		t->waiting_in = NULL;
	/* One thread at a time: no other thread of ours is stopped, so a
	 * thread on a CPU when asked that is found in a futex wait went into
	 * it by itself, in the program's own contention, between our look and
	 * the stop's landing: it was on its way into the wait (the lock's slow
	 * path, the kernel's futex entry: CPU time perf counts there), not
	 * held up behind a thread of ours as in all-stop. Kept whole: capping
	 * them with sampler_landing_kept's kernel-time allowance passes their
	 * CPU time to the thread's next sample (as it was then; its pool now,
	 * weighed.h), and the flat profile drifts
	 * from perf's (bench/README.md, "Figures behind the code"). */
	else if (t->waiting_in && strcmp(t->waiting_in, "futex") == 0 && session_non_stop(sp->session)) {
		t->waiting_in = NULL;
		t->entered_wait = true;
	}
}

/* Whether the innermost kernel function of a thread not on a CPU
 * (proc_thread_on_cpu) belongs to a system call arch_syscall_waiting would call
 * a wait: sched_yield (the read said the thread is not on a CPU), a futex
 * wait, a sleep, a poll. Kernel function names change between versions:
 * an unknown one is not a wait (the thread is stopped as before). */
static bool waits_in_kernel(const char *fn)
{
	static const char *const waits[] = {
		"sched_yield", "futex_wait", "futex_do_wait", "do_nanosleep", "ep_poll", "do_sys_poll",
		"do_select", "core_sys_select",
	};
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
		if (strstr(fn, waits[i]))
			return true;
	return false;
}

static int sampler_setup(struct sampler *sp, struct session *s, struct symbolizer *sym,
			 const struct sampler_config *cfg, struct xerr *e)
{
	memset(sp, 0, sizeof *sp);
	sp->session = s;
	sp->sym = sym;
	sp->cfg = cfg;
	sp->max_chain = 16;
	sp->start_ns = cfg->start_ns ? cfg->start_ns : monotonic_ns();
	if (cfg->max_frames <= 0)
		return xerr_set(e, "sampling needs a positive frame limit");
	if (cfg->threads == SAMPLER_THREADS_REGEX) {
		int code;
		PCRE2_SIZE offset;
		sp->name_regex = pcre2_compile((PCRE2_SPTR)cfg->threads_regex, PCRE2_ZERO_TERMINATED, 0, &code,
					       &offset, NULL);
		if (!sp->name_regex)
			return xerr_set(e, "bad thread regex /%s/", cfg->threads_regex);
		sp->match = pcre2_match_data_create_from_pattern(sp->name_regex, NULL);
		if (!sp->match)
			return xerr_oom(e);
	}
	if (cfg->walker != SAMPLER_WALKER_GDB) {
		sp->unwinder = unwinder_new(symbolizer_dwfl(sym), session_pid(s), e);
		if (!sp->unwinder)
			return -1;
	}
	return 0;
}

int sampler_learn_register_numbers(struct sampler *sp, struct xerr *e)
{
	if (sp->regnums_known)
		return 0;
	const char *names[NSAMPLED_REGS];
	int numbers[NSAMPLED_REGS];
	arch_reg_names(sampled_registers, NSAMPLED_REGS, names);
	if (session_register_numbers(sp->session, names, NSAMPLED_REGS, numbers, e) < 0)
		return -1;
	for (size_t k = 0; k < NSAMPLED_REGS; k++)
		if (numbers[k] < 0)
			return xerr_set(e, "gdb has no register %s here: the fast walker supports x86-64 only "
					"(xgdbprof's sampler supports x86-64 Linux only)", names[k]);
	for (size_t r = 0; r < ARCH_NREGS; r++)
		sp->regnums[r] = -1;
	for (size_t k = 0; k < NSAMPLED_REGS; k++)
		sp->regnums[sampled_registers[k]] = numbers[k];
	sp->regnums_known = true;
	return 0;
}

static void sampler_teardown(struct sampler *sp)
{
	for (size_t i = 0; i < sp->nthreads; i++) {
		sampler_stack_release(&sp->threads[i].stack);
		weighed_release(&sp->threads[i].weighed);
		unwinder_capture_release(&sp->threads[i].capture);
	}
	for (size_t i = 0; i < sp->ngone_tails; i++)
		weighed_release(&sp->gone_tails[i].weighed);
	free(sp->gone_tails);
	free(sp->threads);
	free(sp->pc_buffer);
	free(sp->held_ms_log);
	unwinder_free(sp->unwinder);
	if (sp->match)
		pcre2_match_data_free(sp->match);
	if (sp->name_regex)
		pcre2_code_free(sp->name_regex);
}

/* Gives every tracked thread its slices of the PC buffer. */
static int carve_pc_buffers(struct sampler *sp, struct xerr *e)
{
	size_t per = (size_t)sp->cfg->max_frames;
	if (sp->pc_buffer_threads < sp->nthreads || !sp->pc_buffer) {
		size_t n = sp->cap ? sp->cap : 1;
		free(sp->pc_buffer);
		sp->pc_buffer = malloc(2 * n * per * sizeof *sp->pc_buffer);
		if (!sp->pc_buffer)
			return xerr_oom(e);
		sp->pc_buffer_threads = n;
	}
	for (size_t i = 0; i < sp->nthreads; i++) {
		sp->threads[i].pcs = sp->pc_buffer + 2 * i * per;
		sp->threads[i].ref_pcs = sp->threads[i].pcs + per;
		sp->threads[i].npcs = sp->threads[i].nref_pcs = 0;
	}
	return 0;
}

enum round_end { ROUND_ON, ROUND_TARGET_GONE, ROUND_SINK_DONE };

/* All-stop: one -exec-interrupt --all holds every thread of the target
 * while the threads to walk are walked, so each thread is charged the
 * whole stop. */
/* Books how long a stop took to land and says whether the round goes on:
 * ROUND_ON, ROUND_TARGET_GONE or -1. The stop may be the exec catchpoint's:
 * another program, not to be walked with this one's symbols, nor resumed.
 * gdb's report is enough here (the /proc check of session_target_execed
 * runs at every tick, outside the stop, and would lengthen each stop by two
 * file reads). */
static int stop_landed(struct session *s, struct sampler_stats *st, int stop_rc, uint64_t stop_start,
		       uint64_t *stopped_at)
{
	*stopped_at = monotonic_ns();
	st->phase_stop_s += (double)(*stopped_at - stop_start) / 1e9;
	if (session_exec_path(s))
		return ROUND_TARGET_GONE;
	if (stop_rc < 0)
		return session_target_alive(s) ? -1 : ROUND_TARGET_GONE;
	return ROUND_ON;
}

/* The frame a kept on-CPU sample gets under its user leaf when its stop
 * landed in the kernel's way out (a completed call's return, a page
 * fault's): the time it stands for was kernel time there, and the flat
 * profile should say so rather than charge it to the user leaf's own code
 * (issue 32: "memcpy 32%" hid its page faults). Static names: frames
 * outlive the run. NULL for a stop in user code. */
static const char *kernel_marker(const struct tracked_thread *t)
{
	static const struct { const char *call, *marker; } known[] = {
		{ "futex", "[in kernel: futex]" }, { "pwrite64", "[in kernel: pwrite]" },
		{ "write", "[in kernel: write]" }, { "read", "[in kernel: read]" },
		{ "pread64", "[in kernel: pread]" }, { "writev", "[in kernel: writev]" },
		{ "mmap", "[in kernel: mmap]" }, { "munmap", "[in kernel: munmap]" },
		{ "madvise", "[in kernel: madvise]" }, { "mprotect", "[in kernel: mprotect]" },
		{ "brk", "[in kernel: brk]" }, { "sched_yield", "[in kernel: sched_yield]" },
		{ "clock_gettime", "[in kernel: clock_gettime]" }, { "fsync", "[in kernel: fsync]" },
		{ "fdatasync", "[in kernel: fdatasync]" }, { "openat", "[in kernel: openat]" },
		{ "close", "[in kernel: close]" }, { "getpid", "[in kernel: getpid]" },
	};
	if (t->at_return) {
		const char *call = arch_syscall_name(t->syscall_nr);
		for (size_t i = 0; call && i < sizeof known / sizeof known[0]; i++)
			if (strcmp(call, known[i].call) == 0)
				return known[i].marker;
		return "[in kernel: system call]";
	}
	return t->faulted ? "[in kernel: page fault]" : NULL;
}

/* Puts kernel_marker's frame at the leaf of t's stack; 0, or -1 out of memory. */
static int add_kernel_marker(struct tracked_thread *t, const char *marker, struct xerr *e)
{
	struct frame *grown = realloc(t->stack.frames, (t->stack.nframes + 1) * sizeof *grown);
	if (!grown)
		return xerr_oom(e);
	memmove(grown + 1, grown, t->stack.nframes * sizeof *grown);
	grown[0] = (struct frame){ .pc = grown[1].pc, .function = marker, .lang = FRAME_LANG_UNKNOWN,
				   .source = FRAME_SOURCE_NONE };
	t->stack.frames = grown;
	t->stack.nframes++;
	return 0;
}

/* Called once the stop of t has landed (faults_at_ask read just before the
 * interrupt). A page fault is a way back to user mode too, where the
 * stopping signal is noticed: a thread that ran its own code when asked
 * and then touched a fresh page (a large copy into new memory takes one
 * every 4 KiB) is caught at the fault's return, in the copy, not where it
 * was. Such stops say where the thread went next, as a completed call's
 * return does (sampler_at_completed_return), and are kept on the same
 * kernel-time allowance (sampler_landing_kept). A thread in the fault
 * when asked counts its fault too: that is kernel time, which the
 * allowance is. Without the count (-1) the stop is taken as it lands. */
void sampler_note_faults(const struct sampler *sp, struct tracked_thread *t)
{
	t->faulted = false;
	if (t->faults_at_ask < 0)
		return;
	int64_t now = proc_thread_faults(session_pid(sp->session), t->tid);
	t->faulted = now > t->faults_at_ask;
}

static bool cpu_in(const int *cpus, size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

static int all_threads_at_once(struct sampler *sp, struct sampler_stats *st, struct xerr *e)
{
	struct session *s = sp->session;
	for (size_t i = 0; i < sp->nthreads; i++) {
		struct tracked_thread *t = &sp->threads[i];
		if (!t->walk)
			continue;
		t->on_cpu_at_ask = proc_thread_on_cpu(session_pid(s), t->tid, NULL, 0);
		t->faults_at_ask = proc_thread_faults_at(session_pid(s), t->tid, NULL);
		if (sp->cfg->threads == SAMPLER_THREADS_RUNNING && t->on_cpu_at_ask == 0) {
			/* off its CPU: stopped with the rest, not an on-CPU
			 * sample (one_thread_at_a_time says why) */
			t->walk = t->wanted = false;
			st->off_cpu_when_asked++;
		}
	}
	uint64_t stop_start = monotonic_ns(), t_stopped;
	int landed = stop_landed(s, st, session_stop(s, e), stop_start, &t_stopped);
	if (landed != ROUND_ON)
		return landed;
	for (size_t i = 0; i < sp->nthreads; i++)
		if (sp->threads[i].walk)
			sampler_note_faults(sp, &sp->threads[i]);
	int round = sampler_stopped_round(sp, st, e);
	uint64_t t_walked = monotonic_ns();
	st->phase_walk_s += (double)(t_walked - t_stopped) / 1e9;
	if (session_resume(s, e) < 0 || round < 0)
		return -1;
	uint64_t end = monotonic_ns();
	st->phase_resume_s += (double)(end - t_walked) / 1e9;
	for (size_t i = 0; i < sp->nthreads; i++) {
		st->walks += sp->threads[i].walk;
		sampler_book_stop(sp, &sp->threads[i], end - stop_start, end);
	}
	run_stats_add_stop(&st->run, (double)(end - stop_start) / 1e6);
	st->longest_thread_stops_s += (double)(end - stop_start) / 1e9;
	return ROUND_ON;
}

/* Non-stop: each thread to walk is interrupted, walked and resumed before
 * the next one is touched, so at most one thread is held at any instant
 * and a thread holding a lock is held only for its own walk (the others
 * never pile up behind a lock of a stopped thread). Each stop is charged
 * to its own thread. */
static int one_thread_at_a_time(struct sampler *sp, struct sampler_stats *st, struct xerr *e)
{
	struct session *s = sp->session;
	if (sampler_map_gdb_ids(sp, e) < 0)
		return session_target_alive(s) ? -1 : ROUND_TARGET_GONE;
	/* gdb 13 names the registers with the target running too: ask before
	 * the first stop rather than inside it (failing that, at the stop). */
	if (!sp->regnums_known)
		(void)sampler_learn_register_numbers(sp, NULL);
	uint64_t longest = 0;
	size_t cursor = 0;
	int stopped_on[64];   /* the CPUs of the threads stopped so far this round */
	size_t nstopped_on = 0;
	for (struct tracked_thread *t; (t = sampler_next_thread_to_walk(sp, &cursor));) {
		char kernel_wait[64];
		/* The duration is up: the threads left are not walked. A round
		 * over many running threads under load (gdb's stop ~15-35 ms
		 * each) overran a 4 s run by whole rounds. */
		if (sp->end_ns && monotonic_ns() >= sp->end_ns) {
			t->walk = t->wanted = false;
			st->cut_at_end++;
			continue;
		}
		/* Its own budget: refilled to now, overdrawn means not this round. */
		stop_budget_charge(&t->budget, t->budget_spent_s, monotonic_ns());
		if (stop_budget_overdrawn(&t->budget)) {
			t->walk = t->wanted = false;
			st->over_budget++;
			continue;
		}
		/* The vfork check before the look at the thread, not between
		 * the look and the interrupt: its /proc reads (a dozen on
		 * kvservice) let the thread move on meanwhile. Between them,
		 * beside perf on kvservice, a busy thread's rate fell from 7.8
		 * to 6.4 a second and the stop median rose from 1.6 to 2.0 ms
		 * (bench/README.md, fidelity.sh, 2026-12-05). */
		session_settle_vfork(s);
		t->on_cpu_at_ask = proc_thread_on_cpu(session_pid(s), t->tid, kernel_wait, sizeof kernel_wait);
		if (sp->cfg->threads == SAMPLER_THREADS_RUNNING && t->on_cpu_at_ask != 1 &&
		    waits_in_kernel(kernel_wait)) {
			/* Queued in a call that only waits: its stop would land
			 * there and be left out (arch_syscall_waiting), after the
			 * longest stops of all (a queued thread takes the signal
			 * only once it gets a CPU). Not stopped. That holds for
			 * a thread last on our own CPU too (on_cpu_at_ask -1 with
			 * a kernel stack: not running, since we are): its stop in
			 * sched_yield would be left out as well, and on a 2-CPU
			 * machine such stops can be a large share of all (bench/
			 * README.md, "Figures behind the code"). */
			t->walk = t->wanted = false;
			st->waiting_when_asked++;
			continue;
		}
		int processor = -1;
		t->faults_at_ask = proc_thread_faults_at(session_pid(s), t->tid, &processor);
		if (sp->cfg->threads == SAMPLER_THREADS_RUNNING) {
			/* An on-CPU sample is the thread where it is at an instant
			 * it is on a CPU; queued, it is not, behind whatever it
			 * waits. Behind another thread of the program its stop
			 * would land where the program's own scheduling last
			 * preempted it (issue 32: phase_mix's lock phase 2-4
			 * points under). Behind another process it would land at
			 * a fair instant, but taking it then and not behind the
			 * program makes whether it is sampled hang on what the
			 * program's other threads do: phase_mix's lock phase,
			 * where the other worker sleeps on the lock, came out 8.6
			 * points over beside two CPU loops. Not stopped either
			 * way; its CPU time goes to its pool (weighed.h). */
			if (t->on_cpu_at_ask == 0) {
				t->walk = t->wanted = false;
				st->off_cpu_when_asked++;
				continue;
			}
			/* A thread on the CPU where a thread stopped earlier this
			 * round ran may be running only because we stopped that
			 * one: where it is then is our doing. Next round. */
			if (processor >= 0 && cpu_in(stopped_on, nstopped_on, processor)) {
				t->walk = t->wanted = false;
				st->displaced_by_stop++;
				continue;
			}
		}
		if (processor >= 0 && nstopped_on < sizeof stopped_on / sizeof stopped_on[0])
			stopped_on[nstopped_on++] = processor;
		uint64_t stop_start = monotonic_ns(), t_stopped;
		int stop_rc = session_stop_thread(s, t->gdb_id, t->tid, e);
		int landed = stop_landed(s, st, stop_rc, stop_start, &t_stopped);
		if (landed != ROUND_ON)
			return landed;
		if (stop_rc == 1) {
			t->walk = t->wanted = false;   /* it exited before it could be stopped */
			/* or gdb lost its stop and the session attached again: the
			 * others' gdb ids are no longer good (next round's). That
			 * attach held every thread: a stop of the round. */
			if (sp->gdb_ids_generation != session_attach_generation(s)) {
				double held_ms = 0;
				session_reattaches(s, &held_ms);
				double new_ms = held_ms - sp->reattach_ms_booked;
				sp->reattach_ms_booked = held_ms;
				if (new_ms > 0) {
					if ((uint64_t)(new_ms * 1e6) > longest)
						longest = (uint64_t)(new_ms * 1e6);
					run_stats_add_stop(&st->run, new_ms);
				}
				break;
			}
			continue;
		}
		sampler_note_faults(sp, t);
		int learned = sampler_learn_register_numbers(sp, e);
		int usual_way = 1;
		uint64_t t_walked = 0;
		if (learned == 0 && sp->cfg->walker == SAMPLER_WALKER_FAST)
			usual_way = sampler_capture_fast_and_resume(sp, t, &t_walked, e);
		if (usual_way < 0)
			return session_target_alive(s) ? -1 : ROUND_TARGET_GONE;
		if (usual_way == 1) {
			if (learned == 0)
				sampler_walk_stopped_thread(sp, st, t);
			t_walked = monotonic_ns();
			if (session_resume_thread(s, t->gdb_id, e) < 0 || learned < 0)
				return -1;
		}
		st->phase_walk_s += (double)(t_walked - t_stopped) / 1e9;
		uint64_t end = monotonic_ns();
		st->phase_resume_s += (double)(end - t_walked) / 1e9;
		st->walks += t->walk;
		sampler_book_stop(sp, t, end - stop_start, end);
		if (end - stop_start > longest)
			longest = end - stop_start;
		run_stats_add_stop(&st->run, (double)(end - stop_start) / 1e6);
	}
	st->longest_thread_stops_s += (double)longest / 1e9;
	return ROUND_ON;
}

/* One full round: plan from /proc, stop if some thread needs a walk, walk,
 * resume, then symbolize and deliver with the target running. Returns
 * ROUND_ON, ROUND_TARGET_GONE, ROUND_SINK_DONE (the sink asked to end), or
 * -1 on error. */
static int sampler_round(struct sampler *sp, struct sampler_stats *st, const struct event_sink *sink,
			 struct xerr *e)
{
	struct session *s = sp->session;
	/* what gdb sent since (at 1000 Hz the wait between rounds is a sleep,
	 * and a round that walks no thread asks gdb nothing) */
	if (session_idle(s, 0, e) < 0 || session_resume_signal_stop(s, e) < 0)
		return session_target_alive(s) ? -1 : ROUND_TARGET_GONE;
	sp->stats = st;
	int walks = plan_tick(sp, e);
	if (walks < 0)
		return ROUND_TARGET_GONE;
	if ((int)sp->nthreads > st->max_threads)
		st->max_threads = (int)sp->nthreads;
	if (carve_pc_buffers(sp, e) < 0)
		return -1;
	uint64_t stop_start = monotonic_ns();
	if (walks > 0) {
		int stopped = session_non_stop(s) ? one_thread_at_a_time(sp, st, e) : all_threads_at_once(sp, st, e);
		if (stopped != ROUND_ON)
			return stopped;
	}
	for (size_t i = 0; i < sp->nthreads; i++) {
		struct tracked_thread *t = &sp->threads[i];
		if (!t->wanted)
			continue;
		t->partial_regs_agree = -1;
		if (t->walk && t->captured) {
			struct xerr walk_error;
			int rc = sampler_unwind_capture(sp, t, &walk_error);
			if (rc < 0) {
				t->walk = t->wanted = false;
				continue;
			}
			st->truncated += rc > 0;
			if (sp->cfg->walker == SAMPLER_WALKER_BOTH)
				sampler_compare_partial_walk(sp, t);
		}
		if (t->walk && sp->cfg->walker == SAMPLER_WALKER_GDB)
			sampler_fold_inline_runs(sp, t->pcs, &t->npcs);
		if (t->walk && sp->cfg->walker == SAMPLER_WALKER_BOTH)
			sampler_fold_inline_runs(sp, t->ref_pcs, &t->nref_pcs);
		if (t->walk && sampler_symbolize_walk(sp, t, e) < 0)
			return -1;
		if (!t->have_stack)
			continue;
		char state = t->proc.state;
		const char *marker = NULL;
		if (t->walk && t->waiting_in && state == 'R') {
			/* Runnable when the round began, but waiting in a system
			 * call when gdb stopped it: off the CPU at its sample's
			 * instant — often on a lock held by a thread stopped just
			 * before it. Not an on-CPU sample. */
			st->waiting_at_stop++;
			if (sp->cfg->threads == SAMPLER_THREADS_RUNNING)
				continue;
			state = 'S';
		}
		if (t->walk && state == 'R' && !sp->snapshot) {
			st->entered_wait += t->entered_wait;
			if (!t->at_return && !t->faulted)
				t->on_cpu_elsewhere++;
			else if (sampler_landing_kept(t)) {
				t->on_cpu_at_return++;
				marker = kernel_marker(t);
			} else if (t->at_return) {
				/* Caught at the return of a call it made after we
				 * asked it to stop: not where it was. */
				st->landed_late++;
				continue;
			} else {
				/* After a page fault, beyond the kernel's share: the
				 * code it landed in is, nearly always, the code it
				 * was in (a copy into new memory faults every 4 KiB),
				 * the kernel is not. Kept, without the marker: left
				 * out, its CPU went to the thread's next sample (its
				 * pool now, weighed.h), in another phase (issue 32: phase_mix's compute 28%
				 * of the stacks against its truth of 25.6%). */
				st->landed_late++;
				st->landed_late_fault++;
				t->on_cpu_elsewhere++;
			}
			if (marker && t->stack.nframes > 0 && add_kernel_marker(t, marker, e) < 0)
				return -1;
		}
		if (state == 't')
			/* Stopped by ptrace when /proc was read: by us (gdb stopping
			 * the target), not a wait of the program's. */
			state = t->waiting_in ? 'S' : 'R';
		/* What it ran since the previous tick, as /proc said before this
		 * round's stops. Left-out stops and passed-over rounds pooled
		 * theirs (pool_unweighed), spread over all its samples at the
		 * end. */
		uint64_t cpu_ns = t->tick_runtime_ns > t->sample_base_ns ? t->tick_runtime_ns - t->sample_base_ns : 0;
		t->sample_base_ns = t->tick_runtime_ns > t->sample_base_ns ? t->tick_runtime_ns : t->sample_base_ns;
		sp->sampled_cpu_ns += cpu_ns;
		if (marker)
			st->cpu_sampled_kernel_s += (double)cpu_ns / 1e9;
		struct event ev = {
			.kind = EVENT_SAMPLE, .probe = -1, .timestamp_ns = stop_start, .cpu_ns = cpu_ns,
			.since_start_ns = stop_start - sp->start_ns, .pid = session_pid(s), .cpu = t->proc.last_cpu,
			.thread = { .id = t->tid, .name = t->proc.name, .state = state,
				    .wait = state == 'R' ? "running" : t->wait ? t->wait : "unknown" },
			.stack = &t->stack,
			.walk = { .pcs = t->pcs, .npcs = t->walk ? t->npcs : 0, .ref_pcs = t->ref_pcs,
				  .nref_pcs = t->walk ? t->nref_pcs : 0, .reused = !t->walk,
				  .partial_regs_agree = t->walk ? t->partial_regs_agree : -1 },
		};
		st->thread_samples++;
		st->reused += !t->walk;
		int taken = event_sink_take(sink, &ev, e);
		if (taken != 0)
			return taken < 0 ? -1 : ROUND_SINK_DONE;
		if (!sp->snapshot && weighed_add(&t->weighed, &t->stack, ev.thread.state, ev.thread.wait, marker != NULL,
						 cpu_ns, e) < 0)
			return -1;
	}
	return ROUND_ON;
}

/* Spreads pool_ns over a thread's weighed stacks in proportion, as
 * weight-only samples. Returns 0, 1 when the sink is done, or -1. */
static int spread_pool(struct sampler *sp, const struct event_sink *sink, pid_t tid, const char *name,
		       const struct weighed_stacks *w, uint64_t pool_ns, uint64_t now, struct xerr *e)
{
	uint64_t before = 0;
	for (size_t i = 0; i < w->n && pool_ns > 0; i++) {
		uint64_t cpu_ns = weighed_spread_next(w, i, pool_ns, &before);
		if (cpu_ns == 0)
			continue;
		const struct weighed_stack *ws = &w->v[i];
		sp->sampled_cpu_ns += cpu_ns;
		if (ws->kernel && sp->stats)
			sp->stats->cpu_sampled_kernel_s += (double)cpu_ns / 1e9;
		struct event ev = {
			.kind = EVENT_SAMPLE, .probe = -1, .timestamp_ns = now, .cpu_ns = cpu_ns, .weight_only = true,
			.since_start_ns = now - sp->start_ns, .pid = session_pid(sp->session), .cpu = -1,
			.thread = { .id = tid, .name = name, .state = ws->state, .wait = ws->wait },
			.stack = &ws->stack, .walk = { .reused = true, .partial_regs_agree = -1 },
		};
		int taken = event_sink_take(sink, &ev, e);
		if (taken != 0)
			return taken;
	}
	return 0;
}

/* At a run's end: the CPU of the rounds that gave each thread no sample,
 * and what it ran after its last tick, as the kernel counts it, spread over
 * its samples' stacks in proportion to their weights. A sample weighs the
 * CPU of the round before it; without the spread a thread's CPU in those
 * rounds is in no sample, and a thread whose stops were mostly left out
 * loses its share of the profile (issue 32: tests/cpu_weight.sh under load,
 * 22.9% of the profile for 49.6% of the CPU). Put on its next sample
 * instead, as before 2026-12-07, that CPU went to code other than where
 * the left-out rounds were (weighed.h). With it each thread's weight is
 * its CPU from its first listing on. Returns 0, 1 when the sink is done,
 * or -1. */
static int weigh_tails(struct sampler *sp, const struct event_sink *sink, struct xerr *e)
{
	pid_t pid = session_pid(sp->session);
	uint64_t now = monotonic_ns();
	for (size_t i = 0; i < sp->ngone_tails; i++) {
		struct gone_tail *g = &sp->gone_tails[i];
		int taken = spread_pool(sp, sink, g->tid, g->name, &g->weighed, g->pool_ns, now, e);
		if (taken != 0)
			return taken;
		g->pool_ns = 0;
	}
	for (size_t i = 0; i < sp->nthreads; i++) {
		struct tracked_thread *t = &sp->threads[i];
		if (t->weighed.n == 0 || t->sample_base_ns == UINT64_MAX)
			continue;
		uint64_t runtime = t->have_tick_runtime ? proc_thread_runtime_ns(pid, t->tid) : 0;
		pool_unweighed(t, runtime > t->tick_runtime_ns ? runtime : t->tick_runtime_ns);
		int taken = spread_pool(sp, sink, t->tid, t->proc.name, &t->weighed, t->pool_ns, now, e);
		if (taken != 0)
			return taken;
		t->pool_ns = 0;
	}
	return 0;
}

static void finish_stats(struct sampler_stats *st, uint64_t start)
{
	st->run.elapsed_s = (double)(monotonic_ns() - start) / 1e9;
	st->frequency_achieved_hz = st->run.elapsed_s > 0 ? (double)st->ticks / st->run.elapsed_s : 0;
	if (st->cpu_percent_avg_windows > 0)
		st->cpu_percent_avg /= st->cpu_percent_avg_windows;
	else   /* a run too short to measure (under 0.2 s): unknown, not idle */
		st->cpu_percent_min = st->cpu_percent_max = st->cpu_percent_avg = NAN;
	run_stats_finish_stops(&st->run);
}

int sampler_snapshot(struct session *s, struct symbolizer *sym, enum sampler_walker walker, int max_frames,
		     const struct event_sink *sink, struct sampler_stats *st, struct xerr *e)
{
	struct sampler_config cfg = { .frequency_hz = 1, .threads = SAMPLER_THREADS_ALL, .walker = walker,
				      .max_frames = max_frames };
	struct sampler sp;
	memset(st, 0, sizeof *st);
	uint64_t start = monotonic_ns();
	int rc = sampler_setup(&sp, s, sym, &cfg, e);
	sp.snapshot = true;
	if (rc == 0) {
		/* A snapshot walks every thread, even one that has not run lately. */
		st->ticks = 1;
		rc = sampler_round(&sp, st, sink, e);
		if (rc == ROUND_TARGET_GONE)
			rc = xerr_set(e, "process %d exited", (int)session_pid(s));
	}
	finish_stats(st, start);
	sampler_teardown(&sp);
	return rc < 0 ? -1 : 0;
}

/* Target CPU% over windows of about a second. */
struct cpu_window {
	uint64_t start;
	long long ticks;             /* the target's CPU ticks at start; <0 unknown */
	long clock_ticks;            /* per second */
};

static void cpu_window_close(struct cpu_window *w, pid_t pid, uint64_t now, uint64_t min_ns,
			     struct sampler_stats *st)
{
	if (now - w->start < min_ns)
		return;
	long long ticks = proc_cpu_ticks(pid);
	if (ticks >= 0 && w->ticks >= 0) {
		double pct = 100.0 * (double)(ticks - w->ticks) / (double)w->clock_ticks /
			     ((double)(now - w->start) / 1e9);
		st->cpu_percent_min = fmin(st->cpu_percent_min, pct);
		st->cpu_percent_max = fmax(st->cpu_percent_max, pct);
		st->cpu_percent_avg += pct;   /* summed; divided by windows at the end */
		st->cpu_percent_avg_windows++;
	}
	w->ticks = ticks;
	w->start = now;
}

/* The notes a run ends with: what the budget and the stack limit cost. */
static void add_run_notes(const struct sampler_config *cfg, struct sampler_stats *st,
			  bool budget_lowered, bool thread_budget_lowered, bool non_stop)
{
	struct run_notes *notes = &st->run.notes;
	sampler_note_budget_missed(cfg, st, non_stop, proc_load_average(), sysconf(_SC_NPROCESSORS_ONLN));
	if (thread_budget_lowered && st->thread_rate_max_hz > 0)
		run_notes_add(notes, "stops lowered from %.0f Hz to %.1f Hz a thread (the most any thread got) to keep each "
			 "thread held under %.0f%% of its time (the kernel's account of each stop; docs/sampling.md)",
			 cfg->frequency_hz, st->thread_rate_max_hz, cfg->max_stopped_percent);
	if (budget_lowered)
		run_notes_add(notes, "rate lowered from %.0f Hz to %.1f Hz to keep each thread stopped under %.0f%% of its "
			 "time", cfg->frequency_hz, st->frequency_achieved_hz, cfg->max_stopped_percent);
	if (st->waiting_at_stop && cfg->threads == SAMPLER_THREADS_RUNNING)
		run_notes_add(notes, "%.0f stacks of running threads were left out: the thread sat in a waiting system "
			 "call (a lock, a sleep, a poll) when it was stopped, so it was off the CPU then",
			 (double)st->waiting_at_stop);
	if (st->waiting_when_asked && cfg->threads == SAMPLER_THREADS_RUNNING)
		run_notes_add(notes, "%.0f times a running thread was not stopped: /proc showed it queued in a waiting "
			 "system call (sched_yield, a futex wait, a sleep, a poll) just before, off the CPU",
			 (double)st->waiting_when_asked);
	if (st->landed_late - st->landed_late_fault)
		run_notes_add(notes, "%.0f samples landed at a later system call's return and were left out: the thread "
			 "ran its own code when asked to stop and was caught at its next call's return (counted up to "
			 "the kernel's share of its CPU time; docs/sampling.md)",
			 (double)(st->landed_late - st->landed_late_fault));
	if (st->cpu_sampled_kernel_s > 0 && st->cpu_sampled_s > 0)
		run_notes_add(notes, "%.0f%% of the sampled CPU time was kernel time: samples caught on the kernel's way "
			 "out (a system call's or a page fault's return), shown as [in kernel: ...] under their user frame",
			 100.0 * st->cpu_sampled_kernel_s / st->cpu_sampled_s);
	if (st->landed_late_fault)
		run_notes_add(notes, "%.0f samples landed after a page fault beyond the kernel's share of the thread's "
			 "CPU time: counted where they landed, without [in kernel: page fault] (docs/sampling.md)",
			 (double)st->landed_late_fault);
	/* CPU time no tick could see: threads born and gone between two ticks
	 * (the clock-tick figures are 10 ms coarse: 10% slack). */
	double unseen = st->cpu_total_s - st->cpu_seen_s;
	if (st->cpu_total_s >= 0.1 && unseen > 0.1 * st->cpu_total_s)
		run_notes_add(notes, "%.0f%% of the target's CPU time (%.2f s of %.2f s) went to threads that started "
			 "and ended between two samples: never sampled, so absent from this profile",
			 100 * unseen / st->cpu_total_s, unseen, st->cpu_total_s);
	/* CPU no sample stands for (event cpu_ns), of threads /proc listed: a
	 * thread asleep or waiting at every sample since, or gone before its
	 * next one. Said when it is a tenth of the whole. */
	if (cfg->threads == SAMPLER_THREADS_RUNNING && st->cpu_total_s >= 0.1 &&
	    st->cpu_unsampled_listed_s > 0.1 * st->cpu_total_s)
		run_notes_add(notes, "CPU not sampled: %.0f ms in %llu threads that lived between samples or ran only "
			 "between them (%.0f%% of the target's %.0f ms; samples weigh %.0f ms)",
			 st->cpu_unsampled_listed_s * 1e3, (unsigned long long)st->cpu_unsampled_threads,
			 100 * st->cpu_unsampled_listed_s / st->cpu_total_s, st->cpu_total_s * 1e3, st->cpu_sampled_s * 1e3);
	if (st->truncated)
		run_notes_add(notes, "%.0f of %.0f walked stacks end before their outermost frame (the %.0f-frame limit, "
			 "or the 64 KiB of stack copied at the stop)",
			 (double)st->truncated, (double)(st->walks > st->truncated ? st->walks : st->truncated),
			 (double)cfg->max_frames);
}

/* At the end of a run: the CPU time the threads still listed used since
 * their last listing (seen), and the largest share of its time any thread
 * was held stopped. */
static void finish_thread_figures(struct sampler *sp, struct sampler_stats *st)
{
	pid_t pid = session_pid(sp->session);
	/* The CPU time since each thread's last listing counts as seen too:
	 * only threads born and gone between two ticks are unseen. */
	for (size_t i = 0; i < sp->nthreads; i++) {
		struct tracked_thread *t = &sp->threads[i];
		uint64_t runtime = t->have_tick_runtime ? proc_thread_runtime_ns(pid, t->tid) : 0;
		if (runtime > t->tick_runtime_ns)
			sp->seen_cpu_ns += runtime - t->tick_runtime_ns;
		pool_unweighed(t, runtime > t->tick_runtime_ns ? runtime : t->tick_runtime_ns);
		if (t->pool_ns > 0) {   /* not spread: no sample to weigh it on, or the sink ended first */
			st->cpu_unsampled_listed_s += (double)t->pool_ns / 1e9;
			st->cpu_unsampled_threads++;
		}
	}
	st->cpu_unsampled_listed_s += (double)sp->unsampled_gone_ns / 1e9;
	st->cpu_unsampled_threads += sp->unsampled_gone_threads;
	st->cpu_sampled_s = (double)sp->sampled_cpu_ns / 1e9;
	/* Threads still there: their share up to now, over at least a second
	 * (or, in a shorter run, as long as the first listing's threads). */
	uint64_t end_ns = monotonic_ns();
	uint64_t min_span = sampler_end_min_span(sp, end_ns);
	for (size_t i = 0; i < sp->nthreads; i++)
		sampler_fold_thread_shares(sp, &sp->threads[i], end_ns, min_span);
	st->thread_stopped_max_pct = sp->thread_stopped_max_pct;
	st->thread_held_max_pct = sp->thread_held_max_pct;
	st->thread_rate_max_hz = sp->thread_rate_max_hz;
	st->held_median_ms = st->held_p99_ms = NAN;
	if (sp->nheld_ms_log > 0) {
		stats_sort(sp->held_ms_log, sp->nheld_ms_log);
		st->held_median_ms = stats_percentile_sorted(sp->held_ms_log, sp->nheld_ms_log, 50);
		st->held_p99_ms = stats_percentile_sorted(sp->held_ms_log, sp->nheld_ms_log, 99);
		st->held_settled = sp->nheld_ms_log;
	}
}

/* Non-stop: each thread has its own budget, so the next round waits only
 * while every thread this round wanted is over its own (the round would
 * stop none of them); a thread over budget is passed over in the rounds
 * that do run. And rounds come no oftener than one thread's budget allows
 * it stops (mean held time / share after round_start): each round costs
 * /proc reads, and each stop gdb's CPU, that a 2-CPU target misses (rounds
 * for spinners /proc shows yielding, which are never stopped, cost CPU for
 * nothing). A busy thread is stopped in a third to a half of the rounds,
 * so its budget is not filled, and a gap of half this doubles the rate and
 * the target's throughput loss, far over the budget (docs/sampling.md,
 * "What the budget does not see"; the figures in bench/README.md,
 * "Figures behind the code"). Returns the time of the next round. */
static uint64_t next_round_for_thread_budgets(struct sampler *sp, uint64_t round_start, uint64_t wanted_ns,
					      bool *lowered)
{
	if (sp->nheld_ms_log > 0 && sp->cfg->max_stopped_percent > 0) {
		double gap_ms = sp->held_sum_ms / (double)sp->nheld_ms_log / (sp->cfg->max_stopped_percent / 100.0);
		uint64_t floor_ns = round_start + (uint64_t)(gap_ms * 1e6);
		if (floor_ns > wanted_ns) {
			wanted_ns = floor_ns;
			*lowered = true;
		}
	}
	uint64_t earliest = UINT64_MAX;
	for (size_t i = 0; i < sp->nthreads; i++) {
		struct tracked_thread *t = &sp->threads[i];
		if (!t->planned)
			continue;
		uint64_t clear = stop_budget_clear_at(&t->budget, wanted_ns);
		*lowered |= t->budget.held_off;
		if (clear < earliest)
			earliest = clear;
	}
	return earliest == UINT64_MAX ? wanted_ns : earliest;
}

int sampler_run(struct session *s, struct symbolizer *sym, const struct sampler_config *cfg,
		const struct event_sink *sink, struct sampler_stats *st, struct xerr *e)
{
	memset(st, 0, sizeof *st);
	st->frequency_asked_hz = cfg->frequency_hz;
	st->cpu_percent_min = INFINITY;
	st->thread_held_now_pct = -1;
	if (cfg->frequency_hz <= 0)
		return xerr_set(e, "sampling needs a positive frequency");
	struct sampler sp;
	uint64_t start = monotonic_ns();
	int rc = -1;
	const double period_s = 1.0 / cfg->frequency_hz;
	/* No starting credit: the warm-up stop and the early full-rate stops
	 * count against the budget like any other (a rule that only stretched
	 * the period to mean stop / budget left the demo at 6.2% against 5%). */
	struct stop_budget budget;
	stop_budget_init(&budget, cfg->max_stopped_percent, start, 0);
	bool thread_budget_lowered = false;
	bool sink_done = false;   /* the sink wants no more events (a recipe's exit()) */
	long long cpu_at_start = proc_cpu_ticks(session_pid(s));
	long clock_ticks = sysconf(_SC_CLK_TCK);
	struct cpu_window cpu = { .start = start, .ticks = -1, .clock_ticks = clock_ticks };
	if (sampler_setup(&sp, s, sym, cfg, e) < 0)
		goto out;
	if (cfg->duration_s > 0)
		sp.end_ns = start + (uint64_t)(cfg->duration_s * 1e9);

	uint64_t next_tick = start;
	/* The CPU total runs from the first plan on, as the threads' own clocks do. */
	cpu_at_start = proc_cpu_ticks(session_pid(s));
	cpu.ticks = cpu_at_start;
	uint64_t last_progress = 0;
	for (;;) {
		uint64_t now = monotonic_ns();
		if (signals_pending())
			break;
		if (cfg->duration_s > 0 && ((double)(now - start) / 1e9 >= cfg->duration_s || now >= sp.end_ns))
			break;
		if (session_target_execed(s)) {
			st->run.target_execed = true;
			break;
		}
		if (!session_target_alive(s)) {
			if (session_leader_exited(s))
				st->run.leader_exited = true;
			else
				run_stats_target_ended(&st->run, session_exit_signal(s));
			break;
		}
		if (now < next_tick) {
			/* Wait on gdb rather than sleep: a gdb that dies between
			 * samples leaves its int3s in the running target, and the
			 * sooner the rescue runs the less likely a thread meets one.
			 * Not past the duration's end: a budget that lowered the
			 * rate to under 1 Hz a thread would hold the end that long. */
			uint64_t until = sp.end_ns && sp.end_ns < next_tick ? sp.end_ns : next_tick;
			uint64_t wait = until > now ? until - now : 0;
			if (wait >= 1000000u) {
				if (session_idle(s, (int)(wait / 1000000u), e) < 0)
					goto out;
				/* a target gone meanwhile is seen at the loop's top */
				if (!session_target_execed(s) && session_resume_signal_stop(s, e) < 0 &&
				    session_target_alive(s))
					goto out;
			} else {
				struct timespec ts = { 0, (long)wait };
				nanosleep(&ts, NULL);
			}
			continue;
		}
		/* Absolute schedule; after a long stall, skip rather than burst. */
		next_tick += (uint64_t)(period_s * 1e9);
		if (next_tick < now)
			next_tick = now + (uint64_t)(period_s * 1e9);
		st->ticks++;
		int ticked = event_sink_tick(sink, now, e);
		if (ticked < 0)
			goto out;
		if (ticked > 0) {
			sink_done = true;
			break;
		}
		uint64_t round_start = now;
		int round = sampler_round(&sp, st, sink, e);
		if (round < 0)
			goto out;
		if (round == ROUND_SINK_DONE) {
			sink_done = true;
			break;
		}
		if (round == ROUND_TARGET_GONE) {
			st->run.target_execed = session_target_execed(s);
			st->run.leader_exited = !st->run.target_execed && session_leader_exited(s);
			if (!st->run.target_execed && !st->run.leader_exited)
				run_stats_target_ended(&st->run, session_exit_signal(s));
			break;
		}

		now = monotonic_ns();
		double elapsed = (double)(now - start) / 1e9;
		cpu_window_close(&cpu, session_pid(s), now, 1000000000u, st);
		if (session_non_stop(s)) {
			st->thread_held_now_pct = sampler_held_max_pct_now(&sp, now);
			next_tick = next_round_for_thread_budgets(&sp, round_start, next_tick, &thread_budget_lowered);
		} else {
			stop_budget_charge(&budget, st->longest_thread_stops_s, now);
			next_tick = stop_budget_clear_at(&budget, next_tick);
		}
		if (cfg->progress && now - last_progress >= 250000000u) {
			fprintf(stderr, "\rxgdbprof: %.1f/%.0fs  %llu samples  %.1f Hz  stopped %.2f%%\033[K",
				elapsed, cfg->duration_s, (unsigned long long)st->thread_samples,
				(double)st->ticks / (elapsed > 0 ? elapsed : 1),
				100.0 * st->run.stopped_s / (elapsed > 0 ? elapsed : 1));
			last_progress = now;
		}
	}
	if (!sink_done && weigh_tails(&sp, sink, e) < 0)
		goto out;
	rc = 0;
out:
	if (cfg->progress)
		fputs("\r\033[K", stderr);
	/* No one-second CPU window closed (a run under a second, or samples
	 * too sparse under the stop budget): the run so far is the window. */
	if (!st->cpu_percent_avg_windows && cpu.ticks >= 0)
		cpu_window_close(&cpu, session_pid(s), monotonic_ns(), 200000000u, st);
	finish_thread_figures(&sp, st);
	long long cpu_at_end = proc_cpu_ticks(session_pid(s));
	if (cpu_at_start >= 0 && cpu_at_end >= cpu_at_start) {
		st->cpu_total_s = (double)(cpu_at_end - cpu_at_start) / (double)clock_ticks;
		st->cpu_seen_s = (double)sp.seen_cpu_ns / 1e9;
	}
	bool short_run = st->cpu_percent_avg_windows < 2;
	finish_stats(st, start);
	if (short_run && cpu_at_start >= 0 && cpu_at_end >= cpu_at_start && st->run.elapsed_s > 0)
		/* Under two one-second windows (a run of a second or less): the
		 * CPU time of the whole run is the figure, not 0%. */
		st->cpu_percent_min = st->cpu_percent_avg = st->cpu_percent_max =
			100.0 * st->cpu_total_s / st->run.elapsed_s;
	add_run_notes(cfg, st, budget.held_off, thread_budget_lowered || st->over_budget > 0, session_non_stop(s));
	sampler_teardown(&sp);
	return rc;
}
