/* glibc_heap.c — allocation liveness from glibc's chunk headers (see glibc_heap.h). */
#include "procfs/glibc_heap.h"
#include "util/compare.h"
#include "procfs/proc.h"
#include "util/array.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE_BITS 7u
#define PREV_INUSE 1u
#define IS_MMAPPED 2u
#define NON_MAIN_ARENA 4u
#define MIN_CHUNK 32u
#define FASTBIN_MAX_CHUNK 0x80u      /* global_max_fast's default on 64-bit */
#define TCACHE_BINS 64
#define TCACHE_MAX_CHUNK 0x410u      /* the largest chunk the 64 tcache bins take */
#define TCACHE_STRUCT_CHUNK 0x290u   /* sizeof (tcache_perthread_struct) as a chunk, glibc >= 2.30 */

/* A thread arena's heap: a mapping of up to HEAP_MAX_SIZE (64 MiB on
 * 64-bit glibc) aligned to it, starting with a heap_info whose first words
 * are the arena, the previous heap and the heap's size (its top chunk ends
 * there); the arena's first heap holds its malloc_state next. */
#define THREAD_HEAP_MAX (64ull << 20)
#define MALLOC_STATE_BYTES 2200u     /* sizeof (struct malloc_state), glibc 2.26 to 2.40, 64-bit */
#define MALLOC_STATE_TOP 96u         /* offsetof (struct malloc_state, top), the same */

/* One heap's census: the sizes of its chunks that look allocated, sorted;
 * state 1 walked, -1 failed. */
struct heap_census {
	uint64_t base;                /* 0: the main heap */
	uint64_t *in_use;
	size_t nin_use, in_use_cap;
	int state;
};

struct glibc_heap {
	int fd;
	const char *why;
	uint64_t *tcached;            /* user pointers in the walked tcache, sorted */
	size_t ntcached, tcached_cap;
	uint64_t key;                 /* the tcache key, when an entry showed it */
	bool key_known;
	int threads;
	pid_t pid;
	/* the census (glibc_heap_in_use_chunks): the main heap's range, and
	 * each heap walked so far (the main heap's first) */
	uint64_t heap_lo, heap_hi;
	struct heap_census *heaps;
	size_t nheaps, heaps_cap;
};

static bool read_at(const struct glibc_heap *h, uint64_t addr, void *buf, size_t len, bool *unmapped)
{
	ssize_t n = pread(h->fd, buf, len, (off_t)addr);
	if (unmapped)
		*unmapped = n < 0 && errno == EIO;
	return n == (ssize_t)len;
}

static bool read_word(const struct glibc_heap *h, uint64_t addr, uint64_t *w)
{
	return read_at(h, addr, w, sizeof *w, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	return compare_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* The [heap] mapping's range (glibc's main arena), both 0 if none. */
static void main_heap_range(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	char path[64], line[512];
	*lo = *hi = 0;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "[heap]")) {
			char *dash;
			*lo = strtoull(line, &dash, 16);
			*hi = *dash == '-' ? strtoull(dash + 1, NULL, 16) : 0;
			break;
		}
	fclose(f);
}

static int push_tcached(struct glibc_heap *h, uint64_t p)
{
	return ARRAY_PUSH(h->tcached, h->ntcached, h->tcached_cap, p);
}

/* The main heap's first chunk is the tcache of the thread that made it:
 * uint16_t counts[64], then 64 list heads (user pointers). Each entry's
 * next pointer is safe-linked ((its own address >> 12) ^ next) and its
 * second word is the tcache key. */
