/* recipe_check.c — semantic checks: types, builtins and where they make
 * sense, maps used consistently, printf formats, regexes, options.
 *
 * The tree is walked twice: a silent first pass learns every map's shape
 * from all its assignments (a map may be printed in `end` above the probe
 * that fills it), the second pass reports errors against that knowledge.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "recipe/builtins.h"
#include "recipe/recipe_ast.h"
#include "recipe/maps.h"
#include "report/report_format.h"
#include "util/array.h"
#include "util/output_file.h"
#include "util/slot_index.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

/* The statements that are not a format's call, in the order of enum
 * action_id; the formats' calls (flamegraph, folded, ...) come from
 * report/report_format.h's table (A_RENDER). */
static const char *const action_names[] = {
	"print", "printf", "clear", "exit", "report", "table", "snapshot", "locks",
	"syscall_table", NULL,
};
#define NACTIONS (sizeof action_names / sizeof action_names[0] - 1)
/* The statements listed before the formats' calls in messages. */
#define ACTIONS_BEFORE_FORMATS (A_REPORT + 1)

/* The name=value options each call hands to its renderer; one a call would
 * ignore is refused (docs/recipes.md, "Reports"). A format's call takes
 * those its row names (recipe_options). */
/* report(@m, unit="..."): "bytes", or a word the headlines print after
 * their counts ("allocs"); not "ns" (hot-cpu's CPU time comes from
 * summing thread.cpu_ns). */
static bool report_unit_valid(const char *u)
{
	size_t n = strlen(u);
	if (n == 0 || n > 16 || !strcmp(u, "ns"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((u[i] >= 'a' && u[i] <= 'z') || u[i] == '_'))
			return false;
	return true;
}

static const char *const report_option_names[] = {"top", "title", "waits", "panics", "unit", NULL};
static const char *const locks_option_names[] = {"top", "title", NULL};

struct var {
	char *name;
	enum type type;
	int slot;
	bool read;
	struct loc first;
};

struct checker {
	const struct recipe_src *src;
	struct diag_list *diags;     /* the real list, or a scratch one in pass 1 */
	struct program *prog;
	bool final;                  /* second pass: compile regexes, final checks */
	bool partial;                /* the parser gave up on parts of the tree */
	struct probe *probe;         /* being checked: the checker notes what it reads */
	struct var *vars;
	size_t nvars, vars_cap;
	/* prog->maps by name: recipes with tens of thousands of maps stay fast */
	struct slot_index maps_by_name;
};

#define ERR(c, loc, ...) recipe_diag_add((c)->diags, DIAG_ERROR, (c)->src, (loc).off, (loc).len, __VA_ARGS__)

/* "a sample probe", "an end probe" */
static const char *probe_phrase(enum probe_kind k)
{
	static char buf[64];
	const char *n = probe_kind_name(k);
	snprintf(buf, sizeof buf, "%s %s probe", strchr("aeiou", n[0]) ? "an" : "a", n);
	return buf;
}

static const char *type_name(enum type t)
{
	switch (t) {
	case T_INT: return "int";
	case T_STR: return "str";
	case T_STACK: return "stack";
	case T_AGG: return "aggregation";
	case T_VOID: return "nothing";
	default: return "unknown";
	}
}

void recipe_regex_free(void *code, void *match_data)
{
	pcre2_match_data_free(match_data);
	pcre2_code_free(code);
}

/* Compiles a pattern; errors point at the pattern. Returns 0 or -1. */
static int compile_regex(struct checker *c, const char *pattern, struct loc loc, void **code, void **md)
{
	int err;
	PCRE2_SIZE erroff;
	recipe_regex_free(*code, *md);
	*code = *md = NULL;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &err, &erroff, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		struct loc at = loc;
		if (loc.len > 2 && erroff < loc.len - 2) {
			at.off = loc.off + 1 + erroff;
			at.len = 1;
		}
		ERR(c, at, "bad regex /%s/: %s", pattern, (const char *)msg);
		return -1;
	}
	*code = re;
	*md = pcre2_match_data_create_from_pattern(re, NULL);
	return 0;
}

static size_t name_hash(const char *s)
{
	size_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static struct map_info *map_get(struct checker *c, const char *name, struct loc loc)
{
	uint64_t h = name_hash(name);
	struct slot_probe probe = slot_index_probe(&c->maps_by_name, h);
	for (size_t i; (i = slot_probe_next(&c->maps_by_name, &probe)) != SLOT_INDEX_NONE;)
		if (!strcmp(c->prog->maps[i]->name, name))
			return c->prog->maps[i];
	struct program *prog = c->prog;
	struct map_info *m = calloc(1, sizeof *m);
	if (m)
		m->name = strdup(name);
	if (!m || !m->name || array_reserve(&prog->maps, &prog->maps_cap, prog->nmaps + 1, sizeof *prog->maps) < 0 ||
	    slot_index_add(&c->maps_by_name, h, prog->nmaps) < 0) {
		if (m)
			free(m->name);
		free(m);
		return NULL;
	}
	m->first = loc;
	m->index = prog->nmaps;
	prog->maps[prog->nmaps++] = m;
	return m;
}

static struct var *var_get(struct checker *c, const char *name)
{
	for (size_t i = 0; i < c->nvars; i++)
		if (!strcmp(c->vars[i].name, name))
			return &c->vars[i];
	return NULL;
}

static enum type check_expr(struct checker *c, struct expr *e);

static bool need_type(struct checker *c, struct expr *e, enum type want, const char *what)
{
	enum type t = check_expr(c, e);
	if (t == T_UNKNOWN || t == want)
		return t == want;
	ERR(c, e->loc, "%s must be %s, not %s", what, type_name(want), type_name(t));
	return false;
}

/* names[0..n) joined by ", " into out (cut to size). */
static void join_names(char *out, size_t size, const char *const *names, size_t n)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++) {
		int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", names[i]);
		used += w > 0 ? (size_t)w : 0;
	}
}

