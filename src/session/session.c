/* session.c — attach, launch, detach and the end; gdb calls and waits; rescue (see session.h). */
#include "config.h"
#include "session/session_internal.h"

bool session_is_exit_reason(const char *reason)
{
	return reason && (strcmp(reason, "exited") == 0 || strcmp(reason, "exited-normally") == 0 ||
			  strcmp(reason, "exited-signalled") == 0);
}

bool session_thread_is_stopped(const struct session *s, int gdb_id)
{
	for (size_t i = 0; i < s->nstopped_ids; i++)
		if (s->stopped_ids[i] == gdb_id)
			return true;
	return false;
}

void session_forget_stopped_thread(struct session *s, int gdb_id)
{
	for (size_t i = 0; i < s->nstopped_ids; i++)
		if (s->stopped_ids[i] == gdb_id) {
			s->stopped_ids[i] = s->stopped_ids[--s->nstopped_ids];
			return;
		}
}

void session_note_stopped_thread(struct session *s, int gdb_id)
{
	if (session_thread_is_stopped(s, gdb_id))
		return;
	/* out of memory: then a wait for this thread times out with a message */
	(void)ARRAY_PUSH(s->stopped_ids, s->nstopped_ids, s->stopped_ids_cap, gdb_id);
}

/* "12" → 12; "all" or missing → 0. */
int session_thread_id_of(const struct mi_record *ev)
{
	const char *id = mi_value_get_string(ev->results, "thread-id");
	return id ? atoi(id) : 0;
}

int session_timeout(const struct session_options *opts)
{
	return opts && opts->command_timeout_ms > 0 ? opts->command_timeout_ms : 15000;
}

/* A gdb that does not answer within the timeout is treated as dead: it is
 * ended at once (mi_conn_kill: SIGTERM, on which gdb detaches itself, then
 * SIGKILL), so that every later step takes the rescue path
 * (session_rescue) instead of waiting out one more timeout per command
 * with the target possibly held stopped. */
void session_give_up_on_gdb(struct session *s, const char *what)
{
	char why[256];
	snprintf(why, sizeof why, "did not %s within %d ms", what, s->timeout_ms);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: gdb %s: ending it\n", why);
	mi_conn_kill(s->gdb, why);
}

/* gdb is gone: put its int3s back at once, before the running target meets
 * one (the kernel let go of it when gdb died); the caller's error path
 * then finds the work done. */
void session_on_gdb_lost(struct session *s)
{
	if (s->gdb && !mi_conn_alive(s->gdb))
		session_rescue(s, NULL, NULL);
}

/* mi_conn_callv with the session's timeout; a session_command that got no answer at
 * all while gdb still runs gives up on gdb. */
int session_gdb_callv(struct session *s, struct mi_record **result, struct mi_error *me, const char *command,
		     const char *const *args)
{
	struct mi_record *r = NULL;
	int rc = mi_conn_callv(s->gdb, s->timeout_ms, &r, me, command, args);
	if (rc < 0 && !r && mi_conn_alive(s->gdb)) {
		char what[96];
		snprintf(what, sizeof what, "answer %.60s", command);
		session_give_up_on_gdb(s, what);
	}
	if (rc < 0)
		session_on_gdb_lost(s);
	*result = r;
	return rc;
}

/* Runs one MI command; on failure puts gdb's message into e. */
int session_command(struct session *s, struct mi_record **result, struct xerr *e, const char *command, ...)
{
	const char *args[16];
	size_t n = 0;
	va_list ap;
	va_start(ap, command);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && n < 15)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	struct mi_error me;
	struct mi_record *r = NULL;
	double t0 = monotonic_ms();
	int rc = session_gdb_callv(s, &r, &me, command, args);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: mi %s: %.3f ms%s\n", command, monotonic_ms() - t0, rc < 0 ? " (error)" : "");
	if (rc < 0) {
		xerr_set(e, "%s", me.message);
		mi_record_free(r);
		return -1;
	}
	if (result)
		*result = r;
	else
		mi_record_free(r);
	return 0;
}

/* Milliseconds left until deadline (monotonic ns), rounded up, 0 once it
 * has passed (a wait of the rounded-down count ended up to 1 ms early, and
 * a caller that loops to the deadline then spun on 0 ms waits). Waits for
 * a state gdb reports in several events are bounded as a whole: events
 * that keep coming (a library loaded, a thread started) must not keep
 * such a wait going forever. */
