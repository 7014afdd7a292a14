/* jemalloc_profile.c — parses jemalloc's heap_v2 dump (jemalloc_profile.h). */
#include "procfs/jemalloc_profile.h"

#include "util/array.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A dump larger than this is not one jemalloc wrote for a live process. */
enum { DUMP_MAX_BYTES = 256 << 20 };

double jemalloc_sample_scale(uint64_t objects, uint64_t bytes, uint64_t period)
{
	if (objects == 0 || bytes == 0 || period == 0)
		return 1.0;
	double ratio = ((double)bytes / (double)objects) / (double)period;
	double p = -expm1(-ratio);   /* 1 - exp(-ratio), exact for small ratios */
	return p > 0 ? 1.0 / p : 1.0;
}

static void estimate(struct jemalloc_counts *c, uint64_t period)
{
	double scale = jemalloc_sample_scale(c->objects, c->bytes, period);
	c->est_objects = (double)c->objects * scale;
	c->est_bytes = (double)c->bytes * scale;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* An unsigned decimal (or 0x hex when hex) at *p; advances *p past it. */
static int read_number(const char **p, const char *end, int base, uint64_t *out)
{
	const char *q = skip_blanks(*p, end);
	if (base == 16 && end - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	uint64_t v = 0;
	const char *start = q;
	for (; q < end; q++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (base == 16 && *q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (base == 16 && *q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (q == start)
		return -1;
	*out = v;
	*p = q;
	return 0;
}

static int expect_char(const char **p, const char *end, char c)
{
	const char *q = skip_blanks(*p, end);
	if (q >= end || *q != c)
		return -1;
	*p = q + 1;
	return 0;
}

/* "t*: OBJS: BYTES [AOBJS: ABYTES]" after the "t" and its thread mark. */
static int parse_counts(const char *p, const char *end, struct jemalloc_counts *live,
			struct jemalloc_counts *accum)
{
	memset(live, 0, sizeof *live);
	memset(accum, 0, sizeof *accum);
	if (expect_char(&p, end, ':') < 0 || read_number(&p, end, 10, &live->objects) < 0 ||
	    expect_char(&p, end, ':') < 0 || read_number(&p, end, 10, &live->bytes) < 0 ||
	    expect_char(&p, end, '[') < 0 || read_number(&p, end, 10, &accum->objects) < 0 ||
	    expect_char(&p, end, ':') < 0 || read_number(&p, end, 10, &accum->bytes) < 0 ||
	    expect_char(&p, end, ']') < 0)
		return -1;
	return skip_blanks(p, end) == end ? 0 : -1;
}

static int parse_pcs(const char *p, const char *end, struct jemalloc_stack *s)
{
	size_t cap = 0;
	for (;;) {
		p = skip_blanks(p, end);
		if (p == end)
			return s->npcs > 0 ? 0 : -1;
		uint64_t pc;
		if (read_number(&p, end, 16, &pc) < 0 || ARRAY_PUSH(s->pcs, s->npcs, cap, pc) < 0)
			return -1;
	}
}

void jemalloc_profile_free(struct jemalloc_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i].pcs);
	free(p->stacks);
	free(p);
}

int jemalloc_profile_parse(const char *text, size_t len, struct jemalloc_profile **out, struct xerr *e)
{
	*out = NULL;
	struct jemalloc_profile *p = calloc(1, sizeof *p);
	if (!p)
		return xerr_oom(e);
	const char *end = text + len, *line = text;
	size_t cap = 0, lineno = 0;
	enum { HEADER, TOTALS, STACK_COUNTS, STACK_THREADS } state = HEADER;
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		lineno++;
		const char *q = skip_blanks(line, eol);
		const char *stop = eol > q && eol[-1] == '\r' ? eol - 1 : eol;
		if (state == HEADER) {
			static const char magic[] = "heap_v2/";
			if ((size_t)(stop - q) <= sizeof magic - 1 || memcmp(q, magic, sizeof magic - 1) != 0) {
				jemalloc_profile_free(p);
				return xerr_set(e, "not a jemalloc heap profile: line 1 is not heap_v2/PERIOD");
			}
			q += sizeof magic - 1;
			if (read_number(&q, stop, 10, &p->sample_period) < 0 || p->sample_period == 0)
				goto bad_line;
			state = TOTALS;
		} else if (q == stop) {
			/* blank line: between sections */
		} else if (stop - q >= 17 && memcmp(q, "MAPPED_LIBRARIES:", 17) == 0) {
			break;
		} else if (*q == '@') {
			struct jemalloc_stack s = { 0 };
			if (parse_pcs(q + 1, stop, &s) < 0) {
				free(s.pcs);
				goto bad_line;
			}
			if (ARRAY_PUSH(p->stacks, p->nstacks, cap, s) < 0) {
				free(s.pcs);
				jemalloc_profile_free(p);
				return xerr_oom(e);
			}
			state = STACK_COUNTS;
		} else if (*q == 't') {
			struct jemalloc_counts live, accum;
			bool whole = stop - q > 1 && q[1] == '*';
			const char *after = q + 1;
			if (whole)
				after++;
			else
				while (after < stop && *after >= '0' && *after <= '9')
					after++;
			if (after == q + 1 || parse_counts(after, stop, &live, &accum) < 0)
				goto bad_line;
			if (whole && state == TOTALS) {
				p->live = live;
				p->accum = accum;
			} else if (whole && state == STACK_COUNTS) {
				struct jemalloc_stack *s = &p->stacks[p->nstacks - 1];
				s->live = live;
				s->accum = accum;
				estimate(&s->live, p->sample_period);
				estimate(&s->accum, p->sample_period);
				state = STACK_THREADS;
			} else if (whole || state == STACK_COUNTS) {
				goto bad_line;   /* a second t*:, or a thread's line before its stack's t*: */
			}
			/* per-thread lines: the t*: line holds their sum */
		} else {
			goto bad_line;
		}
		line = eol < end ? eol + 1 : end;
	}
	if (state == HEADER) {
		jemalloc_profile_free(p);
		return xerr_set(e, "not a jemalloc heap profile: it is empty");
	}
	if (state == STACK_COUNTS) {
		jemalloc_profile_free(p);
		return xerr_set(e, "jemalloc heap profile cut short: its last stack has no counts");
	}
	/* The whole process, scaled stack by stack as jeprof does (one scale at
	 * the overall mean size would weigh small and large sizes alike). */
	p->live.est_objects = p->live.est_bytes = p->accum.est_objects = p->accum.est_bytes = 0;
	for (size_t i = 0; i < p->nstacks; i++) {
		p->live.est_objects += p->stacks[i].live.est_objects;
		p->live.est_bytes += p->stacks[i].live.est_bytes;
		p->accum.est_objects += p->stacks[i].accum.est_objects;
		p->accum.est_bytes += p->stacks[i].accum.est_bytes;
	}
	*out = p;
	return 0;
bad_line:
	jemalloc_profile_free(p);
	return xerr_set(e, "jemalloc heap profile: line %zu is not of the heap_v2 format", lineno);
}

int jemalloc_profile_read(const char *path, struct jemalloc_profile **out, struct xerr *e)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return xerr_set(e, "cannot open the jemalloc heap profile %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > DUMP_MAX_BYTES) {
		close(fd);
		return xerr_set(e, "%s is not a jemalloc heap profile (not a regular file of at most %d MiB)", path,
				DUMP_MAX_BYTES >> 20);
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *text = malloc(size ? size : 1);
	if (!text) {
		close(fd);
		return xerr_oom(e);
	}
	while (got < size) {
		ssize_t n = read(fd, text + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	int rc = jemalloc_profile_parse(text, got, out, e);
	free(text);
	if (rc < 0)
		xerr_prefix(e, "%s", path);
	return rc;
}
