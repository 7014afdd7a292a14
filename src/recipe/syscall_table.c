/* syscall_table.c — system calls summarised in strace -c's columns
 * (syscall_table.h). */
#include "recipe/syscall_table.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/syscalls.h"
#include "util/text_escape.h"

struct syscall_row {
	const char *name;
	const struct map_entry *calls;   /* NULL: only counted at its wrapper, never seen */
	int64_t ncalls, time_ns, nerrors;
	double counted;                  /* the calls counted at its glibc wrappers, then the whole-run
					  * estimate (the order among rows seen alike) */
	char estimate[32];
};

/* glibc's system call wrappers (x86-64, glibc 2.36) whose every call makes
 * the one system call named, counted in the target by the syscalls
 * recipe's count-only probe; `syscall()` is not here (futex and any other
 * call go through it), nor calls glibc makes inline (its own futexes, the
 * _nocancel variants). */
static const struct wrapper_call {
	const char *wrapper, *call;
} WRAPPERS[] = {
	{ "read", "read" }, { "write", "write" }, { "pread64", "pread64" }, { "pwrite64", "pwrite64" },
	{ "readv", "readv" }, { "writev", "writev" }, { "open", "openat" }, { "openat", "openat" },
	{ "close", "close" }, { "fsync", "fsync" }, { "fdatasync", "fdatasync" }, { "sched_yield", "sched_yield" },
	{ "__clock_nanosleep", "clock_nanosleep" }, { "epoll_wait", "epoll_wait" }, { "poll", "poll" },
	{ "recvfrom", "recvfrom" }, { "sendto", "sendto" }, { "accept4", "accept4" }, { "madvise", "madvise" },
	{ "mmap", "mmap" }, { "munmap", "munmap" }, { "mprotect", "mprotect" }, { "mremap", "mremap" },
	{ "brk", "brk" }, { "rename", "rename" }, { "unlink", "unlink" },
};

static const char *call_of_wrapper(const char *wrapper)
{
	for (size_t i = 0; wrapper && i < sizeof WRAPPERS / sizeof WRAPPERS[0]; i++)
		if (!strcmp(WRAPPERS[i].wrapper, wrapper))
			return WRAPPERS[i].call;
	return NULL;
}

