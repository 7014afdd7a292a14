/* test_symbolize — checks of src/symbols/symbolize.c on the fixtures, and the driver
 * of tests/symbolize_vs_addr2line.sh.
 *
 *   test_symbolize                      unit checks (needs $FIXTURES, $TOP_SRCDIR)
 *   test_symbolize addr2line BIN        reads hex addresses on stdin, prints
 *                                       what `addr2line -a -i -f -e BIN` prints
 *   test_symbolize lineaddrs BIN TEXT   prints every line-table address whose
 *                                       file path contains TEXT (test input)
 *
 * Line numbers come from `LINE: name` markers in the fixture sources.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "check.h"



#define MAXF 64

static int run_addr2line(const char *bin)
{
	struct xerr err;
	struct symbolizer *sym = symbolizer_new_file(bin, &err);
	if (!sym) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	char buf[256];
	struct frame f[MAXF];
	while (fgets(buf, sizeof buf, stdin)) {
		char *end;
		uint64_t pc = strtoull(buf, &end, 16);
		if (end == buf)
			continue;
		size_t n;
		if (symbolizer_lookup(sym, pc, false, f, MAXF, &n, &err) < 0) {
			fprintf(stderr, "0x%" PRIx64 ": %s\n", pc, err.msg);
			symbolizer_free(sym);
			return 2;
		}
		printf("0x%016" PRIx64 "\n", pc);
		for (size_t i = 0; i < n; i++) {
			/* the demangled name, as rustfilt prints addr2line's; the
			 * display name is a layer above (check_one_name_per_function) */
			const char *name = f[i].full_function ? f[i].full_function : f[i].function;
			printf("%s\n", name ? name : "??");
			if (f[i].file && f[i].line)
				printf("%s:%d\n", f[i].file, f[i].line);
			else if (f[i].file)
				printf("%s:?\n", f[i].file);
			else if (f[i].function)     /* addr2line: symbol found, no line */
				printf("??:?\n");
			else
				printf("??:0\n");
		}
	}
	symbolizer_free(sym);
	return 0;
}

static int run_lineaddrs(const char *bin, const char *text)
{
	Dwfl_Callbacks cb = {.find_debuginfo = dwfl_standard_find_debuginfo,
			     .section_address = dwfl_offline_section_address};
	Dwfl *dwfl = dwfl_begin(&cb);
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, bin, bin, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	Dwarf_Addr bias;
	Dwarf *dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (!dw) {
		fprintf(stderr, "%s: no DWARF\n", bin);
		dwfl_end(dwfl);
		return 2;
	}
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			Dwarf_Lines *lines;
			size_t nlines;
			if (dwarf_getsrclines(&cu, &lines, &nlines) == 0)
				for (size_t i = 0; i < nlines; i++) {
					Dwarf_Line *l = dwarf_onesrcline(lines, i);
					bool end = false;
					dwarf_lineendsequence(l, &end);
					const char *src = dwarf_linesrc(l, NULL, NULL);
					Dwarf_Addr a;
					dwarf_lineaddr(l, &a);
					if (!end && src && strstr(src, text))
						printf("0x%" PRIx64 "\n", a + bias);
				}
		}
		off = next;
	}
	dwfl_end(dwfl);
	return 0;
}

/* ---- unit checks ---- */

static char *path_join(const char *a, const char *b)
{
	char *s;
	if (asprintf(&s, "%s/%s", a, b) < 0)
		exit(2);
	return s;
}

