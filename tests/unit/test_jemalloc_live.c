/* test_jemalloc_live.c — jemalloc_call.h against a live target under real
 * gdb: tests/fixtures/jemservice (tokio on the system's jemalloc, keeping
 * a 16 KiB vector every 50th write) started with and without profiling.
 *
 *  - MALLOC_CONF=prof:true,lg_prof_sample:16: the state is "profiling" at
 *    2^16; the dump jemalloc writes through our mallctl call parses, and its
 *    largest stack's estimate of live bytes (jemalloc_profile.h) lies within
 *    2x of the retained bytes the fixture itself counts (its truth lines
 *    printed just before the attach and just after the dump, by its own
 *    clock); the target runs on afterwards,
 *    writing truth lines, and the unused bytes the calls ran from
 *    (target_call.h) read as before.
 *  - prof:true,prof_active:false: inactive; switched on and off again.
 *  - no MALLOC_CONF: profiling off; the counter fixture (glibc): absent.
 * The 2x bound is exact enough: ~340 of the ~1500 16 KiB vectors are
 * sampled (p = 1 - exp(-16384/65536) = 0.22), a relative error of 1/sqrt(340)
 * = 5%, so 2x is ~15 standard errors (false failure far below 1e-4).
 *
 * Mutations caught (each shown failing; sed, then make check TESTS=tests/unit/test_jemalloc_live):
 * skip the 1/(1-exp) scale in jemalloc_profile.c
 * (s/c->est_bytes = (double)c->bytes \* scale;/c->est_bytes = (double)c->bytes;/:
 * the estimate is 4.5x low); read opt.prof as "opt.prof_accum"
 * (s/"opt.prof", &on/"opt.prof_accum", \&on/: state is off); leave the
 * stub's bytes in (in target_call.c, s/!c->left_in_place && session_target_alive/0 \&\& session_target_alive/:
 * the bytes check fails).
 */
#include "check.h"
#include "procfs/jemalloc_profile.h"
#include "session/jemalloc_call.h"
#include "session/session.h"
#include "symbols/symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct target {
	pid_t pid;
	FILE *out;   /* its stdout */
	struct timespec forked;   /* CLOCK_MONOTONIC, just before the fork */
};

static double seconds_since(const struct timespec *then)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - then->tv_sec) + (double)(now.tv_nsec - then->tv_nsec) / 1e9;
}

static int start(struct target *t, const char *bin, const char *arg, const char *malloc_conf)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t->forked);
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (malloc_conf)
			setenv("MALLOC_CONF", malloc_conf, 1);
		else
			unsetenv("MALLOC_CONF");
		execl(bin, bin, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	t->out = fdopen(fds[0], "r");
	return t->out ? 0 : -1;
}

static void stop(struct target *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	if (t->out)
		fclose(t->out);
}

/* The retained bytes of the fixture's next truth line, and its t= (the
 * fixture's seconds since its own start); 0 on EOF. */
static uint64_t next_truth(struct target *t, double *at)
{
	char line[512];
	while (fgets(line, sizeof line, t->out)) {
		const char *r = strstr(line, " retained_bytes=");
		if (strncmp(line, "truth t=", 8) == 0 && r) {
			if (at)
				*at = strtod(line + 8, NULL);
			return strtoull(r + 16, NULL, 10);
		}
	}
	return 0;
}

static uint64_t next_retained(struct target *t)
{
	return next_truth(t, NULL);
}

/* The retained bytes of the first truth line printed after now. Lines
 * wait in the pipe, so the next line read may be seconds old (under
 * valgrind the symbol load and the attach take seconds): a line counts as
 * printed after now when its t= is at least the time since the fork, the
 * fixture's clock starting after the fork. */
static uint64_t retained_printed_after_now(struct target *t)
{
	double since_fork = seconds_since(&t->forked), at = 0;
	uint64_t retained;
	while ((retained = next_truth(t, &at)) > 0 && at < since_fork)
		;
	return retained;
}

static struct session *attach_stopped(pid_t pid)
{
	struct session_options opts = { 0 };
	struct session *s = NULL;
	struct xerr e = { 0 };
	if (session_attach(&s, pid, &opts, &e) < 0 || session_stop(s, &e) < 0) {
		fprintf(stderr, "attach: %s\n", e.msg);
		session_end(s, NULL);
		return NULL;
	}
	return s;
}