int session_ms_until(uint64_t deadline)
{
	uint64_t now = monotonic_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999u) / 1000000u);
}

uint64_t session_deadline_in(int ms)
{
	return monotonic_ns() + (uint64_t)ms * 1000000u;
}

/* Consumes events until *stopped; notes an exit of the target. */
int session_wait_stopped(struct session *s, struct xerr *e)
{
	struct mi_error me;
	struct mi_record *stopped = NULL;
	uint64_t deadline = session_deadline_in(s->timeout_ms);
	int got;
	/* In slices: a stop that will never be reported (session_exec_seen_in_proc)
	 * must not cost the whole timeout. */
	double exec_wait_ms = 0;
	while ((got = mi_conn_wait_stopped(s->gdb, 100, &stopped, &me)) == 0) {
		if (session_exec_seen_in_proc(s))
			return 0;
		if (session_exec_waits_on_gdb(s, &exec_wait_ms)) {
			session_give_up_on_gdb(s, "let the target's exec finish (its exited threads were not reaped)");
			return xerr_set(e, "process %d is exec'ing and gdb does not release its exited threads: gdb "
					"ended so the exec can finish", (int)s->pid);
		}
		if (session_ms_until(deadline) == 0) {
			session_give_up_on_gdb(s, "report the target stopped");
			return xerr_set(e, "gdb did not report process %d stopped within %d ms", (int)s->pid,
					s->timeout_ms);
		}
	}
	if (got < 0) {
		session_on_gdb_lost(s);
		return xerr_set(e, "%s", me.message);
	}
	session_track_exec_event(s, stopped);
	mi_record_free(stopped);
	return 0;
}

/* session_wait_event until deadline: 1 with *ev, -1 on error (in e), or 0
 * when the deadline passed, gdb then given up on for failing to `what`. */
int session_event_before(struct session *s, uint64_t deadline, const char *what, struct mi_record **ev,
			struct xerr *e)
{
	int got = session_wait_event(s, session_ms_until(deadline), ev, e);
	if (got == 0)
		session_give_up_on_gdb(s, what);
	return got;
}

/* ^running only says gdb accepted the command; *running says the threads
 * were resumed. Waiting for it keeps "resume, then read /proc states" from
 * seeing threads still in tracing stop. */
int session_wait_running(struct session *s, struct xerr *e)
{
	uint64_t deadline = session_deadline_in(s->timeout_ms);
	for (;;) {
		struct mi_record *ev;
		int got = session_event_before(s, deadline, "resume the target", &ev, e);
		if (got <= 0)
			return got < 0 ? -1
				       : xerr_set(e, "gdb did not resume process %d within %d ms", (int)s->pid,
						  s->timeout_ms);
		/* A *stopped here (the target exited, say) ends the wait as well. */
		bool settled = ev->kind == MI_RECORD_EXEC &&
			       (strcmp(ev->klass, "running") == 0 || strcmp(ev->klass, "stopped") == 0);
		mi_record_free(ev);
		if (settled)
			return 0;
	}
}

/* -thread-list-ids, not -thread-info: the latter describes every thread's
 * frame, which right after attaching costs milliseconds with the target
 * stopped (bench/README.md, "Figures behind the code"). */
int session_count_threads(struct session *s, size_t *count, struct xerr *e)
{
	struct mi_record *r;
	if (session_command(s, &r, e, "-thread-list-ids", NULL) < 0)
		return -1;
	long long n = 0;
	mi_value_get_int(r->results, "number-of-threads", &n);
	*count = n > 0 ? (size_t)n : 0;
	s->threads_counted = *count;
	mi_record_free(r);
	return 0;
}

bool session_is_thread_exited(const struct mi_record *ev)
{
	return ev->kind == MI_RECORD_NOTIFY && strcmp(ev->klass, "thread-exited") == 0;
}

/* Non-stop: after an attach or -exec-interrupt --all, gdb reports each
 * thread's stop on its own. Waits until it has reported every thread. */
