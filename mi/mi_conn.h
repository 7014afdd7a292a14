/* mi_conn.h — one gdb child process spoken to over GDB/MI3.
 *
 * Process: gdb runs as
 *     gdb -nx -q --interpreter=mi3 -iex "set auto-load off"
 *         -iex "set debuginfod enabled off" -iex "set confirm off"
 *         -iex "set pagination off" -iex "set width 0" -iex "set height 0"
 *         -iex "maint set internal-error corefile no" (and quit yes, and
 *         internal-warning corefile no: an internal error ends gdb cleanly)
 * with `-gdb-set mi-async on` and `-gdb-set non-stop off` applied before
 * mi_conn_spawn returns. It is in its own process group (a terminal Ctrl-C
 * reaches only us), its signal mask and dispositions are reset to defaults,
 * and every descriptor we open is close-on-exec. gdb's stdin is a socket and
 * we write with send(MSG_NOSIGNAL): a dead gdb yields an error, never a
 * SIGPIPE, and the process-wide SIGPIPE disposition is left alone. stdout
 * and stderr are pipes; stderr is kept in a bounded buffer for messages.
 * Programs that gdb launches inherit these descriptors: give them their own
 * terminal or files (-inferior-tty-set) so their output cannot mix with MI.
 *
 * Calls: each command gets a fresh numeric token; mi_conn_call returns when
 * the ^result with that token arrives. Records read meanwhile are sorted:
 * exec/status/notify records (*stopped, =thread-created, ...) go to the event
 * queue in arrival order, ~ console text is attached to the result, @ and &
 * streams and prompts are dropped, results with other tokens (answers to calls
 * that timed out earlier) are dropped.
 *
 * Timeouts are in milliseconds on CLOCK_MONOTONIC; -1 waits forever, 0 only
 * looks at what is already available. A cancel flag (see the options) ends
 * any wait early, so a Ctrl-C handler can break a long wait.
 *
 * Death: gdb's end is noticed at any read (EOF on its stdout) or write; it is
 * then reaped and every later call fails with a message naming the exit
 * status or signal. Queued events are still delivered first. A gdb that sits
 * stopped (options.stall_kill_ms) or that the caller gives up on
 * (mi_conn_kill) is killed and then counts as dead the same way.
 *
 * Threads: a mi_conn is not thread-safe; use it from one thread.
 */
#ifndef MI_CONN_H
#define MI_CONN_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "mi_error.h"
#include "mi_record.h"

struct mi_conn_options {
	const char *gdb_path;          /* "gdb" (searched on PATH) when NULL */
	int startup_timeout_ms;        /* wait for gdb's first prompt; <= 0 means 10000 */
	const char *const *extra_args; /* NULL-terminated, appended to gdb's argv; may be NULL */
	FILE *trace;                   /* when set, every line sent ("-> ") and read ("<- ") */
	/* When set and *cancel becomes non-zero (e.g. from a SIGINT handler),
	 * every wait ends within 250 ms as if its timeout expired: calls fail
	 * with "interrupted ...", event waits return 0. gdb is left running. */
	const volatile sig_atomic_t *cancel;
	/* When > 0: a gdb found stopped for this long while we wait on it is
	 * resumed with SIGCONT the first time it is in state T (SIGSTOP,
	 * SIGTSTP; see mi_conn_was_stalled), and ended as by mi_conn_kill when
	 * it is stopped again or held by a debugger (state t); the connection
	 * then reports it dead like any other death. 0: never. */
	int stall_kill_ms;
	/* When set: called every 250 ms that a wait on gdb reads nothing, with
	 * how long gdb has printed nothing (ms). gdb sits silent when it waits
	 * on the target itself (a thread it cannot stop); the caller may look
	 * at the target then. It must not call into this connection. Returning
	 * true ends a wait for an event now (mi_conn_next_event and
	 * mi_conn_wait_stopped return 0, as on a timeout); a call's wait for
	 * its answer goes on. */
	bool (*on_silence)(void *ctx, int silent_ms);
	void *on_silence_ctx;
};

struct mi_conn;

/* Starts gdb and waits for it to be ready. Returns the connection, or NULL
 * with err (gdb not found, died, or no prompt within the timeout). */
struct mi_conn *mi_conn_spawn(const struct mi_conn_options *opt, struct mi_error *err);

/* Runs `command` (e.g. "-stack-list-frames", sent verbatim with a leading '-'
 * added if missing; it must not contain a newline) with the NULL-terminated
 * const char * arguments after it, each quoted by mi_quote_arg.
 * Returns 0 for ^done/^running/^connected/^exit. Returns -1 with err for
 * ^error (err holds gdb's msg; *result is still set), for a timeout ("gdb did
 * not answer -X within N ms") and when gdb died. When result is non-NULL it
 * receives the ^record (or NULL), which the caller frees; its `console`
 * holds the ~ text gdb printed for this command (possibly ""). */
