/* session_gdb.c — the gdb process: finding, starting, configuring it; the guardian. */
#include "config.h"
#include "session/session_internal.h"

#include <limits.h>
#include <poll.h>

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

/* gdb killed with its int3s in the target kills the target (restore.h), and
 * the kernel's OOM killer picks by size: gdb (35 MB) can go before a bigger
 * program, or before xgdbprof, whose death is harmless (the guardian and
 * gdb's own detach see to it). So gdb is made the OOM killer's last choice
 * for as long as the run lasts: we end it at the end of every run. Lowering
 * oom_score_adj takes CAP_SYS_RESOURCE: as anyone else nothing changes. */
static void shield_gdb_from_oom_killer(pid_t gdb, bool verbose)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/oom_score_adj", (int)gdb);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool done = fd >= 0 && write(fd, "-1000", 5) == 5;
	if (verbose)
		fprintf(stderr, "xgdbprof: gdb's oom_score_adj %s\n", done ? "set to -1000 (the OOM killer's last choice)"
									     : "left as it was (not permitted)");
	if (fd >= 0)
		close(fd);
}

struct session *session_new(const struct session_options *opts, struct xerr *e)
{
	const char *gdb_path = gdb_default_path(opts);
	struct session *s = calloc(1, sizeof *s);
	if (!s) {
		xerr_oom(e);
		return NULL;
	}
	s->timeout_ms = session_timeout(opts);
	s->verbose = opts && opts->verbose;
	struct mi_conn_options mo = { .gdb_path = gdb_path, .startup_timeout_ms = s->timeout_ms,
				      .stall_kill_ms = GDB_STALL_KILL_MS, .on_silence = session_on_gdb_silence,
				      .on_silence_ctx = s };
	struct mi_error me;
	s->gdb = mi_conn_spawn(&mo, &me);
	if (!s->gdb) {
		/* Say why precisely: missing, too old (no MI3), or something else. */
		if (session_check_gdb(opts, NULL, e) == 0)
			xerr_set(e, "cannot start gdb (%s): %s", gdb_path, me.message);
		free(s);
		return NULL;
	}
	shield_gdb_from_oom_killer(mi_conn_gdb_pid(s->gdb), s->verbose);
	/* The running gdb tells its version (a separate `gdb --version` would
	 * cost a whole gdb start-up). MI3 exists since gdb 9; we need 10. */
	struct mi_record *version = NULL;
	int major = 0, minor = 0;
	if (session_command(s, &version, NULL, "-gdb-version", NULL) == 0 && version->console)
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
	session_command(s, NULL, NULL, "-gdb-set", "print", "frame-arguments", "none", NULL);
	session_command(s, NULL, NULL, "-gdb-set", "print", "entry-values", "no", NULL);
	/* The reference walker must see the same frames as ours: past main too. */
	session_command(s, NULL, NULL, "-gdb-set", "backtrace", "past-main", "on", NULL);
	/* gdb reads the shared libraries' symbols while attaching, with every
	 * thread stopped; with Debian's libc6-dbg present (gdb recommends it)
	 * that means decompressing and indexing libc's DWARF, most of the
	 * attach stop (bench/README.md, "Figures behind the code"). A session
	 * that takes only registers from gdb does not need it (our symbolizer
	 * reads those files itself). */
	if (opts && (opts->no_separate_debug || opts->no_symbols))
		session_command(s, NULL, NULL, "-gdb-set", "debug-file-directory", "", NULL);
	/* gdb describes every stopped frame (function, file, line) in *stopped
	 * and again on its console; with the program's symbols loaded that is
	 * a symbol-table and line-table lookup per sample, paid while the
	 * target waits (docs/sampling.md, "Levers we use"). */
	s->no_symbols = opts && opts->no_symbols;
	if (s->no_symbols || (opts && opts->program_symbols_only))
		session_command(s, NULL, NULL, "-gdb-set", "auto-solib-add", "off", NULL);
	/* The libraries' symbols and libthread_db (which looks up libc's)
	 * were a third each of an arg() attach's hold on the demo (38 and 35
	 * of 133 ms, a loaded machine): gdb evaluates arg() in a frame of the
	 * program's own code, and names threads from /proc. */
	if (opts && opts->program_symbols_only)
		session_command(s, NULL, NULL, "-gdb-set", "libthread-db-search-path", "", NULL);
	/* Must precede the attach. */
	s->non_stop = opts && opts->non_stop;
	/* With the program's symbols, gdb describes each thread's stop at the
	 * attach from its DWARF (a compilation unit expanded and a source line
	 * read per thread: 20-30 ms of the demo's hold); without them the
	 * attach is a sampling one's. A non-stop gdb reads them as well once
	 * the threads run again. */
	s->symbols_after_attach = opts && opts->program_symbols_only && s->non_stop;
	s->hold_at_entry = opts && opts->hold_at_entry;
	/* Children and new programs (docs/tracing.md, "Forks and exec"): a
	 * forked child is detached at once (gdb removes its copies of our
	 * breakpoints first), the target stays the parent, and an exec is
	 * followed in the same inferior, where the exec catchpoint stops it. */
	session_command(s, NULL, NULL, "-gdb-set", "detach-on-fork", "on", NULL);
	session_command(s, NULL, NULL, "-gdb-set", "follow-fork-mode", "parent", NULL);
	session_command(s, NULL, NULL, "-gdb-set", "follow-exec-mode", "same", NULL);
	if (s->non_stop && session_command(s, NULL, e, "-gdb-set", "non-stop", "on", NULL) < 0) {
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
	if (!s->non_stop && session_command(s, NULL, e, "-gdb-set", "displaced-stepping", "off", NULL) < 0) {
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
int session_forget_libraries(struct session *s, struct xerr *e)
{
	if (session_command(s, NULL, e, "-gdb-set", "sysroot", "/proc/self/fdinfo/xgdbprof-reads-no-libraries", NULL) < 0)
		return xerr_prefix(e, "telling gdb to read no libraries");
	return 0;
}

/* Continues pid (SIGCONT) while any of its threads is stopped (state T; t
 * too unless only_untraced, which then waits while one is traced) until it
 * has stayed running for calm_ticks 10 ms ticks, or 3 s have passed, or it
 * is gone. A SIGSTOP gdb sent may still be pending in a thread that has not
 * run since; it lands when the thread next runs, hence the calm window.
 * Both are wall time, with two calm looks at least: counted in looks, each
 * a read of every thread's /proc files, the calm window after a detach
 * from 200 threads took 1.1 s on an idle machine and 3.5 s under load
 * (tests/many_threads.sh). Returns how many SIGCONTs it sent. */
int session_continue_stopped_target(pid_t pid, bool only_untraced, int calm_ticks)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	uint64_t start = monotonic_ns(), calm_since = start;
	uint64_t calm_ns = (uint64_t)calm_ticks * 10000000u;
	int continued = 0;
	for (int calm_looks = 0; monotonic_ns() - start < 3000000000u;) {
		char state = proc_state(pid);
		if (state == 0 || state == 'Z' || state == 'X')
			break;
		char seen[32];
		if (proc_thread_states(pid, NULL, seen, sizeof seen) < 0)
			break;
		bool stopped = only_untraced ? strchr(seen, 'T') && !strchr(seen, 't') : strpbrk(seen, "Tt") != NULL;
		if (stopped) {
			kill(pid, SIGCONT);
			continued++;
			calm_looks = 0;
			calm_since = monotonic_ns();
		} else if (++calm_looks >= 2 && monotonic_ns() - calm_since >= calm_ns) {
			break;
		}
		nanosleep(&tick, NULL);
	}
	return continued;
}

/* A stopped xgdbprof (kill -STOP, a cgroup freeze, a debugger on it) would
 * hold the target as long as it stays stopped: gdb waits for our next
 * command with the target's threads in trace stop. The guardian looks every
 * GUARDIAN_WATCH_MS; xgdbprof in state T or t for over GUARDIAN_HELD_MS
 * while a thread of the target sits in trace stop means heal and let go. */
#define GUARDIAN_WATCH_MS 100
#define GUARDIAN_HELD_MS 1000

static bool xgdbprof_held_target_too_long(pid_t xgdbprof, pid_t target, uint64_t *stopped_since)
{
	char state = proc_state(xgdbprof);
	if (state != 'T' && state != 't') {
		*stopped_since = 0;
		return false;
	}
	uint64_t now = monotonic_ns();
	if (!*stopped_since)
		*stopped_since = now;
	return now - *stopped_since > (uint64_t)GUARDIAN_HELD_MS * 1000000u && proc_any_thread_in(target, "t");
}

/* Ends gdb as xgdbprof does with a gdb that stopped answering (SIGTERM, on
 * which gdb takes its breakpoints out and detaches; SIGKILL a second later),
 * then heals whatever int3 is left in the target's code from its files and
 * wakes threads left stopped (restore.h, with no remembered byte: every
 * int3 that differs from the file is gdb's). xgdbprof, once continued, finds
 * gdb gone and takes its gdb-lost path: it reports and exits. */
/* Whether pid is still the gdb the guardian was started beside. gdb is
 * xgdbprof's child, not ours: once xgdbprof is gone, gdb is reaped by
 * someone else and its pid is free. A suite run wraps pid_max (32768) in
 * minutes, and a guardian that signalled the bare pid killed another
 * program's gdb (test_mi_conn's: "killed by signal 9" nothing in it sent). */
static bool still_our_gdb(pid_t gdb, uint64_t gdb_started)
{
	return gdb > 0 && gdb_started && proc_start_ticks(gdb) == gdb_started;   /* 0 once a zombie */
}

static void heal_for_stopped_xgdbprof(pid_t target, pid_t gdb, uint64_t gdb_started, const struct restore_set *ours)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	if (still_our_gdb(gdb, gdb_started)) {
		kill(gdb, SIGTERM);
		for (int i = 0; i < 100 && still_our_gdb(gdb, gdb_started); i++)
			nanosleep(&tick, NULL);
		if (still_our_gdb(gdb, gdb_started))
			kill(gdb, SIGKILL);
	}
	struct restore_report report;
	restore_set_after_gdb_died(ours, 2000, &report, NULL);
	session_continue_stopped_target(target, true, 30);
}

/* The guardian's side: blocks until xgdbprof says it is done
 * (GUARDIAN_DONE) or is gone (end of file: killed, SIGKILL runs no
 * handler). Then gdb, which sees its input close and detaches, is left to
 * finish, and a target that is now stopped (state T, untraced) is
 * continued, as session_rescue_stopped_target does; unless xgdbprof said
 * someone else stopped it (GUARDIAN_STOPPED_BY_OTHER, no
 * GUARDIAN_CONTINUED since): gdb's detach delivers that stop, and the
 * target is left as its user asked. Never returns. */
static void guard(int fd, pid_t target, pid_t gdb, uint64_t gdb_started)
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
	bool stopped_by_other = false;
	pid_t xgdbprof = getppid();
	uint64_t xgdbprof_stopped_since = 0;
	bool healed = false;
	/* the bytes xgdbprof wrote itself (GUARDIAN_PATCH): an entry
	 * counter's jump and code (restore.h); the rest is gdb's, healed
	 * from the files */
	struct restore_set ours;
	restore_set_init(&ours, target);
	/* the target's pid may be another program's by the time we act, as
	 * gdb's may (still_our_gdb): a stranger is not continued */
	uint64_t target_started = proc_start_ticks(target);
	for (;;) {
		struct pollfd wait_for_word = { .fd = fd, .events = POLLIN };
		int ready = poll(&wait_for_word, 1, healed ? -1 : GUARDIAN_WATCH_MS);
		if (ready == 0) {
			if (xgdbprof_held_target_too_long(xgdbprof, target, &xgdbprof_stopped_since) &&
			    proc_start_ticks(target) == target_started) {
				heal_for_stopped_xgdbprof(target, gdb, gdb_started, &ours);
				healed = true;
			}
			continue;
		}
		char said;
		ssize_t n = ready < 0 ? -1 : read(fd, &said, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			break;
		if (said == GUARDIAN_DONE)
			_exit(0);
		if (said == GUARDIAN_STOPPED_BY_OTHER || said == GUARDIAN_CONTINUED)
			stopped_by_other = said == GUARDIAN_STOPPED_BY_OTHER;
		if (said == GUARDIAN_PATCH) {
			struct guardian_patch p;
			size_t got = 0;
			while (got < sizeof p) {
				ssize_t r = read(fd, (char *)&p + got, sizeof p - got);
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0)
					break;
				got += (size_t)r;
			}
			if (got == sizeof p && p.kind == GUARDIAN_CALL_MARK)
				ours.call_mark = p.addr;
			else if (got == sizeof p)
				restore_set_remember_patch(&ours, p.addr, &p.original, &p.patched, 1,
							   (enum restore_kind)p.kind, NULL);
		}
	}
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	/* The user's SIGCONT after their SIGSTOP, sent while gdb held the
	 * target: gdb reports it only once the thread takes it, which may be
	 * never before gdb goes (issue 28: the target left stopped in 2 CI
	 * runs). It waits in the target's pending signals. Looked for while gdb
	 * detaches and after: gdb's detach delivers the held SIGSTOP, and the
	 * SIGCONT, sent before it, stays pending in the stopped target. */
	for (int i = 0; i < 3000 && still_our_gdb(gdb, gdb_started); i++) {
		/* gdb reads the end of its input only between commands: one
		 * caught inside a wait that never ends (a stop, an attach) held
		 * the target in a tracing stop for good (tests/guardian.sh).
		 * SIGTERM makes it detach itself, SIGKILL makes the kernel let
		 * go; the healing below follows either way. */
		if (i == 200 || i == 300)
			kill(gdb, i == 200 ? SIGTERM : SIGKILL);
		if (stopped_by_other && proc_signal_pending(target, SIGCONT))
			stopped_by_other = false;
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < 50 && stopped_by_other; i++) {
		if (proc_signal_pending(target, SIGCONT))
			stopped_by_other = false;
		else
			nanosleep(&tick, NULL);
	}
	if (ours.n && !healed) {
		/* gdb detached, its breakpoints out; our own bytes are still in:
		 * stop every thread ourselves and put them back (a target its
		 * user stopped stays stopped) */
		struct restore_report report;
		ours.leave_stopped = stopped_by_other;
		restore_set_after_gdb_died(&ours, 2000, &report, NULL);
	}
	if (stopped_by_other || proc_start_ticks(target) != target_started)
		_exit(0);
	/* Another tracer that came since is left alone: untraced threads only;
	 * a calm second, as the pending SIGSTOP lands when its thread runs. */
	session_continue_stopped_target(target, true, 100);
	_exit(0);
}

