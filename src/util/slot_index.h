/* slot_index.h — the one hash index over items a caller keeps in its own
 * array (interned strings, profile entries, report functions, recipe maps),
 * so open addressing, probing and growth are written once.
 *
 * The index knows items only by their position in the caller's array and by
 * the hash the caller gave for each; the caller hashes and compares keys
 * itself. Each slot holds an item's position + 1 (0 = empty) and that item's
 * hash: growing rehashes from the stored hashes (no callback), and a probe
 * hands the caller only items whose hash is the one asked for. Linear
 * probing; the table doubles (from SLOT_INDEX_MIN_SLOTS) before it would be
 * more than half full, so a probe always reaches an empty slot. Items are
 * never removed one by one.
 *
 * A zeroed struct slot_index is an empty index. Find, then add if absent:
 *
 *	uint64_t h = key_hash(key);
 *	struct slot_probe probe = slot_index_probe(&ix, h);
 *	for (size_t i; (i = slot_probe_next(&ix, &probe)) != SLOT_INDEX_NONE;)
 *		if (key_eq(&items[i], key))
 *			return &items[i];
 *	... store the new item at items[n] ...
 *	if (slot_index_add(&ix, h, n) < 0)
 *		... out of memory: the index is unchanged, do not count items[n] ...
 *
 * A probe is valid until the next slot_index_add or slot_index_free on the
 * index. Not thread-safe; each index belongs to one owner.
 */
#ifndef XGDBPROF_SLOT_INDEX_H
#define XGDBPROF_SLOT_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define SLOT_INDEX_NONE ((size_t)-1)

enum { SLOT_INDEX_MIN_SLOTS = 16 };

struct slot_index {
	struct slot_index_slot {
		size_t item;     /* position + 1; 0 = empty */
		uint64_t hash;
	} *slots;
	size_t nslots;           /* 0 or a power of two */
	size_t count;            /* items added */
};

/* Where a lookup of one hash stands; from slot_index_probe. */
struct slot_probe {
	uint64_t hash;
	size_t at;
};

/* Starts a lookup of the items added with this hash. */
static inline struct slot_probe slot_index_probe(const struct slot_index *ix, uint64_t hash)
{
	return (struct slot_probe){ hash, ix->nslots ? (size_t)hash & (ix->nslots - 1) : 0 };
}

/* The position of the next item added with the probe's hash, or
 * SLOT_INDEX_NONE when there is none left (and again on every later call). */
static inline size_t slot_probe_next(const struct slot_index *ix, struct slot_probe *probe)
{
	if (!ix->nslots)
		return SLOT_INDEX_NONE;
	for (;;) {
		const struct slot_index_slot *s = &ix->slots[probe->at];
		if (!s->item)
			return SLOT_INDEX_NONE;
		probe->at = (probe->at + 1) & (ix->nslots - 1);
		if (s->hash == probe->hash)
			return s->item - 1;
	}
}

/* Adds the item at position item (< SLOT_INDEX_NONE) with its key's hash,
 * growing the table first if it would pass half full. The caller makes sure
 * the key is not there already (a lookup first). Returns 0, or -1 out of
 * memory with the index unchanged. */
int slot_index_add(struct slot_index *ix, uint64_t hash, size_t item);

/* Frees the table; the index is then empty and can be used again. */
void slot_index_free(struct slot_index *ix);

#endif
