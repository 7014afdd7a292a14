## arch/: x86-64 Linux facts as tables and pure functions: system call
## numbers and names, which calls wait, the ERESTART* results, registers
## (gdb names, DWARF numbers, argument registers, the red zone), the
## breakpoint instruction and reading gdb's disassembly. Uses nothing of
## ours, not even util.
noinst_LIBRARIES += src/arch/libarch.a
src_arch_libarch_a_CPPFLAGS = $(NO_GDB_CPPFLAGS)
src_arch_libarch_a_SOURCES = \
	src/arch/insn.c \
	src/arch/insn.h \
	src/arch/regs.c \
	src/arch/regs.h \
	src/arch/syscalls.c \
	src/arch/syscalls.h

# Every table checked against numbers the kernel and gdb use, and the
# disassembly rules on lines gdb 13 printed.
check_PROGRAMS += tests/unit/test_arch
tests_unit_test_arch_SOURCES = tests/unit/test_arch.c
tests_unit_test_arch_LDADD = $(arch_ldadd)
TESTS += tests/unit/test_arch
