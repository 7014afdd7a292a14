/* syscalls.h — x86-64 Linux system calls as data: numbers and names, which
 * calls only wait, and the results a signal leaves in an interrupted one.
 *
 * Contract: pure functions over constant tables (no state, no allocation,
 * safe from any thread; nothing of ours is used). Names are the kernel's
 * (<asm/unistd_64.h> without __NR_) and returned as static strings.
 * Lookups answer NULL (number -> name) or -1 (name -> number) for what the
 * table does not hold; negative numbers (-1 is orig_rax outside a call)
 * are never in it. Numbers are the x86-64 ABI's, which never renumbers.
 */
#ifndef XGDBPROF_ARCH_SYSCALLS_H
#define XGDBPROF_ARCH_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arch_syscall {
	const char *name;
	int nr;
};

/* The whole table, ascending by number; *n is set to its length. */
const struct arch_syscall *arch_syscalls(size_t *n);

/* The call's name, or NULL for a number no x86-64 call has. */
const char *arch_syscall_name(int64_t nr);

/* The call's number, or -1 for a name no x86-64 call has (or NULL). */
int arch_syscall_number(const char *name);

/* Numbers the code itself needs: sched_yield (a spinning waiter), futex
 * (its operation decides whether it waits), restart_syscall (what the
 * kernel runs to resume a sleep a signal interrupted,
 * ERESTART_RESTARTBLOCK). */
enum {
	ARCH_SYSCALL_SCHED_YIELD = 24,
	ARCH_SYSCALL_FUTEX = 202,
	ARCH_SYSCALL_RESTART_SYSCALL = 219,
};

/* The call's name when a thread inside it is off the CPU, or about to
 * leave it: calls that only wait (for a lock, a timer, an event, a child)
 * or give the CPU away (sched_yield); futex only for its waiting
 * operations (futex_op, its second argument). NULL for every other call,
 * a blocking read among them (it may be running in the kernel), and for
 * nr < 0. */
const char *arch_syscall_waiting(int64_t nr, uint64_t futex_op);

/* Why a thread sitting in call nr is off the CPU, in a few words ("futex
 * wait", "sleep", "poll/epoll", "read", ...); wider than
 * arch_syscall_waiting (a blocking read is a wait here). "no system call"
 * for nr -1, "other system call" for any call not classified. Never NULL. */
const char *arch_syscall_wait_reason(int64_t nr, uint64_t futex_op);

/* The kernel's errno values for results a signal leaves in a call: EINTR
 * reaches the program; the ERESTART* codes (512..516, ENOIOCTLCMD among
 * them) are kernel-internal and seen only by a tracer at the call's exit
 * stop, before the kernel restarts the call or turns them into -EINTR. */
enum {
	ARCH_EINTR = 4,
	ARCH_ERESTARTSYS = 512,
	ARCH_ERESTARTNOINTR = 513,
	ARCH_ERESTARTNOHAND = 514,
	ARCH_ENOIOCTLCMD = 515,
	ARCH_ERESTART_RESTARTBLOCK = 516,
};

/* Whether a call's result (rax at its exit stop) says the kernel will
 * restart it: -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND or
 * -ERESTART_RESTARTBLOCK (restarted through restart_syscall). */
bool arch_syscall_restarts(int64_t result);

/* Whether a call's result says a signal found it inside rather than the
 * call ending by itself: -EINTR or any code from -ERESTARTSYS to
 * -ERESTART_RESTARTBLOCK. */
bool arch_syscall_interrupted(int64_t result);

#endif
