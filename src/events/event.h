/* event.h — the one event stream: what the producers (the sampler, the
 * tracer, the command's clock) hand to the one consumer (a running recipe,
 * through the command that wires them), and the probe specs the producers
 * arm.
 *
 * Contract: a producer fills one `struct event` per occurrence and hands it
 * to event_sink_take(). Everything the event points to (strings, the
 * stack, the PCs) only needs to live for the duration of that call: the
 * consumer copies whatever it keeps (map keys). Fields that make no sense
 * for a kind are ignored (leave them zero/NULL).
 *
 *  kind             what happened (see enum below).
 *  probe            index of the probe that fired, in the probe list the
 *                   producer was given; -1 means "every probe of this kind
 *                   whose spec matches" (BEGIN, END, SAMPLE and PANIC
 *                   always use -1 semantics).
 *  timestamp_ns     CLOCK_MONOTONIC time of the event (builtin `nsecs`).
 *  since_start_ns   time since the run started (builtin `uptime`).
 *  target_ns        the target's own clock (builtin `target_nsecs`): timestamp_ns
 *                   less the time the producer's stops have held the event's
 *                   thread so far (every stop in all-stop mode, its own in
 *                   non-stop mode), so the difference of two events of one
 *                   thread is what it lived between them; 0 = timestamp_ns
 *                   (no stops to take out).
 *  window           the armed window the event falls in (builtin `window`):
 *                   the tracer numbers its duty-cycled windows from 1, so two
 *                   events with the same number saw every probe hit between
 *                   them; 0 for producers without windows.
 *  thread           the thread concerned: id (TID), name, state letter as in
 *                   /proc/PID/task/TID/stat ('R', 'S', 'D', ...).
 *  stack            the thread's stack, leaf first; NULL if none was taken.
 *  cpu_ns           SAMPLE: the thread's on-CPU nanoseconds (schedstat) in
 *                   the round before this sample (since its birth if later):
 *                   what this sample stands for in a CPU-time profile. The
 *                   CPU of a round that gave the thread no sample (a stop
 *                   left out, the thread passed over) is spread over all
 *                   its samples at the run's end (weight_only events).
 *  weighted, weight_site, weight  FUNCTION_ENTRY at a site counted in the
 *                   target: its index, and the calls per hit there so far.
 *  walk             SAMPLE: the machine PCs behind the stack (the fast
 *                   walker's, and gdb's when both walked), and whether the
 *                   stack was reused from the thread's previous walk.
 *  function         the probed function (entry/return) — else `func` is the
 *                   stack's leaf function.
 *  elapsed_ns       FUNCTION_RETURN: time since the matching entry;
 *                   SYSCALL_RETURN: duration of the system call.
 *  retval           FUNCTION_RETURN: the return value as gdb printed it.
 *  arg, arg_ctx     FUNCTION_ENTRY: looks up an argument by name. Returns 0
 *                   and fills *out, or -1 if there is no such argument.
 *  int_args         FUNCTION_ENTRY at a function's first instruction (not an
 *                   inlined copy): the six integer argument registers of the
 *                   x86-64 SysV ABI (rdi, rsi, rdx, rcx, r8, r9), exact there
 *                   whatever the debug information; has_int_args says so.
 *  panic_*          PANIC: message and "file:line:col" location.
 *  syscall_*        SYSCALL_ENTRY/RETURN: number, name, result (return only);
 *                   SYSCALL_SITE: number and name (function: the function
 *                   the site lies in).
 *
 * Sinks: take() returns 0 to go on, 1 when the consumer wants the run to
 * end (exit() in a recipe: the producer stops feeding events and returns
 * normally), -1 with e on an error (the producer stops and fails). tick()
 * is called between events, at least every 10 ms (interval probes), with
 * the same return convention; either may be NULL.
 */
#ifndef XGDBPROF_EVENT_H
#define XGDBPROF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/stack.h"

enum event_kind {
	EVENT_BEGIN,
	EVENT_END,
	EVENT_SAMPLE,
	EVENT_INTERVAL,
	EVENT_FUNCTION_ENTRY,
	EVENT_FUNCTION_RETURN,
	EVENT_PANIC,
	EVENT_SYSCALL_ENTRY,
	EVENT_SYSCALL_RETURN,
	EVENT_SYSCALL_SITE,   /* a call made at a `mov $N,%eax ... syscall` site in the code */
};

enum event_value_type {
	EVENT_VAL_NONE,
	EVENT_VAL_INT,     /* i (also booleans and durations in ns) */
	EVENT_VAL_STR,     /* s, NUL-terminated */
	EVENT_VAL_STACK,   /* stack */
};

/* A value crossing the interface. Strings and stacks are borrowed. */
struct event_value {
	enum event_value_type type;
	int64_t i;
	const char *s;
	const struct stack *stack;
};

struct event_thread {
	int64_t id;
	const char *name;
	char state;
	const char *wait;   /* sampling: why it is off the CPU ("futex wait", "sleep", ...), "running", or NULL */
};