int session_wait_all_threads_stopped(struct session *s, struct xerr *e)
{
	size_t total;
	if (session_count_threads(s, &total, e) < 0)
		return -1;
	uint64_t deadline = session_deadline_in(s->timeout_ms);
	while (s->nstopped_ids < total && !s->target_exited && !s->execed) {
		struct mi_record *ev;
		int got = session_event_before(s, deadline, "report every thread stopped", &ev, e);
		if (got < 0)
			return -1;
		if (got == 0) {
			char why[320];
			session_describe_threads_not_stopped(s->pid, why, sizeof why);
			return xerr_set(e, "gdb reported %zu of the %zu threads of process %d stopped within %d ms%s",
					s->nstopped_ids, total, (int)s->pid, s->timeout_ms, why);
		}
		bool recount = session_is_thread_exited(ev);
		mi_record_free(ev);
		if (recount && session_count_threads(s, &total, e) < 0)
			return -1;
	}
	return 0;
}

static int attach_gdb(struct session *s, pid_t pid, struct xerr *e)
{
	char pid_text[32];
	snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
	s->pid = pid;
	restore_set_init(&s->code, pid);
	s->code.leave_stopped = s->was_stopped_before;
	struct xerr attach_error;
	/* Loading symbols before attaching keeps that work out of the time the
	 * target spends stopped. A failure here is not fatal: attach loads them. */
	char exe[4096];
	/* A launched child is still xgdbprof until it execs: its symbols are
	 * not worth loading, but naming the file keeps attach from loading
	 * them when the session wants none. */
	bool symbols_late = s->symbols_after_attach && !s->launched_child;
	bool symbols_now = !s->no_symbols && !symbols_late;
	bool have_exe = proc_exe_path(pid, exe, sizeof exe, NULL) == 0;
	if ((!s->launched_child || s->no_symbols) && have_exe)
		session_command(s, NULL, NULL, symbols_now ? "-file-exec-and-symbols" : "-file-exec-file", exe, NULL);
	/* A launched child execs after the attach: gdb must still find the
	 * program it execs, so it forgets the libraries after that. */
	if (!symbols_now && !s->launched_child && session_forget_libraries(s, e) < 0)
		return -1;
	session_start_guardian(s, pid);
	s->attach_started = true;
	/* From before the attach request: ptrace stops the threads inside it. */
	double t0 = monotonic_ms();
	if (session_command(s, NULL, &attach_error, "-target-attach", pid_text, NULL) < 0) {
		/* First: ptrace refuses a zombie with EPERM, as it does a
		 * process of another user, and root gets it too. */
		char state = proc_state(pid);
		if (state == 0 || state == 'Z' || state == 'X')
			return xerr_set(e, "process %d exited while xgdbprof attached", (int)pid);
		if (strstr(attach_error.msg, "not permitted") || strstr(attach_error.msg, "ermission")) {
			char why[512];
			proc_explain_ptrace_denied(pid, why, sizeof why);
			return xerr_set(e, "%s", why);
		}
		return xerr_set(e, "gdb could not attach to process %d: %s", (int)pid, attach_error.msg);
	}
	s->attached = true;
	if ((s->non_stop ? session_wait_all_threads_stopped(s, e) : session_wait_stopped(s, e)) < 0)
		return xerr_prefix(e, "attaching to process %d", (int)pid);
	/* Without it gdb follows an exec silently and re-inserts our address
	 * breakpoints at the same numbers in the new program: "Cannot insert
	 * breakpoint", the resume aborted and the target left stopped. */
	const char *catch_exec[] = { "console", "catch exec", NULL };
	if (session_call(s, NULL, e, "-interpreter-exec", catch_exec) < 0)
		return xerr_prefix(e, "catching exec in process %d", (int)pid);
	s->have_exec_id = session_exec_identity(pid, s->exec_id);
	/* Attaching stops every thread; let the target go on right away. */
	int rc = session_resume(s, e);
	s->attach_hold_ms = monotonic_ms() - t0;
	if (s->verbose)
		fprintf(stderr, "xgdbprof: attach held process %d stopped for at most %.1f ms\n", (int)pid,
			s->attach_hold_ms);
	if (rc == 0 && symbols_late && have_exe &&
	    session_command(s, NULL, e, "-file-symbol-file", exe, NULL) < 0)
		return xerr_prefix(e, "reading the symbols of %s, process %d running", exe, (int)pid);
	return rc;
}

