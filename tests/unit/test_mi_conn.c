/* test_mi_conn.c — mi_conn against the real gdb and $FIXTURES/mi_target.
 *
 * Covers: version query, spawn flags (own process group), plain calls,
 * ^error, a timeout followed by a late answer that must be dropped, events
 * queued in order around *stopped, recovery of a record that follows the
 * program's own output on one line, gdb killed mid-session (no SIGPIPE, "gdb
 * died ... signal 9"), clean close, escalation to SIGKILL on a stuck gdb, and
 * startup failures, batches of commands sent in one write (answers and
 * console text matched to each, a failing command in the middle), the
 * silence callback (called while gdb says nothing; ends event waits only).
 * SIGPIPE keeps its default disposition on purpose.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mi_conn.h"
#include "check.h"

static char target[4096];

static long long elapsed_ms(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000LL + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static struct mi_conn *spawn(void)
{
	struct mi_error err;
	struct mi_conn *c = mi_conn_spawn(NULL, &err);
	if (!c) {
		fprintf(stderr, "cannot start gdb: %s\n", err.message);
		exit(1);
	}
	return c;
}

static void test_version(void)
{
	struct mi_error err;
	int major = 0, minor = -1;
	CHECK(mi_gdb_version(NULL, &major, &minor, &err) == 0);
	CHECK(major >= 8 && minor >= 0);
	CHECK(mi_gdb_version("/nonexistent/gdb", &major, &minor, &err) == -1);
	CHECK(strstr(err.message, "/nonexistent/gdb") != NULL);
	CHECK(mi_gdb_version("true", &major, &minor, &err) == -1);
	CHECK(strstr(err.message, "does not look like GNU gdb") != NULL);
}

static void test_basic_calls(void)
{
	struct mi_conn *c = spawn();
	struct mi_error err;
	struct mi_record *r;
	pid_t pid = mi_conn_gdb_pid(c);
	CHECK(pid > 0 && mi_conn_alive(c));
	CHECK(getpgid(pid) == pid && getpgid(pid) != getpgid(0));
	CHECK(mi_conn_fd(c) >= 0);

	CHECK(mi_conn_call(c, 5000, &r, &err, "-gdb-version", NULL) == 0);
	CHECK(r && r->kind == MI_RECORD_RESULT && strcmp(r->klass, "done") == 0);
	CHECK(r && r->console && strstr(r->console, "GNU gdb") != NULL);
	mi_record_free(r);

	/* Without the leading '-', and with the result not wanted. */
	CHECK(mi_conn_call(c, 5000, NULL, &err, "gdb-version", NULL) == 0);

	CHECK(mi_conn_call(c, 5000, &r, &err, "-list-features", NULL) == 0);
	const struct mi_value *features = r ? mi_value_get(r->results, "features") : NULL;
	int thread_info = 0;
	for (size_t i = 0; i < mi_value_count(features); i++)
		thread_info |= strcmp(mi_value_string(mi_value_at(features, i)), "thread-info") == 0;
	CHECK(thread_info);
	CHECK(r && r->console && r->console[0] == '\0');
	mi_record_free(r);

	/* The safety settings from the command line took effect. */
	char *out = NULL;
	CHECK(mi_conn_console(c, 5000, &out, &err, "show confirm") == 0);
	CHECK(out && strstr(out, "off"));
	free(out);
	CHECK(mi_conn_call(c, 5000, &r, &err, "-gdb-show", "mi-async", NULL) == 0);
	CHECK_STR(r ? mi_value_get_string(r->results, "value") : NULL, "on");
	mi_record_free(r);
	CHECK(mi_conn_call(c, 5000, &r, &err, "-gdb-show", "auto-load", "python-scripts", NULL) == 0);
	CHECK_STR(r ? mi_value_get_string(r->results, "value") : NULL, "off");
	mi_record_free(r);

	/* ^error: -1, gdb's message, and the record for inspection. */
	CHECK(mi_conn_call(c, 5000, &r, &err, "-data-evaluate-expression", "no_such_symbol", NULL) == -1);
	CHECK_STR(err.message, "No symbol table is loaded.  Use the \"file\" command.");
	CHECK(r && strcmp(r->klass, "error") == 0);
	mi_record_free(r);
	CHECK(mi_conn_call(c, 5000, &r, &err, "-no-such-command", NULL) == -1);
	CHECK_STR(r ? mi_value_get_string(r->results, "code") : NULL, "undefined-command");
	mi_record_free(r);
	CHECK(mi_conn_call(c, 5000, &r, &err, "-gdb-version\n-gdb-exit", NULL) == -1 && r == NULL);
	CHECK(mi_conn_alive(c));

	/* Polling with nothing pending. */
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_next_event(c, 0, &r, &err) == 0 && r == NULL);
	CHECK(mi_conn_next_event(c, 150, &r, &err) == 0);
	long long waited = elapsed_ms(&start);
	CHECK(waited >= 140 && waited < 5000);

	CHECK(mi_conn_close(c, 5000) == 0);
}

