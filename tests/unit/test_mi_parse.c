/* test_mi_parse.c — the MI parser against gdb 13 transcripts and edge cases.
 *
 * Transcripts (tests/transcripts/gdb13-*.mi, recorded from this machine's gdb
 * by `make mi-transcripts`) are read from $TOP_SRCDIR. Every line must parse,
 * except the one line where the launched program's output ran into gdb's
 * record; specific decoded values are then checked record by record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi_record.h"
#include "check.h"

struct transcript {
	struct mi_record **records; /* NULL entries for lines that did not parse */
	char **lines;
	size_t count;
};

static void transcript_load(struct transcript *t, const char *name)
{
	const char *top = getenv("TOP_SRCDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/transcripts/%s", top ? top : ".", name);
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s: %s (is TOP_SRCDIR set?)\n", path, strerror(errno));
		exit(1);
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		t->records = realloc(t->records, (t->count + 1) * sizeof *t->records);
		t->lines = realloc(t->lines, (t->count + 1) * sizeof *t->lines);
		struct mi_error err;
		if (mi_parse_line(line, (size_t)n, &t->records[t->count], &err) < 0)
			t->records[t->count] = NULL;
		t->lines[t->count] = strdup(line);
		t->count++;
	}
	free(line);
	fclose(f);
}

static void transcript_free(struct transcript *t)
{
	for (size_t i = 0; i < t->count; i++) {
		mi_record_free(t->records[i]);
		free(t->lines[i]);
	}
	free(t->records);
	free(t->lines);
}

/* The nth record (0-based) of this kind and class (class NULL = any). */
static const struct mi_record *find(const struct transcript *t, enum mi_record_kind kind,
				    const char *klass, int nth)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct mi_record *r = t->records[i];
		if (r && r->kind == kind && (!klass || (r->klass && strcmp(r->klass, klass) == 0)) &&
		    nth-- == 0)
			return r;
	}
	return NULL;
}

static const struct mi_record *find_token(const struct transcript *t, long long token)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->records[i] && t->records[i]->kind == MI_RECORD_RESULT &&
		    t->records[i]->token == token)
			return t->records[i];
	return NULL;
}

/* Formatting a record's results and parsing them back must be lossless. */
static void check_round_trip(const struct mi_record *r)
{
	if (!r->results)
		return;
	char *text = mi_value_format(r->results);
	CHECK(text != NULL);
	if (!text)
		return;
	/* Wrap as a notify record: "=x," + tuple body without braces. */
	size_t n = strlen(text);
	char *line = malloc(n + 8);
	snprintf(line, n + 8, "=x%s%.*s", n > 2 ? "," : "", (int)(n > 2 ? n - 2 : 0), text + 1);
	struct mi_record *again;
	struct mi_error err;
	CHECK(mi_parse_line(line, strlen(line), &again, &err) == 0);
	if (again) {
		char *text2 = mi_value_format(again->results);
		CHECK_STR(text2, text);
		free(text2);
		mi_record_free(again);
	}
	free(line);
	free(text);
}

