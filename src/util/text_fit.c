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

/* Bytes of the word at s: up to the next space outside an escape sequence
 * (an OSC 8 link's URL and colours stay with their word). */
static size_t word_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] != ' ')
		i += s[i] == '\033' ? escape_len(s + i, n - i) : char_len(s + i, n - i);
	return i;
}

/* A line wider than the width is wrapped at spaces onto lines indented four
 * columns past its own indent, so that no figure is ever cut ("est. 14…+05/s"
 * was): only a single word wider than a whole line (a long name or path) is
 * shortened, in its middle. */
static void emit_wrapped(struct fit_stream *fs)
{
	const char *s = fs->line;
	size_t n = fs->len, i = 0, indent = 0;
	while (i < n && s[i] == ' ')
		i++, indent++;
	if (indent > fs->width / 2)
		indent = fs->width / 2;
	size_t cont = indent + 4 < fs->width / 2 ? indent + 4 : fs->width / 2;
	fprintf(fs->under, "%*s", (int)indent, "");
	size_t col = indent, line_start_col = indent;
	while (i < n) {
		size_t spaces = 0;
		while (i + spaces < n && s[i + spaces] == ' ')
			spaces++;
		if (i + spaces >= n)
			break;   /* trailing spaces: dropped */
		size_t w = word_len(s + i + spaces, n - i - spaces);
		size_t wcols = text_columns(s + i + spaces, w);
		if (col > line_start_col && col + spaces + wcols > fs->width) {
			fprintf(fs->under, "\n%*s", (int)cont, "");
			col = line_start_col = cont;
			i += spaces;
		} else {
			fprintf(fs->under, "%*s", (int)spaces, "");
			col += spaces;
			i += spaces;
		}
		col += text_put_fit(fs->under, s + i, w, fs->width - col, 50);
		i += w;
	}
}

static void emit_line(struct fit_stream *fs, bool newline)
{
	if (fs->width && text_columns(fs->line, fs->len) > fs->width)
		emit_wrapped(fs);
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
