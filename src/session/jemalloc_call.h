/* jemalloc_call.h — asks the jemalloc linked into a stopped target about its
 * heap profiling and has it dump its own sampled heap profile (prof.dump),
 * through gdb calls of the target's mallctl (docs/safety.md, "Calling
 * jemalloc's mallctl").
 *
 * This is the one place xgdbprof runs target code. Every call goes through
 * gdb on one thread with scheduler-locking on (the others stay stopped) and
 * unwind-on-signal on (a fault in the call is unwound, not left as a
 * dummy frame); its memory is a private anonymous page the target maps for
 * us (mmap, a system call wrapper that takes no lock) and unmaps at the
 * end, so nothing of ours stays in the target. Calls are made only at a
 * safe point: no thread has a jemalloc frame on its stack, so none holds
 * an allocator lock that mallctl could wait for.
 *
 * The target must be stopped (all-stop session). Functions return 0, or
 * -1 with the reason in e.
 */
#ifndef XGDBPROF_JEMALLOC_CALL_H
#define XGDBPROF_JEMALLOC_CALL_H

#include "session/session.h"
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

/* What the caller knows from its own symbols (a session may run gdb
 * without any): addresses of the target's functions, and a test of a PC
 * for the safe point. Zero addresses and a NULL test: gdb looks the names
 * up and names the frames (a session with symbols). */
struct jemalloc_hooks {
	uint64_t mallctl;         /* with mallctl_name */
	char mallctl_name[16];
	uint64_t mmap, munmap;
	bool (*in_jemalloc)(void *ctx, uint64_t pc);
	void *ctx;
};

struct jemalloc_target {
	enum jemalloc_state state;
	char mallctl_name[16];    /* "mallctl" or tikv-jemallocator's "_rjem_mallctl" */
	uint64_t mallctl;         /* its address */
	int gdb_thread;           /* the thread the calls run on */
	unsigned lg_prof_sample;  /* opt.lg_prof_sample (with profiling) */
	bool prof_accum;          /* opt.prof_accum: dumps carry allocations since the start */
	uint64_t scratch_page;    /* where inspect's scratch page was (unmapped since): for tests */
	uint64_t mmap, munmap;    /* their addresses, 0: gdb's names */
	const struct jemalloc_hooks *hooks;   /* the caller's, kept for the calls after inspect; may be NULL */
};

/* A sentence for the state, for messages ("jemalloc is profiling"). */
const char *jemalloc_state_text(enum jemalloc_state state);

/* Finds the target's mallctl and reads config.prof, opt.prof, prof.active,
 * opt.lg_prof_sample and opt.prof_accum. ABSENT is no error. Reaches a safe
 * point first: while a thread is inside jemalloc the target is resumed for
 * a few milliseconds and stopped again, up to 50 times, then -1 with the
 * thread named. Every function below does the same. */
int jemalloc_inspect(struct session *s, const struct jemalloc_hooks *hooks, struct jemalloc_target *out,
		     struct xerr *e);

/* Writes prof.active (the caller turns it off again at the end when it
 * turned it on). The safe point is checked again. */
int jemalloc_set_active(struct session *s, struct jemalloc_target *t, bool on, struct xerr *e);

/* Has jemalloc write its heap profile to path (an absolute path of at most
 * 1024 bytes in a directory only we can write). The safe point is checked
 * again. */
int jemalloc_dump(struct session *s, const struct jemalloc_target *t, const char *path, struct xerr *e);

#endif
