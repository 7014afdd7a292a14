/* cmd_run.c — the default mode: run a recipe against a PID or a command.
 *
 * Order of a run: load and check the recipe (bad recipe: exit 2 before
 * touching the target), attach or launch, BEGIN, sample (stacks/sampler.h)
 * or trace (trace/tracer.h) until the duration, a signal, exit() or the
 * target's exit, then detach — and only then END, whose report calls render
 * what was collected: probes out first, then detach, then reports
 * (docs/design.md, "Processes and safety" and "Recipes and reports").
 */
#include "config.h"
#include "cli/cli.h"
#include "events/event.h"
#include "procfs/glibc_heap.h"
#include "cli/jemalloc_heap.h"
#include "recipe/maps.h"
#include "recipe/panic_report.h"
#include "util/output_file.h"
#include "report/profile.h"
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/report_format.h"
#include "stacks/sampler.h"
#include "session/session.h"
#include "session/signals.h"
#include "symbols/source_map.h"
#include "symbols/symbolize.h"
#include "trace/tracer.h"
#include "trace/tracer_resolve.h"
#include "util/clock.h"
#include "util/text_fit.h"
#include "util/tee_stream.h"

#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct run_context {
	const struct run_request *request;
	struct recipe *recipe;
	struct recipe_run *run;
	struct session *session;
	struct symbolizer *sym;
	struct tracer_sites *resolved;   /* per probe, from precheck_probe_names: the tracer takes them */
	struct source_map *source_map;
	struct sampler_stats stats;         /* sampling's figures */
	struct tracer_stats trace_stats;    /* tracing's figures */
	const struct run_stats *ended;      /* the shared part of whichever ran */
	char output_dir[PATH_MAX];
	char recipe_name[PATH_MAX];
	char exe[PATH_MAX];
	char build_id[128];
	char command_line[4096];
	char start_time[64];
	char thread_selection[256];
	const char *walker;
	const char *stop_mode;
	bool wants_samples;        /* the recipe has `sample` probes */
	bool from_jemalloc;        /* the heap recipe's profile is jemalloc's own (jemalloc_heap.h) */
	bool tracing;              /* breakpoint probes rather than sampling */
	pid_t pid;
	int threads_seen;
	uint64_t start_ns;
	/* Where the run's wall time went, for say_overrun: from run_recipe's
	 * start, the collection's start and end, the detach's start and end. */
	uint64_t began_ns, attached_ns, collect_start_ns, collect_end_ns, detach_start_ns, detach_end_ns;
	int reports_written;
	bool profile_saved;        /* a profile.json in output_dir: `xgdbprof report DIR` works */
	bool output_dir_made;      /* output_dir exists: made on the first file, not before */
	struct cli_files_written written;  /* what output_dir holds of ours, in order */
	/* `-o flame.svg`: the one file the user asked for, as py-spy writes
	 * it, in the format its name ends with; no directory is made. */
	const struct report_format *single_format;
	bool single_written;
	/* The recipe's probes, as handed to the producers; interval probes'
	 * next due time per probe. */
	size_t nprobes;
	struct probe_spec *probes;
	struct map_apart *aparts;  /* the tracer's calls no entry stands for, as the recipe's maps see them */
	uint64_t *interval_next_ns;
	struct tracer_progress progress;   /* snapshots' stops, the armed share so far */
	int snapshots;                     /* snapshot() calls so far: NAME-N.json */
	/* Every sample, for the raw profile saved when no report() asked for one. */
	struct profile *raw;
	bool meta_filled;          /* fill_meta(raw) done: the run header was printed */
	bool stdout_tty;
	size_t width;              /* the terminal's columns (text_terminal_width) */
	bool out_fitted;           /* out is our text_fit_stream over it */
	FILE *out;                 /* report() and print() text (stdout, or the caller's stream), every line within width */
	FILE *copy_tee, *copy;     /* with -o DIR: out also goes to copy (memory), kept as report.txt when no file is */
	char *copy_text;
	size_t copy_len;
};

static void fill_meta(struct run_context *rc, struct profile *p)
{
	struct profile_meta *m = &p->meta;
	const struct recipe_options *o = recipe_options(rc->recipe);
	m->exe = profile_intern(p, rc->exe);
	m->build_id = rc->build_id[0] ? profile_intern(p, rc->build_id) : NULL;
	m->pid = rc->pid;
	m->command_line = profile_intern(p, rc->command_line);
	m->recipe = profile_intern(p, rc->recipe_name);
	m->thread_selection = profile_intern(p, rc->thread_selection);
	m->threads = rc->stats.max_threads;
	m->frequency_asked_hz = (double)o->frequency_hz;
	m->frequency_achieved_hz = rc->stats.frequency_achieved_hz;
	/* 0 asks for no limit: the header says no "(asked 0 s)" */
	m->duration_asked_s = o->duration_ns > 0 ? (double)o->duration_ns / 1e9 : NAN;
	m->duration_actual_s = rc->ended->elapsed_s;
	m->samples = (int64_t)rc->stats.run.stops;
	m->thread_samples = (int64_t)rc->stats.thread_samples;
	m->stacks_reused = (int64_t)rc->stats.reused;
	m->cpu_min_pct = rc->stats.cpu_percent_min;
	m->cpu_avg_pct = rc->stats.cpu_percent_avg;
	m->cpu_max_pct = rc->stats.cpu_percent_max;
	m->stopped_pct = rc->ended->elapsed_s > 0 ? 100.0 * rc->ended->stopped_s / rc->ended->elapsed_s : 0;
	m->thread_stopped_max_pct = rc->stats.thread_stopped_max_pct;
	m->stop_median_ms = rc->stats.run.stop_median_ms;
	m->stop_p99_ms = rc->stats.run.stop_p99_ms;
	m->held_median_ms = rc->stats.held_median_ms;
	m->held_p99_ms = rc->stats.held_p99_ms;
	m->thread_held_max_pct = rc->stats.thread_held_max_pct;
	m->walker = profile_intern(p, rc->walker);
	m->stop_mode = profile_intern(p, rc->stop_mode);
	m->version = profile_intern(p, PACKAGE_VERSION);
	m->start_time = profile_intern(p, rc->start_time);
	cli_profile_add_modules(p, rc->sym);
	if (rc->tracing || rc->from_jemalloc) {
		/* Breakpoint probes, or jemalloc's own profile: no sampling
		 * figures to speak of, no CPU watched. */
		m->thread_selection = NULL;
		m->threads = -1;
		m->frequency_asked_hz = m->frequency_achieved_hz = NAN;
		m->samples = m->thread_samples = m->stacks_reused = -1;
		m->cpu_min_pct = m->cpu_avg_pct = m->cpu_max_pct = NAN;
		m->thread_stopped_max_pct = NAN;
		m->held_median_ms = m->held_p99_ms = m->thread_held_max_pct = NAN;
		m->walker = NULL;
		m->stop_mode = NULL;
		/* jemalloc's runs keep their two stops' figures (jemalloc_heap.h) */
		if (rc->tracing)
			m->stop_median_ms = m->stop_p99_ms = NAN;
	}
	for (int i = 0; i < rc->ended->notes.n; i++)
		profile_add_note(p, rc->ended->notes.text[i], NULL);
	if (rc->ended->notes.dropped > 0) {
		char note[96];
		snprintf(note, sizeof note, "%d more notes of the run were not kept (at most %d are)",
			 rc->ended->notes.dropped, RUN_MAX_NOTES);
		profile_add_note(p, note, NULL);
	}
	if (rc->ended->target_exited && rc->ended->killed_by[0]) {
		char note[96];
		snprintf(note, sizeof note, "the target was killed by %s during the run", rc->ended->killed_by);
		profile_add_note(p, note, NULL);
	} else if (rc->ended->target_exited) {
		profile_add_note(p, "the target exited during the run", NULL);
	} else if (rc->ended->leader_exited) {
		profile_add_note(p, "the target's main thread exited during the run while its other threads ran on: "
				 "gdb cannot go on with such a process, so the run ended there", NULL);
	}
	for (size_t i = 0; rc->sym && i < symbolizer_note_count(rc->sym); i++)
		profile_add_note(p, symbolizer_note(rc->sym, i), NULL);
	if (rc->ended->target_execed)
		profile_add_note(p, "the target exec'd another program during the run: the run ended at the exec, "
				 "the new program was left running untraced", NULL);
}

/* A path for an output file: a recipe names files inside the run's
 * directory only (output_name_check). */
