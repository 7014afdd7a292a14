/* report_svg.c — a self-contained interactive SVG flame graph: no external
 * resources; hover shows function, path:line, samples and share; click
 * zooms; a regex search highlights matches and shows the matched share.
 * Root at the bottom, children sorted by name like FlameGraph, so the output
 * is deterministic. Inverted (o->inverted) is FlameGraph's --reverse
 * --inverted: stacks merged leaf first and drawn top down, so the top row
 * holds the leaf functions and each one's callers hang beneath it. */
#include "report/report.h"
#include "report/report_diff.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/slot_index.h"
#include "report/report_model.h"
#include "symbols/source_map.h"
#include "util/hyperlink.h"
#include "util/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define PAD_X 10
#define HEADER_HEIGHT 66
#define FOOTER_HEIGHT 30
#define MIN_FRAME_PX 0.1

struct location {
	const char *file;
	int line;
	uint64_t weight;
};

struct node {
	const char *name;          /* display name, interned in the profile or the model */
	const char *full;          /* the first full demangled name seen (tooltip), or NULL */
	bool more_instances;       /* frames with other full names merged into this node */
	bool inlined;
	enum frame_lang lang;
	uint64_t weight;
	struct location *locs;     /* distinct file:line this node's frames had */
	size_t nlocs, locs_cap;
	const struct node *parent; /* NULL for the root */
	struct node **children;
	size_t nchildren, cap;
};

/* A flame graph: its root and every other node in a flat list, so that
 * freeing and sorting it walk the list and drawing it keeps its own stack
 * on the heap. A saved profile's stacks can be as deep as its reader keeps
 * them (profile.h): a recursion on their depth would overflow the C stack.
 * Children are found through a hash index, not by scanning their parent's
 * list: one frame may call thousands of functions. */
struct graph {
	struct node *root;
	struct node **nodes;       /* every node but the root, in creation order */
	size_t nnodes, cap;
	struct slot_index children; /* over nodes, by (parent, name, inlined) */
	size_t depth;              /* of the deepest node, the root's being 0 */
};

static void node_free(struct node *n)
{
	free(n->children);
	free(n->locs);
	free(n);
}

static void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->nnodes; i++)
		node_free(g->nodes[i]);
	free(g->nodes);
	slot_index_free(&g->children);
	if (g->root)
		node_free(g->root);
	memset(g, 0, sizeof *g);
}

static uint64_t child_key_hash(const struct node *parent, const char *name, bool inlined)
{
	uintptr_t at = (uintptr_t)parent;
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, &at, sizeof at);
	h = hash_fnv1a(h, name, strlen(name));
	return hash_fnv1a(h, &inlined, sizeof inlined);
}

/* parent's child of that name and kind, added (last) if new; NULL when out
 * of memory. */
static struct node *node_child(struct graph *g, struct node *parent, const char *name, bool inlined,
			       enum frame_lang lang)
{
	uint64_t h = child_key_hash(parent, name, inlined);
	struct slot_probe probe = slot_index_probe(&g->children, h);
	for (size_t i; (i = slot_probe_next(&g->children, &probe)) != SLOT_INDEX_NONE;) {
		struct node *c = g->nodes[i];
		if (c->parent == parent && c->inlined == inlined && strcmp(c->name, name) == 0)
			return c;
	}
	struct node **children = array_grow(parent->children, &parent->cap, parent->nchildren + 1, sizeof *children);
	if (!children)
		return NULL;
	parent->children = children;
	struct node *c = calloc(1, sizeof *c);
	if (!c || ARRAY_PUSH(g->nodes, g->nnodes, g->cap, c) < 0) {
		free(c);
		return NULL;
	}
	if (slot_index_add(&g->children, h, g->nnodes - 1) < 0) {
		g->nnodes--;
		free(c);
		return NULL;
	}
	c->name = name;
	c->inlined = inlined;
	c->lang = lang;
	c->parent = parent;
	parent->children[parent->nchildren++] = c;
	return c;
}

static int node_add_location(struct node *n, const char *file, int line, uint64_t weight)
{
	for (size_t i = 0; i < n->nlocs; i++)
		if (n->locs[i].file == file && n->locs[i].line == line) {
			n->locs[i].weight += weight;
			return 0;
		}
	return ARRAY_PUSH(n->locs, n->nlocs, n->locs_cap, ((struct location){ file, line, weight }));
}

static int cmp_nodes(const void *x, const void *y)
{
	const struct node *a = *(struct node *const *)x, *b = *(struct node *const *)y;
	int c = strcmp(a->name, b->name);
	return c ? c : (int)a->inlined - (int)b->inlined;
}

