## report/: the profile model and every writer, one per output format
## (report_format.c holds their table).
## Uses symbols (source maps) and util; never gdb nor the target.
noinst_LIBRARIES += src/report/libreport.a
src_report_libreport_a_CPPFLAGS = $(NO_GDB_CPPFLAGS) -I$(top_builddir)/src
src_report_libreport_a_SOURCES = \
	src/report/profile.c \
	src/report/profile.h \
	src/report/report.h \
	src/report/report_annotate.c \
	src/report/report_diff.c \
	src/report/report_diff.h \
	src/report/report_folded.c \
	src/report/report_format.c \
	src/report/report_format.h \
	src/report/report_insights.c \
	src/report/report_insights.h \
	src/report/report_json.c \
	src/report/report_metrics.c \
	src/report/report_metrics.h \
	src/report/report_model.c \
	src/report/report_model.h \
	src/report/report_paths.c \
	src/report/report_pprof.c \
	src/report/report_speedscope.c \
	src/report/report_svg.c \
	src/report/report_text.c \
	src/report/top_window.c \
	src/report/top_window.h

# pprof's messages, generated from our copy of its schema by protobuf-c.
nodist_src_report_libreport_a_SOURCES = src/report/pprof.pb-c.c src/report/pprof.pb-c.h
BUILT_SOURCES += src/report/pprof.pb-c.c src/report/pprof.pb-c.h
CLEANFILES += src/report/pprof.pb-c.c src/report/pprof.pb-c.h
EXTRA_DIST += src/report/pprof.proto
src/report/pprof.pb-c.c: $(top_srcdir)/src/report/pprof.proto
	$(AM_V_GEN)$(MKDIR_P) src/report && \
	$(PROTOC_C) --proto_path=$(top_srcdir)/src/report --c_out=src/report $(top_srcdir)/src/report/pprof.proto
src/report/pprof.pb-c.h: src/report/pprof.pb-c.c

## Reports: the profile model and file, and one renderer per format.

check_PROGRAMS += tests/unit/test_report tests/unit/test_report_map tests/unit/test_report_paths
tests_unit_test_report_SOURCES = tests/unit/test_report.c tests/unit/test_report_profiles.h
tests_unit_test_report_LDADD = $(report_ldadd)
tests_unit_test_report_paths_SOURCES = tests/unit/test_report_paths.c
tests_unit_test_report_paths_LDADD = $(report_ldadd)
tests_unit_test_report_map_SOURCES = tests/unit/test_report_map.c
tests_unit_test_report_map_LDADD = $(recipe_ldadd)

check_PROGRAMS += tests/unit/test_report_insights
tests_unit_test_report_insights_SOURCES = tests/unit/test_report_insights.c
tests_unit_test_report_insights_LDADD = $(report_ldadd)
TESTS += tests/unit/test_report_insights

# The profile reader and every renderer fuzzed (issue 28 item 6): make
# check replays the committed corpus; coverage-guided runs on demand:
#   make fuzz-profile && ./fuzz-profile -max_total_time=600 $(srcdir)/tests/fuzz/profile-corpus
# A unit test (no argument: that corpus), so CI replays it under ASan+UBSan
# and valgrind as well.
check_PROGRAMS += tests/fuzz/replay_profile
tests_fuzz_replay_profile_SOURCES = tests/fuzz/fuzz_profile.c tests/fuzz/replay.c
tests_fuzz_replay_profile_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/profile-corpus"'
tests_fuzz_replay_profile_LDADD = $(report_ldadd)
TESTS += tests/fuzz/replay_profile
EXTRA_DIST += tests/fuzz/profile-corpus
fuzz_profile_sources = $(wildcard $(srcdir)/src/util/*.c $(srcdir)/src/procfs/*.c $(srcdir)/src/symbols/*.c $(srcdir)/src/report/*.c) \
	src/report/pprof.pb-c.c $(srcdir)/tests/fuzz/fuzz_profile.c
fuzz-profile: $(fuzz_profile_sources)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined $(DEFS) $(DEFAULT_INCLUDES) \
	  $(NO_GDB_CPPFLAGS) -I$(top_builddir)/src $(CPPFLAGS) -o $@ $(fuzz_profile_sources) $(DEP_LIBS)
CLEANFILES += fuzz-profile
.PHONY: fuzz-profile

# `xgdbprof top`'s sliding window (src/cli/cmd_top.c draws it).
check_PROGRAMS += tests/unit/test_top_window
tests_unit_test_top_window_SOURCES = tests/unit/test_top_window.c
tests_unit_test_top_window_LDADD = $(report_ldadd)
TESTS += tests/unit/test_top_window

check_PROGRAMS += tests/unit/test_report_pprof
tests_unit_test_report_pprof_SOURCES = tests/unit/test_report_pprof.c
tests_unit_test_report_pprof_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/src
tests_unit_test_report_pprof_LDADD = $(report_ldadd)

TESTS += tests/unit/test_report tests/unit/test_report_map tests/unit/test_report_paths tests/unit/test_report_pprof \
	tests/report/report.sh tests/svg_chromium.sh tests/pprof.sh
EXTRA_DIST += tests/report tests/svg_chromium.sh tests/pprof.sh

# Deep and wide saved profiles, generated at test time: every format and
# insights read them, within the reader's limits (docs/reports.md, "Limits").
check_PROGRAMS += tests/unit/test_report_limits
tests_unit_test_report_limits_SOURCES = tests/unit/test_report_limits.c
tests_unit_test_report_limits_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/src
tests_unit_test_report_limits_LDADD = $(report_ldadd)
TESTS += tests/unit/test_report_limits tests/deep_stacks.sh
EXTRA_DIST += tests/deep_stacks.sh

# tests/pprof.sh fetches speedscope's schema into tests/npm (npm's cache and
# the package): the build's own, gone with `make clean`.
clean-local: clean-npm-cache
clean-npm-cache:
	rm -rf tests/npm
.PHONY: clean-npm-cache
