## procfs/: what /proc says about a process, read without ptrace. Uses util.
noinst_LIBRARIES += src/procfs/libprocfs.a
src_procfs_libprocfs_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_procfs_libprocfs_a_SOURCES = \
	src/procfs/proc.c \
	src/procfs/proc.h \
	src/procfs/glibc_heap.c \
	src/procfs/glibc_heap.h
