/* recipe.c — loading recipes, defines, options, probe descriptions. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "recipe/recipe.h"
#include "recipe/builtins.h"
#include "symbols/demangle.h"
#include "symbols/name_pattern.h"
#include "recipe/recipe_ast.h"
#include "recipe/recipe_internal.h"
#include "recipe/recipe_lex.h"
#include "util/stack.h"
#include "util/text_escape.h"

#include <errno.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void recipe_defines_init(struct recipe_defines *d)
{
	memset(d, 0, sizeof *d);
}

void recipe_defines_release(struct recipe_defines *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->names[i]);
		free(d->values[i]);
	}
	free(d->names);
	free(d->values);
	memset(d, 0, sizeof *d);
}

int recipe_defines_add(struct recipe_defines *d, const char *assignment, struct xerr *e)
{
	const char *eq = strchr(assignment, '=');
	size_t n = eq ? (size_t)(eq - assignment) : 0;
	bool ok = n > 0 && (assignment[0] == '_' || (assignment[0] >= 'A' && assignment[0] <= 'Z') ||
			    (assignment[0] >= 'a' && assignment[0] <= 'z'));
	for (size_t i = 0; ok && i < n; i++) {
		char c = assignment[i];
		ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
	}
	if (!ok) {
		/* the user's text, shown as target text is: one line, no control byte */
		char shown[XERR_MAX / 2];
		text_escape(shown, sizeof shown, assignment);
		return xerr_set(e, "bad define '%s': write -D NAME=VALUE", shown);
	}
	char **names = realloc(d->names, (d->n + 1) * sizeof *names);
	if (!names)
		return xerr_oom(e);
	d->names = names;
	char **values = realloc(d->values, (d->n + 1) * sizeof *values);
	if (!values)
		return xerr_oom(e);
	d->values = values;
	d->names[d->n] = strndup(assignment, n);
	d->values[d->n] = strdup(eq + 1);
	if (!d->names[d->n] || !d->values[d->n]) {
		free(d->names[d->n]);
		free(d->values[d->n]);
		return xerr_oom(e);
	}
	d->n++;
	return 0;
}

/* ---- options ----------------------------------------------------------- */

static const char *const option_names[] = {
	"frequency", "duration", "threads", "max_stopped", "exact", "max_keys", "stack_depth", "skip_leaf", NULL,
};


static void options_default(struct recipe_options *o)
{
	memset(o, 0, sizeof *o);
	o->frequency_hz = 49;
	o->threads = RECIPE_THREADS_RUNNING;
	o->max_stopped_percent = 5;
	o->max_keys = 10000;
	o->stack_depth = 64;
}

