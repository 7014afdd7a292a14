/* report_diff.c — functions' share changes between two profiles, and the
 * differential flame graph's colours (contract in report_diff.h). */
#include "report/report_diff.h"
#include "report/report_model.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ROWS 10

/* A change smaller than this (points) is noise for ranking purposes: such
 * functions are listed neither as grown nor as shrunk. */
#define DIFF_MIN_CHANGE_PTS 0.05

struct side_func {
	const char *name;
	int side;            /* 0 base, 1 new */
	double self, total;
	uint64_t self_weight, total_weight;
};

static int cmp_side_func(const void *x, const void *y)
{
	const struct side_func *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->side - b->side;
}

double report_diff_change(const struct report_diff_func *f)
{
	double ds = f->new_self - f->base_self, dt = f->new_total - f->base_total;
	return fabs(ds) > fabs(dt) ? ds : dt;
}

/* qsort order: larger key first, then by name. */
static int larger_then_by_name(double key_a, double key_b, const struct report_diff_func *a,
			       const struct report_diff_func *b)
{
	if (key_a != key_b)
		return key_a < key_b ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int cmp_diff_func(const void *x, const void *y)
{
	const struct report_diff_func *a = x, *b = y;
	return larger_then_by_name(report_diff_change(a), report_diff_change(b), a, b);
}

void report_diff_release(struct report_diff *d)
{
	for (size_t i = 0; i < d->nfuncs; i++)
		free(d->funcs[i].name);
	free(d->funcs);
	memset(d, 0, sizeof *d);
}

int report_diff_init(struct report_diff *d, const struct profile *base, const struct profile *cur,
		     const struct report_options *o, struct xerr *e)
{
	struct report_model mb, mn;
	struct side_func *all = NULL;
	int rc = -1;
	memset(d, 0, sizeof *d);
	if (report_model_init(&mb, base, o, e) < 0)
		return -1;
	if (report_model_init(&mn, cur, o, e) < 0) {
		report_model_release(&mb);
		return -1;
	}
	d->base_samples = mb.total;
	d->new_samples = mn.total;
	d->base_draws = report_draws(base, mb.total);
	d->new_draws = report_draws(cur, mn.total);
	d->cpu_weighted = report_cpu_weighted(base) && report_cpu_weighted(cur);
	size_t n = mb.nfuncs + mn.nfuncs;
	all = calloc(n ? n : 1, sizeof *all);
	d->funcs = calloc(n ? n : 1, sizeof *d->funcs);
	if (!all || !d->funcs)
		goto oom;
	for (size_t i = 0; i < mb.nfuncs; i++)
		all[i] = (struct side_func){ mb.funcs[i].name, 0, report_share(mb.funcs[i].self, mb.total),
					     report_share(mb.funcs[i].total, mb.total), mb.funcs[i].self,
					     mb.funcs[i].total };
	for (size_t i = 0; i < mn.nfuncs; i++)
		all[mb.nfuncs + i] = (struct side_func){ mn.funcs[i].name, 1, report_share(mn.funcs[i].self, mn.total),
							 report_share(mn.funcs[i].total, mn.total), mn.funcs[i].self,
							 mn.funcs[i].total };
	qsort(all, n, sizeof *all, cmp_side_func);
	for (size_t i = 0; i < n;) {
		struct report_diff_func *f = &d->funcs[d->nfuncs];
		if (!(f->name = strdup(all[i].name)))
			goto oom;
		d->nfuncs++;
		/* a name appears at most once per side (model names are unique) */
		size_t j = i;
		for (; j < n && strcmp(all[j].name, all[i].name) == 0; j++) {
			if (all[j].side == 0) {
				f->in_base = true;
				f->base_self = all[j].self;
				f->base_total = all[j].total;
				f->base_self_weight = all[j].self_weight;
				f->base_total_weight = all[j].total_weight;
			} else {
				f->in_new = true;
				f->new_self = all[j].self;
				f->new_total = all[j].total;
				f->new_self_weight = all[j].self_weight;
				f->new_total_weight = all[j].total_weight;
			}
		}
		i = j;
	}
	qsort(d->funcs, d->nfuncs, sizeof *d->funcs, cmp_diff_func);
	rc = 0;
	goto done;
oom:
	report_diff_release(d);
	xerr_oom_doing(e, "comparing profiles");
done:
	free(all);
	report_model_release(&mb);
	report_model_release(&mn);
	return rc;
}

bool report_diff_is_noise(const struct report_diff *d, double base_pct, double new_pct)
{
	if (d->base_draws <= 0 || d->new_draws <= 0)
		return false;
	double p1 = base_pct / 100, p2 = new_pct / 100;
	/* the pooled share under "no change", so that a share of 0 on one side
	 * still has a spread */
	double pooled = (p1 * d->base_draws + p2 * d->new_draws) / (d->base_draws + d->new_draws);
	double se = sqrt(pooled * (1 - pooled) * (1 / d->base_draws + 1 / d->new_draws));
	return fabs(p2 - p1) < 1.959964 * se;
}

/* "(+35%)", "(new)", "(gone)"; "(noise)" for a change sampling alone gives */
static void put_relative(FILE *out, double base, double now, bool in_base, bool in_new, bool noise)
{
	char buf[32];
	if (noise && base != now)
		snprintf(buf, sizeof buf, "(noise)");
	else if (!in_base || base <= 0)
		snprintf(buf, sizeof buf, "%s", now > 0 ? "(new)" : "");
	else if (!in_new || now <= 0)
		snprintf(buf, sizeof buf, "(gone)");
	else
		snprintf(buf, sizeof buf, "(%+.0f%%)", 100.0 * (now - base) / base);
	fprintf(out, "%-8s", buf);
}

static void put_row(FILE *out, const struct report_diff *d, const struct report_diff_func *f)
{
	fprintf(out, "  %+6.1f ", f->new_total - f->base_total);
	put_relative(out, f->base_total, f->new_total, f->in_base, f->in_new,
		     report_diff_is_noise(d, f->base_total, f->new_total));
	fprintf(out, "  %5.1f%% → %5.1f%%   %+6.1f ", f->base_total, f->new_total, f->new_self - f->base_self);
	put_relative(out, f->base_self, f->new_self, f->in_base && f->base_self > 0, f->in_new,
		     report_diff_is_noise(d, f->base_self, f->new_self));
	fprintf(out, "  %5.1f%% → %5.1f%%   ", f->base_self, f->new_self);
	text_put(out, f->name, TEXT_FORM_TERMINAL);
	fputc('\n', out);
}

/* "new:  EXE: 1234 ms CPU in 312 stacks" (CPU weights) or ": 312 samples" */
static void put_side(FILE *out, const char *label, const struct profile *p, uint64_t weight)
{
	fprintf(out, "%s ", label);
	text_put(out, p->meta.exe ? p->meta.exe : "(profile)", TEXT_FORM_TERMINAL);
	if (report_cpu_weighted(p)) {
		fprintf(out, ": %.0f ms CPU", (double)weight / 1e6);
		if (p->meta.thread_samples >= 0)
			fprintf(out, " in %" PRId64 " stack%s", p->meta.thread_samples, p->meta.thread_samples == 1 ? "" : "s");
	} else {
		fprintf(out, ": %" PRIu64 " sample%s", weight, weight == 1 ? "" : "s");
	}
	if (p->meta.start_time) {
		fputs(", started ", out);
		text_put(out, p->meta.start_time, TEXT_FORM_TERMINAL);
	}
	if (isfinite(p->meta.duration_actual_s))
		fprintf(out, ", %.1f s", p->meta.duration_actual_s);
	fputc('\n', out);
}

static void put_table(FILE *out, const char *heading, const struct report_diff *d, bool grew, size_t rows)
{
	size_t shown = 0;
	fprintf(out, "\n%s\n", heading);
	/* the columns of put_row: 15 + 2 + 15 + 3, twice, then the name */
	fputs("  Δtotal (rel.)      base →    new   Δself (rel.)       base →    new   function\n", out);
	for (size_t k = 0; k < d->nfuncs && shown < rows; k++) {
		const struct report_diff_func *f = &d->funcs[grew ? k : d->nfuncs - 1 - k];
		double c = report_diff_change(f);
		if (grew ? c < DIFF_MIN_CHANGE_PTS : c > -DIFF_MIN_CHANGE_PTS)
			break;
		put_row(out, d, f);
		shown++;
	}
	if (!shown)
		fputs("  (none)\n", out);
}

static int64_t self_growth(const struct report_diff_func *f)
{
	return (int64_t)f->new_self_weight - (int64_t)f->base_self_weight;
}

static int cmp_self_growth(const void *x, const void *y)
{
	const struct report_diff_func *a = x, *b = y;
	/* weights are sample counts, exact in a double */
	return larger_then_by_name((double)self_growth(a), (double)self_growth(b), a, b);
}

/* Heap snapshots: bytes still allocated by allocation site, base → new. */
static void put_bytes_tables(FILE *out, struct report_diff *d, size_t rows)
{
	qsort(d->funcs, d->nfuncs, sizeof *d->funcs, cmp_self_growth);
	for (int grew = 1; grew >= 0; grew--) {
		size_t shown = 0;
		fprintf(out, "\n%s\n", grew ? "grew most:" : "shrank most:");
		/* "Δ" is two bytes and one column: one more byte of padding */
		fprintf(out, "  %13s %-8s  %12s → %12s   %s\n", "Δbytes", "(rel.)", "base", "new", "allocation site");
		for (size_t k = 0; k < d->nfuncs && shown < rows; k++) {
			const struct report_diff_func *f = &d->funcs[grew ? k : d->nfuncs - 1 - k];
			int64_t g = self_growth(f);
			if (grew ? g <= 0 : g >= 0)
				break;
			fprintf(out, "  %+12" PRId64 " ", g);
			put_relative(out, (double)f->base_self_weight, (double)f->new_self_weight,
				     f->in_base && f->base_self_weight > 0, f->in_new, false);
			fprintf(out, "  %12" PRIu64 " → %12" PRIu64 "   ", f->base_self_weight, f->new_self_weight);
			text_put(out, f->name, TEXT_FORM_TERMINAL);
			fputc('\n', out);
			shown++;
		}
		if (!shown)
			fputs("  (none)\n", out);
	}
}

static void put_snapshot_side(FILE *out, const char *label, const struct profile *p, uint64_t bytes)
{
	fprintf(out, "%s ", label);
	text_put(out, p->meta.exe ? p->meta.exe : "(profile)", TEXT_FORM_TERMINAL);
	fprintf(out, ": %" PRIu64 " bytes live", bytes);
	if (isfinite(p->meta.duration_actual_s))
		fprintf(out, ", %.1f s into the run", p->meta.duration_actual_s);
	fputc('\n', out);
}

int report_diff_text(const struct profile *base, const struct profile *cur, FILE *out,
		     const struct report_options *o, struct xerr *e)
{
	struct report_diff d;
	if (report_diff_init(&d, base, cur, o, e) < 0)
		return -1;
	size_t rows = o && o->top_functions ? o->top_functions : DEFAULT_ROWS;
	if (o && o->title) {
		text_put(out, o->title, TEXT_FORM_TERMINAL);
		fputc('\n', out);
	}
	if (report_byte_weighted(base) && report_byte_weighted(cur)) {
		put_snapshot_side(out, "new: ", cur, d.new_samples);
		put_snapshot_side(out, "base:", base, d.base_samples);
		fputs("Heap snapshots: bytes of the sampled allocations still live, by the function that\n"
		      "allocated them (the stack's innermost frame after skip_leaf), and their change.\n", out);
		put_bytes_tables(out, &d, rows);
		report_diff_release(&d);
		return ferror(out) ? xerr_set(e, "cannot write the differential report") : 0;
	}
	put_side(out, "new: ", cur, d.new_samples);
	put_side(out, "base:", base, d.base_samples);
	/* one line: the report's width (report_format.c) wraps it */
	fputs("Shares are of each profile's own samples; changes in percentage points, relative "
	      "change in parentheses; total: samples with the function on the stack, self: those "
	      "in the function itself.", out);
	if (d.base_draws > 0 && d.new_draws > 0)
		fprintf(out, " (noise): a change sampling alone gives at 95%%, over %.0f and %.0f %s.\n",
			d.base_draws, d.new_draws, d.cpu_weighted ? "stacks" : "samples");
	else
		fputc('\n', out);
	if (!d.base_samples || !d.new_samples)
		fprintf(out, "\n(the %s profile holds no samples: nothing to compare)\n",
			d.base_samples ? "new" : "base");
	else {
		put_table(out, "grew most:", &d, true, rows);
		put_table(out, "shrank most:", &d, false, rows);
	}
	report_diff_release(&d);
	if (ferror(out))
		return xerr_set(e, "cannot write the differential report");
	return 0;
}

void report_diff_colour(double change_pts, bool in_base, double scale_pts, char *buf, size_t size)
{
	double strength = !in_base ? 1.0 : scale_pts > 0 ? fabs(change_pts) / scale_pts : 0;
	if (strength > 1)
		strength = 1;
	/* from near white (no change) to a saturated red or blue */
	int light = (int)lround(96 - 46 * strength);
	bool grew = !in_base || change_pts >= 0;
	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", grew ? 0 : 220, strength > 0 ? 85 : 0, light);
}
