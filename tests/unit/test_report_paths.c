/* test_report_paths.c — the hottest code paths inferred from the call tree,
 * on a synthetic profile whose tree is known, through the text and JSON
 * reports: which paths, their weights and headlines, the line each frame
 * shows on its path, that a frame never exceeds its caller, the functions
 * on (almost) every sample left out of "top functions by total", which
 * frames are the user's own code, and the note on a thin profile.
 *
 * The tree (185 samples; weights are samples through a node):
 *
 *   clone3 → start_thread → thread_start → call_once shim → shop::main::{{closure}}  180
 *     shop::worker 150 (the closure's dominant child: 83%)
 *       shop::handle 140 (93% of worker)  — fans out, a fork:
 *         shop::lookup 60 (line 21) → hashbrown HashMap::get 55 (registry file)
 *         shop::parse  50 (line 20) → core::str::from_utf8 45
 *         shop::render 20 (line 22) → alloc::fmt::format 20
 *         (handle's own samples: 10)
 *       shop::flush 8 (4% of all: too small for a path of its own)
 *     shop::janitor 30 (16% of all: a side branch)
 *       std::thread::sleep → clock_nanosleep 20 (line 60; 67%: the path goes on)
 *       shop::lookup → hashbrown HashMap::get 10 (line 61; 5.4% of all: a side branch;
 *                                                  lookup is on 70 samples in all)
 *   __libc_start_main → shop::main → shop::spin 5 (lines 70 and 71)
 */
#include "report/profile.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define EXE "/srv/shop"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define SRC "/home/dev/shop/src/"
#define RUSTC "/rustc/0123456789abcdef0123456789abcdef01234567/library/"
#define HASHBROWN "/home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f/hashbrown-0.14.5/src/map.rs"

static struct frame fr(const char *function, const char *file, int line, const char *module)
{
	static uint64_t pc = 0x1000;
	struct frame f = { .pc = pc += 0x10, .function = function, .file = file, .line = line,
			   .lang = FRAME_LANG_RUST, .source = file ? FRAME_SOURCE_DWARF : FRAME_SOURCE_SYMTAB,
			   .module = module };
	return f;
}

/* Adds a stack given root first. */
static void add(struct profile *p, const char *thread, uint64_t w, size_t n, const struct frame *root_first)
{
	struct frame frames[32];
	struct xerr e;
	for (size_t i = 0; i < n; i++)
		frames[i] = root_first[n - 1 - i];
	struct stack s = { n, frames };
	if (profile_add(p, thread, 'R', &s, w, &e) < 0) {
		fprintf(stderr, "profile_add: %s\n", e.msg);
		exit(1);
	}
}

#define ADD(p, thread, w, ...)                                                              \
	do {                                                                                \
		const struct frame stack_[] = { __VA_ARGS__ };                              \
		add(p, thread, w, sizeof stack_ / sizeof stack_[0], stack_);                \
	} while (0)

static struct profile *shop_profile(int64_t thread_samples, double duration_s)
{
	struct profile *p = profile_new();
	p->meta.exe = profile_intern(p, EXE);
	p->meta.thread_samples = thread_samples;
	p->meta.duration_actual_s = duration_s;

