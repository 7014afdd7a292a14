#include "recipe/recipe_lex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

void recipe_lexer_init(struct lexer *lx, const struct recipe_src *src,
		const struct recipe_defines *defs, struct diag_list *diags)
{
	lx->src = src;
	lx->pos = 0;
	lx->defs = defs;
	lx->diags = diags;
}

static int peekc(const struct lexer *lx, size_t ahead)
{
	size_t p = lx->pos + ahead;
	return p < lx->src->len ? (unsigned char)lx->src->text[p] : -1;
}

#define ERR(lx, off, len, ...) recipe_diag_add((lx)->diags, DIAG_ERROR, (lx)->src, (off), (len), __VA_ARGS__)

static bool ident_start(int c) { return c == '_' || (c >= 0 && c < 128 && isalpha(c)); }
static bool ident_char(int c) { return c == '_' || (c >= 0 && c < 128 && isalnum(c)); }

static void skip_space(struct lexer *lx)
{
	for (;;) {
		int c = peekc(lx, 0);
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '#' || (c == '/' && peekc(lx, 1) == '/')) {
			while (lx->pos < lx->src->len && lx->src->text[lx->pos] != '\n')
				lx->pos++;
		} else if (c == '/' && peekc(lx, 1) == '*') {
			size_t start = lx->pos;
			lx->pos += 2;
			while (lx->pos < lx->src->len &&
			       !(lx->src->text[lx->pos] == '*' && peekc(lx, 1) == '/'))
				lx->pos++;
			if (lx->pos >= lx->src->len) {
				ERR(lx, start, 2, "unterminated comment: '/*' has no matching '*/'");
				return;
			}
			lx->pos += 2;
		} else {
			return;
		}
	}
}

/* Looks NAME up in the defines. The text of the reference is
 * "NAME" or "NAME:-default" (already without "${" and "}"). */
static const char *define_lookup(const struct lexer *lx, const char *ref, char **owned_default)
{
	*owned_default = NULL;
	const char *dflt = strstr(ref, ":-");
	size_t nlen = dflt ? (size_t)(dflt - ref) : strlen(ref);
	for (size_t i = lx->defs ? lx->defs->n : 0; i-- > 0;)
		if (strlen(lx->defs->names[i]) == nlen && !strncmp(lx->defs->names[i], ref, nlen))
			return lx->defs->values[i];
	if (dflt) {
		*owned_default = strdup(dflt + 2);
		return *owned_default;
	}
	return NULL;
}

/* At "${": reads the reference, reports errors, returns the expansion
 * (malloc'd) or NULL. Leaves pos after the '}'. */
static char *expand_define(struct lexer *lx)
{
	size_t start = lx->pos;
	lx->pos += 2;
	struct strbuf name = {0};
	while (lx->pos < lx->src->len && lx->src->text[lx->pos] != '}' && lx->src->text[lx->pos] != '\n'
	       && lx->src->text[lx->pos] != '"')
		strbuf_addc(&name, lx->src->text[lx->pos++]);
	if (peekc(lx, 0) != '}') {
		ERR(lx, start, lx->pos - start, "unterminated '${': write ${NAME}");
		strbuf_release(&name);
		return NULL;
	}
	lx->pos++;
	char *ref = strbuf_finish(&name);
	if (!ref)
		return NULL;
	size_t nlen = strcspn(ref, ":");
	bool valid = nlen > 0 && ident_start((unsigned char)ref[0]);
	for (size_t i = 1; i < nlen; i++)
		valid = valid && ident_char((unsigned char)ref[i]);
	if (ref[nlen] && strncmp(ref + nlen, ":-", 2))
		valid = false;
	if (!valid) {
		ERR(lx, start, lx->pos - start, "bad define reference '${%s}': write ${NAME} or ${NAME:-default}", ref);
		free(ref);
		return NULL;
	}
	char *dflt;
	const char *v = define_lookup(lx, ref, &dflt);
	if (!v && lx->defs && lx->defs->placeholders) {
		ref[nlen] = 0;
		return ref;
	}
	if (!v) {
		ERR(lx, start, lx->pos - start, "'%.*s' is not defined: pass -D %.*s=VALUE (or write ${%.*s:-DEFAULT})",
		    (int)nlen, ref, (int)nlen, ref, (int)nlen, ref);
		free(ref);
		return NULL;
	}
	char *out = strdup(v);
	free(dflt);
	free(ref);
	return out;
}