int recipe_options_apply(struct recipe_options *o, const char *name,
			 const struct setting_value *v, char **regex_storage, char *msg, size_t msgsz)
{
	if (!strcmp(name, "frequency")) {
		if ((v->kind != SET_INT && v->kind != SET_FREQ) || v->i < 1 || v->i > 10000) {
			snprintf(msg, msgsz, "frequency is a rate from 1 to 10000 Hz: write set frequency 99");
			return -1;
		}
		o->frequency_hz = v->i;
	} else if (!strcmp(name, "duration")) {
		if (v->kind != SET_DURATION && !(v->kind == SET_INT && v->i == 0)) {
			snprintf(msg, msgsz, "duration needs a unit: write set duration 30s (0 = until Ctrl-C)");
			return -1;
		}
		o->duration_ns = v->i;
	} else if (!strcmp(name, "threads")) {
		if (v->kind == SET_IDENT && !strcmp(v->s, "running")) {
			o->threads = RECIPE_THREADS_RUNNING;
		} else if (v->kind == SET_IDENT && !strcmp(v->s, "all")) {
			o->threads = RECIPE_THREADS_ALL;
		} else if (v->kind == SET_REGEX) {
			char *copy = strdup(v->s);
			if (!copy) {
				snprintf(msg, msgsz, "out of memory");
				return -1;
			}
			free(*regex_storage);
			*regex_storage = copy;
			o->threads = RECIPE_THREADS_REGEX;
			o->threads_regex = copy;
		} else {
			snprintf(msg, msgsz, "threads is running, all, or a /regex/ over thread names");
			return -1;
		}
	} else if (!strcmp(name, "max_stopped")) {
		if ((v->kind != SET_INT && v->kind != SET_PERCENT) || v->i < 1 || v->i > 100) {
			snprintf(msg, msgsz, "max_stopped is a percentage from 1%% to 100%%: write set max_stopped 5%%");
			return -1;
		}
		o->max_stopped_percent = v->i;
	} else if (!strcmp(name, "exact")) {
		if (v->kind == SET_IDENT && (!strcmp(v->s, "true") || !strcmp(v->s, "yes") || !strcmp(v->s, "on")))
			o->exact = true;
		else if (v->kind == SET_IDENT && (!strcmp(v->s, "false") || !strcmp(v->s, "no") || !strcmp(v->s, "off")))
			o->exact = false;
		else if (v->kind == SET_INT && (v->i == 0 || v->i == 1))
			o->exact = v->i;
		else {
			snprintf(msg, msgsz, "exact is true or false");
			return -1;
		}
	} else if (!strcmp(name, "max_keys")) {
		if (v->kind != SET_INT || v->i < 0) {
			snprintf(msg, msgsz, "max_keys is a number of entries per map (0 = no limit)");
			return -1;
		}
		o->max_keys = v->i;
	} else if (!strcmp(name, "stack_depth")) {
		if (v->kind != SET_INT || v->i < 1 || v->i > STACK_MAX_MACHINE_FRAMES) {
			snprintf(msg, msgsz, "stack_depth is a number of frames from 1 to %d", STACK_MAX_MACHINE_FRAMES);
			return -1;
		}
		o->stack_depth = v->i;
	} else if (!strcmp(name, "skip_leaf")) {
		if (v->kind != SET_REGEX || strlen(v->s) >= sizeof o->skip_leaf) {
			snprintf(msg, msgsz, "skip_leaf is a /regex/ over function names, under %zu characters",
				 sizeof o->skip_leaf);
			return -1;
		}
		snprintf(o->skip_leaf, sizeof o->skip_leaf, "%s", v->s);
	} else {
		const char *dym = recipe_diag_did_you_mean(name, option_names);
		if (dym)
			snprintf(msg, msgsz, "unknown option '%s'; did you mean '%s'?", name, dym);
		else
			snprintf(msg, msgsz, "unknown option '%s': options are frequency, duration, threads, "
				 "max_stopped, exact, max_keys, stack_depth, skip_leaf", name);
		return -1;
	}
	return 0;
}

/* Parses a CLI value as the recipe's `set` would read it. */
static int parse_option_text(const char *text, struct setting_value *v)
{
	memset(v, 0, sizeof *v);
	size_t n = strlen(text);
	if (n >= 2 && text[0] == '/' && text[n - 1] == '/') {
		v->kind = SET_REGEX;
		v->s = strndup(text + 1, n - 2);
		return v->s ? 0 : -1;
	}
	char *end;
	errno = 0;
	long long x = strtoll(text, &end, 10);
	if (end != text && text[0] != '-' && !errno) {
		v->i = x;
		if (!*end) {
			v->kind = SET_INT;
			return 0;
		}
		if (!strcmp(end, "%")) {
			v->kind = SET_PERCENT;
			return 0;
		}
		if (!strcasecmp(end, "hz")) {
			v->kind = SET_FREQ;
			return 0;
		}
		int64_t ns;
		if (recipe_lex_parse_duration(text, &ns) == 0) {
			v->kind = SET_DURATION;
			v->i = ns;
			return 0;
		}
		return -1;
	}
	v->kind = SET_IDENT;
	v->s = strdup(text);
	return v->s ? 0 : -1;
}

/* ---- loading ----------------------------------------------------------- */

static int utf8_check(const struct recipe_src *src, struct diag_list *diags)
{
	const unsigned char *s = (const unsigned char *)src->text;
	int bad = 0;
	for (size_t i = 0; i < src->len;) {
		unsigned char c = s[i];
		size_t need = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
			: c >= 0xF0 && c <= 0xF4 ? 4 : 0;
		bool ok = need && i + need <= src->len;
		for (size_t k = 1; ok && k < need; k++)
			ok = (s[i + k] & 0xC0) == 0x80;
		if (ok && need == 3) {
			ok = !(c == 0xE0 && s[i + 1] < 0xA0) && !(c == 0xED && s[i + 1] >= 0xA0);
		} else if (ok && need == 4) {
			ok = !(c == 0xF0 && s[i + 1] < 0x90) && !(c == 0xF4 && s[i + 1] >= 0x90);
		}
		if (!ok) {
			recipe_diag_add(diags, DIAG_ERROR, src, i, 1, "invalid UTF-8 byte 0x%02x: recipes are UTF-8 text", c);
			bad++;
			/* one report per line is enough */
			while (i < src->len && s[i] != '\n')
				i++;
			continue;
		}
		i += need;
	}
	return bad;
}

