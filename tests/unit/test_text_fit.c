/* test_text_fit.c — the fitting stream wraps wide lines at spaces and never
 * cuts a figure; only a word wider than a whole line is shortened.
 * Mutation seen failing: emit_line calling text_put_fit on the whole line
 * (the old middle cut) fails the figure and word checks below. */
#include "util/text_fit.h"
#include <stdlib.h>
#include <string.h>
#include "check.h"

/* What the stream of width writes for in. */
static char *fit(const char *in, size_t width)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *under = open_memstream(&buf, &size);
	FILE *f = text_fit_stream(under, width);
	fputs(in, f);
	fclose(f);
	fclose(under);
	return buf;
}

/* Every line of s at most width columns. */
static int widest(const char *s)
{
	size_t w = 0;
	for (const char *line = s; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		size_t cols = text_columns(line, n);
		w = cols > w ? cols : w;
		line += n + (end != NULL);
	}
	return (int)w;
}

int main(void)
{
	const char *row = "  @rate[alloc::raw_vec::finish_grow, my_service::cache::Cache::insert]: "
			  "est. at least 1.4e+05/s (95% 1.1e+05–1.9e+05)\n";
	char *out = fit(row, 60);
	CHECK_MSG(widest(out) <= 60, "widest %d in:\n%s", widest(out), out);
	CHECK_MSG(strstr(out, "1.4e+05/s") && strstr(out, "1.1e+05–1.9e+05)"), "a figure was cut:\n%s", out);
	CHECK_MSG(!strstr(out, "…"), "nothing needed shortening:\n%s", out);
	CHECK_MSG(strstr(out, "\n      "), "continuation lines indent 4 past the row's 2:\n%s", out);
	free(out);

	/* a line that fits is written as it is */
	out = fit("  short line   with  spaces\n", 60);
	CHECK(!strcmp(out, "  short line   with  spaces\n"));
	free(out);

	/* a single word wider than the line: shortened in its middle, its end kept */
	out = fit("at /home/user/.cargo/registry/src/index.crates.io-6f17d22bba15001f/sled-0.34.7/src/tree.rs:164 now\n", 40);
	CHECK_MSG(widest(out) <= 40, "widest %d in:\n%s", widest(out), out);
	CHECK_MSG(strstr(out, "…") && strstr(out, "tree.rs:164") && strstr(out, "now"), "%s", out);
	free(out);

	/* colours and links are zero-width and stay with their word */
	out = fit("\033[1mbold\033[0m \033]8;;file:///x/y.rs\033\\y.rs:12\033]8;;\033\\ and then some more words here\n", 20);
	CHECK_MSG(widest(out) <= 20, "widest %d in:\n%s", widest(out), out);
	CHECK(strstr(out, "\033]8;;file:///x/y.rs\033\\y.rs:12\033]8;;\033\\") != NULL);
	free(out);
	return test_exit_code();
}
