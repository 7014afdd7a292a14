/* report_json.c — the text report's content as JSON (schema in
 * docs/reports.md, "format": "xgdbprof-report"). */
#include "report/report.h"
#include "report/report_model.h"
#include "util/text_escape.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP_PATHS 5
#define DEFAULT_TOP_FUNCTIONS 10

/* Shares are rounded to 0.01 points: more digits are noise, and rounding
 * keeps the output stable across platforms. */
static double share(uint64_t part, uint64_t whole)
{
	return round(report_share(part, whole) * 100.0) / 100.0;
}

static void add_str(cJSON *o, const char *key, const char *v)
{
	cJSON_AddItemToObject(o, key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static void add_dbl(cJSON *o, const char *key, double v)
{
	cJSON_AddItemToObject(o, key, isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v));
}

static void add_int(cJSON *o, const char *key, int64_t v)
{
	cJSON_AddItemToObject(o, key, v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static cJSON *run_object(const struct profile_meta *mt)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "exe", mt->exe);
	add_str(o, "build_id", mt->build_id);
	add_int(o, "pid", mt->pid);
	add_str(o, "command_line", mt->command_line);
	add_str(o, "recipe", mt->recipe);
	add_str(o, "thread_selection", mt->thread_selection);
	add_int(o, "threads", mt->threads);
	add_dbl(o, "frequency_asked_hz", mt->frequency_asked_hz);
	add_dbl(o, "frequency_achieved_hz", mt->frequency_achieved_hz);
	add_dbl(o, "duration_asked_s", mt->duration_asked_s);
	add_dbl(o, "duration_actual_s", mt->duration_actual_s);
	add_int(o, "samples", mt->samples);
	add_int(o, "thread_samples", mt->thread_samples);
	add_int(o, "stacks_reused", mt->stacks_reused);
	add_dbl(o, "cpu_min_pct", mt->cpu_min_pct);
	add_dbl(o, "cpu_avg_pct", mt->cpu_avg_pct);
	add_dbl(o, "cpu_max_pct", mt->cpu_max_pct);
	add_dbl(o, "stopped_pct", mt->stopped_pct);
	add_dbl(o, "thread_stopped_max_pct", mt->thread_stopped_max_pct);
	add_dbl(o, "stop_median_ms", mt->stop_median_ms);
	add_dbl(o, "stop_p99_ms", mt->stop_p99_ms);
	add_dbl(o, "held_median_ms", mt->held_median_ms);
	add_dbl(o, "held_p99_ms", mt->held_p99_ms);
	add_dbl(o, "thread_held_max_pct", mt->thread_held_max_pct);
	add_str(o, "walker", mt->walker);
	add_str(o, "stop_mode", mt->stop_mode);
	add_str(o, "version", mt->version);
	add_str(o, "start_time", mt->start_time);
	cJSON *notes = cJSON_AddArrayToObject(o, "notes");
	for (size_t i = 0; i < mt->nnotes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(mt->notes[i]));
	return o;
}

/* The fields every frame object has: names, place, kind. */
static cJSON *frame_fields(const struct frame *f)
{
	char name[1024];
	cJSON *o = cJSON_CreateObject();
	add_str(o, "function", report_frame_name(f, name, sizeof name));
	if (f->full_function)
		add_str(o, "full_function", f->full_function);
	add_str(o, "file", f->file);
	cJSON_AddNumberToObject(o, "line", f->line);
	cJSON_AddNumberToObject(o, "column", f->column);
	cJSON_AddBoolToObject(o, "inlined", f->inlined);
	add_str(o, "lang", profile_lang_name(f->lang));
	add_str(o, "module", f->module);
	return o;
}

static cJSON *frame_object(const struct report_model *m, const struct frame *f)
{
	cJSON *o = frame_fields(f);
	size_t fi = report_model_func(m, f);
	const struct report_func *fn = fi != (size_t)-1 ? &m->funcs[fi] : NULL;
	cJSON_AddNumberToObject(o, "self_share", share(fn ? fn->self : 0, m->total));
	cJSON_AddNumberToObject(o, "total_share", share(fn ? fn->total : 0, m->total));
	return o;
}

/* A code path: its share, the frame its headline ends on, and its frames
 * root first, each with the samples through it on this path. */
static cJSON *code_path_object(const struct report_model *m, size_t rank, const struct report_code_path *cp)
{
	cJSON *po = cJSON_CreateObject();
	cJSON_AddNumberToObject(po, "rank", (double)rank);
	cJSON_AddNumberToObject(po, "samples", (double)cp->weight);
	cJSON_AddNumberToObject(po, "share", share(cp->weight, m->total));
	cJSON_AddNumberToObject(po, "headline_first", (double)cp->entry);
	cJSON_AddNumberToObject(po, "headline_frame", (double)cp->deepest);
	cJSON *frames = cJSON_AddArrayToObject(po, "frames");
	for (size_t k = 0; k < cp->nchain; k++) {
		const struct report_node *node = &m->nodes[m->chain_nodes[cp->chain_begin + k]];
		const struct frame *f = m->chain_frames[cp->chain_begin + k];
		cJSON *o = frame_fields(f);
		cJSON_AddBoolToObject(o, "user", report_frame_is_user(f));
		cJSON_AddNumberToObject(o, "samples", (double)node->weight);
		cJSON_AddNumberToObject(o, "share", share(node->weight, m->total));
		cJSON_AddNumberToObject(o, "self_share", share(node->self, m->total));
		cJSON_AddItemToArray(frames, o);
	}
	return po;
}

static cJSON *function_object(const struct report_model *m, const struct report_func *fn)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "function", fn->name);
	cJSON_AddNumberToObject(o, "self_samples", (double)fn->self);
	cJSON_AddNumberToObject(o, "total_samples", (double)fn->total);
	cJSON_AddNumberToObject(o, "self_share", share(fn->self, m->total));
	cJSON_AddNumberToObject(o, "total_share", share(fn->total, m->total));
	add_str(o, "file", fn->hot_file);
	cJSON_AddNumberToObject(o, "line", fn->hot_line);
	add_str(o, "lang", profile_lang_name(fn->lang));
	add_str(o, "module", fn->module);
	return o;
}

