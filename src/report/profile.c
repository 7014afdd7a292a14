/* profile.c — profile model, interning, and the raw profile file. */
#include "report/profile.h"
#include "symbols/demangle.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/output_file.h"
#include "util/slot_index.h"
#include "util/text_escape.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct profile_index {
	char **strings;      /* interned strings, in first-use order */
	size_t nstrings, strings_cap;
	struct slot_index string_index;
	struct slot_index entry_index;   /* over profile.entries */
};



static uint64_t fnv_ptr(uint64_t h, const void *p)
{
	uintptr_t v = (uintptr_t)p;
	return hash_fnv1a(h, &v, sizeof v);
}

/* ---- interning ---------------------------------------------------------- */

const char *profile_intern(struct profile *p, const char *s)
{
	struct profile_index *ix = p->index;
	if (!s)
		return NULL;
	size_t len = strlen(s);
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, s, len);
	struct slot_probe probe = slot_index_probe(&ix->string_index, h);
	for (size_t i; (i = slot_probe_next(&ix->string_index, &probe)) != SLOT_INDEX_NONE;)
		if (strcmp(ix->strings[i], s) == 0)
			return ix->strings[i];
	char **strings = array_grow(ix->strings, &ix->strings_cap, ix->nstrings + 1, sizeof *strings);
	char *copy = malloc(len + 1);
	if (strings)
		ix->strings = strings;
	if (!strings || !copy || slot_index_add(&ix->string_index, h, ix->nstrings) < 0) {
		free(copy);
		return NULL;
	}
	memcpy(copy, s, len + 1);
	ix->strings[ix->nstrings++] = copy;
	return copy;
}

/* Interns s; distinguishes "NULL given" from "out of memory". */
static int intern_into(struct profile *p, const char *s, const char **out)
{
	*out = profile_intern(p, s);
	return (s && !*out) ? -1 : 0;
}

/* ---- lifecycle ---------------------------------------------------------- */

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->index = calloc(1, sizeof *p->index);
	if (!p->index) {
		free(p);
		return NULL;
	}
	struct profile_meta *m = &p->meta;
	m->pid = m->threads = -1;
	m->samples = m->thread_samples = m->stacks_reused = -1;
	m->frequency_asked_hz = m->frequency_achieved_hz = NAN;
	m->duration_asked_s = m->duration_actual_s = NAN;
	m->cpu_min_pct = m->cpu_avg_pct = m->cpu_max_pct = NAN;
	m->stopped_pct = m->thread_stopped_max_pct = m->stop_median_ms = m->stop_p99_ms = NAN;
	m->held_median_ms = m->held_p99_ms = m->thread_held_max_pct = NAN;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nentries; i++)
		free(p->entries[i].stack.frames);
	free(p->entries);
	free(p->modules);
	free(p->meta.notes);
	struct profile_index *ix = p->index;
	array_free_pointers(ix->strings, ix->nstrings);
	slot_index_free(&ix->string_index);
	slot_index_free(&ix->entry_index);
	free(ix);
	free(p);
}

int profile_add_note(struct profile *p, const char *note, struct xerr *e)
{
	const char *s = profile_intern(p, note);
	const char **notes = array_grow(p->meta.notes, &p->notes_cap, p->meta.nnotes + 1, sizeof *notes);
	if (!s || !notes)
		return xerr_oom_doing(e, "adding a profile note");
	p->meta.notes = notes;
	notes[p->meta.nnotes++] = s;
	return 0;
}

/* ---- entries ------------------------------------------------------------ */

/* Frame identity shared with recipe maps (maps.c): strings are interned in
 * the profile, so they compare by pointer once the key is interned too. */
static uint64_t frame_key_hash(uint64_t h, const struct frame *f)
{
	h = fnv_ptr(h, f->function);
	h = fnv_ptr(h, f->file);
	h = hash_fnv1a(h, &f->line, sizeof f->line);
	h = hash_fnv1a(h, &f->inlined, sizeof f->inlined);
	h = fnv_ptr(h, f->module);
	if (!f->function)
		h = hash_fnv1a(h, &f->pc, sizeof f->pc);
	return h;
}

static bool frame_key_eq(const struct frame *a, const struct frame *b)
{
	if (a->function != b->function || a->file != b->file || a->line != b->line ||
	    a->inlined != b->inlined || a->module != b->module)
		return false;
	return a->function || a->pc == b->pc;
}

static uint64_t entry_key_hash(const char *thread, int64_t tid, char state, const struct stack *s)
{
	uint64_t h = fnv_ptr(HASH_FNV1A_SEED, thread);
	h = hash_fnv1a(h, &tid, sizeof tid);
	h = hash_fnv1a(h, &state, 1);
	h = hash_fnv1a(h, &s->nframes, sizeof s->nframes);
	for (size_t i = 0; i < s->nframes; i++)
		h = frame_key_hash(h, &s->frames[i]);
	return h;
}

static bool entry_key_eq(const struct profile_entry *en, const char *thread, int64_t tid, char state,
			 const struct stack *s)
{
	if (en->thread_name != thread || en->tid != tid || en->thread_state != state ||
	    en->stack.nframes != s->nframes)
		return false;
	for (size_t i = 0; i < s->nframes; i++)
		if (!frame_key_eq(&en->stack.frames[i], &s->frames[i]))
			return false;
	return true;
}