static void test_run_transcript(void)
{
	struct transcript t;
	transcript_load(&t, "gdb13-run.mi");
	CHECK(t.count > 80);
	size_t unparsed = 0, prompts = 0;
	for (size_t i = 0; i < t.count; i++) {
		if (!t.records[i]) {
			unparsed++;
			/* Only the program's own output may break a line; gdb's record follows it. */
			static const char prefix[] = "target says hello";
			CHECK(strncmp(t.lines[i], prefix, sizeof prefix - 1) == 0);
			struct mi_record *tail;
			struct mi_error err;
			const char *rest = t.lines[i] + sizeof prefix - 1;
			CHECK(mi_parse_line(rest, strlen(rest), &tail, &err) == 0);
			if (tail) {
				CHECK(tail->kind == MI_RECORD_NOTIFY);
				CHECK_STR(tail->klass, "thread-created");
				CHECK_STR(mi_value_get_string(tail->results, "id"), "2");
				mi_record_free(tail);
			}
			continue;
		}
		prompts += t.records[i]->kind == MI_RECORD_PROMPT;
		check_round_trip(t.records[i]);
	}
	CHECK(unparsed == 1);
	CHECK(prompts > 10);

	/* -stack-list-frames: a list of results all named "frame". */
	const struct mi_record *r = find_token(&t, 10);
	CHECK(r && strcmp(r->klass, "done") == 0);
	const struct mi_value *stack = r ? mi_value_get(r->results, "stack") : NULL;
	CHECK(stack && mi_value_kind(stack) == MI_VALUE_LIST);
	CHECK(mi_value_count(stack) == 5);
	CHECK_STR(mi_value_name_at(stack, 0), "frame");
	const struct mi_value *frame0 = mi_value_at(stack, 0);
	CHECK_STR(mi_value_get_string(frame0, "func"), "leaf_function");
	CHECK_STR(mi_value_get_string(frame0, "file"), "/work/main/tests/fixtures/mi_target.c");
	long long line = 0, level = -1, addr = 0;
	CHECK(mi_value_get_int(frame0, "line", &line) == 0 && line == 20);
	CHECK(mi_value_get_int(frame0, "level", &level) == 0 && level == 0);
	CHECK(mi_value_get_int(frame0, "addr", &addr) == 0 && addr == 0x5555555551b8LL);
	CHECK(mi_value_get_int(frame0, "func", &addr) == -1);
	CHECK(mi_value_get_int(frame0, "absent", &addr) == -1);
	CHECK_STR(mi_value_get_string(mi_value_get(stack, "frame"), "func"), "leaf_function");
	CHECK_STR(mi_value_get_string(mi_value_at(stack, 1), "func"), "middle_function");
	CHECK(mi_value_get_int(mi_value_at(stack, 1), "line", &line) == 0 && line == 26);
	CHECK_STR(mi_value_get_string(mi_value_at(stack, 2), "func"), "worker");
	CHECK_STR(mi_value_get_string(mi_value_at(stack, 4), "func"), "clone3");
	CHECK(mi_value_at(stack, 5) == NULL);

	/* -thread-info: a list of plain tuples. */
	r = find_token(&t, 11);
	const struct mi_value *threads = r ? mi_value_get(r->results, "threads") : NULL;
	CHECK(mi_value_count(threads) == 3);
	CHECK(mi_value_name_at(threads, 0) == NULL);
	CHECK_STR(mi_value_get_string(mi_value_at(threads, 0), "id"), "1");
	CHECK_STR(mi_value_get_string(mi_value_at(threads, 2), "id"), "3");
	CHECK_STR(mi_value_get_string(mi_value_at(threads, 1), "state"), "stopped");
	CHECK_STR(mi_value_get_string(mi_value_at(threads, 1), "target-id"),
		  "Thread 0x7ffff7dce6c0 (LWP 10330)");
	CHECK_STR(r ? mi_value_get_string(r->results, "current-thread-id") : NULL, "2");
	const struct mi_value *args =
		mi_value_get(mi_value_get(mi_value_at(threads, 1), "frame"), "args");
	CHECK(mi_value_count(args) == 2);
	CHECK_STR(mi_value_get_string(mi_value_at(args, 0), "value"), "11");
	/* Thread 3 was caught in clone3: an empty argument list. */
	const struct mi_value *frame3 = mi_value_get(mi_value_at(threads, 2), "frame");
	CHECK_STR(mi_value_get_string(frame3, "func"), "clone3");
	args = mi_value_get(frame3, "args");
	CHECK(args && mi_value_kind(args) == MI_VALUE_LIST && mi_value_count(args) == 0);

	/* A breakpoint stop with nested frame/args. */
	r = find(&t, MI_RECORD_EXEC, "stopped", 0);
	CHECK(r && r->token == -1);
	CHECK_STR(r ? mi_value_get_string(r->results, "reason") : NULL, "breakpoint-hit");
	CHECK_STR(r ? mi_value_get_string(r->results, "thread-id") : NULL, "2");
	const struct mi_value *label =
		mi_value_at(mi_value_get(mi_value_get(r ? r->results : NULL, "frame"), "args"), 1);
	CHECK_STR(mi_value_get_string(label, "name"), "label");
	/* gdb's C rendering, MI-escaped: octal \303\251 became raw UTF-8 bytes. */
	CHECK_STR(mi_value_get_string(label, "value"),
		  "0x555555556010 \"tab\\there \\\"quoted\\\" back\\\\slash\\nnewline \\001 \xc3\xa9\"");

	/* Errors, with and without a code. */
	r = find_token(&t, 7);
	CHECK(r && r->kind == MI_RECORD_RESULT);
	CHECK_STR(r ? r->klass : NULL, "error");
	CHECK_STR(r ? mi_value_get_string(r->results, "msg") : NULL,
		  "Function \"nosuch_function_anywhere\" not defined.");
	r = find_token(&t, 19);
	CHECK_STR(r ? mi_value_get_string(r->results, "code") : NULL, "undefined-command");

	/* Registers: a list of tuples with hex values. */
	r = find_token(&t, 16);
	const struct mi_value *regs = r ? mi_value_get(r->results, "register-values") : NULL;
	CHECK(mi_value_count(regs) == 4);
	long long number = -1, value = 0;
	CHECK(mi_value_get_int(mi_value_at(regs, 3), "number", &number) == 0 && number == 16);
	CHECK(mi_value_get_int(mi_value_at(regs, 3), "value", &value) == 0 && value == 0x5555555551b8LL);

	/* -list-features: a list of strings. */
	r = find_token(&t, 4);
	const struct mi_value *features = r ? mi_value_get(r->results, "features") : NULL;
	CHECK(mi_value_count(features) >= 5);
	CHECK(mi_value_kind(mi_value_at(features, 0)) == MI_VALUE_STRING);
	CHECK_STR(mi_value_string(mi_value_at(features, 1)), "pending-breakpoints");

	/* The echo'd console text decodes every escape gdb used. */
	int found_echo = 0;
	for (size_t i = 0; i < t.count; i++) {
		const struct mi_record *c = t.records[i];
		if (c && c->kind == MI_RECORD_CONSOLE && c->text_len == 8 &&
		    memcmp(c->text, "a\tb\\c\"d\n", 8) == 0)
			found_echo = 1;
	}
	CHECK(found_echo);

	/* Thread and library notifications, and the exit. */
	CHECK(find(&t, MI_RECORD_NOTIFY, "thread-exited", 2) != NULL);
	r = find(&t, MI_RECORD_NOTIFY, "library-loaded", 2);
	CHECK_STR(r ? mi_value_get_string(r->results, "id") : NULL, "/lib/x86_64-linux-gnu/libm.so.6");
	const struct mi_value *ranges = r ? mi_value_get(r->results, "ranges") : NULL;
	CHECK(mi_value_count(ranges) == 1 && mi_value_get_string(mi_value_at(ranges, 0), "from"));
	CHECK(find(&t, MI_RECORD_NOTIFY, "library-unloaded", 0) != NULL);
	CHECK(find(&t, MI_RECORD_EXEC, "running", 0) != NULL);
	r = find(&t, MI_RECORD_EXEC, "stopped", 1);
	long long code = -1;
	CHECK(r && mi_value_get_int(r->results, "exit-code", &code) == 0 && code == 3);
	r = find(&t, MI_RECORD_RESULT, "running", 0);
	CHECK(r && r->token == 9 && mi_value_count(r->results) == 0);

	/* -break-list: a table with a list of tuples and a list of results. */
	r = find_token(&t, 8);
	const struct mi_value *table = r ? mi_value_get(r->results, "BreakpointTable") : NULL;
	CHECK(mi_value_kind(mi_value_get(table, "hdr")) == MI_VALUE_LIST);
	const struct mi_value *body = mi_value_get(table, "body");
	CHECK(mi_value_count(body) == 1);
	CHECK_STR(mi_value_name_at(body, 0), "bkpt");
	CHECK_STR(mi_value_string(mi_value_at(mi_value_get(mi_value_at(body, 0), "thread-groups"), 0)),
		  "i1");
	transcript_free(&t);
}

