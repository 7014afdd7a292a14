/* symbolize.c — a PC into frames: the inline chain from the module's scope
 * index, each frame's names (demangled once per linkage string), file:line
 * and call sites, cached per PC; and file:line into addresses. Modules, their
 * ELF and DWARF and the symbolizer's construction are symbolize_modules.c's. */
#include "symbols/symbolize_internal.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"
#include "util/path.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/scope_index.h"
#include "procfs/proc.h"

/* Eight bytes a step: demangled Rust paths are long. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = len * k;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	uint64_t tail = 0;
	memcpy(&tail, s + i, len - i);
	h = (h ^ tail) * k;
	h ^= h >> 32;
	return h * k;
}

static struct istr *intern_entry(struct intern *t, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = hash_bytes(s, len);
	struct slot_probe probe = slot_index_probe(&t->by_text, h);
	for (size_t i; (i = slot_probe_next(&t->by_text, &probe)) != SLOT_INDEX_NONE;)
		if (strcmp(t->entries[i]->s, s) == 0)
			return t->entries[i];
	if (t->count == t->cap) {
		struct istr **grown = array_grow(t->entries, &t->cap, t->count + 1, sizeof *grown);
		if (!grown)
			return NULL;
		t->entries = grown;
	}
	struct istr *e = malloc(sizeof *e + len + 1);
	if (!e)
		return NULL;
	e->mapped = NULL;
	e->mapped_done = false;
	memcpy(e->s, s, len + 1);
	if (slot_index_add(&t->by_text, h, t->count) < 0) {
		free(e);
		return NULL;
	}
	t->entries[t->count++] = e;
	return e;
}

const char *intern(struct intern *t, const char *s)
{
	if (!s)
		return NULL;
	struct istr *e = intern_entry(t, s);
	return e ? e->s : NULL;
}

void intern_release(struct intern *t)
{
	array_free_pointers(t->entries, t->count);
	slot_index_free(&t->by_text);
	memset(t, 0, sizeof *t);
}


static size_t pc_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

static const struct pc_record *pc_cache_find(const struct pc_cache *c, uint64_t addr)
{
	if (!c->cap)
		return NULL;
	for (size_t j = pc_hash(addr, c->cap);; j = (j + 1) & (c->cap - 1)) {
		uint32_t r = c->slots[j];
		if (!r)
			return NULL;
		if (c->records[r - 1].addr == addr)
			return &c->records[r - 1];
	}
}

void pc_cache_clear(struct pc_cache *c)
{
	if (c->slots)
		memset(c->slots, 0, c->cap * sizeof *c->slots);
	c->used = 0;
	c->npool = 0;
}

static void pc_cache_place(uint32_t *slots, size_t cap, uint64_t addr, uint32_t record)
{
	size_t j = pc_hash(addr, cap);
	while (slots[j])
		j = (j + 1) & (cap - 1);
	slots[j] = record + 1;
}

/* f[0..n) are the frames of one lookup: they share f[0].module. */
static int pc_cache_insert(struct pc_cache *c, uint64_t addr, const struct frame *f, size_t n)
{
	if (n == 0 || c->used >= UINT32_MAX - 1 || c->npool + n > UINT32_MAX)
		return 0;
	if ((c->used + 1) * 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		uint32_t *slots = calloc(cap, sizeof *slots);
		if (!slots)
			return -1;
		for (size_t i = 0; i < c->used; i++)
			pc_cache_place(slots, cap, c->records[i].addr, (uint32_t)i);
		free(c->slots);
		c->slots = slots;
		c->cap = cap;
	}
	struct pc_record *r = array_grow(c->records, &c->records_cap, c->used + 1, sizeof *r);
	if (!r)
		return -1;
	c->records = r;
	struct cached_frame *p = array_grow(c->pool, &c->pool_cap, c->npool + n, sizeof *p);
	if (!p)
		return -1;
	c->pool = p;
	for (size_t i = 0; i < n; i++)
		c->pool[c->npool + i] = (struct cached_frame){
			.function = f[i].function, .full_function = f[i].full_function,
			.file = f[i].file, .linkage = f[i].linkage,
			.line = f[i].line, .column = f[i].column, .decl_line = f[i].decl_line,
			.lang = (uint8_t)f[i].lang, .source = (uint8_t)f[i].source,
			.inlined = f[i].inlined,
		};
	c->records[c->used] = (struct pc_record){addr, f[0].module, (uint32_t)c->npool, (uint32_t)n};
	pc_cache_place(c->slots, c->cap, addr, (uint32_t)c->used);
	c->npool += n;
	c->used++;
	return 0;
}

