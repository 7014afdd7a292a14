/* session_stop.c — stop and resume; threads, frames and registers. */
#include "config.h"
#include "session/session_internal.h"
#include "arch/syscalls.h"
#include "util/text_escape.h"
#include <inttypes.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

/* The most registers one query reads. */
enum { MAX_REGS = 32 };

/* Whether a thread of the target sits in clone, clone3 or vfork: a vfork
 * (posix_spawn's clone3 with CLONE_VFORK) whose child has not exec'd yet,
 * or whose events gdb is still handling. */
static bool vfork_in_flight(pid_t pid)
{
	struct proc_thread *threads = NULL;
	int n = proc_threads(pid, &threads, NULL);
	bool in_flight = false;
	for (int i = 0; i < n && !in_flight; i++) {
		/* a vfork's parent waits for its child in state D (killable),
		 * and sits in t while gdb handles its events */
		if (threads[i].state != 'D' && threads[i].state != 't')
			continue;
		struct proc_syscall call;
		if (proc_thread_syscall(pid, threads[i].tid, &call) != 0 || !call.in_syscall)
			continue;
		const char *name = arch_syscall_name(call.nr);
		in_flight = name && (strcmp(name, "clone3") == 0 || strcmp(name, "clone") == 0 ||
				     strcmp(name, "vfork") == 0);
	}
	free(threads);
	return in_flight;
}

/* gdb 13, asked to stop every thread while one of them was in a vfork,
 * reported none stopped, for good: fork_loop spawning a child every 10 ms
 * beside two CPU loops, 2 of 40 final stops; all three threads sat in
 * ptrace stops (the spawning one in clone3), the child had exec'd and
 * exited, gdb waited in poll, and -exec-interrupt --all sent again every
 * 2 s changed nothing. xgdbprof then ended gdb after 15 s and rescued the
 * target. So the interrupt waits, up to 200 ms, until no thread is in
 * such a call (a vfork's child execs within a millisecond or so). That
 * narrows the window without closing it (a vfork may begin as the
 * interrupt travels): beside two CPU loops 1 of 80 final stops still hung,
 * against 4 of 74 before. */
static void wait_for_no_vfork(struct session *s)
{
	double deadline = monotonic_ms() + 200;
	while (vfork_in_flight(s->pid) && monotonic_ms() < deadline) {
		struct timespec pause = {0, 200 * 1000};
		nanosleep(&pause, NULL);
	}
}

/* How recent a check stands for the next: the sampler's reads of a
 * thread and its interrupt take well under a millisecond, a stop more. */
enum { VFORK_SETTLED_FRESH_MS = 2 };

void session_settle_vfork(struct session *s)
{
	if (monotonic_ms() - s->vfork_settled_ms <= VFORK_SETTLED_FRESH_MS)
		return;
	wait_for_no_vfork(s);
	s->vfork_settled_ms = monotonic_ms();
}

/* Every thread of pid sits in a tracing stop (state t). */
static bool all_threads_traced_stopped(pid_t pid)
{
	struct proc_thread *threads = NULL;
	int n = proc_threads(pid, &threads, NULL);
	bool all = n > 0;
	for (int i = 0; i < n && all; i++)
		all = threads[i].state == 't';
	free(threads);
	return all;
}

/* session_internal.h. A thread in D takes no signal until the kernel
 * lets it go; one running or asleep was never stopped. */
void session_describe_threads_not_stopped(pid_t pid, char *buf, size_t size)
{
	buf[0] = '\0';
	struct proc_thread *threads = NULL;
	int n = proc_threads(pid, &threads, NULL);
	size_t used = 0, named = 0, others = 0;
	for (int i = 0; i < n; i++) {
		if (threads[i].state == 't')
			continue;
		if (named == 4) {
			others++;
			continue;
		}
		char name[64], call[48] = "";
		text_escape(name, sizeof name, threads[i].name);
		struct proc_syscall where;
		if (proc_thread_syscall(pid, threads[i].tid, &where) == 0 && where.in_syscall) {
			const char *known = arch_syscall_name(where.nr);
			if (known)
				snprintf(call, sizeof call, " in %s", known);
			else
				snprintf(call, sizeof call, " in system call %" PRId64, where.nr);
		}
		int w = snprintf(buf + used, size - used, "%s%d '%s' %c%s", named ? ", " : " (not in a tracing stop: ",
				 (int)threads[i].tid, name, threads[i].state, call);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
		named++;
	}
	if (named && used < size)
		snprintf(buf + used, size - used, others ? " and %zu more)" : ")", others);
	free(threads);
}

/* The residue of the vfork wedge above: gdb has every thread in a tracing
 * stop and reports none of them, so no command of gdb's moves them
 * (gdb 13's non-stop interrupt skips a thread it believes is already
 * stopping, -exec-continue one it believes is running). -target-detach
 * still works there: gdb takes its breakpoints out and lets every thread
 * go, and an attach right after stops them all again with the breakpoint
 * table intact. Threads get new gdb ids (session_attach_generation). */
