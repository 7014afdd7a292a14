/* tracer.c — breakpoint/catchpoint probes over gdb/MI (see tracer.h). */
#include "trace/tracer.h"
#include "session/session_mi.h"
#include "mi_conn.h"
#include "mi_record.h"
#include "mi_value.h"
#include "procfs/proc.h"
#include "session/signals.h"
#include "util/array.h"
#include "util/stats.h"
#include "events/stop_budget.h"
#include "stacks/stop_clock.h"
#include "trace/tracer_resolve.h"
#include "trace/tracer_syscalls.h"
#include "stacks/unwind.h"
#include "util/clock.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum bp_kind { BP_ENTRY, BP_RETURN, BP_PANIC_HOOK, BP_RUST_PANIC, BP_SYSCALL };

struct probe_list {
	int *v;
	size_t n, cap;
};

struct site {
	uint64_t addr;
	char *name;
	bool inlined;
	struct probe_list entry_probes, return_probes;
	int bp;                       /* gdb number */
	uint64_t next_insn;           /* the instruction after addr, for calibration hits; 0 not looked up,
				       * UINT64_MAX none usable */
	/* The first two instructions at addr, decoded once (decode_site) for
	 * both the arming (does gdb step the first with a scratch register?)
	 * and the calibration (where is the next, and is it RIP-relative?). */
	bool decoded, first_rip, first_transfers, next_rip;
	uint64_t next_addr;           /* 0: not known */
};

struct return_site {
	uint64_t addr;
	int bp;
};

struct pending {
	pid_t tid;
	uint64_t sp_after;            /* rsp once the callee returned: entry rsp + 8 */
	uint64_t t0_ns;               /* the resume after the entry stop */
	double stopped_at_t0_ns;      /* the tracer's stopped_ns then */
	size_t site;
};

struct thread_info {
	int gdb_id;
	pid_t tid;
	char name[64];
	uint64_t name_read_ns;        /* when name was last read from /proc */
	/* panic in flight: from panic_with_hook until reported */
	bool panic_pending;
	uint64_t payload_data, payload_vtable;
	char location[512];
};

enum duty { DUTY_ON, DUTY_DRAINING, DUTY_OFF };

enum { R_RIP, R_RSP, R_RBP, R_RBX, R_R12, R_R13, R_R14, R_R15, R_RAX, R_RDI, R_RSI, R_RDX, R_RCX,
       R_R8, R_R9, NREGS };
static const char *const register_names[NREGS] = {
	"rip", "rsp", "rbp", "rbx", "r12", "r13", "r14", "r15", "rax", "rdi", "rsi", "rdx", "rcx",
	"r8", "r9",
};

struct tracer {
	struct session *s;
	struct symbolizer *sym;
	const struct event_sink *sink;
	bool sink_done;               /* the sink asked to end the run (exit() in a recipe) */
	const struct tracer_config *cfg;
	struct tracer_stats *st;
	pid_t pid;
	int mem_fd;
	uint64_t start_ns, tracer_start_ns;
	/* Arming stops the target (breakpoints, warming the unwinder) before
	 * anything is traced; under load that can take a few hundred ms. The
	 * budget runs from the first resume, and arming is reported apart: in
	 * the budget it would either be credit (elapsed without stops) or
	 * switch the probes off for seconds at the start. */
	uint64_t arm_stop_ns, budget_start_ns;
	struct site *sites;
	size_t nsites, sites_cap;
	struct return_site *returns;
	size_t nreturns, returns_cap;
	struct pending *pending;
	size_t npending, pending_cap;
	struct thread_info *threads;
	size_t nthreads;
	int *all_bps;                 /* every number we created, for the final delete */
	size_t nall, all_cap;
	int *duty_bps;                /* the ones the budget switches off */
	size_t nduty, duty_cap;
	int panic_hook_bp, rust_panic_bp;
	bool panic_old_abi;
	bool has_panic_probe, has_syscall_entry, has_syscall_return;
	struct probe_list panic_probes, syscall_entry_probes, syscall_return_probes;
	/* Per thread slot (by tid % 4096): the open system call's entry time
	 * and number, and whether our stop interrupted it and the kernel is
	 * restarting it. */
	uint64_t syscall_t0[4096];
	int16_t syscall_open_nr[4096];
	bool syscall_restarting[4096];
	int regnums[NREGS];
	struct unwinder *unwinder;
	/* the stack of the current event */
	struct frame *frames;
	size_t frames_cap;
	struct stack stack;
	/* arg() values of the current event */
	char **arg_strings;
	size_t narg_strings, arg_strings_cap;
	int event_gdb_id;
	pid_t event_tid;              /* the thread of the stop being handled, 0 if not ours */
	int event_bp;                 /* its breakpoint number, 0 for other stops */
	/* budget */
	enum duty duty;
	uint64_t duty_changed_ns, off_until_ns, covered_ns;
	/* An armed window ends at the first of its boundaries, every
	 * TRACER_WINDOW_CPU_NS of the target's CPU time, where the budget is
	 * overdrawn; never because a hit overdrew it (see
	 * budget_close_request). */
	uint64_t window_close_ns;
	bool close_requested;         /* interrupted to end the window: the next stop ends it */
	double stopped_ns;            /* the cost the budget holds: stopped + waiting for a CPU after */
	uint64_t duty_changes;        /* probes switched on, off or to draining: events' window numbers */
	/* The target's own clock (events' target_ns): wall time less the
	 * stops, each counted from the hitting thread's trap to our resume. */
	double frozen_ns;             /* the completed stops' share */
	uint64_t stop_start_ns;       /* the current stop's trap; 0 until an event asks */
	/* Non-stop: a stop holds only the thread that hit, so each thread's
	 * clock takes out its own stops (a wait or a hold is timed on one
	 * thread; the others' stops did not hold it), keyed by gdb's thread id */
	struct thread_frozen { int gdb_id; double ns; } *frozen_by_thread;
	size_t nfrozen_by_thread, frozen_by_thread_cap;
	struct stop_budget budget;
	/* gdb's own share of a hit (the -exec-continue round trip, stepping
	 * over the breakpoint, the trap, stopping every other thread, building
	 * the *stopped record) and the thread's wait for a CPU once resumed
	 * happen between our resume and the next stop report, where we cannot
	 * see them. They are measured from the hitting thread's scheduler
	 * clocks (stop_clock.h); a hit whose window cannot be measured exactly
	 * is counted at the median of the measured ones (at most its upper
	 * bound), or, with no measurement at all, at the median of the recent
	 * gaps between a resume and the next hit clamped to [0.05, 1.5] ms (for
	 * a hot function a gap is almost all gdb). */
	struct stop_clock clock;
	double gdb_hit_ns;            /* the current figure for a hit not measured */
	double gaps[32];
	size_t ngaps;
	uint64_t window_start_ns;     /* just before the last resume: the measured windows' start */
	uint64_t last_resume_ns;      /* once the last resume was acknowledged (elapsed's t0) */
	/* The target's CPU time (every thread, the ended ones too: the
	 * kernel's process CPU clock), split by whether the entry probes were
	 * on while it was spent. Read at each stop, when it stands still. */
	struct process_cpu {
		clockid_t clock;
		bool readable;
		uint64_t last_ns;
		double armed_ns, total_ns;
	} cpu;
	uint64_t fork_bytes_healed;   /* int3 copies removed from fork children by us */
	/* gdb's non-stop mode: a hit stops only the thread that hit, which is
	 * resumed alone; the budget switches probes with the target running.
	 * displaced_off: a breakpoint went on a RIP-relative instruction, so
	 * gdb steps over in place (session_displaced_stepping_off). */
	bool non_stop, displaced_off;
	/* Each hit's stop as the hitting thread saw it (gdb's part measured at
	 * the stop plus ours), for the median and p99 in the summary. */
	double last_hidden_ns;
	double *hit_stops;
	size_t nhit_stops, hit_stops_cap;
	/* The hit being handled: its *stopped frame's parameter list (names
	 * only: frame-arguments none) and whether its site is an inlined copy;
	 * valid while its record is. */
	const struct mi_value *event_frame_args;
	bool event_site_inlined;
	/* What a hit costs the hitting thread in CPU (docs/tracing.md,
	 * "Estimates"). Calibration hits put a one-shot breakpoint for the
	 * hitting thread on the instruction right after the probed entry: the
	 * thread's CPU between the two stops is ours alone (gdb's step over the
	 * breakpoint, the trap, the report). */
	struct hit_cpu {
		/* Per thread that hit (the first 64): its CPU time while the
		 * entry probes were on, read at its hits and at each switch of
		 * the probes, and the hits in it: what decides whether our cost
		 * hides the program's part. Other threads' CPU is left out: it
		 * runs on while a hitting thread is held (non-stop) or runs
		 * with it (all-stop), and made a hit look cheap. */
		struct hitter {
			pid_t tid;
			bool marked;
			uint64_t mark_ns, hits;
			double armed_ns;
			/* The thread's CPU from each window's opening to its first
			 * entry hit there (u_*), no stop of ours in it (docs/
			 * tracing.md, "Estimates"); windows it ran in past 0.1 ms
			 * without one, or whose first stop of it was another
			 * (censored); its CPU with the probes off. */
			bool in_window, hit_in_window, first_pending;
			uint64_t open_ns, off_mark_ns;
			bool off_marked;
			double pending_u_ns, u_sum, u_squares, off_ns;
			size_t n_u, censored;
		} hitters[64];
		size_t nhitters;
		double calibrations[TRACER_CALIBRATIONS];
		size_t ncalibrations;
		int pending_bp;           /* the calibration breakpoint in flight, 0 if none */
		pid_t pending_tid;
		uint64_t pending_run_ns;
		uint64_t handled_calibrations; /* stops at calibration breakpoints (not hits of a probe) */
	} hit_cpu;
	/* Each armed window's share of the process's armed CPU time and the
	 * entry hits in it: hits cluster in few windows, and the spread of
	 * the per-window counts, not a Poisson count, says how well the run's
	 * rate is known (docs/tracing.md, "Estimates"). */
	struct armed_window { double cpu_start_ns, cpu_ns; uint64_t entries_start, entries; bool open; } *windows;
	size_t nwindows, windows_cap;
};

static int list_push(int **v, size_t *n, size_t *cap, int x)
{
	return ARRAY_PUSH(*v, *n, *cap, x);
}

static int probe_list_add(struct probe_list *l, int probe)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == probe)
			return 0;
	return list_push(&l->v, &l->n, &l->cap, probe);
}

bool tracer_wanted(const struct probe_spec *probes, size_t nprobes)
{
	for (size_t i = 0; i < nprobes; i++)
		if (probe_kind_traced(probes[i].kind))
			return true;
	return false;
}

/* ---- memory ----------------------------------------------------------- */