void pc_cache_release(struct pc_cache *c)
{
	free(c->slots);
	free(c->records);
	free(c->pool);
	memset(c, 0, sizeof *c);
}


/* The memo's entry for linkage, added empty (names.name NULL) if new; valid
 * until the next call. NULL: out of memory. */
static struct shown_name *name_memo_slot(struct name_memo *m, const char *linkage)
{
	uintptr_t key = (uintptr_t)linkage;
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &key, sizeof key);
	struct slot_probe probe = slot_index_probe(&m->by_linkage, h);
	for (size_t i; (i = slot_probe_next(&m->by_linkage, &probe)) != SLOT_INDEX_NONE;)
		if (m->slots[i].linkage == linkage)
			return &m->slots[i].names;
	if (array_reserve(&m->slots, &m->cap, m->count + 1, sizeof *m->slots) < 0 ||
	    slot_index_add(&m->by_linkage, h, m->count) < 0)
		return NULL;
	m->slots[m->count] = (struct name_slot){.linkage = linkage};
	return &m->slots[m->count++].names;
}

void name_memo_release(struct name_memo *m)
{
	free(m->slots);
	slot_index_free(&m->by_linkage);
	memset(m, 0, sizeof *m);
}

static enum frame_lang lang_of_cu(int dw_lang)
{
	switch (dw_lang) {
	case DW_LANG_Rust:
		return FRAME_LANG_RUST;
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_C99: case DW_LANG_C11:
		return FRAME_LANG_C;
	case DW_LANG_C_plus_plus: case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11: case DW_LANG_C_plus_plus_14:
		return FRAME_LANG_CXX;
	default:
		return FRAME_LANG_UNKNOWN;
	}
}

static enum frame_lang lang_of_symbol(const char *linkage)
{
	if (demangle_is_rust(linkage, strlen(linkage)))
		return FRAME_LANG_RUST;
	if (linkage[0] == '_' && linkage[1] == 'Z')
		return FRAME_LANG_CXX;
	return FRAME_LANG_UNKNOWN;
}

/* Returns path joined with cu's comp_dir (in buf) when it is relative. */
static const char *absolute_path(struct scope_index_cu *cu, const char *path,
				 char *buf, size_t size)
{
	const char *dir = path[0] != '/' && cu ? scope_index_cu_comp_dir(cu) : NULL;
	if (dir && dir[0] == '/') {
		int len = snprintf(buf, size, "%s/%s", dir, path);
		if (len > 0 && (size_t)len < size)
			return buf;
	}
	return path;
}

/* Returns the interned absolute path (before source mapping). */
static struct istr *intern_path(struct symbolizer *sym, struct scope_index_cu *cu,
				const char *path)
{
	char buf[4096];
	return intern_entry(&sym->strings, absolute_path(cu, path, buf, sizeof buf));
}

/* Returns e's string as frames show it: source-mapped when a map is set. */
static const char *shown_path(struct symbolizer *sym, struct istr *e)
{
	if (!e)
		return NULL;
	if (!source_map_active(sym->source_map))
		return e->s;
	if (!e->mapped_done) {
		char *m = source_map_apply_rules(sym->source_map, e->s);
		/* intern() may rehash the table but never moves entries. */
		e->mapped = m ? intern(&sym->strings, m) : NULL;
		free(m);
		e->mapped_done = true;
	}
	return e->mapped ? e->mapped : e->s;
}

static const char *frame_file(struct symbolizer *sym, struct scope_index_cu *cu,
			      const char *path)
{
	return path ? shown_path(sym, intern_path(sym, cu, path)) : NULL;
}

