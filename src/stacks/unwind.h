/* unwind.h — the fast stack walker: CFI unwinding with libdwfl over stack
 * memory read straight from /proc/PID/mem while the target is stopped.
 *
 * gdb supplies only the registers of each thread (see regs below); memory
 * comes from one pread of the stack window, 64 KiB upwards from the
 * 128-byte red zone below rsp (/proc/PID/mem serves it in ~0.04 ms where
 * MI needs ~2.7 ms), with single-word preads for anything outside it.
 *
 * Contract:
 *  - The target must be stopped (by gdb) during unwinder_walk and
 *    unwinder_capture. unwinder_walk_capture may run after it resumed: it
 *    reads only the captured window, so a walk that needs memory beyond it
 *    ends there (*complete false) rather than mix two moments.
 *  - The Dwfl must have the process's modules reported (the symbolizer's);
 *    unwinder_new attaches thread callbacks to it once (dwfl_attach_state),
 *    so one Dwfl serves one unwinder.
 *  - pcs[0] is the thread's PC; later entries are return addresses
 *    (callers): look them up as such (pc - 1) when symbolizing.
 *  - Returns 0 (a walk that ends early is not an error: *complete says
 *    whether it reached the outermost frame), -1 with e on a hard error.
 */
#ifndef XGDBPROF_UNWIND_H
#define XGDBPROF_UNWIND_H

#include "util/error.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* x86-64 registers the walker needs: the callee-saved set plus sp and pc. */
struct unwind_regs {
	uint64_t rip, rsp, rbp, rbx, r12, r13, r14, r15;
	/* rbx and r12-r15 not known (only rip, rsp, rbp): a frame whose CFA
	 * rule needs one of them ends the walk there (*complete false). */
	bool callee_saved_unknown;
};

struct unwinder;

struct unwinder *unwinder_new(Dwfl *dwfl, pid_t pid, struct xerr *e);
void unwinder_free(struct unwinder *u);

int unwinder_walk(struct unwinder *u, pid_t tid, const struct unwind_regs *regs,
		  uint64_t *pcs, size_t max, size_t *n, bool *complete, struct xerr *e);

/* A thread's registers and its stack window (red zone and up), copied while the
 * target is stopped so that the unwinding can wait until it runs again. */
struct stack_capture {
	pid_t tid;
	struct unwind_regs regs;
	unsigned char *window;     /* owned; allocated by the first capture */
	uint64_t window_start;     /* target address of window[0] */
	size_t window_len;
};

int unwinder_capture(struct unwinder *u, pid_t tid, const struct unwind_regs *regs, struct stack_capture *c,
		     struct xerr *e);
int unwinder_walk_capture(struct unwinder *u, const struct stack_capture *c, uint64_t *pcs, size_t max,
			  size_t *n, bool *complete, struct xerr *e);
void unwinder_capture_release(struct stack_capture *c);

#endif
