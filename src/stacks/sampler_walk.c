/* sampler_walk.c — a stopped thread's walk: registers (from /proc and gdb),
 * its stack window, the unwind and the symbolized frames. */
#include "config.h"
#include "stacks/sampler_internal.h"

/* Where a stop found a thread from its system call registers: orig_rax
 * (the call, -1 outside one), the call's second argument (futex's
 * operation) and rax (its result). */
static void take_syscall_registers(const struct sampler *sp, struct tracked_thread *t, uint64_t orig_rax,
				   uint64_t second_arg, uint64_t rax)
{
	t->waiting_in = arch_syscall_waiting((int64_t)orig_rax, second_arg);
	t->wait = arch_syscall_wait_reason((int64_t)orig_rax, second_arg);
	t->at_return = sampler_at_completed_return(orig_rax, rax);
	t->syscall_nr = (int64_t)orig_rax;
	sampler_on_cpu_when_asked(sp, t, orig_rax);
}

/* Takes a stopped thread's registers (sampled_registers, at their enum
 * arch_reg) for its capture: what the unwinder starts from, and where the
 * stop found the thread (a waiting call, a call's return). */
static void take_registers(const struct sampler *sp, struct tracked_thread *t, const uint64_t *regs)
{
	t->capture.regs = (struct unwind_regs){
		.rip = regs[ARCH_RIP], .rsp = regs[ARCH_RSP], .rbp = regs[ARCH_RBP], .rbx = regs[ARCH_RBX],
		.r12 = regs[ARCH_R12], .r13 = regs[ARCH_R13], .r14 = regs[ARCH_R14], .r15 = regs[ARCH_R15],
	};
	take_syscall_registers(sp, t, regs[ARCH_ORIG_RAX], regs[arch_syscall_arg_reg(1)], regs[ARCH_RAX]);
}

static int capture_fast(struct sampler *sp, struct tracked_thread *t, struct xerr *e);

/* Fast walker: where a stopped thread is comes from /proc
 * (proc_thread_syscall: pc, stack pointer, the system call it is in and
 * its arguments) and its stack window is read at that stack pointer. gdb
 * is then asked only for what /proc cannot give (partial_registers): rbp,
 * and rax when the thread is in a system call (did the call complete?).
 * gdb 13 takes ~35 us to format each register it lists: 1-2 instead of 11
 * save ~0.3 ms of every thread's stop. rbx and r12-r15 stay unknown: a
 * frame whose CFA rule needs one ends the walk (compiled code's CFA is
 * rsp- or rbp-based; `dump --check-walkers` compares, tests/dump.sh).
 * Returns 1 when /proc said nothing (the caller reads every register from
 * gdb), else 0 with *captured telling whether the window was read. */
int sampler_capture_from_proc(struct sampler *sp, struct tracked_thread *t, struct proc_syscall *where,
			     bool *captured)
{
	if (proc_thread_syscall(session_pid(sp->session), t->tid, where) < 0 || where->sp == 0)
		return 1;
	struct unwind_regs regs = { .rip = where->pc, .rsp = where->sp, .callee_saved_unknown = true };
	struct xerr unused;
	*captured = unwinder_capture(sp->unwinder, t->tid, &regs, &t->capture, &unused) == 0;
	return 0;
}

/* gdb's numbers of the registers sampler_capture_from_proc leaves to gdb, into
 * asked; returns how many. */
static size_t partial_registers(const struct sampler *sp, const struct proc_syscall *where, int asked[2])
{
	asked[0] = sp->regnums[ARCH_RBP];
	asked[1] = sp->regnums[ARCH_RAX];
	return where->in_syscall ? 2 : 1;
}

/* Completes a sampler_capture_from_proc capture with gdb's values of
 * partial_registers. */
static void take_partial_registers(const struct sampler *sp, struct tracked_thread *t, const struct proc_syscall *where,
				   const uint64_t *values)
{
	t->capture.regs.rbp = values[0];
	/* /proc's args[] are the call's arguments, whatever register carries
	 * them; rax was asked only inside a call. */
	uint64_t orig_rax = where->in_syscall ? (uint64_t)where->nr : (uint64_t)-1;
	take_syscall_registers(sp, t, orig_rax, where->args[1], where->in_syscall ? values[1] : 0);
	t->captured = true;
}

/* Non-stop, fast walker: sampler_capture_from_proc, then one write to gdb reads
 * the partial registers and resumes the thread
 * (session_thread_registers_and_resume), so the thread is held for one
 * exchange with gdb, not two with our reading in between. Returns 1 when
 * /proc said nothing (nothing done: the caller reads and resumes the usual
 * way), 0 once the thread is resumed (t->walk false when nothing usable was
 * captured; *resume_at when the exchange began), -1 with e when gdb is
 * gone. */