static void node_sort(struct node *n)
{
	if (n->nchildren > 1)
		qsort(n->children, n->nchildren, sizeof *n->children, cmp_nodes);
}

static void graph_sort(struct graph *g)
{
	node_sort(g->root);
	for (size_t i = 0; i < g->nnodes; i++)
		node_sort(g->nodes[i]);
}

/* ---- XML output --------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
/* Names and paths come from the target: control characters and bytes that
 * are not UTF-8 (which XML forbids or a viewer would act on) are shown as
 * \xNN, as in the text report. */
static void xml_put(FILE *out, const char *s)
{
	text_put(out, s, TEXT_FORM_XML);
}

/* Deterministic colour: the hue range says the kind, the name's hash picks
 * inside it; inlined frames are lighter (and drawn with a dashed outline). */
static void frame_colour(const struct node *n, char *buf, size_t size)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_SEED, n->name, strlen(n->name));
	unsigned v1 = (unsigned)(h % 1000), v2 = (unsigned)((h / 1000) % 1000);
	int hue, sat, light;
	switch (n->lang) {
	case FRAME_LANG_RUST: hue = 8 + (int)(v1 * 32 / 1000); sat = 75; light = 55; break;      /* red-orange */
	case FRAME_LANG_C: hue = 195 + (int)(v1 * 30 / 1000); sat = 60; light = 60; break;       /* blue */
	case FRAME_LANG_CXX: hue = 95 + (int)(v1 * 40 / 1000); sat = 50; light = 52; break;      /* green */
	default: hue = 40 + (int)(v1 * 10 / 1000); sat = 6; light = 62; break;                 /* grey */
	}
	light += (int)(v2 * 8 / 1000);
	if (n->inlined)
		light += 16;
	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", hue, sat, light > 92 ? 92 : light);
}

static const char *kind_name(const struct node *n)
{
	const char *lang = n->lang == FRAME_LANG_RUST ? "Rust" : n->lang == FRAME_LANG_C ? "C"
			 : n->lang == FRAME_LANG_CXX ? "C++" : "unknown";
	return lang;
}

/* Label that fits w pixels, as the script computes it after a zoom. */
static void put_label(FILE *out, const char *name, double w)
{
	double char_w = FONT_SIZE * 0.59;
	long fit = (long)((w - 6) / char_w);
	if (fit < 3)
		return;
	/* cut what is shown (escapes included), on a UTF-8 boundary */
	char *shown = text_escape_dup(name);
	if (!shown)
		return;
	size_t len = strlen(shown);
	if ((size_t)fit >= len) {
		xml_put(out, shown);
		free(shown);
		return;
	}
	size_t cut = (size_t)fit - 2;
	while (cut > 0 && ((unsigned char)shown[cut] & 0xC0) == 0x80)
		cut--;
	shown[cut] = '\0';
	xml_put(out, shown);
	fputs("..", out);
	free(shown);
}

struct svg_ctx {
	FILE *out;
	uint64_t root_weight;     /* samples in the graph (kept by the focus) */
	uint64_t total;           /* all samples, the base of every share */
	double scale;             /* px per sample */
	int height;
	bool top_down;            /* depth grows downwards (inverted graph) */
	bool diff;                /* differential: colour by the change against the base */
	uint64_t base_total;      /* all samples of the base profile */
	double diff_scale;        /* the largest change of a frame in the graph, points */
	bool cpu_ns;              /* weights are on-CPU ns (hot-cpu): shown as CPU ms */
	/* An editor URL template was chosen (--links=vscode, ...): frames carry
	 * their local path (data-p, after the source maps) for "Open". */
	bool editor;
	struct source_map *source_map;
};

/* The base graph's node at the same place as a child of the new graph, or
 * NULL: matched as node_child merges (name and inlined), found by bisection
 * in base's children, sorted by graph_sort on that same key. */
static const struct node *base_child(const struct node *base, const struct node *child)
{
	if (!base || !base->nchildren)
		return NULL;
	struct node *const *found = bsearch(&child, base->children, base->nchildren, sizeof *base->children, cmp_nodes);
	return found ? *found : NULL;
}

/* Change of a frame's share, new - base, in points. */
static double node_change(const struct svg_ctx *c, const struct node *n, const struct node *base)
{
	return report_share(n->weight, c->total) - (base ? report_share(base->weight, c->base_total) : 0);
}

/* A node still to visit, with its counterpart in the base graph (or NULL),
 * the samples left of it on its row and its row. */
struct visit {
	const struct node *n, *base;
	uint64_t start;
	size_t depth;
};

struct visits {
	struct visit *items;
	size_t n, cap;
};