/* Returns the 1-based line of the first line containing "LINE: name". */
static int marker_line(const char *src, const char *name)
{
	FILE *f = fopen(src, "r");
	if (!f) {
		perror(src);
		exit(2);
	}
	char want[128], buf[1024];
	snprintf(want, sizeof want, "LINE: %s", name);
	int n = 0, found = 0;
	while (fgets(buf, sizeof buf, f)) {
		n++;
		char *p = strstr(buf, want);
		if (p && (p[strlen(want)] == '\n' || p[strlen(want)] == ' ' ||
			  p[strlen(want)] == '\0')) {
			found = n;
			break;
		}
	}
	fclose(f);
	if (!found) {
		fprintf(stderr, "marker %s not found in %s\n", want, src);
		exit(2);
	}
	return found;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

struct find_fn {
	const char *name;
	uint64_t addr, size;
	int found;
};

static int find_fn_cb(const struct symbolizer_function *f, void *arg)
{
	struct find_fn *q = arg;
	if (strcmp(f->name, q->name) == 0) {
		q->addr = f->addr;
		q->size = f->size;
		q->found++;
	}
	return 0;
}

static uint64_t function_addr_size(struct symbolizer *sym, const char *name, uint64_t *size)
{
	struct find_fn q = {.name = name};
	struct xerr err;
	CHECK(symbolizer_foreach_function(sym, NULL, find_fn_cb, &q, &err) == 0);
	if (q.found != 1)
		fprintf(stderr, "function %s found %d times\n", name, q.found);
	CHECK(q.found == 1);
	*size = q.size;
	return q.addr;
}

static uint64_t function_addr(struct symbolizer *sym, const char *name)
{
	uint64_t size;
	return function_addr_size(sym, name, &size);
}

static void dump(const struct frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "  #%zu %s%s %s:%d:%d src=%d\n", i, f[i].function,
			f[i].inlined ? " [inlined]" : "", f[i].file, f[i].line, f[i].column,
			(int)f[i].source);
}

