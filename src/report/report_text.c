/* report_text.c — the terminal report: run header, hottest paths, top
 * functions, threads. Layout and definitions: docs/reports.md. */
#include "report/report.h"
#include "report/report_model.h"
#include "symbols/source_map.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP_PATHS 5
#define DEFAULT_TOP_FUNCTIONS 10
#define MAX_INDENT_LEVELS 12
#define NAME_COLUMN_MAX 60

struct style {
	bool on;
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

/* command · recipe · threads, when any is known */
static void print_context(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (!(mt->command_line || mt->recipe || mt->thread_selection || mt->threads >= 0))
		return;
	const char *sep = "  ";
	if (mt->command_line) {
		fprintf(out, "%scommand: ", sep);
		put(out, mt->command_line);
		sep = " · ";
	}
	if (mt->recipe) {
		fprintf(out, "%srecipe: ", sep);
		put(out, mt->recipe);
		sep = " · ";
	}
	if (mt->thread_selection || mt->threads >= 0) {
		fprintf(out, "%sthreads: ", sep);
		put(out, mt->thread_selection ? mt->thread_selection : "?");
		if (mt->threads >= 0)
			fprintf(out, " (%" PRId64 " in target)", mt->threads);
	}
	fputc('\n', out);
}

/* started · duration · rate, when any is known */
static void print_timing(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (!(mt->start_time || known(mt->duration_actual_s) || known(mt->frequency_achieved_hz) ||
	      known(mt->frequency_asked_hz) || known(mt->duration_asked_s)))
		return;
	const char *sep = "  ";
	if (mt->start_time) {
		fprintf(out, "%sstarted ", sep);
		put(out, mt->start_time);
		sep = " · ";
	}
	if (known(mt->duration_actual_s) || known(mt->duration_asked_s)) {
		fprintf(out, "%sduration ", sep);
		if (known(mt->duration_actual_s))
			fprintf(out, "%.1f s", mt->duration_actual_s);
		else
			fputs("?", out);
		if (known(mt->duration_asked_s)) {
			fputs(" (asked ", out);
			put_num(out, mt->duration_asked_s);
			fputs(" s)", out);
		}
		sep = " · ";
	}
	if (known(mt->frequency_achieved_hz) || known(mt->frequency_asked_hz)) {
		fprintf(out, "%srate ", sep);
		if (known(mt->frequency_achieved_hz))
			fprintf(out, "%.1f Hz", mt->frequency_achieved_hz);
		else
			fputs("?", out);
		if (known(mt->frequency_asked_hz)) {
			fputs(" (asked ", out);
			put_num(out, mt->frequency_asked_hz);
			fputs(" Hz)", out);
		}
	}
	fputc('\n', out);
}

/* stops, thread stacks, reuse, walker and stop mode */
static void print_samples(FILE *out, const struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	fprintf(out, "  samples: ");
	if (mt->samples >= 0)
		fprintf(out, "%" PRId64 " stops, ", mt->samples);
	if (mt->thread_samples >= 0)
		fprintf(out, "%" PRId64 " thread stacks", mt->thread_samples);
	else
		fprintf(out, "%" PRIu64 " in profile", m->total);
	if (mt->stacks_reused >= 0)
		fprintf(out, " (%" PRId64 " reused: thread had not run)", mt->stacks_reused);
	if (mt->thread_samples >= 0 && (uint64_t)mt->thread_samples != m->total)
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
	if (known(mt->stopped_pct) || known(mt->stop_median_ms) || known(mt->stop_p99_ms)) {
		fputs("  observer effect: target stopped ", out);
		if (known(mt->stopped_pct))
			fprintf(out, "%.1f%% of the time", mt->stopped_pct);
		else
			fputs("? of the time", out);
		if (known(mt->stop_median_ms) || known(mt->stop_p99_ms)) {
			fputs("; per stop ", out);
			if (known(mt->stop_median_ms))
				fprintf(out, "median %.2f ms", mt->stop_median_ms);
			if (known(mt->stop_median_ms) && known(mt->stop_p99_ms))
				fputs(", ", out);
			if (known(mt->stop_p99_ms))
				fprintf(out, "p99 %.2f ms", mt->stop_p99_ms);
		}
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
	if (m->focus) {
		fputs("  focus /", out);
		put(out, m->focus);
		fprintf(out, "/: kept %" PRIu64 " of %" PRIu64 " samples (%.1f%%); "
			"shares below are of all samples\n", m->kept, m->total, report_share(m->kept, m->total));
	}
}

/* ---- paths -------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Runtime plumbing nobody wants to read in a path: the Rust standard
 * library, the C runtime, thread start, and anything outside the target's
 * own executable (shared libraries). Unknown functions count as boring. */
static bool frame_is_boring(const struct frame *f, const char *exe)
{
	static const char *const prefixes[] = {
		"std::", "core::", "alloc::", "<std::", "<core::", "<alloc::", "__rust",
		"_start", "__libc_start", "start_thread", "clone", "__clone", "_dl_", NULL,
	};
	if (!f->function)
		return true;
	for (size_t i = 0; prefixes[i]; i++)
		if (has_prefix(f->function, prefixes[i]))
			return true;
	if (f->file && has_prefix(f->file, "/rustc/"))
		return true;
	/* a differently spelled exe path must not hide the user's frames, so
	 * only modules that are shared libraries count */
	return exe && f->module && strcmp(f->module, exe) != 0 && strstr(report_basename(f->module), ".so");
}

/* Common "a::b::" prefix of two names, ending just after a "::". */
static size_t common_namespace(const char *a, const char *b)
{
	size_t end = 0;
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i] == ':' && i > 0 && a[i - 1] == ':')
			end = i + 1;
	return end;
}

