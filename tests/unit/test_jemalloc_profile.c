/* test_jemalloc_profile.c — jemalloc's heap_v2 dump parsed and unbiased as
 * jeprof does. The text is a dump jemalloc 5.3 (Debian 12's libjemalloc2)
 * wrote for tests/fixtures/jemservice under MALLOC_CONF=prof:true,
 * lg_prof_sample:16, through `call mallctl("prof.dump", ...)` from gdb; jeprof
 * --text printed 52.4 MB under ::from_elem for its second stack.
 *
 * Mutations caught (sed on src/procfs/jemalloc_profile.c, then make check):
 *  - scale by exp(-ratio), not 1 - exp(-ratio): s/double p = -expm1(-ratio);/double p = exp(-ratio);/
 *    (the estimate checks fail);
 *  - accept a thread's line before its stack's t*: line:
 *    s/} else if (whole || state == STACK_COUNTS) {/} else if (whole) {/ (bad input 2 accepted);
 *  - no overflow check on numbers: s/if (v > (UINT64_MAX - (uint64_t)d) \/ (uint64_t)base)/if (0)/
 *    (bad input 7 accepted).
 */
#include "procfs/jemalloc_profile.h"

#include "check.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static const char dump[] =
	"heap_v2/65536\n"
	"  t*: 745: 12298834 [0: 0]\n"
	"  t0: 2: 182013 [0: 0]\n"
	"  t1: 372: 6119648 [0: 0]\n"
	"  t2: 370: 6086746 [0: 0]\n"
	"@ 0x7f3201aa2630 0x7f3201aa2d21 0x7f3201a95f24 0x7f3201a22ed9 0x7f32014a57ba 0x7f3201d3fa1e\n"
	"  t*: 1: 82704 [0: 0]\n"
	"  t0: 1: 82704 [0: 0]\n"
	"@ 0x7f3201aa2630 0x7f3201aa2d21 0x7f3201a95f24 0x7f3201a295fc 0x55d441f79641 0x55d441f78257\n"
	"  t*: 742: 12206394 [3: 4096]\n"
	"  t1: 372: 6119648 [0: 0]\n"
	"  t2: 370: 6086746 [3: 4096]\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"55d441f40000-55d441f4f000 r--p 00000000 08:01 1234 /work/jemservice\n";

static bool near(double actual, double expected, double rel)
{
	return fabs(actual - expected) <= rel * fabs(expected);
}

int main(void)
{
	struct jemalloc_profile *p = NULL;
	struct xerr e = { 0 };
	CHECK(jemalloc_profile_parse(dump, sizeof dump - 1, &p, &e) == 0);
	if (!p) {
		fprintf(stderr, "parse failed: %s\n", e.msg);
		return test_exit_code();
	}
	CHECK(p->sample_period == 65536);
	CHECK(p->live.objects == 745 && p->live.bytes == 12298834);
	CHECK(p->nstacks == 2);
	const struct jemalloc_stack *s = &p->stacks[1];
	CHECK(s->npcs == 6 && s->pcs[0] == 0x7f3201aa2630ull && s->pcs[5] == 0x55d441f78257ull);
	CHECK(s->live.objects == 742 && s->live.bytes == 12206394);
	CHECK(s->accum.objects == 3 && s->accum.bytes == 4096);
	/* jeprof: ratio = 12206394/742/65536 = 0.2510, scale 1/(1-exp(-0.2510)) = 4.5049:
	 * 54.99e6 bytes (52.4 MiB, what jeprof printed) in 3343 objects */
	CHECK_MSG(near(s->live.est_bytes, 54.989e6, 0.001), "est bytes %.0f", s->live.est_bytes);
	CHECK_MSG(near(s->live.est_objects, 3342.7, 0.001), "est objects %.1f", s->live.est_objects);
	/* a 1365-byte mean at 64 KiB: scale 1/(1-exp(-1365.33/65536)) = 48.51 */
	CHECK_MSG(near(s->accum.est_bytes, 4096 * 48.51, 0.001), "accum est %.0f", s->accum.est_bytes);
	/* an 82704-byte allocation is sampled with probability 0.717 */
	CHECK_MSG(near(p->stacks[0].live.est_bytes, 82704 / (1 - exp(-82704.0 / 65536)), 1e-9), "large %.0f",
		  p->stacks[0].live.est_bytes);
	CHECK(near(p->live.est_bytes, p->stacks[0].live.est_bytes + s->live.est_bytes, 1e-12));
	jemalloc_profile_free(p);

	CHECK(jemalloc_sample_scale(0, 0, 65536) == 1.0);

	/* not the format: each refused with the line named */
	static const char *const bad[] = {
		"heap_v3/65536\n",
		"heap_v2/0\n",
		"heap_v2/65536\n@ 0x10 0x20\n  t1: 1: 16 [0: 0]\n  t*: 1: 16 [0: 0]\n",
		"heap_v2/65536\n@ 0x10\n  t*: 1: 16 [0: 0]\n  t*: 1: 16 [0: 0]\n",
		"heap_v2/65536\n@ 0x10\n",
		"heap_v2/65536\n@\n  t*: 1: 16 [0: 0]\n",
		"heap_v2/65536\n@ 0x10\n  t*: 1: 16\n",
		"heap_v2/65536\n@ 0x10\n  t*: 1: 99999999999999999999999 [0: 0]\n",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct jemalloc_profile *q = (struct jemalloc_profile *)1;
		CHECK_MSG(jemalloc_profile_parse(bad[i], strlen(bad[i]), &q, &e) == -1 && q == NULL,
			  "bad input %zu accepted", i);
	}
	return test_exit_code();
}