static int output_path(const struct run_context *rc, const char *name, char *out, size_t size,
		       struct xerr *e)
{
	if (output_name_check(name, e) < 0)
		return -1;
	snprintf(out, size, "%s/%s", rc->output_dir, name);
	return 0;
}

/* In single-file mode (`-o flame.svg`) only the first rendering in the
 * file's format is written, to that file; the directory's other files
 * (profile.json, the exports, snapshots) are not: the user asked for one
 * file. */
static bool single_file_skips(const struct run_context *rc, const struct report_format *f)
{
	return rc->single_format && (f != rc->single_format || rc->single_written);
}

/* The format a `-o PATH` names by its ending, when PATH is not an existing
 * directory: "flame.svg" is a flame graph, "cpu.pb.gz" pprof. NULL: a
 * directory. ".json" alone stays a directory name's ending (report.json,
 * profile.json and speedscope share it). */
static const struct report_format *single_file_format(const char *path)
{
	static const struct {
		const char *ending, *format;
	} endings[] = {{".svg", "svg"}, {".folded", "folded"}, {".pb.gz", "pprof"},
		       {".speedscope.json", "speedscope"}, {".txt", "text"}};
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return NULL;
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
		size_t m = strlen(endings[i].ending);
		if (n > m && !strcmp(path + n - m, endings[i].ending) && path[n - m - 1] != '/')
			return report_format_find(endings[i].format);
	}
	return NULL;
}

/* The output directory appears with the run's first file: a run that
 * writes nothing (a trace that only prints) leaves no directory behind,
 * even when it is killed. */
static int ensure_output_dir(struct run_context *rc, struct xerr *e)
{
	if (rc->output_dir_made)
		return 0;
	if (rc->single_format)   /* a writer single_file_skips missed: never a directory named flame.svg */
		return xerr_set(e, "with -o %s only that file is written", rc->output_dir);
	if (output_dir_prepare(rc->output_dir, true, e) < 0)
		return -1;
	rc->output_dir_made = true;
	return 0;
}

static struct profile *profile_of_map(struct run_context *rc, const struct map *m, bool estimates_kept_apart,
				      struct xerr *e)
{
	struct profile *p = profile_new();
	if (!p) {
		xerr_oom(e);
		return NULL;
	}
	fill_meta(rc, p);
	const struct map_coverage *c = rc->run ? recipe_run_coverage(rc->run) : NULL;
	if (recipe_profile_add_map_estimated(p, m, c, e) < 0) {
		profile_free(p);
		return NULL;
	}
	/* Under the budget each stack's hits stand for the calls counted in
	 * the target: the report, the flame graph and the saved profile show
	 * those whole-run estimates (pprof keeps the measured values too, as
	 * its sampled_ types: it scales them itself). A live() map's are its
	 * retained bytes as print() estimates them (map_live_estimate). */
	enum map_agg agg = map_agg(m);
	bool estimable = !estimates_kept_apart && (agg == MAP_AGG_COUNT || agg == MAP_AGG_SUM || agg == MAP_AGG_LIVE);
	if (estimable && p->meta.per_entry_estimates)
		profile_weigh_by_estimates(p);
	else if (estimable && agg != MAP_AGG_LIVE && c && c->armed_share > 0 && c->armed_share < 1 && !c->lower_bound)
		profile_scale_to_estimates(p, 1 / c->armed_share);   /* the armed share alone: as print() scales */
	return p;
}

static void report_defaults(const struct run_context *rc, const struct recipe_report_opts *o,
			    struct report_options *ro)
{
	recipe_report_options(o, ro);
	ro->color = rc->stdout_tty && !getenv("NO_COLOR");
	ro->links = cli_links_wanted(rc->stdout_tty);
	ro->source_map = rc->source_map;
	ro->verbose = cli_globals.verbose;
	if (rc->request->top > 0)
		ro->top = rc->request->top;
	ro->width = rc->width;
}

static int sink_report(void *ctx, const struct map *m, const struct recipe_report_opts *o, struct xerr *e)
{
	struct run_context *rc = ctx;
	if (o && o->panics) {
		int result = panic_report_print(m, rc->out, rc->width, cli_links_wanted(rc->stdout_tty),
						rc->run ? recipe_run_coverage(rc->run) : NULL, e);
		fflush(rc->out);
		return result;
	}
	struct profile *p = profile_of_map(rc, m, false, e);
	if (!p)
		return -1;
	if (o && o->weight_unit)
		p->meta.weight_unit = profile_intern(p, o->weight_unit);
	else if (p->meta.weights_estimated && map_agg(m) == MAP_AGG_COUNT)
		p->meta.weight_unit = profile_intern(p, "calls");   /* a traced count: the probed calls */
	struct report_options ro;
	report_defaults(rc, o, &ro);
	ro.no_header = rc->meta_filled;   /* said once, before END's output */
	int result = report_text(p, rc->out, &ro, e);
	if (result == 0 && rc->request->annotate) {
		fputc('\n', rc->out);
		result = report_annotate(p, rc->out, &ro, e);
	}
	fflush(rc->out);
	/* The first report's profile is the run's saved profile: `xgdbprof
	 * report DIR` re-renders exactly what was shown. */
	char name[256], path[PATH_MAX + 300];
	if (rc->reports_written == 0)
		snprintf(name, sizeof name, "profile.json");
	else
		snprintf(name, sizeof name, "profile-%.200s.json", map_name(m));
	snprintf(path, sizeof path, "%s/%s", rc->output_dir, name);
	if (rc->single_format)
		return result;
	if (result == 0)
		result = ensure_output_dir(rc, e);
	if (result == 0)
		result = profile_save(p, path, e);
	if (result == 0) {
		rc->reports_written++;
		rc->profile_saved = true;
		cli_files_written_add(&rc->written, name);
	}
	profile_free(p);
	return result;
}

/* A format's call (flamegraph(), folded(), json(), pprof()): the map as a
 * profile rendered in format f into the run's directory. */
static int sink_render(void *ctx, const struct report_format *f, const struct map *m,
		       const struct recipe_report_opts *o, struct xerr *e)
{
	struct run_context *rc = ctx;
	if (single_file_skips(rc, f))
		return 0;
	/* A folded file of no stacks is 0 bytes that every consumer rejects
	 * or draws as nothing: not written (the last line lists what was). */
	if (map_len(m) == 0 && !strcmp(f->name, "folded")) {
		if (cli_globals.verbose)
			fprintf(stderr, "xgdbprof: no stacks: no %s written\n", f->what);
		return 0;
	}
	struct profile *p = profile_of_map(rc, m, (f->options & REPORT_OPT_TYPES) != 0, e);
	if (!p)
		return -1;
	if (o && o->weight_unit)
		p->meta.weight_unit = profile_intern(p, o->weight_unit);
	struct report_options ro;
	report_defaults(rc, o, &ro);
	ro.color = false;
	ro.links = false;
	if (f->options & REPORT_OPT_TYPES) {
		/* a sum() map keeps both its updates and their total */
		const char *types = o && o->types ? o->types
				  : o && o->weight_unit ? "samples/count,cpu/nanoseconds"
				  : map_agg(m) == MAP_AGG_SUM ? "count/count,sum/count" : "samples/count";
		p->meta.value_types = profile_intern(p, types);
		/* Under the budget pprof's values are the whole run's estimates,
		 * as the text report's "est." figures are (docs/alloc.md, "pprof") */
		double armed = rc->trace_stats.armed_fraction;
		if (rc->tracing && armed > 0 && armed < 1) {
			p->meta.value_scale = 1 / armed;
			p->meta.value_scale_lower_bound = rc->trace_stats.estimate_lower_bound;
		}
	}
	char path[PATH_MAX + 64];
	const char *name = o && o->path ? o->path : f->default_file;
	int result;
	if (rc->single_format) {
		name = rc->output_dir;
		snprintf(path, sizeof path, "%s", rc->output_dir);
		result = report_to_file(f->render, p, path, &ro, e);
		rc->single_written = result == 0;
	} else {
		result = output_path(rc, name, path, sizeof path, e);
		if (result == 0)
			result = ensure_output_dir(rc, e);
		if (result == 0)
			result = report_to_file(f->render, p, path, &ro, e);
	}
	if (result == 0) {
		if (cli_globals.verbose)
			fprintf(stderr, "xgdbprof: %s written to %s\n", f->what, path);
		cli_files_written_add(&rc->written, name);
	}
	profile_free(p);
	return result;
}

