/* weighed.c — a thread's distinct sampled stacks and their weights
 * (weighed.h). */
#include "config.h"
#include "stacks/weighed.h"
#include "util/hash.h"

#include <stdlib.h>
#include <string.h>

/* The sampler's own identity of a stack: each frame's pc, name (interned
 * by the symbolizer: compared by pointer), line and inlining, and the
 * sample's state. */
static uint64_t stack_key(const struct stack *s, char state)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &s->nframes, sizeof s->nframes);
	h = hash_fnv1a(h, &state, 1);
	for (size_t f = 0; f < s->nframes; f++) {
		const struct frame *fr = &s->frames[f];
		uintptr_t name = (uintptr_t)fr->function;
		h = hash_fnv1a(h, &fr->pc, sizeof fr->pc);
		h = hash_fnv1a(h, &name, sizeof name);
		h = hash_fnv1a(h, &fr->line, sizeof fr->line);
		h = hash_fnv1a(h, &fr->inlined, sizeof fr->inlined);
	}
	return h;
}

static bool same_frames(const struct stack *a, const struct stack *b)
{
	if (a->nframes != b->nframes)
		return false;
	for (size_t f = 0; f < a->nframes; f++) {
		const struct frame *x = &a->frames[f], *y = &b->frames[f];
		if (x->pc != y->pc || x->function != y->function || x->inlined != y->inlined || x->line != y->line)
			return false;
	}
	return true;
}

int weighed_add(struct weighed_stacks *w, const struct stack *stack, char state, const char *wait, bool kernel,
		uint64_t cpu_ns, struct xerr *e)
{
	uint64_t key = stack_key(stack, state);
	struct slot_probe probe = slot_index_probe(&w->index, key);
	for (size_t i; (i = slot_probe_next(&w->index, &probe)) != SLOT_INDEX_NONE;)
		if (w->v[i].state == state && same_frames(&w->v[i].stack, stack)) {
			w->v[i].cpu_ns += cpu_ns;
			w->v[i].samples++;
			w->cpu_ns += cpu_ns;
			w->samples++;
			return 0;
		}
	if (w->n == WEIGHED_STACKS_MAX)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 8;
		struct weighed_stack *grown = realloc(w->v, cap * sizeof *grown);
		if (!grown)
			return xerr_oom(e);
		w->v = grown;
		w->cap = cap;
	}
	struct frame *frames = NULL;
	if (stack->nframes) {
		frames = malloc(stack->nframes * sizeof *frames);
		if (!frames)
			return xerr_oom(e);
		memcpy(frames, stack->frames, stack->nframes * sizeof *frames);
	}
	if (slot_index_add(&w->index, key, w->n) < 0) {
		free(frames);
		return xerr_oom(e);
	}
	w->v[w->n++] = (struct weighed_stack){ .stack = { .nframes = stack->nframes, .frames = frames },
					       .state = state, .wait = wait, .kernel = kernel, .cpu_ns = cpu_ns,
					       .samples = 1 };
	w->cpu_ns += cpu_ns;
	w->samples++;
	return 0;
}

uint64_t weighed_spread_next(const struct weighed_stacks *w, size_t i, uint64_t pool_ns, uint64_t *before)
{
	if (i >= w->n)
		return 0;
	bool by_cpu = w->cpu_ns > 0;
	uint64_t whole = by_cpu ? w->cpu_ns : w->samples;
	uint64_t own = by_cpu ? w->v[i].cpu_ns : w->v[i].samples;
	/* Shares by cumulative rounding, so they sum to pool_ns exactly. */
	unsigned __int128 lo = (unsigned __int128)*before * pool_ns / whole;
	*before += own;
	unsigned __int128 hi = (unsigned __int128)*before * pool_ns / whole;
	return (uint64_t)(hi - lo);
}

void weighed_release(struct weighed_stacks *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].stack.frames);
	free(w->v);
	slot_index_free(&w->index);
	*w = (struct weighed_stacks){0};
}