int session_attach(struct session **out, pid_t pid, const struct session_options *opts, struct xerr *e)
{
	*out = NULL;
	if (proc_check_target(pid, e) < 0)
		return -1;
	char state = proc_state(pid);
	struct session *s = session_new(opts, e);
	if (!s)
		return -1;
	s->was_stopped_before = state == 'T';
	if (attach_gdb(s, pid, e) < 0) {
		/* gdb held the target, or failed itself (stopped, gone): the
		 * run's environment, not the request */
		bool lost = s->attached || (s->gdb && (mi_conn_was_stalled(s->gdb) || !mi_conn_alive(s->gdb)));
		session_end(s, NULL);
		return lost ? SESSION_ATTACH_LOST : -1;
	}
	*out = s;
	return 0;
}

/* The launched command's own exec stops at the exec catchpoint: that one
 * is the launch itself, not the target changing programs. */
/* Runs a launched program from its exec stop to its entry point (AT_ENTRY)
 * and leaves it stopped there: ld.so has mapped and relocated every library
 * and run their constructors, and not one instruction of the program itself
 * has run. gdb's temporary breakpoint is gone once hit. */
static int run_to_entry(struct session *s, struct xerr *e)
{
	uint64_t entry = session_auxv_value(s->pid, AT_ENTRY);
	if (!entry)
		return xerr_set(e, "cannot read the entry point of process %d from /proc/%d/auxv", (int)s->pid,
				(int)s->pid);
	char where[32];
	snprintf(where, sizeof where, "*0x%llx", (unsigned long long)entry);
	if (session_remember_code_byte(s, entry, e) < 0 || session_command(s, NULL, e, "-break-insert", "-t", where, NULL) < 0)
		return xerr_prefix(e, "holding process %d at its entry point", (int)s->pid);
	if (session_resume(s, e) < 0)
		return -1;
	while (!s->stopped && !s->target_exited && !s->execed)
		if (session_wait_stopped(s, e) < 0)
			return xerr_prefix(e, "holding process %d at its entry point", (int)s->pid);
	s->held_at_entry = s->stopped && !s->target_exited && !s->execed;
	return 0;
}

static int wait_launch_exec(struct session *s, struct xerr *e)
{
	while (!s->execed && !s->target_exited) {
		struct mi_record *ev;
		int got = session_wait_event(s, s->timeout_ms, &ev, e);
		if (got < 0)
			return -1;
		if (got == 0)
			return xerr_set(e, "gdb did not report the exec of process %d within %d ms", (int)s->pid,
					s->timeout_ms);
		mi_record_free(ev);
	}
	s->execed = false;
	free(s->exec_path);
	s->exec_path = NULL;
	s->have_exec_id = session_exec_identity(s->pid, s->exec_id);
	if (s->target_exited)
		return 0;
	return s->hold_at_entry ? run_to_entry(s, e) : session_resume(s, e);
}

/* The child side of session_launch: waits on `go_fd` until gdb is attached,
 * then execs. An exec failure is written to `status_fd` (close-on-exec, so
 * the parent reads EOF when the exec worked). */
static void launched_child_main(char *const argv[], int go_fd, int status_fd)
{
	char go;
	ssize_t n;
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);
	close(go_fd);
	execvp(argv[0], argv);
	int err = errno;
	ssize_t w = write(status_fd, &err, sizeof err);
	(void)w;
	_exit(127);
}

int session_launch(struct session **out, char *const argv[], const struct session_options *opts,
		   struct xerr *e)
{
	*out = NULL;
	if (!argv || !argv[0])
		return xerr_set(e, "no command given after --");
	struct session *s = session_new(opts, e);
	if (!s)
		return -1;
	int go[2], status[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0) {
		session_end(s, NULL);
		return xerr_set(e, "pipe: %s", strerror(errno));
	}
	pid_t child = fork();
	if (child < 0) {
		session_end(s, NULL);
		return xerr_set(e, "fork: %s", strerror(errno));
	}
	if (child == 0) {
		/* The go pipe must survive until exec, then vanish. */
		close(go[1]);
		close(status[0]);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		launched_child_main(argv, go[0], status[1]);
	}
	close(go[0]);
	close(status[1]);
	s->launched_child = child;
	int rc = attach_gdb(s, child, e);
	/* Let it exec (or, if attaching failed, let it exec untraced: either way
	 * the command the user asked for runs). */
	char byte = 'g';
	ssize_t w = write(go[1], &byte, 1);
	(void)w;
	close(go[1]);
	int exec_errno = 0;
	ssize_t n;
	do
		n = read(status[0], &exec_errno, sizeof exec_errno);
	while (n < 0 && errno == EINTR);
	close(status[0]);
	if (n == (ssize_t)sizeof exec_errno) {
		int ignored;
		session_end(s, NULL);
		waitpid(child, &ignored, 0);
		if (exec_errno == ENOENT)
			return xerr_set(e, "command not found: %s (check the name, or give its full path)", argv[0]);
		return xerr_set(e, "cannot run %s: %s", argv[0], strerror(exec_errno));
	}
	if (rc == 0)
		rc = wait_launch_exec(s, e);
	if (rc < 0) {
		session_end(s, NULL);
		return -1;
	}
	if (s->no_symbols) {
		session_drop_symbols_after_exec(s);
		/* A command held at its entry point stays held (session.h). */
		if (session_stop(s, e) < 0 || session_forget_libraries(s, e) < 0 ||
		    (!s->held_at_entry && session_resume(s, e) < 0)) {
			session_end(s, NULL);
			return -1;
		}
	}
	*out = s;
	return 0;
}