static int read_mem(struct tracer *t, uint64_t addr, void *buf, size_t len)
{
	if (t->mem_fd < 0)
		return -1;
	return pread(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static uint64_t read_word(struct tracer *t, uint64_t addr, bool *ok)
{
	uint64_t w = 0;
	*ok = read_mem(t, addr, &w, sizeof w) == 0;
	return w;
}

/* ---- gdb breakpoints ------------------------------------------------------ */

/* Whether gdb, to step a thread over a breakpoint at addr in a copy of
 * the instruction, would borrow a scratch register: it does for a
 * RIP-relative operand, which its disassembler shows as "rip" (AT&T and
 * Intel syntax alike). Not known: assumed so. */
static ssize_t find_site(const struct tracer *t, uint64_t addr);

/* One -data-disassemble of a site's first 16 bytes: its first instruction
 * and the next. Not readable: the first assumed RIP-relative, no next. */
static void decode_site(struct tracer *t, struct site *site)
{
	if (site->decoded)
		return;
	site->decoded = true;
	site->first_rip = true;
	site->first_transfers = true;
	char from[32], to[32];
	snprintf(from, sizeof from, "0x%" PRIx64, site->addr);
	snprintf(to, sizeof to, "0x%" PRIx64, site->addr + 16);
	const char *args[] = { "-s", from, "-e", to, "--", "0", NULL };
	struct mi_record *res = NULL;
	struct xerr ignored;
	if (session_call(t->s, &res, &ignored, "-data-disassemble", args) < 0)
		return;
	const struct mi_value *insns = mi_value_get(res->results, "asm_insns");
	const char *first = mi_value_get_string(mi_value_at(insns, 0), "inst");
	const char *second = mi_value_get_string(mi_value_at(insns, 1), "inst");
	const char *address = mi_value_get_string(mi_value_at(insns, 1), "address");
	if (first) {
		site->first_rip = strstr(first, "rip") != NULL;
		/* A first instruction that transfers control does not fall
		 * through to the next one (a jump, a return), or makes it a
		 * return address of the callee's (a call). */
		site->first_transfers = first[0] == 'j' || strncmp(first, "call", 4) == 0 ||
					strncmp(first, "ret", 3) == 0 || strncmp(first, "loop", 4) == 0 ||
					strncmp(first, "bnd", 3) == 0 || strncmp(first, "notrack", 7) == 0;
	}
	site->next_addr = address ? strtoull(address, NULL, 0) : 0;
	site->next_rip = !second || strstr(second, "rip") != NULL;
	mi_record_free(res);
}

static bool steps_with_scratch_register(struct tracer *t, uint64_t addr)
{
	ssize_t i = find_site(t, addr);
	if (i >= 0) {
		decode_site(t, &t->sites[i]);
		return t->sites[i].first_rip;
	}
	char from[32], to[32];
	snprintf(from, sizeof from, "0x%" PRIx64, addr);
	snprintf(to, sizeof to, "0x%" PRIx64, addr + 1);
	const char *args[] = { "-s", from, "-e", to, "--", "0", NULL };
	struct mi_record *res = NULL;
	struct xerr ignored;
	if (session_call(t->s, &res, &ignored, "-data-disassemble", args) < 0)
		return true;
	const char *inst = mi_value_get_string(mi_value_at(mi_value_get(res->results, "asm_insns"), 0), "inst");
	bool rip = !inst || strstr(inst, "rip") != NULL;
	mi_record_free(res);
	return rip;
}

static int insert_breakpoint(struct tracer *t, uint64_t addr, bool duty, int *number, struct xerr *e)
{
	if (session_remember_code_byte(t->s, addr, e) < 0)
		return -1;
	/* gdb 13 leaves the scratch register of a displaced RIP-relative step
	 * changed when the step is interrupted (a signal, the detach):
	 * session.h. Before the first breakpoint on such an instruction, gdb
	 * steps over in place from then on. A displaced step of another
	 * instruction still in flight is harmless to interrupt. */
	if (t->non_stop && !t->displaced_off && steps_with_scratch_register(t, addr)) {
		if (session_displaced_stepping_off(t->s, e) < 0)
			return -1;
		t->displaced_off = true;
		t->st->in_place_steps = true;
	}
	char location[32];
	snprintf(location, sizeof location, "*0x%" PRIx64, addr);
	const char *args[] = { location, NULL };
	struct mi_record *res = NULL;
	if (session_call(t->s, &res, e, "-break-insert", args) < 0)
		return xerr_prefix(e, "inserting a breakpoint at 0x%" PRIx64, addr);
	long long n = -1;
	mi_value_get_int(mi_value_get(res->results, "bkpt"), "number", &n);
	mi_record_free(res);
	if (n <= 0)
		return xerr_set(e, "gdb gave no breakpoint number for 0x%" PRIx64, addr);
	*number = (int)n;
	if (list_push(&t->all_bps, &t->nall, &t->all_cap, *number) < 0 ||
	    (duty && list_push(&t->duty_bps, &t->nduty, &t->duty_cap, *number) < 0))
		return xerr_set(e, "out of memory");
	t->st->breakpoints++;
	return 0;
}

/* Runs an MI command over a list of breakpoint numbers, in chunks. */
static int breakpoints_command(struct tracer *t, const char *command, const int *numbers, size_t n, struct xerr *e)
{
	for (size_t at = 0; at < n;) {
		char text[64][16];
		const char *args[65];
		size_t k = 0;
		for (; k < 64 && at < n; k++, at++) {
			snprintf(text[k], sizeof text[k], "%d", numbers[at]);
			args[k] = text[k];
		}
		args[k] = NULL;
		if (session_call(t->s, NULL, e, command, args) < 0)
			return -1;
	}
	return 0;
}

/* A catchpoint for a set of syscall numbers (NULL: all). gdb/MI has no
 * -catch-syscall, so the console command is used, built only from numbers. */
static int insert_syscall_catchpoint(struct tracer *t, const int *nrs, size_t n, struct xerr *e)
{
	char command[8192] = "catch syscall";
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(command);
		if (used + 16 >= sizeof command)
			return xerr_set(e, "too many system calls in one probe");
		snprintf(command + used, sizeof command - used, " %d", nrs[i]);
	}
	const char *args[] = { "console", command, NULL };
	struct mi_record *res = NULL;
	if (session_call(t->s, &res, e, "-interpreter-exec", args) < 0)
		return xerr_prefix(e, "catching system calls");
	int number = 0;
	const char *text = res->console ? strstr(res->console, "Catchpoint ") : NULL;
	if (text)
		number = atoi(text + strlen("Catchpoint "));
	mi_record_free(res);
	if (number <= 0)
		return xerr_set(e, "gdb did not confirm the system call catchpoint");
	if (list_push(&t->all_bps, &t->nall, &t->all_cap, number) < 0 ||
	    list_push(&t->duty_bps, &t->nduty, &t->duty_cap, number) < 0)
		return xerr_set(e, "out of memory");
	t->st->breakpoints++;
	return 0;
}

/* A forked child is a copy of the target, int3 bytes included. gdb removes
 * its breakpoints from the child before detaching it, but only those it
 * believes inserted at that moment: a fork gdb takes up late (pending
 * while every thread was stopped for another event, then the budget
 * disabled the breakpoints, or the end deleted them) keeps the copies, and
 * the child dies of SIGTRAP at its first hit (seen: 1 child in ~100, tests/
 * exec_fork.sh). Called while gdb holds the child stopped; its memory is
 * written through /proc, which needs no ptrace attach. */
static void heal_fork_child(void *ctx, pid_t child)
{
	struct tracer *t = ctx;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)child);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	const struct restore_set *ours = session_code_bytes(t->s);
	for (size_t i = 0; i < ours->n; i++) {
		const struct restore_entry *r = &ours->entries[i];
		uint8_t byte;
		if (r->original != 0xCC && pread(fd, &byte, 1, (off_t)r->addr) == 1 && byte == 0xCC &&
		    pwrite(fd, &r->original, 1, (off_t)r->addr) == 1)
			t->fork_bytes_healed++;
	}
	close(fd);
}

/* Not one of ours for the budget or the final delete: it must outlive the
 * probes (disarm), so that a fork reported after their removal is still
 * seen; gdb drops it with the session. */
static int insert_fork_catchpoint(struct tracer *t, struct xerr *e)
{
	const char *args[] = { "console", "catch fork", NULL };
	if (session_call(t->s, NULL, e, "-interpreter-exec", args) < 0)
		return xerr_prefix(e, "catching forks");
	session_on_fork(t->s, heal_fork_child, t);
	return 0;
}

static const char *syscall_name(int nr)
{
	for (size_t i = 0; i < sizeof tracer_syscall_table / sizeof *tracer_syscall_table; i++)
		if (tracer_syscall_table[i].nr == nr)
			return tracer_syscall_table[i].name;
	return NULL;
}

/* ---- arming --------------------------------------------------------------- */

static ssize_t find_site(const struct tracer *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nsites; i++)
		if (t->sites[i].addr == addr)
			return (ssize_t)i;
	return -1;
}

static int add_sites(struct tracer *t, size_t probe, const struct probe_spec *info, struct xerr *e)
{
	struct tracer_sites found = { 0 };
	bool is_return = info->kind == PROBE_RETURN;
	int n;
	if (t->cfg->resolved && t->cfg->resolved[probe].n) {
		found = t->cfg->resolved[probe];
		memset(&t->cfg->resolved[probe], 0, sizeof found);
		n = (int)found.n;
	} else {
		n = tracer_resolve(t->sym, info->spec_kind, info->spec, info->file, info->line, true, &found, e);
	}
	/* Resolving comes before any breakpoint is inserted: a SPEC that
	 * matches nothing is bad input, with the target untouched. */
	if (n < 0 || found.n == 0) {
		tracer_sites_release(&found);
		t->st->bad_probe = true;
		const char *slash = info->spec_kind == PROBE_SPEC_REGEX ? "/" : "";
		if (n < 0)
			xerr_prefix(e, "line %d: %s probe", info->recipe_line, probe_kind_name(info->kind));
		else
			xerr_set(e, "line %d: %s %s%s%s matches no function", info->recipe_line,
				 probe_kind_name(info->kind), slash, info->spec, slash);
		if (e) {
			size_t len = strlen(e->msg);
			snprintf(e->msg + len, sizeof e->msg - len, "; `xgdbprof probes '%s%s%s' %d` lists what it matches",
				 slash, info->spec, slash, (int)t->pid);
		}
		return -1;
	}
	size_t skipped_inlined = 0;
	for (size_t i = 0; i < found.n; i++) {
		struct tracer_site *f = &found.v[i];
		if ((is_return || info->entry_registers) && f->inlined) {
			skipped_inlined++;
			continue;
		}
		ssize_t k = find_site(t, f->addr);
		if (k < 0) {
			struct site *g = array_grow(t->sites, &t->sites_cap, t->nsites + 1, sizeof *g);
			if (!g) {
				tracer_sites_release(&found);
				return xerr_set(e, "out of memory");
			}
			t->sites = g;
			k = (ssize_t)t->nsites++;
			memset(&t->sites[k], 0, sizeof t->sites[k]);
			t->sites[k].addr = f->addr;
			t->sites[k].inlined = f->inlined;
			t->sites[k].name = f->name;
			f->name = NULL;
		}
		if (probe_list_add(is_return ? &t->sites[k].return_probes : &t->sites[k].entry_probes, (int)probe) < 0) {
			tracer_sites_release(&found);
			return xerr_set(e, "out of memory");
		}
	}
	/* a note has room for a sentence: a long regex (the locks recipe's) is
	 * cut in the middle, its ends say which probe */
	char spec[72];
	size_t speclen = strlen(info->spec);
	if (speclen < sizeof spec)
		memcpy(spec, info->spec, speclen + 1);
	else
		snprintf(spec, sizeof spec, "%.32s…%s", info->spec, info->spec + speclen - 32);
	if (skipped_inlined && !is_return)
		run_notes_add(&t->st->run.notes, "function %s: %zu inlined cop%s not probed (the probe reads arg0..arg5, "
			      "the argument registers of a function's first instruction; an inlined copy has none)",
			      spec, skipped_inlined, skipped_inlined == 1 ? "y" : "ies");
	else if (skipped_inlined)
		run_notes_add(&t->st->run.notes, "return %s: %zu inlined cop%s not measured (an inlined body has no return "
			 "instruction; its entries are counted by `function` probes)",
			 spec, skipped_inlined, skipped_inlined == 1 ? "y" : "ies");
	tracer_sites_release(&found);
	return 0;
}

static int collect_syscalls(const struct probe_spec *info, int **nrs, size_t *n, bool *all, struct xerr *e)
{
	size_t cap = 0;
	if (info->spec_kind == PROBE_SPEC_REGEX) {
		if (strcmp(info->spec, ".*") == 0 || strcmp(info->spec, "") == 0) {
			*all = true;
			return 0;
		}
		/* The recipe matches names itself; catch the numbers whose name
		 * could match (a prefilter with the same regex engine is in the
		 * recipe, so catch all and let it select). */
		*all = true;
		return 0;
	}
	const char *name = info->spec;
	if (!name || !*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
		return xerr_set(e, "line %d: '%s' is not a system call name", info->recipe_line, name ? name : "");
	for (size_t i = 0; i < sizeof tracer_syscall_table / sizeof *tracer_syscall_table; i++)
		if (strcmp(tracer_syscall_table[i].name, name) == 0)
			return list_push(nrs, n, &cap, tracer_syscall_table[i].nr) < 0 ? xerr_set(e, "out of memory") : 0;
	return xerr_set(e, "line %d: no system call named '%s' on x86-64 Linux", info->recipe_line, name);
}

/* What arming will insert, resolved with the target running. */
struct arming {
	int *sys_nrs;
	size_t nsys;
	bool sys_all, any_syscall;
	uint64_t hook, rust_panic;
};

/* Resolves every probe to addresses and system call numbers: symbol work,
 * done before the target is stopped. */
static int resolve_probes(struct tracer *t, struct arming *a, struct xerr *e)
{
	size_t nprobes = t->cfg->nprobes;
	for (size_t i = 0; i < nprobes; i++) {
		const struct probe_spec info = t->cfg->probes[i];
		int rc = 0;
		switch (info.kind) {
		case PROBE_FUNCTION:
		case PROBE_RETURN:
			rc = add_sites(t, i, &info, e);
			break;
		case PROBE_PANIC:
			t->has_panic_probe = true;
			rc = probe_list_add(&t->panic_probes, (int)i);
			break;
		case PROBE_SYSCALL:
		case PROBE_SYSCALL_ENTRY:
			a->any_syscall = true;
			rc = collect_syscalls(&info, &a->sys_nrs, &a->nsys, &a->sys_all, e);
			if (rc == 0)
				rc = probe_list_add(info.kind == PROBE_SYSCALL ? &t->syscall_return_probes
										 : &t->syscall_entry_probes, (int)i);
			break;
		default:
			break;
		}
		if (rc < 0)
			return -1;
	}
	if (t->has_panic_probe && tracer_resolve_panic(t->sym, &a->hook, &a->rust_panic, &t->panic_old_abi, e) < 0)
		return -1;
	return 0;
}

/* Stops the target and inserts what resolve_probes found. */
static int insert_probes(struct tracer *t, const struct arming *a, struct xerr *e)
{
	/* Non-stop: gdb inserts breakpoints with the threads running (a
	 * launched command held at its entry point is held by the launch). */
	if (!t->non_stop) {
		t->arm_stop_ns = monotonic_ns();
		if (session_stop(t->s, e) < 0)
			return -1;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < t->nsites; i++) {
		rc = insert_breakpoint(t, t->sites[i].addr, true, &t->sites[i].bp, e);
		if (rc == 0 && t->cfg->verbose)
			fprintf(stderr, "xgdbprof: probe at 0x%" PRIx64 " %s%s\n", t->sites[i].addr, t->sites[i].name,
				t->sites[i].inlined ? " (inlined)" : "");
	}
	t->st->sites = t->nsites;
	if (rc == 0 && a->hook)
		rc = insert_breakpoint(t, a->hook, false, &t->panic_hook_bp, e);
	if (rc == 0 && a->rust_panic)
		rc = insert_breakpoint(t, a->rust_panic, false, &t->rust_panic_bp, e);
	if (rc == 0 && a->any_syscall)
		rc = insert_syscall_catchpoint(t, a->sys_nrs, a->sys_all ? 0 : a->nsys, e);
	if (rc == 0 && t->nall)
		rc = insert_fork_catchpoint(t, e);
	if (rc == 0)
		rc = session_register_numbers(t->s, register_names, NREGS, t->regnums, e);
	for (int k = 0; rc == 0 && k < NREGS; k++)
		if (t->regnums[k] < 0)
			rc = xerr_set(e, "gdb has no register %s: the tracer supports x86-64 only", register_names[k]);
	return rc;
}

/* ---- threads -------------------------------------------------------------- */

static int refresh_threads(struct tracer *t, struct xerr *e)
{
	struct session_thread *list = NULL;
	size_t n = 0;
	if (session_threads(t->s, &list, &n, e) < 0)
		return -1;
	struct thread_info *fresh = calloc(n ? n : 1, sizeof *fresh);
	if (!fresh) {
		free(list);
		return xerr_set(e, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		fresh[i].gdb_id = list[i].gdb_id;
		fresh[i].tid = list[i].tid;
		snprintf(fresh[i].name, sizeof fresh[i].name, "%s", list[i].name);
		for (size_t j = 0; j < t->nthreads; j++)
			if (t->threads[j].tid == fresh[i].tid && t->threads[j].panic_pending) {
				fresh[i].panic_pending = true;
				fresh[i].payload_data = t->threads[j].payload_data;
				fresh[i].payload_vtable = t->threads[j].payload_vtable;
				memcpy(fresh[i].location, t->threads[j].location, sizeof fresh[i].location);
			}
	}
	free(list);
	free(t->threads);
	t->threads = fresh;
	t->nthreads = n;
	return 0;
}

static struct thread_info *thread_by_gdb_id(struct tracer *t, int gdb_id, struct xerr *e)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < t->nthreads; i++)
			if (t->threads[i].gdb_id == gdb_id)
				return &t->threads[i];
		if (attempt == 0 && refresh_threads(t, e) < 0)
			return NULL;
	}
	xerr_set(e, "gdb reported a stop in thread %d, which it does not list", gdb_id);
	return NULL;
}

