/* report_format.h — the output formats, one table: each format's name, its
 * renderer, the file a run writes it to, whether it is binary, the report
 * options it honours, its one line of help, and the recipe call that writes
 * a map in it. Every consumer reads this table: `xgdbprof report --format`
 * and its --help, the recipe checker's calls and their options, a run's
 * sink, the files written beside a sampling run's profile.json, and the
 * names a run's last line explains. A new format is its renderer and one
 * row in report_format.c.
 *
 * Contract: the table is static and ordered (the order of every list built
 * from it); rows live as long as the program, so callers keep pointers to
 * them. Lookups return NULL for a name no row has.
 */
#ifndef XGDBPROF_REPORT_FORMAT_H
#define XGDBPROF_REPORT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "report/report.h"

/* What a format honours beyond focus (which every format honours). */
enum report_format_option {
	REPORT_OPT_TOP = 1u << 0,            /* top, top_functions: how many paths and functions */
	REPORT_OPT_TITLE = 1u << 1,          /* title */
	REPORT_OPT_INVERTED = 1u << 2,       /* inverted: callers merged leaf first */
	REPORT_OPT_TYPES = 1u << 3,          /* the profile's value_types and value_scale (pprof's sample types) */
	REPORT_OPT_WAITS = 1u << 4,          /* waits: headlines name the call a waiting thread waits in */
	REPORT_OPT_THREAD_ROOTS = 1u << 5,   /* thread_roots */
	REPORT_OPT_INLINED_SUFFIX = 1u << 6, /* inlined_suffix */
	REPORT_OPT_TERMINAL = 1u << 7,       /* color, links, width, full_paths: written for a terminal */
	REPORT_OPT_ANNOTATE = 1u << 8,       /* report_annotate's source lines may follow it */
	REPORT_OPT_DIFF_BASE = 1u << 9,      /* diff_base: compared with another profile */
};

struct report_format {
	const char *name;          /* `report --format NAME` */
	report_render_fn *render;  /* text compares with o->diff_base when it is set */
	const char *default_file;  /* in a run's directory when nothing names the file */
	bool binary;               /* never to a terminal: give -o FILE or redirect */
	unsigned options;          /* REPORT_OPT_*: what the renderer honours */
	const char *help;          /* one line for --help, at most 40 columns */
	const char *what;          /* "flame graph": what a verbose run says it wrote */
	const char *read_by;       /* "go tool pprof": said beside the file's name, or NULL */
	bool beside_profile;       /* written with every sample beside a sampling run's profile.json */
	/* The recipe statement writing a map in this format ("flamegraph"),
	 * or NULL; the REPORT_OPT_* it takes as name=value options (each named
	 * by report_format_option_name). */
	const char *recipe_call;
	unsigned recipe_options;
};

/* The table's rows in order: i < report_format_count(). */
size_t report_format_count(void);
const struct report_format *report_format_at(size_t i);

/* The row named name ("svg"), the one whose recipe call is call
 * ("flamegraph"), the one whose default file is file ("profile.pb.gz"). */
const struct report_format *report_format_find(const char *name);
const struct report_format *report_format_for_call(const char *call);
const struct report_format *report_format_for_file(const char *file);

/* The names of the formats honouring every option in options (0: all) in
 * table order, joined by sep, the last two by last_sep, into out ("svg or
 * folded" with ", " and " or "); cut to size. Returns how many it named. */
size_t report_format_names(char *out, size_t size, unsigned options, const char *sep, const char *last_sep);

/* The name=value option a recipe call writes for one REPORT_OPT_* bit
 * ("title" for REPORT_OPT_TITLE), or NULL for an option no call takes. */
const char *report_format_option_name(unsigned option);

#endif
