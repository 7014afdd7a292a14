/* demangle.c — Rust legacy + v0 demangling, byte-compatible with
 * rustc-demangle, plus routing to the C++ demangler and a text filter.
 *
 * The v0 printer follows rustc-demangle's structure on purpose: one pass that
 * parses and prints at once, where a parse error prints `{invalid syntax}`
 * (or `{recursion limit reached}`) in place and every later parse prints `?`,
 * while the surrounding syntax (closing `>`, `]`, ...) still prints. Matching
 * that recovery behaviour is what makes the output byte-identical even for
 * damaged symbols; a tidier design would print something else.
 */
#include "config.h"
#include "symbols/demangle.h"
#include "symbols/rust_demangle_unicode.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* ---------------------------------------------------------------- output */

/* A bounded writer. `len` keeps counting past `cap` so the caller learns the
 * size it needs; `budget` is rustc-demangle's SizeLimitedFmtAdapter, which
 * refuses (whole) writes once 1,000,000 bytes would be exceeded. */
struct dm_out {
	char *buf;
	size_t cap;
	size_t len;
	size_t budget;
	bool size_limit_hit;
};

static void dm_out_raw(struct dm_out *w, const char *s, size_t n)
{
	if (w->len < w->cap) {
		size_t room = w->cap - w->len;
		memcpy(w->buf + w->len, s, n < room ? n : room);
	}
	w->len += n;
}

/* Returns 0, or -1 once the size budget is exhausted (a fmt::Error). */
static int dm_out_put(struct dm_out *w, const char *s, size_t n)
{
	if (n > w->budget) {
		w->size_limit_hit = true;
		return -1;
	}
	w->budget -= n;
	dm_out_raw(w, s, n);
	return 0;
}

/* Inlined so that strlen of a literal folds to a constant. */
static inline __attribute__((always_inline)) int dm_out_str(struct dm_out *w, const char *s)
{
	return dm_out_put(w, s, strlen(s));
}

static size_t utf8_encode(uint32_t c, char out[4])
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static int dm_out_char(struct dm_out *w, uint32_t c)
{
	char b[4];
	return dm_out_put(w, b, utf8_encode(c, b));
}

static int dm_out_u64(struct dm_out *w, uint64_t v, unsigned base)
{
	char b[24];
	size_t i = sizeof b;
	do {
		b[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return dm_out_put(w, b + i, sizeof b - i);
}

/* Rust's char::from_u32: a Unicode scalar value. */
static bool is_scalar_value(uint64_t c)
{
	return c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff);
}

/* ---------------------------------------------------------------- legacy */

struct legacy_sym {
	const char *inner; /* after the _ZN prefix */
	size_t elements;
	const char *suffix; /* after the closing E */
	size_t suffix_len;
};

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_hex_any_case(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && memcmp(s, prefix, n) == 0;
}

/* legacy::demangle: validates `_ZN (<len><ident>)* E`, returns -1 if not. */
static int legacy_parse(const char *s, size_t len, struct legacy_sym *out)
{
	size_t skip;
	if (starts_with(s, len, "_ZN"))
		skip = 3;
	else if (starts_with(s, len, "ZN"))
		skip = 2;
	else if (starts_with(s, len, "__ZN"))
		skip = 4;
	else
		return -1;
	const char *inner = s + skip, *end = s + len;
	for (const char *p = inner; p < end; p++)
		if ((unsigned char)*p & 0x80)
			return -1;

	size_t elements = 0;
	const char *p = inner;
	if (p == end)
		return -1;
	char c = *p++;
	while (c != 'E') {
		if (!is_digit(c))
			return -1;
		size_t n = 0;
		while (is_digit(c)) {
			if (__builtin_mul_overflow(n, 10, &n) ||
			    __builtin_add_overflow(n, (size_t)(c - '0'), &n))
				return -1;
			if (p == end)
				return -1;
			c = *p++;
		}
		/* c is the identifier's first character; the next n characters
		 * (the rest of it, then the one after) follow. */
		if (n > (size_t)(end - p))
			return -1;
		if (n > 0) {
			c = p[n - 1];
			p += n;
		}
		elements++;
	}
	out->inner = inner;
	out->elements = elements;
	out->suffix = p;
	out->suffix_len = (size_t)(end - p);
	return 0;
}

static bool legacy_is_rust_hash(const char *s, size_t n)
{
	if (n == 0 || s[0] != 'h')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_hex_any_case(s[i]))
			return false;
	return true;
}

/* Reads the length prefix of the element at *pp and advances past it. */
static size_t legacy_element(const char **pp, const char **ident)
{
	const char *p = *pp;
	size_t n = 0;
	while (is_digit(*p))
		n = n * 10 + (size_t)(*p++ - '0');
	*ident = p;
	*pp = p + n;
	return n;
}

/* Decodes a `$u<hex>$` escape body (without the u); 0 if not a printable
 * scalar. Lowercase hex only, like rustc-demangle. */
static uint32_t legacy_unicode_escape(const char *d, size_t n)
{
	if (n == 0)
		return 0;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		unsigned dv;
		if (is_digit(c))
			dv = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			dv = (unsigned)(c - 'a' + 10);
		else
			return 0;
		v = v * 16 + dv;
		if (v > 0xffffffffu)
			return 0;
	}
	if (!is_scalar_value(v))
		return 0;
	/* char::is_control: general category Cc. */
	if (v < 0x20 || (v >= 0x7f && v < 0xa0))
		return 0;
	return (uint32_t)v;
}

static int legacy_print(const struct legacy_sym *sym, bool alternate, struct dm_out *w)
{
	const char *cursor = sym->inner;
	for (size_t element = 0; element < sym->elements; element++) {
		const char *rest;
		size_t n = legacy_element(&cursor, &rest);
		const char *end = rest + n;
		if (alternate && element + 1 == sym->elements && legacy_is_rust_hash(rest, n))
			break;
		if (element != 0 && dm_out_put(w, "::", 2))
			return -1;
		if (end - rest >= 2 && rest[0] == '_' && rest[1] == '$')
			rest++;
		for (;;) {
			if (rest < end && *rest == '.') {
				if (rest + 1 < end && rest[1] == '.') {
					if (dm_out_put(w, "::", 2))
						return -1;
					rest += 2;
				} else {
					if (dm_out_put(w, ".", 1))
						return -1;
					rest += 1;
				}
			} else if (rest < end && *rest == '$') {
				const char *close = memchr(rest + 1, '$', (size_t)(end - rest - 1));
				if (!close)
					break;
				const char *esc = rest + 1;
				size_t elen = (size_t)(close - esc);
				const char *unescaped = NULL;
				static const struct { const char *esc, *out; } table[] = {
					{"SP", "@"}, {"BP", "*"}, {"RF", "&"}, {"LT", "<"},
					{"GT", ">"}, {"LP", "("}, {"RP", ")"}, {"C", ","},
				};
				for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
					if (strlen(table[i].esc) == elen && memcmp(table[i].esc, esc, elen) == 0)
						unescaped = table[i].out;
				if (unescaped) {
					if (dm_out_str(w, unescaped))
						return -1;
				} else {
					uint32_t c = 0;
					if (elen >= 1 && esc[0] == 'u')
						c = legacy_unicode_escape(esc + 1, elen - 1);
					if (!c)
						break;
					if (dm_out_char(w, c))
						return -1;
				}
				rest = close + 1;
			} else {
				const char *stop = rest;
				while (stop < end && *stop != '$' && *stop != '.')
					stop++;
				if (stop == end)
					break;
				if (dm_out_put(w, rest, (size_t)(stop - rest)))
					return -1;
				rest = stop;
			}
		}
		if (dm_out_put(w, rest, (size_t)(end - rest)))
			return -1;
	}
	return 0;
}

