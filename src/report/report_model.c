/* report_model.c — paths, functions, lines and threads of a profile. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "report/report_model.h"
#include "util/compare.h"
#include "util/array.h"
#include "util/slot_index.h"

#include <inttypes.h>
#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

/* What identifies a function: its interned name, or for frames without a
 * name, the module and pc. */
struct func_key {
	const char *function, *module;
	uint64_t pc;
};

struct report_func_index {
	struct func_key *keys;   /* parallel to model.funcs */
	struct slot_index funcs_by_key;
	bool *kept;              /* per profile entry */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t func_hash(const struct frame *f)
{
	if (f->function)
		return mix(1, (uintptr_t)f->function);
	return mix(mix(2, (uintptr_t)f->module), f->pc);
}

static bool key_matches(const struct func_key *k, const struct frame *f)
{
	if (f->function || k->function)
		return k->function == f->function;
	return k->module == f->module && k->pc == f->pc;
}

const char *report_basename(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "?";
}

const char *report_frame_name(const struct frame *f, char *buf, size_t size)
{
	if (f->function)
		snprintf(buf, size, "%s", f->function);
	else
		snprintf(buf, size, "0x%" PRIx64 " [%s]", f->pc,
			 f->module ? report_basename(f->module) : "?");
	return buf;
}

int64_t report_sample_period_ns(const struct profile_meta *m)
{
	double rate = m->frequency_achieved_hz;
	if (!isfinite(rate) || rate <= 0)
		rate = m->frequency_asked_hz;
	return isfinite(rate) && rate > 0 ? llround(1e9 / rate) : 0;
}

bool report_cpu_weighted(const struct profile *p)
{
	return p->meta.weight_unit && strcmp(p->meta.weight_unit, "ns") == 0;
}

double report_draws(const struct profile *p, uint64_t total_weight)
{
	if (report_cpu_weighted(p))
		return p->meta.thread_samples > 0 ? (double)p->meta.thread_samples : 0;
	if (p->meta.weights_estimated) {
		/* the hits the estimates rest on */
		double hits = 0;
		for (size_t i = 0; i < p->nentries; i++)
			hits += (double)p->entries[i].events;
		return hits;
	}
	return p->meta.weight_unit ? 0 : (double)total_weight;
}

bool report_byte_weighted(const struct profile *p)
{
	return p->meta.weight_unit && strcmp(p->meta.weight_unit, "bytes") == 0;
}

bool report_allocator_profile(const struct profile *p)
{
	return report_byte_weighted(p) && p->meta.thread_samples <= 0;
}

const char *report_bytes_text(double bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB" };
	double v = fabs(bytes);   /* -0 too */
	size_t u = 0;
	while (v >= 999.5 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%s%.0f B", bytes < 0 ? "-" : "", v);
	else
		snprintf(buf, size, "%s%.3g %s", bytes < 0 ? "-" : "", v, units[u]);
	return buf;
}

double report_share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void report_options_init(struct report_options *o)
{
	memset(o, 0, sizeof *o);
}

size_t report_model_func(const struct report_model *m, const struct frame *f)
{
	const struct report_func_index *ix = m->index;
	struct slot_probe probe = slot_index_probe(&ix->funcs_by_key, func_hash(f));
	for (size_t i; (i = slot_probe_next(&ix->funcs_by_key, &probe)) != SLOT_INDEX_NONE;)
		if (key_matches(&ix->keys[i], f))
			return i;
	return (size_t)-1;
}

bool report_model_keeps(const struct report_model *m, const struct profile_entry *en)
{
	size_t i = (size_t)(en - m->profile->entries);
	return i < m->profile->nentries && m->index->kept[i];
}

/* The next entry the model keeps from *cursor on, or NULL at the end. */
static const struct profile_entry *next_kept_entry(const struct report_model *m, size_t *cursor)
{
	while (*cursor < m->profile->nentries) {
		size_t i = (*cursor)++;
		if (m->index->kept[i])
			return &m->profile->entries[i];
	}
	return NULL;
}

/* Finds or adds the function of f. Returns its index, or -1 on OOM. */
static long func_get(struct report_model *m, size_t *cap, const struct frame *f)
{
	struct report_func_index *ix = m->index;
	size_t found = report_model_func(m, f);
	if (found != (size_t)-1)
		return (long)found;
	if (m->nfuncs == *cap) {
		/* funcs and keys are indexed alike: both grow from *cap to the same
		 * capacity, which becomes *cap only when both did. */
		size_t funcs_cap = *cap, keys_cap = *cap;
		struct report_func *funcs = array_grow(m->funcs, &funcs_cap, m->nfuncs + 1, sizeof *funcs);
		if (!funcs)
			return -1;
		m->funcs = funcs;
		struct func_key *k = array_grow(ix->keys, &keys_cap, m->nfuncs + 1, sizeof *k);
		if (!k)
			return -1;
		ix->keys = k;
		*cap = funcs_cap;
	}
	const char *name = f->function;
	if (!name) {
		char buf[512];
		char **owned = array_grow(m->owned_names, &m->owned_cap, m->nowned + 1, sizeof *owned);
		if (!owned)
			return -1;
		m->owned_names = owned;
		if (!(owned[m->nowned] = strdup(report_frame_name(f, buf, sizeof buf))))
			return -1;
		name = owned[m->nowned++];
	}
	if (slot_index_add(&ix->funcs_by_key, func_hash(f), m->nfuncs) < 0)
		return -1;
	size_t i = m->nfuncs++;
	m->funcs[i] = (struct report_func){ .name = name, .lang = f->lang, .module = f->module,
					    .user = report_frame_is_user(f) };
	ix->keys[i] = (struct func_key){ f->function, f->module, f->pc };
	return (long)i;
}

/* ---- orderings ---------------------------------------------------------- */

int report_cmp_place(const char *file_a, int line_a, const char *file_b, int line_b)
{
	int c = compare_text(file_a, file_b);
	return c ? c : compare_i64(line_a, line_b);
}

static int cmp_stack_names(const struct stack *a, const struct stack *b)
{
	char na[512], nb[512];
	for (size_t i = 0; i < a->nframes && i < b->nframes; i++) {
		const struct frame *fa = &a->frames[a->nframes - 1 - i];
		const struct frame *fb = &b->frames[b->nframes - 1 - i];
		int c = strcmp(report_frame_name(fa, na, sizeof na), report_frame_name(fb, nb, sizeof nb));
		if (!c)
			c = report_cmp_place(fa->file, fa->line, fb->file, fb->line);
		if (!c)
			c = (int)fa->inlined - (int)fb->inlined;
		if (c)
			return c;
	}
	return compare_u64(a->nframes, b->nframes);
}

static int cmp_paths(const void *x, const void *y)
{
	const struct report_path *a = x, *b = y;
	int c = report_cmp_heavier(a->weight, b->weight);
	return c ? c : cmp_stack_names(a->stack, b->stack);
}

static const struct report_func *sort_funcs;  /* qsort has no context argument */

/* Heaviest first by self (or total) weight, then by the other, then by name. */
static int cmp_funcs(const void *x, const void *y, bool self_first)
{
	const struct report_func *a = &sort_funcs[*(const size_t *)x], *b = &sort_funcs[*(const size_t *)y];
	int by_self = report_cmp_heavier(a->self, b->self), by_total = report_cmp_heavier(a->total, b->total);
	int c = self_first ? (by_self ? by_self : by_total) : (by_total ? by_total : by_self);
	return c ? c : strcmp(a->name, b->name);
}

static int cmp_by_self(const void *x, const void *y)
{
	return cmp_funcs(x, y, true);
}

static int cmp_by_total(const void *x, const void *y)
{
	return cmp_funcs(x, y, false);
}

static int cmp_lines(const void *x, const void *y)
{
	const struct report_line *a = x, *b = y;
	int c = compare_u64(a->func, b->func);
	if (!c)
		c = report_cmp_place(a->file, a->line, b->file, b->line);
	/* raw rows carry the entry index in `total` until merged */
	return c ? c : compare_u64(a->total, b->total);
}

static int cmp_threads(const void *x, const void *y)
{
	const struct report_thread *a = x, *b = y;
	int c = report_cmp_heavier(a->weight, b->weight);
	return c ? c : compare_text(a->name, b->name);
}

/* ---- building ----------------------------------------------------------- */

static int build_paths(struct report_model *m)
{
	const struct profile *p = m->profile;
	struct slot_index paths_by_stack = { 0 };
	m->paths = calloc(p->nentries ? p->nentries : 1, sizeof *m->paths);
	if (!m->paths)
		return -1;
	size_t cursor = 0;
	for (const struct profile_entry *en; (en = next_kept_entry(m, &cursor));) {
		uint64_t h = profile_stack_hash(&en->stack);
		struct slot_probe probe = slot_index_probe(&paths_by_stack, h);
		size_t path;
		while ((path = slot_probe_next(&paths_by_stack, &probe)) != SLOT_INDEX_NONE &&
		       !profile_stack_eq(m->paths[path].stack, &en->stack))
			;
		if (path == SLOT_INDEX_NONE) {
			if (slot_index_add(&paths_by_stack, h, m->npaths) < 0) {
				slot_index_free(&paths_by_stack);
				return -1;
			}
			path = m->npaths++;
			m->paths[path] = (struct report_path){ &en->stack, 0 };
		}
		m->paths[path].weight += en->weight;
	}
	slot_index_free(&paths_by_stack);
	qsort(m->paths, m->npaths, sizeof *m->paths, cmp_paths);
	return 0;
}

/* Functions and per-line rows: one raw row per (entry, frame), sorted and
 * merged so that a sample counts once per (function, file, line). */
static int build_funcs(struct report_model *m)
{
	const struct profile *p = m->profile;
	size_t nrows = 0, cap = 0, rows_cap = 0;
	struct report_line *rows = NULL;
	size_t *seen_stamp = NULL;    /* per func: last entry + 1 that counted its total */
	size_t seen_cap = 0;
	int rc = -1;

	size_t cursor = 0;
	for (const struct profile_entry *en; (en = next_kept_entry(m, &cursor));) {
		size_t i = (size_t)(en - p->entries);
		for (size_t f = 0; f < en->stack.nframes; f++) {
			const struct frame *fr = &en->stack.frames[f];
			long fi = func_get(m, &cap, fr);
			if (fi < 0)
				goto done;
			if (m->nfuncs > seen_cap) {
				size_t c = seen_cap;
				size_t *s = array_grow(seen_stamp, &c, m->nfuncs, sizeof *s);
				if (!s)
					goto done;
				memset(s + seen_cap, 0, (c - seen_cap) * sizeof *s);
				seen_stamp = s;
				seen_cap = c;
			}
			struct report_func *fn = &m->funcs[fi];
			if (f == 0)
				fn->self += en->weight;
			if (seen_stamp[fi] != i + 1) {
				seen_stamp[fi] = i + 1;
				fn->total += en->weight;
			}
			struct report_line *r = array_grow(rows, &rows_cap, nrows + 1, sizeof *r);
			if (!r)
				goto done;
			rows = r;
			/* self holds the weight if leaf; total holds the entry index for sorting */
			rows[nrows++] = (struct report_line){ (size_t)fi, fr->file, fr->line,
							      f == 0 ? en->weight : 0, i };
		}
	}
	if (nrows)
		qsort(rows, nrows, sizeof *rows, cmp_lines);

	/* merge rows into lines; weight per row comes from its entry */
	m->lines = calloc(nrows ? nrows : 1, sizeof *m->lines);
	if (!m->lines)
		goto done;
	for (size_t r = 0; r < nrows; r++) {
		const struct report_line *row = &rows[r];
		uint64_t w = p->entries[row->total].weight;
		struct report_line *last = m->nlines ? &m->lines[m->nlines - 1] : NULL;
		bool same_line = last && last->func == row->func && last->file == row->file &&
				 last->line == row->line;
		bool same_entry = same_line && r > 0 && rows[r - 1].total == row->total;
		if (!same_line) {
			m->lines[m->nlines++] = (struct report_line){ row->func, row->file, row->line, 0, 0 };
			last = &m->lines[m->nlines - 1];
		}
		last->self += row->self;
		if (!same_entry)
			last->total += w;
	}
	for (size_t l = 0; l < m->nlines; l++) {
		struct report_func *fn = &m->funcs[m->lines[l].func];
		if (l == 0 || m->lines[l - 1].func != m->lines[l].func)
			fn->line_begin = l;
		fn->line_end = l + 1;
	}
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct report_func *fn = &m->funcs[i];
		const struct report_line *best = NULL;
		for (size_t l = fn->line_begin; l < fn->line_end; l++) {
			const struct report_line *ln = &m->lines[l];
			if (!best || ln->total > best->total ||
			    (ln->total == best->total && ln->self > best->self))
				best = ln;
		}
		if (best) {
			fn->hot_file = best->file;
			fn->hot_line = best->line;
		}
	}

	m->by_self = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *m->by_self);
	m->by_total = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *m->by_total);
	if (!m->by_self || !m->by_total)
		goto done;
	for (size_t i = 0; i < m->nfuncs; i++)
		m->by_self[i] = m->by_total[i] = i;
	sort_funcs = m->funcs;
	qsort(m->by_self, m->nfuncs, sizeof *m->by_self, cmp_by_self);
	qsort(m->by_total, m->nfuncs, sizeof *m->by_total, cmp_by_total);
	sort_funcs = NULL;
	rc = 0;
