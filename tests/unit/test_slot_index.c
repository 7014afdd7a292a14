/* test_slot_index.c — the hash index (src/util/slot_index.h): an empty index
 * finds nothing; every item added is found again through growth, colliding
 * hashes and probes that wrap past the last slot; a probe hands back only
 * items of its hash, each once, then SLOT_INDEX_NONE for good; the table
 * stays a power of two at most half full; a refused add leaves the index
 * unchanged; a freed index is empty and usable.
 * Exit 0 pass, 1 fail. */
#include "util/slot_index.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

/* The caller's side: keys in an array, looked up through the index. */
struct table {
	uint64_t keys[5000];
	size_t n;
	struct slot_index ix;
};

/* Hashes chosen to collide: many keys share a hash, and hashes that differ
 * only above the mask land on the same home slot. */
static uint64_t weak_hash(uint64_t key)
{
	return (key % 7) << 40 | (key % 3);
}

static size_t find(const struct table *t, uint64_t key, uint64_t hash)
{
	struct slot_probe probe = slot_index_probe(&t->ix, hash);
	for (size_t i; (i = slot_probe_next(&t->ix, &probe)) != SLOT_INDEX_NONE;)
		if (t->keys[i] == key)
			return i;
	return SLOT_INDEX_NONE;
}

static bool add(struct table *t, uint64_t key, uint64_t hash)
{
	t->keys[t->n] = key;
	if (slot_index_add(&t->ix, hash, t->n) < 0)
		return false;
	t->n++;
	return true;
}

static bool is_power_of_two(size_t n)
{
	return n && !(n & (n - 1));
}

int main(void)
{
	static struct table t;

	/* Zeroed: empty, every probe ends at once, and keeps ending. */
	struct slot_probe probe = slot_index_probe(&t.ix, 42);
	CHECK(slot_probe_next(&t.ix, &probe) == SLOT_INDEX_NONE);
	CHECK(slot_probe_next(&t.ix, &probe) == SLOT_INDEX_NONE);
	CHECK(find(&t, 1, weak_hash(1)) == SLOT_INDEX_NONE);

	/* The first add makes the smallest table. */
	CHECK(add(&t, 1000, weak_hash(1000)));
	CHECK(t.ix.nslots == SLOT_INDEX_MIN_SLOTS);
	CHECK(t.ix.count == 1);
	CHECK(find(&t, 1000, weak_hash(1000)) == 0);

	/* Many keys on few hashes: all found at their positions after each
	 * growth, the table a power of two at most half full. */
	size_t grows = 0, nslots = t.ix.nslots;
	for (uint64_t key = 0; key < 4000; key++) {
		if (key == 1000)
			continue;
		CHECK_MSG(find(&t, key, weak_hash(key)) == SLOT_INDEX_NONE, "key %llu before add",
			  (unsigned long long)key);
		CHECK(add(&t, key, weak_hash(key)));
		if (t.ix.nslots != nslots) {
			grows++;
			nslots = t.ix.nslots;
			for (size_t i = 0; i < t.n; i++)
				CHECK_MSG(find(&t, t.keys[i], weak_hash(t.keys[i])) == i,
					  "key %llu lost growing to %zu slots", (unsigned long long)t.keys[i],
					  nslots);
		}
		CHECK(is_power_of_two(t.ix.nslots));
		CHECK(t.ix.count * 2 <= t.ix.nslots);
	}
	CHECK(t.n == 4000);
	CHECK(t.ix.count == 4000);
	CHECK_MSG(t.ix.nslots == 8192, "%zu slots for 4000 items", t.ix.nslots);
	CHECK(grows == 9);
	for (size_t i = 0; i < t.n; i++)
		CHECK_MSG(find(&t, t.keys[i], weak_hash(t.keys[i])) == i, "key %llu",
			  (unsigned long long)t.keys[i]);
	CHECK(find(&t, 4000, weak_hash(4000)) == SLOT_INDEX_NONE);

	/* A probe yields exactly the items of its hash, each once. */
	uint64_t h = weak_hash(5);
	size_t expected = 0, seen = 0;
	for (size_t i = 0; i < t.n; i++)
		expected += weak_hash(t.keys[i]) == h;
	bool *met = calloc(t.n, sizeof *met);
	CHECK(met != NULL);
	probe = slot_index_probe(&t.ix, h);
	for (size_t i; met && (i = slot_probe_next(&t.ix, &probe)) != SLOT_INDEX_NONE; seen++) {
		CHECK_MSG(i < t.n && weak_hash(t.keys[i]) == h, "item %zu of another hash", i);
		CHECK_MSG(i < t.n && !met[i], "item %zu twice", i);
		if (i < t.n)
			met[i] = true;
	}
	free(met);
	CHECK_MSG(seen == expected, "%zu items of the hash, %zu expected", seen, expected);
	CHECK(slot_probe_next(&t.ix, &probe) == SLOT_INDEX_NONE);

	/* A hash whose home is the last slot: its run wraps to slot 0. */
	uint64_t last = t.ix.nslots - 1;
	size_t before = t.n;
	for (uint64_t key = 10000; key < 10004; key++)
		CHECK(add(&t, key, last));
	for (size_t i = before; i < t.n; i++)
		CHECK(find(&t, t.keys[i], last) == i);

	/* A position that cannot be stored: refused, nothing changes. */
	size_t count = t.ix.count;
	nslots = t.ix.nslots;
	CHECK(slot_index_add(&t.ix, 7, SLOT_INDEX_NONE) < 0);
	CHECK(t.ix.count == count && t.ix.nslots == nslots);
	CHECK(find(&t, t.keys[4], weak_hash(t.keys[4])) == 4);

	/* Freed: empty, and usable again from the smallest table. */
	slot_index_free(&t.ix);
	CHECK(t.ix.nslots == 0 && t.ix.count == 0 && t.ix.slots == NULL);
	CHECK(find(&t, 1000, weak_hash(1000)) == SLOT_INDEX_NONE);
	t.n = 0;
	CHECK(add(&t, 77, 77));
	CHECK(t.ix.nslots == SLOT_INDEX_MIN_SLOTS);
	CHECK(find(&t, 77, 77) == 0);
	slot_index_free(&t.ix);
	slot_index_free(&t.ix);
	return test_exit_code();
}
