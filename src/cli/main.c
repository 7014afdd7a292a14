/* main.c — global options and dispatch. Subcommands live in src/cmd_*.c;
 * the default mode (a recipe against a PID or a command) in src/cli/cmd_run.c. */
#include "config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/error.h"
#include "util/clock.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long-only options, numbered past any letter. */
enum { OPT_EVERY = 256, OPT_NAME, OPT_KEEP, OPT_MAX_SIZE, OPT_METRICS_FILE, OPT_METRICS_TOP };
enum { OPT_JEMALLOC_ACTIVATE = 320, OPT_NO_ENTRY_COUNTERS };

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "dump", cmd_dump, "print every thread's stack once, then let the target go on" },
	{ "demangle", cmd_demangle, "demangle Rust and C++ symbol names (arguments, or a stdin filter)" },
	{ "check", cmd_check, "parse and check recipes, reporting every error" },
	{ "recipes", cmd_recipes, "list the shipped recipes with what each one answers" },
	{ "report", cmd_report, "re-render a saved profile: text, SVG, folded, JSON, pprof, speedscope" },
	{ "open", cmd_open, "open $EDITOR at hottest code path #N's deepest user frame of a saved profile" },
	{ "probes", cmd_probes, "list what a function/return probe SPEC resolves to, without running anything" },
	{ "insights", cmd_insights, "one report over many saved windows: hottest paths, CPU, timeline, diff" },
	{ "top", cmd_top, "a live view: functions by self and total share of the last seconds' samples" },
};

static const char usage_text[] =
	"usage: xgdbprof [OPTIONS] [--recipe FILE|NAME | -e TEXT] PID\n"
	"       xgdbprof [OPTIONS] [--recipe FILE|NAME | -e TEXT] -- COMMAND [ARGS...]\n"
	"       xgdbprof --every PERIOD --duration DURATION -o DIR [OPTIONS] PID|--name NAME\n"
	"       xgdbprof [OPTIONS] SUBCOMMAND [ARGS...]\n"
	"\n"
	"A non-invasive profiler and tracer for running Rust and C processes, driving\n"
	"gdb over its Machine Interface. The target keeps running afterwards, with no\n"
	"breakpoint left in its code.\n"
	"\n"
	"Options:\n"
	"  -r, --recipe FILE|NAME  recipe to run (a file, or a shipped recipe's name)\n"
	"  -e, --expr TEXT         recipe text given on the command line\n"
	"  -D, --define NAME=VALUE define a recipe parameter (repeatable)\n"
	"  -d, --duration DURATION how long to run (500ms, 30s, 5m); overrides `set duration`\n"
	"  -F, --frequency HZ      samples per second, 1 to 10000; overrides `set frequency`\n"
	"      --threads WHICH     running, all, or /regex/ over thread names; overrides\n"
	"                          `set threads`\n"
	"      --max-stopped PCT   budget of the target's time held stopped, 1 to 100 (5%);\n"
	"                          overrides `set max_stopped`\n"
	"  -n, --top N             hottest code paths in the run's text reports (default 5)\n"
	"  -a, --annotate          add the hottest functions' source lines to text reports\n"
	"      --jemalloc-activate heap on a jemalloc whose profiling is on but inactive\n"
	"                          (prof.active false): switch it on for the run, off after\n"
	"      --no-entry-counters tracing under the budget: no counting jump in the probed\n"
	"                          functions (counts are then estimated from the share of\n"
	"                          the target's CPU time the probes were armed)\n"
	"      --links[=EDITOR], --no-links  source locations as terminal hyperlinks\n"
	"                          (default: on a terminal without NO_COLOR); EDITOR is\n"
	"                          vscode, idea, kitty, file or a URL template with {path},\n"
	"                          {line}, {col} (default: $XGDBPROF_EDITOR_URL, else file)\n"
	"  -o, --output DIR        where reports and the raw profile go (sampling runs\n"
	"                          add profile.pb.gz for pprof, profile.speedscope.json)\n"
	"  -o FILE.svg|.pb.gz|.folded|.speedscope.json|.txt\n"
	"                          only that file, in the format its name ends with\n"
	"  -s, --source-map FROM=TO  rewrite source paths under FROM to TO (repeatable);\n"
	"                          Rust std paths map to the local rust-src by themselves\n"
	"                          when its rustc (`rustc -vV`) is the commit that built them\n"
	"      --gdb PATH          gdb to drive (default: $XGDBPROF_GDB, else gdb on PATH)\n"
	"      --timeout MS        a gdb silent this long (default 15000) is ended and the target healed\n"
	"      --all-stop          sampling stops every thread at each sample, tracing at each\n"
	"                          hit (gdb all-stop mode)\n"
	"      --non-stop          sampling stops only the threads it walks, one at a time (gdb\n"
	"                          non-stop mode); the default for `set threads running` on a PID\n"
	"                          and for tracing, where a hit stops only the thread that hit\n"
	"                          (syscall probes under the budget: all-stop unless --non-stop)\n"
	"      --every PERIOD      continuous profiling: sample (or trace) for --duration\n"
	"                          every PERIOD, detached in between; each window writes\n"
	"                          DIR/cpu_profile_YYYYmmdd_HHMMSS.pb.gz (UTC start), its\n"
	"                          run's outputs in DIR/YYYYmmdd_HHMMSS/, a line of\n"
	"                          DIR/index.jsonl; runs until SIGINT/SIGTERM\n"
	"      --name NAME         with --every: the process called NAME (comm), followed\n"
	"                          across restarts, in place of a PID\n"
	"      --keep N            with --every: keep the newest N windows (default 288)\n"
	"      --max-size SIZE     with --every: delete the oldest windows beyond SIZE (500M, 2G)\n"
	"      --metrics-file PATH with --every: each window's figures as Prometheus metrics,\n"
	"                          for the node exporter's textfile collector (removed at exit)\n"
	"      --metrics-top N     with --metrics-file: functions exported (default 20)\n"
	"  -v, --verbose           log each gdb command and its time on stderr\n"
	"  -h, --help              show this help\n"
	"  -V, --version           show the version\n"
	"\n"
	"Options may come before or after the PID; everything after -- is the command.\n"
	"\n"
	"Subcommands:\n";