struct recipe *recipe_load_text(const char *name, const char *text, size_t len,
				const struct recipe_defines *defs, struct diag_list *diags)
{
	struct recipe *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->name = strdup(name ? name : "<recipe>");
	r->text = malloc(len + 1);
	if (!r->name || !r->text) {
		recipe_free(r);
		return NULL;
	}
	memcpy(r->text, text, len);
	r->text[len] = 0;
	r->src.name = r->name;
	r->src.text = r->text;
	r->src.len = len;
	options_default(&r->options);
	if (utf8_check(&r->src, diags)) {
		recipe_free(r);
		return NULL;
	}
	size_t errors = recipe_parse(&r->src, defs, diags, &r->prog);
	/* check what did parse too: one run should show every mistake */
	errors += recipe_check(&r->src, &r->prog, diags, errors > 0);
	if (errors) {
		recipe_free(r);
		return NULL;
	}
	for (size_t i = 0; i < r->prog.nsettings; i++) {
		char msg[256];
		recipe_options_apply(&r->options, r->prog.settings[i]->name, &r->prog.settings[i]->value,
				     &r->threads_regex, msg, sizeof msg);
	}
	return r;
}

struct recipe *recipe_load_file(const char *path, const struct recipe_defines *defs,
				struct diag_list *diags)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		recipe_diag_add(diags, DIAG_ERROR, NULL, 0, 0, "cannot read recipe %s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20)) {
				recipe_diag_add(diags, DIAG_ERROR, NULL, 0, 0, "recipe %s is larger than 64 MiB", path);
				free(buf);
				fclose(f);
				return NULL;
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	bool err = ferror(f);
	fclose(f);
	if (err) {
		recipe_diag_add(diags, DIAG_ERROR, NULL, 0, 0, "cannot read recipe %s", path);
		free(buf);
		return NULL;
	}
	struct recipe *r = recipe_load_text(path, buf ? buf : "", len, defs, diags);
	free(buf);
	return r;
}

struct recipe *recipe_open(const char *recipe_arg, const char *text,
			   const struct recipe_defines *defs, FILE *errors)
{
	struct diag_list diags;
	recipe_diag_list_init(&diags);
	struct recipe *r = NULL;
	if (text) {
		r = recipe_load_text("-e", text, strlen(text), defs, &diags);
	} else {
		char path[4096];
		struct xerr e;
		char note[512];
		if (recipe_resolve_name(recipe_arg, path, sizeof path, note, sizeof note, &e) < 0) {
			fprintf(errors, "xgdbprof: %s\n", e.msg);
		} else {
			if (note[0])
				fprintf(errors, "xgdbprof: %s\n", note);
			r = recipe_load_file(path, defs, &diags);
		}
	}
	recipe_diag_list_print(&diags, errors);
	recipe_diag_list_release(&diags);
	return r;
}

const char *recipe_name(const struct recipe *r)
{
	return r->name;
}

void recipe_free(struct recipe *r)
{
	if (!r)
		return;
	recipe_program_free(&r->prog);
	free(r->threads_regex);
	free(r->name);
	free(r->text);
	free(r);
}

const struct recipe_options *recipe_options(const struct recipe *r)
{
	return &r->options;
}

int recipe_set_option(struct recipe *r, const char *name, const char *value, struct xerr *e)
{
	struct setting_value v;
	if (parse_option_text(value, &v) < 0) {
		free(v.s);
		return xerr_set(e, "bad value '%s' for %s", value, name);
	}
	char msg[256];
	int rc = recipe_options_apply(&r->options, name, &v, &r->threads_regex, msg, sizeof msg);
	free(v.s);
	if (rc < 0)
		return xerr_set(e, "%s", msg);
	return 0;
}

/* ---- names ------------------------------------------------------------- */

