/* session_exec.c — the exec watch: exec and fork records, exec seen in /proc. */
#include "config.h"
#include "session/session_internal.h"
#include "util/text_escape.h"
#include "procfs/proc.h"

/* The exec catchpoint fired: the process now runs another program, stopped
 * at its first instruction. Nothing the session was opened for (symbols,
 * addresses, thread ids) holds any more. */
static void note_exec(struct session *s, const struct mi_record *ev)
{
	const char *path = mi_value_get_string(ev->results, "new-exec");
	s->execed = true;
	free(s->exec_path);
	s->exec_path = strdup(path ? path : "?");
}

/* One entry of the process's auxiliary vector, 0 when absent (or mid-exec,
 * before the kernel wrote one). */
uint64_t session_auxv_value(pid_t pid, uint64_t type)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_auxv_t aux[64];
	ssize_t n = read(fd, aux, sizeof aux);
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof *aux && aux[i].a_type != AT_NULL; i++)
		if (aux[i].a_type == type)
			return aux[i].a_un.a_val;
	return 0;
}

/* The 16 random bytes the kernel puts on the stack of every new program
 * (auxv AT_RANDOM): they change at each exec, even of the same program at
 * the same addresses. */
bool session_exec_identity(pid_t pid, unsigned char out[16])
{
	uint64_t at = session_auxv_value(pid, AT_RANDOM);
	if (!at)
		return false;   /* mid-exec: no auxv yet */
	int fd = proc_open_mem(pid, O_RDONLY);
	if (fd < 0)
		return false;
	bool ok = pread(fd, out, 16, (off_t)at) == 16;
	close(fd);
	return ok;
}

bool session_exec_identity_changed(const struct session *s)
{
	unsigned char now[16];
	return s->have_exec_id && session_exec_identity(s->pid, now) && memcmp(now, s->exec_id, 16) != 0;
}

/* gdb re-inserts our breakpoints at their old addresses right after it
 * follows an exec, before it checks the exec catchpoint; where the new
 * program has no memory there the insertion fails, gdb drops the event,
 * reports no stop and leaves the process stopped. Seen from /proc
 * instead, once gdb has had half a second to report it (a detach while
 * gdb has the exec event still pending runs the new program with the old
 * one's registers: seen to crash it). The detach works then. */
bool session_exec_seen_in_proc(struct session *s)
{
	if (s->execed || !session_exec_identity_changed(s))
		return s->execed;
	if (!s->exec_suspected_ms)
		s->exec_suspected_ms = monotonic_ms();
	if (monotonic_ms() - s->exec_suspected_ms < 500)
		return false;
	char exe[4096];
	s->execed = true;
	s->stopped = true;   /* in gdb's hands: only the detach lets it go */
	free(s->exec_path);
	s->exec_path = strdup(proc_exe_path(s->pid, exe, sizeof exe, NULL) == 0 ? exe : "?");
	return true;
}

/* An exec that waits on its tracer: the exec'ing thread sits in D until
 * every other thread of the process is gone, and a traced thread that
 * exits stays a zombie until the tracer reaps it. gdb 13, asked to stop
 * the process meanwhile, was seen not to reap them: the target then hangs
 * in its exec (D, Z, Z) until gdb lets go. True once that has lasted a
 * second. */
bool session_exec_waits_on_gdb(struct session *s, double *since_ms)
{
	struct proc_thread *threads = NULL;
	int n = proc_threads(s->pid, &threads, NULL);
	bool zombie = false, waiting = false;
	for (int i = 0; i < n; i++) {
		zombie |= threads[i].state == 'Z';
		waiting |= threads[i].state == 'D';
	}
	free(threads);
	if (!(zombie && waiting)) {
		*since_ms = 0;
		return false;
	}
	if (!*since_ms)
		*since_ms = monotonic_ms();
	return monotonic_ms() - *since_ms >= 1000;
}

/* A fork catchpoint fired. The child is held by gdb until the parent is
 * resumed (gdb detaches it then): the one moment it can be cleaned. */
static void note_fork(struct session *s, const struct mi_record *ev)
{
	long long child = 0;
	s->forks++;
	if (mi_value_get_int(ev->results, "newpid", &child) == 0 && child > 0 && s->on_fork)
		s->on_fork(s->on_fork_ctx, (pid_t)child);
}