/* Every statement's name, NULL-terminated, into names (room for
 * MAX_STATEMENTS + 1): the fixed ones with the formats' calls after report.
 * Returns how many. */
#define MAX_STATEMENTS 64
static size_t statement_names(const char **names)
{
	size_t n = 0;
	for (size_t i = 0; i < ACTIONS_BEFORE_FORMATS; i++)
		names[n++] = action_names[i];
	for (size_t i = 0; i < report_format_count() && n + NACTIONS < MAX_STATEMENTS; i++)
		if (report_format_at(i)->recipe_call)
			names[n++] = report_format_at(i)->recipe_call;
	for (size_t i = ACTIONS_BEFORE_FORMATS; i < NACTIONS; i++)
		names[n++] = action_names[i];
	names[n] = NULL;
	return n;
}

/* The statement a call names: its enum action_id, with *format set for a
 * format's call (A_RENDER); -1 for none. */
static int find_action(const char *name, const struct report_format **format)
{
	*format = report_format_for_call(name);
	if (*format)
		return A_RENDER;
	for (size_t i = 0; i < NACTIONS; i++)
		if (!strcmp(action_names[i], name))
			return (int)i;
	return -1;
}

static bool is_statement(const char *name)
{
	const struct report_format *format;
	return find_action(name, &format) >= 0;
}

/* Checks map keys against what earlier uses established. */
static void check_map_keys(struct checker *c, struct expr *e, struct map_info *m)
{
	if (e->nargs > 16) {
		ERR(c, e->loc, "too many keys (the limit is 16)");
		return;
	}
	enum type kt[16];
	for (size_t i = 0; i < e->nargs; i++) {
		kt[i] = check_expr(c, e->args[i]);
		if (kt[i] != T_INT && kt[i] != T_STR && kt[i] != T_STACK && kt[i] != T_UNKNOWN) {
			ERR(c, e->args[i]->loc, "a map key must be int, str or stack, not %s", type_name(kt[i]));
			kt[i] = T_UNKNOWN;
		}
	}
	if (!m)
		return;
	if (!m->keys_known) {
		m->keys_known = true;
		m->nkeys = e->nargs;
		memcpy(m->key_types, kt, e->nargs * sizeof kt[0]);
		return;
	}
	if (m->nkeys != e->nargs) {
		ERR(c, e->loc, "@%s has %zu key%s elsewhere, %zu here", m->name, m->nkeys,
		    m->nkeys == 1 ? "" : "s", e->nargs);
		return;
	}
	for (size_t i = 0; i < e->nargs; i++) {
		if (m->key_types[i] == T_UNKNOWN)
			m->key_types[i] = kt[i];
		else if (kt[i] != T_UNKNOWN && kt[i] != m->key_types[i])
			ERR(c, e->args[i]->loc, "key %zu of @%s is %s elsewhere, %s here", i + 1, m->name,
			    type_name(m->key_types[i]), type_name(kt[i]));
	}
}

static bool is_const_int(const struct expr *e, int64_t *v)
{
	if (e->kind == E_INT) {
		*v = e->i;
		return true;
	}
	return false;
}

static enum type check_call(struct checker *c, struct expr *e)
{
	const struct recipe_builtin *b = recipe_builtin_find(e->s);
	if (b)
		c->prog->builtins_used |= UINT64_C(1) << b->id;
	if (!b || b->args < 0) {
		if (b)
			ERR(c, e->loc, "'%s' takes no arguments: write %s without parentheses", e->s, e->s);
		else if (!strcmp(e->s, "ustack"))
			;
		else {
			const char *dym = recipe_builtin_closest(e->s);
			if (is_statement(e->s))
				ERR(c, e->loc, "%s() is a statement, it has no value", e->s);
			else if (dym)
				ERR(c, e->loc, "unknown function '%s'; did you mean '%s'?", e->s, dym);
			else
				ERR(c, e->loc, "unknown function '%s'", e->s);
		}
		for (size_t i = 0; i < e->nargs; i++)
			check_expr(c, e->args[i]);
		return T_UNKNOWN;
	}
	e->builtin = b->id;
	if (!(b->probes & PROBE_BIT(c->probe->kind)))
		ERR(c, e->loc, "'%s' has no meaning in %s: it is only available in %s", e->s,
		    probe_phrase(c->probe->kind), b->where);
	if ((int)e->nargs != b->args) {
		ERR(c, e->loc, "%s() takes %d argument%s, not %zu", e->s, b->args, b->args == 1 ? "" : "s", e->nargs);
		return b->type;
	}
	switch (b->id) {
	case B_ARG:
		if (e->args[0]->kind != E_IDENT && e->args[0]->kind != E_STR) {
			ERR(c, e->args[0]->loc, "arg() takes a parameter name: arg(key) or arg(\"key\")");
			break;
		}
		e->args[0]->kind = E_STR;   /* the name, not a builtin */
		break;
	case B_INT:
		if (check_expr(c, e->args[0]) == T_STACK)
			ERR(c, e->args[0]->loc, "int() converts a str or an int, not a stack");
		break;
	case B_STR:
		if (check_expr(c, e->args[0]) == T_STACK)
			ERR(c, e->args[0]->loc, "str() converts an int or a str, not a stack");
		break;
	case B_STRLEN:
		need_type(c, e->args[0], T_STR, "the argument of strlen()");
		break;
	case B_SUM: case B_MIN: case B_MAX: case B_AVG: case B_HIST:
		need_type(c, e->args[0], T_INT, "the value aggregated");
		break;
	case B_LIVE:
		need_type(c, e->args[0], T_INT, "the address of live(ptr, size)");
		need_type(c, e->args[1], T_INT, "the size of live(ptr, size)");
		break;
	case B_LHIST: {
		need_type(c, e->args[0], T_INT, "the value aggregated");
		int64_t v[3];
		for (int i = 0; i < 3; i++) {
			if (!is_const_int(e->args[i + 1], &v[i])) {
				ERR(c, e->args[i + 1]->loc, "lhist() bounds must be integer constants");
				return b->type;
			}
		}
		if (v[2] <= 0)
			ERR(c, e->args[3]->loc, "lhist() step must be positive");
		else if (v[1] <= v[0])
			ERR(c, e->args[2]->loc, "lhist() max must be greater than min");
		else if (((uint64_t)v[1] - (uint64_t)v[0]) / (uint64_t)v[2] > 1000)
			ERR(c, e->args[3]->loc, "lhist() would have more than 1000 buckets: use a larger step");
		break;
	}
	default:
		break;
	}
	if (b->id == B_RETVAL && c->probe->kind == PROBE_SYSCALL)
		return T_INT;
	return b->type;
}

