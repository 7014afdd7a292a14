/* report_insights.c — many windows merged into one report, and a timeline
 * (contract in report_insights.h). The code paths are report_paths.c's,
 * computed on the merged profile: this file only measures each path in
 * each window. */
#include "report/report_insights.h"
#include "util/compare.h"
#include "report/report_model.h"
#include "util/text_escape.h"
#include "util/text_fit.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TOP_PATHS 5
#define TIMELINE_MAX_PATHS 5
#define SPARK_MAX_COLUMNS 72

/* ---- merging ------------------------------------------------------------ */

static bool known(double d)
{
	return !isnan(d);
}

static int merge_meta(struct profile *p, const struct insights_window *w, size_t n, struct xerr *e)
{
	struct profile_meta *m = &p->meta;
	const struct profile *first = NULL, *last = NULL;
	double cpu_sum = 0, stopped_weighted = 0, stopped_time = 0;
	size_t ncpu = 0;
	for (size_t i = 0; i < n; i++) {
		const struct profile *q = w[i].profile;
		if (!q)
			continue;
		const struct profile_meta *qm = &q->meta;
		if (!first)
			first = q;
		last = q;
		if (qm->samples >= 0)
			m->samples = (m->samples < 0 ? 0 : m->samples) + qm->samples;
		if (qm->thread_samples >= 0)
			m->thread_samples = (m->thread_samples < 0 ? 0 : m->thread_samples) + qm->thread_samples;
		if (qm->stacks_reused >= 0)
			m->stacks_reused = (m->stacks_reused < 0 ? 0 : m->stacks_reused) + qm->stacks_reused;
		if (known(qm->duration_actual_s))
			m->duration_actual_s = (known(m->duration_actual_s) ? m->duration_actual_s : 0) + qm->duration_actual_s;
		if (known(qm->duration_asked_s))
			m->duration_asked_s = (known(m->duration_asked_s) ? m->duration_asked_s : 0) + qm->duration_asked_s;
		if (known(qm->cpu_min_pct) && (!known(m->cpu_min_pct) || qm->cpu_min_pct < m->cpu_min_pct))
			m->cpu_min_pct = qm->cpu_min_pct;
		if (known(qm->cpu_max_pct) && (!known(m->cpu_max_pct) || qm->cpu_max_pct > m->cpu_max_pct))
			m->cpu_max_pct = qm->cpu_max_pct;
		if (known(qm->cpu_avg_pct)) {
			cpu_sum += qm->cpu_avg_pct;
			ncpu++;
		}
		if (known(qm->stopped_pct) && known(qm->duration_actual_s)) {
			stopped_weighted += qm->stopped_pct * qm->duration_actual_s;
			stopped_time += qm->duration_actual_s;
		}
	}
	if (!last)
		return 0;
	/* The windows' weight unit, when they share one: CPU ns of hot-cpu
	 * windows stay CPU time in the merged profile, not "samples". */
	bool same_unit = true;
	for (size_t i = 0; i < n; i++) {
		const char *u = w[i].profile ? w[i].profile->meta.weight_unit : NULL, *f = first->meta.weight_unit;
		if (w[i].profile && (u || f) && !(u && f && !strcmp(u, f)))
			same_unit = false;
	}
	if (same_unit && first->meta.weight_unit)
		m->weight_unit = profile_intern(p, first->meta.weight_unit);
	const struct profile_meta *lm = &last->meta;
	m->exe = profile_intern(p, lm->exe);
	m->build_id = profile_intern(p, lm->build_id);
	m->pid = lm->pid;
	m->command_line = profile_intern(p, lm->command_line);
	m->recipe = profile_intern(p, lm->recipe);
	m->thread_selection = profile_intern(p, lm->thread_selection);
	m->threads = lm->threads;
	m->frequency_asked_hz = lm->frequency_asked_hz;
	m->walker = profile_intern(p, lm->walker);
	m->stop_mode = profile_intern(p, lm->stop_mode);
	m->version = profile_intern(p, lm->version);
	m->start_time = profile_intern(p, first->meta.start_time);
	if (m->samples > 0 && known(m->duration_actual_s) && m->duration_actual_s > 0)
		m->frequency_achieved_hz = (double)m->samples / m->duration_actual_s;
	if (ncpu)
		m->cpu_avg_pct = cpu_sum / (double)ncpu;
	if (stopped_time > 0)
		m->stopped_pct = stopped_weighted / stopped_time;
	char note[160];
	snprintf(note, sizeof note, "merged by xgdbprof insights from %zu window%s", n, n == 1 ? "" : "s");
	return profile_add_note(p, note, e);
}

