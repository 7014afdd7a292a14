#include "symbols/scope_index.h"
#include "util/array.h"
#include "util/clock.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct scope_index_segment {
	Dwarf_Addr lo, hi;     /* [lo, hi) */
	uint32_t entry;        /* innermost entry owning the segment */
};

struct cu_range {
	Dwarf_Addr lo, hi;
	size_t cu;
};

struct scope_index {
	Dwarf *dw;
	struct scope_index_cu *cus;      /* sorted by CU DIE offset */
	size_t ncus;
	bool cus_loaded;
	struct cu_range *cu_ranges;      /* fallback when .debug_aranges misses */
	size_t ncu_ranges;
	bool cu_ranges_loaded;
	size_t cus_built, entries, segments;
	double build_seconds;
};

struct scope_index *scope_index_new(Dwarf *dw, struct xerr *err)
{
	struct scope_index *ix = calloc(1, sizeof *ix);
	if (!ix) {
		xerr_oom_doing(err, "creating the DWARF index");
		return NULL;
	}
	ix->dw = dw;
	return ix;
}

void scope_index_free(struct scope_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->ncus; i++) {
		free(ix->cus[i].entries);
		free(ix->cus[i].segments);
		free(ix->cus[i].namespaces);
		free(ix->cus[i].user_files);
	}
	free(ix->cus);
	free(ix->cu_ranges);
	free(ix);
}

static int load_cus(struct scope_index *ix, struct xerr *err)
{
	if (ix->cus_loaded)
		return 0;
	size_t cap = 0;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	while (dwarf_get_units(ix->dw, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		struct scope_index_cu *n = array_grow(ix->cus, &cap, ix->ncus + 1, sizeof *n);
		if (!n)
			return xerr_oom_doing(err, "listing compile units");
		ix->cus = n;
		struct scope_index_cu *c = &ix->cus[ix->ncus++];
		memset(c, 0, sizeof *c);
		c->cudie = cudie;
		c->lang = dwarf_srclang(&cudie);
	}
	/* dwarf_get_units walks .debug_info in order, so offsets are sorted. */
	ix->cus_loaded = true;
	return 0;
}

static struct scope_index_cu *cu_by_offset(struct scope_index *ix, Dwarf_Off off)
{
	size_t lo = 0, hi = ix->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Off m = dwarf_dieoffset(&ix->cus[mid].cudie);
		if (m == off)
			return &ix->cus[mid];
		if (m < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int load_cu_ranges(struct scope_index *ix, struct xerr *err)
{
	if (ix->cu_ranges_loaded)
		return 0;
	size_t cap = 0;
	for (size_t i = 0; i < ix->ncus; i++) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&ix->cus[i].cudie, off, &base, &start, &end)) > 0) {
			if (start >= end || start == 0)
				continue;
			struct cu_range *n = array_grow(ix->cu_ranges, &cap, ix->ncu_ranges + 1, sizeof *n);
			if (!n)
				return xerr_oom_doing(err, "indexing compile units");
			ix->cu_ranges = n;
			ix->cu_ranges[ix->ncu_ranges++] = (struct cu_range){start, end, i};
		}
	}
	if (ix->ncu_ranges)
		qsort(ix->cu_ranges, ix->ncu_ranges, sizeof *ix->cu_ranges, cmp_cu_range);
	ix->cu_ranges_loaded = true;
	return 0;
}

