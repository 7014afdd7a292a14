/* name_pattern.c — function-name patterns (see name_pattern.h). */
#include "symbols/name_pattern.h"
#include "util/edit_distance.h"

#include <string.h>

#define MAX_SEGMENTS 32
#define SEGMENT_MAX 255

bool name_pattern_is_glob(const char *pattern)
{
	return strpbrk(pattern, "*?") != NULL;
}

const char *name_pattern_problem(const char *pattern)
{
	size_t n = strlen(pattern);
	if (n == 0)
		return "empty function name: name a function, e.g. \"Tree::insert\"";
	if (strstr(pattern, ":::"))
		return "':::' in a function name: path segments are separated by '::'";
	if (n >= 2 && !strcmp(pattern + n - 2, "::"))
		return "a function name ends with '::': add '*' for every function under that path "
		       "(\"sled::tree::*\")";
	if (!strncmp(pattern, "::", 2))
		return "a function name starts with '::': drop it (a name selects every path it ends)";
	if (strchr(pattern, '(') && !strstr(pattern, "{{"))
		return "a function name has no parentheses or arguments: write \"Tree::insert\", "
		       "and read arguments with arg(NAME)";
	return NULL;
}

/* Iterative glob with one backtrack point: linear for a single *, and
 * never worse than quadratic on names of a few hundred bytes. */
static bool glob_matches(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p && (*p == '?' || *p == *s)) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

static bool tail_matches(const char *pattern, const char *tail, bool glob)
{
	return glob ? glob_matches(pattern, tail) : strcmp(pattern, tail) == 0;
}

bool name_pattern_matches(const char *pattern, const char *key)
{
	if (!pattern || !key || !*pattern)
		return false;
	bool glob = name_pattern_is_glob(pattern);
	if (tail_matches(pattern, key, glob))
		return true;
	int depth = 0;
	for (const char *sep = name_path_separator(key, &depth); sep; sep = name_path_separator(sep + 2, &depth))
		if (tail_matches(pattern, sep + 2, glob))
			return true;
	return false;
}

const char *name_path_separator(const char *s, int *depth)
{
	for (const char *c = s; *c; c++) {
		if (*c == '<')
			++*depth;
		else if (*c == '>' && *depth > 0)
			--*depth;
		else if (*depth == 0 && c[0] == ':' && c[1] == ':')
			return c;
	}
	return NULL;
}

struct segments {
	const char *start[MAX_SEGMENTS];
	size_t len[MAX_SEGMENTS];
	int n;
};

/* Splits at "::" outside <...>; past MAX_SEGMENTS, the front ones merge. */
static void split(const char *s, struct segments *out)
{
	out->n = 0;
	int depth = 0;
	for (const char *begin = s;;) {
		const char *sep = name_path_separator(begin, &depth);
		if (out->n == MAX_SEGMENTS) {
			memmove(out->start, out->start + 1, (MAX_SEGMENTS - 1) * sizeof out->start[0]);
			memmove(out->len, out->len + 1, (MAX_SEGMENTS - 1) * sizeof out->len[0]);
			out->n--;
		}
		out->start[out->n] = begin;
		out->len[out->n] = sep ? (size_t)(sep - begin) : strlen(begin);
		out->n++;
		if (!sep)
			return;
		begin = sep + 2;
	}
}

/* 0..100: edit distance over the longer length. */
static int segment_distance(const char *a, size_t la, const char *b, size_t lb)
{
	if (la > SEGMENT_MAX)
		la = SEGMENT_MAX;
	if (lb > SEGMENT_MAX)
		lb = SEGMENT_MAX;
	if (la == 0 && lb == 0)
		return 0;
	char pa[SEGMENT_MAX + 1], pb[SEGMENT_MAX + 1];
	memcpy(pa, a, la);
	pa[la] = '\0';
	memcpy(pb, b, lb);
	pb[lb] = '\0';
	if (name_pattern_is_glob(pa) && glob_matches(pa, pb))
		return 0;
	size_t longer = la > lb ? la : lb;
	return (int)(100 * edit_distance(pa, la, pb, lb) / longer);
}

int name_pattern_distance(const char *pattern, const char *key)
{
	struct segments want, have;
	split(pattern, &want);
	split(key, &have);
	int score = 0;
	for (int i = 0; i < want.n; i++) {
		int w = want.n - 1 - i, h = have.n - 1 - i;
		int d = h < 0 ? 100 : segment_distance(want.start[w], want.len[w], have.start[h], have.len[h]);
		score += i == 0 ? 3 * d : d;
	}
	return score;
}
