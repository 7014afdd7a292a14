/* test_report_limits.c — deep and wide profiles through the readers and
 * every renderer: profile.json files written here (a stack deeper than
 * the reader keeps, one frame repeated down a stack, many samples side by
 * side) load within profile_default_limits, render in every format of the
 * table, and their pprof output decodes with protobuf-c (the reader `go tool
 * pprof` stands for); a profile built in memory deeper than any file keeps
 * renders too (no renderer recurses on depth); and each limit of
 * struct profile_limits, met, loads, and passed by one, is one line of
 * error. tests/deep_stacks.sh runs the same inputs through the CLI. */
#include "report/profile.h"
#include "report/report.h"
#include "report/report_format.h"
#include "report/pprof.pb-c.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "check.h"

/* What a rendering of a truncated stack may reach: the 16,384 kept frames
 * written out by the widest format (the JSON report lists a path's frames
 * twice, ~450 bytes each). */
#define MAX_RENDERING_BYTES ((size_t)64 << 20)

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/test_report_limits.XXXXXX");
	int fd = path ? mkstemp(path) : -1;
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("test_report_limits: temporary file");
		exit(1);
	}
	close(fd);
	return path;
}

/* A profile.json of nframes frames named PREFIX0, PREFIX1, ... and the
 * samples' JSON text as given. */
static char *profile_file(const char *prefix, size_t nframes, const char *samples)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	fputs("{\"format\": \"xgdbprof-profile\", \"version\": 1, \"meta\": {\"notes\": []}, \"frames\": [", out);
	for (size_t i = 0; i < nframes; i++)
		fprintf(out, "%s{\"function\": \"%s%zu\", \"lang\": \"c\", \"pc\": \"0x%zx\"}", i ? ", " : "",
			prefix, i, 0x1000 + i);
	fprintf(out, "], \"samples\": [%s]}", samples);
	fclose(out);
	char *path = write_temp(text, len);
	free(text);
	return path;
}

/* The JSON of one sample whose stack lists frame indices first, first + step, ... (n of them). */
static void put_sample(FILE *out, uint64_t weight, size_t n, size_t first, size_t step)
{
	fprintf(out, "{\"thread\": \"t\", \"state\": \"R\", \"weight\": %" PRIu64 ", \"stack\": [", weight);
	for (size_t i = 0; i < n; i++)
		fprintf(out, i ? ", %zu" : "%zu", first + i * step);
	fputs("]}", out);
}

static Perftools__Profiles__Profile *decode_pprof(const char *gz, size_t len)
{
	size_t cap = 1 << 20, n = 0;
	unsigned char *raw = malloc(cap);
	z_stream zs = { 0 };
	int z = inflateInit2(&zs, 15 + 16);   /* gzip only */
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = (uInt)len;
	while (raw && z == Z_OK) {
		if (n == cap) {
			unsigned char *bigger = realloc(raw, cap *= 2);
			if (!bigger)
				break;
			raw = bigger;
		}
		zs.next_out = raw + n;
		zs.avail_out = (uInt)(cap - n);
		z = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
	}
	inflateEnd(&zs);
	CHECK_MSG(z == Z_STREAM_END, "not one complete gzip stream (inflate: %d)", z);
	Perftools__Profiles__Profile *msg = z == Z_STREAM_END ? perftools__profiles__profile__unpack(NULL, n, raw) : NULL;
	free(raw);
	CHECK_MSG(msg, "gunzipped bytes are not a profile message");
	return msg;
}

/* Renders p in every format of the table: each succeeds within
 * MAX_RENDERING_BYTES, and the pprof one decodes to nsamples samples,
 * the first of them (the deepest) with first_locations locations. */
static void render_every_format(const char *what, const struct profile *p, size_t nsamples, size_t first_locations)
{
	for (size_t i = 0; i < report_format_count(); i++) {
		const struct report_format *f = report_format_at(i);
		char *buf = NULL;
		size_t len = 0;
		struct xerr e = { "" };
		FILE *out = open_memstream(&buf, &len);
		int rc = f->render(p, out, NULL, &e);
		fclose(out);
		CHECK_MSG(rc == 0, "%s: %s renders (%s)", what, f->name, e.msg);
		CHECK_MSG(len > 0 && len < MAX_RENDERING_BYTES, "%s: %s is %zu bytes", what, f->name, len);
		if (rc == 0 && strcmp(f->name, "pprof") == 0) {
			Perftools__Profiles__Profile *m = decode_pprof(buf, len);
			CHECK_MSG(m && m->n_sample == nsamples, "%s: pprof holds %zu samples, not %zu", what,
				  m ? m->n_sample : 0, nsamples);
			CHECK_MSG(m && m->n_sample && m->sample[0]->n_location_id == first_locations,
				  "%s: pprof's first sample has %zu locations, not %zu", what,
				  m && m->n_sample ? m->sample[0]->n_location_id : 0, first_locations);
			if (m)
				perftools__profiles__profile__free_unpacked(m, NULL);
		}
		free(buf);
	}
}

