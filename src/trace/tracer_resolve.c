/* tracer_resolve.c — SPEC → entry addresses (see tracer_resolve.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "trace/tracer_resolve.h"
#include "symbols/demangle.h"
#include "symbols/name_pattern.h"
#include "util/array.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 2048

void tracer_sites_release(struct tracer_sites *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].linkage);
		free(s->v[i].file);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

static bool is_legacy_hash(const char *s)
{
	if (strncmp(s, "::h", 3) != 0)
		return false;
	for (int i = 3; i < 19; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return s[19] == '\0';
}

void tracer_name_key(const char *name, char *out, size_t outsz)
{
	char tmp[KEY_MAX];
	snprintf(tmp, sizeof tmp, "%s", name);
	size_t len = strlen(tmp);
	if (len > 19 && is_legacy_hash(tmp + len - 19))
		tmp[len - 19] = '\0';
	const char *p = tmp;
	char unwrapped[KEY_MAX];
	if (tmp[0] == '<') {
		/* "<a::B<T>>::f" names an inherent method: read it as "a::B<T>::f". */
		int depth = 0;
		size_t close = 0;
		for (size_t i = 0; tmp[i]; i++) {
			if (tmp[i] == '<')
				depth++;
			else if (tmp[i] == '>' && --depth == 0) {
				close = i;
				break;
			}
		}
		bool is_trait_impl = false;
		for (size_t i = 1, d = 0; i < close; i++) {
			if (tmp[i] == '<')
				d++;
			else if (tmp[i] == '>')
				d--;
			else if (d == 0 && !strncmp(tmp + i, " as ", 4))
				is_trait_impl = true;
		}
		if (close && !is_trait_impl && !strncmp(tmp + close + 1, "::", 2)) {
			snprintf(unwrapped, sizeof unwrapped, "%.*s%s", (int)(close - 1), tmp + 1, tmp + close + 1);
			p = unwrapped;
		}
	}
	demangle_strip_generics(p, out, outsz);
}

static int sites_add(struct tracer_sites *s, uint64_t addr, const char *name, const char *linkage,
		     bool inlined, const char *file, int line, uint64_t size, struct xerr *e)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].addr == addr)
			return 0;  /* one site per address: aliases name the same code */
	struct tracer_site *grown = array_grow(s->v, &s->cap, s->n + 1, sizeof *grown);
	if (!grown)
		return xerr_oom(e);
	s->v = grown;
	struct tracer_site *t = &s->v[s->n];
	memset(t, 0, sizeof *t);
	t->addr = addr;
	t->name = strdup(name ? name : "??");
	t->linkage = linkage ? strdup(linkage) : NULL;
	t->file = file ? strdup(file) : NULL;
	t->inlined = inlined;
	t->line = line;
	t->size = size;
	if (!t->name || (linkage && !t->linkage) || (file && !t->file)) {
		free(t->name);
		free(t->linkage);
		free(t->file);
		return xerr_oom(e);
	}
	s->n++;
	return 1;
}

static int compare_sites(const void *a, const void *b)
{
	const struct tracer_site *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* ---- matching ------------------------------------------------------------ */

struct matcher {
	enum probe_spec_kind kind;
	char key[KEY_MAX];          /* NAME: normalized spec */
	pcre2_code *re;
	pcre2_match_data *md;
};

static bool matcher_matches(struct matcher *m, const char *name)
{
	if (!name)
		return false;
	if (m->kind == PROBE_SPEC_REGEX)
		return pcre2_match(m->re, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, m->md, NULL) >= 0;
	char key[KEY_MAX];
	tracer_name_key(name, key, sizeof key);
	return name_pattern_matches(m->key, key);
}

/* ---- the DWARF walk: generic instance names and inlined copies ---------- */

struct dwarf_walk {
	struct matcher *m;
	struct tracer_sites *out;
	struct xerr *e;
	Dwarf_Addr bias;
	Dwarf_Files *files;
	bool failed;
	/* out-of-line instances found by symbol, to be named from DWARF */
	struct tracer_sites *named;
};

static const char *die_name_integrated(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, attr, &a))
		return NULL;
	return dwarf_formstring(&a);
}

/* Where the walk is: the enclosing namespaces' names, for functions that
 * have no linkage name (C has none; Rust always has one). */