/* A fault (SIGSEGV, SIGILL, SIGBUS, SIGFPE) in the target is said at once,
 * once per signal: it ends the program unless the program handles it, and
 * a user must not read a crash during a run as one of ours, nor miss one
 * of ours (the entry counter once put a jump over a caller's code: the
 * target died of SIGILL and the run said nothing). gdb passes it on. */
static void note_fault(struct session *s, const struct mi_record *ev, const char *name)
{
	static const char *const faults[] = { "SIGSEGV", "SIGILL", "SIGBUS", "SIGFPE" };
	unsigned bit = 0;
	for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++)
		if (strcmp(name, faults[i]) == 0)
			bit = 1u << i;
	if (!bit || (s->faults_said & bit))
		return;
	s->faults_said |= bit;
	const struct mi_value *frame = mi_value_get(ev->results, "frame");
	const char *addr = frame ? mi_value_get_string(frame, "addr") : NULL;
	const char *func = frame ? mi_value_get_string(frame, "func") : NULL;
	char where[160] = "";
	if (addr) {
		char shown[96];
		text_escape(shown, sizeof shown, func ? func : "");
		snprintf(where, sizeof where, " at %s%s%s%s", addr, func ? " (" : "", func ? shown : "", func ? ")" : "");
	}
	fprintf(stderr, "xgdbprof: process %d received %s%s: a fault, passed on to it (it ends the program unless the "
		"program handles it)\n", (int)s->pid, name, where);
}

enum stop_sender {
	SENT_BY_OTHER,    /* a signal someone else sent: the user's stop */
	SENT_BY_GDB,      /* gdb's own SIGSTOP, meant to interrupt the thread */
	SENT_BY_NOBODY,   /* no signal to read: the thread joined a group stop */
};

/* Who sent the stop signal gdb reports for thread gdb_id, from the kernel's
 * siginfo for it ($_siginfo, PTRACE_GETSIGINFO). gdb stops a thread with a
 * SIGSTOP of its own and cannot tell it from the user's: should the user's
 * arrive first, gdb takes it for its own and reports its own later as
 * received, which passed on would stop the target (issue 28: the target
 * left stopped after the user's SIGSTOP and SIGCONT, a third SIGSTOP
 * reported). A thread in a group stop carries no siginfo. */
static enum stop_sender stop_signal_sender(struct session *s, int gdb_id)
{
	if (gdb_id <= 0)
		return SENT_BY_OTHER;
	char thread[16];
	snprintf(thread, sizeof thread, "%d", gdb_id);
	struct mi_record *r = NULL;
	struct xerr e;
	if (session_command(s, &r, &e, "-data-evaluate-expression", "--thread", thread, "--frame", "0",
			    "$_siginfo._sifields._kill.si_pid", NULL) < 0)
		return mi_conn_alive(s->gdb) ? SENT_BY_NOBODY : SENT_BY_OTHER;
	const char *value = r ? mi_value_get_string(r->results, "value") : NULL;
	pid_t sender = value ? (pid_t)atol(value) : 0;
	mi_record_free(r);
	/* ours stands in for one of gdb's (session_on_gdb_silence) */
	return sender > 0 && (sender == mi_conn_gdb_pid(s->gdb) || sender == getpid()) ? SENT_BY_GDB : SENT_BY_OTHER;
}

bool session_drop_signal_marked(const struct session *s, int gdb_id)
{
	for (size_t i = 0; i < SESSION_DROP_SIGNAL_SLOTS; i++)
		if (s->drop_signal_ids[i] == gdb_id)
			return true;
	return false;
}

void session_mark_drop_signal(struct session *s, int gdb_id)
{
	size_t n = SESSION_DROP_SIGNAL_SLOTS;
	if (session_drop_signal_marked(s, gdb_id))
		return;
	for (size_t i = 0; i < n; i++)
		if (s->drop_signal_ids[i] == 0) {
			s->drop_signal_ids[i] = gdb_id;
			return;
		}
	/* full: the oldest mark goes; its thread has long been resumed */
	memmove(s->drop_signal_ids, s->drop_signal_ids + 1, (n - 1) * sizeof s->drop_signal_ids[0]);
	s->drop_signal_ids[n - 1] = gdb_id;
}

