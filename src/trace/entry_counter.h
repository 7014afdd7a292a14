/* entry_counter.h — exact call counts of a function with no stop per call
 * (docs/tracing.md, "Counted in the target").
 *
 * A breakpoint costs the calling thread a stop (~0.5 ms, tens of µs of its
 * CPU); a function called every few microseconds cannot be counted that
 * way, and sampled stops cannot tell its rate (issue 26). Instead, a 5-byte
 * `jmp` replaces whole instructions of the function's first block (after
 * its first, where the tracer's breakpoint goes; a calibration hit's
 * one-shot breakpoint may land on the jump, which gdb handles as any
 * other byte it wrote) and sends each call through a few bytes of ours:
 * lea the red zone away, save the flags, rax and rcx, `lock incq` of one
 * of up to 8 counter slots chosen by the stack pointer (one per thread,
 * mostly: no cache line bouncing between busy threads), restore, the
 * instructions the jump replaced, a jump back. The code lives in the
 * unused tail of the last page of the module's executable segment and the
 * counter in the unused tail of its .bss page, or of another module's
 * within reach or the program's when that is short of 8 slots
 * (symbolizer_module_slack): nothing is mapped or called in the target.
 * The count is read at the end.
 *
 * A function gets no counter (and c->why says why) when: it is an inlined
 * copy or its size is unknown; its first instruction does not fall
 * through; an instruction to move transfers control (a `ret` may end
 * them), or is RIP-relative with no address in gdb's comment or an
 * ambiguous displacement (otherwise the displacement is rewritten);
 * a direct branch of the function lands inside the replaced bytes; the
 * module has no unused tail large enough; another probe's address lies in
 * the bytes. Indirect jumps (jump tables) are assumed not to land in a
 * function's prologue.
 *
 * Safety: installed and removed only with every thread stopped, and only
 * when no thread's PC lies inside the bytes being replaced, nor a signal
 * frame's saved PC in the top 16 KiB of its stack (a handler returns
 * there: entry_counter_signal_frame_pc). Removal
 * writes only where the jump and the code still read as ours (a library
 * unloaded meanwhile may have left another in its place). The jump's
 * bytes are remembered with the session (RESTORE_PATCH), so session_rescue
 * puts them back should gdb die; the trampoline's (RESTORE_KEEP) too,
 * unless a thread is running in it (then they stay, unreachable). Removal
 * puts the jump's bytes back first, then waits (resuming 2 ms, later
 * 20 ms at a time, ~1 s at most) until no thread is inside the
 * trampoline before restoring it.
 *
 * Functions return 0 on success, -1 with e (gdb gone or refused).
 */
#ifndef XGDBPROF_ENTRY_COUNTER_H
#define XGDBPROF_ENTRY_COUNTER_H

#include "session/session.h"
#include "symbols/symbolize.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENTRY_COUNTER_TRAMP 96   /* bytes of code per counter, at most (each takes its own length,
				  * 16-byte aligned) */
/* Strata of a site's calls for the estimates: its 8 slots, and the whole
 * site (for hits whose stack pointer was not known) */
#define ENTRY_COUNTER_STRATA 9

struct entry_counter {
	uint64_t site;                 /* the function's entry (entry_counter_plan_at: the instruction) */
	uint64_t patch;                /* where the jump goes */
	uint8_t patch_len;             /* whole instructions it replaces (>= 5 bytes) */
	uint8_t original[24];          /* their bytes */
	uint64_t tramp;
	uint8_t tramp_len;
	uint8_t tramp_code[ENTRY_COUNTER_TRAMP], tramp_original[ENTRY_COUNTER_TRAMP];
	uint64_t counter;              /* its slots, in the .bss page's tail */
	bool absolute;                 /* the code loads their address whole (movabs): out of a 32-bit
				       * displacement's reach of the code (in another module) */
	unsigned nslots;               /* 8 (1, 2 or 4 in a tail under 64 bytes) */
	unsigned stride;               /* bytes between slots: 64 (a cache line each), 32, 16 or 8 */
	unsigned fold1, fold2;         /* the slot: ((rsp >> fold1) ^ (rsp >> fold1 >> fold2)) & (nslots - 1),
				       * the shifts chosen at install to spread the threads there are */
	size_t counter_len;
	uint8_t counter_original[512];
	bool planned, installed;
	bool left_in_place;            /* removed the jump, but a thread stayed in the trampoline */
	bool removed;
	bool gone;                     /* at removal its bytes were no longer ours (a library unloaded):
				       * nothing written, its last read count kept */
	struct entry_counter_fixup {   /* a moved RIP-relative instruction */
		uint64_t insn, next, target;
	} fixups[2];
	unsigned nfixups;
	struct entry_counter_jcc {     /* a moved direct jump: rel32 in the code */
		uint64_t insn, next, target;
		uint8_t condition;     /* the low nibble of its opcode (0x7X / 0x0F 0x8X) */
		bool unconditional;    /* a jmp (EB / E9): the last moved, a thunk's tail call */
	} jccs[3];
	unsigned njccs;
	uint8_t moved_len;             /* the moved instructions' bytes in the code (jcc made rel32) */
	uint8_t moved_at;              /* where they start in the counting code */
	uint8_t starts[12];            /* each moved instruction's offset from patch */
	unsigned nstarts;
	unsigned threads_moved;        /* threads found between the moved instructions at install (one
				       * just back from a system call the first one made) and set to go on
				       * at the same instruction in the counting code's copy */
	uint64_t count;                /* calls counted: the last read, or at removal */
	uint64_t slot_counts[8];       /* per slot, as last read (count is their sum) */
	uint64_t slot_hits[8];         /* the site's breakpoint hits while installed, per slot */
	/* the total of an argument register over the calls, per slot (8 bytes
	 * past its count), beside the count: the bytes asked of an allocator */
	bool sums;                     /* the code adds arg<sum_arg> */
	unsigned sum_arg;              /* 0..2: rdi, rsi, rdx */
	char sum_why[120];             /* asked for, but not summed: why */
	uint64_t slot_sums[8];         /* as last read */
	uint64_t slot_hit_sums[8];     /* that register's values at the site's hits, per slot */
	uint64_t site_hits;            /* and those whose slot was not known (the site as one stratum) */
	/* The caller's: which kinds of thread a slot's calls came from, as
	 * hashes of their names with the digits left out (a pool's threads
	 * alike): of the hits' threads, and of the threads found in the slot
	 * at the end (their stack pointers, the target held). At most 4 each. */
	uint32_t slot_hit_kinds[8][4], slot_end_kinds[8][4];
	uint8_t nslot_hit_kinds[8], nslot_end_kinds[8];
	char slot_end_names[8][48];    /* the names found there at the end, ", " between */
	char why[200];                 /* not planned or not installed: why */
};