static void print_headline(FILE *out, const struct style *st, const struct report_model *m,
			   size_t rank, const struct report_path *path)
{
	const struct stack *s = path->stack;
	char leaf[1024], parent[1024];
	fprintf(out, "%s#%zu hottest path (%.1f%%, %" PRIu64 " sample%s):%s ", sgr(st, BOLD), rank,
		report_share(path->weight, m->total), path->weight, path->weight == 1 ? "" : "s",
		sgr(st, RESET));
	if (!s->nframes) {
		fputs("(empty stack)\n", out);
		return;
	}
	report_frame_name(&s->frames[0], leaf, sizeof leaf);
	size_t skip = 0;
	if (s->nframes > 1) {
		report_frame_name(&s->frames[1], parent, sizeof parent);
		skip = common_namespace(leaf, parent);
		if (skip == strlen(leaf))
			skip = 0;
		put(out, parent);
		fputs(" → ", out);
	}
	fprintf(out, "%s%s", sgr(st, BOLD), skip ? "…::" : "");
	put(out, leaf + skip);
	fputs(sgr(st, RESET), out);
	fputs(" (", out);
	put_location(out, st, s->frames[0].file, s->frames[0].line, s->frames[0].module);
	fputs(")\n", out);
}

static void print_frame_line(FILE *out, const struct style *st, const struct report_model *m,
			     const struct frame *f, size_t level)
{
	char name[1024];
	size_t fi = report_model_func(m, f);
	const struct report_func *fn = fi != (size_t)-1 ? &m->funcs[fi] : NULL;
	fputs("    ", out);
	put_pct(out, st, report_share(fn ? fn->total : 0, m->total));
	fputs("  ", out);
	put_pct(out, st, report_share(fn ? fn->self : 0, m->total));
	fprintf(out, "  %*s", (int)(2 * (level < MAX_INDENT_LEVELS ? level : MAX_INDENT_LEVELS)), "");
	put(out, report_frame_name(f, name, sizeof name));
	fputs(" (", out);
	put_location(out, st, f->file, f->line, f->module);
	fputc(')', out);
	if (f->inlined)
		fprintf(out, " %s[inlined]%s", sgr(st, MAGENTA), sgr(st, RESET));
	fputc('\n', out);
}

static void print_path(FILE *out, const struct style *st, const struct report_model *m,
		       size_t rank, const struct report_path *path, bool full)
{
	const struct stack *s = path->stack;
	const char *exe = m->profile->meta.exe;
	print_headline(out, st, m, rank, path);
	size_t level = 0;
	/* root (frames[n-1]) to leaf (frames[0]); runs of >= 2 boring frames
	 * above the leaf collapse into one line */
	for (size_t k = s->nframes; k-- > 0;) {
		size_t run = 0;
		if (!full)
			while (run < k && frame_is_boring(&s->frames[k - run], exe))
				run++;
		if (run >= 2) {
			fprintf(out, "    %14s  %*s%s… %zu frames …%s\n", "",
				(int)(2 * (level < MAX_INDENT_LEVELS ? level : MAX_INDENT_LEVELS)), "",
				sgr(st, DIM), run, sgr(st, RESET));
			k -= run - 1;
			level++;
			continue;
		}
		print_frame_line(out, st, m, &s->frames[k], level++);
	}
}

/* ---- tables ------------------------------------------------------------- */

/* Columns a name takes once escaped. */
static size_t shown_len(const char *name)
{
	return text_escape(NULL, 0, name);
}