/* Finds and removes nothing: returns the index of the first queued event of
 * that class with field=value in the drained array, or -1. */
static int find_event(struct mi_record **events, int n, const char *klass, const char *field,
		      const char *value)
{
	for (int i = 0; i < n; i++)
		if (strcmp(events[i]->klass, klass) == 0 &&
		    (!field || (mi_value_get_string(events[i]->results, field) &&
				strcmp(mi_value_get_string(events[i]->results, field), value) == 0)))
			return i;
	return -1;
}

static void big_buffer_marker_check(struct mi_conn *c)
{
	struct mi_error err;
	struct mi_record *r;
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-data-evaluate-expression",
			   "big_buffer[sizeof big_buffer - 1] = 0x5a", NULL) == 0);
	CHECK(mi_conn_call(c, 20000, &r, &err, "-data-read-memory-bytes", "big_buffer",
			   "2097152", NULL) == 0);
	const struct mi_value *block = mi_value_at(r ? mi_value_get(r->results, "memory") : NULL, 0);
	const char *hex = mi_value_get_string(block, "contents");
	size_t len = mi_value_string_len(mi_value_get(block, "contents"));
	CHECK(hex && len == 2 * 2097152);
	CHECK(hex && len >= 4 && strcmp(hex + len - 4, "005a") == 0 && hex[0] == '0');
	mi_record_free(r);
}

