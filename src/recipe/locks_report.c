#include "recipe/locks_report.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const struct map_key *first_key(const struct map *m, const struct map_entry *e, enum map_key_type type)
{
	for (size_t i = 0; i < map_nkeys(m); i++)
		if (e->keys[i].type == type)
			return &e->keys[i];
	return NULL;
}

/* "2.9 ms", "450 us", "1.20 s"; "< X" for a negative ns (only known to be
 * under -ns), ">= X" beyond */
static void format_duration(char *buf, size_t size, double ns, bool beyond)
{
	const char *pre = beyond ? ">= " : ns < 0 ? "< " : "";
	if (ns < 0)
		ns = -ns;
	if (ns >= 1e9)
		snprintf(buf, size, "%s%.2f s", pre, ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%s%.*f ms", pre, ns >= 1e7 ? 0 : 1, ns / 1e6);
	else
		snprintf(buf, size, "%s%.0f us", pre, ns / 1e3);
}

static void put_duration(FILE *out, double ns, bool beyond)
{
	char text[32];
	format_duration(text, sizeof text, ns, beyond);
	fputs(text, out);
}

/* " p50 X, p99 Y" of an entry */
static void put_percentiles(FILE *out, const struct map *m, const struct map_entry *e)
{
	static const double qs[] = {0.5, 0.99};
	static const char *const names[] = {"p50", "p99"};
	for (size_t i = 0; i < 2; i++) {
		double v;
		bool beyond;
		if (!map_quantile(m, e, qs[i], &v, &beyond))
			continue;
		/* inside an lhist's first bucket from 0 nothing more is known */
		int64_t step = map_lhist_step(m);
		if (step > 0 && v >= 0 && v < (double)step)
			v = -(double)step;
		fprintf(out, "%s %s ", i ? "," : "", names[i]);
		put_duration(out, v, beyond);
	}
}

/* A compact histogram of an entry, in powers of two: an lhist's buckets
 * are gathered by their lower bound ([0, step), [step, 2 step), [2 step,
 * 4 step), ..., [max, ...)); a hist's are its own. Rows from the first
 * non-empty to the last, each "label count |bar|". */
enum { LOCK_HIST_ROWS = 66, LOCK_HIST_BAR = 30 };

static void put_row_label(FILE *out, double lo, double hi, bool open_end)
{
	char a[32], b[32], text[72];
	if (open_end) {
		format_duration(text, sizeof text, lo, true);
	} else if (lo <= 0) {
		format_duration(text, sizeof text, -hi, false);
	} else {
		format_duration(a, sizeof a, lo, false);
		format_duration(b, sizeof b, hi, false);
		snprintf(text, sizeof text, "[%s, %s)", a, b);
	}
	fprintf(out, "%22s", text);
}

static void put_histogram(FILE *out, const char *what, const struct map *m, const struct map_entry *e)
{
	uint64_t rows[LOCK_HIST_ROWS] = {0};
	double lo[LOCK_HIST_ROWS] = {0}, hi[LOCK_HIST_ROWS] = {0};
	bool open_end[LOCK_HIST_ROWS] = {0};
	size_t nb = map_nbuckets(m);
	int64_t step = map_lhist_step(m);
	if (!e->value.buckets || !nb)
		return;
	for (size_t b = 0; b < nb; b++) {
		uint64_t n = e->value.buckets[b];
		if (!n)
			continue;
		size_t r;
		if (step > 0) {
			/* lhist from 0 (the recipe's): bucket 0 is (..., 0), never a latency */
			if (b == 0)
				continue;
			if (b == nb - 1) {
				r = LOCK_HIST_ROWS - 1;
				lo[r] = (double)(nb - 2) * (double)step;   /* the lhist's max */
				open_end[r] = true;
			} else {
				uint64_t k = (uint64_t)(b - 1);   /* lower bound in steps */
				r = 0;
				while (k) {
					r++;
					k >>= 1;
				}
				lo[r] = r ? (double)step * (double)(1ull << (r - 1)) : 0;
				hi[r] = (double)step * (double)(1ull << r);
			}
		} else {
			if (b < 2)
				continue;      /* negative and zero latencies: none from target_nsecs differences */
			r = b < LOCK_HIST_ROWS - 1 ? b : LOCK_HIST_ROWS - 2;
			lo[r] = (double)(1ull << (b - 2));
			hi[r] = (double)(1ull << (b - 1));
		}
		rows[r] += n;
	}
	size_t first = LOCK_HIST_ROWS, last = 0;
	uint64_t most = 0;
	for (size_t r = 0; r < LOCK_HIST_ROWS; r++)
		if (rows[r]) {
			first = r < first ? r : first;
			last = r;
			most = rows[r] > most ? rows[r] : most;
		}
	if (first == LOCK_HIST_ROWS)
		return;
	fprintf(out, "   %s:\n", what);
	for (size_t r = first; r <= last; r++) {
		if (!rows[r] && !lo[r] && !hi[r] && !open_end[r]) {
			/* an empty row inside the range: its bounds from its place */
			lo[r] = step > 0 ? (r ? ldexp((double)step, (int)r - 1) : 0) : ldexp(1, (int)r - 2);
			hi[r] = step > 0 ? ldexp((double)step, (int)r) : ldexp(1, (int)r - 1);
		}
		if (r == LOCK_HIST_ROWS - 1 && !rows[r])
			continue;
		if (step > 0 && !open_end[r]) {
			double max = (double)(nb - 2) * (double)step;
			if (lo[r] >= max)
				continue;     /* between the last row and [max, ...) */
			hi[r] = hi[r] < max ? hi[r] : max;
		}
		put_row_label(out, lo[r], hi[r], open_end[r]);
		size_t bar = (size_t)((rows[r] * LOCK_HIST_BAR + most - 1) / most);
		fprintf(out, " %6" PRIu64 " |", rows[r]);
		for (size_t i = 0; i < LOCK_HIST_BAR; i++)
			fputc(i < bar ? '@' : ' ', out);
		fputs("|\n", out);
	}
}

/* The site's line: the leaf frame's file (its last component) and line. */
static void put_site(FILE *out, const struct stack *s)
{
	const struct frame *f = s && s->nframes ? &s->frames[0] : NULL;
	if (!f) {
		fputs("an unknown site", out);
	} else if (f->file) {
		const char *base = strrchr(f->file, '/');
		text_put(out, base ? base + 1 : f->file, TEXT_FORM_TERMINAL);
		if (f->line > 0)
			fprintf(out, ":%d", f->line);
	} else {
		map_format_frame(f, out);
	}
}

/* The entry of hold for the lock at addr and operation op with the most
 * holds, or NULL. A hold map without a string key (or an entry whose string
 * is empty) holds the lock's holds whatever the operation. */
static const struct map_entry *holds_of(const struct map *hold, int64_t addr, const char *op)
{
	const struct map_entry *best = NULL;
	for (size_t i = 0; hold && i < map_len(hold); i++) {
		const struct map_entry *e = map_entry_at(hold, i);
		const struct map_key *k = first_key(hold, e, MAP_KEY_INT);
		const struct map_key *kind = first_key(hold, e, MAP_KEY_STR);
		if (kind && kind->s && *kind->s && (!op || strcmp(kind->s, op)))
			continue;
		if (k && k->i == addr && (!best || e->value.count > best->value.count))
			best = e;
	}
	return best;
}

/* A read hold is one reader's own: others may hold the lock meanwhile. */
static bool is_read_op(const char *op)
{
	if (!op)
		return false;
	size_t n = strlen(op);
	return strstr(op, "rdlock") || (n >= 4 && !strcmp(op + n - 4, "read"));
}

/* A row of the report: a wait entry less what @withdrawn took back from it
 * (the same keys), with its own bucket counts. */
struct lock_row {
	struct map_entry e;
	uint64_t *buckets;
	size_t order;      /* place in the map's own order, to break ties */
};

static int by_waits(const void *pa, const void *pb)
{
	const struct lock_row *a = pa, *b = pb;
	if (a->e.value.count != b->e.value.count)
		return a->e.value.count > b->e.value.count ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Whether withdrawn's entries can be taken out of wait's: a histogram of
 * the same kind, buckets and keys. */
static bool withdrawable(const struct map *wait, const struct map *withdrawn)
{
	return withdrawn && map_agg(withdrawn) == map_agg(wait) && map_nbuckets(withdrawn) == map_nbuckets(wait) &&
	       map_lhist_step(withdrawn) == map_lhist_step(wait) && map_nkeys(withdrawn) == map_nkeys(wait);
}

static void rows_free(struct lock_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].buckets);
	free(rows);
}