uint64_t profile_stack_hash(const struct stack *s)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &s->nframes, sizeof s->nframes);
	for (size_t i = 0; i < s->nframes; i++)
		h = frame_key_hash(h, &s->frames[i]);
	return h;
}

bool profile_stack_eq(const struct stack *a, const struct stack *b)
{
	if (a->nframes != b->nframes)
		return false;
	for (size_t i = 0; i < a->nframes; i++)
		if (!frame_key_eq(&a->frames[i], &b->frames[i]))
			return false;
	return true;
}

/* Copies s with every string interned in p. Returns 0 or -1. */
static int stack_intern_copy(struct profile *p, const struct stack *s, struct stack *out)
{
	out->nframes = s->nframes;
	out->frames = NULL;
	if (!s->nframes)
		return 0;
	out->frames = malloc(s->nframes * sizeof *out->frames);
	if (!out->frames)
		return -1;
	for (size_t i = 0; i < s->nframes; i++) {
		struct frame *f = &out->frames[i];
		*f = s->frames[i];
		if (intern_into(p, s->frames[i].function, &f->function) < 0 ||
		    intern_into(p, s->frames[i].full_function, &f->full_function) < 0 ||
		    intern_into(p, s->frames[i].file, &f->file) < 0 ||
		    intern_into(p, s->frames[i].module, &f->module) < 0 ||
		    intern_into(p, s->frames[i].linkage, &f->linkage) < 0) {
			free(out->frames);
			out->frames = NULL;
			return -1;
		}
	}
	return 0;
}

int profile_add(struct profile *p, const char *thread_name, char state,
		const struct stack *stack, uint64_t weight, struct xerr *e)
{
	return profile_add_tid(p, thread_name, -1, state, stack, weight, e);
}

static int add_entry(struct profile *p, const char *thread_name, int64_t tid, char state,
		     const struct stack *stack, uint64_t weight, uint64_t events, double estimated, struct xerr *e)
{
	struct profile_index *ix = p->index;
	struct stack key;
	const char *thread;
	static const struct stack empty = { 0, NULL };

	if (!weight)
		return 0;
	if (!stack)
		stack = &empty;
	if (intern_into(p, thread_name, &thread) < 0 || stack_intern_copy(p, stack, &key) < 0)
		return xerr_oom_doing(e, "adding a stack to the profile");

	if (tid < 0)
		tid = -1;
	uint64_t h = entry_key_hash(thread, tid, state, &key);
	struct slot_probe probe = slot_index_probe(&ix->entry_index, h);
	for (size_t i; (i = slot_probe_next(&ix->entry_index, &probe)) != SLOT_INDEX_NONE;) {
		struct profile_entry *en = &p->entries[i];
		if (entry_key_eq(en, thread, tid, state, &key)) {
			en->weight += weight;
			en->events += events;
			en->estimated += estimated;
			free(key.frames);
			return 0;
		}
	}
	if (array_reserve(&p->entries, &p->cap, p->nentries + 1, sizeof *p->entries) < 0 ||
	    slot_index_add(&ix->entry_index, h, p->nentries) < 0)
		goto oom;
	p->entries[p->nentries++] = (struct profile_entry){ thread, tid, state, weight, key, events, estimated };
	return 0;
oom:
	free(key.frames);
	return xerr_oom_doing(e, "adding a stack to the profile");
}

int profile_add_tid_events(struct profile *p, const char *thread_name, int64_t tid, char state,
			   const struct stack *stack, uint64_t weight, uint64_t events, struct xerr *e)
{
	return add_entry(p, thread_name, tid, state, stack, weight, events, 0, e);
}

int profile_add_tid(struct profile *p, const char *thread_name, int64_t tid, char state,
		    const struct stack *stack, uint64_t weight, struct xerr *e)
{
	return add_entry(p, thread_name, tid, state, stack, weight, 0, 0, e);
}

int profile_add_events(struct profile *p, const char *thread_name, char state,
		       const struct stack *stack, uint64_t weight, uint64_t events, struct xerr *e)
{
	return add_entry(p, thread_name, -1, state, stack, weight, events, 0, e);
}

int profile_add_events_estimated(struct profile *p, const char *thread_name, char state, const struct stack *stack,
				 uint64_t weight, uint64_t events, double estimated, struct xerr *e)
{
	return add_entry(p, thread_name, -1, state, stack, weight, events, estimated, e);
}

int profile_add_module(struct profile *p, const struct profile_module *m, struct xerr *e)
{
	if (!m->path || profile_module(p, m->path))
		return 0;
	struct profile_module copy = *m;
	struct profile_module *modules = array_grow(p->modules, &p->modules_cap, p->nmodules + 1,
						    sizeof *modules);
	if (!modules || intern_into(p, m->path, &copy.path) < 0 ||
	    intern_into(p, m->build_id && *m->build_id ? m->build_id : NULL, &copy.build_id) < 0)
		return xerr_oom_doing(e, "adding a module to the profile");
	p->modules = modules;
	p->modules[p->nmodules++] = copy;
	return 0;
}

