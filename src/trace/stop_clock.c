/* stop_clock.c — the target's stopped time from its threads' scheduler
 * clocks (see stop_clock.h). */
#include "trace/stop_clock.h"
#include "util/stats.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void stop_clock_init(struct stop_clock *c, pid_t pid)
{
	memset(c, 0, sizeof *c);
	c->pid = pid;
	/* The main thread is the likeliest first hitter: with it marked from
	 * the start, a single-threaded target is measured from its first hit. */
	c->marks[0].tid = pid;
	c->nmarks = 1;
	/* Whether the kernel keeps the figures is global: ask about ourselves,
	 * a thread that has certainly run. */
	struct proc_schedstat own;
	c->unavailable = proc_thread_schedstat(getpid(), getpid(), &own) < 0;
}

static struct stop_clock_mark *find_mark(struct stop_clock *c, pid_t tid)
{
	for (size_t i = 0; i < c->nmarks; i++)
		if (c->marks[i].tid == tid)
			return &c->marks[i];
	return NULL;
}

/* A slot for a thread not yet followed: a free one, else the next in turn
 * (a thread that hits rarely loses its slot; its next hit is then counted
 * at the median). */
static struct stop_clock_mark *new_mark(struct stop_clock *c, pid_t tid)
{
	struct stop_clock_mark *m;
	if (c->nmarks < STOP_CLOCK_THREADS) {
		m = &c->marks[c->nmarks++];
	} else {
		m = &c->marks[c->replace_next];
		c->replace_next = (c->replace_next + 1) % STOP_CLOCK_THREADS;
	}
	memset(m, 0, sizeof *m);
	m->tid = tid;
	return m;
}

void stop_clock_stopped(struct stop_clock *c, pid_t tid, uint64_t when, struct stop_clock_window *w)
{
	memset(w, 0, sizeof *w);
	if (c->unavailable)
		return;
	pid_t measured = tid > 0 ? tid : c->window_tid > 0 ? c->window_tid : c->pid;
	struct stop_clock_mark *target = find_mark(c, measured);
	if (!target && tid > 0)
		target = new_mark(c, tid);
	for (size_t i = 0; i < c->nmarks; i++) {
		struct stop_clock_mark *m = &c->marks[i];
		struct proc_schedstat now;
		if (proc_thread_schedstat(c->pid, m->tid, &now) < 0) {
			/* A thread that ended: its window is gone. */
			m->valid = m->read_this_stop = false;
			continue;
		}
		if (m == target && m->valid && c->window_start_ns && when > c->window_start_ns &&
		    now.run_ns >= m->clocks.run_ns && now.wait_ns >= m->clocks.wait_ns) {
			double wall = (double)(when - c->window_start_ns);
			double ran = (double)(now.run_ns - m->clocks.run_ns);
			double waited = (double)(now.wait_ns - m->clocks.wait_ns);
			w->read = true;
			w->running_ns = ran < wall ? ran : wall;
			w->held_ns = wall - w->running_ns;
			w->waited_ns = waited < w->held_ns ? waited : w->held_ns;
			/* Preemptions are fine (their wait is counted); a sleep
			 * is not a cost of ours and cannot be told apart. */
			w->exact = now.voluntary_switches - m->clocks.voluntary_switches <= m->expect_stops;
			if (tid > 0 && w->exact) {
				c->recent[c->nrecent++ % STOP_CLOCK_RECENT] = w->held_ns;
				c->measured++;
				c->waited_ns += w->waited_ns;
			} else if (tid > 0) {
				c->bounded++;
			}
		}
		m->clocks = now;
		m->read_this_stop = true;
	}
}

void stop_clock_resuming(struct stop_clock *c, pid_t tid, bool stepping, uint64_t now)
{
	c->window_start_ns = now;
	if (tid > 0)
		c->window_tid = tid;
	for (size_t i = 0; i < c->nmarks; i++) {
		struct stop_clock_mark *m = &c->marks[i];
		m->valid = m->read_this_stop;
		m->read_this_stop = false;
		/* The stop that ends the window; gdb's step over a breakpoint
		 * (run one instruction, stop, run again) adds one, to every
		 * thread when gdb steps in place (it stops them all first). */
		m->expect_stops = stepping && (m->tid == tid || c->steps_stop_all) ? 2 : 1;
	}
}

double stop_clock_median(const struct stop_clock *c)
{
	size_t n = c->nrecent < STOP_CLOCK_RECENT ? c->nrecent : STOP_CLOCK_RECENT;
	if (n == 0)
		return -1;
	double sorted[STOP_CLOCK_RECENT];
	memcpy(sorted, c->recent, n * sizeof *sorted);
	return stats_percentile(sorted, n, 50);
}
