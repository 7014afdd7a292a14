/* rust_demangle_unicode.h — the two Unicode properties Rust's
 * `char::escape_debug` needs, so const `char`/`&str` generic values print
 * exactly as rustc-demangle prints them. Tables are generated (Unicode 14, the
 * version rustc 1.63's std and so Debian's rustfilt use) by
 * tests/demangle/gen-unicode-tables.pl. Both are pure lookups.
 */
#ifndef XGDBPROF_RUST_DEMANGLE_UNICODE_H
#define XGDBPROF_RUST_DEMANGLE_UNICODE_H

#include <stdbool.h>
#include <stdint.h>

/* Rust's core::unicode::printable::is_printable: false for categories
 * Cc Cf Cs Co Cn Zl Zp Zs (U+0020 excepted). */
bool rust_char_is_printable(uint32_t c);

/* The Grapheme_Extend property (combining marks and friends). */
bool rust_char_is_grapheme_extend(uint32_t c);

#endif
