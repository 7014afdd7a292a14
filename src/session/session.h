/* session.h — one target process under gdb's control.
 *
 * A session attaches gdb to a PID (or launches a command and attaches before
 * it execs), stops and resumes it, lists threads and their stacks, and always
 * ends with the target running and detached.
 *
 * Invariants:
 *  - session_end() is the one exit path and is safe from any state: gdb
 *    alive or dead, target stopped, running or gone. It never leaves the
 *    target stopped: if gdb died while the target was stopped it sends
 *    SIGCONT itself (only when the target was not stopped before we came).
 *  - The target is never stopped with our own SIGSTOP (it would stay in
 *    state T after detach); stopping goes through -exec-interrupt.
 *  - A gdb that stops answering is dead: no answer within the command
 *    timeout, or a second in state T (SIGSTOP), and it is killed; the
 *    target is then healed and released by session_rescue.
 *  - All functions return 0 on success and -1 with a message in xerr.
 */
#ifndef XGDBPROF_SESSION_H
#define XGDBPROF_SESSION_H

#include "util/error.h"
#include "procfs/proc.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct session;

struct session_options {
	const char *gdb_path;      /* --gdb; NULL: $XGDBPROF_GDB, else the configured default */
	int command_timeout_ms;    /* per MI command; 0 means 15000 */
	bool verbose;              /* log MI traffic timing to stderr */
	bool non_stop;             /* gdb non-stop mode: session_stop_thread holds only
				    * the thread named; the others keep running */
	bool no_separate_debug;    /* gdb reads no separate debug files (/usr/lib/debug):
				    * for sessions that ask gdb for registers, never names */
	bool no_symbols;           /* gdb reads no symbols at all (the program's nor the
				    * libraries'; it keeps libc's ELF symbols, which
				    * libthread_db needs): for sessions that take only
				    * registers and memory from gdb. Its description of
				    * each stopped frame is then cheapest. gdb reads a
				    * launched command's symbols when it execs; they are
				    * dropped right after. */
	bool program_symbols_only; /* gdb reads the program's symbols and none of its
				    * libraries' (nor libthread_db, which needs
				    * libc's): for arg() at sites all in the program,
				    * so the attach does not read them with every
				    * thread stopped */
	bool hold_at_entry;        /* session_launch: return with the command
				    * stopped at its entry point, libraries loaded and
				    * not one instruction of its own run, so probes are
				    * armed before it starts; session_resume lets it go */
};

/* One frame as gdb's unwinder reports it (the reference walker). */
struct gdb_frame {
	int level;
	uint64_t pc;
	char *function;            /* as gdb prints it (demangled), or NULL */
	char *file;                /* fullname if known, else file, else NULL */
	int line;
	char *library;             /* "from" for frames without debug info */
};

struct session_thread {
	int gdb_id;                /* gdb's thread number */
	pid_t tid;                 /* kernel thread id (LWP) */
	char name[64];
	char state;                /* /proc state when the target was last stopped */
};

/* Attaches to pid and resumes it: on return the target runs. Returns 0;
 * -1 when gdb could not take hold of the target (the target, permissions,
 * no gdb: the user's to fix); SESSION_ATTACH_LOST when gdb held it and then
 * failed (stopped, killed or silent during the attach): the target was
 * healed and let go, and a later attempt may succeed. */
#define SESSION_ATTACH_LOST (-2)
int session_attach(struct session **out, pid_t pid, const struct session_options *opts, struct xerr *e);

/* Starts argv[0] (searched on PATH) with our stdin/stdout/stderr, attaches
 * gdb while it waits to exec, then lets it exec. It runs when this returns. */
int session_launch(struct session **out, char *const argv[], const struct session_options *opts,
		   struct xerr *e);

pid_t session_pid(const struct session *s);
bool session_is_stopped(const struct session *s);
/* True while a stop signal the user sent (kill -STOP) is in effect: gdb
 * reported it, and no SIGCONT since, neither reported nor waiting in the
 * target's pending signals, nor (all-stop, the target stopped) taken by a
 * thread whose event gdb keeps for the next resume (asked of gdb once per
 * stop). */
bool session_held_by_user_stop(struct session *s);
/* gdb stops the target by itself when it receives a signal gdb stops on
 * (the user's SIGCONT, SIGUSR1) and reports it; nothing else resumes it.
 * Resumes it now (gdb passes the signal along), unless a stop of the
 * user's is in effect (session_held_by_user_stop), an exec holds it or
 * it exited.
 * Callers that wait with the target running call it after each
 * session_idle: once the budget lowered the sampling rate a round can be
 * seconds away. 0, or -1 with e. */
int session_resume_signal_stop(struct session *s, struct xerr *e);
/* False once the target exited (how: session_exit_signal). */
bool session_target_alive(struct session *s);
/* Once the target is gone: the name of the signal that killed it, as gdb
 * reports it ("SIGKILL"), or NULL when it exited, or gdb did not say.
 * /proc shows the end before gdb has read it: then gdb's record is waited
 * for, up to a second. NULL at once while the target lives. */
