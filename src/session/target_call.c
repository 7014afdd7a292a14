/* target_call.c — a function of the target run through a self-restoring
 * stub (target_call.h). */
#include "session/target_call.h"

#include "procfs/proc.h"
#include "session/probes.h"
#include "session/restore.h"
#include "session/session_internal.h"

#include <cpuid.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The kernel's restart codes, as a thread stopped in a system call holds
 * them in rax (include/linux/errno.h): the call is restarted on resume
 * unless the PC is moved, as ours is. */
enum { ERESTARTSYS_ = 512, ERESTARTNOINTR_ = 513, ERESTARTNOHAND_ = 514, ERESTART_RESTARTBLOCK_ = 516,
       NR_RESTART_SYSCALL = 219 };

/* Every x86-64 state component's end in xsave's standard form, the
 * furthest first: AMX tile data ends at 11008 (2816 + 8192), AVX-512's
 * Hi16_ZMM at 2688, PKRU at 2696. What CPUID says (leaf 0xD: the size for
 * the features the kernel enabled) is the size used unless smaller than
 * this: our own CPUID may not be the target's truth (valgrind, running us,
 * reports its own: 832 bytes where the target's xsave wrote 2696, over our
 * saved registers, and the target crashed). */
#define XSAVE_STANDARD_MAX 11008

/* Bytes to reserve for the vector state with xsave (every feature the
 * kernel enabled is saved: the mask is all ones), 0 without xsave (then
 * fxsave, 512 bytes). Whether the CPU has xsave is asked of the kernel
 * (/proc/cpuinfo), which nothing between us and it rewrites. */
static unsigned xsave_area_bytes(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool xsave = false;
	while (f && !xsave && fgets(line, sizeof line, f))
		if (!strncmp(line, "flags", 5))
			xsave = strstr(line, " xsave ") || strstr(line, " xsave\n");
	if (f)
		fclose(f);
	if (!xsave)
		return 0;
	unsigned a, b = 0, c, d;
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d))
		b = 0;
	return b > XSAVE_STANDARD_MAX ? (b + 63) & ~63u : XSAVE_STANDARD_MAX + 64;
}

static void put_u64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, sizeof v);
}

static void put_u32(uint8_t *at, uint32_t v)
{
	memcpy(at, &v, sizeof v);
}

/* The stub. Entered with the thread's own registers, at any instruction
 * boundary of its code:
 *   lea -128(%rsp),%rsp; pushfq; push every general register but rsp;
 *   mov %rsp,%rbx; sub $AREA,%rsp; and $-64,%rsp; cld;
 *   (xsave: zero the area's 64-byte header, rep stosq;) all-ones mask;
 *   xsave64 (%rsp) / fxsave64 (%rsp);
 *   for each call: movabs the six arguments; xor %eax,%eax (no vector
 *   arguments); movabs $fn,%r11; call *%r11; movabs %rax,RESULT[k];
 *   then mov $1,%eax; movabs %rax,MARK;
 *   all-ones mask; xrstor64 (%rsp) / fxrstor64 (%rsp);
 *   mov %rbx,%rsp; pop them back (then, for a system call to restart,
 *   movabs $nr,%rax); popfq; lea 128(%rsp),%rsp;
 *   jmp *0(%rip), then the address to go back to.
 * rbx is callee-saved: the frame is found again after the call. The stack
 * at the call is 64-aligned, as the ABI wants (16). */