static int reattach(struct session *s, const char *lost, const char *when, double held_since_ms, struct xerr *e)
{
	if (held_since_ms <= 0)
		held_since_ms = monotonic_ms();
	if (s->verbose)
		fprintf(stderr, "xgdbprof: %s: detaching to attach again\n", lost);
	s->stopping_threads = true;
	int detached = session_command(s, NULL, e, "-target-detach", NULL);
	s->stopping_threads = false;
	if (detached < 0)
		return xerr_prefix(e, "detaching from process %d, which gdb no longer reported on", (int)s->pid);
	s->attached = false;
	s->stopped = false;
	s->nstopped_ids = 0;
	/* A SIGSTOP of gdb's still pending in a thread when gdb lets the
	 * threads go is taken untraced: the whole process enters a group stop
	 * (state T), which the attach below takes over and the kernel keeps
	 * through every later detach until a SIGCONT. The process ran up to
	 * this detach (a thread of it ran on, or gdb held it), so that stop
	 * is ours: undone before the attach. A 200-thread target beside two
	 * CPU loops was otherwise left stopped at the end of the run, the
	 * stop then taken for a user's (tests/many_threads.sh, 1 run of 8). */
	if (!s->was_stopped_before && !s->stopped_by_other) {
		/* a thread not scheduled since (a loaded machine) still holds
		 * it: up to a second for it to be taken (a SIGCONT then clears
		 * any left) */
		for (int i = 0; i < 100 && proc_signal_pending(s->pid, SIGSTOP) && !proc_any_thread_in(s->pid, "T"); i++) {
			struct timespec tick = { 0, 10 * 1000 * 1000 };
			nanosleep(&tick, NULL);
		}
		int continued = session_continue_stopped_target(s->pid, true, 3);
		if (continued && s->verbose)
			fprintf(stderr, "xgdbprof: process %d entered a stop of gdb's once detached: continued (SIGCONT) "
				"before attaching again\n", (int)s->pid);
	}
	char pid_text[32];
	snprintf(pid_text, sizeof pid_text, "%d", (int)s->pid);
	if (session_command(s, NULL, e, "-target-attach", pid_text, NULL) < 0) {
		char state = proc_state(s->pid);
		if (state == 0 || state == 'Z' || state == 'X') {
			s->target_exited = true;
			return xerr_set(e, "process %d exited", (int)s->pid);
		}
		return xerr_prefix(e, "attaching to process %d again", (int)s->pid);
	}
	s->attached = true;
	s->attach_generation++;
	/* all-stop: one record for the whole stop (the vfork wedge is
	 * non-stop's; the unreported stop happens in both) */
	if ((s->non_stop ? session_wait_all_threads_stopped(s, e) : session_wait_stopped(s, e)) < 0)
		return xerr_prefix(e, "attaching to process %d again", (int)s->pid);
	double held = monotonic_ms() - held_since_ms;
	s->reattaches++;
	s->reattach_ms += held;
	if (s->reattaches == 1 || s->verbose)
		fprintf(stderr, "xgdbprof: %s (gdb 13 does so %s); xgdbprof detached and attached again, "
			"which held the target %.0f ms\n", lost, when, held);
	return 0;
}

/* How often a stop that gdb has not completed looks for the wedge: every
 * thread in a tracing stop at two such checks in a row, with no record
 * from gdb between them. gdb, even on a machine at load 60, reports a
 * stopped thread within tens of milliseconds of its stop. */
enum { WEDGE_CHECK_MS = 500 };

/* Non-stop: waits for gdb to report every thread stopped, as
 * session_wait_all_threads_stopped does, and attaches again when gdb is
 * found wedged (reattach). 0, or -1 with e. */
static int wait_all_stopped_or_reattach(struct session *s, struct xerr *e)
{
	double asked_ms = monotonic_ms();
	size_t total;
	if (session_count_threads(s, &total, e) < 0)
		return -1;
	uint64_t deadline = session_deadline_in(s->timeout_ms);
	uint64_t check_at = session_deadline_in(WEDGE_CHECK_MS);
	int wedged_checks = 0;
	while (s->nstopped_ids < total && !s->target_exited && !s->execed) {
		uint64_t now = monotonic_ns();
		if (now >= deadline) {
			char why[320];
			session_describe_threads_not_stopped(s->pid, why, sizeof why);
			session_give_up_on_gdb(s, "report every thread stopped");
			return xerr_set(e, "gdb reported %zu of the %zu threads of process %d stopped within %d ms%s",
					s->nstopped_ids, total, (int)s->pid, s->timeout_ms, why);
		}
		uint64_t until = check_at < deadline ? check_at : deadline;
		struct mi_record *ev;
		int got = session_wait_event(s, session_ms_until(until), &ev, e);
		if (got < 0)
			return -1;
		if (got == 1) {
			bool recount = session_is_thread_exited(ev);
			mi_record_free(ev);
			wedged_checks = 0;
			if (recount && session_count_threads(s, &total, e) < 0)
				return -1;
			continue;
		}
		if (monotonic_ns() >= check_at) {
			/* a process its user stopped sits in t as well */
			wedged_checks = !s->stopped_by_other && all_threads_traced_stopped(s->pid) ? wedged_checks + 1 : 0;
			if (wedged_checks >= 2) {
				char lost[160];
				snprintf(lost, sizeof lost, "gdb reported none of process %d's threads stopped though all "
					 "were", (int)s->pid);
				return reattach(s, lost, "around a vfork", asked_ms, e);
			}
			check_at = session_deadline_in(WEDGE_CHECK_MS);
		}
	}
	return 0;
}

