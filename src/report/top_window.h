/* top_window.h — the sliding window behind `xgdbprof top`: the samples of
 * the last few seconds, and functions ranked by their self and total share
 * of them, for all threads or one.
 *
 * Contract:
 *  - A sample is one thread's stack at one instant. Its self function is
 *    the leaf frame's (frames[0], the innermost inlined one when there is
 *    inlining); every distinct function on the stack counts once toward its
 *    total, however often recursion repeats it. Shares are of the samples
 *    in the window (one thread's, when a thread is chosen): a function in
 *    every sample has a total of 100%.
 *  - Functions are told apart by their display name (frame.function).
 *    Frames without a name are grouped by module: "?? [libc.so.6]" (one
 *    entry per unknown PC would flood a live view with single samples).
 *  - The window copies what it keeps: the stack only has to live for the
 *    call. Names are kept for the window's life (a program has a bounded
 *    set of functions); samples are dropped by top_window_expire once
 *    older than the span.
 *  - Text is kept as the target gave it: the caller escapes it for output
 *    (util/text_escape.h).
 *  - Rows, threads and their strings returned are owned by the window and
 *    valid until the next call that changes it (add, expire, rank, threads).
 */
#ifndef XGDBPROF_TOP_WINDOW_H
#define XGDBPROF_TOP_WINDOW_H

#include "util/error.h"
#include "util/stack.h"

#include <stddef.h>
#include <stdint.h>

struct top_window;

enum top_sort { TOP_SORT_SELF, TOP_SORT_TOTAL };

struct top_row {
	const char *function;     /* display name, or "?? [module]" */
	const char *file;         /* where the function is (first frame seen), or NULL */
	int line;                 /* its declaration line, 0 when unknown */
	uint64_t self, total;     /* samples: as the leaf; anywhere on the stack */
};

struct top_thread {
	int64_t tid;
	const char *name;         /* its latest name */
	uint64_t samples;         /* in the window */
};

/* A window over the last span_ns nanoseconds; NULL if out of memory. */
struct top_window *top_window_new(uint64_t span_ns);
void top_window_free(struct top_window *w);

/* Adds one sample taken at t_ns (samples come in time order). 0, or -1 with e. */
int top_window_add(struct top_window *w, uint64_t t_ns, int64_t tid, const char *thread_name,
		   const struct stack *st, struct xerr *e);

/* Drops the samples taken at or before now_ns - span. */
void top_window_expire(struct top_window *w, uint64_t now_ns);

/* Functions over the window's samples of thread tid (0: every thread),
 * sorted by sort (descending; ties by the other count, then by name).
 * *samples is how many samples that is. 0, or -1 with e. */
int top_window_rank(struct top_window *w, int64_t tid, enum top_sort sort, const struct top_row **rows,
		    size_t *nrows, uint64_t *samples, struct xerr *e);

/* The threads with samples in the window, by tid. 0, or -1 with e. */
int top_window_threads(struct top_window *w, const struct top_thread **threads, size_t *nthreads,
		       struct xerr *e);

#endif