/* The thread's name now (threads rename themselves after gdb saw them). */
static void thread_name_now(struct tracer *t, struct thread_info *th)
{
	/* Read again at most every 100 ms: a read cost each hit ~20 us */
	uint64_t now = monotonic_ns();
	if (th->name_read_ns && now - th->name_read_ns < 100000000u)
		return;
	th->name_read_ns = now;
	char path[64], buf[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)t->pid, (int)th->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(th->name, sizeof th->name, "%s", buf);
}

/* ---- stacks --------------------------------------------------------------- */

/* at_entry: the PC is a probed function's first instruction. The compiler
 * may have scheduled an inlined callee's instruction there, but the thread
 * is at the start of the function: its inline frames at that PC are
 * dropped so the probed function is the leaf. */
static int take_stack(struct tracer *t, const struct thread_info *th, const uint64_t *regs, bool at_entry,
		      struct xerr *e)
{
	t->stack.nframes = 0;
	t->stack.frames = t->frames;
	if (t->cfg->no_stacks)
		return 0;
	int max = t->cfg->max_frames > 0 ? t->cfg->max_frames : 64;
	if (!t->unwinder) {
		t->unwinder = unwinder_new(symbolizer_dwfl(t->sym), t->pid, e);
		if (!t->unwinder)
			return -1;
	}
	uint64_t pcs[256];
	if (max > 256)
		max = 256;
	size_t npcs = 0;
	bool complete;
	struct unwind_regs ur = {
		.rip = regs[R_RIP], .rsp = regs[R_RSP], .rbp = regs[R_RBP], .rbx = regs[R_RBX],
		.r12 = regs[R_R12], .r13 = regs[R_R13], .r14 = regs[R_R14], .r15 = regs[R_R15],
	};
	if (unwinder_walk(t->unwinder, th->tid, &ur, pcs, (size_t)max, &npcs, &complete, e) < 0)
		return -1;
	size_t need = npcs * 8 + 8;
	struct frame *g = array_grow(t->frames, &t->frames_cap, need, sizeof *g);
	if (!g)
		return xerr_set(e, "out of memory");
	t->frames = g;
	size_t used = 0;
	for (size_t i = 0; i < npcs && used < need; i++) {
		size_t n = 0;
		if (symbolizer_lookup(t->sym, pcs[i], i > 0, t->frames + used, need - used, &n, e) < 0)
			return -1;
		if (i == 0 && at_entry) {
			size_t skip = 0;
			while (skip + 1 < n && t->frames[skip].inlined)
				skip++;
			memmove(t->frames, t->frames + skip, (n - skip) * sizeof *t->frames);
			n -= skip;
		}
		used += n;
	}
	t->stack.frames = t->frames;
	t->stack.nframes = used;
	return 0;
}

/* ---- arg(NAME) -------------------------------------------------------------- */

static const char *keep_string(struct tracer *t, char *s)
{
	if (ARRAY_PUSH(t->arg_strings, t->narg_strings, t->arg_strings_cap, s) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

static void release_strings(struct tracer *t)
{
	for (size_t i = 0; i < t->narg_strings; i++)
		free(t->arg_strings[i]);
	t->narg_strings = 0;
}

static bool valid_utf8(const unsigned char *s, size_t n);

static bool is_frame_parameter(const struct tracer *t, const char *name)
{
	for (size_t i = 0; i < mi_value_count(t->event_frame_args); i++) {
		const char *p = mi_value_get_string(mi_value_at(t->event_frame_args, i), "name");
		if (p && strcmp(p, name) == 0)
			return true;
	}
	return false;
}

/* gdb's text for a value it cannot read at this PC (DWARF location lists
 * leave the parameter out here, or gdb says so in an error). */
static bool optimized_out(const char *text)
{
	/* "<optimized out>", "value has been optimized out", "<unavailable>",
	 * "value is not available" */
	return text && (strstr(text, "optimized out") || strstr(text, "unavailable>") ||
			strstr(text, "not available"));
}

/* Evaluates one expression in the hitting thread's frame 0: 1 with the
 * value's text in *value (caller frees the record), 0 when gdb could not
 * read it (optimized out), -1 on another error. */
static int evaluate_in_frame(struct tracer *t, const char *expr, struct mi_record **res, const char **value)
{
	char thread[16];
	snprintf(thread, sizeof thread, "%d", t->event_gdb_id);
	const char *args[] = { "--thread", thread, "--frame", "0", expr, NULL };
	struct xerr err = { 0 };
	*res = NULL;
	if (session_call(t->s, res, &err, "-data-evaluate-expression", args) < 0)
		return optimized_out(err.msg) ? 0 : -1;
	*value = mi_value_get_string((*res)->results, "value");
	if (!*value)
		return -1;
	return optimized_out(*value) ? 0 : 1;
}

/* gdb prints a byte slice as `&[u8] [104, 105]`: the text those bytes
 * make when they are UTF-8, else NULL. */
static char *byte_slice_text(const char *value)
{
	const char *list = strncmp(value, "&[u8] [", 7) == 0 ? value + 7 : strncmp(value, "&mut [u8] [", 11) == 0
												   ? value + 11 : NULL;
	if (!list)
		return NULL;
	size_t cap = strlen(list) + 1, n = 0;
	unsigned char *bytes = malloc(cap);
	if (!bytes)
		return NULL;
	for (const char *p = list; *p && *p != ']';) {
		char *end;
		long b = strtol(p, &end, 10);
		if (end == p || b < 0 || b > 255 || strncmp(end, " <repeats", 9) == 0) {
			free(bytes);
			return NULL;
		}
		bytes[n++] = (unsigned char)b;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	if (!valid_utf8(bytes, n)) {
		free(bytes);
		return NULL;
	}
	bytes[n] = '\0';
	return (char *)bytes;
}

/* arg(NAME): a parameter of the probed function at its entry, as gdb reads
 * it through the DWARF location valid at this address, or through its entry
 * value (NAME@entry, the caller-side DW_OP_entry_value) when the location
 * does not cover the address. Never a guess: what cannot be read is
 * "<unavailable: …>". gdb prints a Rust &str as "text", a C string as
 * `0x… "text"`, a byte slice as a list of bytes (shown as text when UTF-8),
 * other slices as `&[T](size=N) = {...}` (their length); integers as digits. */
static int arg_lookup(void *ctx, const char *name, struct event_value *out)
{
	struct tracer *t = ctx;
	/* Only a plain identifier reaches gdb: an expression could call
	 * functions in the target. */
	if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return -1;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return -1;
	out->type = EVENT_VAL_STR;
	if (t->event_site_inlined) {
		/* At an inlined copy's first instruction gdb shows the caller's
		 * frame: a name would resolve to the caller's variable. */
		out->s = "<unavailable: an inlined copy of the function, whose parameters gdb cannot show here>";
		return 0;
	}
	/* Parameters only: any other name would resolve to a global of the
	 * target (arg(system) to libc's function). */
	if (!is_frame_parameter(t, name))
		return -1;
	struct mi_record *res;
	const char *value = NULL;
	int got = evaluate_in_frame(t, name, &res, &value);
	if (got == 0) {
		mi_record_free(res);
		char at_entry[160];
		snprintf(at_entry, sizeof at_entry, "%s@entry", name);
		/* gdb's C parser knows NAME@entry; its Rust parser does not
		 * (an error): then nothing else can read it either. */
		got = evaluate_in_frame(t, at_entry, &res, &value);
		if (got < 0)
			got = 0;
	}
	if (got <= 0) {
		mi_record_free(res);
		if (got < 0)
			return -1;
		out->s = "<unavailable: optimized out at this address>";
		return 0;
	}
	int rc = -1;
	char *end;
	long long n = strtoll(value, &end, 0);
	const char *size = strstr(value, "(size=");
	const char *quote = strchr(value, '"');
	size_t len = strlen(value);
	char *copy = NULL;
	if (end != value && (*end == '\0' || strncmp(end, " '", 2) == 0)) {
		/* an integer, or a char as `97 'a'` */
		out->type = EVENT_VAL_INT;
		out->i = n;
		rc = 0;
	} else if (end != value && strncmp(end, " \"", 2) == 0 && len >= 2 && value[len - 1] == '"') {
		/* char *: `0x55… "text"` (gdb's escapes kept: printable already) */
		copy = strndup(quote + 1, (size_t)(value + len - 1 - (quote + 1)));
	} else if ((copy = byte_slice_text(value)) != NULL) {
		/* &[u8] as text */
	} else if (value[0] == '&' && size) {
		out->type = EVENT_VAL_INT;
		out->i = strtoll(size + 6, NULL, 10);
		rc = 0;
	} else if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		copy = strndup(value + 1, len - 2);
	} else {
		copy = strdup(value);
	}
	if (rc != 0) {
		out->type = EVENT_VAL_STR;
		out->s = copy ? keep_string(t, copy) : NULL;
		rc = out->s ? 0 : -1;
	}
	mi_record_free(res);
	return rc;
}

/* ---- panics --------------------------------------------------------------- */

static bool valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
		i += len;
	}
	return true;
}

/* Reads len bytes of UTF-8 text at addr into a malloc'd string, or NULL. */
static char *read_text(struct tracer *t, uint64_t addr, uint64_t len)
{
	if (addr < 4096 || len > (1u << 20))
		return NULL;
	char *buf = malloc(len + 1);
	if (!buf)
		return NULL;
	if (read_mem(t, addr, buf, len) < 0 || !valid_utf8((unsigned char *)buf, len)) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* A std panic payload is `&mut dyn PanicPayload`: its vtable's second word
 * is the concrete type's size. 16 bytes: a &str (StaticStrPayload, or
 * begin_panic's Payload<&str> = Option<&str>). 24 or 32: a String (its
 * Option, alone or after the &fmt::Arguments of FormatStringPayload),
 * formatted by std when it built the hook's info, i.e. before rust_panic
 * and before an abort. Field order is not fixed by Rust, so the String's
 * (cap, ptr, len) words are found by trying each placement, the layout of
 * rustc 1.95 first. Nothing is called in the target. */
static char *payload_message(struct tracer *t, uint64_t data, uint64_t vtable)
{
	bool ok;
	uint64_t size = read_word(t, vtable + 8, &ok);
	if (!ok || data < 4096)
		return NULL;
	uint64_t w[4];
	if (size == 16) {
		if (read_mem(t, data, w, 16) < 0)
			return NULL;
		if (w[0] == 0)
			return strdup("(payload already taken)");
		return read_text(t, w[0], w[1]);
	}
	if (size != 24 && size != 32)
		return strdup("Box<dyn Any>");
	size_t nw = (size_t)size / 8;
	if (read_mem(t, data, w, (size_t)size) < 0)
		return NULL;
	static const int orders[][3] = {
		/* cap, ptr, len */
		{ 0, 1, 2 }, { 1, 0, 2 }, { 1, 2, 3 }, { 2, 1, 3 }, { 0, 2, 1 }, { 2, 0, 1 },
		{ 1, 3, 2 }, { 3, 1, 2 }, { 2, 3, 1 }, { 3, 2, 1 }, { 0, 1, 3 }, { 1, 0, 3 },
		{ 0, 3, 1 }, { 3, 0, 1 }, { 0, 2, 3 }, { 2, 0, 3 }, { 0, 3, 2 }, { 3, 0, 2 },
	};
	for (size_t o = 0; o < sizeof orders / sizeof *orders; o++) {
		int c = orders[o][0], p = orders[o][1], l = orders[o][2];
		if ((size_t)c >= nw || (size_t)p >= nw || (size_t)l >= nw)
			continue;
		if (w[c] > (1ull << 40) || w[l] > w[c])
			continue;
		if (w[l] == 0)
			return strdup("");
		char *text = read_text(t, w[p], w[l]);
		if (text)
			return text;
	}
	return NULL;
}

/* core::panic::Location: { file: &str, line: u32, col: u32 }. */
static bool read_location(struct tracer *t, uint64_t addr, char *out, size_t size)
{
	uint64_t w[3];
	if (addr < 4096 || read_mem(t, addr, w, sizeof w) < 0 || w[1] == 0 || w[1] > 4096)
		return false;
	char *file = read_text(t, w[0], w[1]);
	if (!file)
		return false;
	uint32_t line = (uint32_t)w[2], col = (uint32_t)(w[2] >> 32);
	bool ok = line > 0 && line < 10000000 && col < 100000;
	if (ok)
		snprintf(out, size, "%s:%u:%u", file, line, col);
	free(file);
	return ok;
}

/* ---- events ----------------------------------------------------------------- */

static bool budgeted(const struct tracer *t);

/* x86-64's restart_syscall, which the kernel runs to resume an interrupted
 * sleep (ERESTART_RESTARTBLOCK). */
