/* maps.h — recipe maps: keyed aggregations (`@name[k1, k2] = count()`).
 *
 * A map has a fixed aggregation (chosen by the recipe checker) and a fixed
 * number of keys per entry (0 for a scalar map like `@calls = count()`).
 * Keys are typed: integers, strings, or call stacks. A map owns deep copies
 * of its keys, so callers may free what they passed in right after an update.
 *
 * Invariants:
 *  - At most max_keys entries; an update that would add one more entry is
 *    counted in map_dropped() instead (never silently lost). 0 = no limit.
 *  - Entries keep their insertion order (map_entry_at); map_sorted gives them
 *    ordered by value, ascending, ties broken by key order, so output is
 *    deterministic.
 *  - Stack keys compare by frames (function, file, line, inlined; module+pc
 *    when the function is unknown), not by raw PC, so samples on the same
 *    source line merge.
 *
 * Consumers (reports, the session) iterate entries and read typed keys and
 * values; see struct map_entry. Nothing here writes files.
 */
#ifndef XGDBPROF_MAPS_H
#define XGDBPROF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/stack.h"

enum map_agg {
	MAP_AGG_COUNT,   /* count(): value.count */
	MAP_AGG_SUM,     /* sum(x): value.sum (and count) */
	MAP_AGG_MIN,     /* min(x): value.min */
	MAP_AGG_MAX,     /* max(x): value.max */
	MAP_AGG_AVG,     /* avg(x): value.sum / value.count (integer) */
	MAP_AGG_HIST,    /* hist(x): power-of-two buckets, see map_hist_bucket */
	MAP_AGG_LHIST,   /* lhist(x, min, max, step): linear buckets */
	MAP_AGG_INT,     /* plain assignment of an integer: value.i */
	MAP_AGG_STR,     /* plain assignment of a string: value.s */
	MAP_AGG_LIVE,    /* live(ptr, size): value.live holds the allocations recorded
			  * (count, and sum = their bytes) and, once tested, which are
			  * still allocated (map_live_records, map_live_tally) */
};

/* One allocation a live() map recorded: its address, size and the run's
 * sequence number of the record; state is set by the caller's test. */
enum map_live_state { MAP_LIVE_UNTESTED, MAP_LIVE_LIVE, MAP_LIVE_FREED, MAP_LIVE_UNKNOWN };
struct map_live_record {
	uint64_t addr;
	int64_t size;
	uint64_t seq;
	enum map_live_state state;
};
struct map_live {
	struct map_live_record *v;
	size_t n, cap;
	bool tested;                      /* map_live_tally ran: the figures below hold */
	uint64_t live, freed, unknown;    /* records by state */
	int64_t live_bytes, unknown_bytes;
	/* map_live_bound ran and every live record had a size class: the
	 * whole heap holds at most bound_blocks allocations of the classes
	 * seen here, bound_bytes bytes, however often the probes saw them */
	bool bounded;
	uint64_t bound_blocks;
	int64_t bound_bytes;
	/* and its share of those blocks: class by class, the blocks times this
	 * entry's part of the live records seen in the class (share_seen of
	 * share_of, over all the map's entries), with the Wilson 95% interval
	 * of each part; at least the bytes seen live */
	double share_bytes, share_low, share_high;
	uint64_t share_seen, share_of;
};

enum map_key_type { MAP_KEY_INT, MAP_KEY_STR, MAP_KEY_STACK };

struct map_key {
	enum map_key_type type;
	int64_t i;
	const char *s;            /* MAP_KEY_STR */
	const struct stack *stack;/* MAP_KEY_STACK, leaf first */
};

struct map_value {
	uint64_t count;           /* number of updates (all aggregations) */
	int64_t sum, min, max;    /* SUM/AVG/HIST/LHIST (the values' total), MIN, MAX */
	int64_t i;                /* MAP_AGG_INT */
	const char *s;            /* MAP_AGG_STR */
	uint64_t *buckets;        /* HIST/LHIST: map_nbuckets() counters */
	struct map_live *live;    /* LIVE */
	uint32_t windows;         /* distinct armed windows (map_set_window) its updates fell in */
	/* updates from a stratum of calls counted in the target
	 * (map_set_weight): how many, their values' total; per stratum for
	 * up to 4 (more: wide), and their weights as known when made (for a
	 * wide key): weights' total, weight times value's total */
	uint64_t wn;
	int64_t wxsum;
	struct map_stratum {
		int32_t id;
		uint32_t n;
		int64_t xsum;
	} strata[4];
	uint8_t nstrata;
	bool wide;
	double wcount, wsum;
	int64_t last_window;
};

struct map_entry {
	const struct map_key *keys;  /* map_nkeys() of them */
	struct map_value value;
};

struct map;

/* Number of HIST buckets: [0] negative, [1] zero, [b>=2] [2^(b-2), 2^(b-1)). */
#define MAP_HIST_BUCKETS 65

/* Creates an empty map. lhist_* are used only for MAP_AGG_LHIST (the
 * checker guarantees step > 0 and max > min). Returns NULL on out of memory. */
