/* restore.h — remember the code bytes under our breakpoints, and put them
 * back ourselves if gdb dies while its int3 bytes are still in the target.
 *
 * Why: gdb writes 0xCC at every inserted breakpoint. If gdb is killed while
 * they are in memory, the kernel detaches the target, which keeps running
 * and dies of SIGTRAP at the next hit. The tracer records the original byte
 * of every address before asking gdb to insert a breakpoint there, and after
 * gdb's death restores them with its own ptrace attach.
 *
 * Invariants:
 *  - An address is remembered at most once; the byte is read from
 *    /proc/PID/mem before any breakpoint of ours covers it.
 *  - restore_set_after_gdb_died() stops every thread (PTRACE_SEIZE +
 *    PTRACE_INTERRUPT), writes back each remembered byte that reads 0xCC,
 *    writes back each RESTORE_PATCH byte that still reads what we wrote,
 *    rewinds a thread whose PC sits just past one of our int3s (it trapped
 *    and gdb never handled it), also heals any other int3 gdb left in
 *    executable file mappings (its internal breakpoints) by comparing with
 *    the file, puts back from the file any byte of gdb's displaced-stepping
 *    buffer (32 bytes at AT_ENTRY: a gdb killed mid-step leaves its copy of
 *    an instruction there), detaches, and sends SIGCONT if the process is left in state T
 *    (unless leave_stopped: it was in T before we came). Then the same for
 *    each child the target forked since restore_set_init that gdb left
 *    stopped (state T, untraced: gdb attaches to each fork child, takes its
 *    int3s out, steps it once and lets it go); such a child is continued
 *    when it was harmed or born less than RESTORE_CHILD_YOUNG_S ago, unless
 *    the target is left stopped (a group stop of its user's stops them).
 *  - Ints return 0 on success, -1 with e filled.
 */
#ifndef XGDBPROF_RESTORE_H
#define XGDBPROF_RESTORE_H

#include "util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum restore_kind {
	RESTORE_INT3,     /* under a breakpoint: put back when it reads 0xCC */
	RESTORE_PATCH,    /* a byte of ours written over code (a jump): put back
			   * when it still reads `patched` */
	RESTORE_KEEP,     /* ours in unused memory (a trampoline a thread may be
			   * running in): put back by the rescue unless a
			   * thread's PC lies within 64 bytes, never taken for
			   * gdb's by the heal */
	RESTORE_LEAVE,    /* ours in unused memory that a thread may still
			   * return into (a call's stub, target_call.h: its
			   * return address on the stack, no PC near): never
			   * written by the rescue, never taken for gdb's by
			   * the heal (an immediate holding 0xCC) */
};

struct restore_entry {
	uint64_t addr;
	uint8_t original;
	uint8_t patched;            /* RESTORE_PATCH: the byte we wrote */
	uint8_t kind;               /* enum restore_kind */
};

struct restore_set {
	pid_t pid;
	uint64_t start_ticks;       /* when pid started (proc_start_ticks): names the process for good */
	uint64_t since_ticks;       /* when the set was made, same clock: a child born since is one gdb
				     * may have held */
	bool leave_stopped;         /* the process was stopped (T) before we came: no SIGCONT */
	uint64_t call_mark;         /* a call through our stub is under way (target_call.h): its done
				     * mark, which the rescue waits for (RESTORE_CALL_WAIT_MS) before
				     * putting the RESTORE_LEAVE bytes back as RESTORE_KEEP ones */
	struct restore_entry *entries;
	size_t n, cap;
};