	const struct frame clone3 = fr("clone3", NULL, 0, LIBC), start_thread = fr("start_thread", NULL, 0, LIBC);
	const struct frame thread_start = fr("std::sys::pal::unix::thread::Thread::new::thread_start",
					     RUSTC "std/src/sys/pal/unix/thread.rs", 105, EXE);
	const struct frame shim = fr("core::ops::function::FnOnce::call_once{{vtable.shim}}",
				     RUSTC "core/src/ops/function.rs", 250, EXE);
	const struct frame closure = fr("shop::main::{{closure}}", SRC "main.rs", 8, EXE);
	const struct frame worker = fr("shop::worker", SRC "main.rs", 14, EXE);
	const struct frame handle_parse = fr("shop::handle", SRC "main.rs", 20, EXE);
	const struct frame handle_lookup = fr("shop::handle", SRC "main.rs", 21, EXE);
	const struct frame handle_render = fr("shop::handle", SRC "main.rs", 22, EXE);
	const struct frame handle_self = fr("shop::handle", SRC "main.rs", 24, EXE);
	const struct frame lookup = fr("shop::lookup", SRC "store.rs", 31, EXE);
	const struct frame lookup_self = fr("shop::lookup", SRC "store.rs", 33, EXE);
	const struct frame map_get = fr("hashbrown::map::HashMap<K,V,S,A>::get", HASHBROWN, 1211, EXE);
	const struct frame parse = fr("shop::parse", SRC "parse.rs", 12, EXE);
	const struct frame parse_self = fr("shop::parse", SRC "parse.rs", 15, EXE);
	const struct frame from_utf8 = fr("core::str::converts::from_utf8", RUSTC "core/src/str/converts.rs", 87, EXE);
	const struct frame render = fr("shop::render", SRC "render.rs", 40, EXE);
	const struct frame format = fr("alloc::fmt::format", RUSTC "alloc/src/fmt.rs", 612, EXE);
	const struct frame flush = fr("shop::flush", SRC "main.rs", 50, EXE);
	const struct frame janitor = fr("shop::janitor", SRC "main.rs", 60, EXE);
	const struct frame janitor_lookup = fr("shop::janitor", SRC "main.rs", 61, EXE);
	const struct frame sleep = fr("std::thread::sleep", RUSTC "std/src/thread/mod.rs", 880, EXE);
	const struct frame nanosleep = fr("clock_nanosleep", NULL, 0, LIBC);
	const struct frame libc_start = fr("__libc_start_main", NULL, 0, LIBC);
	const struct frame main_fn = fr("shop::main", SRC "main.rs", 9, EXE);
	const struct frame spin70 = fr("shop::spin", SRC "main.rs", 70, EXE);
	const struct frame spin71 = fr("shop::spin", SRC "main.rs", 71, EXE);

	ADD(p, "worker", 55, clone3, start_thread, thread_start, shim, closure, worker, handle_lookup, lookup, map_get);
	ADD(p, "worker", 5, clone3, start_thread, thread_start, shim, closure, worker, handle_lookup, lookup_self);
	ADD(p, "worker", 45, clone3, start_thread, thread_start, shim, closure, worker, handle_parse, parse, from_utf8);
	ADD(p, "worker", 5, clone3, start_thread, thread_start, shim, closure, worker, handle_parse, parse_self);
	ADD(p, "worker", 20, clone3, start_thread, thread_start, shim, closure, worker, handle_render, render, format);
	ADD(p, "worker", 10, clone3, start_thread, thread_start, shim, closure, worker, handle_self);
	ADD(p, "worker", 8, clone3, start_thread, thread_start, shim, closure, worker, flush);
	ADD(p, "worker", 2, clone3, start_thread, thread_start, shim, closure, worker);
	ADD(p, "janitor", 20, clone3, start_thread, thread_start, shim, closure, janitor, sleep, nanosleep);
	ADD(p, "janitor", 10, clone3, start_thread, thread_start, shim, closure, janitor_lookup, lookup, map_get);
	ADD(p, "shop", 3, libc_start, main_fn, spin70);
	ADD(p, "shop", 2, libc_start, main_fn, spin71);
	return p;
}

typedef int (*renderer)(const struct profile *, FILE *, const struct report_options *, struct xerr *);

static char *render(renderer r, const struct profile *p, const struct report_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	struct xerr e = { "" };
	FILE *out = open_memstream(&buf, &len);
	if (r(p, out, o, &e) < 0)
		fprintf(stderr, "render failed: %s\n", e.msg);
	fclose(out);
	return buf;
}

static const char *str_item(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_item(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const cJSON *frame_at(const cJSON *path, double index)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(path, "frames"), (int)index);
}