static void walk_main_tcache(struct glibc_heap *h, uint64_t heap)
{
	uint64_t size_word = 0, tcache = 0;
	for (uint64_t off = 0; off <= 64; off += 16)
		if (read_word(h, heap + off + 8, &size_word) && (size_word & ~(uint64_t)SIZE_BITS) == TCACHE_STRUCT_CHUNK) {
			tcache = heap + off + 16;
			break;
		}
	if (!tcache) {
		h->why = "the main heap does not start with glibc's tcache (not glibc 2.30+, or another allocator)";
		return;
	}
	struct {
		uint16_t counts[TCACHE_BINS];
		uint64_t entries[TCACHE_BINS];
	} t;
	if (!read_at(h, tcache, &t, sizeof t, NULL)) {
		h->why = "the tcache could not be read";
		return;
	}
	for (int bin = 0; bin < TCACHE_BINS; bin++) {
		uint64_t e = t.entries[bin];
		for (unsigned k = 0; e && k < t.counts[bin] && k < 4096; k++) {
			uint64_t words[2];
			if ((e & 15) || !read_at(h, e, words, sizeof words, NULL) || push_tcached(h, e) < 0)
				break;
			if (!h->key_known) {
				h->key = words[1];
				h->key_known = true;
			}
			e = (e >> 12) ^ words[0];
		}
	}
	if (h->ntcached)   /* an empty tcache (nothing freed yet) has no array */
		qsort(h->tcached, h->ntcached, sizeof *h->tcached, cmp_u64);
}

struct glibc_heap *glibc_heap_open(pid_t pid, struct xerr *e)
{
	struct glibc_heap *h = calloc(1, sizeof *h);
	if (!h) {
		xerr_oom(e);
		return NULL;
	}
	h->fd = proc_open_mem(pid, O_RDONLY);
	if (h->fd < 0) {
		xerr_set(e, "cannot open /proc/%d/mem: %s", (int)pid, strerror(errno));
		free(h);
		return NULL;
	}
	struct proc_thread *threads = NULL;
	struct xerr ignored;
	int n = proc_threads(pid, &threads, &ignored);
	free(threads);
	h->threads = n > 0 ? n : 1;
	h->pid = pid;
	uint64_t heap, heap_end;
	main_heap_range(pid, &heap, &heap_end);
	if (!heap)
		h->why = "the process has no [heap] mapping (no glibc main arena)";
	else
		walk_main_tcache(h, heap);
	return h;
}

void glibc_heap_close(struct glibc_heap *h)
{
	if (!h)
		return;
	close(h->fd);
	free(h->tcached);
	for (size_t i = 0; i < h->nheaps; i++)
		free(h->heaps[i].in_use);
	free(h->heaps);
	free(h);
}

const char *glibc_heap_why(const struct glibc_heap *h)
{
	return h->why;
}

/* request2size: what glibc makes of a request of n bytes. */
static uint64_t chunk_for(int64_t n)
{
	uint64_t c = ((uint64_t)(n > 0 ? n : 0) + 8 + 15) & ~(uint64_t)15;
	return c < MIN_CHUNK ? MIN_CHUNK : c;
}

enum heap_state glibc_heap_test(struct glibc_heap *h, uint64_t ptr, int64_t size)
{
	if (h->why || (ptr & 15) || ptr < 16)
		return HEAP_UNKNOWN;
	if (h->ntcached && bsearch(&ptr, h->tcached, h->ntcached, sizeof *h->tcached, cmp_u64))
		return HEAP_FREED;
	uint64_t header[2];
	bool unmapped;
	if (!read_at(h, ptr - 16, header, sizeof header, &unmapped))
		/* an mmapped chunk is unmapped by free() */
		return unmapped ? HEAP_FREED : HEAP_UNKNOWN;
	uint64_t chunk = header[1] & ~(uint64_t)SIZE_BITS, want = chunk_for(size);
	if (header[1] & IS_MMAPPED)
		/* a chunk of its own mapping: page-rounded, with its header */
		return chunk >= want && chunk < want + 2 * 4096 ? HEAP_LIVE : HEAP_FREED;
	/* A chunk is split off a larger one only when the rest is a chunk of
	 * its own: an allocated chunk is at most MIN_CHUNK - 16 bytes larger
	 * than asked (memalign's alignment aside). Any other size word is no
	 * longer this allocation's header. */
	if (chunk < want || chunk >= want + MIN_CHUNK)
		return HEAP_FREED;
	uint64_t next_size;
	if (!read_word(h, ptr - 16 + chunk + 8, &next_size))
		return HEAP_UNKNOWN;
	if (!(next_size & PREV_INUSE))
		return HEAP_FREED;
	uint64_t key;
	if (h->key_known && read_word(h, ptr + 8, &key) && key == h->key && chunk <= TCACHE_MAX_CHUNK)
		return HEAP_FREED;   /* in another thread's tcache */
	if (chunk <= FASTBIN_MAX_CHUNK)
		return HEAP_UNKNOWN;   /* allocated, or in a fastbin: main_arena is not located */
	if (!h->key_known && h->threads > 1 && chunk <= TCACHE_MAX_CHUNK)
		return HEAP_UNKNOWN;   /* allocated, or in another thread's tcache */
	return HEAP_LIVE;
}

