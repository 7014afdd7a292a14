## Tracer: function/return/panic/syscall probes through gdb breakpoints and
## catchpoints, with byte restoration if gdb dies (issue 6).
libxgdbprof_a_SOURCES += \
	src/restore.c src/restore.h \
	src/tracer_resolve.c src/tracer_resolve.h \
	src/cmd_probes.c
libxgdbprof_a_SOURCES += \
	src/tracer.c src/tracer.h src/tracer_syscalls.h