/* What the caller of jemalloc_call.h brings from its symbols: mallctl's
 * address and unused bytes to run the calls from. */
static int find_mallctl(const struct symbolizer_function *f, void *arg)
{
	struct jemalloc_hooks *h = arg;
	const char *name = f->linkage ? f->linkage : f->name;
	if (!h->mallctl && name && (strcmp(name, "mallctl") == 0 || strcmp(name, "_rjem_mallctl") == 0)) {
		h->mallctl = f->addr;
		snprintf(h->mallctl_name, sizeof h->mallctl_name, "%s", name);
	}
	return 0;
}

static void hooks_for(pid_t pid, struct jemalloc_hooks *h)
{
	memset(h, 0, sizeof *h);
	struct xerr e = { 0 };
	struct symbolizer *sym = symbolizer_new_pid(pid, &e);
	CHECK_MSG(sym != NULL, "%s", e.msg);
	if (!sym)
		return;
	CHECK(symbolizer_foreach_function(sym, NULL, find_mallctl, h, &e) == 0);
	struct symbolizer_slack room;
	if (h->mallctl) {
		CHECK(symbolizer_unused_room(sym, h->mallctl, JEMALLOC_CALL_CODE_BYTES, JEMALLOC_CALL_DATA_BYTES, &room,
					     &e) == 1);
		h->area = (struct target_call_area){ .code = room.code_lo, .code_len = room.code_hi - room.code_lo,
						     .data = room.data_lo, .data_len = room.data_hi - room.data_lo };
	}
	symbolizer_free(sym);
}

/* The area's bytes now, through /proc (malloc'd, code then data). */
static uint8_t *area_bytes(pid_t pid, const struct target_call_area *a)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	FILE *f = fopen(path, "r");
	uint8_t *b = malloc(a->code_len + a->data_len);
	bool ok = f && b && fseeko(f, (off_t)a->code, SEEK_SET) == 0 && fread(b, 1, a->code_len, f) == a->code_len &&
		  fseeko(f, (off_t)a->data, SEEK_SET) == 0 && fread(b + a->code_len, 1, a->data_len, f) == a->data_len;
	if (f)
		fclose(f);
	if (!ok) {
		free(b);
		return NULL;
	}
	return b;
}

static enum jemalloc_state state_of(const char *bin, const char *arg, const char *conf)
{
	struct target t = { 0 };
	enum jemalloc_state state = (enum jemalloc_state)-1;
	if (start(&t, bin, arg, conf) < 0)
		return state;
	if (arg) {   /* not jemservice: no truth lines to wait for */
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	} else {
		next_retained(&t);   /* running, allocator set up */
	}
	struct jemalloc_hooks hooks;
	hooks_for(t.pid, &hooks);
	struct session *s = attach_stopped(t.pid);
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	if (s && jemalloc_inspect(s, &hooks, &jt, &e) == 0)
		state = jt.state;
	else
		fprintf(stderr, "inspect: %s\n", e.msg);
	CHECK(s && session_end(s, &e) == 0);
	stop(&t);
	return state;
}