int report_insights_merge(const struct insights_window *w, size_t n, struct profile **out, struct xerr *e)
{
	struct profile *p = profile_new();
	*out = NULL;
	if (!p)
		return xerr_oom_doing(e, "merging the windows");
	size_t nprofiles = 0;
	for (size_t i = 0; i < n; i++) {
		const struct profile *q = w[i].profile;
		if (!q)
			continue;
		nprofiles++;
		for (size_t k = 0; k < q->nentries; k++) {
			const struct profile_entry *en = &q->entries[k];
			if (profile_add_tid(p, en->thread_name, en->tid, en->thread_state, &en->stack, en->weight, e) < 0)
				goto fail;
		}
		for (size_t k = 0; k < q->nmodules; k++)
			if (profile_add_module(p, &q->modules[k], e) < 0)
				goto fail;
	}
	if (merge_meta(p, w, nprofiles ? n : 0, e) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	profile_free(p);
	return -1;
}

/* ---- per-window measures ------------------------------------------------ */

/* Weight of q's samples whose stack starts, root first, with the functions
 * of path cp (names compare: q is another profile than the model's). */
static uint64_t chain_weight(const struct report_model *m, const struct report_code_path *cp,
			     const struct profile *q)
{
	const size_t *chain = &m->chain_nodes[cp->chain_begin];
	char name[1024];
	uint64_t weight = 0;
	for (size_t i = 0; i < q->nentries; i++) {
		const struct profile_entry *en = &q->entries[i];
		if (en->stack.nframes < cp->nchain)
			continue;
		size_t k = 0;
		while (k < cp->nchain &&
		       strcmp(report_frame_name(&en->stack.frames[en->stack.nframes - 1 - k], name, sizeof name),
			      m->funcs[m->nodes[chain[k]].func].name) == 0)
			k++;
		if (k == cp->nchain)
			weight += en->weight;
	}
	return weight;
}

/* shares[path * n + window]: the share of each of the first npaths paths in
 * each window, NAN where the window has no samples. NULL when out of memory. */
static double *path_shares(const struct report_model *m, size_t npaths, const struct insights_window *w, size_t n)
{
	double *shares = malloc((npaths ? npaths : 1) * (n ? n : 1) * sizeof *shares);
	if (!shares)
		return NULL;
	for (size_t j = 0; j < n; j++) {
		uint64_t total = w[j].profile ? profile_total_weight(w[j].profile) : 0;
		for (size_t i = 0; i < npaths; i++)
			shares[i * n + j] = total ? report_share(chain_weight(m, &m->code_paths[i], w[j].profile), total)
						  : NAN;
	}
	return shares;
}

/* The merged profile's model (in *m; the caller releases it) and the top
 * paths' per-window shares (npaths x n; the caller frees them): at most
 * o->top paths (default DEFAULT_TOP_PATHS), and at most max_paths. NULL with
 * e on failure, m then released. */
static double *model_and_shares(struct report_model *m, const struct profile *merged,
				const struct report_options **o, struct report_options *defaults, size_t max_paths,
				const struct insights_window *w, size_t n, size_t *npaths, struct xerr *e)
{
	if (!*o) {
		report_options_init(defaults);
		*o = defaults;
	}
	if (report_model_init(m, merged, *o, e) < 0)
		return NULL;
	size_t top = (*o)->top ? (*o)->top : DEFAULT_TOP_PATHS;
	if (top > max_paths)
		top = max_paths;
	*npaths = top < m->ncode_paths ? top : m->ncode_paths;
	double *shares = path_shares(m, *npaths, w, n);
	if (!shares) {
		report_model_release(m);
		xerr_oom_doing(e, "measuring the windows");
	}
	return shares;
}

static void put_time(FILE *out, int64_t t, bool with_date)
{
	if (t < 0) {
		fputs("?", out);
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[64];
	localtime_r(&tt, &tm);
	strftime(buf, sizeof buf, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	fputs(buf, out);
}

static void put_span(FILE *out, double s)
{
	if (s < 120)
		fprintf(out, "%.0f s", s);
	else if (s < 7200)
		fprintf(out, "%.0f min", s / 60);
	else if (s < 172800)
		fprintf(out, "%.1f h", s / 3600);
	else
		fprintf(out, "%.1f days", s / 86400);
}

static int cmp_i64(const void *x, const void *y)
{
	return compare_i64(*(const int64_t *)x, *(const int64_t *)y);
}

/* Median spacing of the timed windows' starts, 0 with fewer than three. */
static int64_t median_spacing(const struct insights_window *w, size_t n)
{
	int64_t *d = malloc((n ? n : 1) * sizeof *d), prev = -1, med = 0;
	size_t nd = 0;
	if (!d)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (w[i].start < 0)
			continue;
		if (prev >= 0)
			d[nd++] = w[i].start - prev;
		prev = w[i].start;
	}
	if (nd >= 2) {
		qsort(d, nd, sizeof *d, cmp_i64);
		med = d[nd / 2];
	}
	free(d);
	return med;
}

static bool is_gap(int64_t spacing, int64_t median)
{
	return median > 0 && spacing * 2 > median * 3;
}

/* ---- text --------------------------------------------------------------- */

static void put_sparkline(FILE *out, const double *v, size_t n)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	size_t cols = n > SPARK_MAX_COLUMNS ? SPARK_MAX_COLUMNS : n;
	double max = 0;
	for (size_t j = 0; j < n; j++)
		if (known(v[j]) && v[j] > max)
			max = v[j];
	for (size_t c = 0; c < cols; c++) {
		/* a column averages its windows when there are more windows than columns */
		double sum = 0;
		size_t k = 0;
		for (size_t j = c * n / cols; j < (c + 1) * n / cols; j++)
			if (known(v[j])) {
				sum += v[j];
				k++;
			}
		if (!k)
			fputc(' ', out);
		else
			fputs(bars[max > 0 ? (size_t)lround(sum / (double)k / max * 7) : 0], out);
	}
}

static void put_min_avg_max(FILE *out, const double *v, size_t n, size_t stride)
{
	double min = NAN, max = NAN, sum = 0;
	size_t k = 0;
	for (size_t j = 0; j < n; j++) {
		double x = v[j * stride];
		if (!known(x))
			continue;
		if (!k || x < min)
			min = x;
		if (!k || x > max)
			max = x;
		sum += x;
		k++;
	}
	if (k)
		fprintf(out, "min %.1f%%, avg %.1f%%, max %.1f%%", min, sum / (double)k, max);
	else
		fputs("unknown", out);
}

/* A window whose shares rest on fewer draws than this is marked: one
 * share of 50% over 30 stacks is ±17 points at 95%. */
#define INSIGHTS_FEW_DRAWS 30

/* "5.6 s CPU in 1234 stacks" for CPU-weighted profiles, "1234 samples" */
static void put_amount(FILE *out, const struct profile *p, uint64_t weight)
{
	if (report_byte_weighted(p)) {
		char buf[32];
		fprintf(out, "%s (each window's live bytes, summed)", report_bytes_text((double)weight, buf, sizeof buf));
		return;
	}
	if (!report_cpu_weighted(p)) {
		fprintf(out, "%" PRIu64 " sample%s", weight, weight == 1 ? "" : "s");
		return;
	}
	fprintf(out, "%.1f s CPU", (double)weight / 1e9);
	if (p->meta.thread_samples >= 0)
		fprintf(out, " in %" PRId64 " stack%s", p->meta.thread_samples, p->meta.thread_samples == 1 ? "" : "s");
}

/* The bytes a path held in window i (its share of the window's), NAN when
 * the window has no profile. */
static double path_bytes(const struct insights_window *w, size_t i, const double *shares_of_path)
{
	if (!w[i].profile || !known(shares_of_path[i]))
		return NAN;
	return shares_of_path[i] / 100 * (double)profile_total_weight(w[i].profile);
}

/* The first and last windows that have a profile (both n: none). */
static void profiled_span(const struct insights_window *w, size_t n, size_t *first, size_t *last)
{
	*first = *last = n;
	for (size_t i = 0; i < n; i++)
		if (w[i].profile) {
			if (*first == n)
				*first = i;
			*last = i;
		}
}

/* What a path's live bytes grew by from window first to window last. */
static double path_growth(const struct insights_window *w, size_t first, size_t last, const double *shares_of_path)
{
	double a = path_bytes(w, first, shares_of_path), b = path_bytes(w, last, shares_of_path);
	return round((known(b) ? b : 0) - (known(a) ? a : 0));
}

/* "+42.1 MB", "-3 KB", "+0 B" */
static const char *signed_bytes(double bytes, char *buf, size_t size)
{
	char text[32];
	snprintf(buf, size, "%s%s", bytes >= 0 ? "+" : "", report_bytes_text(bytes, text, sizeof text));
	return buf;
}

/* Memory windows: a path's live bytes in the first and last windows that
 * have a profile, and how much it grew by in between (a leak's signature:
 * growth window after window). */
static void put_growth(FILE *out, const struct insights_window *w, size_t n, const double *shares_of_path)
{
	size_t first, last;
	profiled_span(w, n, &first, &last);
	if (first == n) {
		fputs("no window has a profile", out);
		return;
	}
	double a = path_bytes(w, first, shares_of_path), b = path_bytes(w, last, shares_of_path);
	char x[32], y[32], d[40];
	fprintf(out, "live %s in the first window, %s in the last", report_bytes_text(known(a) ? a : 0, x, sizeof x),
		report_bytes_text(known(b) ? b : 0, y, sizeof y));
	if (last > first)
		fprintf(out, ": grew by %s", signed_bytes(path_growth(w, first, last, shares_of_path), d, sizeof d));
}

static bool few_draws(const struct profile *q)
{
	double draws = report_draws(q, profile_total_weight(q));
	return draws > 0 && draws < INSIGHTS_FEW_DRAWS;
}

static void print_period(FILE *out, const struct insights_window *w, size_t n, const struct profile *merged)
{
	size_t nprofiles = 0, first = n, last = n;
	for (size_t i = 0; i < n; i++)
		if (w[i].profile) {
			nprofiles++;
			if (first == n)
				first = i;
			last = i;
		}
	fprintf(out, "insights over %zu window%s", nprofiles, nprofiles == 1 ? "" : "s");
	if (nprofiles < n)
		fprintf(out, " (and %zu without a profile)", n - nprofiles);
	if (first < n && w[first].start >= 0 && w[last].start >= 0) {
		double dur = w[last].profile->meta.duration_actual_s;
		int64_t end = w[last].start + (known(dur) ? (int64_t)llround(dur) : 0);
		fputs(": ", out);
		put_time(out, w[first].start, true);
		fputs(" to ", out);
		put_time(out, end, end - w[first].start >= 86400);
		fputs(" (", out);
		put_span(out, (double)(end - w[first].start));
		fputs(" covered", out);
		if (known(merged->meta.duration_actual_s)) {
			fputs(", ", out);
			put_span(out, merged->meta.duration_actual_s);
			fputs(" sampled", out);
		}
		fputc(')', out);
	}
	fputs(", ", out);
	put_amount(out, merged, profile_total_weight(merged));
	fputc('\n', out);
	if (merged->meta.exe) {
		fputs("target: ", out);
		text_put(out, merged->meta.exe, TEXT_FORM_TERMINAL);
		if (merged->meta.pid >= 0)
			fprintf(out, " (pid %" PRId64 ")", merged->meta.pid);
		fputc('\n', out);
	}
	/* a restarted target: the pid changes between windows */
	int64_t pid = -1;
	for (size_t i = 0; i < n; i++) {
		if (!w[i].profile || w[i].profile->meta.pid < 0)
			continue;
		if (pid >= 0 && w[i].profile->meta.pid != pid) {
			fprintf(out, "restarted: pid %" PRId64 " → %" PRId64 " in window ", pid, w[i].profile->meta.pid);
			text_put(out, w[i].name, TEXT_FORM_TERMINAL);
			fputc('\n', out);
		}
		pid = w[i].profile->meta.pid;
	}
}

static void print_cpu(FILE *out, const struct insights_window *w, size_t n)
{
	double *avg = calloc(n ? n : 1, sizeof *avg), peak = NAN, stopped_max = NAN, stopped_sum = 0;
	size_t peak_at = 0, nstopped = 0;
	bool all_held = true;
	if (!avg)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct profile *q = w[i].profile;
		avg[i] = q ? q->meta.cpu_avg_pct : NAN;
		if (q && known(q->meta.cpu_max_pct) && (!known(peak) || q->meta.cpu_max_pct > peak)) {
			peak = q->meta.cpu_max_pct;
			peak_at = i;
		}
		bool held = false;
		double cost = q ? profile_observer_pct(&q->meta, &held) : NAN;
		if (known(cost)) {
			stopped_sum += cost;
			nstopped++;
			all_held &= held;
			if (!known(stopped_max) || cost > stopped_max)
				stopped_max = cost;
		}
	}
	fputs("CPU across windows (each window's average CPU, then their ", out);
	fputs("min, mean and max): ", out);
	put_min_avg_max(out, avg, n, 1);
	fputc('\n', out);
	if (known(peak)) {
		fprintf(out, "highest instantaneous CPU: %.1f%% (window ", peak);
		text_put(out, w[peak_at].name, TEXT_FORM_TERMINAL);
		fputs(")\n", out);
	}
	/* each window's figure the budget kept (profile_observer_pct), as
	 * its own report's header says it */
	if (nstopped && all_held)
		fprintf(out, "observer effect: each thread held at most %.1f%% of its time on average (at most %.1f%% in a "
			"window; the budget's measure: the kernel's account)\n", stopped_sum / (double)nstopped,
			stopped_max);
	else if (nstopped)
		fprintf(out, "observer effect: target stopped %.1f%% of the time on average (at most %.1f%% in a "
			"window)\n", stopped_sum / (double)nstopped, stopped_max);
	free(avg);
}