const struct profile_module *profile_module(const struct profile *p, const char *path)
{
	for (size_t i = 0; path && i < p->nmodules; i++)
		if (p->modules[i].path == path || strcmp(p->modules[i].path, path) == 0)
			return &p->modules[i];
	return NULL;
}

uint64_t profile_total_weight(const struct profile *p)
{
	uint64_t total = 0;
	for (size_t i = 0; i < p->nentries; i++)
		total += p->entries[i].weight;
	return total;
}

double profile_observer_pct(const struct profile_meta *m, bool *held)
{
	bool non_stop = m->stop_mode && strcmp(m->stop_mode, "non-stop") == 0;
	*held = non_stop && isfinite(m->thread_held_max_pct);
	if (*held)
		return m->thread_held_max_pct;
	return non_stop && isfinite(m->thread_stopped_max_pct) ? m->thread_stopped_max_pct : m->stopped_pct;
}

static uint64_t estimate_weight(double est)
{
	return est < 1 ? 1 : est >= 9e18 ? (uint64_t)9e18 : (uint64_t)llround(est);
}

void profile_weigh_by_estimates(struct profile *p)
{
	if (!p->meta.per_entry_estimates)
		return;
	for (size_t i = 0; i < p->nentries; i++) {
		struct profile_entry *en = &p->entries[i];
		if (en->weight > 0)
			en->weight = estimate_weight(en->estimated > 0 && isfinite(en->estimated) ? en->estimated
												      : (double)en->weight);
	}
	p->meta.per_entry_estimates = false;
	p->meta.weights_estimated = true;
}

void profile_scale_to_estimates(struct profile *p, double scale)
{
	if (!(scale > 1) || !isfinite(scale) || p->meta.per_entry_estimates)
		return;
	for (size_t i = 0; i < p->nentries; i++)
		if (p->entries[i].weight > 0)
			p->entries[i].weight = estimate_weight((double)p->entries[i].weight * scale);
	p->meta.weights_estimated = true;
}

/* ---- names -------------------------------------------------------------- */

static const char *const lang_names[] = { "unknown", "rust", "c", "c++" };
static const char *const source_names[] = { "dwarf", "debuglink", "symtab", "dynsym", "none" };

const char *profile_lang_name(enum frame_lang lang)
{
	return (unsigned)lang < 4 ? lang_names[lang] : "unknown";
}

static const char *profile_source_name(enum frame_source source)
{
	return (unsigned)source < 5 ? source_names[source] : "none";
}

static int lookup_name(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* ---- saving ------------------------------------------------------------- */

static void put_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	putc('"', out);
	text_put(out, s, TEXT_FORM_JSON);
	putc('"', out);
}

/* Shortest of %.15g/%.17g that reads back as the same double. */
static void put_double(FILE *out, double d)
{
	char buf[64];
	if (isnan(d) || isinf(d)) {
		fputs("null", out);
		return;
	}
	snprintf(buf, sizeof buf, "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof buf, "%.17g", d);
	fputs(buf, out);
}

static void put_int(FILE *out, int64_t v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, v);
}

/* Frame table for saving: distinct frames (all fields) in first-use order. */
struct frame_table {
	const struct frame **frames;
	size_t n, cap;
	struct slot_index index;
};

static uint64_t frame_full_hash(const struct frame *f)
{
	uint64_t h = frame_key_hash(HASH_FNV1A_SEED, f);
	h = hash_fnv1a(h, &f->pc, sizeof f->pc);
	h = hash_fnv1a(h, &f->column, sizeof f->column);
	h = hash_fnv1a(h, &f->lang, sizeof f->lang);
	h = fnv_ptr(h, f->linkage);
	h = hash_fnv1a(h, &f->decl_line, sizeof f->decl_line);
	h = fnv_ptr(h, f->full_function);
	return hash_fnv1a(h, &f->source, sizeof f->source);
}

static bool frame_full_eq(const struct frame *a, const struct frame *b)
{
	return frame_key_eq(a, b) && a->pc == b->pc && a->column == b->column &&
	       a->lang == b->lang && a->source == b->source && a->linkage == b->linkage &&
	       a->decl_line == b->decl_line && a->full_function == b->full_function;
}

/* Returns the frame's index in the table, adding it if new; -1 on OOM. */
static long frame_table_index(struct frame_table *t, const struct frame *f)
{
	uint64_t h = frame_full_hash(f);
	struct slot_probe probe = slot_index_probe(&t->index, h);
	for (size_t i; (i = slot_probe_next(&t->index, &probe)) != SLOT_INDEX_NONE;)
		if (frame_full_eq(t->frames[i], f))
			return (long)i;
	const struct frame **frames = array_grow(t->frames, &t->cap, t->n + 1, sizeof *frames);
	if (!frames)
		return -1;
	t->frames = frames;
	if (slot_index_add(&t->index, h, t->n) < 0)
		return -1;
	t->frames[t->n] = f;
	return (long)t->n++;
}

