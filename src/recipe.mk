## The recipe language: lexer, parser, checker, evaluator, maps; `check` and
## `recipes` subcommands; shipped recipes; golden, unit and fuzz tests.
libxgdbprof_a_SOURCES += \
	src/event.h src/maps.c src/maps.h \
	src/recipe.c src/recipe.h src/recipe_internal.h src/recipe_ast.h \
	src/recipe_diag.c src/recipe_diag.h src/recipe_lex.c src/recipe_lex.h \
	src/recipe_parse.c src/recipe_check.c src/recipe_eval.c \
	src/cmd_check.c src/cmd_recipes.c

dist_recipes_DATA += \
	recipes/hot-cpu.recipe recipes/off-cpu.recipe recipes/panic.recipe \
	recipes/sled-insert.recipe recipes/func-latency.recipe recipes/syscalls.recipe

# Test driver: runs a recipe against a text file of synthetic events.
check_PROGRAMS += tests/recipe_run tests/unit/test_recipe tests/fuzz/replay_recipe
tests_recipe_run_SOURCES = tests/recipe_run.c
tests_recipe_run_LDADD = $(test_ldadd)
tests_unit_test_recipe_SOURCES = tests/unit/test_recipe.c
tests_unit_test_recipe_LDADD = $(test_ldadd)
tests_fuzz_replay_recipe_SOURCES = tests/fuzz/fuzz_recipe.c tests/fuzz/replay_recipe.c
tests_fuzz_replay_recipe_LDADD = $(test_ldadd)

TESTS += tests/unit/test_recipe tests/recipes.sh tests/recipe-docs.sh tests/fuzz/recipe-corpus.sh
EXTRA_DIST += tests/recipes tests/recipes.sh tests/recipe-docs.sh tests/fuzz/recipe-corpus.sh \
	tests/fuzz/recipe-corpus

# Optional: coverage-guided fuzzing of the parser with libFuzzer (not in check).
#   make fuzz-recipe && ./fuzz-recipe -max_total_time=600 $(srcdir)/tests/fuzz/recipe-corpus
FUZZ_CC = clang
fuzz_recipe_sources = src/error.c src/text_escape.c src/output_file.c src/maps.c src/recipe.c src/recipe_diag.c src/recipe_lex.c \
	src/recipe_parse.c src/recipe_check.c src/recipe_eval.c src/demangle.c src/rust_demangle_unicode.c \
	tests/fuzz/fuzz_recipe.c
fuzz-recipe: $(fuzz_recipe_sources)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined $(DEFS) $(DEFAULT_INCLUDES) \
	  $(AM_CPPFLAGS) $(CPPFLAGS) -o $@ $(addprefix $(srcdir)/,$(fuzz_recipe_sources)) $(DEP_LIBS)
CLEANFILES += fuzz-recipe
.PHONY: fuzz-recipe
