/* hash.h — FNV-1a, the one byte hash the maps, profiles and reports share.
 *
 * Deterministic across runs and machines (reports colour frames by it), not
 * for hostile input. Chain calls: h = hash_fnv1a(h, p, n), starting from
 * HASH_FNV1A_SEED.
 */
#ifndef XGDBPROF_HASH_H
#define XGDBPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV1A_SEED 14695981039346656037ULL

static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

#endif