static void test_attach_transcript(void)
{
	struct transcript t;
	transcript_load(&t, "gdb13-attach.mi");
	CHECK(t.count > 40);
	for (size_t i = 0; i < t.count; i++) {
		if (!t.records[i])
			fprintf(stderr, "unparsed line %zu: %.80s\n", i + 1, t.lines[i]);
		CHECK(t.records[i] != NULL);
	}
	const struct mi_record *r = find(&t, MI_RECORD_EXEC, "stopped", 1);
	CHECK_STR(r ? mi_value_get_string(r->results, "reason") : NULL, "signal-received");
	CHECK_STR(r ? mi_value_get_string(r->results, "signal-name") : NULL, "SIGINT");
	r = find(&t, MI_RECORD_LOG, NULL, 0);
	CHECK(r && r->text && strstr(r->text, "No such file or directory.\n") && r->klass == NULL &&
	      r->results == NULL);
	r = find(&t, MI_RECORD_CONSOLE, NULL, 0);
	CHECK(r && r->text && r->token == -1);
	r = find_token(&t, 6);
	const struct mi_value *ids = r ? mi_value_get(r->results, "thread-ids") : NULL;
	CHECK(ids && mi_value_kind(ids) == MI_VALUE_TUPLE);
	CHECK_STR(mi_value_get_string(ids, "thread-id"), "1");
	long long depth = 0;
	r = find_token(&t, 9);
	CHECK(r && mi_value_get_int(r->results, "depth", &depth) == 0 && depth == 4);
	r = find(&t, MI_RECORD_NOTIFY, "thread-group-exited", 0);
	CHECK_STR(r ? mi_value_get_string(r->results, "id") : NULL, "i1");
	r = find_token(&t, 10);
	CHECK_STR(r ? r->klass : NULL, "done");
	transcript_free(&t);
}

