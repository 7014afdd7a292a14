/* mi_error.h — the error value of the mi/ library.
 *
 * Contract: every mi_* function that can fail takes a `struct mi_error *`
 * (which may be NULL to discard the message), returns -1 or NULL, and leaves
 * one human sentence in `message`. On success the error is left untouched.
 * mi/ is standalone: it does not use src/util/error.h.
 */
#ifndef MI_ERROR_H
#define MI_ERROR_H

struct mi_error {
	char message[512];
};

/* Formats into err (if non-NULL). Always returns -1. */
int mi_error_set(struct mi_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
