/* recipe_ast.h — the syntax tree of a recipe, shared by the parser, the
 * checker and the evaluator (internal to the recipe module).
 *
 * Invariants:
 *  - Every node records the byte offset and length of the source it came
 *    from (struct loc) so later passes can point diagnostics at it.
 *  - The parser builds the tree; the checker fills the `type`, `builtin`,
 *    `slot` and `map` annotations and compiles regexes; the evaluator only
 *    reads a tree the checker accepted.
 *  - All memory hangs off struct program and is released by recipe_program_free.
 */
#ifndef XGDBPROF_RECIPE_AST_H
#define XGDBPROF_RECIPE_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recipe/recipe.h"

struct loc {
	size_t off, len;
};

enum type { T_UNKNOWN, T_INT, T_STR, T_STACK, T_AGG, T_VOID };

enum expr_kind {
	E_INT,       /* i */
	E_STR,       /* s */
	E_VAR,       /* $name: s, slot */
	E_MAP,       /* @name[args]: s, args = keys, map */
	E_IDENT,     /* builtin without parentheses (ustack, thread.id): s, builtin */
	E_CALL,      /* name(args): s, args; builtins and aggregations */
	E_UNARY,     /* op a */
	E_BINARY,    /* a op b */
	E_MATCH,     /* a =~ /re/ (op '~') or a !~ /re/ (op 'n'): s = pattern, re */
	E_COND,      /* a ? b : c (args[0]) */
};

/* binary operators use these codes */
enum { OP_OR = 256, OP_AND, OP_EQ, OP_NE, OP_LE, OP_GE };

struct map_info;

/* Builtins (expr.builtin) and aggregations, resolved by the checker. */
enum builtin_id {
	B_USTACK, B_FUNC, B_THREAD_ID, B_THREAD_NAME, B_THREAD_STATE, B_THREAD_WAIT, B_PID, B_NSECS,
	B_UPTIME, B_ELAPSED, B_ARG, B_RETVAL, B_PANIC_MESSAGE, B_PANIC_LOCATION, B_CPU,
	B_PROBE, B_SYSCALL_NAME, B_SYSCALL_NR, B_SYSCALL_ERROR, B_INT, B_STR, B_STRLEN,
	B_COUNT, B_SUM, B_MIN, B_MAX, B_AVG, B_HIST, B_LHIST, B_INT_ARG, B_LIVE,
	B_TARGET_NSECS, B_WINDOW, B_CALLER, B_THREAD_CPU_NS, B_VM_DATA,
};

/* Statement calls (stmt.action): the fixed ones, then A_RENDER for the
 * call of any output format (flamegraph, folded, ...: stmt.format, a row
 * of report/report_format.h's table). */
enum action_id {
	A_PRINT, A_PRINTF, A_CLEAR, A_EXIT, A_REPORT, A_TABLE, A_SNAPSHOT, A_LOCKS,
	A_SYSCALL_TABLE,
	A_RENDER,
};
struct report_format;

struct expr {
	enum expr_kind kind;
	struct loc loc;
	int op;
	int64_t i;
	char *s;
	struct expr **args;
	size_t nargs, args_cap;
	struct expr *a, *b;
	/* set by the checker */
	enum type type;
	int builtin;
	int slot;
	struct map_info *map;
	void *re;               /* pcre2_code * */
	void *re_match;         /* pcre2_match_data * */
};

struct named_arg {
	char *name;
	struct loc loc;
	struct expr *value;
};

enum stmt_kind {
	S_MAP_ASSIGN,   /* target (E_MAP) = value */
	S_VAR_ASSIGN,   /* target (E_VAR) = value */
	S_IF,           /* cond, then, els */
	S_CALL,         /* call: print, printf, clear, exit, report, ... */
};

struct stmt_list {
	struct stmt **v;
	size_t n, cap;
};

struct stmt {
	enum stmt_kind kind;
	struct loc loc;
	struct expr *target, *value;    /* assignments */
	struct expr *cond;              /* if */
	struct stmt_list then, els;
	struct expr *call;              /* S_CALL: an E_CALL */
	struct named_arg *named;        /* S_CALL: key=value options */
	size_t nnamed, named_cap;
	int action;                     /* checker: which action (enum action_id) */
	const struct report_format *format;  /* checker: A_RENDER's format */
};

struct probe {
	enum probe_kind kind;
	struct loc loc;
	enum probe_spec_kind spec_kind;
	char *spec;
	char *spec_file;                /* FILELINE: the part before the last ':' */
	int spec_line;                  /* FILELINE: the line number */
	struct loc spec_loc;
	int64_t interval_ns;
	struct expr *pred;
	struct stmt_list body;
	int nslots;                     /* checker: scalar variables used */
	bool reads_entry_registers;     /* checker: uses arg0..arg5 */
	void *spec_re;                  /* pcre2_code * for REGEX specs */
	void *spec_match;
};

enum setting_kind { SET_INT, SET_DURATION, SET_IDENT, SET_STRING, SET_REGEX, SET_PERCENT, SET_FREQ };

struct setting_value {
	enum setting_kind kind;
	int64_t i;
	char *s;
};

struct setting {
	char *name;
	struct loc loc, value_loc;
	struct setting_value value;
};

/* What the checker learns about a map from all its uses. */
struct map_info {
	char *name;
	struct loc first;
	bool assigned, read, shown;     /* shown: printed, reported, cleared */
	bool read_at_end;               /* read in an end probe (which then says what it wants) */
	bool agg_known;
	int agg;                        /* enum map_agg */
	bool keys_known;
	size_t nkeys;
	enum type key_types[16];
	int64_t lmin, lmax, lstep;
	size_t index;                   /* in program.maps */
	/* Every assignment is sum(thread.cpu_ns): its values are on-CPU
	 * nanoseconds, which a profile of it says (weight unit "ns"). */
	bool cpu_ns_sum, other_value;
};

struct program {
	struct probe **probes;
	size_t nprobes, probes_cap;
	struct setting **settings;
	size_t nsettings, settings_cap;
	struct map_info **maps;
	size_t nmaps, maps_cap;
	uint64_t builtins_used;  /* bit (1 << builtin_id) for each builtin the probes use */
};

/* Parses src into *prog (zeroed by the caller). Errors go to diags; the
 * tree is still built from what could be parsed. Returns the number of
 * errors found. */
size_t recipe_parse(const struct recipe_src *src, const struct recipe_defines *defs,
		    struct diag_list *diags, struct program *prog);
/* Type-checks prog, resolves builtins, variables and maps, compiles regexes.
 * after_parse_errors: the tree is partial, so skip the whole-program checks
 * (maps never assigned, no probes, unused variables) that would only echo
 * the syntax errors. Returns the number of errors found. */
size_t recipe_check(const struct recipe_src *src, struct program *prog, struct diag_list *diags,
		    bool after_parse_errors);
/* Whether the recipe writes a map in format f itself when no session
 * renders it (recipe_eval.c: folded stacks, the map's JSON); *any_map is
 * then whether that writer takes any map rather than only those a profile
 * is made of (counts, sums, ints, live()). */
bool recipe_map_writer(const struct report_format *f, bool *any_map);
/* Converts a `set` value to an option. Returns 0, or -1 with a message. */
int recipe_options_apply(struct recipe_options *o, const char *name,
			 const struct setting_value *v, char **regex_storage, char *msg, size_t msgsz);

/* Frees a compiled regex and its match data (NULLs allowed). */
void recipe_regex_free(void *code, void *match_data);

void recipe_program_free(struct program *p);

#endif
