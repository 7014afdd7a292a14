#include "config.h"
#include "util/compare.h"
#include "session/session.h"
#include "session/session_internal.h"

#include "mi_conn.h"
#include "mi_record.h"
#include "mi_value.h"
#include "util/array.h"
#include "util/clock.h"
#include "session/restore.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct session {
	struct mi_conn *gdb;
	pid_t pid;
	pid_t launched_child;      /* our child when launched, else 0 */
	bool stopped;              /* gdb reported the target (non-stop: some thread) stopped */
	bool non_stop;             /* gdb's non-stop mode: stops hold only the threads asked for */
	int *stopped_ids;          /* non-stop: gdb ids of the threads gdb reports stopped */
	size_t nstopped_ids, stopped_ids_cap;
	bool target_exited;
	bool was_stopped_before;   /* target in state T before we came: keep it so */
	pid_t guardian;            /* start_guardian's process, 0 if none */
	int guardian_fd;           /* its pipe: one byte when we ended the session ourselves */
	bool attached;             /* gdb holds the target: detach on the way out */
	bool attach_started;       /* -target-attach was sent: gdb may have stopped threads */
	bool no_symbols;           /* session_options.no_symbols */
	bool hold_at_entry;        /* session_options.hold_at_entry */
	bool held_at_entry;        /* stopped at the entry point, not resumed since */
	double attach_hold_ms;     /* the attach's stop, from the request to the resume */
	bool execed;               /* gdb reported an exec: stopped in the new program */
	char *exec_path;           /* the new program, as gdb names it */
	unsigned char exec_id[16]; /* AT_RANDOM's bytes: new at every exec (exec_identity) */
	bool have_exec_id;
	double exec_suspected_ms;  /* when /proc first showed a new program gdb had not reported */
	unsigned long forks;       /* forks gdb reported (catch fork, set by the tracer) */
	void (*on_fork)(void *ctx, pid_t child);
	void *on_fork_ctx;
	int timeout_ms;
	bool verbose;
	/* Code bytes under the breakpoints a module asked for, and the rescue
	 * that puts every int3 back should gdb die or be given up on. */
	struct restore_set code;
	bool rescued;
	struct restore_report rescue_report;
	bool stall_said;           /* the run was told gdb had been found stopped */
};

/* How long gdb may sit stopped (someone sent it SIGSTOP) before it counts
 * as dead: the target may be held stopped all that time. */
#define GDB_STALL_KILL_MS 1000

static const char *gdb_default_path(const struct session_options *opts)
{
	/* --gdb, then $XGDBPROF_GDB, then the configured default. */
	if (opts && opts->gdb_path)
		return opts->gdb_path;
	const char *env = getenv("XGDBPROF_GDB");
	if (env && *env)
		return env;
	return XGDBPROF_GDB_DEFAULT;
}

/* Checks the gdb to use exists and is >= 10. Fills *path_out with the gdb
 * chosen (opts->gdb_path, else $XGDBPROF_GDB, else the configured default). */
static int session_check_gdb(const struct session_options *opts, const char **path_out, struct xerr *e)
{
	const char *path = gdb_default_path(opts);
	int major = 0, minor = 0;
	struct mi_error me;
	if (path_out)
		*path_out = path;
	if (mi_gdb_version(path, &major, &minor, &me) < 0)
		return xerr_set(e, "cannot run gdb (%s): %s; install it with `apt-get install gdb`, "
				"or point XGDBPROF_GDB at a gdb binary", path, me.message);
	if (major < 10)
		return xerr_set(e, "%s is gdb %d.%d, xgdbprof needs gdb 10 or newer (for MI3): "
				"install a newer gdb or point XGDBPROF_GDB at one", path, major, minor);
	return 0;
}

static bool is_exit_reason(const char *reason)
{
	return reason && (strcmp(reason, "exited") == 0 || strcmp(reason, "exited-normally") == 0 ||
			  strcmp(reason, "exited-signalled") == 0);
}

static bool thread_is_stopped(const struct session *s, int gdb_id)
{
	for (size_t i = 0; i < s->nstopped_ids; i++)
		if (s->stopped_ids[i] == gdb_id)
			return true;
	return false;
}

static void forget_stopped_thread(struct session *s, int gdb_id)
{
	for (size_t i = 0; i < s->nstopped_ids; i++)
		if (s->stopped_ids[i] == gdb_id) {
			s->stopped_ids[i] = s->stopped_ids[--s->nstopped_ids];
			return;
		}
}

static void note_stopped_thread(struct session *s, int gdb_id)
{
	if (thread_is_stopped(s, gdb_id))
		return;
	/* out of memory: then a wait for this thread times out with a message */
	(void)ARRAY_PUSH(s->stopped_ids, s->nstopped_ids, s->stopped_ids_cap, gdb_id);
}

