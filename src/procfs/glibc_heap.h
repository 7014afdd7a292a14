/* glibc_heap.h — is an allocation glibc's malloc returned still allocated?
 * Read from the allocator's own chunk headers through /proc/PID/mem,
 * without ptrace and without calling into the target (docs/alloc.md).
 *
 * glibc (2.32 and later, x86-64) keeps a size word before each chunk
 * (ptr - 8; low bits: PREV_INUSE 1, IS_MMAPPED 2, NON_MAIN_ARENA 4) and
 * marks a chunk in use in the PREV_INUSE bit of the *next* chunk's size
 * word. A chunk freed into a thread's tcache or a fastbin keeps that bit
 * set: the tcache of the thread that made the main heap (its first chunk)
 * is walked, and a chunk in another thread's tcache is told by the key
 * glibc writes into every tcache entry (read from the walked entries).
 * Fastbins live in main_arena, which is not located: an in-use-looking
 * chunk of fastbin size (<= 128 bytes with its header) is unknown, and so
 * is a tcache-sized one when the key could not be learnt and the process
 * has several threads. An address freed and then returned again by a later
 * allocation of the same size looks allocated: the caller resolves reuse
 * among the allocations it recorded; one made unseen is not told apart.
 *
 * The snapshot should be taken with the target stopped: the headers are
 * read one chunk at a time.
 */
#ifndef XGDBPROF_GLIBC_HEAP_H
#define XGDBPROF_GLIBC_HEAP_H

#include "util/error.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum heap_state {
	HEAP_LIVE,          /* still allocated */
	HEAP_FREED,         /* freed: in a free bin, a tcache, unmapped, or its header is another chunk's */
	HEAP_UNKNOWN,       /* cannot be told (see above); never counted as either */
};

struct glibc_heap;

/* Opens the process's memory and learns its main heap and tcache. Returns
 * NULL with the reason in e when the process is gone or unreadable. A heap
 * that is not glibc's (another allocator, no [heap] mapping) opens fine
 * and answers HEAP_UNKNOWN for everything; glibc_heap_why says why. */
struct glibc_heap *glibc_heap_open(pid_t pid, struct xerr *e);
void glibc_heap_close(struct glibc_heap *h);

/* The state of the allocation of `size` bytes malloc returned at ptr. */
enum heap_state glibc_heap_test(struct glibc_heap *h, uint64_t ptr, int64_t size);

/* The size class of an allocation, for a census: its chunk size and the
 * heap it lies in: the main heap's chunks are their size, a thread arena's
 * are the base of its 64 MiB-aligned heap plus the size. -1 for an
 * mmapped chunk, or one outside the main heap without the NON_MAIN_ARENA
 * bit. Reads the chunk's size word; call for allocations found live. */
int64_t glibc_heap_chunk_class(struct glibc_heap *h, uint64_t ptr);

/* How many chunks of a class (glibc_heap_chunk_class) look allocated in its
 * heap now: the heap's chunks walked from the first to the top one, each
 * counted when the next chunk's PREV_INUSE bit is set. A chunk in a tcache
 * or a fastbin looks allocated too, so this bounds the allocated ones from
 * above. Each heap is walked once, at its first call (read in 64 KiB
 * blocks, the main heap up to 256 MiB, a thread heap up to its 64 MiB; the
 * target held stopped meanwhile); -1 when it could not be (no glibc heap,
 * a size word that does not chain to the top, an older heap of a thread
 * arena that grew past 64 MiB). */
int64_t glibc_heap_in_use_chunks(struct glibc_heap *h, int64_t chunk_class);

/* NULL, or why nothing can be known (e.g. "no glibc heap found"): a static
 * string, valid after glibc_heap_close. */
const char *glibc_heap_why(const struct glibc_heap *h);

#endif