/* print(@m, N, "name"): print()'s text of the map into the run's
 * directory (a shipped recipe's per-stack detail beside its report). */
static int sink_print_file(void *ctx, const struct map *m, size_t top, const char *name, struct xerr *e)
{
	struct run_context *rc = ctx;
	if (rc->single_format)   /* -o FILE: only that file */
		return 0;
	char path[PATH_MAX + 64];
	struct output_file file;
	if (output_path(rc, name, path, sizeof path, e) < 0 || ensure_output_dir(rc, e) < 0 ||
	    output_file_open(&file, path, e) < 0)
		return -1;
	map_print(m, file.stream, top, rc->run ? recipe_run_coverage(rc->run) : NULL);
	if (output_file_commit(&file, e) < 0)
		return -1;
	if (cli_globals.verbose)
		fprintf(stderr, "xgdbprof: @%s written to %s\n", map_name(m), path);
	cli_files_written_add(&rc->written, name);
	return 0;
}

static int test_one_allocation(void *ctx, uint64_t addr, int64_t size)
{
	switch (glibc_heap_test(ctx, addr, size)) {
	case HEAP_LIVE: return 0;
	case HEAP_FREED: return 1;
	case HEAP_UNKNOWN: break;
	}
	return 2;
}

static int64_t chunk_class(void *ctx, uint64_t addr)
{
	return glibc_heap_chunk_class(ctx, addr);
}

static int64_t chunks_in_use(void *ctx, int64_t chunk)
{
	return glibc_heap_in_use_chunks(ctx, chunk);
}

/* Tests the live() maps' allocations in glibc's chunk headers; the caller
 * holds the target stopped. Returns 0, or -1 with why nothing was tested
 * in e; *why_unknown: why every allocation is unknown, or NULL. */
static int test_heap_now(struct run_context *rc, const char **why_unknown, struct xerr *e)
{
	*why_unknown = NULL;
	struct glibc_heap *heap = glibc_heap_open(rc->pid, e);
	if (!heap)
		return -1;
	int result = recipe_run_test_live(rc->run, test_one_allocation, heap);
	if (result == 0)
		recipe_run_bound_live(rc->run, chunk_class, chunks_in_use, heap);
	if (result < 0)
		xerr_oom_doing(e, "testing the allocations");
	else if (glibc_heap_why(heap))
		*why_unknown = glibc_heap_why(heap);   /* a static sentence (glibc_heap.h) */
	glibc_heap_close(heap);
	return result;
}

/* snapshot(@heap, "NAME"): what the live() map holds now, saved as
 * NAME-N.json (a profile weighted by live bytes: `xgdbprof report`, and
 * `report --diff-base` of two of them gives the growth by allocation site).
 * During the run the target is held stopped for the reads, like a hit, and
 * the tracer charges that to the budget; at END the test made before the
 * detach is what is saved. */
static int sink_snapshot(void *ctx, const struct map *m, const struct recipe_report_opts *o, struct xerr *e)
{
	struct run_context *rc = ctx;
	if (rc->single_format)
		return 0;
	char name[300], path[PATH_MAX + 320], note[512] = "";
	snprintf(name, sizeof name, "%.250s-%d.json", o && o->path ? o->path : "snapshot", ++rc->snapshots);
	if (output_path(rc, name, path, sizeof path, e) < 0)
		return -1;
	double at_s = (double)(monotonic_ns() - rc->start_ns) / 1e9, held_ms = 0;
	if (rc->session) {
		const char *why_unknown = NULL;
		struct xerr why = { "" };
		bool was_stopped = session_is_stopped(rc->session);
		uint64_t t0 = monotonic_ns();
		int tested = was_stopped || session_stop(rc->session, &why) == 0 ? test_heap_now(rc, &why_unknown, &why)
										   : -1;
		if (!was_stopped && session_is_stopped(rc->session) && session_target_alive(rc->session) &&
		    session_resume(rc->session, e) < 0)
			return -1;
		held_ms = (double)(monotonic_ns() - t0) / 1e6;
		rc->progress.sink_stopped_s += held_ms / 1e3;
		if (tested < 0)
			snprintf(note, sizeof note, "heap snapshot %d: not tested (%.300s): the allocations recorded so far",
				 rc->snapshots, why.msg);
		else if (why_unknown && map_len(m) > 0)   /* no heap yet and nothing recorded: nothing to say */
			snprintf(note, sizeof note, "heap snapshot %d: %.300s: every allocation is unknown", rc->snapshots,
				 why_unknown);
	}
	struct profile *p = profile_of_map(rc, m, true, e);
	if (!p)
		return -1;
	p->meta.weight_unit = profile_intern(p, "bytes");
	p->meta.duration_actual_s = at_s;
	double armed = rc->session ? rc->progress.armed_fraction : rc->trace_stats.armed_fraction;
	char said[512];
	int n = snprintf(said, sizeof said, "heap snapshot %d, %.1f s into the run: bytes of the sampled allocations "
			 "still live then, by allocating stack (docs/alloc.md)", rc->snapshots, at_s);
	if (armed > 0 && armed < 1 && n > 0 && (size_t)n < sizeof said)
		snprintf(said + n, sizeof said - (size_t)n, "; the probes were armed %.3g%% of the target's CPU time "
			 "so far: the whole run's retained bytes are about these / %.3g", 100 * armed, armed);
	int result = profile_add_note(p, said, e);
	if (result == 0 && note[0])
		result = profile_add_note(p, note, e);
	if (result == 0)
		result = ensure_output_dir(rc, e);
	if (result == 0)
		result = profile_save(p, path, e);
	if (result == 0) {
		cli_files_written_add(&rc->written, name);
		char held[64] = ", tested before the detach";
		if (rc->session)
			snprintf(held, sizeof held, ", the target held %.1f ms", held_ms);
		fprintf(stderr, "xgdbprof: heap snapshot %d at %.1f s: %" PRIu64 " bytes live%s%s%s: %s\n", rc->snapshots,
			at_s, profile_total_weight(p), note[0] ? "; " : "", note, held, name);
	}
	profile_free(p);
	return result;
}

/* The one consumer of the run's events, whoever produced them: samples
 * also go to the raw profile; every event goes to the recipe. Returns 0, 1
 * once the recipe called exit() (the producer then ends the run), or -1. */
static int take_event(void *ctx, const struct event *ev, struct xerr *e)
{
	struct run_context *rc = ctx;
	if (ev->kind == EVENT_SAMPLE) {
		if (cli_globals.verbose && rc->raw->nentries == 0 && !ev->weight_only)
			fprintf(stderr, "xgdbprof: first sample %.0f ms after start\n",
				(double)(ev->timestamp_ns - cli_globals.start_ns) / 1e6);
		/* An on-CPU run weighs each sample by the CPU time it stands for
		 * (event.h, cpu_ns), as the hot-cpu recipe does. */
		bool cpu_weighted = strcmp(rc->thread_selection, "running") == 0;
		if (cpu_weighted && !rc->raw->meta.weight_unit)
			rc->raw->meta.weight_unit = profile_intern(rc->raw, "ns");
		if ((cpu_weighted || !ev->weight_only) &&
		    profile_add_tid_events(rc->raw, ev->thread.name, (pid_t)ev->thread.id, ev->thread.state, ev->stack,
					   cpu_weighted ? ev->cpu_ns : 1, ev->weight_only ? 0 : 1, e) < 0)
			return -1;
	}
	if (recipe_run_event(rc->run, ev, e) < 0)
		return -1;
	return recipe_run_exit_requested(rc->run) ? 1 : 0;
}

/* An event of the run itself (BEGIN, END, an interval's tick). */
static int fire(struct run_context *rc, enum event_kind kind, int probe, struct xerr *e)
{
	uint64_t now = monotonic_ns();
	struct event ev = {
		.kind = kind, .probe = probe, .timestamp_ns = now, .since_start_ns = now - rc->start_ns,
		.pid = rc->pid, .cpu = -1,
	};
	return take_event(rc, &ev, e);
}

