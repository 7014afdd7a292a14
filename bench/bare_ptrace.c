/* bare_ptrace.c — the floor under any ptrace-based sampler: no gdb, no
 * unwinding, just the kernel's stop and resume of the busy thread.
 *
 *   bare_ptrace [-F HZ] [-d SECONDS] [-H MS [-M KIB]] PID
 *
 * Seizes the thread of PID named "busy" (PTRACE_SEIZE: no stop at attach),
 * then HZ times a second: PTRACE_INTERRUPT, waitpid, PTRACE_GETREGS,
 * PTRACE_CONT. Detaches at the end (the thread runs on) and prints one
 * `bare: key=value ...` line in naive_mi's format. bench/profile.sh runs it
 * as the `bare-49` row: it tells the cost of being stopped by the kernel
 * from the cost of everything gdb does around a stop.
 *
 * -H MS holds the thread stopped MS milliseconds per stop, as a gdb stop
 * does: sleeping, or with -M, writing over a KIB-kilobyte buffer the whole
 * time (what gdb's work does to the caches). Comparing the two tells the
 * cost of the stop's length from the cost of what runs during it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static pid_t busy_thread(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *dir = opendir(path);
	pid_t found = 0;
	struct dirent *d;
	while (dir && !found && (d = readdir(dir)) != NULL) {
		char comm_path[320], comm[32] = "";
		snprintf(comm_path, sizeof comm_path, "/proc/%d/task/%s/comm", (int)pid, d->d_name);
		FILE *f = fopen(comm_path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f) && strcmp(comm, "busy\n") == 0)
			found = (pid_t)atoi(d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Holds for hold_ms: asleep, or dirtying `buffer` line by line. */
static void hold(double hold_ms, unsigned char *buffer, size_t size)
{
	double until = now_ms() + hold_ms;
	if (!buffer) {
		usleep((useconds_t)(hold_ms * 1e3));
		return;
	}
	for (size_t i = 0; now_ms() < until; i = (i + 64) % size)
		buffer[i]++;
}

int main(int argc, char **argv)
{
	double hz = 49, seconds = 5, hold_ms = 0;
	size_t dirty_kib = 0;
	int opt;
	while ((opt = getopt(argc, argv, "F:d:H:M:")) != -1) {
		if (opt == 'F')
			hz = atof(optarg);
		else if (opt == 'd')
			seconds = atof(optarg);
		else if (opt == 'H')
			hold_ms = atof(optarg);
		else if (opt == 'M')
			dirty_kib = (size_t)atol(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || hz <= 0 || seconds <= 0 || hold_ms < 0 || (dirty_kib && !hold_ms)) {
		fprintf(stderr, "usage: bare_ptrace [-F HZ] [-d SECONDS] [-H MS [-M KIB]] PID\n");
		return 2;
	}
	unsigned char *buffer = dirty_kib ? calloc(dirty_kib, 1024) : NULL;
	pid_t tid = busy_thread((pid_t)atoi(argv[optind]));
	if (!tid) {
		fprintf(stderr, "bare_ptrace: no thread named busy in %s\n", argv[optind]);
		return 1;
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		fprintf(stderr, "bare_ptrace: PTRACE_SEIZE %d: %s\n", (int)tid, strerror(errno));
		return 1;
	}
	size_t cap = (size_t)(hz * seconds) + 16, n = 0;
	double *stop_ms = malloc(cap * sizeof *stop_ms);
	double start = now_ms(), next = start, stopped = 0;
	while (stop_ms && now_ms() - start < seconds * 1e3 && n < cap) {
		next += 1e3 / hz;
		double wait = next - now_ms();
		if (wait > 0)
			usleep((useconds_t)(wait * 1e3));
		double t0 = now_ms();
		int status;
		struct user_regs_struct regs;
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 || waitpid(tid, &status, __WALL) < 0)
			break;
		ptrace(PTRACE_GETREGS, tid, NULL, &regs);
		if (hold_ms > 0)
			hold(hold_ms, buffer, dirty_kib * 1024);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		stop_ms[n++] = now_ms() - t0;
		stopped += stop_ms[n - 1];
	}
	double wall = now_ms() - start;
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	if (n == 0) {
		fprintf(stderr, "bare_ptrace: no stop taken\n");
		return 1;
	}
	qsort(stop_ms, n, sizeof *stop_ms, compare_double);
	printf("bare: stops=%zu hz=%.1f asked_hz=%g stopped_pct=%.2f median_ms=%.3f p99_ms=%.3f\n", n,
	       (double)n / (wall / 1e3), hz, 100.0 * stopped / wall, stop_ms[n / 2],
	       stop_ms[(size_t)((double)(n - 1) * 0.99)]);
	free(stop_ms);
	free(buffer);
	return 0;
}