static enum type check_var(struct checker *c, struct expr *e)
{
	struct var *v = var_get(c, e->s);
	if (!v) {
		ERR(c, e->loc, "$%s is used before it is assigned", e->s);
		return T_UNKNOWN;
	}
	v->read = true;
	e->slot = v->slot;
	return v->type;
}

static enum type check_map_read(struct checker *c, struct expr *e)
{
	struct map_info *m = map_get(c, e->s, e->loc);
	check_map_keys(c, e, m);
	if (!m)
		return T_UNKNOWN;
	m->read = true;
	m->read_at_end |= c->probe && c->probe->kind == PROBE_END;
	e->map = m;
	return m->agg_known && m->agg == MAP_AGG_STR ? T_STR : T_INT;
}

/* A builtin named without parentheses: `pid`, `comm`, ... */
static enum type check_ident(struct checker *c, struct expr *e)
{
	const struct recipe_builtin *b = recipe_builtin_find(e->s);
	if (b)
		c->prog->builtins_used |= UINT64_C(1) << b->id;
	if (!b || b->args >= 0) {
		if (b && b->id == B_ARG)
			ERR(c, e->loc, "arg needs a parameter name: arg(NAME)");
		else if (b)
			ERR(c, e->loc, "%s needs parentheses: %s(...)", e->s, e->s);
		else {
			const char *dym = recipe_builtin_closest(e->s);
			char hint[160];
			const char *habit = recipe_diag_bpftrace_hint(e->s, NULL, hint, sizeof hint);
			if (habit)
				ERR(c, e->loc, "unknown builtin '%s': %s", e->s, habit);
			else if (dym)
				ERR(c, e->loc, "unknown builtin '%s'; did you mean '%s'?", e->s, dym);
			else
				ERR(c, e->loc, "unknown builtin '%s' (maps start with '@', variables with '$')", e->s);
		}
		return T_UNKNOWN;
	}
	e->builtin = b->id;
	if (b->id == B_INT_ARG)
		c->probe->reads_entry_registers = true;
	if (!(b->probes & PROBE_BIT(c->probe->kind))) {
		ERR(c, e->loc, "'%s' has no meaning in %s: it is only available in %s", e->s,
		    probe_phrase(c->probe->kind), b->where);
	}
	if (b->id == B_RETVAL && c->probe->kind == PROBE_SYSCALL)
		return T_INT;
	return b->type;
}

static enum type check_ustack(struct checker *c, struct expr *e)
{
	c->prog->builtins_used |= UINT64_C(1) << B_USTACK;
	e->builtin = B_USTACK;
	if (!(THREAD_PROBES & PROBE_BIT(c->probe->kind)))
		ERR(c, e->loc, "'ustack' has no meaning in %s: it is only available in %s",
		    probe_phrase(c->probe->kind), recipe_builtin_find("ustack")->where);
	int64_t n;
	if (e->nargs != 1 || !is_const_int(e->args[0], &n) || n <= 0 || n > 1024)
		ERR(c, e->loc, "ustack(n) takes a frame count from 1 to 1024");
	return T_STACK;
}

/* Logical, comparison and arithmetic operators: always int. */
static enum type check_binary(struct checker *c, struct expr *e)
{
	enum type a = check_expr(c, e->a), b = check_expr(c, e->b);
	if (a == T_UNKNOWN || b == T_UNKNOWN)
		return T_INT;
	switch (e->op) {
	case OP_OR:
	case OP_AND:
		if (a != T_INT || b != T_INT)
			ERR(c, e->loc, "'%s' needs int operands, not %s and %s",
			    e->op == OP_OR ? "||" : "&&", type_name(a), type_name(b));
		break;
	case OP_EQ: case OP_NE: case '<': case '>': case OP_LE: case OP_GE:
		if (a != b)
			ERR(c, e->loc, "cannot compare %s with %s", type_name(a), type_name(b));
		else if (a == T_STACK)
			ERR(c, e->loc, "stacks cannot be compared: match them with =~ /regex/");
		break;
	default:
		if (a != T_INT || b != T_INT) {
			if (e->op == '+' && (a == T_STR || b == T_STR))
				ERR(c, e->loc, "'+' does not join strings: use printf(\"%%s%%s\", ...)");
			else
				ERR(c, e->loc, "arithmetic needs int operands, not %s and %s", type_name(a), type_name(b));
		} else if ((e->op == '/' || e->op == '%') && e->b->kind == E_INT && e->b->i == 0) {
			ERR(c, e->b->loc, "division by zero");
		}
	}
	return T_INT;
}