done:
	free(rows);
	free(seen_stamp);
	return rc;
}

/* Functions on (almost) every kept sample: thread start, the runtime's
 * entry shims, a single-threaded program's main. Ranked by total they fill
 * the table's top rows with 100% and say nothing, so that table leaves
 * them out (and says so). */
static int mark_everywhere(struct report_model *m)
{
	m->by_total_shown = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof *m->by_total_shown);
	if (!m->by_total_shown)
		return -1;
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct report_func *fn = &m->funcs[m->by_total[i]];
		fn->everywhere = m->kept && (double)fn->total * 100.0 >= REPORT_EVERYWHERE_PCT * (double)m->kept;
		if (fn->everywhere)
			m->neverywhere++;
		else
			m->by_total_shown[m->ntotal_shown++] = m->by_total[i];
	}
	return 0;
}

/* A run with few thread stacks gives shares too rough to rank on: the
 * report says how rough, and how long a run would give enough. */
static void note_thin_profile(struct report_model *m)
{
	const struct profile_meta *mt = &m->profile->meta;
	if (mt->thread_samples < 0 || mt->thread_samples >= REPORT_THIN_STACKS)
		return;
	/* bytes from the allocator's own profile: no stack of ours behind them */
	if (report_allocator_profile(m->profile))
		return;
	int n = (int)mt->thread_samples;
	char *buf = m->thin_note_text;
	size_t size = sizeof m->thin_note_text;
	if (n == 0) {
		snprintf(buf, size, "no thread stacks were recorded: run longer (--duration) while the "
			 "target is busy");
		m->thin_note = buf;
		return;
	}
	/* the 95% half-width of a 50% share (the widest), as the headlines'
	 * ± are 95% ones: one standard error here read as half theirs */
	double err = fmin(50, 196.0 * sqrt(0.25 / n)), err_enough = 196.0 * sqrt(0.25 / REPORT_THIN_STACKS);
	int len = snprintf(buf, size, "only %d thread stack%s: a 50%% share is ±%.1f points (%d stacks "
			   "make it ±%.1f); run longer", n, n == 1 ? "" : "s", err, REPORT_THIN_STACKS,
			   err_enough);
	if (!isnan(mt->duration_actual_s) && mt->duration_actual_s > 0 && len > 0 && (size_t)len < size) {
		double want = mt->duration_actual_s * REPORT_THIN_STACKS / n;
		/* a round figure: whole seconds up to 10 s, then multiples of 5 s */
		double shown = want <= 10 ? ceil(want) : 5 * ceil(want / 5);
		snprintf(buf + len, size - (size_t)len, ", e.g. --duration %.0fs", shown);
	} else if (len > 0 && (size_t)len < size) {
		snprintf(buf + len, size - (size_t)len, " (--duration)");
	}
	m->thin_note = buf;
}

