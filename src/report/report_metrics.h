/* report_metrics.h — one profiling window as Prometheus metrics, in the
 * text exposition format (version 0.0.4) that the node exporter's textfile
 * collector and the Pushgateway read, so that a fleet already watched by
 * Prometheus can ask "which hosts spend more than 30% in OssClient::new".
 * docs/continuous.md ("A fleet") lists the series and their labels.
 *
 * Contract:
 *  - Every series is a gauge of the window just ended; names follow
 *    Prometheus' conventions (xgdbprof_..._ratio for shares 0..1,
 *    _bytes, _seconds, _hertz), each family with its HELP and TYPE lines.
 *  - Labels are bounded: exe (the executable's base name) and build_id on
 *    every series; function, file (base name) and line on the top
 *    functions (at most 2 * top: the top by self and by total); rank and
 *    path on the three hottest paths; stat on the CPU figures. A host
 *    exports at most 2 * top + 12 series (52 at the default top of 20).
 *  - Label values are target text: backslash, double quote and newline are
 *    escaped as the format requires; nothing else is changed.
 *  - Deterministic for a profile; returns 0, or -1 with e (out of memory,
 *    a write error).
 */
#ifndef XGDBPROF_REPORT_METRICS_H
#define XGDBPROF_REPORT_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "report/profile.h"
#include "util/error.h"

#define REPORT_METRICS_DEFAULT_TOP 20

/* The figures of the window that a profile does not hold (the run's
 * outcome): NaN or negative when unknown, then their series are left out. */
struct report_metrics_window {
	double cpu_min_pct, cpu_avg_pct, cpu_max_pct;   /* the target's CPU, % of one core */
	double end_unix_s;                               /* the window's end, Unix seconds */
};

int report_metrics_prometheus(const struct profile *p, const struct report_metrics_window *w, size_t top,
			      FILE *out, struct xerr *e);

#endif