static void test_paths_json(const struct profile *p)
{
	struct report_options o;
	report_options_init(&o);
	o.top = 10;
	char *text = render(report_json, p, &o);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	CHECK_MSG(root, "json report does not parse");
	const cJSON *paths = cJSON_GetObjectItem(root, "code_paths");
	CHECK_MSG(cJSON_GetArraySize(paths) == 6, "code paths: %d, want 6", cJSON_GetArraySize(paths));
	CHECK_MSG(num_item(root, "distinct_code_paths") == 6, "distinct_code_paths");

	/* rank, weight, the frame the headline ends on, the first it names */
	static const struct { double samples; const char *deepest, *first; } want[] = {
		{ 55, "shop::lookup", "shop::worker" },
		{ 45, "shop::parse", "shop::worker" },
		{ 20, "shop::janitor", "shop::janitor" },
		{ 20, "shop::render", "shop::worker" },
		{ 10, "shop::lookup", "shop::janitor" },
		{ 5, "shop::spin", "shop::main" },
	};
	double sum = 0;
	for (int i = 0; i < 6; i++) {
		const cJSON *cp = cJSON_GetArrayItem(paths, i);
		const cJSON *frames = cJSON_GetObjectItem(cp, "frames");
		int n = cJSON_GetArraySize(frames);
		CHECK_MSG(num_item(cp, "samples") == want[i].samples, "#%d: %g samples, want %g", i + 1,
			  num_item(cp, "samples"), want[i].samples);
		CHECK_MSG(strcmp(str_item(frame_at(cp, num_item(cp, "headline_frame")), "function"),
				 want[i].deepest) == 0, "#%d: headline ends on %s, want %s", i + 1,
			  str_item(frame_at(cp, num_item(cp, "headline_frame")), "function"), want[i].deepest);
		CHECK_MSG(strcmp(str_item(frame_at(cp, num_item(cp, "headline_first")), "function"),
				 want[i].first) == 0, "#%d: headline starts at %s, want %s", i + 1,
			  str_item(frame_at(cp, num_item(cp, "headline_first")), "function"), want[i].first);
		/* a frame never exceeds its caller; the last frame holds the path's samples */
		for (int k = 1; k < n; k++)
			CHECK_MSG(num_item(cJSON_GetArrayItem(frames, k), "samples") <=
					  num_item(cJSON_GetArrayItem(frames, k - 1), "samples"),
				  "#%d: frame %d exceeds its caller", i + 1, k);
		CHECK_MSG(n && num_item(cJSON_GetArrayItem(frames, n - 1), "samples") == want[i].samples,
			  "#%d: last frame's samples", i + 1);
		sum += num_item(cp, "samples");
		/* code paths never nest: no path's chain is a prefix of another's */
		for (int j = 0; j < i; j++) {
			const cJSON *other = cJSON_GetObjectItem(cJSON_GetArrayItem(paths, j), "frames");
			int m = cJSON_GetArraySize(other), k = 0;
			while (k < n && k < m && strcmp(str_item(cJSON_GetArrayItem(frames, k), "function"),
							str_item(cJSON_GetArrayItem(other, k), "function")) == 0)
				k++;
			CHECK_MSG(k < n && k < m, "#%d and #%d nest", j + 1, i + 1);
		}
	}
	CHECK_MSG(sum <= num_item(root, "total_samples"), "code paths hold more than every sample");

	/* #1 goes on below the user's code into the dependency (the registry's
	 * hashbrown), which is not the user's */
	const cJSON *first = cJSON_GetArrayItem(paths, 0);
	const cJSON *last = frame_at(first, cJSON_GetArraySize(cJSON_GetObjectItem(first, "frames")) - 1);
	CHECK_MSG(strcmp(str_item(last, "function"), "hashbrown::map::HashMap<K,V,S,A>::get") == 0,
		  "#1 ends on %s", str_item(last, "function"));
	CHECK_MSG(cJSON_IsFalse(cJSON_GetObjectItem(last, "user")), "a registry crate is not the user's code");

	/* each frame shows the line of its own path: handle calls lookup at 21,
	 * parse at 20, render at 22; janitor sleeps at 60, looks up at 61 */
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 0), 6), "line") == 21, "#1: handle's line");
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 1), 6), "line") == 20, "#2: handle's line");
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 2), 5), "line") == 60, "#3: janitor's line");
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 3), 6), "line") == 22, "#4: handle's line");
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 4), 5), "line") == 61, "#5: janitor's line");
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 5), 2), "line") == 70, "#6: spin's hottest line");
	/* lookup is on 70 samples, 10 of them under janitor: that path shows 10 */
	CHECK_MSG(num_item(frame_at(cJSON_GetArrayItem(paths, 4), 6), "samples") == 10, "#5: lookup's samples");

	/* the left-out functions, and top_total without them */
	const cJSON *out = cJSON_GetObjectItem(root, "left_out_of_top_total");
	CHECK_MSG(cJSON_GetArraySize(out) == 5, "left out: %d functions, want 5", cJSON_GetArraySize(out));
	const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "top_total"), 0);
	CHECK_MSG(strcmp(str_item(t0, "function"), "shop::worker") == 0, "top_total starts with %s",
		  str_item(t0, "function"));
	cJSON_Delete(root);
	free(text);
}

