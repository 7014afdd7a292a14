/* report_speedscope.c — the profile as a speedscope file (its published
 * file-format schema, https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per thread, heaviest thread first, over one shared
 * table of frames. A frame is a function (name, file and first line), so
 * speedscope's views merge a function's samples whatever line they hit, as
 * the flame graph does. */
#include "report/report.h"
#include "report/report_model.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct ss_frame {
	const struct frame *f;         /* the first frame seen of this function */
};

struct ss_thread {
	const char *name;
	int64_t tid;
	uint64_t weight;
	size_t first_entry;            /* smallest entry index: ties keep profile order */
};

struct ss_builder {
	const struct profile *p;
	struct ss_frame *frames;
	size_t nframes, frames_cap;
	struct slot_index frame_index; /* frames by ss_hash */
	size_t **stacks;               /* per entry: frame indices, leaf first */
};

/* Frame identity: the function (interned: by pointer) with its file and
 * first line; an unknown function by its module and pc. */
static uint64_t ss_hash(const struct frame *f)
{
	const void *key[2] = { f->function, f->file };
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, key, sizeof key);
	h = hash_fnv1a(h, &f->decl_line, sizeof f->decl_line);
	if (!f->function) {
		h = hash_fnv1a(h, &f->module, sizeof f->module);
		h = hash_fnv1a(h, &f->pc, sizeof f->pc);
	}
	return h;
}

static bool ss_eq(const struct frame *a, const struct frame *b)
{
	if (a->function != b->function || a->file != b->file || a->decl_line != b->decl_line)
		return false;
	return a->function || (a->module == b->module && a->pc == b->pc);
}

static long ss_frame_index(struct ss_builder *b, const struct frame *f)
{
	uint64_t h = ss_hash(f);
	struct slot_probe probe = slot_index_probe(&b->frame_index, h);
	for (size_t i; (i = slot_probe_next(&b->frame_index, &probe)) != SLOT_INDEX_NONE;)
		if (ss_eq(b->frames[i].f, f))
			return (long)i;
	struct ss_frame *frames = array_grow(b->frames, &b->frames_cap, b->nframes + 1, sizeof *frames);
	if (!frames)
		return -1;
	b->frames = frames;
	b->frames[b->nframes].f = f;
	if (slot_index_add(&b->frame_index, h, b->nframes) < 0)
		return -1;
	return (long)b->nframes++;
}

static int cmp_threads(const void *x, const void *y)
{
	const struct ss_thread *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->first_entry < b->first_entry ? -1 : a->first_entry > b->first_entry;
}

static void put_json(FILE *out, const char *s)
{
	putc('"', out);
	text_put(out, s, TEXT_FORM_JSON);
	putc('"', out);
}

static void put_frames(FILE *out, const struct ss_builder *b)
{
	char name[1024];
	fputs("  \"shared\": {\"frames\": [", out);
	for (size_t i = 0; i < b->nframes; i++) {
		const struct frame *f = b->frames[i].f;
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		put_json(out, report_frame_name(f, name, sizeof name));
		if (f->file) {
			fputs(", \"file\": ", out);
			put_json(out, f->file);
		}
		if (f->decl_line > 0)
			fprintf(out, ", \"line\": %d", f->decl_line);
		putc('}', out);
	}
	fputs(b->nframes ? "\n  ]},\n" : "]},\n", out);
}