static enum type check_match(struct checker *c, struct expr *e)
{
	enum type a = check_expr(c, e->a);
	if (a != T_UNKNOWN && a != T_STR && a != T_STACK)
		ERR(c, e->a->loc, "regex matching needs a str or a stack, not %s", type_name(a));
	struct loc pl = {(size_t)e->i, strlen(e->s) + 2};
	if (c->final)
		compile_regex(c, e->s, pl, &e->re, &e->re_match);
	return T_INT;
}

static enum type check_cond(struct checker *c, struct expr *e)
{
	need_type(c, e->a, T_INT, "the condition");
	enum type b = check_expr(c, e->b), d = check_expr(c, e->args[0]);
	if (b != T_UNKNOWN && d != T_UNKNOWN && b != d)
		ERR(c, e->loc, "both branches of ?: must have the same type, not %s and %s",
		    type_name(b), type_name(d));
	return b;
}

static enum type check_unary(struct checker *c, struct expr *e)
{
	need_type(c, e->a, T_INT, e->op == '!' ? "the operand of '!'" : "the operand of '-'");
	return T_INT;
}

/* The type of one expression by its kind, before the aggregation rule. */
static enum type check_expr_kind(struct checker *c, struct expr *e)
{
	switch (e->kind) {
	case E_INT: return T_INT;
	case E_STR: return T_STR;
	case E_VAR: return check_var(c, e);
	case E_MAP: return check_map_read(c, e);
	case E_IDENT: return check_ident(c, e);
	case E_CALL: return !strcmp(e->s, "ustack") ? check_ustack(c, e) : check_call(c, e);
	case E_UNARY: return check_unary(c, e);
	case E_BINARY: return check_binary(c, e);
	case E_MATCH: return check_match(c, e);
	case E_COND: return check_cond(c, e);
	}
	return T_UNKNOWN;
}

static enum type check_expr(struct checker *c, struct expr *e)
{
	enum type t = check_expr_kind(c, e);
	if (t == T_AGG && e->kind != E_CALL)
		t = T_UNKNOWN;
	if (t == T_AGG) {
		ERR(c, e->loc, "%s() is an aggregation: use it as the value of a map, like @m = %s(...)", e->s, e->s);
		t = T_UNKNOWN;
	}
	e->type = t;
	return t;
}

/* Checks an aggregation call on the right of `@m = ...`. */
static void check_map_value(struct checker *c, struct stmt *s, struct map_info *m)
{
	struct expr *v = s->value;
	int agg;
	const struct recipe_builtin *b = v->kind == E_CALL ? recipe_builtin_find(v->s) : NULL;
	if (b && b->type == T_AGG) {
		v->type = T_AGG;
		check_call(c, v);
		static const int aggs[] = {
			[B_COUNT] = MAP_AGG_COUNT, [B_SUM] = MAP_AGG_SUM, [B_MIN] = MAP_AGG_MIN,
			[B_MAX] = MAP_AGG_MAX, [B_AVG] = MAP_AGG_AVG, [B_HIST] = MAP_AGG_HIST,
			[B_LHIST] = MAP_AGG_LHIST, [B_LIVE] = MAP_AGG_LIVE,
		};
		agg = aggs[b->id];
	} else {
		enum type t = check_expr(c, v);
		if (t == T_UNKNOWN)
			return;
		if (t != T_INT && t != T_STR) {
			ERR(c, v->loc, "a map holds an aggregation, an int or a str, not a %s%s", type_name(t),
			    t == T_STACK ? " (use the stack as a key: @m[ustack] = count())" : "");
			return;
		}
		agg = t == T_INT ? MAP_AGG_INT : MAP_AGG_STR;
	}
	if (!m)
		return;
	if (agg == MAP_AGG_SUM && v->nargs == 1 && v->args[0]->kind == E_IDENT && v->args[0]->s &&
	    !strcmp(v->args[0]->s, "thread.cpu_ns"))
		m->cpu_ns_sum = true;
	else
		m->other_value = true;
	static const char *const agg_names[] = {
		"count()", "sum()", "min()", "max()", "avg()", "hist()", "lhist()", "an int", "a str", "live()",
	};
	if (!m->agg_known) {
		m->agg_known = true;
		m->agg = agg;
		if (agg == MAP_AGG_LHIST && v->nargs == 4 && v->args[1]->kind == E_INT &&
		    v->args[2]->kind == E_INT && v->args[3]->kind == E_INT) {
			m->lmin = v->args[1]->i;
			m->lmax = v->args[2]->i;
			m->lstep = v->args[3]->i;
		}
	} else if (m->agg != agg) {
		ERR(c, v->loc, "@%s holds %s elsewhere, %s here: use another map name", m->name,
		    agg_names[m->agg], agg_names[agg]);
	} else if (agg == MAP_AGG_LHIST && m->lstep == 0 && v->nargs == 4 && v->args[1]->kind == E_INT &&
		   v->args[2]->kind == E_INT && v->args[3]->kind == E_INT) {
		m->lmin = v->args[1]->i;
		m->lmax = v->args[2]->i;
		m->lstep = v->args[3]->i;
	} else if (agg == MAP_AGG_LHIST && v->nargs == 4 && v->args[1]->kind == E_INT &&
		   v->args[2]->kind == E_INT && v->args[3]->kind == E_INT && (m->lmin != v->args[1]->i || m->lmax != v->args[2]->i ||
					    m->lstep != v->args[3]->i)) {
		ERR(c, v->loc, "@%s uses different lhist() bounds elsewhere", m->name);
	}
}