static void put_name_cell(FILE *out, const char *target_name, size_t col)
{
	char name[4 * 1024];
	size_t len = text_escape(name, sizeof name, target_name);
	if (len >= sizeof name)
		len = strlen(name);
	if (len <= col) {
		fprintf(out, "%-*s", (int)col, name);
		return;
	}
	/* keep the start (crate and type) and mark the cut; never split a
	 * UTF-8 sequence */
	size_t cut = col > 1 ? col - 1 : 0;
	while (cut > 0 && ((unsigned char)name[cut] & 0xC0) == 0x80)
		cut--;
	fprintf(out, "%.*s…%*s", (int)cut, name, (int)(col - 1 - cut), "");
}

static void print_func_table(FILE *out, const struct style *st, const struct report_model *m,
			     const size_t *order, size_t top, size_t width, bool by_self)
{
	size_t n = top < m->nfuncs ? top : m->nfuncs, col = 8;
	for (size_t i = 0; i < n; i++) {
		size_t len = shown_len(m->funcs[order[i]].name);
		if (len > col)
			col = len;
	}
	if (col > NAME_COLUMN_MAX)
		col = NAME_COLUMN_MAX;
	if (width > 0) {
		size_t room = width > 30 + 20 ? width - 30 : 20;
		if (col > room)
			col = room;
	}
	fprintf(out, "\n%stop functions by %s%s\n", sgr(st, BOLD), by_self ? "self" : "total",
		sgr(st, RESET));
	fprintf(out, "  %6s  %6s  %8s  %-*s  %s\n", by_self ? "self" : "total",
		by_self ? "total" : "self", "samples", (int)col, "function", "hottest line");
	for (size_t i = 0; i < n; i++) {
		const struct report_func *fn = &m->funcs[order[i]];
		uint64_t first = by_self ? fn->self : fn->total, second = by_self ? fn->total : fn->self;
		if (!first)
			break;
		fputs("  ", out);
		put_pct(out, st, report_share(first, m->total));
		fputs("  ", out);
		put_pct(out, st, report_share(second, m->total));
		fprintf(out, "  %8" PRIu64 "  ", first);
		put_name_cell(out, fn->name, col);
		fputs("  ", out);
		put_location(out, st, fn->hot_file, fn->hot_line, fn->module);
		fputc('\n', out);
	}
}

static void print_threads(FILE *out, const struct style *st, const struct report_model *m)
{
	size_t col = 6;
	for (size_t i = 0; i < m->nthreads; i++) {
		size_t len = m->threads[i].name ? shown_len(m->threads[i].name) : 3;
		if (len > col)
			col = len;
	}
	fprintf(out, "\n%sthreads%s\n", sgr(st, BOLD), sgr(st, RESET));
	fprintf(out, "  %8s  %6s  %-*s%s\n", "samples", "share", (int)col, "thread",
		m->mixed_states ? "  states (R running, S sleeping, D disk wait, ...)" : "");
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct report_thread *t = &m->threads[i];
		fprintf(out, "  %8" PRIu64 "  ", t->weight);
		put_pct(out, st, report_share(t->weight, m->total));
		fputs("  ", out);
		if (!m->mixed_states) {
			put(out, t->name ? t->name : "(?)");
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

int report_text(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_options defaults;
	struct report_model m;
	if (!o) {
		report_options_init(&defaults);
		o = &defaults;
	}
	struct style st = { o->color };
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	if (o->title) {
		fputs(sgr(&st, BOLD), out);
		put(out, o->title);
		fprintf(out, "%s\n", sgr(&st, RESET));
	}
	print_header(out, &st, &m);
	fputc('\n', out);
	if (m.npaths == 0) {
		fprintf(out, "%s\n", m.total ? "the focus kept no samples" : "no samples were recorded");
	} else {
		size_t top = o->top ? o->top : DEFAULT_TOP_PATHS;
		fprintf(out, "     %stotal    self%s  %s(per function, of all samples; paths root → leaf)%s\n",
			sgr(&st, DIM), sgr(&st, RESET), sgr(&st, DIM), sgr(&st, RESET));
		for (size_t i = 0; i < top && i < m.npaths; i++) {
			if (i)
				fputc('\n', out);
			print_path(out, &st, &m, i + 1, &m.paths[i], o->full_paths);
		}
		if (m.npaths > top)
			fprintf(out, "\n(%zu more distinct paths; --top N shows more)\n", m.npaths - top);
		size_t topf = o->top_functions ? o->top_functions : DEFAULT_TOP_FUNCTIONS;
		print_func_table(out, &st, &m, m.by_self, topf, o->width, true);
		print_func_table(out, &st, &m, m.by_total, topf, o->width, false);
		print_threads(out, &st, &m);
	}
	report_model_release(&m);
	if (ferror(out))
		return xerr_set(e, "cannot write the report");
	return 0;
}
