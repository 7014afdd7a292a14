/* main.c — global options and dispatch. Subcommands live in src/cmd_*.c;
 * the default mode (a recipe against a PID or a command) in src/cli/cmd_run.c. */
#include "config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/error.h"
#include "util/clock.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	{ "probes", cmd_probes, "list what a function/return probe SPEC resolves to, without running anything" },
};

static const char usage_text[] =
	"usage: xgdbprof [OPTIONS] [--recipe FILE|NAME | -e TEXT] PID\n"
	"       xgdbprof [OPTIONS] [--recipe FILE|NAME | -e TEXT] -- COMMAND [ARGS...]\n"
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
	"  -F, --frequency HZ      samples per second; overrides `set frequency`\n"
	"  -o, --output DIR        where reports and the raw profile go (sampling runs\n"
	"                          add profile.pb.gz for pprof, profile.speedscope.json)\n"
	"  -s, --source-map FROM=TO  rewrite source paths under FROM to TO (repeatable);\n"
	"                          Rust std paths map to the local rust-src by themselves\n"
	"                          when its rustc (`rustc -vV`) is the commit that built them\n"
	"      --gdb PATH          gdb to drive (default: $XGDBPROF_GDB, else gdb on PATH)\n"
	"      --timeout MS        a gdb silent this long (default 15000) is ended and the target healed\n"
	"      --all-stop          sampling stops every thread at each sample (gdb all-stop mode)\n"
	"      --non-stop          sampling stops only the threads it walks, one at a time (gdb\n"
	"                          non-stop mode); the default for `set threads running` on a PID\n"
	"  -v, --verbose           log each gdb command and its time on stderr\n"
	"  -h, --help              show this help\n"
	"  -V, --version           show the version\n"
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_request run = { 0 };
	cli_globals.start_ns = monotonic_ns();
	int c, rc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:r:e:D:d:F:o:s:vhV", options, NULL)) != -1) {
		switch (c) {
		case 'r': run.recipe = optarg; break;
		case 'e': run.recipe_text = optarg; break;
		case 'D':
			rc = add_assignment(run.defines, &run.ndefines, RUN_MAX_DEFINES, optarg,
					    "too many -D definitions", "-D takes NAME=VALUE");
			if (rc != XGP_EXIT_OK)
				return rc;
			break;
		case 'd':
			if (cli_parse_duration(optarg, &run.duration_s) < 0)
				return cli_usage_error(NULL, "--duration takes a duration such as 500ms, 30s or 5m");
			run.duration_set = true;
			break;
		case 'F': {
			char *end;
			run.frequency_hz = strtod(optarg, &end);
			if (*end || run.frequency_hz <= 0 || run.frequency_hz > 10000)
				return cli_usage_error(NULL, "--frequency takes a rate in Hz between 0 and 10000");
			break;
		}
		case 'o': run.output_dir = optarg; break;
		case 'g': cli_globals.gdb_path = optarg; break;
		case 's':
			rc = add_assignment(cli_globals.source_maps, &cli_globals.nsource_maps,
					    CLI_MAX_SOURCE_MAPS, optarg, "too many --source-map options",
					    "--source-map takes FROM=TO");
			if (rc != XGP_EXIT_OK)
				return rc;
			break;
		case 't':
			cli_globals.timeout_ms = atoi(optarg);
			if (cli_globals.timeout_ms <= 0)
				return cli_usage_error(NULL, "--timeout takes a number of milliseconds");
			break;
		case 'v': cli_globals.verbose = true; break;
		case 'A': cli_globals.stop_mode = CLI_STOP_ALL; break;
		case 'N': cli_globals.stop_mode = CLI_STOP_NON; break;
		case 'h': print_usage(stdout); return XGP_EXIT_OK;
		case 'V': printf("xgdbprof %s\n", PACKAGE_VERSION); return XGP_EXIT_OK;
		default: return cli_getopt_error(NULL, c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error(NULL, "give a PID, -- COMMAND, or a subcommand");
	bool after_dashes = strcmp(argv[optind - 1], "--") == 0;
	if (!after_dashes) {
		const struct subcommand *sub = find_subcommand(argv[optind]);
		if (sub)
			return sub->run(argc - optind, argv + optind);
	}
	run.launch = after_dashes;
	run.argv = argv + optind;
	run.argc = argc - optind;
	return run_recipe(&run);
}
