/* text_fit.c — measuring and shortening terminal lines (text_fit.h). */
#include "util/text_fit.h"
#include "util/array.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Length of the escape sequence at s[0] == ESC (at most n bytes). */
static size_t escape_len(const char *s, size_t n)
{
	if (n < 2)
		return n;
	size_t i = 2;
	if (s[1] == '[') {   /* CSI: parameters, then a final byte 0x40..0x7e */
		while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
			i++;
		return i < n ? i + 1 : n;
	}
	if (s[1] == ']') {   /* OSC: up to BEL or ST (ESC \) */
		for (; i < n; i++) {
			if (s[i] == '\a')
				return i + 1;
			if (s[i] == '\033' && i + 1 < n && s[i + 1] == '\\')
				return i + 2;
		}
		return n;
	}
	return 2;
}

/* Length of the character at s: a whole UTF-8 sequence. */
static size_t char_len(const char *s, size_t n)
{
	size_t k = 1;
	while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80)
		k++;
	return k;
}

size_t text_columns(const char *s, size_t n)
{
	size_t cols = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] == '\033') {
			i += escape_len(s + i, n - i);
			continue;
		}
		i += char_len(s + i, n - i);
		cols++;
	}
	return cols;
}

size_t text_put_fit(FILE *out, const char *s, size_t n, size_t cols, unsigned head_percent)
{
	size_t total = text_columns(s, n);
	if (total <= cols || cols == 0) {
		fwrite(s, 1, n, out);
		return total;
	}
	size_t kept = cols - 1;   /* one for "…" */
	size_t head = kept * (head_percent > 100 ? 100 : head_percent) / 100;
	size_t tail_from = total - (kept - head);
	size_t col = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] == '\033') {
			size_t k = escape_len(s + i, n - i);
			fwrite(s + i, 1, k, out);
			i += k;
			continue;
		}
		size_t k = char_len(s + i, n - i);
		if (col == head)
			fputs("…", out);
		if (col < head || col >= tail_from)
			fwrite(s + i, 1, k, out);
		i += k;
		col++;
	}
	return cols;
}

size_t text_terminal_width(int fd)
{
	const char *env = getenv("COLUMNS");
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);
		if (!*end && v >= 20 && v <= 10000)
			return v;
	}
	struct winsize ws;
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 100;
}

/* ---- the fitting stream ------------------------------------------------- */

struct fit_stream {
	FILE *under;
	size_t width;
	char *line;
	size_t len, cap;
};

static void emit_line(struct fit_stream *fs, bool newline)
{
	if (fs->width)
		text_put_fit(fs->under, fs->line, fs->len, fs->width, 50);
	else
		fwrite(fs->line, 1, fs->len, fs->under);
	if (newline)
		fputc('\n', fs->under);
	fs->len = 0;
}

static ssize_t fit_write(void *cookie, const char *buf, size_t size)
{
	struct fit_stream *fs = cookie;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n') {
			emit_line(fs, true);
			continue;
		}
		char *line = array_grow(fs->line, &fs->cap, fs->len + 1, 1);
		if (!line)
			return i ? (ssize_t)i : -1;
		fs->line = line;
		fs->line[fs->len++] = buf[i];
	}
	fflush(fs->under);
	return (ssize_t)size;
}

static int fit_close(void *cookie)
{
	struct fit_stream *fs = cookie;
	if (fs->len)
		emit_line(fs, false);
	int rc = fflush(fs->under);
	free(fs->line);
	free(fs);
	return rc;
}

FILE *text_fit_stream(FILE *under, size_t width)
{
	struct fit_stream *fs = calloc(1, sizeof *fs);
	if (!fs)
		return NULL;
	fs->under = under;
	fs->width = width;
	cookie_io_functions_t io = { .write = fit_write, .close = fit_close };
	FILE *f = fopencookie(fs, "w", io);
	if (!f) {
		free(fs);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}