bool session_take_drop_signal(struct session *s, int gdb_id)
{
	for (size_t i = 0; i < SESSION_DROP_SIGNAL_SLOTS; i++) {
		int id = s->drop_signal_ids[i];
		if (id > 0 && (gdb_id == 0 || id == gdb_id)) {
			s->drop_signal_ids[i] = 0;
			return true;
		}
	}
	return false;
}

/* A stop signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) gdb reports was sent by
 * someone else, the user say: gdb reports its own stops otherwise (signal
 * "0" for -exec-interrupt in non-stop mode, SIGINT in all-stop mode) and
 * swallows the SIGSTOPs it sends to hold threads. gdb delivers it when it
 * resumes or detaches the thread, and the target then stops as it would
 * have without us. The guardian is told at once, so that should we be
 * killed it leaves that stop alone (docs/safety.md); a SIGCONT since
 * undoes it. gdb's own SIGSTOP reported late, a group stop's tail and a
 * SIGSTOP reported after its SIGCONT are not a new stop: their signal is
 * not passed on (stop_signal_sender, session_mark_drop_signal). */
static void note_signal(struct session *s, const struct mi_record *ev)
{
	const char *name = mi_value_get_string(ev->results, "signal-name");
	if (!name)
		return;
	note_fault(s, ev, name);
	bool stop = strcmp(name, "SIGSTOP") == 0 || strcmp(name, "SIGTSTP") == 0 || strcmp(name, "SIGTTIN") == 0 ||
		    strcmp(name, "SIGTTOU") == 0;
	bool cont = strcmp(name, "SIGCONT") == 0;
	if (cont && !s->stopped_by_other) {
		/* gdb holds a thread that took the user's SIGSTOP while another
		 * takes the SIGCONT sent after it: the SIGCONT is reported
		 * first, and the SIGSTOP, passed on after it, stopped the target
		 * for good (tests/stop_storm.sh, all-stop). Counted here, and
		 * the next stop of the user's is dropped against it, as the
		 * kernel drops a stop signal pending when a SIGCONT comes. */
		s->unmatched_conts++;
		return;
	}
	if (!(stop && !s->stopped_by_other) && !(cont && s->stopped_by_other))
		return;
	if (stop && strcmp(name, "SIGSTOP") == 0) {
		int id = session_thread_id_of(ev);
		enum stop_sender sender = stop_signal_sender(s, id);
		if (sender == SENT_BY_GDB) {
			session_mark_drop_signal(s, id);
			if (s->verbose)
				fprintf(stderr, "xgdbprof: process %d: thread %d reported a SIGSTOP gdb sent it itself "
					"(its stop was met by another signal first): resumed without it\n", (int)s->pid, id);
			return;
		}
		if (sender == SENT_BY_NOBODY && s->continued_by_other) {
			if (s->verbose)
				fprintf(stderr, "xgdbprof: process %d: thread %d reported joining a group stop after the "
					"SIGCONT that ended it: not a new stop\n", (int)s->pid, id);
			return;
		}
		if (sender == SENT_BY_OTHER && s->unmatched_conts > 0) {
			s->unmatched_conts--;
			session_mark_drop_signal(s, id);
			if (s->verbose)
				fprintf(stderr, "xgdbprof: process %d: thread %d reported a SIGSTOP after the SIGCONT "
					"that followed it: resumed without it\n", (int)s->pid, id);
			return;
		}
	}
	if (cont && !s->non_stop) {
		/* A SIGCONT discards every stop signal still pending, so a
		 * SIGSTOP of the user's another thread holds now was taken
		 * before this SIGCONT was sent: gdb, picking among the events it
		 * holds, may report it after this one, and passed on it stopped
		 * the target after the user's last SIGCONT (tests/stop_storm.sh,
		 * all-stop: the SIGCONT lost to a later SIGSTOP, the pairing of
		 * reports below went wrong). Each such stop is dropped. */
		int held = session_threads_holding_signal(s, SIGSTOP, session_thread_id_of(ev));
		s->unmatched_conts += (unsigned)held;
		if (held && s->verbose)
			fprintf(stderr, "xgdbprof: process %d: %d thread(s) hold a SIGSTOP of the user's taken before this "
				"SIGCONT: dropped when reported\n", (int)s->pid, held);
	}
	s->stopped_by_other = stop;
	s->continued_by_other = cont;
	session_tell_guardian(s, stop ? GUARDIAN_STOPPED_BY_OTHER : GUARDIAN_CONTINUED);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: process %d received %s, not from xgdbprof: %s\n", (int)s->pid, name,
			stop ? "should xgdbprof be killed, its guardian leaves the target stopped"
			     : "its guardian would continue it again");
}