/* -------------------------------------------------------------------- v0 */

#define V0_MAX_DEPTH 500

enum v0_err { V0_OK = 0, V0_INVALID, V0_RECURSED };

struct v0_parser {
	const char *sym;
	size_t len;
	size_t next;
	uint32_t depth;
};

static int v0_push_depth(struct v0_parser *p)
{
	p->depth++;
	return p->depth > V0_MAX_DEPTH ? V0_RECURSED : V0_OK;
}

static int v0_peek(const struct v0_parser *p)
{
	return p->next < p->len ? (unsigned char)p->sym[p->next] : -1;
}

static bool v0_parser_eat(struct v0_parser *p, char b)
{
	if (v0_peek(p) == (unsigned char)b) {
		p->next++;
		return true;
	}
	return false;
}

static int v0_next(struct v0_parser *p, char *b)
{
	if (p->next >= p->len)
		return V0_INVALID;
	*b = p->sym[p->next++];
	return V0_OK;
}

struct hex_nibbles {
	const char *s;
	size_t n;
};

static int v0_hex_nibbles(struct v0_parser *p, struct hex_nibbles *h)
{
	size_t start = p->next;
	for (;;) {
		char c;
		if (v0_next(p, &c))
			return V0_INVALID;
		if (is_digit(c) || (c >= 'a' && c <= 'f'))
			continue;
		if (c == '_')
			break;
		return V0_INVALID;
	}
	h->s = p->sym + start;
	h->n = p->next - 1 - start;
	return V0_OK;
}

/* Base-62 digit values; 0xff for bytes that are not digits. */
static const uint8_t base62_digit[256] = {
	['0'] = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
	['a'] = 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
	26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
	['A'] = 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
};

static bool is_base62_digit(int c)
{
	return c == '0' || (c > 0 && base62_digit[c] != 0);
}

/* `_` is 0, `<base62>_` is the value + 1. */
static int v0_integer_62(struct v0_parser *p, uint64_t *out)
{
	if (v0_parser_eat(p, '_')) {
		*out = 0;
		return V0_OK;
	}
	uint64_t x = 0;
	for (;;) {
		int c = v0_peek(p);
		if (c == '_')
			break;
		if (c < 0 || !is_base62_digit(c))
			return V0_INVALID;
		p->next++;
		if (__builtin_mul_overflow(x, 62, &x) || __builtin_add_overflow(x, base62_digit[c], &x))
			return V0_INVALID;
	}
	p->next++;
	if (x == UINT64_MAX)
		return V0_INVALID;
	*out = x + 1;
	return V0_OK;
}

static int v0_opt_integer_62(struct v0_parser *p, char tag, uint64_t *out)
{
	if (!v0_parser_eat(p, tag)) {
		*out = 0;
		return V0_OK;
	}
	int e = v0_integer_62(p, out);
	if (e)
		return e;
	if (*out == UINT64_MAX)
		return V0_INVALID;
	*out += 1;
	return V0_OK;
}

static int v0_disambiguator(struct v0_parser *p, uint64_t *out)
{
	return v0_opt_integer_62(p, 's', out);
}

/* Special namespaces (closures, shims) are uppercase; '\0' for the rest. */
static int v0_namespace(struct v0_parser *p, char *ns)
{
	char c;
	if (v0_next(p, &c))
		return V0_INVALID;
	if (is_upper(c))
		*ns = c;
	else if (is_lower(c))
		*ns = 0;
	else
		return V0_INVALID;
	return V0_OK;
}

static int v0_backref(struct v0_parser *p, struct v0_parser *target)
{
	size_t s_start = p->next - 1;
	uint64_t i;
	int e = v0_integer_62(p, &i);
	if (e)
		return e;
	if (i >= s_start)
		return V0_INVALID;
	*target = (struct v0_parser){p->sym, p->len, (size_t)i, p->depth};
	return v0_push_depth(target);
}

struct v0_ident {
	const char *ascii;
	size_t ascii_len;
	const char *puny; /* punycode insertion codes, if any */
	size_t puny_len;
};

static int v0_ident(struct v0_parser *p, struct v0_ident *id)
{
	bool is_punycode = v0_parser_eat(p, 'u');
	int c = v0_peek(p);
	if (!(c >= '0' && c <= '9'))
		return V0_INVALID;
	p->next++;
	size_t n = (size_t)(c - '0');
	if (n != 0) {
		while ((c = v0_peek(p)) >= '0' && c <= '9') {
			p->next++;
			if (__builtin_mul_overflow(n, 10, &n) ||
			    __builtin_add_overflow(n, (size_t)(c - '0'), &n))
				return V0_INVALID;
		}
	}
	v0_parser_eat(p, '_');
	size_t start = p->next;
	if (n > p->len - p->next)
		return V0_INVALID;
	p->next += n;
	const char *s = p->sym + start;
	if (is_punycode) {
		size_t us = n;
		while (us > 0 && s[us - 1] != '_')
			us--;
		if (us > 0) {
			*id = (struct v0_ident){s, us - 1, s + us, n - us};
		} else {
			*id = (struct v0_ident){s, 0, s, n};
		}
		if (id->puny_len == 0)
			return V0_INVALID;
	} else {
		*id = (struct v0_ident){s, n, s + n, 0};
	}
	return V0_OK;
}

#define PUNYCODE_SMALL_LEN 128

/* RFC 3492 decoding into at most PUNYCODE_SMALL_LEN code points, as
 * rustc-demangle's try_small_punycode_decode. Returns the count, or -1. */
