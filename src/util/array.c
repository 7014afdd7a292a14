#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>

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