static size_t build_stub(uint8_t *out, unsigned xsave_bytes, const struct target_call_one *calls, size_t ncalls,
			 uint64_t mark, uint64_t back_to, const int64_t *rax_back)
{
	size_t n = 0;
#define EMIT(...)                                                   \
	do {                                                        \
		static const uint8_t bytes_[] = { __VA_ARGS__ };    \
		memcpy(out + n, bytes_, sizeof bytes_);             \
		n += sizeof bytes_;                                 \
	} while (0)
	EMIT(0x48, 0x8d, 0x64, 0x24, 0x80);                         /* lea -0x80(%rsp),%rsp */
	EMIT(0x9c);                                                 /* pushfq */
	EMIT(0x50, 0x51, 0x52, 0x53, 0x55, 0x56, 0x57);             /* rax rcx rdx rbx rbp rsi rdi */
	EMIT(0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53,        /* r8 .. r15 */
	     0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57);
	EMIT(0x48, 0x89, 0xe3);                                     /* mov %rsp,%rbx */
	EMIT(0x48, 0x81, 0xec);                                     /* sub $imm32,%rsp */
	put_u32(out + n, xsave_bytes ? xsave_bytes : 512);
	n += 4;
	EMIT(0x48, 0x83, 0xe4, 0xc0);                               /* and $-64,%rsp */
	EMIT(0xfc);                                                 /* cld */
	if (xsave_bytes) {
		/* xrstor faults on a header with stray bits: zero it first */
		EMIT(0x31, 0xc0);                                   /* xor %eax,%eax */
		EMIT(0x48, 0x8d, 0xbc, 0x24, 0x00, 0x02, 0x00, 0x00); /* lea 0x200(%rsp),%rdi */
		EMIT(0xb9, 0x08, 0x00, 0x00, 0x00);                 /* mov $8,%ecx */
		EMIT(0xf3, 0x48, 0xab);                             /* rep stosq */
		EMIT(0xb8, 0xff, 0xff, 0xff, 0xff);                 /* mov $-1,%eax */
		EMIT(0xba, 0xff, 0xff, 0xff, 0xff);                 /* mov $-1,%edx */
		EMIT(0x48, 0x0f, 0xae, 0x24, 0x24);                 /* xsave64 (%rsp) */
	} else {
		EMIT(0x48, 0x0f, 0xae, 0x04, 0x24);                 /* fxsave64 (%rsp) */
	}
	static const uint8_t movabs[6][2] = { { 0x48, 0xbf }, { 0x48, 0xbe }, { 0x48, 0xba },
					      { 0x48, 0xb9 }, { 0x49, 0xb8 }, { 0x49, 0xb9 } };
	for (size_t k = 0; k < ncalls; k++) {
		for (int i = 0; i < 6; i++) {                       /* rdi rsi rdx rcx r8 r9 */
			memcpy(out + n, movabs[i], 2);
			put_u64(out + n + 2, calls[k].args[i]);
			n += 10;
		}
		EMIT(0x31, 0xc0);                                   /* xor %eax,%eax */
		EMIT(0x49, 0xbb);                                   /* movabs $fn,%r11 */
		put_u64(out + n, calls[k].fn);
		n += 8;
		EMIT(0x41, 0xff, 0xd3);                             /* call *%r11 */
		EMIT(0x48, 0xa3);                                   /* movabs %rax,RESULT[k] */
		put_u64(out + n, mark + 8 + 8 * k);
		n += 8;
	}
	EMIT(0xb8, 0x01, 0x00, 0x00, 0x00);                         /* mov $1,%eax */
	EMIT(0x48, 0xa3);                                           /* movabs %rax,MARK */
	put_u64(out + n, mark);
	n += 8;
	if (xsave_bytes) {
		EMIT(0xb8, 0xff, 0xff, 0xff, 0xff);                 /* mov $-1,%eax */
		EMIT(0xba, 0xff, 0xff, 0xff, 0xff);                 /* mov $-1,%edx */
		EMIT(0x48, 0x0f, 0xae, 0x2c, 0x24);                 /* xrstor64 (%rsp) */
	} else {
		EMIT(0x48, 0x0f, 0xae, 0x0c, 0x24);                 /* fxrstor64 (%rsp) */
	}
	EMIT(0x48, 0x89, 0xdc);                                     /* mov %rbx,%rsp */
	EMIT(0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c,        /* r15 .. r8 */
	     0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58);
	EMIT(0x5f, 0x5e, 0x5d, 0x5b, 0x5a, 0x59, 0x58);             /* rdi rsi rbp rbx rdx rcx rax */
	if (rax_back) {                                             /* a system call to make again */
		EMIT(0x48, 0xb8);                                   /* movabs $nr,%rax */
		put_u64(out + n, (uint64_t)*rax_back);
		n += 8;
	}
	EMIT(0x9d);                                                 /* popfq */
	EMIT(0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00);       /* lea 0x80(%rsp),%rsp */
	EMIT(0xff, 0x25, 0x00, 0x00, 0x00, 0x00);                   /* jmp *0(%rip) */
	put_u64(out + n, back_to);
	n += 8;
#undef EMIT
	return n;
}

