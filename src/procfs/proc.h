/* proc.h — what /proc says about a target process, read without ptrace.
 *
 * Contract: every function is a fresh read (no caching); a thread or process
 * that vanishes between calls is not an error for listings (it is skipped),
 * but is for single-item queries (-1, message in xerr). States are the
 * single letters of proc(5): R running, S sleeping, D disk sleep, Z zombie,
 * T stopped (job control), t tracing stop, X dead, I idle. Each file's
 * text is parsed by proc_parse.h's pure parsers, which say how a cut or
 * odd text reads.
 */
#ifndef XGDBPROF_PROC_H
#define XGDBPROF_PROC_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_thread {
	pid_t tid;
	char name[32];            /* comm, at most 15 chars + NUL */
	char state;               /* proc(5) letter */
	uint64_t cpu_ticks;       /* utime + stime, clock ticks */
	uint64_t kernel_ticks;    /* of which stime: the kernel's tick-sampled share in system calls */
	int last_cpu;             /* processor it last ran on */
	uint64_t voluntary_switches;   /* from status; lets a sampler see a thread has not run */
	uint64_t involuntary_switches;
};

/* Checks the PID names a live process we could trace: 0 if so; -1 with a
 * message naming the fix for: no such process, a zombie, a kernel thread,
 * ourselves, a process already traced (named as proc_explain_ptrace_denied
 * does). (Permission is checked by attaching.) */
int proc_check_target(pid_t pid, struct xerr *e);

/* State letter of the process (its main thread), or 0 if it does not exist. */
char proc_state(pid_t pid);

/* Lists the threads of pid into *out (malloc'd, caller frees), sorted by tid.
 * Returns the count, or -1 if the process is gone. */
int proc_threads(pid_t pid, struct proc_thread **out, struct xerr *e);

/* The child processes of pid, from each thread's /proc/PID/task/TID/children
 * (a child belongs to the thread that forked it), into *out (malloc'd,
 * caller frees; NULL when none). Returns the count, or -1 if the process is
 * gone or out of memory. A kernel without CONFIG_PROC_CHILDREN lists none. */
int proc_children(pid_t pid, pid_t **out);

/* The PID tracing pid (TracerPid in its status), 0 if none, -1 if gone. */
pid_t proc_tracer_pid(pid_t pid);

/* True if any thread of pid is in one of the state letters given
 * ("Tt": stopped or in a tracing stop). False if none is, or pid is gone.
 * Reads each thread's stat alone, and stops at the first thread found. */
bool proc_any_thread_in(pid_t pid, const char *states);

/* The distinct state letters of pid's threads, into seen (a string; size
 * 32 holds every letter), from one pass over /proc/PID/task/TID/stat
 * (stat alone: the status proc_threads reads too doubled a scan, which
 * over 200 threads under load took 50-100 ms). The pass stops at the first
 * thread in a letter of stop_at (NULL: none). Returns how many letters,
 * or -1 if pid is gone. */
int proc_thread_states(pid_t pid, const char *stop_at, char *seen, size_t size);

/* True if some thread of pid is in one of the state letters at each of
 * `looks` looks tick_ms apart, the first at once; false at the first look
 * that finds none, or if pid is gone. Tells a process whose main thread
 * exited alone (a zombie leader, its other threads living on) from one on
 * its way out, whose threads are all gone within a few milliseconds. */
bool proc_threads_stay_in(pid_t pid, const char *states, int looks, int tick_ms);

/* Opens pid's memory (open(2) flags, O_CLOEXEC added): /proc/PID/mem, or,
 * once the main thread has exited while others run on (its files then
 * read nothing), the mem file of a thread still alive, which is the same
 * memory. The fd, or -1 with errno as the first open left it. */
int proc_open_mem(pid_t pid, int flags);

/* True if signal sig is pending for pid: for the process (ShdPnd) or any
 * of its threads (SigPnd). A signal sent to a traced thread waits there
 * until its tracer lets the thread take it. False when none, or gone. */
bool proc_signal_pending(pid_t pid, int sig);

/* Whether sig is pending for thread tid of pid, its own or the process's
 * (the thread takes either). False when not, or gone. */
bool proc_thread_signal_pending(pid_t pid, pid_t tid, int sig);

/* Reads one thread's stat; 0 ok, -1 if it is gone. */
int proc_thread_read(pid_t pid, pid_t tid, struct proc_thread *out, struct xerr *e);

/* A thread's scheduler clocks from /proc/PID/task/TID/schedstat (ns on a
 * CPU, ns runnable but waiting for one, times put on a CPU, all since it
 * started) and its voluntary context switches from .../status (each ptrace
 * stop is one, and so is each sleep). They are what a tracer needs to tell
 * the time it held a thread stopped from the time the thread ran, waited its
 * turn or slept. */
struct proc_schedstat {
	uint64_t run_ns, wait_ns, slices;
	uint64_t voluntary_switches;
};

/* Reads them (open/read/close of two small files, about 20 us in all); 0
 * ok, -1 if the thread is gone or the kernel keeps no such figures (no
 * error message: callers fall back to estimates). */
int proc_thread_schedstat(pid_t pid, pid_t tid, struct proc_schedstat *out);