/* If xgdbprof is killed outright, nothing of ours runs: gdb sees its input
 * close and detaches, and in non-stop mode that left a SIGSTOP gdb had sent
 * pending (the target stopped, state T, in 9 of 20 SIGKILLs at 999 Hz;
 * tests/safety.sh). A small process of ours outlives us to continue it.
 * Best effort: without it (fork failed) the session works as before. */
void session_start_guardian(struct session *s, pid_t target)
{
	s->guardian = 0;
	s->guardian_fd = -1;
	if (s->was_stopped_before)
		return;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	/* Our side never waits on a guardian that does not read (stopped). */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	pid_t gdb = mi_conn_gdb_pid(s->gdb);
	uint64_t gdb_started = gdb > 0 ? proc_start_ticks(gdb) : 0;
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGTSTP, SIG_IGN);
		guard(fds[0], target, gdb, gdb_started);
	}
	close(fds[0]);
	if (child < 0) {
		close(fds[1]);
		return;
	}
	s->guardian = child;
	s->guardian_fd = fds[1];
}

/* Best effort: a guardian that does not read (stopped) with its pipe full
 * misses the word rather than hold the run. */
void session_tell_guardian(struct session *s, enum guardian_word word)
{
	if (s->guardian <= 0)
		return;
	char byte = (char)word;
	ssize_t ignored = write(s->guardian_fd, &byte, 1);
	(void)ignored;
}