int target_call_open(struct target_call *c, struct session *s, const struct target_call_area *area,
		     struct xerr *e)
{
	*c = (struct target_call){ .s = s, .area = *area, .xsave_bytes = xsave_area_bytes(), .mem_fd = -1 };
	if (area->code_len < TARGET_CALL_STUB_BYTES || area->data_len < TARGET_CALL_MARK_BYTES)
		return xerr_set(e, "no unused bytes for the call's code (%" PRIu64 " of %d) or mark (%" PRIu64 " of %d)",
				area->code_len, TARGET_CALL_STUB_BYTES, area->data_len, TARGET_CALL_MARK_BYTES);
	c->code_original = malloc(area->code_len);
	c->data_original = calloc(1, area->data_len);
	if (!c->code_original || !c->data_original) {
		target_call_close(c, NULL);
		return xerr_oom(e);
	}
	c->mem_fd = proc_open_mem(session_pid(s), O_RDONLY);
	if (c->mem_fd < 0) {
		target_call_close(c, NULL);
		return xerr_set(e, "cannot read the target's memory through /proc/%d/mem", (int)session_pid(s));
	}
	if (session_read_memory(s, area->code, c->code_original, area->code_len, e) < 0 ||
	    session_read_memory(s, area->data, c->data_original, area->data_len, e) < 0) {
		target_call_close(c, NULL);
		return -1;
	}
	for (uint64_t i = 0; i < area->data_len; i++)
		if (c->data_original[i]) {
			target_call_close(c, NULL);
			return xerr_set(e, "the unused bytes past .bss at 0x%" PRIx64 " are in use", area->data);
		}
	/* should gdb die mid-call, its rescue (and the guardian's) must not
	 * take a 0xCC of the stub's immediates for an int3 of gdb's, and puts
	 * both back once the call is done (session_set_call_mark) */
	if (session_remember_unused(s, area->code, c->code_original, area->code_len, e) < 0 ||
	    session_remember_unused(s, area->data, c->data_original, area->data_len, e) < 0) {
		target_call_close(c, NULL);
		return -1;
	}
	return 0;
}

uint64_t target_call_constants(const struct target_call *c)
{
	return c->area.code + TARGET_CALL_STUB_BYTES;
}

uint64_t target_call_buffers(const struct target_call *c)
{
	return c->area.data + TARGET_CALL_MARK_BYTES;
}

enum { CALL_RIP, CALL_RAX, CALL_ORIG_RAX, CALL_RSP, CALL_NREGS };

/* rip, rax, orig_rax and rsp of a stopped thread. */
static int thread_state(struct target_call *c, int gdb_thread, uint64_t regs[CALL_NREGS], struct xerr *e)
{
	static const char *const names[CALL_NREGS] = { "rip", "rax", "orig_rax", "rsp" };
	int numbers[CALL_NREGS];
	if (session_register_numbers(c->s, names, CALL_NREGS, numbers, e) < 0)
		return -1;
	for (int i = 0; i < CALL_NREGS; i++)
		if (numbers[i] < 0)
			return xerr_set(e, "gdb has no register %s", names[i]);
	return session_thread_registers(c->s, gdb_thread, numbers, CALL_NREGS, regs, e);
}

/* The stack room a call needs below the thread's stack pointer: the red
 * zone, the saved registers, the vector state and the called function's
 * own frames (mallctl's dump goes a few dozen frames deep). */
#define CALL_STACK_ROOM (256u * 1024u)

/* Whether the mapping holding sp leaves CALL_STACK_ROOM below it: a
 * thread's stack does (8 MiB for glibc's threads, 2 MiB for Rust's; the
 * main thread's [stack] grows); a signal handler's alternate stack (a few
 * KiB: Rust's for stack overflows) does not. */
