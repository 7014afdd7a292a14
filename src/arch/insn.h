/* insn.h — x86-64 instructions as gdb shows them: what the tracer must know
 * of an instruction before it puts a breakpoint on it, and the breakpoint
 * instruction itself.
 *
 * Contract: pure functions of one instruction's text as gdb's
 * -data-disassemble prints it ("inst": mnemonic, operands, then maybe
 * gdb's comment "# 0x401c <counter>"), in AT&T or Intel syntax alike. No
 * state, nothing of ours used. NULL or empty text answers false: what an
 * instruction nobody could read means is the caller's decision.
 */
#ifndef XGDBPROF_ARCH_INSN_H
#define XGDBPROF_ARCH_INSN_H

#include <stdbool.h>
#include <stdint.h>

/* int3, the one-byte instruction a software breakpoint writes over the
 * first byte of the instruction. A thread that executed it traps with its
 * PC ARCH_BREAKPOINT_LEN bytes past it. */
#define ARCH_BREAKPOINT_INSN 0xCC
#define ARCH_BREAKPOINT_LEN 1

/* Whether the instruction has a RIP-relative memory operand: "(%rip)"
 * (AT&T: "add 0x2eae(%rip),%ebx", "jmp *0x10(%rip)") or "[rip+...]",
 * "[rip-...]", "[rip]" (Intel: "add ebx,DWORD PTR [rip+0x2eae]"). Only the
 * operands count: gdb's comment and symbol names ("call 0x1142 <strip>")
 * do not. Relative jumps and calls ("call 0x1142") are not RIP-relative
 * operands in this sense. */
bool arch_insn_rip_relative(const char *text);

/* Whether gdb's text is a conditional jump on the flags ("je 0x…", "jne",
 * "js", …): not jmp, not jrcxz/jecxz/jcxz, not a prefixed form. */
bool arch_insn_conditional_jump(const char *text);

/* Whether the instruction does not fall through to the next one: a jump
 * (any j* mnemonic), a return, a loop, bnd- or notrack-prefixed branches;
 * or makes the next one a callee's return address (a call). */
bool arch_insn_transfers_control(const char *text);

/* The target of a direct branch or call as gdb prints it ("jne 0x4011a6
 * <f+38>", "call 0x401020 <g>", "bnd jmp 0x..."): true and *to; false for
 * any other instruction (an indirect one included). */
bool arch_insn_direct_target(const char *text, uint64_t *to);

#endif