/* Parses a literal line; returns the record or NULL (message into err). */
static struct mi_record *parse(const char *line, struct mi_error *err)
{
	struct mi_record *r;
	return mi_parse_line(line, strlen(line), &r, err) == 0 ? r : NULL;
}

static void expect_reject(const char *line, size_t len, const char *column_text)
{
	struct mi_record *r = (struct mi_record *)1;
	struct mi_error err = {{0}};
	int rc = mi_parse_line(line, len, &r, &err);
	CHECK(rc == -1);
	CHECK(r == NULL);
	if (rc == 0)
		mi_record_free(r);
	if (!strstr(err.message, column_text)) {
		fprintf(stderr, "input %.*s: message \"%s\" lacks \"%s\"\n", (int)len, line,
			err.message, column_text);
		test_failures++;
	}
}

static void test_escapes(void)
{
	struct mi_error err;
	struct mi_record *r = parse("~\"n\\n t\\t bs\\\\ q\\\" r\\r a\\a b\\b f\\f v\\v e\\e "
				    "o\\101\\0\\7x h\\x41\\x7e q\\' ?\\?\"", &err);
	CHECK(r != NULL);
	static const char expected[] = "n\n t\t bs\\ q\" r\r a\a b\b f\f v\v e\033 "
				       "oA\0\7x hA~ q' ??";
	CHECK(r && r->kind == MI_RECORD_CONSOLE && r->text_len == sizeof expected - 1 &&
	      memcmp(r->text, expected, sizeof expected - 1) == 0);
	CHECK(r && r->text[r->text_len] == '\0');
	mi_record_free(r);

	/* Embedded NUL in a value: the length accessor keeps it. */
	r = parse("^done,value=\"a\\000b\"", &err);
	const struct mi_value *v = r ? mi_value_get(r->results, "value") : NULL;
	CHECK(mi_value_string_len(v) == 3 && memcmp(mi_value_string(v), "a\0b", 3) == 0);
	long long ignored;
	CHECK(mi_value_get_int(r ? r->results : NULL, "value", &ignored) == -1);
	mi_record_free(r);

	/* Octal takes at most three digits; raw UTF-8 passes through. */
	r = parse("@\"\\1234 \xc3\xa9\"", &err);
	CHECK(r && r->kind == MI_RECORD_TARGET && r->text_len == 5 &&
	      memcmp(r->text, "S4 \xc3\xa9", 5) == 0);
	mi_record_free(r);

	char *text;
	size_t text_len, consumed;
	CHECK(mi_parse_cstring("\"x\\ty\",rest", 11, &text, &text_len, &consumed, &err) == 0);
	CHECK(consumed == 6 && text_len == 3 && strcmp(text, "x\ty") == 0);
	free(text);
}

