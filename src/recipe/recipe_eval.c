/* recipe_eval.c — runs a checked recipe against events.
 *
 * Values are borrowed from the event or allocated in a per-event scratch
 * list freed when the event is done; maps copy what they keep. Runtime
 * errors (division by zero, a missing argument, a report nobody can write)
 * stop the current action and come back as "FILE:LINE:COL: runtime error".
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "recipe/recipe_internal.h"
#include "util/array.h"
#include "util/compare.h"
#include "recipe/maps.h"
#include "recipe/locks_report.h"
#include "recipe/syscall_table.h"
#include "procfs/proc.h"
#include "report/report_format.h"
#include "util/output_file.h"
#include "util/text_escape.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

struct val {
	enum type t;
	int64_t i;
	const char *s;
	struct stack stk;     /* T_STACK: a view (frames borrowed) */
};

struct scratch {
	struct scratch *next;
	char data[];
};

struct recipe_run {
	const struct recipe *r;
	FILE *out;
	struct recipe_report_sink sink;
	struct map **maps;
	size_t nmaps;
	bool exit_requested;
	bool ended;
	const struct event *ev;
	const struct probe *probe;
	size_t probe_index;
	struct val *vars;
	size_t nvars;
	struct scratch *scratch;
	struct xerr *err;
	char **probe_names;
	struct map_coverage coverage;  /* armed_share 1: the probes saw the whole run */
	pcre2_code *skip_leaf;         /* options.skip_leaf compiled, NULL: none */
	pcre2_match_data *skip_leaf_match;
	uint64_t live_seq;             /* live() records, in the order made */
};

enum { EXEC_OK = 0, EXEC_ERROR = -1, EXEC_EXIT = 1 };

static char *scratch_alloc(struct recipe_run *run, size_t n)
{
	struct scratch *s = malloc(sizeof *s + n);
	if (!s)
		return NULL;
	s->next = run->scratch;
	run->scratch = s;
	return s->data;
}

static void scratch_release(struct recipe_run *run)
{
	while (run->scratch) {
		struct scratch *n = run->scratch->next;
		free(run->scratch);
		run->scratch = n;
	}
}

static int rt_error(struct recipe_run *run, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rt_error(struct recipe_run *run, struct loc loc, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct recipe_src *src = &run->r->src;
	int line = 1, col = 1;
	for (size_t i = 0; i < loc.off && i < src->len; i++) {
		if (src->text[i] == '\n') {
			line++;
			col = 1;
		} else if (((unsigned char)src->text[i] & 0xC0) != 0x80) {
			col++;
		}
	}
	xerr_set(run->err, "%s:%d:%d: runtime error: %s", src->name, line, col, msg);
	return EXEC_ERROR;
}

/* ---- lifecycle ---------------------------------------------------------- */

struct recipe_run *recipe_run_new(const struct recipe *r, FILE *out,
				  const struct recipe_report_sink *sink)
{
	struct recipe_run *run = calloc(1, sizeof *run);
	if (!run)
		return NULL;
	run->r = r;
	run->out = out;
	if (sink)
		run->sink = *sink;
	run->nmaps = r->prog.nmaps;
	run->maps = calloc(run->nmaps ? run->nmaps : 1, sizeof *run->maps);
	run->probe_names = calloc(r->prog.nprobes ? r->prog.nprobes : 1, sizeof *run->probe_names);
	if (!run->maps || !run->probe_names) {
		recipe_run_free(run);
		return NULL;
	}
	size_t max_keys = r->options.max_keys > 0 ? (size_t)r->options.max_keys : 0;
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct map_info *mi = r->prog.maps[i];
		run->maps[i] = map_new(mi->name, (enum map_agg)mi->agg, mi->nkeys, mi->lmin, mi->lmax,
				       mi->lstep, max_keys);
		if (!run->maps[i]) {
			recipe_run_free(run);
			return NULL;
		}
	}
	size_t maxslots = 0;
	for (size_t i = 0; i < r->prog.nprobes; i++) {
		const struct probe *p = r->prog.probes[i];
		if ((size_t)p->nslots > maxslots)
			maxslots = (size_t)p->nslots;
		char buf[512];
		const char *kind = probe_kind_name(p->kind);
		if (p->kind == PROBE_INTERVAL)
			snprintf(buf, sizeof buf, "interval:%" PRId64 "ns", p->interval_ns);
		else if (p->spec_kind == PROBE_SPEC_REGEX)
			snprintf(buf, sizeof buf, "%s:/%s/", kind, p->spec);
		else if (p->spec)
			snprintf(buf, sizeof buf, "%s:%s", kind, p->spec);
		else
			snprintf(buf, sizeof buf, "%s", kind);
		run->probe_names[i] = strdup(buf);
		if (!run->probe_names[i]) {
			recipe_run_free(run);
			return NULL;
		}
	}
	run->coverage.armed_share = 1;
	if (r->options.skip_leaf[0]) {
		int err;
		PCRE2_SIZE erroff;
		/* the checker compiled it already: this cannot fail but on memory */
		run->skip_leaf = pcre2_compile((PCRE2_SPTR)r->options.skip_leaf, PCRE2_ZERO_TERMINATED, 0, &err,
					       &erroff, NULL);
		run->skip_leaf_match = run->skip_leaf ? pcre2_match_data_create_from_pattern(run->skip_leaf, NULL)
						      : NULL;
		if (!run->skip_leaf_match) {
			recipe_run_free(run);
			return NULL;
		}
	}
	run->nvars = maxslots;
	run->vars = calloc(maxslots ? maxslots : 1, sizeof *run->vars);
	if (!run->vars) {
		recipe_run_free(run);
		return NULL;
	}
	return run;
}

