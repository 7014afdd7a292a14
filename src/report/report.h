/* report.h — rendering a profile: terminal text, interactive SVG flame graph,
 * folded stacks, JSON, annotated source, and the files other tools read
 * (pprof, speedscope). Definitions (path, self, total)
 * and formats are documented in docs/reports.md.
 *
 * Contract:
 *  - Renderers never modify the profile and are deterministic: the same
 *    profile and options give the same bytes (ties are broken by name).
 *  - Shares are always relative to ALL samples of the profile, also under a
 *    focus filter (the report says how much the focus kept).
 *  - Return convention: 0 on success, -1 with the reason in e (bad focus
 *    regex, out of memory, write error). Nothing is printed on failure
 *    except what was already written to out.
 */
#ifndef XGDBPROF_REPORT_H
#define XGDBPROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "report/profile.h"

struct source_map;

struct report_options {
	size_t top;              /* hottest code paths shown (text, json); 0 = 5 */
	size_t top_functions;    /* rows of the top-functions tables; 0 = 10 */
	bool color;              /* ANSI colours (caller decides: TTY and no NO_COLOR) */
	bool links;              /* text: source locations as OSC 8 hyperlinks (util/hyperlink.h) */
	const char *focus;       /* PCRE2 pattern over function names, or NULL */
	size_t width;            /* terminal columns for the tables; 0 = no truncation */
	bool full_paths;         /* text: never elide the middle of a path */
	bool thread_roots;       /* svg/folded: thread name as the root frame */
	bool inverted;           /* svg: merge stacks leaf first and draw them top down
				  * (an icicle of callers); folded: frames leaf first */
	bool inlined_suffix;     /* folded: mark inlined frames with inferno's "_[i]" */
	const char *title;       /* svg title; NULL = "xgdbprof: <exe>"; text: a first line */
	bool no_header;          /* text: the run header was already printed (report_text_header) */
	bool waits;              /* text: samples of waiting threads: a headline ends with the
				  * call the user's code waits in (e.g. Mutex::lock) */
	size_t annotate_functions; /* annotate: how many functions; 0 = 5 */
	struct source_map *source_map; /* annotate: path rewriting, or NULL */
	bool verbose;            /* text: the header adds the figures -v asks for (gdb's round trip) */
	const struct profile *diff_base; /* svg: a differential flame graph against this
					  * profile (report_diff.h), or NULL */
};

/* Fills o with the defaults above (all zero/false/NULL). */
void report_options_init(struct report_options *o);

/* Every renderer's shape; report_format.h names them by format. */
typedef int report_render_fn(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);

int report_text(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
/* The run header alone (what, when, how sampled, its cost, notes): a live
 * run prints it once, before anything its END block prints. */
int report_text_header(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
int report_svg(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
int report_folded(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
int report_json(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
int report_annotate(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
/* pprof's profile.proto, gzip'd (binary: out must be a file, not a terminal).
 * Honours focus; no other option applies. */
int report_pprof(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);
/* speedscope's JSON file format: one sampled profile per thread. Honours
 * focus and title. */
int report_speedscope(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e);

/* Opens path ("-" or NULL = stdout), runs the renderer, closes: a file
 * appears only whole (util/output_file.h). Returns 0 or -1. */
int report_to_file(report_render_fn *render, const struct profile *p, const char *path,
		   const struct report_options *o, struct xerr *e);

#endif
