#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_getcpu */
#endif
#include "procfs/proc.h"
#include "procfs/proc_parse.h"
#include "util/compare.h"
#include "util/array.h"
#include "util/clock.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_small_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

static void read_switches(pid_t pid, pid_t tid, struct proc_thread *t)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	t->voluntary_switches = t->involuntary_switches = 0;
	if (read_small_file(path, buf, sizeof buf) < 0)
		return;
	struct proc_status status;
	proc_parse_status(buf, &status);
	t->voluntary_switches = status.voluntary_switches;
	t->involuntary_switches = status.involuntary_switches;
}

int proc_thread_read(pid_t pid, pid_t tid, struct proc_thread *out, struct xerr *e)
{
	char path[96], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return xerr_set(e, "thread %d of process %d is gone", (int)tid, (int)pid);
	if (proc_parse_thread_stat(buf, out) < 0)
		return xerr_set(e, "cannot parse %s", path);
	read_switches(pid, tid, out);
	return 0;
}

/* Plain open/read: these run at every tracer stop, stdio would double it. */
static ssize_t read_proc_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int proc_thread_schedstat(pid_t pid, pid_t tid, struct proc_schedstat *out)
{
	char path[96], buf[2048];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if (read_proc_file(path, buf, sizeof buf) <= 0 || proc_parse_schedstat(buf, out) != 3)
		return -1;
	/* Without CONFIG_SCHED_INFO the kernel prints zeros for every thread. */
	if (!out->run_ns && !out->slices)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	struct proc_status status;
	if (read_proc_file(path, buf, sizeof buf) <= 0 || proc_parse_status(buf, &status) < 0)
		return -1;
	out->voluntary_switches = status.voluntary_switches;
	return 0;
}

int proc_thread_syscall(pid_t pid, pid_t tid, struct proc_syscall *out)
{
	char path[96], buf[256];
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (read_proc_file(path, buf, sizeof buf) <= 0)
		return -1;
	return proc_parse_syscall(buf, out);
}

/* /proc/PID/task/TID/stat parsed: 0, or -1 when gone or unreadable. */
static int read_thread_stat(pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[96], stat[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	return read_small_file(path, stat, sizeof stat) < 0 || proc_parse_stat(stat, st) < 0 ? -1 : 0;
}

int proc_thread_on_cpu(pid_t pid, pid_t tid, char *where, size_t size)
{
	char path[96], buf[257];
	if (where && size)
		where[0] = '\0';
	snprintf(path, sizeof path, "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return -1;   /* EACCES without CAP_SYS_ADMIN */
	if (n == 0)
		return 1;
	buf[n] = '\0';
	if (where)
		proc_parse_kernel_stack(buf, where, size);
	struct proc_stat st;
	if (read_thread_stat(pid, tid, &st) < 0)
		return -1;
	return st.processor == sched_getcpu() ? -1 : 0;
}

int64_t proc_thread_faults_at(pid_t pid, pid_t tid, int *processor)
{
	struct proc_stat st;
	if (processor)
		*processor = -1;
	if (read_thread_stat(pid, tid, &st) < 0)
		return -1;
	if (processor)
		*processor = st.processor;
	return (int64_t)(st.minflt + st.majflt);
}

int64_t proc_thread_faults(pid_t pid, pid_t tid)
{
	return proc_thread_faults_at(pid, tid, NULL);
}

char proc_state(pid_t pid)
{
	char path[64], buf[1024];
	struct proc_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0 || proc_parse_stat(buf, &st) < 0)
		return 0;
	return st.state;
}

static int compare_tid(const void *a, const void *b)
{
	const struct proc_thread *x = a, *y = b;
	return compare_i64(x->tid, y->tid);
}

int proc_threads(pid_t pid, struct proc_thread **out, struct xerr *e)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	if (!dir)
		return xerr_set(e, "process %d is gone", (int)pid);
	size_t count = 0, cap = 0;
	struct proc_thread *threads = array_grow(NULL, &cap, 1, sizeof *threads);
	if (!threads) {
		closedir(dir);
		return xerr_oom(e);
	}
	struct dirent *d;
	while ((d = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		if (count == cap) {
			struct proc_thread *bigger = array_grow(threads, &cap, count + 1, sizeof *threads);
			if (!bigger)
				break;
			threads = bigger;
		}
		if (proc_thread_read(pid, (pid_t)atoi(d->d_name), &threads[count], NULL) == 0)
			count++;
	}
	closedir(dir);
	qsort(threads, count, sizeof *threads, compare_tid);
	*out = threads;
	return (int)count;
}

int proc_children(pid_t pid, pid_t **out)
{
	*out = NULL;
	struct proc_thread *threads;
	int n = proc_threads(pid, &threads, NULL);
	if (n < 0)
		return -1;
	size_t count = 0, cap = 0;
	for (int i = 0; i < n; i++) {
		char path[96], buf[16384];
		snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)threads[i].tid);
		if (read_proc_file(path, buf, sizeof buf) <= 0)
			continue;
		for (char *p = buf, *end; *p; p = end) {
			long child = strtol(p, &end, 10);
			if (end == p)
				break;
			/* each pid ends with a space: one cut by a full buffer does not */
			if (child <= 0 || (*end != ' ' && *end != '\n'))
				continue;
			pid_t *grown = array_grow(*out, &cap, count + 1, sizeof *grown);
			if (!grown) {
				free(threads);
				free(*out);
				*out = NULL;
				return -1;
			}
			*out = grown;
			(*out)[count++] = (pid_t)child;
		}
	}
	free(threads);
	return (int)count;
}

