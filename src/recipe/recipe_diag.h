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
 * keeps at most DIAG_MAX entries and prints the first DIAG_PRINT_MAX in
 * source order (then notes how many more there were). Messages are copied;
 * the list owns everything it holds.
 *
 * Whatever the recipe holds (a 10 MB line, a 10 MB token, binary), what is
 * printed stays small and is plain text: a source line longer than
 * DIAG_LINE_MAX characters is shown as DIAG_CONTEXT characters each side of
 * the column ("…" where cut), a quoted
 * 'text' in a message is cut to DIAG_QUOTE characters, and control bytes
 * and invalid UTF-8 are shown as '?'.
 */
#ifndef XGDBPROF_RECIPE_DIAG_H
#define XGDBPROF_RECIPE_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define DIAG_MAX 100
#define DIAG_PRINT_MAX 10
#define DIAG_LINE_MAX 160
#define DIAG_CONTEXT 60
#define DIAG_QUOTE 60

enum diag_severity { DIAG_ERROR, DIAG_WARNING };

struct diag {
	enum diag_severity severity;
	char *file;
	int line, col;        /* 0 when the diagnostic has no position */
	int len;              /* characters to underline, >= 1, within source_line */
	char *source_line;    /* the line's text around col (invalid bytes shown as '?'), or NULL */
	int caret_col;        /* col's character in source_line, 1-based */
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

void recipe_diag_list_init(struct diag_list *l);
void recipe_diag_list_release(struct diag_list *l);

/* Records a diagnostic at byte offset `off` of src spanning `len` bytes
 * (src may be NULL for a diagnostic without position). */
void recipe_diag_add(struct diag_list *l, enum diag_severity sev, const struct recipe_src *src,
	      size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Prints every diagnostic, then a summary line if there were errors. */
void recipe_diag_list_print(const struct diag_list *l, FILE *out);

/* Returns the candidate closest to word (edit distance small enough to be a
 * plausible typo), or NULL. candidates is NULL-terminated. */
const char *recipe_diag_did_you_mean(const char *word, const char *const *candidates);

/* What our language writes for a bpftrace habit, or NULL: word is the
 * unknown probe, builtin or statement, rest the recipe text that follows it
 * (for profile:hz:N's rate). The hint is written into buf. */
const char *recipe_diag_bpftrace_hint(const char *word, const char *rest, char *buf, size_t size);

#endif