#define SYSCALL_RESTART_SYSCALL 219

/* The kernel-internal results of a call a stop interrupted and the kernel
 * restarts (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
 * ERESTART_RESTARTBLOCK): seen at the syscall-exit stop, never by the
 * program when the stop was ours. */
static bool syscall_restarts(int64_t result)
{
	return result == -512 || result == -513 || result == -514 || result == -516;
}

static int fire(struct tracer *t, const struct probe_list *probes, struct event *ev, struct xerr *e)
{
	for (size_t i = 0; i < probes->n; i++) {
		ev->probe = probes->v[i];
		int taken = event_sink_take(t->sink, ev, e);
		if (taken < 0)
			return -1;
		if (taken > 0) {
			t->sink_done = true;
			break;
		}
	}
	return 0;
}

/* When the current stop began: the hitting thread's trap, which gdb
 * reports 0.5-6 ms later (more on a loaded machine): the report less gdb's
 * median part of a hit (stop_clock.h), kept after the last resume. The
 * trap's own time is nowhere to be read: the scheduler's per-thread
 * timestamps (se.exec_start) run on a clock without steal time, which on
 * a VM drifts from the wall clock by milliseconds a second. */
static uint64_t stop_start(struct tracer *t, uint64_t when)
{
	if (t->stop_start_ns)
		return t->stop_start_ns;
	uint64_t start = when > (uint64_t)t->gdb_hit_ns ? when - (uint64_t)t->gdb_hit_ns : when;
	if (start > when)
		start = when;
	if (start < t->last_resume_ns)
		start = t->last_resume_ns <= when ? t->last_resume_ns : when;
	t->stop_start_ns = start;
	return start;
}

static struct thread_frozen *thread_frozen(struct tracer *t, int gdb_id, bool add)
{
	for (size_t i = 0; i < t->nfrozen_by_thread; i++)
		if (t->frozen_by_thread[i].gdb_id == gdb_id)
			return &t->frozen_by_thread[i];
	if (!add)
		return NULL;
	if (ARRAY_PUSH(t->frozen_by_thread, t->nfrozen_by_thread, t->frozen_by_thread_cap,
		       ((struct thread_frozen){ gdb_id, 0 })) < 0)
		return NULL;
	return &t->frozen_by_thread[t->nfrozen_by_thread - 1];
}

/* What our stops have held the thread so far: in all-stop mode every stop
 * held every thread; in non-stop mode, its own. */
static double frozen_for(struct tracer *t, int gdb_id)
{
	if (!t->non_stop)
		return t->frozen_ns;
	const struct thread_frozen *f = thread_frozen(t, gdb_id, false);
	return f ? f->ns : 0;
}

static void event_init(struct tracer *t, struct event *ev, enum event_kind kind,
		       const struct thread_info *th, uint64_t when)
{
	memset(ev, 0, sizeof *ev);
	ev->kind = kind;
	ev->timestamp_ns = when;
	ev->since_start_ns = when - t->start_ns;
	ev->target_ns = stop_start(t, when) - (uint64_t)frozen_for(t, th->gdb_id);
	ev->window = (int64_t)t->duty_changes + 1;
	ev->pid = t->pid;
	ev->cpu = -1;
	ev->thread.id = th->tid;
	ev->thread.name = th->name;
	ev->thread.state = 'R';
	ev->stack = t->stack.nframes ? &t->stack : NULL;
}

static int pending_push(struct tracer *t, const struct pending *p, struct xerr *e)
{
	if (t->npending >= 1u << 20)
		return xerr_set(e, "more than a million calls in flight: return probes cannot keep up");
	if (ARRAY_PUSH(t->pending, t->npending, t->pending_cap, *p) < 0)
		return xerr_set(e, "out of memory");
	return 0;
}

static int return_site_for(struct tracer *t, uint64_t addr, struct xerr *e)
{
	for (size_t i = 0; i < t->nreturns; i++)
		if (t->returns[i].addr == addr)
			return 0;
	struct return_site *g = array_grow(t->returns, &t->returns_cap, t->nreturns + 1, sizeof *g);
	if (!g)
		return xerr_set(e, "out of memory");
	t->returns = g;
	struct return_site *rs = &t->returns[t->nreturns];
	rs->addr = addr;
	if (insert_breakpoint(t, addr, true, &rs->bp, e) < 0)
		return -1;
	t->nreturns++;
	return 0;
}

static bool is_return_bp_addr(const struct tracer *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nreturns; i++)
		if (t->returns[i].addr == addr)
			return true;
	return false;
}

static bool is_return_bp(const struct tracer *t, int bp)
{
	for (size_t i = 0; i < t->nreturns; i++)
		if (t->returns[i].bp == bp)
			return true;
	return false;
}

static int on_entry(struct tracer *t, struct site *site, struct thread_info *th, const uint64_t *regs,
		    uint64_t when, struct xerr *e)
{
	t->st->entries++;
	if (site->entry_probes.n && take_stack(t, th, regs, !site->inlined, e) < 0)
		return -1;
	struct event ev;
	event_init(t, &ev, EVENT_FUNCTION_ENTRY, th, when);
	ev.function = site->name;
	ev.arg = arg_lookup;
	ev.arg_ctx = t;
	t->event_site_inlined = site->inlined;
	/* At the first instruction nothing has moved the arguments yet; an
	 * inlined copy has no entry, its registers mean nothing. */
	ev.has_int_args = !site->inlined;
	static const int arg_regs[6] = { R_RDI, R_RSI, R_RDX, R_RCX, R_R8, R_R9 };
	for (size_t i = 0; i < 6; i++)
		ev.int_args[i] = (int64_t)regs[arg_regs[i]];
	if (fire(t, &site->entry_probes, &ev, e) < 0)
		return -1;
	if (site->return_probes.n && t->duty == DUTY_ON) {
		bool ok;
		uint64_t ret = read_word(t, regs[R_RSP], &ok);
		if (!ok)
			return 0;
		if (return_site_for(t, ret, e) < 0)
			return -1;
		/* t0 is set when the thread is resumed: our own handling of this
		 * stop is not part of the call's elapsed time. */
		(void)when;
		struct pending p = { .tid = th->tid, .sp_after = regs[R_RSP] + 8, .t0_ns = 0,
				     .site = (size_t)(site - t->sites) };
		if (pending_push(t, &p, e) < 0)
			return -1;
	}
	return 0;
}

/* A call's own time: from the resume after its entry stop to the report of
 * its return, less what our stops cost it meanwhile — the stops of other
 * hits in between (all-stop mode holds every thread; stopped_ns counts
 * them, gdb's hidden parts included; non-stop mode holds only the thread
 * that hit, so none of them) and gdb's part of this return's own hit
 * (the step over the entry breakpoint, the trap, the report: gdb_hit_ns,
 * the median measured). A call of a few ns then reads near 0, not the
 * 0.5-2 ms of gdb's own work. */
static uint64_t call_time_ns(const struct tracer *t, const struct pending *p, uint64_t when)
{
	if (!p->t0_ns || when <= p->t0_ns)
		return 0;
	/* Non-stop: other threads' hits did not hold this one. */
	double ours = (t->non_stop ? 0 : t->stopped_ns - p->stopped_at_t0_ns) + t->gdb_hit_ns;
	double wall = (double)(when - p->t0_ns);
	return wall > ours ? (uint64_t)(wall - ours) : 0;
}

static int on_return(struct tracer *t, struct thread_info *th, const uint64_t *regs, uint64_t when, struct xerr *e)
{
	ssize_t match = -1;
	for (size_t i = t->npending; i-- > 0;)
		if (t->pending[i].tid == th->tid && t->pending[i].sp_after == regs[R_RSP]) {
			match = (ssize_t)i;
			break;
		}
	if (match < 0) {
		t->st->unmatched_returns++;
		return 0;
	}
	struct pending p = t->pending[match];
	/* Calls of this thread deeper than this one were unwound (a panic
	 * crossed them): they will never return. */
	size_t kept = 0;
	for (size_t i = 0; i < t->npending; i++) {
		struct pending *q = &t->pending[i];
		if ((ssize_t)i == match || (q->tid == th->tid && q->sp_after < p.sp_after))
			continue;
		t->pending[kept++] = *q;
	}
	t->npending = kept;
	t->st->returns++;
	struct site *site = &t->sites[p.site];
	if (take_stack(t, th, regs, false, e) < 0)
		return -1;
	char retval[32];
	snprintf(retval, sizeof retval, "%" PRId64, (int64_t)regs[R_RAX]);
	struct event ev;
	event_init(t, &ev, EVENT_FUNCTION_RETURN, th, when);
	ev.function = site->name;
	ev.elapsed_ns = call_time_ns(t, &p, when);
	ev.retval = retval;
	ev.syscall_result = (int64_t)regs[R_RAX];
	return fire(t, &site->return_probes, &ev, e);
}

static int report_panic(struct tracer *t, struct thread_info *th, const uint64_t *regs, uint64_t data,
			uint64_t vtable, uint64_t when, struct xerr *e)
{
	char *message = payload_message(t, data, vtable);
	th->panic_pending = false;
	t->st->panics++;
	int rc = take_stack(t, th, regs, false, e);
	if (rc == 0) {
		struct event ev;
		event_init(t, &ev, EVENT_PANIC, th, when);
		ev.panic_message = message ? message : "(message unreadable)";
		ev.panic_location = th->location[0] ? th->location : "(unknown location)";
		rc = fire(t, &t->panic_probes, &ev, e);
	}
	free(message);
	return rc;
}

#define XSTR_(x) #x
#define XSTR(x) XSTR_(x)

/* A thread's wait for its first entry hit in a window, cut short by the
 * window's end or another stop of it: below this it says too little to
 * matter (a thread that barely ran). */
#define WAIT_CENSOR_NS 100000.0

/* ---- a hit's CPU cost against the program's ------------------------------- */

/* At a handled stop of thread tid (bp: its breakpoint, 0 for other
 * stops): whether it is the calibration breakpoint's, and then its sample.
 * The thread is stopped: its on-CPU clock stands still, so the reading is
 * the same at the stop and at our resume. */
static struct hitter *hitter_of(struct hit_cpu *h, pid_t tid)
{
	for (size_t i = 0; i < h->nhitters; i++)
		if (h->hitters[i].tid == tid)
			return &h->hitters[i];
	if (h->nhitters == sizeof h->hitters / sizeof *h->hitters)
		return NULL;
	struct hitter *n = &h->hitters[h->nhitters++];
	memset(n, 0, sizeof *n);
	n->tid = tid;
	return n;
}

/* At a switch of the probes: each hitting thread's CPU since its last
 * reading goes to its armed time when they were on; on switching them on,
 * the readings start. */
static void hitters_at_switch(struct tracer *t, bool on_before, bool on_after)
{
	struct hit_cpu *h = &t->hit_cpu;
	for (size_t i = 0; i < h->nhitters; i++) {
		struct hitter *x = &h->hitters[i];
		uint64_t run = proc_thread_runtime_ns(t->pid, x->tid);
		if (on_before && x->marked && run >= x->mark_ns)
			x->armed_ns += (double)(run - x->mark_ns);
		if (on_before && x->in_window && !x->hit_in_window && run >= x->open_ns + WAIT_CENSOR_NS)
			x->censored++;
		if (!on_before && x->off_marked && run >= x->off_mark_ns)
			x->off_ns += (double)(run - x->off_mark_ns);
		x->marked = on_after && run;
		x->mark_ns = run;
		/* Read before the probes are switched: a window's opening is
		 * counted a little early (the waits only lengthen), its end a
		 * little late. */
		x->in_window = on_after && run;
		x->open_ns = run;
		x->hit_in_window = false;
		x->off_marked = !on_after && run;
		x->off_mark_ns = run;
	}
}

/* At an entry hit with the probes on: the thread's CPU since its last
 * reading in this window (run, read at this stop) is armed time holding
 * this one hit. A thread's first hit ever has no reading before it in the
 * window: not counted. */
static void hitter_hit(struct tracer *t, pid_t tid, uint64_t run)
{
	struct hitter *x = hitter_of(&t->hit_cpu, tid);
	if (!x)
		return;
	if (x->marked && run >= x->mark_ns) {
		x->armed_ns += (double)(run - x->mark_ns);
		x->hits++;
	}
	if (x->in_window && !x->hit_in_window && run >= x->open_ns) {
		x->hit_in_window = true;
		x->first_pending = true;
		x->pending_u_ns = (double)(run - x->open_ns);
	}
	x->marked = run != 0;
	x->mark_ns = run;
}

/* After a handled stop of thread tid in an armed window: when it was the
 * thread's first there, its wait counts if the stop was an entry hit, else
 * the window is censored for it. */
static void hitter_first_wait(struct tracer *t, pid_t tid, bool entry)
{
	struct hit_cpu *h = &t->hit_cpu;
	for (size_t i = 0; i < h->nhitters; i++) {
		struct hitter *x = &h->hitters[i];
		if (x->tid != tid || !x->first_pending)
			continue;
		x->first_pending = false;
		if (entry) {
			x->u_sum += x->pending_u_ns;
			x->u_squares += x->pending_u_ns * x->pending_u_ns;
			x->n_u++;
		} else if (x->pending_u_ns >= WAIT_CENSOR_NS) {
			x->censored++;
		}
	}
}

static bool hit_cpu_at_stop(struct tracer *t, pid_t tid, int bp)
{
	struct hit_cpu *h = &t->hit_cpu;
	bool calibration = bp > 0 && bp == h->pending_bp && tid == h->pending_tid;
	/* one reading of the stopped thread's clock serves both */
	uint64_t run = t->duty == DUTY_ON || calibration ? proc_thread_runtime_ns(t->pid, tid) : 0;
	if (t->duty == DUTY_ON)
		hitter_hit(t, tid, run);
	if (!calibration)
		return false;
	/* gdb deleted the one-shot breakpoint at this hit */
	h->pending_bp = 0;
	h->handled_calibrations++;
	if (run && run >= h->pending_run_ns && h->ncalibrations < TRACER_CALIBRATIONS)
		h->calibrations[h->ncalibrations++] = (double)(run - h->pending_run_ns);
	return true;
}