/* Keeps the session's view of the target in step with gdb's records:
 * *stopped (possibly because it exited), *running, and in non-stop mode
 * which threads each of them concerns. */
void session_track_exec_event(struct session *s, const struct mi_record *ev)
{
	if (ev->kind == MI_RECORD_NOTIFY && s->non_stop && strcmp(ev->klass, "thread-exited") == 0) {
		const char *id = mi_value_get_string(ev->results, "id");
		if (id)
			session_forget_stopped_thread(s, atoi(id));
		s->stopped = s->nstopped_ids > 0;
		return;
	}
	if (ev->kind != MI_RECORD_EXEC)
		return;
	int id = session_thread_id_of(ev);
	if (strcmp(ev->klass, "stopped") == 0) {
		s->stop_seq++;
		const char *reason = mi_value_get_string(ev->results, "reason");
		if (session_is_exit_reason(reason)) {
			s->target_exited = s->exit_reported = true;
			const char *signal_name = mi_value_get_string(ev->results, "signal-name");
			if (strcmp(reason, "exited-signalled") == 0 && signal_name)
				snprintf(s->exit_signal, sizeof s->exit_signal, "%s", signal_name);
		}
		if (reason && strcmp(reason, "exec") == 0)
			note_exec(s, ev);
		if (reason && strcmp(reason, "fork") == 0)
			note_fork(s, ev);
		if (reason && strcmp(reason, "signal-received") == 0)
			note_signal(s, ev);
		if (!s->non_stop)
			s->stopped = true;
		else if (id > 0)
			session_note_stopped_thread(s, id);
	} else if (strcmp(ev->klass, "running") == 0) {
		if (!s->non_stop)
			s->stopped = false;
		else if (id > 0)
			session_forget_stopped_thread(s, id);
		else
			s->nstopped_ids = 0;   /* thread-id="all" */
	}
	if (s->non_stop)
		s->stopped = s->nstopped_ids > 0;
}

/* gdb follows a launched command's exec and reads the new program's
 * symbols then. A session that wants none drops them once gdb has switched
 * programs (its thread group names the new executable), polling for up to
 * two seconds; if gdb is slower the symbols stay, which costs only speed. */
void session_drop_symbols_after_exec(struct session *s)
{
	/* Switched: gdb names the program the child runs now, or at least no
	 * longer the one it forked from (us), should the two spell paths
	 * differently. */
	char exe[4096], forked_from[4096];
	if (proc_exe_path(s->pid, exe, sizeof exe, NULL) < 0 ||
	    proc_exe_path(getpid(), forked_from, sizeof forked_from, NULL) < 0)
		return;
	for (int attempt = 0; attempt < 400; attempt++) {
		struct mi_record *r = NULL;
		if (session_command(s, &r, NULL, "-list-thread-groups", NULL) < 0)
			return;
		const struct mi_value *groups = mi_value_get(r->results, "groups");
		const char *running = mi_value_get_string(mi_value_at(groups, 0), "executable");
		bool switched = running && (strcmp(running, exe) == 0 || strcmp(running, forked_from) != 0);
		mi_record_free(r);
		if (switched) {
			session_command(s, NULL, NULL, "-file-symbol-file", NULL);
			return;
		}
		struct timespec pause = { 0, 5000000 };
		nanosleep(&pause, NULL);
	}
	if (s->verbose)
		fprintf(stderr, "xgdbprof: gdb had not followed the exec of process %d after 2 s; it keeps its symbols\n",
			(int)s->pid);
}