/* "12" → 12; "all" or missing → 0. */
static int thread_id_of(const struct mi_record *ev)
{
	const char *id = mi_value_get_string(ev->results, "thread-id");
	return id ? atoi(id) : 0;
}

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
static uint64_t auxv_value(pid_t pid, uint64_t type)
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
static bool exec_identity(pid_t pid, unsigned char out[16])
{
	uint64_t at = auxv_value(pid, AT_RANDOM);
	if (!at)
		return false;   /* mid-exec: no auxv yet */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = pread(fd, out, 16, (off_t)at) == 16;
	close(fd);
	return ok;
}

/* gdb re-inserts our breakpoints at their old addresses right after it
 * follows an exec, before it checks the exec catchpoint; where the new
 * program has no memory there the insertion fails, gdb drops the event,
 * reports no stop and leaves the process stopped. Seen from /proc
 * instead, once gdb has had half a second to report it (a detach while
 * gdb has the exec event still pending runs the new program with the old
 * one's registers: seen to crash it). The detach works then. */
static bool exec_seen_in_proc(struct session *s)
{
	unsigned char now[16];
	if (s->execed || !s->have_exec_id || !exec_identity(s->pid, now) || memcmp(now, s->exec_id, 16) == 0)
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
static bool exec_waits_on_gdb(struct session *s, double *since_ms)
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

/* Keeps the session's view of the target in step with gdb's records:
 * *stopped (possibly because it exited), *running, and in non-stop mode
 * which threads each of them concerns. */
static void track_exec_event(struct session *s, const struct mi_record *ev)
{
	if (ev->kind == MI_RECORD_NOTIFY && s->non_stop && strcmp(ev->klass, "thread-exited") == 0) {
		const char *id = mi_value_get_string(ev->results, "id");
		if (id)
			forget_stopped_thread(s, atoi(id));
		s->stopped = s->nstopped_ids > 0;
		return;
	}
	if (ev->kind != MI_RECORD_EXEC)
		return;
	int id = thread_id_of(ev);
	if (strcmp(ev->klass, "stopped") == 0) {
		const char *reason = mi_value_get_string(ev->results, "reason");
		if (is_exit_reason(reason))
			s->target_exited = true;
		if (reason && strcmp(reason, "exec") == 0)
			note_exec(s, ev);
		if (reason && strcmp(reason, "fork") == 0)
			note_fork(s, ev);
		if (!s->non_stop)
			s->stopped = true;
		else if (id > 0)
			note_stopped_thread(s, id);
	} else if (strcmp(ev->klass, "running") == 0) {
		if (!s->non_stop)
			s->stopped = false;
		else if (id > 0)
			forget_stopped_thread(s, id);
		else
			s->nstopped_ids = 0;   /* thread-id="all" */
	}
	if (s->non_stop)
		s->stopped = s->nstopped_ids > 0;
}

static int session_timeout(const struct session_options *opts)
{
	return opts && opts->command_timeout_ms > 0 ? opts->command_timeout_ms : 15000;
}

/* A gdb that does not answer within the timeout is treated as dead: it is
 * ended at once (mi_conn_kill: SIGTERM, on which gdb detaches itself, then
 * SIGKILL), so that every later step takes the rescue path
 * (session_rescue) instead of waiting out one more timeout per command
 * with the target possibly held stopped. */
static void give_up_on_gdb(struct session *s, const char *what)
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
static void on_gdb_lost(struct session *s)
{
	if (s->gdb && !mi_conn_alive(s->gdb))
		session_rescue(s, NULL, NULL);
}

/* mi_conn_callv with the session's timeout; a call that got no answer at
 * all while gdb still runs gives up on gdb. */
static int gdb_callv(struct session *s, struct mi_record **result, struct mi_error *me, const char *command,
		     const char *const *args)
{
	struct mi_record *r = NULL;
	int rc = mi_conn_callv(s->gdb, s->timeout_ms, &r, me, command, args);
	if (rc < 0 && !r && mi_conn_alive(s->gdb)) {
		char what[96];
		snprintf(what, sizeof what, "answer %.60s", command);
		give_up_on_gdb(s, what);
	}
	if (rc < 0)
		on_gdb_lost(s);
	*result = r;
	return rc;
}

/* Runs one MI command; on failure puts gdb's message into e. */
static int call(struct session *s, struct mi_record **result, struct xerr *e, const char *command, ...)
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
	int rc = gdb_callv(s, &r, &me, command, args);
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

/* Milliseconds left until deadline (monotonic ns), at least 0. Waits for
 * a state gdb reports in several events are bounded as a whole: events
 * that keep coming (a library loaded, a thread started) must not keep
 * such a wait going forever. */
static int ms_until(uint64_t deadline)
{
	uint64_t now = monotonic_ns();
	return now >= deadline ? 0 : (int)((deadline - now) / 1000000u);
}

static uint64_t deadline_in(int ms)
{
	return monotonic_ns() + (uint64_t)ms * 1000000u;
}

/* Consumes events until *stopped; notes an exit of the target. */
static int wait_stopped(struct session *s, struct xerr *e)
{
	struct mi_error me;
	struct mi_record *stopped = NULL;
	uint64_t deadline = deadline_in(s->timeout_ms);
	int got;
	/* In slices: a stop that will never be reported (exec_seen_in_proc)
	 * must not cost the whole timeout. */
	double exec_wait_ms = 0;
	while ((got = mi_conn_wait_stopped(s->gdb, 100, &stopped, &me)) == 0) {
		if (exec_seen_in_proc(s))
			return 0;
		if (exec_waits_on_gdb(s, &exec_wait_ms)) {
			give_up_on_gdb(s, "let the target's exec finish (its exited threads were not reaped)");
			return xerr_set(e, "process %d is exec'ing and gdb does not release its exited threads: gdb "
					"ended so the exec can finish", (int)s->pid);
		}
		if (ms_until(deadline) == 0) {
			give_up_on_gdb(s, "report the target stopped");
			return xerr_set(e, "gdb did not report process %d stopped within %d ms", (int)s->pid,
					s->timeout_ms);
		}
	}
	if (got < 0) {
		on_gdb_lost(s);
		return xerr_set(e, "%s", me.message);
	}
	track_exec_event(s, stopped);
	mi_record_free(stopped);
	return 0;
}

/* session_wait_event until deadline: 1 with *ev, -1 on error (in e), or 0
 * when the deadline passed, gdb then given up on for failing to `what`. */
static int event_before(struct session *s, uint64_t deadline, const char *what, struct mi_record **ev,
			struct xerr *e)
{
	int got = session_wait_event(s, ms_until(deadline), ev, e);
	if (got == 0)
		give_up_on_gdb(s, what);
	return got;
}

/* ^running only says gdb accepted the command; *running says the threads
 * were resumed. Waiting for it keeps "resume, then read /proc states" from
 * seeing threads still in tracing stop. */
static int wait_running(struct session *s, struct xerr *e)
{
	uint64_t deadline = deadline_in(s->timeout_ms);
	for (;;) {
		struct mi_record *ev;
		int got = event_before(s, deadline, "resume the target", &ev, e);
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
 * frame, which right after attaching cost ~15 ms with the target stopped. */
static int count_threads(struct session *s, size_t *count, struct xerr *e)
{
	struct mi_record *r;
	if (call(s, &r, e, "-thread-list-ids", NULL) < 0)
		return -1;
	long long n = 0;
	mi_value_get_int(r->results, "number-of-threads", &n);
	*count = n > 0 ? (size_t)n : 0;
	mi_record_free(r);
	return 0;
}

static bool is_thread_exited(const struct mi_record *ev)
{
	return ev->kind == MI_RECORD_NOTIFY && strcmp(ev->klass, "thread-exited") == 0;
}

/* Non-stop: after an attach or -exec-interrupt --all, gdb reports each
 * thread's stop on its own. Waits until it has reported every thread. */
static int wait_all_threads_stopped(struct session *s, struct xerr *e)
{
	size_t total;
	if (count_threads(s, &total, e) < 0)
		return -1;
	uint64_t deadline = deadline_in(s->timeout_ms);
	while (s->nstopped_ids < total && !s->target_exited && !s->execed) {
		struct mi_record *ev;
		int got = event_before(s, deadline, "report every thread stopped", &ev, e);
		if (got <= 0)
			return got < 0 ? -1
				       : xerr_set(e, "gdb reported %zu of the %zu threads of process %d stopped within %d ms",
						  s->nstopped_ids, total, (int)s->pid, s->timeout_ms);
		bool recount = is_thread_exited(ev);
		mi_record_free(ev);
		if (recount && count_threads(s, &total, e) < 0)
			return -1;
	}
	return 0;
}

/* "GNU gdb (Debian 13.1-3) 13.1\n..." -> 13, 1: the last number of the first line. */
static void parse_gdb_version(const char *text, int *major, int *minor)
{
	const char *end = strchr(text, '\n');
	if (!end)
		end = text + strlen(text);
	const char *p = end;
	while (p > text && p[-1] != ' ')
		p--;
	if (sscanf(p, "%d.%d", major, minor) < 1)
		*major = *minor = 0;
}

static struct session *session_new(const struct session_options *opts, struct xerr *e)
{
	const char *gdb_path = gdb_default_path(opts);
	struct session *s = calloc(1, sizeof *s);
	if (!s) {
		xerr_set(e, "out of memory");
		return NULL;
	}
	s->timeout_ms = session_timeout(opts);
	s->verbose = opts && opts->verbose;
	struct mi_conn_options mo = { .gdb_path = gdb_path, .startup_timeout_ms = s->timeout_ms,
				      .stall_kill_ms = GDB_STALL_KILL_MS };
	struct mi_error me;
	s->gdb = mi_conn_spawn(&mo, &me);
	if (!s->gdb) {
		/* Say why precisely: missing, too old (no MI3), or something else. */
		if (session_check_gdb(opts, NULL, e) == 0)
			xerr_set(e, "cannot start gdb (%s): %s", gdb_path, me.message);
		free(s);
		return NULL;
	}
	/* The running gdb tells its version (a separate `gdb --version` would
	 * cost a whole gdb start-up). MI3 exists since gdb 9; we need 10. */
	struct mi_record *version = NULL;
	int major = 0, minor = 0;
	if (call(s, &version, NULL, "-gdb-version", NULL) == 0 && version->console)
		parse_gdb_version(version->console, &major, &minor);
	mi_record_free(version);
	if (major < 10) {
		xerr_set(e, "%s is gdb %d.%d, xgdbprof needs gdb 10 or newer (for MI3): "
			 "install a newer gdb or point XGDBPROF_GDB at one", gdb_path, major, minor);
		mi_conn_free(s->gdb);
		free(s);
		return NULL;
	}
	/* Every stop makes gdb describe the stopped frame; evaluating the
	 * arguments of a Rust frame there costs milliseconds per stop and we
	 * never read them. */
	call(s, NULL, NULL, "-gdb-set", "print", "frame-arguments", "none", NULL);
	call(s, NULL, NULL, "-gdb-set", "print", "entry-values", "no", NULL);
	/* The reference walker must see the same frames as ours: past main too. */
	call(s, NULL, NULL, "-gdb-set", "backtrace", "past-main", "on", NULL);
	/* gdb reads the shared libraries' symbols while attaching, with every
	 * thread stopped; with Debian's libc6-dbg present (gdb recommends it)
	 * that meant decompressing and indexing libc's DWARF: ~220 ms of the
	 * ~270 ms attach stop here. A session that takes only registers from
	 * gdb does not need it (our symbolizer reads those files itself). */
	if (opts && (opts->no_separate_debug || opts->no_symbols))
		call(s, NULL, NULL, "-gdb-set", "debug-file-directory", "", NULL);
	/* gdb describes every stopped frame (function, file, line) in *stopped
	 * and again on its console; with the program's symbols loaded that is
	 * a symbol-table and line-table lookup per sample, paid while the
	 * target waits (docs/sampling.md, "Levers we use"). */
	s->no_symbols = opts && opts->no_symbols;
	if (s->no_symbols)
		call(s, NULL, NULL, "-gdb-set", "auto-solib-add", "off", NULL);
	/* Must precede the attach. */
	s->non_stop = opts && opts->non_stop;
	s->hold_at_entry = opts && opts->hold_at_entry;
	/* Children and new programs (docs/tracing.md, "Forks and exec"): a
	 * forked child is detached at once (gdb removes its copies of our
	 * breakpoints first), the target stays the parent, and an exec is
	 * followed in the same inferior, where the exec catchpoint stops it. */
	call(s, NULL, NULL, "-gdb-set", "detach-on-fork", "on", NULL);
	call(s, NULL, NULL, "-gdb-set", "follow-fork-mode", "parent", NULL);
	call(s, NULL, NULL, "-gdb-set", "follow-exec-mode", "same", NULL);
	if (s->non_stop && call(s, NULL, e, "-gdb-set", "non-stop", "on", NULL) < 0) {
		xerr_prefix(e, "switching gdb to non-stop mode");
		mi_conn_free(s->gdb);
		free(s);
		return NULL;
	}
	/* To resume a thread over a breakpoint gdb can execute a copy of the
	 * instruction elsewhere (displaced stepping). For a RIP-relative
	 * instruction on x86-64 it loads a scratch register (rcx, say) with
	 * the instruction's address and puts it back only if the copy ran; gdb
	 * before 14 leaves it changed when the step is interrupted first
	 * (displaced_step_buffers::finish then only relocates the PC), which
	 * our stops and detach do all the time: the thread goes on with a
	 * corrupted register. Off, gdb steps over in place with the other
	 * threads held (docs/design.md). Non-stop sessions keep gdb's default:
	 * gdb 13 in non-stop mode with displaced stepping off pauses every
	 * thread for each in-place step and drops the stop we asked for
	 * meanwhile (a thread never reported stopped). A displaced step needs
	 * no scratch register unless the instruction is RIP-relative: gdb's own
	 * breakpoints sit on ld.so's nop and ret instructions, and the tracer
	 * turns displaced stepping off (session_displaced_stepping_off) before
	 * it inserts a breakpoint on a RIP-relative instruction. */
	if (!s->non_stop && call(s, NULL, e, "-gdb-set", "displaced-stepping", "off", NULL) < 0) {
		xerr_prefix(e, "turning off gdb's displaced stepping");
		mi_conn_free(s->gdb);
		free(s);
		return NULL;
	}
	return s;
}

/* A session that takes only registers and memory from gdb does not need it
 * to follow the shared libraries either: with no file to read the dynamic
 * linker from, gdb plants no breakpoint in ld.so (its shared-library event
 * breakpoints; setting the sysroot takes out those already in), so the
 * target holds no int3 of gdb's at all. Each dlopen then no longer stops
 * the target, and a gdb killed meanwhile leaves nothing behind that a
 * thread could meet before the rescue. Nothing can be created in
 * /proc/self/fdinfo (and a lookup there fails with ENOENT, which gdb takes
 * as a warning, not an error).
 * gdb then names threads "LWP N" (no libthread_db), which is all we read.
 * gdb reads target memory for it: the target must be stopped, or not yet
 * attached. */
static int forget_libraries(struct session *s, struct xerr *e)
{
	if (call(s, NULL, e, "-gdb-set", "sysroot", "/proc/self/fdinfo/xgdbprof-reads-no-libraries", NULL) < 0)
		return xerr_prefix(e, "telling gdb to read no libraries");
	return 0;
}

/* Continues pid (SIGCONT) while any of its threads is stopped (state T; t
 * too unless only_untraced, which then waits while one is traced) until it
 * has stayed running for calm_ticks 10 ms ticks, or 3 s have passed, or it
 * is gone. A SIGSTOP gdb sent may still be pending in a thread that has not
 * run since; it lands when the thread next runs, hence the calm window. */
static void continue_stopped_target(pid_t pid, bool only_untraced, int calm_ticks)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int attempt = 0, calm = 0; attempt < 300 && calm < calm_ticks; attempt++) {
		char state = proc_state(pid);
		if (state == 0 || state == 'Z' || state == 'X')
			return;
		bool stopped = only_untraced ? proc_any_thread_in(pid, "T") && !proc_any_thread_in(pid, "t")
					     : proc_any_thread_in(pid, "Tt");
		if (stopped) {
			kill(pid, SIGCONT);
			calm = 0;
		} else {
			calm++;
		}
		nanosleep(&tick, NULL);
	}
}

/* The guardian's side: blocks until xgdbprof says it is done (one byte) or
 * is gone (end of file: killed, SIGKILL runs no handler). Then gdb, which
 * sees its input close and detaches, is left to finish, and a target that
 * is now stopped (state T, untraced) is continued, as rescue_stopped_target
 * does. Never returns. */
static void guard(int fd, pid_t target, pid_t gdb)
{
	/* gdb must see its input close when we die: no copy of its pipes here. */
	long max_fd = sysconf(_SC_OPEN_MAX);
	for (long other = 0; other < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); other++)
		if (other != fd)
			close((int)other);
	int null = open("/dev/null", O_RDWR);
	if (null == 0) {
		dup2(null, 1);
		dup2(null, 2);
	}
	char said;
	ssize_t n;
	while ((n = read(fd, &said, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0);
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (int i = 0; i < 3000 && gdb > 0 && kill(gdb, 0) == 0; i++)
		nanosleep(&tick, NULL);
	/* Another tracer that came since is left alone: untraced threads only;
	 * a calm second, as the pending SIGSTOP lands when its thread runs. */
	continue_stopped_target(target, true, 100);
	_exit(0);
}

/* If xgdbprof is killed outright, nothing of ours runs: gdb sees its input
 * close and detaches, and in non-stop mode that left a SIGSTOP gdb had sent
 * pending (the target stopped, state T, in 9 of 20 SIGKILLs at 999 Hz;
 * tests/safety.sh). A small process of ours outlives us to continue it.
 * Best effort: without it (fork failed) the session works as before. */
static void start_guardian(struct session *s, pid_t target)
{
	s->guardian = 0;
	s->guardian_fd = -1;
	if (s->was_stopped_before)
		return;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid_t gdb = mi_conn_gdb_pid(s->gdb);
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGTSTP, SIG_IGN);
		guard(fds[0], target, gdb);
	}
	close(fds[0]);
	if (child < 0) {
		close(fds[1]);
		return;
	}
	s->guardian = child;
	s->guardian_fd = fds[1];
}

