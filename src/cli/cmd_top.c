/* cmd_top.c — `xgdbprof top PID`: a live view of where the CPU goes, like
 * py-spy top and perf top (docs/top.md).
 *
 * The sampler of every other run samples; its sink adds each stack to a
 * sliding window (report/top_window.h) and its tick, between rounds with
 * the target running, reads keys and redraws once per refresh. Quitting
 * (q, Ctrl-C, SIGTERM, -d) ends the sampler's run normally, so the session
 * detaches in order as every run does. On a terminal the view takes the
 * alternate screen; the terminal is given back before anything else is
 * said, on every way out (an atexit hook covers an exit we did not plan).
 * Without a terminal on stdout, each refresh prints a plain snapshot.
 */
#include "config.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "procfs/proc.h"
#include "report/report_model.h"
#include "report/top_window.h"
#include "stacks/sampler.h"
#include "symbols/source_map.h"
#include "symbols/symbolize.h"
#include "session/session.h"
#include "session/signals.h"
#include "util/clock.h"
#include "util/text_escape.h"
#include "util/text_fit.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

struct top_options {
	pid_t pid;
	double frequency_hz;
	double window_s;
	double refresh_s;
	double duration_s;         /* 0: until q, Ctrl-C or SIGTERM */
	enum sampler_threads threads;
	const char *threads_regex;
	char threads_label[256];
	char threads_pattern[256];   /* threads_regex points here */
	int max_stopped_percent;
	size_t rows;               /* rows per plain snapshot */
};

/* The run's cumulative figures at one refresh; the header's are the
 * differences across the window. */
struct top_mark {
	uint64_t t_ns;
	uint64_t rounds;
	double stopped_s;          /* summed over threads */
	double longest_s;          /* per round, the longest any thread was held: the budget's charge */
	long long cpu_ticks;
};

struct top_view {
	const struct top_options *opts;
	struct top_window *window;
	const struct sampler_stats *stats;  /* the sampler's, kept up to date as it runs */
	pid_t pid;
	char exe[PATH_MAX];
	bool live;                 /* the alternate screen on a terminal; else plain snapshots */
	bool keys;                 /* keys read from stdin (a terminal) */
	bool non_stop;
	long clock_ticks;
	uint64_t start_ns, next_refresh_ns;
	uint64_t rounds;
	enum top_sort sort;
	int64_t tid;               /* the thread shown; 0: every thread */
	struct top_mark *marks;    /* a ring of the last refreshes, enough to span the window */
	size_t nmarks, marks_cap, marks_next;
	unsigned short cols, lines;  /* the terminal's size at the last draw */
	int snapshots;
};

/* ---- the terminal ----------------------------------------------------------- */

static struct {
	bool screen;               /* in the alternate screen, cursor hidden */
	bool modes;                /* stdin's modes changed; saved holds the old ones */
	struct termios saved;
	bool hooked;
} terminal;

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)   /* a signal we turn into a flag */
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Idempotent: called on the way out, and by atexit. */
static void terminal_restore(void)
{
	if (terminal.screen) {
		static const char leave[] = "\033[?25h\033[?1049l";
		write_all(STDOUT_FILENO, leave, sizeof leave - 1);
		terminal.screen = false;
	}
	if (terminal.modes) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &terminal.saved);
		terminal.modes = false;
	}
}

/* Keys one at a time without Enter or echo. Ctrl-C still raises SIGINT
 * (a flag here: the run winds down and detaches). Ctrl-Z and Ctrl-\ are
 * switched off: one would suspend the view in the alternate screen with
 * gdb still attached, the other kill us before the terminal is given back.
 * Not in the background (`xgdbprof top PID &`): changing the modes there
 * would stop us with SIGTTOU. */
static bool terminal_keys(void)
{
	if (tcgetpgrp(STDIN_FILENO) != getpgrp() || tcgetattr(STDIN_FILENO, &terminal.saved) < 0)
		return false;
	struct termios raw = terminal.saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	raw.c_cc[VSUSP] = _POSIX_VDISABLE;
	raw.c_cc[VQUIT] = _POSIX_VDISABLE;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
		return false;
	terminal.modes = true;
	return true;
}

static void terminal_enter(struct top_view *v)
{
	if (!terminal.hooked) {
		atexit(terminal_restore);
		terminal.hooked = true;
	}
	v->keys = isatty(STDIN_FILENO) && terminal_keys();
	static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
	write_all(STDOUT_FILENO, enter, sizeof enter - 1);
	terminal.screen = true;
}