static int punycode_decode(const struct v0_ident *id, uint32_t out[PUNYCODE_SMALL_LEN])
{
	if (id->puny_len == 0)
		return -1;
	size_t len = 0;
	for (size_t i = 0; i < id->ascii_len; i++) {
		if (len == PUNYCODE_SMALL_LEN)
			return -1;
		out[len++] = (unsigned char)id->ascii[i];
	}
	const size_t base = 36, t_min = 1, t_max = 26, skew = 38;
	size_t damp = 700, bias = 72, i = 0, n = 0x80;
	const char *p = id->puny, *end = id->puny + id->puny_len;
	for (;;) {
		size_t delta = 0, w = 1, k = 0;
		for (;;) {
			k += base;
			size_t t = k > bias ? k - bias : 0;
			if (t < t_min)
				t = t_min;
			if (t > t_max)
				t = t_max;
			if (p == end)
				return -1;
			char c = *p++;
			size_t d;
			if (c >= 'a' && c <= 'z')
				d = (size_t)(c - 'a');
			else if (c >= '0' && c <= '9')
				d = 26 + (size_t)(c - '0');
			else
				return -1;
			size_t dw;
			if (__builtin_mul_overflow(d, w, &dw) || __builtin_add_overflow(delta, dw, &delta))
				return -1;
			if (d < t)
				break;
			if (__builtin_mul_overflow(w, base - t, &w))
				return -1;
		}
		len++;
		if (__builtin_add_overflow(i, delta, &i) || __builtin_add_overflow(n, i / len, &n))
			return -1;
		i %= len;
		if (!is_scalar_value(n) || len - 1 >= PUNYCODE_SMALL_LEN)
			return -1;
		memmove(out + i + 1, out + i, (len - 1 - i) * sizeof out[0]);
		out[i] = (uint32_t)n;
		i++;
		if (p == end)
			return (int)len;
		delta /= damp;
		damp = 2;
		delta += delta / len;
		k = 0;
		while (delta > ((base - t_min) * t_max) / 2) {
			delta /= base - t_min;
			k += base;
		}
		bias = k + ((base - t_min + 1) * delta) / (delta + skew);
	}
}

static int v0_print_ident(struct dm_out *w, const struct v0_ident *id)
{
	uint32_t chars[PUNYCODE_SMALL_LEN];
	int n = punycode_decode(id, chars);
	if (n >= 0) {
		for (int i = 0; i < n; i++)
			if (dm_out_char(w, chars[i]))
				return -1;
		return 0;
	}
	if (id->puny_len == 0)
		return dm_out_put(w, id->ascii, id->ascii_len);
	if (dm_out_str(w, "punycode{"))
		return -1;
	if (id->ascii_len > 0) {
		if (dm_out_put(w, id->ascii, id->ascii_len) || dm_out_put(w, "-", 1))
			return -1;
	}
	if (dm_out_put(w, id->puny, id->puny_len))
		return -1;
	return dm_out_put(w, "}", 1);
}

static const char *basic_type(char tag)
{
	switch (tag) {
	case 'b': return "bool";
	case 'c': return "char";
	case 'e': return "str";
	case 'u': return "()";
	case 'a': return "i8";
	case 's': return "i16";
	case 'l': return "i32";
	case 'x': return "i64";
	case 'n': return "i128";
	case 'i': return "isize";
	case 'h': return "u8";
	case 't': return "u16";
	case 'm': return "u32";
	case 'y': return "u64";
	case 'o': return "u128";
	case 'j': return "usize";
	case 'f': return "f32";
	case 'd': return "f64";
	case 'z': return "!";
	case 'p': return "_";
	case 'v': return "...";
	default: return NULL;
	}
}

struct v0_printer {
	struct v0_parser parser;
	int err;            /* V0_OK while the parser is usable */
	struct dm_out *out; /* NULL while printing is skipped */
	bool alternate;
	uint32_t bound_lifetime_depth;
};

/* Every printing function returns 0, or -1 when the output failed (size
 * limit); parse errors are state (pr->err), not return values. */
static inline __attribute__((always_inline)) int pr_str(struct v0_printer *pr, const char *s)
{
	return pr->out ? dm_out_str(pr->out, s) : 0;
}

static int pr_mem(struct v0_printer *pr, const char *s, size_t n)
{
	return pr->out ? dm_out_put(pr->out, s, n) : 0;
}

static int pr_u64(struct v0_printer *pr, uint64_t v)
{
	return pr->out ? dm_out_u64(pr->out, v, 10) : 0;
}

static const char *v0_err_message(int err)
{
	return err == V0_RECURSED ? "{recursion limit reached}" : "{invalid syntax}";
}

/* rustc-demangle's `invalid!`: print the marker, poison the parser, and
 * return Ok from the current printing function. */
#define V0_INVALID_RETURN(pr) do {                                      \
		if (pr_str((pr), "{invalid syntax}"))                    \
			return -1;                                      \
		(pr)->err = V0_INVALID;                                 \
		return 0;                                               \
	} while (0)

/* rustc-demangle's `parse!`: run a parser step; on a new error print its
 * marker and poison, on an old one print `?`; either way return Ok. */
#define V0_PARSE(pr, call) do {                                         \
		if ((pr)->err != V0_OK)                                 \
			return pr_str((pr), "?");                       \
		int e_ = (call);                                        \
		if (e_ != V0_OK) {                                      \
			if (pr_str((pr), v0_err_message(e_)))           \
				return -1;                              \
			(pr)->err = e_;                                 \
			return 0;                                       \
		}                                                       \
	} while (0)

#define P(pr) (&(pr)->parser)

static bool pr_eat(struct v0_printer *pr, char b)
{
	return pr->err == V0_OK && v0_parser_eat(P(pr), b);
}

static void pr_pop_depth(struct v0_printer *pr)
{
	if (pr->err == V0_OK)
		pr->parser.depth--;
}

static int print_path(struct v0_printer *pr, bool in_value);
static int print_type(struct v0_printer *pr);
static int print_const(struct v0_printer *pr, bool in_value);
static int print_generic_arg(struct v0_printer *pr);
static int print_const_field(struct v0_printer *pr);
static int print_path_maybe_open_generics(struct v0_printer *pr, bool *open);

/* The printing function a backref (or a list element) re-enters. */
enum v0_what { W_PATH, W_PATH_VALUE, W_TYPE, W_CONST, W_CONST_VALUE, W_OPEN_GENERICS, W_GENERIC_ARG,
	       W_CONST_FIELD };

static int print_what(struct v0_printer *pr, enum v0_what what, bool *open)
{
	switch (what) {
	case W_PATH: return print_path(pr, false);
	case W_PATH_VALUE: return print_path(pr, true);
	case W_TYPE: return print_type(pr);
	case W_CONST: return print_const(pr, false);
	case W_CONST_VALUE: return print_const(pr, true);
	case W_OPEN_GENERICS: return print_path_maybe_open_generics(pr, open);
	case W_GENERIC_ARG: return print_generic_arg(pr);
	case W_CONST_FIELD: return print_const_field(pr);
	}
	return 0;
}

/* Follows a backref when printing; when skipping, only parses it. The
 * original parser (and its error state) is restored afterwards, as
 * rustc-demangle does. */
static int print_backref(struct v0_printer *pr, enum v0_what what, bool *open)
{
	struct v0_parser target;
	V0_PARSE(pr, v0_backref(P(pr), &target));
	if (!pr->out)
		return 0;
	struct v0_parser saved = pr->parser;
	int saved_err = pr->err;
	pr->parser = target;
	pr->err = V0_OK;
	int r = print_what(pr, what, open);
	pr->parser = saved;
	pr->err = saved_err;
	return r;
}

