/* test_report.c — reports rendered from synthetic profiles, compared with
 * saved expected output (tests/report/NAME.expected, with the source tree's
 * path written as @SRCDIR@), plus round-trips of the profile file.
 *
 *   test_report              run every check (needs TOP_SRCDIR)
 *   test_report --print NAME print one rendering as the test sees it (to
 *                            review it before saving it as NAME.expected)
 */
#include "report/profile.h"
#include "report/report.h"
#include "report/report_diff.h"
#include "report/report_format.h"
#include "test_report_profiles.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static const char *srcdir;


typedef int (*renderer)(const struct profile *, FILE *, const struct report_options *, struct xerr *);

/* Renders into a malloc'd string with the source dir replaced by @SRCDIR@. */
static char *render(renderer r, const struct profile *p, const struct report_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	struct xerr e = { "" };
	FILE *out = open_memstream(&buf, &len);
	int rc = r(p, out, o, &e);
	fclose(out);
	if (rc < 0) {
		fprintf(stderr, "render failed: %s\n", e.msg);
		free(buf);
		return NULL;
	}
	/* "@SRCDIR@" is longer than a short source dir ("/tmp/cc"): room for
	 * every possible replacement. */
	size_t slen = strlen(srcdir);
	char *res = malloc(len + (len / (slen ? slen : 1) + 1) * sizeof "@SRCDIR@"), *w = res;
	for (const char *c = buf; *c;) {
		if (strncmp(c, srcdir, slen) == 0) {
			w = stpcpy(w, "@SRCDIR@");
			c += slen;
		} else
			*w++ = *c++;
	}
	*w = 0;
	free(buf);
	return res;
}

static char *slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	if (!in)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, '\0', in);
	fclose(in);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

static void compare_expected(const char *name, char *got)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/report/%s.expected", srcdir, name);
	char *want = slurp(path);
	CHECK_MSG(want, "%s: missing %s", name, path);
	CHECK_MSG(got, "%s: rendering failed", name);
	if (want && got && strcmp(want, got) != 0) {
		char tmp[] = "/tmp/test_report.XXXXXX";
		int fd = mkstemp(tmp);
		if (fd >= 0) {
			if (write(fd, got, strlen(got)) < 0)
				perror("write");
			close(fd);
		}
		CHECK_MSG(0, "%s: output differs from %s; got it in %s (diff -u %s %s)", name, path, tmp, path, tmp);
	}
	free(want);
	free(got);
}

/* The named renderings the expected files hold. */
static char *named_rendering(const char *name, const struct profile *p, const struct profile *esc)
{
	struct report_options o;
	report_options_init(&o);
	if (strcmp(name, "text") == 0)
		return render(report_text, p, &o);
	if (strcmp(name, "text-full-top2") == 0) {
		o.top = 2;
		o.full_paths = true;
		o.top_functions = 3;
		return render(report_text, p, &o);
	}
	if (strcmp(name, "text-focus") == 0) {
		o.focus = "Tree<K,V>::get|recv";
		return render(report_text, p, &o);
	}
	if (strcmp(name, "text-color") == 0) {
		o.top = 1;
		o.color = true;
		o.width = 60;
		return render(report_text, p, &o);
	}
	if (strcmp(name, "folded") == 0)
		return render(report_folded, p, &o);
	if (strcmp(name, "folded-threads") == 0) {
		o.thread_roots = true;
		o.inlined_suffix = true;
		return render(report_folded, p, &o);
	}
	if (strcmp(name, "annotate") == 0) {
		o.annotate_functions = 3;
		return render(report_annotate, p, &o);
	}
	if (strcmp(name, "json") == 0)
		return render(report_json, p, &o);
	if (strcmp(name, "escaping-folded") == 0)
		return render(report_folded, esc, &o);
	if (strcmp(name, "escaping-text") == 0)
		return render(report_text, esc, &o);
	return NULL;
}

