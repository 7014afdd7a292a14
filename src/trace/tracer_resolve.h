/* tracer_resolve.h — what a probe SPEC means in a process: every entry
 * address a `function`/`return` probe must cover.
 *
 * A SPEC is a function name (every monomorphized instance: generic
 * arguments, a v0 `<Type>::` wrapper and the legacy hash never select an
 * instance; a trailing part of the path selects every function it ends,
 * and * and ? glob: symbols/name_pattern.h), a /regex/ over demangled
 * names, or file:line. Names come from
 * our own symbol tables (symbolizer_foreach_function), inlined copies from a
 * walk of the DWARF DW_TAG_inlined_subroutine entries (entry_pc, else
 * low_pc, else the first range), file:line from the line table.
 *
 * Invariants: sites are sorted by address and unique per address; strings
 * are owned by the site list. Ints return 0 (or a count) on success, -1 with
 * e filled. An unknown name is an error whose message lists the closest
 * function names (name_pattern_distance).
 */
#ifndef XGDBPROF_TRACER_RESOLVE_H
#define XGDBPROF_TRACER_RESOLVE_H

#include "util/error.h"
#include "events/event.h"
#include "symbols/symbolize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracer_site {
	uint64_t addr;          /* runtime address of the entry */
	char *name;             /* instance name, generic arguments where DWARF names them */
	char *linkage;          /* ELF symbol, NULL for an inlined copy or a line */
	bool inlined;           /* an inlined copy: entry only, no return */
	char *file;             /* source of the entry (NULL when unknown) */
	int line;
	uint64_t size;          /* bytes of the out-of-line function, 0 if unknown */
};

struct tracer_sites {
	struct tracer_site *v;
	size_t n, cap;
};

void tracer_sites_release(struct tracer_sites *s);

/* Normalizes a demangled name for matching: drops a trailing legacy hash,
 * unwraps a leading "<Type>::" (not "<T as Trait>"), removes generic
 * arguments. Always NUL-terminates out. */
void tracer_name_key(const char *name, char *out, size_t outsz);

/* Appends to out every site of spec. kind is PROBE_SPEC_NAME, _REGEX or
 * _FILELINE (file and line given for the latter). with_inlined adds
 * inlined copies for names and regexes (needs a DWARF walk, ~0.1-1 s on a
 * large binary). Returns the number of sites added (0 only for a regex or
 * line that matched nothing), -1 with e (unknown name: closest names). */
int tracer_resolve(struct symbolizer *sym, enum probe_spec_kind kind, const char *spec,
		   const char *file, int line, bool with_inlined, struct tracer_sites *out, struct xerr *e);

/* Parses a command-line SPEC ("name", "/regex/", "file:line") into kind,
 * and for file:line into file (malloc'd into *file) and *line. Returns 0/-1. */
int tracer_parse_spec(const char *text, enum probe_spec_kind *kind, char **pattern, char **file,
		      int *line, struct xerr *e);

/* The entry addresses of the panic machinery (std's panic_with_hook /
 * rust_panic_with_hook, and rust_panic / __rustc::rust_panic): 0 each when
 * absent. Returns 0, or -1 when the process has neither (not Rust, or std
 * without symbols) with e saying so. *old_hook_abi is set when the hook is
 * the pre-1.7x `rust_panic_with_hook(payload, message, location, ..)`.
 * *hook_size is the hook's size from the symbol table (0: unknown). */
int tracer_resolve_panic(struct symbolizer *sym, uint64_t *hook_addr, uint64_t *hook_size, uint64_t *rust_panic_addr,
			 bool *old_hook_abi, struct xerr *e);

#endif
