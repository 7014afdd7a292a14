## End-to-end tests of the tool, and the fixtures they run (built during make check).
FIXTURE_BIN = tests/fixtures/bin
RUSTFLAGS_FIXTURE = --edition 2018 -C opt-level=2 -g

$(FIXTURE_BIN)/.dirstamp:
	@$(MKDIR_P) $(FIXTURE_BIN) && touch $@

$(FIXTURE_BIN)/counter: tests/fixtures/counter.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/counter.c

$(FIXTURE_BIN)/ratio: tests/fixtures/ratio.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/ratio.c

# tests/insights.sh: the hot function switched between runs (argv, SIGUSR1)
$(FIXTURE_BIN)/switch_hot: tests/fixtures/switch_hot.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/switch_hot.c
check_DATA += $(FIXTURE_BIN)/switch_hot
CLEANFILES += $(FIXTURE_BIN)/switch_hot
TESTS += tests/insights.sh
EXTRA_DIST += tests/insights.sh

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

# The realistic fixture: a cargo project (a worker pool, parking_lot locks,
# a B-tree store; docs/testing.md) built offline against Debian's Rust
# crates, once with rustc's default (legacy) symbol mangling and once with
# v0, each in its own work dir under tests/fixtures/cargo/.
KVSERVICE_FILES = tests/fixtures/kvservice/Cargo.toml tests/fixtures/kvservice/src/main.rs \
	tests/fixtures/kvservice/src/lib.rs tests/fixtures/kvservice/src/counters.rs \
	tests/fixtures/kvservice/src/store.rs tests/fixtures/kvservice/src/tree.rs \
	tests/fixtures/cargo_build.sh
CARGO_FIXTURE = CARGO='$(CARGO)' RUSTC='$(RUSTC)' $(SHELL) $(srcdir)/tests/fixtures/cargo_build.sh

$(FIXTURE_BIN)/kvservice: $(KVSERVICE_FILES) $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(CARGO_FIXTURE) $(abs_srcdir)/tests/fixtures/kvservice tests/fixtures/cargo/kvservice legacy $@

$(FIXTURE_BIN)/kvservice-v0: $(KVSERVICE_FILES) $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(CARGO_FIXTURE) $(abs_srcdir)/tests/fixtures/kvservice tests/fixtures/cargo/kvservice-v0 v0 $@

check_DATA += $(FIXTURE_BIN)/kvservice $(FIXTURE_BIN)/kvservice-v0
CLEANFILES += $(FIXTURE_BIN)/kvservice $(FIXTURE_BIN)/kvservice-v0
clean-local: clean-cargo-fixtures
clean-cargo-fixtures:
	rm -rf tests/fixtures/cargo
.PHONY: clean-cargo-fixtures

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
	tests/canary.sh \
	tests/report_width.sh
TESTS += $(LEAD_TESTS)
EXTRA_DIST += tests/lib.sh tests/harm_check.sh $(LEAD_TESTS)

## Issue 13: hot-cpu against perf on the realistic fixture (kvservice).
## Fails before issue 13's on-CPU, rate and hottest-path work lands (its
## figures then: bench/README.md, "fidelity.sh").
FIDELITY_TESTS = tests/fidelity.sh
TESTS += $(FIDELITY_TESTS)
EXTRA_DIST += $(FIDELITY_TESTS)

## Issue 25/28: mallctl calls sent through our own stub survive gdb's and
## xgdbprof's death mid-call (session/target_call.h).
$(FIXTURE_BIN)/slow_mallctl: tests/fixtures/slow_mallctl.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O2 -g -pthread -o $@ $(srcdir)/tests/fixtures/slow_mallctl.c
check_DATA += $(FIXTURE_BIN)/slow_mallctl
CLEANFILES += $(FIXTURE_BIN)/slow_mallctl
TESTS += tests/jemalloc_call_harm.sh
EXTRA_DIST += tests/fixtures/slow_mallctl.c tests/jemalloc_call_harm.sh

## Where a stop lands: a later system call's return is not where the thread was.
TESTS += tests/landing.sh
EXTRA_DIST += tests/landing.sh

## Issue 13 item 2: hot-cpu weighs each sample by its thread's CPU time.
$(FIXTURE_BIN)/cpu_split: tests/fixtures/cpu_split.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/cpu_split.c
check_DATA += $(FIXTURE_BIN)/cpu_split
CLEANFILES += $(FIXTURE_BIN)/cpu_split
EXTRA_DIST += tests/fixtures/cpu_split.c
TESTS += tests/cpu_weight.sh
EXTRA_DIST += tests/cpu_weight.sh

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
check_PROGRAMS += tests/unit/test_text_fit
tests_unit_test_text_fit_SOURCES = tests/unit/test_text_fit.c
tests_unit_test_text_fit_LDADD = $(util_ldadd)
TESTS += tests/unit/test_text_fit
EXTRA_DIST += $(OUTPUT_SAFETY_TESTS)

