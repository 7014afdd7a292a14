## The tool: CLI, session, and the internal library its unit tests link against.
noinst_LIBRARIES += libxgdbprof.a
libxgdbprof_a_SOURCES = \
	src/error.c src/error.h \
	src/text_escape.c src/text_escape.h \
	src/output_file.c src/output_file.h \
	src/commands.h src/stack.h src/hash.h src/clock.h \
	src/stats.c src/stats.h \
	src/proc.c src/proc.h \
	src/signals.c src/signals.h \
	src/session.c src/session.h \
	src/cli.c src/cli.h \
	src/cmd_dump.c \
	src/unwind.c src/unwind.h \
	src/cmd_run.c

xgdbprof_SOURCES = src/main.c
xgdbprof_LDADD = libxgdbprof.a libmi.a $(DEP_LIBS)

# What unit-test programs link against.
test_ldadd = libxgdbprof.a libmi.a $(DEP_LIBS)

check_PROGRAMS += tests/unit/test_stats
tests_unit_test_stats_SOURCES = tests/unit/test_stats.c
tests_unit_test_stats_LDADD = $(test_ldadd)
TESTS += tests/unit/test_stats
