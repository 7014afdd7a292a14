/* demangle.h — symbol names for humans: Rust (legacy and v0) by our own code,
 * C++ through the system's libstdc++, everything else untouched.
 *
 * Contract:
 * - demangle_rust() prints exactly what rustc-demangle's `demangle(sym)`
 *   prints: `{}` (DEMANGLE_FULL: keeps `::h<hash>` and `[crate-disambiguator]`)
 *   or `{:#}` (DEMANGLE_NO_HASH: drops both, and the type suffixes of integer
 *   consts). Same acceptance rules, same `.llvm.<HEX>` stripping, same
 *   `{invalid syntax}`, `{recursion limit reached}` (depth 500) and
 *   `{size limit reached}` (1,000,000 output bytes) markers.
 * - It never allocates and never reads past the terminating NUL (or `len`);
 *   recursion is bounded by that depth limit, so hostile input is safe.
 * - Routing (demangle_symbol, demangle_text_*): only `_R…`, or a `_ZN…`
 *   whose last path segment is `17h<16 hex>E` (optionally followed by a
 *   `.suffix` such as `.llvm.1234`), is Rust; any other `_Z…` goes to the C++
 *   demangler; everything else is returned as is.
 * - The C++ demangler is libstdc++'s `__cxa_demangle`, loaded with dlopen()
 *   on first use so that building needs no C++ toolchain or configure check;
 *   if libstdc++.so.6 cannot be loaded, C++ names stay mangled.
 * - All functions are thread-safe (no global state besides the one-time
 *   dlopen, guarded by pthread_once).
 */
#ifndef XGDBPROF_DEMANGLE_H
#define XGDBPROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum demangle_style {
	DEMANGLE_FULL,    /* rustc-demangle `{}`:  foo::bar::h0123456789abcdef */
	DEMANGLE_NO_HASH, /* rustc-demangle `{:#}`: foo::bar */
};

enum {
	RUST_DEMANGLE_NOT_RUST = -1, /* not a Rust symbol: caller keeps the input */
	RUST_DEMANGLE_TOO_BIG = -2,  /* output does not fit in out_size bytes */
};

/* rustc-demangle's own cap on the demangled text, before "{size limit reached}". */
#define RUST_DEMANGLE_MAX_SIZE 1000000

/* Demangles the NUL-terminated Rust symbol `mangled` into `out` (always
 * NUL-terminated when out_size > 0). Returns the output length (>= 0),
 * RUST_DEMANGLE_NOT_RUST, or RUST_DEMANGLE_TOO_BIG (out holds a truncated
 * prefix; out_size = RUST_DEMANGLE_MAX_SIZE + 64 + strlen(mangled) always
 * suffices). */
int demangle_rust(const char *mangled, char *out, size_t out_size,
		  enum demangle_style style);

/* The same for a symbol that is not NUL-terminated (`len` bytes). */
int demangle_rust_n(const char *mangled, size_t len, char *out, size_t out_size,
		    enum demangle_style style);

/* True when `sym` (len bytes) is what the routing rule calls Rust: `_R…`
 * that demangles, or `_ZN…17h<16 hex>E[.suffix]` that demangles. */
bool demangle_is_rust(const char *sym, size_t len);

/* Demangles one symbol by the routing rule above. with_hash selects
 * DEMANGLE_FULL for Rust (C++ output has no hash either way). Returns a
 * malloc'd string (the input copied if nothing applies), or NULL when out of
 * memory. */
char *demangle_symbol(const char *sym, bool with_hash);

/* The same for a symbol the routing rule calls Rust; NULL for any other (a
 * `_ZN…` legacy-shaped name that does not demangle as Rust included: C++
 * may still take it) and when out of memory. One demangling, where
 * demangle_is_rust + demangle_symbol take two. */
char *demangle_rust_symbol(const char *sym, bool with_hash);

/* Writes `text` (len bytes) to `out` with every mangled symbol in it
 * replaced by its demangled form. A symbol starts with `_Z` or `_R` not
 * preceded by a letter or digit, and runs over [A-Za-z0-9_$.]. Works on any
 * chunk boundary that is a line boundary. Returns 0, or -1 on a write error
 * (errno set by stdio). */
int demangle_text_write(FILE *out, const char *text, size_t len, bool with_hash);

/* The same into a malloc'd NUL-terminated string; NULL when out of memory. */
char *demangle_text(const char *text, bool with_hash);

/* The name reports show for a demangled Rust name: the same for legacy
 * and v0 symbols of one function (docs/demangle.md, "Display names").
 *  - a qualified path without generic arguments at any depth, without v0's
 *    `<...>` around an inherent impl's self type, and without hash or crate
 *    disambiguators: `<sled::tree::Tree>::insert::<&[u8]>`,
 *    `sled::tree::Tree<K,V>::insert` -> `sled::tree::Tree::insert`;
 *    legacy's `core::str::<impl str>::len` and v0's `<str>::len` ->
 *    `str::len`;
 *  - trait impls as `<SELF as TRAIT>::method`, SELF by its outermost
 *    constructor only (`alloc::vec::Vec`, `&_`, `[_]`, `(_, _)`), TRAIT
 *    without arguments; legacy's `<impl TRAIT for SELF>` likewise;
 *  - closures and shims as `::{closure}`, `::{shim:vtable}` (legacy
 *    `{{closure}}`, v0 `{closure#0}`); the Fn-trait shims of closures and fn
 *    items as `core::ops::function::FnOnce::call_once` (legacy's own name).
 * Any text is accepted (unbalanced brackets end at the end of the input;
 * nesting deeper than 64 is flattened, not recursed into). Returns a
 * malloc'd string, NULL only when out of memory. */
char *demangle_display_name(const char *demangled);

/* For a trait's provided (default) method: the display name legacy
 * mangling gives it, which names the trait and not the implementing type,
 * `<a::S as a::Visit>::describe` -> `a::Visit::describe`. Only the caller
 * can tell a provided method from an impl's (the symbolizer does from
 * DWARF). Returns a malloc'd string and sets *trait_len to the length of
 * its trait path ("a::Visit"), or NULL when display does not start with
 * `<SELF as TRAIT>::` (or out of memory). */
char *demangle_display_provided_method(const char *display, size_t *trait_len);

/* A demangled name without its generic arguments, at any depth:
 * "sled::tree::Tree<K, V>::insert<u64>" -> "sled::tree::Tree::insert".
 * Truncates to out_size - 1 bytes. */
void demangle_strip_generics(const char *name, char *out, size_t out_size);

#endif
