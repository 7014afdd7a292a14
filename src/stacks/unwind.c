#include "stacks/unwind.h"

#include "arch/regs.h"
#include "procfs/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes of stack read per walk, from ARCH_RED_ZONE below rsp upwards (leaf
 * code in libc saves registers in the red zone, and its CFI says so). */
#define STACK_WINDOW (64 * 1024)

struct unwinder {
	Dwfl *dwfl;
	pid_t pid;
	int mem_fd;
	/* The thread being walked and its stack window. */
	pid_t tid;
	const struct unwind_regs *regs;
	uint64_t window_start;
	size_t window_len;
	const unsigned char *view;   /* the window being walked: ours or a capture's */
	bool live_reads;             /* target stopped: read outside the window from it */
	bool window_missed;          /* a read outside the window was refused */
	unsigned char *window;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct unwinder *u = arg;
	/* Only the thread being walked exists as far as libdwfl is concerned. */
	if (*thread_argp == NULL) {
		*thread_argp = u;
		return u->tid;
	}
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct unwinder *u = arg;
	*thread_argp = u;
	return tid == u->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct unwinder *u = arg;
	if (addr >= u->window_start && addr + sizeof *result <= u->window_start + u->window_len) {
		memcpy(result, u->view + (addr - u->window_start), sizeof *result);
		return true;
	}
	/* After the target resumed, its memory no longer matches the registers. */
	if (!u->live_reads) {
		u->window_missed = true;
		return false;
	}
	uint64_t word;
	if (pread(u->mem_fd, &word, sizeof word, (off_t)addr) != (ssize_t)sizeof word)
		return false;
	*result = word;
	return true;
}

/* One register into libdwfl's frame state, at its DWARF number (rip's is
 * the return-address column the CFI unwinds). */
static bool set_register(Dwfl_Thread *thread, enum arch_reg reg, uint64_t value)
{
	Dwarf_Word word = value;
	return dwfl_thread_state_registers(thread, arch_reg_dwarf(reg), 1, &word);
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	const struct unwind_regs *r = u->regs;
	if (!set_register(thread, ARCH_RBP, r->rbp) || !set_register(thread, ARCH_RSP, r->rsp) ||
	    !set_register(thread, ARCH_RIP, r->rip))
		return false;
	if (r->callee_saved_unknown)
		return true;
	return set_register(thread, ARCH_RBX, r->rbx) && set_register(thread, ARCH_R12, r->r12) &&
	       set_register(thread, ARCH_R13, r->r13) && set_register(thread, ARCH_R14, r->r14) &&
	       set_register(thread, ARCH_R15, r->r15);
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct unwinder *unwinder_new(Dwfl *dwfl, pid_t pid, struct xerr *e)
{
	struct unwinder *u = calloc(1, sizeof *u);
	if (!u) {
		xerr_oom(e);
		return NULL;
	}
	u->dwfl = dwfl;
	u->pid = pid;
	u->window = malloc(STACK_WINDOW);
	u->mem_fd = proc_open_mem(pid, O_RDONLY);
	if (!u->window || u->mem_fd < 0) {
		xerr_set(e, "cannot open /proc/%d/mem: %s (the fast walker needs it; use the gdb walker with "
			 "`set walker gdb`)", (int)pid, strerror(errno));
		unwinder_free(u);
		return NULL;
	}
	if (!dwfl_attach_state(dwfl, NULL, pid, &callbacks, u)) {
		xerr_set(e, "libdwfl cannot unwind this process: %s", dwfl_errmsg(-1));
		unwinder_free(u);
		return NULL;
	}
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->mem_fd >= 0)
		close(u->mem_fd);
	free(u->window);
	free(u);
}

struct walk {
	uint64_t *pcs;
	size_t max, n;
};

static int frame_callback(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Reads the stack window from the red zone below rsp upwards into buf;
 * returns the bytes read and sets *start to the address of buf[0]. */
static size_t read_window(struct unwinder *u, uint64_t rsp, unsigned char *buf, uint64_t *start)
{
	*start = rsp >= ARCH_RED_ZONE ? rsp - ARCH_RED_ZONE : 0;
	ssize_t got = pread(u->mem_fd, buf, STACK_WINDOW, (off_t)*start);
	if (got <= 0 && *start != rsp) {
		/* rsp at the very bottom of its mapping: no red zone to read. */
		*start = rsp;
		got = pread(u->mem_fd, buf, STACK_WINDOW, (off_t)*start);
	}
	if (got < 0) {
		/* The window may cross the end of the stack mapping: read less. */
		got = pread(u->mem_fd, buf, 4096 - (rsp & 4095), (off_t)rsp);
	}
	return got > 0 ? (size_t)got : 0;
}

static int walk_window(struct unwinder *u, pid_t tid, const struct unwind_regs *regs, uint64_t *pcs,
		       size_t max, size_t *n, bool *complete, struct xerr *e)
{
	u->tid = tid;
	u->regs = regs;
	u->window_missed = false;
	struct walk w = { pcs, max, 0 };
	int rc = dwfl_getthread_frames(u->dwfl, tid, frame_callback, &w);
	*n = w.n;
	if (w.n == 0)
		return xerr_set(e, "cannot unwind thread %d: %s", (int)tid, dwfl_errmsg(-1));
	/* 0: reached the outermost frame. -1 at the end is how libdwfl reports
	 * "no caller" on some frames, so a walk with frames is not an error. */
	*complete = (rc == 0 || (rc == -1 && w.n < max)) && !u->window_missed;
	return 0;
}

int unwinder_walk(struct unwinder *u, pid_t tid, const struct unwind_regs *regs,
		  uint64_t *pcs, size_t max, size_t *n, bool *complete, struct xerr *e)
{
	*n = 0;
	*complete = false;
	if (max == 0)
		return 0;
	u->window_len = read_window(u, regs->rsp, u->window, &u->window_start);
	u->view = u->window;
	u->live_reads = true;
	return walk_window(u, tid, regs, pcs, max, n, complete, e);
}

int unwinder_capture(struct unwinder *u, pid_t tid, const struct unwind_regs *regs, struct stack_capture *c,
		     struct xerr *e)
{
	if (!c->window && !(c->window = malloc(STACK_WINDOW)))
		return xerr_oom(e);
	c->tid = tid;
	c->regs = *regs;
	c->window_len = read_window(u, regs->rsp, c->window, &c->window_start);
	return 0;
}

int unwinder_walk_capture(struct unwinder *u, const struct stack_capture *c, uint64_t *pcs, size_t max,
			  size_t *n, bool *complete, struct xerr *e)
{
	*n = 0;
	*complete = false;
	if (max == 0 || !c->window)
		return 0;
	u->window_len = c->window_len;
	u->window_start = c->window_start;
	u->view = c->window;
	u->live_reads = false;
	return walk_window(u, c->tid, &c->regs, pcs, max, n, complete, e);
}

void unwinder_capture_release(struct stack_capture *c)
{
	free(c->window);
	c->window = NULL;
	c->window_len = 0;
}
