/* recipe_parse.c — recursive descent parser for recipes.
 *
 * Error recovery: the first error inside a statement is reported, the rest
 * of the statement is skipped (to ';' or the closing '}'), and parsing goes
 * on, so one run reports every independent error. Nesting is bounded
 * (MAX_DEPTH) so hostile input cannot exhaust the C stack.
 */
#include "recipe/recipe_lex.h"
#include "symbols/name_pattern.h"
#include "util/array.h"

#include <stdlib.h>
#include <string.h>

static void stmt_list_free(struct stmt_list *l);

static void expr_free(struct expr *e);

#define MAX_DEPTH 200

struct parser {
	struct lexer lx;
	struct token tok;
	const struct recipe_src *src;
	struct diag_list *diags;
	size_t errors_at_start;
	int depth;
	bool in_pred;       /* '/' ends a predicate unless inside parentheses */
	int parens;
	bool failed;        /* an error in the current statement was reported */
	size_t prev_end;    /* end offset of the last consumed token */
};

static const char *const probe_keywords[] = {
	"begin", "end", "sample", "interval", "function", "return", "panic", "syscall",
	"syscall_entry", "syscall_site", NULL,
};

#define ERR(p, loc, ...) recipe_diag_add((p)->diags, DIAG_ERROR, (p)->src, (loc).off, (loc).len, __VA_ARGS__)

static void advance(struct parser *p)
{
	p->prev_end = p->tok.loc.off + p->tok.loc.len;
	free(p->tok.s);
	recipe_lex_next(&p->lx, &p->tok);
}

static bool is_op(const struct parser *p, int op)
{
	return p->tok.kind == TK_OP && p->tok.op == op;
}

static bool is_ident(const struct parser *p, const char *name)
{
	return p->tok.kind == TK_IDENT && !strcmp(p->tok.s, name);
}

static char *steal(struct parser *p)
{
	char *s = p->tok.s;
	p->tok.s = NULL;
	return s ? s : strdup("");
}

static const char *describe(const struct token *t)
{
	static char buf[64];
	switch (t->kind) {
	case TK_EOF: return "end of file";
	case TK_IDENT: snprintf(buf, sizeof buf, "'%.40s'", t->s); return buf;
	case TK_INT: case TK_DURATION: case TK_FREQ: return "a number";
	case TK_STRING: return "a string";
	case TK_VAR: snprintf(buf, sizeof buf, "'$%.40s'", t->s); return buf;
	case TK_MAP: snprintf(buf, sizeof buf, "'@%.40s'", t->s); return buf;
	case TK_REGEX: return "a regex";
	case TK_ERROR: return "a bad token";
	case TK_OP: break;
	}
	switch (t->op) {
	case OP_OR: return "'||'";
	case OP_AND: return "'&&'";
	case OP_EQ: return "'=='";
	case OP_NE: return "'!='";
	case OP_LE: return "'<='";
	case OP_GE: return "'>='";
	case '~': return "'=~'";
	case 'n': return "'!~'";
	}
	snprintf(buf, sizeof buf, "'%c'", t->op);
	return buf;
}

/* Reports "expected X" once per statement; bad tokens were already reported. */
static void expected(struct parser *p, const char *what)
{
	if (!p->failed && p->tok.kind != TK_ERROR)
		ERR(p, p->tok.loc, "expected %s, found %s", what, describe(&p->tok));
	p->failed = true;
}

static bool expect_op(struct parser *p, int op, const char *what)
{
	if (is_op(p, op)) {
		advance(p);
		return true;
	}
	expected(p, what);
	return false;
}

static struct expr *new_expr(enum expr_kind k, struct loc loc)
{
	struct expr *e = calloc(1, sizeof *e);
	if (e) {
		e->kind = k;
		e->loc = loc;
		e->slot = -1;
		e->builtin = -1;
	}
	return e;
}

static struct loc span(struct loc a, struct loc b)
{
	struct loc l = {a.off, b.off + b.len > a.off ? b.off + b.len - a.off : a.len};
	return l;
}

static bool push_arg(struct expr *e, struct expr *a)
{
	return ARRAY_PUSH(e->args, e->nargs, e->args_cap, a) == 0;
}

static struct expr *parse_expr(struct parser *p);