static void terminal_size(unsigned short *cols, unsigned short *lines)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		*cols = ws.ws_col;
		*lines = ws.ws_row;
		return;
	}
	size_t width = text_terminal_width(STDOUT_FILENO);
	*cols = (unsigned short)(width > 1000 ? 1000 : width);
	*lines = 24;
}

/* ---- the header's figures over the window --------------------------------- */

static void mark_now(struct top_view *v, uint64_t now)
{
	struct top_mark m = {
		.t_ns = now, .rounds = v->rounds, .stopped_s = v->stats->run.stopped_s,
		.longest_s = v->stats->longest_thread_stops_s, .cpu_ticks = proc_cpu_ticks(v->pid),
	};
	v->marks[v->marks_next] = m;
	v->marks_next = (v->marks_next + 1) % v->marks_cap;
	if (v->nmarks < v->marks_cap)
		v->nmarks++;
}

/* The oldest mark still inside the window (or the oldest kept), and the
 * newest; false before there are two. */
static bool window_marks(const struct top_view *v, const struct top_mark **from, const struct top_mark **to)
{
	if (v->nmarks < 2)
		return false;
	size_t newest = (v->marks_next + v->marks_cap - 1) % v->marks_cap;
	size_t oldest = (v->marks_next + v->marks_cap - v->nmarks) % v->marks_cap;
	*to = &v->marks[newest];
	uint64_t span = (uint64_t)(v->opts->window_s * 1e9);
	for (size_t k = 0, i = oldest; k + 1 < v->nmarks; k++, i = (i + 1) % v->marks_cap) {
		if (v->marks[i].t_ns + span >= (*to)->t_ns) {
			*from = &v->marks[i];
			return true;
		}
	}
	return false;
}

/* ---- drawing ------------------------------------------------------------------ */

/* One line of the view: positioned and cleared on the live screen, plain
 * otherwise; text (ours, or target text already escaped) shortened to width. */
static void put_line(FILE *out, const struct top_view *v, int row, const char *text, size_t width)
{
	if (v->live && row >= (int)v->lines)
		return;   /* the last line is the keys' */
	if (v->live)
		fprintf(out, "\033[%d;1H\033[K", row);
	text_put_fit(out, text, strlen(text), width, 60);
	if (!v->live)
		fputc('\n', out);
}

/* The first of n texts (longest first) that fits width, else the last
 * one shortened: header lines say less on a narrow terminal rather than
 * lose a figure to the "…" of shortening (docs/top.md). */
static void put_first_fitting(FILE *out, const struct top_view *v, int row, char texts[][512], size_t n,
			      size_t width)
{
	size_t pick = n - 1;
	for (size_t i = 0; i < n; i++) {
		if (text_columns(texts[i], strlen(texts[i])) <= width) {
			pick = i;
			break;
		}
	}
	put_line(out, v, row, texts[pick], width);
}

/* The observer effect as every report words it: in non-stop mode the
 * figure the budget keeps, each thread's share of its time held by the
 * kernel's account since top started (the budget's own span); gdb's round
 * trip over the window only with -v, on a line of its own (verbose). */
static void describe_stops(char texts[][512], size_t *n, char verbose[][512], size_t *nverbose,
			   const struct top_view *v, double seconds, const struct top_mark *from,
			   const struct top_mark *to)
{
	double summed = 100.0 * (to->stopped_s - from->stopped_s) / seconds;
	double per_thread = 100.0 * (to->longest_s - from->longest_s) / seconds;
	*n = *nverbose = 0;
	if (!v->non_stop) {
		snprintf(texts[(*n)++], 512, "observer effect: target stopped %.1f%% of the time, over the window", summed);
		snprintf(texts[(*n)++], 512, "observer effect: target stopped %.1f%% of the time", summed);
		snprintf(texts[(*n)++], 512, "stopped %.1f%%", summed);
		return;
	}
	double held = v->stats->thread_held_now_pct;
	if (held < 0) {
		snprintf(texts[(*n)++], 512, "observer effect: measuring...");
	} else {
		snprintf(texts[(*n)++], 512, "observer effect: each thread held at most %.1f%% of its time since top "
			 "started (the budget's measure: the kernel's account)", held);
		snprintf(texts[(*n)++], 512, "observer effect: each thread held at most %.1f%% of its time since top "
			 "started", held);
		snprintf(texts[(*n)++], 512, "observer effect: each thread held at most %.1f%% since start", held);
		snprintf(texts[(*n)++], 512, "held at most %.1f%% a thread", held);
	}
	if (!cli_globals.verbose)
		return;
	snprintf(verbose[(*nverbose)++], 512, "gdb's round trip over the window: each thread stopped at most %.1f%% "
		 "of its time, %.1f%% summed over threads", per_thread, summed);
	snprintf(verbose[(*nverbose)++], 512, "gdb's round trip: each thread stopped at most %.1f%%, %.1f%% summed",
		 per_thread, summed);
	snprintf(verbose[(*nverbose)++], 512, "round trip: %.1f%% a thread", per_thread);
}

