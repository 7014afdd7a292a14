/* test_mi_quote.c — mi_quote_arg: exact forms, round trips through our
 * c-string decoder, and round trips through a real gdb.
 *
 * The live part stores each string with `-inferior-tty-set ARG` and reads it
 * back with `-inferior-tty-show` (gdb keeps argv[0] verbatim), and echoes it
 * through `-interpreter-exec console "echo ..."`, so what is checked is what
 * gdb's own argument parser decoded.
 */
#include <stdlib.h>
#include <string.h>

#include "mi_conn.h"
#include "mi_quote.h"
#include "check.h"

static const char *const tricky[] = {
	"plain",
	"with space",
	"quote\"d",
	"back\\slash\\",
	"new\nline\r\n",
	"tab\there",
	"caf\xc3\xa9 \xe2\x82\xac \xff",
	"-leading-dash",
	"--",
	"\001ctrl\177 and octal-looking \0011 digits",
	"trailing space ",
	" leading space",
	"*0x401000",
	"$rip + 8",
	"{}[](),;=#'`~!@%^&|<>?",
	"\\\"\\n literal backslash-n",
};

static void test_forms(void)
{
	struct { const char *in, *out; } cases[] = {
		{"abc", "abc"},
		{"--thread", "--thread"},
		{"42", "42"},
		{"/usr/lib/x.so", "/usr/lib/x.so"},
		{"file.c:12", "file.c:12"},
		{"", "\"\""},
		{"a b", "\"a b\""},
		{"a\"b", "\"a\\\"b\""},
		{"a\\b", "\"a\\\\b\""},
		{"a\nb\tc", "\"a\\nb\\tc\""},
		{"\x01" "1", "\"\\0011\""},
		{"\xc3\xa9", "\"\\303\\251\""},
		{"\x1b", "\"\\033\""},
		{"*main", "\"*main\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *q = mi_quote_arg(cases[i].in);
		CHECK_STR(q, cases[i].out);
		free(q);
	}
}

static void test_decoder_round_trip(void)
{
	for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		char *q = mi_quote_arg(tricky[i]);
		/* One physical line, and blanks only inside quotes. */
		CHECK(q && !strchr(q, '\n') && !strchr(q, '\r'));
		CHECK(q && (q[0] == '"' || !strchr(q, ' ')));
		if (q && q[0] == '"') {
			char *text = NULL;
			size_t len = 0, consumed = 0;
			struct mi_error err;
			CHECK(mi_parse_cstring(q, strlen(q), &text, &len, &consumed, &err) == 0);
			CHECK(consumed == strlen(q));
			CHECK(len == strlen(tricky[i]) && memcmp(text, tricky[i], len) == 0);
			free(text);
		} else if (q) {
			CHECK_STR(q, tricky[i]);
		}
		free(q);
	}
}

/* An echo argument that only ASCII letters/digits reach raw: gdb's echo
 * interprets backslash escapes and trims blanks, octal sidesteps both. */
static char *echo_argument(const char *text)
{
	char *out = malloc(strlen(text) * 4 + 6);
	char *w = out + sprintf(out, "echo ");
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			*w++ = (char)*p;
		else
			w += sprintf(w, "\\%03o", *p);
	}
	*w = '\0';
	return out;
}

static void test_live(void)
{
	struct mi_error err;
	struct mi_conn *c = mi_conn_spawn(NULL, &err);
	if (!c) {
		fprintf(stderr, "cannot start gdb: %s\n", err.message);
		test_failures++;
		return;
	}
	for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		struct mi_record *r = NULL;
		CHECK(mi_conn_call(c, 5000, NULL, &err, "-inferior-tty-set", tricky[i], NULL) == 0);
		CHECK(mi_conn_call(c, 5000, &r, &err, "-inferior-tty-show", NULL) == 0);
		const char *got = r ? mi_value_get_string(r->results, "inferior_tty_terminal") : NULL;
		if (!got || strcmp(got, tricky[i]) != 0) {
			fprintf(stderr, "tty round trip of case %zu: got \"%s\"\n", i, got ? got : "(null)");
			test_failures++;
		}
		mi_record_free(r);

		char *command = echo_argument(tricky[i]);
		char *output = NULL;
		CHECK(mi_conn_console(c, 5000, &output, &err, command) == 0);
		if (!output || strcmp(output, tricky[i]) != 0) {
			fprintf(stderr, "echo round trip of case %zu: got \"%s\"\n", i,
				output ? output : err.message);
			test_failures++;
		}
		free(output);
		free(command);
	}
	CHECK(mi_conn_close(c, 5000) == 0);
}

int main(void)
{
	test_forms();
	test_decoder_round_trip();
	test_live();
	return test_exit_code();
}