void recipe_run_free(struct recipe_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; run->maps && i < run->nmaps; i++)
		map_free(run->maps[i]);
	free(run->maps);
	array_free_pointers(run->probe_names, run->r->prog.nprobes);
	free(run->vars);
	pcre2_match_data_free(run->skip_leaf_match);
	pcre2_code_free(run->skip_leaf);
	scratch_release(run);
	free(run);
}

bool recipe_run_exit_requested(const struct recipe_run *run)
{
	return run->exit_requested;
}

void recipe_run_set_coverage(struct recipe_run *run, double armed_share, bool lower_bound)
{
	run->coverage.armed_share = armed_share > 0 && armed_share < 1 ? armed_share : 1;
	run->coverage.lower_bound = lower_bound;
}

void recipe_run_set_coverage_windows(struct recipe_run *run, size_t windows, double dispersion)
{
	run->coverage.windows = windows;
	run->coverage.dispersion = dispersion;
}

const struct map_coverage *recipe_run_coverage(const struct recipe_run *run)
{
	return &run->coverage;
}

void recipe_run_set_coverage_counted(struct recipe_run *run, double counted, bool all_sites, const double *site_scales,
				     const double *site_sum_scales, size_t nsite_scales, uint64_t weighted_hits,
				     bool no_stops)
{
	bool usable = counted > 0 && nsite_scales > 0 && weighted_hits > 0 && (run->coverage.armed_share < 1 || no_stops);
	run->coverage.counted_no_stops = usable && no_stops;
	run->coverage.counted = usable ? counted : 0;
	run->coverage.counted_all = usable && all_sites;
	run->coverage.counted_seen = usable ? weighted_hits : 0;
	run->coverage.site_scales = usable ? site_scales : NULL;
	run->coverage.site_sum_scales = usable ? site_sum_scales : NULL;
	run->coverage.nsite_scales = usable ? nsite_scales : 0;
}

void recipe_run_set_coverage_aparts(struct recipe_run *run, const struct map_apart *aparts, size_t n)
{
	run->coverage.aparts = run->coverage.nsite_scales ? aparts : NULL;
	run->coverage.naparts = run->coverage.nsite_scales ? n : 0;
}

void recipe_run_set_coverage_range(struct recipe_run *run, double low, double high)
{
	bool partial = run->coverage.armed_share < 1;
	run->coverage.share_low = partial && low > 0 && low < 1 ? low : 0;
	run->coverage.share_high = partial && high > 0 && high < 1 ? high : 0;
}

static int record_cmp(const void *pa, const void *pb)
{
	const struct map_live_record *a = *(struct map_live_record *const *)pa;
	const struct map_live_record *b = *(struct map_live_record *const *)pb;
	int c = compare_u64(a->addr, b->addr);
	return c ? c : compare_u64(a->seq, b->seq);
}

int recipe_run_test_live(struct recipe_run *run, int (*test)(void *ctx, uint64_t addr, int64_t size), void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < run->nmaps; i++)
		for (size_t k = 0; map_agg(run->maps[i]) == MAP_AGG_LIVE && k < map_len(run->maps[i]); k++)
			n += map_entry_at(run->maps[i], k)->value.live->n;
	struct map_live_record **all = malloc((n ? n : 1) * sizeof *all);
	if (!all)
		return -1;
	n = 0;
	for (size_t i = 0; i < run->nmaps; i++)
		for (size_t k = 0; map_agg(run->maps[i]) == MAP_AGG_LIVE && k < map_len(run->maps[i]); k++) {
			struct map_live *l = map_entry_at(run->maps[i], k)->value.live;
			for (size_t r = 0; r < l->n; r++)
				all[n++] = &l->v[r];
		}
	/* An address recorded again was freed in between and handed out
	 * anew: only its newest record can still be allocated. */
	qsort(all, n, sizeof *all, record_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && all[i + 1]->addr == all[i]->addr) {
			all[i]->state = MAP_LIVE_FREED;
			continue;
		}
		/* Found freed at an earlier snapshot: it stays freed (a new
		 * block at its address would be a new record). */
		if (all[i]->state == MAP_LIVE_FREED)
			continue;
		int st = test(ctx, all[i]->addr, all[i]->size);
		all[i]->state = st == 0 ? MAP_LIVE_LIVE : st == 1 ? MAP_LIVE_FREED : MAP_LIVE_UNKNOWN;
	}
	free(all);
	for (size_t i = 0; i < run->nmaps; i++)
		map_live_tally(run->maps[i]);
	return 0;
}

void recipe_run_bound_live(struct recipe_run *run, int64_t (*class)(void *ctx, uint64_t addr),
			   int64_t (*census)(void *ctx, int64_t cls), void *ctx)
{
	for (size_t i = 0; i < run->nmaps; i++)
		map_live_bound(run->maps[i], class, census, ctx);
}

void recipe_run_set_seconds(struct recipe_run *run, double seconds)
{
	run->coverage.seconds = seconds > 0 ? seconds : 0;
}

/* ---- expressions ------------------------------------------------------- */

static const char *leaf_function(const struct event *ev)
{
	if (ev->function)
		return ev->function;
	if (ev->stack && ev->stack->nframes && ev->stack->frames[0].function)
		return ev->stack->frames[0].function;
	return "";
}