/* Whether thread tid of pid is in a tracing stop (state t). */
static bool thread_traced_stopped(pid_t pid, pid_t tid)
{
	struct proc_thread thread;
	return proc_thread_read(pid, tid, &thread, NULL) == 0 && thread.state == 't';
}

/* A thread of pid in a tracing stop, or 0. */
static pid_t thread_in_tracing_stop(pid_t pid)
{
	struct proc_thread *threads = NULL;
	int n = proc_threads(pid, &threads, NULL);
	pid_t found = 0;
	for (int i = 0; i < n && !found; i++)
		if (threads[i].state == 't')
			found = threads[i].tid;
	free(threads);
	return found;
}

/* The look of session_heal_unreported_stop: true once the same thread sat
 * in a tracing stop at three looks WEDGE_CHECK_MS apart, with no CPU time
 * and no record from gdb between, while gdb had every thread running
 * (s->unreported_wedged then names it). Three, not two: a gdb kept off
 * the CPU on a loaded machine reports late, and a new attach holds the
 * target. Reads /proc only: it runs from mi_conn's on_silence too. */
static bool unreported_stop_seen(struct session *s)
{
	uint64_t now = monotonic_ns();
	if (s->unreported_wedged)
		return true;
	/* a stop gdb reported (ours, a hit, the user's) is not this one */
	if (!s->attached || s->stopped || s->nstopped_ids > 0 || s->stopped_by_other || s->target_exited ||
	    s->execed || s->was_stopped_before || s->stopping_threads) {
		s->unreported_tid = 0;
		return false;
	}
	if (now < s->unreported_check_ns)
		return false;
	s->unreported_check_ns = now + (uint64_t)WEDGE_CHECK_MS * 1000000u;
	/* gdb leaves a process stopped after an exec it could not report
	 * (session_exec_seen_in_proc): a detach, not a new attach, is right */
	if (session_exec_identity_changed(s)) {
		s->unreported_tid = 0;
		return false;
	}
	pid_t seen = s->unreported_tid;
	bool still = seen > 0 && thread_traced_stopped(s->pid, seen);
	if (still && s->records_read == s->unreported_records &&
	    proc_thread_runtime_ns(s->pid, seen) == s->unreported_cpu_ns) {
		if (++s->unreported_looks < 2)
			return false;
		s->unreported_wedged = seen;
		s->unreported_tid = 0;
		return true;
	}
	/* a new candidate: one in t now, kept while it stays there */
	s->unreported_looks = 0;
	pid_t tid = still ? seen : thread_in_tracing_stop(s->pid);
	s->unreported_tid = tid;
	s->unreported_cpu_ns = tid > 0 ? proc_thread_runtime_ns(s->pid, tid) : 0;
	s->unreported_records = s->records_read;
	return false;
}

/* session_internal.h. Seen in tests/stop_storm.sh (the user's SIGSTOP and
 * SIGCONT pairs while we sample): gdb resumed every thread, three stayed
 * in t, and the sampler, which asks gdb nothing in a round where no thread
 * ran (and waits long between rounds once the budget lowered the rate),
 * held the target for the rest of the run (25 s and more; ~1 round in 10
 * beside two CPU loops). */
int session_heal_unreported_stop(struct session *s, struct xerr *e)
{
	if (!unreported_stop_seen(s))
		return 0;
	char lost[200];
	snprintf(lost, sizeof lost, "thread %d of process %d sat in a tracing stop gdb did not report, "
		 "while gdb had every thread running", (int)s->unreported_wedged, (int)s->pid);
	s->unreported_wedged = 0;
	if (reattach(s, lost, "when the target's user stops and continues it", 0, e) < 0)
		return -1;
	return session_resume(s, e);
}

/* Whether gdb sits in a select() of its own: gdb 13 waits so for the
 * target's events while it stops every thread (infrun's wait_one), and
 * reads no command meanwhile; its main loop uses poll(). */
static bool gdb_waits_on_target(struct session *s)
{
	struct proc_syscall call;
	pid_t gdb = mi_conn_gdb_pid(s->gdb);
	if (gdb <= 0 || proc_thread_syscall(gdb, gdb, &call) < 0 || !call.in_syscall)
		return false;
#ifdef SYS_select
	if (call.nr == SYS_select)
		return true;
#endif
	return call.nr == SYS_pselect6;
}