/* printf("...") format: %[flags][width][.prec]conv, conv in d i u x X c s %. */
static void check_printf(struct checker *c, struct expr *call)
{
	if (call->nargs == 0 || call->args[0]->kind != E_STR) {
		ERR(c, call->loc, "printf() needs a format string literal first");
		for (size_t i = 0; i < call->nargs; i++)
			check_expr(c, call->args[i]);
		return;
	}
	const char *f = call->args[0]->s;
	struct loc floc = call->args[0]->loc;
	size_t argi = 1;
	for (const char *p = f; *p; p++) {
		if (*p != '%')
			continue;
		const char *start = p++;
		while (*p && strchr("-+ 0#", *p))
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '.') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (p - start > 12) {
			ERR(c, floc, "printf conversion '%.*s' is too long", (int)(p - start), start);
			return;
		}
		if (*p == '%' && p == start + 1)
			continue;
		if (*p == '%') {
			ERR(c, floc, "printf conversion '%.*s': a literal '%%' is written %%%% with nothing between",
			    (int)(p - start + 1), start);
			return;
		}
		if (!*p || !strchr("diuxXcs", *p)) {
			if (*p && strchr("lhzjtqL", *p))
				ERR(c, floc, "printf conversion '%.*s' has a length modifier: integers are 64-bit, write %%d",
				    (int)(p - start + (p[1] ? 2 : 1)), start);
			else if (*p)
				ERR(c, floc, "unsupported printf conversion '%.*s': use %%d %%i %%u %%x %%X %%c %%s or %%%%",
				    (int)(p - start + 1), start);
			else
				ERR(c, floc, "printf format ends inside a conversion: write %%%% for a literal '%%'");
			return;
		}
		if (argi >= call->nargs) {
			ERR(c, floc, "printf format has more conversions than arguments");
			return;
		}
		struct expr *a = call->args[argi++];
		enum type t = check_expr(c, a);
		if (t == T_UNKNOWN)
			continue;
		if (*p == 's' && t != T_STR && t != T_STACK)
			ERR(c, a->loc, "%%s needs a str, this is %s (use %%d)", type_name(t));
		else if (*p != 's' && t != T_INT)
			ERR(c, a->loc, "%%%c needs an int, this is %s (use %%s)", *p, type_name(t));
		if (!*p)
			break;
	}
	if (argi < call->nargs) {
		ERR(c, call->args[argi]->loc, "printf has more arguments than the format has conversions");
		for (; argi < call->nargs; argi++)
			check_expr(c, call->args[argi]);
	}
}

static struct map_info *map_arg(struct checker *c, struct stmt *s, const char *fn)
{
	struct expr *call = s->call;
	if (call->nargs == 0 || call->args[0]->kind != E_MAP || call->args[0]->nargs) {
		ERR(c, call->nargs ? call->args[0]->loc : call->loc, "%s() needs a whole map first, like %s(@stacks)", fn, fn);
		for (size_t i = 0; i < call->nargs; i++)
			check_expr(c, call->args[i]);
		return NULL;
	}
	struct map_info *m = map_get(c, call->args[0]->s, call->args[0]->loc);
	if (m)
		m->shown = true;
	call->args[0]->map = m;
	return m;
}

static void check_stmt_list(struct checker *c, struct stmt_list *l);

/* table(@a, @b, ...): whole maps with as many keys as the first. */
/* An argument that must be a whole map (@m, not @m[k]) which the action
 * shows: its map, marked shown, or NULL (an error said with `wrong` when it
 * is not a whole map). */
static struct map_info *shown_whole_map(struct checker *c, struct expr *a, const char *wrong)
{
	if (a->kind != E_MAP || a->nargs) {
		ERR(c, a->loc, "%s", wrong);
		check_expr(c, a);
		return NULL;
	}
	struct map_info *m = map_get(c, a->s, a->loc);
	a->map = m;
	if (m)
		m->shown = true;
	return m;
}

static void check_table(struct checker *c, struct expr *call)
{
	if (call->nargs < 1 || call->nargs > 8) {
		ERR(c, call->loc, "table() takes 1 to 8 maps that share keys, like table(@calls, @time_ns, @errors)");
		return;
	}
	struct map_info *first = NULL;
	for (size_t i = 0; i < call->nargs; i++) {
		struct expr *a = call->args[i];
		struct map_info *m = shown_whole_map(c, a, "table() takes whole maps, like table(@calls, @time_ns)");
		if (!m)
			continue;
		if (!first)
			first = m;
		else if (c->final && m->keys_known && first->keys_known && m->nkeys != first->nkeys)
			ERR(c, a->loc, "@%s has %zu key%s and @%s %zu: table() lines maps up by the same keys", m->name,
			    m->nkeys, m->nkeys == 1 ? "" : "s", first->name, first->nkeys);
		if (c->final && m->agg_known && (m->agg == MAP_AGG_HIST || m->agg == MAP_AGG_LHIST || m->agg == MAP_AGG_STR))
			ERR(c, a->loc, "table() shows numbers: @%s holds %s", m->name,
			    m->agg == MAP_AGG_STR ? "strings" : "histograms (print() it)");
	}
}

