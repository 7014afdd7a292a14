#include "symbols/symbolize.h"
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

static const char *intern(struct intern *t, const char *s)
{
	if (!s)
		return NULL;
	struct istr *e = intern_entry(t, s);
	return e ? e->s : NULL;
}

static void intern_release(struct intern *t)
{
	array_free_pointers(t->entries, t->count);
	slot_index_free(&t->by_text);
	memset(t, 0, sizeof *t);
}

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

static void pc_cache_clear(struct pc_cache *c)
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

static void pc_cache_release(struct pc_cache *c)
{
	free(c->slots);
	free(c->records);
	free(c->pool);
	memset(c, 0, sizeof *c);
}

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

static void name_memo_release(struct name_memo *m)
{
	free(m->slots);
	slot_index_free(&m->by_linkage);
	memset(m, 0, sizeof *m);
}

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
static void add_note(struct symbolizer *sym, struct sym_module *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_note(struct symbolizer *sym, struct sym_module *m, const char *fmt, ...)
{
	if ((m && m->noted) || sym->nnotes >= SYMBOLIZER_MAX_NOTES)
		return;
	if (m)
		m->noted = true;
	char text[8400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	/* Paths are the target's text. */
	for (char *c = text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	/* Modules come back as new ones after a refresh. */
	for (size_t i = 0; i < sym->nnotes; i++)
		if (strcmp(sym->notes[i], text) == 0)
			return;
	sym->notes[sym->nnotes] = strdup(text);
	sym->nnotes += sym->notes[sym->nnotes] != NULL;
}

size_t symbolizer_note_count(const struct symbolizer *sym)
{
	return sym->nnotes;
}

const char *symbolizer_note(const struct symbolizer *sym, size_t i)
{
	return i < sym->nnotes ? sym->notes[i] : NULL;
}

static char *debuginfo_path;   /* NULL: libdwfl's default ":.debug:/usr/lib/debug" */

/* libdwfl's standard search (build-id under /usr/lib/debug/.build-id, then
 * .gnu_debuglink next to the file and in /usr/lib/debug). It would ask
 * debuginfod last if DEBUGINFOD_URLS were set; the constructors unset it. */
static int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name,
				const char *debuglink_file, GElf_Word debuglink_crc,
				char **debuginfo_file_name)
{
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}

static bool deleted_name(const char *name)
{
	const char *tail = " (deleted)";
	size_t len = strlen(name), tail_len = strlen(tail);
	return len > tail_len && strcmp(name + len - tail_len, tail) == 0;
}

/* Opens path read-only if it is a regular file: a target may map devices,
 * and opening or reading some of them blocks or has effects. -1 with errno
 * otherwise. */
static int open_regular(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = ENODEV;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Whether name is what /proc/PID/maps calls the process's executable
 * (readlink of /proc/PID/exe gives the same text, " (deleted)" included). */
static bool names_executable(pid_t pid, const char *name)
{
	char link[64], target[4096];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, target, sizeof target - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return strcmp(target, name) == 0;
}

/* Dwfl_Callbacks.find_elf for a live process. name is the path as
 * /proc/PID/maps prints it; *userdata is our module (symbolizer_new_pid
 * gives every reported module one before any ELF is read). In order: the
 * path itself, or /proc/PID/root/PATH when the target is in another mount
 * namespace (the same path may name another file here, or none); then,
 * when that fails (the file was deleted or replaced), /proc/PID/exe for the
 * executable and /proc/PID/map_files/START-END for a library, which open
 * the mapped file itself; last, libdwfl's own reading of the loaded
 * segments from memory (no symbol table, no DWARF). */
static int find_elf_pid(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct sym_module *m = *userdata;
	if (!m || name[0] != '/')      /* [vdso: PID] and the like */
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	struct symbolizer *sym = m->owner;
	int pid = (int)sym->pid;
	char path[8192];
	int fd = -1;
	/* A deleted file's path may name its replacement: never open it. */
	if (!deleted_name(name)) {
		if (sym->other_mount_ns)
			snprintf(path, sizeof path, "/proc/%d/root%s", pid, name);
		else
			snprintf(path, sizeof path, "%s", name);
		fd = open_regular(path);
		m->route = sym->other_mount_ns ? ELF_ROUTE_ROOT : ELF_ROUTE_PATH;
	}
	if (fd < 0 && names_executable(sym->pid, name)) {
		snprintf(path, sizeof path, "/proc/%d/exe", pid);
		fd = open_regular(path);
		m->route = ELF_ROUTE_EXE;
	}
	if (fd < 0) {
		Dwarf_Addr low = 0, high = 0;
		dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
		if (proc_map_files_entry(sym->pid, name, low, high, path, sizeof path) == 0) {
			fd = open_regular(path);
			m->map_files_errno = fd < 0 ? errno : 0;
			m->route = ELF_ROUTE_MAP_FILES;
		}
	}
	if (fd < 0) {
		m->route = ELF_ROUTE_NONE;
		int rc = dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
		if (*elfp)
			m->route = ELF_ROUTE_MEMORY;
		return rc;
	}
	*file_name = strdup(path);
	if (!*file_name) {
		close(fd);
		return -1;
	}
	switch (m->route) {
	case ELF_ROUTE_ROOT:
		if (!sym->mount_ns_noted) {
			sym->mount_ns_noted = true;
			add_note(sym, NULL, "the target is in another mount namespace: its files were read as it "
				 "sees them, through /proc/%d/root (%s as %s)", pid, name, path);
		}
		break;
	case ELF_ROUTE_EXE:
		add_note(sym, m, "executable %s: symbols read through %s (%s)", name, path,
			 deleted_name(name) ? "the file was deleted or replaced after the process started"
					    : "the path does not open here");
		break;
	case ELF_ROUTE_MAP_FILES:
		add_note(sym, m, "%s: symbols read through %s (%s)", name, path,
			 deleted_name(name) ? "the file was deleted or replaced after it was loaded"
					    : "the path does not open here");
		break;
	default:
		break;
	}
	return fd;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf_pid,
	.find_debuginfo = find_debuginfo_local,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo_local,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	scope_index_free(m->index);
	free(m->syms);
	free(m);
}

static bool elf_has_section_type(Elf *elf, GElf_Word type)
{
	if (!elf)
		return false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return true;
	}
	return false;
}

/* Our data for a module, attached as its libdwfl userdata before libdwfl
 * reads its ELF: find_elf_pid needs it. NULL when out of memory. */
static struct sym_module *module_attach(struct symbolizer *sym, Dwfl_Module *mod, void **userdata)
{
	if (!*userdata) {
		struct sym_module *m = calloc(1, sizeof *m);
		if (!m)
			return NULL;
		m->mod = mod;
		m->owner = sym;
		*userdata = m;
	}
	return *userdata;
}

/* The file offset that ELF virtual address vaddr was mapped from: inside a
 * PT_LOAD, or below the first one (a mapping starts page-aligned before its
 * segment). 0 when no segment says. */
static uint64_t file_offset_at(Elf *elf, GElf_Addr vaddr)
{
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
			return ph.p_offset + (vaddr - ph.p_vaddr);
		if (vaddr < ph.p_vaddr)   /* the first PT_LOAD past vaddr: they are sorted */
			return ph.p_vaddr - vaddr <= ph.p_offset ? ph.p_offset - (ph.p_vaddr - vaddr) : 0;
	}
	return 0;
}

/* Returns our data for mod, describing it (cheap: no DWARF read) on first use. */
static struct sym_module *module_get(struct symbolizer *sym, Dwfl_Module *mod)
{
	void **userdata;
	Dwarf_Addr start, end;
	const char *name = dwfl_module_info(mod, &userdata, &start, &end, NULL, NULL, NULL, NULL);
	struct sym_module *m = module_attach(sym, mod, userdata);
	if (!m || m->info_done)
		return m;
	m->info.start = start;
	m->info.end = end;
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	m->info.bias = bias;
	/* The name /proc/PID/maps gives (the file read may be a /proc fallback). */
	m->info.path = intern(&sym->strings, name);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char hex[2 * 64 + 1] = "";
	if (len > 0) {
		if (len > 64)
			len = 64;
		for (int i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	}
	m->info.build_id = intern(&sym->strings, hex);
	m->info.offset = file_offset_at(elf, start - bias);
	if (!m->info.path || !m->info.build_id)
		return NULL;
	m->info_done = true;
	return m;
}

static int module_load_dwarf(struct symbolizer *sym, struct sym_module *m, struct xerr *err)
{
	if (m->dwarf_loaded)
		return 0;
	m->dwarf_loaded = true;
	m->dw = dwfl_module_getdwarf(m->mod, &m->dwbias);
	if (!m->dw)
		return 0;
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	m->dwarf_source = FRAME_SOURCE_DWARF;
	if (debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0)) {
		m->dwarf_source = FRAME_SOURCE_DEBUGLINK;
		m->info.debug_file = intern(&sym->strings, debugfile);
	}
	m->info.has_dwarf = true;
	m->index = scope_index_new(m->dw, err);
	return m->index ? 0 : -1;
}

static int cmp_func_sym(const void *a, const void *b)
{
	const struct func_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->binding_rank != y->binding_rank)
		return x->binding_rank - y->binding_rank;
	return x->ndx - y->ndx;
}