int report_json(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_model m;
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	o = &m.options;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", "xgdbprof-report");
	cJSON_AddNumberToObject(root, "version", 1);
	cJSON_AddItemToObject(root, "run", run_object(&p->meta));
	cJSON_AddNumberToObject(root, "total_samples", (double)m.total);
	if (m.focus) {
		cJSON *f = cJSON_AddObjectToObject(root, "focus");
		cJSON_AddStringToObject(f, "regex", m.focus);
		cJSON_AddNumberToObject(f, "kept_samples", (double)m.kept);
		cJSON_AddNumberToObject(f, "kept_share", share(m.kept, m.total));
	} else {
		cJSON_AddNullToObject(root, "focus");
	}
	cJSON_AddNumberToObject(root, "distinct_paths", (double)m.npaths);

	size_t top = o->top ? o->top : DEFAULT_TOP_PATHS;
	cJSON *paths = cJSON_AddArrayToObject(root, "paths");
	for (size_t i = 0; i < top && i < m.npaths; i++) {
		const struct report_path *path = &m.paths[i];
		cJSON *po = cJSON_CreateObject();
		cJSON_AddNumberToObject(po, "rank", (double)(i + 1));
		cJSON_AddNumberToObject(po, "samples", (double)path->weight);
		cJSON_AddNumberToObject(po, "share", share(path->weight, m.total));
		cJSON *frames = cJSON_AddArrayToObject(po, "frames");
		for (size_t f = path->stack->nframes; f-- > 0;)
			cJSON_AddItemToArray(frames, frame_object(&m, &path->stack->frames[f]));
		cJSON_AddItemToArray(paths, po);
	}

	cJSON_AddNumberToObject(root, "distinct_code_paths", (double)m.ncode_paths);
	cJSON *code_paths = cJSON_AddArrayToObject(root, "code_paths");
	for (size_t i = 0; i < top && i < m.ncode_paths; i++)
		cJSON_AddItemToArray(code_paths, code_path_object(&m, i + 1, &m.code_paths[i]));

	size_t topf = o->top_functions ? o->top_functions : DEFAULT_TOP_FUNCTIONS;
	cJSON *by_self = cJSON_AddArrayToObject(root, "top_self");
	cJSON *by_total = cJSON_AddArrayToObject(root, "top_total");
	for (size_t i = 0; i < topf && i < m.nfuncs; i++)
		if (m.funcs[m.by_self[i]].self)
			cJSON_AddItemToArray(by_self, function_object(&m, &m.funcs[m.by_self[i]]));
	for (size_t i = 0; i < topf && i < m.ntotal_shown; i++)
		cJSON_AddItemToArray(by_total, function_object(&m, &m.funcs[m.by_total_shown[i]]));
	cJSON *everywhere = cJSON_AddArrayToObject(root, "left_out_of_top_total");
	for (size_t i = 0; i < m.nfuncs; i++)
		if (m.funcs[m.by_total[i]].everywhere)
			cJSON_AddItemToArray(everywhere, function_object(&m, &m.funcs[m.by_total[i]]));
	cJSON *notes = cJSON_AddArrayToObject(root, "report_notes");
	if (m.thin_note)
		cJSON_AddItemToArray(notes, cJSON_CreateString(m.thin_note));

	cJSON *threads = cJSON_AddArrayToObject(root, "threads");
	for (size_t i = 0; i < m.nthreads; i++) {
		const struct report_thread *t = &m.threads[i];
		cJSON *to = cJSON_CreateObject();
		add_str(to, "name", t->name);
		cJSON_AddNumberToObject(to, "samples", (double)t->weight);
		cJSON_AddNumberToObject(to, "share", share(t->weight, m.total));
		cJSON *states = cJSON_AddObjectToObject(to, "states");
		for (size_t s = 0; s < t->nstates; s++) {
			char key[2] = { t->states[s], 0 };
			cJSON_AddNumberToObject(states, key, (double)t->state_weight[s]);
		}
		cJSON_AddItemToArray(threads, to);
	}

	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	report_model_release(&m);
	if (!text)
		return xerr_oom_doing(e, "writing the JSON report");
	text_put_json_document(out, text);
	fputc('\n', out);
	free(text);
	return ferror(out) ? xerr_set(e, "cannot write the JSON report") : 0;
}