/* Tells the guardian we ended the session ourselves, and reaps it. */
static void stop_guardian(struct session *s)
{
	if (s->guardian <= 0)
		return;
	ssize_t ignored = write(s->guardian_fd, "D", 1);
	(void)ignored;
	close(s->guardian_fd);
	int status;
	while (waitpid(s->guardian, &status, 0) < 0 && errno == EINTR)
		;
	s->guardian = 0;
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
	if ((!s->launched_child || s->no_symbols) && proc_exe_path(pid, exe, sizeof exe, NULL) == 0)
		call(s, NULL, NULL, s->no_symbols ? "-file-exec-file" : "-file-exec-and-symbols", exe, NULL);
	/* A launched child execs after the attach: gdb must still find the
	 * program it execs, so it forgets the libraries after that. */
	if (s->no_symbols && !s->launched_child && forget_libraries(s, e) < 0)
		return -1;
	start_guardian(s, pid);
	s->attach_started = true;
	/* From before the attach request: ptrace stops the threads inside it. */
	double t0 = monotonic_ms();
	if (call(s, NULL, &attach_error, "-target-attach", pid_text, NULL) < 0) {
		if (strstr(attach_error.msg, "not permitted") || strstr(attach_error.msg, "ermission")) {
			char why[512];
			proc_explain_ptrace_denied(pid, why, sizeof why);
			return xerr_set(e, "%s", why);
		}
		if (proc_state(pid) == 0)
			return xerr_set(e, "process %d exited before gdb could attach", (int)pid);
		return xerr_set(e, "gdb could not attach to process %d: %s", (int)pid, attach_error.msg);
	}
	s->attached = true;
	if ((s->non_stop ? wait_all_threads_stopped(s, e) : wait_stopped(s, e)) < 0)
		return xerr_prefix(e, "attaching to process %d", (int)pid);
	/* Without it gdb follows an exec silently and re-inserts our address
	 * breakpoints at the same numbers in the new program: "Cannot insert
	 * breakpoint", the resume aborted and the target left stopped. */
	const char *catch_exec[] = { "console", "catch exec", NULL };
	if (session_call(s, NULL, e, "-interpreter-exec", catch_exec) < 0)
		return xerr_prefix(e, "catching exec in process %d", (int)pid);
	s->have_exec_id = exec_identity(pid, s->exec_id);
	/* Attaching stops every thread; let the target go on right away. */
	int rc = session_resume(s, e);
	s->attach_hold_ms = monotonic_ms() - t0;
	if (s->verbose)
		fprintf(stderr, "xgdbprof: attach held process %d stopped for at most %.1f ms\n", (int)pid,
			s->attach_hold_ms);
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
		session_end(s, NULL);
		return -1;
	}
	*out = s;
	return 0;
}