/* Whether a thread is on a CPU at this instant: /proc/PID/task/TID/stack
 * is empty for a thread running on another CPU (the kernel does not unwind
 * a running task) and lists where it waits otherwise: in a sleep, or
 * preempted and queued for a CPU, or in sched_yield. 1 on a CPU, 0 not, -1
 * unknown: the file needs root (CAP_SYS_ADMIN), the thread is gone, or it
 * was last on the caller's own CPU (then the caller, running there, may
 * have just displaced it). About 10-20 us. When not on a CPU and where is
 * not NULL, the innermost kernel function it waits in ("futex_do_wait",
 * "__do_sys_sched_yield", ...) goes to where (else "").  */
int proc_thread_on_cpu(pid_t pid, pid_t tid, char *where, size_t size);

/* The page faults a thread has taken (minor and major, from its stat):
 * the count, or -1 when the thread is gone or the file unreadable. */
int64_t proc_thread_faults(pid_t pid, pid_t tid);
/* The same as proc_thread_faults, with the CPU the thread runs on, or last ran on, to *processor
 * (-1 when unknown): one read of its stat. */
int64_t proc_thread_faults_at(pid_t pid, pid_t tid, int *processor);

/* What /proc/PID/task/TID/syscall says of a thread that is not running
 * (stopped by a tracer, or asleep): in_syscall with nr and args[0..5]
 * when it is inside a system call (nr, as orig_rax, also after a wait that
 * a signal interrupted), and its user stack pointer and program counter. */
struct proc_syscall {
	bool in_syscall;
	int64_t nr;
	uint64_t args[6];
	uint64_t sp, pc;
};

/* Reads it: about 10 us, no ptrace request (the file needs the same rights
 * as /proc/PID/mem). 0 ok; -1 when the thread is running ("running": a
 * stopped thread's registers only), gone, or the file is not readable. */
int proc_thread_syscall(pid_t pid, pid_t tid, struct proc_syscall *out);

/* Resolved path of /proc/PID/exe into buf; 0 ok, -1 on failure. */
int proc_exe_path(pid_t pid, char *buf, size_t size, struct xerr *e);

/* Whether pid lives in another mount namespace than ours (readlink of
 * /proc/self/ns/mnt and /proc/PID/ns/mnt differ): the paths its
 * /proc/PID/maps names are then the target's, and may name other files, or
 * none, here. 1 other, 0 same, -1 unknown (gone, or no access). */
int proc_other_mount_ns(pid_t pid);

/* Writes into buf the /proc/PID/map_files/START-END entry of a mapping of
 * pid whose path is `path` exactly as /proc/PID/maps prints it (" (deleted)"
 * included) and which lies within [low, high). Opening that entry opens the
 * mapped file itself, deleted or in another mount namespace, but needs
 * CAP_SYS_ADMIN (CAP_CHECKPOINT_RESTORE). 0 found, -1 none. */
int proc_map_files_entry(pid_t pid, const char *path, uint64_t low, uint64_t high,
			 char *buf, size_t size);

/* The process's writable private memory (VmData: its heap, its allocator's
 * arenas as they are committed, mmapped blocks; not the main stack) in
 * bytes, or -1 when unreadable (gone). Reads status, no ptrace. */
int64_t proc_vm_data_bytes(pid_t pid);

/* Process-wide CPU time (utime+stime of all threads) in clock ticks, or -1. */
long long proc_cpu_ticks(pid_t pid);

/* Explains why ptrace attach may have been refused (Yama ptrace_scope,
 * CAP_SYS_PTRACE, another tracer, different user), as one sentence with the
 * fix, into buf. Another tracer (TracerPid) is named with its command and
 * its parent's, and comes first: ptrace refuses a second tracer with EPERM
 * whatever the privileges. */
void proc_explain_ptrace_denied(pid_t pid, char *buf, size_t size);

/* On-CPU nanoseconds of one thread so far (schedstat), 0 if unreadable. */
uint64_t proc_thread_runtime_ns(pid_t pid, pid_t tid);
/* The first two schedstat clocks of one thread: ns on a CPU and ns runnable
 * but queued for one (run_delay), in one read of one file; 0 ok, -1 if
 * unreadable (both then 0). Wall time less their growth is the time the
 * thread was neither running nor queued: asleep, or stopped by a tracer. */
int proc_thread_sched_ns(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *wait_ns);

/* When the process started, in clock ticks since boot (proc(5) stat field
 * 22), or 0 if it is gone or a zombie. A PID and this together name one
 * process for good: a PID reused by a newer process has a later start. */
uint64_t proc_start_ticks(pid_t pid);
/* Now, in the same clock (ticks since boot), or 0 if it cannot be read. */
uint64_t proc_boot_ticks_now(void);

/* How a zombie ended, as waitpid would report it (proc(5) stat field 52,
 * exit_code): 0 and *wait_status while pid is a zombie no one has reaped,
 * -1 when it is alive, gone or the field is missing (kernels before 3.5). */
int proc_zombie_wait_status(pid_t pid, int *wait_status);

/* The oldest live process (no zombie, no kernel thread, never ourselves or
 * a child of ours) whose name is `name`: its comm, which the kernel cuts
 * to 15 bytes, equals name, and for a longer name the last component of its
 * argv[0] equals name too. Returns its PID and sets *start_ticks, 0 if none,
 * and the number of matching processes in *matches. */
pid_t proc_find_by_name(const char *name, uint64_t *start_ticks, int *matches);

/* The machine's one-minute load average (/proc/loadavg), NAN if unreadable. */
double proc_load_average(void);

#endif