static bool stack_has_room(pid_t pid, uint64_t sp)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool room = false;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2 || sp < lo || sp >= hi)
			continue;
		room = sp - lo >= CALL_STACK_ROOM || strstr(line, "[stack]") != NULL;
		break;
	}
	if (f)
		fclose(f);
	return room;
}

int target_call_thread_ok(struct target_call *c, int gdb_thread, struct xerr *e)
{
	uint64_t regs[CALL_NREGS];
	if (thread_state(c, gdb_thread, regs, e) < 0)
		return -1;
	int64_t rax = (int64_t)regs[CALL_RAX], orig_rax = (int64_t)regs[CALL_ORIG_RAX];
	/* a restart block (nanosleep, a timed futex) is the thread's own:
	 * the call could overwrite it; such a thread is passed over, as is
	 * one running on a small stack (a signal handler's) */
	if (orig_rax >= 0 && rax == -ERESTART_RESTARTBLOCK_)
		return 0;
	return stack_has_room(session_pid(c->s), regs[CALL_RSP]);
}

/* Sends the thread to pc, and tells the kernel it is no longer in a system
 * call (orig_rax -1), in one command to gdb, orig_rax first. An
 * expression's `$pc =` writes rip alone (not gdb's write_pc, which clears
 * orig_rax too): with orig_rax left, the kernel "restarted" the
 * interrupted call on resume by moving the new PC back 2 bytes, into
 * whatever lay before the stub (tests/jemalloc_call_harm.sh's blocked case:
 * SIGSEGV). And an expression is parsed in the frame's language: `a, b`
 * was a syntax error in a Rust frame (valgrind's slow CI run). */
static int send_thread_to(struct target_call *c, int gdb_thread, uint64_t pc, struct xerr *e)
{
	static const char *const names[2] = { "orig_rax", "rip" };
	int numbers[2];
	if (session_register_numbers(c->s, names, 2, numbers, e) < 0)
		return -1;
	if (numbers[0] < 0 || numbers[1] < 0)
		return xerr_set(e, "gdb has no register orig_rax or rip");
	const uint64_t values[2] = { UINT64_MAX, pc };
	return session_thread_write_registers(c->s, gdb_thread, numbers, values, 2, e);
}

static bool pc_in_stub(struct target_call *c, uint64_t pc)
{
	return pc >= c->area.code && pc < c->area.code + TARGET_CALL_STUB_BYTES;
}

/* Whether any thread's PC lies in the stub (the called thread after its
 * mark, on the way back). */
static int any_thread_in_stub(struct target_call *c, struct xerr *e)
{
	struct session_thread *threads = NULL;
	size_t n = 0;
	if (session_threads(c->s, &threads, &n, e) < 0)
		return -1;
	/* the PCs of stopped threads from /proc (no round trip to gdb each);
	 * where /proc says nothing (a thread it shows running a moment after
	 * the stop, or one that is exiting: seen under valgrind, where every
	 * such thread then counted as inside and the stub stayed), gdb's
	 * registers; a thread gdb cannot read either is gone */
	int inside = 0;
	for (size_t i = 0; i < n && !inside; i++) {
		struct proc_syscall where;
		uint64_t regs[CALL_NREGS];
		if (proc_thread_syscall(session_pid(c->s), threads[i].tid, &where) == 0)
			inside = pc_in_stub(c, where.pc);
		else if (thread_state(c, threads[i].gdb_id, regs, NULL) == 0)
			inside = pc_in_stub(c, regs[CALL_RIP]);
	}
	free(threads);
	return inside;
}

/* The target stopped: runs it 1 ms at a time until no thread's PC lies in
 * the stub (the called thread, after its mark, on its way back through the
 * restores), 100 times at most. 0 when none is, 1 when one still is, -1. */
