/* restore.c — original code bytes under breakpoints, and their restoration
 * after gdb's death (see restore.h). */
#include "session/restore.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch/insn.h"
#include "procfs/proc.h"
#include "util/array.h"
#include "util/clock.h"

void restore_set_init(struct restore_set *rs, pid_t pid)
{
	memset(rs, 0, sizeof *rs);
	rs->pid = pid;
	rs->start_ticks = proc_start_ticks(pid);
	rs->since_ticks = proc_boot_ticks_now();
}

void restore_set_release(struct restore_set *rs)
{
	free(rs->entries);
	memset(rs, 0, sizeof *rs);
}

int restore_set_lookup(const struct restore_set *rs, uint64_t addr, uint8_t *out)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->entries[i].addr == addr) {
			*out = rs->entries[i].original;
			return 1;
		}
	return 0;
}

static int open_mem(pid_t pid, int flags, struct xerr *e)
{
	int fd = proc_open_mem(pid, flags);
	if (fd < 0)
		return xerr_set(e, "cannot open /proc/%d/mem: %s", (int)pid, strerror(errno));
	return fd;
}

int restore_set_remember(struct restore_set *rs, uint64_t addr, struct xerr *e)
{
	uint8_t byte;
	if (restore_set_lookup(rs, addr, &byte))
		return 0;
	int fd = open_mem(rs->pid, O_RDONLY, e);
	if (fd < 0)
		return -1;
	ssize_t got = pread(fd, &byte, 1, (off_t)addr);
	int saved = errno;
	close(fd);
	if (got != 1)
		return xerr_set(e, "cannot read the code byte at 0x%llx of process %d: %s",
				(unsigned long long)addr, (int)rs->pid, got < 0 ? strerror(saved) : "short read");
	struct restore_entry *grown = array_grow(rs->entries, &rs->cap, rs->n + 1, sizeof *grown);
	if (!grown)
		return xerr_oom(e);
	rs->entries = grown;
	rs->entries[rs->n] = (struct restore_entry){ .addr = addr, .original = byte, .kind = RESTORE_INT3 };
	rs->n++;
	return 0;
}

int restore_set_remember_patch(struct restore_set *rs, uint64_t addr, const uint8_t *original,
			       const uint8_t *patched, size_t n, enum restore_kind kind, struct xerr *e)
{
	size_t again = 0;
	for (size_t i = 0; i < n; i++) {
		const struct restore_entry *known = NULL;
		for (size_t k = 0; k < rs->n && !known; k++)
			if (rs->entries[k].addr == addr + i)
				known = &rs->entries[k];
		if (known && kind == RESTORE_LEAVE && known->kind == RESTORE_LEAVE)
			again++;
		else if (known)
			return xerr_set(e, "the byte at 0x%llx of process %d is already one of ours",
					(unsigned long long)(addr + i), (int)rs->pid);
	}
	if (again == n)
		return 0;
	if (again)
		return xerr_set(e, "the bytes at 0x%llx of process %d are partly ours already", (unsigned long long)addr,
				(int)rs->pid);
	struct restore_entry *grown = array_grow(rs->entries, &rs->cap, rs->n + n, sizeof *grown);
	if (!grown)
		return xerr_oom(e);
	rs->entries = grown;
	for (size_t i = 0; i < n; i++)
		rs->entries[rs->n++] = (struct restore_entry){ .addr = addr + i, .original = original[i],
							      .patched = patched ? patched[i] : 0, .kind = (uint8_t)kind };
	return 0;
}

bool restore_entry_planted(const struct restore_entry *r, uint8_t now)
{
	return (r->kind == RESTORE_INT3 || r->kind == RESTORE_PATCH) && now != r->original &&
	       (now == ARCH_BREAKPOINT_INSN || (r->kind == RESTORE_PATCH && now == r->patched));
}

/* Whether one of pcs lies within 64 bytes of addr (a thread running in
 * our code there: RESTORE_KEEP). */
static bool pc_near(const uint64_t *pcs, size_t npcs, uint64_t addr)
{
	for (size_t k = 0; k < npcs; k++)
		if (pcs[k] + 64 > addr && pcs[k] < addr + 64)
			return true;
	return false;
}

/* ---- stopping every thread ourselves ----------------------------------- */

struct seized {
	pid_t tid;
	int pending_signal;   /* a signal that stopped the thread, re-injected on detach */
};

static bool already_seized(const struct seized *s, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].tid == tid)
			return true;
	return false;
}

