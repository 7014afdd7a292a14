/* recipe_diag.h — diagnostics of the recipe compiler, gcc style.
 *
 * A diag_list collects every error and warning found in one recipe so they
 * can all be reported at once:
 *
 *     FILE:LINE:COL: error: MESSAGE
 *         3 |     @x = cnt();
 *           |          ^~~
 *
 * Lines and columns are 1-based; columns count UTF-8 characters. The list
 * keeps at most DIAG_MAX entries (then notes that it stopped). Messages are
 * copied; the list owns everything it holds.
 */
#ifndef XGDBPROF_RECIPE_DIAG_H
#define XGDBPROF_RECIPE_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define DIAG_MAX 100

enum diag_severity { DIAG_ERROR, DIAG_WARNING };

struct diag {
	enum diag_severity severity;
	char *file;
	int line, col;        /* 0 when the diagnostic has no position */
	int len;              /* characters to underline, >= 1 */
	char *source_line;    /* the line's text (invalid bytes shown as '?'), or NULL */
	char *message;
};

struct diag_list {
	struct diag *items;
	size_t n, cap;
	size_t errors, warnings;
	size_t dropped;       /* diagnostics beyond DIAG_MAX */
};

/* The text diagnostics point into: a name for messages and the bytes. */
struct recipe_src {
	const char *name;
	const char *text;
	size_t len;
};

void diag_list_init(struct diag_list *l);
void diag_list_release(struct diag_list *l);

/* Records a diagnostic at byte offset `off` of src spanning `len` bytes
 * (src may be NULL for a diagnostic without position). */
void diag_add(struct diag_list *l, enum diag_severity sev, const struct recipe_src *src,
	      size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void diag_addv(struct diag_list *l, enum diag_severity sev, const struct recipe_src *src,
	       size_t off, size_t len, const char *fmt, va_list ap);

/* Prints every diagnostic, then a summary line if there were errors. */
void diag_list_print(const struct diag_list *l, FILE *out);

/* Returns the candidate closest to word (edit distance small enough to be a
 * plausible typo), or NULL. candidates is NULL-terminated. */
const char *diag_did_you_mean(const char *word, const char *const *candidates);

#endif
