/* report_text.c — the terminal report: run header, hottest code paths, top
 * functions, threads. Layout and definitions: docs/reports.md. */
#include "report/report.h"
#include "util/array.h"
#include "report/report_model.h"
#include "symbols/name_pattern.h"
#include "symbols/source_map.h"
#include "util/hyperlink.h"
#include "util/stats.h"
#include "util/text_escape.h"
#include "util/text_fit.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP_PATHS 5
#define DEFAULT_TOP_FUNCTIONS 10
#define MAX_INDENT_LEVELS 12
#define INDENT_STEP 2          /* columns per level of a code path */
#define NODE_PREFIX_COLUMNS 20 /* "    100.0%    0.0%  " */
#define NAME_COLUMN_MAX 60

struct style {
	bool on;
	bool links;                    /* OSC 8 links on local source files */
	struct source_map *source_map; /* where those files are here */
};

static const char *sgr(const struct style *st, const char *code)
{
	return st->on ? code : "";
}
#define BOLD "\033[1m"
#define DIM "\033[2m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define CYAN "\033[36m"
#define MAGENTA "\033[35m"
#define RESET "\033[0m"

static void put_pct(FILE *out, const struct style *st, double pct)
{
	const char *c = pct >= 20 ? RED : pct >= 5 ? YELLOW : "";
	if (*c && st->on)
		fprintf(out, "%s%5.1f%%%s", c, pct, RESET);
	else
		fprintf(out, "%5.1f%%", pct);
}

/* Names, paths, the command line and notes come from the target. */
static void put(FILE *out, const char *target_text)
{
	text_put(out, target_text, TEXT_FORM_TERMINAL);
}

/* "path:line", "path", the module, or "?". A Rust std path is shown
 * short, "core/src/tuple.rs": its /rustc/<commit>/library/ is said once, in
 * the header. */
static void put_location(FILE *out, const struct style *st, const char *file, int line,
			 const char *module)
{
	fputs(sgr(st, CYAN), out);
	bool linked = false;
	if (file && st->links) {
		char *mapped = st->source_map ? source_map_apply(st->source_map, file) : NULL;
		linked = hyperlink_open(out, mapped ? mapped : file, line);
		free(mapped);
	}
	if (file)
		file = source_map_shown_path(file);
	if (file && line > 0) {
		put(out, file);
		fprintf(out, ":%d", line);
	} else if (file)
		put(out, file);
	else if (module)
		put(out, module);
	else
		fputs("?", out);
	if (linked)
		hyperlink_close(out);
	fputs(sgr(st, RESET), out);
}

/* ---- header ------------------------------------------------------------- */

static bool known(double d)
{
	return !isnan(d);
}

/* Prints a double with no trailing zeros beyond one decimal ("99", "97.3"). */
static void put_num(FILE *out, double d)
{
	if (d == floor(d) && fabs(d) < 1e15)
		fprintf(out, "%.0f", d);
	else
		fprintf(out, "%.1f", d);
}

/* xgdbprof VERSION profile of EXE (build-id ID), pid PID */
static void print_title(FILE *out, const struct style *st, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	fprintf(out, "%sxgdbprof%s", sgr(st, BOLD), mt->version ? " " : "");
	put(out, mt->version);
	fprintf(out, "%s profile of ", sgr(st, RESET));
	put(out, mt->exe ? mt->exe : "an unknown executable");
	if (mt->build_id) {
		fputs(" (build-id ", out);
		put(out, mt->build_id);
		fputc(')', out);
	}
	if (mt->pid >= 0)
		fprintf(out, ", pid %" PRId64, mt->pid);
	fputc('\n', out);
}

/* "LABEL TEXT" after *sep, when the (target) text is known. */
static void put_text_field(FILE *out, const char **sep, const char *label, const char *text)
{
	if (!text)
		return;
	fprintf(out, "%s%s", *sep, label);
	put(out, text);
	*sep = " · ";
}

/* command · recipe · threads, when any is known */
static void print_context(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (!(mt->command_line || mt->recipe || mt->thread_selection || mt->threads >= 0))
		return;
	const char *sep = "  ";
	put_text_field(out, &sep, "command: ", mt->command_line);
	put_text_field(out, &sep, "recipe: ", mt->recipe);
	if (mt->thread_selection || mt->threads >= 0) {
		fprintf(out, "%sthreads: ", sep);
		put(out, mt->thread_selection ? mt->thread_selection : "?");
		if (mt->threads >= 0)
			fprintf(out, " (%" PRId64 " in target)", mt->threads);
	}
	fputc('\n', out);
}

/* "LABEL ACTUAL UNIT (asked ASKED UNIT)" after *sep, "?" for an unknown
 * actual figure, the asked part only when known; nothing when neither is. */
static void put_actual_and_asked(FILE *out, const char **sep, const char *label, double actual,
				 double asked, const char *unit)
{
	if (!known(actual) && !known(asked))
		return;
	fprintf(out, "%s%s ", *sep, label);
	if (known(actual))
		fprintf(out, "%.1f %s", actual, unit);
	else
		fputs("?", out);
	if (known(asked)) {
		fputs(" (asked ", out);
		put_num(out, asked);
		fprintf(out, " %s)", unit);
	}
	*sep = " · ";
}