/* The kernel discards every stop signal pending in a process when a
 * SIGCONT comes (its user's kill -CONT), gdb's SIGSTOPs to the threads it
 * is stopping too. gdb 13 then waits for those threads' stops in a select
 * of its own that reads no command (infrun's stop_all_threads), for good:
 * the command timeout ended gdb after 15 s (tests/stop_storm.sh, all-stop,
 * 1 round in 4 beside two CPU loops). */
static void resend_lost_stops(struct session *s, int silent_ms)
{
	if (silent_ms < LOST_SIGSTOP_MS || !s->attached || !s->gdb || s->target_exited ||
	    !(s->stopping_threads || gdb_waits_on_target(s)) || !proc_any_thread_in(s->pid, "t"))
		return;
	struct proc_thread *threads = NULL;
	int n = proc_threads(s->pid, &threads, NULL);
	for (int i = 0; i < n; i++) {
		pid_t tid = threads[i].tid;
		if (strchr("tTZX", threads[i].state) || proc_thread_signal_pending(s->pid, tid, SIGSTOP) ||
		    tgkill(s->pid, tid, SIGSTOP) < 0)
			continue;
		if (s->verbose)
			fprintf(stderr, "xgdbprof: gdb said nothing for %d ms, stopping process %d, whose thread %d "
				"runs with no SIGSTOP pending (a SIGCONT discarded gdb's): sent it one\n", silent_ms,
				(int)s->pid, (int)tid);
	}
	free(threads);
}

bool session_on_gdb_silence(void *ctx, int silent_ms)
{
	struct session *s = ctx;
	resend_lost_stops(s, silent_ms);
	return unreported_stop_seen(s) && s->idle_wait;
}

int session_stop(struct session *s, struct xerr *e)
{
	if (s->stopped && !s->non_stop)
		return 0;
	wait_for_no_vfork(s);
	s->stopping_threads = true;
	int rc = session_command(s, NULL, e, "-exec-interrupt", "--all", NULL);
	if (rc == 0)
		rc = s->non_stop ? wait_all_stopped_or_reattach(s, e) : session_wait_stopped(s, e);
	s->stopping_threads = false;
	if (rc < 0)
		return xerr_prefix(e, "stopping process %d", (int)s->pid);
	if (s->target_exited)
		return xerr_set(e, "process %d exited", (int)s->pid);
	s->all_stopped_known = s->non_stop && s->nstopped_ids >= s->threads_counted;
	return 0;
}

int session_displaced_stepping_off(struct session *s, struct xerr *e)
{
	if (session_command(s, NULL, e, "-gdb-set", "displaced-stepping", "off", NULL) < 0)
		return xerr_prefix(e, "turning off gdb's displaced stepping");
	return 0;
}

/* The CLI's `signal 0` resumes one thread without its signal, but as an
 * execution command it runs in the foreground: gdb then read no command
 * until the target stopped (the next command went unanswered for 15 s),
 * and with "&" gdb 13 was left with threads in a tracing stop it never
 * reported. Hence `nopass` around the plain resume. */
void session_pass_stop_signals(struct session *s, bool pass)
{
	(void)session_command(s, NULL, NULL, "-interpreter-exec", "console",
			      pass ? "handle SIGSTOP pass" : "handle SIGSTOP nopass", NULL);
}

/* Sends command ("-exec-interrupt", "-exec-continue") for one thread.
 * Returns 0 sent, 1 refused while gdb lives (it no longer knows the thread:
 * it exited), -1 with e when gdb is gone ("stopping thread N of ..."). */
static int thread_command(struct session *s, const char *command, int gdb_id, const char *doing, struct xerr *e)
{
	char id[16];
	snprintf(id, sizeof id, "%d", gdb_id);
	struct xerr refused;
	int sent;
	bool drop = strcmp(command, "-exec-continue") == 0 && session_take_drop_signal(s, gdb_id);
	if (drop)
		session_pass_stop_signals(s, false);
	sent = session_command(s, NULL, &refused, command, "--thread", id, NULL);
	if (drop)
		session_pass_stop_signals(s, true);
	if (sent == 0)
		return 0;
	if (!mi_conn_alive(s->gdb))
		return xerr_set(e, "%s thread %d of process %d: %s", doing, gdb_id, (int)s->pid, refused.msg);
	return 1;
}

/* Lets the session see every record gdb has already sent (the view of
 * which threads are stopped follows them). 0, or -1 on error (in e). */
static int take_pending_events(struct session *s, struct xerr *e)
{
	struct mi_record *ev;
	int got;
	while ((got = session_wait_event(s, 0, &ev, e)) == 1)
		mi_record_free(ev);
	return got < 0 ? -1 : 0;
}

/* A thread asked to stop alone has taken gdb's SIGSTOP at its first return
 * to user mode, within a scheduler tick of CPU: one that has run
 * LOST_STOP_CPU_MS of CPU since and is not reported stopped never got it
 * (its stop is lost). Looked at every LOST_STOP_POLL_MS. Only that
 * evidence counts: a thread that does not run (its user stopped the
 * process, it waits on a disk) keeps to the command timeout, as before
 * (tests/guardian.sh: a target its user stopped and continued met a new
 * attach taken on mere silence, and was left in a tracing stop). */
