/* report_model.h — what every report shows, computed once from a profile:
 * distinct paths, the call tree and its hottest code paths, functions with
 * self/total weight and per-line weights, threads with their state split.
 * Private to the report_*.c renderers.
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
 *  - call tree: the kept stacks merged root → leaf (over threads), a node
 *    per function per chain of callers; a node's weight never exceeds its
 *    parent's.
 *  - code path: from each root frame (each child of the tree's root starts
 *    one), follow the heaviest child while it holds >=
 *    REPORT_PATH_FOLLOW_PCT of its parent's weight; every other
 *    child with >= REPORT_PATH_BRANCH_PCT of the kept samples starts a
 *    code path of its own. Where no child is that heavy the tree fans out:
 *    when the significant children together hold the follow share, each
 *    goes on as its own code path (a fork); otherwise the code path stops
 *    there, its weight the samples through its last node. Code paths never
 *    nest: their weights add up to at most the kept samples.
 * Under a focus regex only the samples holding a frame whose function
 * matches are counted, but `total` stays the weight of ALL samples.
 *
 * Invariants: paths sorted by weight descending (ties by root-first frame
 * names); by_self/by_total index funcs in their orders (ties by name);
 * threads sorted by weight descending (ties by name); lines sorted by
 * function index, file, line; code_paths sorted by weight descending (ties
 * by root-first frame names, files, lines).
 */
#ifndef XGDBPROF_REPORT_MODEL_H
#define XGDBPROF_REPORT_MODEL_H

#include "report/profile.h"
#include "report/report.h"

struct report_path {
	const struct stack *stack;
	uint64_t weight;
};

/* A node of the call tree: the kept stacks merged root → leaf over threads,
 * one node per function per chain of callers (a recursive function gets a
 * node at each depth). Node 0 is the tree's root, above the threads' roots. */
struct report_node {
	size_t func;               /* index in funcs; (size_t)-1 for the root */
	size_t parent;             /* (size_t)-1 for the root */
	size_t first_child, next_sibling;  /* 0: none (the root is nobody's child) */
	size_t depth;              /* 0 for the root, 1 for a thread's root frame */
	uint64_t weight;           /* samples through this node: never above its parent's */
	uint64_t self;             /* samples whose leaf is this node */
	const struct frame *frame; /* its frame at the node's hottest line (most
				    * weight, ties: lowest file, line, not inlined) */
};

/* A hottest code path (docs/reports.md, "code path"): a chain of call-tree
 * nodes from a root down to where the tree fans out. */
struct report_code_path {
	size_t chain_begin, nchain;   /* its nodes, root first: m->chain_nodes[chain_begin...] */
	uint64_t weight;              /* samples through its last node */
	/* The headline names the user's frames of the chain from `entry` to
	 * `deepest` (chain positions); deepest is the user's deepest frame, or
	 * the chain's last frame when the chain holds no user frame. */
	size_t entry, deepest;
};

/* Thresholds of the code-path inference, in percent (docs/reports.md). */
#define REPORT_PATH_FOLLOW_PCT 60   /* a child this share of its parent carries the path on */
#define REPORT_PATH_BRANCH_PCT 5    /* a child this share of the kept samples gets a path of its own */
#define REPORT_EVERYWHERE_PCT 95    /* a function on this share of the kept samples is left
				     * out of "top functions by total" */
#define REPORT_THIN_STACKS 300      /* fewer thread stacks than this: the report says the
				     * profile is thin */

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
	bool everywhere;           /* on >= REPORT_EVERYWHERE_PCT of the kept samples */
	size_t depth;              /* its least depth in the call tree (1: a root) */
	bool user;                 /* the user's own code (report_frame_is_user) */
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
	size_t *by_total_shown;    /* by_total without the functions on (almost) every sample */
	size_t ntotal_shown;
	size_t neverywhere;        /* functions left out of by_total_shown */
	struct report_node *nodes; /* the call tree; nodes[0] is its root */
	size_t nnodes;
	struct report_code_path *code_paths;  /* hottest first (ties: names root first) */
	size_t ncode_paths;
	size_t *chain_nodes;
	const struct frame **chain_frames;  /* parallel to chain_nodes: the frame each
					     * position shows, at the hottest line of the
					     * samples through the path's last node */
	const char *thin_note;     /* "only N thread stacks ..." or NULL */
	struct report_line *lines;
	size_t nlines;
	struct report_thread *threads;
	size_t nthreads;
	bool mixed_states;         /* some sample is not in state 'R' */
	/* private */
	char thin_note_text[256];
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

/* Whether f is the user's own code (docs/reports.md, "user code"): it has a
 * name, and its source file is not the Rust toolchain's (/rustc/...,
 * .../library/{std,core,alloc,...}/), a dependency cargo fetched (registry,
 * git checkout, vendor/), nor a C library's or the system's (relative
 * ./ or ../ paths as distributions' debug info writes them, /usr/include,
 * /usr/src, /usr/lib, ...); a frame without a file is the user's when
 * its name is not the runtime's and it is not in a shared library. */
bool report_frame_is_user(const struct frame *f);

/* Builds the call tree (nodes) and the hottest code paths from the kept
 * entries; needs the functions built. Returns 0, or -1 out of memory.
 * (report_paths.c, called by report_model_init.) */
int report_build_code_paths(struct report_model *m);

/* The terminal report's code path (report_text.c): "#rank hottest code
 * path (share, samples): headline", then its frames root → leaf, with
 * ANSI colours or not, every frame (full) or runs of foreign frames
 * collapsed, laid out within width columns (0: no limit). */
void report_put_code_path(FILE *out, const struct report_model *m, size_t rank, const struct report_code_path *cp,
			  bool color, bool full, size_t width);
/* The headline's names alone, "entry → … → deepest (file.rs:47)", in the
 * terminal form of target text, without colours. */
void report_put_code_path_names(FILE *out, const struct report_model *m, const struct report_code_path *cp);

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

/* Whether p's weights are CPU nanoseconds (hot-cpu: weight_unit "ns"). */
bool report_cpu_weighted(const struct profile *p);

/* The independent draws p's shares rest on, for their sampling error: its
 * thread stacks when weights are CPU time (meta.thread_samples), the hits
 * behind whole-run estimates (meta.weights_estimated: the entries'
 * events), its samples (total_weight, the sum of its count weights) when
 * weights count samples; 0 when no count of draws is known (bytes, sums,
 * an old profile without thread_samples). */
double report_draws(const struct profile *p, uint64_t total_weight);

/* 100 * part / whole, 0 when whole is 0. */
double report_share(uint64_t part, uint64_t whole);

/* Whether p's weights are bytes (heap, alloc: docs/alloc.md). */
bool report_byte_weighted(const struct profile *p);

/* Whether p is weighed in bytes with no thread stack of ours behind it:
 * the allocator's own profile (jemalloc's), no sampling rate, no stops. */
bool report_allocator_profile(const struct profile *p);

/* "37.8 MB": three figures in decimal units (as rates print), "512 B"
 * under a thousand; never cut. Returns buf. */
const char *report_bytes_text(double bytes, char *buf, size_t size);

/* Last path component of a path. */
const char *report_basename(const char *path);

/* qsort order of two source places: by file (none first, then by name),
 * then by line; 0 for the same place. */
int report_cmp_place(const char *file_a, int line_a, const char *file_b, int line_b);

/* qsort order for weights, heaviest first: <0 when a sorts before b. */
static inline int report_cmp_heavier(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

#endif
