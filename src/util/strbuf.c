#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

int strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->failed || n > SIZE_MAX - b->len - 1) {
		b->failed = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		char *grown = array_grow(b->s, &b->cap, b->len + n + 1, 1);
		if (!grown) {
			b->failed = true;
			return -1;
		}
		b->s = grown;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int strbuf_addc(struct strbuf *b, char c)
{
	return strbuf_add(b, &c, 1);
}

int strbuf_adds(struct strbuf *b, const char *s)
{
	return strbuf_add(b, s, strlen(s));
}

char *strbuf_finish(struct strbuf *b)
{
	if (!b->failed && !b->s)
		strbuf_add(b, "", 0);
	if (b->failed) {
		strbuf_release(b);
		return NULL;
	}
	return b->s;
}

void strbuf_release(struct strbuf *b)
{
	free(b->s);
	*b = (struct strbuf){ 0 };
}