static void check_c_fixture(const char *bin, const char *src)
{
	struct xerr err;
	struct symbolizer *sym = symbolizer_new_file(bin, &err);
	if (!sym) {
		fprintf(stderr, "%s\n", err.msg);
		test_failures++;
		return;
	}
	int leaf_shift = marker_line(src, "leaf-shift");
	int leaf_mul = marker_line(src, "leaf-mul");
	int mid_leaf = marker_line(src, "middle-calls-leaf");
	int out_mid = marker_line(src, "outer-calls-middle");
	int out_mid2 = marker_line(src, "outer-calls-middle-again");
	int hot_out = marker_line(src, "hot-calls-outer");
	int cold_leaf = marker_line(src, "cold-calls-leaf");

	/* The out-of-line function itself. */
	uint64_t hot = function_addr(sym, "hot_function");
	struct frame f[MAXF];
	size_t n;
	CHECK(symbolizer_lookup(sym, hot, false, f, MAXF, &n, &err) == 0);
	CHECK(n >= 1);
	CHECK(f[n - 1].function && strcmp(f[n - 1].function, "hot_function") == 0);
	CHECK(!f[n - 1].inlined);
	CHECK(f[0].source == FRAME_SOURCE_DWARF && f[0].lang == FRAME_LANG_C);
	CHECK(f[0].file && f[0].file[0] == '/' && ends_with(f[0].file, "tests/fixtures/inline_c.c"));
	CHECK(f[0].module && strcmp(f[0].module, bin) == 0);
	CHECK(f[0].pc == hot);

	struct symbolizer_module mi;
	CHECK(symbolizer_module_info(sym, hot, &mi, &err) == 1);
	CHECK(strcmp(mi.path, bin) == 0 && mi.bias == 0 && mi.has_dwarf && !mi.debug_file);
	CHECK(strlen(mi.build_id) == 40);

	/* Every byte of the two hot functions: chains three inlines deep. */
	int full_chains = 0, cold_chains = 0;
	const char *outer_fns[] = {"hot_function", "cold_function"};
	for (int k = 0; k < 2; k++) {
		uint64_t size, start = function_addr_size(sym, outer_fns[k], &size);
		CHECK(size > 0);
		for (uint64_t pc = start; pc < start + size; pc++) {
			CHECK(symbolizer_lookup(sym, pc, false, f, MAXF, &n, &err) == 0);
			if (n == 0 || strcmp(f[n - 1].function, outer_fns[k]) != 0 || f[n - 1].inlined) {
				fprintf(stderr, "0x%" PRIx64 " not in %s:\n", pc, outer_fns[k]);
				dump(f, n);
				test_failures++;
				continue;
			}
			bool leaf_ok = strcmp(f[0].function, "mix_leaf") == 0 && f[0].inlined &&
				       f[0].line >= leaf_shift && f[0].line <= leaf_mul + 1;
			if (leaf_ok && n == 4 && strcmp(f[1].function, "mix_middle") == 0 &&
			    f[1].line == mid_leaf && f[1].inlined &&
			    strcmp(f[2].function, "mix_outer") == 0 &&
			    (f[2].line == out_mid || f[2].line == out_mid2) && f[2].inlined &&
			    f[3].line == hot_out)
				full_chains++;
			else if (leaf_ok && n == 2 && k == 1 && f[1].line == cold_leaf)
				cold_chains++;
			/* A return address one past names the same chain. */
			struct frame g[MAXF];
			size_t m;
			CHECK(symbolizer_lookup(sym, pc + 1, true, g, MAXF, &m, &err) == 0);
			CHECK(m == n && g[0].pc == pc + 1);
			for (size_t i = 0; i < m && i < n; i++)
				CHECK(g[i].function == f[i].function && g[i].line == f[i].line);
			/* Truncation keeps the leaf-most frames. */
			CHECK(symbolizer_lookup(sym, pc, false, g, 1, &m, &err) == 0);
			CHECK(m == 1 && g[0].function == f[0].function);
		}
	}
	CHECK(full_chains > 0);
	CHECK(cold_chains > 0);

	/* file:line: the is_stmt rows of the innermost line, one per block. */
	uint64_t *addrs;
	ssize_t na = symbolizer_addresses_for_line(sym, "fixtures/inline_c.c", leaf_shift, &addrs, &err);
	CHECK(na >= 2);
	bool named = false;
	for (ssize_t i = 0; i < na; i++) {
		CHECK(symbolizer_lookup(sym, addrs[i], false, f, MAXF, &n, &err) == 0);
		CHECK(i == 0 || addrs[i] > addrs[i - 1]);
		if (strcmp(f[0].function, "mix_leaf") == 0 && f[0].line == leaf_shift)
			named = true;
	}
	CHECK(named);
	free(addrs);

	CHECK(symbolizer_addresses_for_line(sym, "inline_c.c", leaf_mul, &addrs, &err) > 0);
	free(addrs);
	/* Whole components only, and absolute paths compare exactly. */
	CHECK(symbolizer_addresses_for_line(sym, "line_c.c", leaf_mul, &addrs, &err) == 0);
	CHECK(symbolizer_addresses_for_line(sym, "/nonexistent/inline_c.c", leaf_mul, &addrs, &err) == 0);
	CHECK(symbolizer_addresses_for_line(sym, src, leaf_mul, &addrs, &err) > 0 || src[0] != '/');
	free(addrs);

	/* Source maps rewrite frame files. */
	struct source_map *map = source_map_new();
	source_map_set_rustc(map, NULL);
	char *dir = strdup(f[0].file);
	*strrchr(dir, '/') = '\0';
	CHECK(source_map_add(map, dir, "/mapped", &err) == 0);
	symbolizer_set_source_map(sym, map);
	CHECK(symbolizer_lookup(sym, hot, false, f, MAXF, &n, &err) == 0);
	CHECK(f[0].file && strcmp(f[0].file, "/mapped/inline_c.c") == 0);
	symbolizer_set_source_map(sym, NULL);
	CHECK(symbolizer_lookup(sym, hot, false, f, MAXF, &n, &err) == 0);
	CHECK(f[0].file && strcmp(f[0].file, "/mapped/inline_c.c") != 0);
	free(dir);
	source_map_free(map);

	/* No module there. */
	CHECK(symbolizer_lookup(sym, 0xffffffff00000000ULL, false, f, MAXF, &n, &err) == 0);
	CHECK(n == 1 && f[0].source == FRAME_SOURCE_NONE && !f[0].function && !f[0].module);
	symbolizer_free(sym);
}

/* A mangled Rust symbol (legacy _ZN… or v0 _R…) naming part. */
static bool is_rust_symbol(const char *linkage, const char *part)
{
	return linkage && (strncmp(linkage, "_ZN", 3) == 0 || strncmp(linkage, "_R", 2) == 0) &&
	       strstr(linkage, part);
}

