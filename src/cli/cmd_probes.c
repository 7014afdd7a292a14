/* cmd_probes.c — `xgdbprof probes SPEC PID|EXE`: what a function/return
 * probe SPEC resolves to (address, instance, inlined or not), without
 * attaching to or running anything. */
#include "config.h"
#include "cli/commands.h"
#include "cli/cli.h"
#include "symbols/demangle.h"
#include "symbols/symbolize.h"
#include "trace/tracer_resolve.h"
#include "util/text_escape.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char probes_usage[] =
	"usage: xgdbprof probes [--no-inlined] [--links|--no-links] SPEC PID|EXE\n"
	"  SPEC  a function name (every monomorphized instance), /regex/ over\n"
	"        demangled names, or file:line\n"
	"Lists the code addresses a `function SPEC` / `return SPEC` probe would use;\n"
	"file:line are terminal hyperlinks on a terminal without NO_COLOR (--links,\n"
	"--no-links: always, never).\n";

int cmd_probes(int argc, char **argv)
{
	bool inlined = true;
	static const struct option longopts[] = {
		{ "no-inlined", no_argument, NULL, 'n' },
		CLI_LINK_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			inlined = false;
			break;
		case 'h':
			fputs(probes_usage, stdout);
			return XGP_EXIT_OK;
		default:
			switch (cli_link_option(c)) {
			case 0: return cli_getopt_error("probes", c, argv);
			case -1: return XGP_EXIT_USAGE;
			}
		}
	}
	if (argc - optind == 1)
		return cli_usage_error("probes", "missing PID: give a SPEC and a PID or an executable");
	if (argc - optind != 2)
		return cli_usage_error("probes", "give a SPEC and a PID or an executable");
	const char *spec_text = argv[optind], *target = argv[optind + 1];
	struct xerr e;
	enum probe_spec_kind kind;
	char *pattern = NULL, *file = NULL;
	int line = 0;
	if (tracer_parse_spec(spec_text, &kind, &pattern, &file, &line, &e) < 0)
		return cli_input_error("%s", e.msg);
	struct symbolizer *sym;
	pid_t pid;
	bool is_pid = strspn(target, "0123456789") == strlen(target);
	if (is_pid) {
		if (cli_parse_pid(target, &pid) < 0) {
			free(pattern);
			free(file);
			return cli_usage_error("probes", "a PID is a positive number");
		}
		sym = symbolizer_new_pid(pid, &e);
	} else {
		sym = symbolizer_new_file(target, &e);
	}
	if (!sym) {
		free(pattern);
		free(file);
		return cli_input_error("%s", e.msg);
	}
	struct tracer_sites sites = { 0 };
	int n = tracer_resolve(sym, kind, pattern, file, line, inlined, &sites, &e);
	int rc = XGP_EXIT_OK;
	if (n < 0) {
		rc = cli_input_error("%s", e.msg);
	} else if (sites.n == 0) {
		rc = cli_input_error("%s matches no function", spec_text);
	} else {
		size_t outlined = 0;
		bool links = cli_links_wanted(isatty(STDOUT_FILENO));
		for (size_t i = 0; i < sites.n; i++)
			outlined += !sites.v[i].inlined;
		printf("%s: %zu site%s (%zu out-of-line, %zu inlined)\n", spec_text, sites.n,
		       sites.n == 1 ? "" : "s", outlined, sites.n - outlined);
		for (size_t i = 0; i < sites.n; i++) {
			const struct tracer_site *s = &sites.v[i];
			printf("0x%016llx  %-8s ", (unsigned long long)s->addr, s->inlined ? "inlined" : "function");
			/* the reports' spelling ({closure}, no generics), then the
			 * instance as its symbol or DWARF names it when that differs */
			char *shown = demangle_display_name(s->name);
			text_put(stdout, shown ? shown : s->name, TEXT_FORM_TERMINAL);
			if (shown && strcmp(shown, s->name) != 0 && strchr(s->name, '<')) {
				fputs("  [instance ", stdout);
				text_put(stdout, s->name, TEXT_FORM_TERMINAL);
				putchar(']');
			}
			free(shown);
			if (s->file) {
				printf("  (%s ", s->inlined ? "inlined at" : "at");
				cli_put_source_location(stdout, s->file, s->line, 0, links);
				putchar(')');
			}
			putchar('\n');
		}
		if (outlined < sites.n)
			printf("note: inlined copies have entry probes only; `return` and `elapsed` "
			       "need an out-of-line instance\n");
	}
	tracer_sites_release(&sites);
	symbolizer_free(sym);
	free(pattern);
	free(file);
	return rc;
}
