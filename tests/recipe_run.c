/* recipe_run.c — test driver (not installed): runs a recipe against a text
 * file of synthetic events and prints what the recipe prints.
 *
 *   recipe_run [--session] [-D NAME=VALUE]... RECIPE EVENTS
 *
 * --session renders report() and the formats' calls as a profiling session
 * does (recipe_report_options, then the report/ renderers) instead of the
 * built-ins: report() prints the text report; flamegraph() prints what the
 * SVG draws, one line per row from the top, frames left to right with their
 * samples, so a golden file shows the layout without the markup; the other
 * calls print what their renderer writes.
 *
 * One event per line, `#` comments; fields are key=value, values may be
 * "quoted". Stacks are written root first, frames separated by ';', each
 * frame `function` or `function@file:line` (a trailing `!` marks inlined):
 *
 *   begin
 *   sample tid=2 name=worker state=R cpu=1 stack=main;Tree::insert;hash!
 *   function fn=sled::tree::Tree::insert tid=2 stack=main;insert args=key:42
 *   return fn=sled::tree::Tree::insert elapsed=1500 retval=0
 *   panic msg="boom" loc=src/main.rs:3:5 name=main stack=main;f
 *   syscall name=read nr=0 result=10 elapsed=100      (the return; thread=NAME
 *                                                     names the thread)
 *   syscall_entry name=read nr=0
 *   interval [probe=N]
 *   end
 *
 * Common keys: time=NS (nsecs; uptime is time - first time), pid=, probe=N,
 * target_time=NS (target_nsecs; default: time), window=N; function events
 * take arg0=..arg5= (the argument registers, 0x allowed).
 * END is sent at end of file (or after exit()) if the file has none.
 * Exit: 0 ok, 1 runtime error (message on stderr), 2 recipe errors.
 */
#include "recipe/recipe.h"
#include "report/report.h"
#include "report/report_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 32

struct fields {
	char *key[MAX_FIELDS];
	char *val[MAX_FIELDS];
	size_t n;
};

static const char *field(const struct fields *f, const char *key)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->key[i], key))
			return f->val[i];
	return NULL;
}

/* Splits "kind k=v k="v w" ..." in place. Returns the kind. */
static char *split(char *line, struct fields *f)
{
	f->n = 0;
	char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	char *kind = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = 0;
	while (*p && f->n < MAX_FIELDS) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		char *k = p;
		while (*p && *p != '=' && *p != ' ')
			p++;
		if (*p != '=') {
			fprintf(stderr, "recipe_run: bad field '%s'\n", k);
			exit(2);
		}
		*p++ = 0;
		char *v = p;
		if (*p == '"') {
			v = ++p;
			char *o = p;
			while (*p && *p != '"') {
				if (*p == '\\' && p[1] == 'n') {
					*o++ = '\n';
					p += 2;
					continue;
				}
				*o++ = *p++;
			}
			if (*p)
				p++;
			*o = 0;
			if (*p)
				*p++ = 0;
		} else {
			while (*p && *p != ' ' && *p != '\t')
				p++;
			if (*p)
				*p++ = 0;
		}
		f->key[f->n] = k;
		f->val[f->n] = v;
		f->n++;
	}
	return kind;
}

