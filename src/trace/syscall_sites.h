/* syscall_sites.h — where the target's code makes a given system call
 * itself, with no wrapper function of its own (docs/tracing.md, "System
 * calls made inline").
 *
 * glibc makes many of its calls inline: pthread_create blocks and restores
 * signals with `mov $0xe,%eax` (rt_sigprocmask) and a `syscall` a few
 * instructions on, its locks wait with `mov $0xca,%eax` (futex). A site is
 * such a `mov $N,%eax` (5 bytes: an entry counter's jump fits it exactly)
 * from which the code runs straight on into a `syscall`: no instruction in
 * between transfers control or touches rax, and no direct branch of the
 * function enters between the two. Every run of the `mov` then makes call
 * N once, so the calls made there are counted exactly by counting the
 * `mov` (entry_counter_plan_at).
 *
 * Found by reading each function's bytes (the modules' function symbols,
 * libc6-dbg's for glibc's static functions; /proc/PID/mem) for `b8 imm32`
 * with a wanted number and a `0f 05` within 24 bytes, then checked
 * through gdb's disassembly of the function from its entry, so that the
 * bytes are the instructions they look like. Not found: a number set
 * from a register (syscall(), glibc's cancellable paths), set by another
 * instruction (`xor %eax,%eax` for read), or in code with no symbol.
 *
 * Functions return 0 (or a count) on success, -1 with e. */
#ifndef XGDBPROF_SYSCALL_SITES_H
#define XGDBPROF_SYSCALL_SITES_H

#include "events/event.h"
#include "session/session.h"
#include "symbols/symbolize.h"
#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct syscall_site {
	uint64_t insn;              /* the `mov $N,%eax` */
	uint64_t syscall_insn;      /* the `syscall` it runs on into */
	uint64_t function, function_size;
	char *function_name;        /* malloc'd */
	int nr;
};

struct syscall_sites {
	struct syscall_site *v;
	size_t n, cap;
	/* candidates the disassembly did not confirm, and the first one's why */
	size_t rejected;
	char rejected_why[200];
};

/* Which system call numbers a probe's spec names: a name (an error if
 * x86-64 Linux has none such) or a /regex/ over the names. *wanted is
 * malloc'd, indexed by number, *n long. 0, or -1 with e. */
int syscall_sites_wanted(enum probe_spec_kind kind, const char *spec, bool **wanted, size_t *n, struct xerr *e);

/* Appends to out every site of a wanted number in the functions of the
 * target's modules (not the vdso), with the target running or stopped.
 * 0, or -1 with e (gdb failed; out holds what was found). */
int syscall_sites_find(struct session *s, struct symbolizer *sym, const bool *wanted, size_t nwanted,
		       struct syscall_sites *out, struct xerr *e);

void syscall_sites_release(struct syscall_sites *sites);

#endif