const char *session_exit_signal(struct session *s);
/* Whether the target's main thread exited (pthread_exit: /proc/PID is a
 * zombie) while other threads of it run on, for 200 ms at least. gdb 13
 * cannot detach from such a process (an internal error: it quits, and the
 * kernel lets the threads go); session_target_alive is false for it. */
bool session_leader_exited(struct session *s);
/* Whether /proc shows every thread of the target dead (zombies, or the
 * process gone) although gdb has not reported an exit. gdb can miss one
 * (gdb idle in poll, every thread a zombie it still traces: bench/README.md,
 * "Figures behind the code"). Does not change the session;
 * session_note_target_exited does once the caller gives up on gdb. */
bool session_target_dead_in_proc(struct session *s);
void session_note_target_exited(struct session *s);

/* Stops every thread and waits for gdb to report it (every one of them, in
 * non-stop mode). */
int session_stop(struct session *s, struct xerr *e);
/* Non-stop mode only: stops one thread (gdb id; tid its kernel id, or 0 if
 * not known) and waits until gdb reports it stopped, the other threads
 * running on. Returns 0 (stopped; also after an exec, see
 * session_exec_path), 1 when the thread exited before it could be stopped
 * (nothing to walk) or when gdb lost the stop and the session attached
 * again (every thread's gdb id changed: session_attach_generation), -1
 * with e (the target exited, or gdb is gone). */
int session_stop_thread(struct session *s, int gdb_id, pid_t tid, struct xerr *e);
/* Waits (up to 200 ms) until no thread of the target is in a clone or
 * vfork (gdb 13 loses a stop asked then), unless it checked within the
 * last 2 ms; session_stop_thread calls it just before its interrupt. A
 * sampler calls it before it reads where the thread is, so that its look
 * and the interrupt stay close together, and threads it then passes over
 * cost no new check. */
void session_settle_vfork(struct session *s);
/* Non-stop mode only: resumes one thread stopped by session_stop_thread.
 * Returns once gdb has resumed it (its ^running), without waiting for the
 * *running record. A thread that exited while stopped is no error. */
int session_resume_thread(struct session *s, int gdb_id, struct xerr *e);
/* Resumes every stopped thread. Does nothing once the target exec'd: gdb
 * would re-insert breakpoints at addresses of the old program. */
int session_resume(struct session *s, struct xerr *e);
bool session_non_stop(const struct session *s);
/* Changes each time the session attached again to the same process (gdb
 * 13 can lose track of a non-stop target's threads in a vfork; session_stop
 * then detaches and attaches again): every thread's gdb id may have changed
 * with it, so lists kept by gdb id are to be read again. */
unsigned session_attach_generation(const struct session *s);
/* How many such attaches the session made, and their time in *ms (the
 * target stopped), for the run's summary. */
unsigned session_reattaches(const struct session *s, double *ms);
/* Non-stop sessions let gdb step a thread over a breakpoint in a copy of
 * the instruction (displaced stepping), the other threads running on. gdb
 * 13 leaves the scratch register of a RIP-relative copy changed when that
 * step is interrupted (by a signal, gdb's own stop of every thread, the
 * detach), so before a breakpoint goes on such an instruction the tracer
 * turns it off for the rest of the session: gdb then steps over in place,
 * pausing the other threads for the step. Interrupting a displaced step of
 * any other instruction only moves the PC back, which gdb does right. */
int session_displaced_stepping_off(struct session *s, struct xerr *e);

/* Whether the target exec'd: gdb's exec catchpoint (set at attach)
 * reported it in a record read so far, or /proc shows a new program (gdb
 * reports no stop when it cannot re-insert our breakpoints in the new
 * program). The process is then stopped in the new program, its threads
 * and addresses are not the ones the session knew, and it must not be
 * resumed under our breakpoints: delete them, then session_end (whose
 * detach lets the new program run). Reads two small /proc files. */
bool session_target_execed(struct session *s);
/* The program it exec'd, as gdb names it; NULL before an exec. */
const char *session_exec_path(const struct session *s);

/* Forks reported by a fork catchpoint (the tracer inserts one); fn, when
 * set, is called for each with the child's pid while gdb still holds the
 * child stopped (it detaches it when the parent is next resumed). */
unsigned long session_forks(const struct session *s);
void session_on_fork(struct session *s, void (*fn)(void *ctx, pid_t child), void *ctx);

/* Threads of the stopped target, sorted by tid. *threads is malloc'd. */
int session_threads(struct session *s, struct session_thread **threads, size_t *count, struct xerr *e);

/* Frames of one thread of the stopped target, innermost first, at most
 * max_frames (0: no limit). Free with session_gdb_frames_free. */
int session_thread_frames(struct session *s, int gdb_id, int max_frames, struct gdb_frame **frames,
			  size_t *count, struct xerr *e);
void session_gdb_frames_free(struct gdb_frame *frames, size_t count);