/* The instruction after a probed entry, where a calibration breakpoint can
 * go: one gdb steps onto from the probe's breakpoint; UINT64_MAX when there
 * is none usable (a breakpoint of ours there, or a RIP-relative one that in
 * non-stop mode would make gdb step in place for the rest of the session). */
static uint64_t next_instruction(struct tracer *t, struct site *site)
{
	if (site->next_insn)
		return site->next_insn;
	site->next_insn = UINT64_MAX;
	decode_site(t, site);
	uint64_t next = site->next_addr;
	if (site->first_transfers || !next)
		return site->next_insn;
	if (next <= site->addr || next >= site->addr + 16 || find_site(t, next) >= 0 || is_return_bp_addr(t, next))
		return site->next_insn;
	if (t->non_stop && !t->displaced_off && site->next_rip)
		return site->next_insn;
	site->next_insn = next;
	return next;
}

/* At an entry hit while armed: every other one until TRACER_CALIBRATIONS are
 * taken, a one-shot breakpoint for this thread only on the next
 * instruction. gdb's step over the probe lands on it and reports it: that
 * gap holds no program time. */
static void calibrate_at(struct tracer *t, struct site *site, int gdb_id, pid_t tid)
{
	struct hit_cpu *h = &t->hit_cpu;
	if (h->pending_bp || h->ncalibrations >= TRACER_CALIBRATIONS || h->handled_calibrations >= 4 * TRACER_CALIBRATIONS ||
	    site->inlined || t->duty != DUTY_ON || t->st->entries % 2 == 0 || !budgeted(t))
		return;
	uint64_t next = next_instruction(t, site);
	uint64_t run = proc_thread_runtime_ns(t->pid, tid);
	struct xerr ignored;
	if (next == UINT64_MAX || !run || session_remember_code_byte(t->s, next, &ignored) < 0)
		return;
	char location[32], thread[16];
	snprintf(location, sizeof location, "*0x%" PRIx64, next);
	snprintf(thread, sizeof thread, "%d", gdb_id);
	const char *args[] = { "-t", "-p", thread, location, NULL };
	struct mi_record *res = NULL;
	if (session_call(t->s, &res, &ignored, "-break-insert", args) < 0)
		return;
	long long n = -1;
	mi_value_get_int(mi_value_get(res->results, "bkpt"), "number", &n);
	mi_record_free(res);
	if (n <= 0)
		return;
	h->pending_bp = (int)n;
	h->pending_tid = tid;
	h->pending_run_ns = run;
}

/* Whether a stop at breakpoint bp (0: not a breakpoint's) needs the
 * thread's registers: all do but an entry site whose probes read no
 * argument register, walk no stack and time no return. */
static bool needs_registers(const struct tracer *t, int bp)
{
	if (bp <= 0 || !t->cfg->no_stacks || bp == t->panic_hook_bp || bp == t->rust_panic_bp || is_return_bp(t, bp))
		return true;
	for (size_t i = 0; i < t->nsites; i++) {
		const struct site *site = &t->sites[i];
		if (site->bp != bp)
			continue;
		if (site->return_probes.n)
			return true;
		for (size_t k = 0; k < site->entry_probes.n; k++)
			if (t->cfg->probes[site->entry_probes.v[k]].entry_registers)
				return true;
		return false;
	}
	return true;
}

static int read_registers(struct tracer *t, int gdb_id, uint64_t *regs, struct xerr *e)
{
	return session_thread_registers(t->s, gdb_id, t->regnums, NREGS, regs, e);
}

/* A syscall catchpoint's stop (entry or return): fires the syscall probes,
 * counting a call our stop interrupted and the kernel restarted as one. */
static int handle_syscall_stop(struct tracer *t, const struct mi_record *ev, struct thread_info *th,
			       const uint64_t *regs, bool is_sys_entry, uint64_t when, struct xerr *e)
{
	long long nr = -1;
	mi_value_get_int(ev->results, "syscall-number", &nr);
	const char *name = mi_value_get_string(ev->results, "syscall-name");
	if (!name)
		name = syscall_name((int)nr);
	struct event rev;
	event_init(t, &rev, is_sys_entry ? EVENT_SYSCALL_ENTRY : EVENT_SYSCALL_RETURN, th, when);
	rev.stack = NULL;
	rev.syscall_nr = nr;
	rev.syscall_name = name ? name : "?";
	unsigned slot = (unsigned)th->tid % 4096;
	uint64_t *t0 = &t->syscall_t0[slot];
	if (is_sys_entry) {
		if (t->syscall_restarting[slot] &&
		    (nr == t->syscall_open_nr[slot] || nr == SYSCALL_RESTART_SYSCALL)) {
			/* The same call going on after our stop: one call. */
			t->syscall_restarting[slot] = false;
			return 0;
		}
		t->syscall_restarting[slot] = false;
		t->syscall_open_nr[slot] = (int16_t)nr;
		*t0 = when;
		return fire(t, &t->syscall_entry_probes, &rev, e);
	}
	if (syscall_restarts((int64_t)regs[R_RAX])) {
		/* Interrupted by a stop (ours: the program never sees these
		 * kernel-internal values) and about to be restarted. */
		t->syscall_restarting[slot] = true;
		t->st->syscalls_restarted++;
		return 0;
	}
	if (nr == SYSCALL_RESTART_SYSCALL && t->syscall_open_nr[slot] > 0) {
		/* A sleep restarted through restart_syscall: report the call
		 * the program made. */
		nr = t->syscall_open_nr[slot];
		const char *original = syscall_name((int)nr);
		rev.syscall_nr = nr;
		rev.syscall_name = original ? original : "?";
	}
	t->syscall_open_nr[slot] = 0;
	t->st->syscalls++;
	rev.elapsed_ns = *t0 && when >= *t0 ? when - *t0 : 0;
	*t0 = 0;
	rev.syscall_result = (int64_t)regs[R_RAX];
	char retval[32];
	snprintf(retval, sizeof retval, "%" PRId64, (int64_t)regs[R_RAX]);
	rev.retval = retval;
	return fire(t, &t->syscall_return_probes, &rev, e);
}

static int handle_stop(struct tracer *t, const struct mi_record *ev, uint64_t when, bool *handled, struct xerr *e)
{
	const char *reason = mi_value_get_string(ev->results, "reason");
	long long gdb_id = 0, bkptno = 0;
	mi_value_get_int(ev->results, "thread-id", &gdb_id);
	*handled = false;
	if (!reason)
		return 0;
	bool is_bp = strcmp(reason, "breakpoint-hit") == 0;
	bool is_sys_entry = strcmp(reason, "syscall-entry") == 0;
	bool is_sys_return = strcmp(reason, "syscall-return") == 0;
	bool is_signal = strcmp(reason, "signal-received") == 0;
	if (!is_bp && !is_sys_entry && !is_sys_return && !is_signal)
		return 0;
	struct thread_info *th = thread_by_gdb_id(t, (int)gdb_id, e);
	if (!th)
		return -1;
	thread_name_now(t, th);
	t->event_gdb_id = (int)gdb_id;
	t->event_tid = th->tid;
	t->event_frame_args = mi_value_get(mi_value_get(ev->results, "frame"), "args");
	*handled = true;
	t->st->hits++;
	mi_value_get_int(ev->results, "bkptno", &bkptno);
	if (hit_cpu_at_stop(t, th->tid, is_bp ? (int)bkptno : 0)) {
		/* a calibration stop: ours, not a probe's hit */
		t->st->hits--;
		return 0;
	}
	uint64_t regs[NREGS];
	if (!needs_registers(t, is_bp ? (int)bkptno : 0)) {
		/* An entry that only counts: no registers to read (one MI
		 * round trip less per hit) */
		memset(regs, 0, sizeof regs);
	} else if (read_registers(t, (int)gdb_id, regs, e) < 0) {
		/* Gone while stopped: another thread exec'd (or exited the
		 * process). The resume lets gdb report that. */
		char task[64];
		snprintf(task, sizeof task, "/proc/%d/task/%d", (int)t->pid, (int)th->tid);
		if (!strstr(e->msg, "No such process") && access(task, F_OK) == 0)
			return -1;
		t->st->hits--;
		*handled = false;
		return 0;
	}
	t->stack.nframes = 0;
	if (is_signal) {
		const char *sig = mi_value_get_string(ev->results, "signal-name");
		if (sig && strcmp(sig, "SIGABRT") == 0 && th->panic_pending)
			return report_panic(t, th, regs, th->payload_data, th->payload_vtable, when, e);
		return 0;
	}
	if (is_sys_entry || is_sys_return)
		return handle_syscall_stop(t, ev, th, regs, is_sys_entry, when, e);
	int bp = (int)bkptno;
	t->event_bp = bp;
	if (bp == t->panic_hook_bp && bp > 0) {
		/* panic_with_hook(payload: &mut dyn PanicPayload, location, ..);
		 * older std: rust_panic_with_hook(payload, message, location, ..). */
		th->panic_pending = true;
		th->payload_data = regs[R_RDI];
		th->payload_vtable = regs[R_RSI];
		th->location[0] = '\0';
		uint64_t first = t->panic_old_abi ? regs[R_RCX] : regs[R_RDX];
		uint64_t second = t->panic_old_abi ? regs[R_RDX] : regs[R_RCX];
		if (!read_location(t, first, th->location, sizeof th->location))
			read_location(t, second, th->location, sizeof th->location);
		return 0;
	}
	if (bp == t->rust_panic_bp && bp > 0)
		return report_panic(t, th, regs, regs[R_RDI], regs[R_RSI], when, e);
	if (is_return_bp(t, bp)) {
		if (on_return(t, th, regs, when, e) < 0)
			return -1;
		/* A return site can also be a probed entry (recursion into the
		 * same code): fall through to the entry check. */
	}
	for (size_t i = 0; i < t->nsites; i++)
		if (t->sites[i].bp == bp) {
			if (on_entry(t, &t->sites[i], th, regs, when, e) < 0)
				return -1;
			calibrate_at(t, &t->sites[i], (int)gdb_id, th->tid);
			return 0;
		}
	return 0;
}

/* ---- budget --------------------------------------------------------------- */

static double median_gap(const struct tracer *t)
{
	size_t n = t->ngaps < 32 ? t->ngaps : 32;
	double sorted[32];
	memcpy(sorted, t->gaps, n * sizeof *sorted);
	double m = stats_percentile(sorted, n, 50);
	return m < 5e4 ? 5e4 : m > 1.5e6 ? 1.5e6 : m;
}

/* Whether the thread that just hit will be resumed from an inserted
 * breakpoint (gdb then steps it over the breakpoint first). */
static bool resumes_over_breakpoint(const struct tracer *t)
{
	int bp = t->event_bp;
	if (bp <= 0)
		return false;
	if (bp == t->panic_hook_bp || bp == t->rust_panic_bp)
		return true;
	if (is_return_bp(t, bp))
		return t->duty != DUTY_OFF;
	return t->duty == DUTY_ON;
}

