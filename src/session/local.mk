## session/: one process under gdb's control (attach, launch, stop, resume,
## detach), signal flags, and the byte restore after gdb's death. Uses mi,
## procfs and util.
noinst_LIBRARIES += src/session/libsession.a
src_session_libsession_a_SOURCES = \
	src/session/restore.c \
	src/session/restore.h \
	src/session/session.c \
	src/session/session.h \
	src/session/session_mi.h \
	src/session/signals.c \
	src/session/signals.h