static void walk_die(struct dwarf_walk *w, Dwarf_Die *die, int depth)
{
	if (depth > 64 || w->failed)
		return;
	int tag = dwarf_tag(die);
	if (tag == DW_TAG_subprogram && w->named) {
		Dwarf_Addr low;
		if (dwarf_lowpc(die, &low) == 0) {
			const char *dwname = die_name_integrated(die, DW_AT_name);
			if (dwname && strchr(dwname, '<')) {
				for (size_t i = 0; i < w->named->n; i++) {
					struct tracer_site *s = &w->named->v[i];
					if (s->addr != low + w->bias || s->inlined)
						continue;
					/* "a::B<K,V>::insert" + "insert<u64, String>" */
					const char *last = strrchr(s->name, ':');
					last = last ? last + 1 : s->name;
					if (strchr(last, '<'))
						continue;
					size_t keep = (size_t)(last - s->name);
					char *better = malloc(keep + strlen(dwname) + 1);
					if (better) {
						memcpy(better, s->name, keep);
						strcpy(better + keep, dwname);
						free(s->name);
						s->name = better;
					}
				}
			}
		}
	}
	if (tag == DW_TAG_inlined_subroutine && w->m) {
		const char *linkage = die_name_integrated(die, DW_AT_linkage_name);
		if (!linkage)
			linkage = die_name_integrated(die, DW_AT_MIPS_linkage_name);
		char *demangled = linkage ? demangle_symbol(linkage, false) : NULL;
		const char *name = demangled ? demangled : die_name_integrated(die, DW_AT_name);
		if (matcher_matches(w->m, name)) {
			Dwarf_Addr entry = 0;
			bool have = dwarf_entrypc(die, &entry) == 0;
			if (!have) {
				Dwarf_Addr base, start, end;
				have = dwarf_ranges(die, 0, &base, &start, &end) > 0;
				entry = start;
			}
			/* Linkers mark the copies in discarded sections with a
			 * tombstone entry (0 or 1; -1 or -2 in DWARF 5): no code is
			 * there, and a breakpoint would land in the ELF header. */
			if (have && (entry <= 1 || entry >= (Dwarf_Addr)-2))
				have = false;
			Dwarf_Word call_file = 0, call_line = 0;
			Dwarf_Attribute a;
			const char *file = NULL;
			if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &call_file) == 0 && w->files)
				file = dwarf_filesrc(w->files, call_file, NULL, NULL);
			dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &call_line);
			if (have && sites_add(w->out, entry + w->bias, name, NULL, true, file, (int)call_line, 0, w->e) < 0)
				w->failed = true;
		}
		free(demangled);
	}
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return;
	do
		walk_die(w, &child, depth + 1);
	while (!w->failed && dwarf_siblingof(&child, &child) == 0);
}

static int walk_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)userdata;
	(void)start;
	struct dwarf_walk *w = arg;
	if (!name || name[0] == '[')
		return DWARF_CB_OK;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	if (!dw)
		return DWARF_CB_OK;
	w->bias = bias;
	Dwarf_Off off = 0, next;
	size_t header;
	while (!w->failed && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		if (dwarf_offdie(dw, off + header, &cudie)) {
			size_t nfiles;
			w->files = NULL;
			if (dwarf_getsrcfiles(&cudie, &w->files, &nfiles) != 0)
				w->files = NULL;
			walk_die(w, &cudie, 0);
		}
		off = next;
	}
	return w->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* ---- out-of-line functions ---------------------------------------------- */

struct symbol_walk {
	struct matcher *m;
	struct tracer_sites *out;
	struct xerr *e;
	/* for "did you mean": the closest keys seen */
	const char *want;
	char best[5][256];
	int best_score[5];
};

static void consider_suggestion(struct symbol_walk *w, const char *key)
{
	/* By the qualified path, last segment first: "Tree::insrt" is near
	 * "sled::tree::Tree::insert", not near libc's "setresuid". */
	int score = name_pattern_distance(w->want, key);
	for (int i = 0; i < 5; i++)
		if (w->best[i][0] && strcmp(w->best[i], key) == 0)
			return;
	for (int i = 0; i < 5; i++) {
		if (w->best[i][0] && score >= w->best_score[i])
			continue;
		for (int j = 4; j > i; j--) {
			memcpy(w->best[j], w->best[j - 1], sizeof w->best[j]);
			w->best_score[j] = w->best_score[j - 1];
		}
		snprintf(w->best[i], sizeof w->best[i], "%.255s", key);
		w->best_score[i] = score;
		return;
	}
}

static int on_function(const struct symbolizer_function *f, void *arg)
{
	struct symbol_walk *w = arg;
	if (!f->name)
		return 0;
	if (matcher_matches(w->m, f->name)) {
		if (sites_add(w->out, f->addr, f->name, f->linkage, false, NULL, 0, f->size, w->e) < 0)
			return -1;
	} else if (w->want && strlen(f->name) < 250) {
		char key[KEY_MAX];
		tracer_name_key(f->name, key, sizeof key);
		consider_suggestion(w, key);
	}
	return 0;
}