static void print_gaps(FILE *out, const struct insights_window *w, size_t n)
{
	size_t nmissing = 0;
	for (size_t i = 0; i < n; i++)
		if (!w[i].profile) {
			if (nmissing++ < 5) {
				fputs(nmissing == 1 ? "windows without a profile: " : "; ", out);
				text_put(out, w[i].name, TEXT_FORM_TERMINAL);
				fputs(" (", out);
				text_put(out, w[i].why ? w[i].why : "no profile", TEXT_FORM_TERMINAL);
				fputc(')', out);
			}
		}
	if (nmissing > 5)
		fprintf(out, "; and %zu more", nmissing - 5);
	if (nmissing)
		fputc('\n', out);
	int64_t median = median_spacing(w, n), prev = -1;
	size_t ngaps = 0;
	if (!median)
		return;
	for (size_t i = 0; i < n; i++) {
		if (w[i].start < 0)
			continue;
		if (prev >= 0 && is_gap(w[i].start - prev, median) && ngaps++ < 5) {
			fputs(ngaps == 1 ? "gaps: no window from " : "; from ", out);
			put_time(out, prev, false);
			fputs(" to ", out);
			put_time(out, w[i].start, false);
		}
		prev = w[i].start;
	}
	if (ngaps > 5)
		fprintf(out, "; and %zu more", ngaps - 5);
	if (ngaps) {
		fputs(" (windows start every ", out);
		put_span(out, (double)median);
		fputs(" otherwise)\n", out);
	} else {
		fputs("gaps: none (a window every ", out);
		put_span(out, (double)median);
		fputs(")\n", out);
	}
}

