/* report_pprof.c — the profile in pprof's format (profile.proto, gzip'd), as
 * `go tool pprof`, Pyroscope, Parca and speedscope read it. Encoded with
 * protobuf-c from src/report/pprof.proto; what goes where is in
 * docs/reports.md ("pprof").
 *
 * One Sample per profile entry (its thread's name and id as labels), one
 * Location per machine PC with every frame of that PC as a Line, innermost
 * first, one Function per (name, linkage name, file, first line), one
 * Mapping per module. Text from the target is written in the terminal form
 * (text_escape.h): pprof prints names straight to terminals.
 */
#include "report/report.h"
#include "report/report_model.h"
#include "report/pprof.pb-c.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"
#include "util/text_escape.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The position of the item with hash h that eq accepts, in one of the
 * builder's vectors indexed by ix (util/slot_index.h), or SLOT_INDEX_NONE. */
static size_t id_lookup(const struct slot_index *ix, uint64_t h, bool (*eq)(const void *ctx, size_t i),
			const void *ctx)
{
	struct slot_probe probe = slot_index_probe(ix, h);
	for (size_t i; (i = slot_probe_next(ix, &probe)) != SLOT_INDEX_NONE;)
		if (eq(ctx, i))
			return i;
	return SLOT_INDEX_NONE;
}

struct function_key {
	int64_t name, system_name, filename, start_line;
};

struct frame_memo {
	const char *function, *linkage, *file;
	int decl_line;
	uint64_t id;
};

struct line_ref {
	uint64_t function_id;
	int64_t line;
};

struct location_rec {
	uint64_t mapping_id, address;
	size_t first_line, nlines;     /* in builder.lines */
};

struct mapping_rec {
	const char *path;              /* the profile's interned module path, or NULL */
	const struct profile_module *module;
	bool functions, filenames, line_numbers, inline_frames;
};

struct builder {
	const struct profile *profile;
	bool oom;
	/* string table: escaped copies, [0] = "" */
	char **strings;
	size_t nstrings, strings_cap;
	struct slot_index string_ids;
	const char *probe_string;
	/* functions, id = index + 1 */
	struct function_key *functions;
	size_t nfunctions, functions_cap;
	struct slot_index function_ids;
	const struct function_key *probe_function;
	/* frames → function id by the profile's interned pointers, so each
	 * distinct function is escaped and hashed by content once */
	struct frame_memo *memo;
	size_t nmemo, memo_cap;
	struct slot_index memo_ids;
	const struct frame *probe_frame;
	/* locations, id = index + 1, and the lines they hold */
	struct location_rec *locations;
	size_t nlocations, locations_cap;
	struct line_ref *lines;
	size_t nlines, lines_cap;
	struct slot_index location_ids;
	const struct location_rec *probe_location;
	const struct line_ref *probe_lines;
	/* mappings, id = index + 1 */
	struct mapping_rec *mappings;
	size_t nmappings, mappings_cap;
	/* per sample: location ids (in sample_locations), leaf first */
	uint64_t *sample_locations;
	size_t nsample_locations, sample_locations_cap;
	size_t *sample_first;          /* [nentries + 1] offsets into sample_locations */
	bool *dropped;                 /* [nentries]: focused out */
};

static bool string_eq(const void *ctx, size_t i)
{
	const struct builder *b = ctx;
	return strcmp(b->strings[i], b->probe_string) == 0;
}

/* Index of the terminal form of s in the string table (NULL: 0, ""). */
static int64_t string_index(struct builder *b, const char *s)
{
	if (!s || !*s || b->oom)
		return 0;
	char *shown = text_escape_dup(s);
	if (!shown) {
		b->oom = true;
		return 0;
	}
	b->probe_string = shown;
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, shown, strlen(shown));
	size_t found = id_lookup(&b->string_ids, h, string_eq, b);
	if (found != SLOT_INDEX_NONE) {
		free(shown);
		return (int64_t)found;
	}
	char **strings = array_grow(b->strings, &b->strings_cap, b->nstrings + 1, sizeof *strings);
	if (!strings || slot_index_add(&b->string_ids, h, b->nstrings) < 0) {
		if (strings)
			b->strings = strings;
		free(shown);
		b->oom = true;
		return 0;
	}
	b->strings = strings;
	b->strings[b->nstrings] = shown;
	return (int64_t)b->nstrings++;
}

