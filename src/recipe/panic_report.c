/* panic_report.c — panics grouped by location, with message examples and
 * the stack that led there, root first (contract in panic_report.h). */
#include "recipe/panic_report.h"
#include "util/compare.h"
#include "recipe/maps.h"
#include "report/report_model.h"
#include "symbols/source_map.h"
#include "util/array.h"
#include "util/hyperlink.h"
#include "util/text_escape.h"
#include "util/text_fit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One distinct value (a location, a message or a stack) and the panics
 * that had it; first is the entry it was first seen in, for stable ties. */
struct tally {
	const struct map_entry *first;
	uint64_t count;
	size_t order;   /* first seen: the map's insertion order */
};

struct tallies {
	struct tally *v;
	size_t n, cap;
};

static bool key_equal(const struct map_key *a, const struct map_key *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == MAP_KEY_INT)
		return a->i == b->i;
	if (a->type == MAP_KEY_STR)
		return strcmp(a->s ? a->s : "", b->s ? b->s : "") == 0;
	return false;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Stacks are the same panic path when every frame reads the same. */
static bool stack_equal(const struct stack *a, const struct stack *b)
{
	if (!a || !b)
		return a == b;
	if (a->nframes != b->nframes)
		return false;
	for (size_t i = 0; i < a->nframes; i++) {
		const struct frame *x = &a->frames[i], *y = &b->frames[i];
		if (!same_text(x->function, y->function) || !same_text(x->file, y->file) ||
		    x->line != y->line || x->inlined != y->inlined ||
		    (!x->function && x->pc != y->pc))
			return false;
	}
	return true;
}

/* The message of an entry: its non-stack keys after the first (usually one). */
static bool message_equal(const struct map *m, const struct map_entry *a, const struct map_entry *b)
{
	for (size_t k = 1; k < map_nkeys(m); k++)
		if (a->keys[k].type != MAP_KEY_STACK && !key_equal(&a->keys[k], &b->keys[k]))
			return false;
	return true;
}

static int tally_add(struct tallies *t, const struct map_entry *en, uint64_t count,
		     bool (*same)(const void *ctx, const struct map_entry *, const struct map_entry *),
		     const void *ctx)
{
	for (size_t i = 0; i < t->n; i++)
		if (same(ctx, t->v[i].first, en)) {
			t->v[i].count += count;
			return 0;
		}
	return ARRAY_PUSH(t->v, t->n, t->cap, ((struct tally){ en, count, t->n }));
}

struct keys_ctx {
	const struct map *m;
	size_t stack_key;   /* nkeys when there is none */
};

static bool same_location(const void *ctx, const struct map_entry *a, const struct map_entry *b)
{
	(void)ctx;
	return key_equal(&a->keys[0], &b->keys[0]);
}

static bool same_message(const void *ctx, const struct map_entry *a, const struct map_entry *b)
{
	return message_equal(((const struct keys_ctx *)ctx)->m, a, b);
}

static bool same_stack(const void *ctx, const struct map_entry *a, const struct map_entry *b)
{
	size_t k = ((const struct keys_ctx *)ctx)->stack_key;
	return stack_equal(a->keys[k].stack, b->keys[k].stack);
}

/* Most panics first; ties in the order first seen. */
static int cmp_tally(const void *x, const void *y)
{
	const struct tally *a = x, *b = y;
	int c = compare_u64(b->count, a->count);
	return c ? c : compare_u64(a->order, b->order);
}

static void sort_tallies(struct tallies *t)
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof *t->v, cmp_tally);
}

/* Escaped text of a non-stack key (free it), or NULL out of memory. */
static char *key_text(const struct map_key *k)
{
	if (k->type == MAP_KEY_INT) {
		char buf[32];
		snprintf(buf, sizeof buf, "%" PRId64, k->i);
		return strdup(buf);
	}
	return text_escape_dup(k->s ? k->s : "");
}

/* Writes text (already escaped) within room columns (0: no limit),
 * shortened in the middle, or from the start when keep_end. */
static void put_fit(FILE *out, const char *text, size_t room, bool keep_end)
{
	if (!room)
		fputs(text, out);
	else
		text_put_fit(out, text, strlen(text), room, keep_end ? 0 : 50);
}

/* One line of our own text, shortened in the middle to width (0: no limit). */
__attribute__((format(printf, 3, 4)))
static void put_line(FILE *out, size_t width, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	put_fit(out, buf, width, false);
	fputc('\n', out);
}

static size_t room_after(size_t width, size_t used)
{
	if (!width)
		return 0;
	return width > used + 10 ? width - used : 10;
}