/* The producers' clock: fires the interval probes that are due. */
static int on_tick(void *ctx, uint64_t now_ns, struct xerr *e)
{
	struct run_context *rc = ctx;
	for (size_t i = 0; i < rc->nprobes; i++) {
		if (rc->interval_next_ns[i] == 0 || now_ns < rc->interval_next_ns[i])
			continue;
		rc->interval_next_ns[i] += (uint64_t)rc->probes[i].interval_ns;
		/* Fallen behind (arming under load, a long stop): the missed ticks
		 * are skipped, not fired back to back (each snapshot() stops the
		 * target). */
		if (rc->interval_next_ns[i] <= now_ns)
			rc->interval_next_ns[i] = now_ns + (uint64_t)rc->probes[i].interval_ns;
		int fired = fire(rc, EVENT_INTERVAL, (int)i, e);
		if (fired != 0)
			return fired;
	}
	return 0;
}

/* The recipe of -r NAME|FILE, -e TEXT or the default, with the -D
 * definitions, through recipe_open (which says what is wrong with it), its
 * name as resolved in name. Returns NULL when it cannot be used (said). */
static struct recipe *open_recipe(const struct run_request *req, char *name, size_t name_size)
{
	struct recipe_defines defines;
	struct xerr e;
	recipe_defines_init(&defines);
	for (int i = 0; i < req->ndefines; i++)
		if (recipe_defines_add(&defines, req->defines[i], &e) < 0) {
			cli_input_error("-D %s: %s", req->defines[i], e.msg);
			recipe_defines_release(&defines);
			return NULL;
		}
	const char *wanted = req->recipe_text ? NULL : req->recipe ? req->recipe : "hot-cpu";
	struct recipe *r = recipe_open(wanted, req->recipe_text, &defines, stderr);
	recipe_defines_release(&defines);
	if (r)
		snprintf(name, name_size, "%s", recipe_name(r));
	return r;
}

/* Whether the recipe samples (*samples: it has `sample` probes); a recipe
 * that would both sample and trace is refused before touching the target. */
static int check_probes(const struct probe_spec *probes, size_t nprobes, bool *samples)
{
	*samples = false;
	for (size_t i = 0; i < nprobes; i++)
		*samples |= probes[i].kind == PROBE_SAMPLE;
	/* The sampler and the tracer cannot share a run: one Dwfl serves one
	 * unwinder. */
	if (*samples && tracer_wanted(probes, nprobes))
		return cli_input_error("a recipe cannot mix `sample` probes with function/return/panic/syscall "
				       "probes yet; run two recipes (two xgdbprof processes cannot attach together "
				       "either: run them one after the other)");
	return 0;
}

static void read_cmdline(pid_t pid, char *out, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "re");
	out[0] = '\0';
	if (!f)
		return;
	size_t n = fread(out, 1, size - 1, f);
	fclose(f);
	for (size_t i = 0; i + 1 < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[n] = '\0';
}

static int module_build_id(const struct symbolizer_module *m, void *arg)
{
	struct run_context *rc = arg;
	if (strcmp(m->path, rc->exe) == 0) {
		snprintf(rc->build_id, sizeof rc->build_id, "%s", m->build_id);
		return 1;
	}
	return 0;
}

/* s reduced to a short name safe in a path and on a terminal (the
 * executable's name comes from the target). */
static void put_name_part(char *out, size_t size, const char *s)
{
	size_t n = 0;
	for (; *s && n + 1 < size && n < 32; s++) {
		unsigned char c = (unsigned char)*s;
		out[n++] = (isalnum(c) || c == '-' || c == '_' || c == '.') ? (char)c : '_';
	}
	out[n] = '\0';
}

/* -o DIR was checked before attaching; without it the name says what the
 * run was: xgdbprof-RECIPE-EXE-PID-YYYYmmdd-HHMMSS. Either is created only
 * when the first file is written (ensure_output_dir). */
static void choose_output_dir(struct run_context *rc)
{
	if (rc->request->output_dir) {
		snprintf(rc->output_dir, sizeof rc->output_dir, "%s", rc->request->output_dir);
		return;
	}
	char recipe[40], exe[40], stamp[32];
	const char *base = strrchr(rc->recipe_name, '/');
	base = base ? base + 1 : rc->recipe_name;
	put_name_part(recipe, sizeof recipe, strcmp(base, "-e") == 0 ? "oneliner" : base);
	char *suffix = strstr(recipe, ".recipe");
	if (suffix && suffix[7] == '\0')
		*suffix = '\0';
	base = strrchr(rc->exe, '/');
	put_name_part(exe, sizeof exe, base ? base + 1 : "target");
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	snprintf(rc->output_dir, sizeof rc->output_dir, "xgdbprof-%s-%s-%d-%s", recipe, exe, (int)rc->pid, stamp);
}

static enum sampler_threads sampler_threads_of(const struct recipe_options *o, char *label, size_t size)
{
	switch (o->threads) {
	case RECIPE_THREADS_ALL:
		snprintf(label, size, "all");
		return SAMPLER_THREADS_ALL;
	case RECIPE_THREADS_REGEX:
		snprintf(label, size, "/%s/", o->threads_regex);
		return SAMPLER_THREADS_REGEX;
	default:
		snprintf(label, size, "running");
		return SAMPLER_THREADS_RUNNING;
	}
}

/* --all-stop / --non-stop, else non-stop for an on-CPU profile (`set
 * threads running`) of a running process (pid; 0 for a launched command)
 * with the fast walker: threads are then stopped one at a time, each only
 * for its own walk, so no thread piles up behind a lock held by a stopped
 * one, and idle threads are never stopped (docs/sampling.md, "One sampling
 * round"). All-stop stays for the rest: `threads all` and name regexes
 * walk many threads a round, which one -exec-interrupt --all does cheaper;
 * the reference walker (exact mode) compares with what all-stop shows. */
static bool non_stop_by_default(const struct recipe_options *opts, pid_t pid)
{
	if (cli_globals.stop_mode != CLI_STOP_AUTO)
		return cli_globals.stop_mode == CLI_STOP_NON;
	return pid > 0 && opts->threads == RECIPE_THREADS_RUNNING && !opts->exact;
}

/* Loads the recipe and applies the command line to it, all before touching
 * the target. Returns XGP_EXIT_OK, or the exit code with nothing left to free. */
static int run_open(struct run_context *rc)
{
	const struct run_request *req = rc->request;
	struct xerr e;
	rc->recipe = open_recipe(req, rc->recipe_name, sizeof rc->recipe_name);
	if (!rc->recipe)
		return XGP_EXIT_USAGE;
	char value[64];
	if (req->duration_set) {
		snprintf(value, sizeof value, "%.0fms", req->duration_s * 1e3);
		recipe_set_option(rc->recipe, "duration", value, NULL);
	}
	if (req->frequency_hz > 0) {
		snprintf(value, sizeof value, "%.0f", req->frequency_hz);
		if (recipe_set_option(rc->recipe, "frequency", value, &e) < 0) {
			recipe_free(rc->recipe);
			return cli_input_error("--frequency: %s", e.msg);
		}
	}
	if (req->max_stopped_percent > 0) {
		snprintf(value, sizeof value, "%d%%", req->max_stopped_percent);
		recipe_set_option(rc->recipe, "max_stopped", value, NULL);   /* range checked by main */
	}
	if (req->threads && recipe_set_option(rc->recipe, "threads", req->threads, &e) < 0) {
		recipe_free(rc->recipe);
		return cli_input_error("--threads takes running, all or /regex/ over thread names (not '%.100s')",
				       req->threads);
	}
	rc->nprobes = recipe_probe_count(rc->recipe);
	rc->probes = calloc(rc->nprobes ? rc->nprobes : 1, sizeof *rc->probes);
	if (!rc->probes) {
		recipe_free(rc->recipe);
		return cli_error("out of memory");
	}
	for (size_t i = 0; i < rc->nprobes; i++)
		recipe_probe(rc->recipe, i, &rc->probes[i]);
	if (check_probes(rc->probes, rc->nprobes, &rc->wants_samples) != 0) {
		free(rc->probes);
		recipe_free(rc->recipe);
		return XGP_EXIT_USAGE;
	}
	/* A bad -o is found now, not after the run has collected its data. */
	rc->single_format = req->output_dir ? single_file_format(req->output_dir) : NULL;
	if (rc->single_format) {
		if (!output_file_dir_writable(req->output_dir)) {
			free(rc->probes);
			recipe_free(rc->recipe);
			return cli_input_error("cannot write %s: %s (give -o a file in a directory you can write)",
					       req->output_dir, strerror(errno));
		}
	} else if (req->output_dir && output_dir_prepare(req->output_dir, false, &e) < 0) {
		free(rc->probes);
		recipe_free(rc->recipe);
		return cli_input_error("%s", e.msg);
	}
	return XGP_EXIT_OK;
}