static void describe_selection(char *buf, size_t size, const struct top_view *v, const struct top_thread *threads,
			       size_t nthreads, uint64_t samples)
{
	const char *sort = v->sort == TOP_SORT_SELF ? "self" : "total";
	if (v->tid == 0) {
		snprintf(buf, size, "%s%zu thread%s · %llu sample%s · sorted by %s", nthreads == 1 ? "" : "all ", nthreads,
			 nthreads == 1 ? "" : "s", (unsigned long long)samples, samples == 1 ? "" : "s", sort);
		return;
	}
	const char *name = NULL;
	size_t at = 0;
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == v->tid) {
			name = threads[i].name;
			at = i + 1;
		}
	char escaped[200];
	text_escape(escaped, sizeof escaped, name ? name : "");
	if (at)
		snprintf(buf, size, "thread %lld %s (%zu of %zu) · %llu sample%s · sorted by %s", (long long)v->tid,
			 escaped, at, nthreads, (unsigned long long)samples, samples == 1 ? "" : "s", sort);
	else
		snprintf(buf, size, "thread %lld: no samples in the window · sorted by %s", (long long)v->tid, sort);
}

/* A column of target text: escaped, shortened in the middle to cols, then
 * padded to exactly cols when another column follows. */
static void put_cell(FILE *out, const char *target_text, size_t cols, unsigned head_percent, bool pad)
{
	char *escaped = text_escape_dup(target_text ? target_text : "");
	const char *s = escaped ? escaped : "?";
	size_t used = text_put_fit(out, s, strlen(s), cols, head_percent);
	for (; pad && used < cols; used++)
		fputc(' ', out);
	free(escaped);
}

/* Columns taken by a row's location, file:line (escaped), or 0. */
static size_t location_columns(const struct top_row *r, char *where, size_t size)
{
	where[0] = '\0';
	if (!r->file)
		return 0;
	/* As in the reports: a Rust std path short, "core/src/tuple.rs". */
	const char *file = source_map_shown_path(r->file);
	char raw[PATH_MAX + 32];
	if (r->line > 0)
		snprintf(raw, sizeof raw, "%s:%d", file, r->line);
	else
		snprintf(raw, sizeof raw, "%s", file);
	text_escape(where, size, raw);
	return text_columns(where, strlen(where));
}

/* Splits avail columns between the function and its location: each as
 * wide as the rows shown need when both fit, else the location gets at
 * most two fifths (names matter more) and both are shortened in the middle. */
static void layout_columns(const struct top_row *rows, size_t n, size_t avail, size_t *fn_cols, size_t *loc_cols)
{
	size_t fn_need = 8, loc_need = 0;   /* "FUNCTION" */
	char buf[PATH_MAX * 4];
	for (size_t i = 0; i < n; i++) {
		text_escape(buf, sizeof buf, rows[i].function);
		size_t c = text_columns(buf, strlen(buf));
		fn_need = c > fn_need ? c : fn_need;
		c = location_columns(&rows[i], buf, sizeof buf);
		loc_need = c > loc_need ? c : loc_need;
	}
	if (loc_need < 9)
		loc_need = 9;   /* "FILE:LINE" */
	if (avail < 40) {   /* too narrow for both: names only */
		*fn_cols = avail;
		*loc_cols = 0;
		return;
	}
	avail -= 2;   /* between the columns */
	if (fn_need + loc_need <= avail) {
		*loc_cols = loc_need;
		*fn_cols = avail - loc_need;
		return;
	}
	size_t most = avail * 2 / 5;
	*loc_cols = avail > fn_need && avail - fn_need > most ? avail - fn_need : most;
	if (*loc_cols > loc_need)
		*loc_cols = loc_need;
	*fn_cols = avail - *loc_cols;
}

