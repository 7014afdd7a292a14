/* regs.h — x86-64 registers: their names in gdb, their DWARF numbers, which
 * carry a call's and a system call's arguments, and the red zone.
 *
 * Contract: pure functions over constant tables (no state, nothing of ours
 * used). A register is an enum arch_reg; users index their value arrays
 * with it (uint64_t regs[ARCH_NREGS]). Out-of-range arguments answer NULL
 * (names), -1 (DWARF numbers) or ARCH_NREGS (argument registers), never
 * a register.
 */
#ifndef XGDBPROF_ARCH_REGS_H
#define XGDBPROF_ARCH_REGS_H

#include <stddef.h>

/* The general-purpose registers in DWARF order, the PC, and orig_rax (the
 * number of the system call a thread is in, -1 outside one; Linux keeps it
 * beside the registers and gdb shows it as one). */
enum arch_reg {
	ARCH_RAX, ARCH_RDX, ARCH_RCX, ARCH_RBX, ARCH_RSI, ARCH_RDI, ARCH_RBP, ARCH_RSP,
	ARCH_R8, ARCH_R9, ARCH_R10, ARCH_R11, ARCH_R12, ARCH_R13, ARCH_R14, ARCH_R15,
	ARCH_RIP, ARCH_ORIG_RAX,
	ARCH_NREGS
};

/* gdb's name of the register ("rip", "orig_rax"), as -data-list-register-
 * names lists it; NULL for no register. */
const char *arch_reg_name(enum arch_reg reg);

/* Fills names[k] with gdb's name of regs[k], for k < n (a list to ask gdb
 * the numbers of). */
void arch_reg_names(const enum arch_reg *regs, size_t n, const char **names);

/* The register's number in the x86-64 DWARF numbering (rsp 7; rip 16, the
 * return-address column CFI unwinds); -1 for orig_rax, which DWARF does
 * not number, and for no register. */
int arch_reg_dwarf(enum arch_reg reg);

/* How many integer arguments travel in registers, for calls and for
 * system calls alike. */
#define ARCH_ARG_REGS 6

/* The register of a function's integer argument i (SysV ABI: rdi, rsi,
 * rdx, rcx, r8, r9), at the function's first instruction; ARCH_NREGS for
 * i >= ARCH_ARG_REGS. */
enum arch_reg arch_call_arg_reg(size_t i);

/* The register of a system call's argument i (rdi, rsi, rdx, r10, r8, r9);
 * ARCH_NREGS for i >= ARCH_ARG_REGS. The call's number is in orig_rax (rax
 * at entry), its result in rax. */
enum arch_reg arch_syscall_arg_reg(size_t i);

/* The bytes below rsp a function may use without moving rsp (SysV ABI):
 * leaf code keeps registers there, and its CFI says so. */
#define ARCH_RED_ZONE 128

#endif