pid_t session_pid(const struct session *s)
{
	return s->pid;
}

double session_attach_hold_ms(const struct session *s)
{
	return s->attach_hold_ms;
}

bool session_held_at_entry(const struct session *s)
{
	return s->held_at_entry;
}

pid_t session_launched_child(const struct session *s)
{
	return s->launched_child;
}

bool session_is_stopped(const struct session *s)
{
	return s->stopped;
}

/* session_internal.h. gdb reports one thread's event at a time (all-stop)
 * and keeps the others' for the next resume; a thread's siginfo says which
 * signal it holds. */
int session_threads_holding_signal(struct session *s, int signo, int skip_id)
{
	struct mi_record *r = NULL;
	if (session_command(s, &r, NULL, "-thread-list-ids", NULL) < 0)
		return 0;
	const struct mi_value *ids = mi_value_get(r->results, "thread-ids");
	int found = 0;
	for (size_t i = 0; i < mi_value_count(ids); i++) {
		const char *id = mi_value_string(mi_value_at(ids, i));
		if (!id || atoi(id) == skip_id)
			continue;
		struct mi_record *v = NULL, *sender = NULL;
		/* a thread in a group stop has no siginfo: an error, skipped */
		if (session_command(s, &v, NULL, "-data-evaluate-expression", "--thread", id, "--frame", "0",
				    "$_siginfo.si_signo", NULL) == 0) {
			const char *value = mi_value_get_string(v->results, "value");
			if (value && atoi(value) == signo &&
			    session_command(s, &sender, NULL, "-data-evaluate-expression", "--thread", id, "--frame",
					    "0", "$_siginfo._sifields._kill.si_pid", NULL) == 0) {
				const char *pid = mi_value_get_string(sender->results, "value");
				pid_t from = pid ? (pid_t)atol(pid) : 0;
				if (from != mi_conn_gdb_pid(s->gdb) && from != getpid())
					found++;
			}
		}
		mi_record_free(v);
		mi_record_free(sender);
	}
	mi_record_free(r);
	return found;
}

/* All-stop: a thread that took the user's SIGCONT while gdb reported
 * another's SIGSTOP holds it (session_threads_holding_signal): neither
 * the target's pending signals nor gdb's records show it, and the target
 * was held for the rest of the run (tests/stop_storm.sh, 1 round in ~15
 * beside two CPU loops). Asked once per stop (stop_seq): a SIGCONT that
 * comes later waits in the pending signals. */
static bool sigcont_held_by_gdb(struct session *s)
{
	if (s->sigcont_checked_stop == s->stop_seq)
		return false;
	s->sigcont_checked_stop = s->stop_seq;
	bool found = session_threads_holding_signal(s, SIGCONT, 0) > 0;
	if (found && s->verbose)
		fprintf(stderr, "xgdbprof: process %d: a thread took a SIGCONT gdb has not reported yet: resumed\n",
			(int)s->pid);
	return found;
}

bool session_held_by_user_stop(struct session *s)
{
	if (!s->stopped_by_other || proc_signal_pending(s->pid, SIGCONT))
		return false;
	return s->non_stop || !s->stopped || !sigcont_held_by_gdb(s);
}

/* session.h. All-stop, a stop of the user's in effect: gdb holds every
 * thread, so none can take the user's SIGCONT and gdb never reports it;
 * the target was held for good after a STOP/CONT storm
 * (tests/stop_storm.sh). It is resumed once that SIGCONT waits in its
 * pending signals (or in gdb, session_held_by_user_stop), and left as the
 * user stopped it until then (a resume would only bring the same stop
 * back). */