static const struct {
	const char *suffix;
	int64_t mult;
} duration_units[] = {
	{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000LL},
	{"m", 60000000000LL}, {"h", 3600000000000LL},
};

/* Returns 1 duration, 2 frequency, 0 unknown suffix. */
static int apply_suffix(const char *suf, int64_t v, int64_t *out, bool *overflow)
{
	*overflow = false;
	if (!strcmp(suf, "hz") || !strcmp(suf, "Hz")) {
		*out = v;
		return 2;
	}
	for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
		if (strcmp(suf, duration_units[i].suffix))
			continue;
		if (v > INT64_MAX / duration_units[i].mult)
			*overflow = true;
		else
			*out = v * duration_units[i].mult;
		return 1;
	}
	return 0;
}

int recipe_lex_parse_duration(const char *text, int64_t *ns)
{
	int64_t v = 0;
	const char *p = text;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	bool overflow;
	if (!*p) {
		*ns = v;   /* bare number: nanoseconds */
		return 0;
	}
	return apply_suffix(p, v, ns, &overflow) == 1 && !overflow ? 0 : -1;
}

static void lex_number(struct lexer *lx, struct token *t)
{
	size_t start = lx->pos;
	int64_t v = 0;
	bool overflow = false;
	const char *s = lx->src->text;
	if (peekc(lx, 0) == '0' && (peekc(lx, 1) == 'x' || peekc(lx, 1) == 'X')) {
		lx->pos += 2;
		size_t digits = 0;
		while (lx->pos < lx->src->len && isxdigit((unsigned char)s[lx->pos])) {
			int d = isdigit((unsigned char)s[lx->pos]) ? s[lx->pos] - '0'
				: tolower((unsigned char)s[lx->pos]) - 'a' + 10;
			if (v > (INT64_MAX - d) / 16)
				overflow = true;
			else
				v = v * 16 + d;
			lx->pos++;
			digits++;
		}
		if (!digits)
			ERR(lx, start, lx->pos - start, "hexadecimal literal needs digits after '0x'");
	} else {
		while (lx->pos < lx->src->len && isdigit((unsigned char)s[lx->pos])) {
			int d = s[lx->pos] - '0';
			if (v > (INT64_MAX - d) / 10)
				overflow = true;
			else
				v = v * 10 + d;
			lx->pos++;
		}
	}
	t->kind = TK_INT;
	size_t suf_start = lx->pos;
	while (lx->pos < lx->src->len && ident_char((unsigned char)s[lx->pos]))
		lx->pos++;
	t->loc.off = start;
	t->loc.len = lx->pos - start;
	if (overflow) {
		ERR(lx, start, t->loc.len, "integer literal is too large (the maximum is 9223372036854775807)");
		t->kind = TK_ERROR;
		return;
	}
	t->i = v;
	if (peekc(lx, 0) == '.' && peekc(lx, 1) >= '0' && peekc(lx, 1) <= '9') {
		ERR(lx, start, t->loc.len + 2, "fractional numbers are not supported: use a smaller unit (1500ms, not 1.5s)");
		lx->pos++;
		while (lx->pos < lx->src->len && ident_char((unsigned char)s[lx->pos]))
			lx->pos++;
		t->loc.len = lx->pos - start;
		t->kind = TK_ERROR;
		return;
	}
	if (suf_start == lx->pos)
		return;
	char suf[16];
	size_t n = lx->pos - suf_start;
	if (n >= sizeof suf) {
		n = sizeof suf - 1;
	}
	memcpy(suf, s + suf_start, n);
	suf[n] = 0;
	if (peekc(lx, 0) == '.' && isdigit(peekc(lx, 1))) {
		ERR(lx, start, t->loc.len, "fractional numbers are not supported: use a smaller unit (1500ms, not 1.5s)");
		t->kind = TK_ERROR;
		return;
	}
	bool ovf;
	int64_t out = 0;
	int kind = lx->pos - suf_start < sizeof suf ? apply_suffix(suf, v, &out, &ovf) : 0;
	if (kind == 0) {
		ERR(lx, suf_start, lx->pos - suf_start,
		    "invalid suffix '%.*s' on number: durations take ns, us, ms, s, m or h; frequencies take hz",
		    (int)(lx->pos - suf_start), s + suf_start);
		t->kind = TK_ERROR;
		return;
	}
	if (kind == 1 && ovf) {
		ERR(lx, start, t->loc.len, "duration is too large (the maximum is about 292 years)");
		t->kind = TK_ERROR;
		return;
	}
	t->kind = kind == 1 ? TK_DURATION : TK_FREQ;
	t->i = out;
}

