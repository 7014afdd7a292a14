/* mi_value.c — the parsed MI value tree. */
#include "mi_value.h"
#include "mi_error.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mi_element {
	char *name;             /* NULL for plain list items */
	struct mi_value *value;
};

struct mi_value {
	enum mi_value_kind kind;
	char *text;             /* STRING: NUL-terminated, may hold NULs */
	size_t text_len;
	struct mi_element *elements;  /* TUPLE/LIST */
	size_t count, capacity;
};

int mi_error_set(struct mi_error *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return -1;
}

enum mi_value_kind mi_value_kind(const struct mi_value *v)
{
	return v->kind;
}

const char *mi_value_string(const struct mi_value *v)
{
	return v && v->kind == MI_VALUE_STRING ? v->text : NULL;
}

size_t mi_value_string_len(const struct mi_value *v)
{
	return v && v->kind == MI_VALUE_STRING ? v->text_len : 0;
}

const struct mi_value *mi_value_get(const struct mi_value *tuple, const char *name)
{
	if (!tuple || tuple->kind == MI_VALUE_STRING || !name)
		return NULL;
	for (size_t i = 0; i < tuple->count; i++) {
		const struct mi_element *e = &tuple->elements[i];
		if (e->name && strcmp(e->name, name) == 0)
			return e->value;
	}
	return NULL;
}

const char *mi_value_get_string(const struct mi_value *tuple, const char *name)
{
	return mi_value_string(mi_value_get(tuple, name));
}

int mi_value_to_int(const struct mi_value *v, long long *out)
{
	const char *s = mi_value_string(v);
	if (!s || v->text_len != strlen(s) || !*s)
		return -1;
	const char *p = s;
	int negative = 0;
	if (*p == '-' || *p == '+')
		negative = *p++ == '-';
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	/* strtoull accepts leading blanks and its own sign; we do not. */
	if (!(base == 16 ? ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			    (*p >= 'A' && *p <= 'F'))
			 : (*p >= '0' && *p <= '9')))
		return -1;
	errno = 0;
	char *end;
	unsigned long long magnitude = strtoull(p, &end, base);
	if (errno || *end)
		return -1;
	long long value;
	if (negative) {
		if (magnitude > (unsigned long long)LLONG_MAX + 1)
			return -1;
		value = magnitude == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN
								       : -(long long)magnitude;
	} else if (base == 16) {
		/* Addresses above 2^63 are common in hex; keep their bits. */
		value = (long long)magnitude;
	} else {
		if (magnitude > (unsigned long long)LLONG_MAX)
			return -1;
		value = (long long)magnitude;
	}
	*out = value;
	return 0;
}

int mi_value_get_int(const struct mi_value *tuple, const char *name, long long *out)
{
	return mi_value_to_int(mi_value_get(tuple, name), out);
}

size_t mi_value_count(const struct mi_value *v)
{
	return v && v->kind != MI_VALUE_STRING ? v->count : 0;
}

const struct mi_value *mi_value_at(const struct mi_value *v, size_t i)
{
	return i < mi_value_count(v) ? v->elements[i].value : NULL;
}

const char *mi_value_name_at(const struct mi_value *v, size_t i)
{
	return i < mi_value_count(v) ? v->elements[i].name : NULL;
}

static struct mi_value *value_new(enum mi_value_kind kind)
{
	struct mi_value *v = calloc(1, sizeof *v);
	if (v)
		v->kind = kind;
	return v;
}

struct mi_value *mi_value_new_string(const char *text, size_t len)
{
	struct mi_value *v = value_new(MI_VALUE_STRING);
	if (!v)
		return NULL;
	v->text = malloc(len + 1);
	if (!v->text) {
		free(v);
		return NULL;
	}
	if (len)
		memcpy(v->text, text, len);
	v->text[len] = '\0';
	v->text_len = len;
	return v;
}

struct mi_value *mi_value_new_tuple(void)
{
	return value_new(MI_VALUE_TUPLE);
}

struct mi_value *mi_value_new_list(void)
{
	return value_new(MI_VALUE_LIST);
}

int mi_value_append(struct mi_value *parent, const char *name, size_t name_len,
		    struct mi_value *child)
{
	char *name_copy = NULL;
	if (!parent || parent->kind == MI_VALUE_STRING)
		goto fail;
	if (name) {
		name_copy = strndup(name, name_len);
		if (!name_copy)
			goto fail;
	}
	if (parent->count == parent->capacity) {
		size_t capacity = parent->capacity ? parent->capacity * 2 : 4;
		struct mi_element *grown = realloc(parent->elements, capacity * sizeof *grown);
		if (!grown)
			goto fail;
		parent->elements = grown;
		parent->capacity = capacity;
	}
	parent->elements[parent->count].name = name_copy;
	parent->elements[parent->count].value = child;
	parent->count++;
	return 0;
fail:
	free(name_copy);
	mi_value_free(child);
	return -1;
}

void mi_value_free(struct mi_value *v)
{
	if (!v)
		return;
	free(v->text);
	for (size_t i = 0; i < v->count; i++) {
		free(v->elements[i].name);
		mi_value_free(v->elements[i].value);
	}
	free(v->elements);
	free(v);
}

/* A growable output string for mi_value_format. */
struct text_buffer {
	char *data;
	size_t len, capacity;
	int failed;
};

static void buffer_put(struct text_buffer *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->capacity) {
		size_t capacity = b->capacity ? b->capacity : 64;
		while (capacity < b->len + n + 1)
			capacity *= 2;
		char *grown = realloc(b->data, capacity);
		if (!grown) {
			b->failed = 1;
			return;
		}
		b->data = grown;
		b->capacity = capacity;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buffer_put_cstring(struct text_buffer *b, const char *s, size_t n)
{
	buffer_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char escaped[8];
		switch (c) {
		case '"': buffer_put(b, "\\\"", 2); break;
		case '\\': buffer_put(b, "\\\\", 2); break;
		case '\n': buffer_put(b, "\\n", 2); break;
		case '\t': buffer_put(b, "\\t", 2); break;
		case '\r': buffer_put(b, "\\r", 2); break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				snprintf(escaped, sizeof escaped, "\\%03o", c);
				buffer_put(b, escaped, 4);
			} else {
				buffer_put(b, (const char *)&c, 1);
			}
		}
	}
	buffer_put(b, "\"", 1);
}

/* Depth is bounded by the parser's nesting limit, so recursion is safe here. */
static void buffer_put_value(struct text_buffer *b, const struct mi_value *v)
{
	if (v->kind == MI_VALUE_STRING) {
		buffer_put_cstring(b, v->text, v->text_len);
		return;
	}
	buffer_put(b, v->kind == MI_VALUE_TUPLE ? "{" : "[", 1);
	for (size_t i = 0; i < v->count; i++) {
		if (i)
			buffer_put(b, ",", 1);
		if (v->elements[i].name) {
			buffer_put(b, v->elements[i].name, strlen(v->elements[i].name));
			buffer_put(b, "=", 1);
		}
		buffer_put_value(b, v->elements[i].value);
	}
	buffer_put(b, v->kind == MI_VALUE_TUPLE ? "}" : "]", 1);
}

char *mi_value_format(const struct mi_value *v)
{
	struct text_buffer b = {0};
	buffer_put(&b, "", 0);
	if (v)
		buffer_put_value(&b, v);
	if (b.failed) {
		free(b.data);
		return NULL;
	}
	return b.data;
}