int proc_thread_states(pid_t pid, const char *stop_at, char *seen, size_t size)
{
	char path[320];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	size_t nseen = 0;
	if (size)
		seen[0] = '\0';
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	struct dirent *d;
	while ((d = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		char buf[1024];
		snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, d->d_name);
		if (read_proc_file(path, buf, sizeof buf) <= 0)
			continue;   /* gone meanwhile */
		/* the state follows the name, which may hold ") " itself */
		const char *close = strrchr(buf, ')');
		char state = close && close[1] == ' ' ? close[2] : 0;
		if (!state || strchr(seen, state))
			continue;
		if (nseen + 1 < size) {
			seen[nseen++] = state;
			seen[nseen] = '\0';
		}
		if (stop_at && strchr(stop_at, state))
			break;
	}
	closedir(dir);
	return (int)nseen;
}

bool proc_any_thread_in(pid_t pid, const char *states)
{
	char seen[32];
	return proc_thread_states(pid, states, seen, sizeof seen) > 0 && strpbrk(seen, states);
}

bool proc_threads_stay_in(pid_t pid, const char *states, int looks, int tick_ms)
{
	struct timespec tick = { tick_ms / 1000, (long)(tick_ms % 1000) * 1000000L };
	for (int i = 0; i < looks; i++) {
		if (i > 0)
			nanosleep(&tick, NULL);
		if (!proc_any_thread_in(pid, states))
			return false;
	}
	return true;
}

int proc_open_mem(pid_t pid, int flags)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int first_errno = errno;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *tasks = opendir(path);
	if (!tasks) {
		errno = first_errno;
		return -1;
	}
	struct dirent *d;
	while (fd < 0 && (d = readdir(tasks)) != NULL) {
		long tid = strtol(d->d_name, NULL, 10);
		if (tid <= 0 || tid == (long)pid)
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%ld/mem", (int)pid, tid);
		fd = open(path, flags | O_CLOEXEC);
	}
	closedir(tasks);
	if (fd < 0)
		errno = first_errno;
	return fd;
}

bool proc_thread_signal_pending(pid_t pid, pid_t tid, int sig)
{
	uint64_t bit = (uint64_t)1 << (sig - 1);
	char path[96], buf[4096];
	struct proc_status status;
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	return read_proc_file(path, buf, sizeof buf) > 0 && proc_parse_status(buf, &status) == 0 &&
	       ((status.sig_pending | status.shared_pending) & bit);
}

bool proc_signal_pending(pid_t pid, int sig)
{
	uint64_t bit = (uint64_t)1 << (sig - 1);
	char path[96], buf[4096];
	struct proc_status status;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_proc_file(path, buf, sizeof buf) > 0 && proc_parse_status(buf, &status) == 0 &&
	    (status.shared_pending & bit))
		return true;
	struct proc_thread *threads;
	int n = proc_threads(pid, &threads, NULL);
	bool found = false;
	for (int i = 0; i < n && !found; i++)
		found = proc_thread_signal_pending(pid, threads[i].tid, sig);
	if (n >= 0)
		free(threads);
	return found;
}

int proc_exe_path(pid_t pid, char *buf, size_t size, struct xerr *e)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, buf, size - 1);
	if (n < 0)
		return xerr_set(e, "cannot read %s: %s", path, strerror(errno));
	buf[n] = '\0';
	return 0;
}

int proc_other_mount_ns(pid_t pid)
{
	char path[64], ours[128], theirs[128];
	ssize_t n = readlink("/proc/self/ns/mnt", ours, sizeof ours - 1);
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	ssize_t m = readlink(path, theirs, sizeof theirs - 1);
	if (n <= 0 || m <= 0)
		return -1;
	return n != m || memcmp(ours, theirs, (size_t)n) != 0;
}