static int draw(struct top_view *v, uint64_t now, struct xerr *e)
{
	const struct top_options *o = v->opts;
	top_window_expire(v->window, now);
	const struct top_thread *threads;
	size_t nthreads;
	const struct top_row *rows;
	size_t nrows;
	uint64_t samples;
	if (top_window_threads(v->window, &threads, &nthreads, e) < 0 ||
	    top_window_rank(v->window, v->tid, v->sort, &rows, &nrows, &samples, e) < 0)
		return -1;
	/* By total, the functions on (almost) every sample (main, the thread
	 * start, the runtime's frames) would fill the screen at 100%: they are
	 * folded into one line, as the text report's "top functions by total"
	 * does. Sorted by total, they are the first rows. */
	size_t everywhere = 0;
	while (v->sort == TOP_SORT_TOTAL && everywhere < nrows &&
	       100 * rows[everywhere].total >= REPORT_EVERYWHERE_PCT * samples && samples > 0)
		everywhere++;
	const struct top_row *folded = rows;
	rows += everywhere;
	nrows -= everywhere;
	char *text = NULL;
	size_t text_size = 0;
	FILE *out = open_memstream(&text, &text_size);
	if (!out)
		return xerr_oom(e);
	size_t width;
	int room;   /* rows of functions */
	if (v->live) {
		terminal_size(&v->cols, &v->lines);
		width = v->cols;
		room = (int)v->lines - 7 - (cli_globals.verbose && v->non_stop);
	} else {
		width = text_terminal_width(STDOUT_FILENO);
		room = (int)o->rows;
		if (v->snapshots++ > 0)
			fputc('\n', out);
	}
	char exe[PATH_MAX + 64], line[sizeof exe + 256];
	int row = 1;
	text_escape(exe, sizeof exe, v->exe[0] ? v->exe : "?");
	double elapsed = (double)(now - v->start_ns) / 1e9;
	snprintf(line, sizeof line, "xgdbprof top · process %d · %s · %.0f s", (int)v->pid, exe, elapsed);
	put_line(out, v, row++, line, width);
	const struct top_mark *from, *to;
	if (window_marks(v, &from, &to) && to->t_ns > from->t_ns) {
		double seconds = (double)(to->t_ns - from->t_ns) / 1e9;
		double hz = (double)(to->rounds - from->rounds) / seconds;
		char cpu[64] = "target CPU ?";
		if (from->cpu_ticks >= 0 && to->cpu_ticks >= from->cpu_ticks && v->clock_ticks > 0)
			snprintf(cpu, sizeof cpu, "target CPU %.0f%%",
				 100.0 * (double)(to->cpu_ticks - from->cpu_ticks) / (double)v->clock_ticks / seconds);
		char texts[4][512];
		snprintf(texts[0], sizeof texts[0], "sampling %s threads at %.1f Hz (%.0f asked) · %s · window %.0f s, "
			 "over the last %.1f s", o->threads_label, hz, o->frequency_hz, cpu, o->window_s, seconds);
		snprintf(texts[1], sizeof texts[1], "sampling %s threads at %.1f Hz (%.0f asked) · %s · last %.0f s",
			 o->threads_label, hz, o->frequency_hz, cpu, seconds);
		snprintf(texts[2], sizeof texts[2], "%.1f Hz (%.0f asked) · %s · last %.0f s", hz, o->frequency_hz, cpu,
			 seconds);
		put_first_fitting(out, v, row++, texts, 3, width);
		char verbose[3][512];
		size_t n, nverbose;
		describe_stops(texts, &n, verbose, &nverbose, v, seconds, from, to);
		put_first_fitting(out, v, row++, texts, n, width);
		if (nverbose > 0)
			put_first_fitting(out, v, row++, verbose, nverbose, width);
	} else {
		snprintf(line, sizeof line, "sampling %s threads at %.0f Hz asked · window %.0f s · measuring...",
			 o->threads_label, o->frequency_hz, o->window_s);
		put_line(out, v, row++, line, width);
		put_line(out, v, row++, "observer effect: measuring...", width);
	}
	describe_selection(line, sizeof line, v, threads, nthreads, samples);
	put_line(out, v, row++, line, width);
	put_line(out, v, row++, "", width);
	if (everywhere) {
		char name[256];
		int n = snprintf(line, sizeof line, "leaving out %zu function%s on ≥ %d%% of the samples (", everywhere,
				 everywhere == 1 ? "" : "s", REPORT_EVERYWHERE_PCT);
		for (size_t i = 0; i < everywhere && i < 3 && n > 0 && (size_t)n < sizeof line; i++) {
			text_escape(name, sizeof name, folded[i].function);
			n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", i ? ", " : "", name);
		}
		if (n > 0 && (size_t)n < sizeof line)
			snprintf(line + n, sizeof line - (size_t)n, everywhere > 3 ? ", and %zu more)" : ")",
				 everywhere - 3);
		put_line(out, v, row++, line, width);
		room--;
	}
	/* "  SELF%  TOTAL%  " then the function, then its file:line. */
	const size_t lead = 17;
	size_t shown_rows = nrows < (size_t)(room > 0 ? room : 0) ? nrows : (size_t)(room > 0 ? room : 0);
	size_t fn_cols, loc_cols;
	layout_columns(rows, shown_rows, width > lead ? width - lead : 0, &fn_cols, &loc_cols);
	if (v->live && row >= (int)v->lines)
		width = 0;   /* a terminal too short for the table */
	else if (v->live)
		fprintf(out, "\033[%d;1H\033[K", row);
	row++;
	fprintf(out, "%.*s", (int)(width < lead ? width : lead), "  SELF%  TOTAL%  ");
	if (width > lead) {
		put_cell(out, "FUNCTION", fn_cols, 50, loc_cols > 0);
		if (loc_cols)
			fprintf(out, "  %s", "FILE:LINE");
	}
	if (!v->live)
		fputc('\n', out);
	int shown = 0;
	for (size_t i = 0; i < nrows && shown < room; i++, shown++) {
		const struct top_row *r = &rows[i];
		if (v->live)
			fprintf(out, "\033[%d;1H\033[K", row);
		row++;
		char figures[64];
		snprintf(figures, sizeof figures, "%7.1f %7.1f  ", 100.0 * (double)r->self / (double)samples,
			 100.0 * (double)r->total / (double)samples);
		fprintf(out, "%.*s", (int)(width < lead ? width : lead), figures);
		if (width > lead) {
			put_cell(out, r->function, fn_cols, 50, loc_cols > 0);
			char where[PATH_MAX * 4];
			if (loc_cols && location_columns(r, where, sizeof where) > 0) {
				fputs("  ", out);
				text_put_fit(out, where, strlen(where), loc_cols, 30);
			}
		}
		if (!v->live)
			fputc('\n', out);
	}
	if (nrows == 0 && room > 0) {
		const char *why = samples ? "(samples without frames)" : v->tid ? "(no samples of this thread in the window)"
			: "(no samples in the window: no thread of the selection ran)";
		put_line(out, v, row++, why, width);
	}
	if (v->live) {
		/* Clear what an earlier, longer view left below, from the start
		 * of the next line: at the end of a full-width line the cursor
		 * still sits on its last character, which a clear would take. */
		if (row < (int)v->lines)
			fprintf(out, "\033[%d;1H\033[J", row);
		const char *keys = v->keys ? "q quit · s/t sort by self/total · n/p next/previous thread · a all threads"
					   : "Ctrl-C quits";
		fprintf(out, "\033[%d;1H\033[K", (int)v->lines);
		text_put_fit(out, keys, strlen(keys), v->cols, 60);
	}
	fclose(out);
	write_all(STDOUT_FILENO, text, text_size);
	free(text);
	return 0;
}