static bool enter(struct parser *p)
{
	if (++p->depth > MAX_DEPTH) {
		if (!p->failed)
			ERR(p, p->tok.loc, "nesting is too deep (the limit is %d levels)", MAX_DEPTH);
		p->failed = true;
		return false;
	}
	return true;
}

/* Comma separated arguments of call up to `close`; the opening bracket is
 * consumed. With options non-NULL, name=value arguments go to its named. */
static bool parse_args(struct parser *p, int close, struct expr *call, struct stmt *options)
{
	int saved_parens = p->parens;
	p->parens = 1;
	bool ok = true;
	if (!is_op(p, close)) {
		for (;;) {
			if (options && p->tok.kind == TK_IDENT) {
				/* name=value (report options) — need to look one token ahead */
				struct lexer save = p->lx;
				struct token next;
				recipe_lex_next(&p->lx, &next);
				bool is_named = next.kind == TK_OP && next.op == '=';
				free(next.s);
				p->lx = save;
				if (is_named) {
					struct named_arg na = {0};
					na.loc = p->tok.loc;
					na.name = steal(p);
					advance(p);   /* name */
					advance(p);   /* '=' */
					na.value = parse_expr(p);
					if (!na.value ||
					    ARRAY_PUSH(options->named, options->nnamed, options->named_cap, na) < 0) {
						free(na.name);
						expr_free(na.value);
						ok = false;
						break;
					}
					goto next_arg;
				}
			}
			if (options && options->nnamed) {
				if (!p->failed)
					ERR(p, p->tok.loc, "positional arguments must come before name=value options");
				p->failed = true;
				ok = false;
				break;
			}
			struct expr *a = parse_expr(p);
			if (!a || !push_arg(call, a)) {
				expr_free(a);
				ok = false;
				break;
			}
		next_arg:
			if (!is_op(p, ','))
				break;
			advance(p);
		}
	}
	p->parens = saved_parens;
	if (!ok)
		return false;
	return expect_op(p, close, close == ')' ? "',' or ')'" : "',' or ']'");
}

/* The current token as an expression of kind k holding its text; moves on
 * (NULL, staying, out of memory). */
static struct expr *text_expr(struct parser *p, enum expr_kind k)
{
	struct expr *e = new_expr(k, p->tok.loc);
	if (!e)
		return NULL;
	e->s = steal(p);
	advance(p);
	return e;
}

static struct expr *parse_primary(struct parser *p)
{
	struct token *t = &p->tok;
	struct expr *e = NULL;
	switch (t->kind) {
	case TK_INT:
	case TK_DURATION:
	case TK_FREQ:
		e = new_expr(E_INT, t->loc);
		if (e)
			e->i = t->i;
		advance(p);
		return e;
	case TK_STRING:
		return text_expr(p, E_STR);
	case TK_VAR:
		return text_expr(p, E_VAR);
	case TK_MAP:
		e = text_expr(p, E_MAP);
		if (!e)
			return NULL;
		if (is_op(p, '[')) {
			advance(p);
			if (is_op(p, ']')) {
				expected(p, "a key inside '[]'");
				expr_free(e);
				return NULL;
			}
			if (!parse_args(p, ']', e, NULL)) {
				expr_free(e);
				return NULL;
			}
			e->loc.len = p->prev_end - e->loc.off;
		}
		return e;
	case TK_IDENT:
		e = text_expr(p, E_IDENT);
		if (!e)
			return NULL;
		if (is_op(p, '(')) {
			e->kind = E_CALL;
			advance(p);
			if (!parse_args(p, ')', e, NULL)) {
				expr_free(e);
				return NULL;
			}
		}
		return e;
	case TK_OP:
		if (t->op == '(') {
			advance(p);
			int saved = p->parens;
			p->parens = 1;
			e = parse_expr(p);
			p->parens = saved;
			if (!e)
				return NULL;
			if (!expect_op(p, ')', "')'")) {
				expr_free(e);
				return NULL;
			}
			return e;
		}
		break;
	default:
		break;
	}
	expected(p, "an expression");
	return NULL;
}