/* The function the probed one was called from, before skip_leaf folds
 * anything: at an entry the stack's leaf is the probed function itself (its
 * inline frames dropped), so its caller is the next frame; at a return the
 * stack is taken at the return address, already in the caller. Lets one
 * probe on a helper shared by several callers (glibc's futex wait) tell
 * them apart, which ustack cannot once skip_leaf has folded them. */
static const char *caller_function(const struct event *ev)
{
	size_t at = ev->kind == EVENT_FUNCTION_ENTRY ? 1 : 0;
	if (ev->stack && ev->stack->nframes > at && ev->stack->frames[at].function)
		return ev->stack->frames[at].function;
	return "";
}

static bool regex_matches(void *code, void *md, const char *s)
{
	return pcre2_match(code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0;
}

static int eval(struct recipe_run *run, const struct expr *e, struct val *out);

/* The decimal text of v in the run's scratch space; NULL out of memory. */
static const char *int_text(struct recipe_run *run, int64_t v)
{
	char *s = scratch_alloc(run, 24);
	if (s)
		snprintf(s, 24, "%" PRId64, v);
	return s;
}

/* int(x), str(x), strlen(s): the builtins of one evaluated argument. */
static int eval_of_argument(struct recipe_run *run, const struct expr *e, struct val *out)
{
	struct val a = {0};
	if (eval(run, e->args[0], &a) < 0)
		return -1;
	if (e->builtin == B_STRLEN) {
		out->i = (int64_t)strlen(a.s);
	} else if (e->builtin == B_STR) {
		out->s = a.t == T_STR ? a.s : int_text(run, a.i);
		if (!out->s)
			return rt_error(run, e->loc, "out of memory");
	} else if (a.t == T_INT) {
		out->i = a.i;
	} else {
		errno = 0;
		char *end;
		/* gdb prints decimal; hex only with an explicit 0x, never octal */
		const char *d = a.s + strspn(a.s, " +-");
		int base = d[0] == '0' && (d[1] == 'x' || d[1] == 'X') ? 16 : 10;
		long long x = strtoll(a.s, &end, base);
		out->i = end == a.s || errno ? 0 : x;
	}
	return 0;
}

static int eval_builtin(struct recipe_run *run, const struct expr *e, struct val *out)
{
	const struct event *ev = run->ev;
	out->t = e->type;
	switch (e->builtin) {
	case B_USTACK:
		out->t = T_STACK;
		if (ev->stack)
			out->stk = *ev->stack;
		if (run->skip_leaf) {
			size_t skip = 0;
			while (skip < out->stk.nframes && out->stk.frames[skip].function &&
			       regex_matches(run->skip_leaf, run->skip_leaf_match, out->stk.frames[skip].function))
				skip++;
			/* a stack made only of such frames stays whole: no caller to show */
			if (skip < out->stk.nframes) {
				out->stk.frames += skip;
				out->stk.nframes -= skip;
			}
		}
		if (e->kind == E_CALL && (size_t)e->args[0]->i < out->stk.nframes)
			out->stk.nframes = (size_t)e->args[0]->i;
		return 0;
	case B_FUNC:
		out->s = leaf_function(ev);
		return 0;
	case B_THREAD_ID:
		out->i = ev->thread.id;
		return 0;
	case B_THREAD_NAME:
		out->s = ev->thread.name ? ev->thread.name : "";
		return 0;
	case B_THREAD_WAIT:
		out->s = ev->thread.wait ? ev->thread.wait : ev->thread.state == 'R' ? "running" : "unknown";
		return 0;
	case B_THREAD_STATE: {
		char *s = scratch_alloc(run, 2);
		if (!s)
			return rt_error(run, e->loc, "out of memory");
		s[0] = ev->thread.state ? ev->thread.state : '?';
		s[1] = 0;
		out->s = s;
		return 0;
	}
	case B_PID: out->i = ev->pid; return 0;
	case B_CPU: out->i = ev->cpu; return 0;
	case B_THREAD_CPU_NS: out->i = (int64_t)ev->cpu_ns; return 0;
	case B_NSECS: out->i = (int64_t)ev->timestamp_ns; return 0;
	case B_UPTIME: out->i = (int64_t)ev->since_start_ns; return 0;
	case B_VM_DATA: out->i = ev->pid > 0 ? proc_vm_data_bytes(ev->pid) : -1; return 0;
	case B_TARGET_NSECS: out->i = (int64_t)(ev->target_ns ? ev->target_ns : ev->timestamp_ns); return 0;
	case B_WINDOW: out->i = ev->window; return 0;
	case B_CALLER: out->s = caller_function(ev); return 0;
	case B_ELAPSED: out->i = (int64_t)ev->elapsed_ns; return 0;
	case B_PROBE: out->s = run->probe_names[run->probe_index]; return 0;
	case B_RETVAL:
		if (out->t == T_INT)
			out->i = ev->syscall_result;
		else
			out->s = ev->retval ? ev->retval : "";
		return 0;
	case B_PANIC_MESSAGE: out->s = ev->panic_message ? ev->panic_message : ""; return 0;
	case B_PANIC_LOCATION: out->s = ev->panic_location ? ev->panic_location : ""; return 0;
	case B_SYSCALL_NAME: out->s = ev->syscall_name ? ev->syscall_name : ""; return 0;
	case B_SYSCALL_NR: out->i = ev->syscall_nr; return 0;
	case B_SYSCALL_ERROR:
		/* glibc's own errno names (EAGAIN, ETIMEDOUT); "" for a success. */
		out->s = ev->syscall_result < 0 && ev->syscall_result >= -4095
				 ? strerrorname_np((int)-ev->syscall_result) : NULL;
		if (!out->s)
			out->s = ev->syscall_result < 0 ? "E?" : "";
		return 0;
	case B_ARG: {
		const char *name = e->args[0]->s;
		struct event_value v = {0};
		if (!ev->arg || ev->arg(ev->arg_ctx, name, &v) < 0)
			return rt_error(run, e->loc, "%s has no argument named '%s'", leaf_function(ev), name);
		out->s = v.type == EVENT_VAL_INT ? int_text(run, v.i) : v.s ? v.s : "";
		if (!out->s)
			return rt_error(run, e->loc, "out of memory");
		return 0;
	}
	case B_INT_ARG:
		if (!ev->has_int_args)
			return rt_error(run, e->loc, "%s: %s has no entry registers here (an inlined copy); "
					"use arg(NAME)", e->s, leaf_function(ev));
		out->i = ev->int_args[e->s[3] - '0'];
		return 0;
	case B_INT:
	case B_STR:
	case B_STRLEN:
		return eval_of_argument(run, e, out);
	}
	return rt_error(run, e->loc, "'%s' cannot be evaluated here", e->s);
}

static int make_keys(struct recipe_run *run, const struct expr *e, struct map_key *keys,
		     struct val *vals)
{
	for (size_t i = 0; i < e->nargs; i++) {
		if (eval(run, e->args[i], &vals[i]) < 0)
			return -1;
		memset(&keys[i], 0, sizeof keys[i]);
		switch (vals[i].t) {
		case T_INT:
			keys[i].type = MAP_KEY_INT;
			keys[i].i = vals[i].i;
			break;
		case T_STR:
			keys[i].type = MAP_KEY_STR;
			keys[i].s = vals[i].s;
			break;
		default:
			keys[i].type = MAP_KEY_STACK;
			keys[i].stack = &vals[i].stk;
			break;
		}
	}
	return 0;
}

static int eval(struct recipe_run *run, const struct expr *e, struct val *out)
{
	memset(out, 0, sizeof *out);
	out->t = e->type;
	switch (e->kind) {
	case E_INT:
		out->i = e->i;
		return 0;
	case E_STR:
		out->s = e->s;
		return 0;
	case E_VAR:
		*out = run->vars[e->slot];
		if (out->t == T_UNKNOWN) {   /* not assigned yet on this path */
			out->t = e->type;
			out->s = "";
		}
		return 0;
	case E_MAP: {
		struct map_key keys[16];
		struct val vals[16];
		if (make_keys(run, e, keys, vals) < 0)
			return -1;
		const struct map *m = run->maps[e->map->index];
		const struct map_entry *ent = map_find(m, keys);
		if (out->t == T_STR)
			out->s = ent && ent->value.s ? ent->value.s : "";
		else
			out->i = ent ? map_entry_number(m, ent) : 0;
		return 0;
	}
	case E_IDENT:
	case E_CALL:
		return eval_builtin(run, e, out);
	case E_UNARY: {
		struct val a;
		if (eval(run, e->a, &a) < 0)
			return -1;
		out->t = T_INT;
		out->i = e->op == '!' ? !a.i : (int64_t)(0 - (uint64_t)a.i);
		return 0;
	}
	case E_MATCH: {
		struct val a;
		if (eval(run, e->a, &a) < 0)
			return -1;
		bool m = false;
		if (a.t == T_STACK) {
			for (size_t i = 0; i < a.stk.nframes && !m; i++)
				if (a.stk.frames[i].function)
					m = regex_matches(e->re, e->re_match, a.stk.frames[i].function);
		} else {
			m = regex_matches(e->re, e->re_match, a.s);
		}
		out->t = T_INT;
		out->i = e->op == '~' ? m : !m;
		return 0;
	}
	case E_COND: {
		struct val c;
		if (eval(run, e->a, &c) < 0)
			return -1;
		return eval(run, c.i ? e->b : e->args[0], out);
	}
	case E_BINARY:
		break;
	}
	struct val a, b;
	if (eval(run, e->a, &a) < 0)
		return -1;
	out->t = T_INT;
	if (e->op == OP_AND || e->op == OP_OR) {
		if ((e->op == OP_AND) != (a.i != 0)) {
			out->i = a.i != 0;
			return 0;
		}
		if (eval(run, e->b, &b) < 0)
			return -1;
		out->i = b.i != 0;
		return 0;
	}
	if (eval(run, e->b, &b) < 0)
		return -1;
	if (a.t == T_STR) {
		int c = strcmp(a.s, b.s);
		switch (e->op) {
		case OP_EQ: out->i = c == 0; break;
		case OP_NE: out->i = c != 0; break;
		case '<': out->i = c < 0; break;
		case '>': out->i = c > 0; break;
		case OP_LE: out->i = c <= 0; break;
		case OP_GE: out->i = c >= 0; break;
		}
		return 0;
	}
	uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
	switch (e->op) {
	case OP_EQ: out->i = a.i == b.i; break;
	case OP_NE: out->i = a.i != b.i; break;
	case '<': out->i = a.i < b.i; break;
	case '>': out->i = a.i > b.i; break;
	case OP_LE: out->i = a.i <= b.i; break;
	case OP_GE: out->i = a.i >= b.i; break;
	case '+': out->i = (int64_t)(ua + ub); break;   /* wraps, never UB */
	case '-': out->i = (int64_t)(ua - ub); break;
	case '*': out->i = (int64_t)(ua * ub); break;
	case '/':
	case '%':
		if (b.i == 0)
			return rt_error(run, e->loc, "division by zero");
		if (a.i == INT64_MIN && b.i == -1)
			out->i = e->op == '/' ? INT64_MIN : 0;
		else
			out->i = e->op == '/' ? a.i / b.i : a.i % b.i;
		break;
	}
	return 0;
}

/* ---- statements -------------------------------------------------------- */

static void print_stack(FILE *out, const struct stack *s)
{
	for (size_t i = 0; i < s->nframes; i++) {
		fputs("    ", out);
		map_format_frame(&s->frames[i], out);
		fputc('\n', out);
	}
}

static void print_stack_folded(FILE *out, const struct stack *s)
{
	for (size_t i = s->nframes; i-- > 0;) {
		const struct frame *f = &s->frames[i];
		if (f->function)
			text_put(out, f->function, TEXT_FORM_TERMINAL);
		else
			fprintf(out, "0x%" PRIx64, f->pc);
		if (i)
			fputc(';', out);
	}
}

/* The format string is the recipe's own text and is written as is (colours
 * belong there); every value may come from the target and is escaped. */
static int exec_printf(struct recipe_run *run, const struct expr *call)
{
	const char *f = call->args[0]->s;
	size_t argi = 1;
	for (const char *p = f; *p; p++) {
		if (*p != '%') {
			fputc(*p, run->out);
			continue;
		}
		if (p[1] == '%') {
			fputc('%', run->out);
			p++;
			continue;
		}
		char spec[24];
		size_t n = 0;
		spec[n++] = *p++;
		while (*p && strchr("-+ 0#.0123456789", *p) && n < 16)
			spec[n++] = *p++;
		char conv = *p;
		struct val v;
		if (eval(run, call->args[argi++], &v) < 0)
			return EXEC_ERROR;
		if (conv == 's' && v.t == T_STACK) {
			print_stack_folded(run->out, &v.stk);
			continue;
		}
		if (conv == 's' || conv == 'c') {
			char one[2] = { (char)v.i, 0 };
			char *text = text_escape_dup(conv == 's' ? v.s : one);
			if (!text)
				return rt_error(run, call->loc, "out of memory");
			spec[n++] = 's';
			spec[n] = 0;
			/* spec is built here from flags, digits and one conversion
			 * we chose; its argument has that conversion's type. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			fprintf(run->out, spec, text);
#pragma GCC diagnostic pop
			free(text);
		} else {
			spec[n++] = 'l';
			spec[n++] = 'l';
			spec[n++] = conv == 'i' ? 'd' : conv;
			spec[n] = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			fprintf(run->out, spec, (long long)v.i);
#pragma GCC diagnostic pop
		}
	}
	return EXEC_OK;
}

static cJSON *json_stack(const struct stack *s)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && s && i < s->nframes; i++) {
		const struct frame *f = &s->frames[i];
		cJSON *o = cJSON_CreateObject();
		if (!o)
			break;
		if (f->function)
			cJSON_AddStringToObject(o, "function", f->function);
		cJSON_AddNumberToObject(o, "pc", (double)f->pc);
		if (f->file) {
			cJSON_AddStringToObject(o, "file", f->file);
			cJSON_AddNumberToObject(o, "line", f->line);
		}
		if (f->inlined)
			cJSON_AddBoolToObject(o, "inlined", 1);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The built-in json(): the map with typed keys and values, one document. */
static char *map_to_json(const struct map *m)
{
	static const char *const agg_names[] = {
		"count", "sum", "min", "max", "avg", "hist", "lhist", "int", "str",
	};
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "map", map_name(m));
	cJSON_AddStringToObject(root, "aggregation", agg_names[map_agg(m)]);
	cJSON_AddNumberToObject(root, "dropped", (double)map_dropped(m));
	cJSON *entries = cJSON_AddArrayToObject(root, "entries");
	const struct map_entry **sorted = map_sorted(m);
	for (size_t i = map_len(m); entries && sorted && i-- > 0;) {
		const struct map_entry *e = sorted[i];
		cJSON *o = cJSON_CreateObject();
		cJSON *keys = cJSON_AddArrayToObject(o, "keys");
		for (size_t k = 0; keys && k < map_nkeys(m); k++) {
			const struct map_key *key = &e->keys[k];
			if (key->type == MAP_KEY_INT)
				cJSON_AddItemToArray(keys, cJSON_CreateNumber((double)key->i));
			else if (key->type == MAP_KEY_STR)
				cJSON_AddItemToArray(keys, cJSON_CreateString(key->s));
			else
				cJSON_AddItemToArray(keys, json_stack(key->stack));
		}
		if (map_agg(m) == MAP_AGG_STR)
			cJSON_AddStringToObject(o, "value", e->value.s ? e->value.s : "");
		else
			cJSON_AddNumberToObject(o, "value", (double)map_entry_number(m, e));
		cJSON_AddNumberToObject(o, "count", (double)e->value.count);
		if (map_nbuckets(m)) {
			cJSON *b = cJSON_AddArrayToObject(o, "buckets");
			for (size_t j = 0; b && j < map_nbuckets(m); j++)
				cJSON_AddItemToArray(b, cJSON_CreateNumber((double)e->value.buckets[j]));
		}
		cJSON_AddItemToArray(entries, o);
	}
	free(sorted);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	return text;
}

static int write_folded(FILE *out, const struct map *m)
{
	map_write_folded(m, out);   /* a map that does not fold writes nothing: the checker said so */
	return 0;
}

static int write_json(FILE *out, const struct map *m)
{
	char *text = map_to_json(m);
	if (!text)
		return -1;
	text_put_json_document(out, text);
	fputc('\n', out);
	cJSON_free(text);
	return 0;
}

/* The formats the recipe writes from a map itself when no session renders
 * them (recipe_map_writer), by their name in report/report_format.h's
 * table; the others need a session. */
static const struct map_writer {
	const char *format;
	bool any_map;                                  /* else only maps a profile is made of */
	int (*write)(FILE *out, const struct map *m);  /* 0, or -1: out of memory */
} map_writers[] = {
	{ "folded", false, write_folded },
	{ "json", true, write_json },
};

static const struct map_writer *map_writer_of(const struct report_format *f)
{
	for (size_t i = 0; f && i < sizeof map_writers / sizeof map_writers[0]; i++)
		if (!strcmp(map_writers[i].format, f->name))
			return &map_writers[i];
	return NULL;
}

bool recipe_map_writer(const struct report_format *f, bool *any_map)
{
	const struct map_writer *w = map_writer_of(f);
	*any_map = w && w->any_map;
	return w != NULL;
}

/* m written by the recipe's own writer w: into the file at path, or to the
 * run's output when path is NULL. */
static int write_map(struct recipe_run *run, const struct stmt *s, const struct map_writer *w,
		     const struct map *m, const char *path)
{
	FILE *f = run->out;
	struct output_file file;
	struct xerr e;
	if (path) {
		if (output_name_check(path, &e) < 0 || output_file_open(&file, path, &e) < 0)
			return rt_error(run, s->loc, "%s", e.msg);
		f = file.stream;
	}
	int rc = EXEC_OK;
	if (w->write(f, m) < 0)
		rc = rt_error(run, s->loc, "out of memory");
	if (path && rc != EXEC_OK)
		output_file_abort(&file);
	else if (path && output_file_commit(&file, &e) < 0)
		rc = rt_error(run, s->loc, "%s", e.msg);
	return rc;
}

/* print(@m, N, "name"): into the run's directory through the session,
 * else into the file name itself (a recipe run without a session). */
static int print_to_file(struct recipe_run *run, const struct stmt *s, const struct map *m, size_t top,
			 const char *name)
{
	struct xerr e = {{0}};
	if (run->sink.print_file) {
		if (run->sink.print_file(run->sink.ctx, m, top, name, &e) < 0)
			return rt_error(run, s->loc, "%s", e.msg);
		return EXEC_OK;
	}
	struct output_file file;
	if (output_name_check(name, &e) < 0 || output_file_open(&file, name, &e) < 0)
		return rt_error(run, s->loc, "%s", e.msg);
	map_print(m, file.stream, top, &run->coverage);
	if (output_file_commit(&file, &e) < 0)
		return rt_error(run, s->loc, "%s", e.msg);
	return EXEC_OK;
}

static int exec_report(struct recipe_run *run, const struct stmt *s)
{
	const struct expr *call = s->call;
	const struct map *m = run->maps[call->args[0]->map->index];
	struct recipe_report_opts o = {0};
	const struct map_info *info = call->args[0]->map;
	if (info && info->cpu_ns_sum && !info->other_value)
		o.weight_unit = "ns";
	if (call->nargs > 1) {
		struct val p;
		if (eval(run, call->args[1], &p) < 0)
			return EXEC_ERROR;
		o.path = p.s;
	}
	for (size_t i = 0; i < s->nnamed; i++) {
		struct val v;
		if (eval(run, s->named[i].value, &v) < 0)
			return EXEC_ERROR;
		if (!strcmp(s->named[i].name, "top"))
			o.top = v.i;
		else if (!strcmp(s->named[i].name, "title"))
			o.title = v.s;
		else if (!strcmp(s->named[i].name, "inverted"))
			o.inverted = v.i != 0;
		else if (!strcmp(s->named[i].name, "waits"))
			o.waits = v.i != 0;
		else if (!strcmp(s->named[i].name, "panics"))
			o.panics = v.i != 0;
		else if (!strcmp(s->named[i].name, "types"))
			o.types = v.s;
		else if (!strcmp(s->named[i].name, "unit"))
			o.weight_unit = v.s;
	}
	struct xerr e = {{0}};
	int sent = 0;   /* 1: the session's sink took the call */
	if (s->action == A_RENDER && run->sink.render)
		sent = run->sink.render(run->sink.ctx, s->format, m, &o, &e) < 0 ? -1 : 1;
	else if (s->action == A_REPORT && run->sink.report)
		sent = run->sink.report(run->sink.ctx, m, &o, &e) < 0 ? -1 : 1;
	else if (s->action == A_SNAPSHOT && run->sink.snapshot)
		sent = run->sink.snapshot(run->sink.ctx, m, &o, &e) < 0 ? -1 : 1;
	if (sent < 0)
		return rt_error(run, s->loc, "%s", e.msg);
	if (sent)
		return EXEC_OK;
	const struct map_writer *writer = s->action == A_RENDER ? map_writer_of(s->format) : NULL;
	if (s->action == A_REPORT) {
		if (o.title) {
			text_put(run->out, o.title, TEXT_FORM_TERMINAL);
			fputc('\n', run->out);
		}
		map_print(m, run->out, o.top > 0 ? (size_t)o.top : 0, &run->coverage);
		return EXEC_OK;
	}
	if (writer)
		return write_map(run, s, writer, m, o.path);
	return rt_error(run, s->loc, "%s() needs a profiling session: run the recipe "
			"with xgdbprof against a process, or use folded() here", s->call->s);
}

static int exec_list(struct recipe_run *run, const struct stmt_list *l);

static int exec_stmt(struct recipe_run *run, const struct stmt *s)
{
	switch (s->kind) {
	case S_VAR_ASSIGN: {
		struct val v;
		if (eval(run, s->value, &v) < 0)
			return EXEC_ERROR;
		run->vars[s->target->slot] = v;
		return EXEC_OK;
	}
	case S_MAP_ASSIGN: {
		struct map_key keys[16];
		struct val vals[16];
		const struct map_info *info = s->target->map;
		bool weight_only = run->ev && run->ev->weight_only;
		if (weight_only && (!info->cpu_ns_sum || info->other_value))
			return EXEC_OK;   /* event.h: weight for sums of thread.cpu_ns only */
		if (make_keys(run, s->target, keys, vals) < 0)
			return EXEC_ERROR;
		struct map *m = run->maps[info->index];
		if (weight_only) {
			if (map_add_weight(m, keys, (int64_t)run->ev->cpu_ns) < 0)
				return rt_error(run, s->loc, "out of memory");
			return EXEC_OK;
		}
		map_set_window(m, run->ev ? run->ev->window : 0);
		if (run->ev && run->ev->weighted)
			map_set_weight(m, run->ev->weight_site, run->ev->weight, run->ev->sum_weight);
		else
			map_set_weight(m, -1, 0, 0);
		struct val v = {0};
		const struct expr *x = s->value;
		if (x->type == T_AGG && x->builtin == B_LIVE) {
			struct val size = {0};
			if (eval(run, x->args[0], &v) < 0 || eval(run, x->args[1], &size) < 0)
				return EXEC_ERROR;
			if (map_update_live(m, keys, (uint64_t)v.i, size.i, ++run->live_seq) < 0)
				return rt_error(run, s->loc, "out of memory");
			return EXEC_OK;
		}
		if (x->type == T_AGG) {
			if (x->nargs && eval(run, x->args[0], &v) < 0)
				return EXEC_ERROR;
		} else if (eval(run, x, &v) < 0) {
			return EXEC_ERROR;
		}
		if (map_update(m, keys, v.i, v.t == T_STR ? v.s : NULL) < 0)
			return rt_error(run, s->loc, "out of memory");
		return EXEC_OK;
	}
	case S_IF: {
		struct val c;
		if (eval(run, s->cond, &c) < 0)
			return EXEC_ERROR;
		return exec_list(run, c.i ? &s->then : &s->els);
	}
	case S_CALL:
		if (run->ev && run->ev->weight_only)
			return EXEC_OK;   /* no sample happened: nothing to print or act on */
		break;
	}
	const struct expr *call = s->call;
	switch (s->action) {
	case A_EXIT:
		run->exit_requested = true;
		return EXEC_EXIT;
	case A_PRINTF:
		return exec_printf(run, call);
	case A_CLEAR:
		map_clear(run->maps[call->args[0]->map->index]);
		return EXEC_OK;
	case A_LOCKS: {
		struct val top = {0}, title = {0};
		for (size_t i = 0; i < s->nnamed; i++)
			if (eval(run, s->named[i].value, !strcmp(s->named[i].name, "top") ? &top : &title) < 0)
				return EXEC_ERROR;
		locks_report(run->maps[call->args[0]->map->index],
			     call->nargs > 1 ? run->maps[call->args[1]->map->index] : NULL,
			     call->nargs > 2 ? run->maps[call->args[2]->map->index] : NULL, run->out,
			     top.i > 0 ? (size_t)top.i : 0, title.s, &run->coverage);
		return EXEC_OK;
	}
	case A_SYSCALL_TABLE:
		syscall_table_report(run->maps[call->args[0]->map->index], run->maps[call->args[1]->map->index],
				     call->nargs > 2 ? run->maps[call->args[2]->map->index] : NULL,
				     call->nargs > 3 ? run->maps[call->args[3]->map->index] : NULL,
				     call->nargs > 4 ? run->maps[call->args[4]->map->index] : NULL,
				     call->nargs > 5 ? run->maps[call->args[5]->map->index] : NULL,
				     call->nargs > 6 ? run->maps[call->args[6]->map->index] : NULL, run->out,
				     &run->coverage);
		return EXEC_OK;
	case A_TABLE: {
		const struct map *maps[8];
		size_t n = 0;
		for (size_t i = 0; i < call->nargs && n < 8; i++)
			maps[n++] = run->maps[call->args[i]->map->index];
		map_table(maps, n, run->out, &run->coverage);
		return EXEC_OK;
	}
	case A_PRINT: {
		const struct expr *a = call->args[0];
		if (a->kind == E_MAP && !a->nargs) {
			struct val top = {0}, name = {0};
			if (call->nargs >= 2 && eval(run, call->args[1], &top) < 0)
				return EXEC_ERROR;
			if (call->nargs == 3 && eval(run, call->args[2], &name) < 0)
				return EXEC_ERROR;
			const struct map *m = run->maps[a->map->index];
			size_t n = top.i > 0 ? (size_t)top.i : 0;
			if (call->nargs == 3)
				return print_to_file(run, s, m, n, name.s);
			map_print(m, run->out, n, &run->coverage);
			return EXEC_OK;
		}
		struct val v;
		if (eval(run, a, &v) < 0)
			return EXEC_ERROR;
		if (v.t == T_STACK)
			print_stack(run->out, &v.stk);
		else if (v.t == T_STR) {
			text_put(run->out, v.s, TEXT_FORM_TERMINAL);
			fputc('\n', run->out);
		}
		else
			fprintf(run->out, "%" PRId64 "\n", v.i);
		return EXEC_OK;
	}
	default:
		return exec_report(run, s);
	}
}

static int exec_list(struct recipe_run *run, const struct stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		int rc = exec_stmt(run, l->v[i]);
		if (rc != EXEC_OK)
			return rc;
	}
	return EXEC_OK;
}

static int run_probe(struct recipe_run *run, size_t index)
{
	const struct probe *p = run->r->prog.probes[index];
	run->probe = p;
	run->probe_index = index;
	memset(run->vars, 0, run->nvars * sizeof *run->vars);
	if (p->pred) {
		struct val c;
		if (eval(run, p->pred, &c) < 0)
			return -1;
		if (!c.i)
			return 0;
	}
	int rc = exec_list(run, &p->body);
	return rc == EXEC_ERROR ? -1 : 0;
}

static enum probe_kind probe_kind_of(enum event_kind k)
{
	switch (k) {
	case EVENT_BEGIN: return PROBE_BEGIN;
	case EVENT_END: return PROBE_END;
	case EVENT_SAMPLE: return PROBE_SAMPLE;
	case EVENT_INTERVAL: return PROBE_INTERVAL;
	case EVENT_FUNCTION_ENTRY: return PROBE_FUNCTION;
	case EVENT_FUNCTION_RETURN: return PROBE_RETURN;
	case EVENT_PANIC: return PROBE_PANIC;
	case EVENT_SYSCALL_ENTRY: return PROBE_SYSCALL_ENTRY;
	case EVENT_SYSCALL_RETURN: return PROBE_SYSCALL;
	case EVENT_SYSCALL_SITE: return PROBE_SYSCALL_SITE;
	}
	return PROBE_BEGIN;
}

static bool fileline_matches(const struct probe *p, const struct event *ev)
{
	if (!ev->stack || !ev->stack->nframes || !ev->stack->frames[0].file)
		return false;
	const struct frame *f = &ev->stack->frames[0];
	size_t flen = strlen(p->spec_file), have = strlen(f->file);
	if (p->spec_line != f->line || flen > have)
		return false;
	const char *tail = f->file + have - flen;
	return !strcmp(tail, p->spec_file) && (tail == f->file || tail[-1] == '/');
}

static bool probe_matches(const struct recipe_run *run, size_t i, const struct event *ev)
{
	const struct probe *p = run->r->prog.probes[i];
	switch (p->kind) {
	case PROBE_FUNCTION:
	case PROBE_RETURN:
		if (p->spec_kind == PROBE_SPEC_FILELINE)
			return fileline_matches(p, ev);
		return recipe_probe_matches_function(run->r, i, leaf_function(ev));
	case PROBE_SYSCALL:
	case PROBE_SYSCALL_ENTRY:
	case PROBE_SYSCALL_SITE:
		if (!ev->syscall_name)
			return false;
		if (p->spec_kind == PROBE_SPEC_REGEX)
			return regex_matches(p->spec_re, p->spec_match, ev->syscall_name);
		return !strcmp(p->spec, ev->syscall_name);
	default:
		return true;
	}
}

static void print_unshown_maps(struct recipe_run *run)
{
	for (size_t i = 0; i < run->nmaps; i++) {
		const struct map_info *mi = run->r->prog.maps[i];
		/* also a map read only by other probes (a one-liner's
		 * `if @n > 100 { exit(); }`): what it computed is shown */
		if (!mi->shown && !mi->read_at_end)
			map_print(run->maps[i], run->out, 0, &run->coverage);
	}
}

int recipe_run_event(struct recipe_run *run, const struct event *ev, struct xerr *e)
{
	if (run->ended)
		return xerr_set(e, "the recipe already ended");
	if (run->exit_requested && ev->kind != EVENT_END)
		return 0;
	run->ev = ev;
	run->err = e;
	enum probe_kind kind = probe_kind_of(ev->kind);
	int rc = 0;
	const struct program *prog = &run->r->prog;
	if (ev->probe >= 0 && ev->kind != EVENT_BEGIN && ev->kind != EVENT_END &&
	    ev->kind != EVENT_SAMPLE && ev->kind != EVENT_PANIC) {
		if ((size_t)ev->probe >= prog->nprobes || prog->probes[ev->probe]->kind != kind)
			rc = xerr_set(e, "event for probe %d does not match a %s probe", ev->probe,
				      probe_kind_name(kind));
		else
			rc = run_probe(run, (size_t)ev->probe);
	} else {
		for (size_t i = 0; i < prog->nprobes && rc == 0; i++) {
			if (prog->probes[i]->kind != kind || !probe_matches(run, i, ev))
				continue;
			rc = run_probe(run, i);
			scratch_release(run);
			if (run->exit_requested && kind != PROBE_END)
				break;
		}
	}
	scratch_release(run);
	if (ev->kind == EVENT_END) {
		run->ended = true;
		print_unshown_maps(run);
	}
	fflush(run->out);
	run->ev = NULL;
	run->err = NULL;
	return rc;
}