static void put_meta(FILE *out, const struct profile_meta *m)
{
	fputs("  \"meta\": {\n", out);
#define STR(key, v) do { fputs("    \"" key "\": ", out); put_string(out, v); fputs(",\n", out); } while (0)
#define INT(key, v) do { fputs("    \"" key "\": ", out); put_int(out, v); fputs(",\n", out); } while (0)
#define DBL(key, v) do { fputs("    \"" key "\": ", out); put_double(out, v); fputs(",\n", out); } while (0)
	STR("exe", m->exe);
	STR("build_id", m->build_id);
	INT("pid", m->pid);
	STR("command_line", m->command_line);
	STR("recipe", m->recipe);
	STR("thread_selection", m->thread_selection);
	INT("threads", m->threads);
	DBL("frequency_asked_hz", m->frequency_asked_hz);
	DBL("frequency_achieved_hz", m->frequency_achieved_hz);
	DBL("duration_asked_s", m->duration_asked_s);
	DBL("duration_actual_s", m->duration_actual_s);
	INT("samples", m->samples);
	INT("thread_samples", m->thread_samples);
	INT("stacks_reused", m->stacks_reused);
	DBL("cpu_min_pct", m->cpu_min_pct);
	DBL("cpu_avg_pct", m->cpu_avg_pct);
	DBL("cpu_max_pct", m->cpu_max_pct);
	DBL("stopped_pct", m->stopped_pct);
	DBL("thread_stopped_max_pct", m->thread_stopped_max_pct);
	DBL("stop_median_ms", m->stop_median_ms);
	DBL("stop_p99_ms", m->stop_p99_ms);
	DBL("held_median_ms", m->held_median_ms);
	DBL("held_p99_ms", m->held_p99_ms);
	DBL("thread_held_max_pct", m->thread_held_max_pct);
	STR("walker", m->walker);
	STR("stop_mode", m->stop_mode);
	STR("version", m->version);
	STR("start_time", m->start_time);
	if (m->weight_unit)
		STR("weight_unit", m->weight_unit);
	if (m->weights_estimated)
		fputs("    \"weights_estimated\": true,\n", out);
#undef STR
#undef INT
#undef DBL
	fputs("    \"notes\": [", out);
	for (size_t i = 0; i < m->nnotes; i++) {
		fputs(i ? ", " : "", out);
		put_string(out, m->notes[i]);
	}
	fputs("]\n  },\n", out);
}

static int profile_write(const struct profile *p, FILE *out, struct xerr *e)
{
	struct frame_table table = { 0 };
	long **indices = calloc(p->nentries ? p->nentries : 1, sizeof *indices);
	int rc = -1;

	if (!indices)
		return xerr_oom_doing(e, "saving the profile");
	for (size_t i = 0; i < p->nentries; i++) {
		const struct stack *s = &p->entries[i].stack;
		indices[i] = malloc((s->nframes ? s->nframes : 1) * sizeof **indices);
		if (!indices[i])
			goto oom;
		for (size_t f = 0; f < s->nframes; f++)
			if ((indices[i][f] = frame_table_index(&table, &s->frames[f])) < 0)
				goto oom;
	}

	fprintf(out, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", PROFILE_FORMAT_NAME,
		PROFILE_FORMAT_VERSION);
	put_meta(out, &p->meta);
	fputs("  \"modules\": [", out);
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", out);
		put_string(out, m->path);
		fputs(", \"build_id\": ", out);
		put_string(out, m->build_id);
		fprintf(out, ", \"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"offset\": \"0x%" PRIx64 "\"}",
			m->start, m->end, m->offset);
	}
	fputs(p->nmodules ? "\n  ],\n" : "],\n", out);
	fputs("  \"frames\": [", out);
	for (size_t i = 0; i < table.n; i++) {
		const struct frame *f = table.frames[i];
		fputs(i ? ",\n    {\"function\": " : "\n    {\"function\": ", out);
		put_string(out, f->function);
		if (f->full_function) {
			fputs(", \"full_function\": ", out);
			put_string(out, f->full_function);
		}
		fputs(", \"file\": ", out);
		put_string(out, f->file);
		fprintf(out, ", \"line\": %d, \"column\": %d, \"inlined\": %s, \"lang\": \"%s\", "
			"\"source\": \"%s\", \"module\": ", f->line, f->column,
			f->inlined ? "true" : "false", profile_lang_name(f->lang),
			profile_source_name(f->source));
		put_string(out, f->module);
		fprintf(out, ", \"pc\": \"0x%" PRIx64 "\", \"linkage\": ", f->pc);
		put_string(out, f->linkage);
		fprintf(out, ", \"decl_line\": %d}", f->decl_line);
	}
	fputs(table.n ? "\n  ],\n  \"samples\": [" : "],\n  \"samples\": [", out);
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		char state[2] = { en->thread_state, 0 };
		fputs(i ? ",\n    {\"thread\": " : "\n    {\"thread\": ", out);
		put_string(out, en->thread_name);
		fputs(", \"tid\": ", out);
		put_int(out, en->tid);
		fputs(", \"state\": ", out);
		put_string(out, state);
		fprintf(out, ", \"weight\": %" PRIu64, en->weight);
		if (en->events && (p->meta.weight_unit || p->meta.weights_estimated))
			/* a weighted profile (CPU ns, bytes): how many samples the weight sums */
			fprintf(out, ", \"events\": %" PRIu64, en->events);
		fputs(", \"stack\": [", out);
		for (size_t f = 0; f < en->stack.nframes; f++)
			fprintf(out, f ? ", %ld" : "%ld", indices[i][f]);
		fputs("]}", out);
	}
	fputs(p->nentries ? "\n  ]\n}\n" : "]\n}\n", out);
	rc = 0;
	if (ferror(out))
		rc = xerr_set(e, "cannot write the profile: %s", strerror(errno));
	goto done;