/* Seizes and stops each thread of pid; a dead tracer may hold them for a
 * moment after its pipes closed, hence the retries. Returns the count. */
static size_t seize_all(pid_t pid, struct seized **out, int timeout_ms)
{
	struct seized *list = NULL;
	size_t n = 0, cap = 0;
	double deadline = monotonic_ms() + timeout_ms;
	for (int round = 0; round < 3; round++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d)
			break;
		size_t before = n;
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || already_seized(list, n, tid))
				continue;
			long rc;
			while ((rc = ptrace(PTRACE_SEIZE, tid, NULL, NULL)) < 0 && errno == EPERM &&
			       monotonic_ms() < deadline) {
				struct timespec pause = { 0, 2 * 1000 * 1000 };
				nanosleep(&pause, NULL);
			}
			if (rc < 0)
				continue;
			if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
				ptrace(PTRACE_DETACH, tid, NULL, NULL);
				continue;
			}
			int status = 0;
			if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
				continue;  /* the thread exited */
			struct seized *grown = array_grow(list, &cap, n + 1, sizeof *grown);
			if (!grown) {
				ptrace(PTRACE_DETACH, tid, NULL, NULL);
				break;
			}
			list = grown;
			int sig = WSTOPSIG(status);
			bool event_stop = (status >> 16) != 0;
			list[n] = (struct seized){
				.tid = tid,
				.pending_signal = (!event_stop && sig != SIGTRAP && sig != SIGSTOP) ? sig : 0,
			};
			n++;
		}
		closedir(d);
		if (n == before && round > 0)
			break;  /* no thread appeared since the previous pass */
	}
	*out = list;
	return n;
}

static void detach_all(struct seized *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].tid > 0)
			ptrace(PTRACE_DETACH, list[i].tid, NULL, (void *)(long)list[i].pending_signal);
}

/* Lets every seized thread run ms milliseconds and stops it again; a
 * signal that stops one meanwhile is kept for the detach (if it had none),
 * a thread that exited is dropped (tid 0). */
static void run_briefly(struct seized *list, size_t n, int ms)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].tid > 0)
			ptrace(PTRACE_CONT, list[i].tid, NULL, NULL);
	struct timespec pause = { 0, (long)ms * 1000 * 1000 };
	nanosleep(&pause, NULL);
	for (size_t i = 0; i < n; i++) {
		if (list[i].tid <= 0)
			continue;
		ptrace(PTRACE_INTERRUPT, list[i].tid, NULL, NULL);
		int status = 0;
		if (waitpid(list[i].tid, &status, __WALL) < 0 || !WIFSTOPPED(status)) {
			list[i].tid = 0;
			continue;
		}
		int sig = WSTOPSIG(status);
		bool event_stop = (status >> 16) != 0;
		if (!event_stop && sig != SIGTRAP && sig != SIGSTOP && !list[i].pending_signal)
			list[i].pending_signal = sig;
	}
}

/* ---- healing foreign int3s from the files ---------------------------- */

struct code_mapping {
	uint64_t start, end, offset;
	char path[4096];
};

/* Calls fn for every private executable mapping backed by a regular file. */
static int foreach_code_mapping(pid_t pid, int (*fn)(const struct code_mapping *m, void *arg), void *arg,
				struct xerr *e)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return xerr_set(e, "cannot read %s: %s", path, strerror(errno));
	char line[4096 + 256];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		struct code_mapping m;
		char perms[8];
		int consumed = 0;
		unsigned long long start, end, offset;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &consumed) < 4)
			continue;
		if (perms[2] != 'x' || perms[3] != 'p' || consumed <= 0 || line[consumed] != '/')
			continue;
		size_t len = strcspn(line + consumed, "\n");
		if (len >= sizeof m.path || strstr(line + consumed, " (deleted)"))
			continue;
		memcpy(m.path, line + consumed, len);
		m.path[len] = '\0';
		m.start = start;
		m.end = end;
		m.offset = offset;
		rc = fn(&m, arg);
	}
	fclose(f);
	return rc;
}

struct heal_state {
	pid_t pid;
	int mem_fd;
	bool write;            /* false: only count differences */
	long differences;
	size_t healed;
	const struct restore_set *ours;  /* counted separately, skipped here */
	uint64_t scratch_start, scratch_end;  /* gdb's displaced-step buffer: every byte healed */
};

