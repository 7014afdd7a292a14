/* report_diff.h — what changed between two profiles (a base and a new one):
 * per function, its self and total share in each, the functions that grew
 * and shrank most, and the colours of the differential flame graph
 * (report_svg with report_options.diff_base). docs/insights.md explains it
 * to users.
 *
 * Contract:
 *  - Functions are the report model's (report_model.h): frames with the same
 *    display name; they are matched across the two profiles by that name, so
 *    a rebuilt binary still matches. A function the base lacks has base
 *    shares 0 ("new"), one the new profile lacks new shares 0 ("gone").
 *  - Shares are percentages of ALL samples of each profile (a focus filter
 *    keeps its meaning from report.h), so profiles of different lengths or
 *    rates compare. A change is new - base in percentage points; the
 *    relative change is change / base share.
 *  - A function's change, the figure it is ranked by, is whichever of its
 *    self and total changes is larger in magnitude (a leaf that grew shows
 *    in self, a caller whose callees grew in total).
 *  - A change is noise when a two-proportion test over the sides' draws
 *    (thread stacks for CPU time, samples for counts) cannot tell it from
 *    sampling error at 95%: the text report says "(noise)" instead of a
 *    relative change (an 18-stack vs 112-stack diff printed "+1100%").
 *  - Deterministic: ties are broken by name.
 *  - Two heap snapshots (both profiles' weight_unit "bytes") compare
 *    amounts, not shares: the text report ranks functions by the growth
 *    of the live bytes allocated in them (self: the allocation site, the
 *    innermost frame left after skip_leaf), since a leak grows the bytes
 *    retained whatever the other sites do.
 */
#ifndef XGDBPROF_REPORT_DIFF_H
#define XGDBPROF_REPORT_DIFF_H

#include <stdio.h>

#include "report/profile.h"
#include "report/report.h"
#include "util/error.h"

struct report_diff_func {
	char *name;                  /* display name (owned, target text: escape to print) */
	double base_self, base_total;  /* % of the base profile's samples */
	double new_self, new_total;    /* % of the new profile's samples */
	bool in_base, in_new;
	uint64_t base_self_weight, base_total_weight;  /* the weights the shares are of */
	uint64_t new_self_weight, new_total_weight;
};

struct report_diff {
	struct report_diff_func *funcs;  /* sorted by change, largest growth first */
	size_t nfuncs;
	uint64_t base_samples, new_samples;  /* weight of all samples of each */
	/* The draws each side's shares rest on (report_draws: thread stacks
	 * for CPU time, samples for counts; 0 unknown), for the noise test. */
	double base_draws, new_draws;
	bool cpu_weighted;                   /* both sides' weights are CPU ns */
};

/* Whether a change of a share from base_pct to new_pct (percent) is within
 * what sampling alone gives at 95% (a two-proportion z test over the
 * sides' draws); false when either side's draws are unknown. */
bool report_diff_is_noise(const struct report_diff *d, double base_pct, double new_pct);

/* Compares cur against base (o: NULL for defaults; focus applies to both).
 * Returns 0, or -1 (bad focus, out of memory) with e. */
int report_diff_init(struct report_diff *d, const struct profile *base, const struct profile *cur,
		     const struct report_options *o, struct xerr *e);
void report_diff_release(struct report_diff *d);

/* The change a function is ranked by (points; see the contract). */
double report_diff_change(const struct report_diff_func *f);

/* The terminal report: the functions that grew most, then those that shrank
 * most (o->top_functions rows each, default 10), with both shares, the
 * change in points and the relative change. o->title: a first line. */
int report_diff_text(const struct profile *base, const struct profile *cur, FILE *out,
		     const struct report_options *o, struct xerr *e);

/* Fill colour of a differential flame graph's frame: red when its share
 * grew, blue when it shrank, stronger with |change_pts| / scale_pts (capped
 * at 1); a frame absent from the base is fully red. */
void report_diff_colour(double change_pts, bool in_base, double scale_pts, char *buf, size_t size);

#endif
