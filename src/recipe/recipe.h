/* recipe.h — load, check and run recipes (the xgdbprof tracing language).
 *
 * Lifecycle: recipe_load_file/recipe_load_text parse and check a recipe and
 * return NULL when it has errors (they are all in the diag_list, printable
 * with recipe_diag_list_print). A loaded recipe is immutable except for its options,
 * which CLI flags may override with recipe_set_option. The session reads the
 * options and the probes to know what to arm, then creates a recipe_run and
 * feeds it events (events/event.h). Runs never touch gdb: reports that need the
 * session (flame graphs) go through a struct recipe_report_sink.
 *
 * Return conventions: pointers are NULL on failure; ints are 0 on success
 * and -1 on failure with the reason in the struct xerr (error.h).
 */
#ifndef XGDBPROF_RECIPE_H
#define XGDBPROF_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "events/event.h"
#include "recipe/recipe_diag.h"

struct map;
struct recipe;
struct recipe_run;

/* -D NAME=VALUE definitions, referenced as ${NAME} (or ${NAME:-default}) in
 * the recipe. The struct owns its strings. */
struct recipe_defines {
	size_t n;
	char **names;
	char **values;
	bool placeholders;   /* `check` mode: an undefined ${NAME} reads as "NAME" */
};

void recipe_defines_init(struct recipe_defines *d);
void recipe_defines_release(struct recipe_defines *d);
/* Adds "NAME=VALUE" (a later definition of NAME wins). Returns 0 or -1. */
int recipe_defines_add(struct recipe_defines *d, const char *assignment, struct xerr *e);

/* ---- loading ----------------------------------------------------------- */

/* Reads, parses and checks a recipe file. Returns NULL if the file cannot
 * be read or has errors; warnings may be recorded either way. defs may be NULL. */
struct recipe *recipe_load_file(const char *path, const struct recipe_defines *defs,
				struct diag_list *diags);
/* Same from memory; name is used in diagnostics ("-e" for command line text).
 * text need not be NUL-terminated. */
struct recipe *recipe_load_text(const char *name, const char *text, size_t len,
				const struct recipe_defines *defs, struct diag_list *diags);
void recipe_free(struct recipe *r);

/* For the CLI: loads `--recipe ARG` (a path or a shipped name, resolved with
 * recipe_resolve_name) or `-e TEXT` — exactly one of recipe_arg and text is
 * non-NULL — and prints every diagnostic (warnings too) to `errors`.
 * Returns the recipe, or NULL when it cannot be used (reason printed). */
struct recipe *recipe_open(const char *recipe_arg, const char *text,
			   const struct recipe_defines *defs, FILE *errors);
/* The name a recipe was loaded under: its file's path as resolved, or the
 * name given to recipe_load_text ("-e"). */
const char *recipe_name(const struct recipe *r);

/* Maps a recipe argument to a file. A string containing '/' is a path. A
 * bare name ("hot-cpu", "hot-cpu.recipe") means the shipped recipe, looked
 * up in XGDBPROF_RECIPEDIR (installed), then XGDBPROF_SRC_RECIPEDIR (source
 * tree); only when no shipped recipe has that name is a file of that name in
 * the current directory taken. When both exist, `note` (if non-NULL) says
 * which was taken; else it is "". An ELF file is refused as a recipe.
 * Returns 0 with the path in out, or -1 with e set. */
int recipe_resolve_name(const char *name_or_path, char *out, size_t outsz, char *note, size_t notesz,
			struct xerr *e);

/* The directories recipe_resolve_name searches, in order (NULL-terminated). */
const char *const *recipe_search_dirs(void);

/* ---- options ----------------------------------------------------------- */

enum recipe_threads { RECIPE_THREADS_RUNNING, RECIPE_THREADS_ALL, RECIPE_THREADS_REGEX };

struct recipe_options {
	int64_t frequency_hz;        /* sample rate; default 49 */
	int64_t duration_ns;         /* 0 = until interrupted */
	enum recipe_threads threads; /* default RUNNING */
	const char *threads_regex;   /* RECIPE_THREADS_REGEX: pattern over thread names */
	int64_t max_stopped_percent; /* budget of target time stopped; default 5 */
	bool exact;                  /* gdb unwinder only, no shortcuts; default false */
	int64_t max_keys;            /* per map; default 10000; 0 = unlimited */
	int64_t stack_depth;         /* frames kept per stack; default 64, at most STACK_MAX_MACHINE_FRAMES */
	/* ustack drops its innermost frames while their function matches
	 * this pattern (an allocator and its wrappers), so stacks end in the
	 * code that called them; "" = keep every frame. */
	char skip_leaf[1024];
};

