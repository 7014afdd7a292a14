/* test_jemalloc_live.c — jemalloc_call.h against a live target under real
 * gdb: tests/fixtures/jemservice (tokio on the system's jemalloc, keeping
 * a 16 KiB vector every 50th write) started with and without profiling.
 *
 *  - MALLOC_CONF=prof:true,lg_prof_sample:16: the state is "profiling" at
 *    2^16; the dump jemalloc writes through our mallctl call parses, and its
 *    largest stack's estimate of live bytes (jemalloc_profile.h) lies within
 *    2x of the retained bytes the fixture itself counts (read from its
 *    stdout before and after the dump); the target runs on afterwards,
 *    writing truth lines, and our scratch page is gone from its maps.
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
 * (s/"opt.prof", &on/"opt.prof_accum", \&on/: state is off); leave the page
 * mapped (s/if (c->page) {/if (0) {/: the maps check fails).
 */
#include "check.h"
#include "procfs/jemalloc_profile.h"
#include "session/jemalloc_call.h"
#include "session/session.h"

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
};

static int start(struct target *t, const char *bin, const char *arg, const char *malloc_conf)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
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

/* The retained bytes of the fixture's next truth line; 0 on EOF. */
static uint64_t next_retained(struct target *t)
{
	char line[512];
	while (fgets(line, sizeof line, t->out)) {
		const char *r = strstr(line, " retained_bytes=");
		if (strncmp(line, "truth ", 6) == 0 && r)
			return strtoull(r + 16, NULL, 10);
	}
	return 0;
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

static bool maps_have(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && fgets(line, sizeof line, f)) {
		uint64_t lo = 0, hi = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && addr >= lo && addr < hi)
			found = true;
	}
	if (f)
		fclose(f);
	return found;
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
	struct session *s = attach_stopped(t.pid);
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	if (s && jemalloc_inspect(s, NULL, &jt, &e) == 0)
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
	uint64_t before = next_retained(&t);
	struct session *s = attach_stopped(t.pid);
	CHECK(s != NULL);
	if (!s) {
		stop(&t);
		return;
	}
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	CHECK_MSG(jemalloc_inspect(s, NULL, &jt, &e) == 0, "%s", e.msg);
	CHECK(jt.state == JEMALLOC_PROF_ACTIVE && jt.lg_prof_sample == 16 && !jt.prof_accum);
	CHECK_STR(jt.mallctl_name, "mallctl");
	CHECK(jt.scratch_page != 0 && !maps_have(t.pid, jt.scratch_page));

	char dir[] = "/tmp/xgdbprof-jemalloc-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/heap.prof", dir);
	CHECK_MSG(jemalloc_dump(s, &jt, path, &e) == 0, "%s", e.msg);
	CHECK(session_is_stopped(s));
	CHECK(session_end(s, &e) == 0);
	uint64_t after = next_retained(&t);
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
	struct session *s = attach_stopped(t.pid);
	struct jemalloc_target jt;
	struct xerr e = { 0 };
	CHECK(s && jemalloc_inspect(s, NULL, &jt, &e) == 0 && jt.state == JEMALLOC_PROF_INACTIVE);
	CHECK_MSG(s && jemalloc_set_active(s, &jt, true, &e) == 0, "%s", e.msg);
	struct jemalloc_target again;
	CHECK(s && jemalloc_inspect(s, NULL, &again, &e) == 0 && again.state == JEMALLOC_PROF_ACTIVE);
	CHECK(s && jemalloc_set_active(s, &jt, false, &e) == 0 && jt.state == JEMALLOC_PROF_INACTIVE);
	CHECK(s && jemalloc_inspect(s, NULL, &again, &e) == 0 && again.state == JEMALLOC_PROF_INACTIVE);
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