static struct expr *parse_unary(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct expr *e;
	if (is_op(p, '!') || is_op(p, '-')) {
		struct loc loc = p->tok.loc;
		int op = p->tok.op;
		advance(p);
		struct expr *a = parse_unary(p);
		if (!a) {
			p->depth--;
			return NULL;
		}
		if (op == '-' && a->kind == E_INT) {
			a->i = -a->i;
			a->loc = span(loc, a->loc);
			p->depth--;
			return a;
		}
		e = new_expr(E_UNARY, span(loc, a->loc));
		if (!e) {
			expr_free(a);
			p->depth--;
			return NULL;
		}
		e->op = op;
		e->a = a;
	} else {
		e = parse_primary(p);
	}
	p->depth--;
	return e;
}

static int binary_prec(const struct parser *p)
{
	if (p->tok.kind != TK_OP)
		return -1;
	switch (p->tok.op) {
	case OP_OR: return 1;
	case OP_AND: return 2;
	case OP_EQ: case OP_NE: case '<': case '>': case OP_LE: case OP_GE: case '~': case 'n': return 3;
	case '+': case '-': return 4;
	case '*': case '%': return 5;
	case '/': return p->in_pred && p->parens == 0 ? -1 : 5;
	}
	return -1;
}

static struct expr *parse_binary(struct parser *p, int min_prec)
{
	struct expr *lhs = parse_unary(p);
	while (lhs) {
		int prec = binary_prec(p);
		if (prec < min_prec)
			break;
		int op = p->tok.op;
		struct loc oploc = p->tok.loc;
		if (op == '~' || op == 'n') {
			if (lhs->kind == E_MATCH) {
				ERR(p, oploc, "regex matches do not chain: use && between them");
				p->failed = true;
				expr_free(lhs);
				return NULL;
			}
			advance(p);
			if (!is_op(p, '/')) {
				expected(p, "a regex like /pattern/ after '=~' or '!~'");
				expr_free(lhs);
				return NULL;
			}
			struct token rt;
			recipe_lex_regex(&p->lx, p->tok.loc.off, &rt);
			struct expr *m = new_expr(E_MATCH, span(lhs->loc, rt.loc));
			if (rt.kind == TK_ERROR || !m) {
				p->failed = true;
				free(rt.s);
				free(m);
				expr_free(lhs);
				advance(p);
				return NULL;
			}
			m->op = op;
			m->a = lhs;
			m->s = rt.s;
			m->i = (int64_t)rt.loc.off;   /* where the pattern starts, for regex errors */
			m->b = NULL;
			advance(p);
			lhs = m;
			continue;
		}
		advance(p);
		if (!enter(p)) {
			expr_free(lhs);
			return NULL;
		}
		struct expr *rhs = parse_binary(p, prec + 1);
		p->depth--;
		if (!rhs) {
			expr_free(lhs);
			return NULL;
		}
		struct expr *e = new_expr(E_BINARY, span(lhs->loc, rhs->loc));
		if (!e) {
			expr_free(lhs);
			expr_free(rhs);
			return NULL;
		}
		(void)oploc;
		e->op = op;
		e->a = lhs;
		e->b = rhs;
		lhs = e;
	}
	return lhs;
}

static struct expr *parse_expr(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct expr *c = parse_binary(p, 1);
	if (c && is_op(p, '?')) {
		advance(p);
		struct expr *e = new_expr(E_COND, c->loc);
		if (!e) {
			expr_free(c);
			p->depth--;
			return NULL;
		}
		e->a = c;
		int saved = p->parens;
		p->parens = 1;
		e->b = parse_expr(p);
		p->parens = saved;
		if (!e->b || !expect_op(p, ':', "':' of the conditional")) {
			expr_free(e);
			p->depth--;
			return NULL;
		}
		struct expr *f = parse_expr(p);
		if (!f || !push_arg(e, f)) {
			expr_free(f);
			expr_free(e);
			p->depth--;
			return NULL;
		}
		e->loc = span(c->loc, f->loc);
		c = e;
	}
	p->depth--;
	return c;
}

/* ---- statements ------------------------------------------------------- */

static bool push_stmt(struct stmt_list *l, struct stmt *s)
{
	return ARRAY_PUSH(l->v, l->n, l->cap, s) == 0;
}

/* Skips to the end of the broken statement: past ';', or up to the '}'
 * closing the current block. */
