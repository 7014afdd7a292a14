## trace/: breakpoint and catchpoint probes, SPEC resolution
## (docs/tracing.md). Uses events, stacks, session (its typed calls:
## probes.h; no MI), symbols, procfs, arch (system call numbers, registers,
## disassembly) and util.
noinst_LIBRARIES += src/trace/libtrace.a
src_trace_libtrace_a_SOURCES = \
	src/trace/tracer.c \
	src/trace/tracer_internal.h \
	src/trace/tracer_arm.c \
	src/trace/tracer_args.c \
	src/trace/tracer_panic.c \
	src/trace/tracer_events.c \
	src/trace/tracer_cost.c \
	src/trace/tracer_budget.c \
	src/trace/tracer_estimate.c \
	src/trace/tracer.h \
	src/trace/tracer_resolve.c \
	src/trace/tracer_resolve.h \
	src/trace/stop_clock.c \
	src/trace/stop_clock.h \
	src/trace/entry_counter.c \
	src/trace/entry_counter.h \
	src/trace/syscall_sites.c \
	src/trace/syscall_sites.h

## The tracer: function/return/panic/syscall probes through gdb breakpoints
## and catchpoints; it has the session remember each breakpoint's code byte,
## which session_rescue writes back if gdb dies.

## Fixtures (built during make check) and tests.
$(FIXTURE_BIN)/trace_tree: tests/fixtures/trace_tree.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/trace_tree.rs -o $@
$(FIXTURE_BIN)/trace_panic: tests/fixtures/trace_panic.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/trace_panic.rs -o $@
$(FIXTURE_BIN)/trace_write: tests/fixtures/trace_write.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/trace_write.c
$(FIXTURE_BIN)/trace_hot: tests/fixtures/trace_hot.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/trace_hot.c
$(FIXTURE_BIN)/regs_hot: tests/fixtures/regs_hot.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/regs_hot.c
$(FIXTURE_BIN)/dlopen_loop: tests/fixtures/dlopen_loop.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/dlopen_loop.c -ldl
$(FIXTURE_BIN)/libdlopen_plugin.so: tests/fixtures/dlopen_plugin.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -shared -fPIC -o $@ $(srcdir)/tests/fixtures/dlopen_plugin.c

$(FIXTURE_BIN)/exec_later: tests/fixtures/exec_later.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/exec_later.c
$(FIXTURE_BIN)/fork_loop: tests/fixtures/fork_loop.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/fork_loop.c
$(FIXTURE_BIN)/churn: tests/fixtures/churn.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/churn.c
$(FIXTURE_BIN)/steady_calls: tests/fixtures/steady_calls.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/steady_calls.c
$(FIXTURE_BIN)/opt_args: tests/fixtures/opt_args.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) --edition 2018 -C opt-level=3 -g $(srcdir)/tests/fixtures/opt_args.rs -o $@
$(FIXTURE_BIN)/opt_args_c: tests/fixtures/opt_args_c.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O2 -g -o $@ $(srcdir)/tests/fixtures/opt_args_c.c
$(FIXTURE_BIN)/sleepers: tests/fixtures/sleepers.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/sleepers.c
$(FIXTURE_BIN)/futex_pairs: tests/fixtures/futex_pairs.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/futex_pairs.c
$(FIXTURE_BIN)/handler_frames: tests/fixtures/handler_frames.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/handler_frames.c

check_DATA += $(FIXTURE_BIN)/trace_tree $(FIXTURE_BIN)/trace_panic $(FIXTURE_BIN)/trace_write \
	$(FIXTURE_BIN)/trace_hot $(FIXTURE_BIN)/regs_hot $(FIXTURE_BIN)/dlopen_loop $(FIXTURE_BIN)/libdlopen_plugin.so \
	$(FIXTURE_BIN)/exec_later $(FIXTURE_BIN)/fork_loop $(FIXTURE_BIN)/churn $(FIXTURE_BIN)/sleepers $(FIXTURE_BIN)/steady_calls \
	$(FIXTURE_BIN)/opt_args $(FIXTURE_BIN)/opt_args_c $(FIXTURE_BIN)/futex_pairs $(FIXTURE_BIN)/handler_frames
