/* profile_map.c — recipe_profile_add_map: a recipe map (`@[ustack] = count()`) into
 * a profile. Kept apart from profile.c so that tools which only read saved
 * profiles (`xgdbprof report`) do not link the recipe maps. Also the
 * options of a recipe's report call as renderer options. */
#include "report/profile.h"
#include "report/report.h"
#include "recipe/maps.h"
#include "recipe/recipe.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Text of a non-stack key, used as a pseudo-frame or as the thread name. */
static void key_text(const struct map_key *k, char *buf, size_t size)
{
	if (k->type == MAP_KEY_INT)
		snprintf(buf, size, "%" PRId64, k->i);
	else
		snprintf(buf, size, "%s", k->s ? k->s : "");
}

static int add_map(struct profile *p, const struct map *m, const struct map_coverage *c, struct xerr *e);

int recipe_profile_add_map(struct profile *p, const struct map *m, struct xerr *e)
{
	return add_map(p, m, NULL, e);
}

int recipe_profile_add_map_estimated(struct profile *p, const struct map *m, const struct map_coverage *c,
				     struct xerr *e)
{
	/* live(): retained bytes estimated per entry whenever a budget left
	 * the probes off part of the run */
	bool live_estimates = map_agg(m) == MAP_AGG_LIVE && c && c->armed_share > 0 && c->armed_share < 1;
	if (c && (c->nsite_scales || live_estimates))
		p->meta.per_entry_estimates = true;
	return add_map(p, m, c && (c->nsite_scales || live_estimates) ? c : NULL, e);
}

static int add_map(struct profile *p, const struct map *m, const struct map_coverage *c, struct xerr *e)
{
	size_t nkeys = map_nkeys(m), stack_key = nkeys, nstack = 0;
	enum map_agg agg = map_agg(m);

	for (size_t k = 0; k < nkeys && map_len(m) > 0; k++)
		if (map_entry_at(m, 0)->keys[k].type == MAP_KEY_STACK) {
			stack_key = k;
			nstack++;
		}
	if (map_len(m) == 0)
		return 0;
	if (nstack != 1)
		return xerr_set(e, "@%s: a profile needs a map with exactly one stack key "
				"(e.g. @%s[ustack] = count()), this one has %zu", map_name(m),
				map_name(m), nstack);
	if (agg != MAP_AGG_COUNT && agg != MAP_AGG_SUM && agg != MAP_AGG_INT && agg != MAP_AGG_LIVE)
		return xerr_set(e, "@%s: a profile weighs stacks by count(), sum() or an integer; "
				"this map's aggregation cannot be a weight", map_name(m));

	bool thread_key = nkeys == 2 && map_entry_at(m, 0)->keys[1 - stack_key].type == MAP_KEY_STR;
	size_t npseudo = thread_key ? 0 : nkeys - 1;
	struct frame *frames = NULL;
	char (*texts)[256] = npseudo ? calloc(npseudo, sizeof *texts) : NULL;
	int rc = 0;
	if (npseudo && !texts)
		return xerr_oom(e);

	for (size_t i = 0; i < map_len(m) && rc == 0; i++) {
		const struct map_entry *en = map_entry_at(m, i);
		int64_t weight = agg == MAP_AGG_COUNT ? (int64_t)en->value.count
			       : agg == MAP_AGG_INT ? en->value.i : map_entry_number(m, en);
		const struct stack *s = en->keys[stack_key].stack;
		size_t n = s ? s->nframes : 0;
		const char *thread = NULL;
		char thread_buf[256];

		if (weight <= 0)
			continue;
		if (thread_key) {
			key_text(&en->keys[1 - stack_key], thread_buf, sizeof thread_buf);
			thread = thread_buf;
		}
		struct frame *bigger = realloc(frames, (n + npseudo + 1) * sizeof *frames);
		if (!bigger) {
			rc = xerr_oom(e);
			break;
		}
		frames = bigger;
		for (size_t f = 0; f < n; f++)
			frames[f] = s->frames[f];
		/* pseudo-frames sit above the root: the first key is the outermost */
		for (size_t k = 0, j = 0; k < nkeys && npseudo; k++) {
			if (k == stack_key)
				continue;
			key_text(&en->keys[k], texts[j], sizeof texts[j]);
			frames[n + npseudo - 1 - j] = (struct frame){
				.function = texts[j], .lang = FRAME_LANG_UNKNOWN,
				.source = FRAME_SOURCE_NONE,
			};
			j++;
		}
		struct stack st = { n + npseudo, frames };
		double estimated = 0;
		uint64_t events = en->value.count;
		if (agg == MAP_AGG_LIVE && c) {
			map_live_estimate(&en->value, c, &estimated);   /* else the bytes seen live */
			events = en->value.live ? en->value.live->live : 0;   /* the live blocks it rests on */
		} else if (c && !map_counted_estimate(&en->value, agg != MAP_AGG_COUNT, c, &estimated)) {
			estimated = (double)weight;   /* nothing counted behind it: as measured */
		}
		rc = c ? profile_add_events_estimated(p, thread, '?', &st, (uint64_t)weight, events, estimated, e)
		       : profile_add_events(p, thread, '?', &st, (uint64_t)weight, events, e);
	}
	free(frames);
	free(texts);
	return rc;
}

void recipe_report_options(const struct recipe_report_opts *o, struct report_options *ro)
{
	report_options_init(ro);
	if (!o)
		return;
	ro->top = o->top > 0 ? (size_t)o->top : 0;
	ro->title = o->title;
	ro->inverted = o->inverted;
	ro->waits = o->waits;
}
