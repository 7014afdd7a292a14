/* test_tracer.c — pure parts of the tracer: name keys, SPEC parsing, the
 * byte restore and the stop clock on real child processes (no gdb). */
#include "util/clock.h"
#include "procfs/proc.h"
#include "session/restore.h"
#include "trace/stop_clock.h"
#include "trace/tracer.h"
#include "trace/tracer_resolve.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include "check.h"



static void key_is(const char *name, const char *want)
{
	char key[512];
	tracer_name_key(name, key, sizeof key);
	if (strcmp(key, want) != 0) {
		fprintf(stderr, "FAIL key(%s) = '%s', want '%s'\n", name, key, want);
		test_failures++;
	}
}

static void test_keys(void)
{
	key_is("sled::tree::Tree<K,V>::insert", "sled::tree::Tree::insert");
	key_is("<sled::tree::Tree<u64, alloc::string::String>>::insert", "sled::tree::Tree::insert");
	key_is("sled::tree::Tree<K,V>::insert::h0123456789abcdef", "sled::tree::Tree::insert");
	key_is("<u64 as core::fmt::Debug>::fmt", "::fmt");   /* trait impls are not unwrapped */
	key_is("hot_step", "hot_step");
	key_is("a::b<c<d>>::e<f>", "a::b::e");
}

static void test_parse(void)
{
	enum probe_spec_kind kind;
	char *pattern, *file;
	int line;
	struct xerr e;
	CHECK(tracer_parse_spec("/ins.*/", &kind, &pattern, &file, &line, &e) == 0);
	CHECK(kind == PROBE_SPEC_REGEX && strcmp(pattern, "ins.*") == 0);
	free(pattern);
	free(file);
	CHECK(tracer_parse_spec("src/tree.rs:120", &kind, &pattern, &file, &line, &e) == 0);
	CHECK(kind == PROBE_SPEC_FILELINE && strcmp(file, "src/tree.rs") == 0 && line == 120);
	free(pattern);
	free(file);
	CHECK(tracer_parse_spec("a::b::c", &kind, &pattern, &file, &line, &e) == 0);
	CHECK(kind == PROBE_SPEC_NAME && strcmp(pattern, "a::b::c") == 0 && file == NULL);
	free(pattern);
	CHECK(tracer_parse_spec("", &kind, &pattern, &file, &line, &e) < 0);
}

/* A child spins on a code page; we plant 0xCC in a spare byte of it (as a
 * dead gdb would leave it), then restore_set_after_gdb_died must put the
 * original back and leave the child running. */
static void test_restore(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(code != MAP_FAILED);
	if (code == MAP_FAILED)
		return;
	memset(code, 0x90, (size_t)page);   /* nops, never executed */
	pid_t child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	usleep(50000);
	struct restore_set rs;
	struct xerr e;
	restore_set_init(&rs, child);
	uint64_t addr = (uint64_t)(uintptr_t)(code + 100);
	CHECK(restore_set_remember(&rs, addr, &e) == 0);
	uint8_t orig = 0;
	CHECK(restore_set_lookup(&rs, addr, &orig) == 1 && orig == 0x90);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)child);
	int fd = open(path, O_RDWR);
	unsigned char int3 = 0xCC, now = 0;
	CHECK(fd >= 0 && pwrite(fd, &int3, 1, (off_t)addr) == 1);
	struct restore_report rep;
	CHECK(restore_set_after_gdb_died(&rs, 1000, &rep, &e) == 0);
	CHECK(rep.bytes_restored == 1 && rep.threads_stopped == 1);
	CHECK(pread(fd, &now, 1, (off_t)addr) == 1 && now == 0x90);
	close(fd);
	char state = proc_state(child);
	CHECK(state == 'S' || state == 'R');   /* not left stopped */
	restore_set_release(&rs);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	munmap(code, (size_t)page);
}

/* Stops a child with SIGSTOP and waits until /proc says it is stopped (its
 * scheduler clocks are then frozen, as in gdb's all-stop). */
static void stop_child(pid_t child)
{
	kill(child, SIGSTOP);
	for (int i = 0; i < 2000 && proc_state(child) != 'T'; i++)
		usleep(1000);
}

/* One window as the tracer sees it: the child is stopped, resumed at t0 but
 * kept stopped for held_ms more (gdb's hidden part), then runs for run_ms
 * and is stopped again. */
static double window(struct stop_clock *c, pid_t child, int held_ms, int run_ms, struct stop_clock_window *w)
{
	uint64_t start = monotonic_ns();
	stop_clock_resuming(c, child, false, start);
	usleep((useconds_t)held_ms * 1000);
	kill(child, SIGCONT);
	usleep((useconds_t)run_ms * 1000);
	/* The window ends once the child is stopped: taken before, a loaded
	 * machine (valgrind, CI) let the child run on past it, and the run
	 * ate into the held part (held came out under the 40 ms it was held). */
	stop_child(child);
	uint64_t end = monotonic_ns();
	stop_clock_stopped(c, child, end, w);
	return (double)(end - start);
}