static bool function_eq(const void *ctx, size_t i)
{
	const struct builder *b = ctx;
	return memcmp(&b->functions[i], b->probe_function, sizeof *b->probe_function) == 0;
}

static bool memo_eq(const void *ctx, size_t i)
{
	const struct builder *b = ctx;
	const struct frame_memo *m = &b->memo[i];
	const struct frame *f = b->probe_frame;
	return m->function == f->function && m->linkage == f->linkage && m->file == f->file &&
	       m->decl_line == f->decl_line;
}

static uint64_t function_id_by_content(struct builder *b, const struct frame *f);

static uint64_t function_id(struct builder *b, const struct frame *f)
{
	const void *ptrs[3] = { f->function, f->linkage, f->file };
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, ptrs, sizeof ptrs);
	h = hash_fnv1a(h, &f->decl_line, sizeof f->decl_line);
	b->probe_frame = f;
	size_t found = id_lookup(&b->memo_ids, h, memo_eq, b);
	if (found != SLOT_INDEX_NONE)
		return b->memo[found].id;
	uint64_t id = function_id_by_content(b, f);
	struct frame_memo *memo = id ? array_grow(b->memo, &b->memo_cap, b->nmemo + 1, sizeof *memo) : NULL;
	if (memo)
		b->memo = memo;
	if (!memo || slot_index_add(&b->memo_ids, h, b->nmemo) < 0) {
		b->oom = true;
		return 0;
	}
	b->memo[b->nmemo++] = (struct frame_memo){ f->function, f->linkage, f->file, f->decl_line, id };
	return id;
}

static uint64_t function_id_by_content(struct builder *b, const struct frame *f)
{
	struct function_key k = {
		.name = string_index(b, f->function), .system_name = string_index(b, f->linkage),
		.filename = string_index(b, f->file), .start_line = f->decl_line,
	};
	if (b->oom)
		return 0;
	b->probe_function = &k;
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &k, sizeof k);
	size_t found = id_lookup(&b->function_ids, h, function_eq, b);
	if (found != SLOT_INDEX_NONE)
		return found + 1;
	struct function_key *functions = array_grow(b->functions, &b->functions_cap, b->nfunctions + 1,
						    sizeof *functions);
	if (functions)
		b->functions = functions;
	if (!functions || slot_index_add(&b->function_ids, h, b->nfunctions) < 0) {
		b->oom = true;
		return 0;
	}
	b->functions[b->nfunctions++] = k;
	return b->nfunctions;
}

/* The mapping of a module path (NULL: no mapping, id 0). */
static uint64_t mapping_id(struct builder *b, const char *path)
{
	if (!path)
		return 0;
	for (size_t i = 0; i < b->nmappings; i++)   /* a few dozen modules at most */
		if (b->mappings[i].path == path)
			return i + 1;
	struct mapping_rec *m = array_grow(b->mappings, &b->mappings_cap, b->nmappings + 1, sizeof *m);
	if (!m) {
		b->oom = true;
		return 0;
	}
	b->mappings = m;
	b->mappings[b->nmappings] = (struct mapping_rec){ .path = path,
		.module = profile_module(b->profile, path) };
	return ++b->nmappings;
}

static bool location_eq(const void *ctx, size_t i)
{
	const struct builder *b = ctx;
	const struct location_rec *l = &b->locations[i], *k = b->probe_location;
	return l->mapping_id == k->mapping_id && l->address == k->address && l->nlines == k->nlines &&
	       memcmp(&b->lines[l->first_line], b->probe_lines, k->nlines * sizeof *b->probe_lines) == 0;
}

/* The frames of one PC: frames[0..n), the inlined callees first, then the
 * function holding them. Returns its location id, 0 when out of memory. */
