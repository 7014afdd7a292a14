/* mi_quote.h — turning a string into one GDB/MI command argument.
 *
 * gdb splits MI command arguments on blanks and decodes "..." c-strings
 * (mi_parse_argv in gdb/mi/mi-parse.c, escapes \\ \" \a \b \f \n \r \t \v and
 * \ooo octal). mi_quote_arg produces the form gdb decodes back to exactly the
 * input bytes: bare when every byte is in [A-Za-z0-9_./:+-] (so "--thread" and
 * "42" stay bare), otherwise a quoted c-string where control and non-ASCII
 * bytes become \ooo. An empty argument becomes "".
 *
 * Note: quoting does not stop gdb from taking an argument that starts with
 * '-' as an option (gdb checks options after decoding). To pass such a value
 * positionally, put the argument "--" before it.
 */
#ifndef MI_QUOTE_H
#define MI_QUOTE_H

/* Returns a malloc'd MI-safe rendering of arg, or NULL when out of memory. */
char *mi_quote_arg(const char *arg);

#endif