int session_resume_signal_stop(struct session *s, struct xerr *e)
{
	if (s->stopped && !s->target_exited && !s->execed && !s->exec_path &&
	    (s->non_stop || !session_held_by_user_stop(s)))
		return session_resume(s, e);
	return 0;
}

bool session_target_alive(struct session *s)
{
	if (s->target_exited)
		return false;
	char state = proc_state(s->pid);
	return state != 0 && state != 'Z' && state != 'X';
}

bool session_leader_exited(struct session *s)
{
	char state = proc_state(s->pid);
	if (s->target_exited || (state != 'Z' && state != 'X'))
		return false;
	/* A process on its way out (exit_group) has a zombie leader too
	 * until its last thread is gone: 200 ms of threads still alive tell
	 * the two apart. A thread gdb holds (t: a hit, a fork event, a
	 * sampling stop) is alive: with "RSD" alone, a target whose one
	 * remaining thread forked often was found held at one of the ten
	 * looks and taken for an exiting process. */
	return proc_threads_stay_in(s->pid, "RSDt", 10, 20);
}

bool session_target_dead_in_proc(struct session *s)
{
	/* any state but Z (zombie) and X (dead) is a living thread */
	return !s->target_exited && !proc_any_thread_in(s->pid, "RSDTtWPIK");
}

const char *session_exit_signal(struct session *s)
{
	if (session_target_alive(s))
		return NULL;
	uint64_t deadline = session_deadline_in(1000);
	while (!s->exit_reported && session_gdb_alive(s)) {
		struct mi_record *ev = NULL;
		int got = session_wait_event(s, session_ms_until(deadline), &ev, NULL);
		mi_record_free(ev);
		if (got <= 0)
			break;
	}
	return s->exit_signal[0] ? s->exit_signal : NULL;
}

void session_note_target_exited(struct session *s)
{
	s->target_exited = true;
}

bool session_target_execed(struct session *s)
{
	return session_exec_seen_in_proc(s);
}

const char *session_exec_path(const struct session *s)
{
	return s->exec_path;
}

unsigned long session_forks(const struct session *s)
{
	return s->forks;
}

void session_on_fork(struct session *s, void (*fn)(void *ctx, pid_t child), void *ctx)
{
	s->on_fork = fn;
	s->on_fork_ctx = ctx;
}

bool session_non_stop(const struct session *s)
{
	return s->non_stop;
}

unsigned session_attach_generation(const struct session *s)
{
	return s->attach_generation;
}

unsigned session_reattaches(const struct session *s, double *ms)
{
	if (ms)
		*ms = s->reattach_ms;
	return s->reattaches;
}

int session_call(struct session *s, struct mi_record **result, struct xerr *e, const char *command,
		 const char *const *args)
{
	struct mi_error me;
	struct mi_record *r = NULL;
	if (result)
		*result = NULL;
	if (session_gdb_callv(s, &r, &me, command, args) < 0) {
		mi_record_free(r);
		return xerr_set(e, "%s", me.message);
	}
	if (result)
		*result = r;
	else
		mi_record_free(r);
	return 0;
}

int session_wait_event(struct session *s, int timeout_ms, struct mi_record **event, struct xerr *e)
{
	struct mi_error me;
	struct mi_record *ev = NULL;
	*event = NULL;
	int got = mi_conn_next_event(s->gdb, timeout_ms, &ev, &me);
	if (got < 0) {
		session_on_gdb_lost(s);
		return xerr_set(e, "%s", me.message);
	}
	if (got == 1) {
		s->records_read++;
		session_track_exec_event(s, ev);
	}
	if (!s->stall_said && mi_conn_was_stalled(s->gdb)) {
		/* Resumed, gdb answers again; the run ends through the normal
		 * detach, which also takes a thread out of a breakpoint trap it
		 * met meanwhile (killing gdb would have delivered the SIGTRAP). */
		s->stall_said = true;
		mi_record_free(ev);
		return xerr_set(e, "gdb was found stopped (state T: someone sent it SIGSTOP) for over %d ms while it "
				"held process %d; xgdbprof resumed it and ends the run", GDB_STALL_KILL_MS, (int)s->pid);
	}
	if (got == 0)
		return 0;
	*event = ev;
	return 1;
}