## Issue 15 item 3: continuous profiling (--every), docs/continuous.md.
CONTINUOUS_TESTS = tests/continuous.sh
TESTS += $(CONTINUOUS_TESTS)
EXTRA_DIST += $(CONTINUOUS_TESTS)

## Issue 17 item 2: `xgdbprof top`, the live view, driven in tmux (docs/top.md).
TOP_TESTS = tests/top.sh
TESTS += $(TOP_TESTS)
EXTRA_DIST += $(TOP_TESTS)

## The layer rule of docs/design.md for every folder: includes and the
## symbols each library leaves undefined against the diagram's arrows.
TESTS += tests/layers.sh
EXTRA_DIST += tests/layers.sh tests/layers.py

## The never-harm issue's reliability items (docs/safety.md): a stopped
## guardian is not waited on for ever; a target that ends by itself is
## reported as it ended.
RELIABILITY_TESTS = tests/guardian.sh tests/target_exits.sh
RELIABILITY_TESTS += tests/trap_pending.sh tests/xg_stopped.sh tests/stripped_name.sh
RELIABILITY_TESTS += tests/gdb_reattach.sh tests/stop_storm.sh
## Item 7: a 200-thread target (its fixture built by the test itself): a
## run ends within a second of its duration or says why, and a target that
## ends mid-run still has its samples written. It times runs: alone.
RELIABILITY_TESTS += tests/many_threads.sh
TESTS += $(RELIABILITY_TESTS)
EXTRA_DIST += $(RELIABILITY_TESTS) tests/fixtures/gdb_losing_stops.py tests/fixtures/many_threads.c tests/fixtures/forks_after_main.c

# Source jumps into editors: `open`, --links=EDITOR (issue 29, item 1).
EDITOR_TESTS = tests/editor_links.sh
TESTS += $(EDITOR_TESTS)
EXTRA_DIST += $(EDITOR_TESTS)

# Async Rust reads as async (issue 29, item 9): a std-only executor polling
# async fns, built with legacy and v0 mangling.
$(FIXTURE_BIN)/async_names: tests/fixtures/async_names.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) --edition 2021 -C opt-level=2 -g $(srcdir)/tests/fixtures/async_names.rs -o $@
$(FIXTURE_BIN)/async_names_v0: tests/fixtures/async_names.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) --edition 2021 -C opt-level=2 -g -C symbol-mangling-version=v0 \
		$(srcdir)/tests/fixtures/async_names.rs -o $@
ASYNC_TESTS = tests/async_names.sh
check_DATA += $(FIXTURE_BIN)/async_names $(FIXTURE_BIN)/async_names_v0
CLEANFILES += $(FIXTURE_BIN)/async_names $(FIXTURE_BIN)/async_names_v0
TESTS += $(ASYNC_TESTS)
EXTRA_DIST += $(ASYNC_TESTS) tests/fixtures/async_names.rs

# Byte-weighted heap evidence on glibc (the heap-growth recipe) against a
# churn-plus-leak fixture that prints its own counts (docs/alloc.md,
# "Byte-weighted evidence on glibc").
$(FIXTURE_BIN)/glibc_churn: tests/fixtures/glibc_churn.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/glibc_churn.c
check_DATA += $(FIXTURE_BIN)/glibc_churn
CLEANFILES += $(FIXTURE_BIN)/glibc_churn
GLIBC_MEM_TESTS = tests/glibc_heap_growth.sh
TESTS += $(GLIBC_MEM_TESTS)
EXTRA_DIST += $(GLIBC_MEM_TESTS)

# A fleet view (issue 30): continuous mode's --metrics-file read by a real
# Prometheus through the node exporter's textfile collector.
PROMETHEUS_TESTS = tests/prometheus.sh
TESTS += $(PROMETHEUS_TESTS)
EXTRA_DIST += $(PROMETHEUS_TESTS)

