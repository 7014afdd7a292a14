/* test_session_stop.c — gdb's stop records read into struct session_stop
 * (session_probes.c): what the tracer acts on, from canned gdb 13 lines,
 * without a live gdb. */
#include "check.h"
#include "session/probes.h"
#include "session/session_internal.h"
#include "mi_record.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_stop(const char *line, struct session_stop *out)
{
	struct mi_record *r = NULL;
	struct mi_error me;
	struct xerr e = { 0 };
	if (mi_parse_line(line, strlen(line), &r, &me) < 0) {
		fprintf(stderr, "unparsable: %s\n", line);
		return -1;
	}
	int rc = session_stop_from_record(r, out, &e);
	mi_record_free(r);
	return rc;
}

static void breakpoint_hit(void)
{
	struct session_stop st;
	CHECK(read_stop("*stopped,reason=\"breakpoint-hit\",disp=\"keep\",bkptno=\"12\",frame={addr=\"0x0000555555555149\","
			"func=\"work\",args=[{name=\"n\"},{name=\"key\"}],file=\"c.c\",fullname=\"/tmp/c.c\",line=\"4\","
			"arch=\"i386:x86-64\"},thread-id=\"7\",stopped-threads=\"all\",core=\"1\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_BREAKPOINT);
	CHECK(st.breakpoint == 12);
	CHECK(st.gdb_thread == 7);
	CHECK(st.syscall_nr == -1 && !st.syscall_name && !st.signal_name);
	CHECK(st.nframe_args == 2);
	if (st.nframe_args == 2) {
		CHECK_STR(st.frame_args[0], "n");
		CHECK_STR(st.frame_args[1], "key");
	}
	session_stop_release(&st);
	CHECK(st.nframe_args == 0 && !st.frame_args);
	session_stop_release(&st);   /* safe twice */

	/* frame-arguments none in non-stop mode: no args list at all */
	CHECK(read_stop("*stopped,reason=\"breakpoint-hit\",disp=\"keep\",bkptno=\"3\",frame={addr=\"0x1\",func=\"f\"},"
			"thread-id=\"2\",stopped-threads=[\"2\"],core=\"0\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_BREAKPOINT && st.breakpoint == 3 && st.gdb_thread == 2);
	CHECK(st.nframe_args == 0);
	session_stop_release(&st);
}

static void syscalls(void)
{
	struct session_stop st;
	CHECK(read_stop("*stopped,reason=\"syscall-entry\",syscall-number=\"202\",syscall-name=\"futex\","
			"frame={addr=\"0x00007ffff7e2b0a6\",func=\"??\",args=[]},thread-id=\"3\",stopped-threads=\"all\",core=\"0\"",
			&st) == 0);
	CHECK(st.reason == SESSION_STOP_SYSCALL_ENTRY);
	CHECK(st.syscall_nr == 202);
	CHECK_STR(st.syscall_name, "futex");
	CHECK(st.gdb_thread == 3 && st.breakpoint == 0);
	session_stop_release(&st);
	/* a number gdb has no name for */
	CHECK(read_stop("*stopped,reason=\"syscall-return\",syscall-number=\"451\",thread-id=\"1\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_SYSCALL_RETURN && st.syscall_nr == 451 && !st.syscall_name);
	session_stop_release(&st);
}

static void signals_exits_exec(void)
{
	struct session_stop st;
	CHECK(read_stop("*stopped,reason=\"signal-received\",signal-name=\"SIGABRT\",signal-meaning=\"Aborted\","
			"frame={addr=\"0x1\",func=\"raise\",args=[]},thread-id=\"4\",stopped-threads=\"all\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_SIGNAL);
	CHECK_STR(st.signal_name, "SIGABRT");
	CHECK(st.gdb_thread == 4);
	session_stop_release(&st);

	const char *exits[] = {
		"*stopped,reason=\"exited\",exit-code=\"03\"",
		"*stopped,reason=\"exited-normally\"",
		"*stopped,reason=\"exited-signalled\",signal-name=\"SIGKILL\",signal-meaning=\"Killed\"",
	};
	for (size_t i = 0; i < sizeof exits / sizeof *exits; i++) {
		CHECK(read_stop(exits[i], &st) == 0);
		CHECK_MSG(st.reason == SESSION_STOP_EXITED, "%s", exits[i]);
		CHECK(!st.signal_name);   /* an exit's signal is not a received one */
		session_stop_release(&st);
	}
	CHECK(read_stop("*stopped,reason=\"exec\",new-exec=\"/usr/bin/true\",frame={addr=\"0x1\",func=\"_start\"},"
			"thread-id=\"1\",stopped-threads=\"all\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_EXEC && st.gdb_thread == 1);
	session_stop_release(&st);
}

static void not_probe_stops(void)
{
	struct session_stop st;
	CHECK(read_stop("*running,thread-id=\"all\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_NONE);
	session_stop_release(&st);
	CHECK(read_stop("=thread-exited,id=\"5\",group-id=\"i1\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_NONE);
	session_stop_release(&st);
	/* an interrupt's stop carries no reason; a fork catchpoint's is its own
	 * (the tracer keeps its stopped time out of the budget) */
	CHECK(read_stop("*stopped,frame={addr=\"0x1\",func=\"f\"},thread-id=\"1\",stopped-threads=\"all\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_OTHER && st.gdb_thread == 1);
	session_stop_release(&st);
	CHECK(read_stop("*stopped,reason=\"fork\",disp=\"keep\",bkptno=\"2\",newpid=\"1234\",thread-id=\"1\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_FORK && st.breakpoint == 0 && st.gdb_thread == 1);
	session_stop_release(&st);
	CHECK(read_stop("*stopped,reason=\"end-stepping-range\",thread-id=\"2\"", &st) == 0);
	CHECK(st.reason == SESSION_STOP_OTHER && st.gdb_thread == 2);
	session_stop_release(&st);
}

/* What a stop that did not complete says of the threads: a sleeping child
 * (not traced) is named with its state and call; a stopped one is not in
 * a tracing stop either (T, not t). */
static void threads_not_stopped(void)
{
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "slow\033name");
		for (;;)
			pause();
	}
	CHECK(child > 0);
	char why[320] = "x";
	for (int i = 0; i < 200; i++) {   /* until it sits in pause() under its new name */
		session_describe_threads_not_stopped(child, why, sizeof why);
		if (strstr(why, " S in pause"))
			break;
		usleep(10000);
	}
	char want[128];
	snprintf(want, sizeof want, " (not in a tracing stop: %d 'slow\\x1bname' S in pause)", (int)child);
	if (strcmp(why, want) != 0) {
		fprintf(stderr, "threads_not_stopped: got '%s', want '%s'\n", why, want);
		test_failures++;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	session_describe_threads_not_stopped(child, why, sizeof why);   /* gone: nothing to say */
	CHECK(why[0] == '\0');
}

/* A disassembly's direct branches into (lo, hi): bounds excluded, the
 * first one's address given; indirect jumps and plain instructions not. */
static void branch_into(void)
{
	const struct session_insn insns[] = {
		{ 0x1000, "mov    $0xe,%eax" },
		{ 0x1005, "jmp    *%rax" },
		{ 0x1007, "jne    0x1010 <f+16>" },
		{ 0x1009, "call   0x1020 <g>" },
		{ 0x100e, "bnd jmp 0x1018 <f+24>" },
	};
	size_t n = sizeof insns / sizeof *insns;
	uint64_t from = 0;
	CHECK(session_insns_branch_into(insns, n, 0x1005, 0x1011, &from) && from == 0x1007);
	CHECK(!session_insns_branch_into(insns, n, 0x1010, 0x1018, NULL));   /* both bounds excluded */
	CHECK(session_insns_branch_into(insns, n, 0x1010, 0x1019, &from) && from == 0x100e);
	CHECK(!session_insns_branch_into(insns, n, 0x1020, 0x2000, NULL));
	CHECK(!session_insns_branch_into(insns, 0, 0, UINT64_MAX, NULL));
}

int main(void)
{
	branch_into();
	threads_not_stopped();
	breakpoint_hit();
	syscalls();
	signals_exits_exec();
	not_probe_stops();
	return test_exit_code();
}