/* gdb (Linux, x86-64) steps a thread over a breakpoint in a copy of the
 * instruction written at the program's entry point (displaced stepping, the
 * tracer's non-stop mode) and puts the bytes back after the step. A gdb
 * killed in between leaves the copy there: any byte that differs from the
 * file is healed, not only an int3. 32 bytes cover gdb's buffer (an
 * instruction of at most 15 bytes and its fix-up room). */
static void scratch_buffer(pid_t pid, uint64_t *start, uint64_t *end)
{
	*start = *end = 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_auxv_t aux[64];
	ssize_t n = read(fd, aux, sizeof aux);
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof *aux && aux[i].a_type != AT_NULL; i++)
		if (aux[i].a_type == AT_ENTRY && aux[i].a_un.a_val) {
			*start = aux[i].a_un.a_val;
			*end = *start + 32;
		}
}

static int heal_mapping(const struct code_mapping *m, void *arg)
{
	struct heal_state *h = arg;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t size = (size_t)(m->end - m->start);
	uint8_t *mem = malloc(size), *file = malloc(size);
	if (mem && file) {
		ssize_t got_mem = pread(h->mem_fd, mem, size, (off_t)m->start);
		ssize_t got_file = pread(fd, file, size, (off_t)m->offset);
		size_t common = got_mem > 0 && got_file > 0 ? (size_t)(got_mem < got_file ? got_mem : got_file) : 0;
		for (size_t i = 0; i < common; i++) {
			if (mem[i] == file[i])
				continue;
			uint8_t orig;
			if (h->ours && restore_set_lookup(h->ours, m->start + i, &orig))
				continue;
			h->differences++;
			uint64_t at = m->start + i;
			bool scratch = at >= h->scratch_start && at < h->scratch_end;
			if (h->write && (mem[i] == ARCH_BREAKPOINT_INSN || scratch) &&
			    pwrite(h->mem_fd, &file[i], 1, (off_t)(m->start + i)) == 1)
				h->healed++;
		}
	}
	free(mem);
	free(file);
	close(fd);
	return 0;
}

long restore_count_code_differences(pid_t pid, struct xerr *e)
{
	struct heal_state h = { .pid = pid, .write = false };
	h.mem_fd = open_mem(pid, O_RDONLY, e);
	if (h.mem_fd < 0)
		return -1;
	int rc = foreach_code_mapping(pid, heal_mapping, &h, e);
	close(h.mem_fd);
	return rc < 0 ? -1 : h.differences;
}

/* ---- the gdb-death path ------------------------------------------------ */

bool restore_report_fate(const struct restore_report *r, char *buf, size_t size)
{
	if (size)
		buf[0] = '\0';
	if (r->pid <= 0 || size == 0)
		return false;
	char state = proc_state(r->pid);
	uint64_t started = proc_start_ticks(r->pid);
	bool same = !r->start_ticks || !started || started == r->start_ticks;
	if (state && state != 'Z' && state != 'X' && same)
		return false;
	/* A main thread that exited alone leaves the process a zombie in
	 * /proc while its other threads run on: not the process's end,
	 * unless they end now (a thread in a trap of the dead gdb's dies of
	 * SIGTRAP, and the process with it). The zombie's wait status is
	 * then the main thread's own exit, not how the process ended. */
	if (state == 'Z' && same && proc_any_thread_in(r->pid, "RSDTt")) {
		if (proc_threads_stay_in(r->pid, "RSDTt", 21, 10))
			return false;
		snprintf(buf, size, "process %d ended as gdb died; its main thread had exited before, so /proc does not "
			 "say how (a thread in, or running into, an int3 of gdb's dies of SIGTRAP: docs/safety.md)",
			 (int)r->pid);
		return true;
	}
	int status;
	if (state == 'Z' && proc_zombie_wait_status(r->pid, &status) == 0) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP)
			snprintf(buf, size, "process %d died of SIGTRAP%s when gdb died: a thread of it was in, or ran "
				 "into, an int3 of gdb's before xgdbprof could take it out (a limit of ptrace: "
				 "docs/safety.md)", (int)r->pid, WCOREDUMP(status) ? " (core dumped)" : "");
		else if (WIFSIGNALED(status))
			snprintf(buf, size, "process %d was killed by %s%s", (int)r->pid,
				 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "a signal",
				 WCOREDUMP(status) ? " (core dumped)" : "");
		else
			snprintf(buf, size, "process %d exited with status %d", (int)r->pid, WEXITSTATUS(status));
		return true;
	}
	snprintf(buf, size, "process %d is gone and its parent has reaped it, so how it ended is unknown here: "
		 "gdb's death turns a pending breakpoint trap into a fatal SIGTRAP (docs/safety.md)", (int)r->pid);
	return true;
}

