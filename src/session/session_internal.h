/* session_internal.h — what session/'s files share: the raw MI calls
 * behind the typed ones of session.h and probes.h. Private to session/:
 * no other folder includes it, so gdb's vocabulary stays here and in mi/.
 *
 * Return conventions as in session.h: 0 (or 1 with a record) on success,
 * -1 with e filled.
 */
#ifndef XGDBPROF_SESSION_INTERNAL_H
#define XGDBPROF_SESSION_INTERNAL_H

#include "util/compare.h"
#include "session/session.h"

#include "mi_conn.h"
#include "mi_record.h"
#include "mi_value.h"
#include "util/array.h"
#include "util/clock.h"
#include "session/restore.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What session/'s files give each other:
 *   session.c         attach, launch, detach and the end; gdb calls and waits; rescue
 *   session_gdb.c     the gdb process: finding, starting, configuring it; the guardian
 *   session_exec.c    the exec watch: exec and fork records, exec seen in /proc
 *   session_stop.c    stop and resume; threads, frames and registers
 *   session_probes.c  probes.h: breakpoints, catchpoints, evaluation, stop records
 */

enum { SESSION_DROP_SIGNAL_SLOTS = 8 };

struct session {
	struct mi_conn *gdb;
	pid_t pid;
	pid_t launched_child;      /* our child when launched, else 0 */
	bool stopped;              /* gdb reported the target (non-stop: some thread) stopped */
	bool non_stop;             /* gdb's non-stop mode: stops hold only the threads asked for */
	int *stopped_ids;          /* non-stop: gdb ids of the threads gdb reports stopped */
	size_t nstopped_ids, stopped_ids_cap;
	bool target_exited;
	bool exit_reported;        /* gdb's *stopped record of the exit was read */
	char exit_signal[32];      /* its signal-name when a signal killed the target */
	bool was_stopped_before;   /* target in state T before we came: keep it so */
	pid_t guardian;            /* session_start_guardian's process, 0 if none */
	int guardian_fd;           /* its pipe: GUARDIAN_* bytes */
	bool stopped_by_other;     /* gdb reported a stop signal not ours (SIGSTOP...), no SIGCONT since */
	bool continued_by_other;   /* ... then a SIGCONT: a late report of that stop is not a new one */
	unsigned unmatched_conts;  /* SIGCONTs reported with no stop of the user's in effect */
	int drop_signal_ids[SESSION_DROP_SIGNAL_SLOTS]; /* threads (gdb ids) whose stop signal is not to be passed on when
				    * resumed (session_exec.c's note_signal); 0 in unused slots */
	bool attached;             /* gdb holds the target: detach on the way out */
	bool attach_started;       /* -target-attach was sent: gdb may have stopped threads */
	bool no_symbols;           /* session_options.no_symbols */
	bool symbols_after_attach; /* program_symbols_only in non-stop mode: attached as
				    * without symbols, the program's read once the
				    * target runs again (attach_gdb) */
	bool hold_at_entry;        /* session_options.hold_at_entry */
	bool held_at_entry;        /* stopped at the entry point, not resumed since */
	double attach_hold_ms;     /* the attach's stop, from the request to the resume */
	bool execed;               /* gdb reported an exec: stopped in the new program */
	char *exec_path;           /* the new program, as gdb names it */
	unsigned char exec_id[16]; /* AT_RANDOM's bytes: new at every exec (session_exec_identity) */
	bool have_exec_id;
	double exec_suspected_ms;  /* when /proc first showed a new program gdb had not reported */
	unsigned long forks;       /* forks gdb reported (catch fork, set by the tracer) */
	void (*on_fork)(void *ctx, pid_t child);
	void *on_fork_ctx;
	int timeout_ms;
	bool verbose;
	/* Code bytes under the breakpoints a module asked for, and the rescue
	 * that puts every int3 back should gdb die or be given up on. */
	struct restore_set code;
	bool rescued;
	struct restore_report rescue_report;
	bool stall_said;           /* the run was told gdb had been found stopped */
	unsigned attach_generation; /* attaches so far: threads' gdb ids change with each */
	unsigned faults_said;      /* fault signals already said on stderr (session_exec.c) */
	size_t threads_counted;    /* gdb's thread count at the last session_count_threads */
	bool all_stopped_known;    /* session_stop saw every thread stopped, no resume since */
	bool catching_forks;       /* a fork catchpoint is in: resumes keep to the stops read (session_resume) */          /* gdb said it detached a vfork's child: the target vforks */
	unsigned reattaches;       /* attaches again after gdb lost the threads (session_stop.c) */
	double reattach_ms;        /* their time, the target stopped */
	double vfork_settled_ms;   /* when session_settle_vfork last found no thread in a vfork */
	unsigned long records_read; /* async records read from gdb so far */
	unsigned long stop_seq;    /* *stopped records read so far */
	unsigned long sigcont_checked_stop; /* stop_seq when sigcont_held_by_gdb last asked */
	bool stopping_threads;     /* gdb is asked to stop every thread (-exec-interrupt --all, -target-detach)
				    * and has not completed it */
	/* session_heal_unreported_stop's watch (session_stop.c) */
	uint64_t unreported_check_ns;      /* its next look */
	pid_t unreported_tid;              /* a thread last seen in a tracing stop gdb had not reported, or 0 */
	unsigned unreported_looks;         /* ... looks since that found it so still */
	uint64_t unreported_cpu_ns;        /* ... its CPU time then */
	unsigned long unreported_records;  /* ... records_read then */
	pid_t unreported_wedged;           /* ... found so long enough: to heal (session_heal_unreported_stop) */
	bool idle_wait;                    /* session_idle or session_wait_stop waits: on_silence may end it */
};

