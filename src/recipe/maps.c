#include "recipe/maps.h"
#include "report/report_model.h"
#include "util/compare.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"
#include "util/stats.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct map {
	char *name;
	enum map_agg agg;
	size_t nkeys;
	int64_t lmin, lmax, lstep;
	size_t nbuckets;
	size_t max_keys;
	uint64_t dropped;
	int64_t window;               /* map_set_window */
	int weight_site;              /* map_set_weight (< 0: none) */
	double weight, sum_weight;

	struct map_entry **entries;   /* insertion order */
	size_t len, cap;

	struct slot_index index;      /* over entries, by keys_hash */
};

/* ---- key identity ------------------------------------------------------ */


static uint64_t hash_str(uint64_t h, const char *s)
{
	if (!s)
		return hash_fnv1a(h, "\xff", 1);
	return hash_fnv1a(h, s, strlen(s) + 1);
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static uint64_t frame_hash(uint64_t h, const struct frame *f)
{
	h = hash_str(h, f->function);
	h = hash_str(h, f->file);
	h = hash_fnv1a(h, &f->line, sizeof f->line);
	h = hash_fnv1a(h, &f->inlined, sizeof f->inlined);
	if (!f->function) {
		h = hash_str(h, f->module);
		h = hash_fnv1a(h, &f->pc, sizeof f->pc);
	}
	return h;
}

static bool frame_eq(const struct frame *a, const struct frame *b)
{
	if (!str_eq(a->function, b->function) || !str_eq(a->file, b->file) ||
	    a->line != b->line || a->inlined != b->inlined)
		return false;
	if (!a->function)
		return a->pc == b->pc && str_eq(a->module, b->module);
	return true;
}

static uint64_t keys_hash(const struct map *m, const struct map_key *k)
{
	uint64_t h = HASH_FNV1A_SEED;
	for (size_t i = 0; i < m->nkeys; i++) {
		unsigned char t = (unsigned char)k[i].type;
		h = hash_fnv1a(h, &t, 1);
		switch (k[i].type) {
		case MAP_KEY_INT:
			h = hash_fnv1a(h, &k[i].i, sizeof k[i].i);
			break;
		case MAP_KEY_STR:
			h = hash_str(h, k[i].s);
			break;
		case MAP_KEY_STACK: {
			size_t n = k[i].stack ? k[i].stack->nframes : 0;
			h = hash_fnv1a(h, &n, sizeof n);
			for (size_t f = 0; f < n; f++)
				h = frame_hash(h, &k[i].stack->frames[f]);
			break;
		}
		}
	}
	return h;
}

static bool key_eq(const struct map_key *a, const struct map_key *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case MAP_KEY_INT:
		return a->i == b->i;
	case MAP_KEY_STR:
		return str_eq(a->s, b->s);
	case MAP_KEY_STACK: {
		size_t na = a->stack ? a->stack->nframes : 0;
		size_t nb = b->stack ? b->stack->nframes : 0;
		if (na != nb)
			return false;
		for (size_t f = 0; f < na; f++)
			if (!frame_eq(&a->stack->frames[f], &b->stack->frames[f]))
				return false;
		return true;
	}
	}
	return false;
}


/* Total order on keys, used to break ties when sorting by value. */
static int key_cmp(const struct map_key *a, const struct map_key *b)
{
	if (a->type != b->type)
		return (int)a->type - (int)b->type;
	switch (a->type) {
	case MAP_KEY_INT:
		return compare_i64(a->i, b->i);
	case MAP_KEY_STR:
		return compare_text(a->s, b->s);
	case MAP_KEY_STACK: {
		size_t na = a->stack ? a->stack->nframes : 0;
		size_t nb = b->stack ? b->stack->nframes : 0;
		/* compare root first: that is how people read stacks */
		for (size_t i = 0; i < na && i < nb; i++) {
			const struct frame *fa = &a->stack->frames[na - 1 - i];
			const struct frame *fb = &b->stack->frames[nb - 1 - i];
			int c = compare_text(fa->function, fb->function);
			if (!c)
				c = compare_text(fa->file, fb->file);
			if (!c)
				c = compare_i64(fa->line, fb->line);
			if (!c)
				c = compare_u64(fa->pc, fb->pc);
			if (c)
				return c;
		}
		return compare_u64(na, nb);
	}
	}
	return 0;
}

/* ---- owned copies ------------------------------------------------------ */

static char *xstrdup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static struct stack *stack_dup(const struct stack *s, bool *oom)
{
	struct stack *d = calloc(1, sizeof *d);
	if (!d) {
		*oom = true;
		return NULL;
	}
	if (!s || s->nframes == 0)
		return d;
	d->frames = calloc(s->nframes, sizeof *d->frames);
	if (!d->frames) {
		free(d);
		*oom = true;
		return NULL;
	}
	d->nframes = s->nframes;
	for (size_t i = 0; i < s->nframes; i++) {
		d->frames[i] = s->frames[i];
		d->frames[i].function = xstrdup_or_null(s->frames[i].function, oom);
		d->frames[i].full_function = xstrdup_or_null(s->frames[i].full_function, oom);
		d->frames[i].file = xstrdup_or_null(s->frames[i].file, oom);
		d->frames[i].module = xstrdup_or_null(s->frames[i].module, oom);
	}
	return d;
}

static void stack_free_owned(const struct stack *cs)
{
	struct stack *s = (struct stack *)cs;
	if (!s)
		return;
	for (size_t i = 0; i < s->nframes; i++) {
		free((char *)s->frames[i].function);
		free((char *)s->frames[i].full_function);
		free((char *)s->frames[i].file);
		free((char *)s->frames[i].module);
	}
	free(s->frames);
	free(s);
}

static void entry_free(const struct map *m, struct map_entry *e)
{
	if (!e)
		return;
	struct map_key *k = (struct map_key *)e->keys;
	for (size_t i = 0; k && i < m->nkeys; i++) {
		if (k[i].type == MAP_KEY_STR)
			free((char *)k[i].s);
		else if (k[i].type == MAP_KEY_STACK)
			stack_free_owned(k[i].stack);
	}
	free(k);
	free((char *)e->value.s);
	free(e->value.buckets);
	if (e->value.live)
		free(e->value.live->v);
	free(e->value.live);
	free(e);
}

static struct map_entry *entry_new(const struct map *m, const struct map_key *keys)
{
	bool oom = false;
	struct map_entry *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	struct map_key *k = calloc(m->nkeys ? m->nkeys : 1, sizeof *k);
	e->keys = k;
	if (!k) {
		free(e);
		return NULL;
	}
	for (size_t i = 0; i < m->nkeys; i++) {
		k[i].type = keys[i].type;
		k[i].i = keys[i].i;
		if (keys[i].type == MAP_KEY_STR)
			k[i].s = xstrdup_or_null(keys[i].s ? keys[i].s : "", &oom);
		else if (keys[i].type == MAP_KEY_STACK)
			k[i].stack = stack_dup(keys[i].stack, &oom);
	}
	if (m->nbuckets) {
		e->value.buckets = calloc(m->nbuckets, sizeof *e->value.buckets);
		if (!e->value.buckets)
			oom = true;
	}
	if (m->agg == MAP_AGG_LIVE && !(e->value.live = calloc(1, sizeof *e->value.live)))
		oom = true;
	if (oom) {
		entry_free(m, e);
		return NULL;
	}
	return e;
}

