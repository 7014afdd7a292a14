/* text_escape.h — the one place target text is made safe to write out.
 *
 * Thread names, symbol and file names, panic messages and command lines come
 * from the target and may hold anything: ESC sequences that clear the screen
 * or write the clipboard (OSC 52), BEL, CR, bytes that are not UTF-8. Every
 * writer of such text goes through this module; nothing else decides how a
 * hostile byte looks. Forms (docs/reports.md, "Hostile text"):
 *
 *  - TEXT_FORM_TERMINAL (terminal, text reports, recipe print/printf, folded
 *    stacks): every C0 control (also the target's own \n and \t), DEL, every
 *    byte of a C1 control U+0080..U+009F, and every byte that is not part of
 *    valid UTF-8 is shown as the four characters \xNN (lower-case hex).
 *    Everything else, backslash included, is copied as is, so a name that
 *    literally holds "\x1b" looks the same as one holding ESC: readable, not
 *    reversible.
 *  - TEXT_FORM_XML (SVG): the terminal form, then & < > " ' as entities. The
 *    result is always well-formed XML 1.0 character data.
 *  - TEXT_FORM_JSON (contents of a JSON string): " and \ escaped, controls
 *    (C0, DEL, C1) as \u00XX so a JSON reader gets the exact code point back;
 *    a byte that is not UTF-8 becomes the text \xNN (JSON "\\xNN"): the output
 *    stays valid UTF-8, the byte's value survives, and it reads the same as in
 *    the text outputs (U+FFFD would merge names that differ in such bytes).
 *
 * Guarantees: output never holds a raw byte 0x00..0x1f, 0x7f or 0x80..0x9f
 * code point, and is valid UTF-8. NULL input writes nothing (or "").
 */
#ifndef XGDBPROF_TEXT_ESCAPE_H
#define XGDBPROF_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

enum text_form {
	TEXT_FORM_TERMINAL,
	TEXT_FORM_XML,
	TEXT_FORM_JSON,
};

/* Writes s to out in the given form. */
void text_put(FILE *out, const char *s, enum text_form form);

/* Terminal form of s into buf, NUL-terminated when size > 0. Like snprintf
 * it returns the length the whole result needs (>= size: cut), but it cuts
 * only between whole characters or escapes. */
size_t text_escape(char *buf, size_t size, const char *s);

/* Terminal form of s in a new string (free it), or NULL if out of memory. */
char *text_escape_dup(const char *s);

/* Writes a JSON document produced by a JSON library (cJSON_Print), which
 * escapes quotes, backslashes and C0 controls but copies every other byte:
 * DEL and C1 controls become \u00XX, bytes that are not UTF-8 \\xNN, as in
 * TEXT_FORM_JSON. Outside strings such a document is ASCII, so this touches
 * string contents only. */
void text_put_json_document(FILE *out, const char *json);

#endif
