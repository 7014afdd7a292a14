/* entry_counter.c — a counting trampoline at a function's first block
 * (entry_counter.h). */
#include "trace/entry_counter.h"
#include "arch/insn.h"
#include "arch/syscalls.h"
#include "procfs/proc.h"
#include "session/probes.h"
#include "util/array.h"

#include <ctype.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* lea -0x80(%rsp),%rsp; pushfq; push %rax; push %rcx; the slot from
 * the stack pointer: rax = rsp >> FOLD1, rax ^= rax >> FOLD2, and $MASK,
 * shl $log2(stride) (the immediates set per counter: choose_fold);
 * the slots' address into rcx (ADDRESS_LEA: lea disp32(%rip),%rcx, or
 * ADDRESS_MOVABS: movabs $imm64,%rcx for slots in a module out of a
 * 32-bit displacement's reach, the address following), then lock incq
 * (%rcx,%rax); pop %rcx; pop %rax; popfq; lea 0x80(%rsp),%rsp. The red
 * zone below the function's stack pointer is stepped over, the flags and
 * registers kept: the jump may sit where the function already set flags it
 * tests later. Threads' stacks lie megabytes apart (2 MiB for tokio's
 * workers, 8 for glibc's default), so the hash gives each of up to 8
 * threads its own 64-byte slot: one shared counter cost 22.6 ns a call on
 * 2 busy threads here (its line bouncing between the CPUs), the slots
 * 8.7 ns, as one thread alone (bench/entry_counter.sh). */
static const uint8_t PROLOGUE[] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0x9c, 0x50, 0x51, 0x48, 0x89, 0xe0, 0x48,
				    0xc1, 0xe8, 0x15, 0x48, 0x89, 0xc1, 0x48, 0xc1, 0xe9, 0x02, 0x48, 0x31,
				    0xc8, 0x83, 0xe0, 0x07, 0xc1, 0xe0, 0x06 };
static const uint8_t ADDRESS_LEA[] = { 0x48, 0x8d, 0x0d };   /* and a rel32 */
static const uint8_t ADDRESS_MOVABS[] = { 0x48, 0xb9 };      /* and an imm64 */
#define ADDRESS_LEA_LEN (sizeof ADDRESS_LEA + 4)
#define PROLOGUE_MASK_AT 27      /* the and's immediate */
#define PROLOGUE_FOLD1_AT 14     /* shr $21,%rax's immediate */
#define PROLOGUE_FOLD2_AT 21     /* shr $2,%rcx's */
#define PROLOGUE_SHIFT_AT 30     /* the shl's: log2 of the slots' stride */
static const uint8_t INCREMENT[] = { 0xf0, 0x48, 0xff, 0x04, 0x01 };
/* With a summed argument: lock add %REG,8(%rcx,%rax), the ModRM's reg
 * field set per counter (SUM_REG_FIELD); the first instruction, which runs
 * before the jump, must leave that register as the call gave it. */
static const uint8_t SUM[] = { 0xf0, 0x48, 0x01, 0x44, 0x01, 0x08 };
#define SUM_MODRM_AT 3
static const uint8_t SUM_REG_FIELD[3] = { 7, 6, 2 };   /* arg0..arg2: rdi, rsi, rdx */
static const char *const SUM_REG_NAMES[3][4] = {
	{ "%rdi", "%edi", "%di", "%dil" }, { "%rsi", "%esi", "%si", "%sil" }, { "%rdx", "%edx", "%dx", "%dl" } };
