/* test_glibc_heap.c — the heap census (procfs/glibc_heap.h) on this
 * process's own thread arena, as a stop inside malloc can leave it: a
 * thread cutting a chunk off the top has written some of the three words
 * (the arena's top pointer, the cut chunk's size, the new top's size) and
 * not the others. The census must still count the arena's chunks there
 * (before, a heap so caught was not counted at all: 6 of 200 stops of the
 * demo service early in its life), and a chain broken anywhere else must
 * still fail. Needs glibc's malloc: under ASan or valgrind it skips.
 * Exit 0 pass, 1 fail, 77 skip. */
#include "procfs/glibc_heap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define BLOCKS 64
#define BLOCK_BYTES 1000
#define THREAD_HEAP_MAX (64ull << 20)
#define MALLOC_STATE_TOP 96u   /* as glibc_heap.c: offsetof (struct malloc_state, top) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stage;   /* 1: the thread's blocks are made; 2: the test is done with them */
static void *blocks[BLOCKS];

/* Makes its arena's blocks, then holds still (no malloc in its arena)
 * while the main thread reads and rewrites the arena's words. */
static void *arena_thread(void *unused)
{
	(void)unused;
	for (int i = 0; i < BLOCKS; i++)
		blocks[i] = malloc(BLOCK_BYTES);
	pthread_mutex_lock(&lock);
	stage = 1;
	pthread_cond_broadcast(&changed);
	while (stage < 2)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
	return NULL;
}

/* The census of the class of blocks[BLOCKS - 1], from a fresh handle (each
 * heap is walked once per handle). */
static int64_t census_now(void)
{
	struct xerr e = { "" };
	struct glibc_heap *h = glibc_heap_open(getpid(), &e);
	if (!h)
		return -2;
	int64_t n = glibc_heap_in_use_chunks(h, glibc_heap_chunk_class(h, (uint64_t)(uintptr_t)blocks[BLOCKS - 1]));
	glibc_heap_close(h);
	return n;
}

static bool under_a_checker(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#else
	const char *preload = getenv("LD_PRELOAD");
	return preload && strstr(preload, "vgpreload");
#endif
}

int main(void)
{
	if (under_a_checker()) {
		printf("SKIP: malloc is ASan's or valgrind's here, not glibc's: no arena to walk\n");
		return TEST_SKIP;
	}
	pthread_t thread;
	if (pthread_create(&thread, NULL, arena_thread, NULL) != 0)
		return TEST_SKIP;
	pthread_mutex_lock(&lock);
	while (stage < 1)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);

	uint64_t last = (uint64_t)(uintptr_t)blocks[BLOCKS - 1];
	volatile uint64_t *last_size = (volatile uint64_t *)(uintptr_t)(last - 8);
	uint64_t base = last & ~(THREAD_HEAP_MAX - 1);
	uint64_t arena = *(volatile uint64_t *)(uintptr_t)base;   /* heap_info's ar_ptr */
	uint64_t top = (last - 16) + (*last_size & ~(uint64_t)7);
	if (!(*last_size & 4) || *(volatile uint64_t *)(uintptr_t)(arena + MALLOC_STATE_TOP) != top) {
		printf("SKIP: the blocks are not a glibc thread arena's, cut off its top\n");
		pthread_mutex_lock(&lock);
		stage = 2;
		pthread_cond_broadcast(&changed);
		pthread_mutex_unlock(&lock);
		pthread_join(thread, NULL);
		return TEST_SKIP;
	}
	volatile uint64_t *top_size = (volatile uint64_t *)(uintptr_t)(top + 8);
	uint64_t top_word = *top_size;

	int64_t whole = census_now();
	CHECK_MSG(whole >= BLOCKS, "the census of the arena's %d blocks: %lld", BLOCKS, (long long)whole);

	/* the top pointer moved, the cut chunk's size written, the new top's
	 * not yet (the fresh top reads 0): the walk ends at the top pointer;
	 * the last block is then unknown (its in-use bit is the new top's) */
	*top_size = 0;
	int64_t cut = census_now();
	*top_size = top_word;
	CHECK_MSG(cut == whole || cut == whole - 1, "top being cut (the new top's size unwritten): %lld for %lld",
		  (long long)cut, (long long)whole);

	/* the cut chunk's size written at the old top, the pointer and the new
	 * top's size not: the chain goes one chunk past the top pointer */
	uint64_t cut_bytes = 0x430;
	if ((top_word & ~(uint64_t)7) > cut_bytes + 64 &&
	    *(volatile uint64_t *)(uintptr_t)(top + cut_bytes + 8) == 0) {
		*top_size = cut_bytes | 1;
		int64_t ahead = census_now();
		*top_size = top_word;
		CHECK_MSG(ahead == whole || ahead == whole - 1, "top being cut (its pointer not yet moved): %lld for %lld",
			  (long long)ahead, (long long)whole);
	}

	/* a chain broken in the middle (a block's size word gone) is no census */
	volatile uint64_t *middle = (volatile uint64_t *)(uintptr_t)((uint64_t)(uintptr_t)blocks[BLOCKS / 2] - 8);
	uint64_t middle_word = *middle;
	*middle = 0;
	int64_t broken = census_now();
	*middle = middle_word;
	CHECK_MSG(broken == -1, "a chain broken mid-heap gave %lld, not -1", (long long)broken);

	CHECK_MSG(census_now() == whole, "the arena restored: %lld", (long long)census_now());
	pthread_mutex_lock(&lock);
	stage = 2;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
	return test_exit_code();
}
