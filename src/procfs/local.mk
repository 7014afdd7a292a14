## procfs/: what /proc says about a process, read without ptrace. Uses util.
noinst_LIBRARIES += src/procfs/libprocfs.a
src_procfs_libprocfs_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_procfs_libprocfs_a_SOURCES = \
	src/procfs/proc.c \
	src/procfs/proc.h \
	src/procfs/proc_parse.c \
	src/procfs/proc_parse.h \
	src/procfs/glibc_heap.c \
	src/procfs/glibc_heap.h \
	src/procfs/jemalloc_profile.c \
	src/procfs/jemalloc_profile.h

check_PROGRAMS += tests/unit/test_procfs
tests_unit_test_procfs_SOURCES = tests/unit/test_procfs.c
tests_unit_test_procfs_CPPFLAGS = $(NO_GDB_CPPFLAGS)
tests_unit_test_procfs_LDADD = $(procfs_ldadd)
TESTS += tests/unit/test_procfs
check_PROGRAMS += tests/unit/test_glibc_heap
tests_unit_test_glibc_heap_SOURCES = tests/unit/test_glibc_heap.c
tests_unit_test_glibc_heap_CPPFLAGS = $(NO_GDB_CPPFLAGS)
tests_unit_test_glibc_heap_LDADD = $(procfs_ldadd)
TESTS += tests/unit/test_glibc_heap
# the glibc heap census on threads' arenas, end to end (the heap recipe)
TESTS += tests/heap_census.sh
EXTRA_DIST += tests/heap_census.sh

check_PROGRAMS += tests/unit/test_jemalloc_profile
tests_unit_test_jemalloc_profile_SOURCES = tests/unit/test_jemalloc_profile.c
tests_unit_test_jemalloc_profile_CPPFLAGS = $(NO_GDB_CPPFLAGS)
tests_unit_test_jemalloc_profile_LDADD = $(procfs_ldadd)
TESTS += tests/unit/test_jemalloc_profile