/* syscall_table(@time_ns, @calls[, @errors[, @kinds[, @counted[,
 * @numbers[, @at_sites]]]]]): numbers keyed by the call's name; @kinds by
 * the name and the errno's; @counted counts and @numbers sums keyed by the
 * wrapper function; @at_sites counts keyed by the call's name
 * (syscall_table.h). */
static void check_syscall_table(struct checker *c, struct expr *call)
{
	if (call->nargs < 2 || call->nargs > 7) {
		ERR(c, call->loc, "syscall_table() takes the time and calls maps, then optional errors, error "
				  "kinds, wrapper counts, syscall() numbers and site counts maps, like "
				  "syscall_table(@time_ns, @calls, @errors, @error_kinds, @counted, @syscall_numbers, "
				  "@at_sites)");
		return;
	}
	static const char *const roles[] = {"time", "calls", "errors", "error kinds", "wrapper counts",
					    "syscall() numbers", "site counts"};
	for (size_t i = 0; i < call->nargs; i++) {
		struct expr *a = call->args[i];
		struct map_info *m = shown_whole_map(c, a, "syscall_table() takes whole maps, like "
							   "syscall_table(@time_ns, @calls)");
		if (!m || !c->final)
			continue;
		size_t want_keys = i == 3 ? 2 : 1;
		int want = i == 0 || i == 5 ? MAP_AGG_SUM : MAP_AGG_COUNT;
		if (m->keys_known && m->nkeys != want_keys)
			ERR(c, a->loc, "@%s is syscall_table()'s %s map: it needs the keys %s (it has %zu)", m->name,
			    roles[i], i == 3 ? "[syscall.name, syscall.error]" : i == 4 || i == 5 ? "[func] alone" : "[syscall.name] alone",
			    m->nkeys);
		if (m->agg_known && m->agg != want)
			ERR(c, a->loc, "@%s is syscall_table()'s %s map: it needs %s", m->name, roles[i],
			    i == 0 ? "sum(elapsed)" : i == 5 ? "sum(arg0)" : "count()");
	}
}

/* locks(@wait[, @hold[, @withdrawn]]): histograms keyed by the lock's
 * address (an int key), and for @wait the call site (a stack key);
 * @withdrawn takes waits back out of @wait, so it has @wait's keys;
 * locks_report.h */
static void check_locks(struct checker *c, struct expr *call)
{
	if (call->nargs < 1 || call->nargs > 3) {
		ERR(c, call->loc, "locks() takes the wait map, an optional hold map and an optional map of waits "
				  "withdrawn, like locks(@wait, @hold, @withdrawn, top=5)");
		return;
	}
	struct map_info *wait = NULL;
	for (size_t i = 0; i < call->nargs; i++) {
		struct expr *a = call->args[i];
		struct map_info *m = shown_whole_map(c, a, "locks() takes whole maps, like locks(@wait, @hold)");
		if (!m)
			continue;
		if (!i)
			wait = m;
		if (c->final && m->agg_known && m->agg != MAP_AGG_HIST && m->agg != MAP_AGG_LHIST)
			ERR(c, a->loc, "locks() reads latencies: @%s must hold hist() or lhist() values", m->name);
		if (i == 2 && wait && c->final && m->keys_known && wait->keys_known && m->nkeys != wait->nkeys)
			ERR(c, a->loc, "@%s withdraws waits of @%s: it needs the same keys (%zu, not %zu)", m->name,
			    wait->name, wait->nkeys, m->nkeys);
	}
}

/* pprof(types="name/unit[,name/unit]"): words of [A-Za-z0-9_.] */
static bool pprof_types_valid(const char *s)
{
	for (int part = 0; part < 2; part++) {
		for (int half = 0; half < 2; half++) {
			size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
			if (n == 0 || n > 100)
				return false;
			s += n;
			if (half == 0 && *s++ != '/')
				return false;
		}
		if (*s == '\0')
			return true;
		if (*s++ != ',')
			return false;
	}
	return false;
}

/* snapshot(@live_map[, "name"]): the live() map's state now, into
 * NAME-N.json (default "snapshot"); the name is a file name's stem. */
static void check_snapshot(struct checker *c, struct stmt *s)
{
	struct expr *call = s->call;
	if (call->nargs < 1 || call->nargs > 2) {
		ERR(c, call->loc, "snapshot() takes a live() map and an optional name: snapshot(@heap, \"heap\")");
		return;
	}
	struct map_info *m = map_arg(c, s, "snapshot");
	struct xerr name_error;
	if (call->nargs == 2 && need_type(c, call->args[1], T_STR, "the snapshot's name") &&
	    call->args[1]->kind == E_STR && output_name_check(call->args[1]->s, &name_error) < 0)
		ERR(c, call->args[1]->loc, "%s", name_error.msg);
	if (m && c->final && m->agg_known && m->agg != MAP_AGG_LIVE)
		ERR(c, call->args[0]->loc, "snapshot() takes a map of live() values, like "
		    "@heap[ustack] = live(int(retval), $size)");
}

/* The name=value options a format's call takes, NULL-terminated, into
 * names (room for 33). */
static void format_option_names(const struct report_format *f, const char **names)
{
	size_t n = 0;
	for (unsigned bit = 1; bit; bit <<= 1)
		if ((f->recipe_options & bit) && report_format_option_name(bit))
			names[n++] = report_format_option_name(bit);
	names[n] = NULL;
}