static int let_threads_leave(struct target_call *c, struct xerr *e)
{
	int inside = any_thread_in_stub(c, e);
	for (int tries = 0; inside == 1 && tries < 100; tries++) {
		struct timespec ms = { 0, 1000 * 1000 };
		uint64_t resumed = monotonic_ns();
		if (session_resume(c->s, e) < 0)
			return -1;
		nanosleep(&ms, NULL);
		if (session_stop(c->s, e) < 0)
			return -1;
		c->running_ns += monotonic_ns() - resumed;
		inside = any_thread_in_stub(c, e);
	}
	return inside;
}

int target_call_run(struct target_call *c, int gdb_thread, const struct target_call_one *calls, size_t ncalls,
		    const struct target_call_inputs *in, int timeout_ms, uint64_t *results, struct xerr *e)
{
	if (ncalls == 0 || ncalls > TARGET_CALL_MAX_CALLS)
		return xerr_set(e, "%zu calls in one stub run: 1 to %d", ncalls, TARGET_CALL_MAX_CALLS);
	uint64_t regs[CALL_NREGS];
	if (thread_state(c, gdb_thread, regs, e) < 0)
		return -1;
	uint64_t back_to = regs[CALL_RIP];
	int64_t rax = (int64_t)regs[CALL_RAX], orig_rax = (int64_t)regs[CALL_ORIG_RAX];
	bool restart = orig_rax >= 0 && (rax == -ERESTARTSYS_ || rax == -ERESTARTNOINTR_ ||
					 rax == -ERESTARTNOHAND_ || rax == -ERESTART_RESTARTBLOCK_);
	if (restart) {
		/* what the kernel does on resume, which the moved PC stops: the
		 * syscall instruction again, with the number in rax */
		uint8_t insn[2];
		if (session_read_memory(c->s, back_to - 2, insn, 2, e) < 0)
			return -1;
		if (insn[0] != 0x0f || insn[1] != 0x05)
			return xerr_set(e, "the thread was stopped in a system call not made by a syscall instruction");
		back_to -= 2;
	}
	/* one write for the code and the caller's constants, one for the mark
	 * and its buffers: each is a round trip to gdb while the target waits */
	size_t code_len = TARGET_CALL_STUB_BYTES + (in ? in->constants_len : 0);
	size_t data_len = TARGET_CALL_MARK_BYTES + (in ? in->buffers_len : 0);
	if (code_len > c->area.code_len || data_len > c->area.data_len)
		return xerr_set(e, "the call's constants or buffers do not fit its room");
	uint8_t *code = malloc(code_len), *data = calloc(1, data_len);
	if (!code || !data) {
		free(code);
		free(data);
		return xerr_oom(e);
	}
	/* its room is the stub's whole size (bytes past it are the caller's) */
	uint8_t stub[TARGET_CALL_STUB_BYTES + 128];
	memset(stub, 0xcc, sizeof stub);
	int64_t nr_again = rax == -ERESTART_RESTARTBLOCK_ ? NR_RESTART_SYSCALL : orig_rax;
	if (build_stub(stub, c->xsave_bytes, calls, ncalls, c->area.data, back_to, restart ? &nr_again : NULL) >
	    TARGET_CALL_STUB_BYTES) {
		free(code);
		free(data);
		return xerr_set(e, "%zu calls do not fit the call's code", ncalls);
	}
	memcpy(code, stub, TARGET_CALL_STUB_BYTES);
	if (in && in->constants_len)
		memcpy(code + TARGET_CALL_STUB_BYTES, in->constants, in->constants_len);
	if (in && in->buffers_len)
		memcpy(data + TARGET_CALL_MARK_BYTES, in->buffers, in->buffers_len);
	int written = session_write_memory(c->s, c->area.data, data, data_len, e) < 0 ||
		      session_write_memory(c->s, c->area.code, code, code_len, e) < 0 ? -1 : 0;
	free(code);
	free(data);
	if (written < 0)
		return -1;
	/* the one write of registers: the thread goes nowhere else until it
	 * is made (a system call to restart gets its number back from the
	 * stub itself, and the stub goes back onto its instruction) */
	if (send_thread_to(c, gdb_thread, c->area.code, e) < 0)
		return -1;
	/* from here the thread is on its way: whatever happens to us, it
	 * finishes the call and goes back; the rescue and the guardian put
	 * the bytes back after it */
	c->left_in_place = true;
	session_set_call_mark(c->s, c->area.data);
	uint64_t resumed = monotonic_ns();
	if (session_resume(c->s, e) < 0)
		return -1;
	uint64_t deadline = monotonic_ns() + (uint64_t)timeout_ms * 1000000u, mark[1 + TARGET_CALL_MAX_CALLS] = { 0 };
	size_t mark_len = (1 + ncalls) * sizeof mark[0];
	int rc = 0;
	for (;;) {
		if (pread(c->mem_fd, mark, mark_len, (off_t)c->area.data) != (ssize_t)mark_len) {
			rc = xerr_set(e, "the target's memory could not be read while the call ran (it exited?)");
			break;
		}
		if (mark[0] == 1)
			break;
		if (monotonic_ns() > deadline) {
			rc = xerr_set(e, "the call had not returned after %d ms: left to finish on its own (its code "
				      "stays in unused bytes of the target)", timeout_ms);
			break;
		}
		if (session_idle(c->s, 1, e) < 0) {
			rc = -1;
			break;
		}
		if (!session_target_alive(c->s)) {
			rc = xerr_set(e, "the target ended while the call ran");
			break;
		}
	}
	for (size_t k = 0; rc == 0 && k < ncalls; k++)
		results[k] = mark[1 + k];
	if (session_target_alive(c->s) && !session_is_stopped(c->s) && session_stop(c->s, rc < 0 ? NULL : e) < 0)
		return -1;
	c->running_ns += monotonic_ns() - resumed;
	/* the next call rewrites the stub: the thread must be out of it first
	 * (seen under valgrind, our side slow: a thread still in the restores
	 * was sent into the new stub from the middle of the old one, and the
	 * next call never returned) */
	if (rc == 0) {
		int inside = let_threads_leave(c, e);
		if (inside < 0)
			return -1;
		if (inside)
			return xerr_set(e, "a thread stayed inside the call's code after it returned");
		c->left_in_place = false;
	}
	return rc;
}