/* ---- the map ----------------------------------------------------------- */

struct map *map_new(const char *name, enum map_agg agg, size_t nkeys,
		    int64_t lhist_min, int64_t lhist_max, int64_t lhist_step,
		    size_t max_keys)
{
	struct map *m = calloc(1, sizeof *m);
	if (m)
		m->weight_site = -1;
	if (!m)
		return NULL;
	m->name = strdup(name);
	if (!m->name) {
		free(m);
		return NULL;
	}
	m->agg = agg;
	m->nkeys = nkeys;
	m->max_keys = max_keys;
	if (agg == MAP_AGG_HIST) {
		m->nbuckets = MAP_HIST_BUCKETS;
	} else if (agg == MAP_AGG_LHIST) {
		m->lmin = lhist_min;
		m->lmax = lhist_max;
		m->lstep = lhist_step > 0 ? lhist_step : 1;
		uint64_t span = (uint64_t)lhist_max - (uint64_t)lhist_min;
		m->nbuckets = (size_t)((span + (uint64_t)m->lstep - 1) / (uint64_t)m->lstep) + 2;
	}
	return m;
}

void map_clear(struct map *m)
{
	for (size_t i = 0; i < m->len; i++)
		entry_free(m, m->entries[i]);
	m->len = 0;
	m->dropped = 0;
	slot_index_free(&m->index);
}

void map_free(struct map *m)
{
	if (!m)
		return;
	map_clear(m);
	free(m->entries);
	free(m->name);
	free(m);
}

const char *map_name(const struct map *m) { return m->name; }
enum map_agg map_agg(const struct map *m) { return m->agg; }
size_t map_nkeys(const struct map *m) { return m->nkeys; }
size_t map_len(const struct map *m) { return m->len; }
uint64_t map_dropped(const struct map *m) { return m->dropped; }
size_t map_nbuckets(const struct map *m) { return m->nbuckets; }

const struct map_entry *map_entry_at(const struct map *m, size_t i)
{
	return i < m->len ? m->entries[i] : NULL;
}

/* The entry with these keys, whose hash is h, or NULL. */
static struct map_entry *find_entry(const struct map *m, const struct map_key *keys, uint64_t h)
{
	struct slot_probe probe = slot_index_probe(&m->index, h);
	for (size_t i; (i = slot_probe_next(&m->index, &probe)) != SLOT_INDEX_NONE;) {
		bool eq = true;
		for (size_t k = 0; k < m->nkeys && eq; k++)
			eq = key_eq(&m->entries[i]->keys[k], &keys[k]);
		if (eq)
			return m->entries[i];
	}
	return NULL;
}

const struct map_entry *map_find(const struct map *m, const struct map_key *keys)
{
	return find_entry(m, keys, keys_hash(m, keys));
}

/* Finds or creates the entry for keys (map_nkeys() of them). Returns the
 * entry, or NULL if the map is full (the drop is counted) or out of memory. */
static struct map_entry *map_lookup_or_add(struct map *m, const struct map_key *keys)
{
	uint64_t h = keys_hash(m, keys);
	struct map_entry *e = find_entry(m, keys, h);
	if (e)
		return e;
	if (m->max_keys && m->len >= m->max_keys) {
		m->dropped++;
		return NULL;
	}
	struct map_entry **ne = array_grow(m->entries, &m->cap, m->len + 1, sizeof *ne);
	if (!ne)
		return NULL;
	m->entries = ne;
	e = entry_new(m, keys);
	if (!e)
		return NULL;
	if (slot_index_add(&m->index, h, m->len) < 0) {
		entry_free(m, e);
		return NULL;
	}
	m->entries[m->len++] = e;
	return e;
}

size_t map_hist_bucket(int64_t x)
{
	if (x < 0)
		return 0;
	if (x == 0)
		return 1;
	size_t b = 2;
	uint64_t v = (uint64_t)x;
	while (v > 1) {
		v >>= 1;
		b++;
	}
	return b;
}

/* Lower bound of a HIST bucket (bucket 0 has no lower bound: INT64_MIN). */
static int64_t map_hist_bucket_low(size_t b)
{
	if (b == 0)
		return INT64_MIN;
	if (b == 1)
		return 0;
	return (int64_t)(1ULL << (b - 2));
}

static size_t lhist_bucket(const struct map *m, int64_t x)
{
	if (x < m->lmin)
		return 0;
	if (x >= m->lmax)
		return m->nbuckets - 1;
	return (size_t)(((uint64_t)x - (uint64_t)m->lmin) / (uint64_t)m->lstep) + 1;
}

/* Applies the map's aggregation to an entry: x is ignored by COUNT, s is
 * used by MAP_AGG_STR only. Returns 0, or -1 on out of memory. */
static int map_entry_update(struct map *m, struct map_entry *e, int64_t x, const char *s)
{
	struct map_value *v = &e->value;
	bool first = v->count == 0;
	v->count++;
	if (m->window > 0 && m->window != v->last_window) {
		v->windows++;
		v->last_window = m->window;
	}
	if (m->weight_site >= 0) {
		size_t k = 0;
		while (k < v->nstrata && v->strata[k].id != m->weight_site)
			k++;
		if (k == v->nstrata && k < 4)
			v->strata[v->nstrata++] = (struct map_stratum){ .id = m->weight_site };
		if (k < v->nstrata) {
			v->strata[k].n++;
			v->strata[k].xsum = (int64_t)((uint64_t)v->strata[k].xsum + (uint64_t)x);
		} else {
			v->wide = true;
		}
		v->wn++;
		v->wcount += m->weight;
		v->wsum += m->sum_weight * (double)x;
		v->wxsum = (int64_t)((uint64_t)v->wxsum + (uint64_t)x);
	}
	switch (m->agg) {
	case MAP_AGG_COUNT:
		break;
	case MAP_AGG_SUM:
	case MAP_AGG_AVG:
		v->sum = (int64_t)((uint64_t)v->sum + (uint64_t)x);
		break;
	case MAP_AGG_MIN:
		if (first || x < v->min)
			v->min = x;
		break;
	case MAP_AGG_MAX:
		if (first || x > v->max)
			v->max = x;
		break;
	case MAP_AGG_HIST:
		v->buckets[map_hist_bucket(x)]++;
		v->sum = (int64_t)((uint64_t)v->sum + (uint64_t)x);   /* the total beside the shape: locks() prints it */
		break;
	case MAP_AGG_LHIST:
		v->buckets[lhist_bucket(m, x)]++;
		v->sum = (int64_t)((uint64_t)v->sum + (uint64_t)x);
		break;
	case MAP_AGG_INT:
		v->i = x;
		break;
	case MAP_AGG_STR: {
		char *d = strdup(s ? s : "");
		if (!d)
			return -1;
		free((char *)v->s);
		v->s = d;
		break;
	}
	case MAP_AGG_LIVE:
		v->sum = (int64_t)((uint64_t)v->sum + (uint64_t)x);
		break;
	}
	return 0;
}

int map_update_live(struct map *m, const struct map_key *keys, uint64_t addr, int64_t size, uint64_t seq)
{
	if (m->agg != MAP_AGG_LIVE)
		return map_update(m, keys, size, NULL);
	struct map_entry *e = map_lookup_or_add(m, keys);
	if (!e)
		return 0;
	struct map_live *l = e->value.live;
	if (ARRAY_PUSH(l->v, l->n, l->cap, ((struct map_live_record){ addr, size, seq, MAP_LIVE_UNTESTED })) < 0)
		return -1;
	return map_entry_update(m, e, size, NULL);
}