/* gdb follows a launched command's exec and reads the new program's
 * symbols then. A session that wants none drops them once gdb has switched
 * programs (its thread group names the new executable), polling for up to
 * two seconds; if gdb is slower the symbols stay, which costs only speed. */
static void drop_symbols_after_exec(struct session *s)
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
		if (call(s, &r, NULL, "-list-thread-groups", NULL) < 0)
			return;
		const struct mi_value *groups = mi_value_get(r->results, "groups");
		const char *running = mi_value_get_string(mi_value_at(groups, 0), "executable");
		bool switched = running && (strcmp(running, exe) == 0 || strcmp(running, forked_from) != 0);
		mi_record_free(r);
		if (switched) {
			call(s, NULL, NULL, "-file-symbol-file", NULL);
			return;
		}
		struct timespec pause = { 0, 5000000 };
		nanosleep(&pause, NULL);
	}
	if (s->verbose)
		fprintf(stderr, "xgdbprof: gdb had not followed the exec of process %d after 2 s; it keeps its symbols\n",
			(int)s->pid);
}

/* The launched command's own exec stops at the exec catchpoint: that one
 * is the launch itself, not the target changing programs. */
/* Runs a launched program from its exec stop to its entry point (AT_ENTRY)
 * and leaves it stopped there: ld.so has mapped and relocated every library
 * and run their constructors, and not one instruction of the program itself
 * has run. gdb's temporary breakpoint is gone once hit. */