const struct recipe_options *recipe_options(const struct recipe *r);

/* Overrides an option as `set NAME VALUE` would ("frequency", "99").
 * Returns 0, or -1 for an unknown option or a bad value. */
int recipe_set_option(struct recipe *r, const char *name, const char *value, struct xerr *e);


/* ---- probes ------------------------------------------------------------ */

size_t recipe_probe_count(const struct recipe *r);

/* What a recipe's builtins need from the run (recipe/builtins.c says which
 * builtin needs what), so the command sets up no more than that. */
enum recipe_needs {
	RECIPE_NEEDS_STACKS = 1u << 0,     /* each event's stack walked: ustack, caller, func */
	RECIPE_NEEDS_SYMBOLS = 1u << 1,    /* gdb's symbols: arg() evaluates a parameter */
	RECIPE_NEEDS_LIVE_HEAP = 1u << 2,  /* the live() maps' allocations tested in the heap
					    * before the detach */
};
/* The RECIPE_NEEDS_* bits of every builtin the recipe's probes use. */
unsigned recipe_needs(const struct recipe *r);
/* Fills *out for probe i (strings borrowed from r). Returns 0 or -1. The
 * specs are what the command hands the producers to arm. */
int recipe_probe(const struct recipe *r, size_t i, struct probe_spec *out);
/* Whether a probe with a NAME or REGEX spec matches a demangled function
 * name (NAME ignores generic arguments: "a::B::f" matches "a::B<T>::f"). */
bool recipe_probe_matches_function(const struct recipe *r, size_t i, const char *function);

/* ---- running ----------------------------------------------------------- */

struct recipe_report_opts {
	int64_t top;          /* report: how many paths; 0 = default */
	const char *title;    /* flamegraph/report title, or NULL */
	const char *path;     /* output file of a format's call (flamegraph, folded, ...), or NULL */
	bool inverted;        /* flamegraph: icicle graph of callers, merged leaf first */
	bool waits;           /* report: stacks of waiting threads (headlines name the call that waits) */
	bool panics;          /* report: panics grouped by location (recipe/panic_report.h) */
	const char *types;    /* pprof: sample types, "name/unit[,name/unit]" (events, then weight) */
	const char *weight_unit;  /* "ns": the map sums thread.cpu_ns (a CPU-time profile); report's unit=
				   * ("bytes", "allocs"); NULL: samples */
};

/* The renderer options a report call asks for (top, title, inverted) over
 * the defaults (report_options_init): what a session's sink renders with,
 * so that every option the checker accepts reaches the renderer. o may be
 * NULL. */
struct report_options;
void recipe_report_options(const struct recipe_report_opts *o, struct report_options *ro);

/* How report calls reach the session. Each callback returns 0 or -1 with e
 * filled. A NULL callback selects the built-in behaviour: report prints the
 * map sorted like print(), folded and json write the map itself to a file
 * (or `out`), and the formats only a session renders (flamegraph, pprof)
 * are a runtime error. */
struct report_format;
struct recipe_report_sink {
	void *ctx;
	int (*report)(void *ctx, const struct map *m, const struct recipe_report_opts *o, struct xerr *e);
	/* The calls of the output formats (report/report_format.h names each
	 * format's call: flamegraph(), folded(), json(), pprof()): m rendered
	 * in format f into o->path, or f->default_file when that is NULL. */
	int (*render)(void *ctx, const struct report_format *f, const struct map *m, const struct recipe_report_opts *o,
		      struct xerr *e);
	/* snapshot(@live_map, "name"): tests the live() maps now (the target
	 * held stopped) and saves the map as a profile; o->path is the name */
	int (*snapshot)(void *ctx, const struct map *m, const struct recipe_report_opts *o, struct xerr *e);
	/* print(@map, N, "name.txt"): the map as print() writes it (its top
	 * N entries, 0 all; whole-run estimates under a budget) into the file
	 * name in the run's directory */
	int (*print_file)(void *ctx, const struct map *m, size_t top, const char *name, struct xerr *e);
};