CLEANFILES += $(FIXTURE_BIN)/trace_tree $(FIXTURE_BIN)/trace_panic $(FIXTURE_BIN)/trace_write \
	$(FIXTURE_BIN)/trace_hot $(FIXTURE_BIN)/regs_hot $(FIXTURE_BIN)/dlopen_loop $(FIXTURE_BIN)/libdlopen_plugin.so \
	$(FIXTURE_BIN)/exec_later $(FIXTURE_BIN)/fork_loop $(FIXTURE_BIN)/churn $(FIXTURE_BIN)/sleepers $(FIXTURE_BIN)/steady_calls \
	$(FIXTURE_BIN)/opt_args $(FIXTURE_BIN)/opt_args_c $(FIXTURE_BIN)/futex_pairs $(FIXTURE_BIN)/handler_frames

check_PROGRAMS += tests/unit/test_tracer tests/unit/test_tracer_codecheck tests/unit/test_tracer_estimate
tests_unit_test_tracer_SOURCES = tests/unit/test_tracer.c
tests_unit_test_tracer_LDADD = $(trace_ldadd)
tests_unit_test_tracer_estimate_SOURCES = tests/unit/test_tracer_estimate.c
tests_unit_test_tracer_estimate_LDADD = $(trace_ldadd)
tests_unit_test_tracer_codecheck_SOURCES = tests/unit/test_tracer_codecheck.c
tests_unit_test_tracer_codecheck_LDADD = $(session_ldadd)

TESTS += tests/unit/test_tracer tests/unit/test_tracer_estimate \
	tests/trace_tree.sh tests/trace_panic.sh tests/trace_syscalls.sh tests/trace_safety.sh \
	tests/trace_budget.sh tests/trace_registers.sh tests/gdb_lost.sh tests/exec_fork.sh tests/trace_exact.sh tests/trace_hold.sh tests/trace_estimate.sh tests/trace_args.sh \
	tests/trace_syscalls_attach.sh tests/trace_counted.sh tests/alloc_counted.sh tests/syscall_counts.sh \
	tests/syscall_futex.sh tests/signal_frame.sh tests/budget_in_place.sh
EXTRA_DIST += tests/trace_tree.sh tests/trace_panic.sh tests/trace_syscalls.sh tests/trace_safety.sh \
	tests/trace_budget.sh tests/trace_registers.sh tests/fixtures/regs_hot.c \
	tests/gdb_lost.sh tests/fixtures/dlopen_loop.c tests/fixtures/dlopen_plugin.c \
	tests/exec_fork.sh tests/fixtures/exec_later.c tests/fixtures/fork_loop.c tests/trace_exact.sh tests/trace_hold.sh \
	tests/trace_estimate.sh tests/fixtures/steady_calls.c tests/trace_args.sh tests/fixtures/opt_args.rs \
	tests/fixtures/opt_args_c.c tests/trace_syscalls_attach.sh tests/trace_counted.sh tests/alloc_counted.sh tests/syscall_counts.sh \
	tests/syscall_futex.sh tests/fixtures/futex_pairs.c tests/signal_frame.sh tests/fixtures/handler_frames.c tests/budget_in_place.sh \
	bench/entry_counter.sh bench/entry_counter_cost.c bench/panics.sh

## Issue 14 item 4: a hit stops only the thread that hit (non-stop tracing).
$(FIXTURE_BIN)/spin_hit: tests/fixtures/spin_hit.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/spin_hit.c
check_DATA += $(FIXTURE_BIN)/spin_hit
CLEANFILES += $(FIXTURE_BIN)/spin_hit
TESTS += tests/trace_nonstop.sh
EXTRA_DIST += tests/trace_nonstop.sh tests/fixtures/spin_hit.c