static int build_threads(struct report_model *m)
{
	const struct profile *p = m->profile;
	m->threads = calloc(p->nentries ? p->nentries : 1, sizeof *m->threads);
	if (!m->threads)
		return -1;
	size_t cursor = 0;
	for (const struct profile_entry *en; (en = next_kept_entry(m, &cursor));) {
		struct report_thread *t = NULL;
		for (size_t k = 0; k < m->nthreads && !t; k++)
			if (m->threads[k].name == en->thread_name)
				t = &m->threads[k];
		if (!t) {
			t = &m->threads[m->nthreads++];
			t->name = en->thread_name;
		}
		t->weight += en->weight;
		/* '?': a recipe map's entry, which keeps no state (hot-cpu keys by
		 * thread name and stack); nothing to split by. */
		if (en->thread_state == '?')
			continue;
		if (en->thread_state != 'R')
			m->mixed_states = true;
		size_t s = 0;
		while (s < t->nstates && t->states[s] != en->thread_state)
			s++;
		if (s == t->nstates) {
			if (s == REPORT_MAX_STATES)
				s--;     /* more kinds than /proc has: lump into the last */
			else
				t->nstates++;
			t->states[s] = en->thread_state;
		}
		t->state_weight[s] += en->weight;
	}
	for (size_t k = 0; k < m->nthreads; k++) {
		struct report_thread *t = &m->threads[k];
		for (size_t a = 1; a < t->nstates; a++)   /* insertion sort, <= 8 items */
			for (size_t b = a; b > 0 && (t->state_weight[b] > t->state_weight[b - 1] ||
						     (t->state_weight[b] == t->state_weight[b - 1] &&
						      t->states[b] < t->states[b - 1])); b--) {
				char c = t->states[b];
				uint64_t w = t->state_weight[b];
				t->states[b] = t->states[b - 1];
				t->state_weight[b] = t->state_weight[b - 1];
				t->states[b - 1] = c;
				t->state_weight[b - 1] = w;
			}
	}
	qsort(m->threads, m->nthreads, sizeof *m->threads, cmp_threads);
	return 0;
}

