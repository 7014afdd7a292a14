/* test_report_pprof.c — the pprof and speedscope writers on a small profile
 * built here: the pprof file is gunzipped and decoded with the same
 * protobuf-c messages (decoding is independent of how we encoded), the
 * speedscope file parsed with cJSON; and the model fields these formats
 * need (thread ids, modules, linkage names, first lines) survive
 * profile.json. End to end with `go tool pprof` and speedscope's schema:
 * tests/pprof.sh. */
#include "report/profile.h"
#include "report/report.h"
#include "report/pprof.pb-c.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "check.h"

#define EXE "/srv/app"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define SRC "/src/app/main.rs"
#define HOT_PC 0x55550000a010ULL

typedef int (*renderer)(const struct profile *, FILE *, const struct report_options *, struct xerr *);

static struct frame frame(const char *function, const char *linkage, const char *file, int line, int decl_line,
			  bool inlined, const char *module, uint64_t pc, enum frame_source source)
{
	struct frame f = { .pc = pc, .function = function, .file = file, .line = line, .inlined = inlined,
			   .lang = FRAME_LANG_RUST, .source = source, .module = module,
			   .linkage = linkage, .decl_line = decl_line };
	return f;
}

/* Two threads; the hot PC holds an inline chain leaf_mix → middle → hot
 * (one Location, three Lines); libc frames come from .dynsym only; one
 * address in no function; a thread name with an escape sequence. */
static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	struct xerr e;
	struct profile_meta *m = &p->meta;
	m->exe = profile_intern(p, EXE);
	m->pid = 77;
	m->command_line = profile_intern(p, EXE " --serve");
	m->recipe = profile_intern(p, "hot-cpu");
	m->thread_selection = profile_intern(p, "running");
	m->frequency_asked_hz = 99;
	m->frequency_achieved_hz = 50;       /* period 20 ms */
	m->duration_actual_s = 2.5;
	m->stopped_pct = 4.2;
	m->stop_median_ms = 1.1;
	m->stop_p99_ms = 2.9;
	m->version = profile_intern(p, "9.9.9");
	m->start_time = profile_intern(p, "2025-03-14T09:26:53Z");
	struct profile_module exe = { EXE, "00112233445566778899aabbccddeeff00112233", 0x555500000000,
				      0x555500100000, 0 };
	struct profile_module libc = { LIBC, "", 0x7f0000000000, 0x7f0000200000, 0x1000 };
	if (profile_add_module(p, &exe, &e) < 0 || profile_add_module(p, &libc, &e) < 0)
		exit(1);

	struct frame start = frame("__libc_start_main", "__libc_start_main", NULL, 0, 0, false, LIBC,
				   0x7f0000001234, FRAME_SOURCE_DYNSYM);
	struct frame main_fn = frame("app::main", "_ZN3app4main17h0123456789abcdefE", SRC, 40, 38, false, EXE,
				     0x55550000b000, FRAME_SOURCE_DWARF);
	struct frame leaf = frame("app::leaf_mix", "_ZN3app8leaf_mix17h1111111111111111E", SRC, 12, 11, true,
				  EXE, HOT_PC, FRAME_SOURCE_DWARF);
	struct frame middle = frame("app::middle", "_ZN3app6middle17h2222222222222222E", SRC, 20, 19, true,
				    EXE, HOT_PC, FRAME_SOURCE_DWARF);
	struct frame hot = frame("app::hot", "_ZN3app3hot17h3333333333333333E", SRC, 30, 28, false, EXE,
				 HOT_PC, FRAME_SOURCE_DWARF);
	struct frame nowhere = frame(NULL, NULL, NULL, 0, 0, false, EXE, 0x55550000c000, FRAME_SOURCE_NONE);
	struct frame memcpy_fn = frame("memcpy", "memcpy", NULL, 0, 0, false, LIBC, 0x7f0000005000,
				       FRAME_SOURCE_DYNSYM);

	struct frame s1[] = { leaf, middle, hot, main_fn, start };   /* leaf first */
	struct frame s2[] = { memcpy_fn, hot, main_fn, start };
	struct frame s3[] = { nowhere, main_fn, start };
	struct stack a = { 5, s1 }, b = { 4, s2 }, c = { 3, s3 };
	/* memcpy's caller "hot" has another pc than the inline chain's */
	s2[1].pc = HOT_PC + 0x40;
	if (profile_add_tid(p, "worker", 101, 'R', &a, 6, &e) < 0 ||
	    profile_add_tid(p, "worker", 101, 'R', &b, 2, &e) < 0 ||
	    profile_add_tid(p, "evil\x1b[2J", 102, 'R', &a, 3, &e) < 0 ||
	    profile_add_tid(p, "evil\x1b[2J", 102, 'R', &c, 1, &e) < 0)
		exit(1);
	return p;
}

