/* tee_stream.c — see tee_stream.h. */
#include "util/tee_stream.h"

#include <stdlib.h>

struct tee {
	FILE *first, *second;
};

static ssize_t tee_write(void *cookie, const char *buf, size_t size)
{
	struct tee *t = cookie;
	if (fwrite(buf, 1, size, t->first) != size || fwrite(buf, 1, size, t->second) != size)
		return -1;
	return (ssize_t)size;
}

static int tee_close(void *cookie)
{
	struct tee *t = cookie;
	int rc = fflush(t->first) | fflush(t->second);
	free(t);
	return rc ? -1 : 0;
}

FILE *tee_stream(FILE *first, FILE *second)
{
	struct tee *t = malloc(sizeof *t);
	if (!t)
		return NULL;
	*t = (struct tee){ first, second };
	cookie_io_functions_t io = { .write = tee_write, .close = tee_close };
	FILE *f = fopencookie(t, "w", io);
	if (!f)
		free(t);
	return f;
}