static void sync_statement(struct parser *p)
{
	int depth = 0;
	while (p->tok.kind != TK_EOF) {
		if (is_op(p, '{'))
			depth++;
		else if (is_op(p, '}')) {
			if (depth == 0)
				return;
			depth--;
		} else if (is_op(p, ';') && depth == 0) {
			advance(p);
			return;
		}
		advance(p);
	}
}

static bool parse_block(struct parser *p, struct stmt_list *out);

static struct stmt *new_stmt(enum stmt_kind k, struct loc loc)
{
	struct stmt *s = calloc(1, sizeof *s);
	if (s) {
		s->kind = k;
		s->loc = loc;
	}
	return s;
}

static void stmt_free(struct stmt *s);

static struct stmt *parse_if(struct parser *p)
{
	struct stmt *s = new_stmt(S_IF, p->tok.loc);
	if (!s)
		return NULL;
	advance(p);
	s->cond = parse_expr(p);
	if (!s->cond)
		goto fail;
	if (!is_op(p, '{')) {
		expected(p, "'{' after the if condition");
		goto fail;
	}
	if (!parse_block(p, &s->then))
		goto fail;
	if (is_ident(p, "else")) {
		advance(p);
		if (is_ident(p, "if")) {
			if (!enter(p))
				goto fail;
			struct stmt *elif = parse_if(p);
			p->depth--;
			if (!elif)
				goto fail;
			push_stmt(&s->els, elif);
		} else if (!is_op(p, '{')) {
			expected(p, "'{' or 'if' after else");
			goto fail;
		} else if (!parse_block(p, &s->els)) {
			goto fail;
		}
	}
	return s;
fail:
	stmt_free(s);
	return NULL;
}

static struct stmt *parse_statement(struct parser *p)
{
	struct token *t = &p->tok;
	struct stmt *s = NULL;
	if (is_ident(p, "if"))
		return parse_if(p);
	if (t->kind == TK_MAP || t->kind == TK_VAR) {
		bool is_map = t->kind == TK_MAP;
		struct expr *target = parse_primary(p);
		if (!target)
			return NULL;
		size_t op_end = p->tok.loc.off + 1;
		if ((is_op(p, '+') || is_op(p, '-')) && op_end < p->src->len &&
		    strchr("+-=", p->src->text[op_end])) {
			/* bpftrace's $x++ and @n += 1 */
			ERR(p, p->tok.loc, "no ++, --, += or -= here: write %s", is_map
			    ? "@m[key] = count() to count, or @m[key] = sum(N) to add up"
			    : "$x = $x + 1");
			p->failed = true;
			expr_free(target);
			return NULL;
		}
		if (!is_op(p, '=')) {
			expected(p, is_map ? "'=' after the map (write @m[key] = count())"
				 : "'=' after the variable");
			expr_free(target);
			return NULL;
		}
		advance(p);
		s = new_stmt(is_map ? S_MAP_ASSIGN : S_VAR_ASSIGN, target->loc);
		if (!s) {
			expr_free(target);
			return NULL;
		}
		s->target = target;
		s->value = parse_expr(p);
		if (!s->value) {
			stmt_free(s);
			return NULL;
		}
		s->loc = span(target->loc, s->value->loc);
		return s;
	}
	if (t->kind == TK_IDENT) {
		struct expr *call = new_expr(E_CALL, t->loc);
		if (!call)
			return NULL;
		call->s = steal(p);
		advance(p);
		s = new_stmt(S_CALL, call->loc);
		if (!s) {
			expr_free(call);
			return NULL;
		}
		s->call = call;
		if (!is_op(p, '(')) {
			if (!strcmp(call->s, "exit"))
				return s;   /* `exit;` reads naturally too */
			if (!p->failed)
				ERR(p, call->loc, "expected a statement: '%s' is not followed by '('", call->s);
			p->failed = true;
			stmt_free(s);
			return NULL;
		}
		advance(p);
		if (!parse_args(p, ')', call, s)) {
			stmt_free(s);
			return NULL;
		}
		return s;
	}
	expected(p, "a statement (@map = ..., $var = ..., if, print, printf, ...)");
	return NULL;
}

