/* profile.h — the profile model: weighted call stacks plus the record of the
 * run that produced them, and the raw profile file that `xgdbprof report`
 * re-renders offline (format in docs/reports.md).
 *
 * Invariants:
 *  - A profile owns deep copies of everything added to it. Every string it
 *    holds (metadata, thread names, frame fields) is interned: equal strings
 *    are the same pointer for the life of the profile, so consumers may
 *    compare names by pointer.
 *  - Entries are unique by (thread_name, tid, thread_state, stack), where stacks
 *    compare frame by frame on function, file, line, inlined and module (and
 *    pc when the function is unknown) — the same identity recipe maps use.
 *    Adding an existing key adds to its weight; the frames kept are the
 *    first ones seen (so a frame's full_function is the first instance's
 *    when several share one display name). Entries keep their insertion
 *    order.
 *  - Unknown numeric metadata is NAN (doubles) or -1 (integers); unknown
 *    strings are NULL. The thread state of an entry is the /proc letter
 *    ('R', 'S', 'D', ...) or '?' when not known; its tid -1 when not known
 *    (a recipe map keyed by thread name only).
 *  - modules describe the ELF objects frames name (frame.module == path):
 *    where each was mapped and its build-id, for pprof's mappings. Unique by
 *    path; a profile may have none (older files, profiles of no process).
 *
 * Return conventions: constructors return NULL on failure; int functions
 * return 0 on success and -1 with the reason in the struct xerr.
 */
#ifndef XGDBPROF_PROFILE_H
#define XGDBPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/stack.h"

struct map;

#define PROFILE_FORMAT_NAME "xgdbprof-profile"
#define PROFILE_FORMAT_VERSION 1

struct profile_meta {
	const char *exe;              /* absolute path of the target executable */
	const char *build_id;         /* lowercase hex */
	int64_t pid;
	const char *command_line;     /* the target's argv joined by spaces */
	const char *recipe;           /* recipe name or file */
	const char *thread_selection; /* "running", "all", or "/regex/" */
	int64_t threads;              /* threads the target had */
	double frequency_asked_hz, frequency_achieved_hz;
	double duration_asked_s, duration_actual_s;
	int64_t samples;              /* stop events */
	int64_t thread_samples;       /* stacks recorded (one per selected thread per sample) */
	int64_t stacks_reused;        /* thread had not run since its last sample */
	double cpu_min_pct, cpu_avg_pct, cpu_max_pct;  /* target CPU% from /proc */
	double stopped_pct;           /* stopped time over wall time: all-stop, the share the whole
				       * target was held; non-stop, each walked thread's stops summed */
	double thread_stopped_max_pct;  /* the largest share of its own time one thread was held
					 * stopped (what the budget bounds); NaN in older profiles */
	double stop_median_ms, stop_p99_ms;  /* per-sample stop time */
	/* The kernel's account of what a stop cost its thread (wall time less
	 * what it ran or waited for a CPU meanwhile; docs/sampling.md): per
	 * thread stop, and the largest share of its time any thread lost so.
	 * NaN in older profiles. */
	double held_median_ms, held_p99_ms, thread_held_max_pct;
	const char *walker;           /* stack walker used ("gdb", "dwfl", ...) */
	const char *stop_mode;        /* "non-stop" (walked threads only) or "all-stop" */
	const char *version;          /* xgdbprof version */
	const char *start_time;       /* ISO 8601 */
	size_t nnotes;
	const char **notes;           /* stop-budget and other notes, in order */
	/* pprof's sample types of a weighted profile (a recipe's pprof() call):
	 * "name/unit" of the weight, or "name/unit,name/unit" of the events
	 * then the weight ("alloc_objects/count,alloc_space/bytes"). NULL:
	 * samples (and CPU or wall time). Not saved in profile.json. */
	const char *value_types;
	/* With value_types: what each measured value is multiplied by to
	 * estimate the whole run (1 / the share of it the probes were armed),
	 * so pprof's named values are the estimates and "sampled_"-prefixed
	 * ones the measured values. 0 or 1: measured values only. Not saved
	 * in profile.json. */
	double value_scale;
	/* The armed share under value_scale is an upper bound (calls too close
	 * together to time against our stops: docs/tracing.md, "Estimates"), so
	 * the scaled values are lower bounds and pprof's comment says so. */
	bool value_scale_lower_bound;
	/* each entry carries its own whole-run estimate (entry.estimated:
	 * calls counted in the target, stratum by stratum), used in place of
	 * value_scale */
	bool per_entry_estimates;
	/* What an entry's weight counts when it is not samples: "bytes" in a
	 * heap snapshot (live bytes by allocating stack), so that a diff of
	 * two snapshots compares amounts, not shares. NULL: samples. Saved
	 * in profile.json only when set. */
	const char *weight_unit;
	/* Each entry's weight is its whole-run estimate (profile_weigh_by_
	 * estimates) and its events the hits it rests on: shares are then
	 * estimated, with the hits as their draws. Saved in profile.json. */
	bool weights_estimated;
};