/* How long gdb may sit stopped (someone sent it SIGSTOP) before it counts
 * as dead: the target may be held stopped all that time. */
#define GDB_STALL_KILL_MS 1000

/* session.c */
bool session_is_exit_reason(const char *reason);
bool session_thread_is_stopped(const struct session *s, int gdb_id);
void session_forget_stopped_thread(struct session *s, int gdb_id);
void session_note_stopped_thread(struct session *s, int gdb_id);
int session_thread_id_of(const struct mi_record *ev);
int session_timeout(const struct session_options *opts);
void session_give_up_on_gdb(struct session *s, const char *what);
void session_on_gdb_lost(struct session *s);
int session_gdb_callv(struct session *s, struct mi_record **result, struct mi_error *me, const char *command,
		     const char *const *args);
int session_command(struct session *s, struct mi_record **result, struct xerr *e, const char *command, ...);
uint64_t session_deadline_in(int ms);
int session_ms_until(uint64_t deadline);
int session_wait_stopped(struct session *s, struct xerr *e);
int session_event_before(struct session *s, uint64_t deadline, const char *what, struct mi_record **ev,
			struct xerr *e);
int session_wait_running(struct session *s, struct xerr *e);
bool session_is_thread_exited(const struct mi_record *ev);
int session_wait_all_threads_stopped(struct session *s, struct xerr *e);
int session_count_threads(struct session *s, size_t *count, struct xerr *e);
void session_rescue_stopped_target(struct session *s);

/* session_gdb.c */
struct session *session_new(const struct session_options *opts, struct xerr *e);
int session_forget_libraries(struct session *s, struct xerr *e);
int session_continue_stopped_target(pid_t pid, bool only_untraced, int calm_ticks);
/* What xgdbprof tells its guardian, one byte each. */
enum guardian_word {
	GUARDIAN_DONE = 'D',              /* we ended the session ourselves: nothing to heal */
	GUARDIAN_STOPPED_BY_OTHER = 'S',  /* someone stopped the target: leave it stopped */
	GUARDIAN_CONTINUED = 'C',         /* ... and continued it since: heal as usual */
	GUARDIAN_PATCH = 'P',             /* followed by one byte of ours written over the target's
					   * memory (struct guardian_patch): put back should we die */
};
struct guardian_patch {
	uint64_t addr;
	uint8_t original, patched, kind;  /* restore.h's restore_entry; or GUARDIAN_CALL_MARK: addr is
					   * the done mark of a call under way (0: none), restore_set's
					   * call_mark */
};
#define GUARDIAN_CALL_MARK 0xff
void session_tell_guardian_patch(struct session *s, const struct guardian_patch *p);
void session_tell_guardian_patches(struct session *s, const struct guardian_patch *p, size_t n);
void session_start_guardian(struct session *s, pid_t target);
void session_tell_guardian(struct session *s, enum guardian_word word);
void session_stop_guardian(struct session *s);

