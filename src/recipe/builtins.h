/* builtins.h — the recipe language's builtins and aggregations, one table
 * (internal to the recipe module): each one's name, id, type, how it is
 * written (bare, or called with n arguments), the probes it has a meaning
 * in, one line of help, and what it needs from the run (recipe.h,
 * RECIPE_NEEDS_*). The checker resolves names against it and recipe_needs
 * reads it, so the command learns what to set up without naming a builtin.
 * A new builtin is a row here, its id in recipe_ast.h and its value in
 * recipe_eval.c; what the checker tests of its arguments beyond their count
 * is in check_call (recipe_check.c).
 *
 * Contract: rows are static and ordered (the order "did you mean" prefers
 * among equally close names); several rows may share an id (tid is
 * thread.id). Lookups return NULL for a name no row has.
 */
#ifndef XGDBPROF_RECIPE_BUILTINS_H
#define XGDBPROF_RECIPE_BUILTINS_H

#include <stddef.h>
#include <stdint.h>

#include "recipe/recipe_ast.h"

#define PROBE_BIT(k) (1u << (k))
/* The probes that stop a thread: a stack, a thread, registers to read. */
#define THREAD_PROBES (PROBE_BIT(PROBE_SAMPLE) | PROBE_BIT(PROBE_FUNCTION) | \
	PROBE_BIT(PROBE_RETURN) | PROBE_BIT(PROBE_PANIC) | \
	PROBE_BIT(PROBE_SYSCALL) | PROBE_BIT(PROBE_SYSCALL_ENTRY) | PROBE_BIT(PROBE_SYSCALL_SITE))
#define ALL_PROBES 0xffffu

struct recipe_builtin {
	const char *name;
	enum builtin_id id;
	enum type type;       /* T_AGG: an aggregation, the value of a map */
	int args;             /* -1: written bare (ustack also as ustack(n)); n: exactly n arguments */
	unsigned probes;      /* PROBE_BIT of each probe kind it has a meaning in */
	const char *where;    /* those probes, for "only available in ..."; NULL: every probe */
	unsigned needs;       /* RECIPE_NEEDS_* */
	const char *help;     /* one line: what its value is */
};

size_t recipe_builtin_count(void);
const struct recipe_builtin *recipe_builtin_at(size_t i);
const struct recipe_builtin *recipe_builtin_find(const char *name);
/* The builtin's name closest to word, for "did you mean" (recipe_diag.h's
 * rule), or NULL. */
const char *recipe_builtin_closest(const char *word);
/* The RECIPE_NEEDS_* of every builtin whose id has its bit (1 << id) in
 * used (struct program's builtins_used). */
unsigned recipe_builtins_needs(uint64_t used);

#endif