static const uint8_t EPILOGUE[] = { 0x59, 0x58, 0x9d, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
#define JMP_LEN 5
#define MAX_FUNCTION_CHECK (256u * 1024u)

/* Whether gdb's text of an instruction names argument register arg in
 * any width ("%di" is in "%dil", "%dl" in nothing else: a whole name). */
static bool names_register(const char *text, unsigned arg)
{
	for (int r = 0; r < 4; r++) {
		const char *name = SUM_REG_NAMES[arg][r];
		size_t len = strlen(name);
		for (const char *at = strstr(text, name); at; at = strstr(at + 1, name))
			if (!isalnum((unsigned char)at[len]))
				return true;
	}
	return false;
}

/* Whether the instruction is `mov %REG,DEST` with the register only its
 * source (glibc's syscall() begins `mov %rdi,%rax`): it leaves the
 * register as the call gave it. */
static bool copies_register(const char *text, unsigned arg)
{
	bool mov = !strncmp(text, "mov", 3) &&
		   (text[3] == ' ' || text[3] == '\t' || (text[3] == 'q' && isspace((unsigned char)text[4])));
	if (!mov)
		return false;
	const char *operands = text + 3 + strspn(text + 3, "q \t");
	const char *comma = strchr(operands, ',');
	if (!comma || strchr(comma + 1, ','))
		return false;
	char source[16];
	size_t len = (size_t)(comma - operands);
	if (len >= sizeof source)
		return false;
	memcpy(source, operands, len);
	source[len] = '\0';
	return !strcmp(source, SUM_REG_NAMES[arg][0]) && !names_register(comma + 1, arg);
}

static int why(struct entry_counter *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(struct entry_counter *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	c->planned = false;
	return 0;
}

/* The counter will count calls without totalling the argument. */
static void no_sum(struct entry_counter *c, const char *reason)
{
	c->sums = false;
	snprintf(c->sum_why, sizeof c->sum_why, "%s", reason);
}

static bool fits_rel32(uint64_t from_next, uint64_t to)
{
	int64_t d = (int64_t)(to - from_next);
	return d >= INT32_MIN && d <= INT32_MAX;
}

/* The bytes loading the slots' address: an opcode and its operand. */
static size_t address_len(const struct entry_counter *c)
{
	return c->absolute ? sizeof ADDRESS_MOVABS + 8 : ADDRESS_LEA_LEN;
}

static void put_rel32(uint8_t *at, uint64_t from_next, uint64_t to)
{
	int32_t d = (int32_t)(int64_t)(to - from_next);
	memcpy(at, &d, 4);
}

/* Whether a direct branch of the function [site, site+size) lands in
 * (lo, hi), through gdb's disassembly: 1 and *from, 0 if none, -1 with e. */
static int branch_into(struct session *s, uint64_t site, uint64_t size, uint64_t lo, uint64_t hi, uint64_t *from,
		       struct xerr *e)
{
	struct session_insn *insns;
	size_t n;
	if (session_disassemble_all(s, site, site + size, &insns, &n, e) < 0)
		return -1;
	bool found = session_insns_branch_into(insns, n, lo, hi, from);
	free(insns);
	return found;
}

/* The index of the space of a module whose unused tails are slack (one
 * entry per module: known by its data tail, else its code tail), added if
 * new; -1 with e. */
static ssize_t space_add(struct entry_counter_spaces *spaces, const struct symbolizer_slack *slack, struct xerr *e)
{
	for (size_t i = 0; i < spaces->n; i++) {
		struct entry_counter_space *sp = &spaces->v[i];
		bool same = (slack->data_lo && sp->data_lo == slack->data_lo) || (slack->code_lo && sp->code_lo == slack->code_lo);
		if (!same)
			continue;
		if (!sp->code_lo && slack->code_lo) {
			sp->code_lo = slack->code_lo;
			sp->code_next = (slack->code_lo + 15) & ~(uint64_t)15;
			sp->code_end = slack->code_hi;
		}
		return (ssize_t)i;
	}
	/* 16-byte aligned code, 8-byte aligned counters */
	struct entry_counter_space sp = {
		.code_lo = slack->code_lo,
		.code_next = slack->code_lo ? (slack->code_lo + 15) & ~(uint64_t)15 : 0,
		.code_end = slack->code_hi,
		.data_lo = slack->data_lo,
		.data_next = (slack->data_lo + 7) & ~(uint64_t)7,
		.data_end = slack->data_hi,
	};
	if (ARRAY_PUSH(spaces->v, spaces->n, spaces->cap, sp) < 0)
		return xerr_oom(e);
	return (ssize_t)spaces->n - 1;
}

/* The dynamic loader allocates from the end of its own .bss to the end of
 * that page (glibc's rtld minimal malloc, from `_end`): its tail is not
 * unused (seen non-zero). */
static bool is_dynamic_loader(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	return base && (!strncmp(base, "ld-", 3) || !strncmp(base, "ld.so", 5) || !strncmp(base, "ld64.so", 7));
}

struct module_walk {
	struct symbolizer *sym;
	struct entry_counter_spaces *spaces;
	const char *program;   /* the executable's path (/proc/PID/exe), "" when unknown */
	struct xerr *e;
};

static int add_module_space(const struct symbolizer_module *m, void *arg)
{
	struct module_walk *w = arg;
	struct symbolizer_slack slack;
	struct xerr ignored;
	if (is_dynamic_loader(m->path))
		return 0;
	if (symbolizer_module_slack(w->sym, m->start, &slack, &ignored) == 1 && slack.data_hi > slack.data_lo) {
		ssize_t i = space_add(w->spaces, &slack, w->e);
		if (i < 0)
			return -1;
		w->spaces->v[i].program = w->program[0] && m->path && !strcmp(m->path, w->program);
	}
	return 0;
}

/* Room for 8 slots (64 bytes each, the first 64-aligned) at a data tail. */
static uint64_t slot_room(const struct entry_counter_space *sp)
{
	uint64_t at = (sp->data_next + 63) & ~(uint64_t)63;
	return sp->data_end > at ? sp->data_end - at : 0;
}

/* The code space for site (its module's) and the data space for its slots:
 * its module's, or, when that tail is short of 8 slots, the roomiest of any
 * module's within a 32-bit displacement of the code (addressed by lea) and
 * the program's own (libc's .bss tail holds 2; the program's may hold 8),
 * addressed whole (movabs) when out of that reach, a tail within reach
 * preferred when as roomy. Only the program's is taken out of reach: a
 * library dlopen'ed and later unloaded would leave the counting code
 * writing to memory no longer mapped (one within reach has the same risk,
 * as before). -1 with e, or why set. */
static int spaces_for(struct session *s, struct symbolizer *sym, uint64_t site, struct entry_counter_spaces *spaces,
		      struct entry_counter *c, ssize_t *code, ssize_t *data, struct xerr *e)
{
	struct symbolizer_slack slack;
	int got = symbolizer_module_slack(sym, site, &slack, e);
	if (got < 0)
		return why(c, "%s", e->msg);
	if (got == 0)
		return why(c, "its module is not known");
	struct symbolizer_module mod;
	struct xerr ignored;
	if (symbolizer_module_info(sym, site, &mod, &ignored) == 1 && is_dynamic_loader(mod.path))
		slack.data_lo = slack.data_hi = 0;   /* its code tail is fine, its data tail is rtld's heap */
	*code = space_add(spaces, &slack, e);
	if (*code < 0)
		return -1;
	*data = *code;
	if (slot_room(&spaces->v[*code]) >= 512)
		return 0;
	if (!spaces->all_modules) {
		char exe_link[64], program[4096] = "";
		snprintf(exe_link, sizeof exe_link, "/proc/%d/exe", (int)session_pid(s));
		ssize_t len = readlink(exe_link, program, sizeof program - 1);
		program[len > 0 ? len : 0] = 0;
		struct module_walk w = { sym, spaces, program, e };
		if (symbolizer_foreach_module(sym, add_module_space, &w, e) < 0)
			return -1;
		spaces->all_modules = true;
	}
	uint64_t code_at = spaces->v[*code].code_next, best = slot_room(&spaces->v[*data]);
	bool best_near = true;
	for (size_t i = 0; i < spaces->n; i++) {
		uint64_t room = slot_room(&spaces->v[i]);
		bool near = fits_rel32(code_at, spaces->v[i].data_end) && fits_rel32(code_at, spaces->v[i].data_next);
		if (!near && !spaces->v[i].program)
			continue;
		if (room > best || (room == best && near && !best_near)) {
			best = room;
			best_near = near;
			*data = (ssize_t)i;
		}
	}
	return 0;
}

/* A moved jump's length in the code: `E9 rel32`, or `0F 8X rel32`. */
static size_t jump_len(const struct entry_counter_jcc *jc)
{
	return jc->unconditional ? 5 : 6;
}

/* Where the moved instruction at addr (in [patch, end]) lies in the code:
 * each moved jump before it takes its rel32 form's length there. */
static size_t moved_offset(const struct entry_counter *c, uint64_t addr)
{
	size_t off = (size_t)(addr - c->patch);
	for (unsigned j = 0; j < c->njccs; j++)
		if (c->jccs[j].insn < addr)
			off += jump_len(&c->jccs[j]) - (size_t)(c->jccs[j].next - c->jccs[j].insn);
	return off;
}

/* Writes the moved instructions (c->original) to out, which runs at
 * out_addr: as they were, but each conditional jump as `0F 8X rel32` and a
 * final jmp as `E9 rel32`, to the same targets. 0, or -1 with why set. */
static int move_instructions(struct entry_counter *c, uint8_t *out, uint64_t out_addr, uint64_t end)
{
	uint64_t pos = c->patch;
	for (unsigned j = 0; j < c->njccs; j++) {
		struct entry_counter_jcc *jc = &c->jccs[j];
		memcpy(out + moved_offset(c, pos), c->original + (pos - c->patch), (size_t)(jc->insn - pos));
		const uint8_t *b = c->original + (jc->insn - c->patch);
		size_t len = (size_t)(jc->next - jc->insn);
		if (jc->unconditional && ((len == 2 && b[0] == 0xeb) || (len == 5 && b[0] == 0xe9))) {
			int32_t rel = 0;
			if (len == 2)
				rel = (int8_t)b[1];
			else
				memcpy(&rel, b + 1, 4);
			jc->target = jc->next + (uint64_t)(int64_t)rel;
		} else if (!jc->unconditional && len == 2 && (b[0] & 0xf0) == 0x70) {
			jc->condition = b[0] & 0x0f;
			jc->target = jc->next + (uint64_t)(int64_t)(int8_t)b[1];
		} else if (!jc->unconditional && len == 6 && b[0] == 0x0f && (b[1] & 0xf0) == 0x80) {
			int32_t rel;
			memcpy(&rel, b + 2, 4);
			jc->condition = b[1] & 0x0f;
			jc->target = jc->next + (uint64_t)(int64_t)rel;
		} else {
			why(c, "the jump at 0x%" PRIx64 " has an encoding not moved (prefixed)", jc->insn);
			return -1;
		}
		/* into the moved bytes: it would land inside the jump */
		if (jc->target >= c->patch && jc->target < end) {
			why(c, "the jump at 0x%" PRIx64 " goes into its first instructions", jc->insn);
			return -1;
		}
		size_t at = moved_offset(c, jc->insn), n = jump_len(jc);
		if (!fits_rel32(out_addr + at + n, jc->target)) {
			why(c, "the jump at 0x%" PRIx64 " cannot reach its target from the counting code", jc->insn);
			return -1;
		}
		if (jc->unconditional) {
			out[at] = 0xe9;
		} else {
			out[at] = 0x0f;
			out[at + 1] = (uint8_t)(0x80 | jc->condition);
		}
		put_rel32(out + at + n - 4, out_addr + at + n, jc->target);
		pos = jc->next;
	}
	memcpy(out + moved_offset(c, pos), c->original + (pos - c->patch), (size_t)(end - pos));
	return 0;
}

/* The code bytes a counter takes of its module's tail: its code (the
 * movabs form's, should its slots end up out of reach), 16-byte aligned
 * for the next. At a fixed 96 a counter, libc's ~3.8 KiB tail held 40. */
static uint64_t tramp_room(const struct entry_counter *c)
{
	size_t len = c->tramp_len + (c->absolute ? 0 : sizeof ADDRESS_MOVABS + 8 - ADDRESS_LEA_LEN);
	if (len > ENTRY_COUNTER_TRAMP)
		len = ENTRY_COUNTER_TRAMP;
	return (len + 15) & ~(size_t)15;
}

/* Lays out the code at the code space and the slots at the data space
 * (c->patch_len known) and reads the slots' bytes, which must be zero.
 * Returns 1 when placed, 0 when not: why set, or, when the data tail
 * turned out to be in use, that tail struck off (retry); -1 with e. */
static int place_slots(struct session *s, struct entry_counter_spaces *spaces, ssize_t code_index, ssize_t data_index,
		       struct entry_counter *c, struct xerr *e)
{
	struct entry_counter_space *sp = &spaces->v[code_index], *dsp = &spaces->v[data_index];
	c->tramp_len = (uint8_t)(sizeof PROLOGUE + ADDRESS_LEA_LEN + sizeof INCREMENT + sizeof EPILOGUE +
				 c->moved_len + JMP_LEN);
	if (c->tramp_len > ENTRY_COUNTER_TRAMP)
		return why(c, "its first instructions are too long to move");
	if (c->sums && c->tramp_len + sizeof SUM > ENTRY_COUNTER_TRAMP)
		no_sum(c, "no room left in its counting code");
	/* 8 slots, a cache line apart when the tail holds 512 bytes for
	 * each counter still to place, else closer (down to 8 bytes: threads
	 * apart, for the estimates' strata, though some then share a line);
	 * fewer only when the tail is down to under 64 bytes (libc's is 176:
	 * valloc took 128 of it, and free and malloc found none) */
	uint64_t at8 = (dsp->data_next + 7) & ~(uint64_t)7, at64 = (dsp->data_next + 63) & ~(uint64_t)63;
	uint64_t room = dsp->data_end > at8 ? dsp->data_end - at8 : 0;
	/* this one and those to come; at least 8 slots of 8 bytes while the
	 * tail lasts (the strata keep a rare caller's thread apart: with 2
	 * slots glibc_churn's leak thread shared a churner's) */
	uint64_t share = room / (spaces->to_place + 1);
	/* a total beside each count needs 16 bytes a slot */
	uint64_t least = c->sums ? 128 : 64, one_slot = c->sums ? 16 : 8;
	if (share < least && !spaces->one_slot_will_do)
		share = room < least ? room : least;
	else if (share < one_slot)
		share = room < one_slot ? room : one_slot;
	uint64_t data_at = at8;
	c->nslots = 8;
	c->stride = 64;
	if (at64 + 512 <= dsp->data_end && at64 + 512 - at8 <= share)
		data_at = at64;
	else
		c->stride = share >= 256 ? 32 : share >= 128 || (c->sums && share >= 16) ? 16 : 8;
	while (c->nslots > 1 && c->stride * c->nslots > share)
		c->nslots /= 2;
	if (c->sums && c->stride < 16)
		no_sum(c, "slots 8 bytes apart (a short .bss tail)");
	if (c->sums)
		c->tramp_len = (uint8_t)(c->tramp_len + sizeof SUM);
	if (sp->code_next + tramp_room(c) > sp->code_end)
		return why(c, "its module's code segment ends on a page boundary, or too close to one: no unused "
			   "bytes there for the counting code");
	if (data_at + 8 > dsp->data_end)
		return why(c, "its module's .bss ends on a page boundary, or too close to one: no unused bytes for "
			   "the counter");
	c->tramp = sp->code_next;
	c->counter = data_at;
	c->absolute = !fits_rel32(c->tramp + sizeof PROLOGUE + ADDRESS_LEA_LEN, c->counter);
	if (c->absolute) {
		c->tramp_len = (uint8_t)(c->tramp_len + address_len(c) - ADDRESS_LEA_LEN);
		if (c->tramp_len > ENTRY_COUNTER_TRAMP && c->sums) {
			c->tramp_len = (uint8_t)(c->tramp_len - sizeof SUM);
			no_sum(c, "no room left in its counting code");
		}
		if (c->tramp_len > ENTRY_COUNTER_TRAMP)
			return why(c, "its first instructions are too long to move");
	}
	c->counter_len = c->stride * c->nslots;
	if (session_read_memory(s, c->counter, c->counter_original, c->counter_len, e) < 0)
		return -1;
	static const uint8_t zero[sizeof c->counter_original];
	if (memcmp(c->counter_original, zero, c->counter_len) != 0) {
		/* libgcc_s's tail, seen holding data on a Rust service: no
		 * longer offered (ours is then the next roomiest) */
		dsp->data_next = dsp->data_end;
		return 0;
	}
	return 1;
}

/* The plan of either kind: the jump after the function's first
 * instruction (insn_at == 0), or over the instruction at insn_at inside it. */
static int plan(struct session *s, struct symbolizer *sym, uint64_t function, uint64_t size, uint64_t insn_at,
		const uint64_t *avoid, size_t navoid, int sum_arg, struct entry_counter_spaces *spaces,
		struct entry_counter *c, struct xerr *e)
{
	uint64_t site = insn_at ? insn_at : function;
	memset(c, 0, sizeof *c);
	c->site = site;
	c->sums = sum_arg >= 0 && sum_arg <= 2;
	c->sum_arg = c->sums ? (unsigned)sum_arg : 0;
	if (size == 0)
		return why(c, "its size is not known");
	if (size > MAX_FUNCTION_CHECK)
		return why(c, "it is %" PRIu64 " bytes long, too long to check every branch in it", size);
	uint64_t function_end = function + size;
	if (site < function || site >= function_end)
		return why(c, "the instruction lies outside its function");
	struct session_insn insns[12];
	int n = session_disassemble(s, site, function_end - site < 64 ? function_end : site + 64, insns, 12, e);
	if (n < 0)
		return -1;
	if (n < 2)
		return why(c, "gdb could not decode its first instructions");
	if (!insn_at && (!insns[0].text[0] || arch_insn_transfers_control(insns[0].text)))
		return why(c, "its first instruction does not fall through (%s)", insns[0].text);
	if (c->sums && names_register(insns[0].text, c->sum_arg) && !copies_register(insns[0].text, c->sum_arg))
		no_sum(c, "its first instruction (run before the counting code) writes or reads the register");
	/* The jump goes after the function's first instruction, where the
	 * tracer's breakpoint is; or over the instruction asked for. */
	int k = insn_at ? 0 : 1;
	c->patch = insns[k].addr;
	uint64_t end = c->patch;
	c->nfixups = 0;
	while (end - c->patch < JMP_LEN) {
		if (k >= n || !insns[k].text[0])
			return why(c, "gdb could not decode the instructions after its first");
		const char *text = insns[k].text;
		bool is_ret = !strncmp(text, "ret", 3) && (text[3] == 0 || text[3] == ' ' || text[3] == 'q');
		/* a conditional jump moves as its rel32 form, to the same
		 * target (glibc's free and valloc test at once); so does a
		 * direct jmp, as the last instruction moved */
		bool is_jmp = !strncmp(text, "jmp", 3) && text[3] == ' ' && !strchr(text, '*');
		bool is_jcc = arch_insn_conditional_jump(text) || is_jmp;
		if (arch_insn_transfers_control(text) && !is_ret && !(is_jcc && c->njccs < 3))
			return why(c, "the instruction at +%" PRIu64 " (%s) cannot be moved", insns[k].addr - site, text);
		/* a function's last instruction: a ret (1 byte), or a jmp that
		 * ends the function's bytes */
		bool last_of_function = k + 1 >= n && (is_ret || (is_jmp && function_end - site <= 64));
		if (k + 1 >= n && !last_of_function)
			return why(c, "gdb could not decode the instructions after its first");
		uint64_t next = k + 1 < n ? insns[k + 1].addr : is_ret ? insns[k].addr + 1 : function_end;
		if (c->nstarts < sizeof c->starts)
			c->starts[c->nstarts++] = (uint8_t)(insns[k].addr - c->patch);
		if (is_jcc) {
			c->jccs[c->njccs].insn = insns[k].addr;
			c->jccs[c->njccs].next = next;
			c->jccs[c->njccs].unconditional = is_jmp;
			c->njccs++;
		}
		if (arch_insn_rip_relative(text)) {
			/* gdb's comment names the operand's address ("# 0x4010
			 * <calls>"): its displacement is found in the bytes, to be
			 * rewritten for the instruction's new place */
			const char *hash = strstr(text, "# 0x");
			if (!hash || c->nfixups >= 2)
				return why(c, "the RIP-relative instruction at +%" PRIu64 " (%s) names no address",
					   insns[k].addr - site, text);
			c->fixups[c->nfixups].insn = insns[k].addr;
			c->fixups[c->nfixups].next = next;
			c->fixups[c->nfixups].target = strtoull(hash + 2, NULL, 16);
			c->nfixups++;
		}
		end = next;
		k++;
		/* a direct jmp moves as the last (jemalloc's rallocx is
		 * `xor ecx,ecx; jmp do_rallocx`): nothing after it runs */
		if (is_ret || is_jmp)
			break;
	}
	c->patch_len = (uint8_t)(end - c->patch);
	if (c->patch_len > sizeof c->original || end > function_end)
		return why(c, "its first instructions are too long to move, or the function too short");
	/* A ret (or jmp) that ends the function before the jump's 5 bytes:
	 * they would overwrite the next function (counter.c's spin_step,
	 * `lock addq $1,x(%rip); ret`, then took the first bytes of its
	 * caller, which died of SIGILL). */
	if (c->patch_len < JMP_LEN)
		return why(c, "only %u byte%s of it follow%s its first instruction, fewer than the jump's %d",
			   (unsigned)c->patch_len, c->patch_len == 1 ? "" : "s", c->patch_len == 1 ? "s" : "",
			   JMP_LEN);
	c->moved_len = c->patch_len;
	for (unsigned j = 0; j < c->njccs; j++)
		c->moved_len = (uint8_t)(c->moved_len + jump_len(&c->jccs[j]) - (c->jccs[j].next - c->jccs[j].insn));
	/* (a probe at the counted instruction itself is the caller's: its
	 * breakpoint is not inserted while the counter is) */
	for (size_t i = 0; i < navoid; i++)
		if (avoid[i] >= c->patch && avoid[i] < end && !(insn_at && avoid[i] == insn_at))
			return why(c, "another probe sits in its first block, at 0x%" PRIx64, avoid[i]);
	uint64_t from = 0;
	int into = branch_into(s, function, size, site, end, &from, e);
	if (into < 0)
		return -1;
	if (into)
		return why(c, "a branch at +%" PRIu64 " goes into the instructions to move", from - function);
	ssize_t code_index = -1, data_index = -1;
	if (spaces->to_place > 0)
		spaces->to_place--;
	/* a tail found in use is struck off and the next roomiest taken */
	for (int attempt = 0;; attempt++) {
		if (spaces_for(s, sym, site, spaces, c, &code_index, &data_index, e) < 0)
			return -1;
		if (code_index < 0)
			return 0;   /* why is set */
		int placed = place_slots(s, spaces, code_index, data_index, c, e);
		if (placed < 0)
			return -1;
		if (placed > 0)
			break;
		if (c->why[0])
			return 0;
		if (attempt == 3)
			return why(c, "the unused bytes past the .bss of the modules within reach are in use");
	}
	struct entry_counter_space *sp = &spaces->v[code_index], *dsp = &spaces->v[data_index];
	uint64_t inc_next = c->tramp + sizeof PROLOGUE + address_len(c);   /* the lea's end: its displacement's origin */
	if (!fits_rel32(c->patch + JMP_LEN, c->tramp) || (!c->absolute && !fits_rel32(inc_next, c->counter)) ||
	    !fits_rel32(c->tramp + c->tramp_len, end))
		return why(c, "its unused bytes lie beyond a 32-bit displacement");
	if (session_read_memory(s, c->patch, c->original, c->patch_len, e) < 0 ||
	    session_read_memory(s, c->tramp, c->tramp_original, c->tramp_len, e) < 0)
		return -1;
	/* the code */
	uint8_t *t = c->tramp_code;
	memset(t, 0xcc, ENTRY_COUNTER_TRAMP);
	memcpy(t, PROLOGUE, sizeof PROLOGUE);
	t[PROLOGUE_MASK_AT] = (uint8_t)(c->nslots - 1);
	t[PROLOGUE_SHIFT_AT] = (uint8_t)(c->stride == 64 ? 6 : c->stride == 32 ? 5 : c->stride == 16 ? 4 : 3);
	if (c->absolute) {
		memcpy(t + sizeof PROLOGUE, ADDRESS_MOVABS, sizeof ADDRESS_MOVABS);
		memcpy(t + sizeof PROLOGUE + sizeof ADDRESS_MOVABS, &c->counter, 8);
	} else {
		memcpy(t + sizeof PROLOGUE, ADDRESS_LEA, sizeof ADDRESS_LEA);
		put_rel32(t + sizeof PROLOGUE + sizeof ADDRESS_LEA, inc_next, c->counter);
	}
	size_t code_at = sizeof PROLOGUE + address_len(c);
	memcpy(t + code_at, INCREMENT, sizeof INCREMENT);
	code_at += sizeof INCREMENT;
	if (c->sums) {
		memcpy(t + code_at, SUM, sizeof SUM);
		t[code_at + SUM_MODRM_AT] = (uint8_t)(0x44 | SUM_REG_FIELD[c->sum_arg] << 3);
		code_at += sizeof SUM;
	}
	memcpy(t + code_at, EPILOGUE, sizeof EPILOGUE);
	size_t moved_at = code_at + sizeof EPILOGUE;
	c->moved_at = (uint8_t)moved_at;
	if (move_instructions(c, t + moved_at, c->tramp + moved_at, end) < 0)
		return 0;   /* why is set */
	for (unsigned f = 0; f < c->nfixups; f++) {
		/* the displacement's bytes: the one place in the instruction
		 * holding target - next */
		const struct entry_counter_fixup *fx = &c->fixups[f];
		size_t off = (size_t)(fx->insn - c->patch), len = (size_t)(fx->next - fx->insn), at = SIZE_MAX;
		int32_t old_disp = (int32_t)(int64_t)(fx->target - fx->next);
		for (size_t b = 0; b + 4 <= len; b++)
			if (!memcmp(c->original + off + b, &old_disp, 4)) {
				if (at != SIZE_MAX)
					return why(c, "the displacement of the RIP-relative instruction at +%" PRIu64
						   " is ambiguous", fx->insn - site);
				at = b;
			}
		uint64_t new_next = c->tramp + moved_at + moved_offset(c, fx->next);
		if (at == SIZE_MAX || !fits_rel32(new_next, fx->target))
			return why(c, "the RIP-relative instruction at +%" PRIu64 " cannot be moved", fx->insn - site);
		put_rel32(t + moved_at + moved_offset(c, fx->insn) + at, new_next, fx->target);
	}
	uint8_t *jmp = t + moved_at + c->moved_len;
	jmp[0] = 0xe9;
	put_rel32(jmp + 1, c->tramp + c->tramp_len, end);
	sp->code_next += tramp_room(c);
	dsp->data_next = c->counter + c->counter_len;
	c->planned = true;
	return 0;
}

int entry_counter_plan(struct session *s, struct symbolizer *sym, uint64_t site, uint64_t size, const uint64_t *avoid,
		       size_t navoid, int sum_arg, struct entry_counter_spaces *spaces, struct entry_counter *c,
		       struct xerr *e)
{
	return plan(s, sym, site, size, 0, avoid, navoid, sum_arg, spaces, c, e);
}

int entry_counter_plan_at(struct session *s, struct symbolizer *sym, uint64_t function, uint64_t size, uint64_t insn,
			  const uint64_t *avoid, size_t navoid, struct entry_counter_spaces *spaces,
			  struct entry_counter *c, struct xerr *e)
{
	if (!insn) {
		memset(c, 0, sizeof *c);
		return why(c, "no instruction given");
	}
	return plan(s, sym, function, size, insn, avoid, navoid, -1, spaces, c, e);
}

/* A stopped thread as arming sees it. */
struct thread_at {
	int gdb_id;
	uint64_t pc, sp, rax, orig_rax;
};

/* The stopped threads' ids and registers (*out malloc'd; a thread gone
 * since the list is left out). */
static int thread_states(struct session *s, struct thread_at **out, size_t *n, struct xerr *e)
{
	struct session_thread *threads = NULL;
	size_t count = 0;
	*out = NULL;
	*n = 0;
	if (session_threads(s, &threads, &count, e) < 0)
		return -1;
	static const char *const names[] = { "rip", "rsp", "rax", "orig_rax" };
	int numbers[4];
	if (session_register_numbers(s, names, 4, numbers, e) < 0 || numbers[0] < 0 || numbers[1] < 0 ||
	    numbers[2] < 0 || numbers[3] < 0) {
		free(threads);
		return xerr_set(e, "gdb has no register rip, rsp, rax or orig_rax");
	}
	*out = calloc(count ? count : 1, sizeof **out);
	if (!*out) {
		free(threads);
		return xerr_oom(e);
	}
	for (size_t i = 0; i < count; i++) {
		struct xerr ignored;
		uint64_t v[4];
		if (session_thread_registers(s, threads[i].gdb_id, numbers, 4, v, &ignored) == 0)
			(*out)[(*n)++] = (struct thread_at){ threads[i].gdb_id, v[0], v[1], v[2], v[3] };
	}
	free(threads);
	return 0;
}

/* Whether a thread at pc inside c's moved instructions can go on at the
 * same instruction in the counting code's copy: pc is one of them, and the
 * kernel will not back the thread up to a system call it interrupted
 * (rax -ERESTART*: the 2 bytes before pc are re-run; kept out, as gdb
 * keeps its own PC writes out of them). A thread in sched_yield, or just
 * back from any system call the function's first instruction set up, sits
 * there at nearly every arming of a spinning service. */
static bool can_move_thread(const struct entry_counter *c, const struct thread_at *t)
{
	if ((int64_t)t->orig_rax >= 0 && arch_syscall_restarts((int64_t)t->rax))
		return false;
	for (unsigned i = 0; i < c->nstarts; i++)
		if (c->patch + c->starts[i] == t->pc)
			return true;
	return false;
}

/* Whether pc lies between c's moved instructions, where the jump's bytes
 * will be (the first of them, the jump's own start, is not between). */
static bool between_moved(const struct entry_counter *c, uint64_t pc)
{
	return pc > c->patch && pc < c->patch + c->patch_len;
}

static bool any_thread_in(const struct thread_at *threads, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < n; i++)
		if (threads[i].pc >= lo && threads[i].pc < hi)
			return true;
	return false;
}

/* (entry_counter.h) The frame lies at or above the handler's stack
 * pointer, where the words begin. A stale word
 * elsewhere (ld.so's lazy-binding resolver saves every argument register,
 * rcx too, which right after a system call holds the address past its
 * `syscall`, inside a wrapper's moved instructions) was taken for a saved
 * PC in ~1 arming of 25 of tests/syscall_futex.sh, its counter refused. */
bool entry_counter_signal_frame_pc(const uint64_t *words, size_t w)
{
	if (w < 22)
		return false;
	uint64_t pretcode = words[w - 22], uc_flags = words[w - 21], uc_link = words[w - 20];
	uint32_t ss_flags = (uint32_t)words[w - 18] & 0x7fffffffu;
	return pretcode != 0 && uc_flags <= 0xf && uc_link == 0 && ss_flags <= 2;
}

/* Whether the top 16 KiB of some thread's stack holds a signal frame
 * whose saved PC points into (lo, hi): it would resume there, in the
 * middle of the jump, once its handler returns (a return address cannot:
 * no call is moved). */
static bool stack_points_into(int mem_fd, const uint64_t *sps, size_t n, uint64_t lo, uint64_t hi)
{
	enum { WORDS = 2048 };
	uint64_t *words = malloc(WORDS * sizeof *words);
	if (!words)
		return true;
	bool found = false;
	for (size_t t = 0; t < n && !found; t++) {
		ssize_t got = pread(mem_fd, words, WORDS * sizeof *words, (off_t)(sps[t] & ~(uint64_t)7));
		for (ssize_t w = 0; w < got / (ssize_t)sizeof *words && !found; w++)
			found = words[w] > lo && words[w] < hi && entry_counter_signal_frame_pc(words, (size_t)w);
	}
	free(words);
	return found;
}

static void choose_fold(struct entry_counter *c, const uint64_t *sps, size_t n);

int entry_counters_install(struct session *s, struct entry_counter *c, size_t n, struct xerr *e)
{
	struct thread_at *threads = NULL;
	size_t nthreads = 0;
	if (thread_states(s, &threads, &nthreads, e) < 0)
		return -1;
	uint64_t *sps = calloc(nthreads ? nthreads : 1, sizeof *sps);
	if (!sps) {
		free(threads);
		return xerr_oom(e);
	}
	for (size_t t = 0; t < nthreads; t++)
		sps[t] = threads[t].sp;
	static const char *const rip_name[] = { "rip" };
	int rip = -1;
	if (session_register_numbers(s, rip_name, 1, &rip, e) < 0) {
		free(threads);
		free(sps);
		return -1;
	}
	int mem_fd = proc_open_mem(session_pid(s), O_RDONLY);
	/* Per counter: its code, then the threads that stood in the moved
	 * instructions moved into it, then its jump. The codes go to gdb in
	 * one batch and the jumps in another (session_write_memory_batch):
	 * every thread is stopped throughout, so only the order counts. */
	struct session_memory_write *codes = calloc(n ? n : 1, sizeof *codes), *jumps = calloc(n ? n : 1, sizeof *jumps);
	uint8_t (*jmp)[JMP_LEN] = calloc(n ? n : 1, sizeof *jmp);
	/* the counter each code and each jump is for */
	size_t *code_of = calloc(n ? n : 1, sizeof *code_of), *jump_of = calloc(n ? n : 1, sizeof *jump_of);
	size_t ncodes = 0;
	int rc = codes && jumps && jmp && code_of && jump_of ? 0 : xerr_oom(e);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!c[i].planned)
			continue;
		/* a thread stopped between two of the moved instructions would
		 * resume in the middle of the jump: it goes on in the copy
		 * instead, when it can; so would one whose signal handler
		 * interrupted it there, which cannot be moved */
		bool movable = true;
		for (size_t t = 0; t < nthreads; t++)
			if (between_moved(&c[i], threads[t].pc))
				movable &= can_move_thread(&c[i], &threads[t]);
		if (!movable) {
			why(&c[i], "a thread stood inside the instructions to move when the probes were armed");
			continue;
		}
		if (mem_fd < 0 || stack_points_into(mem_fd, sps, nthreads, c[i].patch, c[i].patch + c[i].patch_len)) {
			why(&c[i], "a thread's stack holds an address inside the instructions to move (a signal "
				   "handler's saved PC could return there)");
			continue;
		}
		choose_fold(&c[i], sps, nthreads);
		memcpy(jmp[ncodes], c[i].original, JMP_LEN);
		jmp[ncodes][0] = 0xe9;
		put_rel32(jmp[ncodes] + 1, c[i].patch + JMP_LEN, c[i].tramp);
		/* the moved instructions' bytes past the jump stay as they were:
		 * nothing reaches them (no branch lands there, no PC is there) */
		rc = session_remember_patch(s, c[i].tramp, c[i].tramp_original, NULL, c[i].tramp_len, true, e);
		if (rc == 0)
			rc = session_remember_patch(s, c[i].patch, c[i].original, jmp[ncodes], JMP_LEN, false, e);
		if (rc == 0) {
			codes[ncodes] = (struct session_memory_write){ .addr = c[i].tramp, .buf = c[i].tramp_code,
								       .n = c[i].tramp_len, .rc = -1 };
			code_of[ncodes++] = i;
		}
	}
	if (rc == 0)
		rc = session_write_memory_batch(s, codes, ncodes, e);
	/* the copy is whole code before the jump goes in: a thread moved
	 * there runs on through it and back past the jump */
	size_t njumps = 0;
	for (size_t k = 0; k < ncodes; k++) {
		struct entry_counter *ci = &c[code_of[k]];
		if (codes[k].rc < 0)
			continue;
		for (size_t t = 0; rc == 0 && t < nthreads; t++)
			if (between_moved(ci, threads[t].pc)) {
				uint64_t to = ci->tramp + ci->moved_at + moved_offset(ci, threads[t].pc);
				rc = session_thread_write_registers(s, threads[t].gdb_id, &rip, &to, 1, e);
				if (rc == 0)
					ci->threads_moved++;
			}
		if (rc < 0)
			break;
		jumps[njumps] = (struct session_memory_write){ .addr = ci->patch, .buf = jmp[k], .n = JMP_LEN };
		jump_of[njumps++] = code_of[k];
	}
	/* a jump written is a counter counting, whatever failed after it */
	int jumped = session_write_memory_batch(s, jumps, njumps, rc == 0 ? e : NULL);
	for (size_t k = 0; k < njumps; k++)
		c[jump_of[k]].installed = jumps[k].rc == 0;
	if (rc == 0)
		rc = jumped;
	/* a code written with no jump to it (a failure between the two
	 * batches) goes back now: entry_counters_remove undoes installed
	 * counters only */
	size_t nundo = 0;
	for (size_t k = 0; k < ncodes; k++) {
		const struct entry_counter *ck = &c[code_of[k]];
		if (codes[k].rc == 0 && !ck->installed)
			codes[nundo++] = (struct session_memory_write){ .addr = ck->tramp, .buf = ck->tramp_original,
									.n = ck->tramp_len };
	}
	session_write_memory_batch(s, codes, nundo, NULL);
	free(codes);
	free(jumps);
	free(jmp);
	free(code_of);
	free(jump_of);
	if (mem_fd >= 0)
		close(mem_fd);
	free(threads);
	free(sps);
	return rc;
}