static int apply_focus(struct report_model *m, const char *pattern, struct xerr *e)
{
	const struct profile *p = m->profile;
	int errcode;
	PCRE2_SIZE erroffset;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF,
				       &errcode, &erroffset, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof msg);
		return xerr_set(e, "focus regex /%s/: %s at offset %zu", pattern, (const char *)msg,
				(size_t)erroffset);
	}
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!md) {
		pcre2_code_free(re);
		return xerr_oom(e);
	}
	char name[1024];
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		bool keep = false;
		for (size_t f = 0; f < en->stack.nframes && !keep; f++) {
			const struct frame *fr = &en->stack.frames[f];
			report_frame_name(fr, name, sizeof name);
			keep = pcre2_match(re, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0;
			/* the name as demangled counts too: `Tree<K,V>::get`, `::<u64>` */
			if (!keep && fr->full_function)
				keep = pcre2_match(re, (PCRE2_SPTR)fr->full_function, PCRE2_ZERO_TERMINATED, 0, 0,
						   md, NULL) >= 0;
		}
		m->index->kept[i] = keep;
		if (keep)
			m->kept += en->weight;
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return 0;
}

int report_model_init(struct report_model *m, const struct profile *p,
		      const struct report_options *o, struct xerr *e)
{
	memset(m, 0, sizeof *m);
	if (o)
		m->options = *o;
	else
		report_options_init(&m->options);
	o = &m->options;
	m->profile = p;
	m->index = calloc(1, sizeof *m->index);
	if (!m->index || !(m->index->kept = calloc(p->nentries ? p->nentries : 1, sizeof(bool)))) {
		free(m->index);
		m->index = NULL;
		return xerr_oom(e);
	}
	m->total = profile_total_weight(p);
	if (o && o->focus) {
		m->focus = o->focus;
		if (apply_focus(m, o->focus, e) < 0) {
			report_model_release(m);
			return -1;
		}
	} else {
		for (size_t i = 0; i < p->nentries; i++)
			m->index->kept[i] = true;
		m->kept = m->total;
	}
	if (build_paths(m) < 0 || build_funcs(m) < 0 || mark_everywhere(m) < 0 ||
	    report_build_code_paths(m) < 0 || build_threads(m) < 0) {
		report_model_release(m);
		return xerr_oom_doing(e, "building the report");
	}
	note_thin_profile(m);
	return 0;
}

void report_model_release(struct report_model *m)
{
	if (m->index) {
		free(m->index->keys);
		slot_index_free(&m->index->funcs_by_key);
		free(m->index->kept);
		free(m->index);
	}
	array_free_pointers(m->owned_names, m->nowned);
	free(m->paths);
	free(m->funcs);
	free(m->by_self);
	free(m->by_total);
	free(m->by_total_shown);
	free(m->nodes);
	free(m->code_paths);
	free(m->chain_nodes);
	free((void *)m->chain_frames);
	free(m->lines);
	free(m->threads);
	memset(m, 0, sizeof *m);
}