bool restore_report_children(pid_t pid, char *buf, size_t size)
{
	if (size)
		buf[0] = '\0';
	pid_t *children = NULL;
	int n = pid > 0 && size ? proc_children(pid, &children) : 0;
	enum { STOPPED, TRAPPED };
	size_t count[2] = { 0, 0 };
	char ids[2][96] = { "", "" };
	for (int i = 0; i < n; i++) {
		char state = proc_state(children[i]);
		int status, kind;
		if (state == 'T' && proc_tracer_pid(children[i]) == 0)
			kind = STOPPED;
		else if (state == 'Z' && proc_zombie_wait_status(children[i], &status) == 0 && WIFSIGNALED(status) &&
			 WTERMSIG(status) == SIGTRAP)
			kind = TRAPPED;
		else
			continue;
		count[kind]++;
		size_t used = strlen(ids[kind]);
		if (used + 16 < sizeof ids[kind])
			snprintf(ids[kind] + used, sizeof ids[kind] - used, "%s%d", used ? ", " : "", (int)children[i]);
	}
	size_t stopped = count[STOPPED], trapped = count[TRAPPED];
	free(children);
	if (!stopped && !trapped)
		return false;
	int w = 0;
	if (stopped)
		w = snprintf(buf, size, "%zu child process%s of process %d left stopped (state T: %s) after gdb died, "
			     "not taken for one gdb held (docs/safety.md)", stopped, stopped == 1 ? "" : "es", (int)pid,
			     ids[STOPPED]);
	if (trapped && w >= 0 && (size_t)w < size)
		snprintf(buf + w, size - (size_t)w, "%s%zu child process%s of process %d died of SIGTRAP as gdb died (%s): "
			 "in gdb's step of a new child, or at an inherited int3", stopped ? "; " : "", trapped,
			 trapped == 1 ? "" : "es", (int)pid, ids[TRAPPED]);
	return true;
}

void restore_report_describe(const struct restore_report *r, char *buf, size_t size)
{
	int n = snprintf(buf, size, "restored %zu code byte%s itself (%zu already intact, %zu other int3 healed, "
			 "%zu thread%s rewound)", r->bytes_restored, r->bytes_restored == 1 ? "" : "s", r->bytes_intact,
			 r->foreign_restored, r->pcs_rewound, r->pcs_rewound == 1 ? "" : "s");
	if (n > 0 && (size_t)n < size && (r->patch_bytes_restored || r->patch_bytes_intact || r->patch_bytes_left))
		n += snprintf(buf + n, size - (size_t)n, ", and %zu bytes of entry counters (%zu already intact, %zu left "
			      "where a thread ran in them)", r->patch_bytes_restored, r->patch_bytes_intact,
			      r->patch_bytes_left);
	if (n > 0 && (size_t)n < size && r->children_healed)
		snprintf(buf + n, size - (size_t)n, "; %zu child process%s gdb held stopped as it died healed "
			 "(%zu code byte%s restored, %zu thread%s rewound), %zu continued", r->children_healed,
			 r->children_healed == 1 ? "" : "es", r->children_bytes_restored,
			 r->children_bytes_restored == 1 ? "" : "s", r->children_rewound,
			 r->children_rewound == 1 ? "" : "s", r->children_continued);
}

/* A call through our stub under way: the thread returns into the stub
 * (its return address on the stack, no PC near it), so its bytes may go
 * back only once the call has set its done mark. The thread runs, gdb
 * gone; true once the mark reads non-zero. */
static bool call_done(pid_t pid, uint64_t mark, int timeout_ms)
{
	int fd = open_mem(pid, O_RDONLY, NULL);
	if (fd < 0)
		return false;
	bool done = false;
	struct timespec tick = { 0, 1000 * 1000 };
	for (int waited = 0; !done && waited < timeout_ms; waited++) {
		uint64_t v = 0;
		if (pread(fd, &v, sizeof v, (off_t)mark) != (ssize_t)sizeof v)
			break;
		done = v != 0;
		if (!done)
			nanosleep(&tick, NULL);
	}
	close(fd);
	return done;
}

/* Ours in unused memory, put back once no thread's PC is near. */
static bool kept(const struct restore_entry *r, bool calls_done)
{
	return r->kind == RESTORE_KEEP || (r->kind == RESTORE_LEAVE && calls_done);
}

