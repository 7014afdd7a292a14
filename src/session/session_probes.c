/* session_probes.c — probes.h's typed calls: the MI commands behind
 * breakpoints, catchpoints, disassembly and evaluation, and the stop
 * records read into struct session_stop. */
#include "session/probes.h"
#include "arch/insn.h"
#include "session/session_internal.h"
#include "util/array.h"
#include "util/clock.h"

#include "mi_record.h"
#include "mi_value.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int break_number(const struct mi_record *res)
{
	long long n = -1;
	mi_value_get_int(mi_value_get(res->results, "bkpt"), "number", &n);
	return n > 0 && n <= INT32_MAX ? (int)n : -1;
}

int session_break_insert(struct session *s, uint64_t addr, int *number, struct xerr *e)
{
	char location[32];
	snprintf(location, sizeof location, "*0x%" PRIx64, addr);
	const char *args[] = { location, NULL };
	struct mi_record *res = NULL;
	if (session_call(s, &res, e, "-break-insert", args) < 0)
		return xerr_prefix(e, "inserting a breakpoint at 0x%" PRIx64, addr);
	int n = break_number(res);
	mi_record_free(res);
	if (n <= 0)
		return xerr_set(e, "gdb gave no breakpoint number for 0x%" PRIx64, addr);
	*number = n;
	return 0;
}

int session_break_insert_once(struct session *s, uint64_t addr, int gdb_thread, int *number, struct xerr *e)
{
	char location[32], thread[16];
	snprintf(location, sizeof location, "*0x%" PRIx64, addr);
	snprintf(thread, sizeof thread, "%d", gdb_thread);
	const char *args[] = { "-t", "-p", thread, location, NULL };
	struct mi_record *res = NULL;
	if (session_call(s, &res, e, "-break-insert", args) < 0)
		return -1;
	int n = break_number(res);
	mi_record_free(res);
	if (n <= 0)
		return xerr_set(e, "gdb gave no breakpoint number for 0x%" PRIx64, addr);
	*number = n;
	return 0;
}

/* One MI command over a list of breakpoint numbers, 64 to a command. */
static int breaks_command(struct session *s, const char *command, const int *numbers, size_t n, struct xerr *e)
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
		if (session_call(s, NULL, e, command, args) < 0)
			return -1;
	}
	return 0;
}

int session_breaks_enable(struct session *s, const int *numbers, size_t n, struct xerr *e)
{
	return breaks_command(s, "-break-enable", numbers, n, e);
}

int session_breaks_disable(struct session *s, const int *numbers, size_t n, struct xerr *e)
{
	return breaks_command(s, "-break-disable", numbers, n, e);
}

int session_breaks_delete(struct session *s, const int *numbers, size_t n, struct xerr *e)
{
	return breaks_command(s, "-break-delete", numbers, n, e);
}

int session_catch_syscalls(struct session *s, const int *nrs, size_t n, int *number, struct xerr *e)
{
	/* gdb/MI has no -catch-syscall: the console command, built from
	 * numbers only. */
	char command[8192] = "catch syscall";
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(command);
		if (used + 16 >= sizeof command)
			return xerr_set(e, "too many system calls in one probe");
		snprintf(command + used, sizeof command - used, " %d", nrs[i]);
	}
	const char *args[] = { "console", command, NULL };
	struct mi_record *res = NULL;
	if (session_call(s, &res, e, "-interpreter-exec", args) < 0)
		return xerr_prefix(e, "catching system calls");
	int got = 0;
	const char *text = res->console ? strstr(res->console, "Catchpoint ") : NULL;
	if (text)
		got = atoi(text + strlen("Catchpoint "));
	mi_record_free(res);
	if (got <= 0)
		return xerr_set(e, "gdb did not confirm the system call catchpoint");
	*number = got;
	return 0;
}