int proc_map_files_entry(pid_t pid, const char *path, uint64_t low, uint64_t high,
			 char *buf, size_t size)
{
	char maps[64];
	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = -1;
	while (rc < 0 && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		uint64_t start, end;
		const char *name;
		if (proc_parse_maps_line(line, &start, &end, &name) < 0)
			continue;
		if (start >= low && end <= high && strcmp(name, path) == 0) {
			int n = snprintf(buf, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
					 (int)pid, start, end);
			rc = n > 0 && (size_t)n < size ? 0 : -1;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

long long proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	struct proc_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0 || proc_parse_stat(buf, &st) < 0)
		return -1;
	return (long long)(st.utime + st.stime);
}

double proc_load_average(void)
{
	char buf[256];
	double load;
	if (read_small_file("/proc/loadavg", buf, sizeof buf) < 0 || sscanf(buf, "%lf", &load) != 1)
		return NAN;
	return load;
}

/* /proc/PID/status parsed. 0, or -1 when the process is gone. */
static int read_status(pid_t pid, struct proc_status *status)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	proc_parse_status(buf, status);
	return 0;
}

int64_t proc_vm_data_bytes(pid_t pid)
{
	struct proc_status status;
	return read_status(pid, &status) < 0 ? -1 : (int64_t)(status.vm_data_kb * 1024);
}

pid_t proc_tracer_pid(pid_t pid)
{
	struct proc_status status;
	return read_status(pid, &status) < 0 ? -1 : status.tracer_pid;
}

/* Target text into a message: comm may hold any byte but NUL and '/'. */
static void make_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

/* "PID 120 (gdb, child of PID 118 xgdbprof)": who holds the ptrace attach,
 * so the user can tell a debugger from another xgdbprof run. */
static void describe_tracer(pid_t tracer, char *buf, size_t size)
{
	char path[64], line[1024];
	struct proc_stat t, parent;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)tracer);
	if (read_small_file(path, line, sizeof line) < 0 || proc_parse_stat(line, &t) < 0) {
		snprintf(buf, size, "PID %d", (int)tracer);
		return;
	}
	make_printable(t.comm);
	pid_t ppid = t.ppid;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)ppid);
	if (ppid > 1 && read_small_file(path, line, sizeof line) >= 0 && proc_parse_stat(line, &parent) == 0) {
		make_printable(parent.comm);
		snprintf(buf, size, "PID %d (%s, child of PID %d %s)", (int)tracer, t.comm, (int)ppid, parent.comm);
	} else {
		snprintf(buf, size, "PID %d (%s)", (int)tracer, t.comm);
	}
}

static int explain_traced(pid_t pid, pid_t tracer, char *buf, size_t size)
{
	char who[160];
	describe_tracer(tracer, who, sizeof who);
	return snprintf(buf, size, "process %d is already traced by %s: a process has one tracer at a time; "
			"stop that debugger or profiler (or wait for it to finish) and try again", (int)pid, who);
}

/* The kernel's own mark (PF_KTHREAD in stat's flags field). An empty
 * cmdline is no proof: a process in the middle of an exec, or one that
 * cleared its arguments, shows one too. */
static bool is_kernel_thread(pid_t pid)
{
	enum { PF_KTHREAD = 0x00200000 };
	char path[64], buf[1024];
	struct proc_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) <= 0 || proc_parse_stat(buf, &st) < 0)
		return false;
	return (st.flags & PF_KTHREAD) != 0;
}

int proc_check_target(pid_t pid, struct xerr *e)
{
	if (pid <= 0)
		return xerr_set(e, "%d is not a process id: give the PID of a running process (see `pgrep NAME`)", (int)pid);
	if (pid == getpid())
		return xerr_set(e, "refusing to attach to xgdbprof itself (PID %d)", (int)pid);
	char state = proc_state(pid);
	if (state == 0)
		return xerr_set(e, "no process with PID %d: check the PID with `ps -p %d` or `pgrep NAME`",
				(int)pid, (int)pid);
	if ((state == 'Z' || state == 'X') && proc_any_thread_in(pid, "RSD"))
		return xerr_set(e, "process %d's main thread has exited (/proc shows a zombie) while its other threads "
				"run on: gdb cannot attach to a process without its main thread", (int)pid);
	if (state == 'Z' || state == 'X')
		return xerr_set(e, "process %d is a zombie (it has exited and waits for its parent to reap it): "
				"there is nothing left to profile", (int)pid);
	if (is_kernel_thread(pid))
		return xerr_set(e, "process %d is a kernel thread: xgdbprof profiles user-space processes", (int)pid);
	pid_t tracer = proc_tracer_pid(pid);
	if (tracer > 0) {
		char why[512];
		explain_traced(pid, tracer, why, sizeof why);
		return xerr_set(e, "%s", why);
	}
	return 0;
}

