## stacks/: the sampler (periodic stops, registers through gdb, libdwfl
## unwinding) and the stop clock. Uses target, symbols, procfs, util.
noinst_LIBRARIES += src/stacks/libstacks.a
src_stacks_libstacks_a_SOURCES = \
	src/stacks/sampler.c \
	src/stacks/sampler.h \
	src/stacks/stop_clock.c \
	src/stacks/stop_clock.h \
	src/stacks/unwind.c \
	src/stacks/unwind.h
