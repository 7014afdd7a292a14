/* cmd_check.c — `xgdbprof check [-D NAME=VALUE]... [--strict] FILE|NAME...`:
 * parse and check recipes without running them. Exit 0 when every recipe
 * is valid, 1 when one has errors, 2 on usage errors. */
#include "cli/commands.h"
#include "util/error.h"
#include "recipe/recipe.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: xgdbprof check [-D NAME=VALUE]... [--strict] [-e TEXT] RECIPE...\n"
		"  Parses and checks recipes (files or shipped names) and reports every error.\n"
		"  Without --strict, a ${NAME} with no -D stands for the text NAME.\n");
	return XGP_EXIT_USAGE;
}

static int check_one(const char *label, const char *path, const char *text,
		     const struct recipe_defines *defs)
{
	struct diag_list diags;
	recipe_diag_list_init(&diags);
	struct recipe *r = text ? recipe_load_text(label, text, strlen(text), defs, &diags)
				: recipe_load_file(path, defs, &diags);
	recipe_diag_list_print(&diags, stderr);
	int rc = XGP_EXIT_OK;
	if (r) {
		printf("%s: ok (%zu probe%s)\n", label, recipe_probe_count(r),
		       recipe_probe_count(r) == 1 ? "" : "s");
	} else {
		rc = XGP_EXIT_FAILURE;
	}
	recipe_free(r);
	recipe_diag_list_release(&diags);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	struct recipe_defines defs;
	recipe_defines_init(&defs);
	defs.placeholders = true;
	int rc = XGP_EXIT_OK, checked = 0;
	for (int i = 1; i < argc; i++) {
		struct xerr e;
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			recipe_defines_release(&defs);
			printf("usage: xgdbprof check [-D NAME=VALUE]... [--strict] [-e TEXT] RECIPE...\n"
			       "  Parses and checks recipes (files or shipped names) and reports every error.\n"
			       "  Without --strict, a ${NAME} with no -D stands for the text NAME.\n");
			return XGP_EXIT_OK;
		}
		if (!strcmp(a, "--strict")) {
			defs.placeholders = false;
			continue;
		}
		if (!strncmp(a, "-D", 2)) {
			const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!def || recipe_defines_add(&defs, def, &e) < 0) {
				fprintf(stderr, "xgdbprof check: %s\n", def ? e.msg : "-D needs NAME=VALUE");
				recipe_defines_release(&defs);
				return XGP_EXIT_USAGE;
			}
			continue;
		}
		if (!strcmp(a, "-e")) {
			if (i + 1 >= argc) {
				recipe_defines_release(&defs);
				return usage();
			}
			if (check_one("-e", NULL, argv[++i], &defs) != XGP_EXIT_OK)
				rc = XGP_EXIT_FAILURE;
			checked++;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			fprintf(stderr, "xgdbprof check: unknown option %s\n", a);
			recipe_defines_release(&defs);
			return usage();
		}
		char path[PATH_MAX];
		char note[512];
		if (recipe_resolve_name(a, path, sizeof path, note, sizeof note, &e) < 0) {
			fprintf(stderr, "xgdbprof check: %s\n", e.msg);
			rc = XGP_EXIT_FAILURE;
			checked++;
			continue;
		}
		if (note[0])
			fprintf(stderr, "xgdbprof check: %s\n", note);
		if (check_one(strchr(a, '/') || !strcmp(a, path) ? a : path, path, NULL, &defs) != XGP_EXIT_OK)
			rc = XGP_EXIT_FAILURE;
		checked++;
	}
	recipe_defines_release(&defs);
	if (!checked)
		return usage();
	return rc;
}