static char *render(renderer r, const struct profile *p, const struct report_options *o, size_t *len)
{
	char *buf = NULL;
	struct xerr e = { "" };
	FILE *out = open_memstream(&buf, len);
	int rc = r(p, out, o, &e);
	fclose(out);
	if (rc < 0) {
		fprintf(stderr, "render failed: %s\n", e.msg);
		free(buf);
		return NULL;
	}
	return buf;
}

static Perftools__Profiles__Profile *decode(const char *gz, size_t len)
{
	size_t cap = 1 << 20, n = 0;
	unsigned char *raw = malloc(cap);
	z_stream zs = { 0 };
	CHECK(raw && inflateInit2(&zs, 15 + 16) == Z_OK);   /* gzip only */
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = (uInt)len;
	zs.next_out = raw;
	zs.avail_out = (uInt)cap;
	int z = inflate(&zs, Z_FINISH);
	n = cap - zs.avail_out;
	inflateEnd(&zs);
	CHECK_MSG(z == Z_STREAM_END, "not one complete gzip stream (inflate: %d)", z);
	Perftools__Profiles__Profile *msg = perftools__profiles__profile__unpack(NULL, n, raw);
	free(raw);
	CHECK_MSG(msg, "gunzipped bytes are not a profile message");
	return msg;
}

static const char *str(const Perftools__Profiles__Profile *m, int64_t i)
{
	return i >= 0 && (size_t)i < m->n_string_table ? m->string_table[i] : "(bad index)";
}

static const Perftools__Profiles__Function *function(const Perftools__Profiles__Profile *m, uint64_t id)
{
	return id >= 1 && id <= m->n_function && m->function[id - 1]->id == id ? m->function[id - 1] : NULL;
}

static const Perftools__Profiles__Location *location(const Perftools__Profiles__Profile *m, uint64_t id)
{
	for (size_t i = 0; i < m->n_location; i++)
		if (m->location[i]->id == id)
			return m->location[i];
	return NULL;
}

static const char *label_str(const Perftools__Profiles__Profile *m, const Perftools__Profiles__Sample *s,
			     const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(str(m, s->label[i]->key), key) == 0)
			return str(m, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const Perftools__Profiles__Profile *m, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(str(m, s->label[i]->key), key) == 0)
			return s->label[i]->num;
	return -1;
}

