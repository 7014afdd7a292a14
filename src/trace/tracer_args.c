/* tracer_args.c — arg(NAME): evaluation in the hit's frame. */
#include "trace/tracer_internal.h"

/* ---- arg(NAME) -------------------------------------------------------------- */

static const char *keep_string(struct tracer *t, char *s)
{
	if (ARRAY_PUSH(t->cur.arg_strings, t->cur.narg_strings, t->cur.arg_strings_cap, s) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

void tracer_release_strings(struct tracer *t)
{
	for (size_t i = 0; i < t->cur.narg_strings; i++)
		free(t->cur.arg_strings[i]);
	t->cur.narg_strings = 0;
}


static bool is_frame_parameter(const struct tracer *t, const char *name)
{
	for (size_t i = 0; t->cur.event && i < t->cur.event->nframe_args; i++)
		if (strcmp(t->cur.event->frame_args[i], name) == 0)
			return true;
	return false;
}

/* gdb's text for a value it cannot read at this PC (DWARF location lists
 * leave the parameter out here, or gdb says so in an error). */
static bool optimized_out(const char *text)
{
	/* "<optimized out>", "value has been optimized out", "<unavailable>",
	 * "value is not available" */
	return text && (strstr(text, "optimized out") || strstr(text, "unavailable>") ||
			strstr(text, "not available"));
}

/* Evaluates one expression in the hitting thread's frame 0: 1 with the
 * value's text in *value (caller frees it), 0 when gdb could not read it
 * (optimized out), -1 on another error. */
static int evaluate_in_frame(struct tracer *t, const char *expr, char **value)
{
	struct xerr err = { 0 };
	if (session_evaluate(t->s, t->cur.event_gdb_id, 0, expr, value, &err) < 0)
		return optimized_out(err.msg) ? 0 : -1;
	return optimized_out(*value) ? 0 : 1;
}

/* gdb prints a byte slice as `&[u8] [104, 105]`: the text those bytes
 * make when they are UTF-8, else NULL. */
static char *byte_slice_text(const char *value)
{
	const char *list = strncmp(value, "&[u8] [", 7) == 0 ? value + 7 : strncmp(value, "&mut [u8] [", 11) == 0
												   ? value + 11 : NULL;
	if (!list)
		return NULL;
	size_t cap = strlen(list) + 1, n = 0;
	unsigned char *bytes = malloc(cap);
	if (!bytes)
		return NULL;
	for (const char *p = list; *p && *p != ']';) {
		char *end;
		long b = strtol(p, &end, 10);
		if (end == p || b < 0 || b > 255 || strncmp(end, " <repeats", 9) == 0) {
			free(bytes);
			return NULL;
		}
		bytes[n++] = (unsigned char)b;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	if (!tracer_valid_utf8(bytes, n)) {
		free(bytes);
		return NULL;
	}
	bytes[n] = '\0';
	return (char *)bytes;
}

/* arg(NAME): a parameter of the probed function at its entry, as gdb reads
 * it through the DWARF location valid at this address, or through its entry
 * value (NAME@entry, the caller-side DW_OP_entry_value) when the location
 * does not cover the address. Never a guess: what cannot be read is
 * "<unavailable: …>". gdb prints a Rust &str as "text", a C string as
 * `0x… "text"`, a byte slice as a list of bytes (shown as text when UTF-8),
 * other slices as `&[T](size=N) = {...}` (their length); integers as digits. */
int tracer_arg_lookup(void *ctx, const char *name, struct event_value *out)
{
	struct tracer *t = ctx;
	/* Only a plain identifier reaches gdb: an expression could call
	 * functions in the target. */
	if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return -1;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return -1;
	out->type = EVENT_VAL_STR;
	if (t->cur.event_site_inlined) {
		/* At an inlined copy's first instruction gdb shows the caller's
		 * frame: a name would resolve to the caller's variable. */
		out->s = "<unavailable: an inlined copy of the function, whose parameters gdb cannot show here>";
		return 0;
	}
	/* Parameters only: any other name would resolve to a global of the
	 * target (arg(system) to libc's function). */
	if (!is_frame_parameter(t, name))
		return -1;
	char *value = NULL;
	int got = evaluate_in_frame(t, name, &value);
	if (got == 0) {
		free(value);
		value = NULL;
		char at_entry[160];
		snprintf(at_entry, sizeof at_entry, "%s@entry", name);
		/* gdb's C parser knows NAME@entry; its Rust parser does not
		 * (an error): then nothing else can read it either. */
		got = evaluate_in_frame(t, at_entry, &value);
		if (got < 0)
			got = 0;
	}
	if (got <= 0) {
		free(value);
		if (got < 0)
			return -1;
		out->s = "<unavailable: optimized out at this address>";
		return 0;
	}
	int rc = -1;
	char *end;
	long long n = strtoll(value, &end, 0);
	const char *size = strstr(value, "(size=");
	const char *quote = strchr(value, '"');
	size_t len = strlen(value);
	char *copy = NULL;
	if (end != value && (*end == '\0' || strncmp(end, " '", 2) == 0)) {
		/* an integer, or a char as `97 'a'` */
		out->type = EVENT_VAL_INT;
		out->i = n;
		rc = 0;
	} else if (end != value && strncmp(end, " \"", 2) == 0 && len >= 2 && value[len - 1] == '"') {
		/* char *: `0x55… "text"` (gdb's escapes kept: printable already) */
		copy = strndup(quote + 1, (size_t)(value + len - 1 - (quote + 1)));
	} else if ((copy = byte_slice_text(value)) != NULL) {
		/* &[u8] as text */
	} else if (value[0] == '&' && size) {
		out->type = EVENT_VAL_INT;
		out->i = strtoll(size + 6, NULL, 10);
		rc = 0;
	} else if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		copy = strndup(value + 1, len - 2);
	} else {
		copy = strdup(value);
	}
	if (rc != 0) {
		out->type = EVENT_VAL_STR;
		out->s = copy ? keep_string(t, copy) : NULL;
		rc = out->s ? 0 : -1;
	}
	free(value);
	return rc;
}

