/* locks_report.h — the `locks(@wait, @hold, @withdrawn)` report: contended locks by
 * the user's code line that takes them, wait and hold percentiles.
 *
 * @wait is a HIST or LHIST map of wait times whose keys hold the lock's
 * address (the first int key), the operation (the first string key, may be
 * absent) and the call site (the first stack key: its leaf frame is the
 * line shown, so the recipe folds the lock's own frames away with
 * skip_leaf). @hold (NULL: none) is a HIST or LHIST map whose first int key
 * is a lock's address and whose first string key, if any, the operation:
 * its entries for that address (and the row's operation, or "") are the
 * lock's measured holds; a read operation's (its name ends in "read" or
 * holds "rdlock") print as "read-held", each reader's own. @withdrawn (NULL:
 * none) has @wait's keys and lhist: its entries are waits recorded in
 * @wait too early and taken back out (a glibc rwlock acquisition that
 * slept again: recipes/locks.recipe), count, total and buckets. One block
 * per @wait entry left with waits, most waits first, with the
 * waits' and the holds' histograms in powers of two (an lhist's buckets
 * gathered by their lower bound). A row whose waits all fell in the
 * lhist's first bucket says so instead of a total and percentiles
 * ("1 wait, under 100 us (below the probes' resolution: no total)"):
 *
 *   #1 contended lock 0x55d0c0 taken at cache_service.rs:79 (Mutex::lock)
 *      812 waits, total 0.85 s, p50 0.9 ms, p99 4 ms
 *      held p50 1.9 ms, p99 2.1 ms (640 holds)
 *      est. 16240 waits in the run (95% 15100–17400) · 541/s
 *      in cache_service::worker
 *      wait:
 *          [800 us, 1.6 ms)    310 |@@@@@@@@@@@@@@                |
 *          [1.6 ms, 3.2 ms)    502 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
 *      held:
 *          …
 *
 * Lines are laid out to stay under about 80 columns; the caller's stream
 * shortens what a narrower terminal cannot hold. The estimate line appears
 * when coverage says a budget switched the probes off part of the run
 * (map_estimate). Target text is escaped (util/text_escape.h).
 */
#ifndef XGDBPROF_LOCKS_REPORT_H
#define XGDBPROF_LOCKS_REPORT_H

#include "recipe/maps.h"

#include <stddef.h>
#include <stdio.h>

void locks_report(const struct map *wait, const struct map *hold, const struct map *withdrawn, FILE *out,
		  size_t top, const char *title, const struct map_coverage *coverage);

#endif