enum { LOST_STOP_CPU_MS = 20, LOST_STOP_POLL_MS = 10 };

/* Whether the stop asked of thread tid, its CPU time then ran_ns, is to be
 * taken as lost now. */
static bool thread_stop_lost(const struct session *s, pid_t tid, uint64_t ran_ns)
{
	if (tid <= 0 || ran_ns == 0 || s->stopped_by_other)
		return false;
	return proc_thread_runtime_ns(s->pid, tid) > ran_ns + (uint64_t)LOST_STOP_CPU_MS * 1000000u;
}

/* gdb 13 in non-stop mode also loses the stop of one thread asked while
 * another of the process is in a vfork: gdb pauses the other threads for
 * the vfork and resumes them at its end, the stop asked meanwhile
 * forgotten for good (the thread runs on; a second -exec-interrupt does
 * nothing, as gdb holds a stop for it still pending). fork_loop spawn
 * sampled with the defaults: gdb was ended after 15 s, exit status 1, in
 * 3 runs of 3. The session attaches again (reattach), resumes every
 * thread and returns 1, as for a thread gone: the caller skips it, and
 * reads the threads' new gdb ids before its next stop. */
static int lost_thread_stop(struct session *s, int gdb_id, struct xerr *e)
{
	char lost[160];
	snprintf(lost, sizeof lost, "gdb lost the stop asked of thread %d of process %d (it ran on)", gdb_id,
		 (int)s->pid);
	if (reattach(s, lost, "around a vfork", 0, e) < 0)
		return -1;
	if (s->target_exited)
		return xerr_set(e, "process %d exited", (int)s->pid);
	if (session_resume(s, e) < 0)
		return -1;
	return 1;
}

int session_stop_thread(struct session *s, int gdb_id, pid_t tid, struct xerr *e)
{
	if (!s->non_stop)
		return xerr_set(e, "stopping one thread needs gdb's non-stop mode");
	/* Records gdb sent since the last session_command (another thread's *running, a
	 * thread's exit) bring the session's view up to date first. */
	if (take_pending_events(s, e) < 0)
		return -1;
	struct mi_record *ev;
	int got;
	if (s->target_exited)
		return xerr_set(e, "process %d exited", (int)s->pid);
	if (session_thread_is_stopped(s, gdb_id))
		return 0;
	session_settle_vfork(s);
	int sent = thread_command(s, "-exec-interrupt", gdb_id, "stopping", e);
	if (sent != 0)
		return sent;   /* 1: gdb no longer knows it, it exited meanwhile */
	/* gdb's answer comes once it sent the thread its SIGSTOP; what the
	 * thread ran is read after the interrupt, not before, so that nothing
	 * lies between the caller's look at the thread and the interrupt */
	uint64_t ran_ns = tid > 0 ? proc_thread_runtime_ns(s->pid, tid) : 0;
	uint64_t deadline = session_deadline_in(s->timeout_ms);
	uint64_t check_at = session_deadline_in(LOST_STOP_POLL_MS);
	while (!session_thread_is_stopped(s, gdb_id)) {
		if (s->target_exited)
			return xerr_set(e, "process %d exited", (int)s->pid);
		if (s->execed)
			return 0;
		/* A stop gdb lost: the vfork wedge's other face (lost_thread_stop) */
		if (monotonic_ns() >= check_at) {
			if (thread_stop_lost(s, tid, ran_ns))
				return lost_thread_stop(s, gdb_id, e);
			check_at = session_deadline_in(LOST_STOP_POLL_MS);
		}
		got = session_wait_event(s, session_ms_until(check_at < deadline ? check_at : deadline), &ev, e);
		if (got == 0 && monotonic_ns() < deadline)
			continue;
		if (got == 0)
			session_give_up_on_gdb(s, "report a thread stopped");
		if (got < 0)
			return xerr_prefix(e, "stopping thread %d of process %d", gdb_id, (int)s->pid);
		if (got == 0)
			return xerr_set(e, "gdb did not report thread %d of process %d stopped within %d ms", gdb_id,
					(int)s->pid, s->timeout_ms);
		const char *gone = session_is_thread_exited(ev) ? mi_value_get_string(ev->results, "id") : NULL;
		bool exited = gone && atoi(gone) == gdb_id;
		mi_record_free(ev);
		if (exited)
			return 1;
	}
	return 0;
}

int session_resume_thread(struct session *s, int gdb_id, struct xerr *e)
{
	if (!s->non_stop)
		return xerr_set(e, "resuming one thread needs gdb's non-stop mode");
	if (!session_thread_is_stopped(s, gdb_id) || s->execed)
		return 0;
	/* Refused (1): the thread exited while stopped, gdb has forgotten it.
	 * Sent: gdb answers ^running once it has resumed the thread (its
	 * *running follows in the same write), no need to wait for that record. */
	if (thread_command(s, "-exec-continue", gdb_id, "resuming", e) < 0)
		return -1;
	session_forget_stopped_thread(s, gdb_id);
	s->stopped = s->nstopped_ids > 0;
	s->all_stopped_known = false;
	return 0;
}