#define CENSUS_BLOCK 65536u
#define CENSUS_MAX_HEAP (256ull << 20)

/* A word of the heap through a block cache: the chunks are walked in
 * address order, so one pread serves the thousands of headers a block holds. */
struct census_reader {
	const struct glibc_heap *h;
	unsigned char buf[CENSUS_BLOCK];
	uint64_t at, len, end;
};

static bool census_word(struct census_reader *r, uint64_t addr, uint64_t *w)
{
	if (addr < r->at || addr + 8 > r->at + r->len) {
		uint64_t want = r->end - addr < CENSUS_BLOCK ? r->end - addr : CENSUS_BLOCK;
		ssize_t n = pread(r->h->fd, r->buf, want, (off_t)addr);
		if (n < 8)
			return false;
		r->at = addr;
		r->len = (uint64_t)n;
	}
	memcpy(w, r->buf + (addr - r->at), sizeof *w);
	return true;
}

/* Walks the chunks from first to the top chunk, which ends at end (exactly,
 * when exact_end: a thread heap's top ends at its heap_info's size), and
 * pushes the size of each that looks allocated. top: the arena's top chunk
 * as its malloc_state says (0: unknown). 0, or -1 when the words are not a
 * chain of chunks from first (c->in_use then holds garbage).
 *
 * A thread stopped inside malloc while it cuts a chunk off the top has
 * moved the arena's top pointer and written the new chunk's size, but not
 * yet the new top's (glibc writes the three words in turn; the compiler may
 * order them either way): the chain breaks there, at the top pointer or
 * just after it. That break ends the walk as the top would (seen in 1 of
 * ~150 stops of the demo, one heap of two busy ones; the whole heap's
 * census was lost before). Any other break still fails. */
static int walk_chunks(struct census_reader *r, uint64_t first, uint64_t end, bool exact_end, uint64_t top,
		       struct heap_census *c)
{
	uint64_t p = first, previous = 0, w;
	c->nin_use = 0;
	for (;;) {
		if (!census_word(r, p + 8, &w))
			return -1;
		uint64_t size = w & ~(uint64_t)SIZE_BITS;
		if (size < MIN_CHUNK || (size & 15) || size > end - p)
			/* not a chain of chunks: nothing can be counted, but
			 * at the top being cut (above) */
			return top && (p == top || previous == top) ? 0 : -1;
		uint64_t next = p + size;
		if (next == end || (!exact_end && next + 16 > end))
			return 0;    /* p is the top chunk */
		if (next + 16 > end)
			return -1;
		if (!census_word(r, next + 8, &w))
			return -1;
		if ((w & PREV_INUSE) && ARRAY_PUSH(c->in_use, c->nin_use, c->in_use_cap, size) < 0)
			return -1;
		previous = p;
		p = next;
	}
}

static int census_main(struct glibc_heap *h, struct census_reader *r, struct heap_census *c)
{
	main_heap_range(h->pid, &h->heap_lo, &h->heap_hi);
	if (h->why || !h->heap_lo || h->heap_hi <= h->heap_lo || h->heap_hi - h->heap_lo > CENSUS_MAX_HEAP)
		return -1;
	r->end = h->heap_hi;
	/* the first chunk: the tcache's, where walk_main_tcache found it */
	uint64_t w;
	for (uint64_t off = 0; off <= 64; off += 16)
		if (census_word(r, h->heap_lo + off + 8, &w) && (w & ~(uint64_t)SIZE_BITS) == TCACHE_STRUCT_CHUNK)
			return walk_chunks(r, h->heap_lo + off, h->heap_hi, false, 0, c);
	return -1;
}

/* A thread arena's heap at base. Its chunks start after the heap_info (and,
 * in the arena's first heap, after the malloc_state that follows it): the
 * start is the 16-aligned place near there from which the chunks chain to
 * the heap's end exactly. An older heap of an arena that grew past 64 MiB
 * ends in fenceposts and fails (its chunks are then not counted). */