static uint64_t location_id(struct builder *b, const struct frame *frames, size_t n)
{
	struct line_ref local[16], *lines = n <= 16 ? local : malloc(n * sizeof *lines);
	size_t nlines = 0;
	if (!lines) {
		b->oom = true;
		return 0;
	}
	uint64_t map = mapping_id(b, frames[0].module);
	struct mapping_rec *m = map ? &b->mappings[map - 1] : NULL;
	for (size_t i = 0; i < n; i++) {
		const struct frame *f = &frames[i];
		if (!f->function)     /* an address no symbol covers: no Line */
			continue;
		lines[nlines++] = (struct line_ref){ function_id(b, f), f->line > 0 ? f->line : 0 };
		if (m) {
			m->functions = true;
			m->filenames |= f->file != NULL;
			m->line_numbers |= f->line > 0;
			/* DWARF lookups give the whole inline chain, inlined frames or none */
			m->inline_frames |= f->source == FRAME_SOURCE_DWARF || f->source == FRAME_SOURCE_DEBUGLINK;
		}
	}
	struct location_rec k = { map, frames[0].pc, 0, nlines };
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &k.mapping_id, sizeof k.mapping_id);
	h = hash_fnv1a(h, &k.address, sizeof k.address);
	h = hash_fnv1a(h, lines, nlines * sizeof *lines);
	b->probe_location = &k;
	b->probe_lines = lines;
	size_t found = b->oom ? SLOT_INDEX_NONE : id_lookup(&b->location_ids, h, location_eq, b);
	uint64_t id = 0;
	if (found != SLOT_INDEX_NONE) {
		id = found + 1;
	} else if (!b->oom) {
		struct location_rec *locs = array_grow(b->locations, &b->locations_cap, b->nlocations + 1,
						       sizeof *locs);
		struct line_ref *all = locs && nlines ? array_grow(b->lines, &b->lines_cap, b->nlines + nlines,
								   sizeof *all) : b->lines;
		if (locs)
			b->locations = locs;
		if (all)
			b->lines = all;
		if (locs && (all || !nlines) && slot_index_add(&b->location_ids, h, b->nlocations) == 0) {
			k.first_line = b->nlines;
			if (nlines)
				memcpy(&b->lines[b->nlines], lines, nlines * sizeof *lines);
			b->nlines += nlines;
			b->locations[b->nlocations] = k;
			id = ++b->nlocations;
		}
	}
	if (!id)
		b->oom = true;
	if (lines != local)
		free(lines);
	return id;
}

/* Frames i.. of one PC: a run of inlined frames sharing the pc and module
 * of frames[i], closed by the first frame that is not inlined. */
static size_t pc_group_end(const struct stack *s, size_t i)
{
	size_t j = i;
	while (j + 1 < s->nframes && s->frames[j].inlined && s->frames[j + 1].pc == s->frames[i].pc &&
	       s->frames[j + 1].module == s->frames[i].module)
		j++;
	return j + 1;
}

static int add_stacks(struct builder *b, const struct report_model *model)
{
	const struct profile *p = b->profile;
	b->sample_first = calloc(p->nentries + 1, sizeof *b->sample_first);
	b->dropped = calloc(p->nentries + 1, sizeof *b->dropped);
	if (!b->sample_first || !b->dropped)
		return -1;
	/* The main binary's mapping first, as the format asks. */
	if (p->meta.exe)
		for (size_t i = 0; i < p->nmodules; i++)
			if (strcmp(p->modules[i].path, p->meta.exe) == 0)
				mapping_id(b, p->modules[i].path);
	for (size_t i = 0; i < p->nentries && !b->oom; i++) {
		const struct profile_entry *en = &p->entries[i];
		b->sample_first[i] = b->nsample_locations;
		if (model && !report_model_keeps(model, en)) {
			b->dropped[i] = true;
			continue;
		}
		for (size_t f = 0; f < en->stack.nframes && !b->oom;) {
			size_t end = pc_group_end(&en->stack, f);
			uint64_t id = location_id(b, &en->stack.frames[f], end - f);
			uint64_t *locs = array_grow(b->sample_locations, &b->sample_locations_cap,
						    b->nsample_locations + 1, sizeof *locs);
			if (!locs) {
				b->oom = true;
				break;
			}
			b->sample_locations = locs;
			b->sample_locations[b->nsample_locations++] = id;
			f = end;
		}
	}
	b->sample_first[p->nentries] = b->nsample_locations;
	return b->oom ? -1 : 0;
}

