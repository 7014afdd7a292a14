/* regs.c — the x86-64 register tables (see regs.h). */
#include "arch/regs.h"

#include <stdbool.h>

static const struct reg_fact {
	const char *name;   /* gdb's */
	int dwarf;          /* x86-64 DWARF register number, -1 none */
} reg_facts[ARCH_NREGS] = {
	[ARCH_RAX] = { "rax", 0 },   [ARCH_RDX] = { "rdx", 1 },   [ARCH_RCX] = { "rcx", 2 },
	[ARCH_RBX] = { "rbx", 3 },   [ARCH_RSI] = { "rsi", 4 },   [ARCH_RDI] = { "rdi", 5 },
	[ARCH_RBP] = { "rbp", 6 },   [ARCH_RSP] = { "rsp", 7 },   [ARCH_R8] = { "r8", 8 },
	[ARCH_R9] = { "r9", 9 },     [ARCH_R10] = { "r10", 10 },  [ARCH_R11] = { "r11", 11 },
	[ARCH_R12] = { "r12", 12 },  [ARCH_R13] = { "r13", 13 },  [ARCH_R14] = { "r14", 14 },
	[ARCH_R15] = { "r15", 15 },  [ARCH_RIP] = { "rip", 16 },  [ARCH_ORIG_RAX] = { "orig_rax", -1 },
};

static const enum arch_reg call_args[ARCH_ARG_REGS] = { ARCH_RDI, ARCH_RSI, ARCH_RDX, ARCH_RCX, ARCH_R8, ARCH_R9 };
static const enum arch_reg syscall_args[ARCH_ARG_REGS] = { ARCH_RDI, ARCH_RSI, ARCH_RDX, ARCH_R10, ARCH_R8, ARCH_R9 };

static bool is_register(enum arch_reg reg)
{
	return (unsigned)reg < ARCH_NREGS;
}

const char *arch_reg_name(enum arch_reg reg)
{
	return is_register(reg) ? reg_facts[reg].name : NULL;
}

void arch_reg_names(const enum arch_reg *regs, size_t n, const char **names)
{
	for (size_t k = 0; k < n; k++)
		names[k] = arch_reg_name(regs[k]);
}

int arch_reg_dwarf(enum arch_reg reg)
{
	return is_register(reg) ? reg_facts[reg].dwarf : -1;
}

enum arch_reg arch_call_arg_reg(size_t i)
{
	return i < ARCH_ARG_REGS ? call_args[i] : ARCH_NREGS;
}

enum arch_reg arch_syscall_arg_reg(size_t i)
{
	return i < ARCH_ARG_REGS ? syscall_args[i] : ARCH_NREGS;
}
