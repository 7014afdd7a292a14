/* mi_quote.c — MI argument quoting (see mi_quote.h). */
#include "mi_quote.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_bare_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '/' || c == ':' || c == '+' || c == '-';
}

char *mi_quote_arg(const char *arg)
{
	size_t n = strlen(arg);
	bool bare = n > 0;
	for (size_t i = 0; i < n && bare; i++)
		bare = is_bare_char((unsigned char)arg[i]);
	if (bare)
		return strdup(arg);

	/* Worst case every byte becomes \ooo, plus the quotes and the NUL. */
	char *out = malloc(n * 4 + 3);
	if (!out)
		return NULL;
	char *w = out;
	*w++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)arg[i];
		switch (c) {
		case '"': *w++ = '\\'; *w++ = '"'; break;
		case '\\': *w++ = '\\'; *w++ = '\\'; break;
		case '\n': *w++ = '\\'; *w++ = 'n'; break;
		case '\t': *w++ = '\\'; *w++ = 't'; break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				/* Always three digits: a following digit must not extend it. */
				w += sprintf(w, "\\%03o", c);
			} else {
				*w++ = (char)c;
			}
		}
	}
	*w++ = '"';
	*w = '\0';
	return out;
}