static void print_windows(FILE *out, const struct insights_window *w, size_t n, const double *shares,
			  size_t npaths)
{
	size_t namew = 6;
	for (size_t i = 0; i < n; i++) {
		size_t len = text_escape(NULL, 0, w[i].name);
		if (len > namew)
			namew = len;
	}
	bool cpu = false, any_few = false, bytes = false;
	for (size_t i = 0; i < n; i++) {
		cpu |= w[i].profile && report_cpu_weighted(w[i].profile);
		bytes |= w[i].profile && report_byte_weighted(w[i].profile);
	}
	fprintf(out, "\nper window%s:\n  %-*s  %8s  %7s  %7s  %7s", bytes ? " (live bytes: the window's, each path's)" : "",
		(int)namew, "window", cpu ? "stacks" : bytes ? "live" : "samples", "CPU avg", "CPU max", "held");
	for (size_t p = 0; p < npaths; p++)
		fprintf(out, "  %6s#%zu", "", p + 1);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		const struct profile *q = w[i].profile;
		char *name = text_escape_dup(w[i].name);
		fprintf(out, "  %-*s", (int)namew, name ? name : "?");
		free(name);
		if (!q) {
			fputs("  (", out);
			text_put(out, w[i].why ? w[i].why : "no profile", TEXT_FORM_TERMINAL);
			fputs(")\n", out);
			continue;
		}
		double draws = report_draws(q, profile_total_weight(q));
		char buf[32];
		if (bytes)
			fprintf(out, "  %8s", report_bytes_text((double)profile_total_weight(q), buf, sizeof buf));
		else if (draws > 0)
			fprintf(out, "  %8.0f", draws);
		else
			fprintf(out, "  %8s", "?");
		bool few = few_draws(q);
		any_few |= few;
		bool held;
		const double figures[] = { q->meta.cpu_avg_pct, q->meta.cpu_max_pct, profile_observer_pct(&q->meta, &held) };
		for (size_t k = 0; k < 3; k++) {
			if (known(figures[k]))
				fprintf(out, "  %6.1f%%", figures[k]);
			else
				fprintf(out, "  %7s", "-");
		}
		for (size_t p = 0; p < npaths; p++) {
			double s = shares[p * n + i];
			if (bytes) {
				double b = path_bytes(w, i, &shares[p * n]);
				fprintf(out, "  %8s", known(b) ? report_bytes_text(b, buf, sizeof buf) : "-");
				continue;
			}
			if (known(s) && few)
				fprintf(out, " (%5.1f%%)", s);
			else if (known(s))
				fprintf(out, "  %7.1f%%", s);
			else
				fprintf(out, "  %8s", "-");
		}
		fputc('\n', out);
	}
	if (bytes && npaths) {
		size_t first, last;
		profiled_span(w, n, &first, &last);
		if (last > first && last < n) {
			fprintf(out, "  %-*s  %8s  %7s  %7s  %7s", (int)namew, "grew by", "", "", "", "");
			for (size_t p = 0; p < npaths; p++) {
				char buf[40];
				fprintf(out, "  %8s", signed_bytes(path_growth(w, first, last, &shares[p * n]), buf, sizeof buf));
			}
			fputc('\n', out);
		}
	}
	if (any_few)
		fprintf(out, "  (share): a window of fewer than %d %s, whose shares sampling alone moves by\n"
			"  ±17 points or more: read them as noise\n", INSIGHTS_FEW_DRAWS, cpu ? "stacks" : "samples");
}

