## symbols/: ELF/DWARF symbolization with libdw, the DWARF index, the Rust
## demangler, source maps (docs/symbols.md, docs/demangle.md). Uses procfs
## and util; never gdb (mi/) nor the target session.
noinst_LIBRARIES += src/symbols/libsymbols.a
src_symbols_libsymbols_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_symbols_libsymbols_a_SOURCES = \
	src/symbols/demangle.c \
	src/symbols/demangle.h \
	src/symbols/demangle_display.c \
	src/symbols/name_pattern.c \
	src/symbols/name_pattern.h \
	src/symbols/scope_index.c \
	src/symbols/scope_index.h \
	src/symbols/rust_demangle_unicode.c \
	src/symbols/rust_demangle_unicode.h \
	src/symbols/source_map.c \
	src/symbols/source_map.h \
	src/symbols/symbolize.c \
	src/symbols/symbolize_internal.h \
	src/symbols/symbolize_modules.c \
	src/symbols/symbolize.h

## Rust (legacy + v0) and C++ demangling, `xgdbprof demangle`, and their tests.

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

# Display names (one name per function whatever the mangling): one busy
# program built with rustc's default (legacy) and with v0 mangling, with
# debug info like the other profiled fixtures (tests/names.sh).
NAMES_FIXTURES = tests/fixtures/bin/names_legacy tests/fixtures/bin/names_v0
NAMES_RUSTFLAGS = --edition 2018 -C opt-level=2 -g
NAMES_FIXTURE_SRC = $(srcdir)/tests/fixtures/names_fixture.rs

tests/fixtures/bin/names_legacy: tests/fixtures/names_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(NAMES_RUSTFLAGS) -o $@ $(NAMES_FIXTURE_SRC)
tests/fixtures/bin/names_v0: tests/fixtures/names_fixture.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(NAMES_RUSTFLAGS) $(DEMANGLE_V0) -o $@ $(NAMES_FIXTURE_SRC) 2>/dev/null || \
	RUSTC_BOOTSTRAP=1 $(RUSTC_QUIET) $(NAMES_RUSTFLAGS) -Z unstable-options $(DEMANGLE_V0) -o $@ $(NAMES_FIXTURE_SRC)

check_DATA += $(NAMES_FIXTURES)
CLEANFILES += $(NAMES_FIXTURES)

check_PROGRAMS += tests/unit/test_demangle tests/unit/test_demangle_garbage \
	tests/fuzz/replay_demangle
tests_unit_test_demangle_SOURCES = tests/unit/test_demangle.c
tests_unit_test_demangle_LDADD = $(symbols_ldadd)
tests_unit_test_demangle_garbage_SOURCES = tests/unit/test_demangle_garbage.c
tests_unit_test_demangle_garbage_LDADD = $(symbols_ldadd)
tests_fuzz_replay_demangle_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_demangle.c
tests_fuzz_replay_demangle_LDADD = $(symbols_ldadd)

TESTS += tests/unit/test_demangle tests/unit/test_demangle_garbage \
	tests/demangle/corpus.sh tests/demangle/cli.sh tests/demangle/fuzz_replay.sh
EXTRA_DIST += tests/demangle tests/fuzz/demangle-corpus

check_PROGRAMS += tests/unit/test_demangle_display
tests_unit_test_demangle_display_SOURCES = tests/unit/test_demangle_display.c
tests_unit_test_demangle_display_LDADD = $(symbols_ldadd)
TESTS += tests/unit/test_demangle_display tests/names.sh
EXTRA_DIST += tests/names.sh

# Optional, not part of check: libFuzzer on the Rust demangler.
#   make fuzz-demangle FUZZ_TIME=300   # new inputs land in tests/fuzz/demangle-work
fuzz-demangle: $(top_srcdir)/tests/fuzz/fuzz_demangle.c $(top_srcdir)/src/symbols/demangle.c \
		$(top_srcdir)/src/symbols/rust_demangle_unicode.c
	@$(MKDIR_P) tests/fuzz/demangle-work
	$(FUZZ_CC) $(FUZZ_CFLAGS) -std=c11 -D_GNU_SOURCE -I$(top_builddir) -I$(top_srcdir)/src \
		-o tests/fuzz/fuzz_demangle $(top_srcdir)/tests/fuzz/fuzz_demangle.c \
		$(top_srcdir)/src/symbols/demangle.c $(top_srcdir)/src/symbols/rust_demangle_unicode.c
	tests/fuzz/fuzz_demangle -max_total_time=$${FUZZ_TIME:-300} -max_len=4096 \
		tests/fuzz/demangle-work $(top_srcdir)/tests/fuzz/demangle-corpus
.PHONY: fuzz-demangle

## The libdw symbolizer (PC -> module -> inline chain), its DWARF index, source
## maps, and their tests (docs/symbols.md).

# Fixtures: an always_inline chain in C, #[inline(always)] + generics in Rust.
SYMBOLIZE_FIXTURES = tests/fixtures/bin/inline_c tests/fixtures/bin/inline_rust

tests/fixtures/bin/inline_c: tests/fixtures/inline_c.c tests/fixtures/bin/.dirstamp
	$(AM_V_CC)$(CC) -O2 -g -o $@ $(srcdir)/tests/fixtures/inline_c.c
tests/fixtures/bin/inline_rust: tests/fixtures/inline_rust.rs tests/fixtures/bin/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) --edition 2018 -C opt-level=2 -g -o $@ $(srcdir)/tests/fixtures/inline_rust.rs

# tests/symbol_fallbacks.sh: a library loaded from a file deleted afterwards.
FALLBACK_FIXTURES = tests/fixtures/bin/dlopen_hot tests/fixtures/bin/libhot_plugin.so

tests/fixtures/bin/dlopen_hot: tests/fixtures/dlopen_hot.c tests/fixtures/bin/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/dlopen_hot.c -ldl
tests/fixtures/bin/libhot_plugin.so: tests/fixtures/hot_plugin.c tests/fixtures/bin/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -shared -fPIC -o $@ $(srcdir)/tests/fixtures/hot_plugin.c

check_DATA += $(SYMBOLIZE_FIXTURES) $(FALLBACK_FIXTURES)
CLEANFILES += $(SYMBOLIZE_FIXTURES) $(FALLBACK_FIXTURES)
EXTRA_DIST += tests/fixtures/dlopen_hot.c tests/fixtures/hot_plugin.c

check_PROGRAMS += \
	tests/unit/test_symbolize \
	tests/unit/test_symbolize_source_map \
	tests/unit/test_symbolize_live
tests_unit_test_symbolize_SOURCES = tests/unit/test_symbolize.c
tests_unit_test_symbolize_LDADD = $(symbols_ldadd)
tests_unit_test_symbolize_source_map_SOURCES = tests/unit/test_symbolize_source_map.c
tests_unit_test_symbolize_source_map_LDADD = $(symbols_ldadd)
tests_unit_test_symbolize_live_SOURCES = tests/unit/test_symbolize_live.c
tests_unit_test_symbolize_live_LDADD = $(symbols_ldadd)

TESTS += \
	tests/unit/test_symbolize_source_map \
	tests/unit/test_symbolize \
	tests/unit/test_symbolize_live \
	tests/symbolize_vs_addr2line.sh

# bench/symbolize.sh builds its driver from these (not part of make check).
EXTRA_DIST += tests/symbolize_vs_addr2line.sh