static const char *note_with(const struct profile *p, const char *text)
{
	for (size_t i = 0; i < p->meta.nnotes; i++)
		if (strstr(p->meta.notes[i], text))
			return p->meta.notes[i];
	return NULL;
}

/* Whether two stacks (of different profiles) name the same functions. */
static bool same_functions(const struct stack *a, const struct stack *b)
{
	if (a->nframes != b->nframes)
		return false;
	for (size_t i = 0; i < a->nframes; i++)
		if (strcmp(a->frames[i].function, b->frames[i].function) != 0)
			return false;
	return true;
}

/* One stack of 20,000 distinct frames and a shallow one: the reader keeps
 * the leaf end under a "[truncated: N frames]" frame and says so once; a
 * saved copy reads back the same, with no second cut. */
static void test_deep_file(void)
{
	const size_t n = 20000, kept = PROFILE_MAX_STACK_FRAMES - 1;
	char *samples = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&samples, &len);
	put_sample(out, 3, n, 0, 1);
	fputs(", ", out);
	put_sample(out, 1, 1, n, 1);
	fclose(out);
	char *path = profile_file("f", n + 1, samples);
	free(samples);

	struct xerr e = { "" };
	struct profile *p = profile_load(path, &e);
	CHECK_MSG(p, "the deep profile loads: %s", e.msg);
	if (p) {
		const struct stack *s = &p->entries[0].stack;
		char truncated[64];
		snprintf(truncated, sizeof truncated, "[truncated: %zu frames]", n - kept);
		char outermost_kept[32], note[160];
		snprintf(outermost_kept, sizeof outermost_kept, "f%zu", kept - 1);
		snprintf(note, sizeof note, "1 stack deeper than %d frames (the deepest %zu frames) cut to its %zu "
			 "innermost frames", PROFILE_MAX_STACK_FRAMES, n, kept);
		CHECK(p->nentries == 2 && s->nframes == PROFILE_MAX_STACK_FRAMES);
		CHECK_STR(s->frames[0].function, "f0");
		CHECK_STR(s->frames[kept - 1].function, outermost_kept);
		CHECK_STR(s->frames[kept].function, truncated);
		CHECK(!s->frames[kept].file && !s->frames[kept].module && s->frames[kept].lang == FRAME_LANG_UNKNOWN);
		CHECK_MSG(p->meta.nnotes == 1 && note_with(p, note), "the note: %s",
			  p->meta.nnotes ? p->meta.notes[0] : "(none)");
		render_every_format("deep file", p, 2, PROFILE_MAX_STACK_FRAMES);

		char saved[] = "/tmp/test_report_limits_saved.XXXXXX";
		int fd = mkstemp(saved);
		close(fd);
		CHECK_MSG(profile_save(p, saved, &e) == 0, "save: %s", e.msg);
		struct profile *q = profile_load(saved, &e);
		CHECK_MSG(q, "the saved copy loads: %s", e.msg);
		if (q) {
			CHECK(q->nentries == 2 && same_functions(&q->entries[0].stack, &p->entries[0].stack));
			CHECK_MSG(q->meta.nnotes == 1, "notes of the saved copy: %zu", q->meta.nnotes);
		}
		profile_free(q);
		unlink(saved);
	}
	profile_free(p);
	unlink(path);
	free(path);
}

/* One frame 30,000 times down one stack (the smallest file for its depth):
 * cut as a stack of distinct frames is (30,000 - 16,383 frames dropped). */
static void test_repeated_frame(void)
{
	char *samples = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&samples, &len);
	const size_t n = 30000;
	char truncated[64];
	snprintf(truncated, sizeof truncated, "[truncated: %zu frames]", n - (PROFILE_MAX_STACK_FRAMES - 1));
	put_sample(out, 2, n, 0, 0);
	fclose(out);
	char *path = profile_file("again", 1, samples);
	free(samples);
	struct xerr e = { "" };
	struct profile *p = profile_load(path, &e);
	CHECK_MSG(p, "the repeated-frame profile loads: %s", e.msg);
	if (p)
		CHECK(p->nentries == 1 && p->entries[0].stack.nframes == PROFILE_MAX_STACK_FRAMES &&
		      strcmp(p->entries[0].stack.frames[PROFILE_MAX_STACK_FRAMES - 1].function, truncated) == 0);
	profile_free(p);
	unlink(path);
	free(path);
}

/* 20,000 samples side by side under one root frame: every one kept (and
 * the flame graph finds a child among thousands without a scan). */
