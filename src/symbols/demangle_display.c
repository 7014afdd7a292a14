/* demangle_display.c — one display name per Rust function, whatever the
 * mangling (demangle.h, demangle_display_name; docs/demangle.md, "Display
 * names").
 *
 * Legacy and v0 symbols of the same function demangle differently: legacy
 * names an impl by its header as written (`Tree<K,V>::insert`,
 * `core::str::<impl str>::len`, `<&T as Debug>::fmt`), v0 by the concrete
 * instance (`<sled::Tree<u64>>::insert::<&[u8]>`, `<str>::len`,
 * `<&u8 as Debug>::fmt`). What both spell the same is the path of the item
 * and the outermost constructor of an impl's self type, so that is what a
 * display name keeps.
 *
 * The input is text, not a parsed symbol: it may come from anywhere (DWARF,
 * a symbol table, a user's probe spec), so every scan is bounded by the end
 * of the input, groups that never close end at the input's end, and
 * nesting deeper than MAX_DEPTH is flattened instead of recursed into. */
#include "symbols/demangle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* Qualified paths nest inside self types and traits; a name nested deeper
 * than this is hostile or machine-made, and gets the flat treatment. */
#define MAX_DEPTH 64

static bool starts(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

static bool ends_with(const struct strbuf *o, const char *word)
{
	size_t n = strlen(word);
	return o->len >= n && memcmp(o->s + o->len - n, word, n) == 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_ident_byte(char c)
{
	unsigned char u = (unsigned char)c;
	return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
	       u == '_' || u == '$' || u == '.' || u >= 0x80;
}

static bool is_opener(char c)
{
	return c == '<' || c == '(' || c == '[' || c == '{';
}

/* After a quote at p: a char literal ('x', '\'', '\u{1f980}') or a string
 * ("…" with \ escapes) as v0 const generics print them; a lone ' is a
 * lifetime ('a). Returns where the literal ends. */
static const char *skip_quoted(const char *p, const char *end)
{
	if (*p == '"') {
		for (const char *q = p + 1; q < end; q++) {
			if (*q == '\\' && q + 1 < end)
				q++;
			else if (*q == '"')
				return q + 1;
		}
		return end;
	}
	/* ' : a char literal closes within a short escape; a lifetime does not */
	const char *limit = end - p > 16 ? p + 16 : end;
	const char *q = p + 1;
	if (q < limit && *q == '\\')
		q += 2;
	else
		q++;
	while (q < limit && *q != '\'' && (*q == '{' || *q == '}' || is_hex(*q) || (*q & 0x80)))
		q++;
	if (q < limit && *q == '\'')
		return q + 1;
	return p + 1;
}

/* p is at an opener; returns the position just after its closer, or end
 * when it never closes. All bracket kinds share one depth (the input is not
 * trusted to pair them), and `->` is an arrow, not a closer. */
static const char *skip_group(const char *p, const char *end)
{
	size_t depth = 0;
	for (const char *q = p; q < end; q++) {
		char c = *q;
		if (is_opener(c)) {
			depth++;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			if (c == '>' && q > p && q[-1] == '-')
				continue;
			if (--depth == 0)
				return q + 1;
		} else if (c == '\'' || c == '"') {
			q = skip_quoted(q, end) - 1;
		}
	}
	return end;
}

/* The first top-level occurrence of word in [p, end), or NULL. */
static const char *find_top(const char *p, const char *end, const char *word)
{
	while (p < end) {
		if (starts(p, end, word))
			return p;
		if (is_opener(*p))
			p = skip_group(p, end);
		else if (*p == '\'' || *p == '"')
			p = skip_quoted(p, end);
		else
			p++;
	}
	return NULL;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return p;
}

static const char *trim_end(const char *p, const char *end)
{
	while (end > p && end[-1] == ' ')
		end--;
	return end;
}

/* The content of the group at p (an opener): [p + 1, close). */
static const char *group_inner_end(const char *p, const char *after)
{
	(void)p;
	return after > p + 1 && (after[-1] == '>' || after[-1] == ')' || after[-1] == ']' ||
				 after[-1] == '}') ? after - 1 : after;
}

static void emit_path(struct strbuf *o, const char *p, const char *end, int depth);
static void emit_type(struct strbuf *o, const char *p, const char *end, int depth);

/* Too deep to take apart: the text outside every group, which is what the
 * path names once its arguments are gone. Never recurses. */
static void emit_flat(struct strbuf *o, const char *p, const char *end)
{
	while (p < end) {
		if (is_opener(*p)) {
			p = skip_group(p, end);
			continue;
		}
		strbuf_add(o, p, 1);
		p++;
	}
}

/* A closure, shim or other compiler-made segment, `{…}` at p up to after:
 * legacy `{{closure}}`, `{{vtable.shim}}`; v0 `{closure#3}`,
 * `{shim:vtable#0}`; DWARF's `{closure_env#1}`. All become v0's words
 * without the index (legacy has none to give): `{closure}`, `{shim:vtable}`. */
static void emit_braces(struct strbuf *o, const char *p, const char *after)
{
	const char *b = p + 1, *e = group_inner_end(p, after);
	if (b < e && *b == '{') {
		b++;
		if (e > b && e[-1] == '}')
			e--;
	}
	const char *hash = e;
	while (hash > b && hash[-1] >= '0' && hash[-1] <= '9')
		hash--;
	if (hash > b && hash[-1] == '#')
		e = hash - 1;
	/* the words the two manglings disagree on */
	static const struct { const char *from, *to; } words[] = {
		{ "vtable.shim", "{shim:vtable}" },    /* legacy */
		{ "reify.shim", "{shim:reify}" },      /* legacy */
		{ "K", "{constant}" },                 /* v0's anonymous const, legacy {{constant}} */
		{ "closure_env", "{closure}" },        /* DWARF's name of a closure's type in an
							* instance's generic arguments */
	};
	size_t n = (size_t)(e - b);
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i].from) == n && memcmp(b, words[i].from, n) == 0) {
			strbuf_adds(o, words[i].to);
			return;
		}
	strbuf_add(o, "{", 1);
	emit_flat(o, b, e);
	strbuf_add(o, "}", 1);
}