static int census_thread_heap(struct glibc_heap *h, struct census_reader *r, struct heap_census *c)
{
	uint64_t info[3];   /* ar_ptr, prev, size */
	if (!read_at(h, c->base, info, sizeof info, NULL) || info[2] < 4096 || info[2] > THREAD_HEAP_MAX)
		return -1;
	uint64_t end = c->base + info[2], expected, top = 0;
	r->end = end;
	if (info[0] > c->base && info[0] < c->base + 4096)
		expected = (info[0] + MALLOC_STATE_BYTES + 15) & ~(uint64_t)15;
	else
		expected = (c->base + 40 + 15) & ~(uint64_t)15;   /* heap_info: 5 words and padding */
	/* the arena's top chunk, when it lies in this heap (the arena's
	 * latest): malloc_state's mutex, flags and have_fastchunks (3 ints,
	 * padded), its 10 fastbins, then top (glibc 2.26 to 2.40, 64-bit) */
	if (!read_at(h, info[0] + MALLOC_STATE_TOP, &top, sizeof top, NULL) || top <= c->base || top >= end ||
	    (top & 15))
		top = 0;
	/* where glibc puts it, then nearby (another version's struct sizes) */
	for (int step = 0; step <= 16; step++) {
		int64_t off = (step % 2 ? 1 : -1) * (int64_t)((step + 1) / 2) * 16;
		uint64_t first = expected + (uint64_t)off;
		if (first > c->base + 16 && first < end && walk_chunks(r, first, end, true, top, c) == 0)
			return 0;
	}
	return -1;
}

/* The census of the heap at base (0: the main heap), walked at the first
 * call; NULL when it could not be. */
static const struct heap_census *heap_census(struct glibc_heap *h, uint64_t base)
{
	for (size_t i = 0; i < h->nheaps; i++)
		if (h->heaps[i].base == base)
			return h->heaps[i].state > 0 ? &h->heaps[i] : NULL;
	struct heap_census fresh = { .base = base };
	if (ARRAY_PUSH(h->heaps, h->nheaps, h->heaps_cap, fresh) < 0)
		return NULL;
	struct heap_census *c = &h->heaps[h->nheaps - 1];
	struct census_reader *r = calloc(1, sizeof *r);
	c->state = -1;
	if (r) {
		r->h = h;
		int rc = base ? census_thread_heap(h, r, c) : census_main(h, r, c);
		free(r);
		c->state = rc == 0 ? 1 : -1;
	}
	if (c->state < 0) {
		free(c->in_use);
		c->in_use = NULL;
		c->nin_use = c->in_use_cap = 0;
		return NULL;
	}
	if (c->nin_use)
		qsort(c->in_use, c->nin_use, sizeof *c->in_use, cmp_u64);
	return c;
}

int64_t glibc_heap_in_use_chunks(struct glibc_heap *h, int64_t chunk_class)
{
	if (chunk_class <= 0)
		return -1;
	uint64_t base = (uint64_t)chunk_class & ~(THREAD_HEAP_MAX - 1), chunk = (uint64_t)chunk_class & (THREAD_HEAP_MAX - 1);
	const struct heap_census *c = heap_census(h, base);
	if (!c || !chunk)
		return -1;
	/* the first and one past the last entry equal to chunk */
	size_t lo = 0, hi = c->nin_use;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->in_use[mid] < chunk)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t first = lo;
	hi = c->nin_use;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->in_use[mid] <= chunk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)(lo - first);
}

int64_t glibc_heap_chunk_class(struct glibc_heap *h, uint64_t ptr)
{
	if (h->why || ptr < 16 || (ptr & 15))
		return -1;
	uint64_t w;
	if (!read_word(h, ptr - 8, &w) || (w & IS_MMAPPED))
		return -1;
	uint64_t chunk = w & ~(uint64_t)SIZE_BITS;
	if (chunk < MIN_CHUNK || chunk >= THREAD_HEAP_MAX)
		return -1;
	if (!(w & NON_MAIN_ARENA)) {
		if (!heap_census(h, 0) || ptr < h->heap_lo + 16 || ptr >= h->heap_hi)
			return -1;
		return (int64_t)chunk;
	}
	/* a thread arena's chunk: its heap is the 64 MiB-aligned mapping around it */
	return (int64_t)((ptr & ~(THREAD_HEAP_MAX - 1)) | chunk);
}
