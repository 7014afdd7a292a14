/* weighed.h — the distinct stacks a thread's samples were handed on with,
 * and what they weighed: where the CPU of the rounds that gave the thread no
 * sample is spread at the run's end.
 *
 * Why: a hot-cpu sample weighs the CPU its thread ran in the round before
 * it. A round can give a thread no sample: it was queued in sched_yield
 * when asked, its stop landed in a wait or at a later call's return, its
 * budget was spent. When such a round's CPU went to the thread's next kept
 * sample, it went, by that very selection, to code other than the waits:
 * on kvservice the code just after a spin or a lock (issue 32; docs/
 * sampling.md, "A CPU-time profile"). Pooled and spread over all the
 * thread's samples in proportion to their weights, it moves no share.
 *
 * Contract: weighed_add records a sample (one whose state and stack, every
 * frame's pc, name, line and inlining, equal one recorded adds to it,
 * found through a util/slot_index.h index; beyond WEIGHED_STACKS_MAX
 * distinct stacks a thread's new ones are not recorded and the spread goes
 * to the ones that are); stacks are copied, their strings shared (interned
 * by the symbolizer for the session). weighed_spread_next says what entry i
 * gets of pool, called for i = 0, 1, ... n-1 in turn with *before 0 at the
 * first: shares in proportion to the entries' weights (their sample counts
 * when all weigh 0), summing to pool exactly. Returns: weighed_add 0, or -1
 * with e (no memory).
 */
#ifndef XGDBPROF_WEIGHED_H
#define XGDBPROF_WEIGHED_H

#include "util/error.h"
#include "util/slot_index.h"
#include "util/stack.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WEIGHED_STACKS_MAX 1024

struct weighed_stack {
	struct stack stack;      /* owned copy of the frames */
	char state;              /* the sample's thread state and wait, for the spread's events */
	const char *wait;
	bool kernel;             /* its leaf is an [in kernel: ...] marker */
	uint64_t cpu_ns;         /* what its samples weighed when handed on */
	uint64_t samples;
};

struct weighed_stacks {
	struct weighed_stack *v;
	size_t n, cap;
	struct slot_index index;  /* over v, by the frames' and state's hash */
	uint64_t cpu_ns;         /* the entries' weights, summed */
	uint64_t samples;        /* the entries' samples, summed */
};

int weighed_add(struct weighed_stacks *w, const struct stack *stack, char state, const char *wait, bool kernel,
		uint64_t cpu_ns, struct xerr *e);
uint64_t weighed_spread_next(const struct weighed_stacks *w, size_t i, uint64_t pool_ns, uint64_t *before);
void weighed_release(struct weighed_stacks *w);

#endif
