/* symbolize_bench — timing driver for bench/symbolize.sh.
 *
 *   symbolize_bench cold BIN     < pcs   fresh symbolizer, each PC once
 *   symbolize_bench cached BIN N < pcs   warm symbolizer, N passes over the PCs
 *   symbolize_bench getscopes BIN MAX < pcs
 *                                        plain libdw (dwarf_addrdie +
 *                                        dwarf_getscopes) on up to MAX PCs
 *
 * Each prints one line: "mode pcs seconds pcs_per_second extra".
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols/symbolize.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t *read_pcs(size_t *n)
{
	size_t cap = 4096;
	uint64_t *pcs = malloc(cap * sizeof *pcs);
	char buf[128];
	*n = 0;
	while (pcs && fgets(buf, sizeof buf, stdin)) {
		char *end;
		uint64_t pc = strtoull(buf, &end, 16);
		if (end == buf)
			continue;
		if (*n == cap) {
			cap *= 2;
			uint64_t *p = realloc(pcs, cap * sizeof *p);
			if (!p)
				exit(1);
			pcs = p;
		}
		pcs[(*n)++] = pc;
	}
	return pcs;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s cold|cached|getscopes BIN [N]\n", argv[0]);
		return 2;
	}
	size_t npcs;
	uint64_t *pcs = read_pcs(&npcs);
	if (!pcs || npcs == 0)
		return 1;
	struct frame f[64];
	size_t n, frames = 0;
	struct xerr err;
	if (strcmp(argv[1], "cold") == 0) {
		double t0 = now();
		struct symbolizer *sym = symbolizer_new_file(argv[2], &err);
		if (!sym) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		for (size_t i = 0; i < npcs; i++) {
			if (symbolizer_lookup(sym, pcs[i], false, f, 64, &n, &err) < 0)
				return 1;
			frames += n;
		}
		double t = now() - t0;
		struct symbolizer_stats st;
		symbolizer_get_stats(sym, &st);
		printf("cold %zu %.6f %.0f frames=%zu cus_built=%zu index_entries=%zu index_build_ms=%.1f\n",
		       npcs, t, npcs / t, frames, st.cus_built, st.index_entries,
		       st.index_build_seconds * 1e3);
		symbolizer_free(sym);
	} else if (strcmp(argv[1], "cached") == 0) {
		int passes = argc > 3 ? atoi(argv[3]) : 20;
		struct symbolizer *sym = symbolizer_new_file(argv[2], &err);
		if (!sym)
			return 1;
		for (size_t i = 0; i < npcs; i++)
			symbolizer_lookup(sym, pcs[i], false, f, 64, &n, &err);
		double t0 = now();
		for (int p = 0; p < passes; p++)
			for (size_t i = 0; i < npcs; i++) {
				symbolizer_lookup(sym, pcs[i], false, f, 64, &n, &err);
				frames += n;
			}
		double t = now() - t0;
		printf("cached %zu %.6f %.0f frames=%zu\n", npcs * passes, t, npcs * passes / t, frames);
		symbolizer_free(sym);
	} else if (strcmp(argv[1], "getscopes") == 0) {
		size_t max = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000;
		Dwfl_Callbacks cb = {.find_debuginfo = dwfl_standard_find_debuginfo,
				     .section_address = dwfl_offline_section_address};
		double t0 = now();
		Dwfl *dwfl = dwfl_begin(&cb);
		dwfl_report_begin(dwfl);
		Dwfl_Module *mod = dwfl_report_elf(dwfl, argv[2], argv[2], -1, 0, true);
		dwfl_report_end(dwfl, NULL, NULL);
		Dwarf_Addr bias;
		Dwarf *dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
		if (!dw)
			return 1;
		size_t done = 0, with_inline = 0, with_func = 0;
		size_t step = npcs > max ? npcs / max : 1;
		for (size_t i = 0; i < npcs && done < max; i += step, done++) {
			Dwarf_Die cu, *scopes = NULL;
			if (!dwarf_addrdie(dw, pcs[i] - bias, &cu))
				continue;
			int ns = dwarf_getscopes(&cu, pcs[i] - bias, &scopes);
			bool inl = false, fn = false;
			for (int k = 0; k < ns; k++) {
				int tag = dwarf_tag(&scopes[k]);
				inl |= tag == DW_TAG_inlined_subroutine;
				fn |= tag == DW_TAG_subprogram;
			}
			with_inline += inl;
			with_func += fn;
			free(scopes);
		}
		double t = now() - t0;
		printf("getscopes %zu %.6f %.0f with_function=%zu with_inline=%zu\n",
		       done, t, done / t, with_func, with_inline);
		dwfl_end(dwfl);
	} else {
		return 2;
	}
	free(pcs);
	return 0;
}
