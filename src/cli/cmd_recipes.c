/* cmd_recipes.c — `xgdbprof recipes`: list the shipped recipes with the
 * one-line description from each file's first line ("# NAME: what it answers").
 * Installed recipes come first; a name found twice is listed once. */
#include "cli/commands.h"
#include "util/array.h"
#include "util/error.h"
#include "recipe/recipe.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char name[256];
	char desc[1024];
	char dir[512];
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void read_description(const char *path, const char *name, char *out, size_t outsz)
{
	out[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[1024];
	if (fgets(line, sizeof line, f) && line[0] == '#') {
		char *p = line + 1;
		while (*p == ' ')
			p++;
		size_t n = strlen(name);
		if (!strncmp(p, name, n) && (p[n] == ':' || !strncmp(p + n, ".recipe:", 8))) {
			p = strchr(p, ':') + 1;
			while (*p == ' ')
				p++;
		}
		p[strcspn(p, "\n")] = 0;
		snprintf(out, outsz, "%s", p);
	}
	fclose(f);
}

int cmd_recipes(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: xgdbprof recipes [--paths]\n"
		       "  Lists the shipped recipes with the question each one answers\n"
		       "  (--paths: where each file is). Run one with --recipe NAME.\n");
		return XGP_EXIT_OK;
	}
	bool show_paths = argc > 1 && !strcmp(argv[1], "--paths");
	if (argc > 1 && !show_paths) {
		fprintf(stderr, "usage: xgdbprof recipes [--paths]\n");
		return XGP_EXIT_USAGE;
	}
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	const char *const *dirs = recipe_search_dirs();
	for (size_t d = 0; dirs[d]; d++) {
		DIR *dir = opendir(dirs[d]);
		if (!dir)
			continue;
		struct dirent *de;
		while ((de = readdir(dir))) {
			size_t len = strlen(de->d_name);
			if (len <= 7 || strcmp(de->d_name + len - 7, ".recipe") || len - 7 >= 256)
				continue;
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(len - 7), de->d_name);
			bool seen = false;
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp(v[i].name, name);
			if (seen)
				continue;
			struct entry *nv = array_grow(v, &cap, n + 1, sizeof *nv);
			if (!nv)
				break;
			v = nv;
			snprintf(v[n].name, sizeof v[n].name, "%s", name);
			snprintf(v[n].dir, sizeof v[n].dir, "%s", dirs[d]);
			char path[1024];
			snprintf(path, sizeof path, "%s/%s", dirs[d], de->d_name);
			read_description(path, name, v[n].desc, sizeof v[n].desc);
			n++;
		}
		closedir(dir);
	}
	if (!n) {
		fprintf(stderr, "xgdbprof recipes: no recipes found in %s or %s\n", dirs[0], dirs[1]);
		free(v);
		return XGP_EXIT_FAILURE;
	}
	qsort(v, n, sizeof *v, by_name);
	for (size_t i = 0; i < n; i++) {
		if (show_paths)
			printf("%-14s %s/%s.recipe\n", v[i].name, v[i].dir, v[i].name);
		else
			printf("%-14s %s\n", v[i].name, v[i].desc);
	}
	free(v);
	return XGP_EXIT_OK;
}
