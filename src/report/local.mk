## report/: the profile model and every writer (text, svg, folded, json).
## Uses symbols (source maps) and util; never gdb nor the target.
noinst_LIBRARIES += src/report/libreport.a
src_report_libreport_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_report_libreport_a_SOURCES = \
	src/report/profile.c \
	src/report/profile.h \
	src/report/report.h \
	src/report/report_annotate.c \
	src/report/report_folded.c \
	src/report/report_json.c \
	src/report/report_model.c \
	src/report/report_model.h \
	src/report/report_paths.c \
	src/report/report_svg.c \
	src/report/report_text.c

## Reports: the profile model and file, and one renderer per format.

check_PROGRAMS += tests/unit/test_report tests/unit/test_report_map tests/unit/test_report_paths
tests_unit_test_report_SOURCES = tests/unit/test_report.c tests/unit/test_report_profiles.h
tests_unit_test_report_LDADD = $(report_ldadd)
tests_unit_test_report_paths_SOURCES = tests/unit/test_report_paths.c
tests_unit_test_report_paths_LDADD = $(report_ldadd)
tests_unit_test_report_map_SOURCES = tests/unit/test_report_map.c
tests_unit_test_report_map_LDADD = $(recipe_ldadd)

TESTS += tests/unit/test_report tests/unit/test_report_map tests/unit/test_report_paths tests/report/report.sh tests/svg_chromium.sh
EXTRA_DIST += tests/report tests/svg_chromium.sh