/* Unused memory of one module, handed out to counters in turn. */
struct entry_counter_space {
	uint64_t code_lo, code_next, code_end;
	uint64_t data_lo, data_next, data_end;
	bool program;                  /* the executable's: never unloaded, so taken out of rel32 reach */
};

struct entry_counter_spaces {
	struct entry_counter_space *v;
	size_t n, cap;
	bool all_modules;              /* every module's tails are listed */
	unsigned to_place;             /* counters still to plan (the caller's count, less each plan):
				       * a short tail is shared among them, not taken by the first */
	bool one_slot_will_do;         /* set by the caller for the next plan: a site whose calls are only
				       * counted (no hit is weighed by its slot's stratum) takes as little
				       * as one 8-byte slot of a short tail, so more sites fit (libc's
				       * tail is 176 bytes: 22 sites at 8 bytes each; 3 when each wanted 64) */
};

/* Plans a counter for the out-of-line function at site, size bytes long,
 * with the target running or stopped: decodes its first instructions and
 * checks every direct branch of the function through gdb, finds room in
 * spaces (adding the module's). avoid[0..navoid): addresses where other
 * breakpoints of ours go. sum_arg 0..2: the code also totals that argument
 * register per slot (c->sums; when it cannot, c->sum_why says why and the
 * calls are still counted); -1: counts only. Returns 0 with c->planned
 * set, or c->why filled when it cannot have one; -1 with e when gdb
 * failed. */
int entry_counter_plan(struct session *s, struct symbolizer *sym, uint64_t site, uint64_t size, const uint64_t *avoid,
		       size_t navoid, int sum_arg, struct entry_counter_spaces *spaces, struct entry_counter *c,
		       struct xerr *e);

/* Plans a counter of the calls that run the instruction at insn, inside
 * the out-of-line function at function, size bytes long: the jump
 * replaces that instruction and those after it up to 5 bytes (one
 * `mov $N,%eax` before a `syscall` is exactly that), whose bytes no branch
 * of the function may enter; the caller has checked that insn starts an
 * instruction. Only counts (no sum); a probe of ours at insn itself is
 * the caller's to keep out while the counter is in. As entry_counter_plan
 * otherwise. */
int entry_counter_plan_at(struct session *s, struct symbolizer *sym, uint64_t function, uint64_t size, uint64_t insn,
			  const uint64_t *avoid, size_t navoid, struct entry_counter_spaces *spaces,
			  struct entry_counter *c, struct xerr *e);

/* Whether words[w] sits where the kernel's x86-64 signal frame
 * (rt_sigframe) keeps the interrupted RIP: 22 words above the frame's
 * start, after pretcode (the restorer: never 0), uc_flags (a few flag
 * bits), uc_link (0: the kernel writes none) and uc_stack, whose ss_flags
 * is 0, SS_ONSTACK or SS_DISABLE (SS_AUTODISARM aside). Installing reads
 * a saved PC in the instructions to move only there. */
bool entry_counter_signal_frame_pc(const uint64_t *words, size_t w);

/* With every thread stopped: installs each planned counter (one whose
 * bytes a thread's PC lies in is skipped, with why). */
int entry_counters_install(struct session *s, struct entry_counter *c, size_t n, struct xerr *e);

/* Reads the installed counters' counts now (into c->count) through the
 * target's /proc/PID/mem (mem_fd), with the target running or not; kept
 * as the last count should it exit. 0, or -1 when one could not be read. */
int entry_counters_read(int mem_fd, struct entry_counter *c, size_t n);

/* With every thread stopped: reads the final counts and removes every
 * installed counter (see above); returns with every thread stopped. */
int entry_counters_remove(struct session *s, struct entry_counter *c, size_t n, struct xerr *e);

/* The summed register's total over every call counted (c->sums), as last
 * read: its slots' totals added. */
uint64_t entry_counter_total_sum(const struct entry_counter *c);

/* The slot a thread whose stack pointer is rsp counts in (as the code
 * does: rsp >> 21, xor itself >> 2, modulo the slots). */
unsigned entry_counter_slot(const struct entry_counter *c, uint64_t rsp);

/* One counter's count now (through mem_fd), into c->count: 0, or -1. */
int entry_counter_read_one(int mem_fd, struct entry_counter *c);

void entry_counter_spaces_release(struct entry_counter_spaces *spaces);

#endif
