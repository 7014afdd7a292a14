/* syscall_table.h — the `syscall_table(@time_ns, @calls[, @errors[, @kinds
 * [, @counted[, @numbers[, @at_sites]]]]])` report: a system call summary in `strace -c`'s columns
 * and order, so a user can read it beside strace's.
 *
 * @time_ns is a SUM map of time spent in the calls (ns), @calls a COUNT
 * map, @errors (NULL: none) a COUNT map of failed calls, all keyed by the
 * call's name alone; @kinds (NULL: none) a COUNT map keyed by the name and
 * the errno's name. Rows are sorted by time, most first, then calls, then
 * name, and a `total` row ends the table:
 *
 *   % time     seconds  usecs/call     calls    errors syscall
 *   ------ ----------- ----------- --------- --------- ----------------
 *    96.50    0.092072        6138        15         3 futex
 *   ------ ----------- ----------- --------- --------- ----------------
 *   100.00    0.095411        5962        16         3 total
 *   errors of futex: EAGAIN 3
 *
 * Under a budget (coverage's armed_share in (0, 1)) the figures are what
 * the armed windows saw, and a column `est. calls` before `syscall` gives
 * each call's whole-run estimate: N, or `>=N` when only a lower bound can
 * be given (too little CPU time between calls to time them, or seen in
 * fewer than MAP_MIN_ESTIMATE_WINDOWS windows: then N is what was seen).
 * Lines under the table say which. With @counted (NULL: none), a COUNT map
 * keyed by glibc wrapper names from a probe that only counts (exact counts
 * in the target), the estimate of a call made by a known wrapper is its
 * wrappers' count (a row is added for a call counted and never seen); the
 * others keep the armed share's. With @numbers (NULL: none), a SUM map
 * keyed the same way from a probe on syscall() that only counts and sums
 * its first argument (the call's number), the calls into syscall() whose
 * numbers total exactly their count times one call's number are that
 * call's (futex's, in parking_lot and Rust's std); mixed numbers are said
 * under the table and attributed to no row. With @at_sites (NULL: none), a
 * COUNT map keyed by the call's name from a `syscall_site` probe that only
 * counts (the calls glibc makes inline, counted in the target where its
 * code sets the number and makes the call), those counts are added to
 * their calls' (exact for the calls made there). Names come from the target's kernel
 * tables, not the target: printed as they are. Never fails; out of memory
 * prints a line saying so. */
#ifndef XGDBPROF_SYSCALL_TABLE_H
#define XGDBPROF_SYSCALL_TABLE_H

#include <stdio.h>

#include "recipe/maps.h"

void syscall_table_report(const struct map *time_ns, const struct map *calls, const struct map *errors,
			  const struct map *kinds, const struct map *counted, const struct map *numbers,
			  const struct map *at_sites, FILE *out, const struct map_coverage *coverage);

#endif
