/* panic_report.h — the panic recipe's report: `report(@m, panics=1)` over a
 * map keyed [location, message, ustack] (docs/recipes.md, "panic").
 *
 * Panics are grouped by their first key (the location, "file:line:col"),
 * most frequent first; each group shows its count, up to
 * PANIC_REPORT_MESSAGES distinct messages (the map's other non-stack keys)
 * with their counts, and its most frequent stack root first, as the hot
 * code paths read, with every run of frames that are not the user's code
 * (report_frame_is_user: the panic machinery, std's catch_unwind and
 * thread start, libc) folded into one "… N runtime frames" line.
 *
 * Target text (locations, messages, names, paths) is escaped
 * (util/text_escape.h); every line fits in width columns (0: no limit).
 * Deterministic: ties are broken by key order. An empty map prints
 * "@name: (no events)", as print() does.
 */
#ifndef XGDBPROF_PANIC_REPORT_H
#define XGDBPROF_PANIC_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

struct map;
struct map_coverage;

#define PANIC_REPORT_MESSAGES 3

/* Returns 0, or -1 with e set (out of memory, or a map without a string or
 * integer first key to group by). links: OSC 8 links on local source files
 * (util/hyperlink.h). coverage (may be NULL): the run's, for the whole-run
 * estimate when the budget passed panics over and the panic hook counted
 * them in the target (docs/tracing.md, "Panics under the budget"). */
int panic_report_print(const struct map *m, FILE *out, size_t width, bool links, const struct map_coverage *coverage,
		       struct xerr *e);

#endif