oom:
	xerr_oom_doing(e, "saving the profile");
done:
	array_free_pointers(indices, p->nentries);
	free(table.frames);
	slot_index_free(&table.index);
	return rc;
}

int profile_save(const struct profile *p, const char *path, struct xerr *e)
{
	struct output_file file;
	if (output_file_open(&file, path, e) < 0)
		return -1;
	if (profile_write(p, file.stream, e) < 0) {
		output_file_abort(&file);
		return xerr_prefix(e, "%s", path);
	}
	return output_file_commit(&file, e);
}

/* ---- loading ------------------------------------------------------------ */

/* Only a regular file of at most PROFILE_MAX_BYTES: `report /dev/zero`
 * would read until memory ran out, and a FIFO would block forever. */
static char *read_file(const char *path, struct xerr *e)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		xerr_set(e, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		xerr_set(e, "%s is not a regular file: give a run's output directory or its profile.json", path);
		close(fd);
		return NULL;
	}
	if (st.st_size > PROFILE_MAX_BYTES) {
		xerr_set(e, "%s is %.1f GiB, larger than a profile can be (%d GiB at most): is it a profile.json "
			 "written by xgdbprof?", path, (double)st.st_size / (1 << 30), PROFILE_MAX_BYTES >> 30);
		close(fd);
		return NULL;
	}
	/* One byte more than the size shows a file still growing. */
	size_t cap = (size_t)st.st_size + 2, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		xerr_oom_doing(e, "reading %s", path);
		close(fd);
		return NULL;
	}
	ssize_t n;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xerr_set(e, "cannot read %s: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		len += (size_t)n;
	}
	close(fd);
	if (len > (size_t)st.st_size) {
		xerr_set(e, "%s changed while it was read: read it again once its writer is done", path);
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

const struct profile_limits profile_default_limits = {
	.stack_frames = PROFILE_MAX_STACK_FRAMES,
	.frames = PROFILE_MAX_FRAMES,
	.samples = PROFILE_MAX_SAMPLES,
	.modules = PROFILE_MAX_MODULES,
	.stack_refs = PROFILE_MAX_STACK_REFS,
	.stack_text_bytes = PROFILE_MAX_STACK_TEXT_BYTES,
	.string_bytes = PROFILE_MAX_STRING_BYTES,
};

/* A file being read: the profile it fills, the limits it is read within,
 * and what the samples added up to so far. */
struct loading {
	struct profile *p;
	const struct profile_limits *limits;
	size_t stack_refs;       /* frames of the stacks read */
	uint64_t stack_text;     /* bytes of the kept frames' strings */
	size_t truncated;        /* stacks cut to limits->stack_frames */
	size_t deepest;          /* frames of the deepest of them */
};

static int check_string_length(const struct loading *ld, const char *what, const char *s, struct xerr *e)
{
	size_t len = strlen(s);
	if (len > ld->limits->string_bytes)
		return xerr_set(e, "%s is %zu bytes, longer than a profile holds (%zu at most)", what, len,
				ld->limits->string_bytes);
	return 0;
}

/* Field readers: a missing or null field leaves the default (unknown). */
static int get_string(struct loading *ld, const cJSON *obj, const char *key, const char **out,
		      struct xerr *e)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char what[64];
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return xerr_set(e, "field \"%s\" must be a string", key);
	snprintf(what, sizeof what, "field \"%s\"", key);
	if (check_string_length(ld, what, v->valuestring, e) < 0)
		return -1;
	if (intern_into(ld->p, v->valuestring, out) < 0)
		return xerr_oom(e);
	return 0;
}

static int get_double(const cJSON *obj, const char *key, double *out, struct xerr *e)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return xerr_set(e, "field \"%s\" must be a number", key);
	*out = v->valuedouble;
	return 0;
}

static int get_int(const cJSON *obj, const char *key, int64_t *out, struct xerr *e)
{
	double d = -1;
	if (get_double(obj, key, &d, e) < 0)
		return -1;
	if (d != floor(d) || d > 9007199254740992.0)
		return xerr_set(e, "field \"%s\" must be an integer", key);
	*out = d < 0 ? -1 : (int64_t)d;
	return 0;
}

