/* edit_distance.h — Levenshtein distance, for "did you mean" suggestions
 * (subcommands, recipe words, probe names).
 *
 * edit_distance(a, la, b, lb): the fewest single-byte insertions, deletions
 * and substitutions that turn the la bytes at a into the lb bytes at b.
 * Returns EDIT_DISTANCE_TOO_LONG when either is longer than
 * EDIT_DISTANCE_MAX bytes (callers truncate first, or treat such a word as
 * far from everything). No allocation; O(la * lb).
 */
#ifndef XGDBPROF_EDIT_DISTANCE_H
#define XGDBPROF_EDIT_DISTANCE_H

#include <stddef.h>

#define EDIT_DISTANCE_MAX 255
#define EDIT_DISTANCE_TOO_LONG ((size_t)-1)

size_t edit_distance(const char *a, size_t la, const char *b, size_t lb);

#endif