/* started · duration · rate, when any is known */
static void print_timing(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (!(mt->start_time || known(mt->duration_actual_s) || known(mt->frequency_achieved_hz) ||
	      known(mt->frequency_asked_hz) || known(mt->duration_asked_s)))
		return;
	const char *sep = "  ";
	put_text_field(out, &sep, "started ", mt->start_time);
	put_actual_and_asked(out, &sep, "duration", mt->duration_actual_s, mt->duration_asked_s, "s");
	/* no sampling rate behind the allocator's own profile */
	if (!report_allocator_profile(m->profile))
		put_actual_and_asked(out, &sep, "rate", mt->frequency_achieved_hz, mt->frequency_asked_hz, "Hz");
	fputc('\n', out);
}

/* A CPU-time profile (hot-cpu: each sample weighs its thread's on-CPU ns
 * in the round before it): weights print as CPU milliseconds. */
static bool cpu_ns_weights(const struct report_model *m)
{
	return report_cpu_weighted(m->profile);
}

static bool byte_weights(const struct report_model *m)
{
	return report_byte_weighted(m->profile);
}

static const char *bytes_text(uint64_t bytes, char *buf, size_t size)
{
	return report_bytes_text((double)bytes, buf, size);
}

/* A recipe's own unit of count weights (report(@m, unit="allocs")), or
 * NULL: samples, CPU time or bytes. */
static const char *counted_unit(const struct report_model *m)
{
	const char *u = m->profile->meta.weight_unit;
	return u && u[0] && !cpu_ns_weights(m) && !byte_weights(m) ? u : NULL;
}

/* A weight as its column shows it: CPU ms, bytes, or a count. */
static void put_weight_cell(FILE *out, const struct report_model *m, uint64_t weight)
{
	char buf[32];
	if (cpu_ns_weights(m))
		fprintf(out, "%8.0f", (double)weight / 1e6);
	else if (byte_weights(m))
		fprintf(out, "%8s", bytes_text(weight, buf, sizeof buf));
	else
		fprintf(out, "%8" PRIu64, weight);
}

/* What the weights count, as a plural noun: "bytes", the recipe's unit,
 * else "samples". */
static const char *weight_noun(const struct report_model *m)
{
	return byte_weights(m) ? "bytes" : counted_unit(m) ? counted_unit(m) : "samples";
}

static const char *weight_column(const struct report_model *m)
{
	const char *unit = counted_unit(m);
	if (unit)
		return strlen(unit) <= 8 ? unit : "count";
	return cpu_ns_weights(m) ? "CPU ms" : byte_weights(m) ? "bytes" : "samples";
}

/* stops, thread stacks, reuse, walker and stop mode */
static void print_samples(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (mt->samples < 0 && mt->thread_samples < 0 && m->total == 0)
		return;   /* a trace: no samples to speak of */
	if (mt->weights_estimated) {
		/* a traced map under the budget: its hits, weighed */
		char buf[32];
		fprintf(out, "  whole-run estimates: ");
		if (byte_weights(m))
			fputs(bytes_text(m->total, buf, sizeof buf), out);
		else
			fprintf(out, "%" PRIu64 " %s", m->total, counted_unit(m) ? counted_unit(m) : "events");
		fprintf(out, " from %.0f hits while the probes were armed (docs/tracing.md, \"Estimates\")\n",
			report_draws(m->profile, m->total));
		return;
	}
	if (report_allocator_profile(m->profile) && mt->samples <= 0) {
		/* no stack walked by us: jemalloc's own profile */
		char buf[32];
		fprintf(out, "  bytes: %s in this profile\n", bytes_text(m->total, buf, sizeof buf));
		return;
	}
	fprintf(out, "  samples: ");
	if (mt->samples >= 0)
		fprintf(out, "%" PRId64 " stops, ", mt->samples);
	if (mt->thread_samples >= 0)
		fprintf(out, "%" PRId64 " thread stacks", mt->thread_samples);
	else
		fprintf(out, "%" PRIu64 " in profile", m->total);
	if (mt->stacks_reused >= 0)
		fprintf(out, " (%" PRId64 " reused: thread had not run)", mt->stacks_reused);
	if (mt->thread_samples >= 0 && (uint64_t)mt->thread_samples != m->total && !cpu_ns_weights(m))
		fprintf(out, " · %" PRIu64 " in this profile", m->total);
	if (mt->walker) {
		fputs(" · walker: ", out);
		put(out, mt->walker);
	}
	if (mt->stop_mode)
		fprintf(out, " · %s", strcmp(mt->stop_mode, "non-stop") == 0 ? "stops only the walked threads"
									 : "stops every thread");
	fputc('\n', out);
}