/* Non-stop, forks caught, some threads running: resumes one by one the
 * threads whose stops the session has read. -exec-continue --all would
 * also resume a thread stopped at a fork whose record is not read yet, and
 * gdb then lets the child go (detach-on-fork) before the tracer cleans it
 * (heal_fork_child in the tracer): gdb removes only the breakpoints it
 * believes inserted at that instant, and none once they are deleted. A
 * child died of SIGTRAP at hot_step+0 that way in tests/exec_fork.sh's
 * fork-exact (1 in ~400 children, 3 suite runs of ~10): the resume after
 * the probes' deletion at the end. Returns 1 when it did (0: all threads
 * are stopped, --all is right), -1 with e. */
static int resume_stops_read(struct session *s, struct xerr *e)
{
	size_t total;
	if (session_count_threads(s, &total, e) < 0)
		return -1;
	if (s->nstopped_ids >= total)
		return 0;
	while (s->nstopped_ids > 0) {
		int gdb_id = s->stopped_ids[s->nstopped_ids - 1];
		if (thread_command(s, "-exec-continue", gdb_id, "resuming", e) < 0)
			return -1;
		session_forget_stopped_thread(s, gdb_id);
	}
	s->stopped = false;
	s->held_at_entry = false;
	return 1;
}

int session_resume(struct session *s, struct xerr *e)
{
	/* After an exec only the detach may let it go (session.h). */
	if (!s->stopped || s->execed)
		return 0;
	/* right after session_stop saw every thread stopped, --all is right
	 * and asks gdb nothing more with the target held */
	bool all_known = s->all_stopped_known;
	s->all_stopped_known = false;
	if (s->non_stop && s->catching_forks && !all_known) {
		int one_by_one = resume_stops_read(s, e);
		if (one_by_one != 0)
			return one_by_one < 0 ? -1 : 0;
	}
	if (s->non_stop) {
		/* threads whose stop signal is not to be passed on first,
		 * one by one (thread_command), then the rest */
		for (size_t i = 0; i < s->nstopped_ids; i++) {
			int id = s->stopped_ids[i];
			if (session_drop_signal_marked(s, id) && thread_command(s, "-exec-continue", id, "resuming", e) < 0)
				return -1;
		}
		if (session_command(s, NULL, e, "-exec-continue", "--all", NULL) < 0)
			return xerr_prefix(e, "resuming process %d", (int)s->pid);
	} else {
		bool drop = false;
		while (session_take_drop_signal(s, 0))
			drop = true;
		if (drop)
			session_pass_stop_signals(s, false);
		int rc = session_command(s, NULL, e, "-exec-continue", NULL);
		if (drop)
			session_pass_stop_signals(s, true);
		if (rc < 0)
			return xerr_prefix(e, "resuming process %d", (int)s->pid);
	}
	s->stopped = false;
	s->held_at_entry = false;
	s->nstopped_ids = 0;
	return session_wait_running(s, e);
}

/* "Thread 0x7f... (LWP 1234)" or "process 1234" → 1234. */
static pid_t tid_from_target_id(const char *target_id)
{
	const char *lwp = target_id ? strstr(target_id, "LWP ") : NULL;
	if (lwp)
		return (pid_t)strtol(lwp + 4, NULL, 10);
	const char *proc = target_id ? strstr(target_id, "process ") : NULL;
	return proc ? (pid_t)strtol(proc + 8, NULL, 10) : 0;
}

static int compare_thread_tid(const void *a, const void *b)
{
	const struct session_thread *x = a, *y = b;
	return compare_i64(x->tid, y->tid);
}

/* The list named key in r's ^done record as a zeroed array of as many
 * items of item_size, each set by fill(ctx, item, entry, index); frees r.
 * Returns 0 with *items (at least one allocated) and *count, or -1 out of
 * memory (said in e). */
static int list_to_array(struct mi_record *r, const char *key, size_t item_size,
			 void (*fill)(void *ctx, void *item, const struct mi_value *entry, size_t index), void *ctx,
			 void **items, size_t *count, struct xerr *e)
{
	const struct mi_value *list = mi_value_get(r->results, key);
	size_t n = mi_value_count(list);
	char *out = calloc(n ? n : 1, item_size);
	if (out) {
		for (size_t i = 0; i < n; i++)
			fill(ctx, out + i * item_size, mi_value_at(list, i), i);
	}
	mi_record_free(r);
	if (!out)
		return xerr_oom(e);
	*items = out;
	*count = n;
	return 0;
}