static void test_round_trip(const struct profile *p)
{
	char a[] = "/tmp/test_report_a.XXXXXX", b[] = "/tmp/test_report_b.XXXXXX";
	int fa = mkstemp(a), fb = mkstemp(b);
	struct xerr e = { "" };
	close(fa);
	close(fb);
	CHECK_MSG(profile_save(p, a, &e) == 0, "save: %s", e.msg);
	struct profile *q = profile_load(a, &e);
	CHECK_MSG(q, "load: %s", e.msg);
	if (!q)
		return;
	CHECK_MSG(profile_save(q, b, &e) == 0, "save again: %s", e.msg);
	char *sa = slurp(a), *sb = slurp(b);
	CHECK_MSG(sa && sb && strcmp(sa, sb) == 0, "save -> load -> save is not byte-identical (%s, %s)", a, b);
	CHECK_MSG(q->nentries == p->nentries, "entries %zu != %zu", q->nentries, p->nentries);
	CHECK_MSG(profile_total_weight(q) == profile_total_weight(p), "weights differ after load");

	renderer rs[] = { report_text, report_svg, report_folded, report_json, report_annotate };
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
		char *x = render(rs[i], p, NULL), *y = render(rs[i], q, NULL);
		CHECK_MSG(x && y && strcmp(x, y) == 0, "renderer %zu: loaded profile renders differently", i);
		free(x);
		free(y);
	}
	free(sa);
	free(sb);
	profile_free(q);
	unlink(a);
	unlink(b);
}

static void test_load_errors(void)
{
	char path[] = "/tmp/test_report_bad.XXXXXX";
	struct xerr e = { "" };
	static const struct { const char *text, *message; } cases[] = {
		{ "not json", "not valid JSON" },
		{ "{\"format\": \"other\"}", "not an xgdbprof profile" },
		{ "{\"format\": \"xgdbprof-profile\", \"version\": 2}", "version 2 is not supported" },
		{ "{\"format\": \"xgdbprof-profile\", \"version\": 1, \"meta\": {}, \"frames\": [],"
		  " \"samples\": [{\"thread\": \"t\", \"state\": \"R\", \"weight\": 1, \"stack\": [0]}]}",
		  "frame not in" },
		{ "{\"format\": \"xgdbprof-profile\", \"version\": 1, \"meta\": {\"pid\": \"x\"},"
		  " \"frames\": [], \"samples\": []}", "must be a number" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int fd = mkstemp(path);
		if (write(fd, cases[i].text, strlen(cases[i].text)) < 0)
			perror("write");
		close(fd);
		struct profile *p = profile_load(path, &e);
		CHECK_MSG(!p, "case %zu: loaded a bad profile", i);
		CHECK_MSG(strstr(e.msg, cases[i].message), "case %zu: message \"%s\" lacks \"%s\"", i, e.msg,
		      cases[i].message);
		profile_free(p);
		unlink(path);
		strcpy(path, "/tmp/test_report_bad.XXXXXX");
	}
	CHECK_MSG(!profile_load("/nonexistent/profile.json", &e) && strstr(e.msg, "cannot open"),
	      "missing file: %s", e.msg);
}

static void test_model_numbers(const struct profile *p)
{
	/* merging: 11 adds, 10 distinct (thread, state, stack) entries */
	CHECK_MSG(p->nentries == 10, "entries: %zu", p->nentries);
	CHECK_MSG(profile_total_weight(p) == 100, "total %llu", (unsigned long long)profile_total_weight(p));
	CHECK_MSG(p->entries[0].weight == 35, "merged weight %llu", (unsigned long long)p->entries[0].weight);
	/* interning: equal strings are one pointer */
	CHECK_MSG(p->entries[0].stack.frames[0].file == p->entries[1].stack.frames[0].file, "not interned");
}

static void test_json(const struct profile *p)
{
	char *text = render(report_json, p, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	CHECK_MSG(root, "json report does not parse");
	if (!root) {
		free(text);
		return;
	}
	static const char *const keys[] = { "format", "version", "run", "total_samples", "focus",
					    "distinct_paths", "paths", "top_self", "top_total", "threads" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		CHECK_MSG(cJSON_HasObjectItem(root, keys[i]), "json lacks \"%s\"", keys[i]);
	const cJSON *paths = cJSON_GetObjectItem(root, "paths");
	const cJSON *first = cJSON_GetArrayItem(paths, 0);
	CHECK_MSG(cJSON_GetArraySize(paths) == 5, "json paths: %d", cJSON_GetArraySize(paths));
	CHECK_MSG(cJSON_GetObjectItem(first, "samples")->valuedouble == 35, "json #1 samples");
	const cJSON *frames = cJSON_GetObjectItem(first, "frames");
	const cJSON *leaf = cJSON_GetArrayItem(frames, cJSON_GetArraySize(frames) - 1);
	CHECK_MSG(strcmp(cJSON_GetObjectItem(leaf, "function")->valuestring, "sled::tree::below_leaf") == 0,
	      "json #1 leaf");
	CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(leaf, "inlined")), "json leaf inlined");
	CHECK_MSG(cJSON_GetObjectItem(leaf, "self_share")->valuedouble == 65, "json leaf self share");
	const cJSON *run = cJSON_GetObjectItem(root, "run");
	static const char *const run_keys[] = {
		"exe", "build_id", "pid", "command_line", "threads", "frequency_asked_hz",
		"frequency_achieved_hz", "duration_asked_s", "duration_actual_s", "samples",
		"thread_samples", "stacks_reused", "cpu_min_pct", "cpu_avg_pct", "cpu_max_pct",
		"stopped_pct", "stop_median_ms", "stop_p99_ms", "notes", "walker", "stop_mode", "version", "start_time",
	};
	for (size_t i = 0; i < sizeof run_keys / sizeof run_keys[0]; i++)
		CHECK_MSG(cJSON_HasObjectItem(run, run_keys[i]), "json run lacks \"%s\"", run_keys[i]);
	const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "threads"), 0);
	CHECK_MSG(strcmp(cJSON_GetObjectItem(t0, "name")->valuestring, "insert-worker") == 0, "json thread 0");
	cJSON_Delete(root);
	free(text);

	struct report_options o;
	report_options_init(&o);
	o.focus = "recv";
	text = render(report_json, p, &o);
	root = text ? cJSON_Parse(text) : NULL;
	const cJSON *focus = root ? cJSON_GetObjectItem(root, "focus") : NULL;
	CHECK_MSG(focus && cJSON_GetObjectItem(focus, "kept_samples")->valuedouble == 15, "json focus");
	CHECK_MSG(root && cJSON_GetObjectItem(root, "total_samples")->valuedouble == 100, "json focus total");
	cJSON_Delete(root);
	free(text);
}