struct restore_report {
	pid_t pid;                  /* the target, and when it started: */
	uint64_t start_ticks;       /* the describe below tells its fate */
	size_t threads_stopped;     /* threads seized and stopped */
	size_t bytes_restored;      /* remembered bytes that read 0xCC and were written back */
	size_t bytes_intact;        /* remembered bytes already original */
	size_t foreign_restored;    /* other int3 bytes healed from the file */
	size_t pcs_rewound;         /* threads moved back onto a restored instruction */
	size_t patch_bytes_restored, patch_bytes_intact;  /* entry counters' (RESTORE_PATCH and _KEEP) */
	size_t patch_bytes_left;    /* _KEEP bytes a thread ran in: left, unreachable */
	size_t children_healed;     /* children gdb left stopped, healed as above */
	size_t children_continued;  /* of which continued (harmed, or young) */
	size_t children_bytes_restored, children_rewound;
};

/* A child left stopped no older than this is taken for one gdb held. */
#define RESTORE_CHILD_YOUNG_S 30

#define RESTORE_CALL_WAIT_MS 10000

void restore_set_init(struct restore_set *rs, pid_t pid);
void restore_set_release(struct restore_set *rs);

/* Reads and remembers the byte at addr (no-op if already remembered).
 * Returns 0, or -1 when the memory cannot be read. */
int restore_set_remember(struct restore_set *rs, uint64_t addr, struct xerr *e);

/* Remembers bytes we are about to write ourselves (kind RESTORE_PATCH,
 * RESTORE_KEEP or RESTORE_LEAVE), their original values given. An address
 * already remembered is an error: two writers would fight over it; but
 * RESTORE_LEAVE bytes remembered again as such are left as they are (a
 * stub's room, used call after call). */
int restore_set_remember_patch(struct restore_set *rs, uint64_t addr, const uint8_t *original,
			       const uint8_t *patched, size_t n, enum restore_kind kind, struct xerr *e);

/* Whether a remembered byte that reads `now` is ours to put back: gdb's
 * int3 over it, or (RESTORE_PATCH) what we wrote there; never a
 * RESTORE_KEEP byte (the rescue decides those by the threads' PCs), nor a
 * RESTORE_LEAVE one. */
bool restore_entry_planted(const struct restore_entry *r, uint8_t now);

/* The remembered original byte at addr: 1 and *out, or 0 if unknown. */
int restore_set_lookup(const struct restore_set *rs, uint64_t addr, uint8_t *out);

/* The gdb-death path described above. Waits up to timeout_ms for the dead
 * tracer to let go of the target. Returns 0 (report filled) when the target
 * was left running with its code restored (or had exited), -1 otherwise. */
int restore_set_after_gdb_died(const struct restore_set *rs, int timeout_ms,
			       struct restore_report *report, struct xerr *e);

/* One sentence for the user: what the rescue did ("restored 1 code byte
 * itself (0 already intact, 1 other int3 healed, 0 threads rewound)"). */
void restore_report_describe(const struct restore_report *report, char *buf, size_t size);

/* The target's fate, read from /proc now, when it did not survive gdb's
 * death: "process N died of SIGTRAP when gdb died: ..." (a zombie tells how
 * it ended), or that it is gone and how it ended is unknown (its parent
 * reaped it). A thread in, or running into, one of gdb's int3 traps when
 * gdb dies gets a fatal SIGTRAP before anything of ours can run: the user
 * must hear it. Fits a run note (< 240 bytes). Returns true (buf filled)
 * when the target is gone, false (buf empty) when it runs on. */
bool restore_report_fate(const struct restore_report *report, char *buf, size_t size);
/* After gdb's death and the heal: the children of pid still harmed, said
 * in buf (a run note, < 320 bytes): those still stopped (state T,
 * untraced: not taken for ones gdb held, or not healed) and those seen
 * dead of SIGTRAP (in gdb's step of a fork child, or an inherited int3).
 * Children the target reaped at once are not seen. Returns true (buf
 * filled) when there are any, false (buf empty) when not. */
bool restore_report_children(pid_t pid, char *buf, size_t size);

/* Compares the executable file mappings of pid with their files and
 * counts bytes that differ (int3 left behind or otherwise). Used by tests
 * and by `--check` style verification. Returns the count, or -1. */
long restore_count_code_differences(pid_t pid, struct xerr *e);

#endif