/* Pushes n's children, the first one last so that it is visited first;
 * each starts where its elder siblings end. Returns 0 or -1 (out of memory). */
static int push_children(struct visits *v, const struct visit *parent)
{
	const struct node *n = parent->n;
	uint64_t end = parent->start;
	for (size_t i = 0; i < n->nchildren; i++)
		end += n->children[i]->weight;
	for (size_t i = n->nchildren; i-- > 0;) {
		const struct node *child = n->children[i];
		end -= child->weight;
		struct visit next = { child, base_child(parent->base, child), end, parent->depth + 1 };
		if (ARRAY_PUSH(v->items, v->n, v->cap, next) < 0)
			return -1;
	}
	return 0;
}

/* The largest |change| of a frame present in both graphs (the full colour)
 * into *out. Returns 0 or -1 (out of memory). */
static int max_change(const struct svg_ctx *c, const struct node *root, const struct node *base_root, double *out)
{
	struct visits v = { 0 };
	int rc = 0;
	*out = 0;
	if (ARRAY_PUSH(v.items, v.n, v.cap, ((struct visit){ root, base_root, 0, 0 })) < 0)
		return -1;
	while (v.n && rc == 0) {
		struct visit at = v.items[--v.n];
		double k = at.base ? fabs(node_change(c, at.n, at.base)) : 0;
		if (k > *out)
			*out = k;
		rc = push_children(&v, &at);
	}
	free(v.items);
	return rc;
}

/* Writes n's frame; returns false when it is too narrow to draw (and so are
 * its children). */
static bool emit_frame(struct svg_ctx *c, const struct node *n, const struct node *base, uint64_t start,
		       size_t depth)
{
	double x = PAD_X + (double)start * c->scale, w = (double)n->weight * c->scale;
	if (w < MIN_FRAME_PX)
		return false;
	double y = c->top_down ? HEADER_HEIGHT + (double)depth * FRAME_HEIGHT
			       : c->height - FOOTER_HEIGHT - (double)(depth + 1) * FRAME_HEIGHT;
	const struct location *best = NULL;
	for (size_t i = 0; i < n->nlocs; i++)
		if (!best || n->locs[i].weight > best->weight)
			best = &n->locs[i];
	char colour[48], loc[32], change[96] = "";
	double delta = 0;
	if (c->diff) {
		delta = node_change(c, n, base);
		report_diff_colour(delta, base != NULL, c->diff_scale, colour, sizeof colour);
		if (base)
			snprintf(change, sizeof change, "; base %.2f%%, %+.2f points", report_share(base->weight, c->base_total),
				 delta);
		else
			snprintf(change, sizeof change, "; not in the base");
	} else
		frame_colour(n, colour, sizeof colour);
	FILE *out = c->out;
	fprintf(out, "<g class=\"f%s\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%zu\" "
		"data-k=\"%s%s%s\" data-n=\"", n->inlined ? " inl" : "", start, n->weight, depth,
		kind_name(n), n->inlined ? ", inlined" : "", change);
	xml_put(out, n->name);
	/* Rust std paths short, as in the text report */
	const char *file = best && best->file ? source_map_shown_path(best->file) : NULL;
	fputs("\" data-l=\"", out);
	if (file) {
		xml_put(out, file);
		if (best->line > 0) {
			snprintf(loc, sizeof loc, ":%d", best->line);
			fputs(loc, out);
		}
	}
	if (c->editor && best && best->file && best->line > 0) {
		char *mapped = c->source_map ? source_map_apply(c->source_map, best->file) : NULL;
		const char *local = mapped ? mapped : best->file;
		if (local[0] == '/') {
			fputs("\" data-p=\"", out);
			xml_put(out, local);
		}
		free(mapped);
	}
	fputs("\"><title>", out);
	xml_put(out, n->name);
	if (file) {
		fputs(" (", out);
		xml_put(out, file);
		if (best->line > 0)
			fprintf(out, ":%d", best->line);
		fputs(")", out);
	}
	if (c->cpu_ns)
		fprintf(out, " %.1f ms CPU, %.2f%%%s", (double)n->weight / 1e6,
			report_share(n->weight, c->total), n->inlined ? " [inlined]" : "");
	else
		fprintf(out, " %" PRIu64 " samples, %.2f%%%s", n->weight,
			report_share(n->weight, c->total), n->inlined ? " [inlined]" : "");
	if (c->diff && base)
		fprintf(out, "\nbase %.2f%% → now %.2f%% (%+.2f points)", report_share(base->weight, c->base_total),
			report_share(n->weight, c->total), delta);
	else if (c->diff)
		fprintf(out, "\nnot in the base profile (now %.2f%%)", report_share(n->weight, c->total));
	if (n->full) {
		/* the name as demangled, generic arguments and all */
		fputs("\n", out);
		xml_put(out, n->full);
		if (n->more_instances)
			fputs(" (and other instances)", out);
	}
	fputs("</title>", out);
	fprintf(out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		x, y, w, FRAME_HEIGHT - 1, colour);
	fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + FRAME_HEIGHT - 4.5);
	put_label(out, n->name, w);
	fputs("</text></g>\n", out);
	return true;
}