static void check_rust_fixture(const char *bin, const char *src)
{
	struct xerr err;
	struct symbolizer *sym = symbolizer_new_file(bin, &err);
	if (!sym) {
		fprintf(stderr, "%s\n", err.msg);
		test_failures++;
		return;
	}
	int leaf = marker_line(src, "leaf-mix");
	int mid = marker_line(src, "middle-calls-leaf");
	int out = marker_line(src, "outer-calls-middle");
	int hot_n = marker_line(src, "hot-numbers-calls-outer");
	int hot_s = marker_line(src, "hot-strings-calls-outer");
	int weigh_u64 = marker_line(src, "weigh-u64");

	uint64_t hot = function_addr(sym, "inline_rust::hot_numbers");
	struct frame f[MAXF];
	size_t n;
	CHECK(symbolizer_lookup(sym, hot, false, f, MAXF, &n, &err) == 0);
	CHECK(strcmp(f[n - 1].function, "inline_rust::hot_numbers") == 0);
	CHECK(f[n - 1].lang == FRAME_LANG_RUST && f[n - 1].source == FRAME_SOURCE_DWARF);

	uint64_t *addrs;
	ssize_t na = symbolizer_addresses_for_line(sym, "inline_rust.rs", leaf, &addrs, &err);
	CHECK(na >= 2);
	int chains = 0;
	for (ssize_t i = 0; i < na; i++) {
		CHECK(symbolizer_lookup(sym, addrs[i], false, f, MAXF, &n, &err) == 0);
		if (n == 4 && ends_with(f[0].function, "::leaf_mix") && f[0].line == leaf &&
		    ends_with(f[1].function, "::middle") && f[1].line == mid &&
		    ends_with(f[2].function, "::outer") && f[2].line == out &&
		    (strcmp(f[3].function, "inline_rust::hot_numbers") == 0 ||
		     strcmp(f[3].function, "inline_rust::hot_strings") == 0) &&
		    (f[3].line == hot_n || f[3].line == hot_s) && !f[3].inlined &&
		    f[0].inlined && f[1].inlined && f[2].inlined) {
			chains++;
			/* the function's own first line and symbol name, for pprof:
			 * `fn leaf_mix(` and `pub fn hot_*(` sit just above their markers */
			CHECK_MSG(f[0].decl_line == leaf - 1 && f[3].decl_line == f[3].line - 1,
				  "decl_line %d and %d", f[0].decl_line, f[3].decl_line);
			CHECK_MSG(is_rust_symbol(f[0].linkage, "leaf_mix") && is_rust_symbol(f[3].linkage, "hot_"),
				  "linkage names %s, %s", f[0].linkage ? f[0].linkage : "(null)",
				  f[3].linkage ? f[3].linkage : "(null)");
		} else if (n >= 1 && !ends_with(f[0].function, "::leaf_mix")) {
			fprintf(stderr, "unexpected leaf at 0x%" PRIx64 ":\n", addrs[i]);
			dump(f, n);
			test_failures++;
		}
	}
	CHECK(chains >= 2);    /* both monomorphizations of outer */
	free(addrs);

	/* The trait impl inlined through the generic middle::<u64>. */
	na = symbolizer_addresses_for_line(sym, "inline_rust.rs", weigh_u64, &addrs, &err);
	CHECK(na >= 1);
	bool weigh_chain = false;
	for (ssize_t i = 0; i < na; i++) {
		CHECK(symbolizer_lookup(sym, addrs[i], false, f, MAXF, &n, &err) == 0);
		if (n >= 2 && strstr(f[0].function, "weight") && f[0].line == weigh_u64 &&
		    ends_with(f[1].function, "::middle") && f[1].line == mid)
			weigh_chain = true;
	}
	CHECK(weigh_chain);
	free(addrs);

	struct symbolizer_stats st;
	symbolizer_get_stats(sym, &st);
	CHECK(st.cus_built >= 1 && st.index_entries > 0 && st.lookups > 0);
	symbolizer_free(sym);
}

