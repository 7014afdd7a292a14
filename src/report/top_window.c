/* top_window.c — samples of the last seconds and their functions' shares
 * (contract in top_window.h). */
#include "report/top_window.h"
#include "report/report_model.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct function_entry {
	char *name;
	char *file;
	int line;
	uint64_t hash;
	uint64_t stamp;           /* the last sample that counted it: one total per sample */
};

struct thread_entry {
	int64_t tid;
	char *name;
	uint64_t samples;         /* scratch for top_window_threads */
};

struct window_sample {
	uint64_t t_ns;
	uint32_t thread;          /* index into threads */
	uint32_t nfunctions;      /* the leaf's first, then every other distinct one */
	size_t first;             /* into ids */
};

struct top_window {
	uint64_t span_ns;
	struct function_entry *functions;
	size_t nfunctions, functions_cap;
	struct slot_index function_index;
	struct thread_entry *threads;
	size_t nthreads, threads_cap;
	struct slot_index thread_index;
	/* Samples oldest first; [head, nsamples) are in the window. The ids of
	 * expired samples are dropped with them, once they are half the array. */
	struct window_sample *samples;
	size_t head, nsamples, samples_cap;
	uint32_t *ids;
	size_t nids, ids_cap;
	uint64_t sequence;
	/* What rank and threads hand out. */
	uint64_t *self, *total;
	size_t counts_cap;
	struct top_row *rows;
	size_t rows_cap;
	struct top_thread *listed;
	size_t listed_cap;
};

struct top_window *top_window_new(uint64_t span_ns)
{
	struct top_window *w = calloc(1, sizeof *w);
	if (w)
		w->span_ns = span_ns;
	return w;
}

void top_window_free(struct top_window *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nfunctions; i++) {
		free(w->functions[i].name);
		free(w->functions[i].file);
	}
	for (size_t i = 0; i < w->nthreads; i++)
		free(w->threads[i].name);
	free(w->functions);
	free(w->threads);
	slot_index_free(&w->function_index);
	slot_index_free(&w->thread_index);
	free(w->samples);
	free(w->ids);
	free(w->self);
	free(w->total);
	free(w->rows);
	free(w->listed);
	free(w);
}

/* The entry of the frame's function, added on first sight; -1 out of memory. */
static long function_of(struct top_window *w, const struct frame *f)
{
	char unnamed[300];
	const char *name = f->function;
	if (!name) {
		snprintf(unnamed, sizeof unnamed, "?? [%s]", f->module ? report_basename(f->module) : "?");
		name = unnamed;
	}
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, name, strlen(name));
	struct slot_probe probe = slot_index_probe(&w->function_index, h);
	for (size_t i; (i = slot_probe_next(&w->function_index, &probe)) != SLOT_INDEX_NONE;)
		if (strcmp(w->functions[i].name, name) == 0)
			return (long)i;
	if (w->nfunctions == w->functions_cap) {
		struct function_entry *grown = array_grow(w->functions, &w->functions_cap, w->nfunctions + 1,
							  sizeof *grown);
		if (!grown)
			return -1;
		w->functions = grown;
	}
	struct function_entry *fe = &w->functions[w->nfunctions];
	*fe = (struct function_entry){ .name = strdup(name), .hash = h };
	if (f->function && f->file) {
		fe->file = strdup(f->file);
		fe->line = f->decl_line;
	}
	if (!fe->name || (f->function && f->file && !fe->file) ||
	    slot_index_add(&w->function_index, h, w->nfunctions) < 0) {
		free(fe->name);
		free(fe->file);
		return -1;
	}
	return (long)w->nfunctions++;
}

static long thread_of(struct top_window *w, int64_t tid, const char *name)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &tid, sizeof tid);
	struct slot_probe probe = slot_index_probe(&w->thread_index, h);
	const char *wanted = name ? name : "";
	for (size_t i; (i = slot_probe_next(&w->thread_index, &probe)) != SLOT_INDEX_NONE;) {
		struct thread_entry *t = &w->threads[i];
		if (t->tid != tid)
			continue;
		if (strcmp(t->name, wanted) != 0) {   /* renamed: keep the latest */
			char *copy = strdup(wanted);
			if (!copy)
				return -1;
			free(t->name);
			t->name = copy;
		}
		return (long)i;
	}
	if (w->nthreads == w->threads_cap) {
		struct thread_entry *grown = array_grow(w->threads, &w->threads_cap, w->nthreads + 1, sizeof *grown);
		if (!grown)
			return -1;
		w->threads = grown;
	}
	struct thread_entry *t = &w->threads[w->nthreads];
	*t = (struct thread_entry){ .tid = tid, .name = strdup(wanted) };
	if (!t->name || slot_index_add(&w->thread_index, h, w->nthreads) < 0) {
		free(t->name);
		return -1;
	}
	return (long)w->nthreads++;
}

static int push_id(struct top_window *w, uint32_t id)
{
	return ARRAY_PUSH(w->ids, w->nids, w->ids_cap, id);
}

int top_window_add(struct top_window *w, uint64_t t_ns, int64_t tid, const char *thread_name,
		   const struct stack *st, struct xerr *e)
{
	long thread = thread_of(w, tid, thread_name);
	if (thread < 0)
		return xerr_oom(e);
	if (w->nsamples == w->samples_cap) {
		struct window_sample *grown = array_grow(w->samples, &w->samples_cap, w->nsamples + 1, sizeof *grown);
		if (!grown)
			return xerr_oom(e);
		w->samples = grown;
	}
	size_t first = w->nids;
	uint64_t sequence = ++w->sequence;
	for (size_t i = 0; st && i < st->nframes; i++) {
		long id = function_of(w, &st->frames[i]);
		if (id < 0) {
			w->nids = first;
			return xerr_oom(e);
		}
		if (w->functions[id].stamp == sequence)
			continue;
		w->functions[id].stamp = sequence;
		if (push_id(w, (uint32_t)id) < 0) {
			w->nids = first;
			return xerr_oom(e);
		}
	}
	w->samples[w->nsamples++] = (struct window_sample){
		.t_ns = t_ns, .thread = (uint32_t)thread, .nfunctions = (uint32_t)(w->nids - first),
		.first = first,
	};
	return 0;
}

