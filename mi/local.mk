## mi/: the standalone GDB/MI3 client library (see docs/mi.md).
noinst_LIBRARIES += libmi.a
libmi_a_SOURCES = \
	mi/mi_error.h \
	mi/mi_value.h mi/mi_value.c \
	mi/mi_record.h mi/mi_parse.c \
	mi/mi_quote.h mi/mi_quote.c \
	mi/mi_conn.h mi/mi_conn.c

# The C program gdb drives in the live tests and in transcript recording.
check_DATA += tests/fixtures/bin/mi_target
CLEANFILES += tests/fixtures/bin/mi_target
tests/fixtures/bin/mi_target: $(top_srcdir)/tests/fixtures/mi_target.c
	@$(MKDIR_P) tests/fixtures/bin
	$(AM_V_CC)$(CC) -std=c11 -D_GNU_SOURCE -g -O0 -pthread -o $@ $(top_srcdir)/tests/fixtures/mi_target.c

# Unit tests. The parser test reads tests/transcripts/*.mi via $TOP_SRCDIR;
# the quoting and connection tests run the real gdb and $FIXTURES/mi_target.
check_PROGRAMS += tests/unit/test_mi_parse tests/unit/test_mi_quote tests/unit/test_mi_conn
TESTS += tests/unit/test_mi_parse tests/unit/test_mi_quote tests/unit/test_mi_conn
tests_unit_test_mi_parse_SOURCES = tests/unit/test_mi_parse.c tests/unit/check.h
tests_unit_test_mi_parse_LDADD = libmi.a
tests_unit_test_mi_quote_SOURCES = tests/unit/test_mi_quote.c tests/unit/check.h
tests_unit_test_mi_quote_LDADD = libmi.a
tests_unit_test_mi_conn_SOURCES = tests/unit/test_mi_conn.c tests/unit/check.h
tests_unit_test_mi_conn_LDADD = libmi.a

# Fuzzing. tests/fuzz/replay.c is a generic driver: linked with any
# LLVMFuzzerTestOneInput it feeds it every file named on the command line
# (directories are walked), so committed corpora run under plain `make check`.
check_PROGRAMS += tests/fuzz/replay_mi_parse
tests_fuzz_replay_mi_parse_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_mi_parse.c
tests_fuzz_replay_mi_parse_LDADD = libmi.a
TESTS += tests/fuzz/replay_mi_parse.sh
EXTRA_DIST += tests/fuzz/replay_mi_parse.sh tests/fuzz/mi-corpus

# Optional, not part of check: a libFuzzer build of the MI parser.
#   make fuzz-mi && tests/fuzz/fuzz_mi_parse -max_total_time=300 \
#       $(srcdir)/tests/fuzz/mi-corpus   # new inputs land in the corpus dir
MI_FUZZ_CC = clang
MI_FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
fuzz-mi: $(top_srcdir)/tests/fuzz/fuzz_mi_parse.c $(libmi_a_SOURCES)
	@$(MKDIR_P) tests/fuzz
	$(MI_FUZZ_CC) $(MI_FUZZ_CFLAGS) -std=c11 -D_GNU_SOURCE -I$(top_srcdir)/mi -o tests/fuzz/fuzz_mi_parse \
		$(top_srcdir)/tests/fuzz/fuzz_mi_parse.c $(top_srcdir)/mi/mi_parse.c $(top_srcdir)/mi/mi_value.c
CLEANFILES += tests/fuzz/fuzz_mi_parse

# Optional, not part of check: re-record the transcripts with this machine's gdb.
mi-transcripts: tests/fixtures/bin/mi_target libmi.a
	@$(MKDIR_P) tests/transcripts
	$(CC) -std=c11 -D_GNU_SOURCE -g -I$(top_srcdir)/mi -o tests/transcripts/record_mi \
		$(top_srcdir)/tests/transcripts/record_mi.c libmi.a
	for s in run attach; do \
	  tests/transcripts/record_mi $$s tests/fixtures/bin/mi_target > tests/transcripts/$$s.trace || exit 1; \
	  sed -n 's/^<- //p' tests/transcripts/$$s.trace > $(srcdir)/tests/transcripts/gdb13-$$s.mi || exit 1; \
	done
CLEANFILES += tests/transcripts/record_mi tests/transcripts/run.trace tests/transcripts/attach.trace
.PHONY: fuzz-mi mi-transcripts
