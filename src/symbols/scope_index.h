/* scope_index.h — fast PC → inline chain lookup over one Dwarf: an index of
 * its code scopes (subprograms and inlined subroutines). The prefix keeps
 * clear of libdw's own dwarf_ names.
 *
 * Why: with elfutils 0.188, dwarf_getscopes finds the inline chain for only a
 * few percent of the PCs in rustc DWARF and costs ~1 ms a call. This index
 * walks each compile unit's DIE tree once (lazily, on the first PC that falls
 * into it), records every DW_TAG_subprogram and DW_TAG_inlined_subroutine
 * that owns code (DW_AT_low_pc/high_pc or DW_AT_ranges) with its enclosing
 * entry, and flattens the nested ranges into sorted disjoint segments, each
 * naming the innermost entry. A lookup is then two binary searches.
 *
 * Invariants:
 *  - Addresses are DWARF addresses (module-relative: runtime PC minus the
 *    module's dwbias).
 *  - Entries of a CU never move once built: pointers returned stay valid
 *    until scope_index_free. entry->parent follows the DIE tree (the caller
 *    of an inlined subroutine), not address containment.
 *  - The `user` slots are left to the caller (the symbolizer caches interned
 *    names there); the index never reads them.
 *  - Not thread-safe.
 */
#ifndef XGDBPROF_SCOPE_INDEX_H
#define XGDBPROF_SCOPE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>

#include "util/error.h"

#define SCOPE_INDEX_NONE UINT32_MAX

struct scope_index_entry {
	Dwarf_Off die;          /* offset of the subprogram/inlined_subroutine DIE */
	uint32_t parent;        /* enclosing entry in the same CU, or SCOPE_INDEX_NONE */
	bool inlined;           /* DW_TAG_inlined_subroutine */
	/* Caller's cache slots, zero until the caller sets them. */
	bool user_call_done;      /* the user_call_* slots are set */
	const char *user_name;
	const char *user_full_name;
	const char *user_linkage;
	const void *user_call_file;
	int user_call_line, user_call_column;
	int user_decl_line;
};

struct scope_index_namespace {
	Dwarf_Off start, end;            /* DIE offsets of its subtree [start, end) */
	uint32_t parent;                 /* enclosing namespace, or SCOPE_INDEX_NONE */
	const char *name;                /* DW_AT_name (NULL when none) */
};

struct scope_index_cu {
	Dwarf_Die cudie;
	int lang;                        /* DW_AT_language, or -1 */
	bool built;                      /* entries/segments are valid */
	struct scope_index_entry *entries;
	size_t nentries;
	struct scope_index_segment *segments;
	size_t nsegments;
	struct scope_index_namespace *namespaces;  /* in DIE order, spans nested */
	size_t nnamespaces;
	Dwarf_Lines *lines;              /* sorted line table, NULL if none */
	size_t nlines;
	bool lines_loaded;
	Dwarf_Files *files;              /* for DW_AT_call_file */
	size_t nfiles;
	bool files_loaded;
	const char **user_files;         /* caller's cache, nfiles slots, malloc'd
					    by the caller, freed by the index */
};

struct scope_index;

struct scope_index_stats {
	size_t cus, cus_built, entries, segments;
	double build_seconds;            /* total time spent building CUs */
};

/* Returns an index over dw (which must outlive it), or NULL with err set.
 * Nothing is walked yet. */
struct scope_index *scope_index_new(Dwarf *dw, struct xerr *err);

void scope_index_free(struct scope_index *ix);

/* Finds the CU covering addr and, in it, the innermost entry whose ranges
 * contain addr. Returns 1 with *cu set and *leaf set (SCOPE_INDEX_NONE when
 * the CU has no function covering addr), 0 when no CU covers addr, -1 on a
 * DWARF error (err set). */
int scope_index_lookup(struct scope_index *ix, Dwarf_Addr addr,
		       struct scope_index_cu **cu, uint32_t *leaf, struct xerr *err);

/* The names of the namespaces enclosing the DIE at offset die (of built
 * cu), innermost first, at most max of them; returns how many. For rustc's
 * DWARF this tells an impl's function (inside `{impl#N}`) from a trait's
 * provided method (inside the trait's namespace). */
size_t scope_index_namespaces(const struct scope_index_cu *cu, Dwarf_Off die,
			      const char **names, size_t max);

/* The same for a DIE of any unit of the index's Dwarf (an inlined
 * function's abstract origin often lives in another codegen unit than its
 * caller), building that unit if it is not yet. Returns 0 when no unit
 * holds die (err set on a failed build). */
size_t scope_index_die_namespaces(struct scope_index *ix, Dwarf_Die *die, const char **names,
				  size_t max, struct xerr *err);

/* Returns the line-table row for addr in cu (the last row at or below addr in
 * the sequence containing addr), or NULL when none. */
Dwarf_Line *scope_index_line(struct scope_index_cu *cu, Dwarf_Addr addr);

/* Returns the full path of file number idx of cu's line table (joined with
 * the CU's directories and DW_AT_comp_dir by libdw), or NULL. */
const char *scope_index_file(struct scope_index_cu *cu, Dwarf_Word idx);

/* Returns cu's DW_AT_comp_dir, or NULL. libdw 0.188 joins a file name with
 * its line-table directory, but a relative directory (rustc's std:
 * "library/core/src") stays relative; callers join it with this. */
const char *scope_index_cu_comp_dir(struct scope_index_cu *cu);

/* Calls fn for every CU of the index (building nothing). Stops and returns
 * fn's value when it is non-zero; returns 0 otherwise. */
int scope_index_foreach_cu(struct scope_index *ix,
			   int (*fn)(struct scope_index_cu *cu, void *arg), void *arg);

/* Loads cu's line table if not done yet. Returns 0 (cu->lines may stay NULL
 * when the CU has none). */
int scope_index_cu_lines(struct scope_index_cu *cu);

void scope_index_get_stats(const struct scope_index *ix, struct scope_index_stats *out);

#endif
