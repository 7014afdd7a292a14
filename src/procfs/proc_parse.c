/* proc_parse.c — the text of /proc files into values (see proc_parse.h). */
#include "procfs/proc_parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int proc_parse_stat(const char *text, struct proc_stat *out)
{
	memset(out, 0, sizeof *out);
	out->processor = -1;
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return -1;
	size_t name_len = (size_t)(close - open - 1);
	if (name_len >= sizeof out->comm)
		name_len = sizeof out->comm - 1;
	memcpy(out->comm, open + 1, name_len);
	out->comm[name_len] = '\0';
	out->pid = (pid_t)strtol(text, NULL, 10);
	const char *p = close + 2;
	out->state = *p;
	/* Each space after the state starts the next field. */
	int field = 3;
	for (const char *q = p; *q; q++) {
		if (*q != ' ')
			continue;
		field++;
		const char *value = q + 1;
		switch (field) {
		case 4: out->ppid = (pid_t)strtol(value, NULL, 10); break;
		case 9: out->flags = strtoul(value, NULL, 10); break;
		case 10: out->minflt = strtoull(value, NULL, 10); break;
		case 12: out->majflt = strtoull(value, NULL, 10); break;
		case 14: out->utime = strtoull(value, NULL, 10); break;
		case 15: out->stime = strtoull(value, NULL, 10); break;
		case 22: out->start_ticks = strtoull(value, NULL, 10); break;
		case 39: out->processor = (int)strtol(value, NULL, 10); return 0;
		default: break;
		}
	}
	return 0;
}

int proc_parse_thread_stat(const char *text, struct proc_thread *out)
{
	struct proc_stat st;
	if (proc_parse_stat(text, &st) < 0)
		return -1;
	out->tid = st.pid;
	memcpy(out->name, st.comm, sizeof out->name);
	out->state = st.state;
	out->cpu_ticks = st.utime + st.stime;
	out->kernel_ticks = st.stime;
	out->last_cpu = st.processor;
	out->voluntary_switches = out->involuntary_switches = 0;
	return 0;
}

/* The value after "name" (with its colon) at the start of a line of text,
 * NULL if no line starts so. */
static const char *line_value(const char *text, const char *name)
{
	size_t len = strlen(name);
	for (const char *line = text; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, name, len) == 0)
			return line + len;
	}
	return NULL;
}

int proc_parse_status(const char *text, struct proc_status *out)
{
	memset(out, 0, sizeof *out);
	const char *tracer = line_value(text, "TracerPid:");
	const char *voluntary = line_value(text, "voluntary_ctxt_switches:");
	const char *involuntary = line_value(text, "nonvoluntary_ctxt_switches:");
	const char *vm_data = line_value(text, "VmData:");
	if (tracer)
		out->tracer_pid = (pid_t)strtol(tracer, NULL, 10);
	if (voluntary)
		out->voluntary_switches = strtoull(voluntary, NULL, 10);
	if (involuntary)
		out->involuntary_switches = strtoull(involuntary, NULL, 10);
	if (vm_data)
		out->vm_data_kb = strtoull(vm_data, NULL, 10);
	const char *sig_pending = line_value(text, "SigPnd:"), *shared_pending = line_value(text, "ShdPnd:");
	if (sig_pending)
		out->sig_pending = strtoull(sig_pending, NULL, 16);
	if (shared_pending)
		out->shared_pending = strtoull(shared_pending, NULL, 16);
	return voluntary ? 0 : -1;
}

int proc_parse_schedstat(const char *text, struct proc_schedstat *out)
{
	memset(out, 0, sizeof *out);
	int n = sscanf(text, "%" SCNu64 " %" SCNu64 " %" SCNu64, &out->run_ns, &out->wait_ns, &out->slices);
	return n < 0 ? 0 : n;
}

void proc_parse_kernel_stack(const char *text, char *where, size_t size)
{
	if (!size)
		return;
	where[0] = '\0';
	/* "[<0>] futex_do_wait+0x4a/0x70": the name between "] " and "+". */
	const char *name = strstr(text, "] ");
	if (!name)
		return;
	name += 2;
	size_t len = strcspn(name, "+\n");
	if (len >= size)
		len = size - 1;
	memcpy(where, name, len);
	where[len] = '\0';
}

int proc_parse_syscall(const char *text, struct proc_syscall *out)
{
	uint64_t v[8];
	int64_t nr;
	int used = 0;
	memset(out, 0, sizeof *out);
	if (sscanf(text, "%" SCNd64 "%n", &nr, &used) != 1)
		return -1;
	const char *p = text + used;
	int n = 0;
	while (n < 8) {
		char *end;
		while (*p == ' ')
			p++;
		if (p[0] != '0' || p[1] != 'x')
			break;
		v[n++] = strtoull(p, &end, 16);
		p = end;
	}
	while (*p == ' ' || *p == '\n')
		p++;
	if (*p)
		return -1;
	if (nr < 0 && n == 2) {
		out->nr = nr;
	} else if (nr >= 0 && n == 8) {
		out->in_syscall = true;
		out->nr = nr;
		memcpy(out->args, v, sizeof out->args);
	} else {
		return -1;
	}
	out->sp = v[n - 2];
	out->pc = v[n - 1];
	return 0;
}

int proc_parse_maps_line(const char *line, uint64_t *start, uint64_t *end, const char **path)
{
	int path_at = -1;
	/* The path starts after the inode and its padding, as libdwfl reads
	 * it for the module names it reports. */
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*x %*x:%*x %*u %n", start, end, &path_at) < 2 ||
	    path_at <= 0)
		return -1;
	*path = line + path_at + strspn(line + path_at, " \t");
	return 0;
}

enum proc_name_match proc_comm_matches(const char *comm, const char *name)
{
	enum { COMM_MAX = 15 };
	if (strncmp(comm, name, COMM_MAX) != 0 || (strlen(name) <= COMM_MAX && strcmp(comm, name) != 0))
		return PROC_NAME_NO;
	return strlen(name) <= COMM_MAX ? PROC_NAME_YES : PROC_NAME_IF_ARGV0;
}

bool proc_argv0_is(const char *cmdline, const char *name)
{
	const char *base = strrchr(cmdline, '/');
	return strcmp(base ? base + 1 : cmdline, name) == 0;
}