int session_read_memory(struct session *s, uint64_t addr, void *buf, size_t n, struct xerr *e)
{
	char from[32], count[32];
	snprintf(from, sizeof from, "0x%" PRIx64, addr);
	snprintf(count, sizeof count, "%zu", n);
	const char *args[] = { from, count, NULL };
	struct mi_record *res = NULL;
	if (session_call(s, &res, e, "-data-read-memory-bytes", args) < 0)
		return -1;
	const struct mi_value *blocks = mi_value_get(res->results, "memory");
	const struct mi_value *block = mi_value_count(blocks) == 1 ? mi_value_at(blocks, 0) : NULL;
	const char *hex = block ? mi_value_get_string(block, "contents") : NULL;
	const char *begin = block ? mi_value_get_string(block, "begin") : NULL;
	int rc = 0;
	if (!hex || !begin || strtoull(begin, NULL, 0) != addr || strlen(hex) != 2 * n) {
		rc = xerr_set(e, "gdb could not read %zu bytes at 0x%" PRIx64, n, addr);
	} else {
		for (size_t i = 0; i < n; i++) {
			char pair[3] = { hex[2 * i], hex[2 * i + 1], 0 };
			((unsigned char *)buf)[i] = (unsigned char)strtoul(pair, NULL, 16);
		}
	}
	mi_record_free(res);
	return rc;
}

/* buf's n bytes as -data-write-memory-bytes takes them: two hex digits
 * each (malloc'd; NULL when out of memory). */
static char *memory_hex(const void *buf, size_t n)
{
	char *hex = malloc(n * 2 + 1);
	for (size_t i = 0; hex && i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)buf)[i]);
	if (hex)
		hex[2 * n] = 0;
	return hex;
}

int session_write_memory(struct session *s, uint64_t addr, const void *buf, size_t n, struct xerr *e)
{
	char at[32];
	char *hex = memory_hex(buf, n);
	if (!hex)
		return xerr_oom(e);
	snprintf(at, sizeof at, "0x%" PRIx64, addr);
	const char *args[] = { at, hex, NULL };
	int rc = session_call(s, NULL, e, "-data-write-memory-bytes", args);
	free(hex);
	return rc;
}

int session_write_memory_batch(struct session *s, struct session_memory_write *w, size_t n, struct xerr *e)
{
	if (n == 0)
		return 0;
	struct mi_batch_call *batch = calloc(n, sizeof *batch);
	char **hex = calloc(n, sizeof *hex);
	char (*at)[32] = calloc(n, sizeof *at);
	const char *(*args)[3] = calloc(n, sizeof *args);
	int rc = 0;
	for (size_t i = 0; batch && hex && at && args && i < n; i++) {
		if (!(hex[i] = memory_hex(w[i].buf, w[i].n)))
			break;
		snprintf(at[i], sizeof at[i], "0x%" PRIx64, w[i].addr);
		args[i][0] = at[i];
		args[i][1] = hex[i];
		args[i][2] = NULL;
		batch[i] = (struct mi_batch_call){ .command = "-data-write-memory-bytes", .args = args[i] };
	}
	if (!batch || !hex || !at || !args || !hex[n - 1]) {
		rc = xerr_oom(e);
	} else {
		struct mi_error me;
		double t0 = monotonic_ms();
		int got = mi_conn_call_batch(s->gdb, s->timeout_ms, batch, n, &me);
		if (s->verbose)
			fprintf(stderr, "xgdbprof: mi -data-write-memory-bytes x %zu: %.3f ms%s\n", n, monotonic_ms() - t0,
				got < 0 ? " (error)" : "");
		/* as session_gdb_callv: a write gdb never answered leaves the
		 * target's code in doubt, so gdb is given up on (which heals it) */
		if (got < 0 && !batch[n - 1].result && mi_conn_alive(s->gdb))
			session_give_up_on_gdb(s, "answer -data-write-memory-bytes");
		if (got < 0 && !mi_conn_alive(s->gdb))
			session_on_gdb_lost(s);
		for (size_t i = 0; i < n; i++)
			w[i].rc = batch[i].rc;
		if (got < 0)
			rc = xerr_set(e, "%s", me.message);
	}
	for (size_t i = 0; batch && i < n; i++)
		mi_record_free(batch[i].result);
	for (size_t i = 0; hex && i < n; i++)
		free(hex[i]);
	free(batch);
	free(hex);
	free(at);
	free(args);
	return rc;
}