## Issue 31 item 4: end-to-end tests that may run beside another under
## ./dev test's `make -j2 check` (tests/timed-driver's lock): exact checks
## only, no rate, duration or CPU share. A new test runs alone unless it is
## added here; add it only if nothing it checks depends on the CPU it gets.
PARALLEL_SAFE_TESTS += tests/cli.sh tests/bad_input.sh tests/dump.sh tests/names.sh \
	tests/recipes.sh tests/recipe-docs.sh tests/output_files.sh tests/hostile_text.sh \
	tests/report_width.sh tests/symbol_fallbacks.sh tests/deep_stacks.sh \
	tests/trace_registers.sh tests/gdb_lost.sh tests/trace_args.sh tests/trace_panic.sh \
	tests/trace_safety.sh tests/recursion.sh tests/layers.sh tests/safety.sh \
	tests/fuzz/recipe-corpus.sh tests/fuzz/replay_mi_parse.sh
## Also two at a time: tests whose figures are judged against the program's
## own count over the same run (strace -c, the fixture's counters, jemalloc's
## profile, pprof reading our file), which a second test's load slows on both
## sides alike, and which must hold under load anyway (the loaded suite runs).
PARALLEL_SAFE_TESTS += tests/jemalloc_heap.sh tests/alloc_jemalloc.sh tests/alloc_rust.sh \
	tests/alloc_counted.sh tests/jemalloc_call_harm.sh tests/insights.sh \
	tests/syscall_counts.sh tests/syscall_futex.sh tests/trace_syscalls_attach.sh tests/pprof.sh \
	tests/locks_malloc_arena.sh tests/locks_output_dir.sh tests/async_names.sh \
	tests/shipped_recipes.sh tests/svg_chromium.sh tests/stripped_name.sh \
	tests/editor_links.sh tests/prometheus.sh tests/trace_counted.sh tests/heap_burst.sh \
	tests/heap_snapshot.sh tests/glibc_heap_growth.sh tests/alloc.sh tests/trace_nonstop.sh \
	tests/heap_census.sh
## Also two at a time (2026-12-04, to keep ./dev test within 15 minutes):
## reliability tests whose checks are states (left running, stopped,
## detached, code bytes, what stderr says) with waits of seconds, which
## pass beside two CPU loops in the loaded suite runs (docs/testing.md).
## Not exec_fork.sh: beside another test its spawn case met gdb 13's hang
## at a stop during a vfork (src/session/session_stop.c, wait_for_no_vfork)
## in 1 of 3 suite runs; alone, in none of ~15.
PARALLEL_SAFE_TESTS += tests/guardian.sh tests/canary.sh tests/target_exits.sh \
	tests/xg_stopped.sh tests/continuous.sh tests/gdb_reattach.sh tests/stop_storm.sh

# elapsed by the kernel's account of the thread (issue 26 item 2): a thread
# pool whose handler times itself.
$(FIXTURE_BIN)/timed_calls: tests/fixtures/timed_calls.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/timed_calls.c
check_DATA += $(FIXTURE_BIN)/timed_calls
CLEANFILES += $(FIXTURE_BIN)/timed_calls
LATENCY_TESTS = tests/trace_latency.sh
TESTS += $(LATENCY_TESTS)
EXTRA_DIST += $(LATENCY_TESTS) tests/fixtures/timed_calls.c

# CPU truth where stops land late (issue 32): a lock, compute and a copy
# into fresh pages, each phase timed by the thread's own CPU clock.
$(FIXTURE_BIN)/phase_mix: tests/fixtures/phase_mix.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -fno-builtin-memcpy -o $@ $(srcdir)/tests/fixtures/phase_mix.c
check_DATA += $(FIXTURE_BIN)/phase_mix
CLEANFILES += $(FIXTURE_BIN)/phase_mix
EXTRA_DIST += tests/fixtures/phase_mix.c
TESTS += tests/phase_mix.sh
EXTRA_DIST += tests/phase_mix.sh

# jemalloc's own heap profile read live (issue 25 item 1): a tokio service
# whose global allocator is the system's jemalloc (-ljemalloc), built offline
# against Debian's librust-tokio-dev; it prints its own counts every second.
JEMSERVICE_FILES = tests/fixtures/jemservice/Cargo.toml tests/fixtures/jemservice/src/main.rs \
	tests/fixtures/cargo_build.sh
$(FIXTURE_BIN)/jemservice: $(JEMSERVICE_FILES) $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(CARGO_FIXTURE) $(abs_srcdir)/tests/fixtures/jemservice tests/fixtures/cargo/jemservice legacy $@
check_DATA += $(FIXTURE_BIN)/jemservice
CLEANFILES += $(FIXTURE_BIN)/jemservice
EXTRA_DIST += $(JEMSERVICE_FILES)
JEMALLOC_TESTS = tests/jemalloc_heap.sh tests/alloc_jemalloc.sh
TESTS += $(JEMALLOC_TESTS)
EXTRA_DIST += $(JEMALLOC_TESTS)
