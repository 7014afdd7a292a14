/* check.h — the assertions every unit test shares.
 *
 * A failed check prints file:line and what failed, counts the failure and
 * goes on, so one run reports every broken expectation; main returns
 * test_exit_code(). CHECK_MSG adds a printf-style explanation. A test that
 * cannot run here (no root, a tool missing) returns TEST_SKIP, which
 * automake reports as SKIP with the reason printed before it.
 */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#define TEST_SKIP 77

static int test_failures;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                             \
		}                                                                    \
	} while (0)

#define CHECK_MSG(cond, ...)                                                         \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);    \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
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
