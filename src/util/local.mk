## util/: growable arrays, errors, clocks, hashing, a hash index, percentiles and Student's t, growable strings, escaping of target
## text, safe output files. Uses nothing of ours; every module may use it.
noinst_LIBRARIES += src/util/libutil.a
src_util_libutil_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_util_libutil_a_SOURCES = \
	src/util/array.c \
	src/util/array.h \
	src/util/clock.h \
	src/util/compare.h \
	src/util/error.c \
	src/util/error.h \
	src/util/edit_distance.c \
	src/util/edit_distance.h \
	src/util/hash.h \
	src/util/hyperlink.c \
	src/util/hyperlink.h \
	src/util/output_file.c \
	src/util/output_file.h \
	src/util/tee_stream.c \
	src/util/tee_stream.h \
	src/util/path.c \
	src/util/path.h \
	src/util/slot_index.c \
	src/util/slot_index.h \
	src/util/stack.h \
	src/util/stats.c \
	src/util/stats.h \
	src/util/strbuf.c \
	src/util/strbuf.h \
	src/util/text_escape.c \
	src/util/text_escape.h \
	src/util/text_fit.c \
	src/util/text_fit.h

check_PROGRAMS += tests/unit/test_stats
tests_unit_test_stats_SOURCES = tests/unit/test_stats.c
tests_unit_test_stats_LDADD = $(util_ldadd)
TESTS += tests/unit/test_stats

check_PROGRAMS += tests/unit/test_array
tests_unit_test_array_SOURCES = tests/unit/test_array.c
tests_unit_test_array_LDADD = $(util_ldadd)
TESTS += tests/unit/test_array

check_PROGRAMS += tests/unit/test_slot_index
tests_unit_test_slot_index_SOURCES = tests/unit/test_slot_index.c
tests_unit_test_slot_index_LDADD = $(util_ldadd)
TESTS += tests/unit/test_slot_index

check_PROGRAMS += tests/unit/test_strbuf
tests_unit_test_strbuf_SOURCES = tests/unit/test_strbuf.c
tests_unit_test_strbuf_LDADD = $(util_ldadd)
TESTS += tests/unit/test_strbuf
