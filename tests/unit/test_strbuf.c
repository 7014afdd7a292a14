/* test_strbuf.c — strbuf (src/util/strbuf.h): appends keep the text
 * NUL-terminated across growth, an empty buffer finishes as "", and after a
 * failure every append is refused and finish gives NULL.
 * Exit 0 pass, 1 fail. */
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_appends(void)
{
	struct strbuf b = { 0 };
	CHECK(strbuf_adds(&b, "ab") == 0);
	CHECK(strbuf_addc(&b, 'c') == 0);
	CHECK(strbuf_add(&b, "dexx", 2) == 0);
	CHECK(b.len == 5 && strcmp(b.s, "abcde") == 0);
	for (int i = 0; i < 1000; i++)   /* several doublings */
		CHECK(strbuf_addc(&b, (char)('a' + i % 26)) == 0);
	CHECK(b.len == 1005 && strlen(b.s) == 1005 && b.s[1004] == 'a' + 999 % 26);
	char *s = strbuf_finish(&b);
	CHECK(s == b.s);
	free(s);
}

static void test_empty(void)
{
	struct strbuf b = { 0 };
	char *s = strbuf_finish(&b);
	CHECK(s && s[0] == '\0');
	strbuf_release(&b);   /* the buffer still holds what finish returned */
}

static void test_failure_sticks(void)
{
	struct strbuf b = { 0 };
	CHECK(strbuf_adds(&b, "x") == 0);
	CHECK(strbuf_add(&b, "y", SIZE_MAX - 1) == -1);   /* cannot fit in size_t */
	CHECK(b.failed && b.len == 1 && strcmp(b.s, "x") == 0);
	CHECK(strbuf_addc(&b, 'z') == -1 && b.len == 1);
	CHECK(strbuf_finish(&b) == NULL && b.s == NULL);
}

int main(void)
{
	test_appends();
	test_empty();
	test_failure_sticks();
	return test_exit_code();
}