/* At '{': parses statements up to the matching '}'. */
static bool parse_block(struct parser *p, struct stmt_list *out)
{
	struct loc open = p->tok.loc;
	size_t errors_before = p->diags->errors;
	if (!enter(p))
		return false;
	advance(p);
	for (;;) {
		while (is_op(p, ';'))
			advance(p);
		if (is_op(p, '}')) {
			advance(p);
			break;
		}
		if (p->tok.kind == TK_EOF) {
			/* after another error in the block, the missing '}' is usually its echo */
			if (p->diags->errors == errors_before)
				ERR(p, open, "unterminated block: this '{' has no matching '}'");
			p->depth--;
			return false;
		}
		if (p->depth > MAX_DEPTH - 2 && is_ident(p, "if")) {
			enter(p);
			p->depth--;
		}
		p->failed = false;
		struct stmt *s = parse_statement(p);
		if (!s) {
			sync_statement(p);
			continue;
		}
		push_stmt(out, s);
		if (s->kind == S_IF)
			continue;
		if (is_op(p, ';')) {
			advance(p);
		} else if (!is_op(p, '}')) {
			if (p->tok.kind != TK_ERROR)
				ERR(p, p->tok.loc, "expected ';' after the statement, found %s", describe(&p->tok));
			p->failed = true;
			sync_statement(p);
		}
	}
	p->depth--;
	return true;
}

/* ---- top level --------------------------------------------------------- */

