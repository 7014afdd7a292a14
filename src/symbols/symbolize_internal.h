/* symbolize_internal.h — what symbolize.c (frames, names, caches, file:line
 * queries) and symbolize_modules.c (finding each module's ELF and DWARF,
 * loading its symbol table, building and refreshing the symbolizer, walking
 * its modules) share. Private to symbols/: nothing outside includes it.
 *
 * Conventions as in symbolize.h: int functions return 0 (or a count) on
 * success and -1 with err filled; pointer functions NULL when out of memory
 * or not found, as each says.
 */
#ifndef XGDBPROF_SYMBOLIZE_INTERNAL_H
#define XGDBPROF_SYMBOLIZE_INTERNAL_H

#include "symbols/symbolize.h"
#include "symbols/scope_index.h"
#include "util/slot_index.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- interned strings ---- */

struct istr {
	const char *mapped;      /* source-mapped form (or the string itself) */
	bool mapped_done;
	char s[];
};

/* Slots keep each string's hash: probes compare it before touching the
 * string, and growing the table does not hash the strings again. */
struct intern {
	struct istr **entries;   /* each malloc'd once: never moves */
	size_t count, cap;
	struct slot_index by_text;
};

/* ---- per-PC cache: lookup address → run of frames in a pool ---- */

/* Cold runs fill the cache with tens of thousands of PCs, and touching
 * fresh pages is a good part of their cost, so the cache is kept compact:
 * frames are stored without pc and module (the same for all frames of one
 * lookup; the record holds the module), records are appended in lookup
 * order, and the hash table, rebuilt on every growth, holds only 4-byte
 * record numbers. */
struct cached_frame {
	const char *function;
	const char *full_function;
	const char *file;
	const char *linkage;
	int line, column;
	int decl_line;
	uint8_t lang, source;
	bool inlined;
};

struct pc_record {
	uint64_t addr;
	const char *module;
	uint32_t first;          /* in pool */
	uint32_t count;
};

struct pc_cache {
	uint32_t *slots;         /* record number + 1; 0: empty */
	size_t cap;
	struct pc_record *records;
	size_t used, records_cap;
	struct cached_frame *pool;
	size_t npool, pool_cap;
};

/* A function's names as frames carry them (stack.h): what outputs show,
 * and the demangled name in full when it says more. */
struct shown_name {
	const char *name;
	const char *full;        /* NULL: the same as name */
};

/* ---- demangled names by linkage-string address ----
 * DW_AT_linkage_name is usually DW_FORM_strp: every DIE naming the same
 * function points at the same .debug_str bytes, so the address is a cheap
 * key that spares re-demangling and re-hashing long Rust names. */

struct name_slot {
	const char *linkage;
	struct shown_name names;
};

struct name_memo {
	struct name_slot *slots;
	size_t count, cap;
	struct slot_index by_linkage;
};

/* ---- modules ---- */

struct func_sym {
	uint64_t addr, size;
	const char *linkage;     /* in the ELF's string table: valid while the module is */
	bool named;              /* names is set (it is done when first needed) */
	struct shown_name names; /* interned */
	int binding_rank;        /* 0 global, 1 weak, 2 local: aliases sort by it */
	int ndx;                 /* symbol table order: then by it, as addr2line */
};

/* Where a module's ELF was read from. The path /proc/PID/maps names is not
 * always a file we can open, or the right one: the file may have been deleted
 * (or replaced) since it was mapped, or the target may see another file tree
 * (another mount namespace, a container). */
enum elf_route {
	ELF_ROUTE_NONE,          /* not read yet, or nowhere */
	ELF_ROUTE_PATH,          /* the path the maps name */
	ELF_ROUTE_ROOT,          /* /proc/PID/root/PATH: the target's file tree */
	ELF_ROUTE_EXE,           /* /proc/PID/exe: the executable, deleted or not */
	ELF_ROUTE_MAP_FILES,     /* /proc/PID/map_files/START-END: the mapped file */
	ELF_ROUTE_MEMORY,        /* only its loaded segments, from the target's memory */
};

struct sym_module {
	Dwfl_Module *mod;
	struct symbolizer *owner;
	bool info_done;          /* info filled (module_get) */
	struct symbolizer_module info;
	enum elf_route route;
	int map_files_errno;     /* why /proc/PID/map_files did not open, or 0 */
	bool dwarf_loaded;
	Dwarf *dw;
	Dwarf_Addr dwbias;
	enum frame_source dwarf_source;
	struct scope_index *index;
	bool syms_loaded;
	struct func_sym *syms;
	size_t nsyms;
	enum frame_source sym_source;
	bool noted;              /* its note (no symbols, ELF read through a fallback) is taken */
};

struct symbolizer {
	Dwfl *dwfl;
	pid_t pid;                    /* 0 for a file symbolizer */
	bool other_mount_ns;          /* the target's paths are read through /proc/PID/root */
	bool mount_ns_noted;
	bool attach_failed;           /* attach_modules ran out of memory */
	struct intern strings;
	struct pc_cache cache;
	struct name_memo names;       /* keys live in module data: emptied on refresh */
	struct source_map *source_map;
	size_t lookups, cache_hits;
	char *notes[SYMBOLIZER_MAX_NOTES];
	size_t nnotes;
};

/* m: the module the note is about (one note each), or NULL. */
void add_note(struct symbolizer *sym, struct sym_module *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Interned copy of s (valid for the symbolizer's life), or NULL: out of memory. */
const char *intern(struct intern *t, const char *s);

void intern_release(struct intern *t);
void pc_cache_clear(struct pc_cache *c);
void pc_cache_release(struct pc_cache *c);
void name_memo_release(struct name_memo *m);

/* symbolize_modules.c: modules and their symbols. */
/* The modules of a walk, sorted by start address (list_modules). */
struct module_walk {
	struct symbolizer *sym;
	struct sym_module **mods;
	size_t n, cap;
	bool oom;
};
int list_modules(struct symbolizer *sym, struct module_walk *w, struct xerr *err);
/* The maps' " (deleted)" suffix: the file was removed or replaced after it was mapped. */
bool deleted_name(const char *name);
struct sym_module *module_get(struct symbolizer *sym, Dwfl_Module *mod);
int module_load_dwarf(struct symbolizer *sym, struct sym_module *m, struct xerr *err);
int module_load_syms(struct sym_module *m, struct xerr *err);
struct func_sym *module_find_sym(struct sym_module *m, uint64_t addr);
const char *func_sym_name(struct symbolizer *sym, struct func_sym *f);
struct shown_name demangled(struct symbolizer *sym, const char *linkage);

#endif