/* The rows of wait less withdrawn, most waits first; rows left with no
 * wait are dropped. NULL on out of memory (*n 0 when nothing is left). */
static struct lock_row *make_rows(const struct map *wait, const struct map *withdrawn, size_t *n)
{
	const struct map_entry **sorted = map_sorted(wait);
	size_t len = map_len(wait), nb = map_nbuckets(wait), kept = 0;
	struct lock_row *rows = sorted ? calloc(len, sizeof *rows) : NULL;
	*n = 0;
	if (!rows) {
		free(sorted);
		return NULL;
	}
	bool take_back = withdrawable(wait, withdrawn);
	for (size_t i = 0; i < len; i++) {
		const struct map_entry *e = sorted[len - 1 - i];
		struct lock_row *r = &rows[kept];
		r->e = *e;
		r->order = i;
		if (nb && e->value.buckets) {
			r->buckets = malloc(nb * sizeof *r->buckets);
			if (!r->buckets) {
				rows_free(rows, kept);
				free(sorted);
				return NULL;
			}
			memcpy(r->buckets, e->value.buckets, nb * sizeof *r->buckets);
			r->e.value.buckets = r->buckets;
		}
		const struct map_entry *w = take_back ? map_find(withdrawn, e->keys) : NULL;
		if (w) {
			uint64_t taken = w->value.count < r->e.value.count ? w->value.count : r->e.value.count;
			r->e.value.count -= taken;
			r->e.value.sum -= w->value.sum;
			for (size_t b = 0; r->buckets && w->value.buckets && b < nb; b++)
				r->buckets[b] -= w->value.buckets[b] < r->buckets[b] ? w->value.buckets[b] : r->buckets[b];
		}
		if (!r->e.value.count) {
			free(r->buckets);
			r->buckets = NULL;
			continue;
		}
		kept++;
	}
	free(sorted);
	qsort(rows, kept, sizeof *rows, by_waits);
	*n = kept;
	return rows;
}