static bool spec_is_fileline(const char *s)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || colon[-1] == ':' || !colon[1])
		return false;
	for (const char *c = colon + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

static bool parse_spec(struct parser *p, struct probe *pr, bool allow_fileline)
{
	pr->spec_loc = p->tok.loc;
	if (p->tok.kind == TK_STRING || p->tok.kind == TK_IDENT) {
		bool quoted = p->tok.kind == TK_STRING;
		pr->spec = steal(p);
		pr->spec_kind = quoted && spec_is_fileline(pr->spec) ? PROBE_SPEC_FILELINE : PROBE_SPEC_NAME;
		if (pr->spec_kind == PROBE_SPEC_FILELINE) {
			const char *colon = strrchr(pr->spec, ':');
			pr->spec_file = strndup(pr->spec, (size_t)(colon - pr->spec));
			pr->spec_line = atoi(colon + 1);
			if (pr->spec_line <= 0 && allow_fileline) {
				ERR(p, pr->spec_loc, "line numbers start at 1");
				return false;
			}
		}
		if (pr->spec_kind == PROBE_SPEC_FILELINE && !allow_fileline) {
			ERR(p, pr->spec_loc, "a syscall is named, not located: write syscall read");
			return false;
		}
		if (!*pr->spec) {
			ERR(p, pr->spec_loc, "empty probe spec: name a function");
			return false;
		}
		const char *problem = allow_fileline && pr->spec_kind == PROBE_SPEC_NAME
					      ? name_pattern_problem(pr->spec) : NULL;
		if (problem) {
			ERR(p, pr->spec_loc, "%s", problem);
			return false;
		}
		advance(p);
		if (!quoted && is_op(p, ':')) {
			ERR(p, pr->spec_loc, "quote names containing '::': write \"%s::...\"", pr->spec);
			return false;
		}
		return true;
	}
	if (is_op(p, '/')) {
		struct token rt;
		recipe_lex_regex(&p->lx, p->tok.loc.off, &rt);
		pr->spec_loc = rt.loc;
		pr->spec = rt.s;
		pr->spec_kind = rt.kind == TK_ERROR ? PROBE_SPEC_NONE : PROBE_SPEC_REGEX;
		advance(p);
		return rt.kind != TK_ERROR;
	}
	expected(p, "a function: \"name\", /regex/ or \"file:line\"");
	return false;
}

static bool parse_probe(struct parser *p, struct program *prog)
{
	struct probe *pr = calloc(1, sizeof *pr);
	if (!pr)
		return false;
	pr->loc = p->tok.loc;
	const char *kw = p->tok.s;
	static const enum probe_kind kinds[] = {
		PROBE_BEGIN, PROBE_END, PROBE_SAMPLE, PROBE_INTERVAL,
		PROBE_FUNCTION, PROBE_RETURN, PROBE_PANIC, PROBE_SYSCALL,
		PROBE_SYSCALL_ENTRY, PROBE_SYSCALL_SITE,
	};
	for (size_t i = 0; probe_keywords[i]; i++)
		if (!strcmp(kw, probe_keywords[i]))
			pr->kind = kinds[i];
	advance(p);
	bool ok = true;
	switch (pr->kind) {
	case PROBE_INTERVAL:
		if (p->tok.kind == TK_DURATION && p->tok.i > 0) {
			pr->interval_ns = p->tok.i;
			pr->spec_loc = p->tok.loc;
			advance(p);
		} else if (p->tok.kind == TK_INT) {
			ERR(p, p->tok.loc, "interval needs a unit: write %lldms or %llds",
			    (long long)p->tok.i, (long long)p->tok.i);
			ok = false;
		} else if (p->tok.kind == TK_DURATION) {
			ERR(p, p->tok.loc, "interval must be longer than 0");
			ok = false;
		} else {
			expected(p, "a duration after interval (like 1s)");
			ok = false;
		}
		break;
	case PROBE_FUNCTION:
	case PROBE_RETURN:
		ok = parse_spec(p, pr, true);
		break;
	case PROBE_SYSCALL:
	case PROBE_SYSCALL_ENTRY:
	case PROBE_SYSCALL_SITE:
		ok = parse_spec(p, pr, false);
		break;
	default:
		break;
	}
	if (ok && is_op(p, '/')) {
		advance(p);
		p->in_pred = true;
		p->parens = 0;
		pr->pred = parse_expr(p);
		p->in_pred = false;
		ok = pr->pred && expect_op(p, '/', "'/' closing the predicate (put divisions in parentheses)");
	}
	if (ok && !is_op(p, '{')) {
		expected(p, "'{' opening the probe's actions");
		ok = false;
	}
	if (ok)
		ok = parse_block(p, &pr->body);
	if (ARRAY_PUSH(prog->probes, prog->nprobes, prog->probes_cap, pr) < 0) {
		free(pr);
		return false;
	}
	return ok;
}

static bool parse_set(struct parser *p, struct program *prog)
{
	struct setting *st = calloc(1, sizeof *st);
	if (!st)
		return false;
	st->loc = p->tok.loc;
	advance(p);
	bool ok = false;
	if (p->tok.kind != TK_IDENT) {
		expected(p, "an option name after set (like frequency)");
		free(st);
		return false;
	}
	st->name = steal(p);
	st->loc = p->tok.loc;
	advance(p);
	st->value_loc = p->tok.loc;
	struct setting_value *v = &st->value;
	if (memchr(p->src->text + st->loc.off, '\n', p->tok.loc.off - st->loc.off) || p->tok.kind == TK_EOF) {
		ERR(p, st->loc, "set %s needs a value on the same line", st->name);
		free(st->name);
		free(st);
		return false;
	}
	switch (p->tok.kind) {
	case TK_INT:
		v->kind = SET_INT;
		v->i = p->tok.i;
		advance(p);
		if (is_op(p, '%')) {
			v->kind = SET_PERCENT;
			st->value_loc = span(st->value_loc, p->tok.loc);
			advance(p);
		}
		ok = true;
		break;
	case TK_DURATION:
	case TK_FREQ:
		v->kind = p->tok.kind == TK_DURATION ? SET_DURATION : SET_FREQ;
		v->i = p->tok.i;
		advance(p);
		ok = true;
		break;
	case TK_IDENT:
	case TK_STRING:
		v->kind = p->tok.kind == TK_IDENT ? SET_IDENT : SET_STRING;
		v->s = steal(p);
		advance(p);
		ok = true;
		break;
	case TK_OP:
		if (p->tok.op == '/') {
			struct token rt;
			recipe_lex_regex(&p->lx, p->tok.loc.off, &rt);
			v->kind = SET_REGEX;
			v->s = rt.s;
			st->value_loc = rt.loc;
			ok = rt.kind != TK_ERROR;
			advance(p);
			break;
		}
		/* fallthrough */
	default:
		expected(p, "a value after the option name");
	}
	if (ok && is_op(p, ';'))
		advance(p);
	if (ARRAY_PUSH(prog->settings, prog->nsettings, prog->settings_cap, st) < 0) {
		free(st->name);
		free(v->s);
		free(st);
		return false;
	}
	return ok;
}

static bool at_top_level_start(const struct parser *p)
{
	if (p->tok.kind != TK_IDENT)
		return false;
	if (!strcmp(p->tok.s, "set"))
		return true;
	for (size_t i = 0; probe_keywords[i]; i++)
		if (!strcmp(p->tok.s, probe_keywords[i]))
			return true;
	return false;
}

/* After a broken probe or setting: skip to the next thing that can start a
 * top-level item, jumping over balanced blocks. */
static void sync_top(struct parser *p)
{
	int depth = 0;
	while (p->tok.kind != TK_EOF) {
		if (is_op(p, '{')) {
			depth++;
		} else if (is_op(p, '}')) {
			if (depth > 0 && --depth == 0) {
				advance(p);
				return;
			}
		} else if (depth == 0 && at_top_level_start(p)) {
			return;
		}
		advance(p);
	}
}

size_t recipe_parse(const struct recipe_src *src, const struct recipe_defines *defs,
		    struct diag_list *diags, struct program *prog)
{
	struct parser p = {0};
	p.src = src;
	p.diags = diags;
	size_t before = diags->errors;
	recipe_lexer_init(&p.lx, src, defs, diags);
	advance(&p);
	while (p.tok.kind != TK_EOF) {
		p.failed = false;
		p.depth = 0;
		bool ok;
		if (is_ident(&p, "set")) {
			ok = parse_set(&p, prog);
		} else if (at_top_level_start(&p)) {
			ok = parse_probe(&p, prog);
		} else {
			if (p.tok.kind == TK_IDENT) {
				const char *dym = recipe_diag_did_you_mean(p.tok.s, probe_keywords);
				char hint[160];
				size_t after = p.tok.loc.off + p.tok.loc.len;
				const char *habit = recipe_diag_bpftrace_hint(p.tok.s, after < src->len ? src->text + after : "",
									      hint, sizeof hint);
				if (habit)
					ERR(&p, p.tok.loc, "unknown probe '%s': %s", p.tok.s, habit);
				else if (dym)
					ERR(&p, p.tok.loc, "unknown probe '%s'; did you mean '%s'?", p.tok.s, dym);
				else
					ERR(&p, p.tok.loc, "unknown probe '%s': probes are begin, end, sample, interval, "
					    "function, return, panic, syscall, syscall_entry, syscall_site", p.tok.s);
			} else if (p.tok.kind != TK_ERROR) {
				ERR(&p, p.tok.loc, "expected a probe or 'set', found %s", describe(&p.tok));
			}
			ok = false;
			advance(&p);
		}
		if (!ok)
			sync_top(&p);
	}
	free(p.tok.s);
	return diags->errors - before;
}

/* ---- freeing ----------------------------------------------------------- */

static void expr_free(struct expr *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nargs; i++)
		expr_free(e->args[i]);
	free(e->args);
	expr_free(e->a);
	expr_free(e->b);
	free(e->s);
	recipe_regex_free(e->re, e->re_match);
	free(e);
}

