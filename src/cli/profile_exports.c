/* profile_exports.c — what a sampling run writes beside its profile.json for
 * other tools (the formats report_format.h marks beside_profile: pprof and
 * speedscope, docs/reports.md), and the module table those formats need. */
#include "cli/cli.h"
#include "report/profile.h"
#include "report/report.h"
#include "report/report_format.h"
#include "symbols/symbolize.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int add_module(const struct symbolizer_module *sm, void *arg)
{
	struct profile_module m = {
		.path = sm->path, .build_id = sm->build_id, .start = sm->start, .end = sm->end,
		.offset = sm->offset,
	};
	return profile_add_module(arg, &m, NULL) < 0 ? 1 : 0;
}

void cli_profile_add_modules(struct profile *p, struct symbolizer *sym)
{
	if (sym)
		symbolizer_foreach_module(sym, add_module, p, NULL);
}

void cli_files_written_add(struct cli_files_written *w, const char *name)
{
	for (int i = 0; i < w->n; i++)
		if (strcmp(w->names[i], name) == 0)
			return;   /* written again: named once */
	if (w->n < CLI_MAX_FILES_WRITTEN)
		snprintf(w->names[w->n++], sizeof w->names[0], "%s", name);
}

int cli_save_profile_exports(const struct profile *p, const char *dir, struct cli_files_written *written)
{
	struct report_options ro;
	int rc = 0;
	report_options_init(&ro);
	for (size_t i = 0; i < report_format_count(); i++) {
		const struct report_format *f = report_format_at(i);
		if (!f->beside_profile)
			continue;
		char path[PATH_MAX + 64];
		struct xerr e = { "" };
		snprintf(path, sizeof path, "%s/%s", dir, f->default_file);
		if (report_to_file(f->render, p, path, &ro, &e) < 0) {
			rc = cli_error("%s", e.msg);
			continue;
		}
		cli_files_written_add(written, f->default_file);
		if (cli_globals.verbose)
			fprintf(stderr, "xgdbprof: %s written to %s\n", f->what, path);
	}
	return rc;
}