static struct scope_index_cu *cu_by_ranges(struct scope_index *ix, Dwarf_Addr addr)
{
	size_t lo = array_upper_bound_u64(ix->cu_ranges, ix->ncu_ranges, sizeof *ix->cu_ranges,
					  offsetof(struct cu_range, lo), addr);
	/* Ranges of different CUs rarely overlap; look back a little in case. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 8; i--, tries++)
		if (addr < ix->cu_ranges[i - 1].hi)
			return &ix->cus[ix->cu_ranges[i - 1].cu];
	return NULL;
}

/* ---- building one CU ---- */

struct flat_range {
	Dwarf_Addr lo, hi;
	uint32_t entry;
	uint32_t depth;
};

struct cu_builder {
	struct scope_index_cu *cu;
	size_t namespaces_cap;
	uint32_t current_namespace; /* innermost namespace the walk is in, or SCOPE_INDEX_NONE */
	size_t entries_cap;
	struct flat_range *ranges;
	size_t nranges, ranges_cap;
	uint32_t *depth;            /* depth of each entry */
	struct scope_index_segment *segs;
	size_t nsegs, segs_cap;
};

/* Types are not descended into: C++ and Rust declare methods there but
 * define them (with code) at namespace level, pointing back with
 * DW_AT_specification. Skipping type subtrees matters: libdw's
 * dwarf_siblingof re-scans the subtree of every DIE we descend into. */
static bool tag_may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

/* The walk records every namespace's span of DIE offsets and its name:
 * rustc puts an impl's functions in a namespace named `{impl#N}` and a
 * trait's provided methods in the trait's own namespace, so the enclosing
 * namespaces are what tell the two apart (scope_index_namespaces). */
static int open_namespace(struct cu_builder *b, Dwarf_Die *die, uint32_t *out)
{
	*out = SCOPE_INDEX_NONE;
	if (dwarf_tag(die) != DW_TAG_namespace)
		return 0;
	struct scope_index_cu *cu = b->cu;
	if (cu->nnamespaces >= UINT32_MAX - 1)
		return 0;
	struct scope_index_namespace *n = array_grow(cu->namespaces, &b->namespaces_cap,
						     cu->nnamespaces + 1, sizeof *n);
	if (!n)
		return -1;
	cu->namespaces = n;
	Dwarf_Off start = dwarf_dieoffset(die);
	/* empty until its end is seen: a span never closed contains nothing */
	cu->namespaces[cu->nnamespaces] = (struct scope_index_namespace){
		.start = start, .end = start, .parent = b->current_namespace, .name = dwarf_diename(die),
	};
	*out = b->current_namespace = (uint32_t)cu->nnamespaces++;
	return 0;
}

/* The namespace ns, whose DIE is die, ends before after (the byte after the
 * null entry closing its children); NULL: the end is not known. */
static void close_namespace(struct cu_builder *b, uint32_t ns, Dwarf_Die *die, const unsigned char *after)
{
	if (ns == SCOPE_INDEX_NONE)
		return;
	struct scope_index_namespace *n = &b->cu->namespaces[ns];
	if (after)
		n->end = dwarf_dieoffset(die) + (Dwarf_Off)(after - (const unsigned char *)die->addr);
	b->current_namespace = n->parent;
}

static int add_entry(struct cu_builder *b, Dwarf_Die *die, uint32_t parent, bool inlined,
		     uint32_t *out)
{
	struct scope_index_cu *cu = b->cu;
	uint32_t idx = (uint32_t)cu->nentries;
	bool any = false;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	uint32_t depth = parent == SCOPE_INDEX_NONE ? 0 : b->depth[parent] + 1;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		/* Functions dropped by --gc-sections keep DIEs based at 0. */
		if (start >= end || start == 0)
			continue;
		struct flat_range *n = array_grow(b->ranges, &b->ranges_cap, b->nranges + 1, sizeof *n);
		if (!n)
			return -1;
		b->ranges = n;
		b->ranges[b->nranges++] = (struct flat_range){start, end, idx, depth};
		any = true;
	}
	if (!any) {
		*out = SCOPE_INDEX_NONE;
		return 0;
	}
	if (cu->nentries == b->entries_cap) {
		/* Two arrays indexed alike: both grow from the same capacity to the
		 * same one, which becomes entries_cap only when both did. */
		size_t entries_cap = b->entries_cap, depth_cap = b->entries_cap;
		struct scope_index_entry *n = array_grow(cu->entries, &entries_cap, cu->nentries + 1, sizeof *n);
		if (n)
			cu->entries = n;
		uint32_t *d = array_grow(b->depth, &depth_cap, cu->nentries + 1, sizeof *d);
		if (d)
			b->depth = d;
		if (!n || !d)
			return -1;
		b->entries_cap = entries_cap;
	}
	cu->entries[idx] = (struct scope_index_entry){
		.die = dwarf_dieoffset(die), .parent = parent, .inlined = inlined,
	};
	b->depth[idx] = depth;
	cu->nentries++;
	*out = idx;
	return 0;
}

/* Returns the address one past the end of the unit holding cudie, or NULL
 * when its header cannot be read. */
static const unsigned char *cu_end(Dwarf *dw, Dwarf_Die *cudie)
{
	Dwarf_Off die_off = dwarf_dieoffset(cudie);
	Dwarf_Off unit_off = die_off - dwarf_cuoffset(cudie);
	Dwarf_Off next_off;
	if (dwarf_nextcu(dw, unit_off, &next_off, NULL, NULL, NULL, NULL) != 0 ||
	    next_off <= die_off)
		return NULL;
	return (const unsigned char *)cudie->addr + (next_off - die_off);
}

