/* test_procfs.c — what /proc's text says (src/procfs/proc_parse.h), on
 * canned text: comms with spaces, ')' and fake fields in them, comms of 15
 * bytes, cut lines and missing fields, "running" in syscall, numbers past
 * 2^53; then the readers of proc.h on this process and on children. Links
 * procfs and util only. Exit 0 pass, 1 fail. */
#include "procfs/proc.h"
#include "procfs/proc_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

/* A stat line of the kernel's shape (52 fields) whose unread fields hold
 * their own field number, so a parser that reads the wrong field gets a
 * number that says which. */
static void stat_line(char *buf, size_t size, const char *comm, char state, uint64_t utime, uint64_t stime,
		      uint64_t start, int processor)
{
	int n = snprintf(buf, size, "4321 (%s) %c 77 5 6 7 -1 4194560 10 11 12 13 %" PRIu64 " %" PRIu64
			 " 16 17 18 19 20 21 %" PRIu64, comm, state, utime, stime, start);
	for (int field = 23; field <= 52 && n > 0 && (size_t)n < size; field++)
		n += snprintf(buf + n, size - (size_t)n, " %d", field == 39 ? processor : field);
	if (n > 0 && (size_t)n < size - 1)
		strcpy(buf + n, "\n");
}

static void test_stat_fields(void)
{
	char line[1024];
	struct proc_stat st;
	stat_line(line, sizeof line, "worker-1", 'R', 1234, 56, 499553, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK(st.pid == 4321 && st.state == 'R' && st.ppid == 77);
	CHECK_STR(st.comm, "worker-1");
	CHECK(st.flags == 4194560);
	CHECK(st.minflt == 10 && st.majflt == 12);
	CHECK(st.utime == 1234 && st.stime == 56);
	CHECK(st.start_ticks == 499553);
	CHECK(st.processor == 1);

	/* kthreadd as this kernel prints it: PF_KTHREAD in the flags */
	CHECK(proc_parse_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 25 0 0 "
			      "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 "
			      "0 0\n", &st) == 0);
	CHECK(st.pid == 2 && st.ppid == 0 && (st.flags & 0x00200000) && st.start_ticks == 25);
	CHECK(st.processor == 1);   /* field 39, after exit_signal 0 */
	CHECK_STR(st.comm, "kthreadd");

	/* What proc_threads lists: CPU ticks are utime + stime, the kernel's
	 * share stime, and the switches status's (0 here). */
	struct proc_thread t;
	memset(&t, 0xff, sizeof t);
	stat_line(line, sizeof line, "tokio-rt", 'S', 300, 45, 1, 0);
	CHECK(proc_parse_thread_stat(line, &t) == 0);
	CHECK(t.tid == 4321 && t.state == 'S' && t.last_cpu == 0);
	CHECK(t.cpu_ticks == 345 && t.kernel_ticks == 45);
	CHECK(t.voluntary_switches == 0 && t.involuntary_switches == 0);
	CHECK_STR(t.name, "tokio-rt");
}

/* A thread names itself what it likes (prctl, pthread_setname_np): only
 * the last ')' ends the comm. */
static void test_stat_hostile_comm(void)
{
	char line[1024];
	struct proc_stat st;
	stat_line(line, sizeof line, "(a) b)", 'D', 9, 8, 7, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, "(a) b)");
	CHECK(st.state == 'D' && st.ppid == 77 && st.utime == 9 && st.stime == 8 && st.start_ticks == 7);

	/* fake fields inside the comm: none of them is read */
	stat_line(line, sizeof line, "x) Z 1 2 3 (y", 'S', 100, 200, 300, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, "x) Z 1 2 3 (y");
	CHECK(st.state == 'S' && st.ppid == 77 && st.utime == 100 && st.stime == 200 && st.start_ticks == 300);

	stat_line(line, sizeof line, " ", 'R', 1, 2, 3, 0);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, " ");
	CHECK(st.state == 'R' && st.utime == 1);

	stat_line(line, sizeof line, "", 'R', 1, 2, 3, 0);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, "");
}

