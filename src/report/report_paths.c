/* report_paths.c — the call tree, the hottest code paths inferred from it,
 * and which frames are the user's own code (definitions in report_model.h,
 * for users in docs/reports.md).
 *
 * Why a tree and not distinct stacks: two samples of the same hot loop
 * differ in their leaf (the loop calls small helpers; a std comparison is
 * inlined at one line and not at the next), so ranking distinct stacks
 * scatters one hot code path over many thin entries and crowns whichever
 * std leaf happens to be the largest shard. Merging stacks into a tree
 * keeps the weight of a caller together, and the path only stops where the
 * weight really spreads out.
 */
#include "report/report_model.h"
#include "util/compare.h"
#include "util/array.h"

#include <stdlib.h>
#include <string.h>

/* ---- user code ---------------------------------------------------------- */

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Names of the runtime's functions, for frames without a source file: the
 * Rust standard library, the C runtime and thread start. */
static bool runtime_name(const char *name)
{
	static const char *const prefixes[] = {
		"std::", "core::", "alloc::", "<std::", "<core::", "<alloc::", "__rust",
		"_start", "__libc_start", "start_thread", "clone", "__clone", "_dl_", NULL,
	};
	for (size_t i = 0; prefixes[i]; i++)
		if (has_prefix(name, prefixes[i]))
			return true;
	return false;
}

/* Source files that are not the target's own: the Rust toolchain's
 * libraries, crates cargo fetched, and the system's C libraries and
 * headers. Judged by the path alone, so that a report rendered on another
 * machine classifies frames the same way. */
static bool foreign_file(const char *file)
{
	static const char *const prefixes[] = {
		"/rustc/",            /* std, core, alloc of a released toolchain */
		"./", "../",          /* glibc and Debian-built libraries: relative to their build tree */
		"/usr/include/", "/usr/src/", "/usr/lib/", "/usr/share/", "/build/", NULL,
	};
	static const char *const parts[] = {
		"/library/std/", "/library/core/", "/library/alloc/", "/library/proc_macro/",
		"/library/panic_unwind/", "/library/panic_abort/", "/library/test/",
		"/library/backtrace/", "/library/stdarch/", "/library/portable-simd/",
		"/lib/rustlib/src/",  /* rust-src of a local toolchain */
		"/.cargo/registry/", "/.cargo/git/", "/vendor/",  /* dependencies */
		NULL,
	};
	for (size_t i = 0; prefixes[i]; i++)
		if (has_prefix(file, prefixes[i]))
			return true;
	for (size_t i = 0; parts[i]; i++)
		if (strstr(file, parts[i]))
			return true;
	return false;
}

bool report_frame_is_user(const struct frame *f)
{
	if (!f->function)
		return false;
	if (f->file)
		return !foreign_file(f->file);
	if (runtime_name(f->function))
		return false;
	/* no file: a shared library's symbol table names the library's code */
	return !(f->module && strstr(report_basename(f->module), ".so"));
}

/* ---- the call tree ------------------------------------------------------ */

struct child_index {
	size_t *slots;    /* node index; 0 = empty (the root is nobody's child) */
	size_t nslots;
};

static uint64_t mix2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6) + (a >> 2));
	h ^= h >> 29;
	return h * 0xbf58476d1ce4e5b9ULL;
}

static int grow_index(struct child_index *ix, const struct report_node *nodes, size_t nnodes)
{
	size_t nslots = ix->nslots ? ix->nslots * 2 : 1024;
	size_t *slots = calloc(nslots, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t n = 1; n < nnodes; n++) {
		size_t j = mix2(nodes[n].parent, nodes[n].func) & (nslots - 1);
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = n;
	}
	free(ix->slots);
	ix->slots = slots;
	ix->nslots = nslots;
	return 0;
}

/* The child of parent for function func, created if new. Returns its index,
 * or 0 when out of memory. */