int session_catch_fork(struct session *s, struct xerr *e)
{
	const char *args[] = { "console", "catch fork", NULL };
	if (session_call(s, NULL, e, "-interpreter-exec", args) < 0)
		return xerr_prefix(e, "catching forks");
	s->catching_forks = true;
	return 0;
}

int session_disassemble(struct session *s, uint64_t from, uint64_t to, struct session_insn *out, size_t max,
			struct xerr *e)
{
	char from_text[32], to_text[32];
	snprintf(from_text, sizeof from_text, "0x%" PRIx64, from);
	snprintf(to_text, sizeof to_text, "0x%" PRIx64, to);
	const char *args[] = { "-s", from_text, "-e", to_text, "--", "0", NULL };
	struct mi_record *res = NULL;
	if (session_call(s, &res, e, "-data-disassemble", args) < 0)
		return -1;
	const struct mi_value *insns = mi_value_get(res->results, "asm_insns");
	size_t n = mi_value_count(insns);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		const struct mi_value *insn = mi_value_at(insns, i);
		const char *text = mi_value_get_string(insn, "inst");
		const char *address = mi_value_get_string(insn, "address");
		out[i].addr = address ? strtoull(address, NULL, 0) : 0;
		snprintf(out[i].text, sizeof out[i].text, "%s", text ? text : "");
	}
	mi_record_free(res);
	return (int)n;
}

int session_disassemble_all(struct session *s, uint64_t from, uint64_t to, struct session_insn **out, size_t *n,
			    struct xerr *e)
{
	enum { CHUNK = 256 };
	struct session_insn *insns = NULL;
	size_t count = 0, cap = 0;
	uint64_t at = from;
	*out = NULL;
	*n = 0;
	while (at < to) {
		struct session_insn *grown = array_grow(insns, &cap, count + CHUNK, sizeof *insns);
		if (!grown) {
			free(insns);
			return xerr_oom(e);
		}
		insns = grown;
		int got = session_disassemble(s, at, to, insns + count, CHUNK, e);
		if (got < 0) {
			free(insns);
			return -1;
		}
		/* A full listing may have been cut: its last instruction starts
		 * the next call (gdb gives no length), unless it was the only one. */
		if (got < CHUNK || got < 2) {
			count += (size_t)got;
			break;
		}
		count += (size_t)got - 1;
		at = insns[count].addr;
	}
	*out = insns;
	*n = count;
	return 0;
}

bool session_insns_branch_into(const struct session_insn *insns, size_t n, uint64_t lo, uint64_t hi, uint64_t *from)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t to;
		if (arch_insn_direct_target(insns[i].text, &to) && to > lo && to < hi) {
			if (from)
				*from = insns[i].addr;
			return true;
		}
	}
	return false;
}

int session_evaluate(struct session *s, int gdb_thread, int frame, const char *expr, char **value,
		     struct xerr *e)
{
	char thread[16], frame_text[16];
	snprintf(thread, sizeof thread, "%d", gdb_thread);
	snprintf(frame_text, sizeof frame_text, "%d", frame);
	const char *args[] = { "--thread", thread, "--frame", frame_text, expr, NULL };
	struct mi_record *res = NULL;
	*value = NULL;
	if (session_call(s, &res, e, "-data-evaluate-expression", args) < 0)
		return -1;
	const char *text = mi_value_get_string(res->results, "value");
	*value = text ? strdup(text) : NULL;
	mi_record_free(res);
	if (!*value)
		return text ? xerr_oom(e) : xerr_set(e, "gdb gave no value for %s", expr);
	return 0;
}

int session_interrupt_all(struct session *s, struct xerr *e)
{
	const char *args[] = { "--all", NULL };
	return session_call(s, NULL, e, "-exec-interrupt", args);
}

