/* jemalloc_call.h — asks the jemalloc linked into a stopped target about its
 * heap profiling and has it dump its own sampled heap profile (prof.dump),
 * through calls of the target's mallctl (docs/safety.md, "Calling
 * jemalloc's mallctl").
 *
 * This is the one place xgdbprof runs target code. Every call goes through
 * target_call.h, not gdb's inferior calls: one thread is sent through a
 * stub of ours that saves and restores all its registers, in unused bytes
 * of a module, and the target runs freely until the call is done; gdb or
 * xgdbprof dying meanwhile leaves the thread to finish and carry on. What
 * mallctl reads (the name, the value written, the dump's path) sits after
 * the stub; what it writes, in unused bytes past a module's .bss; all put
 * back at the end. Calls are made only at a safe point: no thread has a
 * jemalloc frame on its stack, so none holds an allocator lock the calling
 * thread could wait for while others are stopped.
 *
 * The target must be stopped (all-stop session). Functions return 0, or
 * -1 with the reason in e.
 */
#ifndef XGDBPROF_JEMALLOC_CALL_H
#define XGDBPROF_JEMALLOC_CALL_H

#include "session/session.h"
#include "session/target_call.h"
#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum jemalloc_state {
	JEMALLOC_ABSENT,          /* no mallctl: the allocator is not jemalloc */
	JEMALLOC_NO_PROFILING,    /* built without profiling (config.prof false) */
	JEMALLOC_PROF_OFF,        /* opt.prof false: MALLOC_CONF had no prof:true at start */
	JEMALLOC_PROF_INACTIVE,   /* opt.prof on, prof.active off: nothing is being sampled */
	JEMALLOC_PROF_ACTIVE,     /* sampling: a dump holds the live heap's samples */
};

/* What the caller knows from its own symbols: mallctl's address, memory
 * to run the calls from (symbolizer_unused_room: JEMALLOC_CALL_CODE_BYTES
 * of a code tail, JEMALLOC_CALL_DATA_BYTES of a data tail), and a test of
 * a PC for the safe point (NULL: gdb names the frames). */
#define JEMALLOC_CALL_CODE_BYTES 1152
#define JEMALLOC_CALL_DATA_BYTES 160
struct jemalloc_hooks {
	uint64_t mallctl;         /* 0: not jemalloc */
	char mallctl_name[16];
	struct target_call_area area;
	bool (*in_jemalloc)(void *ctx, uint64_t pc);
	void *ctx;
};

struct jemalloc_target {
	enum jemalloc_state state;
	char mallctl_name[16];    /* "mallctl" or tikv-jemallocator's "_rjem_mallctl" */
	uint64_t mallctl;         /* its address */
	unsigned lg_prof_sample;  /* opt.lg_prof_sample (with profiling) */
	bool prof_accum;          /* opt.prof_accum: dumps carry allocations since the start */
	const struct jemalloc_hooks *hooks;   /* the caller's, kept for the calls after inspect */
	uint64_t running_ns;      /* of the time the calls took, how long the target ran (calls run
				   * with it running; the safe point's retries too): not stopped time */
};

/* A sentence for the state, for messages ("jemalloc is profiling"). */
const char *jemalloc_state_text(enum jemalloc_state state);

/* Reads config.prof, opt.prof, prof.active, opt.lg_prof_sample and
 * opt.prof_accum through hooks->mallctl (0: ABSENT, no error). Reaches a
 * safe point first: while a thread is inside jemalloc, or none can be sent
 * through the stub (each sits in a system call with a restart block), the
 * target is resumed for a few milliseconds and stopped again, up to 50
 * times, then -1 with the thread named. Every function below does the same. */
int jemalloc_inspect(struct session *s, const struct jemalloc_hooks *hooks, struct jemalloc_target *out,
		     struct xerr *e);

/* Writes prof.active (the caller turns it off again at the end when it
 * turned it on). The safe point is checked again. */
int jemalloc_set_active(struct session *s, struct jemalloc_target *t, bool on, struct xerr *e);

/* Has jemalloc write its heap profile to path (an absolute path of at most
 * JEMALLOC_CALL_PATH_BYTES - 1 bytes in a directory only we can write).
 * The safe point is checked again. */
#define JEMALLOC_CALL_PATH_BYTES 256
int jemalloc_dump(struct session *s, struct jemalloc_target *t, const char *path, struct xerr *e);

#endif