/* "2026-12-01T10:45:00Z" as nanoseconds since the epoch; 0 when unknown. */
static int64_t time_nanos(const char *iso)
{
	struct tm tm = { 0 };
	const char *end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	if (!end || *end)
		return 0;
	time_t t = timegm(&tm);
	return t > 0 ? (int64_t)t * 1000000000 : 0;
}

static void add_comment(struct builder *b, int64_t *comments, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_comment(struct builder *b, int64_t *comments, size_t *n, const char *fmt, ...)
{
	char text[4200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	comments[(*n)++] = string_index(b, text);
}

/* Packs and gzips the message into out. */
static int write_gzip(const pb_profile *msg, FILE *out, struct xerr *e)
{
	size_t len = protobuf_c_message_get_packed_size(&msg->base);
	uint8_t *packed = malloc(len ? len : 1);
	unsigned char chunk[65536];
	z_stream zs = { 0 };
	int rc = -1, z;
	if (!packed)
		return xerr_oom_doing(e, "writing the pprof profile");
	protobuf_c_message_pack(&msg->base, packed);
	/* windowBits 15 + 16: a gzip wrapper (mtime 0: the same profile gives
	 * the same bytes). */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(packed);
		return xerr_set(e, "cannot start gzip compression");
	}
	zs.next_in = packed;
	zs.avail_in = (uInt)len;  /* profiles stay far below 4 GiB (PROFILE_MAX_BYTES) */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof chunk;
		z = deflate(&zs, Z_FINISH);
		if (z == Z_STREAM_ERROR)
			break;
		fwrite(chunk, 1, sizeof chunk - zs.avail_out, out);
	} while (z != Z_STREAM_END);
	if (z != Z_STREAM_END)
		xerr_set(e, "gzip compression failed");
	else if (ferror(out))
		xerr_set(e, "cannot write the pprof profile: %s", strerror(errno));
	else
		rc = 0;
	deflateEnd(&zs);
	free(packed);
	return rc;
}

static void builder_release(struct builder *b)
{
	array_free_pointers(b->strings, b->nstrings);
	slot_index_free(&b->string_ids);
	free(b->functions);
	slot_index_free(&b->function_ids);
	free(b->memo);
	slot_index_free(&b->memo_ids);
	free(b->locations);
	free(b->lines);
	slot_index_free(&b->location_ids);
	free(b->mappings);
	free(b->sample_locations);
	free(b->sample_first);
	free(b->dropped);
}

/* Every message of the profile, allocated in a few arrays. */
struct messages {
	pb_value_type types[4], period_type;
	pb_value_type *type_ptrs[4];
	pb_sample *samples, **sample_ptrs;
	int64_t *values;
	pb_label *labels, **label_ptrs;
	pb_mapping *mappings, **mapping_ptrs;
	pb_location *locations, **location_ptrs;
	pb_line *lines, **line_ptrs;
	pb_function *functions, **function_ptrs;
	int64_t comments[64];
};

static void messages_release(struct messages *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->values);
	free(m->labels);
	free(m->label_ptrs);
	free(m->mappings);
	free(m->mapping_ptrs);
	free(m->locations);
	free(m->location_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->functions);
	free(m->function_ptrs);
}

#define LABELS_PER_SAMPLE 3

/* protobuf-c wants an array of messages and an array of pointers to them:
 * allocates both for n messages (at least one, so that calloc never returns
 * NULL for an empty profile); true when both were. A macro so that each
 * array keeps its own type. */
#define ALLOC_MESSAGES(n, messages, pointers)                                   \
	(((messages) = calloc((n) > 0 ? (n) : 1, sizeof *(messages))) != NULL && \
	 ((pointers) = calloc((n) > 0 ? (n) : 1, sizeof *(pointers))) != NULL)

/* A sample's labels: its thread's name, id and state, where known; keys
 * holds the string indices of "thread", "thread_id", "thread_state". */
