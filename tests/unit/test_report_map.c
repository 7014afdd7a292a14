/* test_report_map.c — recipe_profile_add_map: recipe maps keyed by stacks become
 * profile entries (thread name from a single string key, other keys as
 * pseudo-frames above the root). */
#include "recipe/maps.h"
#include "report/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"


int main(void)
{
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
	return test_exit_code();
}