struct map *map_new(const char *name, enum map_agg agg, size_t nkeys,
		    int64_t lhist_min, int64_t lhist_max, int64_t lhist_step,
		    size_t max_keys);
void map_free(struct map *m);

const char *map_name(const struct map *m);      /* without the '@' */
enum map_agg map_agg(const struct map *m);
size_t map_nkeys(const struct map *m);
size_t map_len(const struct map *m);            /* number of entries */
uint64_t map_dropped(const struct map *m);      /* updates refused by max_keys */
size_t map_nbuckets(const struct map *m);       /* HIST/LHIST, else 0 */

/* Finds an entry without creating it; NULL if absent. */
const struct map_entry *map_find(const struct map *m, const struct map_key *keys);

/* Convenience: lookup_or_add + update. Returns 0 (also when dropped), -1 on
 * out of memory. */
int map_update(struct map *m, const struct map_key *keys, int64_t x, const char *s);
/* A sum's entry under keys grows by x without counting an update (the
 * CPU weight of a sampler's end-of-run tail, event.h weight_only); an
 * entry not there yet is created as by map_update. Returns as map_update. */
int map_add_weight(struct map *m, const struct map_key *keys, int64_t x);
/* The armed window (events' window, 0: none) the next updates fall in:
 * each entry counts the distinct windows it was updated in. */
void map_set_window(struct map *m, int64_t window);
/* The counted site (< 0: none) and weight so far of the updates that
 * follow, and of their summed values (sum_weight 0: as the update):
 * see map_value. */
void map_set_weight(struct map *m, int site, double weight, double sum_weight);

/* live(ptr, size): records one allocation under keys (as map_update). */
int map_update_live(struct map *m, const struct map_key *keys, uint64_t addr, int64_t size, uint64_t seq);
/* Recomputes every entry's figures from its records' states (after the
 * caller set them) and marks the map tested. */
void map_live_tally(struct map *m);

/* After a test (map_live_tally), checks the estimate's assumption that
 * the sampled allocations stand for the unseen ones at the same rate: for
 * each entry whose live records all have a size class (class(ctx, addr):
 * glibc's chunk size and heap, -1 when none), census(ctx, class) says how
 * many blocks of that class the heap holds now (-1: unknown); the entry is
 * bounded by their sum, each class's blocks counted at the largest size
 * seen in it. An estimate over that bound cannot be (allocations made in a
 * burst the probes happened to see, a leak at start): print_live caps it,
 * and gives the entry's share of the blocks instead (share_*). */
void map_live_bound(struct map *m, int64_t (*class)(void *ctx, uint64_t addr),
		    int64_t (*census)(void *ctx, int64_t cls), void *ctx);

/* The number a map entry sorts and reports by: count, sum, min, max, avg,
 * total count of a histogram, the assigned integer (0 for strings), or a
 * live() map's live bytes (its recorded bytes until tested). */
int64_t map_entry_number(const struct map *m, const struct map_entry *e);

/* i-th entry in insertion order, i < map_len(). */
const struct map_entry *map_entry_at(const struct map *m, size_t i);

/* Entries sorted by value ascending (see invariants). Returns a malloc'd
 * array of map_len() pointers the caller frees (NULL when empty or OOM). */
const struct map_entry **map_sorted(const struct map *m);

/* The q-quantile (0 < q < 1) of a HIST or LHIST entry's values,
 * interpolated linearly inside the bucket that holds it: exact to a bucket's
 * width (an lhist's step; a hist's power of two). *beyond is set when it
 * falls in an lhist's last bucket ([max, ...)): *value is then max, a lower
 * bound. Returns false for other maps and empty entries. */
bool map_quantile(const struct map *m, const struct map_entry *e, double q, double *value, bool *beyond);
/* An lhist's step (its resolution), 0 for other maps. */
int64_t map_lhist_step(const struct map *m);

/* Removes every entry (and resets the dropped counter). */
void map_clear(struct map *m);

/* Bucket index of x for HIST maps (see MAP_HIST_BUCKETS). */
size_t map_hist_bucket(int64_t x);

/* Calls counted in the target at a site that no entry stands for: made
 * by threads like none of the site's hits came from (trace/tracer.h,
 * tracer_apart), so their stacks are not known. */
struct map_apart {
	size_t site;          /* the site's strata: site * MAP_STRATA_PER_SITE on */
	const char *function;
	double calls, sum;    /* sum: of the argument the site's counter totals, 0 if none */
	const char *threads;  /* their names, "" when they were gone at the end */
};

/* Text rendering, bpftrace style: "@name[k1, k2]: value" lines sorted by
 * value ascending; histograms as ASCII bars; stack keys one frame per line.
 * top > 0 prints only the top largest entries. A map with drops ends with a
 * line saying how many updates max_keys refused, one fed by a counted site
 * with calls no entry stands for (coverage's aparts) with a line saying
 * them. coverage (NULL: none) gives the
 * share of the run the probes that feed the map were armed (a budget
 * switched them off the rest of the time): count() and sum() values print as
 * measured, with an estimate for the whole run and its 95% interval
 * (map_estimate); 0 or 1 prints the values alone. */