/* The share column of each frame line of each path block, in order. */
static void check_shares_never_grow(const char *text)
{
	double prev = 101;
	int lines = 0;
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "#", 1) == 0) {
			prev = 101;
			continue;
		}
		if (strncmp(line, "top functions", 13) == 0)
			break;
		double share;
		if (strncmp(line, "    ", 4) == 0 && sscanf(line, " %lf%%", &share) == 1) {
			CHECK_MSG(share <= prev, "a frame's share %.1f exceeds its caller's %.1f: %.60s", share, prev, line);
			prev = share;
			lines++;
		}
	}
	CHECK_MSG(lines >= 10, "only %d frame lines in the paths", lines);
}

static void test_paths_text(const struct profile *p)
{
	struct report_options o;
	report_options_init(&o);
	o.top = 10;
	char *text = render(report_text, p, &o);
	CHECK_MSG(text && strstr(text, "#1 hottest code path (29.7% ±6.9, 55 samples): shop::worker (main.rs:14) → handle (main.rs:21) "
				       "→ lookup (store.rs:31)\n"), "#1 headline:\n%s", text ? text : "");
	CHECK_MSG(text && strstr(text, "#2 hottest code path (24.3% ±6.7, 45 samples): shop::worker (main.rs:14) → handle (main.rs:20) "
				       "→ parse (parse.rs:12)\n"), "#2 headline");
	CHECK_MSG(text && strstr(text, "#3 hottest code path (10.8% ±5.3, 20 samples): shop::janitor (main.rs:60)\n"),
		  "#3 headline");
	CHECK_MSG(text && strstr(text, "#5 hottest code path (5.4% ±4.3, 10 samples): shop::janitor (main.rs:61) → lookup (store.rs:31)\n"),
		  "#5 headline");
	CHECK_MSG(text && strstr(text, "#6 hottest code path (2.7% ±3.5, 5 samples): shop::main (main.rs:9) → spin (main.rs:70)\n"),
		  "#6 headline");
	check_shares_never_grow(text);
	const char *by_total = text ? strstr(text, "top functions by total\n") : NULL;
	CHECK_MSG(by_total && strstr(by_total, "\n  leaving out 5 functions on ≥ 95% of the samples "
					 "(shop::main::{{closure}}, clone3, start_thread, and 2 more)\n"),
		  "the say-so line of top functions by total");
	const char *threads = by_total ? strstr(by_total, "\nthreads\n") : NULL;
	CHECK_MSG(threads && !memmem(by_total, (size_t)(threads - by_total), "  clone3  ", 10),
		  "clone3 (on 97%% of the samples) has a row by total");
	CHECK_MSG(threads && memmem(by_total, (size_t)(threads - by_total), "  shop::worker  ", 16),
		  "shop::worker (81%%) has no row by total");
	free(text);
}

static void check_note(int64_t thread_samples, double duration, const char *want)
{
	struct profile *p = shop_profile(thread_samples, duration);
	char *text = render(report_text, p, NULL), *json = render(report_json, p, NULL);
	if (want) {
		char line[512];
		snprintf(line, sizeof line, "\n  note: %s\n", want);
		CHECK_MSG(text && strstr(text, line), "%lld stacks: no note \"%s\"", (long long)thread_samples, want);
		CHECK_MSG(json && strstr(json, want), "%lld stacks: the json lacks \"%s\"", (long long)thread_samples, want);
	} else {
		CHECK_MSG(text && !strstr(text, "thread stacks:") && !strstr(text, "thread stack:"),
			  "%lld stacks: a thin-profile note", (long long)thread_samples);
	}
	free(text);
	free(json);
	profile_free(p);
}

static void test_thin_profile(void)
{
	check_note(185, 2.0, "only 185 thread stacks: a 50% share is ±7.2 points (300 stacks make it ±5.7); "
			     "run longer, e.g. --duration 4s");
	check_note(54, 5.1, "only 54 thread stacks: a 50% share is ±13.3 points (300 stacks make it ±5.7); "
			    "run longer, e.g. --duration 30s");
	check_note(1, NAN, "only 1 thread stack: a 50% share is ±50.0 points (300 stacks make it ±5.7); "
			   "run longer (--duration)");
	check_note(300, 5.0, NULL);
	check_note(-1, 5.0, NULL);   /* unknown: a recipe's probes, not sampling */
}

