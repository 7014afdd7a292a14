/* naive_mi.c — the naive gdb/MI sampling loop, kept as a reference point for
 * bench/profile.sh (issue 5). Not part of the tool or of `make check`.
 *
 *     naive_mi [-F HZ] [-d SECONDS] PID
 *
 * Attaches to PID with one persistent gdb (all-stop, mi-async on, as
 * mi_conn_spawn sets up) and, HZ times a second for SECONDS:
 *     -exec-interrupt, wait for *stopped, -thread-info,
 *     -stack-list-frames --thread N for every thread, -exec-continue
 * i.e. what a straightforward MI profiler does, with gdb doing all the
 * unwinding and symbolizing. Then detaches and prints one line:
 *     naive: stops=N hz=ACHIEVED asked_hz=HZ stopped_pct=P median_ms=M
 *            p99_ms=Q first_sample_ms=F frames=TOTAL
 * A stop's time runs from sending -exec-interrupt to the ^running of
 * -exec-continue (the same bracket xgdbprof reports). first_sample_ms is from
 * the start of this program (gdb spawn included) to the end of the first stop.
 * When a stop takes longer than the period the loop just starts the next one
 * at once (the achieved rate then drops below HZ).
 *
 * Build: cc -std=c11 -O2 -D_GNU_SOURCE -I SRC/mi naive_mi.c BUILD/libmi.a
 * SIGINT/SIGTERM end the loop early, still detaching cleanly.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mi_conn.h"
#include "mi_record.h"
#include "mi_value.h"

enum { CALL_TIMEOUT_MS = 10000 };

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_until_ms(double deadline)
{
	double left = deadline - now_ms();
	if (left <= 0)
		return;
	struct timespec ts = {.tv_sec = (time_t)(left / 1e3),
			      .tv_nsec = (long)((left - (time_t)(left / 1e3) * 1e3) * 1e6)};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !stop_requested)
		;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted[0..n), n > 0. */
