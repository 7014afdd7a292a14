/* cmd_report.c — `xgdbprof report DIR|FILE`: re-renders a saved profile
 * offline, in any format of report/report_format.h's table. */
#include "config.h"
#include "cli/commands.h"
#include "cli/cli.h"
#include "report/profile.h"
#include "util/output_file.h"
#include "util/text_fit.h"
#include "report/report.h"
#include "report/report_format.h"
#include "symbols/source_map.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The format `report` writes unless --format names another. */
#define DEFAULT_FORMAT "text"

/* --format's lines of the help: one a format, from the table. */
static void put_format_help(FILE *out)
{
	fputs("  -f, --format FORMAT     one of (default " DEFAULT_FORMAT "):\n", out);
	for (size_t i = 0; i < report_format_count(); i++) {
		const struct report_format *f = report_format_at(i);
		fprintf(out, "                            %-11s %s\n", f->name, f->help);
		if (f->binary)
			fputs("                                        (binary: give -o or redirect)\n", out);
	}
}

static void report_usage(FILE *out)
{
	fputs("usage: xgdbprof report [OPTIONS] DIR|FILE\n"
	      "\n"
	      "Re-renders a saved profile: FILE is a profile.json written by a run, DIR a\n"
	      "run's output directory holding one.\n"
	      "\n"
	      "Options:\n", out);
	put_format_help(out);
	fputs("  -a, --annotate          text: add the hottest functions' source lines with\n"
	      "                          per-line shares\n"
	      "  -n, --top N             hottest code paths shown (default 5)\n"
	      "      --functions N       rows of the top-function tables, functions annotated\n"
	      "                          (default 10 and 5)\n"
	      "      --focus REGEX       keep only stacks with a function matching REGEX\n"
	      "                          (shares stay relative to all samples)\n"
	      "      --diff-base BASE    compare with BASE (a run's directory or profile.json):\n"
	      "                          text: the functions whose share grew or shrank most;\n"
	      "                          svg: a differential flame graph (red: grew, blue:\n"
	      "                          shrank, full red: not in BASE); two heap snapshots\n"
	      "                          (heap-N.json): live bytes grown by allocation site\n"
	      "  -o, --output FILE       write there instead of standard output\n"
	      "  -s, --source-map FROM=TO  read sources under TO where debug info says FROM\n"
	      "                          (repeatable; Rust std sources are found via rustc)\n"
	      "      --full              text: show every frame of a path (no \"… N frames …\")\n"
	      "      --thread-roots      svg/folded: thread name as the root frame\n"
	      "      --inverted          svg: icicle graph of callers, stacks merged leaf\n"
	      "                          first (leaf functions on the top row, their callers\n"
	      "                          beneath); folded: frames leaf first\n"
	      "      --inlined-suffix    folded: mark inlined frames with \"_[i]\" (inferno)\n"
	      "      --color WHEN        auto (default: on a terminal without NO_COLOR),\n"
	      "                          always, never\n"
	      "      --links, --no-links text: source locations as terminal hyperlinks\n"
	      "                          (default: on a terminal without NO_COLOR)\n"
	      "  -h, --help              show this help\n", out);
}

/* Renders p in format f to output (NULL or "-": standard output), through
 * a temporary file committed only on success. ro holds the options parsed;
 * colour and width are settled here. Returns the exit code (said). */
static int render_report(const struct profile *p, const struct report_format *f, const char *output,
			 const char *color, bool annotate, struct source_map *smap, struct report_options *ro)
{
	struct xerr e = { "" };
	int rc = XGP_EXIT_OK;
	bool to_tty = !output || strcmp(output, "-") == 0 ? isatty(STDOUT_FILENO) : false;
	bool terminal = f->options & REPORT_OPT_TERMINAL;
	cli_color_wanted("report", color, to_tty && terminal, &ro->color);   /* WHEN checked */
	if (terminal && (!output || strcmp(output, "-") == 0))
		ro->width = text_terminal_width(STDOUT_FILENO);
	ro->links = terminal && cli_links_wanted(to_tty);
	ro->source_map = smap;

	FILE *out = stdout;
	struct output_file file = { 0 };
	if (output && strcmp(output, "-") != 0 && output_file_open(&file, output, &e) < 0) {
		rc = cli_input_error("%s", e.msg);
	} else {
		if (file.stream)
			out = file.stream;
		if (f->render(p, out, ro, &e) < 0 ||
		    (annotate && (fputs("\n", out), report_annotate(p, out, ro, &e)) < 0))
			rc = cli_error("%s", e.msg);
		if (file.stream) {
			if (rc != XGP_EXIT_OK)
				output_file_abort(&file);
			else if (output_file_commit(&file, &e) < 0)
				rc = cli_error("%s", e.msg);
		} else if (fflush(stdout) != 0 && rc == XGP_EXIT_OK) {
			rc = cli_error("cannot write to standard output");
		}
	}
	return rc;
}

/* The usage error of an option the chosen format does not honour: it
 * names the formats that do. */
