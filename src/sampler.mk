## The sampler: periodic stops, register reads through gdb, libdwfl unwinding.
libxgdbprof_a_SOURCES += src/sampler.c src/sampler.h
