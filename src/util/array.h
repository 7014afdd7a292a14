/* array.h — the one way a growable array gets room for more items, so the
 * doubling, the size overflow check and the out-of-memory path are written
 * once (the idea of git's ALLOC_GROW).
 *
 * Contract of array_grow(items, &cap, need, item_size):
 *  - need <= *cap: returns items unchanged (no allocation). So with need 0
 *    and nothing allocated yet it returns NULL, which reads as a failure:
 *    ask only for need > 0, or guard the call with need > *cap.
 *  - otherwise reallocates items to a capacity >= need, doubling *cap from a
 *    minimum of ARRAY_MIN_CAP items, stores it in *cap and returns the
 *    (possibly moved) array; the first old *cap items are kept, the rest is
 *    uninitialised.
 *  - on failure (out of memory, or need * item_size not fitting in size_t)
 *    returns NULL with items still valid and *cap untouched: the caller
 *    reports its own error and still owns and frees items.
 *  - item_size must be nonzero.
 *
 * Typical use (a push is ARRAY_PUSH below):
 *	if (n == cap) {
 *		struct foo *g = array_grow(v, &cap, n + 1, sizeof *g);
 *		if (!g)
 *			return xerr_oom(...);
 *		v = g;
 *	}
 */
#ifndef XGDBPROF_ARRAY_H
#define XGDBPROF_ARRAY_H

#include <stddef.h>
#include <stdint.h>

enum { ARRAY_MIN_CAP = 16 };

void *array_grow(void *items, size_t *cap, size_t need, size_t item_size);

/* array_reserve(&items, &cap, need, item_size): array_grow on the caller's
 * pointer variable itself (items_var is the address of a `T *`), so a push
 * needs no temporary. Returns 0 with room for need items (need 0: always,
 * allocating nothing), or -1 (out of memory) with the array and *cap
 * untouched. */
int array_reserve(void *items_var, size_t *cap, size_t need, size_t item_size);

/* ARRAY_PUSH(items, n, cap, value): appends value to a growable array whose
 * pointer, count and capacity are the lvalues items, n and cap; evaluates to
 * 0, or to -1 when out of memory (nothing appended, n unchanged, the array
 * still owned by the caller). value is evaluated before n grows, so it may
 * read n (the new item's index). Each argument is evaluated more than once:
 * pass plain variables or fields, no side effects. */
#define ARRAY_PUSH(items, n, cap, value)                                            \
	(array_reserve(&(items), &(cap), (n) + 1, sizeof *(items)) < 0 ? -1         \
	 : ((items)[(n)] = (value), (n)++, 0))

/* Frees the n pointers an array of pointers holds (each from malloc, or
 * NULL), then the array itself; items may be NULL (then n is ignored).
 * For arrays of owned strings and other single-allocation items. */
void array_free_pointers(void *items, size_t n);

/* In n items of item_size bytes sorted by the uint64_t at key_offset in
 * each (offsetof of the key field), the position of the first item whose
 * key is > key (n when none): the item that may contain an address is the
 * one before it. */
size_t array_upper_bound_u64(const void *items, size_t n, size_t item_size, size_t key_offset, uint64_t key);

#endif