/* gdb's numbers for the registers named (e.g. "rip"); -1 for a name gdb
 * does not know. Asked once per session, then cached. */
int session_register_numbers(struct session *s, const char *const *names, size_t n, int *numbers,
			     struct xerr *e);

/* Values of registers `numbers` (gdb numbering) of one thread of the stopped
 * target, in the same order. */
int session_thread_registers(struct session *s, int gdb_id, const int *numbers, size_t n,
			     uint64_t *values, struct xerr *e);

/* Writes registers `numbers` of one stopped thread with values, in that
 * order, in one command to gdb (-data-write-register-values: no expression,
 * so no language of the frame to parse it in). */
int session_thread_write_registers(struct session *s, int gdb_id, const int *numbers, const uint64_t *values,
				   size_t n, struct xerr *e);

/* Non-stop mode only: reads registers as session_thread_registers of a
 * thread stopped by session_stop_thread and resumes it, in one write to gdb
 * (mi_conn_call_batch): the thread runs again as soon as gdb has read them,
 * without waiting for us in between. Returns 0 (read and resumed); 1 when
 * gdb refused the resume, the thread having exited while stopped (values
 * are then not to be used); -1 with e when the registers could not be read
 * (the thread is resumed all the same) or gdb is gone. */
int session_thread_registers_and_resume(struct session *s, int gdb_id, const int *numbers, size_t n,
					uint64_t *values, struct xerr *e);

/* Whether gdb is still there to talk to. */
bool session_gdb_alive(struct session *s);

/* Waits up to timeout_ms (e.g. between samples) while watching gdb: its
 * death is noticed at once, not at the next command, so session_rescue can
 * put its int3s back before the running target reaches one. Events that
 * arrive keep the session's view in sync and are dropped; one that leaves
 * the target stopped (a signal gdb stops on, an exec) ends the wait early,
 * for the caller to resume it (session_is_stopped). 0, or -1 with e when
 * gdb is gone. */
int session_idle(struct session *s, int timeout_ms, struct xerr *e);

/* How long attaching held the target stopped, from gdb's attach request to
 * the resume (an upper bound); 0 for a launched command. */
double session_attach_hold_ms(const struct session *s);

/* Whether a launched command is still held at its entry point
 * (session_options.hold_at_entry): nothing of its own has run yet. */
bool session_held_at_entry(const struct session *s);

/* PID of the command session_launch started (our child: the caller reaps it
 * with waitpid after session_end), or 0 for an attached session. */
pid_t session_launched_child(const struct session *s);

/* Remembers the code byte at addr (read from /proc/PID/mem) before a module
 * asks gdb for a breakpoint there, so session_rescue can put it back should
 * gdb die with its int3 in place. 0, or -1 when the byte cannot be read. */
int session_remember_code_byte(struct session *s, uint64_t addr, struct xerr *e);

/* Remembers n bytes of unused memory at addr that the caller is about to
 * write itself and that a thread may return into later (restore.h's
 * RESTORE_LEAVE): neither session_rescue nor the guardian writes them,
 * nor takes an int3 among them for one of gdb's. original: their values
 * now. Remembering the same bytes again is a no-op. */
int session_remember_unused(struct session *s, uint64_t addr, const uint8_t *original, size_t n, struct xerr *e);

/* A call through a stub in RESTORE_LEAVE bytes is under way (target_call.h),
 * and its done mark is at mark (0: none now): should gdb die, session_rescue
 * and the guardian wait for the mark (RESTORE_CALL_WAIT_MS at most), then
 * put those bytes back once no thread runs in them. */
void session_set_call_mark(struct session *s, uint64_t mark);

/* Remembers n bytes at addr that the caller is about to write itself
 * (restore.h's RESTORE_PATCH: put back by session_rescue while they still
 * read `patched`; RESTORE_KEEP: left alone). original: their values now. */
int session_remember_patch(struct session *s, uint64_t addr, const uint8_t *original, const uint8_t *patched,
			   size_t n, bool keep, struct xerr *e);

/* The bytes remembered so far, for a module that must put them back in a
 * copy of the target (a forked child); read-only. */
struct restore_set;
const struct restore_set *session_code_bytes(const struct session *s);

/* With gdb lost, heals the target with our own ptrace (restore.h): every
 * byte remembered above, and any other int3 in its executable file
 * mappings where the file holds something else (gdb's internal breakpoints,
 * such as ld.so's _dl_debug_state), rewinds threads that trapped on one,
 * detaches, and wakes threads left stopped (unless the target was stopped
 * before we came). Returns 1 when it ran (now or earlier; *report, when
 * given, says what it did), 0 when gdb is alive (nothing done), -1 with e
 * when the target could not be healed. session_end calls it too. */
struct restore_report;
int session_rescue(struct session *s, struct restore_report *report, struct xerr *e);

/* Detaches (resuming the target), closes gdb, frees. Returns 0 if the target
 * was left running (or had exited by itself), -1 with a message otherwise.
 * Safe to call with s == NULL. */
int session_end(struct session *s, struct xerr *e);

#endif
