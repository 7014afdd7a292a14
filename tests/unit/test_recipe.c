/* test_recipe.c — unit tests of the recipe evaluator and maps, driven by
 * synthetic events; outputs are compared exactly. */
#include "recipe/builtins.h"
#include "recipe/maps.h"
#include "recipe/recipe.h"
#include "report/report_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"



static struct recipe *load(const char *text)
{
	struct diag_list d;
	recipe_diag_list_init(&d);
	struct recipe *r = recipe_load_text("t.recipe", text, strlen(text), NULL, &d);
	if (!r)
		recipe_diag_list_print(&d, stderr);
	recipe_diag_list_release(&d);
	return r;
}

static void expect_output(const char *recipe, const struct event *evs, size_t n, const char *want)
{
	struct recipe *r = load(recipe);
	CHECK(r != NULL);
	if (!r)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct recipe_run *run = recipe_run_new(r, out, NULL);
	for (size_t i = 0; i < n; i++) {
		struct xerr e;
		CHECK(recipe_run_event(run, &evs[i], &e) == 0);
	}
	recipe_run_free(run);
	fclose(out);
	if (strcmp(buf, want)) {
		fprintf(stderr, "recipe:\n%s\nwant:\n%s\ngot:\n%s\n", recipe, want, buf);
		test_failures++;
	}
	free(buf);
	recipe_free(r);
}

static void test_count_by_stack(void)
{
	struct frame a[] = {{.pc = 1, .function = "leaf"}, {.pc = 2, .function = "main"}};
	struct frame b[] = {{.pc = 3, .function = "other"}, {.pc = 2, .function = "main"}};
	struct stack sa = {2, a}, sb = {2, b};
	struct event ev[4] = {{0}};
	for (int i = 0; i < 3; i++) {
		ev[i].kind = EVENT_SAMPLE;
		ev[i].probe = -1;
		ev[i].stack = i == 1 ? &sb : &sa;
	}
	ev[3].kind = EVENT_END;
	ev[3].probe = -1;
	expect_output("sample { @s[ustack] = count(); @n = count(); } end { folded(@s); print(@n); }",
		      ev, 4, "main;leaf 2\nmain;other 1\n@n: 3\n");
}

/* A sampler's end-of-run tail (event.h weight_only) adds CPU to sums of
 * thread.cpu_ns and nothing else: no count, no other sum, no printf. */
static void test_weight_only(void)
{
	struct frame a[] = {{.pc = 1, .function = "leaf"}, {.pc = 2, .function = "main"}};
	struct frame b[] = {{.pc = 3, .function = "other"}, {.pc = 2, .function = "main"}};
	struct frame c[] = {{.pc = 4, .function = "third"}, {.pc = 2, .function = "main"}};
	struct stack sa = {2, a}, sb = {2, b}, sc = {2, c};
	struct event ev[5] = {{0}};
	const struct stack *stacks[] = {&sa, &sb, &sb, &sc};
	const uint64_t cpu[] = {10, 20, 5, 7};
	for (int i = 0; i < 4; i++)
		ev[i] = (struct event){ .kind = EVENT_SAMPLE, .probe = -1, .stack = stacks[i], .cpu_ns = cpu[i],
					.weight_only = i >= 2 };
	ev[4] = (struct event){ .kind = EVENT_END, .probe = -1 };
	expect_output("sample { @cpu[ustack] = sum(thread.cpu_ns); @n = count(); @other[ustack] = sum(2); printf(\"s\\n\"); }"
		      " end { folded(@cpu); folded(@other); print(@n); }",
		      ev, 5, "s\ns\nmain;other 25\nmain;leaf 10\nmain;third 7\nmain;other 2\nmain;leaf 2\n@n: 2\n");
}