static void test_wide_file(void)
{
	const size_t n = 20000;
	char *samples = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&samples, &len);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", out);
		/* leaf w(i+1), root w0 */
		fprintf(out, "{\"thread\": \"t\", \"state\": \"R\", \"weight\": 1, \"stack\": [%zu, 0]}", i + 1);
	}
	fclose(out);
	char *path = profile_file("w", n + 1, samples);
	free(samples);
	struct xerr e = { "" };
	struct profile *p = profile_load(path, &e);
	CHECK_MSG(p, "the wide profile loads: %s", e.msg);
	if (p) {
		CHECK(p->nentries == n && p->meta.nnotes == 0);
		render_every_format("wide file", p, n, 2);
	}
	profile_free(p);
	unlink(path);
	free(path);
}

/* A stack built in memory, deeper than any file keeps: the renderers walk
 * it without recursing (30,000 frames overflowed the C stack; ASan's
 * larger frames overflow it sooner). */
static void test_deep_in_memory(void)
{
	const size_t n = 32768;
	struct profile *p = profile_new();
	struct frame *frames = calloc(n, sizeof *frames);
	char name[32];
	struct xerr e = { "" };
	CHECK(p && frames);
	if (!p || !frames) {
		free(frames);
		profile_free(p);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof name, "f%zu", i);
		frames[i] = (struct frame){ .pc = 0x1000 + i, .function = profile_intern(p, name), .lang = FRAME_LANG_C };
	}
	struct stack s = { n, frames };
	CHECK(profile_add(p, "t", 'R', &s, 3, &e) == 0);
	free(frames);
	for (size_t i = 0; i < report_format_count(); i++) {
		const struct report_format *f = report_format_at(i);
		FILE *out = fopen("/dev/null", "w");
		CHECK_MSG(out && f->render(p, out, NULL, &e) == 0, "%s of %zu frames: %s", f->name, n, e.msg);
		if (out)
			fclose(out);
	}
	struct report_options o;
	report_options_init(&o);
	o.diff_base = p;
	FILE *out = fopen("/dev/null", "w");
	CHECK_MSG(out && report_svg(p, out, &o, &e) == 0, "differential svg of %zu frames: %s", n, e.msg);
	o.diff_base = NULL;
	o.inverted = true;
	CHECK_MSG(out && report_svg(p, out, &o, &e) == 0, "inverted svg of %zu frames: %s", n, e.msg);
	if (out)
		fclose(out);
	profile_free(p);
}

/* Small limits: each one met loads, passed by one is the error that names it. */
static const struct profile_limits small = {
	.stack_frames = 4, .frames = 8, .samples = 4, .modules = 2, .stack_refs = 16,
	.stack_text_bytes = 64, .string_bytes = 16,
};

static struct profile *load_text(const char *text, const struct profile_limits *limits, struct xerr *e)
{
	char *path = write_temp(text, strlen(text));
	struct profile *p = profile_load_within(path, limits, e);
	unlink(path);
	free(path);
	return p;
}

#define HEAD "{\"format\": \"xgdbprof-profile\", \"version\": 1, "
#define HEAD_META HEAD "\"meta\": {}, "
#define EIGHT_FRAMES "{\"function\": \"a\"}, {\"function\": \"b\"}, {\"function\": \"c\"}, " \
	"{\"function\": \"d\"}, {\"function\": \"e\"}, {\"function\": \"f\"}, {\"function\": \"g\"}, " \
	"{\"function\": \"h\"}"
#define FRAMES8 "\"frames\": [" EIGHT_FRAMES "]"
#define SAMPLE(stack) "{\"thread\": \"t\", \"weight\": 1, \"stack\": [" stack "]}"
#define MODULE(path) "{\"path\": \"" path "\", \"start\": \"0x1000\", \"end\": \"0x2000\", \"offset\": \"0x0\"}"