/* Writes the frames of the graph under root, depth first, each node before
 * its children and children in order. Returns 0 or -1 (out of memory). */
static int emit_graph(struct svg_ctx *c, const struct node *root, const struct node *base_root)
{
	struct visits v = { 0 };
	int rc = 0;
	if (ARRAY_PUSH(v.items, v.n, v.cap, ((struct visit){ root, base_root, 0, 0 })) < 0)
		return -1;
	while (v.n && rc == 0) {
		struct visit at = v.items[--v.n];
		if (emit_frame(c, at.n, at.base, at.start, at.depth))
			rc = push_children(&v, &at);
	}
	free(v.items);
	return rc;
}

static const char svg_style[] =
	"<style type=\"text/css\"><![CDATA[\n"
	"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	"#xgp-title { font-size: 17px; text-anchor: middle; }\n"
	"#xgp-subtitle { font-size: 12px; text-anchor: middle; fill: #555; }\n"
	".f text { pointer-events: none; }\n"
	".f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	".f.inl rect { stroke: #fff; stroke-width: 1; stroke-dasharray: 2,2; }\n"
	".f.parent { opacity: 0.5; }\n"
	".f.hide { display: none; }\n"
	".f.match rect { fill: rgb(230,0,230); }\n"
	".f.sel rect { stroke: #000; stroke-width: 1.5; }\n"
	".ctl { cursor: pointer; fill: #33c; }\n"
	".legend rect { stroke: #888; stroke-width: 0.5; }\n"
	"]]></style>\n";

/* The script: plain ES5, one namespace object `xgp`, elements found by id so
 * it runs both standalone and when the SVG is inlined in an HTML page. */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"  var svg = document.getElementById('xgp-svg');\n"
	"  var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');\n"
	"  var TOTAL = +svg.getAttribute('data-total'), ROOT = +svg.getAttribute('data-root');\n"
	"  var frames = svg.getElementsByClassName('f');\n"
	"  var details = document.getElementById('xgp-details');\n"
	"  var matched = document.getElementById('xgp-matched');\n"
	"  var reset = document.getElementById('xgp-reset');\n"
	"  var searchBtn = document.getElementById('xgp-search');\n"
	"  var copyBtn = document.getElementById('xgp-copy'), openBtn = document.getElementById('xgp-open');\n"
	"  var zoomed = null, currentRe = null, selected = null;\n"
	"  var EDITOR = svg.getAttribute('data-editor');\n"
	/* the details line keeps within the picture, clear of the buttons:
	 * cut in its middle (its end is path:line and the share) */
	"  var DETAILS_MAX = Math.floor((W - 2 * PAD - (EDITOR ? 200 : 100)) / (12 * 0.59));\n"
	"  function say(text) {\n"
	"    if (text.length > DETAILS_MAX) {\n"
	"      var head = Math.floor((DETAILS_MAX - 1) / 2);\n"
	"      text = text.substring(0, head) + '\\u2026' + text.substring(text.length - (DETAILS_MAX - 1 - head));\n"
	"    }\n"
	"    details.textContent = text;\n"
	"  }\n"
	"  var CPU_NS = svg.getAttribute('data-unit') === 'ns';\n"
	"  function amount(n) { return CPU_NS ? (n / 1e6).toFixed(1) + ' ms CPU' : n + ' samples'; }\n"
	"  function pct(n) { return (TOTAL ? 100 * n / TOTAL : 0).toFixed(2) + '%'; }\n"
	"  function attr(g, a) { return g.getAttribute(a); }\n"
	"  function describe(g) {\n"
	"    var l = attr(g, 'data-l');\n"
	"    return attr(g, 'data-n') + (l ? ' \\u2014 ' + l : '') + ' \\u2014 ' + amount(+attr(g, 'data-w')) +\n"
	"      ' (' + pct(+attr(g, 'data-w')) + ') \\u2014 ' + attr(g, 'data-k');\n"
	"  }\n"
	"  function label(g, w) {\n"
	"    var t = g.getElementsByTagName('text')[0], name = attr(g, 'data-n');\n"
	"    var fit = Math.floor((w - 6) / (12 * 0.59));\n"
	"    t.textContent = fit < 3 ? '' : (fit >= name.length ? name : name.substring(0, fit - 2) + '..');\n"
	"  }\n"
	"  function place(g, x, w) {\n"
	"    var r = g.getElementsByTagName('rect')[0];\n"
	"    r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
	"    g.getElementsByTagName('text')[0].setAttribute('x', (x + 3).toFixed(2));\n"
	"    label(g, w);\n"
	"  }\n"
	"  function zoom(z) {\n"
	"    var zx = +attr(z, 'data-x'), zw = +attr(z, 'data-w'), zd = +attr(z, 'data-d');\n"
	"    var span = W - 2 * PAD;\n"
	"    for (var i = 0; i < frames.length; i++) {\n"
	"      var g = frames[i], x = +attr(g, 'data-x'), w = +attr(g, 'data-w'), d = +attr(g, 'data-d');\n"
	"      g.classList.remove('hide'); g.classList.remove('parent');\n"
	"      if (d >= zd && x >= zx && x + w <= zx + zw) {\n"
	"        place(g, PAD + (x - zx) / zw * span, w / zw * span);\n"
	"      } else if (d < zd && x <= zx && x + w >= zx + zw) {\n"
	"        g.classList.add('parent'); place(g, PAD, span);\n"
	"      } else {\n"
	"        g.classList.add('hide');\n"
	"      }\n"
	"    }\n"
	"    zoomed = +attr(z, 'data-d') > 0 ? z : null;\n"
	"    reset.style.display = zoomed ? '' : 'none';\n"
	"    if (currentRe) search(currentRe);\n"
	"  }\n"
	"  function unzoom() { zoom(frames[0]); }\n"
	"  function search(re) {\n"
	"    var rx; currentRe = re;\n"
	"    if (re === null || re === '') { clearSearch(); return null; }\n"
	"    try { rx = new RegExp(re); } catch (err) { matched.textContent = 'bad regex: ' + err.message; return null; }\n"
	"    var spans = [];\n"
	"    for (var i = 0; i < frames.length; i++) {\n"
	"      var g = frames[i];\n"
	"      if (+attr(g, 'data-d') > 0 && rx.test(attr(g, 'data-n'))) {\n"
	"        g.classList.add('match');\n"
	"        spans.push([+attr(g, 'data-x'), +attr(g, 'data-x') + +attr(g, 'data-w')]);\n"
	"      } else g.classList.remove('match');\n"
	"    }\n"
	"    /* nested matches count once: merge the covered sample ranges */\n"
	"    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"    var sum = 0, end = -1;\n"
	"    for (var j = 0; j < spans.length; j++) {\n"
	"      if (spans[j][0] >= end) { sum += spans[j][1] - spans[j][0]; end = spans[j][1]; }\n"
	"      else if (spans[j][1] > end) { sum += spans[j][1] - end; end = spans[j][1]; }\n"
	"    }\n"
	"    matched.textContent = 'Matched: ' + pct(sum) + ' (' + amount(sum) + ')';\n"
	"    searchBtn.textContent = 'Clear search';\n"
	"    return sum;\n"
	"  }\n"
	"  function clearSearch() {\n"
	"    for (var i = 0; i < frames.length; i++) frames[i].classList.remove('match');\n"
	"    matched.textContent = ''; currentRe = null; searchBtn.textContent = 'Search';\n"
	"  }\n"
	"  function askSearch() {\n"
	"    if (currentRe) { clearSearch(); return; }\n"
	"    var re = window.prompt('Search (regular expression over function names):', '');\n"
	"    if (re) search(re);\n"
	"  }\n"
	/* Copying path:line: the async clipboard API where the page may use it
	 * (https, localhost), else a selected textarea and execCommand('copy')
	 * (file://, older browsers). What was copied is also kept in
	 * data-copied and said in the details line. */
	"  function copyFallback(text) {\n"
	/* namespaces taken from what exists: the SVG names no URL but its own */
	"    var host = document.body, fo = null, ta = host ? document.createElement('textarea') :\n"
	"      document.importNode(document.implementation.createHTMLDocument('').createElement('textarea'), true);\n"
	"    if (!host) {\n"
	"      fo = document.createElementNS(svg.namespaceURI, 'foreignObject');\n"
	"      fo.setAttribute('width', '1'); fo.setAttribute('height', '1'); svg.appendChild(fo); host = fo;\n"
	"    }\n"
	"    ta.value = text; ta.setAttribute('readonly', ''); ta.style.position = 'fixed'; ta.style.opacity = '0';\n"
	"    host.appendChild(ta); ta.focus(); ta.select();\n"
	"    try { document.execCommand('copy'); } catch (err) { }\n"
	"    host.removeChild(ta); if (fo) svg.removeChild(fo);\n"
	"  }\n"
	"  function copyPath(g) {\n"
	"    var text = g && attr(g, 'data-l');\n"
	"    if (!text) { say(g ? 'this frame has no path:line' : 'click a frame first: Copy path copies the selected frame'); return; }\n"
	"    svg.setAttribute('data-copied', text);\n"
	"    say('copied ' + text);\n"
	"    if (navigator.clipboard && navigator.clipboard.writeText && window.isSecureContext)\n"
	"      navigator.clipboard.writeText(text).catch(function () { copyFallback(text); });\n"
	"    else copyFallback(text);\n"
	"  }\n"
	/* the editor's URL for a frame: the template's {path} (percent-encoded
	 * as the text reports' links are), {line}, {col} */
	"  function editorUrl(g) {\n"
	"    var path = g && attr(g, 'data-p'), l = g && attr(g, 'data-l');\n"
	"    if (!EDITOR || !path || !l) return null;\n"
	"    var line = l.substring(l.lastIndexOf(':') + 1);\n"
	"    var enc = encodeURIComponent(path).replace(/%2F/g, '/').replace(/[!'()*]/g, function (ch) {\n"
	"      return '%' + ch.charCodeAt(0).toString(16).toUpperCase(); });\n"
	"    return EDITOR.split('{path}').join(enc).split('{line}').join(line).split('{col}').join('1');\n"
	"  }\n"
	"  function openEditor(g) {\n"
	"    var url = editorUrl(g);\n"
	"    if (!url) { say(g ? 'this frame has no local source file' : 'click a frame first: Open opens the selected frame'); return; }\n"
	"    svg.setAttribute('data-opened', url);\n"
	"    say('opening ' + url);\n"
	"    (window.xgpOpen || function (u) { window.location.assign(u); })(url);\n"
	"  }\n"
	"  function select(g) {\n"
	"    if (selected) selected.classList.remove('sel');\n"
	"    selected = +attr(g, 'data-d') > 0 ? g : null;\n"
	"    if (selected) selected.classList.add('sel');\n"
	"  }\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    frames[i].addEventListener('mouseover', function () { say(describe(this)); });\n"
	"    frames[i].addEventListener('mouseout', function () { say(selected ? 'selected: ' + describe(selected) : ' '); });\n"
	"    frames[i].addEventListener('click', function (ev) {\n"
	"      if (ev.shiftKey || ev.altKey) copyPath(this); else { select(this); zoom(this); }\n"
	"    });\n"
	"  }\n"
	"  copyBtn.addEventListener('click', function () { copyPath(selected); });\n"
	"  if (openBtn) openBtn.addEventListener('click', function () { openEditor(selected); });\n"
	"  reset.addEventListener('click', unzoom);\n"
	"  searchBtn.addEventListener('click', askSearch);\n"
	"  window.addEventListener('keydown', function (ev) {\n"
	"    if ((ev.ctrlKey || ev.metaKey) && (ev.key === 'f' || ev.key === 'F')) { ev.preventDefault(); askSearch(); }\n"
	"    else if (ev.key === 'Escape') { clearSearch(); unzoom(); }\n"
	"  });\n"
	"  reset.style.display = 'none';\n"
	"  window.xgp = { zoom: zoom, unzoom: unzoom, search: search, clearSearch: clearSearch, frames: frames,\n"
	"                 copyPath: copyPath, openEditor: openEditor, editorUrl: editorUrl };\n"
	"  svg.setAttribute('data-ready', 'yes');\n"
	"})();\n"
	"]]></script>\n";

static void put_subtitle(FILE *out, const struct profile *p, uint64_t total)
{
	const struct profile_meta *mt = &p->meta;
	char buf[128];
	if (report_cpu_weighted(p))
		fprintf(out, "%.0f ms CPU (weighted samples)", (double)total / 1e6);
	else
		fprintf(out, "%" PRIu64 " samples", total);
	if (!isnan(mt->frequency_achieved_hz)) {
		snprintf(buf, sizeof buf, " · %.1f Hz", mt->frequency_achieved_hz);
		fputs(buf, out);
	}
	if (!isnan(mt->duration_actual_s))
		fprintf(out, " · %.1f s", mt->duration_actual_s);
	if (mt->pid >= 0)
		fprintf(out, " · pid %" PRId64, mt->pid);
	if (mt->thread_selection) {
		fputs(" · threads: ", out);
		xml_put(out, mt->thread_selection);
	}
	if (mt->stop_mode && strcmp(mt->stop_mode, "non-stop") == 0 && !isnan(mt->thread_stopped_max_pct))
		fprintf(out, " · each thread stopped at most %.1f%% of its time", mt->thread_stopped_max_pct);
	else if (!isnan(mt->stopped_pct))
		fprintf(out, " · target stopped %.1f%% of the time", mt->stopped_pct);
	if (mt->start_time) {
		fputs(" · ", out);
		xml_put(out, mt->start_time);
	}
}

/* The graph of the model's kept samples into g. Returns 0, or -1 when out
 * of memory (g freed). */
static int build_graph(const struct report_model *m, struct graph *g)
{
	const struct profile *p = m->profile;
	const struct report_options *o = &m->options;
	memset(g, 0, sizeof *g);
	struct node *root = g->root = calloc(1, sizeof *root);
	if (!root)
		return -1;
	root->name = "all";
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (!report_model_keeps(m, en))
			continue;
		struct node *n = root;
		size_t depth = 0;
		n->weight += en->weight;
		if (o->thread_roots) {
			n = node_child(g, n, en->thread_name ? en->thread_name : "(?)", false, FRAME_LANG_UNKNOWN);
			if (!n)
				goto oom;
			n->weight += en->weight;
			depth++;
		}
		/* frames[0] is the leaf */
		for (size_t k = 0; k < en->stack.nframes; k++) {
			size_t f = o->inverted ? k : en->stack.nframes - 1 - k;
			const struct frame *fr = &en->stack.frames[f];
			const char *fname = fr->function;
			if (!fname) {
				size_t fi = report_model_func(m, fr);
				fname = fi != (size_t)-1 ? m->funcs[fi].name : "?";
			}
			n = node_child(g, n, fname, fr->inlined, fr->lang);
			if (!n || node_add_location(n, fr->file, fr->line, en->weight) < 0)
				goto oom;
			depth++;
			if (fr->full_function && !n->full)
				n->full = fr->full_function;
			else if (fr->full_function != n->full)
				n->more_instances = true;   /* interned: pointers compare names */
			n->weight += en->weight;
		}
		if (depth > g->depth)
			g->depth = depth;
	}
	graph_sort(g);
	return 0;
oom:
	graph_free(g);
	return -1;
}