struct event {
	enum event_kind kind;
	int probe;
	uint64_t timestamp_ns;
	uint64_t since_start_ns;
	uint64_t target_ns;
	int64_t window;
	int64_t pid;
	int cpu;
	struct event_thread thread;
	uint64_t cpu_ns;
	/* FUNCTION_ENTRY with weighted set: the site's index among the
	 * producer's counted sites (trace/entry_counter.h), whose hits stand
	 * each for an equal share of the calls counted there over the run;
	 * weight is that share as known so far (calls counted / hits);
	 * sum_weight, when > 0, what the value the site's probes sum stands
	 * for (the counter's total of that argument over its hits' values) */
	bool weighted;
	int weight_site;
	double weight, sum_weight;
	/* SAMPLE at a run's end: a share of the CPU a thread used in rounds
	 * that gave it no sample and after its last tick (cpu_ns), on one of
	 * its samples' stacks, in proportion to their weights. Weight, not a sample:
	 * recipes add it only to sums of thread.cpu_ns, and no sample count
	 * grows (sampler.c, weigh_tails). */
	bool weight_only;
	const struct stack *stack;
	struct event_walk {
		const uint64_t *pcs;     /* 0 entries when reused */
		size_t npcs;
		const uint64_t *ref_pcs; /* gdb's PCs when both walkers ran */
		size_t nref_pcs;
		bool reused;
		int partial_regs_agree;  /* both walkers: 1/0 whether the fast walk from rip, rsp and
					  * rbp alone found the same PCs; -1 not tried */
	} walk;
	const char *function;
	uint64_t elapsed_ns;
	const char *retval;
	int (*arg)(void *ctx, const char *name, struct event_value *out);
	void *arg_ctx;
	bool has_int_args;
	int64_t int_args[6];
	const char *panic_message;
	const char *panic_location;
	int64_t syscall_nr;
	const char *syscall_name;
	int64_t syscall_result;
};

/* ---- the probes producers arm --------------------------------------------- */

enum probe_kind {
	PROBE_BEGIN,
	PROBE_END,
	PROBE_SAMPLE,
	PROBE_INTERVAL,
	PROBE_FUNCTION,
	PROBE_RETURN,
	PROBE_PANIC,
	PROBE_SYSCALL,        /* fires when the call returns */
	PROBE_SYSCALL_ENTRY,  /* fires when the call is entered */
	PROBE_SYSCALL_SITE,   /* fires at the code that makes the call (a site in the target's code
			       * that sets the call's number and makes it): counted there */
};

enum probe_spec_kind {
	PROBE_SPEC_NONE,
	PROBE_SPEC_NAME,       /* "sled::tree::Tree::insert": every instance */
	PROBE_SPEC_REGEX,      /* /re/ over demangled names */
	PROBE_SPEC_FILELINE,   /* "src/tree.rs:120" */
};

/* One probe as written in a recipe; strings are borrowed from it. */
struct probe_spec {
	enum probe_kind kind;
	enum probe_spec_kind spec_kind;
	const char *spec;        /* function name, pattern, file:line, syscall name */
	const char *file;        /* FILELINE: the file part ("src/tree.rs"), matched as a path suffix */
	int line;                /* FILELINE: the line part */
	int64_t interval_ns;     /* INTERVAL */
	int recipe_line;         /* where the probe is written */
	bool entry_registers;    /* FUNCTION: reads the argument registers (arg0..arg5), which
				  * only a function's first instruction has: inlined copies are left out */
	bool count_only;         /* FUNCTION, SYSCALL_SITE: no predicate, and its body only counts into
				  * maps keyed by nothing or func (`@calls = count();`; for a
				  * SYSCALL_SITE also syscall.name or syscall.nr), or sums one
				  * argument register there (`@bytes[func] = sum(arg2);`, then
				  * sums_one_arg): the producer may count (and total) the calls
				  * without seeing them one by one (one event at the end, weighted
				  * by their number, its summed argument 1 with that weight the
				  * total: event.sum_weight) */
	/* FUNCTION: every sum() of its body adds the same argument register,
	 * arg<summed_arg> (0..2), directly or through a variable that holds
	 * it: the producer may total that register over every call (the bytes
	 * asked of an allocator) */
	bool sums_one_arg;
	unsigned summed_arg;
};

/* "function", "return", "syscall", ... as a recipe spells the kind. */
const char *probe_kind_name(enum probe_kind k);

/* Whether a probe of this kind needs breakpoints or catchpoints (the
 * tracer's: function, return, panic, syscall entry or return). */
bool probe_kind_traced(enum probe_kind k);

/* ---- the consumer ----------------------------------------------------------- */

struct event_sink {
	void *ctx;
	int (*take)(void *ctx, const struct event *ev, struct xerr *e);
	int (*tick)(void *ctx, uint64_t now_ns, struct xerr *e);
};

/* Hand one event to a sink (0, 1: end the run, -1 with e; see above). */
static inline int event_sink_take(const struct event_sink *sink, const struct event *ev, struct xerr *e)
{
	return sink && sink->take ? sink->take(sink->ctx, ev, e) : 0;
}

static inline int event_sink_tick(const struct event_sink *sink, uint64_t now_ns, struct xerr *e)
{
	return sink && sink->tick ? sink->tick(sink->ctx, now_ns, e) : 0;
}

#endif