/* File number idx of cu's line table as an interned path (before source
 * mapping), memoized per CU (cu->user_files holds struct istr pointers);
 * NULL when there is no such file. */
static struct istr *cu_file_entry(struct symbolizer *sym, struct scope_index_cu *cu,
				  Dwarf_Word idx)
{
	const char *raw = scope_index_file(cu, idx);
	if (!raw)
		return NULL;
	if (!cu->user_files) {
		cu->user_files = calloc(cu->nfiles, sizeof *cu->user_files);
		if (!cu->user_files)
			return intern_path(sym, cu, raw);
	}
	if (!cu->user_files[idx])
		cu->user_files[idx] = (const char *)intern_path(sym, cu, raw);
	return (struct istr *)cu->user_files[idx];
}

/* File number idx of cu's line table as frames show it. */
static const char *cu_file(struct symbolizer *sym, struct scope_index_cu *cu, Dwarf_Word idx)
{
	return shown_path(sym, cu_file_entry(sym, cu, idx));
}

/* The file of a line-table row. */
static const char *line_file(struct symbolizer *sym, struct scope_index_cu *cu, Dwarf_Line *line)
{
	Dwarf_Files *files;
	size_t idx;
	if (dwarf_line_file(line, &files, &idx) == 0) {
		scope_index_file(cu, 0);      /* loads cu->files */
		if (files == cu->files)
			return cu_file(sym, cu, idx);
	}
	return frame_file(sym, cu, dwarf_linesrc(line, NULL, NULL));
}

static const char *die_string(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, attr, &a))
		return NULL;
	return dwarf_formstring(&a);
}

/* The DIE that declares the function of die: an inlined subroutine's
 * abstract origin, a definition's specification (possibly in another unit). */
static void declaring_die(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (int hops = 0; hops < 8; hops++) {
		Dwarf_Attribute a;
		Dwarf_Die next;
		if (dwarf_attr(out, DW_AT_linkage_name, &a) || dwarf_attr(out, DW_AT_MIPS_linkage_name, &a))
			break;
		if (!dwarf_attr(out, DW_AT_abstract_origin, &a) && !dwarf_attr(out, DW_AT_specification, &a))
			break;
		if (!dwarf_formref_die(&a, &next))
			break;
		*out = next;
	}
}

/* Whether the function declared by decl sits in trait's own namespace
 * before any impl's (`{impl#N}`) going outwards: then it is the trait's
 * provided method, not an impl's. DWARF without namespaces says neither. */
static bool in_trait_namespace(struct sym_module *m, Dwarf_Die *decl, const char *trait,
			       size_t trait_len)
{
	const char *names[16];
	size_t n = scope_index_die_namespaces(m->index, decl, names, 16, NULL);
	for (size_t i = 0; i < n; i++) {
		if (!names[i] || strncmp(names[i], "{impl#", 6) == 0)
			return false;
		if (strlen(names[i]) == trait_len && memcmp(names[i], trait, trait_len) == 0)
			return true;
	}
	return false;
}

/* A Rust name `<S as T>::m` whose function rustc placed in T's namespace
 * is T's provided method: legacy symbols name it `T::m`, v0 symbols by the
 * instance; DWARF tells which, so both get legacy's name. */
static struct shown_name provided_method_name(struct symbolizer *sym, struct sym_module *m,
					      struct scope_index_cu *cu, Dwarf_Die *die,
					      struct shown_name names)
{
	Dwarf_Die decl;
	if (cu->lang != DW_LANG_Rust || !names.name || names.name[0] != '<')
		return names;
	size_t trait_len;
	char *shown = demangle_display_provided_method(names.name, &trait_len);
	if (!shown)
		return names;
	/* the trait's last segment: "a::Visit" of "a::Visit::describe" */
	size_t seg = trait_len;
	while (seg > 0 && !(shown[seg - 1] == ':' && seg >= 2 && shown[seg - 2] == ':'))
		seg--;
	declaring_die(die, &decl);
	if (!in_trait_namespace(m, &decl, shown + seg, trait_len - seg)) {
		free(shown);
		return names;
	}
	const char *name = intern(&sym->strings, shown);
	free(shown);
	if (name) {
		if (!names.full)
			names.full = names.name;
		names.name = name;
	}
	return names;
}