void proc_explain_ptrace_denied(pid_t pid, char *buf, size_t size)
{
	char scope[16] = "";
	int have_scope = read_small_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) > 0;
	int scope_value = have_scope ? atoi(scope) : -1;
	/* Another tracer got there first (two runs racing past
	 * proc_check_target): ptrace says EPERM for that too. */
	pid_t tracer = proc_tracer_pid(pid);
	if (tracer > 0)
		explain_traced(pid, tracer, buf, size);
	else if (scope_value == 3)
		snprintf(buf, size, "permission denied attaching to process %d: kernel.yama.ptrace_scope is 3 "
			 "(ptrace disabled until reboot); run the program under xgdbprof instead: xgdbprof ... -- COMMAND",
			 (int)pid);
	else if (scope_value >= 1)
		snprintf(buf, size, "permission denied attaching to process %d: kernel.yama.ptrace_scope is %d; "
			 "run as root or with CAP_SYS_PTRACE (e.g. sudo), or `sudo sysctl kernel.yama.ptrace_scope=0`, "
			 "or launch the program under xgdbprof (-- COMMAND)", (int)pid, scope_value);
	else
		snprintf(buf, size, "permission denied attaching to process %d: it belongs to another user or is "
			 "not dumpable; run xgdbprof as that user, or as root / with CAP_SYS_PTRACE", (int)pid);
}

uint64_t proc_thread_runtime_ns(pid_t pid, pid_t tid)
{
	char path[96], buf[128];
	struct proc_schedstat st;
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if (read_proc_file(path, buf, sizeof buf) <= 0)
		return 0;
	proc_parse_schedstat(buf, &st);
	return st.run_ns;
}

int proc_thread_sched_ns(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *wait_ns)
{
	char path[96], buf[128];
	struct proc_schedstat st;
	*run_ns = *wait_ns = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if (read_proc_file(path, buf, sizeof buf) <= 0)
		return -1;
	int fields = proc_parse_schedstat(buf, &st);
	*run_ns = st.run_ns;
	*wait_ns = st.wait_ns;
	return fields >= 2 ? 0 : -1;
}

uint64_t proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	struct proc_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) <= 0 || proc_parse_stat(buf, &st) < 0)
		return 0;
	if (st.state == 'Z' || st.state == 'X')
		return 0;
	return st.start_ticks;
}

uint64_t proc_boot_ticks_now(void)
{
	struct timespec now;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) < 0)
		return 0;
	return (uint64_t)now.tv_sec * (uint64_t)hz + (uint64_t)now.tv_nsec / (1000000000u / (uint64_t)hz);
}

int proc_zombie_wait_status(pid_t pid, int *wait_status)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) <= 0)
		return -1;
	const char *after_comm = strrchr(buf, ')');
	if (!after_comm || after_comm[1] != ' ' || after_comm[2] != 'Z')
		return -1;
	/* field 3 (the state) follows ") "; field 52 is 49 fields later */
	const char *field = after_comm + 2;
	for (int n = 3; n < 52; n++) {
		field = strchr(field, ' ');
		if (!field)
			return -1;
		field++;
	}
	char *end;
	errno = 0;
	long status = strtol(field, &end, 10);
	if (end == field || errno || status < 0 || status > 0xffff)
		return -1;
	*wait_status = (int)status;
	return 0;
}

/* Whether the last component of pid's argv[0] is name. */
static bool argv0_is(pid_t pid, const char *name)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (read_small_file(path, buf, sizeof buf) <= 0)
		return false;
	return proc_argv0_is(buf, name);
}

static pid_t parent_of_pid(pid_t pid)
{
	char path[64], buf[1024];
	struct proc_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof buf) <= 0 || proc_parse_stat(buf, &st) < 0)
		return 0;
	return st.ppid;
}

pid_t proc_find_by_name(const char *name, uint64_t *start_ticks, int *matches)
{
	pid_t best = 0, self = getpid();
	uint64_t best_start = 0;
	*matches = 0;
	DIR *dir = opendir("/proc");
	if (!dir)
		return 0;
	struct dirent *d;
	while ((d = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid_t pid = (pid_t)strtol(d->d_name, NULL, 10);
		char path[64], comm[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
		if (pid == self || read_small_file(path, comm, sizeof comm) <= 0)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		enum proc_name_match match = proc_comm_matches(comm, name);
		if (match == PROC_NAME_NO || (match == PROC_NAME_IF_ARGV0 && !argv0_is(pid, name)))
			continue;
		uint64_t start = proc_start_ticks(pid);
		if (start == 0 || is_kernel_thread(pid) || parent_of_pid(pid) == self)
			continue;
		++*matches;
		if (!best || start < best_start || (start == best_start && pid < best)) {
			best = pid;
			best_start = start;
		}
	}
	closedir(dir);
	*start_ticks = best_start;
	return best;
}