static size_t child_of(struct report_model *m, struct child_index *ix, size_t *cap,
		       size_t parent, size_t func)
{
	size_t j = mix2(parent, func) & (ix->nslots - 1);
	while (ix->slots[j]) {
		const struct report_node *n = &m->nodes[ix->slots[j]];
		if (n->parent == parent && n->func == func)
			return ix->slots[j];
		j = (j + 1) & (ix->nslots - 1);
	}
	if ((m->nnodes + 1) * 2 > ix->nslots) {
		if (grow_index(ix, m->nodes, m->nnodes) < 0)
			return 0;
		return child_of(m, ix, cap, parent, func);
	}
	if (m->nnodes == *cap) {
		struct report_node *g = array_grow(m->nodes, cap, m->nnodes + 1, sizeof *g);
		if (!g)
			return 0;
		m->nodes = g;
	}
	size_t n = m->nnodes++;
	m->nodes[n] = (struct report_node){ .func = func, .parent = parent,
					    .next_sibling = m->nodes[parent].first_child,
					    .depth = m->nodes[parent].depth + 1 };
	struct report_func *fn = &m->funcs[func];
	if (!fn->depth || m->nodes[n].depth < fn->depth)
		fn->depth = m->nodes[n].depth;
	m->nodes[parent].first_child = n;
	ix->slots[j] = n;
	return n;
}

/* Weight per (node, file, line, inlined): a node's hottest line. */
struct line_tally {
	size_t node;
	const struct frame *frame;
	uint64_t weight;
};

struct tally_index {
	struct line_tally *items;
	size_t n, cap;
	size_t *slots;    /* item index + 1 */
	size_t nslots;
};

static uint64_t tally_hash(size_t node, const struct frame *f)
{
	return mix2(mix2(node, (uintptr_t)f->file), ((uint64_t)(unsigned)f->line << 1) | f->inlined);
}

static bool tally_same(const struct line_tally *t, size_t node, const struct frame *f)
{
	return t->node == node && t->frame->file == f->file && t->frame->line == f->line &&
	       t->frame->inlined == f->inlined;
}

static int tally_add(struct tally_index *tx, size_t node, const struct frame *f, uint64_t w)
{
	if ((tx->n + 1) * 2 > tx->nslots) {
		size_t nslots = tx->nslots ? tx->nslots * 2 : 1024;
		size_t *slots = calloc(nslots, sizeof *slots);
		if (!slots)
			return -1;
		for (size_t i = 0; i < tx->n; i++) {
			size_t j = tally_hash(tx->items[i].node, tx->items[i].frame) & (nslots - 1);
			while (slots[j])
				j = (j + 1) & (nslots - 1);
			slots[j] = i + 1;
		}
		free(tx->slots);
		tx->slots = slots;
		tx->nslots = nslots;
	}
	size_t j = tally_hash(node, f) & (tx->nslots - 1);
	while (tx->slots[j]) {
		struct line_tally *t = &tx->items[tx->slots[j] - 1];
		if (tally_same(t, node, f)) {
			t->weight += w;
			return 0;
		}
		j = (j + 1) & (tx->nslots - 1);
	}
	if (tx->n == tx->cap) {
		struct line_tally *g = array_grow(tx->items, &tx->cap, tx->n + 1, sizeof *g);
		if (!g)
			return -1;
		tx->items = g;
	}
	tx->items[tx->n] = (struct line_tally){ node, f, w };
	tx->slots[j] = ++tx->n;
	return 0;
}

/* Whether tally a is a better hottest line than b: more weight, then the
 * lowest file and line, the out-of-line frame before an inlined one. A
 * total order, so the hash's visiting order cannot change the choice. */
static bool better_line(const struct line_tally *a, const struct line_tally *b)
{
	if (a->weight != b->weight)
		return a->weight > b->weight;
	int c = report_cmp_place(a->frame->file, a->frame->line, b->frame->file, b->frame->line);
	if (c)
		return c < 0;
	return !a->frame->inlined && b->frame->inlined;
}