void map_live_tally(struct map *m)
{
	for (size_t i = 0; m->agg == MAP_AGG_LIVE && i < m->len; i++) {
		struct map_live *l = m->entries[i]->value.live;
		l->live = l->freed = l->unknown = 0;
		l->live_bytes = l->unknown_bytes = 0;
		for (size_t k = 0; k < l->n; k++) {
			const struct map_live_record *r = &l->v[k];
			if (r->state == MAP_LIVE_LIVE) {
				l->live++;
				l->live_bytes += r->size;
			} else if (r->state == MAP_LIVE_FREED) {
				l->freed++;
			} else {
				l->unknown++;
				l->unknown_bytes += r->size;
			}
		}
		l->tested = true;
	}
}

/* The live records of one entry by size class: few per call site, so a
 * short list searched in place. */
#define LIVE_CLASSES 16
struct live_classes {
	int64_t cls[LIVE_CLASSES], biggest[LIVE_CLASSES];
	uint64_t seen[LIVE_CLASSES];
	size_t n;
	bool ok;                 /* every live record had a class, and they fit */
};

struct class_total {
	int64_t cls;
	uint64_t seen;
};

static int cmp_class_total(const void *a, const void *b)
{
	const struct class_total *x = a, *y = b;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

static void live_classes_of(const struct map_live *l, int64_t (*class)(void *ctx, uint64_t addr), void *ctx,
			    struct live_classes *lc)
{
	lc->n = 0;
	lc->ok = true;
	for (size_t k = 0; lc->ok && k < l->n; k++) {
		const struct map_live_record *r = &l->v[k];
		if (r->state != MAP_LIVE_LIVE)
			continue;
		int64_t c = class(ctx, r->addr);
		size_t j = 0;
		while (j < lc->n && lc->cls[j] != c)
			j++;
		if (c < 0 || (j == lc->n && lc->n == LIVE_CLASSES)) {
			lc->ok = false;
		} else if (j == lc->n) {
			lc->cls[j] = c;
			lc->biggest[j] = r->size;
			lc->seen[j] = 1;
			lc->n++;
		} else {
			lc->seen[j]++;
			if (r->size > lc->biggest[j])
				lc->biggest[j] = r->size;
		}
	}
}

void map_live_bound(struct map *m, int64_t (*class)(void *ctx, uint64_t addr),
		    int64_t (*census)(void *ctx, int64_t cls), void *ctx)
{
	if (m->agg != MAP_AGG_LIVE || !m->len)
		return;
	struct live_classes *lcs = calloc(m->len, sizeof *lcs);
	struct class_total *totals = NULL;
	size_t ntotals = 0, totals_cap = 0;
	if (!lcs)
		return;   /* no bound: the estimates print as they are */
	for (size_t i = 0; i < m->len; i++) {
		struct map_live *l = m->entries[i]->value.live;
		l->bounded = false;
		if (!l->tested || !l->live)
			continue;
		live_classes_of(l, class, ctx, &lcs[i]);
		for (size_t j = 0; lcs[i].ok && j < lcs[i].n; j++) {
			struct class_total t = { lcs[i].cls[j], lcs[i].seen[j] };
			if (ARRAY_PUSH(totals, ntotals, totals_cap, t) < 0)
				goto out;
		}
	}
	/* the live records seen in each class, over all entries */
	if (ntotals)
		qsort(totals, ntotals, sizeof *totals, cmp_class_total);
	size_t nclasses = 0;
	for (size_t k = 0; k < ntotals; k++) {
		if (nclasses && totals[nclasses - 1].cls == totals[k].cls)
			totals[nclasses - 1].seen += totals[k].seen;
		else
			totals[nclasses++] = totals[k];
	}
	for (size_t i = 0; i < m->len; i++) {
		struct map_live *l = m->entries[i]->value.live;
		const struct live_classes *lc = &lcs[i];
		if (!l->tested || !l->live || !lc->ok)
			continue;
		uint64_t blocks = 0, seen = 0, of = 0;
		int64_t bytes = 0;
		double share = 0, low = 0, high = 0;
		bool ok = true;
		for (size_t j = 0; ok && j < lc->n; j++) {
			int64_t n = census(ctx, lc->cls[j]);
			struct class_total key = { lc->cls[j], 0 };
			const struct class_total *t = bsearch(&key, totals, nclasses, sizeof *totals, cmp_class_total);
			if (n < 0 || !t) {
				ok = false;
				break;
			}
			double class_bytes = (double)n * (double)lc->biggest[j], lo, hi;
			blocks += (uint64_t)n;
			bytes += n * lc->biggest[j];
			stats_wilson95((double)lc->seen[j], (double)t->seen, &lo, &hi);
			share += class_bytes * (double)lc->seen[j] / (double)t->seen;
			low += class_bytes * lo;
			high += class_bytes * hi;
			seen += lc->seen[j];
			of += t->seen;
		}
		if (!ok)
			continue;
		l->bounded = true;
		l->bound_blocks = blocks;
		l->bound_bytes = bytes;
		/* the bytes seen live are live, whatever the census says */
		l->share_bytes = fmax(share, (double)l->live_bytes);
		l->share_low = fmax(low, (double)l->live_bytes);
		l->share_high = fmax(high, (double)l->live_bytes);
		l->share_seen = seen;
		l->share_of = of;
	}
out:
	free(totals);
	free(lcs);
}

int map_update(struct map *m, const struct map_key *keys, int64_t x, const char *s)
{
	struct map_entry *e = map_lookup_or_add(m, keys);
	if (!e)
		return 0;
	return map_entry_update(m, e, x, s);
}

int map_add_weight(struct map *m, const struct map_key *keys, int64_t x)
{
	struct map_entry *e = map_lookup_or_add(m, keys);
	if (!e)
		return 0;
	if (e->value.count == 0)
		return map_entry_update(m, e, x, NULL);
	e->value.sum = (int64_t)((uint64_t)e->value.sum + (uint64_t)x);
	return 0;
}

void map_set_window(struct map *m, int64_t window)
{
	m->window = window;
}

void map_set_weight(struct map *m, int site, double weight, double sum_weight)
{
	m->weight_site = site;
	m->weight = weight;
	m->sum_weight = sum_weight > 0 ? sum_weight : weight;
}

int64_t map_lhist_step(const struct map *m)
{
	return m->agg == MAP_AGG_LHIST ? m->lstep : 0;
}

bool map_quantile(const struct map *m, const struct map_entry *e, double q, double *value, bool *beyond)
{
	const struct map_value *v = &e->value;
	*beyond = false;
	if ((m->agg != MAP_AGG_HIST && m->agg != MAP_AGG_LHIST) || !v->count || !v->buckets)
		return false;
	double want = q * (double)v->count, seen = 0;
	for (size_t b = 0; b < m->nbuckets; b++) {
		double n = (double)v->buckets[b];
		if (!n || seen + n < want) {
			seen += n;
			continue;
		}
		double lo, hi;
		if (m->agg == MAP_AGG_HIST) {
			/* [0] negative, [1] zero, [b] [2^(b-2), 2^(b-1)) */
			if (b < 2) {
				*value = b == 0 ? -1 : 0;
				return true;
			}
			lo = ldexp(1, (int)b - 2);
			hi = ldexp(1, (int)b - 1);
		} else if (b == 0) {
			*value = (double)m->lmin;   /* (..., min): an upper bound, rare for latencies */
			return true;
		} else if (b == m->nbuckets - 1) {
			*value = (double)m->lmax;
			*beyond = true;
			return true;
		} else {
			lo = (double)m->lmin + (double)(b - 1) * (double)m->lstep;
			hi = lo + (double)m->lstep;
		}
		*value = lo + (hi - lo) * (want - seen) / n;
		return true;
	}
	return false;
}

int64_t map_entry_number(const struct map *m, const struct map_entry *e)
{
	const struct map_value *v = &e->value;
	switch (m->agg) {
	case MAP_AGG_COUNT:
	case MAP_AGG_HIST:
	case MAP_AGG_LHIST:
		return (int64_t)v->count;
	case MAP_AGG_SUM:
		return v->sum;
	case MAP_AGG_MIN:
		return v->min;
	case MAP_AGG_MAX:
		return v->max;
	case MAP_AGG_AVG:
		return v->count ? v->sum / (int64_t)v->count : 0;
	case MAP_AGG_INT:
		return v->i;
	case MAP_AGG_STR:
		return 0;
	case MAP_AGG_LIVE:
		return v->live && v->live->tested ? v->live->live_bytes : v->sum;
	}
	return 0;
}

static const struct map *sort_map;   /* qsort has no context argument in C11 */

static int entry_cmp(const void *pa, const void *pb)
{
	const struct map_entry *a = *(const struct map_entry *const *)pa;
	const struct map_entry *b = *(const struct map_entry *const *)pb;
	int c;
	if (sort_map->agg == MAP_AGG_STR) {
		c = compare_text(a->value.s, b->value.s);
	} else {
		int64_t x = map_entry_number(sort_map, a), y = map_entry_number(sort_map, b);
		c = compare_i64(x, y);
	}
	for (size_t k = 0; !c && k < sort_map->nkeys; k++)
		c = key_cmp(&a->keys[k], &b->keys[k]);
	return c;
}

const struct map_entry **map_sorted(const struct map *m)
{
	if (!m->len)
		return NULL;
	const struct map_entry **v = malloc(m->len * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < m->len; i++)
		v[i] = m->entries[i];
	sort_map = m;
	qsort(v, m->len, sizeof *v, entry_cmp);
	sort_map = NULL;
	return v;
}

/* ---- text output ------------------------------------------------------- */

void map_format_frame(const struct frame *f, FILE *out)
{
	if (f->function) {
		text_put(out, f->function, TEXT_FORM_TERMINAL);
	} else if (f->module) {
		fprintf(out, "0x%" PRIx64 " in ", f->pc);
		text_put(out, f->module, TEXT_FORM_TERMINAL);
	} else {
		fprintf(out, "0x%" PRIx64, f->pc);
	}
	if (f->file) {
		fputs(" (", out);
		text_put(out, f->file, TEXT_FORM_TERMINAL);
		if (f->line > 0)
			fprintf(out, ":%d", f->line);
		fputc(')', out);
	}
	if (f->inlined)
		fputs(" [inlined]", out);
}

static bool keys_have_stack(const struct map *m)
{
	for (size_t i = 0; i < m->nkeys; i++)
		if (m->len && m->entries[0]->keys[i].type == MAP_KEY_STACK)
			return true;
	return false;
}

/* A run of this many runtime frames (the Rust toolchain's, a
 * dependency's, the C library's: report_frame_is_user) or more prints as
 * one line, as the panic report folds them: the thread start and std's
 * plumbing took 15 of a stack's 17 lines. */
#define FOLD_RUNTIME_RUN 2

/* A stack key, leaf first, one frame a line; the leaf is always shown. */
static void put_stack_folded(FILE *out, const struct stack *s)
{
	size_t n = s ? s->nframes : 0, run = 0;
	for (size_t f = 0; f <= n; f++) {
		bool runtime = f < n && f > 0 && !report_frame_is_user(&s->frames[f]);
		if (runtime) {
			run++;
			continue;
		}
		if (run >= FOLD_RUNTIME_RUN) {
			fprintf(out, "        … %zu runtime frames\n", run);
		} else {
			for (size_t r = f - run; r < f; r++) {
				fputs("        ", out);
				map_format_frame(&s->frames[r], out);
				fputc('\n', out);
			}
		}
		run = 0;
		if (f == n)
			break;
		fputs("        ", out);
		map_format_frame(&s->frames[f], out);
		fputc('\n', out);
	}
}

static void print_keys(const struct map *m, const struct map_entry *e, FILE *out)
{
	fprintf(out, "@%s", m->name);
	if (!m->nkeys)
		return;
	fputc('[', out);
	for (size_t i = 0; i < m->nkeys; i++) {
		const struct map_key *k = &e->keys[i];
		if (i)
			fputs(k->type == MAP_KEY_STACK ? "," : ", ", out);
		switch (k->type) {
		case MAP_KEY_INT:
			fprintf(out, "%" PRId64, k->i);
			break;
		case MAP_KEY_STR:
			text_put(out, k->s, TEXT_FORM_TERMINAL);
			break;
		case MAP_KEY_STACK:
			fputc('\n', out);
			put_stack_folded(out, k->stack);
			break;
		}
	}
	fputc(']', out);
}

/* 1024-based suffixes, as bpftrace prints histogram bounds. */
static void fmt_pow(char *buf, size_t n, int64_t v)
{
	static const char suffix[] = " KMGTPE";
	int s = 0;
	while (v && v % 1024 == 0 && s < 6) {
		v /= 1024;
		s++;
	}
	if (s)
		snprintf(buf, n, "%" PRId64 "%c", v, suffix[s]);
	else
		snprintf(buf, n, "%" PRId64, v);
}

static void print_bar_line(FILE *out, const char *label, uint64_t n, uint64_t maxn)
{
	enum { WIDTH = 40 };   /* the line stays within 80 columns */
	size_t bar = maxn ? (size_t)(n * WIDTH / maxn) : 0;
	fprintf(out, "%-20s %8" PRIu64 " |", label, n);
	for (size_t i = 0; i < WIDTH; i++)
		fputc(i < bar ? '@' : ' ', out);
	fputs("|\n", out);
}

static void print_histogram(const struct map *m, const struct map_value *v, FILE *out)
{
	size_t first = m->nbuckets, last = 0;
	uint64_t maxn = 0;
	for (size_t b = 0; b < m->nbuckets; b++) {
		if (!v->buckets[b])
			continue;
		if (first == m->nbuckets)
			first = b;
		last = b;
		if (v->buckets[b] > maxn)
			maxn = v->buckets[b];
	}
	for (size_t b = first; b <= last && first < m->nbuckets; b++) {
		char label[64], lo[24], hi[24];
		if (m->agg == MAP_AGG_HIST) {
			if (b == 0) {
				snprintf(label, sizeof label, "(..., 0)");
			} else if (b <= 2) {
				snprintf(label, sizeof label, "[%d]", b == 1 ? 0 : 1);
			} else {
				fmt_pow(lo, sizeof lo, map_hist_bucket_low(b));
				if (b + 1 < MAP_HIST_BUCKETS)
					fmt_pow(hi, sizeof hi, map_hist_bucket_low(b + 1));
				else
					snprintf(hi, sizeof hi, "...");
				snprintf(label, sizeof label, "[%s, %s)", lo, hi);
			}
		} else {
			if (b == 0) {
				snprintf(label, sizeof label, "(..., %" PRId64 ")", m->lmin);
			} else if (b == m->nbuckets - 1) {
				snprintf(label, sizeof label, "[%" PRId64 ", ...)", m->lmax);
			} else {
				int64_t low = m->lmin + (int64_t)(b - 1) * m->lstep;
				int64_t high = low + m->lstep;
				if (high > m->lmax)
					high = m->lmax;
				snprintf(label, sizeof label, "[%" PRId64 ", %" PRId64 ")", low, high);
			}
		}
		print_bar_line(out, label, v->buckets[b], maxn);
	}
}

/* The 95% Poisson interval on a count x (Wilson-Hilferty) at quantile z. */
static void poisson_interval(double x, double z, double *low, double *high)
{
	*low = 0;
	if (x > 0) {
		double c = 1 - 1 / (9 * x) - z / (3 * sqrt(x));
		*low = c > 0 ? x * c * c * c : 0;
	}
	double x1 = x + 1;
	double c1 = 1 - 1 / (9 * x1) + z / (3 * sqrt(x1));
	*high = x1 * c1 * c1 * c1;
}

void map_estimate(int64_t n, double coverage, double *estimate, double *low, double *high)
{
	double x = n > 0 ? (double)n : 0;
	double lo, hi;
	poisson_interval(x, 1.959964, &lo, &hi);
	if (x == 0)
		hi = 3.689;
	*estimate = x / coverage;
	*low = lo / coverage;
	*high = hi / coverage;
}

bool map_coverage_too_few_windows(const struct map_coverage *c, const struct map_value *v)
{
	return c->windows > 0 && v->windows < MAP_MIN_ESTIMATE_WINDOWS;
}

void map_coverage_estimate(const struct map_coverage *c, int64_t n, double *estimate, double *low, double *high)
{
	map_estimate(n, c->armed_share, estimate, low, high);
	if (c->windows >= 2 && c->dispersion > 1 && n > 0) {
		/* Clustered counts: the count's relative spread is sqrt(d / n),
		 * the rate known from `windows` samples (log scale: the ends
		 * stay positive). */
		double spread = stats_t975(c->windows - 1) * sqrt(c->dispersion / (double)n);
		*low = fmin(*low, *estimate * exp(-spread));
		*high = fmax(*high, *estimate * exp(spread));
	}
	if (c->share_high > 0)
		*low *= c->armed_share / c->share_high;
	if (c->share_low > 0)
		*high *= c->armed_share / c->share_low;
	/* what was measured happened: the whole run had at least that */
	if (*low < (double)n)
		*low = (double)n;
	if (*high < *low)
		*high = *low;
}

/* " · R/s (95% L–H)" when the run's length is known. */
static void print_rate(FILE *out, double est, double lo, double hi, const struct map_coverage *c)
{
	if (c->seconds <= 0)
		return;
	if (c->lower_bound)
		fprintf(out, " · at least %.4g/s", lo / c->seconds);
	else
		fprintf(out, " · %.4g/s (95%% %.4g–%.4g)", est / c->seconds, lo / c->seconds, hi / c->seconds);
}

bool map_counted_estimate(const struct map_value *v, bool is_sum, const struct map_coverage *c, double *estimate)
{
	if (!c || !c->nsite_scales || !v->wn)
		return false;
	double share = c->armed_share > 0 ? c->armed_share : 1;
	/* each stratum's hits times what one stands for there; a key fed by
	 * more than 4 strata: the weights as they were when it was updated */
	double wcount = v->wcount, wsum = v->wsum;
	if (!v->wide) {
		wcount = wsum = 0;
		for (size_t k = 0; k < v->nstrata; k++) {
			size_t id = (size_t)v->strata[k].id;
			double scale = id < c->nsite_scales ? c->site_scales[id] : 0;
			double sum_scale = c->site_sum_scales && id < c->nsite_scales && c->site_sum_scales[id] > 0
						   ? c->site_sum_scales[id] : scale;
			wcount += (double)v->strata[k].n * scale;
			wsum += (double)v->strata[k].xsum * sum_scale;
		}
	}
	*estimate = is_sum ? wsum + (double)(v->sum - v->wxsum) / share
			   : wcount + (double)(v->count - v->wn) / share;
	return true;
}

/* Counted in the target: each hit stands for an equal share of the
 * calls counted in its stratum (a site's counter slot, mostly one
 * thread: c->site_scales), so a key's estimate is its hits times that,
 * stratum by stratum; its updates without one (sites with no counter)
 * are scaled by the armed share as usual. A map that
 * took every weighted hit of a fully counted run prints the count itself.
 * The interval is the Poisson one of the updates behind the estimate, on
 * its relative spread (the calls between two hits are attributed to the
 * first's key: the key of a hit after a long off window stands for those,
 * docs/tracing.md, "Counted in the target"). A sum weighs each value. */
bool map_value_only_counted(const struct map_value *v, bool is_sum, const struct map_coverage *c, double *value)
{
	/* every update the one event of a site that was only counted (its
	 * whole-site stratum, once): the count itself */
	bool only_counted = c && c->counted_no_stops && v->wn == v->count && !v->wide && v->nstrata > 0;
	for (size_t k = 0; only_counted && k < v->nstrata; k++)
		only_counted = v->strata[k].n == 1 && v->strata[k].id % MAP_STRATA_PER_SITE == MAP_STRATA_PER_SITE - 1;
	*value = 0;
	return only_counted && map_counted_estimate(v, is_sum, c, value);
}

static void print_counted(FILE *out, const struct map_value *v, int64_t n, bool is_sum, const struct map_coverage *c)
{
	double est = 0;
	if (map_value_only_counted(v, is_sum, c, &est)) {
		double calls = 0;
		if (is_sum && map_value_only_counted(v, false, c, &calls))
			fprintf(out, " %.0f summed in the target over %.0f calls (exact; no breakpoint: the probe only "
				"counts and sums)", est, calls);
		else
			fprintf(out, " %.0f counted in the target (exact; no breakpoint: the probe only counts)", est);
		if (c->seconds > 0)
			fprintf(out, " · %.4g/s", est / c->seconds);
		fputc('\n', out);
		return;
	}
	if (!is_sum && c->counted_all && v->wn == v->count && v->wn >= c->counted_seen) {
		fprintf(out, " %.0f counted in the target (exact; %" PRId64 " seen at the breakpoints)", c->counted, n);
		if (c->seconds > 0)
			fprintf(out, " · %.4g/s", c->counted / c->seconds);
		fputc('\n', out);
		return;
	}
	double unweighted = (double)(n - (int64_t)v->wn);
	double share = c->armed_share > 0 ? c->armed_share : 1;
	est = 0;
	map_counted_estimate(v, is_sum, c, &est);
	double lo, hi;
	poisson_interval((double)n, 1.959964, &lo, &hi);
	double rel_lo = n > 0 ? lo / (double)n : 0, rel_hi = n > 0 ? hi / (double)n : 0;
	if (is_sum)
		fprintf(out, " %" PRId64 " measured in %" PRId64 " updates", v->sum, n);
	else
		fprintf(out, " %" PRId64 " measured", n);
	fprintf(out, " · est. %.0f (95%% %.0f–%.0f)", est, est * rel_lo, est * rel_hi);
	if (c->seconds > 0)
		fprintf(out, " · %.4g/s", est / c->seconds);
	if (v->wn == (uint64_t)n)
		fprintf(out, ": its hits' share of the calls counted in the target\n");
	else
		fprintf(out, ": %" PRIu64 " hits weighed by the calls counted in the target, %.0f scaled by the "
			"armed share (%.2g%%)\n", v->wn, unweighted, 100 * share);
}

/* A count: the Poisson interval on it over the armed share. A sum (bytes
 * of sampled allocations): the interval of its number of updates, scaled
 * by their mean — it treats the values of one entry as alike, and says
 * nothing of their spread. */
static void print_estimate(FILE *out, const struct map_value *v, bool is_sum, const struct map_coverage *c)
{
	int64_t n = (int64_t)v->count;
	if (c->nsite_scales > 0 && v->wn > 0) {
		print_counted(out, v, n, is_sum, c);
		return;
	}
	double est, lo, hi;
	map_coverage_estimate(c, n, &est, &lo, &hi);
	if (is_sum && n > 0) {
		double mean = (double)v->sum / (double)n;
		est *= mean;
		lo *= mean;
		hi *= mean;
		fprintf(out, " %" PRId64 " measured in %" PRId64 " updates", v->sum, n);
	} else {
		fprintf(out, " %" PRId64 " measured", is_sum ? v->sum : n);
	}
	if (map_coverage_too_few_windows(c, v)) {
		fprintf(out, " · est. at least %" PRId64 " (what was measured: seen in only %u of %zu armed windows, too few "
			"to extrapolate, its calls may have come in bursts those windows caught), probes armed %.2g%% of the "
			"target's CPU time\n", is_sum ? v->sum : n, (unsigned)v->windows, c->windows, 100 * c->armed_share);
		return;
	}
	if (c->lower_bound)
		fprintf(out, " · est. at least %.0f (95%%; too little of the target's CPU time between calls to time them "
			"against our own stops)", lo);
	else
		fprintf(out, " · est. %.0f (95%% %.0f–%.0f)", est, lo, hi);
	print_rate(out, est, lo, hi, c);
	fprintf(out, ", probes armed %.2g%% of the target's CPU time\n", 100 * c->armed_share);
}

/* A live() entry: what is still allocated of the allocations recorded,
 * and, under a budget, the whole run's retained bytes: the live count's
 * Poisson interval over the armed share, scaled by the live allocations'
 * mean size. Unknown ones are counted apart, never as live. */
/* The estimate scales what was seen by the armed share, as if these
 * allocations came evenly over the target's CPU time. When even its lower
 * bound is more than the heap holds of their sizes, or than this stack's
 * share of those blocks can be, they did not (a burst the probes saw: a
 * leak made at start; or blocks that live a short while, the last ones
 * made surviving): this stack's share of the heap's blocks of its sizes is
 * printed instead, by its part of the live allocations seen in them. */
enum live_scaling { SCALING_UNEVEN, SCALING_FEW_WINDOWS, SCALING_UNTIMED };

static void print_live_capped(FILE *out, const struct map_live *l, double scaled, double scaled_low,
			      enum live_scaling why, const struct map_coverage *c)
{
	fprintf(out, " · est. %.0f bytes retained (95%% %.0f–%.0f): the heap holds %" PRIu64 " block%s of the sizes "
		"seen here; this stack's share of them by the %" PRIu64 " of %" PRIu64 " live allocation%s seen in "
		"them; ", l->share_bytes, l->share_low, l->share_high, l->bound_blocks, l->bound_blocks == 1 ? "" : "s",
		l->share_seen, l->share_of, l->share_of == 1 ? "" : "s");
	if (why == SCALING_FEW_WINDOWS) {
		fputs("too few armed windows saw them to scale them by the share the allocations were sampled", out);
		return;
	}
	if (why == SCALING_UNTIMED) {
		fprintf(out, "scaled by the %.2g%% the allocations were sampled they would be at least %.0f (too little "
			"of the target's CPU time between calls to time them against our own stops)",
			100 * c->armed_share, scaled_low);
		return;
	}
	fprintf(out, "scaled by the %.2g%% the allocations were sampled they would be ", 100 * c->armed_share);
	if (c->lower_bound)
		fprintf(out, "at least %.0f, so", scaled_low);
	else
		fprintf(out, "%.0f, so", scaled);
	fputs(" the sampled ones do not stand for the others at that share (made in a burst, e.g. at its start; "
	      "freed soon after; made before the run; or by a thread that allocates rarely, which the probes see "
	      "more often)", out);
}

/* What print_live says of an entry's whole-run retained bytes: kind, and
 * the figures it prints. */
struct live_estimate {
	enum { LIVE_MEASURED, LIVE_CAPPED, LIVE_AT_LEAST, LIVE_SCALED } kind;
	enum live_scaling why;      /* LIVE_CAPPED */
	double est, lo, hi, mean;   /* the live count's estimate and interval; the mean live size */
	double bound;               /* what the heap holds of these sizes (INFINITY: unknown) */
};

static struct live_estimate live_estimate_of(const struct map_value *v, const struct map_coverage *c)
{
	struct live_estimate le = { .kind = LIVE_MEASURED, .bound = INFINITY };
	const struct map_live *l = v->live;
	if (!l || !l->tested || !c || !(c->armed_share > 0 && c->armed_share < 1) || l->live == 0)
		return le;
	le.mean = (double)l->live_bytes / (double)l->live;
	map_coverage_estimate(c, (int64_t)l->live, &le.est, &le.lo, &le.hi);
	if (l->bounded)
		le.bound = (double)l->bound_bytes;
	/* seen in few windows: a burst, as when the bound is exceeded */
	bool burst = map_coverage_too_few_windows(c, v);
	/* the scaled estimate outside the share's interval: the census
	 * is read, the scaling assumed (blocks made before the run are
	 * not in it: with a share's low end of 7 MB the demo's trees were
	 * scaled to 2.4 MB (95% 0.6-10.5) for the 14 MB they held) */
	bool uneven = le.lo * le.mean > le.bound ||
		      (l->bounded && (le.est * le.mean > l->share_high || le.est * le.mean < l->share_low));
	if (uneven || (l->bounded && (burst || c->lower_bound))) {
		le.kind = LIVE_CAPPED;
		le.why = uneven ? SCALING_UNEVEN : burst ? SCALING_FEW_WINDOWS : SCALING_UNTIMED;
	} else {
		le.kind = c->lower_bound ? LIVE_AT_LEAST : LIVE_SCALED;
	}
	return le;
}

bool map_live_estimate(const struct map_value *v, const struct map_coverage *c, double *bytes)
{
	struct live_estimate le = live_estimate_of(v, c);
	switch (le.kind) {
	case LIVE_CAPPED:
		*bytes = v->live->share_bytes;
		return true;
	case LIVE_AT_LEAST:
		*bytes = le.lo * le.mean;
		return true;
	case LIVE_SCALED:
		*bytes = fmin(le.est * le.mean, le.bound);
		return true;
	case LIVE_MEASURED:
		break;
	}
	*bytes = v->live && v->live->tested ? (double)v->live->live_bytes : (double)v->sum;
	return false;
}

static void print_live(FILE *out, const struct map_value *v, const struct map_coverage *c)
{
	const struct map_live *l = v->live;
	if (!l || !l->tested) {
		fprintf(out, " %" PRIu64 " allocations recorded, %" PRId64 " bytes (liveness not tested yet)\n",
			v->count, v->sum);
		return;
	}
	fprintf(out, " %" PRId64 " bytes live in %" PRIu64 " of %" PRIu64 " sampled allocations (%" PRIu64 " freed, "
		"%" PRIu64 " unknown: %" PRId64 " bytes)", l->live_bytes, l->live, v->count, l->freed, l->unknown,
		l->unknown_bytes);
	struct live_estimate le = live_estimate_of(v, c);
	double mean = le.mean, bound = le.bound;
	switch (le.kind) {
	case LIVE_MEASURED:
		break;
	case LIVE_CAPPED:
		print_live_capped(out, l, le.est * mean, le.lo * mean, le.why, c);
		break;
	case LIVE_AT_LEAST:
	case LIVE_SCALED:
		if (le.kind == LIVE_AT_LEAST)
			fprintf(out, " · est. at least %.0f bytes retained (95%%)", le.lo * mean);
		else
			/* the bytes seen live are retained whatever the rest did */
			fprintf(out, " · est. %.0f bytes retained (95%% %.0f–%.0f)", fmin(le.est * mean, bound),
				fmax(le.lo * mean, (double)l->live_bytes), fmin(le.hi * mean, bound));
		if (le.hi * mean > bound)
			fprintf(out, ", at most %.0f: the heap holds %" PRIu64 " block%s of the sizes seen here", bound,
				l->bound_blocks, l->bound_blocks == 1 ? "" : "s");
		fprintf(out, ", allocations sampled %.2g%% of the target's CPU time", 100 * c->armed_share);
		break;
	}
	fputc('\n', out);
}

static bool map_fed_by_site(const struct map *m, size_t site)
{
	for (size_t i = 0; i < m->len; i++) {
		const struct map_value *v = &m->entries[i]->value;
		for (size_t k = 0; k < v->nstrata; k++)
			if ((size_t)v->strata[k].id / MAP_STRATA_PER_SITE == site)
				return true;
	}
	return false;
}

/* The calls of a site this map's entries hold none of (map_apart), under
 * them: the map's total would be short of them unsaid. */
static void print_aparts(const struct map *m, FILE *out, const struct map_coverage *c)
{
	bool is_sum = m->agg == MAP_AGG_SUM;
	for (size_t i = 0; i < c->naparts; i++) {
		const struct map_apart *a = &c->aparts[i];
		double value = is_sum ? a->sum : a->calls;
		if (value <= 0 || !map_fed_by_site(m, a->site))
			continue;
		if (is_sum)
			fprintf(out, "@%s: and %.0f", m->name, value);
		else
			fprintf(out, "@%s: and %.0f calls", m->name, value);
		if (c->seconds > 0)
			fprintf(out, " (%.4g/s)", value / c->seconds);
		if (is_sum)
			fprintf(out, " summed over %.0f calls", a->calls);
		fputs(" of ", out);
		text_put(out, a->function, TEXT_FORM_TERMINAL);
		fputs(", counted in the target, by threads no hit saw (", out);
		text_put(out, a->threads && a->threads[0] ? a->threads : "?", TEXT_FORM_TERMINAL);
		fputs("): like none a hit came from, so in no entry above\n", out);
	}
}

void map_print(const struct map *m, FILE *out, size_t top, const struct map_coverage *coverage)
{
	const struct map_entry **sorted = map_sorted(m);
	size_t start = 0;
	if (top && top < m->len)
		start = m->len - top;
	bool hist = m->agg == MAP_AGG_HIST || m->agg == MAP_AGG_LHIST;
	bool stacks = keys_have_stack(m);
	if (!m->len && !m->dropped)
		fprintf(out, "@%s: (no events)\n", m->name);
	for (size_t i = start; sorted && i < m->len; i++) {
		const struct map_entry *e = sorted[i];
		print_keys(m, e, out);
		fputs(":", out);
		if (hist) {
			fputc('\n', out);
			print_histogram(m, &e->value, out);
			fputc('\n', out);
			continue;
		}
		if (m->agg == MAP_AGG_STR) {
			fputc(' ', out);
			text_put(out, e->value.s, TEXT_FORM_TERMINAL);
			fputc('\n', out);
		} else if (m->agg == MAP_AGG_LIVE) {
			print_live(out, &e->value, coverage);
		} else if ((m->agg == MAP_AGG_COUNT || m->agg == MAP_AGG_SUM) && coverage &&
			   ((coverage->armed_share > 0 && coverage->armed_share < 1) ||
			    (coverage->counted_no_stops && e->value.wn > 0)))
			print_estimate(out, &e->value, m->agg == MAP_AGG_SUM, coverage);
		else
			fprintf(out, " %" PRId64 "\n", map_entry_number(m, e));
		if (stacks)
			fputc('\n', out);
	}
	free(sorted);
	if (coverage && (m->agg == MAP_AGG_COUNT || m->agg == MAP_AGG_SUM))
		print_aparts(m, out, coverage);
	if (m->dropped)
		fprintf(out, "@%s: %" PRIu64 " updates dropped: the map reached max_keys (%zu); "
			"raise it with 'set max_keys N'\n", m->name, m->dropped, m->max_keys);
}

/* One row's key as table text: keys joined by ", ", a stack as its leaf. */
static void format_row_key(const struct map *m, const struct map_entry *e, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < m->nkeys && used < size; i++) {
		const struct map_key *k = &e->keys[i];
		const char *sep = i ? ", " : "";
		int w;
		if (k->type == MAP_KEY_INT)
			w = snprintf(buf + used, size - used, "%s%" PRId64, sep, k->i);
		else if (k->type == MAP_KEY_STR)
			w = snprintf(buf + used, size - used, "%s%s", sep, k->s ? k->s : "");
		else
			w = snprintf(buf + used, size - used, "%s%s", sep,
				     k->stack && k->stack->nframes && k->stack->frames[0].function
					     ? k->stack->frames[0].function : "?");
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

enum { TABLE_MAX_MAPS = 8, TABLE_CELL = 32 };

/* Whether e, of a count map under a budget, has hits weighed by the calls
 * counted in the target: true with their whole-run estimate (the est.
 * column's figure). */
static bool table_counted(const struct map *m, const struct map_entry *e, const struct map_coverage *c, double *est)
{
	return m->agg == MAP_AGG_COUNT && c && c->nsite_scales > 0 && e->value.wn > 0 && c->armed_share > 0 &&
	       c->armed_share < 1 && map_counted_estimate(&e->value, false, c, est);
}

/* A table row's weight: the first map's value, or that estimate (so the
 * share and the order agree with the est. column). */
static double table_weight(const struct map *m, const struct map_entry *e, const struct map_coverage *c)
{
	double est;
	return table_counted(m, e, c, &est) ? est : (double)map_entry_number(m, e);
}

struct table_row_order {
	double weight;
	size_t at;     /* in map_sorted's order: ties keep it */
	const struct map_entry *e;
};

static int by_weight_then_order(const void *a, const void *b)
{
	const struct table_row_order *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

void map_table(const struct map *const *maps, size_t nmaps, FILE *out, const struct map_coverage *coverage)
{
	if (!nmaps || nmaps > TABLE_MAX_MAPS)
		return;
	const struct map *first = maps[0];
	bool estimated = coverage && coverage->armed_share > 0 && coverage->armed_share < 1;
	/* Columns: the first map's share of its total, then each map's value,
	 * and after a count map under a budget its whole-run estimate. */
	const char *headers[1 + 2 * TABLE_MAX_MAPS];
	char header_text[2 * TABLE_MAX_MAPS][TABLE_CELL];
	size_t ncols = 0;
	headers[ncols++] = "%";
	for (size_t j = 0; j < nmaps; j++) {
		snprintf(header_text[2 * j], TABLE_CELL, "%s", maps[j]->name);
		headers[ncols++] = header_text[2 * j];
		if (estimated && maps[j]->agg == MAP_AGG_COUNT) {
			snprintf(header_text[2 * j + 1], TABLE_CELL, "est. %s", maps[j]->name);
			headers[ncols++] = header_text[2 * j + 1];
		}
	}
	size_t rows = first->len;
	char (*cells)[TABLE_CELL] = calloc((rows + 1) * ncols, TABLE_CELL);
	char (*keys)[160] = calloc(rows + 1, 160);
	const struct map_entry **sorted = map_sorted(first);
	if (!cells || !keys || (rows && !sorted)) {
		free(cells);
		free(keys);
		free(sorted);
		fputs("(out of memory printing the table)\n", out);
		return;
	}
	/* map_sorted's order, then by the rows' weights (smallest first, as
	 * map_sorted leaves them) */
	struct table_row_order *order = calloc(rows + 1, sizeof *order);
	if (!order) {
		free(cells);
		free(keys);
		free(sorted);
		fputs("(out of memory printing the table)\n", out);
		return;
	}
	double total = 0;
	for (size_t i = 0; i < rows; i++) {
		order[i] = (struct table_row_order){ table_weight(first, sorted[i], coverage), i, sorted[i] };
		total += order[i].weight;
	}
	qsort(order, rows, sizeof *order, by_weight_then_order);
	for (size_t i = 0; i < rows; i++)
		sorted[i] = order[i].e;
	free(order);
	size_t width[1 + 2 * TABLE_MAX_MAPS] = {0};
	bool few_windows = false, counted = false;
	for (size_t c = 0; c < ncols; c++)
		width[c] = strlen(headers[c]);
	for (size_t r = 0; r < rows; r++) {
		const struct map_entry *e = sorted[rows - 1 - r];   /* largest first */
		char (*row)[TABLE_CELL] = &cells[r * ncols];
		size_t c = 0;
		snprintf(row[c++], TABLE_CELL, "%.1f", total > 0 ? 100 * table_weight(first, e, coverage) / total : 0);
		for (size_t j = 0; j < nmaps; j++) {
			const struct map *m = maps[j];
			const struct map_entry *me = j == 0 ? e : m->nkeys == first->nkeys ? map_find(m, e->keys) : NULL;
			bool number = m->agg != MAP_AGG_HIST && m->agg != MAP_AGG_LHIST && m->agg != MAP_AGG_STR;
			int64_t v = me && number ? map_entry_number(m, me) : 0;
			if (!number)
				snprintf(row[c++], TABLE_CELL, "?");
			else
				snprintf(row[c++], TABLE_CELL, me ? "%" PRId64 : "", v);
			if (estimated && m->agg == MAP_AGG_COUNT) {
				double est, lo, hi;
				map_coverage_estimate(coverage, v, &est, &lo, &hi);
				if (!me)
					row[c][0] = '\0';
				else if (table_counted(m, me, coverage, &est)) {
					/* the calls counted in the target behind its hits
					 * (print() gives the interval) */
					snprintf(row[c], TABLE_CELL, "%.0f", est);
					counted = true;
				}
				else if (map_coverage_too_few_windows(coverage, &me->value)) {
					/* what was seen is the bound (print() says so in words) */
					snprintf(row[c], TABLE_CELL, ">=%" PRId64, v);
					few_windows = true;
				}
				else if (coverage->lower_bound)
					snprintf(row[c], TABLE_CELL, ">=%.0f", lo);
				else
					snprintf(row[c], TABLE_CELL, "%.0f", est);
				c++;
			}
		}
		for (size_t k = 0; k < ncols; k++)
			if (strlen(row[k]) > width[k])
				width[k] = strlen(row[k]);
		format_row_key(first, e, keys[r], sizeof keys[r]);
	}
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, "%*s  ", (int)width[c], headers[c]);
	fputs("key\n", out);
	for (size_t r = 0; r < rows; r++) {
		for (size_t c = 0; c < ncols; c++)
			fprintf(out, "%*s  ", (int)width[c], cells[r * ncols + c]);
		text_put(out, keys[r], TEXT_FORM_TERMINAL);
		fputc('\n', out);
	}
	if (!rows)
		fprintf(out, "(no events in @%s)\n", first->name);
	if (estimated && counted)
		fputs("est.: the whole run, each key's hits weighed by the calls counted in the target "
		      "(docs/tracing.md, \"Counted in the target\"); 95% intervals with print()\n", out);
	else if (estimated)
		fprintf(out, "est.: the whole run, from the %.2g%% of the target's CPU time the probes were armed%s\n",
			100 * coverage->armed_share,
			coverage->lower_bound ? "; >= only a lower bound (too little CPU time between calls to time them)"
					      : "; 95% intervals with print()");
	if (few_windows)
		fprintf(out, ">=N alone: what was seen, in fewer than %d of the %zu armed windows: too few to "
			"extrapolate\n", MAP_MIN_ESTIMATE_WINDOWS, coverage->windows);
	free(sorted);
	free(cells);
	free(keys);
}

int map_write_folded(const struct map *m, FILE *out)
{
	if (m->agg != MAP_AGG_COUNT && m->agg != MAP_AGG_SUM && m->agg != MAP_AGG_INT && m->agg != MAP_AGG_LIVE)
		return -1;
	const struct map_entry **sorted = map_sorted(m);
	for (size_t i = m->len; sorted && i-- > 0;) {
		const struct map_entry *e = sorted[i];
		bool first = true;
		for (size_t k = 0; k < m->nkeys; k++) {
			const struct map_key *key = &e->keys[k];
			if (key->type == MAP_KEY_STACK) {
				for (size_t f = key->stack ? key->stack->nframes : 0; f-- > 0;) {
					const struct frame *fr = &key->stack->frames[f];
					if (!first)
						fputc(';', out);
					first = false;
					if (fr->function)
						text_put(out, fr->function, TEXT_FORM_TERMINAL);
					else
						fprintf(out, "0x%" PRIx64, fr->pc);
				}
				continue;
			}
			if (!first)
				fputc(';', out);
			first = false;
			if (key->type == MAP_KEY_INT)
				fprintf(out, "%" PRId64, key->i);
			else
				text_put(out, key->s, TEXT_FORM_TERMINAL);
		}
		if (first)
			fputs(m->name, out);
		fprintf(out, " %" PRId64 "\n", map_entry_number(m, e));
	}
	free(sorted);
	return 0;
}