/* An async fn's body is a closure to both manglings (legacy
 * `handle_write::{{closure}}`, v0 `handle_write::{closure#0}`); DWARF names
 * it `{async_fn#0}` (an async block `{async_block#0}`). Reports name it as
 * the function it is: `handle_write (async)`, `serve::{async block}`. */
static const char *async_display_name(struct symbolizer *sym, Dwarf_Die *die, const char *name)
{
	const char *dw = die_string(die, DW_AT_name);
	static const char closure[] = "::{closure}";
	size_t n = name ? strlen(name) : 0, c = sizeof closure - 1;
	if (!dw || n <= c || strcmp(name + n - c, closure) != 0)
		return name;
	bool async_fn = !strncmp(dw, "{async_fn#", 10), async_block = !strncmp(dw, "{async_block#", 13);
	if (!async_fn && !async_block)
		return name;
	/* An async block sits in the closures of the async fn (or closure)
	 * around it: `serve::{closure}::{closure}` is serve's block. Those
	 * levels are dropped, so a block in a plain closure reads as its
	 * function's too. */
	size_t keep = n - c;
	while (async_block && keep > c && strncmp(name + keep - c, closure, c) == 0)
		keep -= c;
	char buf[4096];
	if ((size_t)snprintf(buf, sizeof buf, "%.*s%s", (int)keep, name, async_fn ? " (async)" : "::{async block}") >=
	    sizeof buf)
		return name;
	return intern(&sym->strings, buf);
}

static void entry_names(struct symbolizer *sym, struct sym_module *m, struct scope_index_cu *cu,
			struct scope_index_entry *e)
{
	if (e->user_name)
		return;
	Dwarf_Die die;
	if (!dwarf_offdie(m->dw, e->die, &die))
		return;
	const char *link = die_string(&die, DW_AT_linkage_name);
	if (!link)
		link = die_string(&die, DW_AT_MIPS_linkage_name);
	if (link) {
		struct shown_name *memo = name_memo_slot(&sym->names, link);
		struct shown_name names;
		if (memo && memo->name) {
			names = *memo;
		} else {
			names = provided_method_name(sym, m, cu, &die, demangled(sym, link));
			if (memo)
				*memo = names;
		}
		e->user_name = names.name;
		e->user_full_name = names.full;
		/* link points into the module's DWARF, which a refresh may
		 * close: frames hand out interned strings only. */
		e->user_linkage = intern(&sym->strings, link);
	} else {
		e->user_name = intern(&sym->strings, die_string(&die, DW_AT_name));
		e->user_linkage = e->user_name;
	}
	e->user_name = async_display_name(sym, &die, e->user_name);
	/* Follows DW_AT_abstract_origin/specification: an inlined copy
	 * declares nothing itself. */
	int decl_line = 0;
	if (dwarf_decl_line(&die, &decl_line) == 0 && decl_line > 0)
		e->user_decl_line = decl_line;
}

static Dwarf_Word die_udata(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute a;
	Dwarf_Word w = 0;
	if (dwarf_attr(die, attr, &a) && dwarf_formudata(&a, &w) == 0)
		return w;
	return 0;
}

/* Caches the call site of an inlined entry in its user_call_* slots (the
 * file as its interned path, so that a later source map still applies). */
static void entry_call_site(struct symbolizer *sym, struct sym_module *m,
			    struct scope_index_cu *cu, struct scope_index_entry *e)
{
	if (e->user_call_done)
		return;
	Dwarf_Die die;
	if (dwarf_offdie(m->dw, e->die, &die)) {
		Dwarf_Attribute a;
		if (dwarf_attr(&die, DW_AT_call_file, &a))
			e->user_call_file = cu_file_entry(sym, cu, die_udata(&die, DW_AT_call_file));
		e->user_call_line = (int)die_udata(&die, DW_AT_call_line);
		e->user_call_column = (int)die_udata(&die, DW_AT_call_column);
	}
	e->user_call_done = true;
}

/* Frames of one lookup: in `local` unless the chain is deeper. */
struct frame_buf {
	struct frame *f;
	size_t n, cap;
	struct frame local[16];
};