uint64_t entry_counter_total_sum(const struct entry_counter *c)
{
	uint64_t total = 0;
	for (unsigned k = 0; c->sums && k < c->nslots; k++)
		total += c->slot_sums[k];
	return total;
}

static uint64_t sum_slots(struct entry_counter *c, const uint8_t *bytes)
{
	uint64_t sum = 0;
	for (unsigned k = 0; k < c->nslots; k++) {
		uint64_t v;
		memcpy(&v, bytes + c->stride * k, sizeof v);
		c->slot_counts[k] = v;
		sum += v;
		if (c->sums)
			memcpy(&c->slot_sums[k], bytes + c->stride * k + 8, sizeof c->slot_sums[k]);
	}
	return sum;
}

static unsigned slot_of(uint64_t rsp, unsigned fold1, unsigned fold2, unsigned nslots)
{
	uint64_t x = rsp >> fold1;
	x ^= x >> fold2;
	return (unsigned)(x & (nslots ? nslots - 1 : 0));
}

unsigned entry_counter_slot(const struct entry_counter *c, uint64_t rsp)
{
	return slot_of(rsp, c->fold1, c->fold2, c->nslots);
}

/* The hash's two shifts that spread the threads there are now (their
 * stack pointers) over the most slots: the estimates' strata are the
 * slots, and a thread that calls rarely sharing one with a hot thread is
 * over-estimated (stacks 8 MiB + a guard page apart hashed alike ~1 time in
 * 4 with fixed shifts). Ties keep the smaller shifts. */
