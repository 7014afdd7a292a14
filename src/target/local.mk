## target/: one process under gdb's control (attach, launch, stop, resume,
## detach), signal flags, and the byte restore after gdb's death. Uses mi,
## procfs and util.
noinst_LIBRARIES += src/target/libtarget.a
src_target_libtarget_a_SOURCES = \
	src/target/restore.c \
	src/target/restore.h \
	src/target/session.c \
	src/target/session.h \
	src/target/session_mi.h \
	src/target/signals.c \
	src/target/signals.h