/* What the run cost the target: its CPU, and the time it was stopped. */
static void print_target_cost(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (known(mt->cpu_min_pct) || known(mt->cpu_avg_pct) || known(mt->cpu_max_pct)) {
		fputs("  target CPU: ", out);
		const double v[3] = { mt->cpu_min_pct, mt->cpu_avg_pct, mt->cpu_max_pct };
		const char *names[3] = { "min ", ", avg ", ", max " };
		for (int i = 0; i < 3; i++) {
			fputs(names[i], out);
			if (known(v[i]))
				fprintf(out, "%.0f%%", v[i]);
			else
				fputs("?", out);
		}
		fputc('\n', out);
	}
	/* Non-stop mode holds one thread at a time: the target as a whole is
	 * never stopped, and what the budget bounds is each thread's share. */
	bool per_thread = mt->stop_mode && strcmp(mt->stop_mode, "non-stop") == 0 && known(mt->thread_stopped_max_pct);
	/* One figure: the one the budget keeps. In non-stop mode that is the
	 * kernel's account of what the stops held each thread (docs/sampling.md)
	 * and gdb's round trip, a larger figure no budget is kept on, shows
	 * only with -v; in all-stop mode the budget keeps the stop itself. */
	bool held;
	double budget_pct = profile_observer_pct(mt, &held);
	held = held && known(mt->held_median_ms) && known(mt->held_p99_ms);
	if (held && per_thread) {
		fprintf(out, "  observer effect: each thread held at most %.1f%% of its time (the budget's measure: "
			"the kernel's account); per stop median %.2f ms, p99 %.2f ms\n",
			budget_pct, mt->held_median_ms, mt->held_p99_ms);
		if (!m->options.verbose)
			return;
		fputs("  gdb's round trip:", out);
		if (per_thread)
			fprintf(out, " each thread stopped at most %.1f%% of its time", mt->thread_stopped_max_pct);
		if (known(mt->stopped_pct))
			fprintf(out, "%s%.1f%% %s", per_thread ? "; " : " ", mt->stopped_pct,
				per_thread ? "summed over threads" : "of the time");
		if (known(mt->stop_median_ms) && known(mt->stop_p99_ms))
			fprintf(out, "; per stop median %.2f ms, p99 %.2f ms", mt->stop_median_ms, mt->stop_p99_ms);
		fputc('\n', out);
		return;
	}
	if (known(mt->stopped_pct) || known(mt->stop_median_ms) || known(mt->stop_p99_ms)) {
		if (per_thread) {
			fprintf(out, "  observer effect: each thread stopped at most %.1f%% of its time (one at a time",
				mt->thread_stopped_max_pct);
			if (known(mt->stopped_pct))
				fprintf(out, "; %.1f%% summed over threads", mt->stopped_pct);
			fputc(')', out);
		} else {
			fputs("  observer effect: target stopped ", out);
			if (known(mt->stopped_pct))
				fprintf(out, "%.1f%% of the time", mt->stopped_pct);
			else
				fputs("? of the time", out);
		}
		if (known(mt->stop_median_ms) || known(mt->stop_p99_ms)) {
			fputs(per_thread ? "; per thread stop " : "; per stop ", out);
			if (known(mt->stop_median_ms))
				fprintf(out, "median %.2f ms", mt->stop_median_ms);
			if (known(mt->stop_median_ms) && known(mt->stop_p99_ms))
				fputs(", ", out);
			if (known(mt->stop_p99_ms))
				fprintf(out, "p99 %.2f ms", mt->stop_p99_ms);
		}
		if (held && m->options.verbose)
			fprintf(out, "\n  held by the kernel's account: each thread at most %.1f%% of its time; per thread stop "
				"median %.2f ms, p99 %.2f ms", mt->thread_held_max_pct, mt->held_median_ms, mt->held_p99_ms);
		fputc('\n', out);
	}
}

#define MAX_RUST_COMMITS 4

/* Where the short Rust std paths are: "/rustc/<commit>/library/", once per
 * rustc commit the profile's frames name (a program and its libraries may
 * come from several). */
static void print_rust_std(FILE *out, const struct report_model *m)
{
	const struct profile *p = m->profile;
	char commits[MAX_RUST_COMMITS][41];
	size_t n = 0;
	const char *last = NULL;   /* files are interned: skip repeats cheaply */
	for (size_t i = 0; i < p->nentries && n < MAX_RUST_COMMITS; i++) {
		const struct stack *s = &p->entries[i].stack;
		for (size_t f = 0; f < s->nframes && n < MAX_RUST_COMMITS; f++) {
			const char *file = s->frames[f].file;
			char commit[41];
			if (!file || file == last || !source_map_rust_std_path(file, commit))
				continue;
			last = file;
			size_t k = 0;
			while (k < n && strcmp(commits[k], commit) != 0)
				k++;
			if (k == n)
				memcpy(commits[n++], commit, sizeof commit);
		}
	}
	if (!n)
		return;
	fputs("  Rust std paths (core/src/…) are under", out);
	for (size_t k = 0; k < n; k++)
		fprintf(out, "%s /rustc/%s/library/", k ? (k + 1 == n ? " or" : ",") : "", commits[k]);
	fputc('\n', out);
}

static void print_header(FILE *out, const struct style *st, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	print_title(out, st, m);
	print_context(out, m);
	print_timing(out, m);
	print_samples(out, m);
	print_target_cost(out, m);
	print_rust_std(out, m);
	for (size_t i = 0; i < mt->nnotes; i++) {
		fprintf(out, "  %snote:%s ", sgr(st, YELLOW), sgr(st, RESET));
		put(out, mt->notes[i]);
		fputc('\n', out);
	}
	if (m->thin_note)
		fprintf(out, "  %snote:%s %s\n", sgr(st, YELLOW), sgr(st, RESET), m->thin_note);
	if (m->focus) {
		fputs("  focus /", out);
		put(out, m->focus);
		fprintf(out, "/: kept %" PRIu64 " of %" PRIu64 " samples (%.1f%%); "
			"shares below are of all samples\n", m->kept, m->total, report_share(m->kept, m->total));
	}
}

