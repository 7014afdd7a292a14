/* report_annotate.c — `--annotate`: the hottest functions' source lines with
 * per-line sample shares, like `pprof list`. */
#include "report/report.h"
#include "report/report_model.h"
#include "util/array.h"
#include "util/text_escape.h"
#include "symbols/source_map.h"
#include "util/hyperlink.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_FUNCTIONS 5
#define CONTEXT_LINES 2        /* shown around each sampled line */
#define WHOLE_RANGE_MAX 40     /* a sampled range this short is shown entirely */
#define MAX_SHOWN_LINES 80     /* per function */

struct source_text {
	char **lines;              /* lines[0] is line 1, without the newline */
	size_t n;
};

static void source_release(struct source_text *s)
{
	array_free_pointers(s->lines, s->n);
	s->lines = NULL;
	s->n = 0;
}

/* Reads the first max_line lines of path. Returns 0, or -1 with errno set. */
static int source_read(const char *path, size_t max_line, struct source_text *s)
{
	FILE *in = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lines_cap = 0;
	ssize_t len;
	s->lines = NULL;
	s->n = 0;
	if (!in)
		return -1;
	while (s->n < max_line && (len = getline(&line, &cap, in)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		char **lines = array_grow(s->lines, &lines_cap, s->n + 1, sizeof *lines);
		if (!lines)
			break;
		s->lines = lines;
		if (!(s->lines[s->n] = strdup(line)))
			break;
		s->n++;
	}
	free(line);
	fclose(in);
	return 0;
}

static void put_cell(FILE *out, bool color, uint64_t w, uint64_t total)
{
	double pct = report_share(w, total);
	if (!w) {
		fprintf(out, "%7s", ".");
		return;
	}
	const char *c = !color ? "" : pct >= 20 ? "\033[31m" : pct >= 5 ? "\033[33m" : "";
	fprintf(out, "%s%6.1f%%%s", c, pct, *c ? "\033[0m" : "");
}

static bool already_listed(const size_t *chosen, size_t n, size_t f)
{
	for (size_t i = 0; i < n; i++)
		if (chosen[i] == f)
			return true;
	return false;
}

static void annotate_function(FILE *out, const struct report_model *m,
			      const struct report_options *o, const struct report_func *fn)
{
	const char *file = fn->hot_file;
	int lo = 0, hi = 0;
	for (size_t l = fn->line_begin; l < fn->line_end; l++) {
		const struct report_line *ln = &m->lines[l];
		if (ln->file != file || ln->line <= 0)
			continue;
		if (!lo || ln->line < lo)
			lo = ln->line;
		if (ln->line > hi)
			hi = ln->line;
	}
	fputs("ROUTINE ", out);
	text_put(out, fn->name, TEXT_FORM_TERMINAL);
	fprintf(out, " (self %.1f%%, total %.1f%% of all samples)\n", report_share(fn->self, m->total),
		report_share(fn->total, m->total));

	char *mapped = o->source_map ? source_map_apply(o->source_map, file) : NULL;
	const char *path = mapped ? mapped : file;
	struct source_text src;
	int read_rc = source_read(path, (size_t)hi + CONTEXT_LINES, &src);
	int saved_errno = errno;
	fputs("  ", out);
	bool linked = o->links && hyperlink_open(out, path, lo);
	text_put(out, mapped ? mapped : source_map_shown_path(file), TEXT_FORM_TERMINAL);
	if (linked)
		hyperlink_close(out);
	if (mapped) {
		fputs(" (from ", out);
		text_put(out, source_map_shown_path(file), TEXT_FORM_TERMINAL);
		fputc(')', out);
	}
	fputc('\n', out);
	if (read_rc < 0) {
		char commit[41];
		enum source_map_rust status = mapped || !o->source_map ? SOURCE_MAP_RUST_NOT_STD
								       : source_map_rust_status(o->source_map, file);
		if (status == SOURCE_MAP_RUST_OTHER_COMMIT && source_map_rust_std_path(file, commit)) {
			const char *local = source_map_rustc_commit(o->source_map);
			if (local && *local)
				fprintf(out, "  source not shown: the code is from rustc commit %.12s, the local rustc "
					"is commit %.12s (its rust-src would show other lines)\n", commit, local);
			else
				fprintf(out, "  source not shown: the code is from rustc commit %.12s, the local rustc "
					"names no commit (`rustc -vV`), so its rust-src may not match\n", commit);
			fprintf(out, "  (with that release's rust-src: --source-map "
				"/rustc/%s=SYSROOT/lib/rustlib/src/rust)\n", commit);
		} else {
			fputs("  source not available: cannot open ", out);
			text_put(out, path, TEXT_FORM_TERMINAL);
			fprintf(out, ": %s\n", strerror(saved_errno));
			if (source_map_rust_std_path(file, NULL) && !mapped)
				fputs("  (Rust standard library: install rust-src, e.g. `rustup component add "
				      "rust-src`, or pass --source-map /rustc/<commit>=DIR)\n", out);
			else
				fputs("  (pass --source-map FROM=TO if the sources moved)\n", out);
		}
		free(mapped);
		fputc('\n', out);
		return;
	}
	free(mapped);

	fprintf(out, "  %7s %7s %6s  %s\n", "self", "total", "line", "source");
	/* which lines to show: the whole sampled range when short, else each
	 * sampled line with some context, gaps marked with "…" */
	bool whole = hi - lo + 1 <= WHOLE_RANGE_MAX;
	int shown = 0, last = 0;
	size_t l = fn->line_begin;
	int first = lo - CONTEXT_LINES < 1 ? 1 : lo - CONTEXT_LINES;
	for (int line = first; line <= hi + CONTEXT_LINES && shown < MAX_SHOWN_LINES; line++) {
		while (l < fn->line_end && (m->lines[l].file != file || m->lines[l].line < line))
			l++;
		const struct report_line *ln = l < fn->line_end && m->lines[l].file == file &&
					       m->lines[l].line == line ? &m->lines[l] : NULL;
		if (!whole) {
			bool near = false;
			for (size_t k = fn->line_begin; k < fn->line_end && !near; k++)
				near = m->lines[k].file == file && m->lines[k].line > 0 &&
				       abs(m->lines[k].line - line) <= CONTEXT_LINES;
			if (!near)
				continue;
		}
		if ((size_t)line > src.n) {
			if (ln)
				fprintf(out, "  line %d is past the end of the file (%zu lines): "
					"the source does not match the binary\n", line, src.n);
			break;
		}
		if (last && line > last + 1)
			fprintf(out, "  %7s %7s %6s\n", "", "", "…");
		fputs("  ", out);
		put_cell(out, o->color, ln ? ln->self : 0, m->total);
		fputc(' ', out);
		put_cell(out, o->color, ln ? ln->total : 0, m->total);
		fprintf(out, " %6d  %s\n", line, src.lines[line - 1]);
		last = line;
		shown++;
	}
	source_release(&src);
	fputc('\n', out);
}

/* Whether the hottest line's file of fn can be read here (after the
 * source maps): a routine whose source cannot be shown is left for last. */
static bool source_readable(const struct report_options *o, const struct report_func *fn)
{
	char *mapped = o->source_map ? source_map_apply(o->source_map, fn->hot_file) : NULL;
	bool ok = access(mapped ? mapped : fn->hot_file, R_OK) == 0;
	free(mapped);
	return ok;
}

int report_annotate(const struct profile *p, FILE *out, const struct report_options *o,
		    struct xerr *e)
{
	struct report_model m;
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	o = &m.options;
	size_t want = o->annotate_functions ? o->annotate_functions : DEFAULT_FUNCTIONS;
	size_t *chosen = calloc(want, sizeof *chosen), n = 0;
	if (!chosen) {
		report_model_release(&m);
		return xerr_oom(e);
	}
	/* Hottest by self first (where the time is spent), then by total for
	 * profiles whose leaves have no source (e.g. off-CPU: libc waits); in
	 * each, the user's own code first, then other code whose source is
	 * here (crates), and only then routines whose file cannot be opened
	 * (glibc's), which print no lines. */
	/* rounds: self and user's, self and readable, total and user's,
	 * total and readable, then self, then total, whatever the source */
	for (int round = 0; round < 6; round++) {
		bool by_self = round == 0 || round == 1 || round == 4;
		for (size_t i = 0; i < m.nfuncs && n < want; i++) {
			size_t f = by_self ? m.by_self[i] : m.by_total[i];
			const struct report_func *fn = &m.funcs[f];
			if ((by_self && !fn->self) || !fn->hot_file || already_listed(chosen, n, f))
				continue;
			if (round < 4 && !source_readable(o, fn))
				continue;
			if ((round == 0 || round == 2) && !fn->user)
				continue;
			chosen[n++] = f;
		}
	}
	if (!n)
		fputs("no sampled function has source line information to annotate\n", out);
	for (size_t i = 0; i < n; i++)
		annotate_function(out, &m, o, &m.funcs[chosen[i]]);
	free(chosen);
	report_model_release(&m);
	return ferror(out) ? xerr_set(e, "cannot write the annotated source") : 0;
}