static int shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shell(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* The fallbacks: separate debug file, .symtab only, .dynsym only. */
static void check_fallbacks(const char *bin)
{
	char dir[] = "/tmp/xgdbprof-symfb-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		test_failures++;
		return;
	}
	struct xerr err;
	struct symbolizer *full = symbolizer_new_file(bin, &err);
	CHECK(full != NULL);
	if (!full)
		return;
	uint64_t hot = function_addr(full, "hot_function");
	uint64_t main_addr = function_addr(full, "main");
	struct frame want[MAXF], f[MAXF];
	size_t nwant, n;
	CHECK(symbolizer_lookup(full, hot + 8, false, want, MAXF, &nwant, &err) == 0);

	char *dbg = path_join(dir, "inline_c.debug");
	char *linked = path_join(dir, "inline_c.linked");
	char *nodebug = path_join(dir, "inline_c.nodebug");
	char *stripped = path_join(dir, "inline_c.stripped");
	CHECK(shell("objcopy --only-keep-debug '%s' '%s'", bin, dbg) == 0);
	CHECK(shell("cd '%s' && objcopy --strip-debug --add-gnu-debuglink=inline_c.debug '%s' inline_c.linked",
		    dir, bin) == 0);
	CHECK(shell("objcopy --strip-debug '%s' '%s'", bin, nodebug) == 0);
	CHECK(shell("strip --strip-all -o '%s' '%s'", stripped, bin) == 0);

	struct symbolizer *sym = symbolizer_new_file(linked, &err);
	CHECK(sym != NULL);
	if (sym) {
		CHECK(symbolizer_lookup(sym, hot + 8, false, f, MAXF, &n, &err) == 0);
		CHECK(n == nwant && f[0].source == FRAME_SOURCE_DEBUGLINK);
		for (size_t i = 0; i < n && i < nwant; i++)
			CHECK(strcmp(f[i].function, want[i].function) == 0 &&
			      f[i].line == want[i].line && strcmp(f[i].file, want[i].file) == 0);
		struct symbolizer_module mi;
		CHECK(symbolizer_module_info(sym, hot, &mi, &err) == 1);
		CHECK(mi.debug_file && ends_with(mi.debug_file, "inline_c.debug"));
		symbolizer_free(sym);
	}
	sym = symbolizer_new_file(nodebug, &err);
	CHECK(sym != NULL);
	if (sym) {
		CHECK(symbolizer_lookup(sym, hot + 8, false, f, MAXF, &n, &err) == 0);
		CHECK(n == 1 && f[0].source == FRAME_SOURCE_SYMTAB &&
		      f[0].function && strcmp(f[0].function, "hot_function") == 0 && !f[0].file);
		symbolizer_free(sym);
	}
	sym = symbolizer_new_file(stripped, &err);
	CHECK(sym != NULL);
	if (sym) {
		/* hot_function is not exported: nothing names it any more. */
		CHECK(symbolizer_lookup(sym, hot + 8, false, f, MAXF, &n, &err) == 0);
		CHECK(n == 1 && f[0].source == FRAME_SOURCE_NONE && !f[0].function && f[0].module);
		(void)main_addr;
		symbolizer_free(sym);
	}
	symbolizer_free(full);
	CHECK(shell("rm -rf '%s'", dir) == 0);
	free(dbg);
	free(linked);
	free(nodebug);
	free(stripped);
}

/* .dynsym alone: a shared library stripped of everything else. */
static void check_dynsym(void)
{
	char dir[] = "/tmp/xgdbprof-symdyn-XXXXXX";
	if (!mkdtemp(dir)) {
		test_failures++;
		return;
	}
	char *src = path_join(dir, "lib.c");
	char *so = path_join(dir, "lib.so");
	FILE *f = fopen(src, "w");
	fputs("int exported_fn(int x) { return x * 3 + 1; }\n", f);
	fclose(f);
	const char *cc = getenv("CC");
	if (!cc || !*cc)
		cc = "cc";
	CHECK(shell("%s -shared -fPIC -O2 -o '%s' '%s'", cc, so, src) == 0);
	CHECK(shell("strip --strip-all '%s'", so) == 0);
	struct xerr err;
	struct symbolizer *sym = symbolizer_new_file(so, &err);
	CHECK(sym != NULL);
	if (sym) {
		uint64_t a = function_addr(sym, "exported_fn");
		struct frame fr[4];
		size_t n;
		CHECK(symbolizer_lookup(sym, a, false, fr, 4, &n, &err) == 0);
		CHECK(n == 1 && fr[0].source == FRAME_SOURCE_DYNSYM &&
		      fr[0].function && strcmp(fr[0].function, "exported_fn") == 0);
		symbolizer_free(sym);
	}
	CHECK(shell("rm -rf '%s'", dir) == 0);
	free(src);
	free(so);
}