int sampler_capture_fast_and_resume(struct sampler *sp, struct tracked_thread *t, uint64_t *resume_at,
				   struct xerr *e)
{
	struct proc_syscall where;
	bool captured;
	if (sampler_capture_from_proc(sp, t, &where, &captured) != 0)
		return 1;
	int asked[2];
	uint64_t values[2] = { 0, 0 };
	size_t nasked = partial_registers(sp, &where, asked);
	*resume_at = monotonic_ns();
	struct xerr resume_error;
	int rc = session_thread_registers_and_resume(sp->session, t->gdb_id, asked, nasked, values, &resume_error);
	if (rc < 0 && !session_gdb_alive(sp->session)) {
		*e = resume_error;
		return -1;
	}
	if (rc != 0 || !captured) {
		t->walk = t->wanted = false;
		t->captured = false;
		return 0;
	}
	take_partial_registers(sp, t, &where, values);
	return 0;
}

/* All-stop, fast walker: sampler_capture_from_proc and the partial registers from
 * gdb; every register from gdb when /proc said nothing. */
static int capture_fast_partial(struct sampler *sp, struct tracked_thread *t, struct xerr *e)
{
	struct proc_syscall where;
	bool captured;
	if (sampler_capture_from_proc(sp, t, &where, &captured) != 0)
		return capture_fast(sp, t, e);
	if (!captured)
		return xerr_set(e, "reading the stack of thread %d", (int)t->tid);
	int asked[2];
	uint64_t values[2] = { 0, 0 };
	size_t nasked = partial_registers(sp, &where, asked);
	if (session_thread_registers(sp->session, t->gdb_id, asked, nasked, values, e) < 0)
		return -1;
	take_partial_registers(sp, t, &where, values);
	return 0;
}

/* While stopped: registers from gdb and the stack window from /proc. The
 * unwinding waits until the target runs again (sampler_unwind_capture). */
static int capture_fast(struct sampler *sp, struct tracked_thread *t, struct xerr *e)
{
	int asked[NSAMPLED_REGS];
	uint64_t values[NSAMPLED_REGS], regs[ARCH_NREGS] = { 0 };
	for (size_t k = 0; k < NSAMPLED_REGS; k++)
		asked[k] = sp->regnums[sampled_registers[k]];
	if (session_thread_registers(sp->session, t->gdb_id, asked, NSAMPLED_REGS, values, e) < 0)
		return -1;
	for (size_t k = 0; k < NSAMPLED_REGS; k++)
		regs[sampled_registers[k]] = values[k];
	take_registers(sp, t, regs);
	if (unwinder_capture(sp->unwinder, t->tid, &t->capture.regs, &t->capture, e) < 0)
		return -1;
	t->captured = true;
	return 0;
}

/* SAMPLER_WALKER_BOTH, after sampler_unwind_capture walked the capture from every
 * register into t->pcs: walks it again with rbx and r12-r15 unknown, as
 * the fast walker's captures from /proc have them, and notes whether it
 * found the same PCs (tracked_thread.partial_regs_agree). */
void sampler_compare_partial_walk(struct sampler *sp, struct tracked_thread *t)
{
	size_t max = (size_t)sp->cfg->max_frames, n = 0;
	uint64_t *pcs = malloc(max * sizeof *pcs);
	struct stack_capture partial = t->capture;
	partial.regs.callee_saved_unknown = true;
	bool complete;
	struct xerr unused;
	if (pcs && unwinder_walk_capture(sp->unwinder, &partial, pcs, max, &n, &complete, &unused) == 0)
		t->partial_regs_agree = n == t->npcs && memcmp(pcs, t->pcs, n * sizeof *pcs) == 0;
	free(pcs);
}

/* Returns 1 when the walk ended before the outermost frame. */
int sampler_unwind_capture(struct sampler *sp, struct tracked_thread *t, struct xerr *e)
{
	bool complete;
	t->captured = false;
	if (unwinder_walk_capture(sp->unwinder, &t->capture, t->pcs, (size_t)sp->cfg->max_frames, &t->npcs,
				  &complete, e) < 0)
		return -1;
	return complete ? 0 : 1;
}

/* How many frames (inlined callees, then the real function) the symbolizer
 * makes of pc; 1 when it cannot tell. */
static size_t inline_chain_length(struct sampler *sp, uint64_t pc, bool is_return_address)
{
	struct frame chain[16];
	size_t n = 0;
	if (symbolizer_lookup(sp->sym, pc, is_return_address, chain, sizeof chain / sizeof chain[0], &n, NULL) < 0 ||
	    n == 0)
		return 1;
	return n;
}

/* gdb's frames as it lists them: an inline frame is one of its own, at its
 * caller's pc (sampler_fold_inline_runs, once the target runs again, folds them). */