/* ---- code paths --------------------------------------------------------- */

/* Length of the "a::b::" namespace two names share, ending just after a
 * "::" outside generic arguments (never inside `Tree<alloc::vec::...>`). */
static size_t common_namespace(const char *a, const char *b)
{
	size_t end = 0;
	int depth = 0;
	for (size_t i = 0; a[i] && a[i] == b[i]; i++) {
		if (a[i] == '<')
			depth++;
		else if (a[i] == '>' && depth > 0)
			depth--;
		else if (a[i] == ':' && i > 0 && a[i - 1] == ':' && depth == 0)
			end = i + 1;
	}
	return end;
}

/* "(file.rs:47)": the headline keeps to the file's name; the chain below
 * has the whole path. */
static void put_short_location(FILE *out, const struct style *st, const struct frame *f)
{
	if (!f->file && !f->module)
		return;   /* "(?)" would only add noise to the headline */
	fputs(" (", out);
	if (f->file)
		put_location(out, st, report_basename(f->file), f->line, NULL);
	else
		put_location(out, st, NULL, 0, f->module ? report_basename(f->module) : NULL);
	fputc(')', out);
}

#define HEADLINE_MAX_FRAMES 4

/* Whether chain position i is named in the headline. */
static bool in_headline(const struct report_model *m, const struct report_code_path *cp, size_t i)
{
	return i >= cp->entry && i <= cp->deepest &&
	       (i == cp->deepest || report_frame_is_user(m->chain_frames[cp->chain_begin + i]));
}

/* #1 hottest code path (33.3% ±13.3, 18 samples): entry (f:l) → … → deepest (f:l)
 * The user's frames of the chain from its entry to its deepest user frame
 * (of a long chain: the entry, then the deepest ones); every frame shows
 * its line (the entry's: the call site in the user's outermost frame), and
 * a name drops the namespace it shares with the name before it. */
/* The last two parts of a name outside generic arguments: "Mutex::lock"
 * of "std::sync::poison::mutex::Mutex<T>::lock". */
static const char *short_name(const char *name)
{
	const char *last = NULL, *before = NULL;
	int depth = 0;
	for (const char *sep = name_path_separator(name, &depth); sep; sep = name_path_separator(sep + 2, &depth)) {
		before = last;
		last = sep + 2;
	}
	return before ? before : name;
}

static void put_headline_names(FILE *out, const struct style *st, const struct report_model *m,
			       const struct report_code_path *cp, bool waits)
{
	size_t nshown = 0;
	for (size_t i = cp->entry; i <= cp->deepest; i++)
		nshown += in_headline(m, cp, i);
	char name[1024], prev[1024] = "";
	for (size_t i = cp->entry, k = 0; i <= cp->deepest; i++) {
		if (!in_headline(m, cp, i))
			continue;
		bool first = k == 0, last = i == cp->deepest;
		if (nshown > HEADLINE_MAX_FRAMES && k > 0 && k < nshown - (HEADLINE_MAX_FRAMES - 1)) {
			if (k++ == 1)
				fputs(" → …", out);
			prev[0] = 0;
			continue;
		}
		k++;
		const struct frame *f = m->chain_frames[cp->chain_begin + i];
		report_frame_name(f, name, sizeof name);
		size_t skip = common_namespace(name, prev);
		if (skip == strlen(name))
			skip = 0;
		if (!first)
			fputs(" → ", out);
		fputs(last ? sgr(st, BOLD) : "", out);
		put(out, name + skip);
		fputs(last ? sgr(st, RESET) : "", out);
		if (!(last && waits && cp->deepest + 1 < cp->nchain))
			put_short_location(out, st, f);
		snprintf(prev, sizeof prev, "%s", name);
	}
	if (waits && cp->deepest + 1 < cp->nchain) {
		/* Off the CPU: what the user's code called that waits (a lock, a
		 * channel, a sleep), not the futex or syscall it ends in. */
		const struct frame *callee = m->chain_frames[cp->chain_begin + cp->deepest + 1];
		fputs(" → waits in ", out);
		put(out, short_name(report_frame_name(callee, name, sizeof name)));
		put_short_location(out, st, m->chain_frames[cp->chain_begin + cp->deepest]);
	}
}

/* " ±H": the 95% (Wilson) half-width, in points, of a headline's share as
 * sampling error alone would move it: over the profile's samples when
 * weights count them, over its thread stacks when they are CPU time (each
 * stack one draw); "" for other weights (bytes, sums), where no count of
 * draws is known. The larger side of the interval, so it never flatters. */