static void profiling(const char *bin)
{
	struct target t = { 0 };
	CHECK(start(&t, bin, NULL, "prof:true,lg_prof_sample:16") == 0);
	next_retained(&t);
	next_retained(&t);
	struct jemalloc_hooks hooks;
	hooks_for(t.pid, &hooks);
	uint8_t *area_before = area_bytes(t.pid, &hooks.area);
	CHECK(area_before != NULL);
	uint64_t before = retained_printed_after_now(&t);   /* and before the attach */
	struct session *s = attach_stopped(t.pid);
	CHECK(s != NULL);
	if (!s) {
		stop(&t);
		return;
	}
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	CHECK_MSG(jemalloc_inspect(s, &hooks, &jt, &e) == 0, "%s", e.msg);
	CHECK(jt.state == JEMALLOC_PROF_ACTIVE && jt.lg_prof_sample == 16 && !jt.prof_accum);
	CHECK_STR(jt.mallctl_name, "mallctl");

	char dir[] = "/tmp/xgdbprof-jemalloc-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/heap.prof", dir);
	CHECK_MSG(jemalloc_dump(s, &jt, path, &e) == 0, "%s", e.msg);
	CHECK(session_is_stopped(s));
	CHECK(session_end(s, &e) == 0);
	uint8_t *area_after = area_bytes(t.pid, &hooks.area);
	CHECK_MSG(area_before && area_after &&
		  memcmp(area_before, area_after, hooks.area.code_len + hooks.area.data_len) == 0,
		  "the bytes the calls ran from at 0x%" PRIx64 " and 0x%" PRIx64 " are not as they were",
		  hooks.area.code, hooks.area.data);
	free(area_before);
	free(area_after);
	uint64_t after = retained_printed_after_now(&t);   /* after the dump */
	uint64_t later = next_retained(&t);
	CHECK_MSG(after > 0 && later > after, "the target stopped writing after the dump (%" PRIu64 ", %" PRIu64 ")",
		  after, later);

	struct jemalloc_profile *p = NULL;
	CHECK_MSG(jemalloc_profile_read(path, &p, &e) == 0, "%s", e.msg);
	if (p) {
		CHECK(p->sample_period == 65536);
		const struct jemalloc_stack *top = NULL;
		for (size_t i = 0; i < p->nstacks; i++)
			if (!top || p->stacks[i].live.est_bytes > top->live.est_bytes)
				top = &p->stacks[i];
		CHECK(top != NULL);
		double est = top ? top->live.est_bytes : 0;
		printf("# retained by the fixture's count: %" PRIu64 "..%" PRIu64 " bytes; jemalloc's largest stack, "
		       "scaled: %.0f bytes (%" PRIu64 " sampled in %" PRIu64 " objects)\n",
		       before, after, est, top ? top->live.bytes : 0, top ? top->live.objects : 0);
		CHECK_MSG(est >= (double)before / 2 && est <= (double)after * 2,
			  "estimate %.0f outside 2x of the truth %" PRIu64 "..%" PRIu64, est, before, after);
		jemalloc_profile_free(p);
	}
	unlink(path);
	rmdir(dir);
	stop(&t);
}

static void inactive(const char *bin)
{
	struct target t = { 0 };
	CHECK(start(&t, bin, NULL, "prof:true,prof_active:false,lg_prof_sample:16") == 0);
	next_retained(&t);
	struct jemalloc_hooks hooks;
	hooks_for(t.pid, &hooks);
	struct session *s = attach_stopped(t.pid);
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	CHECK_MSG(s && jemalloc_inspect(s, &hooks, &jt, &e) == 0 && jt.state == JEMALLOC_PROF_INACTIVE, "%s", e.msg);
	CHECK_MSG(s && jemalloc_set_active(s, &jt, true, &e) == 0, "%s", e.msg);
	struct jemalloc_target again;
	CHECK_MSG(s && jemalloc_inspect(s, &hooks, &again, &e) == 0 && again.state == JEMALLOC_PROF_ACTIVE, "%s", e.msg);
	CHECK_MSG(s && jemalloc_set_active(s, &jt, false, &e) == 0 && jt.state == JEMALLOC_PROF_INACTIVE, "%s", e.msg);
	CHECK_MSG(s && jemalloc_inspect(s, &hooks, &again, &e) == 0 && again.state == JEMALLOC_PROF_INACTIVE, "%s",
		  e.msg);
	CHECK(s && session_end(s, &e) == 0);
	stop(&t);
}

int main(void)
{
	const char *fixtures = getenv("FIXTURES");
	if (!fixtures) {
		fprintf(stderr, "FIXTURES must be set (make check does)\n");
		return 2;
	}
	char jemservice[4096], counter[4096];
	snprintf(jemservice, sizeof jemservice, "%s/jemservice", fixtures);
	snprintf(counter, sizeof counter, "%s/counter", fixtures);
	signal(SIGPIPE, SIG_IGN);
	profiling(jemservice);
	inactive(jemservice);
	CHECK(state_of(jemservice, NULL, NULL) == JEMALLOC_PROF_OFF);
	char progress[] = "/tmp/xgdbprof-jemalloc-test-counter-XXXXXX";
	int fd = mkstemp(progress);
	CHECK(fd >= 0);
	CHECK(state_of(counter, progress, NULL) == JEMALLOC_ABSENT);
	if (fd >= 0) {
		close(fd);
		unlink(progress);
	}
	return test_exit_code();
}