static int load_meta(struct loading *ld, const cJSON *meta, struct xerr *e)
{
	struct profile *p = ld->p;
	struct profile_meta *m = &p->meta;
	if (!cJSON_IsObject(meta))
		return xerr_set(e, "\"meta\" must be an object");
	if (get_string(ld, meta, "exe", &m->exe, e) || get_string(ld, meta, "build_id", &m->build_id, e) ||
	    get_int(meta, "pid", &m->pid, e) ||
	    get_string(ld, meta, "command_line", &m->command_line, e) ||
	    get_string(ld, meta, "recipe", &m->recipe, e) ||
	    get_string(ld, meta, "thread_selection", &m->thread_selection, e) ||
	    get_int(meta, "threads", &m->threads, e) ||
	    get_double(meta, "frequency_asked_hz", &m->frequency_asked_hz, e) ||
	    get_double(meta, "frequency_achieved_hz", &m->frequency_achieved_hz, e) ||
	    get_double(meta, "duration_asked_s", &m->duration_asked_s, e) ||
	    get_double(meta, "duration_actual_s", &m->duration_actual_s, e) ||
	    get_int(meta, "samples", &m->samples, e) ||
	    get_int(meta, "thread_samples", &m->thread_samples, e) ||
	    get_int(meta, "stacks_reused", &m->stacks_reused, e) ||
	    get_double(meta, "cpu_min_pct", &m->cpu_min_pct, e) ||
	    get_double(meta, "cpu_avg_pct", &m->cpu_avg_pct, e) ||
	    get_double(meta, "cpu_max_pct", &m->cpu_max_pct, e) ||
	    get_double(meta, "stopped_pct", &m->stopped_pct, e) ||
	    get_double(meta, "thread_stopped_max_pct", &m->thread_stopped_max_pct, e) ||
	    get_double(meta, "stop_median_ms", &m->stop_median_ms, e) ||
	    get_double(meta, "stop_p99_ms", &m->stop_p99_ms, e) ||
	    get_double(meta, "held_median_ms", &m->held_median_ms, e) ||
	    get_double(meta, "held_p99_ms", &m->held_p99_ms, e) ||
	    get_double(meta, "thread_held_max_pct", &m->thread_held_max_pct, e) ||
	    get_string(ld, meta, "walker", &m->walker, e) ||
	    get_string(ld, meta, "stop_mode", &m->stop_mode, e) ||
	    get_string(ld, meta, "version", &m->version, e) ||
	    get_string(ld, meta, "start_time", &m->start_time, e) ||
	    get_string(ld, meta, "weight_unit", &m->weight_unit, e))
		return xerr_prefix(e, "meta");
	const cJSON *estimated = cJSON_GetObjectItemCaseSensitive(meta, "weights_estimated");
	if (estimated && !cJSON_IsBool(estimated) && !cJSON_IsNull(estimated))
		return xerr_set(e, "meta: field \"weights_estimated\" must be true or false");
	m->weights_estimated = cJSON_IsTrue(estimated);
	const cJSON *notes = cJSON_GetObjectItemCaseSensitive(meta, "notes"), *n;
	if (notes && !cJSON_IsArray(notes))
		return xerr_set(e, "meta: \"notes\" must be an array of strings");
	cJSON_ArrayForEach(n, notes) {
		if (!cJSON_IsString(n))
			return xerr_set(e, "meta: \"notes\" must be an array of strings");
		if (check_string_length(ld, "a note", n->valuestring, e) < 0)
			return xerr_prefix(e, "meta");
		if (profile_add_note(p, n->valuestring, e) < 0)
			return -1;
	}
	return 0;
}

static int parse_hex(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(text, &end, 16);
	return errno || *end || strncmp(text, "0x", 2) != 0 || !text[2] ? -1 : 0;
}

/* Profiles saved before display names (no "full_function") hold the full
 * demangled name of Rust frames in "function": they are shown as today's
 * runs show them. A display name is its own display name, so a frame that
 * never had a longer name is left as it is. */
static int upgrade_rust_name(struct profile *p, struct frame *f, struct xerr *e)
{
	if (f->lang != FRAME_LANG_RUST || !f->function || f->full_function)
		return 0;
	char *shown = demangle_display_name(f->function);
	if (!shown)
		return xerr_oom(e);
	int rc = 0;
	if (strcmp(shown, f->function) != 0) {
		f->full_function = f->function;
		if (intern_into(p, shown, &f->function) < 0)
			rc = xerr_oom(e);
	}
	free(shown);
	return rc;
}

static int load_frame(struct loading *ld, const cJSON *o, struct frame *f, struct xerr *e)
{
	const char *lang = NULL, *source = NULL, *pc = NULL;
	int64_t line = 0, column = 0, decl_line = 0;
	memset(f, 0, sizeof *f);
	if (!cJSON_IsObject(o))
		return xerr_set(e, "a frame must be an object");
	if (get_string(ld, o, "function", &f->function, e) ||
	    get_string(ld, o, "full_function", &f->full_function, e) ||
	    get_string(ld, o, "file", &f->file, e) ||
	    get_string(ld, o, "module", &f->module, e) || get_int(o, "line", &line, e) ||
	    get_int(o, "column", &column, e) || get_string(ld, o, "lang", &lang, e) ||
	    get_string(ld, o, "source", &source, e) || get_string(ld, o, "pc", &pc, e) ||
	    get_string(ld, o, "linkage", &f->linkage, e) || get_int(o, "decl_line", &decl_line, e))
		return -1;
	f->line = line > 0 && line < INT32_MAX ? (int)line : 0;
	f->decl_line = decl_line > 0 && decl_line < INT32_MAX ? (int)decl_line : 0;
	f->column = column > 0 && column < INT32_MAX ? (int)column : 0;
	const cJSON *inl = cJSON_GetObjectItemCaseSensitive(o, "inlined");
	f->inlined = cJSON_IsTrue(inl);
	int l = lang ? lookup_name(lang_names, 4, lang) : 0;
	int s = source ? lookup_name(source_names, 5, source) : 4;
	if (l < 0 || s < 0)
		return xerr_set(e, "unknown frame %s \"%s\"", l < 0 ? "lang" : "source",
				l < 0 ? lang : source);
	f->lang = (enum frame_lang)l;
	f->source = (enum frame_source)s;
	if (pc && parse_hex(pc, &f->pc) < 0)
		return xerr_set(e, "frame pc \"%s\" is not a 0x hex number", pc);
	return upgrade_rust_name(ld->p, f, e);
}