static void put_share_interval(FILE *out, const struct report_model *m, uint64_t weight)
{
	double n = report_draws(m->profile, m->total);
	if (n <= 0 || m->total == 0)
		return;
	double k = n * (double)weight / (double)m->total;
	double lo, hi, p = k / n;
	stats_wilson95(k, n, &lo, &hi);
	fprintf(out, " ±%.1f", 100 * (hi - p > p - lo ? hi - p : p - lo));
}

/* "#N hottest code path" names where the CPU goes; a profile of waits,
 * bytes or a recipe's counts ranks paths by that instead, and says so
 * ("#1 code path by bytes" under "allocations by bytes"). */
static void put_path_title(FILE *out, const struct report_model *m, size_t rank, bool waits)
{
	fprintf(out, "#%zu ", rank);
	if (waits)
		fputs("waiting code path", out);
	else if (byte_weights(m))
		fputs("code path by bytes", out);
	else if (counted_unit(m)) {
		fputs("code path by ", out);
		text_put(out, counted_unit(m), TEXT_FORM_TERMINAL);
	} else if (!cpu_ns_weights(m) && m->profile->meta.weights_estimated)
		fputs("code path by count", out);
	else
		fputs("hottest code path", out);
}

/* The word for the top line of a function in the tables: "hottest" only
 * where the weights are CPU (as for the headlines). */
static const char *line_column(const struct report_model *m, bool waits)
{
	return !waits && (cpu_ns_weights(m) || !(byte_weights(m) || counted_unit(m) || m->profile->meta.weights_estimated))
		       ? "hottest line"
		       : "top line";
}

static void print_headline(FILE *out, const struct style *st, const struct report_model *m,
			   size_t rank, const struct report_code_path *cp, bool waits)
{
	fputs(sgr(st, BOLD), out);
	put_path_title(out, m, rank, waits);
	fprintf(out, " (%.1f%%", report_share(cp->weight, m->total));
	put_share_interval(out, m, cp->weight);
	char buf[32];
	/* whole-run estimates (a traced map under the budget) say so */
	const char *est = m->profile->meta.weights_estimated ? "est. " : "";
	if (cpu_ns_weights(m))
		fprintf(out, ", %.0f ms CPU):%s ", (double)cp->weight / 1e6, sgr(st, RESET));
	else if (byte_weights(m))
		fprintf(out, ", %s%s):%s ", est, bytes_text(cp->weight, buf, sizeof buf), sgr(st, RESET));
	else if (counted_unit(m)) {
		fprintf(out, ", %s%" PRIu64 " ", est, cp->weight);
		text_put(out, counted_unit(m), TEXT_FORM_TERMINAL);
		fprintf(out, "):%s ", sgr(st, RESET));
	} else if (est[0])   /* estimates of a sum with no unit named */
		fprintf(out, ", %s%" PRIu64 "):%s ", est, cp->weight, sgr(st, RESET));
	else
		fprintf(out, ", %" PRIu64 " sample%s):%s ", cp->weight, cp->weight == 1 ? "" : "s", sgr(st, RESET));
	put_headline_names(out, st, m, cp, waits);
	fputc('\n', out);
}

void report_put_code_path_names(FILE *out, const struct report_model *m, const struct report_code_path *cp)
{
	struct style st = { .on = false };
	put_headline_names(out, &st, m, cp, false);
}

/* Indentation of a code path's frame: INDENT_STEP per level, capped so
 * that at least 40 columns stay for the name and location. */
static int indent_of(size_t level, size_t width)
{
	size_t levels = MAX_INDENT_LEVELS;
	if (width) {
		size_t room = width > NODE_PREFIX_COLUMNS + 40 ? width - NODE_PREFIX_COLUMNS - 40 : 0;
		if (levels > room / INDENT_STEP)
			levels = room / INDENT_STEP;
	}
	return (int)(INDENT_STEP * (level < levels ? level : levels));
}

/* What put_location writes, as a string (free it), or NULL. */
static char *location_text(const struct style *st, const char *file, int line, const char *module)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	put_location(f, st, file, line, module);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* Splits room columns between a name and a location that do not both fit:
 * the location (its end: file and line) keeps what the name leaves, but at
 * least half. */
static void split_room(size_t room, size_t name_cols, size_t loc_cols, size_t loc_min, size_t *name_w,
		       size_t *loc_w)
{
	*name_w = name_cols;
	*loc_w = loc_cols;
	if (name_cols + loc_cols <= room)
		return;
	size_t loc = name_cols < room ? room - name_cols : 0;
	if (loc < loc_min)
		loc = loc_min;
	if (loc > room / 2 && loc > room - name_cols)
		loc = room / 2;
	if (loc > loc_cols)
		loc = loc_cols;
	*loc_w = loc;
	*name_w = room - loc;
}

/* Columns of a location's end worth keeping: "…" and its file name and line. */
static size_t location_min(const char *loc)
{
	const char *slash = strrchr(loc, '/');
	return 1 + text_columns(slash ? slash + 1 : loc, strlen(slash ? slash + 1 : loc));
}

