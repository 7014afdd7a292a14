/* test_top_window.c — the sliding window of `xgdbprof top` over synthetic
 * samples whose shares are known:
 *
 *   thread 11 "w-1", t = 1..30 s, one sample per second:
 *     24 × main → work → hot   (hot inlined into work, same PC)
 *      6 × main → work → cold
 *   thread 12 "w-2", t = 21..30 s:
 *     10 × main → recurse → recurse → recurse   (total counts recurse once)
 *   one unnamed frame in libc (0x7f00 and 0x7f10) under main at t = 30.
 *
 * With a 10 s window at t = 30.5 s, the window holds t = 21..30: thread 11
 * is hot at 21..24 and cold at 25..30, thread 12 recurses 10 times, and the
 * unknown sample makes 21. Every expiry path (partial, compaction, all
 * gone) is exercised, then 60 s of 4 threads at 100 Hz.
 */
#include "report/top_window.h"

#include <stdlib.h>
#include <string.h>
#include "check.h"

#define S(x) ((uint64_t)(x) * 1000000000ull)

static struct frame fr(const char *fn, uint64_t pc, bool inlined)
{
	return (struct frame){ .pc = pc, .function = fn, .file = fn ? "/src/prog.c" : NULL, .line = 7,
			       .inlined = inlined, .module = "/usr/lib/libc.so.6", .decl_line = fn ? 3 : 0 };
}

/* Thread 11's sample at second t: hot for t <= 24, cold after. */
static void add_w1(struct top_window *w, int t)
{
	struct frame frames[3];
	struct stack st = { 3, frames };
	if (t <= 24) {
		frames[0] = fr("hot", 0x10, true);
		frames[1] = fr("work", 0x10, false);
	} else {
		frames[0] = fr("cold", 0x20, false);
		frames[1] = fr("work", 0x30, false);
	}
	frames[2] = fr("main", 0x40, false);
	struct xerr e;
	CHECK_MSG(top_window_add(w, S(t), 11, "w-1", &st, &e) == 0, "%s", e.msg);
}

static void add_w2(struct top_window *w, int t)
{
	struct frame frames[4] = { fr("recurse", 0x50, false), fr("recurse", 0x54, false),
				   fr("recurse", 0x54, false), fr("main", 0x44, false) };
	struct stack st = { 4, frames };
	struct xerr e;
	CHECK_MSG(top_window_add(w, S(t), 12, "w-2", &st, &e) == 0, "%s", e.msg);
}

static const struct top_row *row(const struct top_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].function, name) == 0)
			return &rows[i];
	return NULL;
}

static void expect(const struct top_row *rows, size_t n, const char *name, uint64_t self, uint64_t total)
{
	const struct top_row *r = row(rows, n, name);
	CHECK_MSG(r && r->self == self && r->total == total, "%s: self %llu total %llu, want %llu %llu", name,
		  r ? (unsigned long long)r->self : 0ull, r ? (unsigned long long)r->total : 0ull,
		  (unsigned long long)self, (unsigned long long)total);
}