struct map_coverage {
	double armed_share;   /* in (0, 1): the share the estimates divide by */
	bool lower_bound;     /* the events came faster than the producer could time
			       * them: the estimate only bounds the truth from below */
	double seconds;       /* > 0: the run's length; estimates also print per second */
	double share_low, share_high;  /* the range armed_share is known to lie in (0: armed_share
			       * itself): the interval's ends divide by these */
	size_t windows;       /* > 0: the armed windows the run had, each a sample of the rate */
	double dispersion;    /* >= 1 (0 means 1): how much more the per-window counts spread than
			       * Poisson counts; intervals widen by it (counts in bursts) */
	double counted;       /* > 0: the entries, counted in the target (no stop per call) */
	uint64_t counted_seen;/* the hits at counted sites */
	/* per stratum (MAP_STRATA_PER_SITE per site, the last the whole site:
	 * trace/entry_counter.h's ENTRY_COUNTER_STRATA) */
	const double *site_scales;  /* per counted site: calls counted / hits (each of its hits
			       * stands for that many); updates without a site divide by
			       * armed_share */
	const double *site_sum_scales;  /* the same length or NULL: per stratum, what a summed value
			       * stands for where the target totals it (0: weigh it as its
			       * update, by site_scales) */
	size_t nsite_scales;
	bool counted_all;     /* every probed site was counted */
	bool counted_no_stops;/* some sites only counted, with no breakpoint */
	const struct map_apart *aparts;  /* said under the maps fed by their sites (map_print) */
	size_t naparts;
};
#define MAP_STRATA_PER_SITE 9
void map_print(const struct map *m, FILE *out, size_t top, const struct map_coverage *coverage);

/* The whole-run estimate of a value whose updates were counted in the
 * target (coverage->site_scales): of its count, or of its sum (is_sum).
 * false when c has no counts or v no update from a counted site. */
bool map_counted_estimate(const struct map_value *v, bool is_sum, const struct map_coverage *c, double *estimate);
/* A live() entry's whole-run retained bytes as print() gives them (the
 * scaled estimate, its lower bound, or this stack's share of the heap's
 * blocks of its sizes); false, with the bytes seen live, when there is no
 * estimate (not under a budget, nothing live, not tested). */
bool map_live_estimate(const struct map_value *v, const struct map_coverage *c, double *bytes);

/* Whether v is the count (or, is_sum, the total of an argument) of a
 * probe that only counts (no breakpoint, one update at the end:
 * docs/tracing.md, "A probe that only counts needs no breakpoint"): true
 * with *value, the calls counted (the argument totalled) in the target. */
bool map_value_only_counted(const struct map_value *v, bool is_sum, const struct map_coverage *c, double *value);

/* recipe_profile_add_map (report/profile.h), each entry with its whole-run
 * estimate when c holds counts in the target (profile_map.c). */
struct profile;
int recipe_profile_add_map_estimated(struct profile *p, const struct map *m, const struct map_coverage *c,
				     struct xerr *e);

/* A table of maps that share keys, one row per key of the first map,
 * largest first: the first map's share of its total, then each map's value
 * for that key (blank where it has none), and for count() maps under a
 * budget (coverage) their whole-run estimate; the key last. Like strace -c.
 * At most 8 maps; histograms show "?". */
void map_table(const struct map *const *maps, size_t nmaps, FILE *out, const struct map_coverage *coverage);

/* The whole-run estimate of a count of n events seen in a share coverage
 * of the run, and its 95% interval: a Poisson interval on n (Wilson-Hilferty;
 * [0, 3.69] for n = 0) divided by the coverage. Assumes the events fall as
 * often in the armed share as outside it. */
void map_estimate(int64_t n, double coverage, double *estimate, double *low, double *high);
/* The same under a coverage whose share is only known to a range: the
 * interval's low end over share_high, its high end over share_low; with a
 * dispersion d > 1 it is at least the estimate times exp(-+ t sqrt(d/n)),
 * t Student's 97.5% quantile for windows - 1 degrees of freedom (the rate
 * is known from that many samples). */
void map_coverage_estimate(const struct map_coverage *c, int64_t n, double *estimate, double *low, double *high);
/* Fewer windows than this holding an entry: its estimate is only what was
 * measured (its calls may have come in a burst the windows happened to
 * catch). */
#define MAP_MIN_ESTIMATE_WINDOWS 3
/* True when an entry's updates fell in too few of c's armed windows for an
 * estimate (c counts windows: a run under a budget). */
bool map_coverage_too_few_windows(const struct map_coverage *c, const struct map_value *v);

/* Appends the text of one stack frame ("func (file:line) [inlined]") to out. */
void map_format_frame(const struct frame *f, FILE *out);

/* Writes the map as folded stacks ("root;...;leaf N" per line): non-stack keys
 * become leading frames, stack keys expand root first. Only COUNT/SUM/INT
 * maps fold. Returns 0, or -1 for another aggregation. */
int map_write_folded(const struct map *m, FILE *out);

#endif