/* Whether every value of an lhist entry lies below its first step (or
 * under 0): nothing is resolved of those waits but that bound. */
static bool all_below_step(const struct map *m, const struct map_entry *e)
{
	size_t nb = map_nbuckets(m);
	if (map_lhist_step(m) <= 0 || !e->value.buckets || nb < 3)
		return false;
	for (size_t b = 2; b < nb; b++)
		if (e->value.buckets[b])
			return false;
	return true;
}

/* "N waits, total T, p50 X, p99 Y" or, when none was resolved,
 * "N waits, each < STEP (below the probes' resolution)" */
static void put_wait_figures(FILE *out, const struct map *wait, const struct map_entry *e)
{
	uint64_t n = e->value.count;
	fprintf(out, "   %" PRIu64 " wait%s, ", n, n == 1 ? "" : "s");
	int64_t step = map_lhist_step(wait);
	if (all_below_step(wait, e)) {
		fputs(n == 1 ? "under " : "each under ", out);
		put_duration(out, (double)step, false);
		fputs(" (below the probes' resolution: no total)", out);
		return;
	}
	fputs("total ", out);
	if (step > 0 && e->value.sum < step) {
		/* the waits that were resolved are each >= step: a smaller sum
		 * is the others' noise around 0 */
		put_duration(out, -(double)step, false);
	} else {
		put_duration(out, (double)e->value.sum, false);
	}
	fputc(',', out);
	put_percentiles(out, wait, e);
}

