#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t array_upper_bound_u64(const void *items, size_t n, size_t item_size, size_t key_offset, uint64_t key)
{
	const unsigned char *base = items;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;
		memcpy(&at, base + mid * item_size + key_offset, sizeof at);
		if (at <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void *array_grow(void *items, size_t *cap, size_t need, size_t item_size)
{
	if (need <= *cap)
		return items;
	size_t max_items = SIZE_MAX / item_size;
	if (need > max_items)
		return NULL;
	size_t c = *cap < ARRAY_MIN_CAP ? ARRAY_MIN_CAP : *cap;
	while (c < need)
		c = c > max_items / 2 ? need : c * 2;
	if (c > max_items)
		c = need;
	void *grown = realloc(items, c * item_size);
	if (!grown)
		return NULL;
	*cap = c;
	return grown;
}

int array_reserve(void *items_var, size_t *cap, size_t need, size_t item_size)
{
	/* items_var points at some `T *`: read and write it as bytes, which is
	 * defined for any object pointer type, rather than through a void **. */
	void *items;
	memcpy(&items, items_var, sizeof items);
	if (need == 0 || (need <= *cap && items))
		return 0;
	void *grown = array_grow(items, cap, need, item_size);
	if (!grown)
		return -1;
	memcpy(items_var, &grown, sizeof grown);
	return 0;
}

void array_free_pointers(void *items, size_t n)
{
	const unsigned char *bytes = items;
	for (size_t i = 0; items && i < n; i++) {
		/* each item is some `T *`: copied out as bytes, not read through a void * lvalue */
		void *item;
		memcpy(&item, bytes + i * sizeof item, sizeof item);
		free(item);
	}
	free(items);
}