static int module_load_syms(struct sym_module *m, struct xerr *err)
{
	if (m->syms_loaded)
		return 0;
	m->syms_loaded = true;
	Dwarf_Addr bias;
	Elf *main_elf = dwfl_module_getelf(m->mod, &bias);
	m->sym_source = FRAME_SOURCE_DYNSYM;
	if (elf_has_section_type(main_elf, SHT_SYMTAB))
		m->sym_source = FRAME_SOURCE_SYMTAB;
	else {
		Dwarf_Addr dwbias;
		Dwarf *dw = dwfl_module_getdwarf(m->mod, &dwbias);
		if (dw && elf_has_section_type(dwarf_getelf(dw), SHT_SYMTAB))
			m->sym_source = FRAME_SOURCE_SYMTAB;
	}
	int count = dwfl_module_getsymtab(m->mod);
	if (count <= 0)
		return 0;
	m->syms = malloc((size_t)count * sizeof *m->syms);
	if (!m->syms)
		return xerr_set(err, "out of memory reading the symbols of %s", m->info.path);
	for (int i = 1; i < count; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr symbias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &s, &addr, &shndx,
							   &elf, &symbias);
		int type = GELF_ST_TYPE(s.st_info);
		if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		if (shndx == SHN_UNDEF || addr == 0)
			continue;
		int bind = GELF_ST_BIND(s.st_info);
		struct func_sym *f = &m->syms[m->nsyms];
		f->addr = addr;
		f->size = s.st_size;
		f->linkage = name;
		f->named = false;
		f->binding_rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		f->ndx = i;
		m->nsyms++;
	}
	qsort(m->syms, m->nsyms, sizeof *m->syms, cmp_func_sym);
	return 0;
}