static int print_lifetime_from_index(struct v0_printer *pr, uint64_t lt)
{
	if (!pr->out)
		return 0;
	if (pr_str(pr, "'"))
		return -1;
	if (lt == 0)
		return pr_str(pr, "_");
	if (pr->bound_lifetime_depth < lt)
		V0_INVALID_RETURN(pr);
	uint64_t depth = pr->bound_lifetime_depth - lt;
	if (depth < 26) {
		char c = (char)('a' + depth);
		return pr_mem(pr, &c, 1);
	}
	if (pr_str(pr, "_"))
		return -1;
	return pr_u64(pr, depth);
}

/* print_sep_list: elements until 'E' (or a parse error); *count is set. */
static int print_sep_list(struct v0_printer *pr, enum v0_what what, const char *sep, size_t *count)
{
	size_t i = 0;
	while (pr->err == V0_OK && !pr_eat(pr, 'E')) {
		if ((i > 0 && pr_str(pr, sep)) || print_what(pr, what, NULL))
			return -1;
		i++;
	}
	if (count)
		*count = i;
	return 0;
}

/* `(a, b)`, and `(a,)` for a one-element tuple, of types or const values. */
static int print_tuple(struct v0_printer *pr, enum v0_what element)
{
	size_t count;
	if (pr_str(pr, "(") || print_sep_list(pr, element, ", ", &count))
		return -1;
	return (count == 1 && pr_str(pr, ",")) || pr_str(pr, ")") ? -1 : 0;
}

static int print_dyn_trait(struct v0_printer *pr);
static int print_fn_sig(struct v0_printer *pr);

enum v0_binder_body { B_FN_SIG, B_DYN_BOUNDS };

static int print_binder_body(struct v0_printer *pr, enum v0_binder_body body)
{
	if (body == B_FN_SIG)
		return print_fn_sig(pr);
	size_t i = 0;
	while (pr->err == V0_OK && !pr_eat(pr, 'E')) {
		if ((i > 0 && pr_str(pr, " + ")) || print_dyn_trait(pr))
			return -1;
		i++;
	}
	return 0;
}

/* Optionally a `for<'a, ...>` binder (G) around body. */
static int in_binder(struct v0_printer *pr, enum v0_binder_body body)
{
	uint64_t bound;
	V0_PARSE(pr, v0_opt_integer_62(P(pr), 'G', &bound));
	if (!pr->out)
		return print_binder_body(pr, body);
	if (bound > 0) {
		if (pr_str(pr, "for<"))
			return -1;
		for (uint64_t i = 0; i < bound; i++) {
			if (i > 0 && pr_str(pr, ", "))
				return -1;
			pr->bound_lifetime_depth++;
			if (print_lifetime_from_index(pr, 1))
				return -1;
		}
		if (pr_str(pr, "> "))
			return -1;
	}
	int r = print_binder_body(pr, body);
	pr->bound_lifetime_depth -= (uint32_t)bound;
	return r;
}

/* One path node after its tag (print_path takes the tag and the depth). */
static int print_path_node(struct v0_printer *pr, char tag, bool in_value)
{
	bool failed = false;
	switch (tag) {
	case 'C': {
		uint64_t dis;
		struct v0_ident name;
		V0_PARSE(pr, v0_disambiguator(P(pr), &dis));
		V0_PARSE(pr, v0_ident(P(pr), &name));
		if (pr->out && v0_print_ident(pr->out, &name))
			return -1;
		if (pr->out && !pr->alternate && dis != 0) {
			if (dm_out_put(pr->out, "[", 1) || dm_out_u64(pr->out, dis, 16) ||
			    dm_out_put(pr->out, "]", 1))
				return -1;
		}
		break;
	}
	case 'N': {
		char ns;
		uint64_t dis;
		struct v0_ident name;
		V0_PARSE(pr, v0_namespace(P(pr), &ns));
		if (print_path(pr, in_value))
			return -1;
		/* A poisoned parser prints `?` below without its `::`. */
		if (pr->err != V0_OK && pr_str(pr, "::"))
			return -1;
		V0_PARSE(pr, v0_disambiguator(P(pr), &dis));
		V0_PARSE(pr, v0_ident(P(pr), &name));
		bool named = name.ascii_len > 0 || name.puny_len > 0;
		if (ns) {
			if (pr_str(pr, "::{"))
				return -1;
			if (ns == 'C') {
				if (pr_str(pr, "closure"))
					return -1;
			} else if (ns == 'S') {
				if (pr_str(pr, "shim"))
					return -1;
			} else if (pr_mem(pr, &ns, 1)) {
				return -1;
			}
			if ((named && (pr_str(pr, ":") || (pr->out && v0_print_ident(pr->out, &name)))) ||
			    pr_str(pr, "#") || pr_u64(pr, dis) || pr_str(pr, "}"))
				return -1;
		} else if (named) {
			if (pr_str(pr, "::") || (pr->out && v0_print_ident(pr->out, &name)))
				return -1;
		}
		break;
	}
	case 'M':
	case 'X':
	case 'Y':
		if (tag != 'Y') {
			uint64_t dis;
			V0_PARSE(pr, v0_disambiguator(P(pr), &dis));
			/* The impl's own path is parsed but never printed. */
			struct dm_out *saved = pr->out;
			pr->out = NULL;
			print_path(pr, false);
			pr->out = saved;
		}
		failed = pr_str(pr, "<") || print_type(pr) ||
			 (tag != 'M' && (pr_str(pr, " as ") || print_path(pr, false))) || pr_str(pr, ">");
		break;
	case 'I':
		failed = print_path(pr, in_value) || (in_value && pr_str(pr, "::")) || pr_str(pr, "<") ||
			 print_sep_list(pr, W_GENERIC_ARG, ", ", NULL) || pr_str(pr, ">");
		break;
	case 'B':
		return print_backref(pr, in_value ? W_PATH_VALUE : W_PATH, NULL);
	default:
		V0_INVALID_RETURN(pr);
	}
	return failed ? -1 : 0;
}

/* Reads a node's tag and enters one level deeper (in rustc-demangle's order
 * for that node: paths count the depth first, consts the tag first), prints
 * the node, and leaves the level. A poisoned parser leaves the depth alone,
 * so popping after any outcome matches rustc-demangle, which pops only on
 * success. */
static int print_nested(struct v0_printer *pr, int (*print_node)(struct v0_printer *, char, bool),
			bool in_value, bool depth_first)
{
	char tag;
	if (depth_first)
		V0_PARSE(pr, v0_push_depth(P(pr)));
	V0_PARSE(pr, v0_next(P(pr), &tag));
	if (!depth_first)
		V0_PARSE(pr, v0_push_depth(P(pr)));
	int r = print_node(pr, tag, in_value);
	pr_pop_depth(pr);
	return r;
}

static int print_path(struct v0_printer *pr, bool in_value)
{
	return print_nested(pr, print_path_node, in_value, true);
}