/* The optional "modules" array (files before it have none). */
static int load_modules(struct loading *ld, const cJSON *modules, struct xerr *e)
{
	const cJSON *it;
	size_t i = 0, n;
	if (!modules || cJSON_IsNull(modules))
		return 0;
	if (!cJSON_IsArray(modules))
		return xerr_set(e, "\"modules\" must be an array");
	if ((n = (size_t)cJSON_GetArraySize(modules)) > ld->limits->modules)
		return xerr_set(e, "\"modules\" holds %zu modules, more than a profile can (%zu at most)", n,
				ld->limits->modules);
	cJSON_ArrayForEach(it, modules) {
		struct profile_module m = { 0 };
		const char *start = NULL, *end = NULL, *offset = NULL;
		if (!cJSON_IsObject(it))
			return xerr_set(e, "module %zu must be an object", i);
		if (get_string(ld, it, "path", &m.path, e) || get_string(ld, it, "build_id", &m.build_id, e) ||
		    get_string(ld, it, "start", &start, e) || get_string(ld, it, "end", &end, e) ||
		    get_string(ld, it, "offset", &offset, e))
			return xerr_prefix(e, "module %zu", i);
		if (!m.path || !start || !end || !offset || parse_hex(start, &m.start) < 0 ||
		    parse_hex(end, &m.end) < 0 || parse_hex(offset, &m.offset) < 0)
			return xerr_set(e, "module %zu needs a \"path\", and \"start\", \"end\" and \"offset\" "
					"as 0x hex numbers", i);
		if (profile_add_module(ld->p, &m, e) < 0)
			return -1;
		i++;
	}
	return 0;
}

/* Bytes of a frame's strings: what renderers may write of it. */
static uint64_t frame_text_bytes(const struct frame *f)
{
	const char *const strings[] = { f->function, f->full_function, f->file, f->module, f->linkage };
	uint64_t n = 0;
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
		n += strings[i] ? strlen(strings[i]) : 0;
	return n;
}

/* The frames "frames" lists, and each one's text bytes. */
struct frame_list {
	struct frame *frames;
	uint64_t *text_bytes;
	size_t n;
};

static int load_frames(struct loading *ld, const cJSON *frames, struct frame_list *fl, struct xerr *e)
{
	const cJSON *it;
	size_t i = 0;
	fl->n = (size_t)cJSON_GetArraySize(frames);
	if (fl->n > ld->limits->frames)
		return xerr_set(e, "\"frames\" holds %zu frames, more than a profile can (%zu at most)", fl->n,
				ld->limits->frames);
	fl->frames = calloc(fl->n ? fl->n : 1, sizeof *fl->frames);
	fl->text_bytes = calloc(fl->n ? fl->n : 1, sizeof *fl->text_bytes);
	if (!fl->frames || !fl->text_bytes)
		return xerr_oom_doing(e, "loading the profile");
	cJSON_ArrayForEach(it, frames) {
		if (load_frame(ld, it, &fl->frames[i], e) < 0)
			return xerr_prefix(e, "frame %zu", i);
		fl->text_bytes[i] = frame_text_bytes(&fl->frames[i]);
		i++;
	}
	return 0;
}

/* The frame standing for the outermost `dropped` frames of a stack cut to
 * the limit: a name only, like a recipe map's key above a stack. */
static int truncated_frame(struct loading *ld, size_t dropped, struct frame *out, struct xerr *e)
{
	char name[64];
	snprintf(name, sizeof name, "[truncated: %zu frames]", dropped);
	*out = (struct frame){ .lang = FRAME_LANG_UNKNOWN, .source = FRAME_SOURCE_NONE };
	if (intern_into(ld->p, name, &out->function) < 0)
		return xerr_oom(e);
	ld->stack_text += strlen(name);
	return 0;
}

/* Adds sample i (it) of the file. scratch holds room for
 * ld->limits->stack_frames frames. */