static void test_stop_clock(bool sleeper)
{
	pid_t child = fork();
	if (child == 0) {
		volatile unsigned long spin = 0;
		for (;;) {
			if (sleeper)
				usleep(500);
			else
				spin++;
		}
	}
	usleep(20000);
	struct stop_clock c;
	stop_clock_init(&c, child);
	struct stop_clock_window w;
	stop_child(child);
	stop_clock_stopped(&c, child, monotonic_ns(), &w);
	CHECK(!w.read);   /* nothing before the first reading */
	if (c.unavailable) {
		fprintf(stderr, "note: no schedstat on this kernel, stop clock not tested\n");
	} else {
		double wall = window(&c, child, 40, 60, &w);
		CHECK(w.read);
		/* Held stopped for 40 ms it could not run: whatever the load,
		 * at least that much is off the CPU, and never more than the
		 * window (sleeps may overshoot, hence the measured wall). */
		CHECK(w.held_ns >= 39e6);
		CHECK(w.running_ns > 0 && w.held_ns + w.running_ns <= wall + 1 && w.held_ns + w.running_ns >= wall - 1);
		CHECK(w.waited_ns <= w.held_ns);
		if (sleeper) {
			/* ~100 sleeps the ptrace stops do not explain. */
			CHECK(!w.exact);
			CHECK(c.bounded == 1 && c.measured == 0 && stop_clock_median(&c) < 0);
		} else if (w.exact) {
			CHECK(c.measured == 1 && stop_clock_median(&c) == w.held_ns);
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* Which probe lists need the tracer at all. (It also links tracer.o into
 * this test, whose link line holds only the layers trace/ may use: a call
 * from the tracer into recipe/ or report/ fails to link here.) */
static void test_wanted(void)
{
	struct probe_spec sample = { .kind = PROBE_SAMPLE }, interval = { .kind = PROBE_INTERVAL };
	struct probe_spec probes[3] = { sample, interval, { .kind = PROBE_RETURN, .spec = "f" } };
	CHECK(!tracer_wanted(probes, 2));
	CHECK(tracer_wanted(probes, 3));
	CHECK(!tracer_wanted(NULL, 0));
}

/* After gdb's death, the children it left harmed are said: one stopped
 * (state T, untraced) and one dead of SIGTRAP not yet reaped; a running
 * one is not. */
static void test_children_report(void)
{
	char buf[320];
	CHECK(!restore_report_children(getpid(), buf, sizeof buf) && buf[0] == '\0');   /* no child yet */
	pid_t running = fork();
	if (running == 0) {
		for (;;)
			pause();
	}
	pid_t stopped = fork();
	if (stopped == 0) {
		for (;;)
			pause();
	}
	pid_t trapped = fork();
	if (trapped == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);
		signal(SIGTRAP, SIG_DFL);
		raise(SIGTRAP);
		_exit(0);
	}
	CHECK(running > 0 && stopped > 0 && trapped > 0);
	kill(stopped, SIGSTOP);
	siginfo_t info;
	CHECK(waitid(P_PID, (id_t)stopped, &info, WSTOPPED | WNOWAIT) == 0);
	CHECK(waitid(P_PID, (id_t)trapped, &info, WEXITED | WNOWAIT) == 0);   /* a zombie, not reaped */
	CHECK(restore_report_children(getpid(), buf, sizeof buf));
	char want[320];
	snprintf(want, sizeof want, "1 child process of process %d left stopped (state T: %d) as gdb died, which held it "
		 "to take its int3s out; a kill -CONT kills one that ran into an inherited int3 with SIGTRAP "
		 "(docs/safety.md); 1 child process of process %d died of SIGTRAP as gdb died (%d): an int3 inherited "
		 "from it", (int)getpid(), (int)stopped, (int)getpid(), (int)trapped);
	if (strcmp(buf, want) != 0) {
		fprintf(stderr, "children report:\n got  %s\n want %s\n", buf, want);
		test_failures++;
	}
	kill(running, SIGKILL);
	kill(stopped, SIGKILL);
	waitpid(running, NULL, 0);
	waitpid(stopped, NULL, 0);
	waitpid(trapped, NULL, 0);
}

int main(void)
{
	test_children_report();
	test_wanted();
	test_keys();
	test_parse();
	test_restore();
	test_stop_clock(false);
	test_stop_clock(true);
	return test_exit_code();
}