static void put_labels(struct builder *b, pb_sample *s, pb_label *l, const struct profile_entry *en,
		       const int64_t keys[LABELS_PER_SAMPLE])
{
	for (size_t j = 0; j < LABELS_PER_SAMPLE; j++)
		perftools__profiles__label__init(&l[j]);
	if (en->thread_name) {
		l[s->n_label].key = keys[0];
		l[s->n_label].str = string_index(b, en->thread_name);
		s->n_label++;
	}
	if (en->tid >= 0) {
		l[s->n_label].key = keys[1];
		l[s->n_label].num = en->tid;
		s->n_label++;
	}
	if (en->thread_state != '?') {
		char state[2] = { en->thread_state, 0 };
		l[s->n_label].key = keys[2];
		l[s->n_label].str = string_index(b, state);
		s->n_label++;
	}
	for (size_t j = 0; j < s->n_label; j++)
		s->label[j] = &l[j];
}

/* The profile's comments: what made it, the observer effect, the scaling
 * of estimated values, the run's notes. */
static void build_comments(struct builder *b, struct messages *m, pb_profile *msg, bool scaled)
{
	const struct profile_meta *meta = &b->profile->meta;
	size_t nc = 0;
	add_comment(b, m->comments, &nc, "xgdbprof %s%s%s", meta->version ? meta->version : "(version unknown)",
		    meta->recipe ? ", recipe " : "", meta->recipe ? meta->recipe : "");
	if (meta->command_line)
		add_comment(b, m->comments, &nc, "command line: %s", meta->command_line);
	if (meta->pid >= 0)
		add_comment(b, m->comments, &nc, "pid %lld, %s%s", (long long)meta->pid,
			    meta->thread_selection ? "threads sampled: " : "",
			    meta->thread_selection ? meta->thread_selection : "");
	if (isfinite(meta->stopped_pct)) {
		char per_stop[128] = "";
		if (isfinite(meta->stop_median_ms) && isfinite(meta->stop_p99_ms))
			snprintf(per_stop, sizeof per_stop, "; per stop median %.2f ms, p99 %.2f ms",
				 meta->stop_median_ms, meta->stop_p99_ms);
		if (meta->stop_mode && strcmp(meta->stop_mode, "non-stop") == 0 && isfinite(meta->thread_stopped_max_pct))
			add_comment(b, m->comments, &nc, "observer effect: each thread stopped at most %.1f%% of its time "
				    "(one at a time; %.1f%% summed over threads)%s",
				    meta->thread_stopped_max_pct, meta->stopped_pct, per_stop);
		else
			add_comment(b, m->comments, &nc, "observer effect: target stopped %.1f%% of the time%s",
				    meta->stopped_pct, per_stop);
	}
	if (scaled && meta->per_entry_estimates)
		add_comment(b, m->comments, &nc, "values: whole-run estimates, each stack's measured values times "
			    "what its hits stand for of the calls counted in the target (docs/tracing.md, \"Counted in "
			    "the target\"); the sampled_ types are the measured values");
	else if (scaled && meta->value_scale_lower_bound)
		add_comment(b, m->comments, &nc, "values: lower bounds for the whole run, the measured values times "
			    "%.4g (the probes were armed at most %.3g%% of the target's CPU time once our stops' cost "
			    "is taken out; the calls came too close together to time against it); the sampled_ types "
			    "are the measured values", meta->value_scale, 100 / meta->value_scale);
	else if (scaled)
		add_comment(b, m->comments, &nc, "values: whole-run estimates, the measured values times %.4g (the "
			    "probes were armed %.3g%% of the target's CPU time); the sampled_ types are the measured "
			    "values", meta->value_scale, 100 / meta->value_scale);
	for (size_t i = 0; i < meta->nnotes && nc < sizeof m->comments / sizeof m->comments[0]; i++)
		add_comment(b, m->comments, &nc, "note: %s", meta->notes[i]);
	msg->n_comment = nc;
	msg->comment = m->comments;
}

/* The mappings, locations (with their lines) and functions the samples
 * refer to. 0, or -1 out of memory. */