/* A legacy hash segment: "h" and 16 hex digits, ending the name. */
static bool is_hash_segment(const char *p, const char *end)
{
	if (end - p != 17 || *p != 'h')
		return false;
	for (int i = 1; i < 17; i++)
		if (!is_hex(p[i]))
			return false;
	return true;
}

static bool is_fn_trait(const char *s, size_t n)
{
	static const char *const traits[] = {
		"core::ops::function::Fn", "core::ops::function::FnMut", "core::ops::function::FnOnce",
	};
	for (size_t i = 0; i < sizeof traits / sizeof traits[0]; i++)
		if (strlen(traits[i]) == n && memcmp(s, traits[i], n) == 0)
			return true;
	return false;
}

/* `<SELF as TRAIT>` (qualified) or `<SELF>` (inherent), content given; also
 * legacy's `<impl TRAIT for SELF>` and `<impl SELF>` through emit_impl. */
static void emit_qualified(struct strbuf *o, const char *self_b, const char *self_e,
			   const char *trait_b, const char *trait_e, int depth)
{
	self_b = skip_spaces(self_b, self_e);
	self_e = trim_end(self_b, self_e);
	if (!trait_b) {
		/* an inherent impl: `<a::Tree<K>>::insert` is `a::Tree::insert`;
		 * a self type that is not a path keeps the brackets (`<[_]>::iter`) */
		if (self_b < self_e && (is_ident_byte(*self_b) || *self_b == '<') &&
		    !find_top(self_b, self_e, " ")) {   /* a path, not `dyn Trait` */
			emit_path(o, self_b, self_e, depth + 1);
		} else {
			strbuf_add(o, "<", 1);
			emit_type(o, self_b, self_e, depth + 1);
			strbuf_add(o, ">", 1);
		}
		return;
	}
	struct strbuf self = {0}, trait = {0};
	emit_type(&self, self_b, self_e, depth + 1);
	emit_path(&trait, skip_spaces(trait_b, trait_e), trim_end(trait_b, trait_e), depth + 1);
	if (!strbuf_finish(&self) || !strbuf_finish(&trait)) {
		o->failed = true;
	} else if (is_fn_trait(trait.s, trait.len) && !(self.len && self.s[0] == '&') &&
		   strcmp(self.s, "alloc::boxed::Box") != 0) {
		/* Closures and fn items implement the Fn traits by compiler-made
		 * shims, which legacy names after the trait alone
		 * (`core::ops::function::FnOnce::call_once`): so does v0's
		 * `<main::{closure#0} as FnOnce<()>>::call_once`. Box and
		 * references have real impls and keep their self type. */
		strbuf_add(o, trait.s, trait.len);
	} else {
		strbuf_add(o, "<", 1);
		strbuf_add(o, self.s, self.len);
		strbuf_add(o, " as ", 4);
		strbuf_add(o, trait.s, trait.len);
		strbuf_add(o, ">", 1);
	}
	strbuf_release(&self);
	strbuf_release(&trait);
}