static void check_call_stmt(struct checker *c, struct stmt *s)
{
	struct expr *call = s->call;
	const struct report_format *format;
	int action = find_action(call->s, &format);
	if (action < 0) {
		const char *statements[MAX_STATEMENTS + 1];
		size_t nstatements = statement_names(statements);
		const char *dym = recipe_diag_did_you_mean(call->s, statements);
		char hint[160];
		const char *habit = recipe_diag_bpftrace_hint(call->s, NULL, hint, sizeof hint);
		if (habit) {
			ERR(c, call->loc, "unknown statement '%s': %s", call->s, habit);
		} else if (recipe_builtin_find(call->s)) {
			ERR(c, call->loc, "%s() computes a value; it is not a statement", call->s);
		} else if (dym) {
			ERR(c, call->loc, "unknown statement '%s'; did you mean '%s'?", call->s, dym);
		} else {
			char list[512];
			join_names(list, sizeof list, statements, nstatements);
			ERR(c, call->loc, "unknown statement '%s': statements are %s", call->s, list);
		}
		return;
	}
	s->action = action;
	s->format = format;
	const char *format_options[33];
	if (format)
		format_option_names(format, format_options);
	const char *const *accepted = format ? format_options
				    : action == A_REPORT ? report_option_names
				    : action == A_LOCKS ? locks_option_names : NULL;
	if (s->nnamed && (!accepted || !accepted[0]))
		ERR(c, s->named[0].loc, "%s() takes no name=value options", call->s);
	for (size_t i = 0; accepted && accepted[0] && i < s->nnamed; i++) {
		struct named_arg *na = &s->named[i];
		enum type want = !strcmp(na->name, "title") || !strcmp(na->name, "types") || !strcmp(na->name, "unit")
					 ? T_STR : T_INT;
		bool known = false;
		size_t naccepted = 0;
		for (; accepted[naccepted]; naccepted++)
			known |= !strcmp(accepted[naccepted], na->name);
		if (!known) {
			const char *dym = recipe_diag_did_you_mean(na->name, accepted);
			char list[256];
			join_names(list, sizeof list, accepted, naccepted);
			if (dym)
				ERR(c, na->loc, "unknown option '%s'; did you mean '%s'?", na->name, dym);
			else
				ERR(c, na->loc, "%s() has no option '%s': its options are %s", call->s, na->name, list);
			continue;
		}
		if (need_type(c, na->value, want, "this option") && !strcmp(na->name, "types") &&
		    na->value->kind == E_STR && !pprof_types_valid(na->value->s))
			ERR(c, na->value->loc, "types is \"name/unit\" or \"name/unit,name/unit\" (the events, "
			    "then the weight), like \"alloc_objects/count,alloc_space/bytes\"");
		if (!strcmp(na->name, "unit") && na->value->kind == E_STR && !report_unit_valid(na->value->s))
			ERR(c, na->value->loc, "unit is \"bytes\" or a plural noun in lower-case letters, at most 16 "
			    "(\"allocs\", \"calls\"): what the map's values count");
	}
	switch (action) {
	case A_PRINT:
		if (call->nargs == 0 || call->nargs > 3) {
			ERR(c, call->loc, "print() takes a value, or a map, an optional count of entries (0: all) "
			    "and a file: print(@bytes, 10, \"bytes.txt\")");
			return;
		}
		if (call->args[0]->kind == E_MAP && !call->args[0]->nargs) {
			map_arg(c, s, "print");
			if (call->nargs >= 2)
				need_type(c, call->args[1], T_INT, "the number of entries to print");
			if (call->nargs == 3)
				need_type(c, call->args[2], T_STR, "the file to print into");
		} else {
			if (call->nargs >= 2)
				ERR(c, call->args[1]->loc, "only a map can be printed with a count or into a file");
			check_expr(c, call->args[0]);
		}
		break;
	case A_PRINTF:
		check_printf(c, call);
		break;
	case A_CLEAR:
	case A_REPORT:
		if (call->nargs != 1)
			ERR(c, call->loc, "%s", action == A_CLEAR ? "clear() takes one map"
			    : "report() takes a map, then options: report(@stacks, top=5)");
		else
			map_arg(c, s, call->s);
		break;
	case A_EXIT:
		if (call->nargs)
			ERR(c, call->loc, "exit() takes no arguments");
		break;
	case A_TABLE:
		check_table(c, call);
		break;
	case A_SNAPSHOT:
		check_snapshot(c, s);
		break;
	case A_LOCKS:
		check_locks(c, call);
		break;
	case A_SYSCALL_TABLE:
		check_syscall_table(c, call);
		break;
	case A_RENDER: {
		if (call->nargs < 1 || call->nargs > 2) {
			ERR(c, call->loc, "%s() takes a map and an optional file name", call->s);
			break;
		}
		struct map_info *m = map_arg(c, s, call->s);
		struct xerr name_error;
		if (call->nargs == 2 && need_type(c, call->args[1], T_STR, "the file name") &&
		    call->args[1]->kind == E_STR && output_name_check(call->args[1]->s, &name_error) < 0)
			ERR(c, call->args[1]->loc, "%s", name_error.msg);
		/* A profile is made of counts and sums; a map writer of the
		 * recipe's own may write any map (json: the map's JSON). */
		bool any_map = false;
		recipe_map_writer(format, &any_map);
		if (m && c->final && m->agg_known && !any_map && m->agg != MAP_AGG_COUNT &&
		    m->agg != MAP_AGG_SUM && m->agg != MAP_AGG_INT && m->agg != MAP_AGG_LIVE)
			ERR(c, call->args[0]->loc, "%s() needs a map of count() or sum() values", call->s);
		break;
	}
	}
}

