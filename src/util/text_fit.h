/* text_fit.h — keeping terminal text within a width.
 *
 * Widths are counted in characters: one per UTF-8 sequence (wide CJK
 * characters count one, like every other character; the reports' own text is
 * narrow), zero for the escape sequences we write ourselves (SGR colours,
 * CSI ... final byte, OSC ... BEL or ESC \, e.g. OSC 8 hyperlinks). Text that
 * came from the target is escaped first (util/text_escape.h), so every ESC
 * seen here is ours.
 *
 * Shortening keeps the start and the end and puts "…" in the middle; escape
 * sequences inside the cut part are still written (zero width), so colours
 * and hyperlinks stay balanced. A UTF-8 sequence is never split.
 */
#ifndef XGDBPROF_TEXT_FIT_H
#define XGDBPROF_TEXT_FIT_H

#include <stddef.h>
#include <stdio.h>

/* Columns the n bytes at s take on a terminal. */
size_t text_columns(const char *s, size_t n);

/* Writes the n bytes at s shortened to at most cols columns: when too wide,
 * the first head_percent% of the kept characters, "…", then the rest from
 * the end. Returns the columns written. */
size_t text_put_fit(FILE *out, const char *s, size_t n, size_t cols, unsigned head_percent);

/* The terminal width reports are laid out for: $COLUMNS when it is a
 * number, else the width of the terminal fd is on, else 100 (a pipe). */
size_t text_terminal_width(int fd);

/* A stream that writes to under, line by line, and wraps every line wider
 * than width at its spaces onto lines indented four columns past its own
 * indent: figures are never cut; only a single word wider than a line (a
 * long name or path) is shortened in its middle. width 0 = no limit. fclose() flushes it and
 * leaves under open. NULL if out of memory. */
FILE *text_fit_stream(FILE *under, size_t width);

#endif
