/* insn.c — reading gdb's x86-64 disassembly (see insn.h). */
#include "arch/insn.h"

#include <stdlib.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool arch_insn_rip_relative(const char *text)
{
	if (!text)
		return false;
	/* The operands end where gdb's comment ("# 0x401c <counter>") or a
	 * branch target's symbol ("<strip>") begins; neither character occurs
	 * in an operand of either syntax. */
	size_t operands = strcspn(text, "#<");
	for (size_t i = 0; i < operands; i++) {
		const char *p = text + i;
		if (starts_with(p, "(%rip)"))
			return true;
		if (starts_with(p, "[rip") && (p[4] == '+' || p[4] == '-' || p[4] == ']'))
			return true;
	}
	return false;
}

bool arch_insn_conditional_jump(const char *text)
{
	if (!text || text[0] != 'j' || starts_with(text, "jmp") || starts_with(text, "jrcxz") ||
	    starts_with(text, "jecxz") || starts_with(text, "jcxz"))
		return false;
	size_t n = strcspn(text, " \t");
	return n >= 2 && n <= 4;
}

bool arch_insn_transfers_control(const char *text)
{
	if (!text)
		return false;
	return text[0] == 'j' || starts_with(text, "call") || starts_with(text, "ret") || starts_with(text, "loop") ||
	       starts_with(text, "bnd") || starts_with(text, "notrack");
}

bool arch_insn_direct_target(const char *text, uint64_t *to)
{
	if (!arch_insn_transfers_control(text))
		return false;
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *word = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		size_t len = (size_t)(p - word);
		if (len == 0)
			return false;
		bool prefix = (len == 3 && !strncmp(word, "bnd", 3)) || (len == 7 && !strncmp(word, "notrack", 7)) ||
			      (len == 4 && !strncmp(word, "lock", 4)) || (len == 2 && !strncmp(word, "ds", 2)) ||
			      !strncmp(word, "rep", 3);
		if (!prefix)
			break;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "0x", 2) != 0)
		return false;
	char *end;
	unsigned long long v = strtoull(p, &end, 16);
	if (end == p + 2)
		return false;
	*to = v;
	return true;
}
