/* test_demangle.c — the demangler against rustc-demangle's published test
 * vectors (tests/demangle/vectors.txt), the corpus of real symbols from the
 * fixture binaries with rustfilt's output (tests/demangle/corpus-*.txt), and
 * the routing/filter API. Exit 0 pass, 1 fail; prints the first few diffs.
 */
#include "symbols/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define OUT_CAP (RUST_DEMANGLE_MAX_SIZE + 4096)

static char out[OUT_CAP];

static void fail(const char *what, const char *input, const char *want, const char *got)
{
	if (++test_failures <= 8)
		fprintf(stderr, "FAIL %s\n  input: %s\n  want:  %s\n  got:   %s\n", what, input, want, got);
}

/* In-place C unescape (\\ \n \t \0); returns the new length. */
static size_t unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r == '\\' && r[1]) {
			r++;
			*w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r == '0' ? '\0' : *r;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

/* rustc_demangle::demangle(s) formatted: the input itself when not Rust. */
static const char *demangled(const char *s, size_t len, enum demangle_style style, int *rc)
{
	int r = demangle_rust_n(s, len, out, sizeof out, style);
	if (rc)
		*rc = r;
	if (r == RUST_DEMANGLE_TOO_BIG) {
		fail("output too big for the test buffer", s, "", "");
		return "";
	}
	return r < 0 ? s : out;
}

static void check_vectors(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		test_failures++;
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		char *kind = line, *sym = strchr(line, '\t');
		char *want = sym ? strchr(sym + 1, '\t') : NULL;
		if (!want) {
			fail("malformed vector line", line, "", "");
			continue;
		}
		*sym++ = '\0';
		*want++ = '\0';
		size_t len = unescape(sym);
		unescape(want);
		int rc;
		count++;
		if (strcmp(kind, "full") == 0) {
			const char *got = demangled(sym, len, DEMANGLE_FULL, &rc);
			if (rc < 0 || strcmp(got, want) != 0)
				fail("full", sym, want, rc < 0 ? "(not Rust)" : got);
		} else if (strcmp(kind, "alt") == 0) {
			const char *got = demangled(sym, len, DEMANGLE_NO_HASH, &rc);
			if (strcmp(got, want) != 0)
				fail("alt", sym, want, got);
		} else if (strcmp(kind, "err") == 0) {
			demangled(sym, len, DEMANGLE_FULL, &rc);
			if (rc != RUST_DEMANGLE_NOT_RUST)
				fail("err", sym, "(not Rust)", out);
		} else if (strcmp(kind, "contains") == 0) {
			const char *got = demangled(sym, len, DEMANGLE_FULL, &rc);
			if (!strstr(got, want))
				fail("contains", sym, want, got);
		} else if (strcmp(kind, "endswith") == 0) {
			const char *got = demangled(sym, len, DEMANGLE_FULL, &rc);
			size_t gl = strlen(got), wl = strlen(want);
			if (gl < wl || strcmp(got + gl - wl, want) != 0)
				fail("endswith", sym, want, gl > 200 ? got + gl - 200 : got);
		} else if (strcmp(kind, "any") == 0) {
			demangled(sym, len, DEMANGLE_FULL, NULL);
			demangled(sym, len, DEMANGLE_NO_HASH, NULL);
		} else {
			fail("unknown vector kind", kind, "", "");
		}
	}
	free(line);
	fclose(f);
	printf("vectors: %d checked\n", count);
	if (count < 100)
		fail("too few vectors", path, ">= 100", "fewer");
}

/* v0.rs recursion_limit_leaks: 1000 siblings must not add up to depth. */
static void check_recursion_limits(void)
{
	static const char *leaves[][2] = {{"p", "_"}, {"Rp", "&_"}, {"C1x", "x"}};
	static char sym[8192], want[8192];
	for (size_t l = 0; l < 3; l++) {
		strcpy(sym, "_RIC0p");
		strcpy(want, "::<_");
		for (int i = 0; i < 1000; i++) {
			strcat(sym, leaves[l][0]);
			strcat(want, ", ");
			strcat(want, leaves[l][1]);
		}
		strcat(sym, "E");
		strcat(want, ">");
		const char *got = demangled(sym, strlen(sym), DEMANGLE_NO_HASH, NULL);
		if (strcmp(got, want) != 0)
			fail("recursion_limit_leaks", leaves[l][0], "siblings print", "truncated");
	}

	/* recursion_limit_backref_free_bypass: 100000 nested `R` behind a
	 * backref must stop at the limit, not overflow the C stack. */
	size_t depth = 100000;
	char *big = malloc(depth + 64);
	int k = sprintf(big, "_RIC%zu", depth);
	size_t backref_start = (size_t)k - 2;
	memset(big + k, 'R', depth);
	k += (int)depth;
	big[k++] = 'B';
	big[k++] = "0123456789abcdefghijklmnopqrstuvwxyz"[backref_start - 1];
	big[k++] = '_';
	big[k++] = 'E';
	big[k] = '\0';
	const char *got = demangled(big, (size_t)k, DEMANGLE_FULL, NULL);
	if (!strstr(got, "{recursion limit reached}"))
		fail("recursion_limit_backref_free_bypass", "_RIC100000RRR...", "{recursion limit reached}", "no marker");
	free(big);
}

