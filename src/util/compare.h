/* compare.h — three-way comparisons for qsort comparators, written once:
 * each returns <0, 0 or >0 as a sorts before, with or after b, ascending.
 * (Subtracting the two values instead overflows for large or negative
 * ones; these do not.) For heaviest-first weights see report_cmp_heavier. */
#ifndef XGDBPROF_COMPARE_H
#define XGDBPROF_COMPARE_H

#include <stdint.h>
#include <string.h>

static inline int compare_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static inline int compare_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Strings, NULL sorting as "" (a frame without a file, a thread without a name). */
static inline int compare_text(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

#endif