static void test_hist_and_predicate(void)
{
	struct event ev[6] = {{0}};
	int64_t el[] = {0, 1, 3, 5, 1000};
	for (int i = 0; i < 5; i++) {
		ev[i].kind = EVENT_FUNCTION_RETURN;
		ev[i].probe = -1;
		ev[i].function = "f";
		ev[i].elapsed_ns = (uint64_t)el[i];
	}
	ev[5].kind = EVENT_END;
	ev[5].probe = -1;
	expect_output("return \"f\" /elapsed < 100/ { @h = hist(elapsed); }", ev, 6,
		      "@h:\n"
		      "[0]                         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		      "[1]                         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		      "[2, 4)                      1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		      "[4, 8)                      1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n");
}

static void test_map_limit(void)
{
	struct map *m = map_new("m", MAP_AGG_COUNT, 1, 0, 0, 0, 2);
	for (int i = 0; i < 5; i++) {
		struct map_key k = {.type = MAP_KEY_INT, .i = i % 3};
		CHECK(map_update(m, &k, 0, NULL) == 0);
	}
	CHECK(map_len(m) == 2);
	CHECK(map_dropped(m) == 1);
	struct map_key k0 = {.type = MAP_KEY_INT, .i = 0};
	const struct map_entry *e = map_find(m, &k0);
	CHECK(e && e->value.count == 2);
	map_free(m);
	CHECK(map_hist_bucket(-5) == 0 && map_hist_bucket(0) == 1 && map_hist_bucket(1) == 2);
	CHECK(map_hist_bucket(2) == 3 && map_hist_bucket(3) == 3 && map_hist_bucket(INT64_MAX) == 64);
}

static void test_options_and_probes(void)
{
	struct recipe *r = load("set frequency 99hz\nset threads /work/\nset max_stopped 7%\n"
				"function /^sled::/ { @c = count(); }\nreturn \"a::B::f\" { @d = count(); }\n"
				"interval 2s { print(@c); print(@d); }");
	CHECK(r != NULL);
	if (!r)
		return;
	const struct recipe_options *o = recipe_options(r);
	CHECK(o->frequency_hz == 99 && o->threads == RECIPE_THREADS_REGEX && o->max_stopped_percent == 7);
	CHECK(!strcmp(o->threads_regex, "work"));
	struct xerr e;
	CHECK(recipe_set_option(r, "frequency", "10", &e) == 0 && o->frequency_hz == 10);
	CHECK(recipe_set_option(r, "duration", "5m", &e) == 0 && o->duration_ns == 300000000000LL);
	CHECK(recipe_set_option(r, "frequncy", "10", &e) < 0 && strstr(e.msg, "did you mean 'frequency'"));
	CHECK(recipe_probe_count(r) == 3);
	struct recipe *fl = load("function \"src/tree.rs:120\" { @x = count(); }");
	struct probe_spec fi;
	CHECK(fl && recipe_probe(fl, 0, &fi) == 0 && fi.spec_kind == PROBE_SPEC_FILELINE &&
	      !strcmp(fi.file, "src/tree.rs") && fi.line == 120 && fi.recipe_line == 1);
	recipe_free(fl);
	struct probe_spec pi;
	CHECK(recipe_probe(r, 2, &pi) == 0 && pi.kind == PROBE_INTERVAL && pi.interval_ns == 2000000000LL);
	CHECK(recipe_probe_matches_function(r, 0, "sled::tree::Tree<K,V>::insert"));
	CHECK(!recipe_probe_matches_function(r, 0, "std::rt::main"));
	CHECK(recipe_probe_matches_function(r, 1, "a::B<u64>::f"));
	recipe_free(r);
}

/* Which probes only count (no breakpoint where a counter goes in): no
 * key or the probed function's name as the key, no predicate, nothing but
 * count() or sum() of one argument register arg0..arg2, into a map no
 * other probe writes. Mutation shown to fail: key_known_at_site accepting
 * any one key. */
static void test_count_only(void)
{
	static const struct { const char *text; bool only; } cases[] = {
		{ "function \"f\" { @c = count(); }", true },
		{ "function /^(read|write)$/ { @calls[func] = count(); }", true },
		{ "function \"f\" { @c[tid] = count(); }", false },
		{ "function \"f\" { @c[func, tid] = count(); }", false },
		{ "function \"f\" { @c[ustack] = count(); }", false },
		{ "function \"f\" /tid == 1/ { @c[func] = count(); }", false },
		{ "function \"f\" { @c[func] = sum(arg0); }", true },
		{ "function \"f\" { @n = count(); @b[func] = sum(arg2); }", true },
		{ "function \"f\" { @c[func] = sum(arg3); }", false },
		{ "function \"f\" { @c[func] = sum(arg0 * arg1); }", false },
		{ "function \"f\" { @a = sum(arg0); @b = sum(arg1); }", false },
		{ "function \"f\" { @c = avg(arg0); }", false },
		{ "function \"f\" { @c[func] = count(); }\nfunction \"g\" { @c[func] = count(); }", false },
		/* a system call's site: its call's name and number are fixed there too */
		{ "syscall_site rt_sigprocmask { @c[syscall.name] = count(); }", true },
		{ "syscall_site /^rt_/ { @c[func, syscall.nr] = count(); }", true },
		{ "syscall_site rt_sigprocmask { @c = count(); }", true },
		{ "syscall_site rt_sigprocmask { @c[tid] = count(); }", false },
		{ "syscall_site rt_sigprocmask { @c[func, syscall.name, syscall.nr] = count(); }", false },
		{ "syscall_site rt_sigprocmask /syscall.nr == 14/ { @c = count(); }", false },
		{ "syscall futex { @c[syscall.name] = count(); }", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct recipe *r = load(cases[i].text);
		struct probe_spec spec;
		CHECK_MSG(r && recipe_probe(r, 0, &spec) == 0 && spec.count_only == cases[i].only, "%s: count_only %d",
			  cases[i].text, r ? (int)spec.count_only : -1);
		recipe_free(r);
	}
}

/* Which argument register every sum() of a probe adds: the counter then
 * totals it in the target (entry_counter.sums). -1: none. */
static void test_summed_argument(void)
{
	static const struct { const char *text; int arg; } cases[] = {
		{ "function \"f\" { @b[ustack] = sum(arg0); @n[ustack] = count(); }", 0 },
		{ "function \"f\" { $size = arg0; @b[ustack] = sum($size); }", 0 },
		{ "function \"f\" /arg0 != 0/ { @b[ustack] = sum(arg1); }", 1 },
		{ "function \"f\" { @b[ustack] = sum(arg2); @c[tid] = sum(arg2); }", 2 },
		{ "function \"f\" { @b[ustack] = sum(arg3); }", -1 },          /* rcx: the code's own */
		{ "function \"f\" { @b[ustack] = sum(arg0 * arg1); }", -1 },
		{ "function \"f\" { @b[ustack] = sum(arg0); @c[ustack] = sum(arg1); }", -1 },
		{ "function \"f\" { $s = arg0; $s = arg1; @b[ustack] = sum($s); }", 1 },
		{ "function \"f\" { $s = arg0 + 1; @b[ustack] = sum($s); }", -1 },
		{ "function \"f\" { if (arg0 > 8) { @b[ustack] = sum(arg0); } }", -1 },
		{ "function \"f\" { @n[ustack] = count(); }", -1 },
		{ "function \"f\" { @b[ustack] = sum(tid); }", -1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct recipe *r = load(cases[i].text);
		struct probe_spec spec;
		bool loaded = r && recipe_probe(r, 0, &spec) == 0;
		int got = loaded ? (spec.sums_one_arg ? (int)spec.summed_arg : -1) : -9;
		CHECK_MSG(got == cases[i].arg, "%s: summed argument %d, want %d", cases[i].text, got, cases[i].arg);
		recipe_free(r);
	}
}

static void test_runtime_error(void)
{
	struct recipe *r = load("begin { $z = 0; printf(\"%d\\n\", 1 / $z); }");
	CHECK(r != NULL);
	if (!r)
		return;
	FILE *out = fopen("/dev/null", "w");
	struct recipe_run *run = recipe_run_new(r, out, NULL);
	struct event ev = {.kind = EVENT_BEGIN, .probe = -1};
	struct xerr e;
	CHECK(recipe_run_event(run, &ev, &e) < 0);
	CHECK(strstr(e.msg, "t.recipe:1:32: runtime error: division by zero") != NULL);
	recipe_run_free(run);
	fclose(out);
	recipe_free(r);
}

static void test_open_and_resolve(void)
{
	char path[4096];
	struct xerr e;
	CHECK(recipe_resolve_name("hot-cpu", path, sizeof path, NULL, 0, &e) == 0 && strstr(path, "hot-cpu.recipe"));
	CHECK(recipe_resolve_name("hot-cpu.recipe", path, sizeof path, NULL, 0, &e) == 0);
	CHECK(recipe_resolve_name("no-such-recipe", path, sizeof path, NULL, 0, &e) < 0 && strstr(e.msg, "xgdbprof recipes"));
	/* A bare name is the shipped recipe even beside a file of that name
	 * (the program itself is often called like its recipe), and the note
	 * says so; a local file is taken only when nothing shipped has its
	 * name; a program is never parsed as a recipe. */
	char cwd[4096], dir[] = "/tmp/test_recipe_XXXXXX", note[512];
	CHECK(getcwd(cwd, sizeof cwd) != NULL && mkdtemp(dir) != NULL && chdir(dir) == 0);
	FILE *f = fopen("hot-cpu", "w");
	fputs("\177ELF\2\1\1", f);
	fclose(f);
	f = fopen("prog", "w");
	fputs("\177ELF\2\1\1", f);
	fclose(f);
	f = fopen("mine.recipe", "w");
	fputs("sample { @[ustack] = count(); }\n", f);
	fclose(f);
	CHECK(recipe_resolve_name("hot-cpu", path, sizeof path, note, sizeof note, &e) == 0 &&
	      strstr(path, "/hot-cpu.recipe") && strstr(note, "took the shipped recipe 'hot-cpu'"));
	CHECK(recipe_resolve_name("mine.recipe", path, sizeof path, note, sizeof note, &e) == 0 &&
	      !strcmp(path, "mine.recipe") && note[0] == '\0');
	CHECK(recipe_resolve_name("prog", path, sizeof path, note, sizeof note, &e) < 0 &&
	      strstr(e.msg, "prog is a program, not a recipe file"));
	CHECK(recipe_resolve_name("./prog", path, sizeof path, note, sizeof note, &e) < 0 &&
	      strstr(e.msg, "is a program"));
	unlink("hot-cpu");
	unlink("prog");
	unlink("mine.recipe");
	CHECK(chdir(cwd) == 0 && rmdir(dir) == 0);
	FILE *errs = fopen("/dev/null", "w");
	struct recipe *r = recipe_open("hot-cpu", NULL, NULL, errs);
	CHECK(r && recipe_options(r)->frequency_hz == 99 && recipe_options(r)->duration_ns == 30000000000LL);
	recipe_free(r);
	r = recipe_open(NULL, "sample { @[ustack] = count(); }", NULL, errs);
	CHECK(r && recipe_probe_count(r) == 1);
	recipe_free(r);
	CHECK(recipe_open(NULL, "sample { @x = cnt(); }", NULL, errs) == NULL);
	struct recipe_defines defs;
	recipe_defines_init(&defs);
	CHECK(recipe_defines_add(&defs, "FUNC=a::b", &e) == 0);
	CHECK(recipe_defines_add(&defs, "1BAD=x", &e) < 0);
	r = recipe_open("func-latency", NULL, &defs, errs);
	struct probe_spec pi;
	CHECK(r && recipe_probe(r, 0, &pi) == 0 && !strcmp(pi.spec, "a::b") && pi.spec_kind == PROBE_SPEC_NAME);
	recipe_free(r);
	recipe_defines_release(&defs);
	CHECK(recipe_open("func-latency", NULL, NULL, errs) == NULL);   /* FUNC missing */
	fclose(errs);
}

/* An armed share known only to a range widens the interval to it: the
 * Poisson interval's low end over the larger share, its high end over the
 * smaller; with no range, the plain estimate. */
static void test_coverage_range(void)
{
	double est, lo, hi, plain_est, plain_lo, plain_hi;
	map_estimate(100, 0.02, &plain_est, &plain_lo, &plain_hi);
	struct map_coverage c = { .armed_share = 0.02 };
	map_coverage_estimate(&c, 100, &est, &lo, &hi);
	CHECK(est == plain_est && lo == plain_lo && hi == plain_hi);
	c.share_low = 0.016;
	c.share_high = 0.025;
	map_coverage_estimate(&c, 100, &est, &lo, &hi);
	CHECK(est == plain_est);
	CHECK_MSG(lo > plain_lo * 0.02 / 0.025 - 1e-6 && lo < plain_lo * 0.02 / 0.025 + 1e-6, "lo %g", lo);
	CHECK_MSG(hi > plain_hi * 0.02 / 0.016 - 1e-6 && hi < plain_hi * 0.02 / 0.016 + 1e-6, "hi %g", hi);
	CHECK(lo < plain_lo && hi > plain_hi);
}

/* Counts clustered in few windows: with a dispersion d over W windows the
 * interval is at least est x exp(-+ t(W-1) sqrt(d/n)), wider than the
 * plain Poisson one; an entry seen in fewer than
 * MAP_MIN_ESTIMATE_WINDOWS windows says so and gets no estimate. */
static void test_coverage_windows(void)
{
	double est, lo, hi, plain_est, plain_lo, plain_hi;
	map_estimate(100, 0.02, &plain_est, &plain_lo, &plain_hi);
	struct map_coverage c = { .armed_share = 0.02, .windows = 8, .dispersion = 4 };
	map_coverage_estimate(&c, 100, &est, &lo, &hi);
	CHECK(est == plain_est);
	CHECK_MSG(lo < plain_lo * 0.8 && hi > plain_hi * 1.2, "lo %g hi %g against %g %g", lo, hi, plain_lo, plain_hi);
	c.dispersion = 1;
	c.windows = 40;
	map_coverage_estimate(&c, 100, &est, &lo, &hi);
	CHECK_MSG(lo > plain_lo * 0.97 && hi < plain_hi * 1.03, "lo %g hi %g against %g %g", lo, hi, plain_lo, plain_hi);

	struct recipe *r = load("function \"f\" { @c[arg0] = count(); }");
	CHECK(r != NULL);
	if (!r)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct recipe_run *run = recipe_run_new(r, out, NULL);
	struct event ev = {0};
	ev.kind = EVENT_FUNCTION_ENTRY;
	ev.probe = 0;
	ev.function = "f";
	ev.has_int_args = true;
	struct xerr e;
	for (int w = 1; w <= 10; w++)
		for (int k = 0; k < 3; k++) {
			ev.window = w;
			ev.int_args[0] = w <= 2 && k == 0 ? 7 : 1;   /* key 7 only in windows 1 and 2 */
			if (recipe_run_event(run, &ev, &e) < 0) {
				CHECK_MSG(false, "%s", e.msg);
				w = 11;
				break;
			}
		}
	recipe_run_set_coverage(run, 0.01, false);
	recipe_run_set_coverage_windows(run, 10, 1);
	struct event end = {0};
	end.kind = EVENT_END;
	end.probe = -1;
	CHECK(recipe_run_event(run, &end, &e) == 0);
	recipe_run_free(run);
	fclose(out);
	CHECK_MSG(strstr(buf, "2 measured · est. at least 2 (what was measured: seen in only 2 of 10 armed windows") != NULL, "%s", buf);
	CHECK_MSG(strstr(buf, "28 measured · est. 2800 (95% ") != NULL, "%s", buf);
	free(buf);
	recipe_free(r);
}

/* The diagnostics of loading text (NULL when it loads), printed. */
static char *load_errors(const char *text)
{
	struct diag_list d;
	recipe_diag_list_init(&d);
	struct recipe *r = recipe_load_text("t.recipe", text, strlen(text), NULL, &d);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (out) {
		recipe_diag_list_print(&d, out);
		fclose(out);
	}
	recipe_diag_list_release(&d);
	if (r) {
		recipe_free(r);
		free(buf);
		return NULL;
	}
	return buf;
}

/* Every format with a recipe call is a statement taking the options its
 * row names; an unknown one is refused with the table's calls. */
static void test_format_calls(void)
{
	char text[512], calls[256] = "";
	for (size_t i = 0; i < report_format_count(); i++) {
		const struct report_format *f = report_format_at(i);
		if (!f->recipe_call)
			continue;
		snprintf(calls + strlen(calls), sizeof calls - strlen(calls), "%s, ", f->recipe_call);
		snprintf(text, sizeof text, "sample { @m[ustack] = count(); } end { %s(@m, \"out.%s\"); }",
			 f->recipe_call, f->name);
		char *errors = load_errors(text);
		CHECK_MSG(!errors, "%s() is refused: %s", f->recipe_call, errors);
		free(errors);
		snprintf(text, sizeof text, "sample { @m[ustack] = count(); } end { %s(@m, zzz=1); }", f->recipe_call);
		errors = load_errors(text);
		CHECK_MSG(errors && (f->recipe_options ? strstr(errors, "has no option 'zzz': its options are ")
				     : strstr(errors, "takes no name=value options")),
			  "%s(zzz=1): %s", f->recipe_call, errors ? errors : "accepted");
		for (unsigned bit = 1; errors && bit; bit <<= 1)
			CHECK_MSG(!(f->recipe_options & bit) || strstr(errors, report_format_option_name(bit)),
				  "%s(): its options name %s", f->recipe_call, report_format_option_name(bit));
		free(errors);
	}
	/* speedscope is a format (report -f) with no call */
	char *errors = load_errors("sample { @m[ustack] = count(); } end { speedscope(@m); }");
	char want[512];
	snprintf(want, sizeof want, "unknown statement 'speedscope': statements are print, printf, clear, exit, "
		 "report, %stable, snapshot, locks", calls);
	CHECK_MSG(errors && strstr(errors, want), "want \"%s\", got %s", want, errors ? errors : "no error");
	free(errors);
	errors = load_errors("sample { @m[ustack] = count(); } end { flamegrph(@m); }");
	CHECK(errors && strstr(errors, "did you mean 'flamegraph'?"));
	free(errors);
}

static unsigned needs_of(const char *text)
{
	struct recipe *r = load(text);
	CHECK_MSG(r != NULL, "%s", text);
	unsigned needs = r ? recipe_needs(r) : ~0u;
	recipe_free(r);
	return needs;
}

/* What a recipe needs from the run comes from the builtins it uses. */
static void test_needs(void)
{
	CHECK(needs_of("sample { @[ustack] = count(); }") == RECIPE_NEEDS_STACKS);
	CHECK(needs_of("function \"f\" { @[ustack(3)] = count(); }") == RECIPE_NEEDS_STACKS);
	CHECK(needs_of("function \"f\" { @[caller] = count(); }") == RECIPE_NEEDS_STACKS);
	CHECK(needs_of("function \"f\" { @[func] = count(); }") == RECIPE_NEEDS_STACKS);
	CHECK(needs_of("function \"f\" { @[arg(key)] = count(); }") == RECIPE_NEEDS_SYMBOLS);
	CHECK(needs_of("function \"f\" { @[arg0, tid] = count(); }") == 0);
	CHECK(needs_of("return \"malloc\" { @heap[ustack] = live(int(retval), 8); }") ==
	      (RECIPE_NEEDS_STACKS | RECIPE_NEEDS_LIVE_HEAP));
	CHECK(needs_of("function \"f\" { @n = count(); } end { print(@n); }") == 0);
	/* a builtin read only by a predicate counts too */
	CHECK(needs_of("function \"f\" /func =~ /^a::/ / { @n = count(); }") == RECIPE_NEEDS_STACKS);

	/* every row is found by its name; ids of a kind share their needs */
	for (size_t i = 0; i < recipe_builtin_count(); i++) {
		const struct recipe_builtin *b = recipe_builtin_at(i);
		CHECK_MSG(recipe_builtin_find(b->name) == b, "%s: find by name", b->name);
		CHECK_MSG(b->help && b->help[0], "%s: one line of help", b->name);
		CHECK_MSG(recipe_builtins_needs(UINT64_C(1) << b->id) == b->needs || b->id == B_INT_ARG,
			  "%s: its needs", b->name);
	}
	CHECK(recipe_builtin_at(recipe_builtin_count()) == NULL && recipe_builtin_find("nosuch") == NULL);
	CHECK_STR(recipe_builtin_closest("thred.id"), "thread.id");
}

int main(void)
{
	test_coverage_range();
	test_coverage_windows();
	test_open_and_resolve();
	test_count_by_stack();
	test_weight_only();
	test_hist_and_predicate();
	test_map_limit();
	test_options_and_probes();
	test_count_only();
	test_summed_argument();
	test_runtime_error();
	test_format_calls();
	test_needs();
	if (test_failures)
		fprintf(stderr, "%d test_failures\n", test_failures);
	return test_exit_code();
}
