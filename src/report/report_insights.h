/* report_insights.h — one report over many profiling windows (the runs a
 * continuous profile writes, or any saved runs): their samples merged into
 * one profile, the hottest code paths of the period by the live report's
 * own inference (report_model.h), the target's CPU across windows, and how
 * each path's share moved from window to window, as text and as a timeline
 * SVG. docs/insights.md explains the figures to users.
 *
 * Contract:
 *  - Windows come in time order (the caller sorts them); a window may hold
 *    no profile (profile NULL, why says why: the target vanished, the
 *    window was cut short, its file did not load). Such windows are counted
 *    and named, never merged.
 *  - The merged profile is the sum of the windows' samples: entries merge
 *    as profile_add does (same thread name, tid, state and stack). Its meta
 *    describes the period: the last window's target, summed samples and
 *    durations, the first window's start time, cpu_min/max the extremes of
 *    the windows' own figures and cpu_avg the mean of their averages.
 *  - CPU across windows (the text's "CPU" line): each window's average CPU
 *    (meta.cpu_avg_pct), then the min, mean and max of those averages over
 *    the windows that know theirs; the highest instantaneous figure is the
 *    largest cpu_max_pct of any window.
 *  - A path's share in a window is the weight of the window's samples whose
 *    stack starts (root first) with the path's chain of functions, over all
 *    the window's samples: the same measure as the path's share of the
 *    period. A window without samples has no share (shown as "-").
 *  - Gaps: with at least three timed windows, consecutive starts further
 *    apart than 1.5 times the median spacing.
 *  - Renderers are deterministic and return 0, or -1 with e (out of memory,
 *    write error).
 */
#ifndef XGDBPROF_REPORT_INSIGHTS_H
#define XGDBPROF_REPORT_INSIGHTS_H

#include <stdint.h>
#include <stdio.h>

#include "report/profile.h"
#include "report/report.h"
#include "util/error.h"

struct insights_window {
	const char *name;          /* how output names it: its folder's name or the path given */
	struct profile *profile;   /* NULL: no profile (why) */
	const char *why;           /* why there is no profile, or NULL */
	int64_t start;             /* Unix time of its start, -1 unknown */
};

/* Sums the windows' profiles into a new profile (*out; free with
 * profile_free). Returns 0, or -1 (out of memory) with e. */
int report_insights_merge(const struct insights_window *w, size_t n, struct profile **out, struct xerr *e);

/* The text report: the period, windows, gaps, restarts, CPU across
 * windows, the hottest code paths of merged (o->top, default 5) each with
 * its share per window, and a table of the windows. o->color, o->full_paths
 * and o->title apply. */
int report_insights_text(const struct insights_window *w, size_t n, const struct profile *merged, FILE *out,
			 const struct report_options *o, struct xerr *e);

/* A self-contained SVG timeline: the target's CPU per window (average, and
 * the min-max range) and the top paths' shares per window (o->top, at most
 * 5), each point with a tooltip. */
int report_insights_timeline(const struct insights_window *w, size_t n, const struct profile *merged, FILE *out,
			     const struct report_options *o, struct xerr *e);

#endif
