/* syscall_sites.c — the `mov $N,%eax ... syscall` sites of the target's
 * code (syscall_sites.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "trace/syscall_sites.h"
#include "arch/insn.h"
#include "arch/syscalls.h"
#include "procfs/proc.h"
#include "session/probes.h"
#include "util/array.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOV_EAX_IMM32 0xb8
#define SYSCALL_REACH 24            /* bytes from the mov's end to the syscall, at most */
#define MAX_BETWEEN 6               /* instructions between them, at most */
#define MAX_FUNCTION (256u * 1024u) /* longer functions are not read */

int syscall_sites_wanted(enum probe_spec_kind kind, const char *spec, bool **wanted, size_t *n, struct xerr *e)
{
	size_t count = 0;
	const struct arch_syscall *table = arch_syscalls(&count);
	size_t max = 0;
	for (size_t i = 0; i < count; i++)
		if ((size_t)table[i].nr + 1 > max)
			max = (size_t)table[i].nr + 1;
	*wanted = calloc(max ? max : 1, sizeof **wanted);
	*n = max;
	if (!*wanted)
		return xerr_oom(e);
	if (kind != PROBE_SPEC_REGEX) {
		int nr = spec ? arch_syscall_number(spec) : -1;
		if (nr < 0 || (size_t)nr >= max) {
			free(*wanted);
			*wanted = NULL;
			return xerr_set(e, "no system call named '%s' on x86-64 Linux", spec ? spec : "");
		}
		(*wanted)[nr] = true;
		return 0;
	}
	int code;
	PCRE2_SIZE offset;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)spec, PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
	if (!re) {
		free(*wanted);
		*wanted = NULL;
		return xerr_set(e, "/%s/ is not a regular expression", spec);
	}
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	for (size_t i = 0; md && i < count; i++)
		if (pcre2_match(re, (PCRE2_SPTR)table[i].name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0)
			(*wanted)[table[i].nr] = true;
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return 0;
}

#define MAX_CANDIDATES 32          /* in one function; more are said, not taken */

/* A function whose bytes hold a candidate, and the candidates' addresses. */
struct candidate {
	uint64_t function, size;
	char *name;
	uint64_t at[MAX_CANDIDATES];
	int nr[MAX_CANDIDATES];
	unsigned n;
	bool more;                 /* past MAX_CANDIDATES */
};