static void test_bad_focus(const struct profile *p)
{
	struct report_options o;
	struct xerr e = { "" };
	report_options_init(&o);
	o.focus = "(unclosed";
	FILE *out = fopen("/dev/null", "w");
	CHECK_MSG(report_text(p, out, &o, &e) < 0 && strstr(e.msg, "focus regex"), "bad focus: %s", e.msg);
	fclose(out);
}

static void test_svg(const struct profile *p, const struct profile *esc)
{
	char *svg = render(report_svg, p, NULL);
	CHECK_MSG(svg && strstr(svg, "<svg id=\"xgp-svg\""), "svg root");
	CHECK_MSG(svg && strstr(svg, "data-n=\"&lt;alloc::vec::Vec as core::ops::drop::Drop&gt;::drop\""),
		  "svg escapes names");
	/* the tooltip: display name, short std path, then the full name */
	CHECK_MSG(svg && strstr(svg, "<title>sled::tree::Tree::view_for_key (@SRCDIR@/tests/report/sled_tree.rs:39) "
				"44 samples, 44.00%\nsled::tree::Tree&lt;K,V&gt;::view_for_key</title>"),
		  "svg tooltip keeps the full name");
	CHECK_MSG(svg && strstr(svg, "data-l=\"alloc/src/vec/mod.rs:3850\""), "svg shows std paths short");
	CHECK_MSG(svg && strstr(svg, "data-l=\"@SRCDIR@/tests/report/sled_tree.rs:39\""), "svg location");
	CHECK_MSG(svg && strstr(svg, "class=\"f inl\""), "svg marks inlined frames");
	const char *ns = svg ? strstr(svg, "http://") : NULL;
	CHECK_MSG(ns && !strstr(ns + 1, "http://") && !strstr(svg, "https://"),
	      "svg must name only the SVG namespace, no URL");
	CHECK_MSG(svg && !strstr(svg, "href"), "svg must not reference external resources");
	char *again = render(report_svg, p, NULL);
	CHECK_MSG(svg && again && strcmp(svg, again) == 0, "svg is not deterministic");
	free(again);
	free(svg);
	svg = render(report_svg, esc, NULL);
	CHECK_MSG(svg && strstr(svg, "&lt;&amp;&apos;static str as core::fmt::Display&gt;::fmt"), "svg escaping");
	CHECK_MSG(svg && strstr(svg, "/src/&quot;q&quot;&amp;&lt;t&gt;.rs:7"), "svg escapes paths");
	CHECK_MSG(svg && !strstr(svg, "<&"), "svg has a raw <&");
	free(svg);
}

static int diff_text(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	return report_diff_text(o->diff_base, p, out, o, e);
}

/* The formats' table: every name, call and default file finds its own
 * row; every row renders; the lists built from it are its names in order. */