static void frame_buf_init(struct frame_buf *b)
{
	b->f = b->local;
	b->n = 0;
	b->cap = sizeof b->local / sizeof b->local[0];
}

static void frame_buf_release(struct frame_buf *b)
{
	if (b->f != b->local)
		free(b->f);
}

static int frame_push(struct frame_buf *b, const struct frame *f)
{
	if (b->n == b->cap) {
		size_t cap = b->cap * 2;
		struct frame *n = b->f == b->local ? malloc(cap * sizeof *n)
						    : realloc(b->f, cap * sizeof *n);
		if (!n)
			return -1;
		if (b->f == b->local)
			memcpy(n, b->local, b->n * sizeof *n);
		b->f = n;
		b->cap = cap;
	}
	b->f[b->n++] = *f;
	return 0;
}

/* Says why a module's addresses found no symbol: a stripped file is not a
 * file we could not read. */
static void note_no_symbols(struct symbolizer *sym, struct sym_module *m)
{
	const char *path = m->info.path;
	int pid = (int)sym->pid;
	/* the kernel's vDSO names only what it exports (its clock_gettime's
	 * inner loop is a local function): nothing is stripped, nothing to
	 * install (a CI run said "no symbols in [vdso: PID] (stripped; …)") */
	if (!strncmp(path, "[vdso", 5)) {
		add_note(sym, m, "an address in the kernel's vDSO (%s) outside the functions it exports: it carries "
			 "no other symbols", path);
		return;
	}
	if (m->map_files_errno == EPERM || m->map_files_errno == EACCES)
		add_note(sym, m, "no symbols for %s: the file was deleted or replaced after the process mapped it, "
			 "or does not open here; /proc/%d/map_files would open it but needs CAP_SYS_ADMIN "
			 "or CAP_CHECKPOINT_RESTORE (run xgdbprof as root)", path, pid);
	else if (m->route == ELF_ROUTE_MEMORY || (pid && deleted_name(path)))
		add_note(sym, m, "no symbols for %s: the file was deleted or replaced after the process mapped it, "
			 "and %s", path, m->route == ELF_ROUTE_MEMORY ? "only its loaded segments could be read"
								  : "could not be read through /proc either");
	else if (pid && m->route == ELF_ROUTE_NONE && path[0] == '/')
		add_note(sym, m, "no symbols for %s: the file could not be opened, here%s or through /proc/%d",
			 path, sym->other_mount_ns ? " (in the target's mount namespace)" : "", pid);
	else
		add_note(sym, m, "no symbols in %s (stripped; install debug symbols or build with -g)", path);
}

/* Symbolizes one lookup address into b (uncached). */
static int symbolize_addr(struct symbolizer *sym, uint64_t addr, struct frame_buf *b,
			  struct xerr *err)
{
	struct frame base = {.pc = addr, .source = FRAME_SOURCE_NONE};
	Dwfl_Module *mod = dwfl_addrmodule(sym->dwfl, addr);
	if (!mod)
		return frame_push(b, &base);
	struct sym_module *m = module_get(sym, mod);
	if (!m)
		return xerr_oom_doing(err, "describing a module");
	base.module = m->info.path;
	if (module_load_dwarf(sym, m, err) < 0)
		return -1;

	struct scope_index_cu *cu = NULL;
	uint32_t leaf = SCOPE_INDEX_NONE;
	Dwarf_Line *line = NULL;
	if (m->index) {
		int rc = scope_index_lookup(m->index, addr - m->dwbias, &cu, &leaf, err);
		if (rc < 0)
			return xerr_prefix(err, "%s", m->info.path);
		if (rc == 1)
			line = scope_index_line(cu, addr - m->dwbias);
	}
	const char *file = NULL;
	int lineno = 0, column = 0;
	if (line) {
		file = line_file(sym, cu, line);
		dwarf_lineno(line, &lineno);
		dwarf_linecol(line, &column);
	}