/* Resolves every function/return probe against the process's executable
 * and the libraries mapped now (/proc/PID/maps, read through our own ELF
 * and DWARF index: no ptrace), before gdb is started, so that a name that
 * matches nothing is bad input with the target never stopped. The tracer
 * resolves against the same set once attached (it has no pending probes
 * for a library loaded later), so this only moves the error earlier. The
 * symbolizer is kept for the run. Returns XGP_EXIT_OK, or the exit code
 * said on stderr. A process whose files we cannot read is left to the
 * attach, which says why. */
static int precheck_probe_names(struct run_context *rc, pid_t pid)
{
	struct xerr e;
	bool any = false;
	for (size_t i = 0; i < rc->nprobes; i++)
		any |= rc->probes[i].kind == PROBE_FUNCTION || rc->probes[i].kind == PROBE_RETURN;
	if (!any)
		return XGP_EXIT_OK;
	struct symbolizer *sym = symbolizer_new_pid(pid, &e);
	if (!sym)
		return XGP_EXIT_OK;
	int exit_code = XGP_EXIT_OK;
	/* kept for the tracer (tracer_config.resolved): it would resolve them again */
	rc->resolved = calloc(rc->nprobes, sizeof *rc->resolved);
	for (size_t i = 0; i < rc->nprobes && exit_code == XGP_EXIT_OK; i++) {
		const struct probe_spec *p = &rc->probes[i];
		if (p->kind != PROBE_FUNCTION && p->kind != PROBE_RETURN)
			continue;
		struct tracer_sites found = { 0 };
		/* with inlined copies, as the tracer arms them */
		int n = tracer_resolve(sym, p->spec_kind, p->spec, p->file, p->line, true, &found, &e);
		if (n < 0 || found.n == 0) {
			const char *slash = p->spec_kind == PROBE_SPEC_REGEX ? "/" : "";
			if (n < 0)
				exit_code = cli_input_error("line %d: %s probe: %s; `xgdbprof probes '%s%s%s' %d` "
							    "lists what a spec matches (process %d was not attached)",
							    p->recipe_line, probe_kind_name(p->kind), e.msg, slash, p->spec,
							    slash, (int)pid, (int)pid);
			else
				exit_code = cli_input_error("line %d: %s %s%s%s matches no function in process %d's "
							    "executable or the libraries it has loaded (not attached); "
							    "`xgdbprof probes '%s%s%s' %d` lists what a spec matches",
							    p->recipe_line, probe_kind_name(p->kind), slash, p->spec, slash,
							    (int)pid, slash, p->spec, slash, (int)pid);
		}
		if (n >= 0 && found.n && rc->resolved) {
			rc->resolved[i] = found;
			continue;
		}
		tracer_sites_release(&found);
	}
	if (exit_code == XGP_EXIT_OK) {
		rc->sym = sym;
	} else {
		for (size_t i = 0; rc->resolved && i < rc->nprobes; i++)
			tracer_sites_release(&rc->resolved[i]);
		free(rc->resolved);
		rc->resolved = NULL;
		symbolizer_free(sym);
	}
	return exit_code;
}

/* Whether every site precheck_probe_names resolved (there is one at
 * least) lies in a module that meets test. false when unsure. */
static bool every_site_module(struct run_context *rc, bool (*test)(const struct symbolizer_module *m, const char *arg),
			      const char *arg)
{
	if (!rc->sym || !rc->resolved)
		return false;
	size_t sites = 0;
	for (size_t i = 0; i < rc->nprobes; i++) {
		if (rc->probes[i].kind != PROBE_FUNCTION && rc->probes[i].kind != PROBE_RETURN)
			continue;
		for (size_t j = 0; j < rc->resolved[i].n; j++, sites++) {
			struct symbolizer_module m;
			struct xerr e;
			if (symbolizer_module_info(rc->sym, rc->resolved[i].v[j].addr, &m, &e) != 1 || !test(&m, arg))
				return false;
		}
	}
	return sites > 0;
}

/* A module whose own file carries its DWARF (none read from
 * /usr/lib/debug): gdb evaluates arg() there without separate debug files. */
static bool carries_own_dwarf(const struct symbolizer_module *m, const char *unused)
{
	(void)unused;
	return m->has_dwarf && !m->debug_file;
}

/* The program itself (its /proc/PID/exe path), no library: gdb evaluates
 * arg() there without any library's symbols. */
static bool is_program(const struct symbolizer_module *m, const char *exe)
{
	return m->path && strcmp(m->path, exe) == 0;
}

/* Whether the recipe has syscall probes. Under the budget they trace in
 * all-stop mode unless --non-stop: in non-stop mode a thread gdb resumed
 * while a syscall catchpoint was armed kept stopping at every system call
 * after the budget disabled it (handled inside gdb, out of the budget's
 * sight): kvservice lost 48% of its throughput to `syscall /futex/` held
 * 5.4%, and 50% at max_stopped 1% (armed 0.1% of the time); all-stop,
 * 10% held 5.8% (docs/tracing.md, "Which threads a hit stops"). */
static bool syscall_probes(const struct run_context *rc)
{
	for (size_t i = 0; i < rc->nprobes; i++)
		if (rc->probes[i].kind == PROBE_SYSCALL || rc->probes[i].kind == PROBE_SYSCALL_ENTRY)
			return true;
	return false;
}

/* Launches the command or attaches to the PID. Returns XGP_EXIT_OK with
 * rc->session set, or the exit code with the target untouched (the recipe
 * is the caller's to free). */
static int run_attach(struct run_context *rc)
{
	const struct run_request *req = rc->request;
	const struct recipe_options *opts = recipe_options(rc->recipe);
	struct xerr e;
	struct session_options so = cli_session_options();
	pid_t pid = 0;
	bool pid_given = !req->launch && req->argc == 1 && cli_parse_pid(req->argv[0], &pid) == 0;
	if (rc->wants_samples)
		so.non_stop = non_stop_by_default(opts, pid_given ? pid : 0);
	/* Tracing: a hit stops only the thread that hit, unless --all-stop
	 * (docs/tracing.md, "Which threads a hit stops"). */
	bool tracing = !rc->wants_samples && tracer_wanted(rc->probes, rc->nprobes);
	if (tracing)
		so.non_stop = cli_globals.stop_mode == CLI_STOP_NON ||
			      (cli_globals.stop_mode == CLI_STOP_AUTO && !(syscall_probes(rc) && !opts->exact));
	/* Sampling names frames itself; even `set exact true` takes only PCs
	 * from gdb's unwinder, which needs .eh_frame, not debug files. */
	so.no_separate_debug = rc->wants_samples;
	/* The fast walker takes registers and memory from gdb, nothing more;
	 * so does the tracer (it resolves probes and walks stacks itself)
	 * unless arg() asks gdb to evaluate a parameter. Reading symbols is
	 * what held an attached target stopped for 0.3-1.3 s. */
	so.no_symbols = (rc->wants_samples && !opts->exact) || (tracing && !(recipe_needs(rc->recipe) & RECIPE_NEEDS_SYMBOLS));
	/* A launched command is traced from its first instruction: it waits at
	 * its entry point until the probes are armed (the tracer resumes it). */
	so.hold_at_entry = tracing;
	int exit_code = XGP_EXIT_OK;
	if (req->launch) {
		if (session_launch(&rc->session, req->argv, &so, &e) < 0)
			exit_code = cli_input_error("%s", e.msg);
	} else if (!pid_given) {
		exit_code = cli_usage_error(NULL, req->argc != 1 ? "give exactly one PID, or -- COMMAND"
								 : "a PID is a positive number (see `pgrep NAME`)");
	} else if (proc_state(pid) == 'T') {
		/* Attaching would not run it, but the run would see nothing:
		 * say so and leave it exactly as it is (docs/design.md). */
		exit_code = cli_input_error("process %d is stopped (state T): nothing to %s; resume it with "
					    "`kill -CONT %d`, or see where it stopped with `xgdbprof dump %d`",
					    (int)pid, rc->wants_samples ? "sample" : "trace", (int)pid, (int)pid);
	} else if (tracing && (exit_code = precheck_probe_names(rc, pid)) != XGP_EXIT_OK) {
		/* said; nothing attached */
	} else {
		/* arg() has gdb read the program's symbols; with Debian's
		 * libc6-dbg present gdb also decompresses libc's separate DWARF
		 * while attaching, every thread stopped (kvservice: a 150-220 ms
		 * hold against 25-30 ms without). Only a probe in a module whose
		 * DWARF lives in a separate file needs those files. */
		char exe[PATH_MAX];
		if (tracing && !so.no_symbols && every_site_module(rc, carries_own_dwarf, NULL))
			so.no_separate_debug = true;
		if (tracing && !so.no_symbols && proc_exe_path(pid, exe, sizeof exe, NULL) == 0 &&
		    every_site_module(rc, is_program, exe))
			so.program_symbols_only = true;
		exit_code = cli_attach(&rc->session, pid, &so);
	}
	return exit_code;
}