static bool read_process_cpu(const struct process_cpu *c, uint64_t *ns)
{
	struct timespec ts;
	if (!c->readable || clock_gettime(c->clock, &ts) != 0)
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

static void process_cpu_start(struct process_cpu *c, pid_t pid)
{
	*c = (struct process_cpu){ 0 };
	c->readable = clock_getcpuclockid(pid, &c->clock) == 0;
	if (c->readable && !read_process_cpu(c, &c->last_ns))
		c->readable = false;
}

/* At a stop: the CPU time spent since the previous stop goes to the armed
 * share when the entry probes were on all that while. */
static void process_cpu_mark(struct process_cpu *c, enum duty duty_before)
{
	uint64_t now;
	if (!read_process_cpu(c, &now) || now < c->last_ns)
		return;
	double spent = (double)(now - c->last_ns);
	c->total_ns += spent;
	if (duty_before == DUTY_ON)
		c->armed_ns += spent;
	c->last_ns = now;
}

/* Adds the part of a stop we cannot see — from the last resume until gdb
 * reported the stop — to the stopped time: measured when the hitting
 * thread's clocks bracket the window, else the current estimate. */
static void account_hidden_part(struct tracer *t, bool handled, enum duty duty_at_stop, uint64_t when)
{
	process_cpu_mark(&t->cpu, duty_at_stop);
	struct stop_clock_window w;
	stop_clock_stopped(&t->clock, handled ? t->event_tid : 0, when, &w);
	double gap = when > t->window_start_ns ? (double)(when - t->window_start_ns) : 0;
	if (handled) {
		t->gaps[t->ngaps++ % 32] = gap;
		double median = stop_clock_median(&t->clock);
		t->gdb_hit_ns = median >= 0 ? median : median_gap(t);
	} else if (!w.read) {
		/* Not a hit and not measured: nothing says what it cost beyond
		 * what the caller counts itself. */
		return;
	}
	double part;
	if (!handled)
		/* A window with the probes off is long: a wait for a CPU there
		 * is the machine's load, not our doing. Only the stopped part
		 * (gdb's step over the breakpoint, the interrupt) is ours; if
		 * the thread also slept, at most what a hit costs. */
		part = w.exact || w.held_ns - w.waited_ns < t->gdb_hit_ns ? w.held_ns - w.waited_ns : t->gdb_hit_ns;
	else
		/* Right after our resume the CPUs are busy with gdb and us: the
		 * thread's wait for one is part of what the hit cost. */
		part = w.exact ? w.held_ns : w.read && w.held_ns < t->gdb_hit_ns ? w.held_ns : t->gdb_hit_ns;
	t->stopped_ns += part;
	t->last_hidden_ns = part;
}

/* An armed window opens when the entry probes go on and closes when they
 * go off (or the run ends), on the process's CPU clock as marked just
 * before. */
static void armed_window_open(struct tracer *t)
{
	struct armed_window w = { .cpu_start_ns = t->cpu.armed_ns, .entries_start = t->st->entries, .open = true };
	ARRAY_PUSH(t->windows, t->nwindows, t->windows_cap, w);
}

static void armed_window_close(struct tracer *t)
{
	if (!t->nwindows || !t->windows[t->nwindows - 1].open)
		return;
	struct armed_window *w = &t->windows[t->nwindows - 1];
	w->cpu_ns = t->cpu.armed_ns - w->cpu_start_ns;
	w->entries = t->st->entries - w->entries_start;
	w->open = false;
}

static bool budgeted(const struct tracer *t)
{
	return !t->cfg->exact && t->cfg->max_stopped_percent > 0 && t->nduty > 0;
}

static bool read_process_cpu(const struct process_cpu *c, uint64_t *ns);

/* The clock armed windows are measured on: the target's CPU time (wall
 * time if the kernel does not give it). */
static uint64_t window_clock_ns(const struct tracer *t, uint64_t now)
{
	uint64_t cpu;
	return read_process_cpu(&t->cpu, &cpu) ? cpu : now;
}

static int set_duty(struct tracer *t, enum duty next, uint64_t when, struct xerr *e)
{
	/* The CPU time up to the switch goes to the share it was spent in.
	 * All-stop: marked at the stop just before (nothing since). Non-stop
	 * switches with the target running, and with the probes off no stop
	 * comes to mark the off time: it would count as armed. */
	process_cpu_mark(&t->cpu, t->duty);
	hitters_at_switch(t, t->duty == DUTY_ON, next == DUTY_ON);
	if (t->duty == DUTY_ON && next != DUTY_ON)
		armed_window_close(t);
	else if (t->duty != DUTY_ON && next == DUTY_ON)
		armed_window_open(t);
	if (t->duty == DUTY_ON)
		t->covered_ns += when - t->duty_changed_ns;
	if (next == DUTY_ON) {
		if (breakpoints_command(t, "-break-enable", t->duty_bps, t->nduty, e) < 0)
			return -1;
		t->window_close_ns = window_clock_ns(t, when) + (uint64_t)TRACER_WINDOW_CPU_NS;
	} else if (next == DUTY_OFF) {
		if (breakpoints_command(t, "-break-disable", t->duty_bps, t->nduty, e) < 0)
			return -1;
		t->npending = 0;
	} else {
		/* Draining: entries off, returns stay until the calls in flight end. */
		for (size_t i = 0; i < t->nsites; i++)
			if (breakpoints_command(t, "-break-disable", &t->sites[i].bp, 1, e) < 0)
				return -1;
	}
	if (next == DUTY_OFF || (t->duty == DUTY_ON && next != DUTY_ON))
		t->st->duty_cycles += t->duty == DUTY_ON;
	t->duty_changes += t->duty != next;
	t->duty = next;
	t->duty_changed_ns = when;
	return 0;
}

/* After a stop was handled (target still stopped): over budget? */
static int budget_after_stop(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (!budgeted(t))
		return 0;
	stop_budget_charge(&t->budget, t->stopped_ns / 1e9, now);
	if (t->duty == DUTY_DRAINING && (t->npending == 0 || now - t->duty_changed_ns > 50000000u))
		return set_duty(t, DUTY_OFF, now, e);
	if (t->duty != DUTY_ON)
		return 0;
	/* Far over (a second's allowance and four hits: hits cost more
	 * than a window's slack, or calls come faster than a window's CPU
	 * time passes): cut the window here, and say so. More would let a
	 * window run longer but make the stops burstier (and the off time
	 * after them longer) for every target. */
	double cut_s = t->budget.share * 1.0 + 4 * t->gdb_hit_ns / 1e9;
	bool cut = !t->close_requested && t->budget.balance_s < -cut_s;
	if (t->close_requested || cut) {
		t->st->windows_cut += cut;
		t->close_requested = false;
		t->off_until_ns = stop_budget_clear_at(&t->budget, now);
		return set_duty(t, t->npending ? DUTY_DRAINING : DUTY_OFF, now, e);
	}
	return 0;
}

/* With the target running: ends an armed window when one of its
 * boundaries has passed and the budget is overdrawn: in non-stop mode by
 * disabling the probes at once, in all-stop mode by interrupting the
 * target (the stop that follows switches the probes off). Ending windows
 * at a hit, as soon as that hit overdrew the budget, made every window
 * end just after a call: with one hit per window (a loaded machine, 20 ms
 * a hit), the calls that follow another closely (malloc then calloc, a
 * push then a clone) were never seen, and the estimates leaned towards
 * the calls that come first after the probes are armed (A:B 16:1 for a
 * true 1:1). Boundaries in wall time did no better (a hit outlasts the
 * window: the boundary passed during the hit and the close followed it),
 * nor in wall time less our stops (after a stop the thread waits for a
 * CPU on a loaded machine, and the window ran out before the next call).
 * Calls are made as the target's CPU runs: a boundary on its CPU clock,
 * fixed when the window opened, falls where the calls do not decide it. */
static int budget_close_request(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (t->duty != DUTY_ON || t->close_requested || session_is_stopped(t->s))
		return 0;
	uint64_t clock = window_clock_ns(t, now);
	if (clock < t->window_close_ns)
		return 0;
	stop_budget_charge(&t->budget, t->stopped_ns / 1e9, now);
	if (!stop_budget_overdrawn(&t->budget)) {
		while (t->window_close_ns <= clock)
			t->window_close_ns += (uint64_t)TRACER_WINDOW_CPU_NS;
		return 0;
	}
	t->close_requested = true;
	/* Non-stop: gdb disables breakpoints with the threads running; no
	 * thread is interrupted (an interrupt could land in a step over a
	 * breakpoint). */
	if (t->non_stop)
		return budget_after_stop(t, now, e);
	const char *args[] = { "--all", NULL };
	if (session_call(t->s, NULL, e, "-exec-interrupt", args) < 0)
		return -1;
	return 0;
}

static int budget_wake(struct tracer *t, uint64_t now, struct xerr *e)
{
	if (t->duty != DUTY_OFF || now < t->off_until_ns)
		return 0;
	if (t->non_stop) {
		/* Enabled with the target running: nothing is held. The off
		 * window is closed on the clocks as a stop would: its stopped
		 * part (gdb's step over the last hit's breakpoint) is ours, its
		 * waits for a CPU the machine's; left open, the next hit's window
		 * would span it and count every wait of the off time as that
		 * hit's (~1 s a hit at load 30). */
		account_hidden_part(t, false, DUTY_OFF, now);
		int rc = set_duty(t, DUTY_ON, now, e);
		t->window_start_ns = monotonic_ns();
		stop_clock_resuming(&t->clock, 0, false, t->window_start_ns);
		return rc;
	}
	/* Counted from the interrupt request, a little before the target
	 * really stops: conservative. */
	uint64_t t0 = monotonic_ns();
	if (session_stop(t->s, e) < 0)
		return -1;
	/* The resume that switched the probes off was followed by gdb's step
	 * over the breakpoint: cost hidden in the off window, bracketed here. */
	account_hidden_part(t, false, DUTY_OFF, t0);
	int rc = set_duty(t, DUTY_ON, monotonic_ns(), e);
	t->window_start_ns = monotonic_ns();
	stop_clock_resuming(&t->clock, 0, false, t->window_start_ns);
	if (rc == 0)
		rc = session_resume(t->s, e);
	t->last_resume_ns = monotonic_ns();
	t->stopped_ns += (double)(t->window_start_ns - t0);
	t->frozen_ns += (double)(t->last_resume_ns - t0);
	return rc;
}

/* ---- the loop and the exit path ------------------------------------------ */

/* Forks pending when the target was last stopped are reported at the next
 * resume, as fork catchpoint stops (each child cleaned as the record is
 * read): resumes after each until gdb is quiet for a moment. */
static int settle_forks(struct tracer *t, struct xerr *e)
{
	for (int records = 0; records < 256; records++) {
		struct mi_record *ev;
		int got = session_wait_event(t->s, 50, &ev, e);
		if (got <= 0)
			return got;
		mi_record_free(ev);
		if (session_is_stopped(t->s) && session_target_alive(t->s) && session_resume(t->s, e) < 0)
			return -1;
	}
	return 0;
}

static int disarm(struct tracer *t, struct xerr *e)
{
	if (!t->nall)
		return 0;
	if (!session_gdb_alive(t->s) || !session_target_alive(t->s))
		return 0;
	/* Exec'd: stopped in the new program, where gdb re-set our breakpoints
	 * at the old addresses; delete them before the detach lets it run. */
	bool execed = session_exec_path(t->s) != NULL;
	/* Non-stop: deleted with the threads running; a thread that trapped
	 * on one meanwhile is reported (or resumed by gdb) as usual. */
	if (!execed && !t->non_stop && session_stop(t->s, e) < 0)
		return -1;
	if (t->hit_cpu.pending_bp) {
		/* a calibration breakpoint its thread never reached (the thread
		 * ended, or the trace did first); gone already if it was hit */
		struct xerr ignored;
		breakpoints_command(t, "-break-delete", &t->hit_cpu.pending_bp, 1, &ignored);
		t->hit_cpu.pending_bp = 0;
	}
	if (breakpoints_command(t, "-break-delete", t->all_bps, t->nall, e) < 0)
		return -1;
	t->nall = 0;
	if (execed)
		return 0;
	if (session_resume(t->s, e) < 0)
		return -1;
	return settle_forks(t, e);
}

static double median_of(const double *v, size_t n)
{
	double *sorted = malloc((n ? n : 1) * sizeof *sorted);
	if (!sorted)
		return -1;
	memcpy(sorted, v, n * sizeof *sorted);
	double m = stats_percentile(sorted, n, 50);
	free(sorted);
	return m;
}

/* The armed share once the hits' own CPU is taken out of it (docs/
 * tracing.md, "Estimates"). A hit costs the target at least the
 * calibrated figure c (the step over the breakpoint and a report) and at
 * most TRACER_HIT_COST_SPAN c (that plus a continue, a trap and the caches
 * after it). With the program's own CPU between hits well above that
 * (TRACER_RESOLVABLE_GAP_RATIO), the share lies between the two
 * subtractions and the estimate gets an interval over that range; else
 * only the low subtraction is sure, and the estimate is a lower bound from
 * it (tighter than with none). Without calibration nothing is taken out
 * and the estimate is a lower bound: the raw share is at least the true
 * one. The last hit of each window is resumed, and costs its CPU, after
 * the probes are off: not subtracted from the armed time. */
static void armed_share_without_hits(const struct tracer *t, struct tracer_stats *st)
{
	const struct hit_cpu *h = &t->hit_cpu;
	st->armed_fraction_low = st->armed_fraction_high = st->armed_fraction;
	st->calibrations = h->ncalibrations;
	st->estimate_lower_bound = true;
	/* What decides is the share of the armed CPU time the hits' cost
	 * takes: the armed CPU per hit, not the gaps between a thread's hits
	 * (a gap longer than a window is never closed inside one, and calls in
	 * bursts, malloc then calloc, give gaps of two sizes), against the
	 * calibrated cost. */
	double stops = (double)(st->hits + h->handled_calibrations);
	double in_armed = stops > (double)st->duty_cycles ? stops - (double)st->duty_cycles : 0;
	double armed = t->cpu.armed_ns, total = t->cpu.total_ns;
	double hitters_armed = 0, hitters_hits = 0;
	for (size_t i = 0; i < h->nhitters; i++) {
		hitters_armed += h->hitters[i].armed_ns;
		hitters_hits += (double)h->hitters[i].hits;
	}
	if (hitters_hits > 0)
		st->hit_gap_cpu_us = hitters_armed / hitters_hits / 1e3;
	if (h->ncalibrations < 3 || hitters_hits < 5 || in_armed < 5 || total <= 0)
		return;
	double cost = median_of(h->calibrations, h->ncalibrations);
	st->hit_cpu_cost_us = cost / 1e3;
	double high = (armed - in_armed * cost) / (total - in_armed * cost);
	double low = (armed - in_armed * cost * TRACER_HIT_COST_SPAN) / (total - in_armed * cost * TRACER_HIT_COST_SPAN);
	if (!(high > 0) || high > st->armed_fraction)
		return;
	st->armed_fraction_high = high;
	st->estimate_lower_bound = !(low > 0) || st->hit_gap_cpu_us * 1e3 < TRACER_RESOLVABLE_GAP_RATIO * cost;
	if (st->estimate_lower_bound) {
		st->armed_fraction = st->armed_fraction_low = high;
		return;
	}
	st->armed_fraction_low = low;
	st->armed_fraction = sqrt(low * high);
}

/* How much more the entries' per-window counts spread than Poisson counts
 * of the same rate would: each armed window is one sample of the calls'
 * rate (calls in bursts, or a thread that calls only now and then, put
 * many hits in few windows). The ratio estimator's variance over windows
 * (sum of (m_w - r a_w)^2, n/(n-1) corrected) against the Poisson one
 * (the count itself); at least 1. */
static void window_dispersion(const struct tracer *t, struct tracer_stats *st)
{
	double cpu = 0, entries = 0;
	size_t n = 0;
	for (size_t i = 0; i < t->nwindows; i++) {
		if (t->windows[i].cpu_ns <= 0)
			continue;
		n++;
		cpu += t->windows[i].cpu_ns;
		entries += (double)t->windows[i].entries;
		st->windows_with_entries += t->windows[i].entries > 0;
	}
	st->windows_armed = n;
	st->count_dispersion = 1;
	if (n < 2 || entries <= 0 || cpu <= 0)
		return;
	double rate = entries / cpu, squares = 0;
	for (size_t i = 0; i < t->nwindows; i++) {
		if (t->windows[i].cpu_ns <= 0)
			continue;
		double d = (double)t->windows[i].entries - rate * t->windows[i].cpu_ns;
		squares += d * d;
	}
	double dispersion = (double)n / (double)(n - 1) * squares / entries;
	if (dispersion > 1)
		st->count_dispersion = dispersion;
}

/* Student's t 0.975 quantile for df degrees of freedom. */
static double t975(size_t df)
{
	static const double table[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
					2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086 };
	if (df == 0)
		return table[0];
	return df <= sizeof table / sizeof *table ? table[df - 1] : 1.959964 + 2.4 / (double)df;
}

/* A lower bound on the entries over the whole run that no cost of our
 * stops can bias (docs/tracing.md, "Estimates"). In each armed window, a
 * thread's CPU from the opening to its first entry hit there is the
 * program's alone (in non-stop mode nothing of ours stopped it; in
 * all-stop mode other threads' hits may have, which only lengthens it),
 * and is a forward recurrence time U of its calls, whose mean is
 * E[X^2] / 2E[X] >= E[X] / 2 for any stationary sequence of calls with
 * mean spacing E[X] of CPU. So the thread's calls came at least every
 * 2E[U] of its CPU, and its CPU with the probes off made at least that
 * many. E[U] is taken at its 97.5% upper confidence bound. A thread
 * counts only with 3 waits or more and none censored (a window it ran in
 * past WAIT_CENSOR_NS without an entry hit: long waits would be missing
 * from the mean); the others add only what was measured. Sets
 * st->entries_at_least (0: no thread counted). */
static void first_hit_bound(const struct tracer *t, struct tracer_stats *st)
{
	const struct hit_cpu *h = &t->hit_cpu;
	double extra = 0, waits = 0, nwaits = 0;
	for (size_t i = 0; i < h->nhitters; i++) {
		const struct hitter *x = &h->hitters[i];
		if (x->n_u < 3 || x->censored || x->off_ns <= 0)
			continue;
		double n = (double)x->n_u, mean = x->u_sum / n;
		double var = fmax(0, (x->u_squares - x->u_sum * x->u_sum / n) / (n - 1));
		double high = mean + t975(x->n_u - 1) * sqrt(var / n);
		if (!(high > 0))
			continue;
		extra += x->off_ns / (2 * high);
		waits += x->u_sum;
		nwaits += n;
	}
	if (nwaits == 0 || st->entries == 0)
		return;
	st->first_hit_wait_us = waits / nwaits / 1e3;
	st->entries_at_least = (double)st->entries + extra;
}

static void finish_stats(struct tracer *t, uint64_t end)
{
	struct tracer_stats *st = t->st;
	if (t->duty == DUTY_ON)
		t->covered_ns += end - t->duty_changed_ns;
	t->duty_changed_ns = end;
	if (!t->budget_start_ns || t->budget_start_ns > end)
		t->budget_start_ns = end;
	st->run.elapsed_s = (double)(end - t->budget_start_ns) / 1e9;
	st->arm_stopped_s = t->arm_stop_ns && t->budget_start_ns > t->arm_stop_ns
				    ? (double)(t->budget_start_ns - t->arm_stop_ns) / 1e9 : 0;
	st->run.stopped_s = t->stopped_ns / 1e9;
	st->run.stops = st->hits;
	st->covered_s = budgeted(t) ? (double)t->covered_ns / 1e9 : st->run.elapsed_s;
	st->hit_cost_ms = st->hits ? t->stopped_ns / 1e6 / (double)st->hits : 0;
	st->gdb_hit_ms = t->gdb_hit_ns / 1e6;
	if (t->nhit_stops) {
		st->hit_stop_median_ms = stats_percentile(t->hit_stops, t->nhit_stops, 50) / 1e6;
		st->hit_stop_p99_ms = stats_percentile(t->hit_stops, t->nhit_stops, 99) / 1e6;
	}
	st->hits_measured = t->clock.measured;
	st->calibration_stops = t->hit_cpu.handled_calibrations;
	st->waited_s = t->clock.waited_ns / 1e9;
	st->hits_bounded = t->clock.bounded;
	st->clocks_unavailable = t->clock.unavailable;
	struct run_notes *notes = &st->run.notes;
	st->armed_fraction = 1;
	if (st->duty_cycles && st->run.elapsed_s > 0) {
		/* Calls are made as the target's code runs: the share of its CPU
		 * time spent with the entry probes on is the share of the calls
		 * they could see. (Wall time would be wrong as soon as the number
		 * of running threads changes, and one thread's clock misses the
		 * others'.) */
		if (!st->run.target_exited) {
			process_cpu_mark(&t->cpu, t->duty);
			hitters_at_switch(t, t->duty == DUTY_ON, false);
		}
		armed_window_close(t);
		st->armed_fraction = t->cpu.total_ns > 0 ? fmin(1, t->cpu.armed_ns / t->cpu.total_ns) : 0;
		/* Each armed window also holds the CPU our stop and resume cost the
		 * threads (ptrace, gdb's step over the breakpoint): ~0.05-0.8 ms a
		 * hit here. When the windows are not much longer than that — calls
		 * come often, or between sleeps, with little CPU between them —
		 * the share over-counts the CPU that could have made calls. */
		armed_share_without_hits(t, st);
		window_dispersion(t, st);
		first_hit_bound(t, st);
		if (st->entries_at_least > 0) {
			/* The share the bound implies is the most the true one can be:
			 * an interval above it rests on a wrong cost (a stop that costs
			 * the program more than TRACER_HIT_COST_SPAN calibrated ones), and
			 * a lower bound from the calibrated cost alone may be weaker. */
			double share = (double)st->entries / st->entries_at_least;
			if (!st->estimate_lower_bound && st->armed_fraction_low > share) {
				st->estimate_lower_bound = true;
				st->interval_vetoed = true;
			}
			if (st->estimate_lower_bound && share < st->armed_fraction_high)
				st->armed_fraction = st->armed_fraction_low = st->armed_fraction_high = share;
		}
		if (st->entries && st->armed_fraction > 0) {
			st->entries_estimated = (double)st->entries / st->armed_fraction;
			run_notes_add(notes, "function entries: %" PRIu64 " measured while the probes were armed (%.2g%% "
				 "of the target's CPU time); %s %.0f over the whole run", st->entries,
				 100 * st->armed_fraction, st->estimate_lower_bound ? "at least about" : "about",
				 st->entries_estimated);
		}
		run_notes_add(notes, "probes were switched off %" PRIu64 " times to keep the target stopped <= %.0f%% "
			 "of the time: counts in the maps are as measured, each with an estimate for the whole run and "
			 "its 95%% interval", st->duty_cycles, t->cfg->max_stopped_percent);
		if (st->windows_cut)
			run_notes_add(notes, "%" PRIu64 " of those windows ended at a hit, the budget far overdrawn (a hit "
				      "cost more than a window's slack): there the estimates lean towards the calls that "
				      "come first after the probes are armed", st->windows_cut);
	}
	if (st->unmatched_returns)
		run_notes_add(notes, "%" PRIu64 " stops at return sites matched no recorded entry (calls begun while "
			 "probes were off)", st->unmatched_returns);
}

/* ", N WHAT" for a count that is not zero, after the first "(" */
static void put_count(FILE *out, const char **sep, uint64_t n, const char *one, const char *many)
{
	if (!n)
		return;
	fprintf(out, "%s%" PRIu64 " %s", *sep, n, n == 1 ? one : many);
	*sep = ", ";
}

/* One plain sentence per line (docs/tracing.md, "What a trace reports"). */
void tracer_stats_print(const struct tracer_stats *st, FILE *out)
{
	double armed_pct = st->run.elapsed_s > 0 ? 100 * st->covered_s / st->run.elapsed_s : 100;
	fprintf(out, "xgdbprof: traced %.1f s: %" PRIu64 " hit%s at %zu probe site%s", st->run.elapsed_s, st->hits,
		st->hits == 1 ? "" : "s", st->sites, st->sites == 1 ? "" : "s");
	const char *sep = " (";
	put_count(out, &sep, st->entries, "function entry", "function entries");
	put_count(out, &sep, st->returns, "return", "returns");
	put_count(out, &sep, st->panics, "panic", "panics");
	put_count(out, &sep, st->syscalls, "system call", "system calls");
	fprintf(out, "%s seen while the probes were armed (%.*f%% of the time); target held stopped %.1f%% of "
		"the time (%.2f s, %.3f ms per hit)\n", *sep == ',' ? ")" : "", armed_pct < 10 ? 1 : 0, armed_pct,
		st->run.elapsed_s > 0 ? 100 * st->run.stopped_s / st->run.elapsed_s : 0, st->run.stopped_s,
		st->hit_cost_ms);
	if (st->hits && st->hit_stop_median_ms > 0)
		fprintf(out, "xgdbprof: a hit held the thread that hit a median %.3f ms (p99 %.3f ms); %s\n",
			st->hit_stop_median_ms, st->hit_stop_p99_ms,
			!st->non_stop ? "every other thread was held as long (gdb all-stop mode)"
			: st->in_place_steps ? "the other threads ran on, but were paused while gdb stepped over a "
					       "breakpoint on a RIP-relative instruction (gdb non-stop mode, in-place steps)"
					     : "the other threads ran on (gdb non-stop mode)");
	if (st->syscalls_restarted)
		fprintf(out, "xgdbprof: %" PRIu64 " system call%s restarted after our stops: the kernel resumed %s, so "
			"each is counted once, with no error\n", st->syscalls_restarted,
			st->syscalls_restarted == 1 ? " was" : "s were", st->syscalls_restarted == 1 ? "it" : "them");
	if (st->attach_hold_s > 0)
		fprintf(out, "xgdbprof: before the trace began, attaching held the target stopped at most %.1f ms and "
			"arming the probes %.1f ms (not counted above)\n", st->attach_hold_s * 1e3,
			st->arm_stopped_s * 1e3);
	else if (st->arm_stopped_s > 0)
		fprintf(out, "xgdbprof: before the trace began, arming the probes held the target stopped %.1f ms "
			"(not counted above)\n", st->arm_stopped_s * 1e3);
	uint64_t stops = st->hits + st->calibration_stops;
	if (st->hits && st->hits_measured)
		fprintf(out, "xgdbprof: a hit cost gdb a median %.3f ms, read from the thread's schedstat (wall - on "
			"CPU) for %" PRIu64 " of %" PRIu64 " hits%s%s; waiting for a CPU after our resumes took %.3f s "
			"in all and counts as stopped\n", st->gdb_hit_ms, st->hits_measured, stops,
			st->calibration_stops ? " (calibration hits included)" : "",
			st->hits_measured < stops ? " (the others counted at that median, or their bound when "
						       "lower)" : "", st->waited_s);
	else if (st->hits)
		fprintf(out, "xgdbprof: gdb's part of each hit was estimated at %.3f ms from the gaps between a resume "
			"and the next hit, as %s\n", st->gdb_hit_ms,
			st->clocks_unavailable ? "this kernel gives no per-thread scheduler clocks"
					       : "no hit came in a window the thread's clocks could bracket");
	if (st->calibrations && st->hit_cpu_cost_us > 0)
		fprintf(out, "xgdbprof: a hit cost the thread that hit at least %.0f us of its CPU (median of %" PRIu64
			" calibration hits); a thread that hit ran a mean %.0f us of CPU per hit with the probes armed: %s\n",
			st->hit_cpu_cost_us, st->calibrations, st->hit_gap_cpu_us,
			st->estimate_lower_bound ? "mostly our own cost, or could be (a stop may cost the program up to " XSTR(TRACER_HIT_COST_SPAN) "x that with its caches), so estimates are lower bounds"
						 : "estimates take our cost out, and their intervals its range");
	if (st->entries_at_least > 0)
		fprintf(out, "xgdbprof: before each armed window's first hit the target ran a mean %.0f us of CPU, none of it "
			"our cost: the calls came at least every %.0f us of CPU (95%%), so the entries were at least %.0f%s\n",
			st->first_hit_wait_us, st->entries ? 2 * st->first_hit_wait_us : 0, st->entries_at_least,
			st->interval_vetoed ? "; the interval from the calibrated cost lay below that (a stop costs this "
					      "program more), so estimates are lower bounds" : "");
	if (st->windows_armed)
		fprintf(out, "xgdbprof: the entries came in %" PRIu64 " of %" PRIu64 " armed windows, their per-window counts "
			"spread %.1fx what steady calls would give: intervals widen to it\n", st->windows_with_entries,
			st->windows_armed, st->count_dispersion);
	for (int i = 0; i < st->run.notes.n; i++)
		fprintf(out, "note: %s\n", st->run.notes.text[i]);
	if (st->gdb_died) {
		char what[200];
		restore_report_describe(&st->restore, what, sizeof what);
		fprintf(out, "note: gdb died; xgdbprof %s\n", what);
	}
}

static void tracer_release(struct tracer *t)
{
	for (size_t i = 0; i < t->nsites; i++) {
		free(t->sites[i].name);
		free(t->sites[i].entry_probes.v);
		free(t->sites[i].return_probes.v);
	}
	free(t->sites);
	free(t->returns);
	free(t->pending);
	free(t->threads);
	free(t->all_bps);
	free(t->duty_bps);
	free(t->panic_probes.v);
	free(t->syscall_entry_probes.v);
	free(t->syscall_return_probes.v);
	free(t->frames);
	free(t->hit_stops);
	free(t->windows);
	free(t->frozen_by_thread);
	release_strings(t);
	free(t->arg_strings);
	if (t->unwinder)
		unwinder_free(t->unwinder);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
}

static bool gdb_gone(struct tracer *t)
{
	return !session_gdb_alive(t->s);
}

/* Opens the target's memory, arms the probes, warms the unwinder and
 * resumes the target with the duty cycle on. Returns 0, or -1 with e. */
static int tracer_start(struct tracer *t, struct xerr *e)
{
	bool held_at_entry = session_held_at_entry(t->s);
	const struct tracer_config *cfg = t->cfg;
	struct tracer_stats *stats = t->st;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)t->pid);
	t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;
	if (t->mem_fd < 0)
		rc = xerr_set(e, "cannot open %s to read the target's memory", path);
	/* Everything that reads files (resolving the probes, the unwinder,
	 * the symbolizer's per-module index for the first hit) happens while
	 * the target runs; only the inserts hold it (docs/tracing.md). */
	struct arming arming = { 0 };
	if (rc == 0)
		rc = resolve_probes(t, &arming, e);
	if (rc == 0 && !cfg->no_stacks && t->nsites) {
		t->unwinder = unwinder_new(symbolizer_dwfl(t->sym), t->pid, e);
		if (!t->unwinder)
			rc = -1;
		struct frame warm[8];
		size_t nwarm;
		for (size_t i = 0; rc == 0 && i < t->nsites; i++)
			symbolizer_lookup(t->sym, t->sites[i].addr, false, warm, 8, &nwarm, NULL);
	}
	/* gdb lists the threads of a running target too; a thread born since
	 * is looked up at its first hit. */
	if (rc == 0)
		rc = refresh_threads(t, e);
	if (rc == 0)
		rc = insert_probes(t, &arming, e);
	free(arming.sys_nrs);
	stop_clock_init(&t->clock, t->pid);
	if (rc == 0) {
		struct stop_clock_window unused;
		stop_clock_stopped(&t->clock, 0, monotonic_ns(), &unused);
		t->budget_start_ns = monotonic_ns();
		process_cpu_start(&t->cpu, t->pid);
		/* A small starting credit lets the first on-window hold several hits. */
		stop_budget_init(&t->budget, budgeted(t) ? cfg->max_stopped_percent : 0, t->budget_start_ns,
				 cfg->max_stopped_percent / 100.0 * 0.2);
		stop_clock_resuming(&t->clock, 0, false, t->budget_start_ns);
		rc = session_resume(t->s, e);
	}
	if (rc == 0)
		fprintf(stderr, "xgdbprof: attached %zu probe%s (%zu breakpoint%s)%s%s\n", t->nsites + t->panic_probes.n +
			t->syscall_entry_probes.n + t->syscall_return_probes.n,
			t->nsites + t->panic_probes.n + t->syscall_entry_probes.n + t->syscall_return_probes.n == 1 ? "" : "s",
			stats->breakpoints, stats->breakpoints == 1 ? "" : "s",
			budgeted(t) ? "" : cfg->exact ? ", exact: no budget" : "",
			held_at_entry ? "; the command was held at its entry point until now (none of its own code had run)"
				      : "");
	t->duty = DUTY_ON;
	armed_window_open(t);
	t->duty_changed_ns = monotonic_ns();
	t->window_close_ns = window_clock_ns(t, t->duty_changed_ns) + (uint64_t)TRACER_WINDOW_CPU_NS;
	t->last_resume_ns = t->duty_changed_ns;
	t->window_start_ns = t->budget_start_ns ? t->budget_start_ns : t->duty_changed_ns;
	t->gdb_hit_ns = 1e6;
	return rc;
}