static void test_pprof(const struct profile *p)
{
	size_t len, len2;
	char *gz = render(report_pprof, p, NULL, &len), *again = render(report_pprof, p, NULL, &len2);
	CHECK(gz && again && len == len2 && memcmp(gz, again, len) == 0);   /* deterministic */
	CHECK_MSG(gz && len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b, "gzip magic");
	Perftools__Profiles__Profile *m = gz ? decode(gz, len) : NULL;
	free(gz);
	free(again);
	if (!m)
		return;

	CHECK(m->n_string_table > 0 && strcmp(m->string_table[0], "") == 0);
	CHECK(m->n_sample_type == 2);
	if (m->n_sample_type == 2) {
		CHECK_STR(str(m, m->sample_type[0]->type), "samples");
		CHECK_STR(str(m, m->sample_type[0]->unit), "count");
		CHECK_STR(str(m, m->sample_type[1]->type), "cpu");   /* threads: running */
		CHECK_STR(str(m, m->sample_type[1]->unit), "nanoseconds");
	}
	CHECK(m->period_type && strcmp(str(m, m->period_type->type), "cpu") == 0);
	CHECK_MSG(m->period == 20000000, "period %lld, expected 20 ms at the achieved 50 Hz", (long long)m->period);
	CHECK(m->time_nanos == 1741944413LL * 1000000000);
	CHECK(m->duration_nanos == 2500000000LL);
	CHECK_STR(str(m, m->default_sample_type), "cpu");

	bool version = false, cmdline = false, observer = false;
	for (size_t i = 0; i < m->n_comment; i++) {
		const char *c = str(m, m->comment[i]);
		version |= strstr(c, "xgdbprof 9.9.9") != NULL;
		cmdline |= strcmp(c, "command line: " EXE " --serve") == 0;
		observer |= strstr(c, "observer effect: target stopped 4.2% of the time; per stop median 1.10 ms, "
				   "p99 2.90 ms") != NULL;
	}
	CHECK(version && cmdline && observer);

	/* mappings: the executable first, with what the profile knows */
	CHECK(m->n_mapping == 2);
	if (m->n_mapping == 2) {
		const Perftools__Profiles__Mapping *x = m->mapping[0], *l = m->mapping[1];
		CHECK_STR(str(m, x->filename), EXE);
		CHECK_STR(str(m, x->build_id), "00112233445566778899aabbccddeeff00112233");
		CHECK(x->id == 1 && x->memory_start == 0x555500000000 && x->memory_limit == 0x555500100000);
		CHECK(x->has_functions && x->has_filenames && x->has_line_numbers && x->has_inline_frames);
		CHECK_STR(str(m, l->filename), LIBC);
		CHECK(l->build_id == 0 && l->file_offset == 0x1000);
		/* .dynsym names, nothing else: say so, or pprof would trust absent lines */
		CHECK(l->has_functions && !l->has_filenames && !l->has_line_numbers && !l->has_inline_frames);
	}

	/* samples: one per entry, values [count, count * period], labels */
	CHECK(m->n_sample == p->nentries);
	size_t hot_locations = 0;
	for (size_t i = 0; i < m->n_location; i++)
		hot_locations += m->location[i]->address == HOT_PC;
	CHECK_MSG(hot_locations == 1, "%zu locations for the one hot PC", hot_locations);
	for (size_t i = 0; i < m->n_sample && i < p->nentries; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		const struct profile_entry *en = &p->entries[i];
		CHECK(s->n_value == 2 && s->value[0] == (int64_t)en->weight &&
		      s->value[1] == (int64_t)en->weight * 20000000);
		CHECK(label_num(m, s, "thread_id") == en->tid);
		const char *thread = label_str(m, s, "thread");
		CHECK(thread && strcmp(thread, en->thread_name[0] == 'e' ? "evil\\x1b[2J" : "worker") == 0);
		CHECK(s->n_location_id > 0);
	}
	/* the first sample: leaf PC first, its Location's Lines innermost first */
	const Perftools__Profiles__Location *hot = m->n_sample ? location(m, m->sample[0]->location_id[0]) : NULL;
	CHECK(hot && hot->address == HOT_PC && hot->mapping_id == 1 && hot->n_line == 3);
	if (hot && hot->n_line == 3) {
		static const struct { const char *name, *system; int64_t line, start; } want[] = {
			{ "app::leaf_mix", "_ZN3app8leaf_mix17h1111111111111111E", 12, 11 },
			{ "app::middle", "_ZN3app6middle17h2222222222222222E", 20, 19 },
			{ "app::hot", "_ZN3app3hot17h3333333333333333E", 30, 28 },
		};
		for (size_t i = 0; i < 3; i++) {
			const Perftools__Profiles__Function *f = function(m, hot->line[i]->function_id);
			CHECK(f != NULL);
			if (!f)
				continue;
			CHECK_STR(str(m, f->name), want[i].name);
			CHECK_STR(str(m, f->system_name), want[i].system);
			CHECK_STR(str(m, f->filename), SRC);
			CHECK(f->start_line == want[i].start && hot->line[i]->line == want[i].line);
		}
	}
	/* the root, then: one Line, no file */
	size_t n0 = m->n_sample ? m->sample[0]->n_location_id : 0;
	const Perftools__Profiles__Location *root = n0 == 3 ? location(m, m->sample[0]->location_id[2]) : NULL;
	CHECK_MSG(root && root->mapping_id == 2 && root->n_line == 1, "sample 0 has %zu locations, expected 3", n0);
	/* the address in no function: a Location without Line */
	const Perftools__Profiles__Location *nowhere = m->n_sample == 4 ? location(m, m->sample[3]->location_id[0])
									  : NULL;
	CHECK(nowhere && nowhere->address == 0x55550000c000 && nowhere->n_line == 0 && nowhere->mapping_id == 1);
	/* target text is escaped: no control byte anywhere in the strings */
	for (size_t i = 0; i < m->n_string_table; i++)
		for (const char *c = m->string_table[i]; *c; c++)
			CHECK_MSG((unsigned char)*c >= 0x20 && *c != 0x7f, "string %zu holds a control byte", i);
	perftools__profiles__profile__free_unpacked(m, NULL);

	/* --focus keeps the samples with a matching frame */
	struct report_options o;
	report_options_init(&o);
	o.focus = "memcpy";
	gz = render(report_pprof, p, &o, &len);
	m = gz ? decode(gz, len) : NULL;
	CHECK(m && m->n_sample == 1 && m->sample[0]->value[0] == 2);
	if (m)
		perftools__profiles__profile__free_unpacked(m, NULL);
	free(gz);

	/* a profile of counts (tracing): one sample type, no time */
	struct profile *q = profile_new();
	struct frame f = frame("f", NULL, NULL, 0, 0, false, NULL, 0, FRAME_SOURCE_NONE);
	struct stack s = { 1, &f };
	struct xerr e;
	CHECK(profile_add(q, NULL, '?', &s, 5, &e) == 0);
	gz = render(report_pprof, q, NULL, &len);
	m = gz ? decode(gz, len) : NULL;
	CHECK(m && m->n_sample_type == 1 && m->n_sample == 1 && m->sample[0]->value[0] == 5 &&
	      m->sample[0]->n_label == 0 && m->n_mapping == 0 && m->location[0]->mapping_id == 0);
	if (m)
		perftools__profiles__profile__free_unpacked(m, NULL);
	free(gz);
	profile_free(q);
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static void test_speedscope(const struct profile *p)
{
	size_t len;
	char *text = render(report_speedscope, p, NULL, &len);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;
	CHECK_MSG(doc, "speedscope output is not JSON");
	free(text);
	if (!doc)
		return;
	CHECK_STR(cJSON_GetStringValue(get(doc, "$schema")), "https://www.speedscope.app/file-format-schema.json");
	const cJSON *frames = get(get(doc, "shared"), "frames"), *profiles = get(doc, "profiles");
	int nframes = cJSON_GetArraySize(frames);
	CHECK(cJSON_IsArray(frames) && cJSON_IsArray(profiles) && cJSON_GetArraySize(profiles) == 2);
	/* a frame is a function: its first line, not the sampled one */
	bool hot_seen = false;
	const cJSON *fr;
	cJSON_ArrayForEach(fr, frames) {
		const char *name = cJSON_GetStringValue(get(fr, "name"));
		if (name && strcmp(name, "app::hot") == 0) {
			CHECK(!hot_seen);   /* two pcs, one function: one frame */
			hot_seen = true;
			CHECK_STR(cJSON_GetStringValue(get(fr, "file")), SRC);
			CHECK(cJSON_GetNumberValue(get(fr, "line")) == 28);
		}
	}
	CHECK(hot_seen);
	/* heaviest thread first: worker (8 samples) before evil (4) */
	const cJSON *worker = cJSON_GetArrayItem(profiles, 0), *evil = cJSON_GetArrayItem(profiles, 1);
	CHECK_STR(cJSON_GetStringValue(get(worker, "name")), "worker (tid 101)");
	CHECK_STR(cJSON_GetStringValue(get(evil, "name")), "evil\x1b[2J (tid 102)");   /* JSON gives it back */
	const cJSON *pr;
	cJSON_ArrayForEach(pr, profiles) {
		const cJSON *samples = get(pr, "samples"), *weights = get(pr, "weights"), *st, *w;
		CHECK_STR(cJSON_GetStringValue(get(pr, "type")), "sampled");
		CHECK_STR(cJSON_GetStringValue(get(pr, "unit")), "nanoseconds");
		CHECK(cJSON_GetArraySize(samples) == cJSON_GetArraySize(weights) && cJSON_GetArraySize(samples) > 0);
		double sum = 0;
		cJSON_ArrayForEach(w, weights)
			sum += w->valuedouble;
		CHECK(sum == cJSON_GetNumberValue(get(pr, "endValue")) && cJSON_GetNumberValue(get(pr, "startValue")) == 0);
		cJSON_ArrayForEach(st, samples) {
			const cJSON *ix;
			cJSON_ArrayForEach(ix, st)
				CHECK(ix->valueint >= 0 && ix->valueint < nframes);
			/* root first */
			const cJSON *first = cJSON_GetArrayItem(frames, cJSON_GetArrayItem(st, 0)->valueint);
			CHECK_STR(cJSON_GetStringValue(get(first, "name")), "__libc_start_main");
		}
	}
	/* worker: 6 and 2 samples of 20 ms */
	CHECK(cJSON_GetNumberValue(get(worker, "endValue")) == 8 * 20e6);
	cJSON_Delete(doc);
}

/* thread ids, modules, linkage names and first lines survive the file */
static void test_round_trip(const struct profile *p)
{
	char path[] = "/tmp/test_report_pprof.XXXXXX";
	int fd = mkstemp(path);
	struct xerr e = { "" };
	close(fd);
	CHECK_MSG(profile_save(p, path, &e) == 0, "save: %s", e.msg);
	struct profile *q = profile_load(path, &e);
	CHECK_MSG(q, "load: %s", e.msg);
	unlink(path);
	if (!q)
		return;
	CHECK(q->nentries == p->nentries && q->nmodules == 2);
	for (size_t i = 0; i < q->nentries && i < p->nentries; i++)
		CHECK(q->entries[i].tid == p->entries[i].tid);
	const struct profile_module *x = profile_module(q, EXE), *l = profile_module(q, LIBC);
	CHECK(x && x->start == 0x555500000000 && x->end == 0x555500100000 && x->offset == 0 &&
	      x->build_id && strcmp(x->build_id, "00112233445566778899aabbccddeeff00112233") == 0);
	CHECK(l && l->offset == 0x1000 && !l->build_id);
	const struct frame *hot = q->entries[0].stack.frames;
	CHECK_STR(hot[0].linkage, "_ZN3app8leaf_mix17h1111111111111111E");
	CHECK(hot[0].decl_line == 11 && hot[2].decl_line == 28);
	size_t a, b;
	char *x1 = render(report_pprof, p, NULL, &a), *x2 = render(report_pprof, q, NULL, &b);
	CHECK_MSG(x1 && x2 && a == b && memcmp(x1, x2, a) == 0, "the loaded profile gives another pprof file");
	free(x1);
	free(x2);
	profile_free(q);
}

/* a malformed module is refused, naming it; a file without modules loads */
static void test_load_modules(void)
{
	static const struct { const char *modules, *error; } cases[] = {
		{ "[{\"path\": \"/x\", \"start\": \"12\", \"end\": \"0x2\", \"offset\": \"0x0\"}]",
		  "module 0 needs" },
		{ "[{\"start\": \"0x1\", \"end\": \"0x2\", \"offset\": \"0x0\"}]", "module 0 needs a \"path\"" },
		{ "{}", "\"modules\" must be an array" },
		{ "[]", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[] = "/tmp/test_report_pprof.XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");
		fprintf(f, "{\"format\": \"xgdbprof-profile\", \"version\": 1, \"meta\": {}, \"modules\": %s, "
			"\"frames\": [], \"samples\": []}", cases[i].modules);
		fclose(f);
		struct xerr e = { "" };
		struct profile *p = profile_load(path, &e);
		unlink(path);
		if (cases[i].error)
			CHECK_MSG(!p && strstr(e.msg, cases[i].error), "case %zu: %s", i, p ? "loaded" : e.msg);
		else
			CHECK_MSG(p && p->nmodules == 0, "case %zu: %s", i, e.msg);
		profile_free(p);
	}
}

/* A recipe's sum() map under the stop budget: pprof's named values are
 * the whole-run estimates (measured x value_scale), the measured ones
 * follow as sampled_NAME, and the default index stays the estimated
 * weight; a heap snapshot's weight_unit survives profile.json. */
static void test_pprof_scaled(void)
{
	struct profile *p = profile_new();
	struct xerr e = { "" };
	struct frame f = frame("app::alloc_site", NULL, SRC, 5, 4, false, EXE, 0x555500001000, FRAME_SOURCE_DWARF);
	struct stack st = { 1, &f };
	CHECK(p && profile_add_events(p, NULL, '?', &st, 300, 3, &e) == 0);
	p->meta.value_types = profile_intern(p, "alloc_objects/count,alloc_space/bytes");
	p->meta.value_scale = 20;
	size_t len;
	char *gz = render(report_pprof, p, NULL, &len);
	Perftools__Profiles__Profile *m = gz ? decode(gz, len) : NULL;
	free(gz);
	CHECK(m && m->n_sample_type == 4 && m->n_sample == 1);
	if (m && m->n_sample_type == 4 && m->n_sample == 1) {
		CHECK_STR(str(m, m->sample_type[0]->type), "alloc_objects");
		CHECK_STR(str(m, m->sample_type[1]->type), "alloc_space");
		CHECK_STR(str(m, m->sample_type[2]->type), "sampled_alloc_objects");
		CHECK_STR(str(m, m->sample_type[3]->type), "sampled_alloc_space");
		CHECK_STR(str(m, m->sample_type[3]->unit), "bytes");
		CHECK_STR(str(m, m->default_sample_type), "alloc_space");
		const int64_t *v = m->sample[0]->value;
		CHECK_MSG(m->sample[0]->n_value == 4 && v[0] == 60 && v[1] == 6000 && v[2] == 3 && v[3] == 300,
			  "values %lld %lld %lld %lld", (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
		bool said = false;
		for (size_t i = 0; i < m->n_comment; i++)
			said |= strstr(str(m, m->comment[i]), "values: whole-run estimates, the measured values times 20 ") != NULL;
		CHECK(said);
	}
	if (m)
		perftools__profiles__profile__free_unpacked(m, NULL);

	char path[] = "/tmp/test_report_pprof.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	p->meta.weight_unit = profile_intern(p, "bytes");
	CHECK_MSG(profile_save(p, path, &e) == 0, "save: %s", e.msg);
	struct profile *q = profile_load(path, &e);
	unlink(path);
	CHECK(q && q->meta.weight_unit && strcmp(q->meta.weight_unit, "bytes") == 0);
	profile_free(q);
	profile_free(p);
}

int main(void)
{
	struct profile *p = sample_profile();
	test_pprof(p);
	test_speedscope(p);
	test_round_trip(p);
	test_load_modules();
	test_pprof_scaled();
	profile_free(p);
	return test_exit_code();
}