static void fill_thread(void *session, void *item, const struct mi_value *t, size_t index)
{
	const struct session *s = session;
	struct session_thread *out = item;
	long long id = 0;
	(void)index;
	mi_value_get_int(t, "id", &id);
	out->gdb_id = (int)id;
	out->tid = tid_from_target_id(mi_value_get_string(t, "target-id"));
	const char *name = mi_value_get_string(t, "name");
	struct proc_thread pt;
	if (proc_thread_read(s->pid, out->tid, &pt, NULL) == 0) {
		out->state = pt.state;
		if (!name)
			name = pt.name;
		snprintf(out->name, sizeof out->name, "%s", name);
	} else {
		out->state = '?';
		snprintf(out->name, sizeof out->name, "%s", name ? name : "");
	}
}

int session_threads(struct session *s, struct session_thread **threads, size_t *count, struct xerr *e)
{
	struct mi_record *r;
	void *items = NULL;
	*threads = NULL;
	*count = 0;
	if (session_command(s, &r, e, "-thread-info", NULL) < 0)
		return xerr_prefix(e, "listing threads");
	if (list_to_array(r, "threads", sizeof **threads, fill_thread, s, &items, count, e) < 0)
		return -1;
	*threads = items;
	qsort(*threads, *count, sizeof **threads, compare_thread_tid);
	return 0;
}

static char *dup_or_null(const char *text)
{
	return text ? strdup(text) : NULL;
}

static void fill_frame(void *unused, void *item, const struct mi_value *f, size_t index)
{
	struct gdb_frame *out = item;
	long long v = 0;
	(void)unused;
	out->level = mi_value_get_int(f, "level", &v) == 0 ? (int)v : (int)index;
	out->pc = mi_value_get_int(f, "addr", &v) == 0 ? (uint64_t)v : 0;
	out->line = mi_value_get_int(f, "line", &v) == 0 ? (int)v : 0;
	out->function = dup_or_null(mi_value_get_string(f, "func"));
	const char *file = mi_value_get_string(f, "fullname");
	out->file = dup_or_null(file ? file : mi_value_get_string(f, "file"));
	out->library = dup_or_null(mi_value_get_string(f, "from"));
}

int session_thread_frames(struct session *s, int gdb_id, int max_frames, struct gdb_frame **frames,
			  size_t *count, struct xerr *e)
{
	char thread_text[32], high[32];
	snprintf(thread_text, sizeof thread_text, "%d", gdb_id);
	snprintf(high, sizeof high, "%d", max_frames > 0 ? max_frames - 1 : 100000);
	struct mi_record *r;
	void *items = NULL;
	*frames = NULL;
	*count = 0;
	if (session_command(s, &r, e, "-stack-list-frames", "--thread", thread_text, "0", high, NULL) < 0)
		return xerr_prefix(e, "listing frames of thread %d", gdb_id);
	if (list_to_array(r, "stack", sizeof **frames, fill_frame, NULL, &items, count, e) < 0)
		return -1;
	*frames = items;
	return 0;
}

int session_register_numbers(struct session *s, const char *const *names, size_t n, int *numbers,
			     struct xerr *e)
{
	struct mi_record *r;
	if (session_command(s, &r, e, "-data-list-register-names", NULL) < 0)
		return xerr_prefix(e, "listing register names");
	const struct mi_value *list = mi_value_get(r->results, "register-names");
	size_t count = mi_value_count(list);
	for (size_t k = 0; k < n; k++) {
		numbers[k] = -1;
		for (size_t i = 0; i < count; i++) {
			const char *name = mi_value_string(mi_value_at(list, i));
			if (name && strcmp(name, names[k]) == 0) {
				numbers[k] = (int)i;
				break;
			}
		}
	}
	mi_record_free(r);
	return 0;
}

/* Arguments of -data-list-register-values for one thread, in hex. */
struct register_query {
	char thread_text[32], number_text[MAX_REGS][16];
	const char *args[MAX_REGS + 4];
};

static int register_query_init(struct register_query *q, int gdb_id, const int *numbers, size_t n,
			       struct xerr *e)
{
	if (n > MAX_REGS)
		return xerr_set(e, "too many registers asked");
	size_t nargs = 0;
	snprintf(q->thread_text, sizeof q->thread_text, "%d", gdb_id);
	q->args[nargs++] = "--thread";
	q->args[nargs++] = q->thread_text;
	q->args[nargs++] = "x";
	for (size_t k = 0; k < n; k++) {
		snprintf(q->number_text[k], sizeof q->number_text[k], "%d", numbers[k]);
		q->args[nargs++] = q->number_text[k];
	}
	q->args[nargs] = NULL;
	return 0;
}