/* A name (escaped) then " (location)", within room columns when room > 0. */
static void put_name_and_location(FILE *out, const struct style *st, const char *target_name,
				  const struct frame *f, size_t room)
{
	char *name = text_escape_dup(target_name);
	char *loc = location_text(st, f->file, f->line, f->module);
	if (!name || !loc) {
		put(out, target_name);
		fputs(" (", out);
		put_location(out, st, f->file, f->line, f->module);
		fputc(')', out);
	} else {
		size_t name_cols = text_columns(name, strlen(name)), loc_cols = text_columns(loc, strlen(loc));
		size_t name_w = name_cols, loc_w = loc_cols;
		if (room > 3)
			split_room(room - 3, name_cols, loc_cols, location_min(loc), &name_w, &loc_w);
		text_put_fit(out, name, strlen(name), name_w, 50);
		fputs(" (", out);
		text_put_fit(out, loc, strlen(loc), loc_w, 0);
		fputc(')', out);
	}
	free(name);
	free(loc);
}

static void print_node_line(FILE *out, const struct style *st, const struct report_model *m,
			    const struct report_node *node, const struct frame *f, size_t level, size_t width)
{
	char name[1024];
	fputs("    ", out);
	put_pct(out, st, report_share(node->weight, m->total));
	fputs("  ", out);
	put_pct(out, st, report_share(node->self, m->total));
	int indent = indent_of(level, width);
	fprintf(out, "  %*s", indent, "");
	size_t used = NODE_PREFIX_COLUMNS + (size_t)indent + (f->inlined ? strlen(" [inlined]") : 0);
	size_t room = width > used + 20 ? width - used : width ? 20 : 0;
	put_name_and_location(out, st, report_frame_name(f, name, sizeof name), f, room);
	if (f->inlined)
		fprintf(out, " %s[inlined]%s", sgr(st, MAGENTA), sgr(st, RESET));
	fputc('\n', out);
}

static void print_code_path(FILE *out, const struct style *st, const struct report_model *m,
			    size_t rank, const struct report_code_path *cp, bool full, size_t width, bool waits)
{
	const size_t *chain = &m->chain_nodes[cp->chain_begin];
	print_headline(out, st, m, rank, cp, waits);
	size_t level = 0;
	/* root to the path's last frame; runs of >= 2 frames that are not the
	 * user's collapse into one line, never the last frame */
	for (size_t k = 0; k < cp->nchain; k++) {
		size_t run = 0;
		if (!full)
			while (k + run + 1 < cp->nchain &&
			       !report_frame_is_user(m->chain_frames[cp->chain_begin + k + run]))
				run++;
		if (run >= 2) {
			fprintf(out, "    %14s  %*s%s… %zu frames …%s\n", "", indent_of(level, width), "",
				sgr(st, DIM), run, sgr(st, RESET));
			k += run - 1;
			level++;
			continue;
		}
		print_node_line(out, st, m, &m->nodes[chain[k]], m->chain_frames[cp->chain_begin + k], level++,
				width);
	}
}

void report_put_code_path(FILE *out, const struct report_model *m, size_t rank, const struct report_code_path *cp,
			  bool color, bool full, size_t width)
{
	struct style st = { .on = color };
	print_code_path(out, &st, m, rank, cp, full, width, false);
}

/* ---- tables ------------------------------------------------------------- */

/* Columns a name takes once escaped. */
static size_t shown_len(const char *name)
{
	return text_escape(NULL, 0, name);
}

/* A name escaped and shortened in the middle to at most col columns (the
 * crate at its start and the function at its end are kept); padded to col
 * when pad. */
static void put_cut_name(FILE *out, const char *target_name, size_t col, bool pad)
{
	char *name = text_escape_dup(target_name);
	if (!name)
		return;
	size_t shown = text_put_fit(out, name, strlen(name), col, 50);
	if (pad && shown < col)
		fprintf(out, "%*s", (int)(col - shown), "");
	free(name);
}

static void put_name_cell(FILE *out, const char *target_name, size_t col)
{
	put_cut_name(out, target_name, col, true);
}

static void put_short_name(FILE *out, const char *target_name, size_t col)
{
	put_cut_name(out, target_name, col, false);
}

struct everywhere_item {
	const struct report_func *fn;
	bool user;
};

/* The user's own functions first, deepest first (the end of the trunk
 * every sample shares says the most), then the others root first. */
static int cmp_everywhere(const void *x, const void *y)
{
	const struct everywhere_item *a = x, *b = y;
	if (a->user != b->user)
		return a->user ? -1 : 1;
	if (a->fn->depth != b->fn->depth)
		return (a->fn->depth < b->fn->depth) == !a->user ? -1 : 1;
	return strcmp(a->fn->name, b->fn->name);
}

/* "leaving out N functions on >= 95% of the samples (main, clone3, …, and N more)"
 * (of the bytes, or of the recipe's unit, where the weights are those) */
static void print_everywhere(FILE *out, const struct report_model *m)
{
	enum { NAMED = 3, NAME_COLUMNS = 40 };
	struct everywhere_item *items = malloc(m->neverywhere * sizeof *items);
	size_t n = 0;
	fprintf(out, "  leaving out %zu function%s on ≥ %d%% of the %s%s", m->neverywhere,
		m->neverywhere == 1 ? "" : "s", REPORT_EVERYWHERE_PCT, m->focus ? "kept " : "", weight_noun(m));
	if (!items) {
		fputc('\n', out);
		return;
	}
	for (size_t i = 0; i < m->nfuncs; i++)
		if (m->funcs[i].everywhere)
			items[n++] = (struct everywhere_item){ &m->funcs[i], m->funcs[i].user };
	qsort(items, n, sizeof *items, cmp_everywhere);
	fputs(" (", out);
	for (size_t i = 0; i < n && i < NAMED; i++) {
		fputs(i ? ", " : "", out);
		put_short_name(out, items[i].fn->name, NAME_COLUMNS);
	}
	if (n > NAMED)
		fprintf(out, ", and %zu more", n - NAMED);
	fputs(")\n", out);
	free(items);
}