/* ---- one name per function, legacy vs v0 ---- */

struct name_set {
	char **v;                /* sorted after collect_names */
	size_t n, cap;
	size_t generic_full;     /* frames whose full name has v0 generic arguments */
	const char **seen;       /* interned names already added (open addressing) */
	size_t seen_cap;
};

/* Names are interned by the symbolizer: one pointer per distinct name. */
static void name_set_add(struct name_set *s, const char *name)
{
	if ((s->n + 1) * 2 > s->seen_cap) {
		size_t cap = s->seen_cap ? 2 * s->seen_cap : 4096;
		const char **seen = calloc(cap, sizeof *seen);
		if (!seen)
			exit(1);
		for (size_t i = 0; i < s->seen_cap; i++) {
			if (!s->seen[i])
				continue;
			size_t j = ((uintptr_t)s->seen[i] >> 4) & (cap - 1);
			while (seen[j])
				j = (j + 1) & (cap - 1);
			seen[j] = s->seen[i];
		}
		free(s->seen);
		s->seen = seen;
		s->seen_cap = cap;
	}
	size_t j = ((uintptr_t)name >> 4) & (s->seen_cap - 1);
	for (; s->seen[j]; j = (j + 1) & (s->seen_cap - 1))
		if (s->seen[j] == name)
			return;
	s->seen[j] = name;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		if (!s->v)
			exit(1);
	}
	s->v[s->n++] = strdup(name);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool name_set_has(const struct name_set *s, const char *name)
{
	return bsearch(&name, s->v, s->n, sizeof *s->v, cmp_names) != NULL;
}

struct names_walk {
	struct symbolizer *sym;
	struct name_set *set;
	int failed;
};

/* Every 8th byte of every function: the frames there, inlined ones too. */
static int collect_function_names(const struct symbolizer_function *f, void *arg)
{
	struct names_walk *w = arg;
	uint64_t size = f->size ? f->size : 1;
	for (uint64_t off = 0; off < size && off < (1u << 16); off += 8) {
		struct frame fr[MAXF];
		size_t n;
		struct xerr err;
		if (symbolizer_lookup(w->sym, f->addr + off, false, fr, MAXF, &n, &err) < 0) {
			w->failed = 1;
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			if (!fr[i].function)
				continue;
			name_set_add(w->set, fr[i].function);
			if (fr[i].full_function && strstr(fr[i].full_function, "::<"))
				w->set->generic_full++;
		}
	}
	return 0;
}

static void collect_names(const char *bin, struct name_set *set)
{
	struct xerr err;
	struct symbolizer *sym = symbolizer_new_file(bin, &err);
	CHECK_MSG(sym, "%s: %s", bin, err.msg);
	if (!sym)
		return;
	struct names_walk w = { sym, set, 0 };
	CHECK(symbolizer_foreach_function(sym, NULL, collect_function_names, &w, &err) >= 0 && !w.failed);
	symbolizer_free(sym);
	free(set->seen);
	set->seen = NULL;
	set->seen_cap = 0;
	/* one interned pointer per name, so no duplicates: sort for bsearch */
	qsort(set->v, set->n, sizeof *set->v, cmp_names);
}

/* A blanket impl over a bare type parameter: legacy names the parameter
 * (`<T as core::convert::Into>::into`), v0 the type; nothing in the symbol
 * or DWARF says the impl was a blanket one (docs/demangle.md). */
static bool blanket_impl(const char *name)
{
	if (name[0] != '<' || name[1] < 'A' || name[1] > 'Z')
		return false;
	const char *p = name + 2;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
		p++;
	return strncmp(p, " as ", 4) == 0;
}

/* The same program built with legacy and with v0 mangling: every frame name
 * at every 8th byte of every function, from DWARF (inlined frames
 * included) or the symbol table, is one set. */