/* ---- keys ---------------------------------------------------------------------- */

static void choose_thread(struct top_view *v, int step)
{
	const struct top_thread *threads;
	size_t n;
	struct xerr e;
	if (top_window_threads(v->window, &threads, &n, &e) < 0 || n == 0) {
		v->tid = 0;
		return;
	}
	int64_t chosen = 0;
	if (step > 0) {
		for (size_t i = 0; i < n && !chosen; i++)
			if (threads[i].tid > v->tid)
				chosen = threads[i].tid;
	} else if (v->tid == 0) {
		chosen = threads[n - 1].tid;
	} else {
		for (size_t i = n; i-- > 0 && !chosen;)
			if (threads[i].tid < v->tid)
				chosen = threads[i].tid;
	}
	v->tid = chosen;   /* past either end: every thread again */
}

/* Reads what was typed. Returns 1 to quit, else 0 (*changed when the view
 * must be drawn again). */
static int read_keys(struct top_view *v, bool *changed)
{
	char keys[32];
	ssize_t n = read(STDIN_FILENO, keys, sizeof keys);
	for (ssize_t i = 0; i < n; i++) {
		switch (keys[i]) {
		case 'q': case 'Q': case 3: return 1;   /* 3: Ctrl-C, should ISIG be off */
		case 's': v->sort = TOP_SORT_SELF; break;
		case 't': v->sort = TOP_SORT_TOTAL; break;
		case 'n': case '\t': choose_thread(v, 1); break;
		case 'p': choose_thread(v, -1); break;
		case 'a': v->tid = 0; break;
		default: continue;   /* other keys, and escape sequences' bytes */
		}
		*changed = true;
	}
	return 0;
}

/* ---- the sampler's sink ---------------------------------------------------------- */

static int top_take(void *ctx, const struct event *ev, struct xerr *e)
{
	struct top_view *v = ctx;
	if (ev->kind != EVENT_SAMPLE || ev->weight_only)
		return 0;
	return top_window_add(v->window, ev->timestamp_ns, ev->thread.id, ev->thread.name, ev->stack, e);
}