/* The heal of one process (rs->pid): every thread seized, our bytes and
 * gdb's int3s put back, a thread that trapped on one of ours rewound,
 * then let go (still in T if it was). */
static int heal_process(const struct restore_set *rs, int timeout_ms, struct restore_report *report,
			struct xerr *e)
{
	bool calls_done = rs->call_mark && call_done(rs->pid, rs->call_mark, RESTORE_CALL_WAIT_MS);
	struct seized *threads = NULL;
	report->threads_stopped = seize_all(rs->pid, &threads, timeout_ms);
	if (report->threads_stopped == 0) {
		free(threads);
		return xerr_set(e, "cannot attach to process %d to restore its code after gdb died", (int)rs->pid);
	}
	int mem_fd = open_mem(rs->pid, O_RDWR, e);
	if (mem_fd < 0) {
		detach_all(threads, report->threads_stopped);
		free(threads);
		return -1;
	}
	/* A thread that executed one of our int3s after gdb stopped listening
	 * sits just past the breakpoint: move it back onto the instruction. */
	for (size_t t = 0; t < report->threads_stopped; t++) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, threads[t].tid, NULL, &regs) < 0)
			continue;
		uint8_t now;
		uint64_t bp = regs.rip - ARCH_BREAKPOINT_LEN;
		bool ours = false;
		for (size_t i = 0; i < rs->n && !ours; i++)
			/* gdb's int3 over the first byte of one of our jumps (a
			 * one-shot breakpoint a thread trapped on) too */
			ours = rs->entries[i].addr == bp &&
			       (rs->entries[i].kind == RESTORE_INT3 ||
				(rs->entries[i].kind == RESTORE_PATCH && rs->entries[i].patched == 0xe9));
		if (ours && pread(mem_fd, &now, 1, (off_t)bp) == 1 && now == ARCH_BREAKPOINT_INSN) {
			regs.rip = bp;
			if (ptrace(PTRACE_SETREGS, threads[t].tid, NULL, &regs) == 0)
				report->pcs_rewound++;
		}
	}
	int rc = 0;
	for (size_t i = 0; i < rs->n; i++) {
		uint8_t now;
		if (rs->entries[i].kind == RESTORE_KEEP)
			continue;
		if (pread(mem_fd, &now, 1, (off_t)rs->entries[i].addr) != 1)
			continue;  /* unmapped since (library unloaded) */
		bool patch = rs->entries[i].kind == RESTORE_PATCH;
		if (now == rs->entries[i].original) {
			*(patch ? &report->patch_bytes_intact : &report->bytes_intact) += 1;
		} else if (restore_entry_planted(&rs->entries[i], now)) {
			if (pwrite(mem_fd, &rs->entries[i].original, 1, (off_t)rs->entries[i].addr) == 1)
				*(patch ? &report->patch_bytes_restored : &report->bytes_restored) += 1;
			else
				rc = xerr_set(e, "cannot write the code byte at 0x%llx of process %d: %s",
					      (unsigned long long)rs->entries[i].addr, (int)rs->pid, strerror(errno));
		}
	}
	/* Our code in unused memory (an entry counter's) goes back too, once
	 * no thread runs in it: with the jumps to it restored above nothing
	 * enters it again, and a thread inside leaves within a few
	 * instructions, so the threads run 2 ms at a time until none is
	 * within 64 bytes of it (20 tries; then those bytes stay, unreachable). */
	uint64_t *pcs = calloc(report->threads_stopped ? report->threads_stopped : 1, sizeof *pcs);
	for (int attempt = 0; attempt < 20; attempt++) {
		size_t npcs = 0;
		for (size_t t = 0; pcs && t < report->threads_stopped; t++) {
			struct user_regs_struct regs;
			if (threads[t].tid > 0 && ptrace(PTRACE_GETREGS, threads[t].tid, NULL, &regs) == 0)
				pcs[npcs++] = regs.rip;
		}
		bool any_near = !pcs;
		for (size_t i = 0; i < rs->n && !any_near; i++) {
			uint8_t now;
			if (!kept(&rs->entries[i], calls_done) || pread(mem_fd, &now, 1, (off_t)rs->entries[i].addr) != 1 ||
			    now == rs->entries[i].original)
				continue;
			any_near = pc_near(pcs, npcs, rs->entries[i].addr);
		}
		if (any_near && attempt < 19 && pcs) {
			run_briefly(threads, report->threads_stopped, 2);
			continue;
		}
		for (size_t i = 0; i < rs->n; i++) {
			uint8_t now;
			if (!kept(&rs->entries[i], calls_done) || pread(mem_fd, &now, 1, (off_t)rs->entries[i].addr) != 1)
				continue;
			bool near = !pcs || pc_near(pcs, npcs, rs->entries[i].addr);
			if (now == rs->entries[i].original)
				report->patch_bytes_intact++;
			else if (near)
				report->patch_bytes_left++;
			else if (pwrite(mem_fd, &rs->entries[i].original, 1, (off_t)rs->entries[i].addr) == 1)
				report->patch_bytes_restored++;
		}
		break;
	}
	free(pcs);
	struct heal_state h = { .pid = rs->pid, .mem_fd = mem_fd, .write = true, .ours = rs };
	scratch_buffer(rs->pid, &h.scratch_start, &h.scratch_end);
	foreach_code_mapping(rs->pid, heal_mapping, &h, NULL);
	report->foreign_restored = h.healed;
	close(mem_fd);
	/* The detach also clears a single-step flag gdb's death left set (the
	 * kernel clears it at a detach, not when the tracer dies). */
	detach_all(threads, report->threads_stopped);
	free(threads);
	return rc;
}