static int print_generic_arg(struct v0_printer *pr)
{
	if (pr_eat(pr, 'L')) {
		uint64_t lt;
		V0_PARSE(pr, v0_integer_62(P(pr), &lt));
		return print_lifetime_from_index(pr, lt);
	}
	if (pr_eat(pr, 'K'))
		return print_const(pr, false);
	return print_type(pr);
}

static int print_fn_sig(struct v0_printer *pr)
{
	bool is_unsafe = pr_eat(pr, 'U');
	bool has_abi = false;
	struct v0_ident abi = {"C", 1, NULL, 0};
	if (pr_eat(pr, 'K')) {
		has_abi = true;
		if (!pr_eat(pr, 'C')) {
			V0_PARSE(pr, v0_ident(P(pr), &abi));
			if (abi.ascii_len == 0 || abi.puny_len != 0)
				V0_INVALID_RETURN(pr);
		}
	}
	if (is_unsafe && pr_str(pr, "unsafe "))
		return -1;
	if (has_abi) {
		if (pr_str(pr, "extern \""))
			return -1;
		/* `-` in ABI names was mangled as `_`. */
		const char *part = abi.ascii, *end = abi.ascii + abi.ascii_len;
		for (;;) {
			const char *us = memchr(part, '_', (size_t)(end - part));
			const char *stop = us ? us : end;
			if (pr_mem(pr, part, (size_t)(stop - part)))
				return -1;
			if (!us)
				break;
			if (pr_str(pr, "-"))
				return -1;
			part = us + 1;
		}
		if (pr_str(pr, "\" "))
			return -1;
	}
	if (pr_str(pr, "fn(") || print_sep_list(pr, W_TYPE, ", ", NULL) || pr_str(pr, ")"))
		return -1;
	if (pr_eat(pr, 'u'))
		return 0; /* `-> ()` is not printed */
	if (pr_str(pr, " -> "))
		return -1;
	return print_type(pr);
}

/* Keeps the `<...>` of an `I` path open (no `>`) so that a trait object's
 * associated type bindings can join it: `dyn Trait<T, Assoc = X>`. */
static int print_path_maybe_open_generics(struct v0_printer *pr, bool *open)
{
	bool dummy = false;
	if (!open)
		open = &dummy;
	if (pr_eat(pr, 'B')) {
		*open = false;
		return print_backref(pr, W_OPEN_GENERICS, open);
	}
	if (pr_eat(pr, 'I')) {
		if (print_path(pr, false) || pr_str(pr, "<") ||
		    print_sep_list(pr, W_GENERIC_ARG, ", ", NULL))
			return -1;
		*open = true;
		return 0;
	}
	*open = false;
	return print_path(pr, false);
}

static int print_dyn_trait(struct v0_printer *pr)
{
	bool open = false;
	if (print_path_maybe_open_generics(pr, &open))
		return -1;
	while (pr_eat(pr, 'p')) {
		if (!open) {
			if (pr_str(pr, "<"))
				return -1;
			open = true;
		} else if (pr_str(pr, ", ")) {
			return -1;
		}
		struct v0_ident name;
		V0_PARSE(pr, v0_ident(P(pr), &name));
		if ((pr->out && v0_print_ident(pr->out, &name)) || pr_str(pr, " = ") || print_type(pr))
			return -1;
	}
	if (open && pr_str(pr, ">"))
		return -1;
	return 0;
}

static int print_pat(struct v0_printer *pr)
{
	char tag;
	V0_PARSE(pr, v0_next(P(pr), &tag));
	switch (tag) {
	case 'R':
		if (print_const(pr, false) || pr_str(pr, "..=") || print_const(pr, false))
			return -1;
		break;
	case 'O':
		V0_PARSE(pr, v0_push_depth(P(pr)));
		if (print_pat(pr))
			return -1;
		while (!pr_eat(pr, 'E')) {
			/* At the end of the input: stop instead of looping. */
			if (pr->err != V0_OK)
				V0_INVALID_RETURN(pr);
			if (pr_str(pr, " | ") || print_pat(pr))
				return -1;
		}
		pr_pop_depth(pr);
		break;
	case 'N':
		if (pr_str(pr, "!null"))
			return -1;
		break;
	default:
		V0_INVALID_RETURN(pr);
	}
	return 0;
}

static int print_type(struct v0_printer *pr)
{
	char tag;
	V0_PARSE(pr, v0_next(P(pr), &tag));
	const char *basic = basic_type(tag);
	if (basic)
		return pr_str(pr, basic);
	V0_PARSE(pr, v0_push_depth(P(pr)));
	bool failed = false;
	switch (tag) {
	case 'R':
	case 'Q':
		if (pr_str(pr, "&"))
			return -1;
		if (pr_eat(pr, 'L')) {
			uint64_t lt;
			V0_PARSE(pr, v0_integer_62(P(pr), &lt));
			if (lt != 0 && (print_lifetime_from_index(pr, lt) || pr_str(pr, " ")))
				return -1;
		}
		failed = (tag != 'R' && pr_str(pr, "mut ")) || print_type(pr);
		break;
	case 'P':
	case 'O':
		failed = pr_str(pr, "*") || pr_str(pr, tag != 'P' ? "mut " : "const ") || print_type(pr);
		break;
	case 'A':
	case 'S':
		failed = pr_str(pr, "[") || print_type(pr) ||
			 (tag == 'A' && (pr_str(pr, "; ") || print_const(pr, true))) || pr_str(pr, "]");
		break;
	case 'T':
		failed = print_tuple(pr, W_TYPE);
		break;
	case 'F':
		failed = in_binder(pr, B_FN_SIG);
		break;
	case 'D': {
		if (pr_str(pr, "dyn ") || in_binder(pr, B_DYN_BOUNDS))
			return -1;
		if (!pr_eat(pr, 'L'))
			V0_INVALID_RETURN(pr);
		uint64_t lt;
		V0_PARSE(pr, v0_integer_62(P(pr), &lt));
		failed = lt != 0 && (pr_str(pr, " + ") || print_lifetime_from_index(pr, lt));
		break;
	}
	case 'B':
		failed = print_backref(pr, W_TYPE, NULL);
		break;
	case 'W':
		failed = print_type(pr) || pr_str(pr, " is ") || print_pat(pr);
		break;
	default:
		/* Not a type tag: a path; let print_path see the tag again. */
		if (pr->err == V0_OK)
			pr->parser.next--;
		failed = print_path(pr, false);
		break;
	}
	if (failed)
		return -1;
	pr_pop_depth(pr);
	return 0;
}

static int hex_nibbles_uint(const struct hex_nibbles *h, uint64_t *v)
{
	size_t i = 0;
	while (i < h->n && h->s[i] == '0')
		i++;
	if (h->n - i > 16)
		return -1;
	uint64_t x = 0;
	for (; i < h->n; i++) {
		char c = h->s[i];
		x = (x << 4) | (uint64_t)(is_digit(c) ? c - '0' : c - 'a' + 10);
	}
	*v = x;
	return 0;
}

