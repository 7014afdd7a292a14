/* test_mi.h — tiny assertion helpers shared by the mi/ unit tests.
 * A failed CHECK prints file:line and the expression, counts the failure and
 * continues, so one run reports every broken expectation; main returns
 * test_exit_code(). */
#ifndef TEST_MI_H
#define TEST_MI_H

#include <stdio.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                             \
		}                                                                    \
	} while (0)

#define CHECK_STR(actual, expected)                                                  \
	do {                                                                         \
		const char *a_ = (actual), *e_ = (expected);                         \
		if (!a_ || strcmp(a_, e_) != 0) {                                    \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #actual, a_ ? a_ : "(null)", e_);          \
			test_failures++;                                             \
		}                                                                    \
	} while (0)

static inline int test_exit_code(void)
{
	if (test_failures)
		fprintf(stderr, "%d check(s) failed\n", test_failures);
	return test_failures ? 1 : 0;
}

#endif