int main(void)
{
	struct top_window *w = top_window_new(S(10));
	CHECK(w != NULL);
	if (!w)
		return test_exit_code();
	struct xerr e;
	const struct top_row *rows;
	size_t n;
	uint64_t samples;

	/* Before any expiry: all 30 + 10 + 1 samples. */
	for (int t = 1; t <= 30; t++) {
		add_w1(w, t);
		if (t > 20)
			add_w2(w, t);
		top_window_expire(w, S(t));   /* t <= 10: nothing old enough; later: drops as it goes */
	}
	struct frame unknown[3] = { fr(NULL, 0x7f00, false), fr(NULL, 0x7f10, false), fr("main", 0x40, false) };
	struct stack ust = { 3, unknown };
	CHECK(top_window_add(w, S(30), 12, "w-2 renamed", &ust, &e) == 0);

	top_window_expire(w, S(30) + S(1) / 2);   /* keeps t in (20.5, 30.5]: 21..30 */
	CHECK(top_window_rank(w, 0, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK_MSG(samples == 21, "samples %llu, want 21", (unsigned long long)samples);
	/* w-1 at 21..24 hot (4), 25..30 cold (6); w-2 10 recurse + 1 unknown. */
	expect(rows, n, "recurse", 10, 10);
	expect(rows, n, "cold", 6, 6);
	expect(rows, n, "hot", 4, 4);
	expect(rows, n, "work", 0, 10);
	expect(rows, n, "main", 0, 21);
	expect(rows, n, "?? [libc.so.6]", 1, 1);   /* two unknown PCs of one module: one entry, counted once */
	CHECK(n == 6);
	CHECK(n > 0 && strcmp(rows[0].function, "recurse") == 0);   /* self 10 first */
	CHECK(n > 1 && strcmp(rows[1].function, "cold") == 0);
	const struct top_row *hot = row(rows, n, "hot");
	CHECK(hot && hot->file && strcmp(hot->file, "/src/prog.c") == 0 && hot->line == 3);
	const struct top_row *unk = row(rows, n, "?? [libc.so.6]");
	CHECK(unk && unk->file == NULL && unk->line == 0);

	CHECK(top_window_rank(w, 0, TOP_SORT_TOTAL, &rows, &n, &samples, &e) == 0);
	CHECK(n > 1 && strcmp(rows[0].function, "main") == 0);
	CHECK(n > 1 && strcmp(rows[1].function, "recurse") == 0);   /* total 10 ties work; self 10 wins */
	CHECK(n > 2 && strcmp(rows[2].function, "work") == 0);

	/* One thread: shares of its own samples. */
	CHECK(top_window_rank(w, 11, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 10);
	expect(rows, n, "cold", 6, 6);
	expect(rows, n, "main", 0, 10);
	CHECK(row(rows, n, "recurse") == NULL);
	CHECK(top_window_rank(w, 99, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 0 && n == 0);

	const struct top_thread *threads;
	size_t nthreads;
	CHECK(top_window_threads(w, &threads, &nthreads, &e) == 0);
	CHECK(nthreads == 2);
	CHECK(nthreads == 2 && threads[0].tid == 11 && threads[0].samples == 10 && strcmp(threads[0].name, "w-1") == 0);
	CHECK(nthreads == 2 && threads[1].tid == 12 && threads[1].samples == 11 &&
	      strcmp(threads[1].name, "w-2 renamed") == 0);

	/* Five seconds on: 26..30 remain (w-1 cold 5, w-2 5 + the unknown one). */
	top_window_expire(w, S(35) + S(1) / 2);
	CHECK(top_window_rank(w, 0, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 11);
	expect(rows, n, "cold", 5, 5);
	CHECK(row(rows, n, "hot") == NULL);   /* known, but no sample in the window: no row */

	/* New samples after a compaction land after the kept ones. */
	add_w1(w, 36);
	CHECK(top_window_rank(w, 11, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 6);
	expect(rows, n, "cold", 6, 6);

	/* Everything expired: an empty window, then it fills again. */
	top_window_expire(w, S(100));
	CHECK(top_window_rank(w, 0, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 0 && n == 0);
	CHECK(top_window_threads(w, &threads, &nthreads, &e) == 0 && nthreads == 0);
	add_w1(w, 101);
	struct stack empty = { 0, NULL };
	CHECK(top_window_add(w, S(101), 13, NULL, &empty, &e) == 0);   /* no frames: a sample, no function */
	CHECK(top_window_rank(w, 0, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
	CHECK(samples == 2);
	expect(rows, n, "cold", 1, 1);

	/* A long run at 100 Hz × 4 threads: the window keeps 10 s of it. */
	struct top_window *big = top_window_new(S(10));
	CHECK(big != NULL);
	for (int i = 1; big && i <= 6000; i++) {
		uint64_t t = (uint64_t)i * 10000000ull;
		for (int k = 0; k < 4; k++) {
			struct frame f[2] = { fr(k == 0 ? "a" : "b", 0x10, false), fr("main", 0x40, false) };
			struct stack st = { 2, f };
			CHECK(top_window_add(big, t, 100 + k, "t", &st, &e) == 0);
		}
		top_window_expire(big, t);
	}
	if (big) {
		CHECK(top_window_rank(big, 0, TOP_SORT_SELF, &rows, &n, &samples, &e) == 0);
		CHECK_MSG(samples == 4000, "samples %llu, want 4000", (unsigned long long)samples);
		expect(rows, n, "b", 3000, 3000);
		expect(rows, n, "a", 1000, 1000);
	}
	top_window_free(big);
	top_window_free(w);
	return test_exit_code();
}