int session_idle(struct session *s, int timeout_ms, struct xerr *e)
{
	uint64_t deadline = session_deadline_in(timeout_ms > 0 ? timeout_ms : 0);
	bool was_stopped = s->stopped;
	for (;;) {
		struct mi_record *ev = NULL;
		s->idle_wait = true;
		int got = session_wait_event(s, session_ms_until(deadline), &ev, e);
		s->idle_wait = false;
		mi_record_free(ev);
		if (got < 0)
			return -1;
		/* An exec holds the target stopped at its catchpoint, a signal
		 * gdb stops on (the user's SIGCONT, SIGUSR1) holds it too: the
		 * caller must see either now, not at the deadline. */
		if (s->execed || (s->stopped && !was_stopped))
			return 0;
		if (got == 0)
			return session_heal_unreported_stop(s, e);
	}
}

bool session_gdb_alive(struct session *s)
{
	return s->gdb && mi_conn_alive(s->gdb);
}


/* Last resort when gdb is gone: the kernel detaches a dead tracer's tracees,
 * but threads gdb had stopped can be left in a group stop (state T), and the
 * detach itself completes asynchronously. Watch every thread for a while
 * and wake the process while any is stopped. */
void session_rescue_stopped_target(struct session *s)
{
	if (s->pid > 0 && !s->was_stopped_before)
		session_continue_stopped_target(s->pid, false, 30);
}

int session_remember_code_byte(struct session *s, uint64_t addr, struct xerr *e)
{
	return restore_set_remember(&s->code, addr, e);
}

static int remember_ours(struct session *s, uint64_t addr, const uint8_t *original, const uint8_t *patched,
			 size_t n, enum restore_kind kind, struct xerr *e)
{
	size_t before = s->code.n;
	if (restore_set_remember_patch(&s->code, addr, original, patched, n, kind, e) < 0)
		return -1;
	/* the guardian puts them back should xgdbprof be killed outright:
	 * gdb's detach takes out its breakpoints, not what we wrote */
	if (s->code.n == before)
		return 0;
	struct guardian_patch *told = calloc(n, sizeof *told);   /* padding zeroed: it goes down the pipe too */
	if (!told)
		return xerr_oom(e);
	for (size_t i = 0; i < n; i++) {
		told[i].addr = addr + i;
		told[i].original = original[i];
		told[i].patched = patched ? patched[i] : 0;
		told[i].kind = (uint8_t)kind;
	}
	session_tell_guardian_patches(s, told, n);
	free(told);
	return 0;
}

int session_remember_patch(struct session *s, uint64_t addr, const uint8_t *original, const uint8_t *patched,
			   size_t n, bool keep, struct xerr *e)
{
	return remember_ours(s, addr, original, patched, n, keep ? RESTORE_KEEP : RESTORE_PATCH, e);
}

int session_remember_unused(struct session *s, uint64_t addr, const uint8_t *original, size_t n, struct xerr *e)
{
	return remember_ours(s, addr, original, NULL, n, RESTORE_LEAVE, e);
}

void session_set_call_mark(struct session *s, uint64_t mark)
{
	s->code.call_mark = mark;
	struct guardian_patch p;
	memset(&p, 0, sizeof p);
	p.addr = mark;
	p.kind = GUARDIAN_CALL_MARK;
	session_tell_guardian_patch(s, &p);
}

const struct restore_set *session_code_bytes(const struct session *s)
{
	return &s->code;
}

/* True once gdb is gone: it died, or stopped answering (no answer within
 * the command timeout, or stopped in state T for a second) and was killed. */
static bool session_gdb_lost(struct session *s)
{
	return s->gdb ? !mi_conn_alive(s->gdb) : s->attach_started;
}

int session_rescue(struct session *s, struct restore_report *report, struct xerr *e)
{
	if (report)
		memset(report, 0, sizeof *report);
	if (s->rescued) {
		if (report)
			*report = s->rescue_report;
		return 1;
	}
	if (!s->attach_started || s->pid <= 0 || !session_gdb_lost(s))
		return 0;
	s->rescued = true;
	/* Its pipes are closed once it is reaped; the kernel lets go of the
	 * target on its own time, which restore waits for. */
	int rc = restore_set_after_gdb_died(&s->code, 2000, &s->rescue_report, e);
	session_rescue_stopped_target(s);
	if (report)
		*report = s->rescue_report;
	return rc < 0 ? -1 : 1;
}

