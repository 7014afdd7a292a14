/* locks_report.h — the `locks(@wait, @hold)` report: contended locks by
 * the user's code line that takes them, wait and hold percentiles.
 *
 * @wait is a HIST or LHIST map of wait times whose keys hold the lock's
 * address (the first int key), the operation (the first string key, may be
 * absent) and the call site (the first stack key: its leaf frame is the
 * line shown, so the recipe folds the lock's own frames away with
 * skip_leaf). @hold (NULL: none) is a HIST or LHIST map whose first int key
 * is a lock's address; its entries for that address are the lock's
 * measured holds. One block per @wait entry, most waits first, with the
 * waits' and the holds' histograms in powers of two (an lhist's buckets
 * gathered by their lower bound):
 *
 *   #1 contended lock 0x55d0c0 taken at cache_service.rs:79 (Mutex::lock)
 *      812 waits, total 0.85 s, p50 0.9 ms, p99 4 ms; held p50 1.9 ms, p99 2.1 ms (640 holds)
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

void locks_report(const struct map *wait, const struct map *hold, FILE *out, size_t top,
		  const char *title, const struct map_coverage *coverage);

#endif
