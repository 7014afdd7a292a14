/* trap_exposure.c — how long each thread of a process sits in a breakpoint
 * trap (bench/trap_exposure.sh).
 *
 * Usage: trap_exposure PID MILLISECONDS
 *
 * Polls every thread of PID (procfs/proc.h) for the given time, 200 µs
 * apart. A thread counts as in a trap when it is in a tracing stop (state
 * t), not in a system call (/proc/PID/task/TID/syscall reads -1), and the
 * byte at its PC or just before reads 0xCC: stopped just past an int3, or
 * put back onto one by the tracer (gdb moves the PC back at the hit).
 * A gdb killed then kills the thread with SIGTRAP (docs/safety.md). It
 * misses the moment gdb steps over a breakpoint in place (the 0xCC taken
 * out), so it is a lower bound; state t alone is the upper one.
 * Prints one line: polls, the largest share of polls one thread spent in a
 * trap and in state t (with its name), and the share of polls with any
 * thread in a trap. Exit 0, or 2 on bad arguments. */
#include "procfs/proc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#define MAX_THREADS 4096

struct thread_seen {
	pid_t tid;
	long trapped, stopped;
	char name[32];
};

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static struct thread_seen *find(struct thread_seen *seen, int *n, const struct proc_thread *thread)
{
	for (int i = 0; i < *n; i++)
		if (seen[i].tid == thread->tid)
			return &seen[i];
	if (*n >= MAX_THREADS)
		return NULL;
	struct thread_seen *t = &seen[(*n)++];
	memset(t, 0, sizeof *t);
	t->tid = thread->tid;
	snprintf(t->name, sizeof t->name, "%s", thread->name);
	return t;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: trap_exposure PID MILLISECONDS\n");
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[1]);
	double end = now_ms() + atof(argv[2]);
	static struct thread_seen seen[MAX_THREADS];
	int nseen = 0;
	long polls = 0, any_trapped = 0;
	int mem = proc_open_mem(pid, O_RDONLY);
	while (now_ms() < end) {
		struct proc_thread *threads;
		int n = proc_threads(pid, &threads, NULL);
		if (n < 0)
			break;
		polls++;
		int trapped_now = 0;
		for (int i = 0; i < n; i++) {
			if (threads[i].state != 't')
				continue;
			struct thread_seen *t = find(seen, &nseen, &threads[i]);
			if (!t)
				continue;
			t->stopped++;
			struct proc_syscall sc;
			uint8_t bytes[2];
			if (proc_thread_syscall(pid, threads[i].tid, &sc) == 0 && !sc.in_syscall && sc.pc > 0 &&
			    mem >= 0 && pread(mem, bytes, 2, (off_t)(sc.pc - 1)) == 2 &&
			    (bytes[0] == 0xCC || bytes[1] == 0xCC)) {
				t->trapped++;
				trapped_now = 1;
			}
		}
		free(threads);
		any_trapped += trapped_now;
		struct timespec pause = { 0, 200 * 1000 };
		nanosleep(&pause, NULL);
	}
	struct thread_seen *most = NULL, *most_stopped = NULL;
	for (int i = 0; i < nseen; i++) {
		if (!most || seen[i].trapped > most->trapped)
			most = &seen[i];
		if (!most_stopped || seen[i].stopped > most_stopped->stopped)
			most_stopped = &seen[i];
	}
	double p = polls ? 100.0 / (double)polls : 0;
	printf("polls %ld trap_max %.1f %s stopped_max %.1f %s any_trap %.1f\n", polls,
	       most ? (double)most->trapped * p : 0.0, most && most->name[0] ? most->name : "-",
	       most_stopped ? (double)most_stopped->stopped * p : 0.0,
	       most_stopped && most_stopped->name[0] ? most_stopped->name : "-", (double)any_trapped * p);
	if (mem >= 0)
		close(mem);
	return 0;
}
