## session/: one process under gdb's control (attach, launch, stop, resume,
## detach), signal flags, and the byte restore after gdb's death. Uses mi,
## procfs, arch (the breakpoint instruction) and util.
noinst_LIBRARIES += src/session/libsession.a
src_session_libsession_a_SOURCES = \
	src/session/restore.c \
	src/session/restore.h \
	src/session/session.c \
	src/session/session.h \
	src/session/session_internal.h \
	src/session/session_probes.c \
	src/session/session_gdb.c \
	src/session/session_exec.c \
	src/session/session_stop.c \
	src/session/probes.h \
	src/session/signals.c \
	src/session/signals.h \
	src/session/jemalloc_call.c \
	src/session/jemalloc_call.h \
	src/session/target_call.c \
	src/session/target_call.h

# gdb's stop records into struct session_stop, from canned lines.
check_PROGRAMS += tests/unit/test_session_stop
tests_unit_test_session_stop_SOURCES = tests/unit/test_session_stop.c
tests_unit_test_session_stop_LDADD = $(session_ldadd)
TESTS += tests/unit/test_session_stop

# jemalloc's mallctl called through gdb on a live tokio + jemalloc fixture.
check_PROGRAMS += tests/unit/test_jemalloc_live
tests_unit_test_jemalloc_live_SOURCES = tests/unit/test_jemalloc_live.c
tests_unit_test_jemalloc_live_LDADD = $(session_ldadd) $(symbols_ldadd)
TESTS += tests/unit/test_jemalloc_live