/* The event loop's own clocks. */
struct loop_clock {
	uint64_t deadline;         /* 0: no duration */
	uint64_t last_tick, last_exec_check;
	uint64_t dead_since;       /* /proc first showed the target dead and gdb had not said so; 0: alive */
};

/* An exit gdb did not report within a second of /proc showing every
 * thread dead (session_target_dead_in_proc) ends the trace as an exit:
 * without this the trace waited for gdb forever. */
static bool exit_unreported(struct tracer *t, struct loop_clock *lc, uint64_t now)
{
	if (!session_target_dead_in_proc(t->s)) {
		lc->dead_since = 0;
		return false;
	}
	if (!lc->dead_since)
		lc->dead_since = now;
	if (now - lc->dead_since < 1000000000u)
		return false;
	session_note_target_exited(t->s);
	t->st->run.target_exited = true;
	run_notes_add(&t->st->run.notes, "the target exited and gdb did not report it within 1 s: the trace ended there");
	return true;
}

/* What ends the trace between events: a signal, exit(), the duration, the
 * target's exit or exec; also runs the recipe's timers and wakes the probes
 * after an off window. Returns 0, or -1 with e; *over says the trace ends. */
static int check_trace_end(struct tracer *t, struct loop_clock *lc, uint64_t now, bool *over, struct xerr *e)
{
	struct session *s = t->s;
	*over = true;
	if (signals_pending() || t->sink_done || (lc->deadline && now >= lc->deadline))
		return 0;
	if (session_is_stopped(s) && !session_target_alive(s)) {
		t->st->run.target_exited = true;
		return 0;
	}
	/* An exec gdb reported, or one it went silent on (session.h),
	 * looked for in /proc every 100 ms. */
	if (now - lc->last_exec_check >= 100000000u) {
		lc->last_exec_check = now;
		if (session_target_execed(s) || exit_unreported(t, lc, now))
			return 0;
	}
	if (session_exec_path(s))
		return 0;
	if (now - lc->last_tick >= 10000000u) {
		lc->last_tick = now;
		struct tracer_progress *pr = t->cfg->progress;
		if (pr) {
			pr->armed_fraction = 1;
			if (t->st->duty_cycles) {
				process_cpu_mark(&t->cpu, t->duty);
				if (t->cpu.total_ns > 0)
					pr->armed_fraction = fmin(1, t->cpu.armed_ns / t->cpu.total_ns);
			}
		}
		double sink_stopped_before = pr ? pr->sink_stopped_s : 0;
		int ticked = event_sink_tick(t->sink, now, e);
		/* A snapshot's stop costs the target like a hit: the budget pays it. */
		if (pr && pr->sink_stopped_s > sink_stopped_before)
			t->stopped_ns += (pr->sink_stopped_s - sink_stopped_before) * 1e9;
		if (ticked != 0) {
			t->sink_done = ticked > 0;
			return ticked < 0 ? -1 : 0;
		}
	}
	if (budgeted(t) && (budget_wake(t, now, e) < 0 || budget_close_request(t, now, e) < 0))
		return session_target_execed(s) ? 0 : -1;
	*over = false;
	return 0;
}