int tracer_parse_spec(const char *text, enum probe_spec_kind *kind, char **pattern, char **file,
		      int *line, struct xerr *e)
{
	size_t len = strlen(text);
	*pattern = NULL;
	*file = NULL;
	*line = 0;
	if (len >= 2 && text[0] == '/' && text[len - 1] == '/') {
		*kind = PROBE_SPEC_REGEX;
		*pattern = strndup(text + 1, len - 2);
		return *pattern ? 0 : xerr_oom(e);
	}
	const char *colon = strrchr(text, ':');
	if (colon && colon > text && colon[-1] != ':' && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		*kind = PROBE_SPEC_FILELINE;
		*file = strndup(text, (size_t)(colon - text));
		*line = atoi(colon + 1);
		*pattern = strdup(text);
		if (!*file || !*pattern)
			return xerr_oom(e);
		return 0;
	}
	if (!len)
		return xerr_set(e, "empty SPEC: give a function name, a /regex/ or file:line");
	const char *problem = name_pattern_problem(text);
	if (problem)
		return xerr_set(e, "%s", problem);
	*kind = PROBE_SPEC_NAME;
	*pattern = strdup(text);
	return *pattern ? 0 : xerr_oom(e);
}

static int resolve_line(struct symbolizer *sym, const char *file, int line, struct tracer_sites *out,
			struct xerr *e)
{
	uint64_t *addrs = NULL;
	ssize_t n = symbolizer_addresses_for_line(sym, file, line, &addrs, e);
	if (n < 0)
		return -1;
	int added = 0;
	for (ssize_t i = 0; i < n; i++) {
		struct frame frames[16];
		size_t nf = 0;
		if (symbolizer_lookup(sym, addrs[i], false, frames, 16, &nf, e) < 0) {
			free(addrs);
			return -1;
		}
		const struct frame *leaf = nf ? &frames[0] : NULL;
		int r = sites_add(out, addrs[i], leaf && leaf->function ? leaf->function : "??", NULL,
				  leaf && leaf->inlined, leaf ? leaf->file : file, leaf ? leaf->line : line, 0, e);
		if (r < 0) {
			free(addrs);
			return -1;
		}
		added += r;
	}
	free(addrs);
	if (added == 0)
		return xerr_set(e, "no code for %s:%d (no line-table row for that line; try a nearby line, "
			        "or check the file name against `xgdbprof dump`)", file, line);
	return added;
}

/* A name not found in a stripped executable is no typo: say so. The
 * executable is the module with a PT_INTERP (or, static, ET_EXEC); stripped
 * is no .symtab and no DWARF (libraries such as libc often ship so: only
 * the program's own file is named). */
struct stripped_walk {
	char path[512];
};

static bool elf_is_stripped_program(Elf *elf, Dwfl_Module *mod)
{
	GElf_Ehdr ehdr;
	if (!elf || !gelf_getehdr(elf, &ehdr))
		return false;
	bool program = ehdr.e_type == ET_EXEC;
	size_t phnum = 0;
	elf_getphdrnum(elf, &phnum);
	for (size_t i = 0; i < phnum && !program; i++) {
		GElf_Phdr phdr;
		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_INTERP)
			program = true;
	}
	if (!program)
		return false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return false;
	}
	Dwarf_Addr dwbias;
	return dwfl_module_getdwarf(mod, &dwbias) == NULL;
}

static int find_stripped_program(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)userdata;
	(void)start;
	struct stripped_walk *w = arg;
	Dwarf_Addr bias;
	if (!name || name[0] == '[' || !elf_is_stripped_program(dwfl_module_getelf(mod, &bias), mod))
		return DWARF_CB_OK;
	snprintf(w->path, sizeof w->path, "%s", name);
	return DWARF_CB_ABORT;
}