struct walk_level {
	Dwarf_Die parent;        /* the DIE whose children are being visited */
	uint32_t enclosing;      /* the parent level's enclosing entry */
	uint32_t ns;             /* the namespace parent is, or SCOPE_INDEX_NONE */
};

/* Visits the DIE tree in one pass, in .debug_info order. dwarf_siblingof
 * alone cannot do that: without DW_AT_sibling (rustc emits none) it skips a
 * DIE's whole subtree to find the next sibling, so calling it on every DIE
 * we also descend into would scan each DIE once per enclosing level. Here
 * dwarf_siblingof is called only on DIEs we do not enter (it skips their
 * subtree once); the next sibling of a DIE we entered is the byte after the
 * null entry that ends its children, whose address libdw (0.188) stores in
 * dwarf_siblingof's result when it reports "no more siblings". The next DIE
 * is then built from that address and the CU, as dwarf_child does
 * (Dwarf_Die's fields are public). Should libdw not give that address, or
 * the unit's end be unknown, the walk falls back to dwarf_siblingof on the
 * parent: slower, same result. */
static int walk_cu(Dwarf *dw, struct cu_builder *b)
{
	const unsigned char *end = cu_end(dw, &b->cu->cudie);
	Dwarf_Die die;
	if (dwarf_child(&b->cu->cudie, &die) != 0)
		return 0;
	size_t n = 0, cap = 32;
	struct walk_level *levels = malloc(cap * sizeof *levels);
	if (!levels)
		return -1;
	uint32_t enclosing = SCOPE_INDEX_NONE;
	for (;;) {
		uint32_t child_enclosing = enclosing;
		bool descend = false;
		int tag = dwarf_tag(&die);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			bool inl = tag == DW_TAG_inlined_subroutine;
			uint32_t idx;
			/* A nested out-of-line function is not its parent's callee. */
			if (add_entry(b, &die, inl ? enclosing : SCOPE_INDEX_NONE, inl, &idx) < 0)
				goto oom;
			descend = idx != SCOPE_INDEX_NONE;
			child_enclosing = idx;
		} else if (tag_may_hold_code(tag)) {
			descend = true;
		}
		Dwarf_Die next;
		if (descend && dwarf_child(&die, &next) == 0) {
			struct walk_level *l = array_grow(levels, &cap, n + 1, sizeof *l);
			if (!l)
				goto oom;
			levels = l;
			uint32_t ns;
			if (open_namespace(b, &die, &ns) < 0)
				goto oom;
			levels[n++] = (struct walk_level){die, enclosing, ns};
			enclosing = child_enclosing;
			die = next;
			continue;
		}
		for (;;) {           /* to the next DIE after die's subtree */
			next.addr = NULL;
			int rc = dwarf_siblingof(&die, &next);
			if (rc == 0) {
				die = next;
				break;
			}
			/* rc -1 (broken DWARF): keep what we have. */
			if (rc < 0 || n == 0)
				goto done;
			const unsigned char *p = next.addr;
			if (!p || !end) {
				n--;
				die = levels[n].parent;
				enclosing = levels[n].enclosing;
				close_namespace(b, levels[n].ns, &die, NULL);
				continue;
			}
			/* p: the null entry ending this level. Leave every level
			 * whose last child this was. */
			for (;;) {
				enclosing = levels[--n].enclosing;
				close_namespace(b, levels[n].ns, &levels[n].parent, p + 1);
				if (++p >= end)
					goto done;
				if (*p != 0)
					break;
				if (n == 0)
					goto done;
			}
			Dwarf_CU *unit = die.cu;
			memset(&die, 0, sizeof die);
			die.addr = (void *)p;
			die.cu = unit;
			break;
		}
	}
done:
	free(levels);
	return 0;
oom:
	free(levels);
	return -1;
}

/* Sort order of the sweep: by start, then outer (longer) first, then
 * shallower first, then entry order. */
static inline bool range_before(const struct flat_range *x, const struct flat_range *y)
{
	if (x->lo != y->lo)
		return x->lo < y->lo;
	if (x->hi != y->hi)
		return x->hi > y->hi;
	if (x->depth != y->depth)
		return x->depth < y->depth;
	return x->entry < y->entry;
}

/* Sorts a[0..n) with tmp (n slots) as scratch: insertion-sorted runs, then
 * bottom-up merges. qsort's indirect comparison calls and byte-wise element
 * moves cost as much as the DIE walk itself here. */