static void test_structure(void)
{
	struct mi_error err;
	struct mi_record *r = parse("123^done", &err);
	CHECK(r && r->token == 123 && r->kind == MI_RECORD_RESULT && mi_value_count(r->results) == 0);
	CHECK(r && mi_value_kind(r->results) == MI_VALUE_TUPLE);
	mi_record_free(r);

	r = parse("^connected", &err);
	CHECK(r && r->token == -1 && strcmp(r->klass, "connected") == 0);
	mi_record_free(r);
	r = parse("^exit", &err);
	CHECK_STR(r ? r->klass : NULL, "exit");
	mi_record_free(r);
	r = parse("+download,section=\".text\",section-size=\"1024\"", &err);
	CHECK(r && r->kind == MI_RECORD_STATUS);
	mi_record_free(r);

	r = parse("=x,empty_tuple={},empty_list=[],nested=[[],[{}],[\"a\",{b=\"c\"}]],"
		  "results=[frame={level=\"0\"},frame={level=\"1\"}],mixed=[\"v\",k=\"w\"],"
		  "dup=\"first\",dup=\"second\"", &err);
	CHECK(r != NULL);
	const struct mi_value *res = r ? r->results : NULL;
	CHECK(mi_value_kind(mi_value_get(res, "empty_tuple")) == MI_VALUE_TUPLE);
	CHECK(mi_value_count(mi_value_get(res, "empty_tuple")) == 0);
	CHECK(mi_value_kind(mi_value_get(res, "empty_list")) == MI_VALUE_LIST);
	CHECK(mi_value_count(mi_value_get(res, "empty_list")) == 0);
	const struct mi_value *nested = mi_value_get(res, "nested");
	CHECK(mi_value_count(nested) == 3);
	CHECK(mi_value_count(mi_value_at(nested, 0)) == 0);
	CHECK(mi_value_kind(mi_value_at(mi_value_at(nested, 1), 0)) == MI_VALUE_TUPLE);
	CHECK_STR(mi_value_get_string(mi_value_at(mi_value_at(nested, 2), 1), "b"), "c");
	const struct mi_value *results = mi_value_get(res, "results");
	CHECK(mi_value_count(results) == 2);
	CHECK_STR(mi_value_name_at(results, 1), "frame");
	CHECK_STR(mi_value_get_string(mi_value_at(results, 1), "level"), "1");
	const struct mi_value *mixed = mi_value_get(res, "mixed");
	CHECK(mi_value_name_at(mixed, 0) == NULL);
	CHECK_STR(mi_value_name_at(mixed, 1), "k");
	CHECK_STR(mi_value_get_string(mixed, "k"), "w");
	CHECK_STR(mi_value_get_string(res, "dup"), "first");
	CHECK_STR(mi_value_string(mi_value_at(res, 6)), "second");
	CHECK(mi_value_get(mi_value_get(res, "dup"), "x") == NULL); /* a string has no members */
	CHECK(mi_value_string(nested) == NULL && mi_value_count(mi_value_get(res, "dup")) == 0);
	CHECK(mi_value_get(NULL, "x") == NULL && mi_value_get_string(NULL, "x") == NULL);
	char *text = mi_value_format(nested);
	CHECK_STR(text, "[[],[{}],[\"a\",{b=\"c\"}]]");
	free(text);
	mi_record_free(r);

	r = parse("(gdb)", &err);
	CHECK(r && r->kind == MI_RECORD_PROMPT && !r->klass && !r->results && !r->text);
	mi_record_free(r);
	r = parse("(gdb) ", &err);
	CHECK(r && r->kind == MI_RECORD_PROMPT);
	mi_record_free(r);
	r = parse("(gdb) \r", &err);
	CHECK(r && r->kind == MI_RECORD_PROMPT);
	mi_record_free(r);
	r = parse("5^done,a=\"1\"\r", &err);
	CHECK(r && mi_value_count(r->results) == 1);
	mi_record_free(r);

	/* Integers. */
	r = parse("^done,d=\"-42\",h=\"0xffffffffffffffff\",big=\"99999999999999999999\","
		  "bad=\"12x\",blank=\"\",sp=\" 1\",min=\"-9223372036854775808\"", &err);
	long long n = 0;
	res = r ? r->results : NULL;
	CHECK(mi_value_get_int(res, "d", &n) == 0 && n == -42);
	CHECK(mi_value_get_int(res, "h", &n) == 0 && (unsigned long long)n == 0xffffffffffffffffULL);
	CHECK(mi_value_get_int(res, "big", &n) == -1);
	CHECK(mi_value_get_int(res, "bad", &n) == -1);
	CHECK(mi_value_get_int(res, "blank", &n) == -1);
	CHECK(mi_value_get_int(res, "sp", &n) == -1);
	CHECK(mi_value_get_int(res, "min", &n) == 0 && n == (-9223372036854775807LL - 1));
	mi_record_free(r);

	/* A line of several MB with no fixed buffer in the way. */
	size_t big = 6u << 20;
	char *line = malloc(big + 16);
	memcpy(line, "~\"", 2);
	memset(line + 2, 'x', big);
	memcpy(line + 2 + big, "\"", 1);
	struct mi_record *huge;
	CHECK(mi_parse_line(line, big + 3, &huge, &err) == 0);
	CHECK(huge && huge->text_len == big);
	mi_record_free(huge);
	free(line);
}

