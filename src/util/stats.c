/* stats.c — nearest-rank percentiles and Student's t quantile (contract in stats.h). */
#include "util/stats.h"

#include <math.h>
#include <stdlib.h>

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void stats_sort(double *values, size_t n)
{
	if (n > 1)
		qsort(values, n, sizeof *values, compare_double);
}

double stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return NAN;
	if (!(p > 0))
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	/* p * n first: 99 * 100 / 100 is exactly 99, 0.99 * 100 is not; the
	 * slack absorbs the rounding of p values like 99.9. */
	double rank = ceil(p * (double)n / 100 - 1e-9);
	size_t index = rank < 1 ? 0 : (size_t)rank - 1;
	return sorted[index < n ? index : n - 1];
}

double stats_percentile(double *values, size_t n, double p)
{
	stats_sort(values, n);
	return stats_percentile_sorted(values, n, p);
}

double stats_t975(size_t df)
{
	static const double table[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
					2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086 };
	if (df == 0)
		return table[0];
	if (df <= sizeof table / sizeof *table)
		return table[df - 1];
	return 1.959964 + 2.4 / (double)df;
}

void stats_wilson95(double k, double n, double *lo, double *hi)
{
	if (!(n > 0)) {
		*lo = 0;
		*hi = 1;
		return;
	}
	const double z = 1.959964;
	double p = k / n, z2n = z * z / n;
	double center = (p + z2n / 2) / (1 + z2n);
	double half = z * sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n);
	*lo = k <= 0 || center - half < 0 ? 0 : center - half;
	*hi = k >= n || center + half > 1 ? 1 : center + half;
}
