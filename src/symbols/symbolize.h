/* symbolize.h — PC → module → inline chain of frames, on libdw/libdwfl.
 *
 * A symbolizer covers either a live process (every mapping of
 * /proc/PID/maps: executable with its PIE bias, shared libraries, vdso) or a
 * single ELF file (addresses are then the file's own virtual addresses, as
 * addr2line takes them).
 *
 * Contract:
 *  - symbolizer_lookup fills frames leaf-first for one PC (see stack.h): each
 *    inlined callee with the file:line:column of the PC inside it, then its
 *    caller with the call-site line (DW_AT_call_file/line/column), and so on
 *    up to the real (out-of-line) function. This is what `addr2line -i`
 *    prints. Each frame also carries its function's linkage name (the
 *    symbol: DW_AT_linkage_name, or the ELF symbol's name) and first line
 *    (DW_AT_decl_line, through the abstract origin of an inlined copy).
 *  - Names are demangled without hash (demangle_symbol(name, false)), from
 *    DW_AT_linkage_name when present (following DW_AT_abstract_origin and
 *    DW_AT_specification), else DW_AT_name, which for functions without a
 *    linkage name is the symbol name itself (C, extern "C", #[no_mangle]).
 *    A Rust name then becomes its display name (demangle_display_name) in
 *    frame.function, the same whether the name came from DWARF or the
 *    symbol table and whatever the mangling; frame.full_function keeps the
 *    demangled name when it differs.
 *  - Fallbacks, in order: DWARF in the ELF (FRAME_SOURCE_DWARF), DWARF in a
 *    separate debug file found by build-id or .gnu_debuglink
 *    (FRAME_SOURCE_DEBUGLINK), the .symtab (FRAME_SOURCE_SYMTAB), the
 *    .dynsym (FRAME_SOURCE_DYNSYM); a PC in no module, or in a module with no
 *    symbol covering it, gives one frame with FRAME_SOURCE_NONE and NULL
 *    function. debuginfod is never consulted (DEBUGINFOD_URLS is removed
 *    from the environment when a symbolizer is created).
 *  - A live process's module whose path does not open the mapped file (it
 *    was deleted or replaced since, or the target is in another mount
 *    namespace) is read through /proc/PID/root/PATH (other namespace),
 *    /proc/PID/exe (the executable), /proc/PID/map_files/START-END (needs
 *    CAP_SYS_ADMIN), else only its loaded segments from memory; each route
 *    but the first is reported as a note. The unwinder, on the same Dwfl,
 *    gets its CFI from the same file (docs/symbols.md).
 *  - All strings handed out (frame fields, module info, function names) are
 *    interned and stay valid until symbolizer_free, refreshes included.
 *  - Results are cached per module (DWARF index, symbol table) and per PC.
 *  - A symbolizer is not thread-safe.
 */
#ifndef XGDBPROF_SYMBOLIZE_H
#define XGDBPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdwfl.h>

#include "util/error.h"
#include "symbols/source_map.h"
#include "util/stack.h"

struct symbolizer;

struct symbolizer_module {
	const char *path;        /* as /proc/PID/maps names it, " (deleted)" included
				  * (or "[vdso: PID]"); the file or the path given */
	const char *build_id;    /* lowercase hex, "" when the ELF has none */
	uint64_t start, end;     /* runtime address range [start, end) */
	uint64_t bias;           /* runtime address - ELF virtual address */
	uint64_t offset;         /* file offset mapped at start (pprof's Mapping.file_offset) */
	bool has_dwarf;          /* DWARF found (in the file or a debug file) */
	const char *debug_file;  /* separate debug file used, or NULL */
};

struct symbolizer_function {
	const char *name;        /* demangled, without hash: the full name, not
				  * the display name frames carry */
	const char *linkage;     /* the symbol as in the ELF */
	uint64_t addr;           /* runtime address of the entry */
	uint64_t size;           /* 0 when the symbol table does not say */
	const char *module;      /* module path */
	enum frame_source source;/* FRAME_SOURCE_SYMTAB or FRAME_SOURCE_DYNSYM */
};

/* Reports every mapping of process pid. Returns NULL with err set (no such
 * process, no permission to read /proc/PID/maps, ...). */
struct symbolizer *symbolizer_new_pid(pid_t pid, struct xerr *err);

/* Reports the one ELF file at path with bias 0. Returns NULL with err set. */
struct symbolizer *symbolizer_new_file(const char *path, struct xerr *err);

void symbolizer_free(struct symbolizer *sym);

/* Re-reads /proc/PID/maps (libraries loaded or unloaded since). Modules
 * still mapped keep their caches; the per-PC cache is emptied. Returns 0, or
 * -1 with err set. For a file symbolizer it does nothing and returns 0. */
int symbolizer_refresh(struct symbolizer *sym, struct xerr *err);