static enum session_stop_reason stop_reason(const char *reason)
{
	if (!reason)
		return SESSION_STOP_OTHER;
	if (strcmp(reason, "breakpoint-hit") == 0)
		return SESSION_STOP_BREAKPOINT;
	if (strcmp(reason, "syscall-entry") == 0)
		return SESSION_STOP_SYSCALL_ENTRY;
	if (strcmp(reason, "syscall-return") == 0)
		return SESSION_STOP_SYSCALL_RETURN;
	if (strcmp(reason, "signal-received") == 0)
		return SESSION_STOP_SIGNAL;
	/* exited, exited-normally, exited-signalled */
	if (strncmp(reason, "exited", 6) == 0)
		return SESSION_STOP_EXITED;
	if (strcmp(reason, "exec") == 0)
		return SESSION_STOP_EXEC;
	if (strcmp(reason, "fork") == 0 || strcmp(reason, "vfork") == 0)
		return SESSION_STOP_FORK;
	return SESSION_STOP_OTHER;
}

static int copy_or_null(const char *text, char **out)
{
	*out = text ? strdup(text) : NULL;
	return text && !*out ? -1 : 0;
}

int session_stop_from_record(const struct mi_record *ev, struct session_stop *out, struct xerr *e)
{
	memset(out, 0, sizeof *out);
	out->syscall_nr = -1;
	if (ev->kind != MI_RECORD_EXEC || strcmp(ev->klass, "stopped") != 0) {
		out->reason = SESSION_STOP_NONE;
		return 0;
	}
	out->reason = stop_reason(mi_value_get_string(ev->results, "reason"));
	const char *thread = mi_value_get_string(ev->results, "thread-id");
	out->gdb_thread = thread ? atoi(thread) : 0;
	if (out->reason == SESSION_STOP_BREAKPOINT) {
		long long bkptno = 0;
		mi_value_get_int(ev->results, "bkptno", &bkptno);
		out->breakpoint = bkptno > 0 && bkptno <= INT32_MAX ? (int)bkptno : 0;
	}
	if (out->reason == SESSION_STOP_SYSCALL_ENTRY || out->reason == SESSION_STOP_SYSCALL_RETURN) {
		mi_value_get_int(ev->results, "syscall-number", &out->syscall_nr);
		if (copy_or_null(mi_value_get_string(ev->results, "syscall-name"), &out->syscall_name) < 0)
			goto oom;
	}
	if (out->reason == SESSION_STOP_SIGNAL &&
	    copy_or_null(mi_value_get_string(ev->results, "signal-name"), &out->signal_name) < 0)
		goto oom;
	const struct mi_value *args = mi_value_get(mi_value_get(ev->results, "frame"), "args");
	size_t n = mi_value_count(args);
	if (n) {
		out->frame_args = calloc(n, sizeof *out->frame_args);
		if (!out->frame_args)
			goto oom;
		for (size_t i = 0; i < n; i++) {
			const char *name = mi_value_get_string(mi_value_at(args, i), "name");
			if (!name)
				continue;
			if (copy_or_null(name, &out->frame_args[out->nframe_args]) < 0)
				goto oom;
			out->nframe_args++;
		}
	}
	return 0;
oom:
	session_stop_release(out);
	return xerr_oom_doing(e, "reading a stop record");
}

void session_stop_release(struct session_stop *stop)
{
	free(stop->syscall_name);
	free(stop->signal_name);
	for (size_t i = 0; i < stop->nframe_args; i++)
		free(stop->frame_args[i]);
	free(stop->frame_args);
	memset(stop, 0, sizeof *stop);
	stop->syscall_nr = -1;
}

int session_wait_stop(struct session *s, int timeout_ms, struct session_stop *out, struct xerr *e)
{
	struct mi_record *ev = NULL;
	memset(out, 0, sizeof *out);
	out->syscall_nr = -1;
	s->idle_wait = true;
	int got = session_wait_event(s, timeout_ms, &ev, e);
	s->idle_wait = false;
	if (got == 0)
		return session_heal_unreported_stop(s, e);
	if (got < 0)
		return got;
	int rc = session_stop_from_record(ev, out, e);
	mi_record_free(ev);
	return rc < 0 ? -1 : 1;
}
