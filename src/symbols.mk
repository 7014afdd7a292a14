## The libdw symbolizer (PC -> module -> inline chain), its DWARF index, source
## maps, and their tests (docs/symbols.md).
libxgdbprof_a_SOURCES += \
	src/symbolize.c src/symbolize.h \
	src/dwarf_index.c src/dwarf_index.h \
	src/source_map.c src/source_map.h

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
tests_unit_test_symbolize_LDADD = $(test_ldadd)
tests_unit_test_symbolize_source_map_SOURCES = tests/unit/test_symbolize_source_map.c
tests_unit_test_symbolize_source_map_LDADD = $(test_ldadd)
tests_unit_test_symbolize_live_SOURCES = tests/unit/test_symbolize_live.c
tests_unit_test_symbolize_live_LDADD = $(test_ldadd)

TESTS += \
	tests/unit/test_symbolize_source_map \
	tests/unit/test_symbolize \
	tests/unit/test_symbolize_live \
	tests/symbolize_vs_addr2line.sh

# bench/symbolize.sh builds its driver from these (not part of make check).
EXTRA_DIST += tests/symbolize_vs_addr2line.sh
