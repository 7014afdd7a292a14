/* error.h — errors as values.
 *
 * Contract: a function that can fail takes a `struct xerr *` and returns -1
 * (or NULL) after filling it with one human sentence, ideally naming the fix.
 * `xerr_set` always returns -1 so callers can write `return xerr_set(e, ...)`.
 * A NULL `struct xerr *` is allowed and simply discards the message.
 * Nothing in the libraries calls exit(); only main.c decides exit codes.
 */
#ifndef XGDBPROF_ERROR_H
#define XGDBPROF_ERROR_H

#include <stddef.h>

#define XERR_MAX 1024

struct xerr {
	char msg[XERR_MAX];
};

/* Formats the message into e (if non-NULL). Returns -1. */
int xerr_set(struct xerr *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prepends "prefix: " to an existing message. Returns -1. */
int xerr_prefix(struct xerr *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The one out-of-memory message: "out of memory". Returns -1. */
int xerr_oom(struct xerr *e);

/* "out of memory " followed by what was being done ("loading %s").
 * Returns -1. */
int xerr_oom_doing(struct xerr *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Named exit codes of the xgdbprof command (see docs/xgdbprof.1, EXIT STATUS). */
enum xgdbprof_exit {
	XGP_EXIT_OK = 0,       /* success */
	XGP_EXIT_FAILURE = 1,  /* the job ran and failed (e.g. `check` found errors, target lost) */
	XGP_EXIT_USAGE = 2,    /* bad input: options, PID, permissions, recipe, missing gdb */
};

#endif