/* Strict UTF-8 (str::from_utf8 of one sequence): no overlongs, no
 * surrogates, nothing above U+10FFFF. Returns bytes used, or 0. */
static size_t utf8_decode(const uint8_t *b, size_t n, uint32_t *cp)
{
	uint8_t c0 = b[0];
	size_t need;
	uint32_t c, min;
	if (c0 < 0x80) {
		*cp = c0;
		return 1;
	} else if (c0 >= 0xc0 && c0 <= 0xdf) {
		need = 2, c = c0 & 0x1f, min = 0x80;
	} else if (c0 >= 0xe0 && c0 <= 0xef) {
		need = 3, c = c0 & 0x0f, min = 0x800;
	} else if (c0 >= 0xf0 && c0 <= 0xf7) {
		need = 4, c = c0 & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((b[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (b[i] & 0x3f);
	}
	if (c < min || !is_scalar_value(c))
		return 0;
	*cp = c;
	return need;
}

static uint8_t nibble(char c)
{
	return (uint8_t)(is_digit(c) ? c - '0' : c - 'a' + 10);
}

/* Decodes the next UTF-8 char of a hex-encoded string; 0 bytes at the end,
 * (size_t)-1 on invalid UTF-8. */
static size_t hex_str_next(const struct hex_nibbles *h, size_t pos, uint32_t *cp)
{
	if (pos >= h->n)
		return 0;
	uint8_t bytes[4];
	size_t avail = (h->n - pos) / 2;
	if (avail > 4)
		avail = 4;
	for (size_t i = 0; i < avail; i++)
		bytes[i] = (uint8_t)(nibble(h->s[pos + 2 * i]) << 4 | nibble(h->s[pos + 2 * i + 1]));
	size_t used = utf8_decode(bytes, avail, cp);
	return used ? used * 2 : (size_t)-1;
}

/* char::escape_debug (as rustc-demangle uses it), quotes handled by caller. */
static int print_escaped_char(struct dm_out *w, uint32_t c, char quote)
{
	if ((quote == '\'' && c == '"') || (quote == '"' && c == '\''))
		return dm_out_char(w, c);
	const char *esc = NULL;
	switch (c) {
	case 0: esc = "\\0"; break;
	case '\t': esc = "\\t"; break;
	case '\r': esc = "\\r"; break;
	case '\n': esc = "\\n"; break;
	case '\\': esc = "\\\\"; break;
	case '"': esc = "\\\""; break;
	case '\'': esc = "\\'"; break;
	default: break;
	}
	if (esc) {
		/* EscapeDebug yields chars one at a time: one write per char. */
		for (; *esc; esc++)
			if (dm_out_put(w, esc, 1))
				return -1;
		return 0;
	}
	if (!rust_char_is_grapheme_extend(c) && rust_char_is_printable(c))
		return dm_out_char(w, c);
	char buf[16];
	size_t n = 0;
	buf[n++] = '\\';
	buf[n++] = 'u';
	buf[n++] = '{';
	int shift = 20;
	while (shift > 0 && ((c >> shift) & 0xf) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		buf[n++] = "0123456789abcdef"[(c >> shift) & 0xf];
	buf[n++] = '}';
	for (size_t i = 0; i < n; i++)
		if (dm_out_put(w, buf + i, 1))
			return -1;
	return 0;
}

static int print_const_str_literal(struct v0_printer *pr)
{
	struct hex_nibbles h;
	V0_PARSE(pr, v0_hex_nibbles(P(pr), &h));
	if (h.n % 2 != 0)
		V0_INVALID_RETURN(pr);
	uint32_t cp;
	size_t used;
	/* Validate everything before printing the opening quote. */
	for (size_t pos = 0; (used = hex_str_next(&h, pos, &cp)) != 0; pos += used)
		if (used == (size_t)-1)
			V0_INVALID_RETURN(pr);
	if (!pr->out)
		return 0;
	if (dm_out_put(pr->out, "\"", 1))
		return -1;
	for (size_t pos = 0; (used = hex_str_next(&h, pos, &cp)) != 0; pos += used)
		if (print_escaped_char(pr->out, cp, '"'))
			return -1;
	return dm_out_put(pr->out, "\"", 1);
}

static int print_const_uint(struct v0_printer *pr, char ty_tag)
{
	struct hex_nibbles h;
	uint64_t v;
	V0_PARSE(pr, v0_hex_nibbles(P(pr), &h));
	if (hex_nibbles_uint(&h, &v) == 0) {
		if (pr_u64(pr, v))
			return -1;
	} else if (pr_str(pr, "0x") || pr_mem(pr, h.s, h.n)) {
		return -1;
	}
	if (pr->out && !pr->alternate)
		return pr_str(pr, basic_type(ty_tag));
	return 0;
}

/* One `name: value` field of a struct-like const. */
static int print_const_field(struct v0_printer *pr)
{
	uint64_t dis;
	struct v0_ident name;
	V0_PARSE(pr, v0_disambiguator(P(pr), &dis));
	V0_PARSE(pr, v0_ident(P(pr), &name));
	if ((pr->out && v0_print_ident(pr->out, &name)) || pr_str(pr, ": "))
		return -1;
	return print_const(pr, true);
}

/* A const that is not a plain scalar: str deref, reference, array, tuple
 * or ADT, braced `{...}` outside a value. Like the rest of the printer, a
 * parse error returns 0 at once, without the closing brace. Returns -1 on
 * a write error. */
static int print_const_compound(struct v0_printer *pr, char tag, bool in_value)
{
	if (!in_value && pr_str(pr, "{"))
		return -1;
	bool failed = false;
	switch (tag) {
	case 'e':
		/* `*"..."`: a str literal is a &str; `*` gets back to str. */
		failed = pr_str(pr, "*") || print_const_str_literal(pr);
		break;
	case 'R':
	case 'Q':
		failed = pr_str(pr, "&") || (tag != 'R' && pr_str(pr, "mut ")) ||
			 print_const(pr, true);
		break;
	case 'A':
		failed = pr_str(pr, "[") || print_sep_list(pr, W_CONST_VALUE, ", ", NULL) ||
			 pr_str(pr, "]");
		break;
	case 'T':
		failed = print_tuple(pr, W_CONST_VALUE);
		break;
	case 'V': {
		char kind;
		if (print_path(pr, true))
			return -1;
		V0_PARSE(pr, v0_next(P(pr), &kind));
		switch (kind) {
		case 'U':
			break;
		case 'T':
			if (pr_str(pr, "(") || print_sep_list(pr, W_CONST_VALUE, ", ", NULL) ||
			    pr_str(pr, ")"))
				return -1;
			break;
		case 'S':
			if (pr_str(pr, " { ") || print_sep_list(pr, W_CONST_FIELD, ", ", NULL) || pr_str(pr, " }"))
				return -1;
			break;
		default:
			V0_INVALID_RETURN(pr);
		}
		break;
	}
	}
	if (failed)
		return -1;
	if (!in_value && pr_str(pr, "}"))
		return -1;
	return 0;
}

/* One const node after its tag (print_const takes the tag and the depth). */
static int print_const_node(struct v0_printer *pr, char tag, bool in_value)
{
	bool failed = false;
	switch (tag) {
	case 'p':
		failed = pr_str(pr, "_");
		break;
	case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
		failed = print_const_uint(pr, tag);
		break;
	case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
		failed = (pr_eat(pr, 'n') && pr_str(pr, "-")) || print_const_uint(pr, tag);
		break;
	case 'b': {
		struct hex_nibbles h;
		uint64_t v;
		V0_PARSE(pr, v0_hex_nibbles(P(pr), &h));
		if (hex_nibbles_uint(&h, &v) != 0 || v > 1)
			V0_INVALID_RETURN(pr);
		failed = pr_str(pr, v ? "true" : "false");
		break;
	}
	case 'c': {
		struct hex_nibbles h;
		uint64_t v;
		V0_PARSE(pr, v0_hex_nibbles(P(pr), &h));
		if (hex_nibbles_uint(&h, &v) != 0 || !is_scalar_value(v))
			V0_INVALID_RETURN(pr);
		if (pr->out) {
			if (dm_out_put(pr->out, "'", 1) ||
			    print_escaped_char(pr->out, (uint32_t)v, '\'') ||
			    dm_out_put(pr->out, "'", 1))
				return -1;
		}
		break;
	}
	case 'R':
		/* A &str literal needs no braces. */
		if (pr_eat(pr, 'e'))
			return print_const_str_literal(pr);
		return print_const_compound(pr, tag, in_value);
	case 'e': case 'Q': case 'A': case 'T': case 'V':
		return print_const_compound(pr, tag, in_value);
	case 'B':
		return print_backref(pr, in_value ? W_CONST_VALUE : W_CONST, NULL);
	default:
		V0_INVALID_RETURN(pr);
	}
	return failed ? -1 : 0;
}

static int print_const(struct v0_printer *pr, bool in_value)
{
	return print_nested(pr, print_const_node, in_value, false);
}

/* v0::demangle: validates the symbol by a non-printing pass. Returns 0 and
 * sets the inner and suffix spans, V0_INVALID or V0_RECURSED. */
static int v0_parse(const char *s, size_t len, const char **inner, size_t *inner_len,
		    const char **suffix, size_t *suffix_len)
{
	size_t skip;
	if (len > 2 && s[0] == '_' && s[1] == 'R')
		skip = 2;
	else if (len > 1 && s[0] == 'R')
		skip = 1;
	else if (len > 3 && s[0] == '_' && s[1] == '_' && s[2] == 'R')
		skip = 3;
	else
		return V0_INVALID;
	const char *in = s + skip;
	size_t n = len - skip;
	if (!is_upper(in[0]))
		return V0_INVALID;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)in[i] & 0x80)
			return V0_INVALID;
	struct v0_printer pr = {.parser = {in, n, 0, 0}, .err = V0_OK, .out = NULL};
	print_path(&pr, false);
	if (pr.err)
		return pr.err;
	/* The instantiating crate, if any (paths start with an uppercase tag). */
	if (pr.parser.next < n && is_upper(in[pr.parser.next])) {
		print_path(&pr, false);
		if (pr.err)
			return pr.err;
	}
	*inner = in;
	*inner_len = n;
	*suffix = in + pr.parser.next;
	*suffix_len = n - pr.parser.next;
	return 0;
}

/* ------------------------------------------------------------- top level */

/* Length of sym once a ThinLTO `.llvm.<HEX>` suffix is dropped. */
static size_t llvm_stripped_len(const char *s, size_t len)
{
	/* memchr, not memmem: most symbols have no '.' at all. */
	const char *at = s, *end = s + len;
	while ((at = memchr(at, '.', (size_t)(end - at))) && (end - at < 6 || memcmp(at, ".llvm.", 6) != 0))
		at++;
	if (!at)
		return len;
	for (const char *p = at + 6; p < s + len; p++)
		if (!((*p >= 'A' && *p <= 'F') || is_digit(*p) || *p == '@'))
			return len;
	return (size_t)(at - s);
}

static bool is_ascii_punct_or_alnum(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e;
}

/* rustc_demangle::demangle + Display into w. Returns 0, or -1 (not Rust). */
static int rust_demangle_into(const char *s, size_t len, bool alternate, struct dm_out *w)
{
	/* ThinLTO renames internal symbols `<sym>.llvm.<HEX>`: drop that. */
	len = llvm_stripped_len(s, len);

	struct legacy_sym legacy;
	const char *v0_inner = NULL, *suffix;
	size_t v0_len = 0, suffix_len;
	bool is_legacy = legacy_parse(s, len, &legacy) == 0;
	if (is_legacy) {
		suffix = legacy.suffix;
		suffix_len = legacy.suffix_len;
	} else if (v0_parse(s, len, &v0_inner, &v0_len, &suffix, &suffix_len) != 0) {
		return -1;
	}
	/* LLVM IR adds `.`-separated words (`.exit.i.i`): keep those only. */
	if (suffix_len > 0) {
		if (suffix[0] != '.')
			return -1;
		for (size_t i = 0; i < suffix_len; i++)
			if (!is_ascii_punct_or_alnum((unsigned char)suffix[i]))
				return -1;
	}

	int r;
	if (is_legacy) {
		r = legacy_print(&legacy, alternate, w);
	} else {
		struct v0_printer pr = {
			.parser = {v0_inner, v0_len, 0, 0},
			.err = V0_OK,
			.out = w,
			.alternate = alternate,
		};
		r = print_path(&pr, true);
	}
	if (r != 0 && w->size_limit_hit)
		dm_out_raw(w, "{size limit reached}", 20);
	dm_out_raw(w, suffix, suffix_len);
	return 0;
}

/* Demangles into out (cap bytes, NUL included). Returns the full output
 * length (which may be >= cap) or -1 if not Rust. */
static long rust_demangle_len(const char *s, size_t len, char *out, size_t cap,
			      enum demangle_style style)
{
	struct dm_out w = {out, cap, 0, RUST_DEMANGLE_MAX_SIZE, false};
	if (rust_demangle_into(s, len, style == DEMANGLE_NO_HASH, &w) != 0) {
		if (cap)
			out[0] = '\0';
		return -1;
	}
	if (cap)
		out[w.len < cap ? w.len : cap - 1] = '\0';
	return (long)w.len;
}

int demangle_rust_n(const char *mangled, size_t len, char *out, size_t out_size,
		    enum demangle_style style)
{
	long n = rust_demangle_len(mangled, len, out, out_size, style);
	if (n < 0)
		return RUST_DEMANGLE_NOT_RUST;
	if ((size_t)n >= out_size)
		return RUST_DEMANGLE_TOO_BIG;
	return (int)n;
}

int demangle_rust(const char *mangled, char *out, size_t out_size, enum demangle_style style)
{
	return demangle_rust_n(mangled, strlen(mangled), out, out_size, style);
}

/* ---------------------------------------------------------------- routing */

/* `_ZN…17h<16 hex>E` (the last element of a legacy path is the hash). */
static bool legacy_has_rust_hash(const struct legacy_sym *sym)
{
	if (sym->elements == 0)
		return false;
	const char *cursor = sym->inner, *ident = NULL;
	size_t n = 0;
	for (size_t i = 0; i < sym->elements; i++)
		n = legacy_element(&cursor, &ident);
	if (n != 17 || ident[0] != 'h')
		return false;
	for (size_t i = 1; i < 17; i++)
		if (!(is_digit(ident[i]) || (ident[i] >= 'a' && ident[i] <= 'f')))
			return false;
	return true;
}

/* The cheap half of the routing rule: the prefix, and for `_ZN` the hash. */
static bool routes_to_rust(const char *sym, size_t len)
{
	if (starts_with(sym, len, "_R"))
		return true;
	if (!starts_with(sym, len, "_ZN"))
		return false;
	struct legacy_sym legacy;
	return legacy_parse(sym, llvm_stripped_len(sym, len), &legacy) == 0 &&
	       legacy_has_rust_hash(&legacy);
}

bool demangle_is_rust(const char *sym, size_t len)
{
	return routes_to_rust(sym, len) &&
	       rust_demangle_len(sym, len, NULL, 0, DEMANGLE_FULL) >= 0;
}

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa_load(void)
{
	/* libstdc++ is never unloaded: the handle lives as long as the process. */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
	void *f = dlsym(h, "__cxa_demangle");
	memcpy(&cxa_demangle, &f, sizeof f);
}

/* C++ demangling of s (len bytes); malloc'd, or NULL if it is not C++. */
static char *cxx_demangle(const char *s, size_t len)
{
	pthread_once(&cxa_once, cxa_load);
	if (!cxa_demangle)
		return NULL;
	char stackbuf[256];
	char *z = len < sizeof stackbuf ? stackbuf : malloc(len + 1);
	if (!z)
		return NULL;
	memcpy(z, s, len);
	z[len] = '\0';
	int status = -1;
	char *r = cxa_demangle(z, NULL, NULL, &status);
	if (z != stackbuf)
		free(z);
	if (status != 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* Rust demangling into a fresh malloc'd string, or NULL (not Rust / OOM). */
static char *rust_demangle_alloc(const char *s, size_t len, enum demangle_style style)
{
	char stackbuf[512];
	long n = rust_demangle_len(s, len, stackbuf, sizeof stackbuf, style);
	if (n < 0)
		return NULL;
	char *r = malloc((size_t)n + 1);
	if (!r)
		return NULL;
	if ((size_t)n < sizeof stackbuf)
		memcpy(r, stackbuf, (size_t)n + 1);
	else
		rust_demangle_len(s, len, r, (size_t)n + 1, style);
	return r;
}

/* Demangled sym (malloc'd), or NULL when nothing applies (or out of memory). */
static char *symbol_demangle_n(const char *sym, size_t len, bool with_hash)
{
	if (routes_to_rust(sym, len)) {
		char *r = rust_demangle_alloc(sym, len, with_hash ? DEMANGLE_FULL : DEMANGLE_NO_HASH);
		if (r || sym[1] == 'R')
			return r;
	}
	if (starts_with(sym, len, "_Z"))
		return cxx_demangle(sym, len);
	return NULL;
}

char *demangle_rust_symbol(const char *sym, bool with_hash)
{
	size_t len = strlen(sym);
	return routes_to_rust(sym, len) ? rust_demangle_alloc(sym, len, with_hash ? DEMANGLE_FULL
										: DEMANGLE_NO_HASH)
					: NULL;
}

char *demangle_symbol(const char *sym, bool with_hash)
{
	char *r = symbol_demangle_n(sym, strlen(sym), with_hash);
	return r ? r : strdup(sym);
}

static bool is_symbol_char(char c)
{
	return is_digit(c) || is_upper(c) || is_lower(c) || c == '_' || c == '$' || c == '.';
}

static bool is_alnum(char c)
{
	return is_digit(c) || is_upper(c) || is_lower(c);
}

/* Text filter core: calls emit(ctx, bytes, n) for each output piece. */
static int demangle_text_each(const char *text, size_t len, bool with_hash,
			      int (*emit)(void *, const char *, size_t), void *ctx)
{
	size_t plain = 0; /* start of text not yet emitted */
	size_t i = 0;
	while (i + 1 < len) {
		if (text[i] != '_' || (text[i + 1] != 'Z' && text[i + 1] != 'R') ||
		    (i > 0 && is_alnum(text[i - 1]))) {
			i++;
			continue;
		}
		size_t end = i;
		while (end < len && is_symbol_char(text[end]))
			end++;
		/* Fast path, no allocation: a Rust name that fits the stack. */
		if (routes_to_rust(text + i, end - i)) {
			char buf[4096];
			long n = rust_demangle_len(text + i, end - i, buf, sizeof buf,
						   with_hash ? DEMANGLE_FULL : DEMANGLE_NO_HASH);
			if (n >= 0 && (size_t)n < sizeof buf) {
				if (emit(ctx, text + plain, i - plain) || emit(ctx, buf, (size_t)n))
					return -1;
				plain = i = end;
				continue;
			}
		}
		char *d = symbol_demangle_n(text + i, end - i, with_hash);
		size_t used = end;
		/* A sentence-ending `.` is not part of a C++ name. */
		while (!d && used > i + 2 && text[used - 1] == '.') {
			used--;
			d = symbol_demangle_n(text + i, used - i, with_hash);
		}
		if (d) {
			int r = emit(ctx, text + plain, i - plain);
			if (r == 0)
				r = emit(ctx, d, strlen(d));
			free(d);
			if (r)
				return -1;
			plain = used;
		}
		i = d ? used : end;
	}
	return emit(ctx, text + plain, len - plain);
}

static int emit_file(void *ctx, const char *s, size_t n)
{
	return n == 0 || fwrite(s, 1, n, ctx) == n ? 0 : -1;
}

int demangle_text_write(FILE *out, const char *text, size_t len, bool with_hash)
{
	return demangle_text_each(text, len, with_hash, emit_file, out);
}

static int emit_buf(void *ctx, const char *s, size_t n)
{
	return strbuf_add(ctx, s, n);
}

char *demangle_text(const char *text, bool with_hash)
{
	struct strbuf b = { 0 };
	if (demangle_text_each(text, strlen(text), with_hash, emit_buf, &b) != 0) {
		strbuf_release(&b);
		return NULL;
	}
	return strbuf_finish(&b);
}

void demangle_strip_generics(const char *name, char *out, size_t out_size)
{
	size_t o = 0;
	int depth = 0;
	for (const char *p = name; *p && o + 1 < out_size; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (!depth)
			out[o++] = *p;
	}
	if (out_size)
		out[o] = '\0';
}