static void test_stat_comm_lengths(void)
{
	char line[1024];
	struct proc_stat st;
	/* 15 bytes: the most the kernel keeps, kept whole */
	stat_line(line, sizeof line, "abcdefghijklmno", 'S', 1, 2, 3, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK_STR(st.comm, "abcdefghijklmno");
	CHECK(st.state == 'S' && st.processor == 1);
	/* Longer than the field (not from this kernel): cut, the fields after
	 * it still read. */
	stat_line(line, sizeof line, "0123456789abcdefghijklmnopqrstuvwxyz", 'R', 5, 6, 7, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK(strlen(st.comm) == sizeof st.comm - 1 && strncmp(st.comm, "0123456789abcdefghijklmnopqrstu", 31) == 0);
	CHECK(st.state == 'R' && st.utime == 5 && st.stime == 6 && st.start_ticks == 7);
}

static void test_stat_cut(void)
{
	struct proc_stat st;
	/* Lines cut before the comm ends, or with nothing after it */
	CHECK(proc_parse_stat("", &st) == -1);
	CHECK(proc_parse_stat("4321", &st) == -1);
	CHECK(proc_parse_stat("4321 (worker", &st) == -1);
	CHECK(proc_parse_stat("4321 (worker)", &st) == -1);
	CHECK(proc_parse_stat("4321 (a)b) S 1", &st) == 0 && strcmp(st.comm, "a)b") == 0);
	CHECK(proc_parse_stat("4321 )a( S 1", &st) == -1);
	CHECK(proc_parse_stat("4321 (worker)S 1 2", &st) == -1);
	/* Cut after the state: what it does not reach reads as 0, the
	 * processor as -1 (unknown, not CPU 0). */
	CHECK(proc_parse_stat("4321 (worker) R", &st) == 0);
	CHECK(st.state == 'R' && st.ppid == 0 && st.utime == 0 && st.start_ticks == 0 && st.processor == -1);
	/* Cut after stime (field 15): CPU time known, start and CPU not. */
	CHECK(proc_parse_stat("4321 (worker) R 77 5 6 7 -1 64 10 11 12 13 400 30", &st) == 0);
	CHECK(st.ppid == 77 && st.flags == 64 && st.utime == 400 && st.stime == 30);
	CHECK(st.start_ticks == 0 && st.processor == -1);
	/* a failed parse leaves nothing of an earlier one */
	CHECK(proc_parse_stat("4321 (w", &st) == -1 && st.utime == 0 && st.comm[0] == '\0' && st.processor == -1);

	struct proc_thread t;
	CHECK(proc_parse_thread_stat("4321 (worker) R 77 5 6 7 -1 64 10 11 12 13 400", &t) == 0);
	CHECK(t.cpu_ticks == 400 && t.kernel_ticks == 0 && t.last_cpu == -1);
}

static void test_stat_huge(void)
{
	char line[1024];
	struct proc_stat st;
	/* Counters past 2^53 (no double on the way) and at 2^64 - 1. */
	stat_line(line, sizeof line, "big", 'R', 9007199254740993u, 18446744073709551615u, 18446744073709551614u, 1);
	CHECK(proc_parse_stat(line, &st) == 0);
	CHECK(st.utime == 9007199254740993u);
	CHECK(st.stime == UINT64_MAX);
	CHECK(st.start_ticks == 18446744073709551614u);
	/* A PID past 2^22 (pid_max can be that high) */
	CHECK(proc_parse_stat("4194303 (x) S 4194302", &st) == 0 && st.pid == 4194303 && st.ppid == 4194302);
}

static const char status_text[] =
	"Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4321\nNgid:\t0\nPid:\t4322\nPPid:\t1\n"
	"TracerPid:\t8765\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nVmData:\t   15648 kB\nThreads:\t3\n"
	"Cpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n";

static void test_status(void)
{
	struct proc_status s;
	CHECK(proc_parse_status(status_text, &s) == 0);
	CHECK(s.tracer_pid == 8765);
	/* voluntary_ctxt_switches is not read inside nonvoluntary_'s name */
	CHECK(s.voluntary_switches == 150 && s.involuntary_switches == 7);
	CHECK(s.vm_data_kb == 15648);

	static const char nonvoluntary_first[] = "Name:\tx\nnonvoluntary_ctxt_switches:\t9\nvoluntary_ctxt_switches:\t4\n";
	CHECK(proc_parse_status(nonvoluntary_first, &s) == 0);
	CHECK(s.voluntary_switches == 4 && s.involuntary_switches == 9 && s.tracer_pid == 0);

	/* Cut before the switches (a short read): the tracer is known, the
	 * switches are not, and the parse says so. */
	char cut[sizeof status_text];
	strcpy(cut, status_text);
	cut[strstr(cut, "voluntary_ctxt_switches:\t150") - cut + 10] = '\0';
	CHECK(proc_parse_status(cut, &s) == -1);
	CHECK(s.tracer_pid == 8765 && s.voluntary_switches == 0);

	/* A field name inside another line's value is no field */
	CHECK(proc_parse_status("Name:\tvoluntary_ctxt_switches: 5\n", &s) == -1 && s.voluntary_switches == 0);
	CHECK(proc_parse_status("", &s) == -1);
	CHECK(proc_parse_status("voluntary_ctxt_switches:\t18446744073709551615\n", &s) == 0 &&
	      s.voluntary_switches == UINT64_MAX);
}

static void test_schedstat(void)
{
	struct proc_schedstat s;
	memset(&s, 0xff, sizeof s);
	CHECK(proc_parse_schedstat("178972493 15541748 381\n", &s) == 3);
	CHECK(s.run_ns == 178972493u && s.wait_ns == 15541748u && s.slices == 381 && s.voluntary_switches == 0);
	CHECK(proc_parse_schedstat("18446744073709551615 9007199254740993 1\n", &s) == 3);
	CHECK(s.run_ns == UINT64_MAX && s.wait_ns == 9007199254740993u);
	/* cut: what it holds, the rest 0 */
	CHECK(proc_parse_schedstat("5000 12", &s) == 2 && s.run_ns == 5000 && s.wait_ns == 12 && s.slices == 0);
	CHECK(proc_parse_schedstat("5000", &s) == 1 && s.run_ns == 5000 && s.wait_ns == 0);
	CHECK(proc_parse_schedstat("", &s) == 0 && s.run_ns == 0);
	CHECK(proc_parse_schedstat("garbage", &s) == 0 && s.run_ns == 0);
	/* A kernel without CONFIG_SCHED_INFO: zeros, read as zeros (the
	 * reader, proc_thread_schedstat, refuses them) */
	CHECK(proc_parse_schedstat("0 0 0\n", &s) == 3 && s.run_ns == 0 && s.slices == 0);
}

static void test_kernel_stack(void)
{
	char where[64];
	proc_parse_kernel_stack("[<0>] futex_do_wait+0x4a/0x70\n[<0>] __futex_wait+0x8e/0x100\n"
				"[<0>] do_syscall_64+0x71/0x290\n", where, sizeof where);
	CHECK_STR(where, "futex_do_wait");
	/* a name without an offset, then cut short of its newline */
	proc_parse_kernel_stack("[<0>] do_nanosleep\n", where, sizeof where);
	CHECK_STR(where, "do_nanosleep");
	proc_parse_kernel_stack("[<0>] ep_poll", where, sizeof where);
	CHECK_STR(where, "ep_poll");
	/* nothing named: "" */
	strcpy(where, "stale");
	proc_parse_kernel_stack("", where, sizeof where);
	CHECK_STR(where, "");
	strcpy(where, "stale");
	proc_parse_kernel_stack("[<0>]", where, sizeof where);
	CHECK_STR(where, "");
	/* a small buffer gets the name's start */
	char small[6];
	proc_parse_kernel_stack("[<0>] __do_sys_sched_yield+0x1/0x2\n", small, sizeof small);
	CHECK_STR(small, "__do_");
	/* no room at all: nothing written */
	char none = 'x';
	proc_parse_kernel_stack("[<0>] f+0x1/0x2\n", &none, 0);
	CHECK(none == 'x');
}

static void test_syscall_text(void)
{
	struct proc_syscall sc;
	CHECK(proc_parse_syscall("-1 0x7ffd5c3a1f08 0x55d0c1a2b3c4\n", &sc) == 0);
	CHECK(!sc.in_syscall && sc.nr == -1 && sc.sp == 0x7ffd5c3a1f08u && sc.pc == 0x55d0c1a2b3c4u);
	CHECK(proc_parse_syscall("202 0x5581a0 0x80 0x2 0x0 0x0 0x0 0x7f3a9bfed9c0 0x7f3a9c28f7c9\n", &sc) == 0);
	CHECK(sc.in_syscall && sc.nr == 202 && sc.args[0] == 0x5581a0u && sc.args[1] == 0x80 && sc.args[2] == 2);
	CHECK(sc.sp == 0x7f3a9bfed9c0u && sc.pc == 0x7f3a9c28f7c9u);
	/* read (0) is a call too, and arguments use all 64 bits */
	CHECK(proc_parse_syscall("0 0xffffffffffffffff 0x7ff95670e000 0x20000 0x0 0x0 0x0 0x7ffd583812d8 "
				 "0xffffffffff600000\n", &sc) == 0);
	CHECK(sc.in_syscall && sc.nr == 0 && sc.args[0] == UINT64_MAX && sc.pc == 0xffffffffff600000u);
	/* "running": a thread's registers are read only when it is stopped */
	CHECK(proc_parse_syscall("running\n", &sc) == -1);
	CHECK(proc_parse_syscall("running", &sc) == -1 && !sc.in_syscall && sc.sp == 0 && sc.pc == 0);
	/* cut, or of another shape */
	CHECK(proc_parse_syscall("202 0x1 0x2\n", &sc) == -1);
	CHECK(proc_parse_syscall("202 0x1 0x2 0x3 0x4 0x5 0x6 0x7", &sc) == -1);
	CHECK(proc_parse_syscall("-1 0x7ffd5c3a1f08", &sc) == -1);
	CHECK(proc_parse_syscall("-1 0x1 0x2 junk\n", &sc) == -1);
	CHECK(proc_parse_syscall("-1 0x1 0x2 0x3\n", &sc) == -1);
	CHECK(proc_parse_syscall("", &sc) == -1);
}

static void test_maps_line(void)
{
	uint64_t start, end;
	const char *path;
	CHECK(proc_parse_maps_line("55e1c9279000-55e1c927f000 r-xp 00002000 fe:00 247498                     "
				   "/usr/bin/head", &start, &end, &path) == 0);
	CHECK(start == 0x55e1c9279000u && end == 0x55e1c927f000u);
	CHECK_STR(path, "/usr/bin/head");
	/* spaces in a path, and the kernel's " (deleted)", stay */
	CHECK(proc_parse_maps_line("7f0000000000-7f0000001000 r-xp 00000000 fe:00 12 /tmp/my lib.so (deleted)",
				   &start, &end, &path) == 0);
	CHECK_STR(path, "/tmp/my lib.so (deleted)");
	CHECK(proc_parse_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  "
				   "[vsyscall]", &start, &end, &path) == 0);
	CHECK(start == 0xffffffffff600000u && end == 0xffffffffff601000u);
	CHECK_STR(path, "[vsyscall]");
	/* anonymous: no path */
	CHECK(proc_parse_maps_line("7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ", &start, &end, &path) == 0);
	CHECK_STR(path, "");
	/* cut before the inode */
	CHECK(proc_parse_maps_line("7f0000000000-7f0000001000 rw-p 00000000 00:00", &start, &end, &path) == -1);
	CHECK(proc_parse_maps_line("", &start, &end, &path) == -1);
}

static void test_names(void)
{
	CHECK(proc_comm_matches("kvservice", "kvservice") == PROC_NAME_YES);
	CHECK(proc_comm_matches("kvservice", "kvservic") == PROC_NAME_NO);
	CHECK(proc_comm_matches("kvservic", "kvservice") == PROC_NAME_NO);
	/* 15 bytes: the whole name fits the comm */
	CHECK(proc_comm_matches("abcdefghijklmno", "abcdefghijklmno") == PROC_NAME_YES);
	CHECK(proc_comm_matches("abcdefghijklmnX", "abcdefghijklmno") == PROC_NAME_NO);
	/* 16 and more: the comm is the name's first 15 bytes; argv[0] decides */
	CHECK(proc_comm_matches("abcdefghijklmno", "abcdefghijklmnop") == PROC_NAME_IF_ARGV0);
	CHECK(proc_comm_matches("abcdefghijklmno", "abcdefghijklmnoXYZ") == PROC_NAME_IF_ARGV0);
	CHECK(proc_comm_matches("abcdefghijklmnX", "abcdefghijklmnop") == PROC_NAME_NO);

	/* argv[0]'s last component; the arguments after its NUL do not count */
	static const char cmdline[] = "/opt/svc/bin/abcdefghijklmnop\0--port\0" "8080";
	CHECK(proc_argv0_is(cmdline, "abcdefghijklmnop"));
	CHECK(!proc_argv0_is(cmdline, "abcdefghijklmno"));
	CHECK(!proc_argv0_is(cmdline, "--port"));
	CHECK(proc_argv0_is("kvservice", "kvservice"));
	CHECK(!proc_argv0_is("/usr/bin/", "bin"));
}

/* The readers, on this process: a thread named like the hostile case
 * above, read back through /proc. */
static void test_read_self(void)
{
	char old_name[32] = "";
	prctl(PR_GET_NAME, old_name);
	CHECK(prctl(PR_SET_NAME, "(a) b) S 1 2") == 0);
	struct proc_thread t;
	struct xerr e;
	CHECK(proc_thread_read(getpid(), getpid(), &t, &e) == 0);
	CHECK_STR(t.name, "(a) b) S 1 2");
	CHECK(t.state == 'R' && t.tid == getpid() && t.last_cpu >= 0);
	prctl(PR_SET_NAME, old_name);
	CHECK(proc_state(getpid()) == 'R');
	CHECK(proc_cpu_ticks(getpid()) >= 0);
	CHECK(proc_start_ticks(getpid()) > 0);
	CHECK(proc_thread_read(getpid(), 0, &t, &e) == -1);
}

/* /proc/PID/task/TID/syscall read live: where the non-stop sampler takes
 * a stopped thread's rip, rsp and system call from. */
static void test_read_syscall(void)
{
	struct proc_syscall sc;
	/* A child asleep in nanosleep (35), then stopped there: in the call. */
	pid_t child = fork();
	if (child == 0) {
		for (;;)
			sleep(10);
	}
	int in_sleep = 0;
	for (int i = 0; i < 200 && !in_sleep; i++) {
		usleep(5000);
		in_sleep = proc_thread_syscall(child, child, &sc) == 0 && sc.in_syscall &&
			   (sc.nr == 35 || sc.nr == 230);
	}
	CHECK(in_sleep);
	CHECK(sc.sp != 0 && sc.pc != 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	/* A child spinning in user code: "running" until stopped, then -1 and its sp. */
	child = fork();
	if (child == 0) {
		for (volatile unsigned long n = 0;; n++)
			;
	}
	usleep(20000);
	kill(child, SIGSTOP);
	int stopped = 0;
	for (int i = 0; i < 200 && !stopped; i++) {
		usleep(5000);
		stopped = proc_state(child) == 'T';
	}
	CHECK(stopped);
	/* State T is set before the task leaves the CPU: until it has, the
	 * kernel says "running" (no sp, no pc). Seen under load. */
	int rc = -1;
	for (int i = 0; i < 200; i++) {
		rc = proc_thread_syscall(child, child, &sc);
		if (rc != 0 || sc.sp != 0)
			break;
		usleep(5000);
	}
	CHECK(rc == 0);
	CHECK(!sc.in_syscall && sc.nr == -1 && sc.sp != 0 && sc.pc != 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(proc_thread_syscall(child, child, &sc) == -1);
}

/* A zombie's wait status from /proc equals what waitpid then reaps: killed
 * by SIGTRAP (as a target whose gdb died with a trap pending), and an exit
 * status; alive or reaped: -1. (Mutation: read field 51 instead of 52, and
 * both equalities fail.) */
static void test_zombie_wait_status(void)
{
	int status = -1, reaped;
	CHECK(proc_zombie_wait_status(getpid(), &status) == -1);
	int ends[2][2] = { { 1, SIGTRAP }, { 0, 42 } };  /* {by signal?, which} */
	for (int i = 0; i < 2; i++) {
		pid_t child = fork();
		if (child == 0) {
			if (ends[i][0]) {
				signal(SIGTRAP, SIG_DFL);
				raise(SIGTRAP);
			}
			_exit(ends[i][1]);
		}
		CHECK(child > 0);
		siginfo_t info;
		/* WNOWAIT: wait until it is a zombie, leaving it one. */
		CHECK(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) == 0);
		status = -1;
		CHECK(proc_zombie_wait_status(child, &status) == 0);
		CHECK(waitpid(child, &reaped, 0) == child);
		CHECK_MSG(status == reaped, "/proc said %#x, waitpid %#x", status, reaped);
		CHECK(ends[i][0] ? WIFSIGNALED(reaped) && WTERMSIG(reaped) == SIGTRAP : WEXITSTATUS(reaped) == 42);
		CHECK(proc_zombie_wait_status(child, &status) == -1);
	}
}

/* A process whose main thread has exited while another runs on: its
 * /proc/PID/mem reads nothing (here: the open fails), and proc_open_mem
 * reads the process's memory through the live thread's files. Mutation
 * shown to fail: proc_open_mem returning after the first open. */
static volatile uint64_t memory_marker = 1;

static void *sleep_on(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void test_open_mem_main_thread_gone(void)
{
	pid_t child = fork();
	if (child == 0) {
		memory_marker = 0xfeedfacecafe;   /* the child's own value, not the parent's copy */
		pthread_t t;
		if (pthread_create(&t, NULL, sleep_on, NULL) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	CHECK(child > 0);
	for (int i = 0; i < 200 && proc_state(child) != 'Z'; i++)
		usleep(10000);
	CHECK_MSG(proc_state(child) == 'Z', "the main thread did not exit (state %c)", proc_state(child));
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)child);
	int direct = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t value = 0;
	CHECK_MSG(direct < 0 || pread(direct, &value, sizeof value, (off_t)(uintptr_t)&memory_marker) != sizeof value,
		  "%s reads as before: the case is not made", path);
	if (direct >= 0)
		close(direct);
	int fd = proc_open_mem(child, O_RDONLY);
	CHECK_MSG(fd >= 0, "proc_open_mem: %s", strerror(errno));
	value = 0;
	CHECK(fd >= 0 && pread(fd, &value, sizeof value, (off_t)(uintptr_t)&memory_marker) == sizeof value);
	CHECK_MSG(value == 0xfeedfacecafe, "read %#" PRIx64, value);
	if (fd >= 0)
		close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(proc_open_mem(child, O_RDONLY) < 0);
}

/* This thread's fault count grows by about a fault a page when it
 * touches fresh anonymous pages (sampler_note_faults relies on it).
 * Mutation shown to fail: proc_parse_stat reading minflt from field 11. */
static void test_thread_faults(void)
{
	enum { PAGES = 64 };
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int64_t before = proc_thread_faults(getpid(), tid);
	CHECK(before >= 0);
	long page = sysconf(_SC_PAGESIZE);
	char *fresh = mmap(NULL, (size_t)page * PAGES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fresh != MAP_FAILED);
	for (int i = 0; i < PAGES; i++)
		((volatile char *)fresh)[(long)i * page] = 1;
	int64_t after = proc_thread_faults(getpid(), tid);
	CHECK(after - before >= PAGES / 2);
	munmap(fresh, (size_t)page * PAGES);
	CHECK(proc_thread_faults(getpid(), 999999999) == -1);
}

static volatile sig_atomic_t usr2_taken;
static void take_usr2(int sig)
{
	(void)sig;
	usr2_taken++;
}

/* A blocked signal waits in SigPnd (sent to the thread) or ShdPnd (to the
 * process), as a signal sent to a traced thread waits for its tracer: the
 * guardian's proof of a user's SIGCONT gdb never reported. Mutation shown
 * to fail: proc_parse_status reading SigPnd in decimal. */
static void test_signal_pending(void)
{
	signal(SIGUSR2, take_usr2);
	sigset_t usr2, old;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	CHECK(pthread_sigmask(SIG_BLOCK, &usr2, &old) == 0);
	CHECK(!proc_signal_pending(getpid(), SIGUSR2));
	CHECK(syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR2) == 0);
	CHECK(proc_signal_pending(getpid(), SIGUSR2));
	CHECK(!proc_signal_pending(getpid(), SIGCONT));
	CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
	CHECK(usr2_taken == 1 && !proc_signal_pending(getpid(), SIGUSR2));
	CHECK(pthread_sigmask(SIG_BLOCK, &usr2, &old) == 0);
	CHECK(kill(getpid(), SIGUSR2) == 0);
	CHECK(proc_signal_pending(getpid(), SIGUSR2));
	CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
	CHECK(usr2_taken == 2 && !proc_signal_pending(getpid(), SIGUSR2));
	CHECK(!proc_signal_pending(999999999, SIGUSR2));
	/* bit 63: signal 64, the last real-time one */
	struct proc_status status;
	CHECK(proc_parse_status("SigPnd:\t8000000000000000\nShdPnd:\t0000000000020000\n"
				"voluntary_ctxt_switches:\t1\n", &status) == 0);
	CHECK(status.sig_pending == (uint64_t)1 << 63 && status.shared_pending == (uint64_t)1 << (SIGCONT - 1));
	signal(SIGUSR2, SIG_DFL);
}

/* The CPU a thread runs on, with its faults, from one read of its stat:
 * this one, reading its own, runs on a CPU; -1 for a thread that is gone. */
static void test_thread_faults_at(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int processor = -2;
	CHECK(proc_thread_faults_at(getpid(), tid, &processor) >= 0 && processor >= 0 &&
	      processor < sysconf(_SC_NPROCESSORS_CONF));
	CHECK(proc_thread_faults_at(getpid(), 999999999, &processor) == -1 && processor == -1);
}

static void *fork_a_child(void *arg)
{
	pid_t *child = arg;
	*child = fork();
	if (*child == 0) {
		pause();
		_exit(0);
	}
	return NULL;
}

/* Children are listed from every thread's file: one forked by the main
 * thread, one by another thread (its file, not the main thread's, holds it). */
static void test_children(void)
{
	pid_t *kids;
	int before = proc_children(getpid(), &kids);
	CHECK(before >= 0);
	free(kids);
	pid_t by_main = fork();
	if (by_main == 0) {
		pause();
		_exit(0);
	}
	pid_t by_thread = -1;
	pthread_t forker;
	CHECK(pthread_create(&forker, NULL, fork_a_child, &by_thread) == 0);
	pthread_join(forker, NULL);
	/* kill(-1, ...) would signal every process we may signal */
	CHECK(by_main > 0 && by_thread > 0);
	if (by_main <= 0 || by_thread <= 0) {
		if (by_main > 0)
			kill(by_main, SIGKILL);
		if (by_thread > 0)
			kill(by_thread, SIGKILL);
		while (wait(NULL) > 0)
			;
		return;
	}
	int n = proc_children(getpid(), &kids);
	CHECK_MSG(n == before + 2, "%d children listed, %d expected", n, before + 2);
	int found = 0;
	for (int i = 0; i < n; i++)
		found += kids[i] == by_main || kids[i] == by_thread;
	CHECK_MSG(found == 2, "both children listed (%d of 2)", found);
	free(kids);
	kill(by_main, SIGKILL);
	kill(by_thread, SIGKILL);
	waitpid(by_main, NULL, 0);
	waitpid(by_thread, NULL, 0);
	n = proc_children(getpid(), &kids);
	CHECK_MSG(n == before, "%d children after both were reaped, %d expected", n, before);
	free(kids);
	CHECK(proc_children(999999999, &kids) == -1 && kids == NULL);
}

int main(void)
{
	test_children();
	test_stat_fields();
	test_thread_faults_at();
	test_signal_pending();
	test_thread_faults();
	test_stat_hostile_comm();
	test_stat_comm_lengths();
	test_stat_cut();
	test_stat_huge();
	test_status();
	test_schedstat();
	test_kernel_stack();
	test_syscall_text();
	test_maps_line();
	test_names();
	test_read_self();
	test_read_syscall();
	test_zombie_wait_status();
	test_open_mem_main_thread_gone();
	return test_exit_code();
}