struct profile_entry {
	const char *thread_name;      /* interned; NULL when unknown */
	int64_t tid;                  /* -1 when unknown */
	char thread_state;
	uint64_t weight;
	struct stack stack;           /* frames owned by the profile, strings interned */
	uint64_t events;              /* what the weight sums over (a sum() map's updates); 0 unknown */
	double estimated;             /* meta.per_entry_estimates: the whole run's estimate of weight */
};

struct profile_module {
	const char *path;             /* as frames name it (frame.module), interned */
	const char *build_id;         /* lowercase hex, NULL when the ELF has none */
	uint64_t start, end;          /* runtime address range [start, end) */
	uint64_t offset;              /* file offset mapped at start */
};

struct profile_index;

struct profile {
	struct profile_meta meta;
	size_t nentries;
	struct profile_entry *entries;
	size_t nmodules;
	struct profile_module *modules; /* in the order added */
	/* private */
	size_t cap, notes_cap, modules_cap;
	struct profile_index *index;
};

/* Returns an empty profile with every metadata field unknown, or NULL. */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Returns the interned copy of s (NULL for NULL, and on out of memory). */
const char *profile_intern(struct profile *p, const char *s);

/* Appends a note (interned) to meta.notes. Returns 0 or -1 (out of memory). */
int profile_add_note(struct profile *p, const char *note, struct xerr *e);

/* Adds weight to the entry (thread_name, tid, state, stack), creating it if
 * new. Zero-weight additions are ignored. Returns 0 or -1 (out of memory).
 * profile_add is the same with tid -1 (unknown). */
int profile_add_tid(struct profile *p, const char *thread_name, int64_t tid, char state,
		    const struct stack *stack, uint64_t weight, struct xerr *e);
int profile_add(struct profile *p, const char *thread_name, char state,
		const struct stack *stack, uint64_t weight, struct xerr *e);
/* profile_add_tid that also counts events (samples a CPU-ns weight sums). */
int profile_add_tid_events(struct profile *p, const char *thread_name, int64_t tid, char state,
			   const struct stack *stack, uint64_t weight, uint64_t events, struct xerr *e);
/* profile_add that also adds to the entry's events (a sum()'s count). */
int profile_add_events(struct profile *p, const char *thread_name, char state,
		       const struct stack *stack, uint64_t weight, uint64_t events, struct xerr *e);

/* Records a module (strings interned). A path already recorded keeps its
 * first description. Returns 0 or -1 (out of memory). */
int profile_add_module(struct profile *p, const struct profile_module *m, struct xerr *e);

/* The module recorded under path, or NULL. */
const struct profile_module *profile_module(const struct profile *p, const char *path);

/* Adds every entry of a recipe map (implemented in profile_map.c). The map
 * must have exactly one stack key and a COUNT, SUM or INT aggregation (the
 * weight: count, sum, or the integer; entries with a value <= 0 are
 * skipped). The other keys: when there is exactly one other key and it is a
 * string, it is the thread name; otherwise every other key, in key order,
 * becomes a pseudo-frame above the stack's root (function = the key's text,
 * no file, lang unknown), so `@[pid, ustack]` splits the graph by pid first.
 * Entries get state '?'. Returns 0, or -1 for another map shape. */
int recipe_profile_add_map(struct profile *p, const struct map *m, struct xerr *e);

/* profile_add_events with the entry's whole-run estimate of its weight
 * (added up when entries merge). */
int profile_add_events_estimated(struct profile *p, const char *thread_name, char state, const struct stack *stack,
				 uint64_t weight, uint64_t events, double estimated, struct xerr *e);

/* Hash and equality of two stacks held by the same profile (entry identity
 * without the thread), for consumers that merge entries across threads. */
