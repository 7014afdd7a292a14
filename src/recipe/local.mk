## recipe/: lexer, parser, checker, evaluator, diagnostics, maps, and the
## maps' conversion to profiles. Consumes events; uses report, symbols
## (demangling), arch (system call names) and util; never gdb nor the target.
noinst_LIBRARIES += src/recipe/librecipe.a
src_recipe_librecipe_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_recipe_librecipe_a_SOURCES = \
	src/recipe/builtins.c \
	src/recipe/builtins.h \
	src/recipe/locks_report.c \
	src/recipe/locks_report.h \
	src/recipe/maps.c \
	src/recipe/maps.h \
	src/recipe/panic_report.c \
	src/recipe/panic_report.h \
	src/recipe/profile_map.c \
	src/recipe/recipe.c \
	src/recipe/recipe.h \
	src/recipe/recipe_ast.h \
	src/recipe/recipe_check.c \
	src/recipe/recipe_diag.c \
	src/recipe/recipe_diag.h \
	src/recipe/recipe_eval.c \
	src/recipe/recipe_internal.h \
	src/recipe/recipe_lex.c \
	src/recipe/recipe_lex.h \
	src/recipe/recipe_parse.c \
	src/recipe/syscall_table.c \
	src/recipe/syscall_table.h

## The recipe language: lexer, parser, checker, evaluator, maps; `check` and
## `recipes` subcommands; shipped recipes; golden, unit and fuzz tests.

dist_recipes_DATA += \
	recipes/hot-cpu.recipe recipes/off-cpu.recipe recipes/panic.recipe \
	recipes/sled-insert.recipe recipes/func-latency.recipe recipes/syscalls.recipe \
	recipes/alloc.recipe recipes/heap.recipe recipes/locks.recipe recipes/heap-growth.recipe \
	recipes/syscall-counts.recipe

# Test driver: runs a recipe against a text file of synthetic events.
check_PROGRAMS += tests/recipe_run tests/unit/test_recipe tests/fuzz/replay_recipe
tests_recipe_run_SOURCES = tests/recipe_run.c
tests_recipe_run_LDADD = $(recipe_ldadd)
tests_unit_test_recipe_SOURCES = tests/unit/test_recipe.c
tests_unit_test_recipe_LDADD = $(recipe_ldadd)
tests_fuzz_replay_recipe_SOURCES = tests/fuzz/fuzz_recipe.c tests/fuzz/replay.c
tests_fuzz_replay_recipe_LDADD = $(recipe_ldadd)

TESTS += tests/unit/test_recipe tests/recipes.sh tests/recipe-docs.sh tests/fuzz/recipe-corpus.sh
EXTRA_DIST += tests/recipes tests/recipes.sh tests/recipe-docs.sh tests/fuzz/recipe-corpus.sh \
	tests/fuzz/recipe-corpus

# Optional: coverage-guided fuzzing of the parser with libFuzzer (not in check).
#   make fuzz-recipe && ./fuzz-recipe -max_total_time=600 $(srcdir)/tests/fuzz/recipe-corpus
FUZZ_CC = clang
# Every source of recipe/'s allowed closure (docs/design.md), so the list
# cannot fall behind the libraries; the generated pprof code from the build.
fuzz_recipe_sources = $(wildcard $(srcdir)/src/util/*.c $(srcdir)/src/events/*.c $(srcdir)/src/procfs/*.c \
	$(srcdir)/src/symbols/*.c $(srcdir)/src/report/*.c $(srcdir)/src/recipe/*.c) \
	src/report/pprof.pb-c.c $(srcdir)/tests/fuzz/fuzz_recipe.c
fuzz-recipe: $(fuzz_recipe_sources)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined $(DEFS) $(DEFAULT_INCLUDES) \
	  $(NO_GDB_CPPFLAGS) -I$(top_builddir)/src $(CPPFLAGS) -o $@ $(fuzz_recipe_sources) $(DEP_LIBS)
CLEANFILES += fuzz-recipe
.PHONY: fuzz-recipe

# The panic report's fixture (tests/trace_panic.sh): two threads, two locations.
$(FIXTURE_BIN)/panic_groups: tests/fixtures/panic_groups.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/panic_groups.rs -o $@
check_DATA += $(FIXTURE_BIN)/panic_groups
CLEANFILES += $(FIXTURE_BIN)/panic_groups
EXTRA_DIST += tests/fixtures/panic_groups.rs
check_PROGRAMS += tests/unit/test_panic_report
tests_unit_test_panic_report_SOURCES = tests/unit/test_panic_report.c
tests_unit_test_panic_report_LDADD = $(recipe_ldadd)
TESTS += tests/unit/test_panic_report