int report_insights_text(const struct insights_window *w, size_t n, const struct profile *merged, FILE *out,
			 const struct report_options *o, struct xerr *e)
{
	struct report_options defaults;
	struct report_model m;
	size_t npaths;
	double *shares = model_and_shares(&m, merged, &o, &defaults, (size_t)-1, w, n, &npaths, e);
	if (!shares)
		return -1;
	if (o->title) {
		text_put(out, o->title, TEXT_FORM_TERMINAL);
		fputc('\n', out);
	}
	print_period(out, w, n, merged);
	print_cpu(out, w, n);
	print_gaps(out, w, n);
	fputc('\n', out);
	if (!npaths) {
		fputs("no samples were recorded in the period\n", out);
	} else {
		fputs("hottest code paths over the period (the report's inference over the merged samples; "
		      "shares of all ", out);
		put_amount(out, merged, m.total);
		fputs(report_byte_weighted(merged) ? "; per window: the bytes the path holds in each window)\n"
						   : "; per window: the path's share of each window)\n", out);
		for (size_t i = 0; i < npaths; i++) {
			fputc('\n', out);
			report_put_code_path(out, &m, i + 1, &m.code_paths[i], o->color, o->full_paths, o->width);
			fputs("    per window: ", out);
			if (report_byte_weighted(merged)) {
				/* memory: the bytes it holds, window by window */
				double *held = malloc((n ? n : 1) * sizeof *held);
				for (size_t k = 0; held && k < n; k++)
					held[k] = path_bytes(w, k, &shares[i * n]);
				if (held)
					put_sparkline(out, held, n);
				free(held);
				fputs("  ", out);
				put_growth(out, w, n, &shares[i * n]);
			} else {
				put_sparkline(out, &shares[i * n], n);
				fputs("  ", out);
				put_min_avg_max(out, &shares[i * n], n, 1);
			}
			fputc('\n', out);
		}
		if (m.ncode_paths > npaths)
			fprintf(out, "\n(%zu more code path%s; --top N shows more)\n", m.ncode_paths - npaths,
				m.ncode_paths - npaths == 1 ? "" : "s");
	}
	print_windows(out, w, n, shares, npaths);
	free(shares);
	report_model_release(&m);
	if (ferror(out))
		return xerr_set(e, "cannot write the insights report");
	return 0;
}