/* At "${" inside a string or regex: appends the expansion to b. Returns
 * false when the reference was bad (and reported). */
static bool put_define(struct lexer *lx, struct strbuf *b)
{
	char *v = expand_define(lx);
	bool ok = v != NULL;
	if (ok)
		strbuf_adds(b, v);
	free(v);
	return ok;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

enum literal_step { LITERAL_END, LITERAL_SPLICED, LITERAL_CHAR };

/* One step through a string or regex literal, which ends on its line at
 * `close`: LITERAL_END at the closing character (eaten) or at the end of the
 * line (then reported as `unterminated`, and *bad set); LITERAL_SPLICED once
 * a ${NAME} define went into b (*bad set if it could not); else
 * LITERAL_CHAR, the character at lx->pos (not eaten) in *c. */
static enum literal_step literal_step(struct lexer *lx, size_t start, char close, const char *unterminated,
				      struct strbuf *b, bool *bad, int *c)
{
	*c = peekc(lx, 0);
	if (*c < 0 || *c == '\n') {
		ERR(lx, start, 1, "%s", unterminated);
		*bad = true;
		return LITERAL_END;
	}
	if (*c == close) {
		lx->pos++;
		return LITERAL_END;
	}
	if (*c == '$' && peekc(lx, 1) == '{') {
		if (!put_define(lx, b))
			*bad = true;
		return LITERAL_SPLICED;
	}
	return LITERAL_CHAR;
}

static void lex_string(struct lexer *lx, struct token *t)
{
	size_t start = lx->pos++;
	struct strbuf b = {0};
	bool bad = false;
	for (;;) {
		int c;
		enum literal_step step = literal_step(lx, start, '"',
			"unterminated string: add the closing '\"' on the same line", &b, &bad, &c);
		if (step == LITERAL_END)
			break;
		if (step == LITERAL_SPLICED)
			continue;
		if (c != '\\') {
			if (c == 0) {
				ERR(lx, lx->pos, 1, "NUL byte inside a string");
				bad = true;
			}
			strbuf_addc(&b, (char)c);
			lx->pos++;
			continue;
		}
		size_t esc = lx->pos;
		int e = peekc(lx, 1);
		lx->pos += 2;
		switch (e) {
		case 'n': strbuf_addc(&b, '\n'); break;
		case 't': strbuf_addc(&b, '\t'); break;
		case 'r': strbuf_addc(&b, '\r'); break;
		case 'e': strbuf_addc(&b, 27); break;
		case '\\': strbuf_addc(&b, '\\'); break;
		case '"': strbuf_addc(&b, '"'); break;
		case '$': strbuf_addc(&b, '$'); break;
		case 'x': {
			int h1 = hexval(peekc(lx, 0)), h2 = hexval(peekc(lx, 1));
			if (h1 < 0 || h2 < 0 || (h1 == 0 && h2 == 0)) {
				ERR(lx, esc, 2, "'\\x' needs two hex digits (and not 00)");
				bad = true;
				break;
			}
			strbuf_addc(&b, (char)(h1 * 16 + h2));
			lx->pos += 2;
			break;
		}
		default:
			if (e < 0 || e == '\n') {
				lx->pos = esc + 1;
				continue;
			}
			ERR(lx, esc, 2, "unknown escape '\\%c': use \\n \\t \\r \\e \\\\ \\\" \\$ or \\xNN",
			    e >= 32 && e < 127 ? e : '?');
			bad = true;
		}
	}
	t->kind = bad ? TK_ERROR : TK_STRING;
	t->s = strbuf_finish(&b);
	t->loc.off = start;
	t->loc.len = lx->pos - start;
}

void recipe_lex_regex(struct lexer *lx, size_t start, struct token *t)
{
	struct strbuf b = {0};
	bool bad = false;
	memset(t, 0, sizeof *t);
	for (;;) {
		int c;
		enum literal_step step = literal_step(lx, start, '/',
			"unterminated regex: add the closing '/' on the same line (write '\\/' for a slash)", &b, &bad,
			&c);
		if (step == LITERAL_END)
			break;
		if (step == LITERAL_SPLICED)
			continue;
		if (c == '\\' && peekc(lx, 1) == '/') {
			strbuf_addc(&b, '/');
			lx->pos += 2;
			continue;
		}
		if (c == '\\' && peekc(lx, 1) >= 0 && peekc(lx, 1) != '\n') {
			strbuf_addc(&b, '\\');
			strbuf_addc(&b, (char)peekc(lx, 1));
			lx->pos += 2;
			continue;
		}
		strbuf_addc(&b, (char)c);
		lx->pos++;
	}
	t->kind = bad ? TK_ERROR : TK_REGEX;
	t->s = strbuf_finish(&b);
	t->loc.off = start;
	t->loc.len = lx->pos - start;
}

static size_t utf8_len(const char *p, size_t avail)
{
	unsigned char c = (unsigned char)p[0];
	size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	return n <= avail ? n : avail;
}

void recipe_lex_next(struct lexer *lx, struct token *t)
{
	memset(t, 0, sizeof *t);
	skip_space(lx);
	size_t start = lx->pos;
	t->loc.off = start;
	if (lx->pos >= lx->src->len) {
		t->kind = TK_EOF;
		return;
	}
	const char *s = lx->src->text;
	int c = peekc(lx, 0);
	if (isdigit(c)) {
		lex_number(lx, t);
		return;
	}
	if (c == '"') {
		lex_string(lx, t);
		return;
	}
	if (ident_start(c) || ((c == '$' || c == '@') && (ident_start(peekc(lx, 1)) || isdigit(peekc(lx, 1))))
	    || c == '@') {
		if (c == '$' || c == '@')
			lx->pos++;
		size_t name = lx->pos;
		for (;;) {
			while (lx->pos < lx->src->len && ident_char((unsigned char)s[lx->pos]))
				lx->pos++;
			/* dotted builtin names (thread.id) are one identifier */
			if (c != '$' && c != '@' && peekc(lx, 0) == '.' && ident_start(peekc(lx, 1))) {
				lx->pos++;
				continue;
			}
			break;
		}
		t->kind = c == '$' ? TK_VAR : c == '@' ? TK_MAP : TK_IDENT;
		t->s = strndup(s + name, lx->pos - name);
		t->loc.len = lx->pos - start;
		return;
	}
	if (c == '$' && peekc(lx, 1) == '{') {
		char *v = expand_define(lx);
		t->loc.len = lx->pos - start;
		if (!v) {
			t->kind = TK_ERROR;
			return;
		}
		int64_t n;
		char *end;
		long long ll = strtoll(v, &end, 10);
		if (*v && isdigit((unsigned char)*v) && !*end) {
			t->kind = TK_INT;
			t->i = ll;
			free(v);
		} else if (recipe_lex_parse_duration(v, &n) == 0) {
			t->kind = TK_DURATION;
			t->i = n;
			free(v);
		} else {
			t->kind = TK_STRING;
			t->s = v;
		}
		return;
	}
	static const struct {
		const char *text;
		int op;
	} two[] = {
		{"||", OP_OR}, {"&&", OP_AND}, {"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE},
		{">=", OP_GE}, {"=~", '~'}, {"!~", 'n'},
	};
	t->kind = TK_OP;
	for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
		if (c == two[i].text[0] && peekc(lx, 1) == two[i].text[1]) {
			t->op = two[i].op;
			lx->pos += 2;
			t->loc.len = 2;
			return;
		}
	}
	if (strchr("{}()[],;=<>+-*/%!?:.", c) && c) {
		t->op = c;
		lx->pos++;
		t->loc.len = 1;
		return;
	}
	size_t n = utf8_len(s + lx->pos, lx->src->len - lx->pos);
	if (c >= 0x80)
		ERR(lx, start, n, "unexpected character '%.*s'", (int)n, s + lx->pos);
	else if (c >= 32 && c < 127)
		ERR(lx, start, 1, "unexpected character '%c'", c);
	else
		ERR(lx, start, 1, "unexpected control character 0x%02x", c);
	lx->pos += n;
	t->kind = TK_ERROR;
	t->loc.len = n;
}
