/* run_stats.h — what a producer's run cost the target and how it ended,
 * kept the same way by the sampler and the tracer, and the notes a run
 * ends with.
 *
 * Each producer's stats struct (sampler_stats, tracer_stats) starts with a
 * `struct run_stats run` for this shared part and adds its own counters;
 * the command prints and saves the shared part in one place.
 *
 * Notes are short sentences for the report ("rate lowered from ..."): at
 * most RUN_MAX_NOTES are kept, each truncated to the buffer; later ones are
 * counted in `dropped`, which whoever prints the notes must say. Stop durations go through run_stats_add_stop() and are
 * summarized by run_stats_finish_stops() with util/stats' percentiles.
 * Nothing here allocates except the stop log, which finishing frees: a
 * producer finishes once, at the end of its run. A zeroed struct is a
 * valid empty one.
 */
#ifndef XGDBPROF_RUN_STATS_H
#define XGDBPROF_RUN_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUN_MAX_NOTES 12

struct run_notes {
	int n;
	int dropped;                  /* notes past RUN_MAX_NOTES, not kept */
	char text[RUN_MAX_NOTES][240];
};

struct run_stats {
	double elapsed_s;             /* the time covered: sampled, or traced from the resume after arming */
	double stopped_s;             /* the time our stops cost the target */
	uint64_t stops;               /* stops of the target (sampling rounds that stopped, hits handled) */
	double stop_median_ms, stop_p99_ms, stop_max_ms;   /* per stop, once finished */
	bool target_exited;
	char killed_by[32];           /* the signal that ended the target ("SIGKILL"), "" if it exited or unsaid */
	bool target_execed;           /* it exec'd: the run ended there, the new program runs untouched */
	bool leader_exited;           /* its main thread exited, other threads running on: the run ended there */
	char exec_path[200];          /* the program it exec'd, when known */
	struct run_notes notes;
	/* The stop log behind the percentiles (private to run_stats.c). */
	double *stop_ms_log;
	size_t nstop_ms_log, stop_ms_log_cap;
};

void run_notes_add(struct run_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ", the machine at load average L on N CPUs" into buf (a budget note's
 * words for the load a stop's cost was paid under), or "" when either is
 * unknown (load not finite, cpus <= 0). */
void run_notes_machine_load(char *buf, size_t size, double load, long cpus);

/* The target is gone: it exited, or the signal named killed_by (as gdb
 * names it, "SIGKILL") did; NULL when it exited or how is not known. */
void run_stats_target_ended(struct run_stats *st, const char *killed_by);

/* Counts one stop of ms milliseconds (stops and stopped_s included).
 * Returns 0, or -1 when out of memory (the stop is counted, not logged). */
int run_stats_add_stop(struct run_stats *st, double ms);
/* Sets the median, p99 and max of the stops logged, and frees the log. */
void run_stats_finish_stops(struct run_stats *st);

#endif