struct scan {
	int mem_fd;
	const bool *wanted;
	size_t nwanted;
	uint64_t last_function;
	uint8_t *buf;
	struct candidate *v;
	size_t n, cap;
	struct xerr *e;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int scan_function(const struct symbolizer_function *f, void *arg)
{
	struct scan *sc = arg;
	/* aliases of one function come one after the other */
	if (!f->size || f->size > MAX_FUNCTION || f->addr == sc->last_function || (f->module && f->module[0] == '['))
		return 0;
	sc->last_function = f->addr;
	ssize_t got = pread(sc->mem_fd, sc->buf, (size_t)f->size, (off_t)f->addr);
	if (got < 7)
		return 0;
	struct candidate c = { .function = f->addr, .size = f->size };
	for (ssize_t i = 0; i + 7 <= got && !c.more; i++) {
		if (sc->buf[i] != MOV_EAX_IMM32)
			continue;
		uint32_t nr = le32(sc->buf + i + 1);
		if (nr >= sc->nwanted || !sc->wanted[nr])
			continue;
		for (ssize_t j = i + 5; j + 2 <= got && j <= i + 5 + SYSCALL_REACH; j++)
			if (sc->buf[j] == 0x0f && sc->buf[j + 1] == 0x05) {
				if (c.n == MAX_CANDIDATES) {
					c.more = true;
					break;
				}
				c.at[c.n] = f->addr + (uint64_t)i;
				c.nr[c.n++] = (int)nr;
				break;
			}
	}
	if (!c.n)
		return 0;
	c.name = strdup(f->name ? f->name : "?");
	if (!c.name || ARRAY_PUSH(sc->v, sc->n, sc->cap, c) < 0) {
		free(c.name);
		xerr_oom(sc->e);
		return -1;
	}
	return 0;
}

/* Whether an instruction between the mov and the syscall may change rax
 * or leave the straight line: it names rax in any width, or writes it
 * without naming it. */
static bool spoils_number(const char *text)
{
	static const char *const names[] = { "%rax", "%eax", "%ax", "%al", "%ah" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strstr(text, names[i]))
			return true;
	/* by prefix: mull, divq, cltq, lodsb, cmpxchgl, xchg ... (SSE's mulsd
	 * and divps too: a site left out, nothing worse) */
	static const char *const implicit[] = { "cmpxchg", "xchg", "mul", "imul", "div", "idiv", "cltq", "cwtl",
						"cbtw", "lods", "scas", "rdtsc", "cpuid", "lahf", "xlat", "xgetbv",
						"rdpkru", "syscall", "sysenter" };
	for (size_t i = 0; i < sizeof implicit / sizeof implicit[0]; i++)
		if (!strncmp(text, implicit[i], strlen(implicit[i])))
			return true;
	/* in, inb, inw, inl (not inc); int, int3, into */
	size_t len = strcspn(text, " \t");
	if (!strncmp(text, "in", 2) && (len == 2 || (len == 3 && strchr("bwlt", text[2])) || !strncmp(text, "into", 4)))
		return true;
	return arch_insn_transfers_control(text);
}

static void reject(struct syscall_sites *out, uint64_t at, const char *function, const char *why)
{
	if (!out->rejected++)
		snprintf(out->rejected_why, sizeof out->rejected_why, "0x%" PRIx64 " in %.60s: %s", at, function, why);
}

/* Confirms c's candidates through gdb's disassembly of its function, read
 * once, whole: the instructions from the entry, and every branch. */
static int confirm(struct session *s, const struct candidate *c, struct syscall_sites *out, struct xerr *e)
{
	struct session_insn *insns;
	size_t n;
	if (session_disassemble_all(s, c->function, c->function + c->size, &insns, &n, e) < 0)
		return -1;
	if (c->more)
		reject(out, c->function, c->name, "more than 32 candidates in the function: those past them not read");
	for (unsigned k = 0; k < c->n; k++) {
		size_t i = 0;
		while (i < n && insns[i].addr < c->at[k])
			i++;
		char want[32];
		snprintf(want, sizeof want, "$0x%x,%%eax", c->nr[k]);
		if (i >= n || insns[i].addr != c->at[k] || strncmp(insns[i].text, "mov", 3) != 0 ||
		    !strstr(insns[i].text, want)) {
			reject(out, c->at[k], c->name, "its bytes are not that instruction");
			continue;
		}
		uint64_t syscall_at = 0;
		const char *why = NULL;
		for (size_t j = i + 1; j < n && j <= i + 1 + MAX_BETWEEN && !syscall_at && !why; j++) {
			if (!strncmp(insns[j].text, "syscall", 7))
				syscall_at = insns[j].addr;
			else if (spoils_number(insns[j].text))
				why = "an instruction before the syscall may change the number or branch";
		}
		if (!syscall_at) {
			reject(out, c->at[k], c->name, why ? why : "no syscall follows it");
			continue;
		}
		if (session_insns_branch_into(insns, n, c->at[k], syscall_at + 1, NULL)) {
			reject(out, c->at[k], c->name, "a branch enters between the number and the syscall");
			continue;
		}
		struct syscall_site site = { .insn = c->at[k], .syscall_insn = syscall_at, .function = c->function,
					     .function_size = c->size, .function_name = strdup(c->name), .nr = c->nr[k] };
		if (!site.function_name || ARRAY_PUSH(out->v, out->n, out->cap, site) < 0) {
			free(site.function_name);
			free(insns);
			return xerr_oom(e);
		}
	}
	free(insns);
	return 0;
}

int syscall_sites_find(struct session *s, struct symbolizer *sym, const bool *wanted, size_t nwanted,
		       struct syscall_sites *out, struct xerr *e)
{
	struct scan sc = { .wanted = wanted, .nwanted = nwanted, .e = e };
	sc.mem_fd = proc_open_mem(session_pid(s), O_RDONLY);
	if (sc.mem_fd < 0)
		return xerr_set(e, "cannot read process %d's memory", (int)session_pid(s));
	sc.buf = malloc(MAX_FUNCTION);
	int rc = sc.buf ? symbolizer_foreach_function(sym, NULL, scan_function, &sc, e) : xerr_oom(e);
	free(sc.buf);
	close(sc.mem_fd);
	for (size_t i = 0; rc >= 0 && i < sc.n; i++)
		if (confirm(s, &sc.v[i], out, e) < 0)
			rc = -1;
	for (size_t i = 0; i < sc.n; i++)
		free(sc.v[i].name);
	free(sc.v);
	return rc < 0 ? -1 : 0;
}

void syscall_sites_release(struct syscall_sites *sites)
{
	for (size_t i = 0; i < sites->n; i++)
		free(sites->v[i].function_name);
	free(sites->v);
	memset(sites, 0, sizeof *sites);
}