static int build_tree(struct report_model *m, size_t *entry_leaf)
{
	const struct profile *p = m->profile;
	struct child_index ix = { NULL, 0 };
	struct tally_index tx = { 0 };
	size_t cap = 0;
	int rc = -1;
	m->nodes = array_grow(NULL, &cap, 1, sizeof *m->nodes);
	if (!m->nodes || grow_index(&ix, m->nodes, 0) < 0)
		goto done;
	m->nodes[0] = (struct report_node){ .func = (size_t)-1, .parent = (size_t)-1 };
	m->nnodes = 1;
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		if (!report_model_keeps(m, en))
			continue;
		size_t at = 0;
		m->nodes[0].weight += en->weight;
		for (size_t k = en->stack.nframes; k-- > 0;) {
			const struct frame *f = &en->stack.frames[k];
			size_t child = child_of(m, &ix, &cap, at, report_model_func(m, f));
			if (!child || tally_add(&tx, child, f, en->weight) < 0)
				goto done;
			at = child;
			m->nodes[at].weight += en->weight;
		}
		m->nodes[at].self += en->weight;
		entry_leaf[i] = at;
	}
	{
		/* each node's frame: its best tally */
		const struct line_tally **best = calloc(m->nnodes, sizeof *best);
		if (!best)
			goto done;
		for (size_t t = 0; t < tx.n; t++) {
			const struct line_tally *cur = &tx.items[t];
			if (!best[cur->node] || better_line(cur, best[cur->node]))
				best[cur->node] = cur;
		}
		for (size_t n = 1; n < m->nnodes; n++)
			m->nodes[n].frame = best[n]->frame;
		free((void *)best);
	}
	rc = 0;
done:
	free(ix.slots);
	free(tx.slots);
	free(tx.items);
	return rc;
}

/* ---- code paths --------------------------------------------------------- */

static const struct report_model *sort_model;   /* qsort has no context argument */

static const char *node_name(const struct report_model *m, size_t n)
{
	return m->funcs[m->nodes[n].func].name;
}

/* Heaviest first; ties by name, then by function index (two unknown
 * functions can print alike). */
static int cmp_children(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	const struct report_node *na = &sort_model->nodes[a], *nb = &sort_model->nodes[b];
	int c = report_cmp_heavier(na->weight, nb->weight);
	if (!c)
		c = strcmp(node_name(sort_model, a), node_name(sort_model, b));
	return c ? c : compare_u64(na->func, nb->func);
}

static int cmp_code_paths(const void *x, const void *y)
{
	const struct report_code_path *a = x, *b = y;
	int heavier = report_cmp_heavier(a->weight, b->weight);
	if (heavier)
		return heavier;
	const size_t *ca = &sort_model->chain_nodes[a->chain_begin];
	const size_t *cb = &sort_model->chain_nodes[b->chain_begin];
	for (size_t i = 0; i < a->nchain && i < b->nchain; i++) {
		int c = strcmp(node_name(sort_model, ca[i]), node_name(sort_model, cb[i]));
		if (c)
			return c;
		const struct frame *fa = sort_model->nodes[ca[i]].frame, *fb = sort_model->nodes[cb[i]].frame;
		if ((c = report_cmp_place(fa->file, fa->line, fb->file, fb->line)))
			return c;
	}
	return compare_u64(a->nchain, b->nchain);
}

/* The thread's spawn closure (`|| worker(seed)`) only forwards to the
 * function it was given; the headline starts after it. */
static bool is_closure(const char *name)
{
	const char *last = name, *sep;
	while ((sep = strstr(last, "::")))
		last = sep + 2;
	return has_prefix(last, "{{closure") || has_prefix(last, "{closure");
}

static void choose_headline(const struct report_model *m, struct report_code_path *cp)
{
	const size_t *chain = &m->chain_nodes[cp->chain_begin];
	size_t first = cp->nchain, last = cp->nchain;
	for (size_t i = 0; i < cp->nchain; i++)
		if (report_frame_is_user(m->nodes[chain[i]].frame)) {
			if (first == cp->nchain)
				first = i;
			last = i;
		}
	if (last == cp->nchain) {   /* no user frame: the path speaks for itself */
		cp->entry = cp->deepest = cp->nchain - 1;
		return;
	}
	while (first < last && is_closure(node_name(m, chain[first]))) {
		size_t next = first + 1;
		while (!report_frame_is_user(m->nodes[chain[next]].frame))
			next++;
		first = next;
	}
	cp->entry = first;
	cp->deepest = last;
}

/* Appends the path ending at node `end` (its chain read back through the
 * parents). */
