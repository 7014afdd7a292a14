/* target_call.h — runs one function of the target on one of its threads
 * without gdb's inferior calls (docs/safety.md, "Calling jemalloc's
 * mallctl").
 *
 * gdb's `call` leaves a dummy frame whose return lands on a breakpoint of
 * gdb's at the program's entry point: gdb killed during the call left the
 * thread to return there and the target died of SIGTRAP (or, with the int3
 * healed, to run the program's startup again). Here the thread is instead
 * sent through a stub of ours, written into unused bytes past the end of a
 * module's executable segment: it steps over the red zone, saves the flags,
 * every general register and the whole vector state (xsave), calls the
 * function with the arguments as immediates, stores the result and a done
 * mark in unused bytes past a module's .bss, restores everything and jumps
 * back to where the thread was (a system call it was stopped in is
 * restarted, as the kernel would have). gdb only moves the thread's PC; the
 * target then runs freely while the call runs, and gdb, xgdbprof or both
 * dying at any point leave the thread to finish and carry on as before.
 *
 * The areas come from the caller (symbolizer_module_slack), memory the
 * program maps but never uses; their bytes are put back at close, once no
 * thread is inside the stub. The caller's constants (strings the function
 * reads) go after the stub (target_call_constants), its buffers after the
 * done mark (target_call_buffers), written with session_write_memory.
 *
 * All-stop sessions, the target stopped on entry and on return. Functions
 * return 0, or -1 with the reason in e.
 */
#ifndef XGDBPROF_TARGET_CALL_H
#define XGDBPROF_TARGET_CALL_H

#include "session/session.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>

/* Bytes the stub takes at the start of the code area, and the done mark
 * and result at the start of the data area. */
#define TARGET_CALL_MAX_CALLS 5   /* the stub then takes at most 591 bytes */
#define TARGET_CALL_STUB_BYTES 640
#define TARGET_CALL_MARK_BYTES (8 + 8 * TARGET_CALL_MAX_CALLS)

struct target_call_area {
	uint64_t code, code_len;   /* unused executable bytes (any content) */
	uint64_t data, data_len;   /* unused writable bytes, all zero */
};

struct target_call {
	struct session *s;
	struct target_call_area area;
	uint8_t *code_original, *data_original;
	bool left_in_place;        /* a call did not end: its bytes stay (unused memory) */
	uint64_t running_ns;       /* how long the calls let the target run (not stopped time) */
	int mem_fd;                /* the target's /proc/PID/mem, read for the mark while it runs */
	unsigned xsave_bytes;      /* 0: fxsave's 512 */
};

/* Checks the areas (the data must read as zero and hold the mark; the code
 * the stub) and keeps their bytes. */
int target_call_open(struct target_call *c, struct session *s, const struct target_call_area *area,
		     struct xerr *e);

/* Where the caller's constants and buffers go. */
uint64_t target_call_constants(const struct target_call *c);
uint64_t target_call_buffers(const struct target_call *c);

/* Whether thread gdb_thread can be sent through the stub now: stopped in
 * user code, or in a system call the kernel would restart (or that had
 * ended). 1 yes, 0 no, -1 with e. */
int target_call_thread_ok(struct target_call *c, int gdb_thread, struct xerr *e);

/* What the call reads and what it starts with in its buffers, written
 * with the stub (at target_call_constants and target_call_buffers). */
struct target_call_inputs {
	const void *constants;
	size_t constants_len;
	const void *buffers;
	size_t buffers_len;
};

/* One function call: fn(args[0..5]). */
struct target_call_one {
	uint64_t fn;
	uint64_t args[6];
};

/* Makes calls[0..ncalls) one after the other (ncalls <= TARGET_CALL_MAX_CALLS:
 * one trip through the stub, one resume and one stop of the target) on
 * thread gdb_thread, lets the whole target run until they are done (at
 * most timeout_ms), and stops it again: results[k] is call k's rax. in
 * may be NULL. On a timeout the target is stopped, the calls left to
 * finish on their own, and -1. */
int target_call_run(struct target_call *c, int gdb_thread, const struct target_call_one *calls, size_t ncalls,
		    const struct target_call_inputs *in, int timeout_ms, uint64_t *results, struct xerr *e);

/* Puts the areas' bytes back (waiting, 1 ms of running at a time, for a
 * thread still in the stub's last instructions), unless a call was left
 * running; frees. The target stays stopped. */
int target_call_close(struct target_call *c, struct xerr *e);

#endif