void locks_report(const struct map *wait, const struct map *hold, const struct map *withdrawn, FILE *out,
		  size_t top, const char *title, const struct map_coverage *coverage)
{
	if (title) {
		text_put(out, title, TEXT_FORM_TERMINAL);
		fputc('\n', out);
	}
	size_t n = 0;
	struct lock_row *rows = map_len(wait) ? make_rows(wait, withdrawn, &n) : NULL;
	if (map_len(wait) && !rows) {
		fputs("(out of memory)\n", out);
		return;
	}
	if (!n) {
		/* a thread blocked since before the run never returns from the
		 * slow path: off-cpu shows it (waits in Mutex::lock) */
		fputs("no contended acquisition completed while the probes were armed\n"
		      "(threads blocked in a lock all along show in the off-cpu recipe)\n", out);
		rows_free(rows, n);
		return;
	}
	bool estimated = coverage && coverage->armed_share > 0 && coverage->armed_share < 1;
	size_t shown = top && top < n ? top : n;
	for (size_t r = 0; r < shown; r++) {
		const struct map_entry *e = &rows[r].e;
		const struct map_key *addr = first_key(wait, e, MAP_KEY_INT);
		const struct map_key *op = first_key(wait, e, MAP_KEY_STR);
		const struct map_key *site = first_key(wait, e, MAP_KEY_STACK);
		const char *op_name = op && op->s && *op->s ? op->s : NULL;
		fprintf(out, "#%zu contended lock ", r + 1);
		if (addr)
			fprintf(out, "0x%" PRIx64, (uint64_t)addr->i);
		else
			fputs("(address not recorded)", out);
		fputs(" taken at ", out);
		put_site(out, site ? site->stack : NULL);
		if (op_name) {
			fputs(" (", out);
			text_put(out, op_name, TEXT_FORM_TERMINAL);
			fputc(')', out);
		}
		fputc('\n', out);
		put_wait_figures(out, wait, e);
		const struct map_entry *h = addr ? holds_of(hold, addr->i, op_name) : NULL;
		bool read_hold = h && is_read_op(op_name);
		fputc('\n', out);
		if (h) {
			fputs(read_hold ? "   read-held" : "   held", out);
			put_percentiles(out, hold, h);
			fprintf(out, " (%" PRIu64 " hold%s%s)\n", h->value.count, h->value.count == 1 ? "" : "s",
				read_hold ? ", each reader's own" : "");
		} else if (hold) {
			fputs("   hold not measured\n", out);
		}
		if (estimated) {
			double est, lo, hi;
			map_coverage_estimate(coverage, (int64_t)e->value.count, &est, &lo, &hi);
			if (coverage->lower_bound)
				fprintf(out, "   est. >= %.0f waits in the run", lo);
			else
				fprintf(out, "   est. %.0f waits in the run (95%% %.0f–%.0f)", est, lo, hi);
			if (coverage->seconds > 0 && !coverage->lower_bound)
				fprintf(out, " · %.4g/s", est / coverage->seconds);
			fputc('\n', out);
		}
		const struct stack *s = site ? site->stack : NULL;
		if (s && s->nframes) {
			fputs("   in ", out);
			size_t shown_frames = 0;
			for (size_t i = 0; i < s->nframes && shown_frames < 3; i++) {
				const struct frame *f = &s->frames[i];
				if (i && f->function && s->frames[i - 1].function && !strcmp(f->function, s->frames[i - 1].function))
					continue;
				if (shown_frames++)
					fputs(" ← ", out);
				text_put(out, f->function ? f->function : "??", TEXT_FORM_TERMINAL);
			}
			fputc('\n', out);
		}
		put_histogram(out, "wait", wait, e);
		if (h)
			put_histogram(out, read_hold ? "read-held" : "held", hold, h);
	}
	if (shown < n)
		fprintf(out, "(%zu more call site%s of contended locks)\n", n - shown, n - shown == 1 ? "" : "s");
	if (estimated)
		fprintf(out, "probes armed for %.1f%% of the target's CPU time: counts are estimated\n"
			"from the waits seen, percentiles are theirs\n", 100 * coverage->armed_share);
	rows_free(rows, n);
}