/* Everything between attaching and the first sample: the run's metadata,
 * symbolizer, output directory, interval timers, then BEGIN. Returns
 * XGP_EXIT_OK, or XGP_EXIT_FAILURE (said on stderr) and the run goes
 * straight to run_finish. */
static int run_start(struct run_context *rc)
{
	const struct recipe_options *opts = recipe_options(rc->recipe);
	struct xerr e;
	rc->pid = session_pid(rc->session);
	proc_exe_path(rc->pid, rc->exe, sizeof rc->exe, NULL);
	read_cmdline(rc->pid, rc->command_line, sizeof rc->command_line);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(rc->start_time, sizeof rc->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
	rc->walker = opts->exact ? "gdb" : "dwfl";
	rc->stop_mode = session_non_stop(rc->session) ? "non-stop" : "all-stop";
	rc->raw = profile_new();
	if (!rc->sym)   /* else precheck_probe_names read the process already */
		rc->sym = symbolizer_new_pid(rc->pid, &e);
	if (rc->sym)
		rc->source_map = cli_source_map(&e);
	if (!rc->sym || !rc->source_map || !rc->raw)
		return cli_error("%s", e.msg);
	choose_output_dir(rc);
	symbolizer_set_source_map(rc->sym, rc->source_map);
	symbolizer_foreach_module(rc->sym, module_build_id, rc, NULL);

	struct recipe_report_sink sink = {
		.ctx = rc, .report = sink_report, .render = sink_render, .snapshot = sink_snapshot,
		.print_file = sink_print_file,
	};
	/* A trace that only prints (locks, syscalls) would leave -o DIR empty:
	 * its printed report is kept there instead (report.txt). */
	if (rc->request->output_dir && !rc->single_format) {
		rc->copy = open_memstream(&rc->copy_text, &rc->copy_len);
		rc->copy_tee = rc->copy ? tee_stream(rc->out, rc->copy) : NULL;
		if (!rc->copy_tee)
			return cli_error("out of memory");
		rc->out = rc->copy_tee;
	}
	FILE *fitted = text_fit_stream(rc->out, rc->width);
	if (!fitted)
		return cli_error("out of memory");
	rc->out = fitted;
	rc->out_fitted = true;
	rc->run = recipe_run_new(rc->recipe, rc->out, &sink);
	rc->interval_next_ns = calloc(rc->nprobes ? rc->nprobes : 1, sizeof *rc->interval_next_ns);
	if (!rc->run || !rc->interval_next_ns)
		return cli_error("out of memory");
	rc->start_ns = monotonic_ns();
	for (size_t i = 0; i < rc->nprobes; i++)
		if (rc->probes[i].kind == PROBE_INTERVAL && rc->probes[i].interval_ns > 0)
			rc->interval_next_ns[i] = rc->start_ns + (uint64_t)rc->probes[i].interval_ns;
	/* BEGIN's reports and snapshots describe a run not yet begun */
	rc->ended = &rc->stats.run;
	if (fire(rc, EVENT_BEGIN, -1, &e) < 0)
		return cli_error("%s", e.msg);
	return XGP_EXIT_OK;
}

/* The breakpoint/catchpoint probes (the tracer) in place of sampling.
 * Returns the exit code so far; *nothing_armed is set when a bad probe
 * stopped the run before anything was armed (already said; no report). */
static int run_trace(struct run_context *rc, const struct sampler_config *cfg, const struct event_sink *sink,
		     bool *nothing_armed)
{
	const struct recipe_options *opts = recipe_options(rc->recipe);
	struct xerr e;
	int exit_code = XGP_EXIT_OK;
	*nothing_armed = false;
	rc->tracing = true;
	struct tracer_config tcfg = {
		.probes = rc->probes, .nprobes = rc->nprobes,
		.duration_s = cfg->duration_s, .max_stopped_percent = cfg->max_stopped_percent,
		.exact = opts->exact, .max_frames = cfg->max_frames, .start_ns = rc->start_ns,
		.no_entry_counters = cli_globals.no_entry_counters, .verbose = cli_globals.verbose,
		.progress = &rc->progress, .resolved = rc->sym ? rc->resolved : NULL,
		/* a probe that only counts needs no stack, and then no registers:
		 * the walk and the register read were two thirds of our part of a hit */
		.no_stacks = !(recipe_needs(rc->recipe) & RECIPE_NEEDS_STACKS),
	};
	struct tracer_stats *tstats = &rc->trace_stats;
	rc->ended = &tstats->run;
	int traced = tracer_run(rc->session, rc->sym, &tcfg, sink, tstats, &e);
	if (traced < 0 && tstats->bad_probe) {
		/* Nothing was armed or collected: one line, no report, and no
		 * empty directory of our naming left behind. */
		*nothing_armed = true;
		exit_code = cli_input_error("%s", e.msg);
		recipe_run_free(rc->run);
		rc->run = NULL;
		return exit_code;
	}
	if (traced < 0) {
		cli_error("%s", e.msg);
		exit_code = XGP_EXIT_FAILURE;
	}
	tracer_stats_print(tstats, stderr);
	if (rc->run) {
		recipe_run_set_coverage(rc->run, tstats->armed_fraction, tstats->estimate_lower_bound);
		recipe_run_set_coverage_range(rc->run, tstats->armed_fraction_low, tstats->armed_fraction_high);
		recipe_run_set_coverage_windows(rc->run, tstats->windows_armed, tstats->count_dispersion);
		if (tstats->counters_installed || tstats->panic_counter_installed)
			recipe_run_set_coverage_counted(rc->run, tstats->entries_counted + (double)tstats->panics_counted,
							tstats->counters_complete && !tstats->panic_counter_installed,
							tstats->site_scales, tstats->site_sum_scales, tstats->nsite_scales,
							tstats->weighted_hits,
							tstats->counted_no_stop_sites > 0);
		free(rc->aparts);
		rc->aparts = tstats->naparts ? calloc(tstats->naparts, sizeof *rc->aparts) : NULL;
		for (size_t i = 0; rc->aparts && i < tstats->naparts; i++)
			rc->aparts[i] = (struct map_apart){
				.site = tstats->aparts[i].site, .function = tstats->aparts[i].function,
				.calls = tstats->aparts[i].calls, .sum = tstats->aparts[i].sum,
				.threads = tstats->aparts[i].threads,
			};
		if (rc->aparts)
			recipe_run_set_coverage_aparts(rc->run, rc->aparts, tstats->naparts);
		recipe_run_set_seconds(rc->run, tstats->run.elapsed_s);
	}
	return exit_code;
}

/* Why the collection ended, on stderr, before the detach. */
static void say_how_collection_ended(const struct run_context *rc)
{
	uint64_t stops = rc->stats.run.stops;
	if (cli_globals.verbose && !rc->tracing && stops > 0)
		fprintf(stderr, "xgdbprof: per stop: stopping %.3f ms, reading registers and unwinding %.3f ms, "
			"resuming %.3f ms (%llu stops)\n",
			rc->stats.phase_stop_s * 1e3 / (double)stops, rc->stats.phase_walk_s * 1e3 / (double)stops,
			rc->stats.phase_resume_s * 1e3 / (double)stops, (unsigned long long)stops);
	const struct sampler_stats *ss = &rc->stats;
	if (cli_globals.verbose && !rc->tracing && ss->ran_rounds > 0)
		fprintf(stderr, "xgdbprof: %llu rounds; %llu times a thread had run since the previous round: "
			"%llu not runnable then, %llu over its stop budget, %llu queued in a waiting call when asked, "
			"%llu off the CPU when asked, %llu on the CPU of a thread stopped before it, "
			"%llu stopped in a waiting call, %llu landed at a later return beyond the kernel's share (a "
			"call's left out, a fault's kept unmarked), %llu on a CPU when asked and stopped in a futex wait entered since (kept); the most "
			"stops a thread got: %.1f a second\n",
			(unsigned long long)ss->ticks, (unsigned long long)ss->ran_rounds,
			(unsigned long long)ss->ran_not_runnable, (unsigned long long)ss->over_budget,
			(unsigned long long)ss->waiting_when_asked, (unsigned long long)ss->off_cpu_when_asked,
			(unsigned long long)ss->displaced_by_stop, (unsigned long long)ss->waiting_at_stop,
			(unsigned long long)ss->landed_late, (unsigned long long)ss->entered_wait,
			ss->thread_rate_max_hz);
	if (cli_globals.verbose && !rc->tracing && ss->cut_at_end > 0)
		fprintf(stderr, "xgdbprof: the duration ran out in a round: %llu running threads left unwalked\n",
			(unsigned long long)ss->cut_at_end);
	if (rc->ended->target_exited && rc->ended->killed_by[0])
		fprintf(stderr, "xgdbprof: process %d was killed by %s; reporting what was collected\n", (int)rc->pid,
			rc->ended->killed_by);
	else if (rc->ended->target_exited)
		fprintf(stderr, "xgdbprof: process %d exited; reporting what was collected\n", (int)rc->pid);
	else if (rc->ended->leader_exited)
		fprintf(stderr, "xgdbprof: the main thread of process %d exited while its other threads run on (/proc "
			"shows the process a zombie): gdb cannot go on with it, so the run ended here; reporting what "
			"was collected\n", (int)rc->pid);
	else if (rc->ended->target_execed)
		fprintf(stderr, "xgdbprof: process %d exec'd %s: the run ended at the exec and the new program runs "
			"on untraced (run xgdbprof on PID %d again to profile it); reporting what was collected\n",
			(int)rc->pid, session_exec_path(rc->session), (int)rc->pid);
	else if (signals_pending())
		fprintf(stderr, "xgdbprof: interrupted; detaching and reporting what was collected\n");
}

/* Samples or traces until the duration, a signal, exit() or the target's
 * exit. Returns the exit code so far (XGP_EXIT_OK, or the failure already
 * said); run_finish follows either way. */
static int run_collect(struct run_context *rc)
{
	const struct recipe_options *opts = recipe_options(rc->recipe);
	struct xerr e;
	int exit_code = XGP_EXIT_OK;
	struct sampler_config cfg = {
		.frequency_hz = (double)opts->frequency_hz,
		.duration_s = (double)opts->duration_ns / 1e9,
		.threads = sampler_threads_of(opts, rc->thread_selection, sizeof rc->thread_selection),
		.threads_regex = opts->threads_regex,
		.max_stopped_percent = (double)opts->max_stopped_percent,
		.walker = opts->exact ? SAMPLER_WALKER_GDB : SAMPLER_WALKER_FAST,
		.max_frames = opts->stack_depth > 0 ? (int)opts->stack_depth : 64,
		.progress = isatty(STDERR_FILENO),
		.start_ns = rc->start_ns,
	};
	const struct event_sink sink = { .ctx = rc, .take = take_event, .tick = on_tick };
	rc->ended = &rc->stats.run;
	if (!rc->wants_samples) {
		/* Only timers: tick for the intervals, sample no thread. */
		cfg.threads = SAMPLER_THREADS_REGEX;
		cfg.threads_regex = "(?!)";
		cfg.frequency_hz = 100;
	}
	if (recipe_run_exit_requested(rc->run)) {
		/* exit() in begin: nothing to sample. */
	} else if (tracer_wanted(rc->probes, rc->nprobes)) {
		bool nothing_armed;
		exit_code = run_trace(rc, &cfg, &sink, &nothing_armed);
		if (nothing_armed)
			return exit_code;
	} else if (sampler_run(rc->session, rc->sym, &cfg, &sink, &rc->stats, &e) < 0) {
		cli_error("%s", e.msg);
		exit_code = XGP_EXIT_FAILURE;
	}
	say_how_collection_ended(rc);
	return exit_code;
}

/* -o DIR and no file written: the printed report, as report.txt. */
static void save_report_copy(struct run_context *rc)
{
	fflush(rc->out);
	fflush(rc->copy_tee);
	fflush(rc->copy);
	if (rc->copy_len == 0)
		return;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/report.txt", rc->output_dir);
	struct xerr e = { 0 };
	struct output_file file;
	if (ensure_output_dir(rc, &e) < 0 || output_file_open(&file, path, &e) < 0) {
		cli_error("%s", e.msg);
		return;
	}
	if (fwrite(rc->copy_text, 1, rc->copy_len, file.stream) != rc->copy_len) {
		output_file_abort(&file);
		cli_error("writing %s: %s", path, strerror(errno));
		return;
	}
	if (output_file_commit(&file, &e) < 0) {
		cli_error("%s", e.msg);
		return;
	}
	cli_files_written_add(&rc->written, "report.txt");
}

/* A run that ended over a second after its duration was up says where the
 * time went, in one line (docs/sampling.md, "How long a run takes").
 * Starting gdb and attaching, detaching, and writing the report come on
 * top of the duration; under load, and with many threads, each can take a
 * second. */
static void say_overrun(const struct run_context *rc)
{
	const struct recipe_options *opts = recipe_options(rc->recipe);
	if (!opts || opts->duration_ns <= 0 || !rc->attached_ns || !rc->detach_end_ns || rc->request->quiet)
		return;
	uint64_t now = monotonic_ns();
	double asked = (double)opts->duration_ns / 1e9, took = (double)(now - rc->began_ns) / 1e9;
	/* from the attach: gdb's own start (~0.5 s idle, 1-2 s under load)
	 * comes before the target is touched, not at the end of the run */
	if ((double)(now - rc->attached_ns) / 1e9 <= asked + 1.0)
		return;
	char threads[64] = "";
	if (rc->stats.max_threads > 1)
		snprintf(threads, sizeof threads, " from %d threads", rc->stats.max_threads);
	fprintf(stderr, "xgdbprof: the run took %.1f s for a %.1f s duration: starting gdb and attaching %.1f s, "
		"reading symbols %.1f s, %s %.1f s, detaching%s %.1f s, the report %.1f s\n", took, asked,
		(double)(rc->attached_ns - rc->began_ns) / 1e9, (double)(rc->collect_start_ns - rc->attached_ns) / 1e9,
		rc->tracing ? "tracing" : "sampling", (double)(rc->collect_end_ns - rc->collect_start_ns) / 1e9,
		threads, (double)(rc->detach_end_ns - rc->detach_start_ns) / 1e9,
		(double)(now - rc->detach_end_ns) / 1e9);
}

/* The run's last line: the directory and every file written there, or
 * nothing when nothing was (and no directory was made). */
static void say_files_written(const struct run_context *rc)
{
	if (rc->written.n == 0)
		return;
	fprintf(stderr, "xgdbprof: %s %s: ", rc->profile_saved ? "profile saved in" : "output saved in",
		rc->output_dir);
	for (int i = 0; i < rc->written.n; i++) {
		const char *name = rc->written.names[i];
		const struct report_format *f = report_format_for_file(name);
		fprintf(stderr, "%s%s", i ? ", " : "", name);
		if (f && f->read_by)
			fprintf(stderr, " (for %s)", f->read_by);
	}
	if (rc->profile_saved)
		fprintf(stderr, "; re-render with `xgdbprof report %s`", rc->output_dir);
	fputc('\n', stderr);
}

static void say_single_file(const struct run_context *rc, bool sampled)
{
	if (rc->single_written)
		fprintf(stderr, "xgdbprof: %s written to %s%s%s%s; give -o DIR to keep every file of the run\n",
			rc->single_format->what, rc->output_dir, rc->single_format->read_by ? " (for " : "",
			rc->single_format->read_by ? rc->single_format->read_by : "", rc->single_format->read_by ? ")" : "");
	else
		fprintf(stderr, "xgdbprof: nothing written to %s: %s\n", rc->output_dir,
			sampled ? "the recipe wrote no report in that format" : "the run took no samples");
}

static void fill_outcome(const struct run_context *rc, struct run_outcome *o)
{
	bool sampled = !rc->tracing && rc->stats.run.stops > 0;
	o->pid = rc->pid;
	o->target_exited = rc->ended->target_exited || rc->ended->target_execed;
	o->elapsed_s = rc->ended->elapsed_s;
	o->stopped_pct = rc->ended->elapsed_s > 0 ? 100.0 * rc->ended->stopped_s / rc->ended->elapsed_s : NAN;
	o->samples = sampled ? (int64_t)rc->stats.run.stops : -1;
	/* as the report's observer line: non-stop sampling keeps its budget
	 * on each thread's held share */
	bool held = false;
	double share = sampled ? sampler_budget_share(&rc->stats, rc->stop_mode && strcmp(rc->stop_mode, "non-stop") == 0,
						     &held)
			       : NAN;
	o->held_max_pct = held ? share : NAN;
	o->cpu_min_pct = sampled ? rc->stats.cpu_percent_min : NAN;
	o->cpu_avg_pct = sampled ? rc->stats.cpu_percent_avg : NAN;
	o->cpu_max_pct = sampled ? rc->stats.cpu_percent_max : NAN;
}

/* live() maps: which recorded allocations are still allocated, read from
 * glibc's chunk headers with the target held stopped (before the detach),
 * so the allocator cannot change them under the reads. */
static void test_live_allocations(struct run_context *rc)
{
	if (!rc->run || !rc->session || !(recipe_needs(rc->recipe) & RECIPE_NEEDS_LIVE_HEAP))
		return;
	struct xerr e;
	if (rc->ended->target_exited || !session_target_alive(rc->session)) {
		fprintf(stderr, "xgdbprof: heap: the process exited, so nothing of it is still allocated; the "
			"live() maps show what was recorded, untested\n");
		return;
	}
	if (!session_is_stopped(rc->session) && session_stop(rc->session, &e) < 0) {
		fprintf(stderr, "xgdbprof: heap: could not stop the target to read its heap (%s): liveness not tested\n",
			e.msg);
		return;
	}
	const char *why_unknown;
	if (test_heap_now(rc, &why_unknown, &e) < 0)
		fprintf(stderr, "xgdbprof: heap: %s: liveness not tested\n", e.msg);
	else if (why_unknown)
		fprintf(stderr, "xgdbprof: heap: %s: every allocation is unknown\n", why_unknown);
	else
		fprintf(stderr, "xgdbprof: heap: the recorded allocations were tested at the end of the run, the target "
			"stopped, from glibc's chunk headers (docs/alloc.md)\n");
}

/* Detaches (or ends the launched command's session), and only then runs
 * END, whose report calls render what was collected; saves the raw profile
 * if no report did, frees everything. Returns the run's exit code, given
 * the exit code so far. */
static int run_finish(struct run_context *rc, int exit_code)
{
	struct xerr e;
	pid_t child = session_launched_child(rc->session);
	if (!rc->tracing)   /* the tracer has done it, and said so */
		exit_code = cli_rescue_if_gdb_lost(rc->session, exit_code);
	if (!rc->from_jemalloc)   /* jemalloc's profile is the heap; no glibc chunks to test */
		test_live_allocations(rc);
	rc->detach_start_ns = monotonic_ns();
	if (session_end(rc->session, &e) < 0) {
		cli_error("%s", e.msg);
		exit_code = XGP_EXIT_FAILURE;
	}
	rc->detach_end_ns = monotonic_ns();
	rc->session = NULL;
	if (rc->run && !signals_urgent()) {
		/* The run's header first, then whatever END prints: maps,
		 * printf, reports (which then leave their header out). */
		if (rc->raw) {
			struct report_options ro;
			report_defaults(rc, NULL, &ro);
			fill_meta(rc, rc->raw);
			rc->meta_filled = true;
			/* jemalloc's profile: its stacks are the report, not END's maps */
			if ((rc->from_jemalloc ? report_text : report_text_header)(rc->raw, rc->out, &ro, &e) < 0)
				cli_error("%s", e.msg);
			fputc('\n', rc->out);
			fflush(rc->out);
		}
		if (!rc->from_jemalloc && fire(rc, EVENT_END, -1, &e) < 0) {
			cli_error("%s", e.msg);
			exit_code = XGP_EXIT_FAILURE;
		}
		/* Every sample taken, whatever the recipe's maps kept, for pprof
		 * and speedscope (with thread ids, which maps do not key by). */
		bool sampled = rc->raw && rc->raw->nentries > 0;
		if (sampled && !rc->meta_filled)
			fill_meta(rc, rc->raw);
		if (rc->single_format && !rc->single_written && sampled) {
			/* the recipe rendered nothing in the file's format: every sample */
			struct report_options ro;
			report_defaults(rc, NULL, &ro);
			ro.color = false;
			ro.links = false;
			if (report_to_file(rc->single_format->render, rc->raw, rc->output_dir, &ro, &e) < 0)
				cli_error("%s", e.msg);
			else
				rc->single_written = true;
		}
		if (rc->single_format) {
			if (!rc->request->quiet)
				say_single_file(rc, sampled);
		} else if (rc->reports_written == 0 && sampled) {
			char path[PATH_MAX + 16];
			snprintf(path, sizeof path, "%s/profile.json", rc->output_dir);
			if (ensure_output_dir(rc, &e) < 0 || profile_save(rc->raw, path, &e) < 0) {
				cli_error("%s", e.msg);
			} else {
				rc->profile_saved = true;
				cli_files_written_add(&rc->written, "profile.json");
			}
		}
		if (sampled && rc->output_dir_made)
			cli_save_profile_exports(rc->raw, rc->output_dir, &rc->written);
		if (rc->copy && rc->written.n == 0)
			save_report_copy(rc);
		say_overrun(rc);
		if (!rc->request->quiet && !rc->single_format)   /* --every names each window's files itself */
			say_files_written(rc);
	}
	if (rc->request->outcome)
		fill_outcome(rc, rc->request->outcome);
	recipe_run_free(rc->run);
	tracer_stats_release(&rc->trace_stats);
	free(rc->aparts);
	rc->aparts = NULL;
	if (rc->out_fitted)
		fclose(rc->out);   /* the fitting stream; leaves stdout or the caller's stream open */
	if (rc->copy_tee)
		fclose(rc->copy_tee);
	if (rc->copy)
		fclose(rc->copy);
	free(rc->copy_text);
	free(rc->interval_next_ns);
	for (size_t i = 0; rc->resolved && i < rc->nprobes; i++)
		tracer_sites_release(&rc->resolved[i]);
	free(rc->resolved);
	free(rc->probes);
	profile_free(rc->raw);
	symbolizer_free(rc->sym);
	source_map_free(rc->source_map);
	recipe_free(rc->recipe);
	if (child > 0)
		return cli_wait_command(child, rc->request->argv[0], exit_code);
	return exit_code;
}

int run_recipe_check(const struct run_request *req)
{
	struct run_context rc = { .request = req };
	int exit_code = run_open(&rc);
	if (exit_code == XGP_EXIT_OK) {
		free(rc.probes);
		recipe_free(rc.recipe);
	}
	return exit_code;
}

int run_recipe(const struct run_request *req)
{
	struct run_context rc = {
		.request = req, .out = req->report_stream ? req->report_stream : stdout,
		.stdout_tty = !req->report_stream && isatty(STDOUT_FILENO),
		.width = req->report_stream ? 0 : text_terminal_width(STDOUT_FILENO),
	};
	rc.ended = &rc.stats.run;
	rc.began_ns = monotonic_ns();
	signals_install();
	int exit_code = run_open(&rc);
	if (exit_code != XGP_EXIT_OK)
		return exit_code;
	exit_code = run_attach(&rc);
	if (exit_code != XGP_EXIT_OK) {
		symbolizer_free(rc.sym);
		free(rc.probes);
		recipe_free(rc.recipe);
		return exit_code;
	}
	rc.attached_ns = monotonic_ns();
	exit_code = run_start(&rc);
	if (exit_code == XGP_EXIT_OK && req->recipe && strcmp(req->recipe, "heap") == 0 && !req->launch) {
		struct xerr e;
		const struct recipe_options *o = recipe_options(rc.recipe);
		int got = cli_jemalloc_heap(rc.session, rc.sym, (double)o->duration_ns / 1e9, o->skip_leaf,
					    req->jemalloc_activate, rc.raw, &rc.stats.run, &e);
		if (got < 0)
			exit_code = cli_error("heap from jemalloc's profile: %s", e.msg);
		rc.from_jemalloc = got == 1;
	}
	rc.collect_start_ns = monotonic_ns();
	if (exit_code == XGP_EXIT_OK && !rc.from_jemalloc)
		exit_code = run_collect(&rc);
	rc.collect_end_ns = monotonic_ns();
	return run_finish(&rc, exit_code);
}
