/* mi_record.h — one line of GDB/MI output, parsed.
 *
 * Grammar (GDB manual, "GDB/MI Output Syntax"), one record per line:
 *   [token] ^class {,name=value}      result record
 *   [token] *class {,name=value}      exec async      (+ status, = notify)
 *   ~"c-string"  @"c-string"  &"c-string"   console / target / log streams
 *   (gdb)                                   prompt (trailing blanks allowed)
 * Values: "c-string" | {} | {name=value,...} | [] | [value,...] | [name=value,...]
 * (lists mixing both forms are accepted: older gdbs emitted them).
 *
 * Invariants of a parsed record: result and async records have a non-NULL
 * klass and a non-NULL `results` TUPLE (possibly empty); stream records have
 * `text` (NUL-terminated, text_len bytes, may contain NULs) and no results;
 * the prompt has neither. `console` is only filled by mi_conn_call.
 */
#ifndef MI_RECORD_H
#define MI_RECORD_H

#include <stddef.h>

#include "mi_error.h"
#include "mi_value.h"

enum mi_record_kind {
	MI_RECORD_RESULT,   /* ^ */
	MI_RECORD_EXEC,     /* * */
	MI_RECORD_STATUS,   /* + */
	MI_RECORD_NOTIFY,   /* = */
	MI_RECORD_CONSOLE,  /* ~ */
	MI_RECORD_TARGET,   /* @ */
	MI_RECORD_LOG,      /* & */
	MI_RECORD_PROMPT,   /* (gdb) */
};

struct mi_record {
	enum mi_record_kind kind;
	long long token;          /* -1 when absent */
	char *klass;              /* "done", "stopped", "thread-created", ...; NULL for streams/prompt */
	struct mi_value *results; /* TUPLE of the results after the class; NULL for streams/prompt */
	char *text;               /* decoded stream text for ~ @ &, else NULL */
	size_t text_len;
	char *console;            /* RESULT records from mi_conn_call: console text printed for the command */
};

/* Nesting deeper than this is rejected (protects the recursive parser's stack). */
#define MI_PARSE_MAX_DEPTH 512

/* Parses one line (without its newline; one trailing '\r' is ignored).
 * Reads exactly len bytes, which need not be NUL-terminated.
 * Returns 0 and a malloc'd record in *out, or -1 with err naming the
 * 1-based column of the problem (and *out set to NULL). */
int mi_parse_line(const char *line, size_t len, struct mi_record **out, struct mi_error *err);

/* Decodes the c-string starting at s[0] == '"' within s[0..len). On success
 * returns 0, stores the malloc'd decoded text (NUL-terminated) and its length,
 * and the number of input bytes consumed (including both quotes).
 * Returns -1 with err on malformed input. */
int mi_parse_cstring(const char *s, size_t len, char **text, size_t *text_len,
		     size_t *consumed, struct mi_error *err);

/* Frees r and all it owns. NULL is a no-op. */
void mi_record_free(struct mi_record *r);

#endif
