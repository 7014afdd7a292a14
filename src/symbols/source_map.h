/* source_map.h — rewrite source paths found in debug info to where the
 * sources live on this machine (`--source-map FROM=TO`, like gdb's
 * `set substitute-path`), plus automatic discovery of the Rust standard
 * library sources.
 *
 * Contract:
 *  - Rules match whole leading path components only: FROM=/build matches
 *    "/build" and "/build/x.c", never "/buildbot/x.c". The longest matching
 *    FROM wins; rules added later win over earlier ones of equal length.
 *  - Explicit rules are tried first. Only when none matches, a path of the
 *    form /rustc/<40 hex commit>/library/REST becomes
 *    SYSROOT/lib/rustlib/src/rust/library/REST, where SYSROOT is printed by
 *    `RUSTC --print sysroot`, run once (lazily, without a shell, on the first
 *    such path) and cached. The mapping is used only when that library
 *    directory exists; a missing or failing rustc just disables it.
 *  - A source_map is not thread-safe; it is owned by one symbolizer.
 */
#ifndef XGDBPROF_SOURCE_MAP_H
#define XGDBPROF_SOURCE_MAP_H

#include <stdbool.h>

#include "util/error.h"

struct source_map;

/* Returns an empty map (automatic rust-src discovery on, using "rustc" from
 * PATH, or $RUSTC when set), or NULL when out of memory. */
struct source_map *source_map_new(void);

void source_map_free(struct source_map *map);

/* Adds one rule from "FROM=TO" (the text of one --source-map option). FROM
 * must be non-empty; a trailing '/' on either side is ignored. Returns 0, or
 * -1 with a message naming the expected form. */
int source_map_add_spec(struct source_map *map, const char *spec, struct xerr *err);

/* Adds one rule. Returns 0, or -1 (empty FROM, out of memory). */
int source_map_add(struct source_map *map, const char *from, const char *to,
		   struct xerr *err);

/* Chooses the rustc used for rust-src discovery; NULL turns discovery off.
 * Resets a sysroot already discovered. */
void source_map_set_rustc(struct source_map *map, const char *rustc);

/* Returns true when the map can change some path (it has rules, or rust-src
 * discovery is on). */
bool source_map_active(const struct source_map *map);

/* Returns the rewritten path as a malloc'd string, or NULL when no rule
 * applies (or out of memory): the caller then keeps the original path. */
char *source_map_apply(struct source_map *map, const char *path);

/* Returns the discovered rust-src library directory (running rustc if not
 * done yet), or NULL when discovery is off or found nothing. Valid until the
 * map is freed or its rustc changed. */
const char *source_map_rust_library(struct source_map *map);

#endif
