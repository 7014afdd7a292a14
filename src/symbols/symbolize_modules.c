/* symbolize_modules.c — the symbolizer's modules: where each module's ELF
 * and debug info are read from (the path the maps name, the target's root,
 * /proc/PID/exe or map_files, or its memory), its symbol table, and the
 * symbolizer's construction, refresh and walks over modules. Frames and
 * names are built in symbolize.c from what is loaded here. */
#include "symbols/symbolize_internal.h"
#include "symbols/demangle.h"
#include "procfs/proc.h"
#include "util/array.h"
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

void add_note(struct symbolizer *sym, struct sym_module *m, const char *fmt, ...)
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

bool deleted_name(const char *name)
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
struct sym_module *module_get(struct symbolizer *sym, Dwfl_Module *mod)
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

int module_load_dwarf(struct symbolizer *sym, struct sym_module *m, struct xerr *err)
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

int module_load_syms(struct sym_module *m, struct xerr *err)
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
		return xerr_oom_doing(err, "reading the symbols of %s", m->info.path);
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
struct shown_name demangled(struct symbolizer *sym, const char *linkage)
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

const char *func_sym_name(struct symbolizer *sym, struct func_sym *f)
{
	if (!f->named) {
		f->names = demangled(sym, f->linkage);
		f->named = true;
	}
	return f->names.name;
}

/* Returns the symbol containing addr (runtime), or NULL. */
struct func_sym *module_find_sym(struct sym_module *m, uint64_t addr)
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


/* ---- construction ---- */

static struct symbolizer *symbolizer_alloc(const Dwfl_Callbacks *cb, struct xerr *err)
{
	/* debuginfod would fetch over the network, possibly for minutes. */
	unsetenv("DEBUGINFOD_URLS");
	struct symbolizer *sym = calloc(1, sizeof *sym);
	if (!sym) {
		xerr_oom_doing(err, "creating a symbolizer");
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
	return sym->attach_failed ? xerr_oom_doing(err, "listing modules") : 0;
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
		return xerr_oom_doing(err, "describing a module");
	if (module_load_dwarf(sym, m, err) < 0)
		return -1;
	*out = m->info;
	return 1;
}

/* The page's tail past end, unless another loadable segment (or RELRO,
 * made read-only after start) begins in that page. */
static void page_tail(Elf *elf, size_t nphdr, uint64_t end, uint64_t page, uint64_t *lo, uint64_t *hi)
{
	uint64_t tail_end = (end + page - 1) / page * page;
	*lo = *hi = end;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || (ph.p_type != PT_LOAD && ph.p_type != PT_GNU_RELRO))
			continue;
		uint64_t start = ph.p_vaddr / page * page, stop = ph.p_vaddr + ph.p_memsz;
		if (ph.p_type == PT_LOAD && stop == end)
			continue;  /* the segment itself */
		if (start < tail_end && (ph.p_type == PT_GNU_RELRO ? (stop + page - 1) / page * page : stop) > end)
			return;
	}
	*hi = tail_end;
}

int symbolizer_module_slack(struct symbolizer *sym, uint64_t pc, struct symbolizer_slack *out, struct xerr *err)
{
	*out = (struct symbolizer_slack){ 0 };
	Dwfl_Module *mod = dwfl_addrmodule(sym->dwfl, pc);
	if (!mod)
		return 0;
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nphdr = 0;
	if (!elf || elf_getphdrnum(elf, &nphdr) != 0)
		return xerr_set(err, "cannot read the program headers of the module at 0x%llx", (unsigned long long)pc);
	long page_size = sysconf(_SC_PAGESIZE);
	uint64_t page = page_size > 0 ? (uint64_t)page_size : 4096, code_end = 0, data_end = 0;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t start = ph.p_vaddr + bias, end = ph.p_vaddr + ph.p_memsz;
		if ((ph.p_flags & PF_X) && pc >= start && pc < end + bias)
			code_end = end;
		if ((ph.p_flags & PF_W) && !(ph.p_flags & PF_X) && end > data_end)
			data_end = end;
	}
	if (code_end) {
		page_tail(elf, nphdr, code_end, page, &out->code_lo, &out->code_hi);
		out->code_lo += bias;
		out->code_hi += bias;
	}
	if (data_end) {
		page_tail(elf, nphdr, data_end, page, &out->data_lo, &out->data_hi);
		out->data_lo += bias;
		out->data_hi += bias;
	}
	return 1;
}

struct room_search {
	struct symbolizer *sym;
	uint64_t code_need, data_need;
	struct symbolizer_slack *out;
	struct xerr *err;
	bool failed;
};

static bool is_dynamic_loader_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path;
	return base && (!strncmp(base, "ld-", 3) || !strncmp(base, "ld.so", 5) || !strncmp(base, "ld64.so", 7));
}

/* 1 when the module at pc has the room (*out trimmed to it), 0 not, -1. */
static int room_at(struct room_search *r, uint64_t pc)
{
	struct symbolizer_module m;
	if (symbolizer_module_info(r->sym, pc, &m, NULL) != 1 || is_dynamic_loader_path(m.path) ||
	    !strncmp(m.path, "[vdso", 5))
		return 0;
	struct symbolizer_slack s;
	int got = symbolizer_module_slack(r->sym, pc, &s, r->err);
	if (got <= 0)
		return got;
	if (s.code_hi - s.code_lo < r->code_need || s.data_hi - s.data_lo < r->data_need)
		return 0;
	/* 8-byte aligned data, as the code's stores want */
	uint64_t data_lo = (s.data_hi - r->data_need) & ~(uint64_t)7;
	if (data_lo < s.data_lo)
		return 0;
	*r->out = (struct symbolizer_slack){ .code_lo = s.code_hi - r->code_need, .code_hi = s.code_hi,
					     .data_lo = data_lo, .data_hi = data_lo + r->data_need };
	return 1;
}

static int room_cb(const struct symbolizer_module *m, void *arg)
{
	struct room_search *r = arg;
	int got = room_at(r, m->start);
	r->failed = got < 0;
	return got != 0;
}

int symbolizer_unused_room(struct symbolizer *sym, uint64_t prefer_pc, uint64_t code_need, uint64_t data_need,
			   struct symbolizer_slack *out, struct xerr *err)
{
	struct room_search r = { .sym = sym, .code_need = code_need, .data_need = data_need, .out = out, .err = err };
	*out = (struct symbolizer_slack){ 0 };
	int got = prefer_pc ? room_at(&r, prefer_pc) : 0;
	if (got != 0)
		return got;
	if (symbolizer_foreach_module(sym, room_cb, &r, err) < 0)
		return -1;
	return r.failed ? -1 : out->code_hi ? 1 : 0;
}

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
int list_modules(struct symbolizer *sym, struct module_walk *w, struct xerr *err)
{
	memset(w, 0, sizeof *w);
	w->sym = sym;
	dwfl_getmodules(sym->dwfl, collect_module_cb, w, 0);
	if (w->oom) {
		free(w->mods);
		return xerr_oom_doing(err, "listing modules");
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
			return xerr_oom_doing(err, "demangling symbols");
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