/* values[k] from gdb's register-values list; 0 for a register not listed. */
static void register_values(const struct mi_record *r, const int *numbers, size_t n, uint64_t *values)
{
	const struct mi_value *list = mi_value_get(r->results, "register-values");
	size_t count = mi_value_count(list);
	for (size_t k = 0; k < n; k++)
		values[k] = 0;
	for (size_t i = 0; i < count; i++) {
		const struct mi_value *item = mi_value_at(list, i);
		long long number, value;
		if (mi_value_get_int(item, "number", &number) < 0 || mi_value_get_int(item, "value", &value) < 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (numbers[k] == number)
				values[k] = (uint64_t)value;
	}
}

int session_thread_registers(struct session *s, int gdb_id, const int *numbers, size_t n,
			     uint64_t *values, struct xerr *e)
{
	struct register_query q;
	if (register_query_init(&q, gdb_id, numbers, n, e) < 0)
		return -1;
	struct mi_error me;
	struct mi_record *r = NULL;
	if (session_gdb_callv(s, &r, &me, "-data-list-register-values", q.args) < 0) {
		mi_record_free(r);
		return xerr_set(e, "reading registers of thread %d: %s", gdb_id, me.message);
	}
	register_values(r, numbers, n, values);
	mi_record_free(r);
	return 0;
}

int session_thread_write_registers(struct session *s, int gdb_id, const int *numbers, const uint64_t *values,
				   size_t n, struct xerr *e)
{
	enum { MAX_WRITE = 8 };
	if (n == 0 || n > MAX_WRITE)
		return xerr_set(e, "writing %zu registers at once: 1 to %d", n, MAX_WRITE);
	char thread_text[16], number_text[MAX_WRITE][16], value_text[MAX_WRITE][24];
	const char *args[4 + 2 * MAX_WRITE];
	size_t nargs = 0;
	snprintf(thread_text, sizeof thread_text, "%d", gdb_id);
	args[nargs++] = "--thread";
	args[nargs++] = thread_text;
	args[nargs++] = "x";
	for (size_t k = 0; k < n; k++) {
		snprintf(number_text[k], sizeof number_text[k], "%d", numbers[k]);
		snprintf(value_text[k], sizeof value_text[k], "0x%" PRIx64, values[k]);
		args[nargs++] = number_text[k];
		args[nargs++] = value_text[k];
	}
	args[nargs] = NULL;
	struct mi_error me;
	struct mi_record *r = NULL;
	int rc = session_gdb_callv(s, &r, &me, "-data-write-register-values", args);
	mi_record_free(r);
	if (rc < 0)
		return xerr_set(e, "writing registers of thread %d: %s", gdb_id, me.message);
	return 0;
}

int session_thread_registers_and_resume(struct session *s, int gdb_id, const int *numbers, size_t n,
					uint64_t *values, struct xerr *e)
{
	if (!s->non_stop)
		return xerr_set(e, "resuming one thread needs gdb's non-stop mode");
	if (!session_thread_is_stopped(s, gdb_id) || s->execed)
		return xerr_set(e, "thread %d of process %d is not stopped by us", gdb_id, (int)s->pid);
	struct register_query q;
	if (register_query_init(&q, gdb_id, numbers, n, e) < 0)
		return -1;
	const char *continue_args[] = { "--thread", q.thread_text, NULL };
	bool drop_signal = session_take_drop_signal(s, gdb_id); /* as thread_command */
	if (drop_signal)
		session_pass_stop_signals(s, false);
	struct mi_batch_call batch[2] = {
		{ .command = "-data-list-register-values", .args = q.args },
		{ .command = "-exec-continue", .args = continue_args },
	};
	struct mi_error me;
	double t0 = monotonic_ms();
	int rc = mi_conn_call_batch(s->gdb, s->timeout_ms, batch, 2, &me);
	if (drop_signal && mi_conn_alive(s->gdb))
		session_pass_stop_signals(s, true);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: mi -data-list-register-values + -exec-continue: %.3f ms%s\n",
			monotonic_ms() - t0, rc < 0 ? " (error)" : "");
	/* As session_gdb_callv: a resume gdb never answered (a timeout, an interrupted
	 * wait) leaves the thread in doubt, so gdb is given up on, which heals
	 * the target; an answered register read does not change that. */
	if (rc < 0 && !batch[1].result && mi_conn_alive(s->gdb))
		session_give_up_on_gdb(s, "answer -exec-continue");
	if (rc < 0 && !mi_conn_alive(s->gdb))
		session_on_gdb_lost(s);
	if (batch[0].rc == 0)
		register_values(batch[0].result, numbers, n, values);
	int result;
	if (!mi_conn_alive(s->gdb))
		result = xerr_set(e, "resuming thread %d of process %d: %s", gdb_id, (int)s->pid, me.message);
	else if (batch[1].rc < 0)
		/* Refused while gdb lives: the thread exited while stopped. */
		result = 1;
	else if (batch[0].rc < 0)
		result = xerr_set(e, "reading registers of thread %d: %s", gdb_id, batch[0].err.message);
	else
		result = 0;
	if (mi_conn_alive(s->gdb)) {
		session_forget_stopped_thread(s, gdb_id);
		s->stopped = s->nstopped_ids > 0;
	}
	mi_record_free(batch[0].result);
	mi_record_free(batch[1].result);
	return result;
}

void session_gdb_frames_free(struct gdb_frame *frames, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(frames[i].function);
		free(frames[i].file);
		free(frames[i].library);
	}
	free(frames);
}