/* How long the guardian has to take our "done" byte and exit before it is
 * killed: it exits at once unless something holds it (kill -STOP). */
#define GUARDIAN_EXIT_MS 1000

void session_tell_guardian_patch(struct session *s, const struct guardian_patch *p)
{
	session_tell_guardian_patches(s, p, 1);
}

void session_tell_guardian_patches(struct session *s, const struct guardian_patch *p, size_t n)
{
	if (s->guardian <= 0)
		return;
	/* Writes of at most PIPE_BUF: whole records or none. As many records
	 * a write as fit: an entry counter's ~70 bytes were ~70 writes, each
	 * waking the guardian while the target was held. */
	enum { RECORD = 1 + sizeof *p, PER_WRITE = PIPE_BUF / RECORD };
	char buf[PER_WRITE * RECORD];
	while (n) {
		size_t k = n < PER_WRITE ? n : PER_WRITE;
		for (size_t i = 0; i < k; i++) {
			buf[i * RECORD] = GUARDIAN_PATCH;
			memcpy(buf + i * RECORD + 1, &p[i], sizeof *p);
		}
		ssize_t ignored = write(s->guardian_fd, buf, k * RECORD);
		(void)ignored;
		p += k;
		n -= k;
	}
}

/* Tells the guardian we ended the session ourselves, and reaps it. The
 * session ended cleanly, so the guardian has nothing left to do: one that
 * has not exited within GUARDIAN_EXIT_MS (stopped, say) is killed, not
 * waited on, or the run would never end and leave a stopped orphan. */
void session_stop_guardian(struct session *s)
{
	if (s->guardian <= 0)
		return;
	session_tell_guardian(s, GUARDIAN_DONE);
	close(s->guardian_fd);
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status;
	pid_t got = 0;
	for (int waited_ms = 0; waited_ms < GUARDIAN_EXIT_MS; waited_ms += 10) {
		got = waitpid(s->guardian, &status, WNOHANG);
		if (got != 0 && !(got < 0 && errno == EINTR))
			break;
		nanosleep(&tick, NULL);
	}
	if (got == 0) {
		char state = proc_state(s->guardian);
		if (s->verbose)
			fprintf(stderr, "xgdbprof: the guardian process %d had not exited %d ms after the detach "
				"(state %c): killed it\n", (int)s->guardian, GUARDIAN_EXIT_MS, state ? state : '?');
		kill(s->guardian, SIGKILL);
		while (waitpid(s->guardian, &status, 0) < 0 && errno == EINTR)
			;
	}
	s->guardian = 0;
}