/* Called before each sampling round, the target running. */
static int top_tick(void *ctx, uint64_t now, struct xerr *e)
{
	struct top_view *v = ctx;
	bool redraw = false;
	if (v->rounds++ == 0)
		mark_now(v, now);   /* the baseline the first refresh measures from */
	if (v->keys && read_keys(v, &redraw))
		return 1;
	if (now >= v->next_refresh_ns) {
		uint64_t period = (uint64_t)(v->opts->refresh_s * 1e9);
		v->next_refresh_ns = v->next_refresh_ns + period > now ? v->next_refresh_ns + period : now + period;
		if (v->rounds > 1)
			mark_now(v, now);
		redraw = true;
	} else if (v->live) {
		unsigned short cols, lines;
		terminal_size(&cols, &lines);
		redraw = redraw || cols != v->cols || lines != v->lines;
	}
	return redraw ? draw(v, now, e) : 0;
}

/* ---- options ------------------------------------------------------------------------ */

static void top_usage(FILE *out)
{
	fputs("usage: xgdbprof top [OPTIONS] PID\n"
	      "\n"
	      "A live view of where a running process spends its CPU, like py-spy top and\n"
	      "perf top: functions by self share (the leaf of the stack) and total share\n"
	      "(anywhere on it) of the samples of a sliding window, redrawn every second.\n"
	      "The header gives the sampling rate achieved and the target's CPU use over\n"
	      "the window, and the observer effect the budget keeps: the most any thread\n"
	      "was held of its time since top started (gdb's round trip too with -v).\n"
	      "Quitting detaches and leaves the process running as it was found.\n"
	      "\n"
	      "Options:\n"
	      "  -F, --frequency HZ      samples per second, 1 to 10000 (default 99)\n"
	      "  -w, --window DURATION   the sliding window shares are over (default 10s)\n"
	      "      --refresh DURATION  how often the view is redrawn (default 1s)\n"
	      "  -d, --duration DURATION stop by itself after this long (default: until q or\n"
	      "                          Ctrl-C)\n"
	      "      --threads WHICH     running (default), all, or /regex/ over thread names\n"
	      "      --max-stopped PCT   budget of each thread's time held stopped, 1 to 100 (5)\n"
	      "  -n, --top N             functions per snapshot when stdout is not a terminal\n"
	      "                          (default 20)\n"
	      "  -h, --help              show this help\n"
	      "\n"
	      "Keys: q quits (so does Ctrl-C), s sorts by self share, t by total share,\n"
	      "n/p (or Tab) show the next/previous thread alone, a all threads again.\n"
	      "Global options (--gdb, --timeout, --all-stop, --non-stop, -v) go before `top`.\n"
	      "When stdout is not a terminal, a plain snapshot is printed at every refresh.\n",
	      out);
}

static int parse_threads(const char *text, struct top_options *o)
{
	size_t n = strlen(text);
	if (strcmp(text, "running") == 0 || strcmp(text, "all") == 0) {
		o->threads = text[0] == 'r' ? SAMPLER_THREADS_RUNNING : SAMPLER_THREADS_ALL;
		snprintf(o->threads_label, sizeof o->threads_label, "%s", text);
		return XGP_EXIT_OK;
	}
	char message[300];
	if (n < 3 || text[0] != '/' || text[n - 1] != '/' || n - 2 >= sizeof o->threads_label - 2) {
		snprintf(message, sizeof message,
			 "--threads takes running, all or /regex/ over thread names (not '%.100s')", text);
		return cli_usage_error("top", message);
	}
	char *pattern = o->threads_pattern;
	snprintf(pattern, sizeof o->threads_pattern, "%.*s", (int)(n - 2), text + 1);
	int code;
	PCRE2_SIZE offset;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
	if (!re) {
		PCRE2_UCHAR why[120];
		pcre2_get_error_message(code, why, sizeof why);
		snprintf(message, sizeof message, "--threads %.100s: %s at offset %zu", text, (const char *)why,
			 (size_t)offset);
		return cli_usage_error("top", message);
	}
	pcre2_code_free(re);
	o->threads = SAMPLER_THREADS_REGEX;
	o->threads_regex = pattern;
	snprintf(o->threads_label, sizeof o->threads_label, "%s", text);
	return XGP_EXIT_OK;
}

