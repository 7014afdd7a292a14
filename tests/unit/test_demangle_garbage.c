/* test_demangle_garbage.c — hostile input: thousands of deterministic
 * truncations, byte flips, insertions and random strings built from real
 * symbols. The demangler must never crash (CI runs this under ASan/UBSan and
 * valgrind), must keep its output contract, and must say "not Rust" for
 * anything without a Rust prefix or with non-ASCII bytes.
 */
#include "symbols/demangle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static const char *seeds[] = {
	"_ZN4core3fmt9Formatter3pad17h0123456789abcdefE",
	"_ZN151_$LT$alloc..boxed..Box$LT$alloc..boxed..FnBox$LT$A$C$$u20$Output$u3d$R$GT$$u20$$u2b$$u20$$u27$a$GT$$u20$as$u20$core..ops..function..FnOnce$LT$A$GT$$GT$9call_once17h69e8f44b3723e1caE",
	"_ZN11utf8_idents157_$u10e1$$u10d0$$u10ed$$u10db$$u10d4$$u10da$$u10d0$$u10d3$_$u10d2$$u10d4$$u10db$$u10e0$$u10d8$$u10d4$$u10da$$u10d8$_$u10e1$$u10d0$$u10d3$$u10d8$$u10da$$u10d8$17h21634fd5714000aaE",
	"_RNCINkXs25_NgCsbmNqQUJIY6D_4core5sliceINyB9_4IterhENuNgNoBb_4iter8iterator8Iterator9rpositionNCNgNpB9_6memchr7memrchrs_0E0Bb_",
	"_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1iopQbuBiw2_3std",
	"_RNqCs4fqI2P2rA04_11utf8_identsu30____7hkackfecea1cbdathfdh9hlq6y",
	"_RIC0KVNtC3foo3BarS1sRe616263_2chc78_5sliceRAh1_h2_h3_EEE",
	"_RIC0KTRe616263_c78_RAh1_h2_h3_EEE",
	"_RMC0TTTTTTpB8_EB7_EB6_EB5_EB4_EB3_E",
	"_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG_INtNtNtB4_3ops8function2FnTRL0_eEEp6OutputjEL_EECsgEFq9VScRRZ_16demangle_fixture.llvm.9390794418045369328",
	"_RMC0FG0_UKCFRL0_hEu",
	"_RIC0KcE2_Ke090a_KRRRe_KQAEKb1_Kanb_Koff00ff00ff00ff00ff_E",
	"_RMC0WmORm1_m2_Rm5_m6_E",
	"_RNvB_1a",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char alphabet[] = "_RZNEBIKLMCXYTSAFDGPOQUWpsvu0123456789abcdefhjmnoqtxyz$.";

static long checked, not_rust, too_big, demangled;

static void check_one(const char *sym, size_t len)
{
	static char big[RUST_DEMANGLE_MAX_SIZE + 8192];
	char small[32];
	for (int style = DEMANGLE_FULL; style <= DEMANGLE_NO_HASH; style++) {
		int r = demangle_rust_n(sym, len, big, sizeof big, (enum demangle_style)style);
		int s = demangle_rust_n(sym, len, small, (size_t)(rng() % sizeof small) + 1,
					(enum demangle_style)style);
		checked++;
		bool bad = r == RUST_DEMANGLE_TOO_BIG || r < RUST_DEMANGLE_TOO_BIG ||
			   (r < 0) != (s == RUST_DEMANGLE_NOT_RUST) ||
			   (r >= 0 && !memchr(sym, '\0', len) && strlen(big) != (size_t)r);
		bool rust_prefix = (len >= 2 && sym[0] == '_' && (sym[1] == 'R' || sym[1] == 'Z')) ||
				   (len >= 1 && (sym[0] == 'R' || sym[0] == 'Z')) ||
				   (len >= 3 && sym[0] == '_' && sym[1] == '_');
		if (!rust_prefix && r >= 0)
			bad = true;
		/* Non-ASCII is never Rust (a stripped .llvm. suffix is hex). */
		for (size_t i = 0; i < len && r >= 0; i++)
			if ((unsigned char)sym[i] >= 0x80)
				bad = true;
		if (bad && ++test_failures <= 5)
			fprintf(stderr, "FAIL contract on input (len %zu): %.*s -> %d/%d\n",
				len, (int)len, sym, r, s);
		if (r < 0)
			not_rust++;
		else
			demangled++;
		if (s == RUST_DEMANGLE_TOO_BIG)
			too_big++;
	}
}

int main(void)
{
	char buf[1024];
	size_t nseeds = sizeof seeds / sizeof seeds[0];

	/* Every truncation of every seed. */
	for (size_t s = 0; s < nseeds; s++)
		for (size_t len = 0; len <= strlen(seeds[s]); len++)
			check_one(seeds[s], len);

	/* Mutations: flips, insertions, deletions, splices, high bytes. */
	for (int i = 0; i < 6000; i++) {
		const char *seed = seeds[rng() % nseeds];
		size_t len = strlen(seed);
		memcpy(buf, seed, len);
		int edits = 1 + (int)(rng() % 4);
		for (int e = 0; e < edits; e++) {
			size_t pos = len ? rng() % len : 0;
			switch (rng() % 5) {
			case 0: buf[pos] = alphabet[rng() % (sizeof alphabet - 1)]; break;
			case 1:
				if (len + 1 < sizeof buf) {
					memmove(buf + pos + 1, buf + pos, len - pos);
					buf[pos] = alphabet[rng() % (sizeof alphabet - 1)];
					len++;
				}
				break;
			case 2:
				if (len > 0) {
					memmove(buf + pos, buf + pos + 1, len - pos - 1);
					len--;
				}
				break;
			case 3: {
				const char *other = seeds[rng() % nseeds];
				size_t olen = strlen(other), from = rng() % olen, n = rng() % 40;
				if (from + n > olen)
					n = olen - from;
				if (pos + n < sizeof buf) {
					memcpy(buf + pos, other + from, n);
					if (pos + n > len)
						len = pos + n;
				}
				break;
			}
			default: buf[pos] = (char)(0x80 | (rng() & 0x7f)); break;
			}
		}
		check_one(buf, len);
	}

	/* Random strings over the mangling alphabet, with and without prefix. */
	for (int i = 0; i < 4000; i++) {
		size_t len = (size_t)(rng() % 200);
		for (size_t k = 0; k < len; k++)
			buf[k] = alphabet[rng() % (sizeof alphabet - 1)];
		if (i % 2 && len >= 2)
			memcpy(buf, i % 4 == 1 ? "_R" : "_ZN", len >= 3 ? (i % 4 == 1 ? 2 : 3) : 2);
		check_one(buf, len);
	}

	/* The filter over garbage text must copy non-symbols through. */
	for (int i = 0; i < 500; i++) {
		size_t len = (size_t)(rng() % 300);
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)(rng() % 2 ? alphabet[rng() % (sizeof alphabet - 1)] : ' ' + (int)(rng() % 90));
		buf[len] = '\0';
		char *t = demangle_text(buf, i % 2);
		if (!t) {
			test_failures++;
			continue;
		}
		free(t);
	}

	printf("garbage: %ld runs: %ld not Rust, %ld demangled, %ld truncated\n",
	       checked, not_rust, demangled, too_big);
	if (not_rust < checked / 2 || demangled < 100 || too_big < 10) {
		fprintf(stderr, "FAIL the mutations did not exercise all outcomes\n");
		test_failures++;
	}
	return test_exit_code();
}