/* session_exec.c */
uint64_t session_auxv_value(pid_t pid, uint64_t type);
bool session_exec_identity(pid_t pid, unsigned char out[16]);
bool session_exec_seen_in_proc(struct session *s);
/* Whether /proc shows a new program in the target (AT_RANDOM changed)
 * that gdb has not reported; session_exec_seen_in_proc decides when that
 * counts as an exec. */
bool session_exec_identity_changed(const struct session *s);
bool session_exec_waits_on_gdb(struct session *s, double *since_ms);
void session_track_exec_event(struct session *s, const struct mi_record *ev);
/* The stop signal of thread gdb_id is not to be passed on when it resumes.
 * session_take_drop_signal: true (and forgotten) if it was so marked; with
 * gdb_id 0, any one thread so marked. session_pass_stop_signals(false)
 * before such a resume, (true) after: gdb passes a thread's stop signal on
 * unless told `nopass`. */
void session_mark_drop_signal(struct session *s, int gdb_id);
bool session_drop_signal_marked(const struct session *s, int gdb_id);
bool session_take_drop_signal(struct session *s, int gdb_id);
void session_pass_stop_signals(struct session *s, bool pass);
void session_drop_symbols_after_exec(struct session *s);

/* Runs one command with the session's timeout. args is NULL-terminated
 * (may be NULL). *result, when asked for, is the ^record (caller frees with
 * mi_record_free). */
int session_call(struct session *s, struct mi_record **result, struct xerr *e, const char *command,
		 const char *const *args);

/* Next async record from gdb (exec/notify/status), waiting up to timeout_ms
 * (0: poll, -1: forever). Keeps the session's view in sync: *stopped marks
 * the target stopped (and exited when the reason says so), *running marks it
 * running. Returns 1 with *event (caller frees), 0 on timeout, -1 when gdb is
 * gone. */
int session_wait_event(struct session *s, int timeout_ms, struct mi_record **event, struct xerr *e);

struct session_stop;

/* Reads one record into *out (a non-stop record gives SESSION_STOP_NONE).
 * 0, or -1 with e when out of memory (*out then empty). */
int session_stop_from_record(const struct mi_record *ev, struct session_stop *out, struct xerr *e);

/* gdb 13 can lose a thread's stop: gdb has every thread running, yet one
 * sits in a tracing stop (state t) gdb never reports, and nothing of ours
 * asks gdb anything while no thread runs. Looked at every WEDGE_CHECK_MS
 * while gdb has no thread stopped (from mi_conn's on_silence as well, so
 * a long wait is no blind spot): the same thread in t at three looks in a
 * row, with no CPU time and no record from gdb between, is such a stop;
 * the session then attaches again (which lets every thread go) and
 * resumes. Called by session_idle and session_wait_stop with nothing
 * left to read. 0 (also when it healed), or -1 with e. */
int session_heal_unreported_stop(struct session *s, struct xerr *e);

/* mi_conn's on_silence: gdb stopping every thread (we asked it to:
 * stopping_threads; or it does so for an event: it waits in a select of
 * its own), silent for over LOST_SIGSTOP_MS, with some of the target's
 * threads stopped (state t) and others running with no SIGSTOP pending:
 * gdb waits for stops that will not come. Sends each such thread the
 * SIGSTOP gdb lost. A stop report of a SIGSTOP we sent is known as ours
 * (stop_signal_sender). */
enum { LOST_SIGSTOP_MS = 1000 };
/* The session's mi_conn on_silence: the resend above, and the look of
 * session_heal_unreported_stop; true (end the wait) when that found a
 * stop to heal and session_idle or session_wait_stop is waiting. */
bool session_on_gdb_silence(void *ctx, int silent_ms);

/* How many threads of the target, but gdb id skip_id (0: none), hold
 * signal signo sent by someone other than gdb and xgdbprof, by their
 * siginfo: all-stop gdb keeps their events for the next resume. A gdb
 * round trip per thread. */
int session_threads_holding_signal(struct session *s, int signo, int skip_id);

/* The threads of pid not in a tracing stop, for an error that says why a
 * stop did not complete: " (not in a tracing stop: TID 'NAME' D in
 * rename, ...)", at most 4 named, or "" when every thread is in one.
 * Names come from the target: escaped. */
void session_describe_threads_not_stopped(pid_t pid, char *buf, size_t size);

#endif