/* Content of `<...>` at the start of a path: `SELF as TRAIT` or `SELF`. */
static void emit_qself(struct strbuf *o, const char *b, const char *e, int depth)
{
	if (depth > MAX_DEPTH) {
		strbuf_add(o, "<", 1);
		emit_flat(o, b, e);
		strbuf_add(o, ">", 1);
		return;
	}
	const char *as = find_top(b, e, " as ");
	if (as)
		emit_qualified(o, b, as, as + 4, e, depth);
	else
		emit_qualified(o, b, e, NULL, NULL, depth);
}

/* Content of legacy's `<impl ...>` after "impl ": `TRAIT for SELF` or `SELF`. */
static void emit_impl(struct strbuf *o, const char *b, const char *e, int depth)
{
	if (depth > MAX_DEPTH) {
		emit_flat(o, b, e);
		return;
	}
	const char *for_ = find_top(b, e, " for ");
	if (for_)
		emit_qualified(o, for_ + 5, e, b, for_, depth);
	else
		emit_qualified(o, b, e, NULL, NULL, depth);
}

/* Generic arguments at p (up to after) are dropped, except drop glue's:
 * `core::ptr::drop_in_place` is one function per type, and the type is all
 * that tells them apart; both manglings name it, so its outermost
 * constructor stays: `core::ptr::drop_in_place<alloc::vec::Vec>`. */
static void emit_dropped_type(struct strbuf *o, size_t start, const char *p, const char *after,
			      int depth)
{
	static const char glue[] = "::drop_in_place";
	size_t n = sizeof glue - 1;
	if (o->len < start + n || memcmp(o->s + o->len - n, glue, n) != 0)
		return;
	strbuf_add(o, "<", 1);
	emit_type(o, p + 1, group_inner_end(p, after), depth + 1);
	strbuf_add(o, ">", 1);
}

/* A path: optional `<...>` qualified self, then segments. Generic
 * arguments (`Tree<K,V>`, v0's `::<u64>`), crate disambiguators
 * (`core[1a2b]`) and a legacy hash segment are dropped; closure and shim
 * segments are spelled one way; legacy's `a::b::<impl X>::f` restarts the
 * path at the impl, as v0's `<X>::f` does. */
static void emit_path(struct strbuf *o, const char *p, const char *end, int depth)
{
	if (depth > MAX_DEPTH) {
		emit_flat(o, p, end);
		return;
	}
	size_t start = o->len;
	if (p < end && *p == '<') {
		const char *after = skip_group(p, end);
		emit_qself(o, p + 1, group_inner_end(p, after), depth + 1);
		p = after;
	}
	while (p < end && !o->failed) {
		char c = *p;
		if (c == ':' && p + 1 < end && p[1] == ':') {
			const char *n = p + 2;
			if (is_hash_segment(n, end))
				break;
			if (n < end && *n == '<') {
				const char *after = skip_group(n, end);
				if (starts(n, end, "<impl ")) {
					o->len = start;
					if (o->s)
						o->s[start] = '\0';
					emit_impl(o, n + 6, group_inner_end(n, after), depth + 1);
				} else {
					/* v0 generic arguments: `::<u64>` */
					emit_dropped_type(o, start, n, after, depth);
				}
				p = after;
				continue;
			}
			strbuf_add(o, "::", 2);
			p = n;
			continue;
		}
		if (c == '<') {            /* generic arguments: `Tree<K,V>` */
			const char *after = skip_group(p, end);
			emit_dropped_type(o, start, p, after, depth);
			p = after;
			continue;
		}
		if (c == '{') {
			const char *after = skip_group(p, end);
			if (o->len > start && !ends_with(o, "::"))
				strbuf_add(o, "::", 2);     /* legacy: `call_once{{vtable.shim}}` */
			emit_braces(o, p, after);
			p = after;
			continue;
		}
		if (c == '[' && o->len > start && is_ident_byte(o->s[o->len - 1])) {
			const char *q = p + 1;
			while (q < end && is_hex(*q))
				q++;
			if (q > p + 1 && q < end && *q == ']') {
				p = q + 1;   /* v0 crate disambiguator */
				continue;
			}
		}
		strbuf_add(o, p, 1);
		p++;
	}
}

