/* proc_parse.h — the text of /proc files into values: pure functions, no
 * I/O, so each rule can be held to canned text (tests/unit/test_procfs.c).
 * proc.c reads the files and hands their text here.
 *
 * Contract: text is NUL-terminated and may be cut anywhere (a short read, a
 * small buffer). A field the text does not reach reads as 0 (a processor as
 * -1), never as garbage; int parsers return 0 when the text has the file's
 * shape and -1 when not, unless said otherwise.
 */
#ifndef XGDBPROF_PROC_PARSE_H
#define XGDBPROF_PROC_PARSE_H

#include "procfs/proc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat (and task/TID/stat) this tool reads,
 * numbered as in proc(5). */
struct proc_stat {
	pid_t pid;                 /* 1 */
	char comm[32];             /* 2: between the first '(' and the last ')'; 15 bytes at most from the kernel */
	char state;                /* 3 */
	pid_t ppid;                /* 4 */
	unsigned long flags;       /* 9: PF_* (PF_KTHREAD 0x00200000) */
	uint64_t minflt, majflt;   /* 10, 12: page faults taken */
	uint64_t utime, stime;     /* 14, 15: clock ticks */
	uint64_t start_ticks;      /* 22: clock ticks since boot */
	int processor;             /* 39: the CPU it last ran on; -1 when the text ends before */
};

/* Parses "pid (comm) S ppid ...". comm may hold spaces and ')' (a thread
 * may name itself "a) b"): it ends at the last ')', which must be followed
 * by a space. -1 when there is no "(...) ". */
int proc_parse_stat(const char *text, struct proc_stat *out);

/* What a stat line says of a thread, as proc_threads lists it (its
 * context switches are status's: left 0). */
int proc_parse_thread_stat(const char *text, struct proc_thread *out);

/* The fields of /proc/PID/status (and task/TID/status) this tool reads. */
struct proc_status {
	pid_t tracer_pid;                   /* TracerPid: 0 when none */
	uint64_t voluntary_switches;        /* voluntary_ctxt_switches */
	uint64_t involuntary_switches;      /* nonvoluntary_ctxt_switches */
	uint64_t vm_data_kb;                /* VmData: writable private memory, kB (0: no line, a kernel thread) */
	uint64_t sig_pending;               /* SigPnd: the thread's pending signals, bit N-1 for signal N */
	uint64_t shared_pending;            /* ShdPnd: the process's (thread group's) pending signals */
};

/* Reads each field from its own "Name:" line (a line's start, so
 * voluntary_ctxt_switches never reads nonvoluntary_'s). 0 when the text
 * holds voluntary_ctxt_switches, -1 when not (a cut read). */
int proc_parse_status(const char *text, struct proc_status *out);

/* /proc/PID/task/TID/schedstat: "RUN_NS WAIT_NS SLICES". Sets run_ns,
 * wait_ns and slices (0 for those the text does not hold; voluntary_switches
 * is status's, left 0). Returns how many of the three it read, 0 to 3 (a
 * kernel without CONFIG_SCHED_INFO prints all three, as zeros). */
int proc_parse_schedstat(const char *text, struct proc_schedstat *out);

/* /proc/PID/task/TID/stack, "[<0>] futex_do_wait+0x4a/0x70\n..." (one
 * frame a line, the innermost first): the innermost function's name into
 * where (at most size - 1 bytes), "" when the text names none. */
void proc_parse_kernel_stack(const char *text, char *where, size_t size);

/* /proc/PID/task/TID/syscall: "-1 SP PC" outside a system call, "NR A1 ..
 * A6 SP PC" inside one (numbers in decimal, the rest 0x-hex), or "running".
 * 0 ok, -1 for "running" or text of another shape. */
int proc_parse_syscall(const char *text, struct proc_syscall *out);

/* One line of /proc/PID/maps, its newline removed: "START-END PERMS OFFSET
 * DEV INODE   PATH". *path points into line, past the padding after the
 * inode ("" for an anonymous mapping; " (deleted)" stays part of it). -1
 * when the line has no inode field. */
int proc_parse_maps_line(const char *line, uint64_t *start, uint64_t *end, const char **path);

/* Whether a process whose comm (/proc/PID/comm without its newline) is
 * `comm` may be the program called `name`. The kernel keeps 15 bytes of a
 * name: a longer name matches a comm that is its first 15 bytes only if
 * the last component of argv[0] is name too (proc_argv0_is). */
enum proc_name_match {
	PROC_NAME_NO,
	PROC_NAME_YES,
	PROC_NAME_IF_ARGV0,
};
enum proc_name_match proc_comm_matches(const char *comm, const char *name);

/* Whether the last component of argv[0] (the first string of
 * /proc/PID/cmdline) is name. */
bool proc_argv0_is(const char *cmdline, const char *name);

#endif