/* Sends SIGCONT until pid is out of its stop (50 tries, 10 ms apart);
 * surely: once before the first look. Just after our detach a process in
 * a group stop runs for a moment to stop again, and may look running. */
static void continue_stopped(pid_t pid, bool surely)
{
	if (surely)
		kill(pid, SIGCONT);
	for (int attempt = 0; attempt < 50; attempt++) {
		char state = proc_state(pid);
		if (state != 'T' && state != 't')
			break;
		kill(pid, SIGCONT);
		struct timespec pause = { 0, 10 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
}

/* gdb attaches to each child the target forks, takes its int3s out of it,
 * steps it once (gdb 13, linux-nat) and lets it go. Dead in between, it
 * leaves the child stopped (state T, untraced), maybe with an inherited
 * int3. Each such child born since the session began is healed as the
 * target is, and continued when it was harmed or is young (born less than
 * RESTORE_CHILD_YOUNG_S ago: gdb lets a child go within milliseconds, so
 * an older unharmed one in T was stopped by somebody else, and stays so);
 * never when the target is to stay stopped (a job-control stop of the
 * user's stops the group's children too: healed, they wait for it). */
static void heal_children(const struct restore_set *rs, struct restore_report *report)
{
	pid_t *children = NULL;
	int n = proc_children(rs->pid, &children);
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t now = proc_boot_ticks_now();
	for (int i = 0; i < n; i++) {
		uint64_t born = proc_start_ticks(children[i]);
		if (!born || born < rs->since_ticks || proc_state(children[i]) != 'T' || proc_tracer_pid(children[i]) != 0)
			continue;
		struct restore_set child = *rs;
		child.pid = children[i];
		child.start_ticks = born;
		child.call_mark = 0;   /* our calls run in the target's threads, none in a child */
		struct restore_report healed;
		memset(&healed, 0, sizeof healed);
		if (heal_process(&child, 500, &healed, NULL) < 0 || healed.threads_stopped == 0)
			continue;
		report->children_healed++;
		bool harmed = healed.bytes_restored || healed.foreign_restored || healed.patch_bytes_restored ||
			      healed.pcs_rewound;
		report->children_rewound += healed.pcs_rewound;
		report->children_bytes_restored += healed.bytes_restored + healed.foreign_restored +
						   healed.patch_bytes_restored;
		bool young = hz > 0 && born + (uint64_t)(RESTORE_CHILD_YOUNG_S * hz) >= now;
		if ((harmed || young) && !rs->leave_stopped) {
			continue_stopped(children[i], true);   /* it was in T: the SIGCONT is ours to send */
			report->children_continued++;
		}
	}
	free(children);
}

int restore_set_after_gdb_died(const struct restore_set *rs, int timeout_ms,
			       struct restore_report *report, struct xerr *e)
{
	memset(report, 0, sizeof *report);
	report->pid = rs->pid;
	report->start_ticks = rs->start_ticks;
	char state = proc_state(rs->pid);
	if (state == 0 || state == 'Z' || state == 'X')
		return 0;  /* the target is gone: nothing to restore */
	int rc = heal_process(rs, timeout_ms, report, e);
	if (report->threads_stopped == 0)
		return rc;
	if (!rs->leave_stopped)
		continue_stopped(rs->pid, false);
	heal_children(rs, report);
	return rc;
}