static void print_func_table(FILE *out, const struct style *st, const struct report_model *m,
			     const size_t *order, size_t norder, size_t top, size_t width, bool by_self, bool waits)
{
	size_t n = top < norder ? top : norder, col = 8;
	for (size_t i = 0; i < n; i++) {
		size_t len = shown_len(m->funcs[order[i]].name);
		if (len > col)
			col = len;
	}
	if (col > NAME_COLUMN_MAX)
		col = NAME_COLUMN_MAX;
	/* 30 columns of figures and gaps; the name and the hottest line share
	 * the rest (split_room) */
	size_t loc_col = 0, loc_min = 0;
	char **locs = calloc(n ? n : 1, sizeof *locs);
	for (size_t i = 0; locs && i < n; i++) {
		const struct report_func *fn = &m->funcs[order[i]];
		locs[i] = location_text(st, fn->hot_file, fn->hot_line, fn->module);
		size_t len = locs[i] ? text_columns(locs[i], strlen(locs[i])) : 1;
		if (len > loc_col)
			loc_col = len;
		if (locs[i] && location_min(locs[i]) > loc_min)
			loc_min = location_min(locs[i]);
	}
	if (width > 0) {
		size_t room = width > 30 + 20 ? width - 30 : 20;
		split_room(room, col, loc_col, loc_min, &col, &loc_col);
	}
	fprintf(out, "\n%stop functions by %s%s\n", sgr(st, BOLD), by_self ? "self" : "total",
		sgr(st, RESET));
	if (!by_self && m->neverywhere)
		print_everywhere(out, m);
	fprintf(out, "  %6s  %6s  %8s  %-*s  %s\n", by_self ? "self" : "total",
		by_self ? "total" : "self", weight_column(m), (int)col, "function",
		line_column(m, waits));
	for (size_t i = 0; i < n; i++) {
		const struct report_func *fn = &m->funcs[order[i]];
		uint64_t first = by_self ? fn->self : fn->total, second = by_self ? fn->total : fn->self;
		if (!first)
			break;
		fputs("  ", out);
		put_pct(out, st, report_share(first, m->total));
		fputs("  ", out);
		put_pct(out, st, report_share(second, m->total));
		fputs("  ", out);
		put_weight_cell(out, m, first);
		fputs("  ", out);
		put_name_cell(out, fn->name, col);
		fputs("  ", out);
		if (locs && locs[i])
			text_put_fit(out, locs[i], strlen(locs[i]), width ? loc_col : 0, 0);
		else
			put_location(out, st, fn->hot_file, fn->hot_line, fn->module);
		fputc('\n', out);
	}
	array_free_pointers(locs, n);
}

static void print_threads(FILE *out, const struct style *st, const struct report_model *m, size_t width)
{
	/* A map keyed by stack alone (a trace's callers) knows no thread: a
	 * table of one "(?)" row at 100% would only say that. */
	bool named = false;
	for (size_t i = 0; i < m->nthreads; i++)
		named |= m->threads[i].name != NULL;
	if (!named)
		return;
	size_t col = 6;
	for (size_t i = 0; i < m->nthreads; i++) {
		size_t len = m->threads[i].name ? shown_len(m->threads[i].name) : 3;
		if (len > col)
			col = len;
	}
	if (width && col > width / 2)
		col = width / 2;
	fprintf(out, "\n%sthreads%s\n", sgr(st, BOLD), sgr(st, RESET));
	fprintf(out, "  %8s  %6s  %-*s%s\n", weight_column(m), "share", (int)col, "thread",
		m->mixed_states ? "  states (R running, S sleeping, ...)" : "");
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct report_thread *t = &m->threads[i];
		fputs("  ", out);
		put_weight_cell(out, m, t->weight);
		fputs("  ", out);
		put_pct(out, st, report_share(t->weight, m->total));
		fputs("  ", out);
		if (!m->mixed_states) {
			put_short_name(out, t->name ? t->name : "(?)", width ? width - 20 : SIZE_MAX / 2);
			fputc('\n', out);
			continue;
		}
		put_name_cell(out, t->name ? t->name : "(?)", col);
		for (size_t s = 0; s < t->nstates; s++)
			fprintf(out, "%s%c %.1f%%", s ? ", " : "  ", t->states[s],
				report_share(t->state_weight[s], t->weight));
		fputc('\n', out);
	}
}