uint64_t profile_stack_hash(const struct stack *s);
bool profile_stack_eq(const struct stack *a, const struct stack *b);

/* Sum of all entry weights. */
uint64_t profile_total_weight(const struct profile *p);

/* The observer effect the run's stop budget kept, in percent of time
 * (sampler_budget_share's figure as the profile saved it): non-stop, each
 * thread's largest held share by the kernel's account (*held true), else
 * its largest stopped share; all-stop, the target's stopped share. NAN
 * when the profile has none. */
double profile_observer_pct(const struct profile_meta *m, bool *held);

/* Under meta.per_entry_estimates, makes each entry's weight its whole-run
 * estimate (at least 1 where something was measured) and its events the
 * hits behind it, and sets meta.weights_estimated: every renderer then
 * shows the estimates. A profile without per-entry estimates is left as
 * it is. */
void profile_weigh_by_estimates(struct profile *p);
/* The same where one factor stands for every entry (1 / the share of the
 * run the probes were armed): each weight times scale (> 1). */
void profile_scale_to_estimates(struct profile *p, double scale);

/* Writes the profile as JSON (see docs/reports.md). Deterministic: the same
 * profile always gives the same bytes, and save(load(save(p))) == save(p).
 * Returns 0, or -1 (I/O error, out of memory). */
int profile_save(const struct profile *p, const char *path, struct xerr *e);

/* The largest profile file profile_load reads (1 GiB): JSON parsing needs
 * several times the file's size in memory. */
#define PROFILE_MAX_BYTES (1 << 30)

/* What profile_load keeps of a file, bounded by what runs write
 * (docs/reports.md, "Limits"), so that a planted or damaged file costs no
 * more to read and render than a real one:
 *  - stack_frames (at least 1): frames kept per stack. A run walks at most
 *    STACK_MAX_MACHINE_FRAMES machine frames and each expands into its
 *    inline chain: 16 frames each on average is far above what inlining
 *    gives. A deeper stack keeps its leaf end, where the time is spent
 *    (stack_frames - 1 frames), under a "[truncated: N frames]" frame
 *    standing for the N outermost, as the sampler keeps the leaf end of a
 *    stack deeper than its limit; one note says how many were cut.
 *  - Beyond the others the file is refused: frames (entries of "frames"),
 *    samples (entries of "samples"), modules (entries of "modules": a
 *    process maps at most vm.max_map_count, 65530 by default), stack_refs
 *    (the frames of all the samples' stacks, as the file lists them),
 *    stack_text_bytes (the strings of the frames kept, over all stacks: what
 *    renderers write out) and string_bytes (one string; the Rust demangler
 *    stops at 1,000,000 bytes). */
struct profile_limits {
	size_t stack_frames;
	size_t frames;
	size_t samples;
	size_t modules;
	size_t stack_refs;
	uint64_t stack_text_bytes;
	size_t string_bytes;
};

#define PROFILE_MAX_STACK_FRAMES (16 * STACK_MAX_MACHINE_FRAMES)
#define PROFILE_MAX_FRAMES ((size_t)1 << 24)
#define PROFILE_MAX_SAMPLES ((size_t)1 << 24)
#define PROFILE_MAX_MODULES ((size_t)1 << 16)
#define PROFILE_MAX_STACK_REFS ((size_t)1 << 26)
#define PROFILE_MAX_STACK_TEXT_BYTES ((uint64_t)1 << 30)
#define PROFILE_MAX_STRING_BYTES ((size_t)1 << 20)

/* The limits above, which profile_load applies. */
extern const struct profile_limits profile_default_limits;

/* Reads a file written by profile_save: a regular file of at most
 * PROFILE_MAX_BYTES (devices, FIFOs and larger files are refused without
 * being read) within profile_default_limits. Returns NULL with the reason
 * (not a regular file, too large, not a profile, unsupported version,
 * malformed field, over a limit) in e: one line, starting with path. */
struct profile *profile_load(const char *path, struct xerr *e);

/* profile_load within other limits (tests use small ones). */
struct profile *profile_load_within(const char *path, const struct profile_limits *limits, struct xerr *e);

/* Short names of the frame enums used in files and JSON reports. */
const char *profile_lang_name(enum frame_lang lang);      /* "rust", "c", "c++", "unknown" */

#endif