static void put_message_line(FILE *out, const struct map *m, const struct map_entry *en, uint64_t count,
			     size_t width)
{
	char prefix[48];
	int n = snprintf(prefix, sizeof prefix, "      %" PRIu64 "× ", count);
	fputs(prefix, out);
	/* "×" is one column in two bytes */
	size_t used = (size_t)n - 1;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	const char *sep = "";
	for (size_t k = 1; k < map_nkeys(m); k++) {
		if (en->keys[k].type == MAP_KEY_STACK)
			continue;
		char *t = key_text(&en->keys[k]);
		fprintf(f, "%s%s", sep, t ? t : "?");
		free(t);
		sep = " · ";
	}
	/* Messages are what tells panics apart: up to four lines' worth is
	 * written whole (the run's stream wraps it, util/text_fit.h); only a
	 * longer one is shortened, in its middle. */
	if (fclose(f) == 0)
		put_fit(out, text, width ? room_after(4 * width, used) : 0, false);
	free(text);
	fputc('\n', out);
}

/* "name (path:line)" of a frame; the location keeps its end (file and
 * line) when the line is too wide. */
static void put_frame_line(FILE *out, const struct frame *f, size_t width, bool links)
{
	char buf[1024];
	const char *indent = "      ";
	fputs(indent, out);
	char *name = text_escape_dup(report_frame_name(f, buf, sizeof buf));
	char *loc = NULL;
	size_t loc_len = 0;
	FILE *lf = open_memstream(&loc, &loc_len);
	if (!name || !lf) {
		if (lf && fclose(lf) == 0)
			free(loc);
		free(name);
		fputc('\n', out);
		return;
	}
	const char *file = f->file ? source_map_shown_path(f->file) : NULL;
	char *shown = file ? text_escape_dup(file) : f->module ? text_escape_dup(f->module) : strdup("?");
	bool linked = links && f->file && hyperlink_open(lf, f->file, f->line);
	fputs(shown ? shown : "?", lf);
	if (file && f->line > 0)
		fprintf(lf, ":%d", f->line);
	if (linked)
		hyperlink_close(lf);
	free(shown);
	if (fclose(lf) != 0) {
		free(name);
		fputc('\n', out);
		return;
	}
	size_t suffix = f->inlined ? strlen(" [inlined]") : 0;
	size_t room = room_after(width, strlen(indent) + suffix + 3);
	size_t name_cols = text_columns(name, strlen(name)), loc_cols = text_columns(loc, strlen(loc));
	size_t name_w = 0, loc_w = 0;
	if (room && name_cols + loc_cols > room) {
		/* the location keeps at least "…file.rs:line", the name what that leaves */
		const char *slash = strrchr(loc, '/');
		size_t loc_min = 1 + text_columns(slash ? slash + 1 : loc, strlen(slash ? slash + 1 : loc));
		loc_w = room > name_cols + loc_min ? room - name_cols : loc_min;
		if (loc_w > loc_cols)
			loc_w = loc_cols;
		if (loc_w > room / 2 && loc_w > loc_min && name_cols > room / 2)
			loc_w = room / 2 > loc_min ? room / 2 : loc_min;
		name_w = room > loc_w ? room - loc_w : 1;
	}
	put_fit(out, name, name_w, false);
	fputs(" (", out);
	put_fit(out, loc, loc_w, true);
	fputc(')', out);
	if (f->inlined)
		fputs(" [inlined]", out);
	fputc('\n', out);
	free(name);
	free(loc);
}

static void put_folded(FILE *out, size_t run, size_t width)
{
	put_line(out, width, "      … %zu runtime frame%s", run, run == 1 ? "" : "s");
}

/* The runtime's frames: not the user's code, and the C-level `main` that
 * rustc generates to call std's lang_start (no source line of the user's). */
static bool runtime_frame(const struct frame *f)
{
	return !report_frame_is_user(f) || (!f->file && f->function && strcmp(f->function, "main") == 0);
}

/* Root first; each run of runtime frames in one line. */
static void put_stack(FILE *out, const struct stack *s, size_t width, bool links)
{
	size_t run = 0;
	for (size_t i = s->nframes; i-- > 0;) {
		const struct frame *f = &s->frames[i];
		if (runtime_frame(f)) {
			run++;
			continue;
		}
		if (run)
			put_folded(out, run, width);
		run = 0;
		put_frame_line(out, f, width, links);
	}
	if (run)
		put_folded(out, run, width);
}