static int build_tables(struct builder *b, struct messages *m, pb_profile *msg)
{
	if (!ALLOC_MESSAGES(b->nmappings, m->mappings, m->mapping_ptrs))
		return -1;
	for (size_t i = 0; i < b->nmappings; i++) {
		const struct mapping_rec *r = &b->mappings[i];
		pb_mapping *mp = &m->mappings[i];
		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->filename = string_index(b, r->path);
		if (r->module) {
			mp->memory_start = r->module->start;
			mp->memory_limit = r->module->end;
			mp->file_offset = r->module->offset;
			mp->build_id = string_index(b, r->module->build_id);
		}
		mp->has_functions = r->functions;
		mp->has_filenames = r->filenames;
		mp->has_line_numbers = r->line_numbers;
		mp->has_inline_frames = r->inline_frames;
		m->mapping_ptrs[i] = mp;
	}
	msg->n_mapping = b->nmappings;
	msg->mapping = m->mapping_ptrs;

	if (!ALLOC_MESSAGES(b->nlocations, m->locations, m->location_ptrs) ||
	    !ALLOC_MESSAGES(b->nlines, m->lines, m->line_ptrs))
		return -1;
	for (size_t i = 0; i < b->nlines; i++) {
		perftools__profiles__line__init(&m->lines[i]);
		m->lines[i].function_id = b->lines[i].function_id;
		m->lines[i].line = b->lines[i].line;
		m->line_ptrs[i] = &m->lines[i];
	}
	for (size_t i = 0; i < b->nlocations; i++) {
		const struct location_rec *r = &b->locations[i];
		pb_location *loc = &m->locations[i];
		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		loc->mapping_id = r->mapping_id;
		loc->address = r->address;
		loc->n_line = r->nlines;
		loc->line = r->nlines ? &m->line_ptrs[r->first_line] : NULL;
		m->location_ptrs[i] = loc;
	}
	msg->n_location = b->nlocations;
	msg->location = m->location_ptrs;

	if (!ALLOC_MESSAGES(b->nfunctions, m->functions, m->function_ptrs))
		return -1;
	for (size_t i = 0; i < b->nfunctions; i++) {
		pb_function *fn = &m->functions[i];
		perftools__profiles__function__init(fn);
		fn->id = i + 1;
		fn->name = b->functions[i].name;
		fn->system_name = b->functions[i].system_name;
		fn->filename = b->functions[i].filename;
		fn->start_line = b->functions[i].start_line;
		m->function_ptrs[i] = fn;
	}
	msg->n_function = b->nfunctions;
	msg->function = m->function_ptrs;
	return 0;
}

