/* clock.h — CLOCK_MONOTONIC readings, the one clock xgdbprof times things by
 * (stops, rounds, budgets, timeouts). Never goes back; unrelated to the wall
 * clock.
 */
#ifndef XGDBPROF_CLOCK_H
#define XGDBPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline double monotonic_ms(void)
{
	return (double)monotonic_ns() / 1e6;
}

#endif
