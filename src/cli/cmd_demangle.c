/* cmd_demangle.c — `xgdbprof demangle`: a c++filt/rustfilt-style filter.
 *
 * With SYMBOLs, prints each demangled on its own line; without, copies stdin
 * to stdout line by line with every mangled symbol replaced (Rust legacy and
 * v0 by our demangler, C++ by libstdc++). Memory stays bounded by the longest
 * line, so it streams arbitrarily large input.
 */
#include "config.h"
#include "cli/commands.h"
#include "symbols/demangle.h"
#include "util/error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char demangle_usage[] =
	"usage: xgdbprof demangle [--no-hash] [SYMBOL...]\n"
	"\n"
	"Demangle Rust (legacy _ZN...17h<hash>E and v0 _R...) and C++ (_Z...)\n"
	"symbol names, exactly as rustc-demangle / the system C++ demangler do.\n"
	"With SYMBOLs, print each one demangled on its own line; without, read\n"
	"stdin and write it to stdout with every mangled symbol replaced.\n"
	"\n"
	"  --no-hash   drop Rust hashes (::h0123456789abcdef) and crate\n"
	"              disambiguators ([1234abcd]), like rustc-demangle's {:#}\n"
	"  -h, --help  show this help\n";

static int demangle_stream(FILE *in, FILE *out, bool with_hash)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = XGP_EXIT_OK;
	while ((n = getline(&line, &cap, in)) > 0) {
		if (demangle_text_write(out, line, (size_t)n, with_hash) != 0) {
			fprintf(stderr, "xgdbprof demangle: write error: %s\n", strerror(errno));
			rc = XGP_EXIT_FAILURE;
			break;
		}
	}
	if (rc == XGP_EXIT_OK && ferror(in)) {
		fprintf(stderr, "xgdbprof demangle: read error: %s\n", strerror(errno));
		rc = XGP_EXIT_FAILURE;
	}
	free(line);
	return rc;
}

int cmd_demangle(int argc, char **argv)
{
	bool with_hash = true;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "--no-hash") == 0) {
			with_hash = false;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(demangle_usage, stdout);
			return XGP_EXIT_OK;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "xgdbprof demangle: unknown option '%s' (see xgdbprof demangle --help)\n", a);
			return XGP_EXIT_USAGE;
		} else {
			break;
		}
	}

	int rc;
	if (i == argc) {
		rc = demangle_stream(stdin, stdout, with_hash);
	} else {
		rc = XGP_EXIT_OK;
		for (; i < argc; i++) {
			char *d = demangle_symbol(argv[i], with_hash);
			if (!d) {
				fprintf(stderr, "xgdbprof demangle: out of memory\n");
				return XGP_EXIT_FAILURE;
			}
			puts(d);
			free(d);
		}
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "xgdbprof demangle: write error: %s\n", strerror(errno));
		return XGP_EXIT_FAILURE;
	}
	return rc;
}
