/* report_folded.c — folded stacks ("root;...;leaf N"), the input format of
 * FlameGraph, inferno and Pyroscope; inverted, "leaf;...;root N" (what
 * FlameGraph's stackcollapse output becomes under --reverse). */
#include "report/report.h"
#include "report/report_model.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
	char *text;
	uint64_t weight;
};

static int cmp_lines(const void *x, const void *y)
{
	return strcmp(((const struct folded_line *)x)->text, ((const struct folded_line *)y)->text);
}

/* Appends one frame: ';' separates frames in the format, so a ';' inside a
 * name (Rust array types "[u8; 16]") becomes ','; control characters and
 * bytes that are not UTF-8 are escaped as in the text report (\xNN), so a
 * line is always one stack. */
static void put_frame(FILE *buf, const char *name, bool inlined, bool suffix)
{
	char *shown = text_escape_dup(name);
	if (!shown) {
		fputs("(out of memory)", buf);
		return;
	}
	for (const char *c = shown; *c; c++)
		putc(*c == ';' ? ',' : *c, buf);
	free(shown);
	if (inlined && suffix)
		fputs("_[i]", buf);
}

int report_folded(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_model m;
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	o = &m.options;
	struct folded_line *lines = calloc(p->nentries ? p->nentries : 1, sizeof *lines);
	size_t n = 0;
	int rc = -1;
	char name[1024];
	if (!lines)
		goto oom;
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (!report_model_keeps(&m, en))
			continue;
		size_t len;
		FILE *buf = open_memstream(&lines[n].text, &len);
		if (!buf)
			goto oom;
		bool first = true;
		if (o->thread_roots) {
			put_frame(buf, en->thread_name ? en->thread_name : "(?)", false, false);
			first = false;
		}
		/* frames[0] is the leaf; inverted lines start with it */
		for (size_t k = 0; k < en->stack.nframes; k++) {
			size_t f = o->inverted ? k : en->stack.nframes - 1 - k;
			if (!first)
				putc(';', buf);
			first = false;
			const struct frame *fr = &en->stack.frames[f];
			put_frame(buf, report_frame_name(fr, name, sizeof name), fr->inlined, o->inlined_suffix);
		}
		if (first)
			fputs("(no frames)", buf);
		if (fclose(buf) != 0 || !lines[n].text)
			goto oom;
		lines[n++].weight = en->weight;
	}
	qsort(lines, n, sizeof *lines, cmp_lines);
	for (size_t i = 0; i < n;) {
		uint64_t w = 0;
		size_t j = i;
		while (j < n && strcmp(lines[j].text, lines[i].text) == 0)
			w += lines[j++].weight;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, w);
		i = j;
	}
	rc = ferror(out) ? xerr_set(e, "cannot write the folded stacks") : 0;
	goto done;
oom:
	xerr_oom_doing(e, "writing folded stacks");
done:
	for (size_t i = 0; lines && i < p->nentries; i++)
		free(lines[i].text);
	free(lines);
	report_model_release(&m);
	return rc;
}