static void test_session(void)
{
	struct mi_conn *c = spawn();
	struct mi_error err;
	struct mi_record *r;
	CHECK(mi_conn_call(c, 10000, NULL, &err, "-file-exec-and-symbols", target, NULL) == 0);
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-break-insert", "leaf_function", NULL) == 0);
	CHECK(mi_conn_call(c, 10000, &r, &err, "-exec-run", NULL) == 0);
	CHECK_STR(r ? r->klass : NULL, "running");
	mi_record_free(r);

	struct mi_record *stopped;
	CHECK(mi_conn_wait_stopped(c, 10000, &stopped, &err) == 1);
	CHECK_STR(stopped ? mi_value_get_string(stopped->results, "reason") : NULL, "breakpoint-hit");
	CHECK_STR(mi_value_get_string(mi_value_get(stopped ? stopped->results : NULL, "frame"), "func"),
		  "leaf_function");
	mi_record_free(stopped);

	/* Everything before the stop stayed queued, in arrival order. */
	struct mi_record *events[256];
	int n = 0;
	while (n < 256 && mi_conn_next_event(c, 0, &events[n], &err) == 1)
		n++;
	int group = find_event(events, n, "thread-group-started", NULL, NULL);
	int main_thread = find_event(events, n, "thread-created", "id", "1");
	int second_thread = find_event(events, n, "thread-created", "id", "2");
	CHECK(group >= 0 && main_thread > group && second_thread > main_thread);
	CHECK(find_event(events, n, "running", "thread-id", "all") >= 0);
	CHECK(find_event(events, n, "library-loaded", NULL, NULL) >= 0);
	for (int i = 0; i < n; i++) {
		CHECK(events[i]->kind == MI_RECORD_EXEC || events[i]->kind == MI_RECORD_NOTIFY ||
		      events[i]->kind == MI_RECORD_STATUS);
		CHECK(strcmp(events[i]->klass, "stopped") != 0);
		mi_record_free(events[i]);
	}
	/* The program wrote text without a newline; gdb's next record was still
	 * recovered from the end of that line. */
	CHECK(mi_conn_junk_lines(c) >= 1);

	CHECK(mi_conn_call(c, 5000, &r, &err, "-stack-list-frames", NULL) == 0);
	const struct mi_value *stack = r ? mi_value_get(r->results, "stack") : NULL;
	CHECK(mi_value_count(stack) >= 3);
	CHECK_STR(mi_value_get_string(mi_value_at(stack, 1), "func"), "middle_function");
	mi_record_free(r);

	/* A 4 MB answer line (2 MiB as hex) comes through the framing whole. */
	big_buffer_marker_check(c);

	/* A call that outlives its timeout; its late answer must not be taken
	 * for the next call's. (No breakpoints while the other threads run.) */
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-break-delete", NULL) == 0);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_call(c, 200, &r, &err, "-data-evaluate-expression", "slow_function(3000)", NULL) == -1);
	long long waited = elapsed_ms(&start);
	/* under 2.5 s: it gave up at its timeout, not when the answer came */
	CHECK(r == NULL && waited >= 190 && waited < 2500);
	CHECK_STR(err.message, "gdb did not answer -data-evaluate-expression within 200 ms");
	CHECK(mi_conn_call(c, 10000, &r, &err, "-data-evaluate-expression", "7*6", NULL) == 0);
	CHECK_STR(r ? mi_value_get_string(r->results, "value") : NULL, "42");
	mi_record_free(r);
	CHECK(elapsed_ms(&start) >= 2950);

	/* Run to the end: the threads exit, libm comes and goes, exit code 3. */
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-exec-continue", NULL) == 0);
	CHECK(mi_conn_wait_stopped(c, 10000, &stopped, &err) == 1);
	CHECK_STR(stopped ? mi_value_get_string(stopped->results, "reason") : NULL, "exited");
	long long code = -1;
	CHECK(stopped && mi_value_get_int(stopped->results, "exit-code", &code) == 0 && code == 3);
	mi_record_free(stopped);
	n = 0;
	while (n < 256 && mi_conn_next_event(c, 0, &events[n], &err) == 1)
		n++;
	CHECK(find_event(events, n, "thread-exited", "id", "2") >= 0);
	CHECK(find_event(events, n, "library-loaded", "id", "/lib/x86_64-linux-gnu/libm.so.6") >= 0 ||
	      find_event(events, n, "library-loaded", NULL, NULL) >= 0);
	CHECK(find_event(events, n, "thread-group-exited", "exit-code", "03") >= 0);
	for (int i = 0; i < n; i++)
		mi_record_free(events[i]);

	/* gdb is killed mid-session: errors, no SIGPIPE, reaped, freed cleanly. */
	pid_t pid = mi_conn_gdb_pid(c);
	CHECK(kill(pid, SIGKILL) == 0);
	struct timespec pause = {0, 50 * 1000 * 1000};
	nanosleep(&pause, NULL);
	CHECK(mi_conn_call(c, 5000, &r, &err, "-gdb-version", NULL) == -1 && r == NULL);
	CHECK(strstr(err.message, "gdb died") && strstr(err.message, "signal 9"));
	CHECK(!mi_conn_alive(c));
	CHECK(mi_conn_next_event(c, -1, &r, &err) == -1 && strstr(err.message, "gdb died"));
	CHECK(mi_conn_wait_stopped(c, 100, &r, &err) == -1);
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-gdb-version", NULL) == -1);
	CHECK(mi_conn_close(c, 1000) == -1);
}