/* Counts the top-level elements of a tuple's content. */
static size_t tuple_arity(const char *b, const char *e, bool *trailing_comma)
{
	size_t n = 0;
	*trailing_comma = false;
	const char *p = skip_spaces(b, e);
	if (p >= e)
		return 0;
	n = 1;
	while (p < e) {
		if (is_opener(*p)) {
			p = skip_group(p, e);
		} else if (*p == '\'' || *p == '"') {
			p = skip_quoted(p, e);
		} else if (*p == ',') {
			p = skip_spaces(p + 1, e);
			if (p >= e)
				*trailing_comma = true;
			else
				n++;
		} else {
			p++;
		}
	}
	return n;
}

/* The self type of an impl, by its outermost constructor only: that is all
 * legacy and v0 agree on (legacy writes the impl's parameters, `&T`, where
 * v0 writes the instance, `&u8`). Paths lose their generic arguments;
 * references, pointers, slices, arrays and tuples show `_` inside. */
static void emit_type(struct strbuf *o, const char *p, const char *end, int depth)
{
	p = skip_spaces(p, end);
	end = trim_end(p, end);
	if (p >= end)
		return;
	if (depth > MAX_DEPTH) {
		emit_flat(o, p, end);
		return;
	}
	if (*p == '&') {
		strbuf_add(o, "&", 1);
		p++;
		if (p < end && *p == '\'') {     /* &'a T */
			p++;
			while (p < end && is_ident_byte(*p))
				p++;
			p = skip_spaces(p, end);
		}
		if (starts(p, end, "mut "))
			strbuf_adds(o, "mut ");
		strbuf_add(o, "_", 1);
		return;
	}
	if (starts(p, end, "*const ") || starts(p, end, "*mut ")) {
		strbuf_adds(o, p[1] == 'c' ? "*const _" : "*mut _");
		return;
	}
	if (*p == '[') {
		const char *after = skip_group(p, end);
		strbuf_adds(o, find_top(p + 1, group_inner_end(p, after), ";") ? "[_; _]" : "[_]");
		return;
	}
	if (*p == '(') {
		const char *after = skip_group(p, end);
		bool trailing;
		size_t n = tuple_arity(p + 1, group_inner_end(p, after), &trailing);
		strbuf_add(o, "(", 1);
		for (size_t i = 0; i < n && !o->failed; i++)
			strbuf_adds(o, i ? ", _" : "_");
		if (n == 1 && trailing)
			strbuf_add(o, ",", 1);
		strbuf_add(o, ")", 1);
		return;
	}
	if (starts(p, end, "dyn ")) {
		/* `dyn for<'a> Fn<(&'a u8,)> + Send`: the first bound's path */
		strbuf_adds(o, "dyn ");
		p = skip_spaces(p + 4, end);
		if (starts(p, end, "for<"))
			p = skip_spaces(skip_group(p + 3, end), end);
		const char *plus = find_top(p, end, "+");
		emit_path(o, p, trim_end(p, plus ? plus : end), depth + 1);
		return;
	}
	if (starts(p, end, "fn(") || starts(p, end, "unsafe ") || starts(p, end, "extern ") ||
	    starts(p, end, "for<")) {
		strbuf_adds(o, "fn");
		return;
	}
	emit_path(o, p, end, depth + 1);
}

char *demangle_display_name(const char *name)
{
	if (!name)
		return NULL;
	struct strbuf o = {0};
	size_t len = strlen(name);
	emit_path(&o, name, name + len, 0);
	return strbuf_finish(&o);
}

char *demangle_display_provided_method(const char *display, size_t *trait_len)
{
	if (!display || display[0] != '<')
		return NULL;
	const char *end = display + strlen(display);
	const char *after = skip_group(display, end);
	const char *close = group_inner_end(display, after);
	const char *as = find_top(display + 1, close, " as ");
	if (!as || close == after || !starts(after, end, "::"))
		return NULL;
	const char *trait = as + 4;
	size_t tn = (size_t)(close - trait), rn = (size_t)(end - after);
	char *out = malloc(tn + rn + 1);
	if (!out)
		return NULL;
	memcpy(out, trait, tn);
	memcpy(out + tn, after, rn + 1);
	*trait_len = tn;
	return out;
}
