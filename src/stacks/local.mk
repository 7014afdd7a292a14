## stacks/: the sampler (periodic stops, registers through gdb, libdwfl
## unwinding). Uses events, session, symbols, procfs, arch (registers,
## DWARF numbers, the red zone, which system calls wait) and util.
noinst_LIBRARIES += src/stacks/libstacks.a
src_stacks_libstacks_a_SOURCES = \
	src/stacks/sampler.c \
	src/stacks/sampler_internal.h \
	src/stacks/sampler_walk.c \
	src/stacks/sampler_policy.c \
	src/stacks/sampler.h \
	src/stacks/unwind.c \
	src/stacks/unwind.h \
	src/stacks/weighed.c \
	src/stacks/weighed.h

check_PROGRAMS += tests/unit/test_sampler_policy
tests_unit_test_sampler_policy_SOURCES = tests/unit/test_sampler_policy.c
tests_unit_test_sampler_policy_LDADD = $(stacks_ldadd)
TESTS += tests/unit/test_sampler_policy

## On-CPU truth: a lock-contention fixture, and the test holding the
## sampler to perf's account of what was on the CPU.
$(FIXTURE_BIN)/contend: tests/fixtures/contend.c $(FIXTURE_BIN)/.dirstamp
	$(AM_V_CC)$(CC) -O1 -g -pthread -o $@ $(srcdir)/tests/fixtures/contend.c
check_DATA += $(FIXTURE_BIN)/contend
CLEANFILES += $(FIXTURE_BIN)/contend
TESTS += tests/oncpu.sh
EXTRA_DIST += tests/oncpu.sh

## One thread at a time (gdb non-stop): the rate each busy thread gets at
## the per-thread budget, and no thread left stopped through thread churn,
## the target's exit and Ctrl-C mid-run.
TESTS += tests/nonstop.sh
EXTRA_DIST += tests/nonstop.sh