/* ---- timeline SVG ------------------------------------------------------- */

#define TL_WIDTH 1200
#define TL_LEFT 60
#define TL_RIGHT 30
#define TL_CPU_TOP 80
#define TL_CPU_HEIGHT 160
#define TL_PATHS_TOP 300
#define TL_PATHS_HEIGHT 200
#define TL_LEGEND_TOP 540

static const char *const path_colours[TIMELINE_MAX_PATHS] = {
	"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
};

struct timeline {
	FILE *out;
	const struct insights_window *w;
	size_t n;
	int64_t t0, t1;      /* time axis, when every window is timed */
	bool by_time;
};

static double tl_x(const struct timeline *t, size_t i)
{
	double plot = TL_WIDTH - TL_LEFT - TL_RIGHT;
	if (t->by_time)
		return TL_LEFT + plot * (double)(t->w[i].start - t->t0) / (double)(t->t1 - t->t0);
	return t->n > 1 ? TL_LEFT + plot * (double)i / (double)(t->n - 1) : TL_LEFT + plot / 2;
}

static void tl_window_name(const struct timeline *t, size_t i)
{
	text_put(t->out, t->w[i].name, TEXT_FORM_XML);
}

static void tl_axis(FILE *out, int top, int height, double max, double step, const char *label)
{
	for (double v = 0; v <= max + 1e-9; v += step) {
		double y = top + height - height * v / max;
		fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"ax\">%.0f%%</text>\n",
			TL_LEFT, y, TL_WIDTH - TL_RIGHT, y, TL_LEFT - 6, y + 4, v);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"hd\">%s</text>\n", TL_LEFT, top - 10, label);
}