static const char *const search_dirs[] = {XGDBPROF_RECIPEDIR, XGDBPROF_SRC_RECIPEDIR, NULL};

const char *const *recipe_search_dirs(void)
{
	return search_dirs;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A program given where a recipe was meant (`--recipe alloc` beside a binary
 * named alloc) would otherwise be parsed as text and drown the user in
 * UTF-8 errors. */
static bool is_elf_file(const char *p)
{
	char magic[4];
	FILE *f = fopen(p, "rb");
	if (!f)
		return false;
	bool elf = fread(magic, 1, sizeof magic, f) == sizeof magic && !memcmp(magic, "\177ELF", 4);
	fclose(f);
	return elf;
}

static int use_local_file(const char *name, char *out, size_t outsz, struct xerr *e)
{
	if ((size_t)snprintf(out, outsz, "%s", name) >= outsz)
		return xerr_set(e, "recipe path is too long");
	if (!is_file(out))
		return xerr_set(e, "no recipe file %s", name);
	if (is_elf_file(out))
		return xerr_set(e, "%s is a program, not a recipe file (see `xgdbprof recipes` for the shipped ones)", name);
	return 0;
}

int recipe_resolve_name(const char *name, char *out, size_t outsz, char *note, size_t notesz, struct xerr *e)
{
	if (note && notesz)
		note[0] = '\0';
	if (strchr(name, '/'))
		return use_local_file(name, out, outsz, e);
	size_t n = strlen(name);
	const char *suffix = n > 7 && !strcmp(name + n - 7, ".recipe") ? "" : ".recipe";
	for (size_t i = 0; search_dirs[i]; i++) {
		if ((size_t)snprintf(out, outsz, "%s/%s%s", search_dirs[i], name, suffix) >= outsz)
			continue;
		if (is_file(out)) {
			if (note && notesz && is_file(name))
				snprintf(note, notesz, "took the shipped recipe '%s', not the file ./%s in this directory (write ./%s for the file)",
					 name, name, name);
			return 0;
		}
	}
	if (is_file(name))
		return use_local_file(name, out, outsz, e);
	return xerr_set(e, "no recipe named '%s' (see `xgdbprof recipes` for the list, or give a path)", name);
}

/* ---- probes ------------------------------------------------------------ */

unsigned recipe_needs(const struct recipe *r)
{
	return recipe_builtins_needs(r->prog.builtins_used);
}

size_t recipe_probe_count(const struct recipe *r)
{
	return r->prog.nprobes;
}

static int line_of(const struct recipe *r, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off && i < r->src.len; i++)
		line += r->text[i] == '\n';
	return line;
}

/* Whether a map key is fixed for a site: none, or the probed function
 * (`func`: the site's own name, as the counted event carries it), and at
 * a system call's site its name or number too. */
static bool key_known_at_site(const struct probe *p, const struct expr *target)
{
	for (size_t k = 0; k < target->nargs; k++) {
		const struct expr *key = target->args[k];
		bool fixed = key->kind == E_IDENT &&
			     (key->builtin == B_FUNC || (p->kind == PROBE_SYSCALL_SITE &&
							 (key->builtin == B_SYSCALL_NAME || key->builtin == B_SYSCALL_NR)));
		if (!fixed)
			return false;
	}
	return target->nargs <= (p->kind == PROBE_SYSCALL_SITE ? 2u : 1u);
}

static int summed_argument(const struct probe *p);

/* Whether probe p only counts: no predicate, and every statement is
 * `@map = count();` or `@map[func] = count();` (or `sum(argN)` of one
 * argument register, arg0..arg2, in place of count()), into a map no
 * other probe writes. */
static bool only_counts(const struct recipe *r, const struct probe *p)
{
	if ((p->kind != PROBE_FUNCTION && p->kind != PROBE_SYSCALL_SITE) || p->pred || p->body.n == 0)
		return false;
	/* sum(argN) of one argument register: the counter totals it too */
	bool sums_directly = summed_argument(p) >= 0;
	for (size_t k = 0; k < p->body.n; k++) {
		const struct stmt *st = p->body.v[k];
		if (st->kind != S_MAP_ASSIGN || !st->target || !key_known_at_site(p, st->target) || !st->value)
			return false;
		bool summed = sums_directly && st->value->builtin == B_SUM && st->value->nargs == 1 &&
			      st->value->args[0]->kind == E_IDENT && st->value->args[0]->builtin == B_INT_ARG;
		if (st->value->builtin != B_COUNT && !summed)
			return false;
		for (size_t q = 0; q < r->prog.nprobes; q++) {
			const struct probe *other = r->prog.probes[q];
			if (other == p)
				continue;
			for (size_t j = 0; j < other->body.n; j++) {
				const struct stmt *os = other->body.v[j];
				if (os->kind == S_MAP_ASSIGN && os->target && os->target->map == st->target->map)
					return false;
			}
		}
	}
	return true;
}