static int build_messages(struct builder *b, struct messages *m, pb_profile *msg)
{
	const struct profile *p = b->profile;
	const struct profile_meta *meta = &p->meta;
	size_t ns = p->nentries;
	/* Sampling every thread counts time whether it runs or waits. */
	bool wall = meta->thread_selection && strcmp(meta->thread_selection, "running") != 0;
	int64_t period = report_sample_period_ns(meta);
	size_t ntypes = period > 0 ? 2 : 1;

	int64_t k_samples = string_index(b, "samples"), k_count = string_index(b, "count");
	int64_t k_time = string_index(b, wall ? "wall" : "cpu"), k_ns = string_index(b, "nanoseconds");
	const int64_t label_keys[LABELS_PER_SAMPLE] = { string_index(b, "thread"), string_index(b, "thread_id"),
							string_index(b, "thread_state") };

	perftools__profiles__profile__init(msg);
	for (size_t i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		m->type_ptrs[i] = &m->types[i];
	}
	m->types[0].type = k_samples;
	m->types[0].unit = k_count;
	m->types[1].type = k_time;
	m->types[1].unit = k_ns;
	/* A recipe's weighted profile names its own types: the weight is
	 * the last value, the events (if named) the first. */
	bool typed = meta->value_types != NULL;
	bool scaled = typed && (meta->per_entry_estimates || (isfinite(meta->value_scale) && meta->value_scale > 1));
	if (typed) {
		char names[4][128];
		int n = sscanf(meta->value_types, "%127[^/]/%127[^,],%127[^/]/%127s", names[0], names[1],
			       names[2], names[3]);
		ntypes = n == 4 ? 2 : 1;
		for (size_t i = 0; i < ntypes; i++) {
			m->types[i].type = string_index(b, names[2 * i]);
			m->types[i].unit = string_index(b, names[2 * i + 1]);
			if (scaled) {
				/* the measured values follow the estimates, as sampled_NAME */
				char sampled[160];
				snprintf(sampled, sizeof sampled, "sampled_%.127s", names[2 * i]);
				m->types[ntypes + i].type = string_index(b, sampled);
				m->types[ntypes + i].unit = m->types[i].unit;
			}
		}
		period = 1;
	}
	size_t nmeasured = ntypes;   /* the estimates' types, before the sampled_ ones */
	if (scaled)
		ntypes *= 2;
	perftools__profiles__value_type__init(&m->period_type);
	m->period_type = m->types[nmeasured - 1];
	msg->n_sample_type = ntypes;
	msg->sample_type = m->type_ptrs;
	msg->period_type = &m->period_type;
	msg->period = ntypes == 2 && !typed ? period : 1;
	msg->default_sample_type = typed ? m->types[nmeasured - 1].type : ntypes == 2 ? k_time : k_samples;
	msg->time_nanos = time_nanos(meta->start_time);
	if (isfinite(meta->duration_actual_s) && meta->duration_actual_s > 0)
		msg->duration_nanos = llround(meta->duration_actual_s * 1e9);

	build_comments(b, m, msg, scaled);

	m->values = calloc(4 * (ns ? ns : 1), sizeof *m->values);
	if (!m->values || !ALLOC_MESSAGES(ns, m->samples, m->sample_ptrs) ||
	    !ALLOC_MESSAGES(LABELS_PER_SAMPLE * ns, m->labels, m->label_ptrs))
		return -1;
	size_t kept = 0;
	for (size_t i = 0; i < ns; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (b->dropped[i])
			continue;
		pb_sample *s = &m->samples[kept];
		perftools__profiles__sample__init(s);
		s->n_location_id = b->sample_first[i + 1] - b->sample_first[i];
		s->location_id = b->sample_locations + b->sample_first[i];
		s->n_value = ntypes;
		s->value = &m->values[4 * kept];
		s->value[0] = (int64_t)en->weight;
		if (typed && nmeasured == 2) {
			s->value[0] = (int64_t)en->events;
			s->value[1] = (int64_t)en->weight;
		} else if (ntypes == 2 && !typed) {
			s->value[1] = (int64_t)en->weight * period;
			if (meta->weight_unit && strcmp(meta->weight_unit, "ns") == 0) {
				/* CPU-weighted (hot-cpu): the weight is the CPU ns already */
				s->value[0] = (int64_t)(en->events ? en->events : 1);
				s->value[1] = (int64_t)en->weight;
			}
		}
		if (scaled) {
			double factor = meta->per_entry_estimates ? (en->weight ? en->estimated / (double)en->weight : 1)
								  : meta->value_scale;
			for (size_t v = 0; v < nmeasured; v++) {
				s->value[nmeasured + v] = s->value[v];
				s->value[v] = llround((double)s->value[v] * factor);
			}
		}
		pb_label *l = &m->labels[LABELS_PER_SAMPLE * kept];
		s->label = &m->label_ptrs[LABELS_PER_SAMPLE * kept];
		put_labels(b, s, l, en, label_keys);
		m->sample_ptrs[kept++] = s;
	}
	msg->n_sample = kept;
	msg->sample = m->sample_ptrs;

	if (build_tables(b, m, msg) < 0)
		return -1;

	/* Last: the strings above were still being added. */
	msg->n_string_table = b->nstrings;
	msg->string_table = b->strings;
	return b->oom ? -1 : 0;
}

int report_pprof(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_model model;
	bool focused = o && o->focus;
	struct builder b = { .profile = p };
	struct messages m = { 0 };
	pb_profile msg;
	int rc = -1;

	if (focused && report_model_init(&model, p, o, e) < 0)
		return -1;
	/* string_table[0] must be "" */
	b.strings = array_grow(NULL, &b.strings_cap, 1, sizeof *b.strings);
	if (b.strings && (b.strings[0] = calloc(1, 1)) != NULL)
		b.nstrings = 1;
	if (!b.nstrings || add_stacks(&b, focused ? &model : NULL) < 0 || build_messages(&b, &m, &msg) < 0)
		xerr_oom_doing(e, "writing the pprof profile");
	else
		rc = write_gzip(&msg, out, e);
	messages_release(&m);
	builder_release(&b);
	if (focused)
		report_model_release(&model);
	return rc;
}