static int load_sample(struct loading *ld, const cJSON *it, size_t i, const struct frame_list *fl,
		       struct frame *scratch, struct xerr *e)
{
	const struct profile_limits *lim = ld->limits;
	const char *thread = NULL, *state = NULL;
	int64_t weight = 0, tid = -1, events = -1;
	const cJSON *stack = cJSON_GetObjectItemCaseSensitive(it, "stack"), *ix;
	if (!cJSON_IsObject(it) || get_string(ld, it, "thread", &thread, e) ||
	    get_string(ld, it, "state", &state, e) || get_int(it, "weight", &weight, e) ||
	    get_int(it, "tid", &tid, e) || get_int(it, "events", &events, e))
		return xerr_prefix(e, "sample %zu", i);
	if (!cJSON_IsArray(stack) || weight <= 0)
		return xerr_set(e, "sample %zu: needs a \"stack\" array and a positive \"weight\"", i);
	size_t n = (size_t)cJSON_GetArraySize(stack), f = 0;
	if (n > lim->stack_refs - ld->stack_refs)
		return xerr_set(e, "sample %zu: the samples' stacks hold more than %zu frames in all, more than a "
				"profile can", i, lim->stack_refs);
	ld->stack_refs += n;
	/* the leaf end is kept: frames[0] is the leaf */
	size_t kept = n > lim->stack_frames ? lim->stack_frames - 1 : n;
	cJSON_ArrayForEach(ix, stack) {
		if (!cJSON_IsNumber(ix) || ix->valuedouble < 0 || ix->valuedouble >= (double)fl->n ||
		    ix->valuedouble != floor(ix->valuedouble))
			return xerr_set(e, "sample %zu: stack refers to a frame not in \"frames\"", i);
		if (f < kept) {
			scratch[f] = fl->frames[(size_t)ix->valuedouble];
			ld->stack_text += fl->text_bytes[(size_t)ix->valuedouble];
		}
		f++;
	}
	if (kept < n) {
		if (truncated_frame(ld, n - kept, &scratch[kept], e) < 0)
			return -1;
		ld->truncated++;
		if (n > ld->deepest)
			ld->deepest = n;
	}
	if (ld->stack_text > lim->stack_text_bytes)
		return xerr_set(e, "sample %zu: the samples' stacks spell out to more than %" PRIu64 " bytes of names "
				"and paths, more than a profile can", i, lim->stack_text_bytes);
	struct stack s = { kept < n ? kept + 1 : n, scratch };
	return profile_add_tid_events(ld->p, thread, tid, state && state[0] ? state[0] : '?', &s, (uint64_t)weight,
				      events > 0 ? (uint64_t)events : 0, e);
}

static int load_body(struct loading *ld, const cJSON *root, struct xerr *e)
{
	const struct profile_limits *lim = ld->limits;
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (!cJSON_IsString(format) || strcmp(format->valuestring, PROFILE_FORMAT_NAME) != 0)
		return xerr_set(e, "not an xgdbprof profile (no \"format\": \"%s\")", PROFILE_FORMAT_NAME);
	if (!cJSON_IsNumber(version) || version->valuedouble != PROFILE_FORMAT_VERSION)
		return xerr_set(e, "profile format version %g is not supported (this xgdbprof reads %d)",
				cJSON_IsNumber(version) ? version->valuedouble : -1.0,
				PROFILE_FORMAT_VERSION);
	if (load_meta(ld, cJSON_GetObjectItemCaseSensitive(root, "meta"), e) < 0 ||
	    load_modules(ld, cJSON_GetObjectItemCaseSensitive(root, "modules"), e) < 0)
		return -1;

	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "frames");
	const cJSON *samples = cJSON_GetObjectItemCaseSensitive(root, "samples");
	if (!cJSON_IsArray(frames) || !cJSON_IsArray(samples))
		return xerr_set(e, "\"frames\" and \"samples\" must be arrays");
	size_t nsamples = (size_t)cJSON_GetArraySize(samples);
	if (nsamples > lim->samples)
		return xerr_set(e, "\"samples\" holds %zu samples, more than a profile can (%zu at most)", nsamples,
				lim->samples);
	struct frame_list fl = { 0 };
	struct frame *scratch = malloc(lim->stack_frames * sizeof *scratch);
	size_t i = 0;
	const cJSON *it;
	int rc = -1;
	if (!scratch)
		xerr_oom_doing(e, "loading the profile");
	else if (load_frames(ld, frames, &fl, e) == 0) {
		rc = 0;
		cJSON_ArrayForEach(it, samples) {
			if ((rc = load_sample(ld, it, i++, &fl, scratch, e)) < 0)
				break;
		}
	}
	free(fl.frames);
	free(fl.text_bytes);
	free(scratch);
	if (rc == 0 && ld->truncated) {
		char note[256];
		snprintf(note, sizeof note, "%zu stack%s deeper than %zu frames (the deepest %zu frames) cut to %s "
			 "%zu innermost frames, where the time is spent, under a \"[truncated: N frames]\" frame",
			 ld->truncated, ld->truncated == 1 ? "" : "s", lim->stack_frames, ld->deepest,
			 ld->truncated == 1 ? "its" : "their", lim->stack_frames - 1);
		rc = profile_add_note(ld->p, note, e);
	}
	return rc;
}

struct profile *profile_load_within(const char *path, const struct profile_limits *limits, struct xerr *e)
{
	char *text = read_file(path, e);
	if (!text)
		return NULL;
	cJSON *root = cJSON_Parse(text);
	free(text);
	if (!root) {
		xerr_set(e, "%s: not valid JSON (is it a profile.json written by xgdbprof?)", path);
		return NULL;
	}
	struct profile *p = profile_new();
	if (!p) {
		cJSON_Delete(root);
		xerr_oom_doing(e, "loading %s", path);
		return NULL;
	}
	struct loading ld = { .p = p, .limits = limits };
	if (load_body(&ld, root, e) < 0) {
		xerr_prefix(e, "%s", path);
		profile_free(p);
		p = NULL;
	}
	cJSON_Delete(root);
	return p;
}

struct profile *profile_load(const char *path, struct xerr *e)
{
	return profile_load_within(path, &profile_default_limits, e);
}