static int run_to_entry(struct session *s, struct xerr *e)
{
	uint64_t entry = auxv_value(s->pid, AT_ENTRY);
	if (!entry)
		return xerr_set(e, "cannot read the entry point of process %d from /proc/%d/auxv", (int)s->pid,
				(int)s->pid);
	char where[32];
	snprintf(where, sizeof where, "*0x%llx", (unsigned long long)entry);
	if (session_remember_code_byte(s, entry, e) < 0 || call(s, NULL, e, "-break-insert", "-t", where, NULL) < 0)
		return xerr_prefix(e, "holding process %d at its entry point", (int)s->pid);
	if (session_resume(s, e) < 0)
		return -1;
	while (!s->stopped && !s->target_exited && !s->execed)
		if (wait_stopped(s, e) < 0)
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
	s->have_exec_id = exec_identity(s->pid, s->exec_id);
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
		drop_symbols_after_exec(s);
		/* A command held at its entry point stays held (session.h). */
		if (session_stop(s, e) < 0 || forget_libraries(s, e) < 0 ||
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

bool session_target_alive(struct session *s)
{
	if (s->target_exited)
		return false;
	char state = proc_state(s->pid);
	return state != 0 && state != 'Z' && state != 'X';
}

bool session_target_dead_in_proc(struct session *s)
{
	/* any state but Z (zombie) and X (dead) is a living thread */
	return !s->target_exited && !proc_any_thread_in(s->pid, "RSDTtWPIK");
}

void session_note_target_exited(struct session *s)
{
	s->target_exited = true;
}

bool session_target_execed(struct session *s)
{
	return exec_seen_in_proc(s);
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

int session_stop(struct session *s, struct xerr *e)
{
	if (s->stopped && !s->non_stop)
		return 0;
	if (call(s, NULL, e, "-exec-interrupt", "--all", NULL) < 0)
		return xerr_prefix(e, "stopping process %d", (int)s->pid);
	if ((s->non_stop ? wait_all_threads_stopped(s, e) : wait_stopped(s, e)) < 0)
		return xerr_prefix(e, "stopping process %d", (int)s->pid);
	if (s->target_exited)
		return xerr_set(e, "process %d exited", (int)s->pid);
	return 0;
}

int session_displaced_stepping_off(struct session *s, struct xerr *e)
{
	if (call(s, NULL, e, "-gdb-set", "displaced-stepping", "off", NULL) < 0)
		return xerr_prefix(e, "turning off gdb's displaced stepping");
	return 0;
}

/* Sends command ("-exec-interrupt", "-exec-continue") for one thread.
 * Returns 0 sent, 1 refused while gdb lives (it no longer knows the thread:
 * it exited), -1 with e when gdb is gone ("stopping thread N of ..."). */
static int thread_command(struct session *s, const char *command, int gdb_id, const char *doing, struct xerr *e)
{
	char id[16];
	snprintf(id, sizeof id, "%d", gdb_id);
	struct xerr refused;
	if (call(s, NULL, &refused, command, "--thread", id, NULL) == 0)
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

int session_stop_thread(struct session *s, int gdb_id, struct xerr *e)
{
	if (!s->non_stop)
		return xerr_set(e, "stopping one thread needs gdb's non-stop mode");
	/* Records gdb sent since the last call (another thread's *running, a
	 * thread's exit) bring the session's view up to date first. */
	if (take_pending_events(s, e) < 0)
		return -1;
	struct mi_record *ev;
	int got;
	if (s->target_exited)
		return xerr_set(e, "process %d exited", (int)s->pid);
	if (thread_is_stopped(s, gdb_id))
		return 0;
	int sent = thread_command(s, "-exec-interrupt", gdb_id, "stopping", e);
	if (sent != 0)
		return sent;   /* 1: gdb no longer knows it, it exited meanwhile */
	uint64_t deadline = deadline_in(s->timeout_ms);
	while (!thread_is_stopped(s, gdb_id)) {
		if (s->target_exited)
			return xerr_set(e, "process %d exited", (int)s->pid);
		if (s->execed)
			return 0;
		got = event_before(s, deadline, "report a thread stopped", &ev, e);
		if (got < 0)
			return xerr_prefix(e, "stopping thread %d of process %d", gdb_id, (int)s->pid);
		if (got == 0)
			return xerr_set(e, "gdb did not report thread %d of process %d stopped within %d ms", gdb_id,
					(int)s->pid, s->timeout_ms);
		const char *gone = is_thread_exited(ev) ? mi_value_get_string(ev->results, "id") : NULL;
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
	if (!thread_is_stopped(s, gdb_id) || s->execed)
		return 0;
	/* Refused (1): the thread exited while stopped, gdb has forgotten it.
	 * Sent: gdb answers ^running once it has resumed the thread (its
	 * *running follows in the same write), no need to wait for that record. */
	if (thread_command(s, "-exec-continue", gdb_id, "resuming", e) < 0)
		return -1;
	forget_stopped_thread(s, gdb_id);
	s->stopped = s->nstopped_ids > 0;
	return 0;
}

int session_resume(struct session *s, struct xerr *e)
{
	/* After an exec only the detach may let it go (session.h). */
	if (!s->stopped || s->execed)
		return 0;
	if (call(s, NULL, e, "-exec-continue", s->non_stop ? "--all" : NULL, NULL) < 0)
		return xerr_prefix(e, "resuming process %d", (int)s->pid);
	s->stopped = false;
	s->held_at_entry = false;
	s->nstopped_ids = 0;
	return wait_running(s, e);
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
		return xerr_set(e, "out of memory");
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
	if (call(s, &r, e, "-thread-info", NULL) < 0)
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
	if (call(s, &r, e, "-stack-list-frames", "--thread", thread_text, "0", high, NULL) < 0)
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
	if (call(s, &r, e, "-data-list-register-names", NULL) < 0)
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

enum { MAX_REGS = 32 };

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
	if (gdb_callv(s, &r, &me, "-data-list-register-values", q.args) < 0) {
		mi_record_free(r);
		return xerr_set(e, "reading registers of thread %d: %s", gdb_id, me.message);
	}
	register_values(r, numbers, n, values);
	mi_record_free(r);
	return 0;
}

int session_thread_registers_and_resume(struct session *s, int gdb_id, const int *numbers, size_t n,
					uint64_t *values, struct xerr *e)
{
	if (!s->non_stop)
		return xerr_set(e, "resuming one thread needs gdb's non-stop mode");
	if (!thread_is_stopped(s, gdb_id) || s->execed)
		return xerr_set(e, "thread %d of process %d is not stopped by us", gdb_id, (int)s->pid);
	struct register_query q;
	if (register_query_init(&q, gdb_id, numbers, n, e) < 0)
		return -1;
	const char *continue_args[] = { "--thread", q.thread_text, NULL };
	struct mi_batch_call batch[2] = {
		{ .command = "-data-list-register-values", .args = q.args },
		{ .command = "-exec-continue", .args = continue_args },
	};
	struct mi_error me;
	double t0 = monotonic_ms();
	int rc = mi_conn_call_batch(s->gdb, s->timeout_ms, batch, 2, &me);
	if (s->verbose)
		fprintf(stderr, "xgdbprof: mi -data-list-register-values + -exec-continue: %.3f ms%s\n",
			monotonic_ms() - t0, rc < 0 ? " (error)" : "");
	/* As gdb_callv: a resume gdb never answered (a timeout, an interrupted
	 * wait) leaves the thread in doubt, so gdb is given up on, which heals
	 * the target; an answered register read does not change that. */
	if (rc < 0 && !batch[1].result && mi_conn_alive(s->gdb))
		give_up_on_gdb(s, "answer -exec-continue");
	if (rc < 0 && !mi_conn_alive(s->gdb))
		on_gdb_lost(s);
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
		forget_stopped_thread(s, gdb_id);
		s->stopped = s->nstopped_ids > 0;
	}
	mi_record_free(batch[0].result);
	mi_record_free(batch[1].result);
	return result;
}

int session_call(struct session *s, struct mi_record **result, struct xerr *e, const char *command,
		 const char *const *args)
{
	struct mi_error me;
	struct mi_record *r = NULL;
	if (result)
		*result = NULL;
	if (gdb_callv(s, &r, &me, command, args) < 0) {
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
		on_gdb_lost(s);
		return xerr_set(e, "%s", me.message);
	}
	if (got == 1)
		track_exec_event(s, ev);
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
	uint64_t deadline = deadline_in(timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		struct mi_record *ev = NULL;
		int got = session_wait_event(s, ms_until(deadline), &ev, e);
		mi_record_free(ev);
		if (got < 0)
			return -1;
		/* An exec holds the target stopped at its catchpoint: the caller
		 * must see it now (session_target_execed), not at the deadline. */
		if (got == 0 || s->execed)
			return 0;
	}
}

bool session_gdb_alive(struct session *s)
{
	return s->gdb && mi_conn_alive(s->gdb);
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


/* Last resort when gdb is gone: the kernel detaches a dead tracer's tracees,
 * but threads gdb had stopped can be left in a group stop (state T), and the
 * detach itself completes asynchronously. Watch every thread for a while
 * and wake the process while any is stopped. */
static void rescue_stopped_target(struct session *s)
{
	if (s->pid > 0 && !s->was_stopped_before)
		continue_stopped_target(s->pid, false, 30);
}

int session_remember_code_byte(struct session *s, uint64_t addr, struct xerr *e)
{
	return restore_set_remember(&s->code, addr, e);
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
	rescue_stopped_target(s);
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
	if (s->gdb && mi_conn_alive(s->gdb) && s->attached && !s->target_exited) {
		/* -target-detach resumes a stopped target; it needs all threads
		 * stopped in all-stop mode, so stop first if running (in
		 * non-stop mode gdb stops them itself). */
		if (!s->stopped && !s->non_stop && !s->execed && session_target_alive(s))
			session_stop(s, NULL);
		if (call(s, NULL, &detach_error, "-target-detach", NULL) < 0)
			rc = -1;
		else
			detached = true;
	}
	bool gdb_died = s->gdb && !mi_conn_alive(s->gdb);
	/* Every int3 a dead gdb planted (ours, and its own such as ld.so's
	 * shared-library event breakpoint) goes before anything else. */
	struct xerr rescue_error = { "" };
	bool rescue_failed = gdb_died && session_rescue(s, NULL, &rescue_error) < 0;
	if (s->gdb)
		mi_conn_close(s->gdb, 3000);
	s->gdb = NULL;
	/* gdb killed in the middle of attaching has already stopped threads.
	 * (session_rescue, when it ran, has watched them already.) */
	if (!detached && !s->rescued && (s->attached || (s->attach_started && gdb_died)))
		rescue_stopped_target(s);
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
	stop_guardian(s);
	free(s->stopped_ids);
	restore_set_release(&s->code);
	free(s->exec_path);
	free(s);
	return rc;
}
