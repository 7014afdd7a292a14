/* record_mi.c — records the GDB/MI transcripts in this directory.
 *
 * Usage: record_mi SCENARIO MI_TARGET > trace
 *   SCENARIO is "run" (launch, breakpoints, frames, threads, registers,
 *   errors, thread exits, library loads, exit) or "attach" (attach to a
 *   running copy, interrupt, detach). It drives gdb through libmi with the
 *   trace option on; the lines prefixed "<- " are gdb's output verbatim
 *   (`make mi-transcripts` keeps exactly those). Not part of `make check`:
 *   the committed transcripts are what the parser tests read, and they assert
 *   values of this recording (LWPs, which thread stopped where), so after
 *   re-recording update tests/unit/test_mi_parse.c to match.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mi_conn.h"

static struct mi_conn *conn;

static void call(const char *command, const char *const *args)
{
	struct mi_error err;
	struct mi_record *r = NULL;
	if (mi_conn_callv(conn, 10000, &r, &err, command, args) < 0)
		fprintf(stderr, "(expected or not) %s: %s\n", command, err.message);
	mi_record_free(r);
}

#define CALL(cmd, ...) call(cmd, (const char *const[]){__VA_ARGS__})

static void wait_stopped(void)
{
	struct mi_error err;
	struct mi_record *r;
	if (mi_conn_wait_stopped(conn, 10000, &r, &err) != 1) {
		fprintf(stderr, "no stop: %s\n", err.message);
		exit(1);
	}
	mi_record_free(r);
}

static void drain_events(int ms)
{
	struct mi_error err;
	struct mi_record *r;
	while (mi_conn_next_event(conn, ms, &r, &err) == 1)
		mi_record_free(r);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: record_mi run|attach MI_TARGET\n");
		return 2;
	}
	struct mi_error err;
	struct mi_conn_options opt = {.trace = stdout};
	conn = mi_conn_spawn(&opt, &err);
	if (!conn) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	const char *target = argv[2];
	if (strcmp(argv[1], "run") == 0) {
		CALL("-gdb-version", NULL);
		CALL("-list-features", NULL);
		CALL("-file-exec-and-symbols", target, NULL);
		CALL("-break-insert", "leaf_function", NULL);
		CALL("-break-insert", "nosuch_function_anywhere", NULL);
		CALL("-break-list", NULL);
		CALL("-exec-run", NULL);
		wait_stopped();
		CALL("-stack-list-frames", NULL);
		CALL("-thread-info", NULL);
		CALL("-stack-list-arguments", "--simple-values", NULL);
		CALL("-data-evaluate-expression", "tricky", NULL);
		CALL("-data-evaluate-expression", "nosuch_variable", NULL);
		CALL("-data-list-register-names", NULL);
		CALL("-data-list-register-values", "--skip-unavailable", "x", "0", "6", "7", "16", NULL);
		CALL("-interpreter-exec", "console", "info sharedlibrary", NULL);
		CALL("-interpreter-exec", "console", "echo a\\tb\\\\c\\\"d\\n", NULL);
		CALL("-no-such-command", NULL);
		CALL("-break-delete", "1", NULL);
		CALL("-exec-continue", NULL);
		drain_events(3000);
	} else if (strcmp(argv[1], "attach") == 0) {
		pid_t child = fork();
		if (child == 0) {
			/* Keep its output out of our trace: only gdb's lines belong there. */
			if (!freopen("/dev/null", "w", stdout))
				_exit(127);
			execl(target, target, "idle", (char *)NULL);
			_exit(127);
		}
		usleep(300 * 1000);
		char pid[32];
		snprintf(pid, sizeof pid, "%d", (int)child);
		CALL("-target-attach", pid, NULL);
		wait_stopped();
		CALL("-thread-info", NULL);
		CALL("-stack-list-frames", "0", "3", NULL);
		CALL("-thread-list-ids", NULL);
		CALL("-exec-continue", NULL);
		drain_events(300);
		CALL("-exec-interrupt", NULL);
		wait_stopped();
		CALL("-stack-info-depth", NULL);
		CALL("-target-detach", NULL);
		drain_events(300);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	int status = mi_conn_close(conn, 3000);
	fprintf(stderr, "gdb exit status %d\n", status);
	return 0;
}
