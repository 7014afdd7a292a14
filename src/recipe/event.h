/* event.h — what the sampler and the tracer feed to a running recipe.
 *
 * Contract: the producer (session, sampler, tracer, or a test) fills one
 * `struct recipe_event` per occurrence and hands it to recipe_run_event().
 * Everything the event points to (strings, the stack) only needs to live for
 * the duration of that call: the evaluator copies whatever it keeps (map keys).
 * Fields that make no sense for a kind are ignored (leave them zero/NULL).
 *
 *  kind             what happened (see enum below).
 *  probe            index of the probe that fired, as listed by recipe_probe();
 *                   -1 means "every probe of this kind whose spec matches"
 *                   (BEGIN, END, SAMPLE and PANIC always use -1 semantics).
 *  timestamp_ns     CLOCK_MONOTONIC time of the event (builtin `nsecs`).
 *  since_start_ns   time since the recipe started (builtin `uptime`).
 *  thread           the thread concerned: id (TID), name, state letter as in
 *                   /proc/PID/task/TID/stat ('R', 'S', 'D', ...).
 *  stack            the thread's stack, leaf first; NULL if none was taken.
 *  function         the probed function (entry/return) — else `func` is the
 *                   stack's leaf function.
 *  elapsed_ns       FUNCTION_RETURN: time since the matching entry;
 *                   SYSCALL_RETURN: duration of the system call.
 *  retval           FUNCTION_RETURN: the return value as gdb printed it.
 *  arg, arg_ctx     FUNCTION_ENTRY: looks up an argument by name. Returns 0
 *                   and fills *out, or -1 if there is no such argument.
 *  panic_*          PANIC: message and "file:line:col" location.
 *  syscall_*        SYSCALL_ENTRY/RETURN: number, name, result (return only).
 */
#ifndef XGDBPROF_EVENT_H
#define XGDBPROF_EVENT_H

#include <stdint.h>

#include "util/stack.h"

enum recipe_event_kind {
	RECIPE_EV_BEGIN,
	RECIPE_EV_END,
	RECIPE_EV_SAMPLE,
	RECIPE_EV_INTERVAL,
	RECIPE_EV_FUNCTION_ENTRY,
	RECIPE_EV_FUNCTION_RETURN,
	RECIPE_EV_PANIC,
	RECIPE_EV_SYSCALL_ENTRY,
	RECIPE_EV_SYSCALL_RETURN,
};

enum recipe_value_type {
	RECIPE_VAL_NONE,
	RECIPE_VAL_INT,     /* i (also booleans and durations in ns) */
	RECIPE_VAL_STR,     /* s, NUL-terminated */
	RECIPE_VAL_STACK,   /* stack */
};

/* A value crossing the interface. Strings and stacks are borrowed. */
struct recipe_value {
	enum recipe_value_type type;
	int64_t i;
	const char *s;
	const struct stack *stack;
};

struct recipe_event_thread {
	int64_t id;
	const char *name;
	char state;
};

struct recipe_event {
	enum recipe_event_kind kind;
	int probe;
	uint64_t timestamp_ns;
	uint64_t since_start_ns;
	int64_t pid;
	int cpu;
	struct recipe_event_thread thread;
	const struct stack *stack;
	const char *function;
	uint64_t elapsed_ns;
	const char *retval;
	int (*arg)(void *ctx, const char *name, struct recipe_value *out);
	void *arg_ctx;
	const char *panic_message;
	const char *panic_location;
	int64_t syscall_nr;
	const char *syscall_name;
	int64_t syscall_result;
};

#endif