/* Rewrites frame file names through map's explicit rules (NULL: none; the
 * automatic rust-src mapping is for reading sources, not for frames: see
 * source_map.h). The symbolizer does not take ownership; map must outlive
 * it or be replaced. Empties the per-PC cache. */
void symbolizer_set_source_map(struct symbolizer *sym, struct source_map *map);

/* Symbolizes pc into out[0..max). When is_return_address is true, pc is a
 * return address taken from the stack (a caller frame) and pc-1 is looked up
 * so the call instruction, not the next one, is named; frames still carry
 * pc. Always produces at least one frame when max > 0 (possibly with
 * FRAME_SOURCE_NONE); sets *n to the number written (a chain longer than max
 * keeps its leaf-most max frames). Returns 0, or -1 with err set on an
 * internal error (out of memory, corrupt DWARF). */
int symbolizer_lookup(struct symbolizer *sym, uint64_t pc, bool is_return_address,
		      struct frame *out, size_t max, size_t *n, struct xerr *err);

#define SYMBOLIZER_MAX_NOTES 8

/* What a report should tell about the lookups so far, one sentence each,
 * at most one per module: a module whose addresses found no symbol at all
 * ("no symbols in PATH (stripped; …)", or why its file could not be read),
 * a module read through /proc/PID/exe or /proc/PID/map_files, and once a
 * target in another mount namespace. Strings live as long as sym. */
size_t symbolizer_note_count(const struct symbolizer *sym);
const char *symbolizer_note(const struct symbolizer *sym, size_t i);

/* Describes the module containing pc. Returns 1 and fills *out, 0 when no
 * module contains pc, -1 with err set on error. */
int symbolizer_module_info(struct symbolizer *sym, uint64_t pc,
			   struct symbolizer_module *out, struct xerr *err);

/* Memory of the module containing pc that its program never uses: the
 * tail of the last page of its executable segment past the segment's end
 * (mapped executable with it), and the tail of the last page of its
 * writable segment past .bss (mapped writable, zero). Runtime addresses,
 * [lo, hi); an empty range (lo == hi) when the segment ends on a page
 * boundary, or another segment or RELRO shares that page. Returns 1 and
 * fills *out, 0 when no module contains pc, -1 with err on error. */
struct symbolizer_slack {
	uint64_t code_lo, code_hi;
	uint64_t data_lo, data_hi;
};
int symbolizer_module_slack(struct symbolizer *sym, uint64_t pc, struct symbolizer_slack *out, struct xerr *err);

/* The last code_need bytes of a code tail and the last data_need bytes of
 * a data tail as above, of the first module in address order that has
 * both (the dynamic loader's data tail is its heap: never), the module
 * containing prefer_pc first when it has. Ends, not starts: entry
 * counters hand tails out from their start. Returns 1 with *out, 0 when
 * no module has room, -1 with err. */
int symbolizer_unused_room(struct symbolizer *sym, uint64_t prefer_pc, uint64_t code_need, uint64_t data_need,
			   struct symbolizer_slack *out, struct xerr *err);

/* Calls fn for each module in address order. fn returns non-zero to stop;
 * that value is returned, else 0; -1 with err set on error. */
int symbolizer_foreach_module(struct symbolizer *sym,
			      int (*fn)(const struct symbolizer_module *m, void *arg),
			      void *arg, struct xerr *err);

/* Calls fn for every function symbol (STT_FUNC/STT_GNU_IFUNC, defined) of
 * the modules whose path equals module_path, or of all modules when it is
 * NULL, in address order within a module. fn returns non-zero to stop; that
 * value is returned, else 0; -1 with err set on error. */
int symbolizer_foreach_function(struct symbolizer *sym, const char *module_path,
				int (*fn)(const struct symbolizer_function *f, void *arg),
				void *arg, struct xerr *err);

/* Finds the runtime addresses where source line `line` of `file` begins:
 * each is_stmt line-table row for that file:line that starts a run of rows
 * for it (one address per block, as a breakpoint wants). `file` is an
 * absolute path (compared with the DWARF path and with its source-mapped
 * form) or a relative one matched against whole trailing path components
 * ("src/main.rs" matches "/x/src/main.rs", not "/x/mysrc/main.rs").
 * Returns the number of addresses stored in *addrs (malloc'd, sorted, no
 * duplicates, caller frees; NULL when 0), or -1 with err set. */
ssize_t symbolizer_addresses_for_line(struct symbolizer *sym, const char *file, int line,
				      uint64_t **addrs, struct xerr *err);

/* The libdwfl session, for unwinding with the same module list. Read-only:
 * reporting modules through it behind the symbolizer's back is not allowed. */
Dwfl *symbolizer_dwfl(struct symbolizer *sym);

struct symbolizer_stats {
	size_t lookups, cache_hits;
	size_t modules_with_index;
	size_t cus_built, index_entries, index_segments;
	double index_build_seconds;
};

void symbolizer_get_stats(struct symbolizer *sym, struct symbolizer_stats *out);

#endif
