/* test_report_insights.c — insights over synthetic windows whose figures
 * are known, and differential profiles:
 *
 *   window  start  samples: main→alpha  main→beta<x>&   CPU min/avg/max
 *   w1      1000                    90             10   40 / 50 / 60
 *   w2      1300                    60             40   70 / 80 / 120
 *   w3      1600   (no profile: the target vanished)
 *   w4      3000                    30             70   90 / 95 / 100
 *
 * Merged: alpha 180 and beta 120 of 300 samples, two code paths (alpha
 * dominant at 60% of main, beta a branch). CPU across windows: the
 * windows' averages 50, 80, 95 → min 50, avg 75, max 95; the highest
 * instantaneous 120 (w2). Path #1's share per window: 90, 60, -, 30. The
 * spacing is 300 s except 1400 s before w4: a gap. The diff of w4 against
 * w1: beta +60 points, alpha -60, main unchanged; the differential flame
 * graph colours them red, blue and near white, and escapes beta's name.
 */
#include "report/profile.h"
#include "report/report.h"
#include "report/report_diff.h"
#include "report/report_insights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define EXE "/srv/switch"
#define SRC "/home/dev/switch/src/main.c"
#define BETA "beta<x>&"

static void add_stack(struct profile *p, const char *leaf, int line, uint64_t w)
{
	struct frame frames[2] = {
		{ .pc = 0x1100 + (uint64_t)line, .function = leaf, .file = SRC, .line = line, .lang = FRAME_LANG_C,
		  .module = EXE },
		{ .pc = 0x1000, .function = "main", .file = SRC, .line = 40, .lang = FRAME_LANG_C, .module = EXE },
	};
	struct stack s = { 2, frames };
	struct xerr e;
	if (profile_add_tid(p, "main", 7, 'R', &s, w, &e) < 0) {
		fprintf(stderr, "profile_add: %s\n", e.msg);
		exit(1);
	}
}

static struct profile *window(uint64_t alpha, uint64_t beta, double cpu_min, double cpu_avg, double cpu_max,
			      const char *start_time)
{
	struct profile *p = profile_new();
	p->meta.exe = profile_intern(p, EXE);
	p->meta.pid = 4242;
	p->meta.samples = (int64_t)(alpha + beta);
	p->meta.duration_actual_s = 60;
	p->meta.cpu_min_pct = cpu_min;
	p->meta.cpu_avg_pct = cpu_avg;
	p->meta.cpu_max_pct = cpu_max;
	p->meta.stopped_pct = 2;
	p->meta.start_time = profile_intern(p, start_time);
	add_stack(p, "alpha", 17, alpha);
	add_stack(p, BETA, 23, beta);
	return p;
}

/* Renders into a string (free it). */
static char *render(int (*fn)(const struct insights_window *, size_t, const struct profile *, FILE *,
			      const struct report_options *, struct xerr *),
		    const struct insights_window *w, size_t n, const struct profile *merged)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct xerr e = { "" };
	CHECK_MSG(fn(w, n, merged, out, NULL, &e) == 0, "render: %s", e.msg);
	fclose(out);
	return buf;
}

static bool has(const char *text, const char *part)
{
	bool found = strstr(text, part) != NULL;
	if (!found)
		fprintf(stderr, "missing \"%s\" in:\n%s\n", part, text);
	return found;
}

/* The fill of the flame graph frame named name (XML-escaped), or "". */
static void fill_of(const char *svg, const char *name, char *buf, size_t size)
{
	char key[128];
	snprintf(key, sizeof key, "data-n=\"%s\"", name);
	const char *at = strstr(svg, key), *fill = at ? strstr(at, "fill=\"") : NULL;
	buf[0] = 0;
	if (fill) {
		fill += 6;
		size_t k = 0;
		while (fill[k] && fill[k] != '"' && k + 1 < size) {
			buf[k] = fill[k];
			k++;
		}
		buf[k] = 0;
	}
}