static void tl_time_labels(const struct timeline *t, int y)
{
	size_t marks[3] = { 0, t->n / 2, t->n - 1 };
	for (size_t k = 0; k < 3; k++) {
		if (k && marks[k] == marks[k - 1])
			continue;
		size_t i = marks[k];
		fprintf(t->out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" class=\"ax\">", tl_x(t, i), y,
			k == 0 ? "start" : k == 2 ? "end" : "middle");
		if (t->w[i].start >= 0)
			put_time(t->out, t->w[i].start, k == 0);
		else
			tl_window_name(t, i);
		fputs("</text>\n", t->out);
	}
}

/* The SVG prologue, the title and the line under it. */
static void tl_header(const struct timeline *t, const struct profile *merged, const struct report_options *o,
		      uint64_t total, int height)
{
	FILE *out = t->out;
	const struct insights_window *w = t->w;
	size_t n = t->n;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", TL_WIDTH, height, TL_WIDTH, height);
	fputs("<style type=\"text/css\"><![CDATA[\n"
	      "text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	      ".tt { font-size: 17px; text-anchor: middle; }\n"
	      ".st { fill: #555; text-anchor: middle; }\n"
	      ".hd { font-weight: bold; }\n"
	      ".ax { fill: #555; font-size: 11px; }\n"
	      "circle:hover, rect.cpu:hover { stroke: #000; stroke-width: 1.5; }\n"
	      "]]></style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf6\"/>\n", TL_WIDTH, height);
	fprintf(out, "<text class=\"tt\" x=\"%d\" y=\"24\">", TL_WIDTH / 2);
	if (o->title)
		text_put(out, o->title, TEXT_FORM_XML);
	else {
		fputs("xgdbprof insights: ", out);
		text_put(out, merged->meta.exe ? merged->meta.exe : "profile", TEXT_FORM_XML);
	}
	fprintf(out, "</text>\n<text class=\"st\" x=\"%d\" y=\"44\">", TL_WIDTH / 2);
	size_t nprofiles = 0;
	for (size_t i = 0; i < n; i++)
		nprofiles += w[i].profile != NULL;
	fprintf(out, "%zu window%s, ", nprofiles, nprofiles == 1 ? "" : "s");
	put_amount(out, merged, total);
	if (nprofiles < n)
		fprintf(out, ", %zu without a profile (grey marks)", n - nprofiles);
	fputs("; hover a point for its figures</text>\n", out);
}

/* Each path's colour and headline, as the text report names it. */
static void tl_legend(FILE *out, const struct report_model *m, size_t npaths)
{
	for (size_t p = 0; p < npaths; p++) {
		char *names = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&names, &len);
		if (mem) {
			report_put_code_path_names(mem, m, &m->code_paths[p]);
			fclose(mem);
		}
		int y = TL_LEGEND_TOP + 20 * (int)p;
		/* Within the picture: Verdana at 12 px is at most ~7.5 px a
		 * character; a headline too long is shortened in its middle (its
		 * deepest frame and line kept), the whole of it in the tooltip. */
		const size_t room = (TL_WIDTH - TL_LEFT - 20 - TL_RIGHT) * 2 / 15 - 32;
		char *fitted = NULL;
		size_t fitted_len = 0;
		FILE *fit = names ? open_memstream(&fitted, &fitted_len) : NULL;
		if (fit) {
			text_put_fit(fit, names, strlen(names), room, 40);
			fclose(fit);
		}
		fputs("<g><title>", out);
		text_put(out, names ? names : "?", TEXT_FORM_XML);   /* target text, already in terminal form */
		fprintf(out, "</title><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">#%zu (%.1f%% of the period): ", TL_LEFT, y - 4, path_colours[p], TL_LEFT + 20,
			y, p + 1, report_share(m->code_paths[p].weight, m->total));
		text_put(out, fitted ? fitted : names ? names : "?", TEXT_FORM_XML);
		fputs("</text></g>\n", out);
		free(fitted);
		free(names);
	}
}

