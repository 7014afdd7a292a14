#include "util/path.h"

#include <stdlib.h>
#include <string.h>

char *path_normalize(const char *path)
{
	size_t len = strlen(path);
	if (path[0] != '/') {
		while (len > 1 && path[len - 1] == '/')
			len--;
		return strndup(path, len);
	}
	char *out = malloc(len + 2);
	if (!out)
		return NULL;
	size_t n = 0;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t part = (size_t)(end - p);
		if (part == 0 || (part == 1 && p[0] == '.')) {
			/* nothing */
		} else if (part == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;   /* the slash before the dropped component */
		} else {
			out[n++] = '/';
			memcpy(out + n, p, part);
			n += part;
		}
		p = end;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

bool path_has_dot_components(const char *path)
{
	return strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//");
}
