/* test_array.c — array_grow (src/util/array.h): growth keeps the items,
 * need <= cap leaves everything alone, and a failure (a size that overflows
 * size_t) returns NULL with the array and its capacity untouched.
 * Exit 0 pass, 1 fail. */
#include "util/array.h"

#include <stddef.h>
#include <stdint.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

/* The out-of-memory checks ask for exabytes; under AddressSanitizer that must
 * come back as NULL, as from any malloc, not abort the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

/* The upper bound over a key field: the item before it holds an address. */
static void test_upper_bound(void)
{
	struct range { uint32_t pad; uint64_t lo; } r[] = { { 0, 10 }, { 0, 20 }, { 0, 20 }, { 0, 35 } };
	size_t n = sizeof r / sizeof r[0], off = offsetof(struct range, lo);
	CHECK(array_upper_bound_u64(r, n, sizeof *r, off, 5) == 0);
	CHECK(array_upper_bound_u64(r, n, sizeof *r, off, 10) == 1);
	CHECK(array_upper_bound_u64(r, n, sizeof *r, off, 19) == 1);
	CHECK(array_upper_bound_u64(r, n, sizeof *r, off, 20) == 3);   /* past equal keys */
	CHECK(array_upper_bound_u64(r, n, sizeof *r, off, UINT64_MAX) == 4);
	CHECK(array_upper_bound_u64(NULL, 0, sizeof *r, off, 7) == 0);
}

/* ARRAY_PUSH: appends through the caller's own variables (struct fields
 * too), and a refused growth leaves the array, count and capacity as they
 * were. */
static void test_push(void)
{
	struct { char **names; size_t n, cap; } l = { 0 };
	static char a[] = "a", b[] = "b";
	for (int i = 0; i < 40; i++)
		CHECK(ARRAY_PUSH(l.names, l.n, l.cap, i % 2 ? b : a) == 0);
	CHECK(l.n == 40 && l.cap >= 40);
	CHECK(l.names[0] == a && l.names[39] == b);

	size_t *order = NULL, norder = 0, order_cap = 0;
	for (int i = 0; i < 20; i++)
		CHECK(ARRAY_PUSH(order, norder, order_cap, norder * 10) == 0);
	CHECK(norder == 20 && order[0] == 0 && order[19] == 190);   /* value read n before it grew */
	free(order);

	struct huge { char bytes[SIZE_MAX / 64]; } *h = NULL;
	size_t hn = 0, hcap = 0;
	CHECK(array_reserve(&h, &hcap, 100, sizeof *h) == -1);
	CHECK(h == NULL && hn == 0 && hcap == 0);
	char **kept = l.names;
	size_t kept_cap = l.cap;
	CHECK(array_reserve(&l.names, &l.cap, SIZE_MAX / 2, sizeof *l.names) == -1);
	CHECK(l.names == kept && l.cap == kept_cap && l.n == 40);
	free(l.names);

	/* array_free_pointers: every item and the array (ASan and valgrind
	 * runs of this test see a leak or a bad free), NULL items and a NULL
	 * array included. */
	char **owned = calloc(3, sizeof *owned);
	CHECK(owned != NULL);
	if (owned) {
		owned[0] = strdup("x");
		owned[2] = strdup("z");
	}
	array_free_pointers(owned, 3);
	array_free_pointers(NULL, 5);
}

int main(void)
{
	test_upper_bound();
	test_push();
	/* From nothing: the minimum capacity. */
	size_t cap = 0;
	int *v = array_grow(NULL, &cap, 1, sizeof *v);
	CHECK(v != NULL);
	CHECK(cap >= 1);
	CHECK(cap == ARRAY_MIN_CAP);

	/* Appending one at a time: the items survive each move, capacity
	 * doubles, and there are few reallocations for many items. */
	size_t n = 0, grows = 0;
	for (int i = 0; i < 1000; i++) {
		if (n == cap) {
			size_t old = cap;
			int *g = array_grow(v, &cap, n + 1, sizeof *g);
			CHECK(g != NULL);
			if (!g)
				break;
			CHECK_MSG(cap == 2 * old, "cap %zu after %zu", cap, old);
			v = g;
			grows++;
		}
		v[n++] = i;
	}
	CHECK(n == 1000);
	CHECK(cap >= 1000);
	CHECK_MSG(grows <= 7, "%zu reallocations for 1000 items", grows);
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(v[i] == (int)i, "v[%zu] = %d", i, v[i]);

	/* A jump past double: capacity reaches the need in one call. */
	int *g = array_grow(v, &cap, 5000, sizeof *v);
	CHECK(g != NULL);
	if (g)
		v = g;
	CHECK(cap >= 5000);
	CHECK(v[999] == 999);

	/* need <= cap: same pointer, same capacity, no allocation. */
	size_t before = cap;
	CHECK(array_grow(v, &cap, cap, sizeof *v) == v);
	CHECK(array_grow(v, &cap, 0, sizeof *v) == v);
	CHECK(cap == before);

	/* need * item_size overflows size_t: NULL, v and cap untouched (v is
	 * still ours to use and free). */
	CHECK(array_grow(v, &cap, SIZE_MAX / sizeof *v + 1, sizeof *v) == NULL);
	CHECK(cap == before);
	CHECK(array_grow(v, &cap, SIZE_MAX, 2) == NULL);
	CHECK(cap == before);
	CHECK(v[0] == 0 && v[999] == 999);

	/* Out of memory (need fits in size_t but no allocator can give it):
	 * the same contract. */
	/* A quarter of the address space: valgrind refuses sizes with the top bit
	 * set as fishy, a plain allocator refuses this one as too big. */
	CHECK(array_grow(v, &cap, SIZE_MAX / sizeof *v / 4, sizeof *v) == NULL);
	CHECK(cap == before);
	CHECK(v[500] == 500);

	/* Items so large that the minimum capacity would overflow: the need
	 * alone is asked for (and, being exabytes, refused). */
	size_t big_cap = 0;
	CHECK(array_grow(NULL, &big_cap, 2, SIZE_MAX / 8) == NULL);
	CHECK(big_cap == 0);

	free(v);
	return test_exit_code();
}