static void check_one_name_per_function(const char *legacy, const char *v0)
{
	struct name_set a = { 0 }, b = { 0 };
	collect_names(legacy, &a);
	collect_names(v0, &b);
	CHECK_MSG(a.n > 500 && b.n > 500, "only %zu / %zu names", a.n, b.n);
	CHECK_MSG(b.generic_full > 100, "the v0 build has %zu frames with generic arguments", b.generic_full);
	size_t only_legacy = 0, only_v0 = 0;
	for (size_t i = 0; i < a.n; i++)
		if (!name_set_has(&b, a.v[i]) && !blanket_impl(a.v[i])) {
			fprintf(stderr, "only in the legacy build: %s\n", a.v[i]);
			only_legacy++;
		}
	for (size_t i = 0; i < b.n; i++) {
		if (name_set_has(&a, b.v[i]))
			continue;
		/* v0's side of a blanket impl: legacy has `<T as TRAIT>::m` */
		const char *as = strstr(b.v[i], " as ");
		bool blanket = false;
		for (size_t k = 0; as && k < a.n && !blanket; k++)
			blanket = blanket_impl(a.v[k]) && strstr(a.v[k], as) &&
				  strcmp(strstr(a.v[k], " as "), as) == 0;
		if (!blanket) {
			fprintf(stderr, "only in the v0 build: %s\n", b.v[i]);
			only_v0++;
		}
	}
	CHECK_MSG(only_legacy == 0 && only_v0 == 0, "%zu names only in the legacy build, %zu only in v0",
		  only_legacy, only_v0);
	/* the kinds of names the fixture holds, as displayed */
	static const char *const expected[] = {
		"names_fixture::Store::probe", "names_fixture::Store::fill",
		"<names_fixture::Store as names_fixture::Visit>::visit",
		"<names_fixture::Store as names_fixture::Visit>::visit::{closure}",
		"names_fixture::Visit::visit_many", "names_fixture::Visit::visit_many::{closure}",
		"names_fixture::spin_leaf", "names_fixture::main::{closure}",
		"core::ops::function::FnOnce::call_once::{shim:vtable}",
		"core::iter::traits::iterator::Iterator::fold",
	};
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
		CHECK_MSG(name_set_has(&a, expected[i]) && name_set_has(&b, expected[i]),
			  "\"%s\" missing (legacy %d, v0 %d)", expected[i], name_set_has(&a, expected[i]),
			  name_set_has(&b, expected[i]));
	for (size_t i = 0; i < a.n; i++)
		free(a.v[i]);
	for (size_t i = 0; i < b.n; i++)
		free(b.v[i]);
	free(a.v);
	free(b.v);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "addr2line") == 0)
		return run_addr2line(argv[2]);
	if (argc == 4 && strcmp(argv[1], "lineaddrs") == 0)
		return run_lineaddrs(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: %s [addr2line BIN | lineaddrs BIN TEXT]\n", argv[0]);
		return 2;
	}
	const char *fixtures = getenv("FIXTURES"), *top = getenv("TOP_SRCDIR");
	if (!fixtures || !top) {
		fprintf(stderr, "FIXTURES and TOP_SRCDIR must be set (make check does)\n");
		return 2;
	}
	char *cbin = path_join(fixtures, "inline_c");
	char *rbin = path_join(fixtures, "inline_rust");
	char *csrc = path_join(top, "tests/fixtures/inline_c.c");
	char *rsrc = path_join(top, "tests/fixtures/inline_rust.rs");
	check_c_fixture(cbin, csrc);
	check_rust_fixture(rbin, rsrc);
	check_fallbacks(cbin);
	check_dynsym();
	char *legacy = path_join(fixtures, "names_legacy"), *v0 = path_join(fixtures, "names_v0");
	check_one_name_per_function(legacy, v0);
	free(legacy);
	free(v0);
	free(cbin);
	free(rbin);
	free(csrc);
	free(rsrc);
	if (test_failures) {
		fprintf(stderr, "%d failure(s)\n", test_failures);
		return 1;
	}
	printf("symbolize: all checks passed\n");
	return 0;
}
