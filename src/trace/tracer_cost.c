/* tracer_cost.c — a hit's CPU cost against the program's, and calibration. */
#include "trace/tracer_internal.h"

/* A thread's wait for its first entry hit in a window, cut short by the
 * window's end or another stop of it: below this it says too little to
 * matter (a thread that barely ran). */
#define WAIT_CENSOR_NS 100000.0

/* ---- a hit's CPU cost against the program's ------------------------------- */

/* At a handled stop of thread tid (bp: its breakpoint, 0 for other
 * stops): whether it is the calibration breakpoint's, and then its sample.
 * The thread is stopped: its on-CPU clock stands still, so the reading is
 * the same at the stop and at our resume. */
static struct hitter *hitter_of(struct hit_cpu *h, pid_t tid)
{
	for (size_t i = 0; i < h->nhitters; i++)
		if (h->hitters[i].tid == tid)
			return &h->hitters[i];
	if (h->nhitters == sizeof h->hitters / sizeof *h->hitters)
		return NULL;
	struct hitter *n = &h->hitters[h->nhitters++];
	memset(n, 0, sizeof *n);
	n->tid = tid;
	return n;
}

/* At a switch of the probes: each hitting thread's CPU since its last
 * reading goes to its armed time when they were on; on switching them on,
 * the readings start. */
void tracer_hitters_at_switch(struct tracer *t, bool on_before, bool on_after)
{
	struct hit_cpu *h = &t->hit_cpu;
	for (size_t i = 0; i < h->nhitters; i++) {
		struct hitter *x = &h->hitters[i];
		uint64_t run = proc_thread_runtime_ns(t->pid, x->tid);
		if (on_before && x->marked && run >= x->mark_ns)
			x->armed_ns += (double)(run - x->mark_ns);
		if (on_before && x->in_window && !x->hit_in_window && run >= x->open_ns + WAIT_CENSOR_NS)
			x->censored++;
		if (!on_before && x->off_marked && run >= x->off_mark_ns)
			x->off_ns += (double)(run - x->off_mark_ns);
		x->marked = on_after && run;
		x->mark_ns = run;
		/* Read before the probes are switched: a window's opening is
		 * counted a little early (the waits only lengthen), its end a
		 * little late. */
		x->in_window = on_after && run;
		x->open_ns = run;
		x->hit_in_window = false;
		x->off_marked = !on_after && run;
		x->off_mark_ns = run;
	}
}

/* At an entry hit with the probes on: the thread's CPU since its last
 * reading in this window (run, read at this stop) is armed time holding
 * this one hit. A thread's first hit ever has no reading before it in the
 * window: not counted. */
static void hitter_hit(struct tracer *t, pid_t tid, uint64_t run)
{
	struct hitter *x = hitter_of(&t->hit_cpu, tid);
	if (!x)
		return;
	if (x->marked && run >= x->mark_ns) {
		x->armed_ns += (double)(run - x->mark_ns);
		x->hits++;
	}
	if (x->in_window && !x->hit_in_window && run >= x->open_ns) {
		x->hit_in_window = true;
		x->first_pending = true;
		x->pending_u_ns = (double)(run - x->open_ns);
	}
	x->marked = run != 0;
	x->mark_ns = run;
}

/* After a handled stop of thread tid in an armed window: when it was the
 * thread's first there, its wait counts if the stop was an entry hit, else
 * the window is censored for it. */
void tracer_hitter_first_wait(struct tracer *t, pid_t tid, bool entry)
{
	struct hit_cpu *h = &t->hit_cpu;
	for (size_t i = 0; i < h->nhitters; i++) {
		struct hitter *x = &h->hitters[i];
		if (x->tid != tid || !x->first_pending)
			continue;
		x->first_pending = false;
		if (entry) {
			x->u_sum += x->pending_u_ns;
			x->u_squares += x->pending_u_ns * x->pending_u_ns;
			x->n_u++;
		} else if (x->pending_u_ns >= WAIT_CENSOR_NS) {
			x->censored++;
		}
	}
}

bool tracer_hit_cpu_at_stop(struct tracer *t, pid_t tid, int bp)
{
	struct hit_cpu *h = &t->hit_cpu;
	bool calibration = bp > 0 && bp == h->pending_bp && tid == h->pending_tid;
	/* one reading of the stopped thread's clock serves both */
	uint64_t run = t->duty_cycle.duty == DUTY_ON || calibration ? proc_thread_runtime_ns(t->pid, tid) : 0;
	if (t->duty_cycle.duty == DUTY_ON)
		hitter_hit(t, tid, run);
	if (!calibration)
		return false;
	/* gdb deleted the one-shot breakpoint at this hit */
	h->pending_bp = 0;
	h->handled_calibrations++;
	if (run && run >= h->pending_run_ns && h->ncalibrations < TRACER_CALIBRATIONS)
		h->calibrations[h->ncalibrations++] = (double)(run - h->pending_run_ns);
	return true;
}

/* The instruction after a probed entry, where a calibration breakpoint can
 * go: one gdb steps onto from the probe's breakpoint; UINT64_MAX when there
 * is none usable (a breakpoint of ours there, or a RIP-relative one that in
 * non-stop mode would make gdb step in place for the rest of the session). */
static uint64_t next_instruction(struct tracer *t, struct site *site)
{
	if (site->next_insn)
		return site->next_insn;
	site->next_insn = UINT64_MAX;
	tracer_decode_site(t, site);
	uint64_t next = site->next_addr;
	if (site->first_transfers || !next)
		return site->next_insn;
	if (next <= site->addr || next >= site->addr + 16 || tracer_find_site(t, next) >= 0 || tracer_is_return_bp_addr(t, next))
		return site->next_insn;
	if (t->non_stop && !t->probes.displaced_off && site->next_rip)
		return site->next_insn;
	site->next_insn = next;
	return next;
}

/* At an entry hit while armed: every other one until TRACER_CALIBRATIONS are
 * taken, a one-shot breakpoint for this thread only on the next
 * instruction. gdb's step over the probe lands on it and reports it: that
 * gap holds no program time. */
void tracer_calibrate_at(struct tracer *t, struct site *site, int gdb_id, pid_t tid)
{
	struct hit_cpu *h = &t->hit_cpu;
	if (h->pending_bp || h->ncalibrations >= TRACER_CALIBRATIONS || h->handled_calibrations >= 4 * TRACER_CALIBRATIONS ||
	    site->inlined || t->duty_cycle.duty != DUTY_ON || t->st->entries % 2 == 0 || !tracer_budgeted(t))
		return;
	uint64_t next = next_instruction(t, site);
	uint64_t run = proc_thread_runtime_ns(t->pid, tid);
	struct xerr ignored;
	if (next == UINT64_MAX || !run || session_remember_code_byte(t->s, next, &ignored) < 0)
		return;
	int n = 0;
	if (session_break_insert_once(t->s, next, gdb_id, &n, &ignored) < 0)
		return;
	h->pending_bp = n;
	h->pending_tid = tid;
	h->pending_run_ns = run;
}