/* Which frames are the user's: one chain through every kind. */
static void test_user_frames(void)
{
	struct profile *p = profile_new();
	p->meta.exe = profile_intern(p, EXE);
	static const struct { const char *function, *file, *module; bool user; } kinds[] = {
		{ "start_thread", "./nptl/pthread_create.c", LIBC, false },   /* glibc with debug info */
		{ "std::rt::lang_start", RUSTC "std/src/rt.rs", EXE, false },
		{ "std::rt::lang_start_internal", "/home/dev/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/"
		  "lib/rustlib/src/rust/library/std/src/rt.rs", EXE, false },
		{ "shop::main", SRC "main.rs", EXE, true },
		{ "shop::run", "src/run.rs", EXE, true },              /* remapped to a relative path */
		{ "shop::stripped", NULL, EXE, true },                 /* symbol table only */
		{ "tokio::runtime::Runtime::block_on", "/home/dev/.cargo/git/checkouts/tokio-1234/abcd/src/rt.rs",
		  EXE, false },
		{ "serde_json::to_string", "/usr/share/cargo/registry/serde_json-1.0.0/src/ser.rs", EXE, false },
		{ "vendored::f", "/home/dev/shop/vendor/vendored/src/lib.rs", EXE, false },
		{ "std::thread::sleep", NULL, EXE, false },            /* runtime by its name */
		{ "plugin_hot", "/home/dev/shop/plugin/hot.c", "/opt/shop/libplugin.so", true },
		{ "inflate", NULL, "/usr/lib/x86_64-linux-gnu/libz.so.1", false },
		{ "memcpy", "../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S", LIBC, false },
		{ "std::vector<int>::push_back", "/usr/include/c++/12/bits/stl_vector.h", EXE, false },
		{ NULL, NULL, "/usr/lib/libmystery.so", false },
	};
	enum { N = sizeof kinds / sizeof kinds[0] };
	struct frame chain[N];
	for (size_t i = 0; i < N; i++)
		chain[i] = fr(kinds[i].function, kinds[i].file, 1, kinds[i].module);
	add(p, "t", 1, N, chain);
	char *text = render(report_json, p, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *frames = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "code_paths"), 0),
						  "frames");
	CHECK_MSG(cJSON_GetArraySize(frames) == N, "the chain has %d frames, want %d", cJSON_GetArraySize(frames), N);
	for (int i = 0; i < N && i < cJSON_GetArraySize(frames); i++)
		CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(frames, i), "user")) == kinds[i].user,
			  "%s (%s): user should be %d", kinds[i].function ? kinds[i].function : "(unknown)",
			  kinds[i].file ? kinds[i].file : "no file", kinds[i].user);
	cJSON_Delete(root);
	free(text);
	profile_free(p);
}

/* Two code paths that read the same: insert (tree.rs:10) fans out below
 * the user's code into memcpy (40) and malloc (35), neither 60% of it, so
 * the inference stops at both; their headlines are the same text, and the
 * report shows one path of 75 samples ahead of get's 40, not 40 and 35
 * behind it. (Mutation seen failing: report_build_code_paths without
 * merge_same_headlines.) */
static void test_same_headline_merged(void)
{
	struct profile *p = profile_new();
	p->meta.exe = profile_intern(p, EXE);
	const struct frame worker = fr("kv::worker", SRC "main.rs", 5, EXE);
	const struct frame insert = fr("kv::Tree::insert", SRC "tree.rs", 10, EXE);
	const struct frame get = fr("kv::Tree::get", SRC "tree.rs", 30, EXE);
	const struct frame memcpy_ = fr("__memcpy_avx_unaligned", NULL, 0, LIBC);
	const struct frame malloc_ = fr("malloc", NULL, 0, LIBC);
	const struct frame spin = fr("kv::spin", SRC "tree.rs", 40, EXE);
	ADD(p, "w", 40, worker, insert, memcpy_);
	ADD(p, "w", 35, worker, insert, malloc_);
	ADD(p, "w", 40, worker, get, spin);
	struct report_options o;
	report_options_init(&o);
	char *text = render(report_text, p, &o);
	CHECK_MSG(text && strstr(text, "#1 hottest code path (65.2% ±9.1, 75 samples): kv::worker (main.rs:5) → Tree::insert (tree.rs:10)\n"),
		  "merged headline:\n%s", text ? text : "");
	CHECK_MSG(text && !strstr(text, "#3 hottest code path"), "three paths where two read differently:\n%s", text);
	free(text);
	profile_free(p);
}

int main(void)
{
	test_same_headline_merged();
	struct profile *p = shop_profile(5000, 60);
	test_paths_json(p);
	test_paths_text(p);
	profile_free(p);
	test_thin_profile();
	test_user_frames();
	return test_exit_code();
}