static void print_usage(FILE *out)
{
	fputs(usage_text, out);
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fputs("\nRun `xgdbprof SUBCOMMAND --help` for a subcommand's options.\n"
	      "Exit status: 0 success, 1 the job failed, 2 bad input (options, PID,\n"
	      "a stopped target, permissions, recipe, missing gdb); with -- COMMAND, the\n"
	      "command's status.\n", out);
}

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
		if (strcmp(name, subcommands[i].name) == 0)
			return &subcommands[i];
	return NULL;
}

/* The one line for a word that is neither a PID nor a subcommand: the
 * closest subcommand when one is a typo away, else the list. */
static int unknown_subcommand(const char *word)
{
	const char *closest = NULL;
	size_t best = 3;
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
		size_t d = cli_edit_distance(word, subcommands[i].name);
		if (d < best) {
			best = d;
			closest = subcommands[i].name;
		}
	}
	if (closest)
		return cli_input_error("unknown subcommand '%.100s'; did you mean '%s'? (a run takes a PID: "
				       "`xgdbprof PID`)", word, closest);
	char list[256] = "";
	for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", subcommands[i].name);
	}
	return cli_input_error("unknown subcommand '%.100s': give a PID, -- COMMAND, or one of %s", word, list);
}

/* A whole number in [low, high] for option, else the usage error naming
 * the range. Returns XGP_EXIT_OK or XGP_EXIT_USAGE. */
static int parse_bounded(const char *option, const char *text, long low, long high, const char *unit,
			 long *out)
{
	if (cli_parse_whole(text, strcmp(unit, "%") == 0 ? "%" : NULL, low, high, out) < 0) {
		char message[160];
		snprintf(message, sizeof message, "%s takes a whole number from %ld to %ld%s (not '%.40s')",
			 option, low, high, unit, text);
		return cli_usage_error(NULL, message);
	}
	return XGP_EXIT_OK;
}