static void check_stmt(struct checker *c, struct stmt *s)
{
	switch (s->kind) {
	case S_MAP_ASSIGN: {
		struct map_info *m = map_get(c, s->target->s, s->target->loc);
		check_map_keys(c, s->target, m);
		s->target->map = m;
		if (m)
			m->assigned = true;
		check_map_value(c, s, m);
		break;
	}
	case S_VAR_ASSIGN: {
		enum type t = check_expr(c, s->value);
		struct var *v = var_get(c, s->target->s);
		if (t == T_VOID || t == T_AGG)
			t = T_UNKNOWN;
		if (!v) {
			struct var *nv = array_grow(c->vars, &c->vars_cap, c->nvars + 1, sizeof *nv);
			if (!nv)
				break;
			c->vars = nv;
			v = &c->vars[c->nvars];
			v->name = strdup(s->target->s);
			v->type = t;
			v->slot = (int)c->nvars;
			v->read = false;
			v->first = s->target->loc;
			c->nvars++;
		} else if (v->type == T_UNKNOWN) {
			v->type = t;
		} else if (t != T_UNKNOWN && t != v->type) {
			ERR(c, s->value->loc, "$%s holds %s, it cannot take %s", v->name, type_name(v->type), type_name(t));
		}
		s->target->slot = v->slot;
		break;
	}
	case S_IF:
		need_type(c, s->cond, T_INT, "the if condition");
		check_stmt_list(c, &s->then);
		check_stmt_list(c, &s->els);
		break;
	case S_CALL:
		check_call_stmt(c, s);
		break;
	}
}

static void check_stmt_list(struct checker *c, struct stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		check_stmt(c, l->v[i]);
}

static void check_probe(struct checker *c, struct probe *p)
{
	c->probe = p;
	c->nvars = 0;
	if (c->final && p->spec_kind == PROBE_SPEC_REGEX) {
		compile_regex(c, p->spec, p->spec_loc, &p->spec_re, &p->spec_match);
	}
	if (p->pred)
		need_type(c, p->pred, T_INT, "the predicate");
	check_stmt_list(c, &p->body);
	p->nslots = (int)c->nvars;
	for (size_t i = 0; i < c->nvars; i++) {
		if (c->final && !c->vars[i].read && !c->partial)
			recipe_diag_add(c->diags, DIAG_WARNING, c->src, c->vars[i].first.off, c->vars[i].first.len,
				 "$%s is assigned but never used", c->vars[i].name);
		free(c->vars[i].name);
	}
}

static void check_pass(struct checker *c)
{
	for (size_t i = 0; i < c->prog->nprobes; i++)
		check_probe(c, c->prog->probes[i]);
}

size_t recipe_check(const struct recipe_src *src, struct program *prog, struct diag_list *diags,
		    bool after_parse_errors)
{
	size_t before = diags->errors;
	struct checker c = {0};
	c.src = src;
	c.prog = prog;
	c.partial = after_parse_errors;

	struct diag_list scratch;
	recipe_diag_list_init(&scratch);
	c.diags = &scratch;
	check_pass(&c);
	recipe_diag_list_release(&scratch);

	for (size_t i = 0; i < prog->nmaps; i++) {
		/* keep what pass 1 learned about shapes, recount the uses */
		prog->maps[i]->read = prog->maps[i]->shown = prog->maps[i]->assigned = prog->maps[i]->read_at_end = false;
		prog->maps[i]->keys_known = prog->maps[i]->keys_known && prog->maps[i]->nkeys <= 16;
	}
	c.diags = diags;
	c.final = true;
	check_pass(&c);
	free(c.vars);
	slot_index_free(&c.maps_by_name);

	const char *assigned[64];
	size_t na = 0;
	for (size_t i = 0; i < prog->nmaps && na < 63; i++)
		if (prog->maps[i]->assigned)
			assigned[na++] = prog->maps[i]->name;
	assigned[na] = NULL;
	for (size_t i = 0; i < prog->nmaps && !after_parse_errors; i++) {
		struct map_info *m = prog->maps[i];
		if (m->assigned)
			continue;
		const char *dym = recipe_diag_did_you_mean(m->name, assigned);
		if (dym)
			ERR(&c, m->first, "map @%s is never assigned; did you mean '@%s'?", m->name, dym);
		else
			ERR(&c, m->first, "map @%s is used but never assigned", m->name);
	}

	for (size_t i = 0; i < prog->nsettings; i++) {
		struct setting *st = prog->settings[i];
		struct recipe_options scratch_opts = {0};
		char *re = NULL, msg[256];
		if (recipe_options_apply(&scratch_opts, st->name, &st->value, &re, msg, sizeof msg) < 0) {
			bool unknown = !strncmp(msg, "unknown", 7);
			ERR(&c, unknown ? st->loc : st->value_loc, "%s", msg);
		} else if (st->value.kind == SET_REGEX) {
			void *code = NULL, *md = NULL;
			compile_regex(&c, st->value.s, st->value_loc, &code, &md);
			recipe_regex_free(code, md);
		}
		free(re);
	}
	if (prog->nprobes == 0 && diags->errors == before && !after_parse_errors)
		recipe_diag_add(diags, DIAG_ERROR, src, 0, 0,
			 "the recipe has no probes: add one, like sample { @[ustack] = count(); }");
	return diags->errors - before;
}