static void choose_fold(struct entry_counter *c, const uint64_t *sps, size_t n)
{
	/* First tried, and kept on a tie (a launched command has one thread
	 * at arming): the stack pointer in 8 MiB units, unfolded (a shift by
	 * 63 leaves nothing to fold in), which gives glibc's threads, whose
	 * stacks lie 8 MiB and a guard page apart, consecutive slots. */
	static const unsigned prior1 = 23, prior2 = 63;
	unsigned best = 0;
	c->fold1 = prior1;
	c->fold2 = prior2;
	for (int round = 0; round < 2; round++)
		for (unsigned f1 = round ? 12 : prior1; f1 <= (round ? 26u : prior1); f1++)
			for (unsigned f2 = round ? 1 : prior2; f2 <= (round ? 5u : prior2); f2++) {
				unsigned used = 0;
				for (size_t i = 0; i < n; i++)
					used |= 1u << slot_of(sps[i], f1, f2, c->nslots);
				unsigned distinct = (unsigned)__builtin_popcount(used);
				if (distinct > best) {
					best = distinct;
					c->fold1 = f1;
					c->fold2 = f2;
				}
			}
	c->tramp_code[PROLOGUE_FOLD1_AT] = (uint8_t)c->fold1;
	c->tramp_code[PROLOGUE_FOLD2_AT] = (uint8_t)c->fold2;
}