/* Returns -1 to go on, else the exit code (help shown, or bad usage said). */
static int parse_top_options(int argc, char **argv, struct top_options *o)
{
	enum { OPT_REFRESH = 256, OPT_THREADS, OPT_MAX_STOPPED };
	static const struct option options[] = {
		{ "frequency", required_argument, NULL, 'F' },
		{ "window", required_argument, NULL, 'w' },
		{ "refresh", required_argument, NULL, OPT_REFRESH },
		{ "duration", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "max-stopped", required_argument, NULL, OPT_MAX_STOPPED },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct top_options){ .frequency_hz = 99, .window_s = 10, .refresh_s = 1, .max_stopped_percent = 5,
				   .rows = 20, .threads_label = "running" };
	int c, rc;
	long number;
	/* 0, not 1: GNU getopt starts over (its permutation state included)
	 * after main's own parsing. No "+": options may follow the PID
	 * (`xgdbprof top 8987 -w 30s`). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:w:d:n:h", options, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (cli_parse_frequency(optarg, &o->frequency_hz) < 0)
				return cli_usage_error("top", "--frequency takes a rate from 1 to 10000 Hz, such as 99");
			break;
		case 'w':
			if ((rc = cli_duration_option("top", optarg, 1, 3600,
						      "--window takes a duration from 1s to 1h, such as 10s or 1m",
						      &o->window_s)))
				return rc;
			break;
		case OPT_REFRESH:
			if ((rc = cli_duration_option("top", optarg, 0.1, 60,
						      "--refresh takes a duration from 100ms to 60s, such as 1s",
						      &o->refresh_s)))
				return rc;
			break;
		case 'd':
			if ((rc = cli_duration_option("top", optarg, 0, INFINITY,
						      "--duration takes a duration such as 500ms, 30s or 5m",
						      &o->duration_s)))
				return rc;
			break;
		case OPT_THREADS:
			if ((rc = parse_threads(optarg, o)) != XGP_EXIT_OK)
				return rc;
			break;
		case OPT_MAX_STOPPED:
			if (cli_parse_whole(optarg, "%", 1, 100, &number) < 0)
				return cli_usage_error("top", "--max-stopped takes a whole number from 1 to 100%");
			o->max_stopped_percent = (int)number;
			break;
		case 'n':
			if (cli_parse_whole(optarg, NULL, 1, 100000, &number) < 0)
				return cli_usage_error("top", "--top takes a whole number from 1 to 100000");
			o->rows = (size_t)number;
			break;
		case 'h': top_usage(stdout); return XGP_EXIT_OK;
		default: return cli_getopt_error("top", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("top", "missing PID: give the PID of a running process (see `pgrep NAME`)");
	if (argc - optind > 1)
		return cli_usage_error("top", "give exactly one PID");
	if (cli_parse_pid(argv[optind], &o->pid) < 0)
		return cli_usage_error("top", "a PID is a positive number (see `pgrep NAME`)");
	return -1;
}

/* ---- the run ---------------------------------------------------------------------- */

/* The run's note when the machine's load kept the budget out of reach
 * (sampler_note_budget_missed), as a run's report prints it. */
static void say_budget_missed(const struct sampler_stats *st)
{
	for (int i = 0; i < st->run.notes.n; i++)
		if (strstr(st->run.notes.text[i], " budget was not kept: "))
			fprintf(stderr, "xgdbprof: top: %s\n", st->run.notes.text[i]);
}

/* The last line on stderr, once the terminal is back: what sampling cost,
 * as every run's report says it. */
static void say_run(const struct top_view *v, const struct sampler_stats *st)
{
	double elapsed = st->run.elapsed_s;
	fprintf(stderr, "xgdbprof: top: sampled process %d for %.1f s at %.1f Hz (%.0f asked); ", (int)v->pid,
		elapsed, st->frequency_achieved_hz, v->opts->frequency_hz);
	double summed = elapsed > 0 ? 100.0 * st->run.stopped_s / elapsed : 0;
	/* The figure the budget keeps, as the run's report words it; gdb's
	 * round trip only with -v (report_text.c's header does the same). */
	bool held = false;
	sampler_budget_share(st, v->non_stop, &held);
	held = held && isfinite(st->held_median_ms);
	if (held)
		fprintf(stderr, "observer effect: each thread held at most %.1f%% of its time (the budget's measure: the "
			"kernel's account); per stop median %.2f ms, p99 %.2f ms", st->thread_held_max_pct,
			st->held_median_ms, st->held_p99_ms);
	if (held && cli_globals.verbose)
		fprintf(stderr, "; gdb's round trip: each thread stopped at most %.1f%% of its time, %.1f%% summed over "
			"threads; per stop median %.2f ms, p99 %.2f ms", isfinite(st->thread_stopped_max_pct) ?
			st->thread_stopped_max_pct : 0, summed, st->run.stop_median_ms, st->run.stop_p99_ms);
	if (held) {
		fputc('\n', stderr);
		say_budget_missed(st);
		return;
	}
	if (v->non_stop)
		fprintf(stderr, "observer effect: each thread stopped at most %.1f%% of its time (one at a time; %.1f%% "
			"summed over threads)", isfinite(st->thread_stopped_max_pct) ? st->thread_stopped_max_pct : 0,
			summed);
	else
		fprintf(stderr, "observer effect: target stopped %.1f%% of the time", summed);
	if (st->run.stops > 0)
		fprintf(stderr, "; %s median %.2f ms, p99 %.2f ms", v->non_stop ? "per thread stop" : "per stop",
			st->run.stop_median_ms, st->run.stop_p99_ms);
	fputc('\n', stderr);
	say_budget_missed(st);
}

int cmd_top(int argc, char **argv)
{
	struct top_options o;
	int rc = parse_top_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (proc_state(o.pid) == 'T')
		return cli_input_error("process %d is stopped (state T): nothing runs to show; resume it with "
				       "`kill -CONT %d`, or see where it stopped with `xgdbprof dump %d`",
				       (int)o.pid, (int)o.pid, (int)o.pid);
	struct top_view v = {
		.opts = &o, .pid = o.pid, .live = isatty(STDOUT_FILENO), .clock_ticks = sysconf(_SC_CLK_TCK),
		.marks_cap = (size_t)ceil(o.window_s / o.refresh_s) + 2,
	};
	v.window = top_window_new((uint64_t)(o.window_s * 1e9));
	v.marks = calloc(v.marks_cap, sizeof *v.marks);
	if (!v.window || !v.marks) {
		top_window_free(v.window);
		free(v.marks);
		return cli_error("out of memory");
	}
	signals_install();
	struct session_options so = cli_session_options();
	/* As a run's on-CPU profile: non-stop for running threads (each
	 * thread held only for its own walk), and gdb given no symbols: our
	 * walker takes registers and memory from it, nothing more. */
	so.non_stop = cli_globals.stop_mode != CLI_STOP_AUTO ? cli_globals.stop_mode == CLI_STOP_NON
							     : o.threads == SAMPLER_THREADS_RUNNING;
	so.no_separate_debug = true;
	so.no_symbols = true;
	struct session *s = NULL;
	struct symbolizer *sym = NULL;
	struct xerr e;
	rc = cli_attach(&s, o.pid, &so);
	if (rc != XGP_EXIT_OK)
		goto out;
	v.non_stop = session_non_stop(s);
	proc_exe_path(o.pid, v.exe, sizeof v.exe, NULL);
	sym = symbolizer_new_pid(o.pid, &e);
	if (!sym) {
		rc = cli_error("%s", e.msg);
		goto end;
	}
	struct sampler_config cfg = {
		.frequency_hz = o.frequency_hz, .duration_s = o.duration_s, .threads = o.threads,
		.threads_regex = o.threads_regex, .max_stopped_percent = o.max_stopped_percent,
		.walker = SAMPLER_WALKER_FAST, .max_frames = 64,
	};
	struct sampler_stats stats;
	v.stats = &stats;
	const struct event_sink sink = { .ctx = &v, .take = top_take, .tick = top_tick };
	if (v.live)
		terminal_enter(&v);
	v.start_ns = cfg.start_ns = monotonic_ns();
	/* The live view shows itself at once; a snapshot waits for a window's
	 * first refresh of samples. */
	v.next_refresh_ns = v.live ? 0 : v.start_ns + (uint64_t)(o.refresh_s * 1e9);
	int sampled = sampler_run(s, sym, &cfg, &sink, &stats, &e);
	terminal_restore();
	rc = XGP_EXIT_OK;
	if (sampled < 0)
		rc = cli_error("%s", e.msg);
	if (stats.run.target_exited && stats.run.killed_by[0])
		fprintf(stderr, "xgdbprof: top: process %d was killed by %s\n", (int)o.pid, stats.run.killed_by);
	else if (stats.run.target_exited)
		fprintf(stderr, "xgdbprof: top: process %d exited\n", (int)o.pid);
	else if (stats.run.target_execed)
		fprintf(stderr, "xgdbprof: top: process %d exec'd %s: it runs on untraced (run xgdbprof top on it "
			"again to see the new program)\n", (int)o.pid, session_exec_path(s) ? session_exec_path(s) : "another program");
	say_run(&v, &stats);
end:
	rc = cli_rescue_if_gdb_lost(s, rc);
	if (session_end(s, &e) < 0)
		rc = cli_error("%s", e.msg);
out:
	terminal_restore();
	symbolizer_free(sym);
	top_window_free(v.window);
	free(v.marks);
	return rc;
}
