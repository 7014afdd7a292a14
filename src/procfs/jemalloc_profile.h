/* jemalloc_profile.h — jemalloc's own sampled heap profile, as its
 * prof.dump writes it (jemalloc 5.x, "heap_v2" text), parsed and unbiased.
 *
 * The dump's format (jemalloc 5.3's prof_data.c, read by jeprof):
 *   heap_v2/PERIOD                       PERIOD = 2^lg_prof_sample bytes
 *     t*: OBJS: BYTES [AOBJS: ABYTES]    whole process, then t0:, t1:... per thread
 *   @ PC PC ...                          one stack, innermost first
 *     t*: OBJS: BYTES [AOBJS: ABYTES]    its totals, then per-thread lines
 *   ...
 *   MAPPED_LIBRARIES:                    /proc/PID/maps as the target saw it
 * OBJS/BYTES are the sampled allocations still live; AOBJS/ABYTES every
 * sampled allocation since the start, and 0: 0 unless opt.prof_accum is on.
 * The counts are the samples themselves, not estimates (5.3 too: its
 * prof_unbias applies to prof.stats, not to dumps): jemalloc samples an
 * allocation of size X with probability 1 - exp(-X/PERIOD), so each stack's
 * counts are scaled by 1 / (1 - exp(-(BYTES/OBJS)/PERIOD)), jeprof's own
 * correction (AdjustSamples, "Remote-heap version 2"), at the stack's
 * mean sampled size. PCs after the first are return addresses.
 *
 * Functions return 0, or -1 with the reason in e (a line that is not of
 * the format names its number).
 */
#ifndef XGDBPROF_JEMALLOC_PROFILE_H
#define XGDBPROF_JEMALLOC_PROFILE_H

#include "util/error.h"

#include <stddef.h>
#include <stdint.h>

struct jemalloc_counts {
	uint64_t objects, bytes;   /* sampled, as dumped */
	double est_objects;        /* the whole population jemalloc's sampling implies */
	double est_bytes;
};

struct jemalloc_stack {
	uint64_t *pcs;             /* innermost first */
	size_t npcs;
	struct jemalloc_counts live;     /* still allocated at the dump */
	struct jemalloc_counts accum;    /* since the start (opt.prof_accum; else zeros) */
};

struct jemalloc_profile {
	uint64_t sample_period;    /* bytes between samples on average: 2^lg_prof_sample */
	struct jemalloc_counts live, accum;   /* the header's t*: line, scaled stack by stack */
	struct jemalloc_stack *stacks;
	size_t nstacks;
};

/* Parses a dump held in text[0..len). *out is malloc'd: free with
 * jemalloc_profile_free. */
int jemalloc_profile_parse(const char *text, size_t len, struct jemalloc_profile **out, struct xerr *e);

/* Reads and parses the dump at path (a regular file, never through a
 * symbolic link). */
int jemalloc_profile_read(const char *path, struct jemalloc_profile **out, struct xerr *e);

/* The scale jemalloc's sampling implies for `objects` samples totalling
 * `bytes`: 1 / (1 - exp(-(bytes/objects)/period)); 1 when nothing was sampled. */
double jemalloc_sample_scale(uint64_t objects, uint64_t bytes, uint64_t period);

void jemalloc_profile_free(struct jemalloc_profile *p);

#endif