static double percentile(const double *sorted, size_t n, double pct)
{
	size_t rank = (size_t)(pct / 100.0 * n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/* The *running / =thread-* notices that follow each resume would otherwise
 * pile up in the connection's queue for the whole run. */
static void drain_events(struct mi_conn *c)
{
	struct mi_record *ev = NULL;
	while (mi_conn_next_event(c, 0, &ev, NULL) == 1) {
		mi_record_free(ev);
		ev = NULL;
	}
}

static int wait_stopped(struct mi_conn *c, struct mi_error *err)
{
	struct mi_record *stopped = NULL;
	int rc = mi_conn_wait_stopped(c, CALL_TIMEOUT_MS, &stopped, err);
	mi_record_free(stopped);
	if (rc == 0)
		return mi_error_set(err, "no *stopped within %d ms", CALL_TIMEOUT_MS);
	return rc == 1 ? 0 : -1;
}

/* One sample of every thread while the target is stopped. Returns the number
 * of frames gdb listed, or -1 with err. */
static long sample_all_threads(struct mi_conn *c, struct mi_error *err)
{
	struct mi_record *info = NULL;
	if (mi_conn_call(c, CALL_TIMEOUT_MS, &info, err, "-thread-info", (char *)NULL) != 0) {
		mi_record_free(info);
		return -1;
	}
	const struct mi_value *threads = mi_value_get(info->results, "threads");
	long frames = 0;
	for (size_t i = 0; i < mi_value_count(threads); i++) {
		const char *id = mi_value_get_string(mi_value_at(threads, i), "id");
		if (!id)
			continue;
		struct mi_record *stack = NULL;
		if (mi_conn_call(c, CALL_TIMEOUT_MS, &stack, err, "-stack-list-frames", "--thread",
				 id, (char *)NULL) != 0) {
			mi_record_free(stack);
			mi_record_free(info);
			return -1;
		}
		frames += (long)mi_value_count(mi_value_get(stack->results, "stack"));
		mi_record_free(stack);
	}
	mi_record_free(info);
	return frames;
}

static void usage(void)
{
	fprintf(stderr, "usage: naive_mi [-F HZ] [-d SECONDS] PID\n");
}

int main(int argc, char **argv)
{
	double started = now_ms();
	double hz = 19, seconds = 5;
	int opt;
	while ((opt = getopt(argc, argv, "F:d:")) != -1) {
		switch (opt) {
		case 'F': hz = atof(optarg); break;
		case 'd': seconds = atof(optarg); break;
		default: usage(); return 2;
		}
	}
	if (optind != argc - 1 || hz <= 0 || hz > 10000 || seconds <= 0) {
		usage();
		return 2;
	}
	char *end = NULL;
	long pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX) {
		fprintf(stderr, "naive_mi: bad PID %s\n", argv[optind]);
		return 2;
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct mi_error err = {{0}};
	struct mi_conn_options copt = {.cancel = &stop_requested};
	struct mi_conn *c = mi_conn_spawn(&copt, &err);
	if (!c) {
		fprintf(stderr, "naive_mi: %s\n", err.message);
		return 1;
	}
	char pid_text[24];
	snprintf(pid_text, sizeof pid_text, "%ld", pid);
	if (mi_conn_call(c, 30000, NULL, &err, "-target-attach", pid_text, (char *)NULL) != 0 ||
	    wait_stopped(c, &err) != 0 ||
	    mi_conn_call(c, CALL_TIMEOUT_MS, NULL, &err, "-exec-continue", (char *)NULL) != 0) {
		fprintf(stderr, "naive_mi: attaching to %ld: %s\n", pid, err.message);
		mi_conn_close(c, 2000);
		return 1;
	}

	size_t cap = (size_t)(hz * seconds) + 16, n = 0;
	double *stop_ms = malloc(cap * sizeof *stop_ms);
	if (!stop_ms) {
		fprintf(stderr, "naive_mi: out of memory\n");
		mi_conn_close(c, 2000);
		return 1;
	}
	double period = 1e3 / hz, loop_start = now_ms(), next = loop_start, first_sample = -1;
	double total_stopped = 0;
	long frames = 0;
	int failed = 0;
	while (!stop_requested && now_ms() - loop_start < seconds * 1e3) {
		sleep_until_ms(next);
		if (stop_requested)
			break;
		double t0 = now_ms();
		long got;
		if (mi_conn_call(c, CALL_TIMEOUT_MS, NULL, &err, "-exec-interrupt", (char *)NULL) != 0 ||
		    wait_stopped(c, &err) != 0 || (got = sample_all_threads(c, &err)) < 0 ||
		    mi_conn_call(c, CALL_TIMEOUT_MS, NULL, &err, "-exec-continue", (char *)NULL) != 0) {
			fprintf(stderr, "naive_mi: sample %zu: %s\n", n + 1, err.message);
			failed = 1;
			break;
		}
		double t1 = now_ms();
		drain_events(c);
		frames += got;
		if (first_sample < 0)
			first_sample = t1 - started;
		if (n == cap) {
			double *grown = realloc(stop_ms, 2 * cap * sizeof *stop_ms);
			if (!grown)
				break;
			stop_ms = grown;
			cap *= 2;
		}
		stop_ms[n++] = t1 - t0;
		total_stopped += t1 - t0;
		next += period;
		if (next < t1)
			next = t1; /* behind schedule: no burst to catch up */
	}
	double wall = now_ms() - loop_start;

	/* Leave the target as we found it: stopped only while gdb detaches. */
	stop_requested = 0;
	if (!failed || mi_conn_alive(c)) {
		if (mi_conn_call(c, CALL_TIMEOUT_MS, NULL, &err, "-exec-interrupt", (char *)NULL) != 0 ||
		    wait_stopped(c, &err) != 0 ||
		    mi_conn_call(c, CALL_TIMEOUT_MS, NULL, &err, "-target-detach", (char *)NULL) != 0) {
			fprintf(stderr, "naive_mi: detaching: %s\n", err.message);
			failed = 1;
		}
	}
	mi_conn_close(c, 2000);

	if (n == 0) {
		fprintf(stderr, "naive_mi: no sample taken\n");
		free(stop_ms);
		return 1;
	}
	qsort(stop_ms, n, sizeof *stop_ms, compare_double);
	printf("naive: stops=%zu hz=%.1f asked_hz=%g stopped_pct=%.1f median_ms=%.2f p99_ms=%.2f "
	       "first_sample_ms=%.0f frames=%ld\n",
	       n, n / (wall / 1e3), hz, 100.0 * total_stopped / wall, percentile(stop_ms, n, 50),
	       percentile(stop_ms, n, 99), first_sample, frames);
	free(stop_ms);
	return failed;
}
