/* demangle_bench.c — in-process throughput of demangle_rust() over a symbol
 * list (one per line): symbols/s, best of 5 passes. Built by bench/demangle.sh. */
#include "symbols/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	size_t n = 0, cap = 1024;
	char **syms = malloc(cap * sizeof *syms);
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (n == cap)
			syms = realloc(syms, (cap *= 2) * sizeof *syms);
		syms[n++] = strdup(line);
	}
	static char out[1 << 16];
	for (int style = DEMANGLE_FULL; style <= DEMANGLE_NO_HASH; style++) {
		double best = 1e9;
		size_t bytes = 0;
		for (int pass = 0; pass < 5; pass++) {
			double t0 = now();
			bytes = 0;
			for (size_t i = 0; i < n; i++) {
				int r = demangle_rust(syms[i], out, sizeof out, (enum demangle_style)style);
				bytes += r > 0 ? (size_t)r : 0;
			}
			double dt = now() - t0;
			if (dt < best)
				best = dt;
		}
		printf("library %-8s %zu symbols in %.3f s: %.2f M symbols/s (%zu output bytes)\n",
		       style == DEMANGLE_FULL ? "full" : "no-hash", n, best, (double)n / best / 1e6, bytes);
	}
	for (size_t i = 0; i < n; i++)
		free(syms[i]);
	free(syms);
	free(line);
	return 0;
}
