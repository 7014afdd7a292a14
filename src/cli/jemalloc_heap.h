/* jemalloc_heap.h — the heap recipe from jemalloc's own sampled heap
 * profile (docs/alloc.md, "jemalloc's profile"): when the target's
 * allocator is jemalloc with profiling on and active, the run waits its
 * duration with the target running, then has jemalloc dump its profile
 * (session/jemalloc_call.h) into a private directory, parses and unbiases
 * it (procfs/jemalloc_profile.h) and adds each stack, symbolized by our
 * symbolizer, to the run's profile: weight = estimated live bytes, events
 * = estimated live objects (pprof's inuse_space and inuse_objects).
 *
 * Returns 1 when the profile came from jemalloc, 0 when it cannot (not
 * jemalloc, no profiling, profiling off or inactive: why is said on stderr
 * and the target runs on, for the allocator probes), -1 with e.
 */
#ifndef XGDBPROF_CLI_JEMALLOC_HEAP_H
#define XGDBPROF_CLI_JEMALLOC_HEAP_H

#include "events/run_stats.h"
#include "report/profile.h"
#include "session/session.h"
#include "symbols/symbolize.h"
#include "util/error.h"

/* skip_leaf: the recipe's pattern of allocator wrappers dropped from each
 * stack's leaf end (jemalloc's own frames always are); NULL or "": none. */
/* activate: when profiling is on but inactive, switch prof.active on for
 * the run and off again after the dump (also when the dump fails). */
int cli_jemalloc_heap(struct session *s, struct symbolizer *sym, double duration_s, const char *skip_leaf,
		      bool activate, struct profile *out, struct run_stats *stats, struct xerr *e);

#endif
