/* strbuf.h — a growable NUL-terminated string (the idea of git's strbuf), so
 * the doubling and the out-of-memory path of building text are written once.
 *
 * Contract:
 *  - A zeroed struct strbuf is an empty buffer; s is NULL until the first
 *    byte is added, and always NUL-terminated after that.
 *  - strbuf_add / strbuf_addc / strbuf_adds append; each returns 0, or -1
 *    once memory ran out. After the first failure `failed` stays set and
 *    every later append is a no-op returning -1, so a caller may append a
 *    whole sequence and check once at the end.
 *  - strbuf_finish makes s a string (an empty one when nothing was added)
 *    and returns it, still held by the buffer: the caller either takes it
 *    (frees it itself, and uses the buffer no more) or reads it and then
 *    releases the buffer. Returns NULL when the buffer failed, s freed.
 *  - strbuf_release frees s and leaves an empty buffer.
 */
#ifndef XGDBPROF_STRBUF_H
#define XGDBPROF_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

int strbuf_add(struct strbuf *b, const char *s, size_t n);
int strbuf_addc(struct strbuf *b, char c);
int strbuf_adds(struct strbuf *b, const char *s);
char *strbuf_finish(struct strbuf *b);
void strbuf_release(struct strbuf *b);

#endif