int report_svg(const struct profile *p, FILE *out, const struct report_options *o, struct xerr *e)
{
	struct report_model m, mb;
	bool diff = o && o->diff_base;
	if (report_model_init(&m, p, o, e) < 0)
		return -1;
	if (diff && report_model_init(&mb, o->diff_base, o, e) < 0) {
		report_model_release(&m);
		return -1;
	}
	o = &m.options;
	struct graph graph = { 0 }, base_graph = { 0 };
	int rc = -1;
	if (build_graph(&m, &graph) < 0 || (diff && build_graph(&mb, &base_graph) < 0))
		goto oom;
	const struct node *root = graph.root, *base_root = base_graph.root;

	struct svg_ctx c = { out, root->weight, m.total, 0, 0, o->inverted, diff, diff ? mb.total : 0, 0, false,
			     false, o->source_map };
	c.cpu_ns = report_cpu_weighted(m.profile);
	char editor[1024];
	c.editor = hyperlink_editor_template(editor, sizeof editor);
	if (diff && max_change(&c, root, base_root, &c.diff_scale) < 0)
		goto oom;
	c.height = HEADER_HEIGHT + FOOTER_HEIGHT + (int)(graph.depth + 1) * FRAME_HEIGHT;
	c.scale = root->weight ? (double)(IMAGE_WIDTH - 2 * PAD_X) / (double)root->weight : 0;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	/* width 100%: the picture scales to the window (a 900-px browser
	 * window shows all of it, the details line and the buttons included) */
	fprintf(out, "<svg id=\"xgp-svg\" version=\"1.1\" width=\"100%%\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"data-width=\"%d\" data-pad=\"%d\" data-total=\"%" PRIu64 "\" data-root=\"%" PRIu64 "\"%s",
		IMAGE_WIDTH, c.height, IMAGE_WIDTH, PAD_X, m.total, root->weight,
		c.cpu_ns ? " data-unit=\"ns\"" : "");
	if (c.editor) {
		fputs(" data-editor=\"", out);
		xml_put(out, editor);
		fputc('"', out);
	}
	fputs(">\n", out);
	fputs(svg_style, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf6\"/>\n",
		IMAGE_WIDTH, c.height);
	fprintf(out, "<text id=\"xgp-title\" x=\"%d\" y=\"22\">", IMAGE_WIDTH / 2);
	if (o->title)
		xml_put(out, o->title);
	else {
		fputs(diff ? "xgdbprof differential: " : "xgdbprof: ", out);
		xml_put(out, p->meta.exe ? p->meta.exe : "profile");
	}
	fprintf(out, "</text>\n<text id=\"xgp-subtitle\" x=\"%d\" y=\"40\">", IMAGE_WIDTH / 2);
	put_subtitle(out, p, m.total);
	if (m.focus) {
		fputs(" · focus /", out);
		xml_put(out, m.focus);
		fprintf(out, "/ kept %.1f%%", report_share(m.kept, m.total));
	}
	if (diff) {
		fprintf(out, " · against a base of %" PRIu64 " samples", mb.total);
		if (o->diff_base->meta.start_time) {
			fputs(" from ", out);
			xml_put(out, o->diff_base->meta.start_time);
		}
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"xgp-reset\" class=\"ctl\" x=\"%d\" y=\"22\">Reset Zoom</text>\n", PAD_X);
	fprintf(out, "<text id=\"xgp-search\" class=\"ctl\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n",
		IMAGE_WIDTH - PAD_X);
	/* on the legend's row, right: the subtitle (centred, y 40) can be wide */
	fprintf(out, "<text id=\"xgp-matched\" x=\"%d\" y=\"57\" text-anchor=\"end\"></text>\n",
		IMAGE_WIDTH - PAD_X);
	/* legend: what the colours mean */
	static const struct { const char *label; enum frame_lang lang; bool inl; } legend[] = {
		{ "Rust", FRAME_LANG_RUST, false }, { "C", FRAME_LANG_C, false },
		{ "C++", FRAME_LANG_CXX, false }, { "unknown", FRAME_LANG_UNKNOWN, false },
		{ "inlined", FRAME_LANG_RUST, true },
	};
	fputs("<g class=\"legend\">", out);
	if (diff) {
		/* what the colours mean: the change of the frame's share */
		static const struct { const char *label; double change; bool in_base; } diff_legend[] = {
			{ "grew", 1, true }, { "shrank", -1, true }, { "not in the base", 1, false },
			{ "unchanged", 0, true },
		};
		for (size_t i = 0; i < sizeof diff_legend / sizeof diff_legend[0]; i++) {
			char colour[48];
			report_diff_colour(diff_legend[i].change, diff_legend[i].in_base, 1, colour, sizeof colour);
			fprintf(out, "<rect x=\"%zu\" y=\"48\" width=\"10\" height=\"10\" fill=\"%s\"/>"
				"<text x=\"%zu\" y=\"57\">%s</text>", PAD_X + i * 120, colour, PAD_X + i * 120 + 14,
				diff_legend[i].label);
		}
	}
	for (size_t i = 0; !diff && i < sizeof legend / sizeof legend[0]; i++) {
		struct node sample = { .name = "", .inlined = legend[i].inl, .lang = legend[i].lang };
		char colour[48];
		frame_colour(&sample, colour, sizeof colour);
		fprintf(out, "<rect x=\"%zu\" y=\"48\" width=\"10\" height=\"10\" fill=\"%s\"%s/>"
			"<text x=\"%zu\" y=\"57\">%s</text>", PAD_X + i * 80, colour,
			legend[i].inl ? " stroke-dasharray=\"2,2\"" : "", PAD_X + i * 80 + 14, legend[i].label);
	}
	fputs("</g>\n", out);
	fprintf(out, "<text id=\"xgp-details\" x=\"%d\" y=\"%d\"> </text>\n", PAD_X, c.height - 10);
	/* copy the selected (last clicked) frame's path:line, never the last
	 * hovered one: the pointer crosses other frames on its way here */
	fprintf(out, "<text id=\"xgp-copy\" class=\"ctl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		"Copy path</text>\n", IMAGE_WIDTH - PAD_X, c.height - 10);
	if (c.editor)
		fprintf(out, "<text id=\"xgp-open\" class=\"ctl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
			"Open in editor</text>\n", IMAGE_WIDTH - PAD_X - 90, c.height - 10);
	fputs("<g id=\"xgp-frames\">\n", out);
	/* the root: "all" samples in the graph */
	if (root->weight && emit_graph(&c, root, base_root) < 0)
		goto oom;
	fputs("</g>\n", out);
	fputs(svg_script, out);
	fputs("</svg>\n", out);
	rc = ferror(out) ? xerr_set(e, "cannot write the flame graph") : 0;
	goto done;
oom:
	xerr_oom_doing(e, "building the flame graph");
done:
	graph_free(&graph);
	graph_free(&base_graph);
	report_model_release(&m);
	if (diff)
		report_model_release(&mb);
	return rc;
}