/* One thread's profile: its entries in profile order, stacks root first. */
static void put_thread(FILE *out, const struct ss_builder *b, const struct report_model *m,
		       const struct ss_thread *t, int64_t period)
{
	const struct profile *p = b->p;
	uint64_t total = 0;
	bool first = true;
	fputs("    {\"type\": \"sampled\", \"name\": ", out);
	char name[96];
	if (t->tid >= 0)
		snprintf(name, sizeof name, " (tid %" PRId64 ")", t->tid);
	else
		name[0] = 0;
	putc('"', out);
	text_put(out, t->name ? t->name : "(unknown thread)", TEXT_FORM_JSON);
	fprintf(out, "%s\", \"unit\": \"%s\", \"startValue\": 0,\n     \"samples\": [", name,
		period > 0 ? "nanoseconds" : "none");
	for (size_t i = t->first_entry; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (en->thread_name != t->name || en->tid != t->tid || !report_model_keeps(m, en))
			continue;
		fputs(first ? "[" : ", [", out);
		for (size_t f = en->stack.nframes; f-- > 0;)
			fprintf(out, f + 1 < en->stack.nframes ? ",%zu" : "%zu", b->stacks[i][f]);
		putc(']', out);
		first = false;
	}
	fputs("],\n     \"weights\": [", out);
	first = true;
	for (size_t i = t->first_entry; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (en->thread_name != t->name || en->tid != t->tid || !report_model_keeps(m, en))
			continue;
		bool cpu_ns = report_cpu_weighted(p);
		uint64_t w = period > 0 && !cpu_ns ? en->weight * (uint64_t)period : en->weight;
		fprintf(out, first ? "%" PRIu64 : ", %" PRIu64, w);
		total += w;
		first = false;
	}
	fprintf(out, "], \"endValue\": %" PRIu64 "}", total);
}

int report_speedscope(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_model m;
	struct ss_builder b = { .p = p };
	struct ss_thread *threads = NULL;
	size_t nthreads = 0, threads_cap = 0;
	int rc = -1;

	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	b.stacks = calloc(p->nentries ? p->nentries : 1, sizeof *b.stacks);
	if (!b.stacks)
		goto oom;
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (!report_model_keeps(&m, en))
			continue;
		b.stacks[i] = malloc((en->stack.nframes ? en->stack.nframes : 1) * sizeof *b.stacks[i]);
		if (!b.stacks[i])
			goto oom;
		for (size_t f = 0; f < en->stack.nframes; f++) {
			long ix = ss_frame_index(&b, &en->stack.frames[f]);
			if (ix < 0)
				goto oom;
			b.stacks[i][f] = (size_t)ix;
		}
		size_t t = 0;   /* a handful of threads: a linear search */
		while (t < nthreads && (threads[t].name != en->thread_name || threads[t].tid != en->tid))
			t++;
		if (t == nthreads) {
			struct ss_thread *grown = array_grow(threads, &threads_cap, nthreads + 1, sizeof *grown);
			if (!grown)
				goto oom;
			threads = grown;
			threads[nthreads++] = (struct ss_thread){ en->thread_name, en->tid, 0, i };
		}
		threads[t].weight += en->weight;
	}
	if (nthreads > 1)
		qsort(threads, nthreads, sizeof *threads, cmp_threads);

	const struct profile_meta *meta = &p->meta;
	int64_t period = report_sample_period_ns(meta);
	fputs("{\n  \"$schema\": \"" SPEEDSCOPE_SCHEMA "\",\n  \"exporter\": ", out);
	char exporter[128];
	snprintf(exporter, sizeof exporter, "xgdbprof %s", meta->version ? meta->version : "");
	put_json(out, exporter);
	fputs(",\n  \"name\": \"xgdbprof: ", out);
	text_put(out, o && o->title ? o->title : meta->exe ? meta->exe : "profile", TEXT_FORM_JSON);
	fputs("\",\n  \"activeProfileIndex\": 0,\n", out);
	put_frames(out, &b);
	fputs("  \"profiles\": [", out);
	for (size_t t = 0; t < nthreads; t++) {
		fputs(t ? ",\n" : "\n", out);
		put_thread(out, &b, &m, &threads[t], period);
	}
	fputs(nthreads ? "\n  ]\n}\n" : "]\n}\n", out);
	rc = 0;
	if (ferror(out))
		rc = xerr_set(e, "cannot write the speedscope profile");
	goto done;
oom:
	xerr_oom_doing(e, "writing the speedscope profile");
done:
	array_free_pointers(b.stacks, p->nentries);
	free(b.frames);
	slot_index_free(&b.frame_index);
	free(threads);
	report_model_release(&m);
	return rc;
}