static int emit_path(struct report_model *m, size_t *paths_cap, size_t *chain_cap, size_t end)
{
	size_t depth = 0;
	for (size_t n = end; n != 0; n = m->nodes[n].parent)
		depth++;
	if (m->ncode_paths == *paths_cap) {
		struct report_code_path *g = array_grow(m->code_paths, paths_cap, m->ncode_paths + 1, sizeof *g);
		if (!g)
			return -1;
		m->code_paths = g;
	}
	size_t used = m->ncode_paths ? m->code_paths[m->ncode_paths - 1].chain_begin +
					       m->code_paths[m->ncode_paths - 1].nchain : 0;
	if (used + depth > *chain_cap) {
		size_t *g = array_grow(m->chain_nodes, chain_cap, used + depth, sizeof *g);
		if (!g)
			return -1;
		m->chain_nodes = g;
	}
	size_t k = used + depth;
	for (size_t n = end; n != 0; n = m->nodes[n].parent)
		m->chain_nodes[--k] = n;
	m->code_paths[m->ncode_paths++] = (struct report_code_path){
		.chain_begin = used, .nchain = depth, .weight = m->nodes[end].weight };
	return 0;
}

/* part >= pct% of whole, without overflow for sum() weights near 2^64 */
static bool at_least_pct(uint64_t part, uint64_t whole, unsigned pct)
{
	return (double)part * 100.0 >= (double)pct * (double)whole;
}

static int infer_paths(struct report_model *m)
{
	size_t *todo = NULL, ntodo = 0, todo_cap = 0;
	size_t *kids = NULL, kids_cap = 0;
	size_t paths_cap = 0, chain_cap = 0;
	const uint64_t kept = m->nodes[0].weight;
	int rc = -1;
	if (!kept)
		return 0;
	sort_model = m;
	todo = array_grow(NULL, &todo_cap, 1, sizeof *todo);
	if (!todo)
		goto done;
	todo[ntodo++] = 0;
	while (ntodo) {
		size_t at = todo[--ntodo];
		const struct report_node *node = &m->nodes[at];
		size_t nkids = 0;
		for (size_t c = node->first_child; c; c = m->nodes[c].next_sibling) {
			if (nkids == kids_cap) {
				size_t *g = array_grow(kids, &kids_cap, nkids + 1, sizeof *g);
				if (!g)
					goto done;
				kids = g;
			}
			kids[nkids++] = c;
		}
		qsort(kids, nkids, sizeof *kids, cmp_children);
		/* which children go on: the dominant one and the significant
		 * others, or a fork's significant children; none: the path stops */
		size_t go_on = 0;
		uint64_t significant_weight = 0;
		bool dominant = nkids && at_least_pct(m->nodes[kids[0]].weight, node->weight,
						      REPORT_PATH_FOLLOW_PCT);
		for (size_t i = 0; i < nkids; i++) {
			uint64_t w = m->nodes[kids[i]].weight;
			/* at the root every child goes on: stacks cut short by the
			 * walker have roots of their own, however few */
			if (at == 0 || (i == 0 && dominant) || at_least_pct(w, kept, REPORT_PATH_BRANCH_PCT)) {
				kids[go_on++] = kids[i];
				significant_weight += w;
			}
		}
		if (at != 0 && !dominant && !at_least_pct(significant_weight, node->weight, REPORT_PATH_FOLLOW_PCT))
			go_on = 0;
		if (!go_on) {
			if (at != 0 && emit_path(m, &paths_cap, &chain_cap, at) < 0)
				goto done;
			continue;
		}
		if (ntodo + go_on > todo_cap) {
			size_t *g = array_grow(todo, &todo_cap, ntodo + go_on, sizeof *g);
			if (!g)
				goto done;
			todo = g;
		}
		for (size_t i = go_on; i-- > 0;)
			todo[ntodo++] = kids[i];
	}
	for (size_t i = 0; i < m->ncode_paths; i++)
		choose_headline(m, &m->code_paths[i]);
	if (m->ncode_paths > 1)   /* (qsort's pointer may not be NULL, even for none) */
		qsort(m->code_paths, m->ncode_paths, sizeof *m->code_paths, cmp_code_paths);
	rc = 0;
done:
	sort_model = NULL;
	free(todo);
	free(kids);
	return rc;
}

/* The line each frame of a code path shows: the hottest one among the
 * samples through the path's last node. A node merges every call site of
 * its function under one caller chain; the path's own samples say which
 * of them leads down this path (Tree::insert calls view_for_key at line
 * 47 and binary_search_by at line 49). */
