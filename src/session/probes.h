/* probes.h — what the tracer asks of gdb, in typed calls: breakpoints and
 * catchpoints, the instructions at an address, a value in a thread's frame,
 * and the stops gdb reports. Every word of gdb's vocabulary (MI commands,
 * record fields) stays behind this header, so trace/ speaks no MI and a
 * session of another kind (gdbserver, a direct RSP client) means
 * reimplementing session/ alone.
 *
 * Return conventions as in session.h: 0 on success, -1 with e filled (gdb
 * refused, or is gone). Numbers are gdb's breakpoint numbers (> 0) and
 * gdb's thread ids. Nothing here plants a byte without
 * session_remember_code_byte having been asked first: that is the caller's
 * part (the rescue puts back only what was remembered).
 */
#ifndef XGDBPROF_SESSION_PROBES_H
#define XGDBPROF_SESSION_PROBES_H

#include "session/session.h"

#include <stddef.h>
#include <stdint.h>

/* A breakpoint at addr, for every thread. *number is gdb's number. */
int session_break_insert(struct session *s, uint64_t addr, int *number, struct xerr *e);

/* A one-shot breakpoint at addr for one thread (gdb id): gdb deletes it at
 * its first hit. */
int session_break_insert_once(struct session *s, uint64_t addr, int gdb_thread, int *number, struct xerr *e);

/* Enables, disables or deletes breakpoints (and catchpoints) by number, in
 * chunks of a few dozen per command. n may be 0. */
int session_breaks_enable(struct session *s, const int *numbers, size_t n, struct xerr *e);
int session_breaks_disable(struct session *s, const int *numbers, size_t n, struct xerr *e);
int session_breaks_delete(struct session *s, const int *numbers, size_t n, struct xerr *e);

/* A catchpoint on the system calls numbered nrs[0..n) (n == 0: every
 * system call). Only numbers reach gdb's console command. */
int session_catch_syscalls(struct session *s, const int *nrs, size_t n, int *number, struct xerr *e);

/* Reads n bytes of the target's memory at addr as gdb sees them: under a
 * breakpoint of gdb's, the original byte, not its int3. */
int session_read_memory(struct session *s, uint64_t addr, void *buf, size_t n, struct xerr *e);

/* Writes n bytes at addr through gdb, which keeps the copies it holds of
 * bytes under its breakpoints in step. Code bytes: the caller asks
 * session_remember_patch first, and writes only with every thread
 * stopped. */
int session_write_memory(struct session *s, uint64_t addr, const void *buf, size_t n, struct xerr *e);

/* session_write_memory for many ranges, sent to gdb in one batch, which it
 * runs back to back in this order with no round trip to us between them
 * (an entry counter's code and jump: 62 round trips for 31 probes held
 * the target 16-27 ms). Sets each w[i].rc (0, or -1: not written);
 * returns 0 when all were written, else -1 with e naming the failure. */
struct session_memory_write {
	uint64_t addr;
	const void *buf;
	size_t n;
	int rc;
};
int session_write_memory_batch(struct session *s, struct session_memory_write *w, size_t n, struct xerr *e);

/* A catchpoint on fork: its stops call session_on_fork's callback while
 * gdb holds the child. */
int session_catch_fork(struct session *s, struct xerr *e);

/* One machine instruction as gdb disassembles it (AT&T syntax). */
#define SESSION_INSN_TEXT 256
struct session_insn {
	uint64_t addr;
	char text[SESSION_INSN_TEXT];  /* "" when gdb gave none; cut at the size */
};

/* The instructions starting in [from, to): fills up to max of them and
 * returns how many gdb listed (at most max), or -1 with e. */
int session_disassemble(struct session *s, uint64_t from, uint64_t to, struct session_insn *out, size_t max,
			struct xerr *e);

/* Every instruction starting in [from, to), read in as many calls as it
 * takes: 0 with *out (malloc'd, the caller frees it) and *n, or -1 with e. */
int session_disassemble_all(struct session *s, uint64_t from, uint64_t to, struct session_insn **out, size_t *n,
			    struct xerr *e);

/* Whether a direct branch or call among insns[0..n) lands in (lo, hi):
 * true, with the first such instruction's address in *from if from. */
bool session_insns_branch_into(const struct session_insn *insns, size_t n, uint64_t lo, uint64_t hi, uint64_t *from);

/* Evaluates expr in frame `frame` of thread gdb_thread, which must be
 * stopped: 0 with *value (gdb's text of the value, malloc'd: the caller
 * frees it), or -1 with gdb's message in e (e.g. an optimized-out value). */
int session_evaluate(struct session *s, int gdb_thread, int frame, const char *expr, char **value,
		     struct xerr *e);

/* Asks gdb to stop every thread, without waiting for the stops: they come
 * as session_wait_stop's events. */
int session_interrupt_all(struct session *s, struct xerr *e);

enum session_stop_reason {
	SESSION_STOP_NONE,            /* not a stop: another record (running, a notification) */
	SESSION_STOP_BREAKPOINT,      /* breakpoint-hit */
	SESSION_STOP_SYSCALL_ENTRY,   /* a syscall catchpoint, at the call's entry */
	SESSION_STOP_SYSCALL_RETURN,  /* ... at its return */
	SESSION_STOP_SIGNAL,          /* signal-received */
	SESSION_STOP_EXITED,          /* the process exited (normally, with a code, or by a signal) */
	SESSION_STOP_EXEC,            /* it exec'd: stopped at the new program's first instruction */
	SESSION_STOP_FORK,            /* the fork catchpoint: the forking thread, held while gdb lets the child go */
	SESSION_STOP_OTHER,           /* a stop of another reason (the end of a step...) */
};

/* One record gdb sent, as the tracer needs it. Strings are copies owned
 * by the event (session_stop_release frees them). */
struct session_stop {
	enum session_stop_reason reason;
	int gdb_thread;               /* the thread that stopped; 0 when gdb named none */
	int breakpoint;               /* SESSION_STOP_BREAKPOINT: its number, else 0 */
	long long syscall_nr;         /* syscall stops: the number, else -1 */
	char *syscall_name;           /* syscall stops: gdb's name for it, NULL if none */
	char *signal_name;            /* SESSION_STOP_SIGNAL: "SIGABRT"..., else NULL */
	char **frame_args;            /* the stopped frame's parameter names (gdb's frame
				       * arguments, names only), nframe_args of them */
	size_t nframe_args;
};

/* The next record from gdb, waiting up to timeout_ms (0: poll, -1:
 * forever); keeps the session's view of the target in sync as
 * session_idle does. Returns 1 with *out filled (release it), 0 on
 * timeout (*out empty), -1 with e when gdb is gone or out of memory. */
int session_wait_stop(struct session *s, int timeout_ms, struct session_stop *out, struct xerr *e);

/* Frees what a session_stop holds and empties it; safe twice. */
void session_stop_release(struct session_stop *stop);

#endif
