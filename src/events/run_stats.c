#include "events/run_stats.h"

#include "util/array.h"
#include "util/stats.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void run_notes_machine_load(char *buf, size_t size, double load, long cpus)
{
	if (size == 0)
		return;
	buf[0] = '\0';
	if (isfinite(load) && cpus > 0)
		snprintf(buf, size, ", the machine at load average %.1f on %ld CPUs", load, cpus);
}

void run_notes_add(struct run_notes *notes, const char *fmt, ...)
{
	if (notes->n >= RUN_MAX_NOTES) {
		notes->dropped++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(notes->text[notes->n++], sizeof notes->text[0], fmt, ap);
	va_end(ap);
}

void run_stats_target_ended(struct run_stats *st, const char *killed_by)
{
	st->target_exited = true;
	snprintf(st->killed_by, sizeof st->killed_by, "%s", killed_by ? killed_by : "");
}

int run_stats_add_stop(struct run_stats *st, double ms)
{
	st->stops++;
	st->stopped_s += ms / 1e3;
	return ARRAY_PUSH(st->stop_ms_log, st->nstop_ms_log, st->stop_ms_log_cap, ms);
}

void run_stats_finish_stops(struct run_stats *st)
{
	if (st->nstop_ms_log == 0)
		return;
	stats_sort(st->stop_ms_log, st->nstop_ms_log);
	st->stop_median_ms = stats_percentile_sorted(st->stop_ms_log, st->nstop_ms_log, 50);
	st->stop_p99_ms = stats_percentile_sorted(st->stop_ms_log, st->nstop_ms_log, 99);
	st->stop_max_ms = stats_percentile_sorted(st->stop_ms_log, st->nstop_ms_log, 100);
	free(st->stop_ms_log);
	st->stop_ms_log = NULL;
	st->nstop_ms_log = st->stop_ms_log_cap = 0;
}
