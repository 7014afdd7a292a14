/* test_panic_report.c — panic_report_print on hand-made maps keyed
 * [location, message, ustack]: groups by location, most panics first, up to
 * PANIC_REPORT_MESSAGES messages with counts, the most frequent stack root
 * first with runtime runs folded, target text escaped, lines within the
 * width, "(no events)" for an empty map, an error for a map it cannot group. */
#include "recipe/maps.h"
#include "recipe/panic_report.h"
#include "util/text_fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define RUST_LIB "/rustc/0123456789abcdef0123456789abcdef01234567/library/"

static char *render(const struct map *m, size_t width, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct xerr e = { "" };
	*rc = panic_report_print(m, f, width, false, NULL, &e);
	fclose(f);
	return text;
}

static void update(struct map *m, const char *loc, const char *msg, const struct stack *s, int times)
{
	struct map_key k[3] = { { .type = MAP_KEY_STR, .s = loc }, { .type = MAP_KEY_STR, .s = msg },
				{ .type = MAP_KEY_STACK, .stack = s } };
	for (int i = 0; i < times; i++)
		map_update(m, k, 0, NULL);
}

int main(void)
{
	/* leaf first: the panic machinery, the user's code, thread start */
	struct frame parse_frames[] = {
		{ .pc = 1, .function = "std::panicking::begin_panic_handler", .file = RUST_LIB "std/src/panicking.rs", .line = 9 },
		{ .pc = 2, .function = "core::panicking::panic_fmt", .file = RUST_LIB "core/src/panicking.rs", .line = 80 },
		{ .pc = 3, .function = "app::parse_record", .file = "/src/app/parse.rs", .line = 21 },
		{ .pc = 4, .function = "app::main::{closure}", .file = "/src/app/main.rs", .line = 41 },
		{ .pc = 5, .function = "std::panicking::catch_unwind", .file = RUST_LIB "std/src/panicking.rs", .line = 544,
		  .inlined = true },
		{ .pc = 5, .function = "std::sys::backtrace::__rust_begin_short_backtrace",
		  .file = RUST_LIB "std/src/sys/backtrace.rs", .line = 166 },
		{ .pc = 6, .function = "start_thread", .file = "./nptl/pthread_create.c", .line = 442 },
		{ .pc = 7, .function = "main", .module = "/bin/app" },
	};
	struct stack parse = { sizeof parse_frames / sizeof *parse_frames, parse_frames };
	struct frame flush_frames[] = {
		{ .pc = 2, .function = "core::panicking::panic_fmt", .file = RUST_LIB "core/src/panicking.rs", .line = 80 },
		{ .pc = 8, .function = "app::flush\x1b[2J", .file = "/src/app/flush.rs", .line = 9 },
		{ .pc = 6, .function = "start_thread", .file = "./nptl/pthread_create.c", .line = 442 },
	};
	struct stack flush = { 3, flush_frames };
	struct stack flush_other = { 2, flush_frames + 1 };

	struct map *m = map_new("panics", MAP_AGG_COUNT, 3, 0, 0, 0, 0);
	update(m, "src/flush.rs:9:5", "batch \x1b]52;c;aGk=\x07 empty", &flush, 2);
	update(m, "src/flush.rs:9:5", "batch \x1b]52;c;aGk=\x07 empty", &flush_other, 1);
	update(m, "src/parse.rs:21:5", "bad record 0", &parse, 1);
	update(m, "src/parse.rs:21:5", "bad record 1", &parse, 2);
	update(m, "src/parse.rs:21:5", "bad record 2", &parse, 1);
	update(m, "src/parse.rs:21:5", "bad record 3", &parse, 1);
	update(m, "src/parse.rs:21:5", "bad record 4", &parse, 1);

	int rc;
	char *text = render(m, 0, &rc);
	const char *want =
		"@panics: 9 panics at 2 locations, most frequent first\n"
		"#1  6 panics at src/parse.rs:21:5\n"
		"      2× bad record 1\n"
		"      1× bad record 0\n"
		"      1× bad record 2\n"
		"      … 2 other messages\n"
		"    stack, root first:\n"
		"      … 4 runtime frames\n"
		"      app::main::{closure} (/src/app/main.rs:41)\n"
		"      app::parse_record (/src/app/parse.rs:21)\n"
		"      … 2 runtime frames\n"
		"#2  3 panics at src/flush.rs:9:5\n"
		"      3× batch \\x1b]52;c;aGk=\\x07 empty\n"
		"    stack of 2 of them, root first (1 other stack):\n"
		"      … 1 runtime frame\n"
		"      app::flush\\x1b[2J (/src/app/flush.rs:9)\n"
		"      … 1 runtime frame\n";
	CHECK_MSG(rc == 0 && text && strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text ? text : "(null)", want);
	free(text);

	/* within 40 columns: every line fits, the location's end (file:line) stays */
	text = render(m, 40, &rc);
	CHECK(rc == 0 && text);
	for (char *line = text, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		CHECK_MSG(text_columns(line, (size_t)(nl - line)) <= 40, "wider than 40: %.*s", (int)(nl - line), line);
	}
	CHECK_MSG(text && strstr(text, "parse.rs:21)\n"), "the location keeps its end:\n%s", text);
	free(text);
	map_free(m);

	/* empty: as print() says it */
	m = map_new("panics", MAP_AGG_COUNT, 3, 0, 0, 0, 0);
	text = render(m, 0, &rc);
	CHECK(rc == 0 && text && strcmp(text, "@panics: (no events)\n") == 0);
	free(text);
	map_free(m);

	/* a stack first: nothing to group by */
	m = map_new("s", MAP_AGG_COUNT, 1, 0, 0, 0, 0);
	struct map_key k = { .type = MAP_KEY_STACK, .stack = &parse };
	map_update(m, &k, 0, NULL);
	text = render(m, 0, &rc);
	CHECK(rc < 0);
	free(text);
	map_free(m);
	/* Messages alike but for their end stay apart at 60 columns: each is
	 * written whole and the run's stream wraps it (the three rows used to
	 * read the same, the part that differs cut). Mutation seen failing:
	 * put_message_line cutting to the width. */
	m = map_new("panics", MAP_AGG_COUNT, 3, 0, 0, 0, 0);
	update(m, "src/main.rs:12:9", "validation rejected the request of customer 17: field customer_id is out of range for the account kind", &parse, 3);
	update(m, "src/main.rs:12:9", "validation rejected the request of customer 42: field customer_id is out of range for the account kind", &parse, 2);
	update(m, "src/main.rs:12:9", "validation rejected the request of customer 99: field customer_id is out of range for the account kind", &parse, 1);
	char *wrapped = NULL;
	size_t wrapped_len = 0;
	FILE *under = open_memstream(&wrapped, &wrapped_len);
	FILE *fitted = text_fit_stream(under, 60);
	struct xerr e2 = { "" };
	CHECK(panic_report_print(m, fitted, 60, false, NULL, &e2) == 0);
	fclose(fitted);
	fclose(under);
	CHECK_MSG(strstr(wrapped, "customer 17:") && strstr(wrapped, "customer 42:") && strstr(wrapped, "customer 99:"),
		  "a message's distinguishing end was cut:\n%s", wrapped);
	for (const char *line = wrapped; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t n = strchr(line, '\n') ? (size_t)(strchr(line, '\n') - line) : strlen(line);
		CHECK_MSG(text_columns(line, n) <= 60, "a line over 60 columns: %.*s", (int)n, line);
	}
	free(wrapped);
	map_free(m);
	return test_exit_code();
}