/* One record from gdb, taken (freed here): a stop is handled, accounted and
 * resumed; anything else is dropped. Returns handle_stop's or the resume's
 * result (0, or -1 with e); *over says the target exited or exec'd. */
static int trace_event(struct tracer *t, struct mi_record *ev, uint64_t when, bool *over, struct xerr *e)
{
	struct session *s = t->s;
	*over = false;
	bool is_stop = ev->kind == MI_RECORD_EXEC && strcmp(ev->klass, "stopped") == 0;
	if (!is_stop) {
		mi_record_free(ev);
		return 0;
	}
	const char *reason = mi_value_get_string(ev->results, "reason");
	const char *thread_id = mi_value_get_string(ev->results, "thread-id");
	int stopped_thread = thread_id ? atoi(thread_id) : 0;
	if (reason && (strncmp(reason, "exited", 6) == 0)) {
		t->st->run.target_exited = true;
		mi_record_free(ev);
		*over = true;
		return 0;
	}
	if (reason && strcmp(reason, "exec") == 0) {
		mi_record_free(ev);
		*over = true;
		return 0;
	}
	bool handled = false;
	enum duty duty_at_stop = t->duty;
	t->event_tid = 0;
	t->event_bp = 0;
	uint64_t entries_before = t->st->entries;
	int rc = handle_stop(t, ev, when, &handled, e);
	if (handled)
		hitter_first_wait(t, t->event_tid, t->st->entries > entries_before);
	release_strings(t);
	mi_record_free(ev);
	if (rc < 0)
		return rc;
	account_hidden_part(t, handled, duty_at_stop, when);
	if (rc == 0)
		rc = budget_after_stop(t, monotonic_ns(), e);
	/* Every stop is resumed, ours or not (a signal gdb reports is
	 * delivered by the continue). */
	t->window_start_ns = monotonic_ns();
	stop_clock_resuming(&t->clock, handled ? t->event_tid : 0, handled && resumes_over_breakpoint(t),
			    t->window_start_ns);
	/* Non-stop: only the thread of this record is stopped by it; others
	 * stopped meanwhile have records of their own still to read. */
	if (rc == 0 && t->non_stop && stopped_thread > 0)
		rc = session_resume_thread(s, stopped_thread, e);
	else if (rc == 0 && session_is_stopped(s) && session_target_alive(s))
		rc = session_resume(s, e);
	t->last_resume_ns = monotonic_ns();
	t->stopped_ns += (double)(t->window_start_ns - when);
	if (handled && t->nhit_stops < (1u << 20)) {
		double *grown = array_grow(t->hit_stops, &t->hit_stops_cap, t->nhit_stops + 1, sizeof *grown);
		if (grown) {
			t->hit_stops = grown;
			t->hit_stops[t->nhit_stops++] = t->last_hidden_ns + (double)(t->window_start_ns - when);
		}
	}
	double frozen = (double)(t->last_resume_ns - (t->stop_start_ns ? t->stop_start_ns : when));
	t->frozen_ns += frozen;
	if (t->non_stop && stopped_thread > 0) {
		struct thread_frozen *f = thread_frozen(t, stopped_thread, true);
		if (f)
			f->ns += frozen;
	}
	t->stop_start_ns = 0;
	for (size_t i = t->npending; i-- > 0 && t->pending[i].t0_ns == 0;) {
		t->pending[i].t0_ns = t->last_resume_ns;
		t->pending[i].stopped_at_t0_ns = t->stopped_ns;
	}
	return rc;
}

/* Waits for gdb's records and handles them until the trace ends. Returns 0,
 * or -1 with e. */
/* How long the loop may wait for gdb: 10 ms, less while an armed window
 * may reach its boundary, which must be acted on when it passes, not at
 * the next hit (a CPU ms is at most a wall ms per busy thread). */
static int wait_ms(const struct tracer *t)
{
	if (!budgeted(t) || t->duty != DUTY_ON || t->close_requested)
		return 10;
	uint64_t clock = window_clock_ns(t, monotonic_ns());
	if (clock >= t->window_close_ns)
		return 1;
	uint64_t left_ms = (t->window_close_ns - clock + 999999) / 1000000;
	return left_ms < 1 ? 1 : left_ms > 10 ? 10 : (int)left_ms;
}

static int trace_loop(struct tracer *t, struct xerr *e)
{
	const struct tracer_config *cfg = t->cfg;
	/* The asked duration is traced time: it starts once the probes are
	 * armed and the target resumed (budget_start_ns). Resolving and
	 * arming can take seconds on a loaded machine; counted from before,
	 * they left traces of 0.00 s with no hit. */
	uint64_t traced_from = t->budget_start_ns ? t->budget_start_ns : t->tracer_start_ns;
	struct loop_clock lc = {
		.deadline = cfg->duration_s > 0 ? traced_from + (uint64_t)(cfg->duration_s * 1e9) : 0,
	};
	int rc = 0;
	while (rc == 0) {
		bool over;
		rc = check_trace_end(t, &lc, monotonic_ns(), &over, e);
		if (over)
			break;
		struct mi_record *ev = NULL;
		int got = session_wait_event(t->s, wait_ms(t), &ev, e);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			continue;
		rc = trace_event(t, ev, monotonic_ns(), &over, e);
		if (over)
			break;
	}
	return rc;
}

/* The exit path, whatever ended the trace: heal the target if gdb died,
 * else take every breakpoint out; then the notes on forks and exec, and the
 * figures. Returns rc, or -1 with e when that failed on a clean run. */
static int tracer_end(struct tracer *t, int rc, struct xerr *e)
{
	struct session *s = t->s;
	struct tracer_stats *stats = t->st;
	struct xerr local;
	uint64_t end = monotonic_ns();
	if (gdb_gone(t)) {
		stats->gdb_died = true;
		if (session_rescue(s, &stats->restore, &local) < 0)
			run_notes_add(&stats->run.notes, "%s", local.msg);
		if (rc == 0)
			rc = xerr_set(e, "gdb died during the trace");
	} else if (!stats->run.target_exited && disarm(t, rc < 0 ? &local : e) < 0) {
		if (rc == 0)
			rc = -1;
		else
			run_notes_add(&stats->run.notes, "removing breakpoints: %s", local.msg);
	}
	session_on_fork(s, NULL, NULL);
	stats->forks = session_forks(s);
	stats->fork_bytes_healed = t->fork_bytes_healed;
	if (stats->forks)
		run_notes_add(&stats->run.notes, "the target forked %lu time%s during the trace: each child was detached untraced%s",
			 stats->forks, stats->forks == 1 ? "" : "s",
			 t->fork_bytes_healed ? " (xgdbprof removed the int3 bytes a child had inherited)" : "");
	if (session_exec_path(s)) {
		stats->run.target_execed = true;
		snprintf(stats->run.exec_path, sizeof stats->run.exec_path, "%s", session_exec_path(s));
		run_notes_add(&stats->run.notes, "the target exec'd %s: the trace ended at the exec (what was "
			      "collected before it is reported); the new program runs on untraced, with no breakpoint",
			      stats->run.exec_path);
	}
	finish_stats(t, end);
	return rc;
}

int tracer_run(struct session *s, struct symbolizer *sym, const struct tracer_config *cfg,
	       const struct event_sink *sink, struct tracer_stats *stats, struct xerr *e)
{
	memset(stats, 0, sizeof *stats);
	struct tracer *t = calloc(1, sizeof *t);
	if (!t)
		return xerr_set(e, "out of memory");
	t->s = s;
	t->sym = sym;
	t->sink = sink;
	t->cfg = cfg;
	t->st = stats;
	t->pid = session_pid(s);
	t->non_stop = session_non_stop(s);
	stats->non_stop = t->non_stop;
	t->tracer_start_ns = monotonic_ns();
	stats->attach_hold_s = session_attach_hold_ms(s) / 1e3;
	t->start_ns = cfg->start_ns ? cfg->start_ns : t->tracer_start_ns;
	int rc = tracer_start(t, e);
	if (rc == 0)
		rc = trace_loop(t, e);
	rc = tracer_end(t, rc, e);
	tracer_release(t);
	free(t);
	return rc;
}