/* The argument register (0..2: rdi, rsi, rdx) every sum() of probe p
 * adds: `sum(argN)`, or `sum($v)` where $v was last set to argN by a
 * plain assignment before it; -1 when there is no sum, or one adds
 * anything else, or the body branches (an if: what holds is not known at
 * the sum). */
static int summed_argument(const struct probe *p)
{
	if (p->kind != PROBE_FUNCTION)
		return -1;
	enum { MAX_VARS = 64 };
	int var_arg[MAX_VARS];
	for (int k = 0; k < MAX_VARS; k++)
		var_arg[k] = -1;
	int summed = -1;
	for (size_t k = 0; k < p->body.n; k++) {
		const struct stmt *st = p->body.v[k];
		if (st->kind == S_IF)
			return -1;
		const struct expr *value = st->value;
		int arg = -1;
		if (value && value->kind == E_IDENT && value->builtin == B_INT_ARG)
			arg = value->s[3] - '0';
		if (st->kind == S_VAR_ASSIGN && st->target) {
			if (st->target->slot < 0 || st->target->slot >= MAX_VARS)
				return -1;
			var_arg[st->target->slot] = arg;
			continue;
		}
		if (st->kind != S_MAP_ASSIGN || !value || value->builtin != B_SUM)
			continue;
		const struct expr *what = value->nargs == 1 ? value->args[0] : NULL;
		if (!what)
			return -1;
		if (what->kind == E_IDENT && what->builtin == B_INT_ARG)
			arg = what->s[3] - '0';
		else if (what->kind == E_VAR && what->slot >= 0 && what->slot < MAX_VARS)
			arg = var_arg[what->slot];
		else
			return -1;
		if (arg < 0 || arg > 2 || (summed >= 0 && summed != arg))
			return -1;
		summed = arg;
	}
	return summed;
}

int recipe_probe(const struct recipe *r, size_t i, struct probe_spec *out)
{
	if (i >= r->prog.nprobes)
		return -1;
	const struct probe *p = r->prog.probes[i];
	memset(out, 0, sizeof *out);
	out->kind = p->kind;
	out->spec_kind = p->spec_kind;
	out->spec = p->spec;
	out->interval_ns = p->interval_ns;
	out->recipe_line = line_of(r, p->loc.off);
	out->entry_registers = p->reads_entry_registers;
	out->count_only = only_counts(r, p);
	int summed = summed_argument(p);
	out->sums_one_arg = summed >= 0;
	out->summed_arg = summed >= 0 ? (unsigned)summed : 0;
	if (p->spec_kind == PROBE_SPEC_FILELINE) {
		out->file = p->spec_file;
		out->line = p->spec_line;
	}
	return 0;
}

/* "a::B<T, U>::f" -> "a::B::f": generic arguments do not select instances;
 * "B::f" and "a::*" select as in symbols/name_pattern.h. */
bool recipe_probe_matches_function(const struct recipe *r, size_t i, const char *function)
{
	if (i >= r->prog.nprobes || !function)
		return false;
	const struct probe *p = r->prog.probes[i];
	if (p->spec_kind == PROBE_SPEC_REGEX) {
		return pcre2_match(p->spec_re, (PCRE2_SPTR)function, PCRE2_ZERO_TERMINATED, 0, 0,
				   p->spec_match, NULL) >= 0;
	}
	if (p->spec_kind != PROBE_SPEC_NAME)
		return false;
	if (!strcmp(function, p->spec))
		return true;
	char a[1024], b[1024];
	demangle_strip_generics(function, a, sizeof a);
	demangle_strip_generics(p->spec, b, sizeof b);
	/* the tracer armed what this selects: the same reading (suffix, glob) */
	return name_pattern_matches(b, a);
}