static void sort_ranges(struct flat_range *a, struct flat_range *tmp, size_t n)
{
	enum { RUN = 16 };
	for (size_t lo = 0; lo < n; lo += RUN) {
		size_t hi = lo + RUN < n ? lo + RUN : n;
		for (size_t i = lo + 1; i < hi; i++) {
			struct flat_range v = a[i];
			size_t j = i;
			for (; j > lo && range_before(&v, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
	}
	struct flat_range *src = a, *dst = tmp;
	for (size_t width = RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = range_before(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		struct flat_range *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

static int emit_segment(struct cu_builder *b, Dwarf_Addr lo, Dwarf_Addr hi, uint32_t entry)
{
	if (lo >= hi)
		return 0;
	if (b->nsegs > 0) {
		struct scope_index_segment *last = &b->segs[b->nsegs - 1];
		if (last->entry == entry && last->hi == lo) {
			last->hi = hi;
			return 0;
		}
	}
	struct scope_index_segment *n = array_grow(b->segs, &b->segs_cap, b->nsegs + 1, sizeof *n);
	if (!n)
		return -1;
	b->segs = n;
	b->segs[b->nsegs++] = (struct scope_index_segment){lo, hi, entry};
	return 0;
}

/* Sweeps the ranges (sorted outer-first) with a stack of open ranges and
 * emits disjoint segments owned by the innermost open range. */
static int flatten(struct cu_builder *b)
{
	if (b->nranges == 0)
		return 0;
	struct flat_range *open = malloc(b->nranges * sizeof *open);
	if (!open)
		return -1;
	sort_ranges(b->ranges, open, b->nranges);    /* open: scratch until the sweep */
	size_t nopen = 0;
	Dwarf_Addr cursor = b->ranges[0].lo;
	for (size_t i = 0; i < b->nranges; i++) {
		const struct flat_range *r = &b->ranges[i];
		while (nopen > 0 && open[nopen - 1].hi <= r->lo) {
			const struct flat_range *t = &open[--nopen];
			if (emit_segment(b, cursor, t->hi, t->entry) < 0)
				goto oom;
			if (t->hi > cursor)
				cursor = t->hi;
		}
		if (nopen > 0 && emit_segment(b, cursor, r->lo, open[nopen - 1].entry) < 0)
			goto oom;
		if (r->lo > cursor)
			cursor = r->lo;
		open[nopen++] = *r;
	}
	while (nopen > 0) {
		const struct flat_range *t = &open[--nopen];
		if (emit_segment(b, cursor, t->hi, t->entry) < 0)
			goto oom;
		if (t->hi > cursor)
			cursor = t->hi;
	}
	free(open);
	return 0;
oom:
	free(open);
	return -1;
}

static int build_cu(struct scope_index *ix, struct scope_index_cu *cu, struct xerr *err)
{
	uint64_t t0 = monotonic_ns();
	struct cu_builder b = {.cu = cu, .current_namespace = SCOPE_INDEX_NONE};
	int rc = walk_cu(ix->dw, &b);
	if (rc == 0)
		rc = flatten(&b);
	free(b.ranges);
	free(b.depth);
	if (rc < 0) {
		free(b.segs);
		free(cu->entries);
		cu->entries = NULL;
		cu->nentries = 0;
		free(cu->namespaces);
		cu->namespaces = NULL;
		cu->nnamespaces = 0;
		return xerr_oom_doing(err, "indexing a compile unit");
	}
	if (b.nsegs < b.segs_cap) {
		struct scope_index_segment *s = realloc(b.segs, (b.nsegs ? b.nsegs : 1) * sizeof *s);
		if (s)
			b.segs = s;
	}
	cu->segments = b.segs;
	cu->nsegments = b.nsegs;
	cu->built = true;
	ix->build_seconds += (double)(monotonic_ns() - t0) / 1e9;
	ix->cus_built++;
	ix->entries += cu->nentries;
	ix->segments += cu->nsegments;
	return 0;
}

static uint32_t segment_lookup(const struct scope_index_cu *cu, Dwarf_Addr addr)
{
	size_t lo = array_upper_bound_u64(cu->segments, cu->nsegments, sizeof *cu->segments,
					  offsetof(struct scope_index_segment, lo), addr);
	if (lo > 0 && addr < cu->segments[lo - 1].hi)
		return cu->segments[lo - 1].entry;
	return SCOPE_INDEX_NONE;
}

int scope_index_lookup(struct scope_index *ix, Dwarf_Addr addr,
		       struct scope_index_cu **cup, uint32_t *leaf, struct xerr *err)
{
	if (load_cus(ix, err) < 0)
		return -1;
	struct scope_index_cu *cu = NULL;
	Dwarf_Die die;
	if (dwarf_addrdie(ix->dw, addr, &die) != NULL)
		cu = cu_by_offset(ix, dwarf_dieoffset(&die));
	if (!cu) {
		if (load_cu_ranges(ix, err) < 0)
			return -1;
		cu = cu_by_ranges(ix, addr);
	}
	if (!cu)
		return 0;
	if (!cu->built && build_cu(ix, cu, err) < 0)
		return -1;
	*cup = cu;
	*leaf = segment_lookup(cu, addr);
	return 1;
}

size_t scope_index_die_namespaces(struct scope_index *ix, Dwarf_Die *die, const char **names,
				  size_t max, struct xerr *err)
{
	Dwarf_Die unit;
	if (load_cus(ix, err) < 0 || !dwarf_diecu(die, &unit, NULL, NULL))
		return 0;
	struct scope_index_cu *cu = cu_by_offset(ix, dwarf_dieoffset(&unit));
	if (!cu || (!cu->built && build_cu(ix, cu, err) < 0))
		return 0;
	return scope_index_namespaces(cu, dwarf_dieoffset(die), names, max);
}

size_t scope_index_namespaces(const struct scope_index_cu *cu, Dwarf_Off die,
			      const char **names, size_t max)
{
	size_t lo = 0, hi = cu->nnamespaces;
	while (lo < hi) {          /* first namespace starting after die */
		size_t mid = lo + (hi - lo) / 2;
		if (cu->namespaces[mid].start <= die)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Spans nest: the last one starting at or before die contains it, or
	 * one of its ancestors does. */
	uint32_t ns = lo > 0 ? (uint32_t)(lo - 1) : SCOPE_INDEX_NONE;
	while (ns != SCOPE_INDEX_NONE && die >= cu->namespaces[ns].end)
		ns = cu->namespaces[ns].parent;
	size_t n = 0;
	for (; ns != SCOPE_INDEX_NONE && n < max; ns = cu->namespaces[ns].parent)
		names[n++] = cu->namespaces[ns].name;
	return n;
}

int scope_index_cu_lines(struct scope_index_cu *cu)
{
	if (!cu->lines_loaded) {
		cu->lines_loaded = true;
		if (dwarf_getsrclines(&cu->cudie, &cu->lines, &cu->nlines) != 0) {
			cu->lines = NULL;
			cu->nlines = 0;
		}
	}
	return 0;
}

Dwarf_Line *scope_index_line(struct scope_index_cu *cu, Dwarf_Addr addr)
{
	scope_index_cu_lines(cu);
	if (!cu->lines)
		return NULL;
	/* libdw sorts rows by address (end_sequence rows first at equal
	 * addresses); take the last row at or below addr. */
	size_t lo = 0, hi = cu->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a;
		dwarf_lineaddr(dwarf_onesrcline(cu->lines, mid), &a);
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	Dwarf_Line *line = dwarf_onesrcline(cu->lines, lo - 1);
	bool end = false;
	dwarf_lineendsequence(line, &end);
	return end ? NULL : line;
}

const char *scope_index_file(struct scope_index_cu *cu, Dwarf_Word idx)
{
	if (!cu->files_loaded) {
		cu->files_loaded = true;
		if (dwarf_getsrcfiles(&cu->cudie, &cu->files, &cu->nfiles) != 0) {
			cu->files = NULL;
			cu->nfiles = 0;
		}
	}
	if (!cu->files || idx >= cu->nfiles)
		return NULL;
	return dwarf_filesrc(cu->files, idx, NULL, NULL);
}

const char *scope_index_cu_comp_dir(struct scope_index_cu *cu)
{
	Dwarf_Attribute a;
	if (!dwarf_attr(&cu->cudie, DW_AT_comp_dir, &a))
		return NULL;
	return dwarf_formstring(&a);
}

int scope_index_foreach_cu(struct scope_index *ix,
			   int (*fn)(struct scope_index_cu *cu, void *arg), void *arg)
{
	if (load_cus(ix, NULL) < 0)
		return -1;
	for (size_t i = 0; i < ix->ncus; i++) {
		int rc = fn(&ix->cus[i], arg);
		if (rc)
			return rc;
	}
	return 0;
}

void scope_index_get_stats(const struct scope_index *ix, struct scope_index_stats *out)
{
	out->cus = ix->ncus;
	out->cus_built = ix->cus_built;
	out->entries = ix->entries;
	out->segments = ix->segments;
	out->build_seconds = ix->build_seconds;
}