/* Starts a run printing to out. sink may be NULL (built-ins only). The
 * recipe must outlive the run. Returns NULL on out of memory. */
struct recipe_run *recipe_run_new(const struct recipe *r, FILE *out,
				  const struct recipe_report_sink *sink);
/* Runs the probes an event fires. Returns 0, or -1 on a runtime error
 * ("FILE:LINE:COL: runtime error: ..." in e); the session should then stop.
 * After an END event, maps the recipe only writes (never reads, prints,
 * reports or clears) are printed, as bpftrace prints its maps at exit. */
int recipe_run_event(struct recipe_run *run, const struct event *ev, struct xerr *e);
/* The share of the target's CPU time the probes were armed, when a stop
 * budget switched them off the rest of the time (the tracer's coverage):
 * count() maps then print measured values with whole-run estimates and 95%
 * intervals (map_estimate), as lower bounds only when lower_bound. Call
 * before END; 1 (the default) prints values alone. */
void recipe_run_set_coverage(struct recipe_run *run, double armed_share, bool lower_bound);
/* The range the armed share lies in (the tracer's hits' own CPU taken out
 * at its lowest and highest cost): intervals widen to it. After
 * recipe_run_set_coverage. */
void recipe_run_set_coverage_range(struct recipe_run *run, double low, double high);
/* The armed windows the run had and how much more the per-window counts
 * spread than Poisson counts (>= 1): intervals widen to it, and an entry
 * seen in fewer than MAP_MIN_ESTIMATE_WINDOWS windows gets no estimate.
 * After recipe_run_set_coverage. */
void recipe_run_set_coverage_windows(struct recipe_run *run, size_t windows, double dispersion);
/* Entries counted in the target (trace/entry_counter.h): `counted` at the
 * counted sites (all_sites: every probed site had a counter), and per
 * site (events' weight_site) what each of its hits stands for, kept by
 * the caller for the run's life; weighted_hits: the hits at counted
 * sites (maps.h, map_coverage); no_stops: some sites were only counted,
 * with no breakpoint (their one event came at the end). After
 * recipe_run_set_coverage. */
void recipe_run_set_coverage_counted(struct recipe_run *run, double counted, bool all_sites, const double *site_scales,
				     const double *site_sum_scales, size_t nsite_scales, uint64_t weighted_hits,
				     bool no_stops);
/* Calls counted at sites that no entry stands for (maps.h, map_apart),
 * kept by the caller for the run's life: print() says them under the
 * maps their sites feed. After recipe_run_set_coverage_counted. */
struct map_apart;
void recipe_run_set_coverage_aparts(struct recipe_run *run, const struct map_apart *aparts, size_t n);
/* The coverage the setters above made (what map estimates divide by). */
struct map_coverage;
const struct map_coverage *recipe_run_coverage(const struct recipe_run *run);
/* The traced run's length (wall seconds): count() and sum() maps then also
 * print their whole-run estimates as rates per second. 0: no rates. */
void recipe_run_set_seconds(struct recipe_run *run, double seconds);
/* Tests every allocation the live() maps recorded: test(ctx, addr, size)
 * returns 0 still allocated, 1 freed, 2 unknown. Of records of one address
 * only the newest is tested (the others were freed before it was handed
 * out again); a record found freed by an earlier call stays freed, untested.
 * Call with the target readable (stopped): at each snapshot() and once
 * before END; until the first call live() maps print what they recorded.
 * Returns 0 or -1 (out of memory). */
int recipe_run_test_live(struct recipe_run *run, int (*test)(void *ctx, uint64_t addr, int64_t size), void *ctx);
/* After recipe_run_test_live: bounds each live() entry by the heap's census
 * of the sizes it holds (map_live_bound); the target still readable. */
void recipe_run_bound_live(struct recipe_run *run, int64_t (*class)(void *ctx, uint64_t addr),
			   int64_t (*census)(void *ctx, int64_t cls), void *ctx);
/* True once an action executed exit(): send END and stop feeding events. */
bool recipe_run_exit_requested(const struct recipe_run *run);
void recipe_run_free(struct recipe_run *run);

#endif