static void print_body(FILE *out, const struct style *stp, const struct report_model *mp,
		       const struct report_options *o)
{
	struct style st = *stp;
	const struct report_model m = *mp;
	if (m.ncode_paths == 0) {
		if (m.total)
			fprintf(out, "the focus kept no %s\n", weight_noun(mp));
		else
			fprintf(out, "no %s were recorded\n", weight_noun(mp));
		return;
	}
	size_t top = o->top ? o->top : DEFAULT_TOP_PATHS;
	fprintf(out, "      %spath    self%s  %s(share of all %s through each frame; root → leaf)%s\n", sgr(&st, DIM),
		sgr(&st, RESET), sgr(&st, DIM), weight_noun(mp),
		sgr(&st, RESET));
	for (size_t i = 0; i < top && i < m.ncode_paths; i++) {
		if (i)
			fputc('\n', out);
		print_code_path(out, &st, &m, i + 1, &m.code_paths[i], o->full_paths, o->width, o->waits);
	}
	if (m.ncode_paths > top)
		fprintf(out, "\n(%zu more code path%s; --top N shows more)\n", m.ncode_paths - top,
			m.ncode_paths - top == 1 ? "" : "s");
	size_t topf = o->top_functions ? o->top_functions : DEFAULT_TOP_FUNCTIONS;
	print_func_table(out, &st, &m, m.by_self, m.nfuncs, topf, o->width, true, o->waits);
	print_func_table(out, &st, &m, m.by_total_shown, m.ntotal_shown, topf, o->width, false, o->waits);
	print_threads(out, &st, &m, o->width);
}

/* Writes the n bytes at line from column *col on, breaking before each
 * sep when the next piece would pass width (continuation lines indented by
 * indent); a piece wider than a fresh line is broken between words, and a
 * word still too wide is shortened in the middle. */
static void wrap_pieces(FILE *out, const char *line, size_t n, size_t width, size_t indent, size_t *col,
			const char *sep)
{
	const char *end = line + n;
	size_t seplen = strlen(sep);
	for (const char *piece = line; piece < end;) {
		const char *next = piece + 1 < end ? memmem(piece + 1, (size_t)(end - piece - 1), sep, seplen) : NULL;
		/* between words, a name and its "(file:line)" stay together */
		while (next && seplen == 1 && next + 1 < end && next[1] == '(')
			next = next + 2 < end ? memmem(next + 2, (size_t)(end - next - 2), sep, seplen) : NULL;
		if (!next)
			next = end;
		const char *p = piece;
		size_t cols = text_columns(piece, (size_t)(next - piece));
		if (*col > indent && *col + cols > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			*col = indent;
			while (p < next && *p == ' ')
				p++;
			cols = text_columns(p, (size_t)(next - p));
		}
		if (*col + cols > width && strcmp(sep, " ") != 0)
			wrap_pieces(out, p, (size_t)(next - p), width, indent, col, " ");
		else
			*col += text_put_fit(out, p, (size_t)(next - p), width - *col, 50);
		piece = next;
	}
}

/* Writes text (a rendered report) to out with every line that is wider
 * than width wrapped: at " → " in a headline, at " · " between header
 * fields, else between words; continuation lines are indented 4 more than
 * the line. */
static void put_wrapped(FILE *out, const char *text, size_t len, size_t width)
{
	for (const char *line = text, *end; line < text + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(text + len - line));
		if (!end)
			end = text + len;
		size_t n = (size_t)(end - line);
		if (!width || text_columns(line, n) <= width) {
			fwrite(line, 1, n, out);
		} else {
			const char *sep = " ";
			static const char *const seps[] = { " → ", " · " };
			for (size_t k = 0; k < 2 && !strcmp(sep, " "); k++)
				if (memmem(line, n, seps[k], strlen(seps[k])))
					sep = seps[k];
			size_t lead = 0;
			while (lead < n && line[lead] == ' ')
				lead++;
			size_t indent = lead + 4 < width / 2 ? lead + 4 : 4, col = 0;
			wrap_pieces(out, line, n, width, indent, &col, sep);
		}
		if (end < text + len)
			fputc('\n', out);
	}
}

static int render_text(const struct profile *p, FILE *out, const struct report_options *o, bool header_only,
		       struct xerr *e)
{
	struct report_options defaults;
	struct report_model m;
	if (!o) {
		report_options_init(&defaults);
		o = &defaults;
	}
	struct style st = { .on = o->color, .links = o->links, .source_map = o->source_map };
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	char *text = NULL;
	size_t len = 0;
	FILE *buf = open_memstream(&text, &len);
	if (!buf) {
		report_model_release(&m);
		return xerr_oom(e);
	}
	if (header_only) {
		print_header(buf, &st, &m);
	} else {
		if (o->title) {
			fputs(sgr(&st, BOLD), buf);
			put(buf, o->title);
			fprintf(buf, "%s\n", sgr(&st, RESET));
		}
		if (!o->no_header)
			print_header(buf, &st, &m);
		if (!o->no_header || o->title)
			fputc('\n', buf);
		print_body(buf, &st, &m, o);
	}
	report_model_release(&m);
	if (fclose(buf) != 0) {
		free(text);
		return xerr_oom(e);
	}
	put_wrapped(out, text, len, o->width);
	free(text);
	if (ferror(out))
		return xerr_set(e, "cannot write the report");
	return 0;
}

int report_text_header(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	return render_text(p, out, o, true, e);
}

int report_text(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	return render_text(p, out, o, false, e);
}