int tracer_resolve(struct symbolizer *sym, enum probe_spec_kind kind, const char *spec,
		   const char *file, int line, bool with_inlined, struct tracer_sites *out, struct xerr *e)
{
	if (kind == PROBE_SPEC_FILELINE)
		return resolve_line(sym, file, line, out, e);
	struct matcher m = { .kind = kind };
	if (kind == PROBE_SPEC_REGEX) {
		int code;
		PCRE2_SIZE offset;
		m.re = pcre2_compile((PCRE2_SPTR)spec, PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
		if (!m.re) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(code, msg, sizeof msg);
			return xerr_set(e, "/%s/: %s at offset %zu", spec, (const char *)msg, (size_t)offset);
		}
		m.md = pcre2_match_data_create_from_pattern(m.re, NULL);
	} else if (kind == PROBE_SPEC_NAME) {
		tracer_name_key(spec, m.key, sizeof m.key);
	} else {
		return xerr_set(e, "a function probe needs a name, a /regex/ or file:line");
	}
	size_t before = out->n;
	struct symbol_walk sw = { .m = &m, .out = out, .e = e, .want = kind == PROBE_SPEC_NAME ? m.key : NULL };
	int rc = symbolizer_foreach_function(sym, NULL, on_function, &sw, e);
	if (rc == 0 && with_inlined) {
		/* One DWARF walk names the out-of-line instances just found
		 * (in place: `out` does not grow during the walk) and collects the
		 * inlined copies apart, appended afterwards. */
		struct tracer_sites instances = { .v = out->v + before, .n = out->n - before };
		struct tracer_sites inlined = { 0 };
		struct dwarf_walk dw = { .m = &m, .out = &inlined, .e = e, .named = &instances };
		if (dwfl_getmodules(symbolizer_dwfl(sym), walk_module, &dw, 0) != 0 && dw.failed)
			rc = -1;
		for (size_t i = 0; rc == 0 && i < inlined.n; i++) {
			struct tracer_site *s = &inlined.v[i];
			if (sites_add(out, s->addr, s->name, NULL, true, s->file, s->line, 0, e) < 0)
				rc = -1;
		}
		tracer_sites_release(&inlined);
	}
	if (m.md)
		pcre2_match_data_free(m.md);
	if (m.re)
		pcre2_code_free(m.re);
	if (rc < 0)
		return -1;
	if (out->n - before > 1)   /* (qsort's pointer may not be NULL, even for none) */
		qsort(out->v + before, out->n - before, sizeof *out->v, compare_sites);
	int added = (int)(out->n - before);
	if (added == 0 && kind == PROBE_SPEC_NAME) {
		char list[900] = "";
		for (int i = 0; i < 5 && sw.best[i][0]; i++) {
			size_t used = strlen(list);
			snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", sw.best[i]);
		}
		struct stripped_walk stripped = { "" };
		dwfl_getmodules(symbolizer_dwfl(sym), find_stripped_program, &stripped, 0);
		return xerr_set(e, "no function %s '%s' in process or file%s%s%s%s%s",
				name_pattern_is_glob(m.key) ? "matches" : "named", spec,
				list[0] ? "; closest names: " : "", list,
				stripped.path[0] ? "; " : "", stripped.path,
				stripped.path[0] ? " is stripped (no symbol table, no debug info): only its exported "
						   "symbols have names; trace a build with symbols, or install its debug file" : "");
	}
	return added;
}

/* ---- panic machinery ------------------------------------------------------ */

struct panic_walk {
	uint64_t hook, hook_size, rust_panic;
	bool old_abi;
};

static bool ends_with_component(const char *name, const char *last)
{
	size_t n = strlen(name), l = strlen(last);
	return n >= l && strcmp(name + n - l, last) == 0 && (n == l || name[n - l - 1] == ':');
}

static int on_panic_function(const struct symbolizer_function *f, void *arg)
{
	struct panic_walk *w = arg;
	if (!f->name)
		return 0;
	if (!w->hook && (strcmp(f->name, "std::panicking::panic_with_hook") == 0)) {
		w->hook = f->addr;
		w->hook_size = f->size;
		w->old_abi = false;
	} else if (!w->hook && ends_with_component(f->name, "rust_panic_with_hook") &&
		   !strchr(f->name, '{')) {
		w->hook = f->addr;
		w->hook_size = f->size;
		w->old_abi = true;
	} else if (!w->rust_panic && (strcmp(f->name, "rust_panic") == 0 ||
				      strcmp(f->name, "__rustc::rust_panic") == 0 ||
				      strcmp(f->name, "std::panicking::rust_panic") == 0)) {
		w->rust_panic = f->addr;
	}
	return 0;
}

int tracer_resolve_panic(struct symbolizer *sym, uint64_t *hook_addr, uint64_t *hook_size, uint64_t *rust_panic_addr,
			 bool *old_hook_abi, struct xerr *e)
{
	struct panic_walk w = { 0 };
	if (symbolizer_foreach_function(sym, NULL, on_panic_function, &w, e) < 0)
		return -1;
	*hook_addr = w.hook;
	*hook_size = w.hook_size;
	*rust_panic_addr = w.rust_panic;
	*old_hook_abi = w.old_abi;
	if (!w.hook && !w.rust_panic)
		return xerr_set(e, "no Rust panic machinery found (neither panic_with_hook nor rust_panic): "
			        "the target is not a Rust program, or its std has no symbols");
	return 0;
}
