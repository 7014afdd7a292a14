#include "recipe/recipe_diag.h"
#include "util/edit_distance.h"
#include "util/array.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void recipe_diag_list_init(struct diag_list *l)
{
	memset(l, 0, sizeof *l);
}

void recipe_diag_list_release(struct diag_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].file);
		free(l->items[i].source_line);
		free(l->items[i].message);
	}
	free(l->items);
	memset(l, 0, sizeof *l);
}

static bool is_continuation(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Copies one source line for display: control characters (C0, DEL, C1,
 * bidi overrides) and bytes >= 0x80 that do not form valid UTF-8 become
 * '?', one per character, so the caret line stays aligned. */
static char *display_line(const char *p, size_t n)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x80) {
			out[o++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
			i++;
			continue;
		}
		size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
		if (c >= 0xF5)
			need = 0;
		bool ok = need && i + need <= n;
		for (size_t k = 1; ok && k < need; k++)
			ok = is_continuation((unsigned char)p[i + k]);
		/* C1 controls (U+0080-U+009F) act on terminals like ESC does, and
		 * bidi overrides reorder what is shown: no more text than those. */
		unsigned char c1 = ok ? (unsigned char)p[i + 1] : 0, c2 = ok && need > 2 ? (unsigned char)p[i + 2] : 0;
		bool control = ok && ((c == 0xC2 && c1 < 0xA0) ||
				      (c == 0xE2 && c1 == 0x80 && c2 >= 0xAA && c2 <= 0xAE) ||
				      (c == 0xE2 && c1 == 0x81 && c2 >= 0xA6 && c2 <= 0xA9));
		if (!ok || control) {
			out[o++] = '?';
			i += control ? need : 1;
			continue;
		}
		memcpy(out + o, p + i, need);
		o += need;
		i += need;
	}
	out[o] = 0;
	return out;
}

/* The message with each quoted 'text' longer than DIAG_QUOTE characters cut
 * to its first DIAG_QUOTE and "…" (a 10 MB token is quoted in full otherwise), shown
 * as display_line shows source text. */
static char *display_message(const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *full = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (full)
		vsnprintf(full, (size_t)n + 1, fmt, again);
	va_end(again);
	if (!full)
		return NULL;
	size_t w = 0;
	for (size_t r = 0; full[r];) {
		char *close = full[r] == '\'' ? strchr(full + r + 1, '\'') : NULL;
		if (!close) {
			full[w++] = full[r++];
			continue;
		}
		size_t start = r + 1, chars = 0, cut = start;
		for (size_t i = start; full + i < close; i++)
			if (!is_continuation((unsigned char)full[i]) && ++chars == DIAG_QUOTE + 1)
				cut = i;
		/* Cut only with 3 characters or more past the cut: "…" takes 3
		 * bytes, and the text is rewritten in place. */
		bool too_long = chars > DIAG_QUOTE + 2;
		full[w++] = '\'';
		size_t keep = (too_long ? cut : (size_t)(close - full)) - start;
		memmove(full + w, full + start, keep);
		w += keep;
		if (too_long) {
			memcpy(full + w, "\xe2\x80\xa6", 3);
			w += 3;
		}
		full[w++] = '\'';
		r = (size_t)(close - full) + 1;
	}
	char *shown = display_line(full, w);
	free(full);
	return shown;
}

static void recipe_diag_addv(struct diag_list *l, enum diag_severity sev, const struct recipe_src *src,
	       size_t off, size_t len, const char *fmt, va_list ap)
{
	if (sev == DIAG_ERROR)
		l->errors++;
	else
		l->warnings++;
	if (l->n >= DIAG_MAX) {
		l->dropped++;
		return;
	}
	struct diag *v = array_grow(l->items, &l->cap, l->n + 1, sizeof *v);
	if (!v)
		return;
	l->items = v;
	struct diag *d = &l->items[l->n];
	memset(d, 0, sizeof *d);
	d->severity = sev;
	d->message = display_message(fmt, ap);
	d->len = 1;
	if (src) {
		d->file = strdup(src->name ? src->name : "<recipe>");
		if (off > src->len)
			off = src->len;
		size_t bol = off;
		while (bol > 0 && src->text[bol - 1] != '\n')
			bol--;
		size_t eol = off;
		while (eol < src->len && src->text[eol] != '\n')
			eol++;
		int line = 1;
		for (size_t i = 0; i < bol; i++)
			line += src->text[i] == '\n';
		int col = 1;
		for (size_t i = bol; i < off; i++)
			col += !is_continuation((unsigned char)src->text[i]);
		/* A long line is shown as DIAG_CONTEXT characters each side of the
		 * column: one line may be the whole 10 MB file. */
		size_t line_chars = 0;
		for (size_t i = bol; i < eol && line_chars <= DIAG_LINE_MAX; i++)
			line_chars += !is_continuation((unsigned char)src->text[i]);
		size_t context = line_chars > DIAG_LINE_MAX ? DIAG_CONTEXT : DIAG_LINE_MAX;
		size_t from = off, before = 0;
		while (from > bol && before < context)
			before += !is_continuation((unsigned char)src->text[--from]);
		size_t to = off, after = 0;
		while (to < eol && after < context) {
			to++;
			while (to < eol && is_continuation((unsigned char)src->text[to]))
				to++;
			after++;
		}
		int chars = 0;
		for (size_t i = off; i < off + len && i < to; i++)
			chars += !is_continuation((unsigned char)src->text[i]);
		d->line = line;
		d->col = col;
		d->len = chars > 0 ? chars : 1;
		char *shown = display_line(src->text + from, to - from);
		bool cut_before = from > bol, cut_after = to < eol;
		d->caret_col = (int)before + 1 + cut_before;
		if (shown && (cut_before || cut_after)) {
			size_t n = strlen(shown);
			d->source_line = malloc(n + 7);
			if (d->source_line)
				snprintf(d->source_line, n + 7, "%s%s%s", cut_before ? "\xe2\x80\xa6" : "", shown,
					 cut_after ? "\xe2\x80\xa6" : "");
			free(shown);
		} else {
			d->source_line = shown;
		}
	}
	if (!d->message) {
		free(d->file);
		free(d->source_line);
		return;
	}
	l->n++;
}