static int option_needs_format(const char *option, unsigned honoured_by)
{
	char names[256], message[320];
	report_format_names(names, sizeof names, honoured_by, ", ", " or ");
	snprintf(message, sizeof message, "%s goes with --format %s", option, names);
	return cli_usage_error("report", message);
}

int cmd_report(int argc, char **argv)
{
	/* a Ctrl-C while a file is written leaves no .NAME.XXXXXX behind */
	output_file_remove_on_signal();
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "annotate", no_argument, NULL, 'a' },
		{ "focus", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "source-map", required_argument, NULL, 's' },
		{ "thread-roots", no_argument, NULL, 't' },
		{ "inlined-suffix", no_argument, NULL, 'i' },
		{ "inverted", no_argument, NULL, 'I' },
		CLI_LINK_OPTIONS,
		{ "diff-base", required_argument, NULL, 'b' },
		CLI_DISPLAY_OPTIONS,
	};
	struct report_options ro;
	const char *format = DEFAULT_FORMAT, *output = NULL, *color = "auto", *diff_base = NULL;
	bool annotate = false;
	struct xerr e = { "" };
	/* the global -s rules (before `report`), then report's own, which win
	 * over global ones of equal length (added later) */
	struct source_map *smap = cli_source_map(&e);
	int c, rc = XGP_EXIT_OK;

	if (!smap)
		return cli_input_error("%s", e.msg);
	report_options_init(&ro);
	ro.verbose = cli_globals.verbose;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:f:ao:s:" CLI_DISPLAY_SHORT_OPTIONS, options, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'a': annotate = true; break;
		case 'c': ro.focus = optarg; break;
		case 'o': output = optarg; break;
		case 's':
			if (source_map_add_spec(smap, optarg, &e) < 0)
				rc = cli_usage_error("report", e.msg);
			break;
		case 't': ro.thread_roots = true; break;
		case 'i': ro.inlined_suffix = true; break;
		case 'I': ro.inverted = true; break;
		case 'b': diff_base = optarg; break;
		case 'h':
			report_usage(stdout);
			source_map_free(smap);
			return XGP_EXIT_OK;
		default:
			rc = cli_display_option("report", c, optarg, &ro, &color);
			if (rc == CLI_NOT_A_DISPLAY_OPTION)
				switch (cli_link_option(c)) {
				case 0: rc = cli_getopt_error("report", c, argv); break;
				case -1: rc = XGP_EXIT_USAGE; break;
				default: rc = XGP_EXIT_OK;
				}
		}
		if (rc != XGP_EXIT_OK) {
			source_map_free(smap);
			return rc;
		}
	}
	const struct report_format *f = report_format_find(format);
	char message[512];
	if (!f) {
		char names[256];
		report_format_names(names, sizeof names, 0, ", ", ", ");
		snprintf(message, sizeof message, "--format is one of %s", names);
		rc = cli_usage_error("report", message);
	}
	/* Compressed bytes on a terminal are noise at best, escape sequences at
	 * worst. */
	if (rc == XGP_EXIT_OK && f->binary && (!output || strcmp(output, "-") == 0) && isatty(STDOUT_FILENO)) {
		snprintf(message, sizeof message, "--format %s writes a binary file: give -o FILE (e.g. -o %s) or "
			 "redirect standard output", f->name, f->default_file);
		rc = cli_usage_error("report", message);
	}
	if (rc == XGP_EXIT_OK && annotate && !(f->options & REPORT_OPT_ANNOTATE))
		rc = option_needs_format("--annotate", REPORT_OPT_ANNOTATE);
	if (rc == XGP_EXIT_OK && ro.inverted && !(f->options & REPORT_OPT_INVERTED))
		rc = option_needs_format("--inverted", REPORT_OPT_INVERTED);
	if (rc == XGP_EXIT_OK && diff_base && !(f->options & REPORT_OPT_DIFF_BASE))
		rc = option_needs_format("--diff-base", REPORT_OPT_DIFF_BASE);
	if (rc == XGP_EXIT_OK && diff_base && (annotate || ro.inverted))
		rc = cli_usage_error("report", "--diff-base goes with neither --annotate nor --inverted");
	if (rc == XGP_EXIT_OK)   /* the WHEN word; render_report knows the terminal */
		rc = cli_color_wanted("report", color, false, &ro.color);
	if (rc == XGP_EXIT_OK && optind + 1 != argc)
		rc = cli_usage_error("report", "give one profile: a run's directory or its profile.json");
	if (rc != XGP_EXIT_OK) {
		source_map_free(smap);
		return rc;
	}

	struct profile *p, *base = NULL;
	rc = cli_load_profile_arg(argv[optind], &p);
	if (rc == XGP_EXIT_OK && diff_base) {
		rc = cli_load_profile_arg(diff_base, &base);
		ro.diff_base = base;
	}
	if (rc == XGP_EXIT_OK)
		rc = render_report(p, f, output, color, annotate, smap, &ro);
	profile_free(p);
	profile_free(base);
	source_map_free(smap);
	return rc;
}
