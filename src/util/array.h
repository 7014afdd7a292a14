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
 * Typical use:
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

/* In n items of item_size bytes sorted by the uint64_t at key_offset in
 * each (offsetof of the key field), the position of the first item whose
 * key is > key (n when none): the item that may contain an address is the
 * one before it. */
size_t array_upper_bound_u64(const void *items, size_t n, size_t item_size, size_t key_offset, uint64_t key);

#endif
