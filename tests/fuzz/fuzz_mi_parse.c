/* fuzz_mi_parse.c — libFuzzer target for the GDB/MI line parser.
 *
 * Feeds the input to mi_parse_line as one line (it must cope with any bytes,
 * NULs included, without reading past the length) and walks what it
 * produced, checking the invariants mi_record.h promises and that
 * formatting the results and parsing them again reproduces them exactly.
 * Built by `make fuzz-mi` (clang -fsanitize=fuzzer) or linked with
 * tests/fuzz/replay.c to replay a corpus under `make check`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_mi_parse: invariant broken: %s\n", what);
	abort();
}

/* Touches every byte and element so the sanitizers see any bad pointer. */
static size_t walk(const struct mi_value *v)
{
	size_t sum = 0;
	switch (mi_value_kind(v)) {
	case MI_VALUE_STRING: {
		const char *s = mi_value_string(v);
		size_t len = mi_value_string_len(v);
		if (!s || s[len] != '\0')
			fuzz_fail("string not NUL-terminated at its length");
		for (size_t i = 0; i < len; i++)
			sum += (unsigned char)s[i];
		long long n;
		(void)mi_value_to_int(v, &n);
		if (mi_value_count(v) != 0 || mi_value_at(v, 0) || mi_value_get(v, "x"))
			fuzz_fail("a string has elements");
		break;
	}
	case MI_VALUE_TUPLE:
	case MI_VALUE_LIST:
		if (mi_value_string(v))
			fuzz_fail("a container has text");
		for (size_t i = 0; i < mi_value_count(v); i++) {
			const char *name = mi_value_name_at(v, i);
			if (mi_value_kind(v) == MI_VALUE_TUPLE && !name)
				fuzz_fail("unnamed tuple element");
			if (name) {
				sum += strlen(name);
				if (!mi_value_get(v, name))
					fuzz_fail("named element not found by name");
			}
			sum += walk(mi_value_at(v, i));
		}
		if (mi_value_at(v, mi_value_count(v)))
			fuzz_fail("element past the end");
		break;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy so reading past `size` trips ASan. */
	char *line = malloc(size ? size : 1);
	if (!line)
		return 0;
	if (size)
		memcpy(line, data, size);
	struct mi_record *r;
	struct mi_error err;
	err.message[0] = '\0';
	if (mi_parse_line(line, size, &r, &err) < 0) {
		if (r != NULL || strncmp(err.message, "column ", 7) != 0)
			fuzz_fail("a rejection without a column or with a record");
		free(line);
		return 0;
	}
	switch (r->kind) {
	case MI_RECORD_RESULT:
	case MI_RECORD_EXEC:
	case MI_RECORD_STATUS:
	case MI_RECORD_NOTIFY: {
		if (!r->klass || !r->results || mi_value_kind(r->results) != MI_VALUE_TUPLE || r->text)
			fuzz_fail("async/result record shape");
		walk(r->results);
		char *text = mi_value_format(r->results);
		if (!text)
			break;
		/* "=c" + the tuple's body must parse back to the same text. */
		size_t n = strlen(text);
		char *again_line = malloc(n + 4);
		if (again_line) {
			size_t len = (size_t)snprintf(again_line, n + 4, "=c%s%.*s", n > 2 ? "," : "",
						      (int)(n - 2), text + 1);
			struct mi_record *again;
			if (mi_parse_line(again_line, len, &again, &err) < 0)
				fuzz_fail("formatted results do not parse");
			char *text2 = mi_value_format(again->results);
			if (text2 && strcmp(text, text2) != 0)
				fuzz_fail("format/parse round trip differs");
			free(text2);
			mi_record_free(again);
			free(again_line);
		}
		free(text);
		break;
	}
	case MI_RECORD_CONSOLE:
	case MI_RECORD_TARGET:
	case MI_RECORD_LOG:
		if (!r->text || r->text[r->text_len] != '\0' || r->klass || r->results || r->token != -1)
			fuzz_fail("stream record shape");
		break;
	case MI_RECORD_PROMPT:
		if (r->klass || r->results || r->text)
			fuzz_fail("prompt shape");
		break;
	}
	mi_record_free(r);
	free(line);
	return 0;
}