	if (cu && leaf != SCOPE_INDEX_NONE) {
		enum frame_lang lang = lang_of_cu(cu->lang);
		for (uint32_t e = leaf, hops = 0; e != SCOPE_INDEX_NONE && hops < 1024; hops++) {
			struct scope_index_entry *ent = &cu->entries[e];
			entry_names(sym, m, cu, ent);
			struct frame f = base;
			f.function = ent->user_name;
			f.linkage = ent->user_linkage;
			f.decl_line = ent->user_decl_line;
			f.full_function = ent->user_full_name;
			f.file = file;
			f.line = lineno;
			f.column = column;
			f.inlined = ent->inlined;
			f.lang = lang;
			f.source = m->dwarf_source;
			if (frame_push(b, &f) < 0)
				return xerr_oom_doing(err, "symbolizing");
			if (!ent->inlined)
				break;
			entry_call_site(sym, m, cu, ent);
			file = shown_path(sym, (struct istr *)ent->user_call_file);
			lineno = ent->user_call_line;
			column = ent->user_call_column;
			e = ent->parent;
		}
		return 0;
	}

	/* No DWARF function here: the symbol table names it, the line table
	 * (if a CU covers the address) still locates it. */
	if (module_load_syms(m, err) < 0)
		return -1;
	struct func_sym *fs = module_find_sym(m, addr);
	struct frame f = base;
	f.file = file;
	f.line = lineno;
	f.column = column;
	if (fs) {
		f.function = func_sym_name(sym, fs);
		f.linkage = intern(&sym->strings, fs->linkage);
		f.full_function = fs->names.full;
		f.lang = lang_of_symbol(fs->linkage);
		f.source = m->sym_source;
	} else if (!m->dw && m->sym_source != FRAME_SOURCE_SYMTAB) {
		note_no_symbols(sym, m);
	}
	return frame_push(b, &f);
}

int symbolizer_lookup(struct symbolizer *sym, uint64_t pc, bool is_return_address,
		      struct frame *out, size_t max, size_t *n, struct xerr *err)
{
	*n = 0;
	uint64_t addr = is_return_address && pc > 0 ? pc - 1 : pc;
	sym->lookups++;
	const struct pc_record *s = pc_cache_find(&sym->cache, addr);
	if (s) {
		sym->cache_hits++;
		size_t k = s->count < max ? s->count : max;
		const struct cached_frame *src = sym->cache.pool + s->first;
		for (size_t i = 0; i < k; i++)
			out[i] = (struct frame){
				.pc = pc, .function = src[i].function,
				.full_function = src[i].full_function, .file = src[i].file,
				.line = src[i].line, .column = src[i].column,
				.inlined = src[i].inlined, .lang = (enum frame_lang)src[i].lang,
				.source = (enum frame_source)src[i].source, .module = s->module,
				.linkage = src[i].linkage, .decl_line = src[i].decl_line,
			};
		*n = k;
		return 0;
	}
	struct frame_buf b;
	frame_buf_init(&b);
	if (symbolize_addr(sym, addr, &b, err) < 0) {
		frame_buf_release(&b);
		return -1;
	}
	if (pc_cache_insert(&sym->cache, addr, b.f, b.n) < 0) {
		frame_buf_release(&b);
		return xerr_oom_doing(err, "caching symbols");
	}
	size_t k = b.n < max ? b.n : max;
	for (size_t i = 0; i < k; i++) {
		out[i] = b.f[i];
		out[i].pc = pc;
	}
	*n = k;
	frame_buf_release(&b);
	return 0;
}

/* ---- file:line → addresses ---- */

struct line_query {
	struct symbolizer *sym;
	struct sym_module *m;
	struct scope_index_cu *cu;
	const char *file;
	size_t file_len;
	bool relative;
	int line;
	uint64_t *addrs;
	size_t n, cap;
	bool oom;
	const char *last_path;     /* memo: line rows repeat the same pointers */
	bool last_match;
};