static int walk_gdb(struct sampler *sp, struct tracked_thread *t, uint64_t *pcs, size_t *npcs, struct xerr *e)
{
	struct gdb_frame *frames;
	size_t n;
	if (session_thread_frames(sp->session, t->gdb_id, sp->cfg->max_frames, &frames, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		pcs[i] = frames[i].pc;
	*npcs = n;
	session_gdb_frames_free(frames, n);
	return 0;
}

/* sampler_symbolize_walk expands a pc into its inline chain again, so a run of one
 * pc in gdb's list is cut into real frames of the chain's length. A
 * recursive function repeats its return pc once per call: those frames
 * stay. The symbolizer may read DWARF for this: not while the target is
 * stopped. */
void sampler_fold_inline_runs(struct sampler *sp, uint64_t *pcs, size_t *npcs)
{
	size_t n = *npcs, out = 0;
	for (size_t i = 0, run; i < n; i += run) {
		for (run = 1; i + run < n && pcs[i + run] == pcs[i]; run++)
			;
		size_t chain = run > 1 ? inline_chain_length(sp, pcs[i], out > 0) : 1;
		uint64_t pc = pcs[i];
		for (size_t k = 0; k < run; k += chain)
			pcs[out++] = pc;
	}
	*npcs = out;
}

/* Turns a walk's PCs into a symbolized stack (leaf first). */
int sampler_symbolize_walk(struct sampler *sp, struct tracked_thread *t, struct xerr *e)
{
	sampler_stack_release(&t->stack);
	size_t cap = t->npcs * sp->max_chain + 1;
	struct frame *frames = malloc(cap * sizeof *frames);
	if (!frames)
		return xerr_oom(e);
	size_t used = 0;
	for (size_t i = 0; i < t->npcs && used < cap; i++) {
		size_t n = 0;
		if (symbolizer_lookup(sp->sym, t->pcs[i], i > 0, frames + used, cap - used, &n, e) < 0) {
			free(frames);
			return -1;
		}
		if (n == 1 && frames[used].source == FRAME_SOURCE_NONE) {
			/* Perhaps a library loaded since we last looked. */
			if (symbolizer_refresh(sp->sym, NULL) == 0)
				symbolizer_lookup(sp->sym, t->pcs[i], i > 0, frames + used, cap - used, &n, NULL);
		}
		used += n;
	}
	t->stack.frames = frames;
	t->stack.nframes = used;
	t->have_stack = true;
	return 0;
}

/* Walks one stopped thread (registers and stack now; unwinding waits for
 * the resume). A thread that cannot be walked (it exited meanwhile, say)
 * is dropped from this round, not an error. */
void sampler_walk_stopped_thread(struct sampler *sp, struct sampler_stats *st, struct tracked_thread *t)
{
	struct xerr walk_error;
	int rc;
	if (sp->cfg->walker == SAMPLER_WALKER_GDB) {
		const int asked[3] = { sp->regnums[ARCH_ORIG_RAX], sp->regnums[arch_syscall_arg_reg(1)],
				       sp->regnums[ARCH_RAX] };
		uint64_t call[3];
		t->waiting_in = NULL;
		t->at_return = false;
		rc = session_thread_registers(sp->session, t->gdb_id, asked, 3, call, &walk_error);
		if (rc >= 0) {
			take_syscall_registers(sp, t, call[0], call[1], call[2]);
			rc = walk_gdb(sp, t, t->pcs, &t->npcs, &walk_error);
		}
	} else {
		/* Both walkers: every register, the reference the partial walk
		 * is compared with (sampler_compare_partial_walk). */
		rc = sp->cfg->walker == SAMPLER_WALKER_BOTH ? capture_fast(sp, t, &walk_error)
							     : capture_fast_partial(sp, t, &walk_error);
		if (rc >= 0 && sp->cfg->walker == SAMPLER_WALKER_BOTH &&
		    walk_gdb(sp, t, t->ref_pcs, &t->nref_pcs, &walk_error) < 0)
			rc = -1;
	}
	if (rc < 0) {
		t->walk = t->wanted = false;
		t->captured = false;
		return;
	}
	st->truncated += rc > 0;
}

/* The next thread marked for a walk from *cursor on, or NULL at the end.
 * A marked thread gdb does not know (it just exited or was just born) is
 * unmarked on the way. */
struct tracked_thread *sampler_next_thread_to_walk(struct sampler *sp, size_t *cursor)
{
	while (*cursor < sp->nthreads) {
		struct tracked_thread *t = &sp->threads[(*cursor)++];
		if (t->walk && t->gdb_id == 0)
			t->walk = t->wanted = false;
		else if (t->walk)
			return t;
	}
	return NULL;
}

/* All-stop: walks every thread marked for it; the target is stopped. */
int sampler_stopped_round(struct sampler *sp, struct sampler_stats *st, struct xerr *e)
{
	if (sampler_map_gdb_ids(sp, e) < 0)
		return -1;
	if (sampler_learn_register_numbers(sp, e) < 0)
		return -1;
	size_t cursor = 0;
	for (struct tracked_thread *t; (t = sampler_next_thread_to_walk(sp, &cursor));)
		sampler_walk_stopped_thread(sp, st, t);
	return 0;
}
