/* test_report_map.c — recipe_profile_add_map: recipe maps keyed by stacks become
 * profile entries (thread name from a single string key, other keys as
 * pseudo-frames above the root). */
#include "recipe/maps.h"
#include "recipe/syscall_table.h"
#include "report/profile.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"


/* map_live_bound's callbacks for the census check: an address's class is
 * what lies above its low 8 bits */
static bool census_fails;

static int64_t live_class_of(void *ctx, uint64_t addr)
{
	(void)ctx;
	return (int64_t)(addr >> 8);
}

static int64_t live_census_of(void *ctx, int64_t cls)
{
	(void)ctx;
	return cls == 1 ? 8 : cls == 2 ? (census_fails ? -1 : 2) : -1;
}

/* syscall_table_report with wrapper counts: sched_yield and write made
 * by known wrappers take their counts (mprotect, counted and never seen,
 * gets a row); futex (through syscall(), whose count says nothing of
 * which call) keeps the armed share's estimate (here a lower bound: its
 * updates fell in no window). */
static void test_syscall_table_counted(void)
{
	struct map *calls = map_new("calls", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map *time_ns = map_new("time_ns", MAP_AGG_SUM, 1, 0, 0, 0, 0);
	struct map *counted = map_new("counted", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	static const struct { const char *call; int seen; } seen[] = { { "sched_yield", 4 }, { "write", 2 }, { "futex", 3 } };
	for (size_t i = 0; i < 3; i++)
		for (int k = 0; k < seen[i].seen; k++) {
			struct map_key key = { .type = MAP_KEY_STR, .s = seen[i].call };
			map_update(calls, &key, 1, NULL);
			map_update(time_ns, &key, 5000, NULL);
		}
	/* one update each at the end, in its site's whole-site stratum */
	static const char *const wrappers[] = { "sched_yield", "write", "mprotect", "syscall" };
	double scales[4 * MAP_STRATA_PER_SITE] = { 0 };
	static const double counts[] = { 4000, 80, 300, 900 };
	for (int site = 0; site < 4; site++) {
		int id = site * MAP_STRATA_PER_SITE + MAP_STRATA_PER_SITE - 1;
		scales[id] = counts[site];
		map_set_weight(counted, id, counts[site], 0);
		struct map_key key = { .type = MAP_KEY_STR, .s = wrappers[site] };
		map_update(counted, &key, 1, NULL);
	}
	struct map_coverage c = { .armed_share = 0.05, .seconds = 4, .windows = 40, .counted_no_stops = true,
				  .site_scales = scales, .nsite_scales = 4 * MAP_STRATA_PER_SITE };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	syscall_table_report(time_ns, calls, NULL, NULL, counted, NULL, NULL, out, &c);
	fclose(out);
	CHECK_MSG(strstr(text, "       4000 sched_yield\n") && strstr(text, "         80 write\n") &&
		  strstr(text, "        300 mprotect\n") && strstr(text, "        >=3 futex\n") &&
		  strstr(text, "      >=4383 total\n") && !strstr(text, " syscall\n  "), "%s", text);
	CHECK_MSG(strstr(text, "counted in the target at glibc's wrapper") &&
			  strstr(text, "; the others (calls glibc makes inline"),
		  "%s", text);
	free(text);
	/* syscall()'s calls counted with their numbers summed: 900 calls
	 * totalling 900 x 202 were all futex's (the row's estimate is their
	 * count); a total off that (a gettid among them) is said, and
	 * attributed to no row */
	static const double totals[] = { 900.0 * 202, 899.0 * 202 + 186 };
	for (int mixed = 0; mixed < 2; mixed++) {
		struct map *numbers = map_new("numbers", MAP_AGG_SUM, 1, 0, 0, 0, 0);
		double sum_scales[4 * MAP_STRATA_PER_SITE] = { 0 };
		int id = 3 * MAP_STRATA_PER_SITE + MAP_STRATA_PER_SITE - 1;
		sum_scales[id] = totals[mixed];
		map_set_weight(numbers, id, 900, totals[mixed]);
		struct map_key key = { .type = MAP_KEY_STR, .s = "syscall" };
		map_update(numbers, &key, 1, NULL);
		struct map_coverage cn = c;
		cn.site_sum_scales = sum_scales;
		out = open_memstream(&text, &len);
		syscall_table_report(time_ns, calls, NULL, NULL, counted, numbers, NULL, out, &cn);
		fclose(out);
		if (!mixed)
			CHECK_MSG(strstr(text, "        900 futex\n") && strstr(text, "       5280 total\n") &&
					  strstr(text, "futex's N: the 900 calls into syscall()") &&
					  !strstr(text, "not attributed"),
				  "%s", text);
		else
			CHECK_MSG(strstr(text, "        >=3 futex\n") && !strstr(text, "futex's N") &&
					  strstr(text, "syscall(): 900 calls counted in the target, their numbers summing to "
							 "181784 (a mean of 201.98): calls of more than one number, not "
							 "attributed to any row\n"),
				  "%s", text);
		free(text);
		map_free(numbers);
	}
	/* the calls glibc makes inline, counted at their sites (a
	 * syscall_site probe's map, keyed by the call): a row of their own,
	 * exact, added to the wrappers' where a call has both */
	{
		struct map *at_sites = map_new("at_sites", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
		double site_scales[6 * MAP_STRATA_PER_SITE] = { 0 };
		memcpy(site_scales, scales, sizeof scales);
		static const char *const inline_calls[] = { "rt_sigprocmask", "write" };
		static const double inline_counts[] = { 80, 7 };
		for (int k = 0; k < 2; k++) {
			int id = (4 + k) * MAP_STRATA_PER_SITE + MAP_STRATA_PER_SITE - 1;
			site_scales[id] = inline_counts[k];
			map_set_weight(at_sites, id, inline_counts[k], 0);
			struct map_key key = { .type = MAP_KEY_STR, .s = inline_calls[k] };
			map_update(at_sites, &key, 1, NULL);
		}
		struct map_coverage cs = c;
		cs.site_scales = site_scales;
		cs.nsite_scales = 6 * MAP_STRATA_PER_SITE;
		out = open_memstream(&text, &len);
		syscall_table_report(time_ns, calls, NULL, NULL, counted, NULL, at_sites, out, &cs);
		fclose(out);
		CHECK_MSG(strstr(text, "         80 rt_sigprocmask\n") && strstr(text, "         87 write\n") &&
				  strstr(text, "and at the sites where glibc's code makes it inline"),
			  "%s", text);
		free(text);
		map_free(at_sites);
	}
	/* without the wrapper counts: the armed share's estimate, as before */
	out = open_memstream(&text, &len);
	syscall_table_report(time_ns, calls, NULL, NULL, NULL, NULL, NULL, out, &c);
	fclose(out);
	CHECK_MSG(!strstr(text, "mprotect") && strstr(text, ">=3 futex\n") && !strstr(text, " ~"), "%s", text);
	free(text);
	map_free(calls);
	map_free(time_ns);
	map_free(counted);
}

/* table() of a count whose hits a counter in the target weighs: the est.
 * column is each key's hits times its stratum's calls per hit, and the
 * share and the order follow it (a thread with fewer hits but more calls
 * first); without counted coverage, the armed share's estimate and the
 * hits' order. */
static void test_table_counted(void)
{
	struct map *m = map_new("by_thread", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	static const struct { const char *key; int hits; int stratum; } rows[] = { { "few-calls", 3, 0 },
										  { "many-calls", 2, 1 } };
	double scales[MAP_STRATA_PER_SITE] = { 10, 100 };
	for (size_t i = 0; i < 2; i++)
		for (int h = 0; h < rows[i].hits; h++) {
			map_set_weight(m, rows[i].stratum, scales[rows[i].stratum], 0);
			struct map_key key = { .type = MAP_KEY_STR, .s = rows[i].key };
			map_update(m, &key, 1, NULL);
		}
	struct map_coverage c = { .armed_share = 0.05, .seconds = 4, .windows = 40, .site_scales = scales,
				  .nsite_scales = MAP_STRATA_PER_SITE };
	const struct map *maps[1] = { m };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	map_table(maps, 1, out, &c);
	fclose(out);
	const char *many = strstr(text, "many-calls"), *few = strstr(text, "few-calls");
	CHECK_MSG(strstr(text, "87.0          2             200  many-calls\n") &&
			  strstr(text, "13.0          3              30  few-calls\n") && many && few && many < few &&
			  strstr(text, "weighed by the calls counted in the target"),
		  "%s", text);
	free(text);
	c.nsite_scales = 0;
	out = open_memstream(&text, &len);
	map_table(maps, 1, out, &c);
	fclose(out);
	many = strstr(text, "many-calls");
	few = strstr(text, "few-calls");
	CHECK_MSG(strstr(text, "60.0          3") && many && few && few < many && !strstr(text, "counted in the target"),
		  "%s", text);
	free(text);
	map_free(m);
}

/* map_print: the calls of a counted site that no entry stands for (threads
 * no hit saw, like none a hit came from: map_apart) are said under each map
 * that site feeds, with the threads' names escaped, and under no other. */
static void test_print_aparts(void)
{
	double scales[2 * MAP_STRATA_PER_SITE] = { 200 };
	scales[MAP_STRATA_PER_SITE] = 50;
	struct map_apart apart = { .site = 0, .function = "realloc", .calls = 8082, .sum = 8500000,
				   .threads = "insert\033worker" };
	struct map_coverage c = { .armed_share = 0.05, .seconds = 4, .windows = 40, .site_scales = scales,
				  .nsite_scales = 2 * MAP_STRATA_PER_SITE, .aparts = &apart, .naparts = 1 };
	struct map *counts = map_new("allocs", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map *bytes = map_new("bytes", MAP_AGG_SUM, 1, 0, 0, 0, 0);
	struct map *other = map_new("other", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map_key key = { .type = MAP_KEY_STR, .s = "session-worker" };
	for (int h = 0; h < 5; h++) {
		map_set_weight(counts, 0, 200, 0);
		map_update(counts, &key, 1, NULL);
		map_set_weight(bytes, 0, 200, 0);
		map_update(bytes, &key, 1000, NULL);
		map_set_weight(other, MAP_STRATA_PER_SITE, 50, 0);   /* site 1 */
		map_update(other, &key, 1, NULL);
	}
	const struct { const struct map *m; const char *want; } cases[] = {
		{ counts, "@allocs: and 8082 calls (2020/s) of realloc, counted in the target, by threads no hit saw "
			  "(insert\\x1bworker): like none a hit came from, so in no entry above\n" },
		{ bytes, "@bytes: and 8500000 (2.125e+06/s) summed over 8082 calls of realloc, counted in the target, by "
			 "threads no hit saw (insert\\x1bworker): like none a hit came from, so in no entry above\n" },
		{ other, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		map_print(cases[i].m, out, 0, &c);
		fclose(out);
		if (cases[i].want)
			CHECK_MSG(strstr(text, cases[i].want) != NULL, "%s", text);
		else
			CHECK_MSG(strstr(text, "no hit saw") == NULL, "%s", text);
		free(text);
	}
	map_free(counts);
	map_free(bytes);
	map_free(other);
}

int main(void)
{
	test_print_aparts();
	test_syscall_table_counted();
	test_table_counted();
	struct frame leaf_root[2] = {
		{ .pc = 0x10, .function = "app::leaf", .file = "/src/app.rs", .line = 7, .lang = FRAME_LANG_RUST,
		  .source = FRAME_SOURCE_DWARF, .module = "/bin/app" },
		{ .pc = 0x20, .function = "app::main", .file = "/src/app.rs", .line = 3, .lang = FRAME_LANG_RUST,
		  .source = FRAME_SOURCE_DWARF, .module = "/bin/app" },
	};
	struct stack s = { 2, leaf_root };
	struct xerr e = { "" };

	/* @[thread.name, ustack] = count(): thread name from the string key */
	struct map *m = map_new("by_thread", MAP_AGG_COUNT, 2, 0, 0, 0, 0);
	struct map_key k[2] = { { .type = MAP_KEY_STR, .s = "worker" }, { .type = MAP_KEY_STACK, .stack = &s } };
	for (int i = 0; i < 3; i++)
		map_update(m, k, 0, NULL);
	k[0].s = "main";
	map_update(m, k, 0, NULL);
	struct profile *p = profile_new();
	CHECK_MSG(recipe_profile_add_map(p, m, &e) == 0, "add: %s", e.msg);
	CHECK_MSG(p->nentries == 2, "entries %zu", p->nentries);
	CHECK_MSG(p->nentries == 2 && strcmp(p->entries[0].thread_name, "worker") == 0 &&
	      p->entries[0].weight == 3 && p->entries[0].stack.nframes == 2, "worker entry");
	CHECK_MSG(p->nentries == 2 && p->entries[1].weight == 1, "main entry");
	profile_free(p);
	map_free(m);

	/* @[pid, ustack] = sum(x): the int key becomes a root pseudo-frame */
	m = map_new("by_pid", MAP_AGG_SUM, 2, 0, 0, 0, 0);
	struct map_key k2[2] = { { .type = MAP_KEY_INT, .i = 42 }, { .type = MAP_KEY_STACK, .stack = &s } };
	map_update(m, k2, 5, NULL);
	map_update(m, k2, 6, NULL);
	p = profile_new();
	CHECK_MSG(recipe_profile_add_map(p, m, &e) == 0, "add sum: %s", e.msg);
	CHECK_MSG(p->nentries == 1 && p->entries[0].weight == 11, "sum weight");
	CHECK_MSG(p->nentries == 1 && p->entries[0].stack.nframes == 3 &&
	      strcmp(p->entries[0].stack.frames[2].function, "42") == 0 && !p->entries[0].thread_name,
	      "pid pseudo-frame at the root");
	profile_free(p);
	map_free(m);

	/* no stack key, or a histogram: refused with a reason */
	m = map_new("calls", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map_key k3 = { .type = MAP_KEY_STR, .s = "x" };
	map_update(m, &k3, 0, NULL);
	p = profile_new();
	CHECK_MSG(recipe_profile_add_map(p, m, &e) < 0 && strstr(e.msg, "stack key"), "no stack key: %s", e.msg);
	map_free(m);
	m = map_new("lat", MAP_AGG_HIST, 1, 0, 0, 0, 0);
	struct map_key k4 = { .type = MAP_KEY_STACK, .stack = &s };
	map_update(m, &k4, 100, NULL);
	CHECK_MSG(recipe_profile_add_map(p, m, &e) < 0 && strstr(e.msg, "weigh"), "hist: %s", e.msg);
	map_free(m);
	profile_free(p);
	/* print() folds a run of two or more runtime frames into one line and
	 * keeps the leaf and the user's frames (mutation seen failing:
	 * FOLD_RUNTIME_RUN at 99) */
	struct frame deep[6] = {
		{ .pc = 0x30, .function = "alloc::vec::Vec::push", .file = "/rustc/0123456789abcdef0123456789abcdef01234567/library/alloc/src/vec/mod.rs", .line = 9 },
		{ .pc = 0x40, .function = "app::store", .file = "/src/app.rs", .line = 12 },
		{ .pc = 0x50, .function = "std::rt::lang_start", .file = "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/rt.rs", .line = 1 },
		{ .pc = 0x60, .function = "std::panicking::try", .file = "/rustc/0123456789abcdef0123456789abcdef01234567/library/std/src/panicking.rs", .line = 2 },
		{ .pc = 0x70, .function = "start_thread", .file = "./nptl/pthread_create.c", .line = 442 },
		{ .pc = 0x80, .function = "app::main", .file = "/src/app.rs", .line = 3 },
	};
	struct stack ds = { 6, deep };
	struct map *pm = map_new("bytes", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map_key dk = { .type = MAP_KEY_STACK, .stack = &ds };
	map_update(pm, &dk, 0, NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	map_print(pm, f, 0, NULL);
	fclose(f);
	CHECK_MSG(strstr(text, "alloc::vec::Vec::push") && strstr(text, "app::store") && strstr(text, "app::main") &&
		  strstr(text, "… 3 runtime frames") && !strstr(text, "std::rt::lang_start"), "%s", text);
	free(text);
	map_free(pm);

	/* map_live_bound: each entry's share of the census of the classes its
	 * live records fall in, by its part of the live records seen there
	 * (class = the address's high byte here; census: 8 blocks of class 1,
	 * 2 of class 2). Entry A: 3 live records of 80 bytes in class 1;
	 * entry B: 1 of 96 in class 1, 1 of 200 in class 2, 1 freed. */
	struct map *lm = map_new("heap", MAP_AGG_LIVE, 1, 0, 0, 0, 0);
	struct map_key ka = { .type = MAP_KEY_INT, .i = 1 }, kb = { .type = MAP_KEY_INT, .i = 2 };
	for (uint64_t r = 0; r < 3; r++)
		map_update_live(lm, &ka, 0x100 + 16 * r, 80, r);
	map_update_live(lm, &kb, 0x140, 96, 3);
	map_update_live(lm, &kb, 0x200, 200, 4);
	map_update_live(lm, &kb, 0x210, 200, 5);
	for (size_t i = 0; i < map_len(lm); i++) {
		struct map_live *l = map_entry_at(lm, i)->value.live;
		for (size_t r = 0; r < l->n; r++)
			l->v[r].state = l->v[r].addr == 0x210 ? MAP_LIVE_FREED : MAP_LIVE_LIVE;
	}
	map_live_tally(lm);
	map_live_bound(lm, live_class_of, live_census_of, NULL);
	const struct map_live *la = map_find(lm, &ka)->value.live, *lb = map_find(lm, &kb)->value.live;
	CHECK_MSG(la->bounded && la->bound_blocks == 8 && la->bound_bytes == 640, "A bound %d %llu %lld", la->bounded,
		  (unsigned long long)la->bound_blocks, (long long)la->bound_bytes);
	/* A: 8 blocks x 80 bytes x 3/4 */
	CHECK_MSG(la->share_seen == 3 && la->share_of == 4 && la->share_bytes == 480 && la->share_low < 480 &&
		  la->share_high > 480 && la->share_high <= 640,
		  "A share %g (%g-%g), %llu of %llu", la->share_bytes, la->share_low, la->share_high,
		  (unsigned long long)la->share_seen, (unsigned long long)la->share_of);
	/* B: 8 x 96 x 1/4 + 2 x 200 x 1/1 */
	CHECK_MSG(lb->bounded && lb->share_seen == 2 && lb->share_of == 5 && lb->share_bytes == 192 + 400 &&
		  lb->share_low >= 296 && lb->share_high <= 8 * 96 + 400, "B share %g (%g-%g), %llu of %llu",
		  lb->share_bytes, lb->share_low, lb->share_high, (unsigned long long)lb->share_seen,
		  (unsigned long long)lb->share_of);
	/* a class with no census: no bound, no share */
	census_fails = true;
	map_live_bound(lm, live_class_of, live_census_of, NULL);
	CHECK_MSG(!map_find(lm, &kb)->value.live->bounded && map_find(lm, &ka)->value.live->bounded, "census failed");
	map_free(lm);
	return test_exit_code();
}
