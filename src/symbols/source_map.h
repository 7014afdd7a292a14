/* source_map.h — rewrite source paths found in debug info to where the
 * sources live on this machine (`--source-map FROM=TO`, like gdb's
 * `set substitute-path`), plus automatic discovery of the Rust standard
 * library sources.
 *
 * Contract:
 *  - Rules match whole leading path components only: FROM=/build matches
 *    "/build" and "/build/x.c", never "/buildbot/x.c". The longest matching
 *    FROM wins; rules added later win over earlier ones of equal length.
 *  - Explicit rules are tried first. Only when none matches, a Rust
 *    standard library path /rustc/<40 hex commit>/library/REST becomes
 *    SYSROOT/lib/rustlib/src/rust/library/REST — only when the local rustc
 *    is that very commit (`RUSTC -vV` prints "commit-hash: <commit>"; a
 *    rustc of another release has other sources, whose lines would be shown
 *    as the hot ones) and that library directory exists (rust-src is
 *    installed). SYSROOT is what `RUSTC --print sysroot` prints. Both run
 *    once, lazily on the first such path, without a shell, and are cached;
 *    a missing or failing rustc just disables the mapping.
 *  - Frames keep the path the debug info names (the symbolizer applies the
 *    explicit rules only: source_map_apply_rules); the rust-src mapping is
 *    for reading sources (--annotate). Reports show a std path short, as
 *    REST (source_map_shown_path), and its commit once.
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

/* The same with the explicit rules only (no rust-src discovery). */
char *source_map_apply_rules(struct source_map *map, const char *path);

/* Returns the discovered rust-src library directory (running rustc if not
 * done yet), or NULL when discovery is off or found nothing. Valid until the
 * map is freed or its rustc changed. */
const char *source_map_rust_library(struct source_map *map);

/* The local rustc's commit (40 lowercase hex digits; "" when `rustc -vV`
 * names none), running rustc if not done yet; NULL when discovery is off or
 * rustc did not run. Valid like source_map_rust_library's result. */
const char *source_map_rustc_commit(struct source_map *map);

/* What the automatic mapping does with path. */
enum source_map_rust {
	SOURCE_MAP_RUST_NOT_STD,      /* not a /rustc/<commit>/library/ path (or no map) */
	SOURCE_MAP_RUST_MAPPED,       /* to the local rust-src */
	SOURCE_MAP_RUST_NO_RUSTC,     /* discovery off, or rustc did not run */
	SOURCE_MAP_RUST_OTHER_COMMIT, /* the local rustc is another commit (or names none) */
	SOURCE_MAP_RUST_NO_SRC,       /* the same commit, but rust-src is not installed */
};
enum source_map_rust source_map_rust_status(struct source_map *map, const char *path);

/* For a Rust standard library path as debug info names it,
 * "/rustc/<40 hex commit>/library/REST": returns REST ("core/src/tuple.rs",
 * a suffix of path) and, when commit is not NULL, copies the commit there
 * (lowercase, NUL-terminated); NULL for any other path (and NULL). */
const char *source_map_rust_std_path(const char *path, char commit[41]);

/* The path reports show: a Rust std path as its REST, any other as is. */
const char *source_map_shown_path(const char *path);

#endif
