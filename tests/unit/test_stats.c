/* test_stats.c — the nearest-rank percentile every printed median and p99
 * goes through, and Student's t quantile of the 95% intervals
 * (src/util/stats.h). Exit 0 pass, 1 fail. */
#include "util/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"


static void is(const char *what, double got, double want)
{
	if (!(got == want || (isnan(got) && isnan(want)))) {
		fprintf(stderr, "FAIL %s: got %g, want %g\n", what, got, want);
		test_failures++;
	}
}

/* Student's t 0.975 quantiles from the published table (4 decimals):
 * within the table's rounding to df 20, within stats.h's 0.006 beyond. */
static void test_t975(void)
{
	static const struct { size_t df; double t; } truth[] = {
		{ 1, 12.7062 }, { 2, 4.3027 }, { 3, 3.1824 }, { 5, 2.5706 }, { 10, 2.2281 }, { 15, 2.1314 },
		{ 20, 2.0860 }, { 21, 2.0796 }, { 25, 2.0595 }, { 30, 2.0423 }, { 40, 2.0211 }, { 60, 2.0003 },
		{ 120, 1.9799 }, { 1000, 1.9623 }, { 1000000, 1.9600 },
	};
	for (size_t i = 0; i < sizeof truth / sizeof truth[0]; i++) {
		double got = stats_t975(truth[i].df), slack = truth[i].df <= 20 ? 0.0005 : 0.006;
		CHECK_MSG(fabs(got - truth[i].t) <= slack, "t975(%zu) = %.4f, the table says %.4f", truth[i].df, got,
			  truth[i].t);
	}
	/* one value: the widest interval there is, not a division by zero */
	CHECK(stats_t975(0) == stats_t975(1));
	/* never increasing with df, never under the normal's 1.959964 */
	double last = stats_t975(1);
	for (size_t df = 2; df <= 5000; df++) {
		double t = stats_t975(df);
		CHECK_MSG(t <= last && t >= 1.959964, "t975(%zu) = %.6f after %.6f", df, t, last);
		last = t;
	}
}

/* Wilson 95% against values computed independently (R's prop.test without
 * continuity correction gives the same): 35 of 100 → [0.2636, 0.4474];
 * 0 of 10 → [0, 0.2775]; 10 of 10 → [0.7225, 1]. */
static void test_wilson(void)
{
	double lo, hi;
	stats_wilson95(35, 100, &lo, &hi);
	CHECK(fabs(lo - 0.2636) < 5e-4 && fabs(hi - 0.4474) < 5e-4);
	stats_wilson95(0, 10, &lo, &hi);
	CHECK(lo == 0 && fabs(hi - 0.2775) < 5e-4);
	stats_wilson95(10, 10, &lo, &hi);
	CHECK(fabs(lo - 0.7225) < 5e-4 && hi == 1);
	stats_wilson95(3, 0, &lo, &hi);
	CHECK(lo == 0 && hi == 1);
}

int main(void)
{
	test_t975();
	test_wilson();
	is("no values", stats_percentile(NULL, 0, 50), NAN);

	double one[] = { 7 };
	is("one value, median", stats_percentile(one, 1, 50), 7);
	is("one value, p99", stats_percentile(one, 1, 99), 7);

	/* Two stops: the p99 is the slower one and the median the faster one,
	 * never the other way round. */
	double two[] = { 5, 1 };
	is("two values, median", stats_percentile(two, 2, 50), 1);
	is("two values, p99", stats_percentile(two, 2, 99), 5);
	is("two values, p0", stats_percentile(two, 2, 0), 1);
	is("two values, p100", stats_percentile(two, 2, 100), 5);

	double three[] = { 3, 1, 2 };
	is("three values, median", stats_percentile(three, 3, 50), 2);

	/* 1..100 shuffled: the p-th percentile is p itself, with no rounding
	 * up at p = 99 (0.99 * 100 is 99.00000000000001 in doubles). */
	double hundred[100];
	for (int i = 0; i < 100; i++)
		hundred[i] = (double)((i * 37) % 100 + 1);
	stats_sort(hundred, 100);
	for (int i = 0; i < 100; i++)
		if (hundred[i] != i + 1) {
			fprintf(stderr, "FAIL sort: [%d] = %g\n", i, hundred[i]);
			test_failures++;
			break;
		}
	is("1..100, p1", stats_percentile_sorted(hundred, 100, 1), 1);
	is("1..100, p50", stats_percentile_sorted(hundred, 100, 50), 50);
	is("1..100, p99", stats_percentile_sorted(hundred, 100, 99), 99);
	is("1..100, p99.5", stats_percentile_sorted(hundred, 100, 99.5), 100);
	is("1..100, p100", stats_percentile_sorted(hundred, 100, 100), 100);
	is("1..100, p below 0 clamps", stats_percentile_sorted(hundred, 100, -5), 1);
	is("1..100, p above 100 clamps", stats_percentile_sorted(hundred, 100, 250), 100);

	double thousand[1000];
	for (int i = 0; i < 1000; i++)
		thousand[i] = i + 1;
	is("1..1000, p99.9", stats_percentile_sorted(thousand, 1000, 99.9), 999);

	/* Never decreasing in p, for every count up to 50. */
	for (size_t n = 1; n <= 50; n++) {
		double v[50];
		for (size_t i = 0; i < n; i++)
			v[i] = (double)((i * 7919) % 101);
		stats_sort(v, n);
		double last = -1;
		for (int p = 0; p <= 100; p++) {
			double q = stats_percentile_sorted(v, n, p);
			if (q < last) {
				fprintf(stderr, "FAIL n=%zu: p%d = %g below p%d = %g\n", n, p, q, p - 1, last);
				test_failures++;
			}
			last = q;
		}
		if (stats_percentile_sorted(v, n, 99) < stats_percentile_sorted(v, n, 50)) {
			fprintf(stderr, "FAIL n=%zu: p99 below the median\n", n);
			test_failures++;
		}
	}
	return test_exit_code();
}