int main(void)
{
	struct insights_window w[4] = {
		{ "w1", window(90, 10, 40, 50, 60, "1970-01-01T00:16:40Z"), NULL, 1000 },
		{ "w2", window(60, 40, 70, 80, 120, "1970-01-01T00:21:40Z"), NULL, 1300 },
		{ "w3", NULL, "vanished", 1600 },
		{ "w4", window(30, 70, 90, 95, 100, "1970-01-01T00:50:00Z"), NULL, 3000 },
	};
	struct profile *merged = NULL;
	struct xerr e = { "" };
	CHECK_MSG(report_insights_merge(w, 4, &merged, &e) == 0, "merge: %s", e.msg);
	if (!merged)
		return test_exit_code();
	CHECK(profile_total_weight(merged) == 300);
	CHECK(merged->meta.samples == 300);
	CHECK(fabs(merged->meta.duration_actual_s - 180) < 1e-9);
	CHECK(merged->meta.cpu_min_pct == 40 && merged->meta.cpu_max_pct == 120);
	CHECK(fabs(merged->meta.cpu_avg_pct - 75) < 1e-9);
	CHECK_STR(merged->meta.start_time, "1970-01-01T00:16:40Z");
	CHECK(merged->meta.nnotes == 1 && strncmp(merged->meta.notes[0], "merged by xgdbprof insights", 27) == 0);

	char *text = render(report_insights_text, w, 4, merged);
	CHECK(has(text, "insights over 3 windows (and 1 without a profile)"));
	CHECK(has(text, "min 50.0%, avg 75.0%, max 95.0%\n"));
	CHECK(has(text, "highest instantaneous CPU: 120.0% (window w2)"));
	CHECK(has(text, "windows without a profile: w3 (vanished)"));
	CHECK(has(text, "gaps: no window from "));
	CHECK(has(text, "#1 hottest code path (60.0% ±5.6, 180 samples): main (main.c:40) → alpha (main.c:17)"));
	CHECK(has(text, "#2 hottest code path (40.0% ±5.6, 120 samples): main (main.c:40) → " BETA " (main.c:23)"));
	/* path #1 per window: 90, 60, (none), 30 */
	CHECK(has(text, "min 30.0%, avg 60.0%, max 90.0%"));
	CHECK(has(text, "min 10.0%, avg 40.0%, max 70.0%"));
	CHECK(has(text, "\n  w3      (vanished)\n"));
	free(text);

	char *svg = render(report_insights_timeline, w, 4, merged);
	CHECK(has(svg, "#1 (60.0% of the period): main (main.c:40) → alpha (main.c:17)"));
	CHECK(has(svg, "main (main.c:40) → beta&lt;x&gt;&amp; (main.c:23)"));
	CHECK(!strstr(svg, BETA));
	CHECK(has(svg, "w2: CPU average 80.0%, min 70.0%, max 120.0%"));
	CHECK(has(svg, "#1 in w4: 30.0%"));
	CHECK(has(svg, "w3: vanished"));
	free(svg);

	/* what changed from w1 to w4 */
	struct report_diff d;
	CHECK_MSG(report_diff_init(&d, w[0].profile, w[3].profile, NULL, &e) == 0, "diff: %s", e.msg);
	CHECK(d.nfuncs == 3);
	if (d.nfuncs == 3) {
		CHECK_STR(d.funcs[0].name, BETA);
		CHECK(fabs(report_diff_change(&d.funcs[0]) - 60) < 1e-9);
		CHECK(d.funcs[0].base_self == 10 && d.funcs[0].new_self == 70);
		CHECK_STR(d.funcs[1].name, "main");
		CHECK(report_diff_change(&d.funcs[1]) == 0);
		CHECK_STR(d.funcs[2].name, "alpha");
		CHECK(fabs(report_diff_change(&d.funcs[2]) + 60) < 1e-9);
	}
	report_diff_release(&d);
	char *dt = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&dt, &len);
	CHECK(report_diff_text(w[0].profile, w[3].profile, out, NULL, &e) == 0);
	fclose(out);
	CHECK(has(dt, "grew most:\n"));
	const char *grew = strstr(dt, "grew most:"), *shrank = strstr(dt, "shrank most:");
	const char *beta_row = strstr(dt, "  " BETA "\n"), *alpha_row = strstr(dt, "  alpha\n");
	CHECK(grew && shrank && beta_row && alpha_row && grew < beta_row && beta_row < shrank && shrank < alpha_row);
	CHECK(has(dt, "+60.0 (+600%)    10.0% →  70.0%"));
	CHECK(!strstr(dt, "  main\n"));   /* unchanged: in neither list */
	free(dt);

	/* the differential flame graph */
	struct report_options ro;
	report_options_init(&ro);
	ro.diff_base = w[0].profile;
	char *fg = NULL;
	out = open_memstream(&fg, &len);
	CHECK(report_svg(w[3].profile, out, &ro, &e) == 0);
	fclose(out);
	char fill[64];
	fill_of(fg, "beta&lt;x&gt;&amp;", fill, sizeof fill);
	CHECK_STR(fill, "hsl(0,85%,50%)");
	fill_of(fg, "alpha", fill, sizeof fill);
	CHECK_STR(fill, "hsl(220,85%,50%)");
	fill_of(fg, "main", fill, sizeof fill);
	CHECK_STR(fill, "hsl(0,0%,96%)");
	CHECK(has(fg, "base 10.00% → now 70.00% (+60.00 points)"));
	free(fg);

	char colour[64];
	report_diff_colour(5, false, 50, colour, sizeof colour);
	CHECK_STR(colour, "hsl(0,85%,50%)");   /* not in the base: full red whatever the change */
	report_diff_colour(-25, true, 50, colour, sizeof colour);
	CHECK_STR(colour, "hsl(220,85%,73%)");

	/* Noise: 2 of 18 samples against 20 of 112 (11.1% → 17.9%) is within
	 * sampling error, and says so instead of "+61%"; 90 of 100 against 30
	 * of 100 is not. (Mutation seen failing: report_diff_is_noise
	 * returning false.) */
	struct profile *small = window(2, 16, 40, 50, 60, "1970-01-01T00:16:40Z");
	struct profile *large = window(20, 92, 40, 50, 60, "1970-01-01T00:21:40Z");
	out = open_memstream(&dt, &len);
	CHECK(report_diff_text(small, large, out, NULL, &e) == 0);
	fclose(out);
	CHECK_MSG(has(dt, "+6.7 (noise)    11.1% →  17.9%") && !strstr(dt, "(+61%)"), "%s", dt);
	CHECK(has(dt, "over 18 and 112 samples"));
	free(dt);
	out = open_memstream(&dt, &len);
	CHECK(report_diff_text(w[0].profile, w[3].profile, out, NULL, &e) == 0);
	fclose(out);
	CHECK_MSG(!strstr(dt, " (noise)  "), "%s", dt);
	free(dt);

	/* CPU-weighted windows: CPU time and stacks, never "N samples" of ns;
	 * a window of few stacks is marked in the table */
	struct insights_window cw[2] = {
		{ "c1", window(900000000, 100000000, 40, 50, 60, "1970-01-01T00:16:40Z"), NULL, 1000 },
		{ "c2", window(3000000, 7000000, 40, 50, 60, "1970-01-01T00:21:40Z"), NULL, 1300 },
	};
	for (size_t i = 0; i < 2; i++) {
		cw[i].profile->meta.weight_unit = profile_intern(cw[i].profile, "ns");
		cw[i].profile->meta.thread_samples = i ? 3 : 200;
	}
	struct profile *cmerged = NULL;
	CHECK(report_insights_merge(cw, 2, &cmerged, &e) == 0 && cmerged != NULL);
	char *ct = NULL;
	out = open_memstream(&ct, &len);
	CHECK(cmerged && report_insights_text(cw, 2, cmerged, out, &ro, &e) == 0);
	fclose(out);
	CHECK_MSG(has(ct, "1.0 s CPU in 203 stacks") && !strstr(ct, "1010000000 samples"), "%s", ct);
	CHECK_MSG(has(ct, " stacks ") && has(ct, "(share): a window of fewer than 30 stacks"), "%s", ct);
	free(ct);
	profile_free(cmerged);
	profile_free(small);
	profile_free(large);
	for (size_t i = 0; i < 2; i++)
		profile_free(cw[i].profile);

	profile_free(merged);
	for (size_t i = 0; i < 4; i++)
		profile_free(w[i].profile);
	return test_exit_code();
}