int report_insights_timeline(const struct insights_window *w, size_t n, const struct profile *merged, FILE *out,
			     const struct report_options *o, struct xerr *e)
{
	struct report_options defaults;
	struct report_model m;
	size_t npaths;
	double *shares = model_and_shares(&m, merged, &o, &defaults, TIMELINE_MAX_PATHS, w, n, &npaths, e);
	if (!shares)
		return -1;
	struct timeline t = { out, w, n, -1, -1, n > 1 };
	for (size_t i = 0; i < n; i++) {
		if (w[i].start < 0)
			t.by_time = false;
		else {
			if (t.t0 < 0 || w[i].start < t.t0)
				t.t0 = w[i].start;
			if (w[i].start > t.t1)
				t.t1 = w[i].start;
		}
	}
	if (t.t1 <= t.t0)
		t.by_time = false;
	double cpu_top = 100;
	for (size_t i = 0; i < n; i++)
		if (w[i].profile && known(w[i].profile->meta.cpu_max_pct) && w[i].profile->meta.cpu_max_pct > cpu_top)
			cpu_top = ceil(w[i].profile->meta.cpu_max_pct / 50) * 50;
	int height = TL_LEGEND_TOP + 20 * (int)npaths + 30;

	tl_header(&t, merged, o, m.total, height);
	/* CPU: each window's min-max range as a bar, its average as the line */
	tl_axis(out, TL_CPU_TOP, TL_CPU_HEIGHT, cpu_top, cpu_top / 4,
		"target CPU per window (bar: min to max, line: average)");
	tl_axis(out, TL_PATHS_TOP, TL_PATHS_HEIGHT, 100, 25, "share of each window's samples, top code paths");
	tl_time_labels(&t, TL_PATHS_TOP + TL_PATHS_HEIGHT + 18);
#define CPU_Y(v) (TL_CPU_TOP + TL_CPU_HEIGHT - TL_CPU_HEIGHT * (v) / cpu_top)
#define PATH_Y(v) (TL_PATHS_TOP + TL_PATHS_HEIGHT - TL_PATHS_HEIGHT * (v) / 100.0)
	for (size_t i = 0; i < n; i++) {
		if (w[i].profile)
			continue;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"3,3\">"
			"<title>", tl_x(&t, i), TL_CPU_TOP, tl_x(&t, i), TL_PATHS_TOP + TL_PATHS_HEIGHT);
		tl_window_name(&t, i);
		fputs(": ", out);
		text_put(out, w[i].why ? w[i].why : "no profile", TEXT_FORM_XML);
		fputs("</title></line>\n", out);
	}
	fputs("<polyline fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\" points=\"", out);
	for (size_t i = 0; i < n; i++)
		if (w[i].profile && known(w[i].profile->meta.cpu_avg_pct))
			fprintf(out, "%.1f,%.1f ", tl_x(&t, i), CPU_Y(w[i].profile->meta.cpu_avg_pct));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct profile_meta *qm = w[i].profile ? &w[i].profile->meta : NULL;
		if (!qm || !known(qm->cpu_avg_pct))
			continue;
		double lo = known(qm->cpu_min_pct) ? qm->cpu_min_pct : qm->cpu_avg_pct;
		double hi = known(qm->cpu_max_pct) ? qm->cpu_max_pct : qm->cpu_avg_pct;
		fprintf(out, "<g><title>");
		tl_window_name(&t, i);
		fprintf(out, ": CPU average %.1f%%, min %.1f%%, max %.1f%%</title>"
			"<rect class=\"cpu\" x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"%.1f\" fill=\"#bbb\" opacity=\"0.6\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#333\"/></g>\n",
			qm->cpu_avg_pct, lo, hi, tl_x(&t, i) - 3, CPU_Y(hi), fmax(CPU_Y(lo) - CPU_Y(hi), 1), tl_x(&t, i),
			CPU_Y(qm->cpu_avg_pct));
	}
	for (size_t p = 0; p < npaths; p++) {
		fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", path_colours[p]);
		for (size_t i = 0; i < n; i++)
			if (known(shares[p * n + i]))
				fprintf(out, "%.1f,%.1f ", tl_x(&t, i), PATH_Y(shares[p * n + i]));
		fputs("\"/>\n", out);
		for (size_t i = 0; i < n; i++) {
			if (!known(shares[p * n + i]))
				continue;
			/* a window of few stacks: a hollow point, its tooltip says why */
			bool few = few_draws(w[i].profile);
			fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" %s%s\"><title>#%zu in ", tl_x(&t, i),
				PATH_Y(shares[p * n + i]), few ? "fill=\"#fff\" stroke=\"" : "fill=\"", path_colours[p], p + 1);
			tl_window_name(&t, i);
			fprintf(out, ": %.1f%%", shares[p * n + i]);
			if (few)
				fprintf(out, " (only %.0f stacks: noise)", report_draws(w[i].profile, profile_total_weight(w[i].profile)));
			fputs("</title></circle>\n", out);
		}
	}
#undef CPU_Y
#undef PATH_Y
	tl_legend(out, &m, npaths);
	fputs("</svg>\n", out);
	free(shares);
	report_model_release(&m);
	if (ferror(out))
		return xerr_set(e, "cannot write the timeline");
	return 0;
}
