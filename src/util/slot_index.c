/* slot_index.c — growth and insertion of the hash index (slot_index.h). */
#include "util/slot_index.h"

#include <stdlib.h>

/* The first empty slot on hash's probe sequence (there is one: the table is
 * at most half full). */
static struct slot_index_slot *empty_slot(struct slot_index_slot *slots, size_t nslots, uint64_t hash)
{
	size_t at = (size_t)hash & (nslots - 1);
	while (slots[at].item)
		at = (at + 1) & (nslots - 1);
	return &slots[at];
}

static int grow(struct slot_index *ix)
{
	if (ix->nslots > SIZE_MAX / 2)
		return -1;
	size_t nslots = ix->nslots ? ix->nslots * 2 : SLOT_INDEX_MIN_SLOTS;
	struct slot_index_slot *slots = calloc(nslots, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < ix->nslots; i++)
		if (ix->slots[i].item)
			*empty_slot(slots, nslots, ix->slots[i].hash) = ix->slots[i];
	free(ix->slots);
	ix->slots = slots;
	ix->nslots = nslots;
	return 0;
}

int slot_index_add(struct slot_index *ix, uint64_t hash, size_t item)
{
	if (item >= SLOT_INDEX_NONE || ix->count >= SIZE_MAX / 2)
		return -1;
	if ((ix->count + 1) * 2 > ix->nslots && grow(ix) < 0)
		return -1;
	*empty_slot(ix->slots, ix->nslots, hash) = (struct slot_index_slot){ item + 1, hash };
	ix->count++;
	return 0;
}

void slot_index_free(struct slot_index *ix)
{
	free(ix->slots);
	*ix = (struct slot_index){ 0 };
}