static void parse_stack(char *text, struct stack *s)
{
	size_t n = 1;
	for (char *c = text; *c; c++)
		n += *c == ';';
	s->frames = calloc(n, sizeof *s->frames);
	s->nframes = 0;
	char *save = NULL;
	/* root first in the text, leaf first in struct stack */
	char **parts = calloc(n, sizeof *parts);
	size_t np = 0;
	for (char *tok = strtok_r(text, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		parts[np++] = tok;
	for (size_t i = 0; i < np; i++) {
		char *fr = parts[np - 1 - i];
		struct frame *f = &s->frames[s->nframes++];
		size_t len = strlen(fr);
		if (len && fr[len - 1] == '!') {
			f->inlined = true;
			fr[len - 1] = 0;
		}
		char *at = strchr(fr, '@');
		if (at) {
			*at = 0;
			char *colon = strrchr(at + 1, ':');
			if (colon) {
				*colon = 0;
				f->line = atoi(colon + 1);
			}
			f->file = at + 1;
		}
		if (!strncmp(fr, "0x", 2))
			f->pc = strtoull(fr, NULL, 16);
		else
			f->function = fr;
		f->pc = f->pc ? f->pc : 0x1000 + i;
	}
	free(parts);
}

static const char *arg_text;

static int lookup_arg(void *ctx, const char *name, struct event_value *out)
{
	(void)ctx;
	if (!arg_text)
		return -1;
	size_t n = strlen(name);
	const char *p = arg_text;
	while (p && *p) {
		if (!strncmp(p, name, n) && p[n] == ':') {
			const char *v = p + n + 1;
			static char buf[256];
			size_t len = strcspn(v, ",");
			snprintf(buf, sizeof buf, "%.*s", (int)len, v);
			out->type = EVENT_VAL_STR;
			out->s = buf;
			return 0;
		}
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return -1;
}

static struct profile *session_profile(const struct map *m, struct xerr *e)
{
	struct profile *p = profile_new();
	if (!p) {
		xerr_set(e, "out of memory");
		return NULL;
	}
	if (recipe_profile_add_map(p, m, e) < 0) {
		profile_free(p);
		return NULL;
	}
	return p;
}

static int session_report(void *ctx, const struct map *m, const struct recipe_report_opts *o, struct xerr *e)
{
	(void)ctx;
	struct profile *p = session_profile(m, e);
	if (!p)
		return -1;
	struct report_options ro;
	recipe_report_options(o, &ro);
	int rc = report_text(p, stdout, &ro, e);
	profile_free(p);
	return rc;
}

/* The text of attribute `name` in the tag at tag (up to its '>'), into buf. */
static const char *svg_attr(const char *tag, const char *name, char *buf, size_t size)
{
	char key[32];
	snprintf(key, sizeof key, " %s=\"", name);
	const char *end = strchr(tag, '>'), *v = strstr(tag, key);
	buf[0] = 0;
	if (v && (!end || v < end)) {
		v += strlen(key);
		snprintf(buf, size, "%.*s", (int)strcspn(v, "\""), v);
	}
	return buf;
}

struct svg_box {
	double x, y;
	char text[160];
};

static int cmp_boxes(const void *a, const void *b)
{
	const struct svg_box *p = a, *q = b;
	return p->y != q->y ? (p->y < q->y ? -1 : 1) : p->x < q->x ? -1 : p->x > q->x;
}

static int session_flamegraph(const struct map *m, const struct recipe_report_opts *o, struct xerr *e)
{
	struct profile *p = session_profile(m, e);
	if (!p)
		return -1;
	struct report_options ro;
	recipe_report_options(o, &ro);
	char *svg = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&svg, &len);
	int rc = mem ? report_svg(p, mem, &ro, e) : xerr_set(e, "out of memory");
	if (mem)
		fclose(mem);
	profile_free(p);
	size_t nboxes = 0;
	struct svg_box *boxes = NULL;
	for (const char *g = svg; rc == 0 && (g = strstr(g, "<g class=\"f")); g++) {
		struct svg_box *grown = realloc(boxes, (nboxes + 1) * sizeof *boxes);
		if (!grown)
			break;
		boxes = grown;
		char name[128], w[32], num[32];
		const char *rect = strstr(g, "<rect ");
		boxes[nboxes].x = atof(svg_attr(rect, "x", num, sizeof num));
		boxes[nboxes].y = atof(svg_attr(rect, "y", num, sizeof num));
		snprintf(boxes[nboxes++].text, sizeof boxes->text, "%s %s", svg_attr(g, "data-n", name, sizeof name),
			 svg_attr(g, "data-w", w, sizeof w));
	}
	if (rc == 0) {
		const char *title = strstr(svg, "id=\"xgp-title\"");
		title = title ? strchr(title, '>') + 1 : "";
		printf("flamegraph %s: %.*s\n", o->path ? o->path : "(default file)",
		       (int)strcspn(title, "<"), title);
		qsort(boxes, nboxes, sizeof *boxes, cmp_boxes);
		for (size_t i = 0; i < nboxes; i++)
			printf("%s%s", i == 0 ? "  " : boxes[i].y != boxes[i - 1].y ? "\n  " : " | ",
			       boxes[i].text);
		printf("\n");
	}
	free(boxes);
	free(svg);
	return rc;
}

/* A format's call: flamegraph() as above; the others rendered to standard
 * output as a session renders them into its files. */
static int session_render(void *ctx, const struct report_format *f, const struct map *m,
			  const struct recipe_report_opts *o, struct xerr *e)
{
	(void)ctx;
	if (f == report_format_find("svg"))
		return session_flamegraph(m, o, e);
	struct profile *p = session_profile(m, e);
	if (!p)
		return -1;
	struct report_options ro;
	recipe_report_options(o, &ro);
	int rc = f->render(p, stdout, &ro, e);
	profile_free(p);
	return rc;
}

int main(int argc, char **argv)
{
	struct recipe_defines defs;
	recipe_defines_init(&defs);
	int i = 1;
	bool session = i < argc && !strcmp(argv[i], "--session");
	i += session;
	for (; i < argc && !strncmp(argv[i], "-D", 2); i++) {
		struct xerr e;
		if (recipe_defines_add(&defs, argv[i] + 2, &e) < 0) {
			fprintf(stderr, "recipe_run: %s\n", e.msg);
			return 2;
		}
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: recipe_run [--session] [-DNAME=VALUE]... RECIPE EVENTS\n");
		return 2;
	}
	struct diag_list diags;
	recipe_diag_list_init(&diags);
	struct recipe *r = recipe_load_file(argv[i], &defs, &diags);
	recipe_diag_list_print(&diags, stderr);
	recipe_diag_list_release(&diags);
	recipe_defines_release(&defs);
	if (!r)
		return 2;
	FILE *ev_file = fopen(argv[i + 1], "r");
	if (!ev_file) {
		perror(argv[i + 1]);
		recipe_free(r);
		return 2;
	}
	struct recipe_report_sink sink = { .report = session_report, .render = session_render };
	struct recipe_run *run = recipe_run_new(r, stdout, session ? &sink : NULL);
	char line[8192];
	int rc = 0;
	bool ended = false;
	uint64_t first_time = 0;
	bool have_time = false;
	static const struct {
		const char *name;
		enum event_kind kind;
	} kinds[] = {
		{"begin", EVENT_BEGIN}, {"end", EVENT_END}, {"sample", EVENT_SAMPLE},
		{"interval", EVENT_INTERVAL}, {"function", EVENT_FUNCTION_ENTRY},
		{"return", EVENT_FUNCTION_RETURN}, {"panic", EVENT_PANIC},
		{"syscall", EVENT_SYSCALL_RETURN}, {"syscall_entry", EVENT_SYSCALL_ENTRY},
	};
	while (!ended && !recipe_run_exit_requested(run) && fgets(line, sizeof line, ev_file)) {
		line[strcspn(line, "\n")] = 0;
		char *p = line;
		while (*p == ' ')
			p++;
		if (!*p || *p == '#')
			continue;
		struct fields f;
		char *kind = split(p, &f);
		struct event ev;
		memset(&ev, 0, sizeof ev);
		ev.probe = -1;
		bool known = false;
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
			if (!strcmp(kind, kinds[k].name)) {
				ev.kind = kinds[k].kind;
				known = true;
			}
		}
		if (!known) {
			fprintf(stderr, "recipe_run: unknown event '%s'\n", kind);
			rc = 2;
			break;
		}
		const char *v;
		char stack_text[8192];
		struct stack st = {0};
		if ((v = field(&f, "stack"))) {
			snprintf(stack_text, sizeof stack_text, "%s", v);
			parse_stack(stack_text, &st);
			ev.stack = &st;
		}
		if ((v = field(&f, "probe"))) ev.probe = atoi(v);
		if ((v = field(&f, "time"))) {
			ev.timestamp_ns = strtoull(v, NULL, 10);
			if (!have_time) {
				first_time = ev.timestamp_ns;
				have_time = true;
			}
			ev.since_start_ns = ev.timestamp_ns - first_time;
		}
		ev.pid = (v = field(&f, "pid")) ? atoll(v) : 4242;
		if ((v = field(&f, "tid"))) ev.thread.id = atoll(v);
		if ((v = field(&f, "name"))) ev.thread.name = v;
		if ((v = field(&f, "state"))) ev.thread.state = v[0];
		if ((v = field(&f, "cpu"))) ev.cpu = atoi(v);
		if ((v = field(&f, "fn"))) ev.function = v;
		if ((v = field(&f, "elapsed"))) ev.elapsed_ns = strtoull(v, NULL, 10);
		if ((v = field(&f, "retval"))) ev.retval = v;
		if ((v = field(&f, "window"))) ev.window = atoll(v);
		if ((v = field(&f, "target_time"))) ev.target_ns = strtoull(v, NULL, 10);
		for (int reg = 0; reg < 6; reg++) {
			char key[16];   /* "arg" and any int: -Wformat-truncation counts 11 digits */
			snprintf(key, sizeof key, "arg%d", reg);
			if ((v = field(&f, key))) {
				ev.int_args[reg] = strtoll(v, NULL, 0);
				ev.has_int_args = true;
			}
		}
		if ((v = field(&f, "msg"))) ev.panic_message = v;
		if ((v = field(&f, "loc"))) ev.panic_location = v;
		if ((v = field(&f, "nr"))) ev.syscall_nr = atoll(v);
		if ((v = field(&f, "result"))) ev.syscall_result = atoll(v);
		if (ev.kind == EVENT_SYSCALL_ENTRY || ev.kind == EVENT_SYSCALL_RETURN)
			ev.syscall_name = field(&f, "name");
		if (ev.kind == EVENT_SYSCALL_ENTRY || ev.kind == EVENT_SYSCALL_RETURN)
			ev.thread.name = field(&f, "thread");
		arg_text = field(&f, "args");
		ev.arg = lookup_arg;
		struct xerr e = {{0}};
		if (recipe_run_event(run, &ev, &e) < 0) {
			fflush(stdout);
			fprintf(stderr, "%s\n", e.msg);
			rc = 1;
		}
		free(st.frames);
		if (ev.kind == EVENT_END)
			ended = true;
		if (rc)
			break;
	}
	if (!ended && rc != 2) {
		struct event ev;
		memset(&ev, 0, sizeof ev);
		ev.kind = EVENT_END;
		ev.probe = -1;
		struct xerr e = {{0}};
		if (recipe_run_event(run, &ev, &e) < 0) {
			fflush(stdout);
			fprintf(stderr, "%s\n", e.msg);
			rc = 1;
		}
	}
	fclose(ev_file);
	recipe_run_free(run);
	recipe_free(r);
	return rc;
}
