/* stats.h — the one percentile definition every figure the tool prints uses
 * (the sampler's per-stop median and p99, the tracer's medians of gdb's part
 * of a hit and of the gaps between hits), so a p99 is never below its median;
 * and the one Student's t quantile the 95% intervals use (the tracer's
 * first-hit bound, the maps' clustered-count intervals).
 *
 * Contract (percentiles):
 *  - Nearest rank: the p-th percentile of n values is the smallest value
 *    with at least p% of the values at or below it, i.e. the value of rank
 *    ceil(p/100 * n) (1-based) in ascending order; p = 0 gives the minimum,
 *    p = 100 the maximum, p = 50 of an even count the lower middle value.
 *    It is always one of the values, and it never decreases as p grows.
 *  - p is in [0, 100]; outside, it is clamped. Values must not be NaN.
 *  - n == 0 gives NAN.
 */
#ifndef XGDBPROF_STATS_H
#define XGDBPROF_STATS_H

#include <stddef.h>

/* Sorts values[0..n) ascending, in place. */
void stats_sort(double *values, size_t n);

/* The p-th percentile of sorted[0..n), already ascending (stats_sort). */
double stats_percentile_sorted(const double *sorted, size_t n, double p);

/* Sorts values[0..n) in place and returns their p-th percentile. */
double stats_percentile(double *values, size_t n, double p);

/* Student's t distribution's 0.975 quantile for df degrees of freedom: the
 * half-width, in standard errors, of a two-sided 95% interval on the mean
 * of df + 1 values. A table (3 decimals) to df 20, then 1.959964 + 2.4/df,
 * at most 0.006 under the true value (at df 21) and 1.96 as df grows; it
 * never increases with df. df 0 (one value: no spread known) is taken as 1. */
double stats_t975(size_t df);

/* The Wilson score 95% interval (z = 1.96) on a proportion seen k times in
 * n independent trials, into [*lo, *hi] within [0, 1]; sound at k = 0 or
 * k = n, where the normal interval collapses to a point. n <= 0 gives
 * [0, 1]. */
void stats_wilson95(double k, double n, double *lo, double *hi);

#endif