static void test_malformed(void)
{
	expect_reject("", 0, "column 1");
	expect_reject("~\"unterminated", 14, "column 15: line ends early: unterminated c-string");
	expect_reject("^done,a={b=\"c\"", 14, "column 15");
	expect_reject("^done,a=[\"x\"", 12, "unterminated list");
	expect_reject("^done,a={\"x\"}", 13, "column 10: expected a result name");
	expect_reject("12a^done", 8, "column 3: expected a record marker");
	expect_reject("1234567890123456789^done", 24, "more than 18 digits");
	expect_reject("^done,a=\"b\"garbage", 18, "column 12");
	expect_reject("^done,a=\"b\",", 12, "column 13");
	expect_reject("~\"x\" trailing", 13, "column 5");
	expect_reject("(gdb) x", 7, "column 7");
	expect_reject("^done,a=\"b\\q\"", 13, "column 12: unknown escape");
	expect_reject("~\"\\", 3, "unterminated");
	expect_reject("~\"\\x\"", 5, "hex digits");
	expect_reject("~\"\\777\"", 7, "above \\377");
	expect_reject("^done,a", 7, "expected '='");
	expect_reject("^done,a=", 8, "expected a value");
	expect_reject("^done,a=b", 9, "expected a value");
	expect_reject("^", 1, "record class");
	expect_reject("^,a=\"b\"", 7, "record class");
	expect_reject("5~\"x\"", 5, "no token");
	expect_reject("hello world", 11, "column 1");
	expect_reject("^done,a=[{}}", 12, "column 12");
	expect_reject("^done\n", 6, "column 6");
	/* Embedded NULs anywhere: in a name, in a string, after the record. */
	expect_reject("^done,a\0b=\"c\"", 13, "embedded NUL");
	expect_reject("~\"a\0b\"", 6, "column 4: embedded NUL");
	expect_reject("^done\0", 6, "embedded NUL");
	/* The parser must not read past len: the closing quote lies beyond it. */
	expect_reject("~\"abc\"", 5, "unterminated c-string");
	expect_reject("^done,x=[]", 9, "unterminated list");

	/* Nesting: 512 levels is the limit, deeper is an error, not a crash. */
	size_t depth = 100000;
	char *deep = malloc(depth * 2 + 16);
	size_t n = 0;
	n += (size_t)sprintf(deep, "^done,a=");
	for (size_t i = 0; i < depth; i++)
		deep[n++] = '[';
	for (size_t i = 0; i < depth; i++)
		deep[n++] = ']';
	expect_reject(deep, n, "nesting deeper than 512");
	n = (size_t)sprintf(deep, "^done,a=");
	for (size_t i = 0; i < MI_PARSE_MAX_DEPTH - 1; i++)
		deep[n++] = '[';
	for (size_t i = 0; i < MI_PARSE_MAX_DEPTH - 1; i++)
		deep[n++] = ']';
	struct mi_record *r;
	struct mi_error err;
	CHECK(mi_parse_line(deep, n, &r, &err) == 0);
	mi_record_free(r);
	free(deep);
}

int main(void)
{
	test_run_transcript();
	test_attach_transcript();
	test_escapes();
	test_structure();
	test_malformed();
	return test_exit_code();
}
