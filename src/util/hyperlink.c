/* hyperlink.c — OSC 8 links to local source files (see hyperlink.h). */
#include "util/hyperlink.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OSC8_START "\033]8;;"
#define OSC8_END "\033\\"

/* RFC 3986 unreserved characters and '/' stay; every other byte is %XX. */
static bool keep_in_path(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

struct url_buf {
	char *p;
	size_t used, size;
	bool full;
};

static void add_char(struct url_buf *b, char c)
{
	if (b->used + 1 >= b->size) {
		b->full = true;
		return;
	}
	b->p[b->used++] = c;
	b->p[b->used] = '\0';
}

static void add_encoded(struct url_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (keep_in_path(*c)) {
			add_char(b, (char)*c);
		} else {
			add_char(b, '%');
			add_char(b, hex[*c >> 4]);
			add_char(b, hex[*c & 15]);
		}
	}
}

static const struct {
	const char *name, *format;
} presets[] = {
	{"vscode", "vscode://file{path}:{line}:{col}"},
	{"idea", "idea://open?file={path}&line={line}"},
	{"kitty", "file://{host}{path}#{line}"},
	{"file", "file://{host}{path}"},
};

static char chosen_format[1024];

int hyperlink_set_format(const char *name_or_template)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(name_or_template, presets[i].name)) {
			snprintf(chosen_format, sizeof chosen_format, "%s", presets[i].format);
			return 0;
		}
	if (!strstr(name_or_template, "{path}") || strlen(name_or_template) >= sizeof chosen_format)
		return -1;
	snprintf(chosen_format, sizeof chosen_format, "%s", name_or_template);
	return 0;
}

static const char *link_format(void)
{
	if (chosen_format[0])
		return chosen_format;
	const char *env = getenv("XGDBPROF_EDITOR_URL");
	if (env && *env)
		return env;
	env = getenv("XGDBPROF_HYPERLINK_FORMAT");
	if (env && *env)
		return env;
	return "file://{host}{path}";
}

/* This machine's name for {host}, "" when it has none. */
static void local_host(char *host, size_t size)
{
	if (gethostname(host, size) != 0)
		host[0] = '\0';
	host[size - 1] = '\0';
}

bool hyperlink_url(const char *path, int line, char *out, size_t size)
{
	if (!path || path[0] != '/' || size == 0)
		return false;
	struct url_buf b = { out, 0, size, false };
	out[0] = '\0';
	char host[256];
	local_host(host, sizeof host);
	const char *format = link_format();
	for (const char *f = format; *f; f++) {
		if (!strncmp(f, "{host}", 6)) {
			add_encoded(&b, host);
			f += 5;
		} else if (!strncmp(f, "{path}", 6)) {
			add_encoded(&b, path);
			f += 5;
		} else if (!strncmp(f, "{line}", 6)) {
			char digits[16];
			snprintf(digits, sizeof digits, "%d", line > 0 ? line : 1);
			add_encoded(&b, digits);
			f += 5;
		} else if (!strncmp(f, "{col}", 5)) {
			add_char(&b, '1');
			f += 4;
		} else if ((unsigned char)*f >= 0x20 && (unsigned char)*f < 0x7f) {
			add_char(&b, *f);
		}
	}
	return !b.full;
}

bool hyperlink_editor_template(char *out, size_t size)
{
	const char *format = link_format();
	if (!strcmp(format, "file://{host}{path}") || size == 0)
		return false;
	struct url_buf b = { out, 0, size, false };
	out[0] = '\0';
	char host[256];
	local_host(host, sizeof host);
	for (const char *f = format; *f; f++) {
		if (!strncmp(f, "{host}", 6)) {
			add_encoded(&b, host);
			f += 5;
		} else if ((unsigned char)*f >= 0x20 && (unsigned char)*f < 0x7f) {
			add_char(&b, *f);
		}
	}
	return !b.full;
}

bool hyperlink_open(FILE *out, const char *path, int line)
{
	char url[8192];
	/* The canonical name: no "/../" for an editor to trip on, and a file
	 * that is not here gets no link that would open nothing. */
	char *real = path && path[0] == '/' ? realpath(path, NULL) : NULL;
	bool ok = real && hyperlink_url(real, line, url, sizeof url);
	free(real);
	if (!ok)
		return false;
	fputs(OSC8_START, out);
	fputs(url, out);
	fputs(OSC8_END, out);
	return true;
}

void hyperlink_close(FILE *out)
{
	fputs(OSC8_START OSC8_END, out);
}