static int by_time_then_calls(const void *a, const void *b)
{
	const struct syscall_row *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (x->ncalls != y->ncalls)
		return x->ncalls > y->ncalls ? -1 : 1;
	if (x->counted != y->counted)
		return x->counted > y->counted ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int64_t number_for(const struct map *m, const struct map_entry *row)
{
	const struct map_entry *e = m ? map_find(m, row->keys) : NULL;
	return e ? map_entry_number(m, e) : 0;
}

/* The whole-run estimate of a row's calls, as map_table gives it; true
 * when it is only a lower bound. */
static bool estimate_calls(const struct map_coverage *c, const struct map_entry *e, int64_t n, double *out)
{
	double est, lo, hi;
	map_coverage_estimate(c, n, &est, &lo, &hi);
	if (map_coverage_too_few_windows(c, &e->value)) {
		*out = (double)n;
		return true;
	}
	*out = c->lower_bound ? lo : est;
	return c->lower_bound;
}

/* "errors of futex: ETIMEDOUT 530, EAGAIN 7": a row's errors by errno,
 * most first, on a line of its own under the table (the row's last field
 * stays the call's name, as in strace's). */
static void put_error_kinds(FILE *out, const struct map *kinds, const struct map_entry **sorted, const char *name)
{
	bool any = false;
	for (size_t i = map_len(kinds); i-- > 0;) {
		const struct map_entry *e = sorted[i];
		if (!e->keys[0].s || strcmp(e->keys[0].s, name) != 0)
			continue;
		if (!any) {
			fputs("errors of ", out);
			text_put(out, name, TEXT_FORM_TERMINAL);
			fputs(":", out);
		}
		fputs(any ? ", " : " ", out);
		text_put(out, e->keys[1].s ? e->keys[1].s : "?", TEXT_FORM_TERMINAL);
		fprintf(out, " %" PRId64, map_entry_number(kinds, e));
		any = true;
	}
	if (any)
		fputc('\n', out);
}

static void put_rule(FILE *out, bool estimated, int est_width)
{
	fputs("------ ----------- ----------- --------- --------- ", out);
	if (estimated) {
		for (int i = 0; i < est_width; i++)
			fputc('-', out);
		fputc(' ', out);
	}
	fputs("----------------\n", out);
}

/* One row in strace's columns: the share of total_ns, seconds, usecs per
 * call, calls, errors (blank when none), the estimate when estimated, then
 * the name (target text: escaped). */
static void put_row(FILE *out, int64_t time_ns, int64_t total_ns, int64_t calls, int64_t errors,
		    const char *estimate, int est_width, const char *name)
{
	char errors_text[24] = "";
	if (errors > 0)
		snprintf(errors_text, sizeof errors_text, "%" PRId64, errors);
	fprintf(out, "%6.2f %11.6f %11" PRId64 " %9" PRId64 " %9s ",
		total_ns > 0 ? 100.0 * (double)time_ns / (double)total_ns : 0.0, (double)time_ns / 1e9,
		calls > 0 ? time_ns / calls / 1000 : 0, calls, errors_text);
	if (estimate)
		fprintf(out, "%*s ", est_width, estimate);
	text_put(out, name, TEXT_FORM_TERMINAL);
	fputc('\n', out);
}

/* The row named name, added (seen in no window) when absent. */
static struct syscall_row *row_named(struct syscall_row *rows, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	rows[*n].name = name;
	return &rows[(*n)++];
}

/* What syscall()'s calls were, from @numbers' entry for it: their count
 * and the total of their first argument, both kept in the target. */
struct through_syscall {
	bool known;
	double calls, numbers;
	const char *call;      /* every call's number was this one's (the total is calls x it) */
};

static struct through_syscall through_syscall_of(const struct map *numbers, const struct map_coverage *c)
{
	struct through_syscall t = { 0 };
	for (size_t i = 0; numbers && i < map_len(numbers); i++) {
		const struct map_entry *e = map_entry_at(numbers, i);
		if (!e->keys[0].s || strcmp(e->keys[0].s, "syscall") != 0 ||
		    !map_value_only_counted(&e->value, false, c, &t.calls) ||
		    !map_value_only_counted(&e->value, true, c, &t.numbers) || t.calls < 1)
			continue;
		t.known = true;
		/* a total of exactly calls x N: each call's number N, or a mix
		 * of others averaging it to the unit, which no service is seen
		 * to make (its futex calls and one odd getrandom give a mean
		 * off the integer) */
		double mean = t.numbers / t.calls;
		int64_t nr = (int64_t)(mean + 0.5);
		if ((double)nr * t.calls == t.numbers)
			t.call = arch_syscall_name(nr);
	}
	return t;
}

void syscall_table_report(const struct map *time_ns, const struct map *calls, const struct map *errors,
			  const struct map *kinds, const struct map *counted, const struct map *numbers,
			  const struct map *at_sites, FILE *out, const struct map_coverage *coverage)
{
	bool estimated = coverage && coverage->armed_share > 0 && coverage->armed_share < 1;
	size_t n_seen = map_len(calls), n_counted = estimated && counted ? map_len(counted) : 0, n = 0;
	size_t n_sites = estimated && at_sites ? map_len(at_sites) : 0;
	struct through_syscall through = estimated ? through_syscall_of(numbers, coverage) : (struct through_syscall){ 0 };
	struct syscall_row *rows = calloc(n_seen + n_counted + n_sites + 2, sizeof *rows);
	bool *exact = calloc(n_seen + n_counted + n_sites + 2, sizeof *exact);
	if (!rows || !exact) {
		free(rows);
		free(exact);
		fputs("(out of memory printing the system call table)\n", out);
		return;
	}
	int64_t total_time = 0, total_calls = 0, total_errors = 0;
	for (size_t i = 0; i < n_seen; i++) {
		struct syscall_row *r = &rows[n++];
		r->calls = map_entry_at(calls, i);
		r->name = r->calls->keys[0].s ? r->calls->keys[0].s : "?";
		r->ncalls = map_entry_number(calls, r->calls);
		r->time_ns = number_for(time_ns, r->calls);
		r->nerrors = number_for(errors, r->calls);
		total_time += r->time_ns;
		total_calls += r->ncalls;
		total_errors += r->nerrors;
	}
	/* the wrappers' counts, by the call each makes. (The calls seen of
	 * the others, scaled by the wrapped calls counted per one seen, came
	 * out 0.17x and 6x of futex's truth on kvservice in two runs: the
	 * windows do not see each kind of call at one share, and our stops
	 * make restart_syscall calls no wrapper counts. Those keep the armed
	 * share's estimate.) */
	for (size_t i = 0; i < n_counted; i++) {
		const struct map_entry *e = map_entry_at(counted, i);
		const char *call = call_of_wrapper(e->keys[0].s);
		double count;
		if (!call || !map_value_only_counted(&e->value, false, coverage, &count))
			continue;
		struct syscall_row *r = row_named(rows, &n, call);
		exact[r - rows] = true;
		r->counted += count;
	}
	if (through.call) {
		struct syscall_row *r = row_named(rows, &n, through.call);
		exact[r - rows] = true;
		r->counted += through.calls;
	}
	/* the calls glibc makes inline, counted where its code makes them */
	bool any_at_sites = false;
	for (size_t i = 0; i < n_sites; i++) {
		const struct map_entry *e = map_entry_at(at_sites, i);
		double count;
		if (!e->keys[0].s || arch_syscall_number(e->keys[0].s) < 0 ||
		    !map_value_only_counted(&e->value, false, coverage, &count))
			continue;
		struct syscall_row *r = row_named(rows, &n, e->keys[0].s);
		exact[r - rows] = true;
		r->counted += count;
		any_at_sites = true;
	}
	double total_estimate = 0;
	bool total_bounded = false, any_exact = false, any_share = false;
	int est_width = (int)strlen("est. calls");
	for (size_t i = 0; estimated && i < n; i++) {
		struct syscall_row *r = &rows[i];
		double est;
		const char *mark = "";
		if (exact[i]) {
			est = r->counted;
			any_exact = true;
		} else {
			any_share = true;
			if (estimate_calls(coverage, r->calls, r->ncalls, &est)) {
				mark = ">=";
				total_bounded = true;
			}
		}
		r->counted = est;
		snprintf(r->estimate, sizeof r->estimate, "%s%.0f", mark, est);
		total_estimate += est;
		if ((int)strlen(r->estimate) > est_width)
			est_width = (int)strlen(r->estimate);
	}
	qsort(rows, n, sizeof *rows, by_time_then_calls);
	char total_est[32] = "";
	if (estimated) {
		snprintf(total_est, sizeof total_est, "%s%.0f", total_bounded ? ">=" : "", total_estimate);
		if ((int)strlen(total_est) > est_width)
			est_width = (int)strlen(total_est);
	}

	fprintf(out, "%6s %11s %11s %9s %9s ", "% time", "seconds", "usecs/call", "calls", "errors");
	if (estimated)
		fprintf(out, "%*s ", est_width, "est. calls");
	fputs("syscall\n", out);
	put_rule(out, estimated, est_width);
	for (size_t i = 0; i < n; i++) {
		const struct syscall_row *r = &rows[i];
		put_row(out, r->time_ns, total_time, r->ncalls, r->nerrors, estimated ? r->estimate : NULL, est_width,
			r->name);
	}
	if (!n)
		fputs("(no system calls seen)\n", out);
	put_rule(out, estimated, est_width);
	put_row(out, total_time, total_time, total_calls, total_errors, estimated ? total_est : NULL, est_width, "total");
	const struct map_entry **kinds_sorted = kinds && map_nkeys(kinds) == 2 ? map_sorted(kinds) : NULL;
	for (size_t i = 0; kinds_sorted && i < n; i++)
		if (rows[i].calls && (rows[i].nerrors > 0 || !errors))
			put_error_kinds(out, kinds, kinds_sorted, rows[i].name);
	free(kinds_sorted);
	fputs("seconds: wall clock from each call's entry to its return as gdb reported them, our stops taken out "
	      "(strace -c -w's measure); a call that takes less than gdb takes to report its return (~1 ms) shows "
	      "that delay, not the kernel's time\n", out);
	if (estimated) {
		fputs("est. calls: the whole run", out);
		if (any_exact)
			fputs(any_at_sites ? "; N: counted in the target at glibc's wrapper for the call and at the sites "
					     "where glibc's code makes it inline (exact for the calls made there)"
					   : "; N: counted in the target at glibc's wrapper for the call (exact for the calls "
					     "made through it; glibc's own inline calls are not in it)", out);
		if (through.call) {
			fputs("; ", out);
			text_put(out, through.call, TEXT_FORM_TERMINAL);
			fprintf(out, "'s N: the %.0f calls into syscall(), counted in the target with their numbers summed "
				"(%.0f: %.0f x its number, so every one was that call)", through.calls, through.numbers,
				through.calls);
		}
		if (any_share)
			fprintf(out, "%s from the %.2g%% of the target's CPU time the probes were armed",
				any_exact ? "; the others (calls glibc makes inline, calls through syscall() of mixed "
					    "numbers: no wrapper of their own)" : ",", 100 * coverage->armed_share);
		fputs(" (the other columns are what the armed windows saw)", out);
		if (total_bounded)
			fputs("; >=N only a lower bound: too little CPU time between calls to time them against our "
			      "stops, or seen in too few armed windows to extrapolate", out);
		fputs("\n", out);
		if (through.known && !through.call)
			fprintf(out, "syscall(): %.0f calls counted in the target, their numbers summing to %.0f (a mean of "
				"%.2f): calls of more than one number, not attributed to any row\n",
				through.calls, through.numbers, through.numbers / through.calls);
	}
	free(rows);
	free(exact);
}