static int path_lines(struct report_model *m, const size_t *entry_leaf)
{
	const struct profile *p = m->profile;
	size_t nslots = 0;    /* one per chain position of every path */
	for (size_t i = 0; i < m->ncode_paths; i++) {
		size_t end = m->code_paths[i].chain_begin + m->code_paths[i].nchain;
		if (end > nslots)
			nslots = end;
	}
	size_t *path_of_end = calloc(m->nnodes, sizeof *path_of_end);   /* path index + 1 */
	const struct line_tally **best = calloc(nslots ? nslots : 1, sizeof *best);
	m->chain_frames = calloc(nslots ? nslots : 1, sizeof *m->chain_frames);
	struct tally_index tx = { 0 };
	int rc = -1;
	if (!path_of_end || !best || !m->chain_frames)
		goto done;
	for (size_t i = 0; i < m->ncode_paths; i++) {
		const struct report_code_path *cp = &m->code_paths[i];
		path_of_end[m->chain_nodes[cp->chain_begin + cp->nchain - 1]] = i + 1;
	}
	for (size_t i = 0; i < p->nentries; i++) {
		const struct profile_entry *en = &p->entries[i];
		size_t at = entry_leaf[i];
		while (at != 0 && !path_of_end[at])
			at = m->nodes[at].parent;
		if (at == 0)
			continue;    /* on no code path */
		const struct report_code_path *cp = &m->code_paths[path_of_end[at] - 1];
		for (size_t pos = 0; pos < cp->nchain; pos++)
			if (tally_add(&tx, cp->chain_begin + pos, &en->stack.frames[en->stack.nframes - 1 - pos],
				      en->weight) < 0)
				goto done;
	}
	for (size_t t = 0; t < tx.n; t++) {
		const struct line_tally *cur = &tx.items[t];
		if (!best[cur->node] || better_line(cur, best[cur->node]))
			best[cur->node] = cur;
	}
	for (size_t slot = 0; slot < nslots; slot++)
		m->chain_frames[slot] = best[slot] ? best[slot]->frame : m->nodes[m->chain_nodes[slot]].frame;
	rc = 0;
done:
	free(path_of_end);
	free((void *)best);
	free(tx.slots);
	free(tx.items);
	return rc;
}

/* Code paths whose headlines read the same (the same user frames at the
 * same lines, entry to deepest) differ only below the headline's depth or
 * in foreign frames between its names: a reader sees one path, so they
 * count as one, at their summed weight (paths never nest: the sum is the
 * samples through either), shown with the heaviest one's chain. Without
 * this, insert's 69% was split over paths #2-#5 and a 9.7% path led. */
static int merge_same_headlines(struct report_model *m)
{
	const size_t n = m->ncode_paths;
	char **keys = calloc(n ? n : 1, sizeof *keys);
	if (!keys)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < m->ncode_paths; i++) {
		size_t len = 0;
		FILE *f = open_memstream(&keys[i], &len);
		if (!f)
			goto done;
		report_put_code_path_names(f, m, &m->code_paths[i]);
		if (fclose(f) != 0)
			goto done;
	}
	size_t kept = 0;
	for (size_t i = 0; i < m->ncode_paths; i++) {
		size_t into = kept;
		for (size_t k = 0; k < kept; k++)
			if (!strcmp(keys[k], keys[i])) {
				into = k;
				break;
			}
		if (into < kept) {
			m->code_paths[into].weight += m->code_paths[i].weight;
			free(keys[i]);
			keys[i] = NULL;
			continue;
		}
		m->code_paths[kept] = m->code_paths[i];
		keys[kept] = keys[i];
		if (kept != i)
			keys[i] = NULL;
		kept++;
	}
	m->ncode_paths = kept;
	sort_model = m;
	if (m->ncode_paths > 1)
		qsort(m->code_paths, m->ncode_paths, sizeof *m->code_paths, cmp_code_paths);
	sort_model = NULL;
	rc = 0;
done:
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

int report_build_code_paths(struct report_model *m)
{
	size_t *entry_leaf = calloc(m->profile->nentries ? m->profile->nentries : 1, sizeof *entry_leaf);
	int rc = -1;
	if (entry_leaf && build_tree(m, entry_leaf) == 0 && infer_paths(m) == 0 &&
	    path_lines(m, entry_leaf) == 0 && merge_same_headlines(m) == 0)
		rc = 0;
	free(entry_leaf);
	return rc;
}