/* Death noticed while waiting (not on a write): kill during a blocked wait. */
static void test_death_while_waiting(void)
{
	struct mi_conn *c = spawn();
	struct mi_error err;
	struct mi_record *r;
	pid_t pid = mi_conn_gdb_pid(c);
	pid_t killer = fork();
	if (killer == 0) {
		struct timespec pause = {0, 200 * 1000 * 1000};
		nanosleep(&pause, NULL);
		kill(pid, SIGKILL);
		_exit(0);
	}
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_next_event(c, 10000, &r, &err) == -1);
	CHECK(elapsed_ms(&start) < 5000);
	CHECK(strstr(err.message, "killed by signal 9") != NULL);
	CHECK(!mi_conn_alive(c));
	waitpid(killer, NULL, 0);
	mi_conn_free(c);
}

static volatile sig_atomic_t cancel_requested;

static void on_alarm(int sig)
{
	(void)sig;
	cancel_requested = 1;
}

/* A signal handler's flag ends even an endless wait. Returns false when
 * gdb was found killed by a SIGKILL that is not the test's (below). */
static bool test_cancel_once(bool last_try)
{
	struct mi_error err = { "" };
	struct mi_conn_options opt = {.cancel = &cancel_requested};
	cancel_requested = 0;
	struct mi_conn *c = mi_conn_spawn(&opt, &err);
	CHECK(c != NULL);
	if (!c)
		return true;
	struct sigaction sa = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval timer = {.it_value = {0, 200 * 1000}};
	setitimer(ITIMER_REAL, &timer, NULL);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct mi_record *r;
	CHECK(mi_conn_next_event(c, -1, &r, &err) == 0);
	long long waited = elapsed_ms(&start);
	CHECK(waited >= 190 && waited < 5000);
	int called = mi_conn_call(c, -1, NULL, &err, "-gdb-version", NULL);
	/* Twice in CI's ASan run (2 unit tests at a time, pid_max 32768) gdb
	 * was found killed by a SIGKILL nothing in this test sends, during the
	 * 200 ms wait: "gdb died (pid N killed by signal 9)". Its sender was not
	 * found (every kill in the unit tests is to an unreaped child of its
	 * own). The cancel itself is what this test checks: once more, said. */
	/* s10c-l1 (a suite run beside two CPU loops): the call returned 0,
	 * gdb's answer read before any wait (the cancel is looked at only when
	 * a wait would block: nothing to interrupt), and err, never set, held
	 * an earlier test's "killed by signal 9" from the stack, which may be
	 * all the "outside SIGKILL" above ever was. err is cleared now; an
	 * answer that came first is a try that tested nothing: once more. */
	if (!last_try && called == 0) {
		printf("note: gdb answered -gdb-version before the wait began: run once more\n");
		mi_conn_free(c);
		return false;
	}
	if (!last_try && called == -1 && strstr(err.message, "killed by signal 9")) {
		printf("note: %s during the cancel test, killed from outside: run once more\n", err.message);
		mi_conn_free(c);
		return false;
	}
	CHECK(called == -1);
	CHECK_STR(err.message, "interrupted while waiting for gdb to answer -gdb-version");
	cancel_requested = 0;
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-list-features", NULL) == 0);
	/* A console command cannot smuggle a second line. */
	char *out = (char *)1;
	CHECK(mi_conn_console(c, 5000, &out, &err, "echo a\nshow version") == -1 && out == NULL);
	CHECK(strstr(err.message, "one line") != NULL);
	CHECK(mi_conn_console(c, 5000, &out, &err, "echo one line") == 0);
	CHECK_STR(out, "one line");
	free(out);
	CHECK(mi_conn_close(c, 5000) == 0);
	return true;
}

static void test_cancel(void)
{
	/* In s8b-i2 (a plain fresh-clone suite run) both of two tries were
	 * killed so, 200 ms apart: up to four tries, a second apart. */
	for (int try = 1; try <= 4; try++) {
		if (test_cancel_once(try == 4))
			return;
		sleep(1);
	}
}