/* The one place frames get their names: a Rust symbol is shown by its
 * display name (demangle_display_name), the same for legacy and v0 and for
 * DWARF and the symbol table; C and C++ names as demangled. */
static struct shown_name demangled(struct symbolizer *sym, const char *linkage)
{
	struct shown_name out = {NULL, NULL};
	char *full = demangle_rust_symbol(linkage, false);
	char *display = full ? demangle_display_name(full) : NULL;
	if (!full)
		full = demangle_symbol(linkage, false);
	if (!full)
		return out;
	out.full = intern(&sym->strings, full);
	out.name = display ? intern(&sym->strings, display) : out.full;
	if (out.name == out.full)
		out.full = NULL;
	free(display);
	free(full);
	return out;
}

static const char *func_sym_name(struct symbolizer *sym, struct func_sym *f)
{
	if (!f->named) {
		f->names = demangled(sym, f->linkage);
		f->named = true;
	}
	return f->names.name;
}

/* Returns the symbol containing addr (runtime), or NULL. */
static struct func_sym *module_find_sym(struct sym_module *m, uint64_t addr)
{
	size_t lo = array_upper_bound_u64(m->syms, m->nsyms, sizeof *m->syms, offsetof(struct func_sym, addr), addr);
	if (lo == 0)
		return NULL;
	/* Among aliases at the same address, take the preferred (first) one. */
	size_t i = lo - 1;
	uint64_t at = m->syms[i].addr;
	while (i > 0 && m->syms[i - 1].addr == at)
		i--;
	for (size_t k = i; k < lo; k++)
		if (m->syms[k].size == 0 || addr < m->syms[k].addr + m->syms[k].size)
			return &m->syms[k];
	return NULL;
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
		return xerr_set(err, "out of memory describing a module");
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
				return xerr_set(err, "out of memory symbolizing");
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
		return xerr_set(err, "out of memory caching symbols");
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

/* ---- construction ---- */

static struct symbolizer *symbolizer_alloc(const Dwfl_Callbacks *cb, struct xerr *err)
{
	/* debuginfod would fetch over the network, possibly for minutes. */
	unsetenv("DEBUGINFOD_URLS");
	struct symbolizer *sym = calloc(1, sizeof *sym);
	if (!sym) {
		xerr_set(err, "out of memory creating a symbolizer");
		return NULL;
	}
	sym->dwfl = dwfl_begin(cb);
	if (!sym->dwfl) {
		xerr_set(err, "libdwfl: %s", dwfl_errmsg(-1));
		free(sym);
		return NULL;
	}
	return sym;
}

static int attach_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
			    Dwarf_Addr start, void *arg)
{
	(void)name, (void)start;
	struct symbolizer *sym = arg;
	if (!module_attach(sym, mod, userdata)) {
		sym->attach_failed = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* Gives every module just reported our data, before libdwfl reads an ELF
 * (the unwinder may be first), and looks again at the mount namespace: a
 * process can enter another. */
static int attach_modules(struct symbolizer *sym, struct xerr *err)
{
	sym->other_mount_ns = proc_other_mount_ns(sym->pid) == 1;
	sym->attach_failed = false;
	dwfl_getmodules(sym->dwfl, attach_module_cb, sym, 0);
	return sym->attach_failed ? xerr_set(err, "out of memory listing modules") : 0;
}

struct symbolizer *symbolizer_new_pid(pid_t pid, struct xerr *err)
{
	struct symbolizer *sym = symbolizer_alloc(&proc_callbacks, err);
	if (!sym)
		return NULL;
	sym->pid = pid;
	dwfl_report_begin(sym->dwfl);
	int rc = dwfl_linux_proc_report(sym->dwfl, pid);
	if (rc != 0) {
		if (rc > 0)
			xerr_set(err, "cannot read the mappings of process %d (/proc/%d/maps): %s",
				 (int)pid, (int)pid, strerror(rc));
		else
			xerr_set(err, "cannot list the modules of process %d: %s",
				 (int)pid, dwfl_errmsg(-1));
		dwfl_end(sym->dwfl);
		free(sym);
		return NULL;
	}
	dwfl_report_end(sym->dwfl, NULL, NULL);
	if (attach_modules(sym, err) < 0) {
		symbolizer_free(sym);
		return NULL;
	}
	return sym;
}

struct symbolizer *symbolizer_new_file(const char *path, struct xerr *err)
{
	struct symbolizer *sym = symbolizer_alloc(&file_callbacks, err);
	if (!sym)
		return NULL;
	dwfl_report_begin(sym->dwfl);
	/* Base 0 with add_p_vaddr: a PIE or shared object keeps its own
	 * virtual addresses (bias 0), as addr2line reads them. */
	Dwfl_Module *mod = dwfl_report_elf(sym->dwfl, path, path, -1, 0, true);
	if (!mod) {
		xerr_set(err, "cannot load ELF file %s: %s", path, dwfl_errmsg(-1));
		dwfl_end(sym->dwfl);
		free(sym);
		return NULL;
	}
	dwfl_report_end(sym->dwfl, NULL, NULL);
	return sym;
}

static int free_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	sym_module_free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

void symbolizer_free(struct symbolizer *sym)
{
	if (!sym)
		return;
	dwfl_getmodules(sym->dwfl, free_module_cb, NULL, 0);
	dwfl_end(sym->dwfl);
	pc_cache_release(&sym->cache);
	name_memo_release(&sym->names);
	intern_release(&sym->strings);
	for (size_t i = 0; i < sym->nnotes; i++)
		free(sym->notes[i]);
	free(sym);
}

/* libdwfl passes the module's userdata slot (a void **) here, although the
 * prototype says void *. */
static int removed_module_cb(Dwfl_Module *mod, void *slot, const char *name,
			     Dwarf_Addr base, void *arg)
{
	(void)mod, (void)name, (void)base, (void)arg;
	void **userdata = slot;
	sym_module_free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

int symbolizer_refresh(struct symbolizer *sym, struct xerr *err)
{
	if (sym->pid == 0)
		return 0;
	dwfl_report_begin(sym->dwfl);
	int rc = dwfl_linux_proc_report(sym->dwfl, sym->pid);
	/* Ending the report even on failure keeps the Dwfl consistent. */
	dwfl_report_end(sym->dwfl, removed_module_cb, NULL);
	pc_cache_clear(&sym->cache);
	if (attach_modules(sym, err) < 0)
		return -1;
	/* Removed modules' .debug_str may be unmapped; their addresses could be
	 * reused by a new module. */
	name_memo_release(&sym->names);
	if (rc > 0)
		return xerr_set(err, "cannot re-read /proc/%d/maps: %s", (int)sym->pid, strerror(rc));
	if (rc < 0)
		return xerr_set(err, "cannot list the modules of process %d: %s",
				(int)sym->pid, dwfl_errmsg(-1));
	return 0;
}

void symbolizer_set_source_map(struct symbolizer *sym, struct source_map *map)
{
	sym->source_map = map;
	for (size_t i = 0; i < sym->strings.count; i++) {
		sym->strings.entries[i]->mapped = NULL;
		sym->strings.entries[i]->mapped_done = false;
	}
	pc_cache_clear(&sym->cache);
}

Dwfl *symbolizer_dwfl(struct symbolizer *sym)
{
	return sym->dwfl;
}

/* ---- queries over modules ---- */

int symbolizer_module_info(struct symbolizer *sym, uint64_t pc,
			   struct symbolizer_module *out, struct xerr *err)
{
	Dwfl_Module *mod = dwfl_addrmodule(sym->dwfl, pc);
	if (!mod)
		return 0;
	struct sym_module *m = module_get(sym, mod);
	if (!m)
		return xerr_set(err, "out of memory describing a module");
	if (module_load_dwarf(sym, m, err) < 0)
		return -1;
	*out = m->info;
	return 1;
}

struct module_walk {
	struct symbolizer *sym;
	struct sym_module **mods;
	size_t n, cap;
	bool oom;
};

static int collect_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
			     Dwarf_Addr start, void *arg)
{
	(void)userdata, (void)name, (void)start;
	struct module_walk *w = arg;
	struct sym_module *m = module_get(w->sym, mod);
	if (!m) {
		w->oom = true;
		return DWARF_CB_ABORT;
	}
	if (ARRAY_PUSH(w->mods, w->n, w->cap, m) < 0) {
		w->oom = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static int cmp_module_start(const void *a, const void *b)
{
	const struct sym_module *x = *(struct sym_module *const *)a;
	const struct sym_module *y = *(struct sym_module *const *)b;
	return x->info.start < y->info.start ? -1 : x->info.start > y->info.start;
}

/* Lists our modules in address order (malloc'd array in w->mods). */
static int list_modules(struct symbolizer *sym, struct module_walk *w, struct xerr *err)
{
	memset(w, 0, sizeof *w);
	w->sym = sym;
	dwfl_getmodules(sym->dwfl, collect_module_cb, w, 0);
	if (w->oom) {
		free(w->mods);
		return xerr_set(err, "out of memory listing modules");
	}
	if (w->n)
		qsort(w->mods, w->n, sizeof *w->mods, cmp_module_start);
	return 0;
}

/* Calls visit(sym, m, ctx, err) for each module in address order (only the
 * one at module_path when given) until it returns nonzero; returns that. */
static int walk_modules(struct symbolizer *sym, const char *module_path,
			int (*visit)(struct symbolizer *sym, struct sym_module *m, void *ctx, struct xerr *err),
			void *ctx, struct xerr *err)
{
	struct module_walk w;
	if (list_modules(sym, &w, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		if (!module_path || strcmp(module_path, w.mods[i]->info.path) == 0)
			rc = visit(sym, w.mods[i], ctx, err);
	}
	free(w.mods);
	return rc;
}

struct module_visit {
	int (*fn)(const struct symbolizer_module *m, void *arg);
	void *arg;
};

static int visit_module(struct symbolizer *sym, struct sym_module *m, void *ctx, struct xerr *err)
{
	struct module_visit *v = ctx;
	if (module_load_dwarf(sym, m, err) < 0)
		return -1;
	return v->fn(&m->info, v->arg);
}

int symbolizer_foreach_module(struct symbolizer *sym,
			      int (*fn)(const struct symbolizer_module *m, void *arg),
			      void *arg, struct xerr *err)
{
	struct module_visit v = {fn, arg};
	return walk_modules(sym, NULL, visit_module, &v, err);
}

struct function_visit {
	int (*fn)(const struct symbolizer_function *f, void *arg);
	void *arg;
};

static int visit_module_functions(struct symbolizer *sym, struct sym_module *m, void *ctx, struct xerr *err)
{
	struct function_visit *v = ctx;
	if (module_load_syms(m, err) < 0)
		return -1;
	int rc = 0;
	for (size_t k = 0; k < m->nsyms && rc == 0; k++) {
		struct func_sym *fs = &m->syms[k];
		const char *shown = func_sym_name(sym, fs);
		struct symbolizer_function f = {
			/* the tracer matches probe specs on the full name */
			.name = fs->names.full ? fs->names.full : shown,
			.linkage = intern(&sym->strings, fs->linkage),
			.addr = fs->addr,
			.size = fs->size,
			.module = m->info.path,
			.source = m->sym_source,
		};
		if (!f.name || !f.linkage)
			return xerr_set(err, "out of memory demangling symbols");
		rc = v->fn(&f, v->arg);
	}
	return rc;
}

int symbolizer_foreach_function(struct symbolizer *sym, const char *module_path,
				int (*fn)(const struct symbolizer_function *f, void *arg),
				void *arg, struct xerr *err)
{
	struct function_visit v = {fn, arg};
	return walk_modules(sym, module_path, visit_module_functions, &v, err);
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
			rc = xerr_set(err, "out of memory resolving %s:%d", file, line);
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