## Issue 16: allocations by stack (alloc recipe) and what stays allocated (heap).
$(FIXTURE_BIN)/alloc_sites: tests/fixtures/alloc_sites.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/alloc_sites.c
check_DATA += $(FIXTURE_BIN)/alloc_sites
CLEANFILES += $(FIXTURE_BIN)/alloc_sites
TESTS += tests/alloc.sh
EXTRA_DIST += tests/alloc.sh tests/fixtures/alloc_sites.c bench/alloc.sh
# a leak made at start: the heap recipe's estimate bounded by the heap's census
$(FIXTURE_BIN)/leak_burst: tests/fixtures/leak_burst.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/leak_burst.c
check_DATA += $(FIXTURE_BIN)/leak_burst
CLEANFILES += $(FIXTURE_BIN)/leak_burst
TESTS += tests/heap_burst.sh
EXTRA_DIST += tests/heap_burst.sh tests/fixtures/leak_burst.c

## Issue 16: heap snapshots inside a run and their diff; the heap estimate
## under the budget (heap_growth); allocation truth in Rust (alloc_rust).
$(FIXTURE_BIN)/heap_growth: tests/fixtures/heap_growth.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -o $@ $(srcdir)/tests/fixtures/heap_growth.c
check_DATA += $(FIXTURE_BIN)/heap_growth
CLEANFILES += $(FIXTURE_BIN)/heap_growth
TESTS += tests/heap_snapshot.sh
EXTRA_DIST += tests/heap_snapshot.sh tests/fixtures/heap_growth.c

$(FIXTURE_BIN)/alloc_rust: tests/fixtures/alloc_rust.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/alloc_rust.rs -o $@
check_DATA += $(FIXTURE_BIN)/alloc_rust
CLEANFILES += $(FIXTURE_BIN)/alloc_rust
TESTS += tests/alloc_rust.sh
EXTRA_DIST += tests/alloc_rust.sh tests/fixtures/alloc_rust.rs

## Issue 16 item 3: lock wait and hold (locks recipe), fixtures with known contention.
$(FIXTURE_BIN)/locks_c: tests/fixtures/locks_c.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/locks_c.c
$(FIXTURE_BIN)/locks_rust: tests/fixtures/locks_rust.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/locks_rust.rs -o $@
$(FIXTURE_BIN)/own_clock: tests/fixtures/own_clock.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/own_clock.c
check_DATA += $(FIXTURE_BIN)/locks_c $(FIXTURE_BIN)/locks_rust $(FIXTURE_BIN)/own_clock
CLEANFILES += $(FIXTURE_BIN)/locks_c $(FIXTURE_BIN)/locks_rust $(FIXTURE_BIN)/own_clock
TESTS += tests/locks.sh tests/locks_rw.sh tests/target_clock.sh tests/locks_output_dir.sh tests/locks_malloc_arena.sh
EXTRA_DIST += tests/locks.sh tests/locks_rw.sh tests/target_clock.sh tests/locks_output_dir.sh tests/locks_malloc_arena.sh tests/fixtures/own_clock.c tests/fixtures/locks_c.c tests/fixtures/locks_rust.rs bench/locks.sh

# Panics keep to the budget (issue 26 item 5): a service panicking 200
# times a second, counting its panics itself.
$(FIXTURE_BIN)/panic_storm: tests/fixtures/panic_storm.rs $(FIXTURE_BIN)/.dirstamp
	$(AM_V_GEN)$(RUSTC_QUIET) $(RUSTFLAGS_FIXTURE) $(srcdir)/tests/fixtures/panic_storm.rs -o $@
check_DATA += $(FIXTURE_BIN)/panic_storm
CLEANFILES += $(FIXTURE_BIN)/panic_storm
TESTS += tests/trace_panic_budget.sh
EXTRA_DIST += tests/trace_panic_budget.sh tests/fixtures/panic_storm.rs