int session_end(struct session *s, struct xerr *e)
{
	if (!s)
		return 0;
	int rc = 0;
	bool detached = false;
	struct xerr detach_error = { "" };
	uint64_t t_start = monotonic_ns();
	if (s->gdb && mi_conn_alive(s->gdb) && s->attached && !s->target_exited) {
		/* -target-detach resumes a stopped target; it needs all threads
		 * stopped in all-stop mode, so stop first if running (in
		 * non-stop mode gdb stops them itself). */
		if (!s->stopped && !s->non_stop && !s->execed && session_target_alive(s))
			session_stop(s, NULL);
		/* A thread still holds gdb's own SIGSTOP (note_signal): the
		 * detach would pass it on and stop the target. No stop of the
		 * user's is in effect, so none is lost. */
		if (session_take_drop_signal(s, 0) && !s->stopped_by_other)
			session_pass_stop_signals(s, false);
		s->stopping_threads = true;
		if (session_command(s, NULL, &detach_error, "-target-detach", NULL) < 0)
			rc = -1;
		else
			detached = true;
		s->stopping_threads = false;
	}
	if (s->reattaches > 1)
		fprintf(stderr, "xgdbprof: gdb lost %u stops in all (around the target's vforks, or its user's stops "
			"and continues), each mended by a new attach: %.0f ms of stops with every thread held\n",
			s->reattaches, s->reattach_ms);
	bool gdb_died = s->gdb && !mi_conn_alive(s->gdb);
	/* Every int3 a dead gdb planted (ours, and its own such as ld.so's
	 * shared-library event breakpoint) goes before anything else. */
	struct xerr rescue_error = { "" };
	bool rescue_failed = gdb_died && session_rescue(s, NULL, &rescue_error) < 0;
	uint64_t t_detached = monotonic_ns();
	/* A stop gdb had asked for and not yet delivered when it detached
	 * (an -exec-interrupt sent to a gdb that was itself stopped, taken up
	 * once it was continued: bench/stress_harm.sh's heap-mallctl with
	 * stop-gdb, 2 of 10 rounds) lands as a group stop after the detach.
	 * Ours: continued, as the rescue does; a stop of someone else's stays.
	 * The target is gdb's no more: its watch runs while gdb exits (after
	 * a detach from 200 threads, 0.4-0.5 s under load, one after the other
	 * before), and again should a thread be found stopped once gdb is gone. */
	bool watch = detached && s->pid > 0 && !s->was_stopped_before && !s->stopped_by_other;
	if (watch) {
		mi_conn_ask_exit(s->gdb);
		session_continue_stopped_target(s->pid, true, 30);
	}
	uint64_t t_watched = monotonic_ns();
	if (s->gdb)
		mi_conn_close(s->gdb, 3000);
	s->gdb = NULL;
	if (watch && proc_any_thread_in(s->pid, "T"))
		session_continue_stopped_target(s->pid, true, 30);
	/* gdb killed in the middle of attaching has already stopped threads.
	 * (session_rescue, when it ran, has watched them already.) */
	if (!detached && !s->rescued && (s->attached || (s->attach_started && gdb_died)))
		session_rescue_stopped_target(s);
	char state = s->pid > 0 ? proc_state(s->pid) : 0;
	if (state && state != 'Z' && proc_any_thread_in(s->pid, "Tt") && !s->was_stopped_before) {
		rc = xerr_set(e, "process %d is still stopped after detaching (%s); resume it with `kill -CONT %d`",
			      (int)s->pid, detach_error.msg[0] ? detach_error.msg : "state T", (int)s->pid);
	} else if (rescue_failed) {
		rc = xerr_set(e, "%s", rescue_error.msg);
	} else {
		/* Detach failed, but the target runs (gdb exiting detaches too) or
		 * has exited by itself: nothing is left to undo. */
		rc = 0;
	}
	uint64_t t_gdb_gone = monotonic_ns();
	session_stop_guardian(s);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: session end: detach %.0f ms, watching the target for a late stop %.0f ms, "
			"gdb's exit %.0f ms more, the guardian's exit %.0f ms\n", (double)(t_detached - t_start) / 1e6,
			(double)(t_watched - t_detached) / 1e6, (double)(t_gdb_gone - t_watched) / 1e6,
			(double)(monotonic_ns() - t_gdb_gone) / 1e6);
	free(s->stopped_ids);
	restore_set_release(&s->code);
	free(s->exec_path);
	free(s);
	return rc;
}