static void stmt_free(struct stmt *s)
{
	if (!s)
		return;
	expr_free(s->target);
	expr_free(s->value);
	expr_free(s->cond);
	expr_free(s->call);
	stmt_list_free(&s->then);
	stmt_list_free(&s->els);
	for (size_t i = 0; i < s->nnamed; i++) {
		free(s->named[i].name);
		expr_free(s->named[i].value);
	}
	free(s->named);
	free(s);
}

static void stmt_list_free(struct stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		stmt_free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void recipe_program_free(struct program *p)
{
	for (size_t i = 0; i < p->nprobes; i++) {
		struct probe *pr = p->probes[i];
		free(pr->spec);
		free(pr->spec_file);
		expr_free(pr->pred);
		stmt_list_free(&pr->body);
		recipe_regex_free(pr->spec_re, pr->spec_match);
		free(pr);
	}
	free(p->probes);
	for (size_t i = 0; i < p->nsettings; i++) {
		free(p->settings[i]->name);
		free(p->settings[i]->value.s);
		free(p->settings[i]);
	}
	free(p->settings);
	for (size_t i = 0; i < p->nmaps; i++) {
		free(p->maps[i]->name);
		free(p->maps[i]);
	}
	free(p->maps);
	memset(p, 0, sizeof *p);
}
