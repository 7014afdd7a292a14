/* recipe_internal.h — struct recipe, shared by recipe.c and recipe_eval.c. */
#ifndef XGDBPROF_RECIPE_INTERNAL_H
#define XGDBPROF_RECIPE_INTERNAL_H

#include "recipe/recipe.h"
#include "recipe/recipe_ast.h"

struct recipe {
	char *name;
	char *text;
	struct recipe_src src;
	struct program prog;
	struct recipe_options options;
	char *threads_regex;    /* storage behind options.threads_regex */
};

#endif