static int print_group(FILE *out, const struct map *m, const struct tally *loc, size_t rank,
		       size_t stack_key, size_t width, bool links)
{
	struct keys_ctx ctx = { m, stack_key };
	struct tallies messages = {0}, stacks = {0};
	int rc = 0;
	for (size_t i = 0; i < map_len(m) && rc == 0; i++) {
		const struct map_entry *en = map_entry_at(m, i);
		if (!key_equal(&en->keys[0], &loc->first->keys[0]))
			continue;
		uint64_t n = (uint64_t)map_entry_number(m, en);
		rc = tally_add(&messages, en, n, same_message, &ctx);
		if (rc == 0 && stack_key < map_nkeys(m))
			rc = tally_add(&stacks, en, n, same_stack, &ctx);
	}
	if (rc == 0) {
		sort_tallies(&messages);
		sort_tallies(&stacks);
		char head[64];
		int used = snprintf(head, sizeof head, "#%zu  %" PRIu64 " panic%s at ", rank, loc->count,
				    loc->count == 1 ? "" : "s");
		fputs(head, out);
		char *where = key_text(&loc->first->keys[0]);
		put_fit(out, where ? where : "?", room_after(width, (size_t)used), true);
		free(where);
		fputc('\n', out);
		bool has_message = false;
		for (size_t k = 1; k < map_nkeys(m); k++)
			has_message |= k != stack_key;
		for (size_t i = 0; has_message && i < messages.n && i < PANIC_REPORT_MESSAGES; i++)
			put_message_line(out, m, messages.v[i].first, messages.v[i].count, width);
		if (has_message && messages.n > PANIC_REPORT_MESSAGES)
			put_line(out, width, "      … %zu other message%s", messages.n - PANIC_REPORT_MESSAGES,
				 messages.n - PANIC_REPORT_MESSAGES == 1 ? "" : "s");
		if (stacks.n) {
			if (stacks.n == 1)
				put_line(out, width, "    stack, root first:");
			else
				put_line(out, width, "    stack of %" PRIu64 " of them, root first (%zu other stack%s):",
					 stacks.v[0].count, stacks.n - 1, stacks.n == 2 ? "" : "s");
			const struct stack *s = stacks.v[0].first->keys[stack_key].stack;
			if (s)
				put_stack(out, s, width, links);
		}
	}
	free(messages.v);
	free(stacks.v);
	return rc;
}

int panic_report_print(const struct map *m, FILE *out, size_t width, bool links, const struct map_coverage *coverage,
		       struct xerr *e)
{
	if (map_len(m) == 0) {
		fprintf(out, "@%s: (no events)\n", map_name(m));
		return 0;
	}
	size_t nkeys = map_nkeys(m), stack_key = nkeys;
	const struct map_entry *first = map_entry_at(m, 0);
	for (size_t k = 0; k < nkeys; k++)
		if (first->keys[k].type == MAP_KEY_STACK && stack_key == nkeys)
			stack_key = k;
	if (nkeys == 0 || stack_key == 0)
		return xerr_set(e, "@%s: report(panics=1) groups by the map's first key, the location: "
				"write @%s[panic.location, panic.message, ustack] = count()",
				map_name(m), map_name(m));

	struct tallies locations = {0};
	uint64_t total = 0;
	double estimated = 0;
	for (size_t i = 0; i < map_len(m); i++) {
		const struct map_entry *en = map_entry_at(m, i);
		uint64_t n = (uint64_t)map_entry_number(m, en);
		double est;
		total += n;
		estimated += map_counted_estimate(&en->value, false, coverage, &est) ? est : (double)n;
		if (tally_add(&locations, en, n, same_location, NULL) < 0) {
			free(locations.v);
			return xerr_oom(e);
		}
	}
	sort_tallies(&locations);
	char *name = text_escape_dup(map_name(m));
	bool passed_over = estimated >= (double)total + 1;
	put_line(out, width, "@%s: %" PRIu64 " panic%s %sat %zu location%s, most frequent first", name ? name : "?",
		 total, total == 1 ? "" : "s", passed_over ? "seen " : "", locations.n, locations.n == 1 ? "" : "s");
	if (passed_over)
		put_line(out, width, "    of %.0f in all, counted in the target (the rest passed over to keep the budget)",
			 estimated);
	free(name);
	int rc = 0;
	for (size_t i = 0; i < locations.n && rc == 0; i++)
		rc = print_group(out, m, &locations.v[i], i + 1, stack_key, width, links);
	if (map_dropped(m))
		put_line(out, width, "(%" PRIu64 " more panics not kept: max_keys reached)", map_dropped(m));
	free(locations.v);
	if (rc < 0)
		return xerr_oom(e);
	return 0;
}
