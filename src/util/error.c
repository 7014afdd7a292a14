#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int xerr_set(struct xerr *e, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int xerr_prefix(struct xerr *e, const char *fmt, ...)
{
	if (e) {
		char prefix[XERR_MAX / 2], old[XERR_MAX];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(prefix, sizeof prefix, fmt, ap);
		va_end(ap);
		memcpy(old, e->msg, sizeof old);
		snprintf(e->msg, sizeof e->msg, "%.500s: %.500s", prefix, old);
	}
	return -1;
}

int xerr_oom(struct xerr *e)
{
	return xerr_set(e, "out of memory");
}

int xerr_oom_doing(struct xerr *e, const char *fmt, ...)
{
	if (e) {
		char doing[XERR_MAX - 16];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(doing, sizeof doing, fmt, ap);
		va_end(ap);
		snprintf(e->msg, sizeof e->msg, "out of memory %s", doing);
	}
	return -1;
}