void recipe_diag_add(struct diag_list *l, enum diag_severity sev, const struct recipe_src *src,
	      size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	recipe_diag_addv(l, sev, src, off, len, fmt, ap);
	va_end(ap);
}

void recipe_diag_list_print(const struct diag_list *l, FILE *out)
{
	/* in source order (parse and check errors are found in two passes);
	 * insertion sort keeps equal positions in discovery order */
	size_t order[DIAG_MAX];
	for (size_t i = 0; i < l->n; i++) {
		size_t j = i;
		const struct diag *d = &l->items[i];
		while (j > 0) {
			const struct diag *p = &l->items[order[j - 1]];
			if (p->line < d->line || (p->line == d->line && p->col <= d->col))
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	size_t shown = l->n < DIAG_PRINT_MAX ? l->n : DIAG_PRINT_MAX;
	for (size_t k = 0; k < shown; k++) {
		const struct diag *d = &l->items[order[k]];
		const char *sev = d->severity == DIAG_ERROR ? "error" : "warning";
		if (!d->file) {
			fprintf(out, "xgdbprof: %s: %s\n", sev, d->message);
			continue;
		}
		fprintf(out, "%s:%d:%d: %s: %s\n", d->file, d->line, d->col, sev, d->message);
		if (!d->source_line)
			continue;
		fprintf(out, "%5d | %s\n      | ", d->line, d->source_line);
		/* walk the displayed line so tabs and multi-byte characters align */
		const char *p = d->source_line;
		int col = 1;
		while (*p && col < d->caret_col) {
			fputc(*p == '\t' ? '\t' : ' ', out);
			p++;
			while (is_continuation((unsigned char)*p))
				p++;
			col++;
		}
		while (col < d->caret_col) {
			fputc(' ', out);
			col++;
		}
		fputc('^', out);
		for (int tilde = 1; tilde < d->len; tilde++)
			fputc('~', out);
		fputc('\n', out);
	}
	if (l->dropped + (l->n - shown))
		fprintf(out, "xgdbprof: note: %zu more diagnostics not shown\n", l->dropped + (l->n - shown));
	if (l->errors)
		fprintf(out, "%zu error%s generated.\n", l->errors, l->errors == 1 ? "" : "s");
}

const char *recipe_diag_did_you_mean(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	size_t wl = strlen(word);
	for (size_t i = 0; candidates[i]; i++) {
		size_t d = edit_distance(word, strlen(word), candidates[i], strlen(candidates[i]));
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	size_t limit = wl <= 3 ? 1 : wl <= 6 ? 2 : 3;
	return best && best_d <= limit ? best : NULL;
}

const char *recipe_diag_bpftrace_hint(const char *word, const char *rest, char *buf, size_t size)
{
	static const struct {
		const char *word, *hint;
	} habits[] = {
		{ "profile", "bpftrace's profile:hz:N is `sample` here, with `set frequency N`" },
		{ "BEGIN", "write begin" },
		{ "END", "write end" },
		{ "uprobe", "a function entry is `function \"NAME\"` here" },
		{ "kprobe", "xgdbprof probes user space only: `function \"NAME\"` or `syscall NAME`" },
		{ "uretprobe", "a function return is `return \"NAME\"` here" },
		{ "kretprobe", "xgdbprof probes user space only: `return \"NAME\"` or `syscall NAME`" },
		{ "tracepoint", "system calls are `syscall NAME` (on return) or `syscall_entry NAME`" },
		{ "comm", "the thread's name is thread.name here" },
		{ "kstack", "xgdbprof sees user stacks only: ustack" },
		{ "args", "read a parameter by its name: arg(NAME)" },
		{ "delete", "there is no per-key delete: clear(@m) empties a whole map" },
		{ "zero", "clear(@m) empties a map" },
		{ "time", "printf(\"%d\", nsecs) prints the time in nanoseconds" },
	};
	if (!strcmp(word, "profile") && rest && !strncmp(rest, ":hz:", 4)) {
		int hz = atoi(rest + 4);
		if (hz > 0) {
			snprintf(buf, size, "use `sample` with `set frequency %d` (bpftrace's profile:hz:%d)", hz, hz);
			return buf;
		}
	}
	if (!strncmp(word, "arg", 3) && word[3] >= '0' && word[3] <= '9' && (!word[4] || !word[5])) {
		snprintf(buf, size, "arg0..arg5 are the integer argument registers at a function's entry; past them, "
			 "read a parameter by name: arg(NAME)");
		return buf;
	}
	for (size_t i = 0; i < sizeof habits / sizeof habits[0]; i++)
		if (!strcmp(word, habits[i].word)) {
			snprintf(buf, size, "%s", habits[i].hint);
			return buf;
		}
	return NULL;
}