struct silence_log {
	int calls, first_ms, last_ms, end_at_ms;
};

static bool on_silence(void *ctx, int silent_ms)
{
	struct silence_log *log = ctx;
	if (log->calls++ == 0)
		log->first_ms = silent_ms;
	log->last_ms = silent_ms;
	return log->end_at_ms > 0 && silent_ms >= log->end_at_ms;
}

/* on_silence is called every 250 ms that a wait reads nothing, with how
 * long gdb has been silent; true ends an event wait, never a call's. */
static void test_silence(void)
{
	struct silence_log log = { 0 };
	struct mi_error err = { "" };
	struct mi_conn_options opt = {.on_silence = on_silence, .on_silence_ctx = &log};
	struct mi_conn *c = mi_conn_spawn(&opt, &err);
	CHECK(c != NULL);
	if (!c)
		return;
	struct mi_record *r;
	struct timespec start;
	/* not asked to end: the wait runs its course, called along the way */
	log = (struct silence_log){ 0 };
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_next_event(c, 800, &r, &err) == 0);
	CHECK(elapsed_ms(&start) >= 790);
	CHECK(log.calls >= 2);
	CHECK(log.last_ms > log.first_ms && log.last_ms >= 500);
	/* asked to end once gdb has been silent 500 ms: long before 10 s */
	log = (struct silence_log){.end_at_ms = 500};
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_next_event(c, 10000, &r, &err) == 0);
	long long waited = elapsed_ms(&start);
	CHECK(waited < 5000);
	CHECK(log.last_ms >= 500);
	/* a call's wait is not ended: gdb silent 600 ms in a command (its
	 * python sleeping), the callback asking to end from 1 ms on */
	log = (struct silence_log){.end_at_ms = 1};
	err.message[0] = '\0';
	char *out = NULL;
	int slept = mi_conn_console(c, 5000, &out, &err, "python import time; time.sleep(0.6)");
	free(out);
	if (slept == 0)
		CHECK(log.calls >= 1);
	else /* a gdb built without python */
		CHECK(strstr(err.message, "Python scripting is not supported") != NULL);
	/* gdb's answer resets the silence */
	log = (struct silence_log){ 0 };
	CHECK(mi_conn_next_event(c, 300, &r, &err) == 0);
	CHECK(log.calls >= 1 && log.first_ms < 500);
	CHECK(mi_conn_close(c, 5000) == 0);
}

static void test_close_escalation(void)
{
	/* A stopped gdb ignores -gdb-exit and SIGTERM; close must still end it. */
	struct mi_conn *c = spawn();
	kill(mi_conn_gdb_pid(c), SIGSTOP);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_close(c, 200) == -1);
	CHECK(elapsed_ms(&start) < 3000);

	/* mi_conn_free on a live gdb kills and reaps it. */
	c = spawn();
	pid_t pid = mi_conn_gdb_pid(c);
	mi_conn_free(c);
	CHECK(kill(pid, 0) == -1);
}