static bool path_matches(struct line_query *q, const char *path)
{
	if (!path)
		return false;
	if (path == q->last_path)
		return q->last_match;
	const char *raw = path;
	char buf[4096];
	path = absolute_path(q->cu, path, buf, sizeof buf);
	bool match;
	if (!q->relative) {
		match = strcmp(path, q->file) == 0;
		if (!match && (path_has_dot_components(path) || path_has_dot_components(q->file))) {
			/* "/b/build/../src/x.c" is "/b/src/x.c" (util/path.h). */
			char *a = path_normalize(path), *b = path_normalize(q->file);
			match = a && b && strcmp(a, b) == 0;
			free(a);
			free(b);
		}
		if (!match && source_map_active(q->sym->source_map)) {
			const char *mapped = frame_file(q->sym, q->cu, raw);
			match = mapped && strcmp(mapped, q->file) == 0;
		}
	} else {
		size_t len = strlen(path);
		match = len >= q->file_len &&
			strcmp(path + len - q->file_len, q->file) == 0 &&
			(len == q->file_len || path[len - q->file_len - 1] == '/');
	}
	q->last_path = raw;
	q->last_match = match;
	return match;
}

static int line_query_cu(struct scope_index_cu *cu, void *arg)
{
	struct line_query *q = arg;
	scope_index_cu_lines(cu);
	q->cu = cu;
	q->last_path = NULL;
	bool prev_same = false;     /* previous row is the same file:line */
	for (size_t i = 0; i < cu->nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(cu->lines, i);
		int lineno = 0;
		bool end = false, stmt = false;
		dwarf_lineno(l, &lineno);
		dwarf_lineendsequence(l, &end);
		dwarf_linebeginstatement(l, &stmt);
		bool same = !end && lineno == q->line &&
			    path_matches(q, dwarf_linesrc(l, NULL, NULL));
		if (same && stmt && !prev_same) {
			Dwarf_Addr a;
			dwarf_lineaddr(l, &a);
			uint64_t *n = array_grow(q->addrs, &q->cap, q->n + 1, sizeof *n);
			if (!n) {
				q->oom = true;
				return 1;
			}
			q->addrs = n;
			q->addrs[q->n++] = a + q->m->dwbias;
		}
		prev_same = same;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

ssize_t symbolizer_addresses_for_line(struct symbolizer *sym, const char *file, int line,
				      uint64_t **addrs, struct xerr *err)
{
	*addrs = NULL;
	if (!file || !*file || line <= 0)
		return xerr_set(err, "expected FILE:LINE with a file name and a line number above 0");
	struct module_walk w;
	if (list_modules(sym, &w, err) < 0)
		return -1;
	struct line_query q = {
		.sym = sym, .file = file, .file_len = strlen(file),
		.relative = file[0] != '/', .line = line,
	};
	int rc = 0;
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		struct sym_module *m = w.mods[i];
		if (module_load_dwarf(sym, m, err) < 0) {
			rc = -1;
			break;
		}
		if (!m->index)
			continue;
		q.m = m;
		q.last_path = NULL;
		scope_index_foreach_cu(m->index, line_query_cu, &q);
		if (q.oom)
			rc = xerr_oom_doing(err, "resolving %s:%d", file, line);
	}
	free(w.mods);
	if (rc < 0) {
		free(q.addrs);
		return -1;
	}
	if (q.n == 0) {
		free(q.addrs);
		return 0;
	}
	qsort(q.addrs, q.n, sizeof *q.addrs, cmp_u64);
	size_t k = 1;
	for (size_t i = 1; i < q.n; i++)
		if (q.addrs[i] != q.addrs[k - 1])
			q.addrs[k++] = q.addrs[i];
	*addrs = q.addrs;
	return (ssize_t)k;
}

void symbolizer_get_stats(struct symbolizer *sym, struct symbolizer_stats *out)
{
	memset(out, 0, sizeof *out);
	out->lookups = sym->lookups;
	out->cache_hits = sym->cache_hits;
	struct module_walk w;
	if (list_modules(sym, &w, NULL) < 0)
		return;
	for (size_t i = 0; i < w.n; i++) {
		if (!w.mods[i]->index)
			continue;
		struct scope_index_stats st;
		scope_index_get_stats(w.mods[i]->index, &st);
		out->modules_with_index++;
		out->cus_built += st.cus_built;
		out->index_entries += st.entries;
		out->index_segments += st.segments;
		out->index_build_seconds += st.build_seconds;
	}
	free(w.mods);
}