static void check_corpus(const char *path, enum demangle_style style)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		test_failures++;
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0, bad = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		char *want = strchr(line, '\t');
		if (!want)
			continue;
		*want++ = '\0';
		count++;
		const char *got = demangled(line, strlen(line), style, NULL);
		if (strcmp(got, want) != 0) {
			bad++;
			fail(style == DEMANGLE_FULL ? "corpus-full" : "corpus-alt", line, want, got);
		}
	}
	free(line);
	fclose(f);
	printf("%s: %d symbols, %d mismatches\n", path, count, bad);
	if (count < 1000)
		fail("corpus too small", path, ">= 1000 symbols", "fewer");
}

static void expect_str(const char *what, char *got, const char *want)
{
	if (!got || strcmp(got, want) != 0)
		fail(what, what, want, got ? got : "(NULL)");
	free(got);
}

static void check_api(void)
{
	const char *sym = "_ZN3foo3bar17h05af221e174051e9E";
	char small[8];
	int r = demangle_rust(sym, small, sizeof small, DEMANGLE_FULL);
	if (r != RUST_DEMANGLE_TOO_BIG || strlen(small) != sizeof small - 1 || strncmp(small, "foo::ba", 7) != 0)
		fail("truncation reports TOO_BIG with a NUL-terminated prefix", sym, "-2 foo::ba", small);
	char exact[9];
	r = demangle_rust(sym, exact, sizeof exact, DEMANGLE_NO_HASH);
	if (r != 8 || strcmp(exact, "foo::bar") != 0)
		fail("exact fit", sym, "8 foo::bar", exact);
	r = demangle_rust("main", exact, sizeof exact, DEMANGLE_FULL);
	if (r != RUST_DEMANGLE_NOT_RUST || exact[0] != '\0')
		fail("not Rust", "main", "-1", exact);

	/* Routing. */
	expect_str("rust legacy full", demangle_symbol(sym, true), "foo::bar::h05af221e174051e9");
	expect_str("rust legacy no-hash", demangle_symbol(sym, false), "foo::bar");
	expect_str("rust legacy .llvm", demangle_symbol("_ZN3foo3bar17h05af221e174051e9E.llvm.1234", false), "foo::bar");
	expect_str("rust v0", demangle_symbol("_RNvCs1234_3foo3bar", true), "foo[3c1c0]::bar");
	expect_str("rust v0 no-hash", demangle_symbol("_RNvCs1234_3foo3bar", false), "foo::bar");
	expect_str("hash-less _ZN goes to C++", demangle_symbol("_ZN3foo3barE", true), "foo::bar");
	expect_str("C++ function", demangle_symbol("_ZN3foo3barEv", true), "foo::bar()");
	expect_str("C++ template", demangle_symbol("_ZNSt6vectorIiSaIiEE9push_backERKi", true),
		   "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect_str("plain C", demangle_symbol("main", true), "main");
	expect_str("bad _R", demangle_symbol("_Rfoo", true), "_Rfoo");
	expect_str("bad _Z", demangle_symbol("_Zfoo", true), "_Zfoo");
	if (!demangle_is_rust(sym, strlen(sym)) || demangle_is_rust("_ZN3fooE", 8) ||
	    demangle_is_rust("_Z3foov", 7) || !demangle_is_rust("_RC3foo", 7))
		fail("demangle_is_rust", "routing rule", "true false false true", "other");

	/* The text filter. */
	expect_str("filter",
		   demangle_text("#0 0x1 in _ZN3foo3bar17h05af221e174051e9E (x=1) at a.rs:3\n"
				 "call _Z3fooi; v0=<_RNvC3foo3bar>, keep abc_ZN3fooE and _RX.\n", true),
		   "#0 0x1 in foo::bar::h05af221e174051e9 (x=1) at a.rs:3\n"
		   "call foo(int); v0=<foo::bar>, keep abc_ZN3fooE and _RX.\n");
	expect_str("filter no-hash, sentence end",
		   demangle_text("in _ZN3foo3bar17h05af221e174051e9E. Then _Z3fooi.", false),
		   "in foo::bar. Then foo(int).");
	expect_str("filter empty", demangle_text("", true), "");
}

int main(void)
{
	const char *src = getenv("TOP_SRCDIR");
	if (!src)
		src = ".";
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/demangle/vectors.txt", src);
	check_vectors(path);
	check_recursion_limits();
	snprintf(path, sizeof path, "%s/tests/demangle/corpus-full.txt", src);
	check_corpus(path, DEMANGLE_FULL);
	snprintf(path, sizeof path, "%s/tests/demangle/corpus-alt.txt", src);
	check_corpus(path, DEMANGLE_NO_HASH);
	check_api();
	return test_exit_code();
}