void top_window_expire(struct top_window *w, uint64_t now_ns)
{
	if (now_ns <= w->span_ns)
		return;
	uint64_t oldest_kept = now_ns - w->span_ns;
	while (w->head < w->nsamples && w->samples[w->head].t_ns <= oldest_kept)
		w->head++;
	if (w->head == w->nsamples) {
		w->head = w->nsamples = w->nids = 0;
		return;
	}
	/* Move the kept samples and their ids to the front once the dropped
	 * ones are half the array: each sample is moved O(1) times overall. */
	if (w->head * 2 < w->nsamples)
		return;
	size_t cut = w->samples[w->head].first;
	memmove(w->ids, w->ids + cut, (w->nids - cut) * sizeof *w->ids);
	w->nids -= cut;
	memmove(w->samples, w->samples + w->head, (w->nsamples - w->head) * sizeof *w->samples);
	w->nsamples -= w->head;
	w->head = 0;
	for (size_t i = 0; i < w->nsamples; i++)
		w->samples[i].first -= cut;
}

static bool counts_ready(struct top_window *w)
{
	if (w->nfunctions > w->counts_cap) {
		size_t cap = w->counts_cap, cap2 = w->counts_cap;
		uint64_t *self = array_grow(w->self, &cap, w->nfunctions, sizeof *self);
		if (!self)
			return false;
		w->self = self;
		uint64_t *total = array_grow(w->total, &cap2, w->nfunctions, sizeof *total);
		if (!total)
			return false;
		w->total = total;
		w->counts_cap = cap < cap2 ? cap : cap2;
	}
	if (w->nfunctions) {
		memset(w->self, 0, w->nfunctions * sizeof *w->self);
		memset(w->total, 0, w->nfunctions * sizeof *w->total);
	}
	return true;
}

static int by_name(const struct top_row *a, const struct top_row *b)
{
	return strcmp(a->function, b->function);
}

/* Heaviest first by one weight, then by the other, then by name. */
static int heavier(uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2, const struct top_row *a,
		   const struct top_row *b)
{
	int c = report_cmp_heavier(a1, b1);
	if (!c)
		c = report_cmp_heavier(a2, b2);
	return c ? c : by_name(a, b);
}

static int by_self(const void *pa, const void *pb)
{
	const struct top_row *a = pa, *b = pb;
	return heavier(a->self, b->self, a->total, b->total, a, b);
}

static int by_total(const void *pa, const void *pb)
{
	const struct top_row *a = pa, *b = pb;
	return heavier(a->total, b->total, a->self, b->self, a, b);
}

int top_window_rank(struct top_window *w, int64_t tid, enum top_sort sort, const struct top_row **rows,
		    size_t *nrows, uint64_t *samples, struct xerr *e)
{
	*rows = NULL;
	*nrows = 0;
	*samples = 0;
	if (!counts_ready(w))
		return xerr_oom(e);
	for (size_t i = w->head; i < w->nsamples; i++) {
		const struct window_sample *s = &w->samples[i];
		if (tid && w->threads[s->thread].tid != tid)
			continue;
		++*samples;
		if (s->nfunctions == 0)
			continue;
		w->self[w->ids[s->first]]++;
		for (uint32_t k = 0; k < s->nfunctions; k++)
			w->total[w->ids[s->first + k]]++;
	}
	size_t n = 0;
	for (size_t f = 0; f < w->nfunctions; f++)
		n += w->total[f] > 0;
	if (array_reserve(&w->rows, &w->rows_cap, n, sizeof *w->rows) < 0)
		return xerr_oom(e);
	n = 0;
	for (size_t f = 0; f < w->nfunctions; f++) {
		if (!w->total[f])
			continue;
		const struct function_entry *fe = &w->functions[f];
		w->rows[n++] = (struct top_row){ .function = fe->name, .file = fe->file, .line = fe->line,
						 .self = w->self[f], .total = w->total[f] };
	}
	if (n)
		qsort(w->rows, n, sizeof *w->rows, sort == TOP_SORT_TOTAL ? by_total : by_self);
	*rows = w->rows;
	*nrows = n;
	return 0;
}

static int by_tid(const void *pa, const void *pb)
{
	const struct top_thread *a = pa, *b = pb;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int top_window_threads(struct top_window *w, const struct top_thread **threads, size_t *nthreads,
		       struct xerr *e)
{
	*threads = NULL;
	*nthreads = 0;
	for (size_t t = 0; t < w->nthreads; t++)
		w->threads[t].samples = 0;
	for (size_t i = w->head; i < w->nsamples; i++)
		w->threads[w->samples[i].thread].samples++;
	size_t n = 0;
	for (size_t t = 0; t < w->nthreads; t++)
		n += w->threads[t].samples > 0;
	if (array_reserve(&w->listed, &w->listed_cap, n, sizeof *w->listed) < 0)
		return xerr_oom(e);
	n = 0;
	for (size_t t = 0; t < w->nthreads; t++)
		if (w->threads[t].samples)
			w->listed[n++] = (struct top_thread){ .tid = w->threads[t].tid, .name = w->threads[t].name,
							      .samples = w->threads[t].samples };
	if (n)
		qsort(w->listed, n, sizeof *w->listed, by_tid);
	*threads = w->listed;
	*nthreads = n;
	return 0;
}
