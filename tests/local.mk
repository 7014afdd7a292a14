## End-to-end tests of the tool, and the fixtures they run (built during make check).
FIXTURE_BIN = tests/fixtures/bin
RUSTFLAGS_FIXTURE = --edition 2018 -C opt-level=2 -g

$(FIXTURE_BIN)/.dirstamp:
	@$(MKDIR_P) $(FIXTURE_BIN) && touch $@

$(FIXTURE_BIN)/counter: tests/fixtures/counter.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/counter.c

$(FIXTURE_BIN)/ratio: tests/fixtures/ratio.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/ratio.c

$(FIXTURE_BIN)/blocked: tests/fixtures/blocked.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/blocked.c

# The harm oracle (tests/harm_check.sh, bench/stress_harm.sh); -ldl for
# glibc before 2.34, where dlopen lived there.
$(FIXTURE_BIN)/canary: tests/fixtures/canary.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/canary.c -ldl
$(FIXTURE_BIN)/recurse: tests/fixtures/recurse.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/recurse.c

$(FIXTURE_BIN)/libsled.rlib: tests/fixtures/sled/lib.rs tests/fixtures/sled/tree.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) --crate-type rlib --crate-name sled \
		$(srcdir)/tests/fixtures/sled/lib.rs -o $@

$(FIXTURE_BIN)/cache-service: tests/fixtures/cache_service.rs $(FIXTURE_BIN)/libsled.rlib
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) -L $(FIXTURE_BIN) \
		--extern sled=$(FIXTURE_BIN)/libsled.rlib $(srcdir)/tests/fixtures/cache_service.rs -o $@

# The demo target the README's first command profiles.
demo-target: $(FIXTURE_BIN)/cache-service
.PHONY: demo-target

check_DATA += $(FIXTURE_BIN)/counter $(FIXTURE_BIN)/cache-service $(FIXTURE_BIN)/ratio $(FIXTURE_BIN)/blocked \
	$(FIXTURE_BIN)/canary $(FIXTURE_BIN)/recurse
CLEANFILES += $(FIXTURE_BIN)/counter $(FIXTURE_BIN)/cache-service $(FIXTURE_BIN)/libsled.rlib \
	$(FIXTURE_BIN)/ratio $(FIXTURE_BIN)/blocked $(FIXTURE_BIN)/canary $(FIXTURE_BIN)/recurse \
	$(FIXTURE_BIN)/.dirstamp

LEAD_TESTS = \
	tests/cli.sh \
	tests/dump.sh \
	tests/safety.sh \
	tests/bad_input.sh \
	tests/profile.sh \
	tests/recursion.sh \
	tests/symbol_fallbacks.sh \
	tests/shipped_recipes.sh \
	tests/canary.sh
TESTS += $(LEAD_TESTS)
EXTRA_DIST += tests/lib.sh tests/harm_check.sh $(LEAD_TESTS)

$(FIXTURE_BIN)/hostile_names: tests/fixtures/hostile_names.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/hostile_names.c

$(FIXTURE_BIN)/hostile_panic: tests/fixtures/hostile_panic.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/hostile_panic.rs -o $@

## Target text and output files: escaping (issue items 6, 7).
check_DATA += $(FIXTURE_BIN)/hostile_names $(FIXTURE_BIN)/hostile_panic
CLEANFILES += $(FIXTURE_BIN)/hostile_names $(FIXTURE_BIN)/hostile_panic
OUTPUT_SAFETY_TESTS = tests/hostile_text.sh tests/output_files.sh
check_PROGRAMS += tests/unit/test_text_escape
tests_unit_test_text_escape_SOURCES = tests/unit/test_text_escape.c
tests_unit_test_text_escape_LDADD = $(util_ldadd)
TESTS += tests/unit/test_text_escape $(OUTPUT_SAFETY_TESTS)
EXTRA_DIST += $(OUTPUT_SAFETY_TESTS)