int mi_conn_call(struct mi_conn *c, int timeout_ms, struct mi_record **result,
		 struct mi_error *err, const char *command, ...) __attribute__((sentinel));

/* mi_conn_call with the arguments as a NULL-terminated array (args may be NULL). */
int mi_conn_callv(struct mi_conn *c, int timeout_ms, struct mi_record **result,
		  struct mi_error *err, const char *command, const char *const *args);

/* One command of mi_conn_call_batch: command and args as for
 * mi_conn_callv; result, rc and err are filled in as mi_conn_callv would
 * (result NULL and rc -1 when no answer came). */
struct mi_batch_call {
	const char *command;
	const char *const *args;
	struct mi_record *result;
	int rc;
	struct mi_error err;
};

/* Sends the n commands in one write and waits for every answer. gdb runs
 * them back to back, without a round trip to us between them: reading a
 * stopped thread's registers and resuming it holds the thread only for
 * gdb's own work. A command that fails does not keep the later ones from
 * running (gdb runs each line it reads). Returns 0 when every command
 * succeeded; -1 with err naming the first failure, or when gdb died, timed
 * out or the wait was interrupted (then the commands not answered have rc
 * -1 and that message). The caller frees each result. */
int mi_conn_call_batch(struct mi_conn *c, int timeout_ms, struct mi_batch_call *batch, size_t n,
		       struct mi_error *err);

/* Runs a one-line CLI command via `-interpreter-exec console` and returns 0
 * with the console text (malloc'd, possibly "") in *output, or -1 with err
 * (then *output is NULL). A command containing a newline is refused. */
int mi_conn_console(struct mi_conn *c, int timeout_ms, char **output, struct mi_error *err,
		    const char *cli_command);

/* Next exec/status/notify record: queued ones first, otherwise read from gdb
 * until one arrives. Returns 1 with *event (caller frees), 0 on timeout, -1
 * when gdb is gone (err names exit status or signal). */
int mi_conn_next_event(struct mi_conn *c, int timeout_ms, struct mi_record **event,
		       struct mi_error *err);

/* Like mi_conn_next_event but takes the first *stopped record, leaving other
 * events queued in order. Returns 1 / 0 (timeout) / -1 (gdb gone). */
int mi_conn_wait_stopped(struct mi_conn *c, int timeout_ms, struct mi_record **stopped,
			 struct mi_error *err);

/* Descriptor of gdb's stdout, to poll for readability in an outer loop.
 * Records may already be buffered: drain with mi_conn_next_event(c, 0, ...)
 * before blocking on it. */
int mi_conn_fd(const struct mi_conn *c);

pid_t mi_conn_gdb_pid(const struct mi_conn *c);

/* True once gdb was found stopped and resumed (options.stall_kill_ms). */
bool mi_conn_was_stalled(const struct mi_conn *c);

/* False once gdb exited, was killed or closed its output (reaps it). */
bool mi_conn_alive(struct mi_conn *c);

/* Number of output lines that were not valid MI (e.g. a launched program's
 * output sharing gdb's stdout); such text is skipped, and an MI record
 * following it on the same line is still recovered. */
unsigned long mi_conn_junk_lines(const struct mi_conn *c);

/* Ends gdb: -gdb-exit, up to timeout_ms for it to exit, then SIGTERM, then
 * SIGKILL; reaps and frees c. Returns gdb's exit status, or -1 if it had to
 * be killed or had died by a signal. Safe after gdb died. NULL → -1. */
int mi_conn_close(struct mi_conn *c, int timeout_ms);
/* Sends -gdb-exit and returns at once (once per c; nothing if gdb is
 * gone): gdb's exit, after a detach from 200 threads 0.4-0.5 s under load,
 * then runs beside the caller's work, and mi_conn_close only reaps it. */
void mi_conn_ask_exit(struct mi_conn *c);

/* Ends a gdb that stopped answering, keeping c: SIGCONT and SIGTERM (gdb
 * then quits as with `quit`, detaching from attached processes), SIGKILL
 * if it has not exited a second later; reaps it. Every later call fails
 * with "gdb (pid N) <why>; xgdbprof ended it". No-op if gdb is already gone
 * or c is NULL. */
void mi_conn_kill(struct mi_conn *c, const char *why);

/* Kills gdb (SIGKILL) if still running, reaps, frees. NULL is a no-op. */
void mi_conn_free(struct mi_conn *c);

/* Runs `gdb_path --version` (no shell; NULL means "gdb") and parses the
 * version from its first line ("GNU gdb (Debian 13.1-3) 13.1").
 * Returns 0 with the numbers in *major and *minor, or -1 with err. */
int mi_gdb_version(const char *gdb_path, int *major, int *minor, struct mi_error *err);

#endif
