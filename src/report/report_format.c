/* report_format.c — the table of output formats (report_format.h) and
 * report_to_file, which writes any of them. */
#include "report/report_format.h"
#include "report/report_diff.h"
#include "util/output_file.h"
#include "util/text_fit.h"

#include <stdio.h>
#include <string.h>

/* text against o->diff_base is the differential report: which functions'
 * shares grew or shrank most; its rows (75 columns of figures before the
 * name) are wrapped at o->width as insights wraps them, the name going to
 * an indented line of its own, never cut. */
static int render_text(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	if (!o || !o->diff_base)
		return report_text(p, out, o, e);
	FILE *fitted = o->width ? text_fit_stream(out, o->width) : NULL;
	int rc = report_diff_text(o->diff_base, p, fitted ? fitted : out, o, e);
	if (fitted && fclose(fitted) != 0 && rc == 0)
		rc = xerr_set(e, "cannot write the differential report");
	return rc;
}

static const struct report_format formats[] = {
	{
		.name = "text", .render = render_text, .default_file = "report.txt",
		.options = REPORT_OPT_TOP | REPORT_OPT_TITLE | REPORT_OPT_WAITS | REPORT_OPT_TERMINAL |
			   REPORT_OPT_ANNOTATE | REPORT_OPT_DIFF_BASE,
		.help = "hottest paths, functions, threads", .what = "text report",
	},
	{
		.name = "svg", .render = report_svg, .default_file = "flamegraph.svg",
		.options = REPORT_OPT_TITLE | REPORT_OPT_INVERTED | REPORT_OPT_THREAD_ROOTS | REPORT_OPT_DIFF_BASE,
		.help = "interactive flame graph", .what = "flame graph",
		.recipe_call = "flamegraph", .recipe_options = REPORT_OPT_TITLE | REPORT_OPT_INVERTED,
	},
	{
		.name = "folded", .render = report_folded, .default_file = "stacks.folded",
		.options = REPORT_OPT_INVERTED | REPORT_OPT_THREAD_ROOTS | REPORT_OPT_INLINED_SUFFIX,
		.help = "root;...;leaf N lines (FlameGraph)", .what = "folded stacks",
		.recipe_call = "folded",
	},
	{
		.name = "json", .render = report_json, .default_file = "report.json",
		.options = REPORT_OPT_TOP,
		.help = "the text report's content as JSON", .what = "JSON report",
		.recipe_call = "json",
	},
	{
		.name = "pprof", .render = report_pprof, .default_file = "profile.pb.gz", .binary = true,
		.options = REPORT_OPT_TYPES,
		.help = "gzip'd profile.proto for go tool pprof", .what = "pprof profile",
		.read_by = "go tool pprof", .beside_profile = true,
		.recipe_call = "pprof", .recipe_options = REPORT_OPT_TYPES,
	},
	{
		.name = "speedscope", .render = report_speedscope, .default_file = "profile.speedscope.json",
		.options = REPORT_OPT_TITLE,
		.help = "JSON for speedscope", .what = "speedscope profile",
		.read_by = "speedscope", .beside_profile = true,
	},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

size_t report_format_count(void)
{
	return NFORMATS;
}

const struct report_format *report_format_at(size_t i)
{
	return i < NFORMATS ? &formats[i] : NULL;
}

const struct report_format *report_format_find(const char *name)
{
	for (size_t i = 0; name && i < NFORMATS; i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

const struct report_format *report_format_for_call(const char *call)
{
	for (size_t i = 0; call && i < NFORMATS; i++)
		if (formats[i].recipe_call && strcmp(formats[i].recipe_call, call) == 0)
			return &formats[i];
	return NULL;
}

const struct report_format *report_format_for_file(const char *file)
{
	for (size_t i = 0; file && i < NFORMATS; i++)
		if (strcmp(formats[i].default_file, file) == 0)
			return &formats[i];
	return NULL;
}

size_t report_format_names(char *out, size_t size, unsigned options, const char *sep, const char *last_sep)
{
	size_t total = 0, named = 0, used = 0;
	for (size_t i = 0; i < NFORMATS; i++)
		total += (formats[i].options & options) == options;
	if (size)
		out[0] = '\0';
	for (size_t i = 0; i < NFORMATS; i++) {
		if ((formats[i].options & options) != options)
			continue;
		const char *before = named == 0 ? "" : named + 1 == total ? last_sep : sep;
		if (used < size) {
			int n = snprintf(out + used, size - used, "%s%s", before, formats[i].name);
			used += n > 0 ? (size_t)n : 0;
		}
		named++;
	}
	return named;
}

const char *report_format_option_name(unsigned option)
{
	switch (option) {
	case REPORT_OPT_TOP: return "top";
	case REPORT_OPT_TITLE: return "title";
	case REPORT_OPT_INVERTED: return "inverted";
	case REPORT_OPT_TYPES: return "types";
	case REPORT_OPT_WAITS: return "waits";
	default: return NULL;
	}
}

int report_to_file(report_render_fn *render, const struct profile *p, const char *path,
		   const struct report_options *o, struct xerr *e)
{
	if (!path || strcmp(path, "-") == 0) {
		int rc = render(p, stdout, o, e);
		if (fflush(stdout) != 0 && rc == 0)
			rc = xerr_set(e, "cannot write to standard output");
		return rc;
	}
	struct output_file file;
	if (output_file_open(&file, path, e) < 0)
		return -1;
	if (render(p, file.stream, o, e) < 0) {
		output_file_abort(&file);
		return -1;
	}
	return output_file_commit(&file, e);
}
