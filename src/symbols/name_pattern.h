/* name_pattern.h — how a probe's function name selects functions, shared by
 * the tracer (which resolves it to addresses) and the recipe (which matches
 * events against it), so both read a name the same way.
 *
 * Both sides are keys: demangled names without generic arguments and
 * without a legacy hash ("sled::tree::Tree::insert"). A pattern selects a
 * key when it matches the whole key or a tail of it that starts at a "::"
 * outside <...>: "insert" selects every "…::insert", "Tree::insert" every
 * "…::Tree::insert", never "…::BTree::insert". A pattern holding * or ?
 * is a glob over such a tail: * is any run of characters ("::" included),
 * ? one character ("sled::tree::*" selects all of that module).
 */
#ifndef XGDBPROF_NAME_PATTERN_H
#define XGDBPROF_NAME_PATTERN_H

#include <stdbool.h>

/* Whether pattern (a key, maybe with * and ?) selects key. */
bool name_pattern_matches(const char *pattern, const char *key);

/* NULL when pattern reads as a name, else why not, naming the fix (an
 * empty segment: "sled::tree::", "a:::b", "::f"; a call's parentheses). */
const char *name_pattern_problem(const char *pattern);

/* Whether pattern holds glob characters. */
bool name_pattern_is_glob(const char *pattern);

/* How far key is from what pattern asks, for "closest names": edit
 * distance per path segment, aligned from the last one, each normalized to
 * 0..100 of the longer segment; the last segment weighs three times, a
 * segment the key lacks counts 100. Lower is closer; 0 is a match. */
int name_pattern_distance(const char *pattern, const char *key);

/* The next "::" of a path at or after s that is outside <...>, or NULL.
 * *depth carries the <...> nesting from one call to the next: start at 0 on
 * a name's first byte, then go on from the separator + 2. */
const char *name_path_separator(const char *s, int *depth);

#endif