static void test_small_limits(void)
{
	static const struct { const char *what, *text, *error; } cases[] = {
		{ "8 frames, 4 samples of 4 frames (16 in all), 2 modules, a 16-byte string",
		  HEAD "\"meta\": {\"exe\": \"0123456789abcdef\"}, \"modules\": [" MODULE("/m1") ", " MODULE("/m2") "], "
		  FRAMES8 ", \"samples\": [" SAMPLE("0, 1, 2, 3") ", " SAMPLE("1, 2, 3, 4") ", " SAMPLE("2, 3, 4, 5")
		  ", " SAMPLE("3, 4, 5, 6") "]}", NULL },
		{ "9 frames", HEAD_META "\"frames\": [" EIGHT_FRAMES ", {\"function\": \"i\"}], \"samples\": []}",
		  "\"frames\" holds 9 frames, more than a profile can (8 at most)" },
		{ "5 samples", HEAD_META FRAMES8 ", \"samples\": [" SAMPLE("0") ", " SAMPLE("1") ", " SAMPLE("2") ", "
		  SAMPLE("3") ", " SAMPLE("4") "]}", "\"samples\" holds 5 samples, more than a profile can (4 at most)" },
		{ "3 modules", HEAD_META "\"modules\": [" MODULE("/m1") ", " MODULE("/m2") ", " MODULE("/m3") "], " FRAMES8
		  ", \"samples\": []}", "\"modules\" holds 3 modules, more than a profile can (2 at most)" },
		{ "17 frames in all", HEAD_META FRAMES8 ", \"samples\": [" SAMPLE("0, 1, 2, 3") ", " SAMPLE("1, 2, 3, 4")
		  ", " SAMPLE("2, 3, 4, 5") ", " SAMPLE("3, 4, 5, 6, 7") "]}",
		  "sample 3: the samples' stacks hold more than 16 frames in all" },
		{ "a 17-byte function name", HEAD_META "\"frames\": [{\"function\": \"0123456789abcdefg\"}], \"samples\": []}",
		  "frame 0: field \"function\" is 17 bytes, longer than a profile holds (16 at most)" },
		{ "a 17-byte thread name", HEAD_META FRAMES8 ", \"samples\": [{\"thread\": \"0123456789abcdefg\", "
		  "\"weight\": 1, \"stack\": [0]}]}", "sample 0: field \"thread\" is 17 bytes" },
		{ "a 17-byte note", HEAD "\"meta\": {\"notes\": [\"0123456789abcdefg\"]}, " FRAMES8 ", \"samples\": []}",
		  "meta: a note is 17 bytes, longer than a profile holds" },
		{ "65 bytes of stack text", HEAD_META "\"frames\": [{\"function\": \"0123456789abcdef\"}, "
		  "{\"function\": \"0\"}], \"samples\": [" SAMPLE("0, 0, 0, 0") ", " SAMPLE("1") "]}",
		  "sample 1: the samples' stacks spell out to more than 64 bytes" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct xerr e = { "" };
		const char *error = cases[i].error;
		struct profile *p = load_text(cases[i].text, &small, &e);
		if (!error)
			CHECK_MSG(p, "%s: loads within the limits (%s)", cases[i].what, e.msg);
		else
			CHECK_MSG(!p && strstr(e.msg, error) && !strchr(e.msg, '\n'),
				  "%s: \"%s\" is not one line with \"%s\"", cases[i].what, e.msg, error);
		profile_free(p);
	}

	/* stacks past stack_frames keep their leaf end */
	struct xerr e = { "" };
	struct profile *p = load_text(HEAD_META FRAMES8 ", \"samples\": [" SAMPLE("0, 1, 2, 3") ", " SAMPLE("0, 1, 2, 3, 4")
				      ", " SAMPLE("4, 5, 6, 7, 0, 1") "]}", &small, &e);
	CHECK_MSG(p && p->nentries == 3, "stacks past the limit load: %s", e.msg);
	if (p && p->nentries == 3) {
		const struct stack *four = &p->entries[0].stack, *five = &p->entries[1].stack, *six = &p->entries[2].stack;
		CHECK(four->nframes == 4 && strcmp(four->frames[3].function, "d") == 0);
		CHECK(five->nframes == 4 && strcmp(five->frames[0].function, "a") == 0 &&
		      strcmp(five->frames[2].function, "c") == 0);
		CHECK_STR(five->frames[3].function, "[truncated: 2 frames]");
		CHECK(six->nframes == 4 && strcmp(six->frames[0].function, "e") == 0);
		CHECK_STR(six->frames[3].function, "[truncated: 3 frames]");
		CHECK_MSG(p->meta.nnotes == 1 && note_with(p, "2 stacks deeper than 4 frames (the deepest 6 frames) cut "
							     "to their 3 innermost frames"),
			  "the note: %s", p->meta.nnotes ? p->meta.notes[0] : "(none)");
	}
	profile_free(p);
	struct profile_limits one = small;
	one.stack_frames = 1;
	p = load_text(HEAD_META FRAMES8 ", \"samples\": [" SAMPLE("0") ", " SAMPLE("0, 1, 2") "]}", &one, &e);
	CHECK_MSG(p && p->nentries == 2, "a limit of one frame: %s", e.msg);
	if (p && p->nentries == 2) {
		CHECK(p->entries[0].stack.nframes == 1 && strcmp(p->entries[0].stack.frames[0].function, "a") == 0);
		CHECK(p->entries[1].stack.nframes == 1);
		CHECK_STR(p->entries[1].stack.frames[0].function, "[truncated: 3 frames]");
	}
	profile_free(p);
}

int main(void)
{
	test_small_limits();
	test_deep_file();
	test_repeated_frame();
	test_wide_file();
	test_deep_in_memory();
	return test_exit_code();
}
