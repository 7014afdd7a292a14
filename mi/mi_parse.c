/* mi_parse.c — recursive-descent parser for one GDB/MI output line.
 *
 * Bounds: every read checks pos < len, so the input needs no terminator and
 * may contain NULs (which are rejected as malformed). Nesting is capped at
 * MI_PARSE_MAX_DEPTH so hostile input cannot exhaust the stack.
 */
#include "mi_record.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *s;
	size_t len;
	size_t pos;
	struct mi_error *err;
};

static int parser_fail(struct parser *p, size_t at, const char *what)
{
	if (at < p->len && p->s[at] == '\0')
		return mi_error_set(p->err, "column %zu: embedded NUL byte (%s)", at + 1, what);
	if (at >= p->len)
		return mi_error_set(p->err, "column %zu: line ends early: %s", at + 1, what);
	unsigned char c = (unsigned char)p->s[at];
	if (c >= 0x20 && c < 0x7f)
		return mi_error_set(p->err, "column %zu: %s, found '%c'", at + 1, what, c);
	return mi_error_set(p->err, "column %zu: %s, found byte 0x%02x", at + 1, what, c);
}

static bool parser_at(const struct parser *p, char c)
{
	return p->pos < p->len && p->s[p->pos] == c;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

static int octal_digit(char c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes one escape whose backslash is at s[*pos]; advances *pos past it.
 * Returns the byte (0..255) or -1 with the error filled. */
static int decode_escape(struct parser *p, size_t *pos)
{
	size_t at = *pos + 1;
	if (at >= p->len)
		return parser_fail(p, at, "unterminated escape in c-string");
	char c = p->s[at];
	*pos = at + 1;
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'e': return 033;
	case '\\': return '\\';
	case '"': return '"';
	case '\'': return '\'';
	case '?': return '?';
	case 'x': {
		int value = 0, digits = 0;
		while (digits < 2 && *pos < p->len && hex_digit(p->s[*pos]) >= 0) {
			value = value * 16 + hex_digit(p->s[*pos]);
			(*pos)++;
			digits++;
		}
		if (!digits)
			return parser_fail(p, *pos, "expected hex digits after \\x");
		return value;
	}
	default:
		if (octal_digit(c) >= 0) {
			int value = octal_digit(c), digits = 1;
			while (digits < 3 && *pos < p->len && octal_digit(p->s[*pos]) >= 0) {
				value = value * 8 + octal_digit(p->s[*pos]);
				(*pos)++;
				digits++;
			}
			if (value > 0xff)
				return parser_fail(p, at, "octal escape above \\377");
			return value;
		}
		return parser_fail(p, at, "unknown escape in c-string");
	}
}

/* Parses the c-string at p->pos (which holds '"'). Two passes: find the
 * closing quote first so the output is sized by the string, not the line. */
static int parse_cstring(struct parser *p, char **text, size_t *text_len)
{
	size_t start = p->pos + 1, end = start;
	for (;;) {
		if (end >= p->len)
			return parser_fail(p, end, "unterminated c-string");
		char c = p->s[end];
		if (c == '"')
			break;
		if (c == '\0')
			return parser_fail(p, end, "c-string");
		end += c == '\\' ? 2 : 1;
	}
	char *out = malloc(end - start + 1);
	if (!out)
		return mi_error_set(p->err, "out of memory decoding a %zu-byte c-string", end - start);
	size_t n = 0, pos = start;
	while (pos < end) {
		if (p->s[pos] == '\\') {
			int byte = decode_escape(p, &pos);
			if (byte < 0) {
				free(out);
				return -1;
			}
			out[n++] = (char)byte;
		} else {
			out[n++] = p->s[pos++];
		}
	}
	out[n] = '\0';
	p->pos = end + 1;
	*text = out;
	*text_len = n;
	return 0;
}

int mi_parse_cstring(const char *s, size_t len, char **text, size_t *text_len,
		     size_t *consumed, struct mi_error *err)
{
	struct parser p = {s, len, 0, err};
	if (!parser_at(&p, '"'))
		return parser_fail(&p, 0, "expected '\"' opening a c-string");
	if (parse_cstring(&p, text, text_len) < 0)
		return -1;
	*consumed = p.pos;
	return 0;
}

static struct mi_value *parse_value(struct parser *p, int depth);

/* name=value, appended to parent. */
static int parse_result(struct parser *p, struct mi_value *parent, int depth)
{
	size_t name_start = p->pos;
	while (p->pos < p->len && is_name_char(p->s[p->pos]))
		p->pos++;
	if (p->pos == name_start)
		return parser_fail(p, p->pos, "expected a result name");
	size_t name_len = p->pos - name_start;
	if (!parser_at(p, '='))
		return parser_fail(p, p->pos, "expected '=' after result name");
	p->pos++;
	struct mi_value *value = parse_value(p, depth);
	if (!value)
		return -1;
	if (mi_value_append(parent, p->s + name_start, name_len, value) < 0)
		return mi_error_set(p->err, "out of memory");
	return 0;
}

/* '{' or '[' at p->pos. Tuples hold results; lists hold values or results. */
static struct mi_value *parse_container(struct parser *p, int depth)
{
	bool tuple = p->s[p->pos] == '{';
	char close = tuple ? '}' : ']';
	if (depth >= MI_PARSE_MAX_DEPTH) {
		mi_error_set(p->err, "column %zu: nesting deeper than %d levels", p->pos + 1,
			     MI_PARSE_MAX_DEPTH);
		return NULL;
	}
	struct mi_value *v = tuple ? mi_value_new_tuple() : mi_value_new_list();
	if (!v) {
		mi_error_set(p->err, "out of memory");
		return NULL;
	}
	p->pos++;
	if (parser_at(p, close)) {
		p->pos++;
		return v;
	}
	for (;;) {
		if (p->pos >= p->len) {
			parser_fail(p, p->pos, tuple ? "unterminated tuple, expected '}'"
						     : "unterminated list, expected ']'");
			goto fail;
		}
		char c = p->s[p->pos];
		if (!tuple && (c == '"' || c == '{' || c == '[')) {
			struct mi_value *item = parse_value(p, depth + 1);
			if (!item)
				goto fail;
			if (mi_value_append(v, NULL, 0, item) < 0) {
				mi_error_set(p->err, "out of memory");
				goto fail;
			}
		} else if (parse_result(p, v, depth + 1) < 0) {
			goto fail;
		}
		if (parser_at(p, ',')) {
			p->pos++;
			continue;
		}
		if (parser_at(p, close)) {
			p->pos++;
			return v;
		}
		if (p->pos >= p->len)
			continue; /* reported as unterminated at the top of the loop */
		parser_fail(p, p->pos, tuple ? "expected ',' or '}' in tuple"
					     : "expected ',' or ']' in list");
		goto fail;
	}
fail:
	mi_value_free(v);
	return NULL;
}

static struct mi_value *parse_value(struct parser *p, int depth)
{
	if (parser_at(p, '"')) {
		char *text;
		size_t text_len;
		if (parse_cstring(p, &text, &text_len) < 0)
			return NULL;
		struct mi_value *v = mi_value_new_string(text, text_len);
		free(text);
		if (!v)
			mi_error_set(p->err, "out of memory");
		return v;
	}
	if (parser_at(p, '{') || parser_at(p, '['))
		return parse_container(p, depth);
	parser_fail(p, p->pos, "expected a value ('\"', '{' or '[')");
	return NULL;
}

static enum mi_record_kind kind_of_marker(char c, bool *ok)
{
	*ok = true;
	switch (c) {
	case '^': return MI_RECORD_RESULT;
	case '*': return MI_RECORD_EXEC;
	case '+': return MI_RECORD_STATUS;
	case '=': return MI_RECORD_NOTIFY;
	case '~': return MI_RECORD_CONSOLE;
	case '@': return MI_RECORD_TARGET;
	case '&': return MI_RECORD_LOG;
	default: *ok = false; return MI_RECORD_PROMPT;
	}
}

static int parse_record(struct parser *p, struct mi_record *r)
{
	static const char prompt[] = "(gdb)";
	if (p->len >= sizeof prompt - 1 && memcmp(p->s, prompt, sizeof prompt - 1) == 0) {
		r->kind = MI_RECORD_PROMPT;
		for (p->pos = sizeof prompt - 1; p->pos < p->len; p->pos++)
			if (p->s[p->pos] != ' ' && p->s[p->pos] != '\t')
				return parser_fail(p, p->pos, "unexpected text after the (gdb) prompt");
		return 0;
	}
	if (p->len == 0)
		return mi_error_set(p->err, "column 1: empty line");

	size_t token_start = p->pos;
	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
		p->pos++;
	if (p->pos > token_start) {
		if (p->pos - token_start > 18)
			return parser_fail(p, token_start, "token has more than 18 digits");
		long long token = 0;
		for (size_t i = token_start; i < p->pos; i++)
			token = token * 10 + (p->s[i] - '0');
		r->token = token;
	}

	bool ok;
	if (p->pos >= p->len)
		return parser_fail(p, p->pos, "expected a record marker (^ * + = ~ @ &)");
	r->kind = kind_of_marker(p->s[p->pos], &ok);
	if (!ok)
		return parser_fail(p, p->pos, "expected a record marker (^ * + = ~ @ &)");
	p->pos++;

	if (r->kind == MI_RECORD_CONSOLE || r->kind == MI_RECORD_TARGET || r->kind == MI_RECORD_LOG) {
		if (r->token >= 0)
			return parser_fail(p, token_start, "stream records carry no token");
		if (!parser_at(p, '"'))
			return parser_fail(p, p->pos, "expected '\"' opening the stream text");
		if (parse_cstring(p, &r->text, &r->text_len) < 0)
			return -1;
		if (p->pos != p->len)
			return parser_fail(p, p->pos, "trailing text after the stream record");
		return 0;
	}

	size_t class_start = p->pos;
	while (p->pos < p->len && is_name_char(p->s[p->pos]))
		p->pos++;
	if (p->pos == class_start)
		return parser_fail(p, p->pos, "expected a record class (done, stopped, ...)");
	r->klass = strndup(p->s + class_start, p->pos - class_start);
	r->results = mi_value_new_tuple();
	if (!r->klass || !r->results)
		return mi_error_set(p->err, "out of memory");
	while (p->pos < p->len) {
		if (p->s[p->pos] != ',')
			return parser_fail(p, p->pos, "expected ',' before the next result");
		p->pos++;
		if (parse_result(p, r->results, 1) < 0)
			return -1;
	}
	return 0;
}

int mi_parse_line(const char *line, size_t len, struct mi_record **out, struct mi_error *err)
{
	*out = NULL;
	if (!line && len)
		return mi_error_set(err, "column 1: no input");
	if (len && line[len - 1] == '\r')
		len--;
	struct mi_record *r = calloc(1, sizeof *r);
	if (!r)
		return mi_error_set(err, "out of memory");
	r->token = -1;
	struct parser p = {line, len, 0, err};
	if (parse_record(&p, r) < 0) {
		mi_record_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void mi_record_free(struct mi_record *r)
{
	if (!r)
		return;
	free(r->klass);
	mi_value_free(r->results);
	free(r->text);
	free(r->console);
	free(r);
}

