/* cmd_insights.c — `xgdbprof insights DIR...`: one report over many saved
 * profiling windows (a continuous profile's subfolders, or any runs), and
 * what changed against a base (another DIR, or an earlier period of this
 * one). The figures are computed in report/report_insights.c and
 * report/report_diff.c; this file finds the windows and picks the period. */
#include "config.h"
#include "cli/commands.h"
#include "cli/cli.h"
#include "util/text_fit.h"
#include "report/profile.h"
#include "report/report.h"
#include "report/report_diff.h"
#include "report/report_insights.h"
#include "util/output_file.h"
#include "util/array.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The note report_insights_merge leaves in a merged profile: such a
 * profile (an earlier insights' output) is never taken for a window. */
#define MERGED_NOTE_PREFIX "merged by xgdbprof insights"

static void insights_usage(FILE *out)
{
	fputs("usage: xgdbprof insights [OPTIONS] DIR|RUN...\n"
	      "\n"
	      "One report over many profiling windows: DIR's subfolders that hold a\n"
	      "profile.json (as `xgdbprof --every ... -o DIR` writes them), or the run\n"
	      "directories and profile.json files given. Prints the period's hottest code\n"
	      "paths (the report's own inference over the merged samples) with each one's\n"
	      "share per window, the target's CPU across windows (each window's average,\n"
	      "then their min, mean and max), gaps and windows without a profile; writes a\n"
	      "timeline SVG and the merged profile.\n"
	      "\n"
	      "Options:\n"
	      "      --since WHEN        only windows starting at or after WHEN: a time back\n"
	      "                          from now (30m, 24h, 7d, 2w) or a local time\n"
	      "                          (2026-12-01, 2026-12-01T10:45:00, 20261201_104500;\n"
	      "                          a trailing Z: UTC)\n"
	      "      --until WHEN        only windows starting before WHEN\n"
	      "      --diff-base BASE    compare with BASE (a DIR of windows, a run's\n"
	      "                          directory or a profile.json): functions whose share\n"
	      "                          grew or shrank most, and a differential flame graph\n"
	      "      --vs WHEN[..WHEN]   compare with an earlier period of the same windows,\n"
	      "                          from WHEN until the --since time (or the second WHEN)\n"
	      "  -o, --output DIR        where the files go (default: DIR/insights)\n"
	      "  -n, --top N             hottest code paths shown (default 5; the timeline\n"
	      "                          draws at most 5)\n"
	      "      --functions N       rows of the grew/shrank tables (default 10)\n"
	      "      --full              show every frame of a path\n"
	      "      --color WHEN        auto (default: on a terminal without NO_COLOR),\n"
	      "                          always, never\n"
	      "  -h, --help              show this help\n"
	      "\n"
	      "Files written to the output directory: timeline.svg (CPU and the top paths'\n"
	      "shares per window), flamegraph.svg, profile.json (the merged profile: give\n"
	      "the directory to `xgdbprof report`), profile.pb.gz and\n"
	      "profile.speedscope.json; with a base, diff.svg (red: the frame's share grew,\n"
	      "blue: shrank, full red: not in the base).\n", out);
}

/* ---- times -------------------------------------------------------------- */

/* Unix time of "2026-12-01T10:45:00Z" (profile.json's start_time), or -1. */
static int64_t utc_time(const char *iso)
{
	struct tm tm = { 0 };
	const char *end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	if (!end || *end)
		return -1;
	return (int64_t)timegm(&tm);
}

/* An absolute time in one of the forms --help lists; local time unless it
 * ends in Z. Returns 0 or -1. */
static int absolute_time(const char *text, int64_t *out)
{
	static const char *const forms[] = {
		"%Y%m%d_%H%M%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
		"%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y%m%d", NULL,
	};
	for (size_t i = 0; forms[i]; i++) {
		struct tm tm = { 0 };
		const char *end = strptime(text, forms[i], &tm);
		if (!end || (*end && strcmp(end, "Z") != 0))
			continue;
		time_t t;
		if (*end) {
			t = timegm(&tm);
		} else {
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
		if (t == (time_t)-1)
			return -1;
		*out = (int64_t)t;
		return 0;
	}
	return -1;
}

/* WHEN: "now", a duration back from now (s, m/min, h, d, w), or an absolute
 * time. Returns 0 or -1. */
static int parse_when(const char *text, int64_t now, int64_t *out)
{
	if (strcmp(text, "now") == 0) {
		*out = now;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end != text && !errno && isfinite(v) && v >= 0 && (text[0] >= '0' && text[0] <= '9')) {
		static const struct { const char *unit; double s; } units[] = {
			{ "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 }, { "w", 604800 },
		};
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
			if (strcmp(end, units[i].unit) == 0 && v * units[i].s < 1e11) {
				*out = now - (int64_t)llround(v * units[i].s);
				return 0;
			}
	}
	return absolute_time(text, out);
}

/* Unix time a window folder's name says (YYYYmmdd_HHMMSS, local time), or -1. */
static int64_t folder_time(const char *name)
{
	int64_t t;
	if (strlen(name) != 15 || name[8] != '_')
		return -1;
	return absolute_time(name, &t) == 0 ? t : -1;
}

/* ---- windows ------------------------------------------------------------ */

struct window_list {
	struct insights_window *items;
	size_t n, cap;
	char **owned;       /* names and reasons */
	size_t nowned, owned_cap;
	bool quiet;         /* windows listed again (the --vs period): skips said once */
};

static const char *own(struct window_list *l, const char *s)
{
	char *copy = strdup(s);
	if (copy && ARRAY_PUSH(l->owned, l->nowned, l->owned_cap, copy) < 0) {
		free(copy);
		return NULL;
	}
	return copy;
}

static void window_list_free(struct window_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		profile_free(l->items[i].profile);
	array_free_pointers(l->owned, l->nowned);
	free(l->items);
	memset(l, 0, sizeof *l);
}

static int add_window(struct window_list *l, const char *name, struct profile *p, const char *why, int64_t start)
{
	struct insights_window *g = array_grow(l->items, &l->cap, l->n + 1, sizeof *g);
	if (!g) {
		profile_free(p);
		return -1;
	}
	l->items = g;
	const char *owned_name = own(l, name), *owned_why = why ? own(l, why) : NULL;
	if (!owned_name || (why && !owned_why)) {
		profile_free(p);
		return -1;
	}
	l->items[l->n++] = (struct insights_window){ owned_name, p, owned_why, start };
	return 0;
}

static bool is_merged(const struct profile *p)
{
	for (size_t i = 0; i < p->meta.nnotes; i++)
		if (strncmp(p->meta.notes[i], MERGED_NOTE_PREFIX, strlen(MERGED_NOTE_PREFIX)) == 0)
			return true;
	return false;
}

/* Loads path as the window `name`. A file that does not load (damaged,
 * planted, over the reader's limits) is skipped, said on stderr, and kept
 * as a window without a profile (the reason in the report), so one bad
 * window among many does not hide the rest. A merged profile found in a
 * directory of windows (an earlier insights' output) is skipped; one given
 * by name is taken. Returns 0, 1 when skipped, -1 out of memory. */
static int load_window(struct window_list *l, const char *name, const char *path, int64_t folder_start,
		       bool found)
{
	struct xerr e = { "" };
	struct profile *p = profile_load(path, &e);
	if (!p) {
		/* folder names and the paths in e are anyone's text: cli_say
		 * escapes them */
		if (!l->quiet)
			cli_say(XGP_EXIT_OK, "window %s skipped: %s", name, e.msg);
		return add_window(l, name, NULL, e.msg, folder_start);
	}
	if (found && is_merged(p)) {
		profile_free(p);
		return 1;
	}
	int64_t start = utc_time(p->meta.start_time);
	return add_window(l, name, p, NULL, start >= 0 ? start : folder_start);
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Adds the windows arg names: a profile file, a run's directory, or a
 * directory of windows. Returns XGP_EXIT_OK or the exit code (said). */
static int collect_windows(struct window_list *l, const char *arg)
{
	char path[PATH_MAX + 64];
	struct stat st;
	if (stat(arg, &st) != 0)
		return cli_input_error("%s: %s: give a directory of windows, a run's directory or a profile.json",
				       arg, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return load_window(l, arg, arg, -1, false) < 0 ? cli_error("out of memory") : XGP_EXIT_OK;
	snprintf(path, sizeof path, "%s/profile.json", arg);
	if (access(path, F_OK) == 0)
		return load_window(l, arg, path, -1, false) < 0 ? cli_error("out of memory") : XGP_EXIT_OK;
	DIR *d = opendir(arg);
	if (!d)
		return cli_input_error("cannot read %s: %s", arg, strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = XGP_EXIT_OK;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char **g = array_grow(names, &cap, n + 1, sizeof *g);
		if (!g) {
			rc = cli_error("out of memory");
			break;
		}
		names = g;
		if (!(names[n] = strdup(de->d_name))) {
			rc = cli_error("out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (names)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n && rc == XGP_EXIT_OK; i++) {
		char sub[PATH_MAX];
		snprintf(sub, sizeof sub, "%s/%s", arg, names[i]);
		if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(path, sizeof path, "%s/profile.json", sub);
		int64_t start = folder_time(names[i]);
		if (access(path, F_OK) == 0) {
			if (load_window(l, names[i], path, start, true) < 0)
				rc = cli_error("out of memory");
		} else if (start >= 0 &&
			   add_window(l, names[i], NULL, "no profile.json: the window was cut short or its target vanished",
				      start) < 0) {
			rc = cli_error("out of memory");
		}
	}
	array_free_pointers(names, n);
	return rc;
}

static int cmp_windows(const void *x, const void *y)
{
	const struct insights_window *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return strcmp(a->name, b->name);
}

struct span {
	size_t n;            /* windows before the period was applied */
	int64_t first, last; /* their earliest and latest start, -1 unknown */
};

/* Keeps the windows starting in [since, until) (-1: open); windows of
 * unknown start go only when no bound is given. Frees the others. What
 * the windows spanned before goes to *was (for the message when none is
 * left). */
static void keep_period(struct window_list *l, int64_t since, int64_t until, struct span *was)
{
	*was = (struct span){ l->n, -1, -1 };
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].start >= 0) {
			if (was->first < 0 || l->items[i].start < was->first)
				was->first = l->items[i].start;
			if (l->items[i].start > was->last)
				was->last = l->items[i].start;
		}
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct insights_window *w = &l->items[i];
		bool bounded = since >= 0 || until >= 0;
		bool in = bounded ? w->start >= 0 && (since < 0 || w->start >= since) && (until < 0 || w->start < until)
				  : true;
		if (in)
			l->items[k++] = *w;
		else
			profile_free(w->profile);
	}
	l->n = k;
}

static size_t profiles_in(const struct window_list *l)
{
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++)
		k += l->items[i].profile != NULL;
	return k;
}

static void put_local(char *buf, size_t size, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Says that the period holds no window of `what` (the directory, or "the
 * --vs period"), with when the windows do start. */
static int empty_period(const char *what, const struct span *was, int64_t since, int64_t until)
{
	char a[64] = "the beginning", b[64] = "now", first[64] = "?", last[64] = "?";
	if (since >= 0)
		put_local(a, sizeof a, since);
	if (until >= 0)
		put_local(b, sizeof b, until);
	if (was->first >= 0) {
		put_local(first, sizeof first, was->first);
		put_local(last, sizeof last, was->last);
	}
	return cli_input_error("no window of %s with a profile starts between %s and %s (its %zu windows start "
			       "from %s to %s): widen the period", what, a, b, was->n, first, last);
}

/* ---- the command -------------------------------------------------------- */

struct insights_request {
	const char *since, *until, *vs, *diff_base, *output, *color;
	struct report_options ro;
	char **args;
	int nargs;
};

/* Windows of the request's arguments; XGP_EXIT_OK or the exit code (said). */
static int collect_all(struct window_list *l, char *const *args, int nargs)
{
	for (int i = 0; i < nargs; i++) {
		int rc = collect_windows(l, args[i]);
		if (rc != XGP_EXIT_OK)
			return rc;
	}
	if (!l->n)
		return cli_input_error("%s holds no profiling windows: give a directory whose subfolders hold a "
				       "profile.json (as `xgdbprof --every ... -o DIR` writes), a run's directory or "
				       "a profile.json", args[0]);
	qsort(l->items, l->n, sizeof *l->items, cmp_windows);
	return XGP_EXIT_OK;
}

static int write_file(int (*render)(const struct insights_window *, size_t, const struct profile *, FILE *,
				    const struct report_options *, struct xerr *),
		      const struct window_list *l, const struct profile *merged, const char *path,
		      const struct report_options *ro)
{
	struct xerr e = { "" };
	struct output_file f = { 0 };
	if (output_file_open(&f, path, &e) < 0)
		return cli_error("%s", e.msg);
	if (render(l->items, l->n, merged, f.stream, ro, &e) < 0) {
		output_file_abort(&f);
		return cli_error("%s", e.msg);
	}
	if (output_file_commit(&f, &e) < 0)
		return cli_error("%s", e.msg);
	return XGP_EXIT_OK;
}

/* Writes the outputs into dir and the differential parts when base is
 * given. Returns the exit code (said). */
static int write_outputs(const char *dir, const struct window_list *l, const struct profile *merged,
			 const struct profile *base, const struct report_options *ro)
{
	char path[PATH_MAX + 64];
	struct xerr e = { "" };
	struct report_options plain = *ro;
	plain.color = false;
	int rc = XGP_EXIT_OK;
	snprintf(path, sizeof path, "%s/timeline.svg", dir);
	if ((rc = write_file(report_insights_timeline, l, merged, path, &plain)) != XGP_EXIT_OK)
		return rc;
	snprintf(path, sizeof path, "%s/flamegraph.svg", dir);
	if (report_to_file(report_svg, merged, path, &plain, &e) < 0)
		return cli_error("%s", e.msg);
	snprintf(path, sizeof path, "%s/profile.json", dir);
	if (profile_save(merged, path, &e) < 0)
		return cli_error("%s", e.msg);
	struct cli_files_written exports = { .n = 0 };
	if ((rc = cli_save_profile_exports(merged, dir, &exports)) != XGP_EXIT_OK)
		return rc;
	if (base) {
		plain.diff_base = base;
		snprintf(path, sizeof path, "%s/diff.svg", dir);
		if (report_to_file(report_svg, merged, path, &plain, &e) < 0)
			return cli_error("%s", e.msg);
	}
	return XGP_EXIT_OK;
}

static int run_insights(struct insights_request *rq)
{
	struct window_list all = { 0 }, base_windows = { 0 };
	struct profile *merged = NULL, *base = NULL;
	int64_t now = (int64_t)time(NULL), since = -1, until = -1, vs_since = -1, vs_until = -1;
	struct xerr e = { "" };
	char outdir[PATH_MAX];
	int rc;

	if (rq->since && parse_when(rq->since, now, &since) < 0)
		return cli_usage_error("insights", "--since takes a time back from now (30m, 24h, 7d) or a time "
				       "(2026-12-01, 2026-12-01T10:45:00, 20261201_104500)");
	if (rq->until && parse_when(rq->until, now, &until) < 0)
		return cli_usage_error("insights", "--until takes a time back from now (30m, 24h, 7d) or a time "
				       "(2026-12-01, 2026-12-01T10:45:00, 20261201_104500)");
	if (rq->vs) {
		char from[128], *dots;
		snprintf(from, sizeof from, "%s", rq->vs);
		if ((dots = strstr(from, ".."))) {
			*dots = '\0';
			if (parse_when(dots + 2, now, &vs_until) < 0)
				vs_until = -2;
		} else
			vs_until = since;
		if (vs_until == -2 || parse_when(from, now, &vs_since) < 0)
			return cli_usage_error("insights", "--vs takes WHEN or WHEN..WHEN, each a time back from now "
					       "(48h) or a time (2026-12-01T10:45:00)");
		if (vs_since >= vs_until)
			return cli_usage_error("insights", "--vs: the base period must begin before it ends (and "
					       "before --since): e.g. --since 24h --vs 48h");
	}
	if (since >= 0 && until >= 0 && since >= until)
		return cli_usage_error("insights", "--since must be before --until");

	rc = collect_all(&all, rq->args, rq->nargs);
	if (rc == XGP_EXIT_OK && rq->output) {
		snprintf(outdir, sizeof outdir, "%s", rq->output);
	} else if (rc == XGP_EXIT_OK) {
		struct stat st;
		if (rq->nargs != 1 || stat(rq->args[0], &st) != 0 || !S_ISDIR(st.st_mode))
			rc = cli_usage_error("insights", "give -o DIR: where the timeline and merged profile go "
					     "(the default, DIR/insights, needs one directory argument)");
		snprintf(outdir, sizeof outdir, "%s/insights", rq->args[0]);
	}
	if (rc == XGP_EXIT_OK && rq->diff_base)
		rc = collect_all(&base_windows, (char *const *)&rq->diff_base, 1);
	if (rc == XGP_EXIT_OK && rq->vs) {
		/* the base period: the same windows, reloaded (each list owns its profiles) */
		base_windows.quiet = true;
		rc = collect_all(&base_windows, rq->args, rq->nargs);
		if (rc == XGP_EXIT_OK) {
			struct span was;
			keep_period(&base_windows, vs_since, vs_until, &was);
			if (!profiles_in(&base_windows))
				rc = empty_period("the --vs period", &was, vs_since, vs_until);
		}
	}
	if (rc == XGP_EXIT_OK && rq->diff_base && !profiles_in(&base_windows))
		rc = cli_input_error("%s holds no window with a profile to compare with", rq->diff_base);
	if (rc == XGP_EXIT_OK) {
		if (since >= 0 || until >= 0) {
			struct span was;
			keep_period(&all, since, until, &was);
			if (!profiles_in(&all))
				rc = empty_period(rq->args[0], &was, since, until);
		} else if (!profiles_in(&all)) {
			rc = cli_input_error("no window of %s holds a profile (%zu without one): the runs wrote no "
					     "profile.json", rq->args[0], all.n);
		}
	}
	if (rc == XGP_EXIT_OK && output_dir_prepare(outdir, true, &e) < 0)
		rc = cli_input_error("%s", e.msg);
	if (rc == XGP_EXIT_OK && report_insights_merge(all.items, all.n, &merged, &e) < 0)
		rc = cli_error("%s", e.msg);
	if (rc == XGP_EXIT_OK && (rq->diff_base || rq->vs) &&
	    report_insights_merge(base_windows.items, base_windows.n, &base, &e) < 0)
		rc = cli_error("%s", e.msg);
	/* Laid out for the terminal's width (100 in a pipe or a journal), and
	 * whatever is still wider wraps (util/text_fit.h): never past it. */
	rq->ro.width = text_terminal_width(STDOUT_FILENO);
	FILE *fitted = rc == XGP_EXIT_OK ? text_fit_stream(stdout, rq->ro.width) : NULL;
	if (rc == XGP_EXIT_OK && !fitted)
		rc = cli_error("out of memory");
	if (rc == XGP_EXIT_OK) {
		if (report_insights_text(all.items, all.n, merged, fitted, &rq->ro, &e) < 0)
			rc = cli_error("%s", e.msg);
	}
	if (rc == XGP_EXIT_OK && base) {
		fprintf(fitted, "\nwhat changed against %s%s (%zu window%s):\n", rq->vs ? "the --vs period " : "",
			rq->vs ? rq->vs : rq->diff_base, profiles_in(&base_windows),
			profiles_in(&base_windows) == 1 ? "" : "s");
		if (report_diff_text(base, merged, fitted, &rq->ro, &e) < 0)
			rc = cli_error("%s", e.msg);
	}
	if (rc == XGP_EXIT_OK)
		rc = write_outputs(outdir, &all, merged, base, &rq->ro);
	if (rc == XGP_EXIT_OK)
		fprintf(fitted, "\ninsights written to %s/: timeline.svg, flamegraph.svg, profile.json, profile.pb.gz, "
			"profile.speedscope.json%s\n", outdir, base ? ", diff.svg" : "");
	if (fitted)
		fclose(fitted);   /* flushes; stdout stays open */
	if (rc == XGP_EXIT_OK && fflush(stdout) != 0)
		rc = cli_error("cannot write to standard output");
	profile_free(merged);
	profile_free(base);
	window_list_free(&all);
	window_list_free(&base_windows);
	return rc;
}

int cmd_insights(int argc, char **argv)
{
	/* a Ctrl-C while a file is written leaves no .NAME.XXXXXX behind */
	output_file_remove_on_signal();
	static const struct option options[] = {
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "vs", required_argument, NULL, 'v' },
		{ "diff-base", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		CLI_DISPLAY_OPTIONS,
	};
	struct insights_request rq = { .color = "auto" };
	int c, rc = XGP_EXIT_OK;
	report_options_init(&rq.ro);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:" CLI_DISPLAY_SHORT_OPTIONS, options, NULL)) != -1) {
		switch (c) {
		case 'S': rq.since = optarg; break;
		case 'U': rq.until = optarg; break;
		case 'v': rq.vs = optarg; break;
		case 'b': rq.diff_base = optarg; break;
		case 'o': rq.output = optarg; break;
		case 'h': insights_usage(stdout); return XGP_EXIT_OK;
		default:
			rc = cli_display_option("insights", c, optarg, &rq.ro, &rq.color);
			if (rc == CLI_NOT_A_DISPLAY_OPTION)
				rc = cli_getopt_error("insights", c, argv);
		}
		if (rc != XGP_EXIT_OK)
			return rc;
	}
	if ((rc = cli_color_wanted("insights", rq.color, isatty(STDOUT_FILENO), &rq.ro.color)) != XGP_EXIT_OK)
		return rc;
	if (optind >= argc)
		return cli_usage_error("insights", "give a directory of windows (or run directories, profile.json files)");
	if (rq.vs && !rq.since)
		return cli_usage_error("insights", "--vs compares with the period before --since: give --since too "
				       "(e.g. --since 24h --vs 48h)");
	if (rq.vs && rq.diff_base)
		return cli_usage_error("insights", "give either --diff-base or --vs, not both");
	rq.args = argv + optind;
	rq.nargs = argc - optind;
	return run_insights(&rq);
}
