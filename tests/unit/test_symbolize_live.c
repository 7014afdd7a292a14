/* test_symbolize_live — symbolizes PCs of a running fixture (inline_c spin):
 * the PIE executable at its load bias, libc (with its separate debug file
 * when libc6-dbg is installed), the vdso, and a refresh. Expected addresses
 * come from /proc/PID/maps and the ELF files' own symbols and program
 * headers, read independently of the live symbolizer. */
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "check.h"



struct mapping {
	uint64_t start;
	char path[PATH_MAX];
};

/* Lowest mapping at file offset 0 whose path contains `needle`. */
static bool find_mapping(pid_t pid, const char *needle, struct mapping *out)
{
	char maps[64], line[PATH_MAX + 128];
	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "r");
	if (!f)
		return false;
	bool found = false;
	while (fgets(line, sizeof line, f)) {
		uint64_t start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
			   &start, &end, perms, &off, &pos) < 4 || pos == 0)
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = '\0';
		if (!strstr(path, needle))
			continue;
		if (off == 0 || path[0] == '[') {
			out->start = start;
			snprintf(out->path, sizeof out->path, "%s", path);
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/* The p_vaddr of the first PT_LOAD, rounded down to its alignment. */
static uint64_t first_load_vaddr(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	uint64_t vaddr = UINT64_MAX;
	size_t n = 0;
	if (elf && elf_getphdrnum(elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				vaddr = ph.p_vaddr & ~(ph.p_align ? ph.p_align - 1 : 0);
				break;
			}
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return vaddr;
}

struct find_fn {
	const char *name;
	uint64_t addr;
};

static int find_fn_cb(const struct symbolizer_function *f, void *arg)
{
	struct find_fn *q = arg;
	if (strcmp(f->name, q->name) == 0) {
		q->addr = f->addr;
		return 1;
	}
	return 0;
}

static uint64_t file_function(struct symbolizer *sym, const char *name)
{
	struct find_fn q = {.name = name};
	struct xerr err;
	CHECK(symbolizer_foreach_function(sym, NULL, find_fn_cb, &q, &err) == 1);
	return q.addr;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(void)
{
	const char *fixtures = getenv("FIXTURES");
	if (!fixtures) {
		fprintf(stderr, "FIXTURES must be set (make check does)\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	char bin[PATH_MAX], real[PATH_MAX];
	snprintf(bin, sizeof bin, "%s/inline_c", fixtures);
	if (!realpath(bin, real)) {
		perror(bin);
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execl(real, real, "spin", (char *)NULL);
		_exit(127);
	}
	/* Wait until exec is done and libc is mapped. */
	struct mapping exe = {0}, libc = {0}, vdso = {0};
	for (int i = 0; i < 500; i++) {
		if (find_mapping(pid, real, &exe) && find_mapping(pid, "/libc.so", &libc))
			break;
		sleep_ms(10);
	}
	CHECK(exe.start != 0 && libc.start != 0);
	bool have_vdso = find_mapping(pid, "[vdso]", &vdso);

	struct xerr err;
	struct symbolizer *live = symbolizer_new_pid(pid, &err);
	if (!live) {
		fprintf(stderr, "%s\n", err.msg);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	struct frame f[32], g[32];
	size_t n, m;

	/* The PIE executable. */
	struct symbolizer *file = symbolizer_new_file(real, &err);
	CHECK(file != NULL);
	uint64_t bias = exe.start - first_load_vaddr(real);
	uint64_t hot = file_function(file, "hot_function");
	CHECK(hot != 0);
	CHECK(symbolizer_lookup(live, hot + bias, false, f, 32, &n, &err) == 0);
	CHECK(n >= 1 && f[n - 1].function && strcmp(f[n - 1].function, "hot_function") == 0);
	CHECK(f[0].source == FRAME_SOURCE_DWARF && ends_with(f[0].file, "/inline_c.c"));
	CHECK(f[0].module && strcmp(f[0].module, real) == 0);
	CHECK(f[0].pc == hot + bias);
	/* Same chain as the file symbolizer, every byte of hot_function. */
	for (uint64_t a = hot; a < hot + 64; a++) {
		CHECK(symbolizer_lookup(live, a + bias, false, f, 32, &n, &err) == 0);
		CHECK(symbolizer_lookup(file, a, false, g, 32, &m, &err) == 0);
		CHECK(n == m);
		for (size_t i = 0; i < n && i < m; i++)
			CHECK(strcmp(f[i].function, g[i].function) == 0 && f[i].line == g[i].line &&
			      strcmp(f[i].file, g[i].file) == 0);
	}
	struct symbolizer_module lm, fm;
	CHECK(symbolizer_module_info(live, hot + bias, &lm, &err) == 1);
	CHECK(symbolizer_module_info(file, hot, &fm, &err) == 1);
	CHECK(lm.bias == bias && lm.start <= hot + bias && hot + bias < lm.end);
	CHECK(strcmp(lm.build_id, fm.build_id) == 0 && strlen(lm.build_id) == 40);

	/* libc: getpid, through its debug file when one is installed. */
	struct symbolizer *lib = symbolizer_new_file(libc.path, &err);
	CHECK(lib != NULL);
	if (lib) {
		uint64_t getpid_addr = file_function(lib, "getpid");
		uint64_t lbias = libc.start - first_load_vaddr(libc.path);
		CHECK(getpid_addr != 0);
		CHECK(symbolizer_lookup(lib, getpid_addr, false, g, 32, &m, &err) == 0);
		CHECK(symbolizer_lookup(live, getpid_addr + lbias, false, f, 32, &n, &err) == 0);
		CHECK(n == m && n >= 1 && f[n - 1].function && g[m - 1].function &&
		      strcmp(f[n - 1].function, g[m - 1].function) == 0);
		CHECK(f[0].module && strcmp(f[0].module, libc.path) == 0);
		struct symbolizer_module li;
		CHECK(symbolizer_module_info(live, getpid_addr + lbias, &li, &err) == 1);
		CHECK(li.bias == lbias);
		char dbg[PATH_MAX];
		snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 li.build_id, li.build_id + 2);
		struct stat st;
		if (strlen(li.build_id) > 2 && stat(dbg, &st) == 0) {
			printf("libc debug file: %s\n", dbg);
			CHECK(f[0].source == FRAME_SOURCE_DEBUGLINK && f[0].file != NULL);
			CHECK(li.debug_file != NULL);
		} else {
			printf("no libc debug file at %s: symbol tables only\n", dbg);
			CHECK(f[0].source == FRAME_SOURCE_SYMTAB || f[0].source == FRAME_SOURCE_DYNSYM);
		}
		symbolizer_free(lib);
	}

	/* The vdso is a module too. */
	if (have_vdso) {
		struct symbolizer_module vm;
		CHECK(symbolizer_module_info(live, vdso.start + 0x10, &vm, &err) == 1);
		printf("vdso module: %s\n", vm.path);
	}

	/* A refresh keeps answers (and interned strings) valid. */
	const char *before = NULL;
	CHECK(symbolizer_lookup(live, hot + bias, false, f, 32, &n, &err) == 0);
	before = f[n - 1].function;
	CHECK(symbolizer_refresh(live, &err) == 0);
	CHECK(symbolizer_lookup(live, hot + bias, false, f, 32, &n, &err) == 0);
	CHECK(n >= 1 && strcmp(f[n - 1].function, "hot_function") == 0 &&
	      strcmp(before, "hot_function") == 0);
	CHECK(symbolizer_dwfl(live) != NULL);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* A refresh of a dead process fails with a message, no crash. */
	CHECK(symbolizer_refresh(live, &err) == -1 && strstr(err.msg, "/proc/") != NULL);
	symbolizer_free(live);
	symbolizer_free(file);

	struct symbolizer *none = symbolizer_new_pid(pid, &err);
	CHECK(none == NULL && strstr(err.msg, "/proc/") != NULL);
	if (test_failures) {
		fprintf(stderr, "%d failure(s)\n", test_failures);
		return 1;
	}
	printf("symbolize live: all checks passed\n");
	return 0;
}