static void test_format_table(const struct profile *p)
{
	size_t n = report_format_count();
	CHECK(n >= 6 && report_format_at(n) == NULL);
	for (size_t i = 0; i < n; i++) {
		const struct report_format *f = report_format_at(i);
		CHECK_MSG(report_format_find(f->name) == f, "%s: find by name", f->name);
		CHECK_MSG(f->default_file && report_format_for_file(f->default_file) == f, "%s: find by file", f->name);
		CHECK_MSG(!f->recipe_call || report_format_for_call(f->recipe_call) == f, "%s: find by call", f->name);
		CHECK_MSG(f->help && f->help[0] && strlen(f->help) <= 40, "%s: one line of help, 40 columns", f->name);
		CHECK_MSG(f->what && f->what[0], "%s: what it is", f->name);
		/* a call takes only options the renderer honours, each one named */
		CHECK_MSG((f->recipe_options & ~f->options) == 0, "%s: call options it does not honour", f->name);
		for (unsigned bit = 1; bit; bit <<= 1)
			CHECK_MSG(!(f->recipe_options & bit) || report_format_option_name(bit),
				  "%s: call option %#x has no name", f->name, bit);
		char *out = render(f->render, p, NULL);
		CHECK_MSG(out != NULL, "%s renders", f->name);
		free(out);
	}
	CHECK(report_format_find("nosuch") == NULL && report_format_find(NULL) == NULL);
	CHECK(report_format_for_call("text") == NULL);   /* report() is a statement of its own */
	CHECK(report_format_for_file("profile.json") == NULL);
	CHECK(report_format_find("svg")->render == report_svg && report_format_find("pprof")->render == report_pprof);
	CHECK(report_format_find("pprof")->binary && !report_format_find("json")->binary);

	char names[256], want[256] = "";
	CHECK(report_format_names(names, sizeof names, 0, ", ", ", ") == n);
	for (size_t i = 0; i < n; i++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "", report_format_at(i)->name);
	CHECK_STR(names, want);
	CHECK(report_format_names(names, sizeof names, REPORT_OPT_INVERTED, ", ", " or ") == 2);
	CHECK_STR(names, "svg or folded");
	CHECK(report_format_names(names, sizeof names, REPORT_OPT_ANNOTATE, ", ", " or ") == 1);
	CHECK_STR(names, "text");
	CHECK(report_format_names(names, 8, 0, ", ", ", ") == n && strlen(names) == 7);   /* cut, terminated */
	CHECK(report_format_names(names, sizeof names, REPORT_OPT_ANNOTATE | REPORT_OPT_INVERTED, ", ", " or ") == 0);
	CHECK_STR(names, "");

	/* text against a base is the differential report, without one the
	 * terminal report */
	struct report_options o;
	report_options_init(&o);
	char *table = render(report_format_find("text")->render, p, &o), *direct = render(report_text, p, &o);
	CHECK(table && direct && strcmp(table, direct) == 0);
	free(table);
	free(direct);
	o.diff_base = p;
	table = render(report_format_find("text")->render, p, &o);
	direct = render(diff_text, p, &o);
	CHECK(table && direct && strcmp(table, direct) == 0 && strcmp(table, "") != 0);
	free(table);
	free(direct);
}

int main(int argc, char **argv)
{
	srcdir = getenv("TOP_SRCDIR");
	if (!srcdir) {
		fprintf(stderr, "test_report: TOP_SRCDIR is not set (run through make check)\n");
		return 1;
	}
	set_paths(srcdir);
	struct profile *p = cache_service_profile(), *esc = escaping_profile();
	release_display_names();
	if (argc == 3 && strcmp(argv[1], "--print") == 0) {
		char *s = named_rendering(argv[2], p, esc);
		if (s)
			fputs(s, stdout);
		free(s);
		profile_free(p);
		profile_free(esc);
		return s ? 0 : 1;
	}
	static const char *const names[] = { "text", "text-full-top2", "text-focus", "text-color",
					      "folded", "folded-threads", "annotate", "json",
					      "escaping-folded", "escaping-text" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		compare_expected(names[i], named_rendering(names[i], p, esc));
	test_model_numbers(p);
	test_round_trip(p);
	test_round_trip(esc);
	test_load_errors();
	test_json(p);
	test_bad_focus(p);
	test_svg(p, esc);
	test_format_table(p);
	profile_free(p);
	profile_free(esc);
	return test_exit_code();
}