/* Appends the argument of a repeatable NAME=VALUE option to its list of at
 * most max. Returns XGP_EXIT_OK, or the usage error's exit status. */
static int add_assignment(const char **list, int *n, int max, const char *arg, const char *too_many,
			  const char *form)
{
	if (*n >= max)
		return cli_usage_error(NULL, too_many);
	if (!strchr(arg, '='))
		return cli_usage_error(NULL, form);
	list[(*n)++] = arg;
	return XGP_EXIT_OK;
}

/* Takes one option of a run: getopt's c, with optarg. Returns -1 to go on,
 * else the exit code (help or version shown, or bad usage said). */
static int take_run_option(int c, char **argv, struct run_request *run, struct continuous_request *cont)
{
	int rc = XGP_EXIT_OK;
	long number = 0;
	switch (c) {
	case 'r': run->recipe = optarg; break;
	case 'e': run->recipe_text = optarg; break;
	case 'D':
		rc = add_assignment(run->defines, &run->ndefines, RUN_MAX_DEFINES, optarg,
				    "too many -D definitions", "-D takes NAME=VALUE");
		break;
	case 'd':
		rc = cli_duration_option(NULL, optarg, 0, INFINITY, "--duration takes a duration such as 500ms, 30s or 5m",
					 &run->duration_s);
		run->duration_set = true;
		break;
	case 'F':
		if (cli_parse_frequency(optarg, &run->frequency_hz) < 0)
			return cli_usage_error(NULL, "--frequency takes a rate from 1 to 10000 Hz, such as 99");
		break;
	case 'T': run->threads = optarg; break;
	case OPT_JEMALLOC_ACTIVATE: run->jemalloc_activate = true; break;
	case OPT_NO_ENTRY_COUNTERS: cli_globals.no_entry_counters = true; break;
	case 'M':
		rc = parse_bounded("--max-stopped", optarg, 1, 100, "%", &number);
		run->max_stopped_percent = (int)number;
		break;
	case 'n':
		rc = parse_bounded("--top", optarg, 1, 1000000, "", &number);
		run->top = (size_t)number;
		break;
	case 'a': run->annotate = true; break;
	case 'o': run->output_dir = optarg; break;
	case 'g': cli_globals.gdb_path = optarg; break;
	case 's':
		rc = add_assignment(cli_globals.source_maps, &cli_globals.nsource_maps,
				    CLI_MAX_SOURCE_MAPS, optarg, "too many --source-map options",
				    "--source-map takes FROM=TO");
		break;
	case 't':
		rc = parse_bounded("--timeout", optarg, 1, 3600000, " ms", &number);
		cli_globals.timeout_ms = (int)number;
		break;
	case 'v': cli_globals.verbose = true; break;
	case 'A': cli_globals.stop_mode = CLI_STOP_ALL; break;
	case 'N': cli_globals.stop_mode = CLI_STOP_NON; break;
	case OPT_EVERY:
		rc = cli_duration_option(NULL, optarg, DBL_MIN, INFINITY, "--every takes a period such as 5m, 30s or 1h",
					 &cont->every_s);
		break;
	case OPT_NAME: cont->name = optarg; break;
	case OPT_KEEP:
		rc = parse_bounded("--keep", optarg, 1, 1000000, " windows", &number);
		cont->keep = number;
		cont->keep_set = true;
		break;
	case OPT_MAX_SIZE:
		if (cli_parse_size(optarg, &cont->max_size) < 0 || cont->max_size == 0)
			return cli_usage_error(NULL, "--max-size takes a size such as 500M or 2G");
		cont->max_size_set = true;
		break;
	case OPT_METRICS_FILE: cont->metrics_file = optarg; break;
	case OPT_METRICS_TOP:
		rc = parse_bounded("--metrics-top", optarg, 1, 1000, " functions", &number);
		cont->metrics_top = (size_t)number;
		break;
	case 'h': print_usage(stdout); return XGP_EXIT_OK;
	case 'V': printf("xgdbprof %s\n", PACKAGE_VERSION); return XGP_EXIT_OK;
	default:
		switch (cli_link_option(c)) {
		case 0: return cli_getopt_error(NULL, c, argv);
		case -1: return XGP_EXIT_USAGE;
		}
		return -1;
	}
	return rc == XGP_EXIT_OK ? -1 : rc;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "recipe", required_argument, NULL, 'r' },
		{ "expr", required_argument, NULL, 'e' },
		{ "define", required_argument, NULL, 'D' },
		{ "duration", required_argument, NULL, 'd' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "gdb", required_argument, NULL, 'g' },
		{ "source-map", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "all-stop", no_argument, NULL, 'A' },
		{ "non-stop", no_argument, NULL, 'N' },
		{ "threads", required_argument, NULL, 'T' },
		{ "max-stopped", required_argument, NULL, 'M' },
		{ "jemalloc-activate", no_argument, NULL, OPT_JEMALLOC_ACTIVATE },
		{ "no-entry-counters", no_argument, NULL, OPT_NO_ENTRY_COUNTERS },
		{ "top", required_argument, NULL, 'n' },
		{ "annotate", no_argument, NULL, 'a' },
		CLI_LINK_OPTIONS,
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
		{ "metrics-top", required_argument, NULL, OPT_METRICS_TOP },
		{ NULL, 0, NULL, 0 },
	};
	struct run_request run = { 0 };
	struct continuous_request cont = { 0 };
	cli_globals.start_ns = monotonic_ns();
	int c, rc;
	opterr = 0;
	/* "+": a subcommand's options are its own, so parsing stops at the first
	 * word; for a run it resumes after the PID (`xgdbprof 8987 -d 2s`). */
	char *positional[2];
	int npositional = 0;
	bool after_dashes = false;
	for (;;) {
		int before = optind;
		c = getopt_long(argc, argv, "+:r:e:D:d:F:o:s:n:avhV", options, NULL);
		if (c == -1) {
			if (optind > before && strcmp(argv[optind - 1], "--") == 0) {
				after_dashes = true;
				break;
			}
			if (optind >= argc)
				break;
			if (npositional == 0) {
				const struct subcommand *sub = find_subcommand(argv[optind]);
				if (sub)
					return sub->run(argc - optind, argv + optind);
			}
			if (npositional < 2)
				positional[npositional] = argv[optind];
			npositional++;
			optind++;
			continue;
		}
		if ((rc = take_run_option(c, argv, &run, &cont)) >= 0)
			return rc;
	}
	bool continuous = cont.every_s > 0 || cont.name || cont.keep_set || cont.max_size_set || cont.metrics_file ||
			  cont.metrics_top;
	if (after_dashes) {
		if (npositional > 0)
			return cli_usage_error(NULL, "give a PID or -- COMMAND, not both");
		if (optind >= argc)
			return cli_usage_error(NULL, "no command given after --");
		run.launch = true;
		run.argv = argv + optind;
		run.argc = argc - optind;
		return continuous ? run_continuous(&run, &cont) : run_recipe(&run);
	}
	if (npositional == 0) {
		if (continuous)   /* --name NAME instead of a PID */
			return run_continuous(&run, &cont);
		return cli_usage_error(NULL, "missing PID: give a PID, -- COMMAND, or a subcommand");
	}
	pid_t pid;
	if (cli_parse_pid(positional[0], &pid) < 0) {
		if (strspn(positional[0], "0123456789-+") == strlen(positional[0]))
			return cli_usage_error(NULL, "a PID is a positive number (see `pgrep NAME`)");
		return unknown_subcommand(positional[0]);
	}
	if (npositional > 1)
		return cli_usage_error(NULL, "give exactly one PID (to start a command: -- COMMAND ARGS...)");
	run.argv = positional;
	run.argc = 1;
	if (continuous)
		return run_continuous(&run, &cont);
	return run_recipe(&run);
}
