/* test_text_escape.c — the escaping contract of text_escape.h, byte by byte:
 * what the terminal, XML and JSON forms make of controls, C1, DEL, and
 * every kind of invalid UTF-8 (overlong, surrogate, too large, truncated). */
#include "util/text_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"


static char *render(const char *s, int form)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (form < 0)
		text_put_json_document(f, s);
	else
		text_put(f, s, (enum text_form)form);
	fclose(f);
	return buf;
}

static void expect(const char *in, int form, const char *want)
{
	char *got = render(in, form);
	if (strcmp(got, want) != 0) {
		test_failures++;
		fprintf(stderr, "FAIL form %d: got \"%s\", want \"%s\"\n", form, got, want);
	}
	free(got);
}

#define T TEXT_FORM_TERMINAL
#define X TEXT_FORM_XML
#define J TEXT_FORM_JSON
#define DOC (-1)

int main(void)
{
	/* terminal: C0 (own \n, \t too), DEL, C1 bytes, invalid bytes as \xNN */
	expect("a\x1b[2Jb", T, "a\\x1b[2Jb");
	expect("\x1b]52;c;aGk=\x07", T, "\\x1b]52;c;aGk=\\x07");
	expect("l1\nl2\tx\r", T, "l1\\x0al2\\x09x\\x0d");
	expect("del\x7f c1\xc2\x9b", T, "del\\x7f c1\\xc2\\x9b");
	expect("bad\xff\xfe", T, "bad\\xff\\xfe");
	expect("\xc0\xaf", T, "\\xc0\\xaf");                       /* overlong '/' */
	expect("\xed\xa0\x80", T, "\\xed\\xa0\\x80");              /* surrogate */
	expect("\xf4\x90\x80\x80", T, "\\xf4\\x90\\x80\\x80");     /* > U+10FFFF */
	expect("\xe2\x86", T, "\\xe2\\x86");                       /* truncated */
	expect("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\xa6\x80 \xc2\xa0", T,
	       "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\xa6\x80 \xc2\xa0");  /* valid text untouched */
	expect("back\\slash \"q\" <&>", T, "back\\slash \"q\" <&>");
	expect(NULL, T, "");

	/* XML: terminal form plus entities */
	expect("<a href='x'>&\x1b\xff", X, "&lt;a href=&apos;x&apos;&gt;&amp;\\x1b\\xff");

	/* JSON string: exact code points back, invalid bytes as \xNN text */
	expect("q\"b\\\n\t\r\x1b\x7f\xc2\x9b\xff\xc3\xa9", J,
	       "q\\\"b\\\\\\n\\t\\r\\u001b\\u007f\\u009b\\\\xff\xc3\xa9");

	/* a JSON document from a library: only bytes >= 0x7f inside strings */
	expect("{\n\t\"n\":\t\"a\\u001b\x7f\xc2\x9b\xff\"\n}", DOC,
	       "{\n\t\"n\":\t\"a\\u001b\\u007f\\u009b\\\\xff\"\n}");

	/* buffer form: snprintf-like length, cuts between whole escapes */
	char buf[8];
	size_t n = text_escape(buf, sizeof buf, "ab\x1b\x1b");
	if (n != 10 || strcmp(buf, "ab\\x1b")) {
		test_failures++;
		fprintf(stderr, "FAIL text_escape: %zu \"%s\"\n", n, buf);
	}
	n = text_escape(buf, sizeof buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	if (n != 8 || strcmp(buf, "\xc3\xa9\xc3\xa9\xc3\xa9")) {
		test_failures++;
		fprintf(stderr, "FAIL text_escape utf-8 cut: %zu \"%s\"\n", n, buf);
	}
	char *dup = text_escape_dup("x\ny");
	if (!dup || strcmp(dup, "x\\x0ay")) {
		test_failures++;
		fprintf(stderr, "FAIL text_escape_dup: %s\n", dup ? dup : "(null)");
	}
	free(dup);
	return test_exit_code();
}
