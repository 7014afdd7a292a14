/* fuzz_recipe.c — libFuzzer target: parse and check arbitrary bytes as a
 * recipe, then run it against one of each event (no crash, no leak). */
#include "recipe/recipe.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags;
	recipe_diag_list_init(&diags);
	struct recipe_defines defs;
	recipe_defines_init(&defs);
	recipe_defines_add(&defs, "FUNC=main", NULL);
	struct recipe *r = recipe_load_text("fuzz", (const char *)data, size, &defs, &diags);
	FILE *sink = fopen("/dev/null", "w");
	recipe_diag_list_print(&diags, sink);
	if (r && sink) {
		struct recipe_run *run = recipe_run_new(r, sink, NULL);
		struct frame frames[2] = {
			{.pc = 1, .function = "leaf", .file = "/src/a.rs", .line = 3},
			{.pc = 2, .function = "main", .file = "/src/main.rs", .line = 9},
		};
		struct stack st = {2, frames};
		static const enum event_kind kinds[] = {
			EVENT_BEGIN, EVENT_SAMPLE, EVENT_FUNCTION_ENTRY, EVENT_FUNCTION_RETURN,
			EVENT_PANIC, EVENT_SYSCALL_ENTRY, EVENT_SYSCALL_RETURN, EVENT_INTERVAL,
			EVENT_END,
		};
		for (size_t i = 0; run && i < sizeof kinds / sizeof kinds[0]; i++) {
			struct event ev = {0};
			ev.kind = kinds[i];
			ev.probe = -1;
			ev.stack = &st;
			ev.function = "main";
			ev.syscall_name = "read";
			ev.thread.name = "worker";
			ev.thread.state = 'R';
			ev.elapsed_ns = 1234;
			struct xerr e;
			recipe_run_event(run, &ev, &e);
		}
		recipe_run_free(run);
	}
	if (sink)
		fclose(sink);
	recipe_free(r);
	recipe_defines_release(&defs);
	recipe_diag_list_release(&diags);
	return 0;
}
