## Rust (legacy + v0) and C++ demangling, `xgdbprof demangle`, and their tests.
libxgdbprof_a_SOURCES += \
	src/demangle.c src/demangle.h \
	src/rust_demangle_unicode.c src/rust_demangle_unicode.h \
	src/cmd_demangle.c

# Fixture binaries whose symbols make the corpus: one source, legacy and v0
# mangling, debug (every generic instance) and optimized (.llvm. suffixes).
# rustc >= 1.59 takes v0 on stable; older ones need the unstable spelling.
DEMANGLE_FIXTURES = \
	tests/fixtures/bin/demangle_legacy tests/fixtures/bin/demangle_v0 \
	tests/fixtures/bin/demangle_legacy_opt tests/fixtures/bin/demangle_v0_opt
DEMANGLE_RUSTFLAGS = --edition 2018 -C overflow-checks=off
DEMANGLE_V0 = -C symbol-mangling-version=v0
DEMANGLE_FIXTURE_SRC = $(srcdir)/tests/fixtures/demangle_fixture.rs

tests/fixtures/bin/demangle_legacy: tests/fixtures/demangle_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) -C opt-level=0 -o $@ $(DEMANGLE_FIXTURE_SRC)
tests/fixtures/bin/demangle_legacy_opt: tests/fixtures/demangle_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) -C opt-level=2 -o $@ $(DEMANGLE_FIXTURE_SRC)
tests/fixtures/bin/demangle_v0: tests/fixtures/demangle_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) $(DEMANGLE_V0) -C opt-level=0 -o $@ $(DEMANGLE_FIXTURE_SRC) 2>/dev/null || \
	RUSTC_BOOTSTRAP=1 $(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) -Z unstable-options $(DEMANGLE_V0) -C opt-level=0 -o $@ $(DEMANGLE_FIXTURE_SRC)
tests/fixtures/bin/demangle_v0_opt: tests/fixtures/demangle_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) $(DEMANGLE_V0) -C opt-level=2 -o $@ $(DEMANGLE_FIXTURE_SRC) 2>/dev/null || \
	RUSTC_BOOTSTRAP=1 $(RUSTC_QUIET) $(DEMANGLE_RUSTFLAGS) -Z unstable-options $(DEMANGLE_V0) -C opt-level=2 -o $@ $(DEMANGLE_FIXTURE_SRC)

check_DATA += $(DEMANGLE_FIXTURES)
CLEANFILES += $(DEMANGLE_FIXTURES)

check_PROGRAMS += tests/unit/test_demangle tests/unit/test_demangle_garbage \
	tests/fuzz/replay_demangle
tests_unit_test_demangle_SOURCES = tests/unit/test_demangle.c
tests_unit_test_demangle_LDADD = $(test_ldadd)
tests_unit_test_demangle_garbage_SOURCES = tests/unit/test_demangle_garbage.c
tests_unit_test_demangle_garbage_LDADD = $(test_ldadd)
tests_fuzz_replay_demangle_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_demangle.c
tests_fuzz_replay_demangle_LDADD = $(test_ldadd)

TESTS += tests/unit/test_demangle tests/unit/test_demangle_garbage \
	tests/demangle/corpus.sh tests/demangle/cli.sh tests/demangle/fuzz_replay.sh
EXTRA_DIST += tests/demangle tests/fuzz/demangle-corpus

# Optional, not part of check: libFuzzer on the Rust demangler.
#   make fuzz-demangle FUZZ_TIME=300   # new inputs land in tests/fuzz/demangle-work
fuzz-demangle: $(top_srcdir)/tests/fuzz/fuzz_demangle.c $(top_srcdir)/src/demangle.c \
		$(top_srcdir)/src/rust_demangle_unicode.c
	@$(MKDIR_P) tests/fuzz/demangle-work
	$(FUZZ_CC) $(FUZZ_CFLAGS) -std=c11 -D_GNU_SOURCE -I$(top_builddir) -I$(top_srcdir)/src \
		-o tests/fuzz/fuzz_demangle $(top_srcdir)/tests/fuzz/fuzz_demangle.c \
		$(top_srcdir)/src/demangle.c $(top_srcdir)/src/rust_demangle_unicode.c
	tests/fuzz/fuzz_demangle -max_total_time=$${FUZZ_TIME:-300} -max_len=4096 \
		tests/fuzz/demangle-work $(top_srcdir)/tests/fuzz/demangle-corpus
.PHONY: fuzz-demangle
