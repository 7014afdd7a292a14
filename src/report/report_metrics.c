/* report_metrics.c — a window as Prometheus metrics (report_metrics.h). */
#include "report/report_metrics.h"
#include "report/report_model.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool known(double v)
{
	return isfinite(v);
}

/* A label value as the exposition format wants it: \ " and newline escaped. */
static void put_label_value(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

struct labels {
	const char *exe, *build_id;
};

static void put_common(FILE *out, const struct labels *l)
{
	fputs("exe=\"", out);
	put_label_value(out, l->exe);
	fputs("\",build_id=\"", out);
	put_label_value(out, l->build_id);
	fputc('"', out);
}

static void family(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void scalar(FILE *out, const struct labels *l, const char *name, const char *help, double v)
{
	if (!known(v))
		return;
	family(out, name, help);
	fprintf(out, "%s{", name);
	put_common(out, l);
	fprintf(out, "} %.15g\n", v);   /* a Unix timestamp needs its 13 digits */
}

static bool in_list(const size_t *v, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

int report_metrics_prometheus(const struct profile *p, const struct report_metrics_window *w, size_t top,
			      FILE *out, struct xerr *e)
{
	struct report_model m;
	if (report_model_init(&m, p, NULL, e) < 0)
		return -1;
	const struct profile_meta *mt = &p->meta;
	struct labels l = { mt->exe ? report_basename(mt->exe) : "", mt->build_id ? mt->build_id : "" };
	bool bytes = mt->weight_unit && strcmp(mt->weight_unit, "bytes") == 0;
	if (!top)
		top = REPORT_METRICS_DEFAULT_TOP;

	/* the functions: the top by self, then by total (without those on
	 * every sample), each once */
	size_t *chosen = calloc(2 * top + 1, sizeof *chosen), n = 0;
	if (!chosen) {
		report_model_release(&m);
		return xerr_oom(e);
	}
	for (size_t i = 0; i < m.nfuncs && i < top; i++)
		if (m.funcs[m.by_self[i]].self)
			chosen[n++] = m.by_self[i];
	for (size_t i = 0; i < m.ntotal_shown && i < top; i++)
		if (!in_list(chosen, n, m.by_total_shown[i]))
			chosen[n++] = m.by_total_shown[i];
	static const struct {
		const char *name, *help;
		bool self;
	} func_families[] = {
		{ "xgdbprof_function_self_ratio",
		  "Share of the window's samples (CPU time for hot-cpu) whose innermost frame is the function.", true },
		{ "xgdbprof_function_total_ratio",
		  "Share of the window's samples (CPU time for hot-cpu) with the function anywhere on the stack.", false },
	};
	for (size_t k = 0; !bytes && m.total && n && k < 2; k++) {
		family(out, func_families[k].name, func_families[k].help);
		for (size_t i = 0; i < n; i++) {
			const struct report_func *f = &m.funcs[chosen[i]];
			fprintf(out, "%s{", func_families[k].name);
			put_common(out, &l);
			fputs(",function=\"", out);
			put_label_value(out, f->name);
			fputs("\",file=\"", out);
			put_label_value(out, f->hot_file ? report_basename(f->hot_file) : "");
			fprintf(out, "\",line=\"%d\"} %.6g\n", f->hot_file ? f->hot_line : 0,
				(double)(func_families[k].self ? f->self : f->total) / (double)m.total);
		}
	}
	if (bytes && m.total && n) {
		family(out, "xgdbprof_heap_retained_bytes",
		       "Bytes the window's heap profile holds live, by the function that allocated them.");
		for (size_t i = 0; i < n; i++) {
			const struct report_func *f = &m.funcs[chosen[i]];
			if (!f->self)
				continue;
			fputs("xgdbprof_heap_retained_bytes{", out);
			put_common(out, &l);
			fputs(",function=\"", out);
			put_label_value(out, f->name);
			fputs("\",file=\"", out);
			put_label_value(out, f->hot_file ? report_basename(f->hot_file) : "");
			fprintf(out, "\",line=\"%d\"} %.6g\n", f->hot_file ? f->hot_line : 0, (double)f->self);
		}
	}
	free(chosen);

	/* the three hottest code paths, named as their headlines */
	if (!bytes && m.total && m.ncode_paths) {
		family(out, "xgdbprof_path_ratio",
		       "Share of the window's samples on each of its three hottest code paths (rank 1 to 3).");
		for (size_t i = 0; i < m.ncode_paths && i < 3; i++) {
			char *names = NULL;
			size_t len = 0;
			FILE *mem = open_memstream(&names, &len);
			if (!mem) {
				report_model_release(&m);
				return xerr_oom(e);
			}
			report_put_code_path_names(mem, &m, &m.code_paths[i]);
			fclose(mem);
			fputs("xgdbprof_path_ratio{", out);
			put_common(out, &l);
			fprintf(out, ",rank=\"%zu\",path=\"", i + 1);
			put_label_value(out, names ? names : "");
			fprintf(out, "\"} %.6g\n", (double)m.code_paths[i].weight / (double)m.total);
			free(names);
		}
	}
	report_model_release(&m);

	if (w && (known(w->cpu_min_pct) || known(w->cpu_avg_pct) || known(w->cpu_max_pct))) {
		family(out, "xgdbprof_target_cpu_ratio",
		       "The target's CPU use over the window in CPUs (1 = one core busy): min, avg and max of its "
		       "one-second figures.");
		const double v[3] = { w->cpu_min_pct, w->cpu_avg_pct, w->cpu_max_pct };
		const char *stat[3] = { "min", "avg", "max" };
		for (int i = 0; i < 3; i++)
			if (known(v[i])) {
				fputs("xgdbprof_target_cpu_ratio{", out);
				put_common(out, &l);
				fprintf(out, ",stat=\"%s\"} %.6g\n", stat[i], v[i] / 100);
			}
	}
	scalar(out, &l, "xgdbprof_window_stacks", "Thread stacks the window took.",
	       mt->thread_samples >= 0 ? (double)mt->thread_samples : NAN);
	scalar(out, &l, "xgdbprof_sampling_rate_hertz", "Sampling rounds per second the window achieved.",
	       mt->frequency_achieved_hz);
	/* the observer effect: the figure the budget keeps (non-stop: each
	 * thread's held share by the kernel's account), else the stopped share */
	bool by_kernel;
	double held = profile_observer_pct(mt, &by_kernel);
	scalar(out, &l, "xgdbprof_observer_held_ratio",
	       "The observer effect: the largest share of its time any thread was held by the window's stops.",
	       known(held) ? held / 100 : NAN);
	double p99 = known(mt->held_p99_ms) ? mt->held_p99_ms : mt->stop_p99_ms;
	scalar(out, &l, "xgdbprof_observer_stop_p99_seconds", "The 99th percentile of what one stop held a thread.",
	       known(p99) ? p99 / 1e3 : NAN);
	scalar(out, &l, "xgdbprof_window_duration_seconds", "How long the window sampled.", mt->duration_actual_s);
	scalar(out, &l, "xgdbprof_window_end_timestamp_seconds", "When the window ended, Unix time.",
	       w ? w->end_unix_s : NAN);
	return ferror(out) ? xerr_set(e, "cannot write the metrics") : 0;
}