static void test_startup_failures(void)
{
	struct mi_error err;
	struct mi_conn_options opt = {.gdb_path = "/nonexistent/gdb-for-test"};
	CHECK(mi_conn_spawn(&opt, &err) == NULL);
	CHECK(strstr(err.message, "cannot run gdb '/nonexistent/gdb-for-test'") != NULL);

	opt.gdb_path = "false";
	CHECK(mi_conn_spawn(&opt, &err) == NULL);
	CHECK(strstr(err.message, "failed to start") && strstr(err.message, "exited with status 1"));

	/* Something that never prints a prompt. */
	char dir[] = "/tmp/test_mi_conn.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char script[sizeof dir + 16];
	snprintf(script, sizeof script, "%s/silent", dir);
	FILE *f = fopen(script, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("#!/bin/sh\necho not-mi >&2\nexec sleep 30\n", f);
	fclose(f);
	chmod(script, 0755);
	opt.gdb_path = script;
	opt.startup_timeout_ms = 300;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK(mi_conn_spawn(&opt, &err) == NULL);
	CHECK(strstr(err.message, "no MI prompt within 300 ms") != NULL);
	CHECK(elapsed_ms(&start) < 3000);
	unlink(script);
	rmdir(dir);
}

static void test_batch(void)
{
	struct mi_conn *c = spawn();
	struct mi_error err;
	const char *show_width[] = { "width", NULL }, *echo[] = { "console", "echo batched\\n", NULL };
	const char *bad_expr[] = { "no_such_symbol", NULL };
	struct mi_batch_call batch[4] = {
		{ .command = "-gdb-show", .args = show_width },
		{ .command = "-data-evaluate-expression", .args = bad_expr },
		{ .command = "-interpreter-exec", .args = echo },
		{ .command = "gdb-version" },
	};
	CHECK(mi_conn_call_batch(c, 5000, batch, 4, &err) == -1);
	CHECK(strstr(err.message, "-data-evaluate-expression: No symbol table is loaded") != NULL);
	CHECK(batch[0].rc == 0 && batch[0].result);
	CHECK_STR(batch[0].result ? mi_value_get_string(batch[0].result->results, "value") : NULL, "unlimited");
	CHECK(batch[1].rc == -1 && batch[1].result && strcmp(batch[1].result->klass, "error") == 0);
	CHECK_STR(batch[1].err.message, "No symbol table is loaded.  Use the \"file\" command.");
	/* Console text goes with the command that printed it, not its neighbours. */
	CHECK(batch[2].rc == 0 && batch[2].result);
	CHECK_STR(batch[2].result ? batch[2].result->console : NULL, "batched\n");
	CHECK(batch[0].result && batch[0].result->console && batch[0].result->console[0] == '\0');
	CHECK(batch[3].rc == 0 && batch[3].result && strstr(batch[3].result->console, "GNU gdb"));
	for (size_t i = 0; i < 4; i++)
		mi_record_free(batch[i].result);

	/* All succeed: 0. An empty batch sends nothing. Calls go on as before. */
	struct mi_batch_call two[2] = { { .command = "-gdb-show", .args = show_width }, { .command = "-list-features" } };
	CHECK(mi_conn_call_batch(c, 5000, two, 2, &err) == 0);
	CHECK(two[0].rc == 0 && two[1].rc == 0 && two[1].result && mi_value_get(two[1].result->results, "features"));
	mi_record_free(two[0].result);
	mi_record_free(two[1].result);
	CHECK(mi_conn_call_batch(c, 5000, two, 0, &err) == 0);
	CHECK(mi_conn_call(c, 5000, NULL, &err, "-gdb-show", "width", NULL) == 0);

	/* A command with a newline is refused before anything is sent. */
	struct mi_batch_call bad[2] = { { .command = "-gdb-show" }, { .command = "-gdb-version\n-gdb-exit" } };
	CHECK(mi_conn_call_batch(c, 5000, bad, 2, &err) == -1);
	CHECK(strstr(err.message, "contains a newline") != NULL);
	CHECK(bad[0].rc == -1 && !bad[0].result && mi_conn_alive(c));

	/* gdb gone: -1 for every command. */
	mi_conn_kill(c, "was killed by the test");
	CHECK(mi_conn_call_batch(c, 5000, two, 2, &err) == -1);
	CHECK(two[0].rc == -1 && two[1].rc == -1 && !two[0].result);
	mi_conn_free(c);
}

int main(void)
{
	const char *fixtures = getenv("FIXTURES");
	snprintf(target, sizeof target, "%s/mi_target", fixtures ? fixtures : "tests/fixtures/bin");
	if (access(target, X_OK) != 0) {
		fprintf(stderr, "fixture %s missing: run `make check` (builds it)\n", target);
		return 1;
	}
	test_version();
	test_basic_calls();
	test_batch();
	test_session();
	test_death_while_waiting();
	test_cancel();
	test_silence();
	test_close_escalation();
	test_startup_failures();
	return test_exit_code();
}
