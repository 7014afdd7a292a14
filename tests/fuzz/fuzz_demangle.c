/* fuzz_demangle.c — libFuzzer target for the Rust demangler.
 *
 * Besides "never crash", it checks the output contract: a result is either
 * not-Rust, too-big, or a NUL-terminated string of the returned length; a
 * too-big result holds a prefix of the full output; and the routing helper
 * agrees with the demangler.
 */
#include "symbols/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char big[RUST_DEMANGLE_MAX_SIZE + 8192];
	char small[64];
	const char *sym = (const char *)data;
	if (size > 4096)
		return 0;
	for (int style = DEMANGLE_FULL; style <= DEMANGLE_NO_HASH; style++) {
		int r = demangle_rust_n(sym, size, big, sizeof big, (enum demangle_style)style);
		if (r == RUST_DEMANGLE_TOO_BIG || r < RUST_DEMANGLE_TOO_BIG)
			abort(); /* the big buffer is always enough */
		if (r >= 0 && strlen(big) != (size_t)r && !memchr(sym, '\0', size))
			abort();
		int s = demangle_rust_n(sym, size, small, sizeof small, (enum demangle_style)style);
		if ((r < 0) != (s == RUST_DEMANGLE_NOT_RUST))
			abort();
		if (s == RUST_DEMANGLE_TOO_BIG &&
		    (r < (int)sizeof small || memcmp(small, big, sizeof small - 1) != 0 ||
		     small[sizeof small - 1] != '\0'))
			abort();
		if (s >= 0 && (s != r || memcmp(small, big, (size_t)s + 1) != 0))
			abort();
	}
	if (demangle_is_rust(sym, size) &&
	    demangle_rust_n(sym, size, small, sizeof small, DEMANGLE_FULL) == RUST_DEMANGLE_NOT_RUST)
		abort();
	return 0;
}
