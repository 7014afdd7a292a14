## Reports: the profile model and file, and one renderer per format.
libxgdbprof_a_SOURCES += \
	src/profile.c src/profile.h src/profile_map.c \
	src/report.h src/report_model.c src/report_model.h \
	src/report_text.c src/report_svg.c src/report_folded.c src/report_json.c \
	src/report_annotate.c \
	src/cmd_report.c

check_PROGRAMS += tests/unit/test_report tests/unit/test_report_map
tests_unit_test_report_SOURCES = tests/unit/test_report.c tests/unit/test_report_profiles.h
tests_unit_test_report_LDADD = $(test_ldadd)
tests_unit_test_report_map_SOURCES = tests/unit/test_report_map.c
tests_unit_test_report_map_LDADD = $(test_ldadd)

TESTS += tests/unit/test_report tests/unit/test_report_map tests/report/report.sh tests/svg_chromium.sh
EXTRA_DIST += tests/report tests/svg_chromium.sh
