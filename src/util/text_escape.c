/* text_escape.c — target text made safe for terminals, files, XML and JSON
 * (contract in text_escape.h). */
#include "util/text_escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where escaped text goes: a stream, or a buffer that is filled only with
 * whole units so a cut never leaves half an escape or half a character. */
struct sink {
	FILE *file;
	char *buf;
	size_t size;
	size_t stored;  /* bytes in buf */
	size_t len;     /* bytes the whole result needs */
	bool cut;       /* buf is full: count, store nothing more */
};

static void emit(struct sink *k, const char *p, size_t n)
{
	if (k->file)
		fwrite(p, 1, n, k->file);
	else if (!k->cut && k->stored + n < k->size) {
		memcpy(k->buf + k->stored, p, n);
		k->stored += n;
	} else
		k->cut = true;
	k->len += n;
}

static void emit_str(struct sink *k, const char *s)
{
	emit(k, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (1..4) and its code point, or 0
 * if s does not start one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t n;
	uint32_t min;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2, min = 0x80, *cp = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3, min = 0x800, *cp = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4, min = 0x10000, *cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3F);
	}
	if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
		return 0;
	return n;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

static void emit_bytes_hex(struct sink *k, const unsigned char *p, size_t n, const char *prefix)
{
	char hex[8];
	for (size_t i = 0; i < n; i++) {
		snprintf(hex, sizeof hex, "%sx%02x", prefix, p[i]);
		emit_str(k, hex);
	}
}

/* One writer for every form; document = JSON text from a library, where
 * only bytes >= 0x7f need attention (see text_put_json_document). */
static void escape(struct sink *k, const char *s, enum text_form form, bool document)
{
	const unsigned char *c = (const unsigned char *)(s ? s : "");
	bool json = form == TEXT_FORM_JSON;
	while (*c) {
		uint32_t cp;
		size_t n = utf8_decode(c, &cp);
		if (n == 0) {
			/* JSON: the text \xNN, its backslash escaped */
			emit_bytes_hex(k, c, 1, json ? "\\\\" : "\\");
			c++;
			continue;
		}
		if (document && cp < 0x7F) {
			emit(k, (const char *)c, 1);
			c++;
			continue;
		}
		if (is_control(cp)) {
			if (json) {
				char u[8];
				const char *named = cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : cp == '\r' ? "\\r" : NULL;
				if (!named)
					snprintf(u, sizeof u, "\\u%04x", (unsigned)cp);
				emit_str(k, named ? named : u);
			} else {
				emit_bytes_hex(k, c, n, "\\");
			}
			c += n;
			continue;
		}
		const char *entity = NULL;
		if (form == TEXT_FORM_XML)
			entity = cp == '&' ? "&amp;" : cp == '<' ? "&lt;" : cp == '>' ? "&gt;"
			       : cp == '"' ? "&quot;" : cp == '\'' ? "&apos;" : NULL;
		else if (json)
			entity = cp == '"' ? "\\\"" : cp == '\\' ? "\\\\" : NULL;
		if (entity)
			emit_str(k, entity);
		else
			emit(k, (const char *)c, n);
		c += n;
	}
}

void text_put(FILE *out, const char *s, enum text_form form)
{
	struct sink k = { .file = out };
	escape(&k, s, form, false);
}

size_t text_escape(char *buf, size_t size, const char *s)
{
	struct sink k = { .buf = buf, .size = size };
	escape(&k, s, TEXT_FORM_TERMINAL, false);
	if (size > 0)
		buf[k.stored] = '\0';
	return k.len;
}

char *text_escape_dup(const char *s)
{
	size_t need = text_escape(NULL, 0, s);
	char *copy = malloc(need + 1);
	if (copy)
		text_escape(copy, need + 1, s);
	return copy;
}

void text_put_json_document(FILE *out, const char *json)
{
	struct sink k = { .file = out };
	escape(&k, json, TEXT_FORM_JSON, true);
}
