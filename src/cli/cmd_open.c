/* cmd_open.c — `xgdbprof open DIR [N]`: the editor at hottest code path
 * #N's deepest user frame (the file:line its headline ends with), through
 * the source maps, so that a profile taken on a server opens on the
 * developer's checkout. The editor is $VISUAL, else $EDITOR, else vi, run
 * with "+LINE FILE" (VS Code's `code` with "-g FILE:LINE"), without a
 * shell: the variable is split at spaces, as git splits GIT_EDITOR's words
 * only through sh, which we do not use. */
#include "config.h"
#include "cli/commands.h"
#include "cli/cli.h"
#include "report/profile.h"
#include "report/report.h"
#include "report/report_model.h"
#include "symbols/source_map.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char open_usage[] =
	"usage: xgdbprof open [--print] DIR|FILE [N]\n"
	"\n"
	"Opens $VISUAL (else $EDITOR, else vi) at hottest code path #N's deepest\n"
	"user frame (default #1) of a saved profile: the file:line its headline\n"
	"ends with, after the source maps (global -s FROM=TO, before `open`).\n"
	"\n"
	"  --print    print FILE:LINE instead of starting the editor\n"
	"  -h, --help show this help\n";

/* The words of an editor variable (split at spaces, no shell) followed by
 * the location arguments; argv has room for 16 words + 3. */
static int editor_argv(char *editor, const char *file, int line, char **argv, char *where, size_t size)
{
	int n = 0;
	for (char *save = NULL, *w = strtok_r(editor, " \t", &save); w && n < 16; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	if (n == 0)
		return -1;
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (!strcmp(base, "code") || !strcmp(base, "codium")) {
		snprintf(where, size, "%s:%d", file, line);
		argv[n++] = "-g";
		argv[n++] = where;
	} else {
		snprintf(where, size, "+%d", line);
		argv[n++] = where;
		argv[n++] = (char *)file;
	}
	argv[n] = NULL;
	return n;
}

int cmd_open(int argc, char **argv)
{
	static const struct option options[] = {
		{ "print", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool print_only = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		switch (c) {
		case 'p': print_only = true; break;
		case 'h': fputs(open_usage, stdout); return XGP_EXIT_OK;
		default: return cli_getopt_error("open", c, argv);
		}
	}
	int nargs = argc - optind;
	if (nargs < 1 || nargs > 2)
		return cli_usage_error("open", "give a run's directory (or its profile.json) and optionally a path number");
	long rank = 1;
	if (nargs == 2) {
		char *end;
		rank = strtol(argv[optind + 1], &end, 10);
		if (*end || rank < 1 || rank > 1000)
			return cli_usage_error("open", "N is a hottest code path's number, 1 for #1");
	}
	struct profile *p;
	int rc = cli_load_profile_arg(argv[optind], &p);
	if (rc != XGP_EXIT_OK)
		return rc;
	struct xerr e = { "" };
	struct report_model m;
	if (report_model_init(&m, p, NULL, &e) < 0) {
		profile_free(p);
		return cli_error("%s", e.msg);
	}
	char file[4096] = "";
	int line = 0;
	if ((size_t)rank > m.ncode_paths) {
		rc = cli_input_error("%s has %zu hottest code path%s: give N from 1 to %zu", argv[optind], m.ncode_paths,
				     m.ncode_paths == 1 ? "" : "s", m.ncode_paths);
	} else {
		const struct report_code_path *cp = &m.code_paths[rank - 1];
		const struct frame *f = m.chain_frames[cp->chain_begin + cp->deepest];
		if (!f || !f->file || f->line <= 0) {
			rc = cli_input_error("hottest code path #%ld ends in a frame without a source line "
					     "(no debug info for it): nothing to open", rank);
		} else {
			snprintf(file, sizeof file, "%s", f->file);
			line = f->line;
		}
	}
	report_model_release(&m);
	profile_free(p);
	if (rc != XGP_EXIT_OK)
		return rc;

	struct source_map *map = cli_source_map(&e);
	if (!map)
		return cli_input_error("%s", e.msg);
	char *mapped = source_map_apply(map, file);
	if (mapped) {
		snprintf(file, sizeof file, "%s", mapped);
		free(mapped);
	}
	source_map_free(map);
	if (access(file, R_OK) != 0)
		return cli_input_error("hottest code path #%ld is at %s:%d, which is not here (%s): map the build's "
				       "source directory to your checkout with -s FROM=TO before `open`",
				       rank, file, line, strerror(errno));
	if (print_only) {
		printf("%s:%d\n", file, line);
		return XGP_EXIT_OK;
	}
	const char *var = getenv("VISUAL");
	if (!var || !*var)
		var = getenv("EDITOR");
	char editor[1024];
	snprintf(editor, sizeof editor, "%s", var && *var ? var : "vi");
	char *eargv[20], where[4200];
	if (editor_argv(editor, file, line, eargv, where, sizeof where) < 0)
		return cli_input_error("$VISUAL/$EDITOR is blank: set one to your editor's command");
	fflush(stdout);
	execvp(eargv[0], eargv);
	return cli_error("cannot start the editor %s: %s (set $VISUAL or $EDITOR)", eargv[0], strerror(errno));
}