int entry_counter_read_one(int mem_fd, struct entry_counter *c)
{
	uint8_t bytes[sizeof c->counter_original];
	if (!c->installed || c->removed)
		return -1;
	if (pread(mem_fd, bytes, c->counter_len, (off_t)c->counter) != (ssize_t)c->counter_len)
		return -1;
	c->count = sum_slots(c, bytes);
	return 0;
}

int entry_counters_read(int mem_fd, struct entry_counter *c, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].installed && !c[i].removed && entry_counter_read_one(mem_fd, &c[i]) < 0)
			rc = -1;
	return rc;
}

int entry_counters_remove(struct session *s, struct entry_counter *c, size_t n, struct xerr *e)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].installed)
			continue;
		/* Still ours? A library unloaded since (dlclose) took the bytes
		 * with it, and another may sit there now: write nothing. */
		uint8_t now[JMP_LEN], tramp[ENTRY_COUNTER_TRAMP];
		struct xerr ignored;
		if (session_read_memory(s, c[i].patch, now, JMP_LEN, &ignored) < 0 ||
		    session_read_memory(s, c[i].tramp, tramp, c[i].tramp_len, &ignored) < 0 ||
		    now[0] != 0xe9 || memcmp(tramp, c[i].tramp_code, c[i].tramp_len) != 0) {
			c[i].gone = true;
			continue;
		}
		if (session_write_memory(s, c[i].patch, c[i].original, JMP_LEN, e) < 0)
			return -1;
		any = true;
	}
	if (!any)
		return 0;
	/* A thread inside a trampoline leaves it within a few instructions
	 * of running: let the target run 2 ms at a time until none is, then
	 * 20 ms at a time, ~1 s in all: on a loaded machine a thread waits
	 * longer than 2 ms for a CPU (a syscalls run beside a loaded suite
	 * was followed by one that found every tail in use, as 20 such rounds
	 * given up would leave them). A counter a thread is still inside then
	 * stays, unreachable, and only that one. */
	enum { ATTEMPTS = 60, SHORT = 10 };
	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		struct thread_at *threads = NULL;
		size_t nthreads = 0;
		if (thread_states(s, &threads, &nthreads, e) < 0)
			return -1;
		bool inside = false;
		for (size_t i = 0; i < n; i++) {
			bool here = c[i].installed && !c[i].gone &&
				    any_thread_in(threads, nthreads, c[i].tramp, c[i].tramp + c[i].tramp_len);
			inside = inside || here;
			if (attempt == ATTEMPTS - 1)
				c[i].left_in_place = here;
		}
		free(threads);
		if (!inside || attempt == ATTEMPTS - 1)
			break;
		if (session_resume(s, e) < 0)
			return -1;
		struct timespec pause = { 0, (attempt < SHORT ? 2 : 20) * 1000 * 1000 };
		nanosleep(&pause, NULL);
		if (session_stop(s, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t bytes[sizeof c[i].counter_original];
		if (!c[i].installed || c[i].gone)
			continue;
		if (session_read_memory(s, c[i].counter, bytes, c[i].counter_len, e) < 0)
			return -1;
		c[i].count = sum_slots(&c[i], bytes);
	}
	for (size_t i = 0; i < n; i++) {
		c[i].removed = c[i].installed;
		if (!c[i].installed || c[i].left_in_place || c[i].gone)
			continue;
		if (session_write_memory(s, c[i].tramp, c[i].tramp_original, c[i].tramp_len, e) < 0 ||
		    session_write_memory(s, c[i].counter, c[i].counter_original, c[i].counter_len, e) < 0)
			return -1;
	}
	return 0;
}

void entry_counter_spaces_release(struct entry_counter_spaces *spaces)
{
	free(spaces->v);
	memset(spaces, 0, sizeof *spaces);
}