/* A call that did not end in target_call_run (its timeout, or gdb found
 * stopped and continued): with gdb still there, the target runs until the
 * mark is set (RESTORE_CALL_WAIT_MS at most), so that close can put the
 * bytes back. True when the call has ended. */
static bool finish_left_call(struct target_call *c)
{
	uint64_t mark = 0, resumed = monotonic_ns(), deadline = resumed + RESTORE_CALL_WAIT_MS * 1000000ull;
	bool ran = session_is_stopped(c->s) && session_resume(c->s, NULL) == 0;
	while (pread(c->mem_fd, &mark, sizeof mark, (off_t)c->area.data) == (ssize_t)sizeof mark && mark == 0 &&
	       monotonic_ns() < deadline && session_gdb_alive(c->s) && session_target_alive(c->s))
		session_idle(c->s, 1, NULL);
	if (ran) {
		if (session_stop(c->s, NULL) < 0)
			return false;
		c->running_ns += monotonic_ns() - resumed;
	}
	return mark != 0 && session_is_stopped(c->s);
}

int target_call_close(struct target_call *c, struct xerr *e)
{
	int rc = 0;
	if (c->left_in_place && c->code_original && session_gdb_alive(c->s) && session_target_alive(c->s) &&
	    finish_left_call(c))
		c->left_in_place = false;
	if (c->code_original && c->data_original && !c->left_in_place && session_target_alive(c->s)) {
		int inside = let_threads_leave(c, e);
		if (inside < 0)
			rc = -1;
		else if (inside)
			c->left_in_place = true;   /* unreachable once left: harmless */
		else if (session_write_memory(c->s, c->area.code, c->code_original, c->area.code_len, e) < 0 ||
			 session_write_memory(c->s, c->area.data, c->data_original, c->area.data_len, e) < 0)
			rc = -1;
		else
			session_set_call_mark(c->s, 0);
	}
	free(c->code_original);
	free(c->data_original);
	c->code_original = c->data_original = NULL;
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	c->mem_fd = -1;
	return rc;
}
