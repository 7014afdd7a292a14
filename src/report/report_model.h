/* report_model.h — what every report shows, computed once from a profile:
 * hottest paths, functions with self/total weight and per-line weights,
 * threads with their state split. Private to the report_*.c renderers.
 *
 * Definitions (docs/reports.md repeats them for users):
 *  - path: a distinct stack (root→leaf chain of frames, inlined frames
 *    included), merged across threads; its weight is the sum of the
 *    weights of the entries with that stack.
 *  - function: frames with the same demangled name (or, when the name is
 *    unknown, the same module and pc). Inlined and out-of-line copies of a
 *    function are the same function.
 *  - self(F): weight of the samples whose leaf frame is F.
 *  - total(F): weight of the samples with F anywhere in the stack, counted
 *    once per sample even when F recurses.
 *  - per line (F, file, line): self and total likewise, counting a frame of
 *    F at that file:line.
 *  - hottest line of F: its line with the most total weight (where F was
 *    executing or calling), ties broken by self weight, then by lowest
 *    file and line.
 * Under a focus regex only the samples holding a frame whose function
 * matches are counted, but `total` stays the weight of ALL samples.
 *
 * Invariants: paths sorted by weight descending (ties by root-first frame
 * names); by_self/by_total index funcs in their orders (ties by name);
 * threads sorted by weight descending (ties by name); lines sorted by
 * function index, file, line.
 */
#ifndef XGDBPROF_REPORT_MODEL_H
#define XGDBPROF_REPORT_MODEL_H

#include "report/profile.h"
#include "report/report.h"

struct report_path {
	const struct stack *stack;
	uint64_t weight;
};

struct report_line {
	size_t func;
	const char *file;
	int line;
	uint64_t self, total;
};

struct report_func {
	const char *name;          /* display name (see report_frame_name) */
	enum frame_lang lang;
	const char *module;
	uint64_t self, total;
	const char *hot_file;      /* hottest line, NULL file when unknown */
	int hot_line;
	size_t line_begin, line_end; /* its rows in model.lines */
};

#define REPORT_MAX_STATES 8

struct report_thread {
	const char *name;          /* NULL when unknown */
	uint64_t weight;
	size_t nstates;
	char states[REPORT_MAX_STATES];     /* sorted by weight descending */
	uint64_t state_weight[REPORT_MAX_STATES];
};

struct report_model {
	const struct profile *profile;
	struct report_options options;  /* the caller's, or the defaults for NULL */
	uint64_t total;            /* weight of every sample in the profile */
	uint64_t kept;             /* weight kept by the focus (== total without one) */
	const char *focus;         /* the focus pattern, or NULL */
	struct report_path *paths;
	size_t npaths;
	struct report_func *funcs;
	size_t nfuncs;
	size_t *by_self, *by_total;
	struct report_line *lines;
	size_t nlines;
	struct report_thread *threads;
	size_t nthreads;
	bool mixed_states;         /* some sample is not in state 'R' */
	/* private */
	struct report_func_index *index;
	char **owned_names;
	size_t nowned, owned_cap;
};

/* Builds the model; o may be NULL (defaults). Renderers then read their
 * options from m->options. Returns 0, or -1 (bad focus regex, out of memory). */
int report_model_init(struct report_model *m, const struct profile *p,
		      const struct report_options *o, struct xerr *e);
void report_model_release(struct report_model *m);

/* Index in m->funcs of the function of frame f (a frame of m->profile).
 * Returns (size_t)-1 for a frame the model has not seen (focused out). */
size_t report_model_func(const struct report_model *m, const struct frame *f);

/* Whether the model kept this entry (the focus matched it). */
bool report_model_keeps(const struct report_model *m, const struct profile_entry *en);

/* Writes the display name of a frame into buf: the function, or
 * "0xPC [module-basename]" ("0xPC [?]") when the function is unknown.
 * Returns buf. */
const char *report_frame_name(const struct frame *f, char *buf, size_t size);

/* Nanoseconds one unit of weight stands for in a sampled profile: one
 * period at the rate achieved (the stop budget may have lowered it), else
 * at the rate asked; 0 when the profile was not sampled (tracing counts). */
int64_t report_sample_period_ns(const struct profile_meta *m);

/* 100 * part / whole, 0 when whole is 0. */
double report_share(uint64_t part, uint64_t whole);

/* Last path component of a path. */
const char *report_basename(const char *path);

#endif
