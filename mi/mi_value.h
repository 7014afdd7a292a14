/* mi_value.h — values parsed from GDB/MI output.
 *
 * A value is a STRING (a decoded c-string), a TUPLE ({name=value,...}) or a
 * LIST ([value,...] or [name=value,...]). Every element of a tuple has a
 * name; list elements have one when gdb wrote a list of results (for example
 * stack=[frame={...},frame={...}]). Values are immutable once parsed and owned
 * by the record that holds them; the accessors never allocate and accept NULL
 * (returning NULL/0) so lookups can be chained without checks:
 *     mi_value_get_string(mi_value_get(rec->results, "frame"), "func")
 * Duplicate names are kept in order; lookups return the first one.
 */
#ifndef MI_VALUE_H
#define MI_VALUE_H

#include <stddef.h>

enum mi_value_kind { MI_VALUE_STRING, MI_VALUE_TUPLE, MI_VALUE_LIST };

struct mi_value;

/* Kind of v. v must not be NULL. */
enum mi_value_kind mi_value_kind(const struct mi_value *v);

/* The decoded, NUL-terminated text of a STRING; NULL otherwise. Text may
 * contain NULs (from \000); mi_value_string_len gives its full length
 * (0 when v is not a STRING). */
const char *mi_value_string(const struct mi_value *v);
size_t mi_value_string_len(const struct mi_value *v);

/* First element named `name` of a tuple or a list of results; NULL if absent
 * or v is not a tuple/list. */
const struct mi_value *mi_value_get(const struct mi_value *tuple, const char *name);

/* mi_value_string(mi_value_get(tuple, name)): NULL if absent or not a STRING. */
const char *mi_value_get_string(const struct mi_value *tuple, const char *name);

/* Decimal (optionally signed) or 0x-hex integer held by the STRING named
 * `name`. Returns 0 and stores it, or -1 if absent, not a string, not a whole
 * number or out of range (*out is then untouched). */
int mi_value_get_int(const struct mi_value *tuple, const char *name, long long *out);

/* Same parse as mi_value_get_int on a STRING value itself. */
int mi_value_to_int(const struct mi_value *v, long long *out);

/* Number of elements of a tuple/list; 0 for strings and NULL. */
size_t mi_value_count(const struct mi_value *v);

/* i-th element's value (for results, the part after '='); NULL if out of range. */
const struct mi_value *mi_value_at(const struct mi_value *v, size_t i);

/* i-th element's result name; NULL for plain list items or out of range. */
const char *mi_value_name_at(const struct mi_value *v, size_t i);

/* Renders v back as MI text (c-strings re-escaped), malloc'd; NULL if out of
 * memory. Parsing the output yields an equal value. Meant for logs and tests. */
char *mi_value_format(const struct mi_value *v);

/* Frees v and everything under it. NULL is a no-op. */
void mi_value_free(struct mi_value *v);

/* --- construction, used by the parser (and by tests) --- */

/* New empty value of the kind; STRING gets a copy of len bytes of text.
 * Returns NULL when out of memory. */
struct mi_value *mi_value_new_string(const char *text, size_t len);
struct mi_value *mi_value_new_tuple(void);
struct mi_value *mi_value_new_list(void);

/* Appends child (ownership moves into parent, even on failure) under name
 * (copied; may be NULL for list items). Returns 0, or -1 when out of memory. */
int mi_value_append(struct mi_value *parent, const char *name, size_t name_len,
		    struct mi_value *child);

#endif
