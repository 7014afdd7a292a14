/* builtins.c — the table of the recipe language's builtins (builtins.h);
 * docs/recipes.md, "Builtins", says the same in full. */
#include "recipe/builtins.h"
#include "recipe/recipe_diag.h"

#include <string.h>

#define THREADS "probes that stop a thread (sample, function, return, panic, syscall, syscall_site)"

static const struct recipe_builtin builtins[] = {
	{"ustack", B_USTACK, T_STACK, -1, THREAD_PROBES, THREADS, RECIPE_NEEDS_STACKS,
	 "the thread's stack, leaf first; ustack(n): its n innermost frames"},
	{"func", B_FUNC, T_STR, -1, THREAD_PROBES, THREADS, RECIPE_NEEDS_STACKS,
	 "the probed function, or the stack's leaf function"},
	{"thread.id", B_THREAD_ID, T_INT, -1, THREAD_PROBES, THREADS, 0, "the thread id (TID)"},
	{"tid", B_THREAD_ID, T_INT, -1, THREAD_PROBES, THREADS, 0, "the thread id (TID)"},
	{"thread.name", B_THREAD_NAME, T_STR, -1, THREAD_PROBES, THREADS, 0, "the thread's name"},
	{"thread.state", B_THREAD_STATE, T_STR, -1, THREAD_PROBES, THREADS, 0,
	 "the thread's /proc state letter: R running, S sleeping, D disk wait, ..."},
	{"thread.wait", B_THREAD_WAIT, T_STR, -1, THREAD_PROBES, THREADS, 0,
	 "why the thread is off the CPU, from the system call it sits in"},
	{"thread.cpu_ns", B_THREAD_CPU_NS, T_INT, -1, PROBE_BIT(PROBE_SAMPLE), "sample probes", 0,
	 "on-CPU ns the thread used in the round before this sample"},
	{"cpu", B_CPU, T_INT, -1, THREAD_PROBES, THREADS, 0, "the CPU the thread last ran on"},
	{"pid", B_PID, T_INT, -1, ALL_PROBES, NULL, 0, "the target's process id"},
	{"nsecs", B_NSECS, T_INT, -1, ALL_PROBES, NULL, 0, "a monotonic timestamp, ns"},
	{"uptime", B_UPTIME, T_INT, -1, ALL_PROBES, NULL, 0, "ns since the recipe started"},
	{"vm_data", B_VM_DATA, T_INT, -1, ALL_PROBES, NULL, 0,
	 "the target's writable private memory now (VmData), bytes; -1 when unreadable"},
	{"probe", B_PROBE, T_STR, -1, ALL_PROBES, NULL, 0, "the probe that fired, like function:main"},
	{"elapsed", B_ELAPSED, T_INT, -1, PROBE_BIT(PROBE_RETURN) | PROBE_BIT(PROBE_SYSCALL),
	 "return and syscall probes", 0, "time spent in the call, ns"},
	{"retval", B_RETVAL, T_STR, -1, PROBE_BIT(PROBE_RETURN) | PROBE_BIT(PROBE_SYSCALL),
	 "return and syscall probes", 0, "the return value as gdb prints it; a syscall's result (int)"},
	{"arg", B_ARG, T_STR, 1, PROBE_BIT(PROBE_FUNCTION), "function probes", RECIPE_NEEDS_SYMBOLS,
	 "arg(NAME): a parameter of the probed function at its entry, through gdb"},
	{"arg0", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the first integer argument register (rdi) at the function's entry"},
	{"arg1", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the second integer argument register (rsi) at the function's entry"},
	{"arg2", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the third integer argument register (rdx) at the function's entry"},
	{"arg3", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the fourth integer argument register (rcx) at the function's entry"},
	{"arg4", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the fifth integer argument register (r8) at the function's entry"},
	{"arg5", B_INT_ARG, T_INT, -1, PROBE_BIT(PROBE_FUNCTION), "function probes", 0,
	 "the sixth integer argument register (r9) at the function's entry"},
	{"panic.message", B_PANIC_MESSAGE, T_STR, -1, PROBE_BIT(PROBE_PANIC), "panic probes", 0, "the panic message"},
	{"panic.location", B_PANIC_LOCATION, T_STR, -1, PROBE_BIT(PROBE_PANIC), "panic probes", 0,
	 "file:line:col of the panic"},
	{"syscall.name", B_SYSCALL_NAME, T_STR, -1, PROBE_BIT(PROBE_SYSCALL) | PROBE_BIT(PROBE_SYSCALL_ENTRY) |
	 PROBE_BIT(PROBE_SYSCALL_SITE),
	 "syscall probes", 0, "the system call's name"},
	{"syscall.nr", B_SYSCALL_NR, T_INT, -1, PROBE_BIT(PROBE_SYSCALL) | PROBE_BIT(PROBE_SYSCALL_ENTRY) |
	 PROBE_BIT(PROBE_SYSCALL_SITE),
	 "syscall probes", 0, "the system call's number"},
	{"syscall.error", B_SYSCALL_ERROR, T_STR, -1, PROBE_BIT(PROBE_SYSCALL), "syscall probes (on return)", 0,
	 "the errno name of a failed call (EAGAIN), \"\" for a success"},
	{"int", B_INT, T_INT, 1, ALL_PROBES, NULL, 0, "int(s): a string's number (0x allowed), 0 when none"},
	{"str", B_STR, T_STR, 1, ALL_PROBES, NULL, 0, "str(n): an int as a string"},
	{"strlen", B_STRLEN, T_INT, 1, ALL_PROBES, NULL, 0, "strlen(s): a string's length in bytes"},
	{"count", B_COUNT, T_AGG, 0, ALL_PROBES, NULL, 0, "aggregation: the number of updates"},
	{"sum", B_SUM, T_AGG, 1, ALL_PROBES, NULL, 0, "aggregation: the total of x"},
	{"min", B_MIN, T_AGG, 1, ALL_PROBES, NULL, 0, "aggregation: the smallest x"},
	{"max", B_MAX, T_AGG, 1, ALL_PROBES, NULL, 0, "aggregation: the largest x"},
	{"avg", B_AVG, T_AGG, 1, ALL_PROBES, NULL, 0, "aggregation: the integer mean of x"},
	{"hist", B_HIST, T_AGG, 1, ALL_PROBES, NULL, 0, "aggregation: a power-of-two histogram of x"},
	{"lhist", B_LHIST, T_AGG, 4, ALL_PROBES, NULL, 0, "aggregation: lhist(x, min, max, step), a linear histogram"},
	{"live", B_LIVE, T_AGG, 2, ALL_PROBES, NULL, RECIPE_NEEDS_LIVE_HEAP,
	 "aggregation: live(ptr, size), the allocations still allocated at the end"},
	{"target_nsecs", B_TARGET_NSECS, T_INT, -1, ALL_PROBES, NULL, 0,
	 "nsecs less the time the tracer's stops have held the target"},
	{"window", B_WINDOW, T_INT, -1, ALL_PROBES, NULL, 0, "the tracer's armed window the event falls in, from 1"},
	{"caller", B_CALLER, T_STR, -1, PROBE_BIT(PROBE_FUNCTION) | PROBE_BIT(PROBE_RETURN),
	 "function and return probes", RECIPE_NEEDS_STACKS, "the function the probed one was called from"},
};
#define NBUILTINS (sizeof builtins / sizeof builtins[0])

size_t recipe_builtin_count(void)
{
	return NBUILTINS;
}

const struct recipe_builtin *recipe_builtin_at(size_t i)
{
	return i < NBUILTINS ? &builtins[i] : NULL;
}

const struct recipe_builtin *recipe_builtin_find(const char *name)
{
	for (size_t i = 0; name && i < NBUILTINS; i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

const char *recipe_builtin_closest(const char *word)
{
	const char *names[NBUILTINS + 1];
	for (size_t i = 0; i < NBUILTINS; i++)
		names[i] = builtins[i].name;
	names[NBUILTINS] = NULL;
	return recipe_diag_did_you_mean(word, names);
}

unsigned recipe_builtins_needs(uint64_t used)
{
	unsigned needs = 0;
	for (size_t i = 0; i < NBUILTINS; i++)
		if (used >> builtins[i].id & 1)
			needs |= builtins[i].needs;
	return needs;
}
