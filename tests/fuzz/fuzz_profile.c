/* fuzz_profile.c — libFuzzer target: arbitrary bytes as a saved profile
 * (profile.json), read within small limits, then rendered in every format
 * report has, plain, inverted, by thread and against itself as a diff base,
 * into /dev/null. What must not happen: a crash, a leak, a hang, or a
 * renderer recursing on a stack's depth (issue 28 item 6). */
#include "report/profile.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small, so that inputs reach every limit quickly; profile_load's own are
 * the same checks with larger numbers. */
static const struct profile_limits fuzz_limits = {
	.stack_frames = 512,
	.frames = 4096,
	.samples = 4096,
	.modules = 64,
	.stack_refs = 65536,
	.stack_text_bytes = 1u << 20,
	.string_bytes = 4096,
};

static void render_all(const struct profile *p, FILE *sink)
{
	report_render_fn *renders[] = { report_text, report_svg, report_folded, report_json, report_pprof, report_speedscope };
	for (int variant = 0; variant < 3; variant++) {
		for (size_t i = 0; i < sizeof renders / sizeof *renders; i++) {
			struct report_options o;
			report_options_init(&o);
			o.inverted = variant == 1;
			o.thread_roots = variant == 2;
			o.diff_base = variant == 2 && renders[i] == report_svg ? p : NULL;
			o.width = variant == 1 ? 60 : 0;
			struct xerr e = { 0 };
			renders[i](p, sink, &o, &e);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/xgdbprof-fuzz-profile-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	struct xerr e = { 0 };
	struct profile *p = done == size ? profile_load_within(path, &fuzz_limits, &e) : NULL;
	unlink(path);
	if (p) {
		FILE *sink = fopen("/dev/null", "w");
		if (sink) {
			render_all(p, sink);
			fclose(sink);
		}
		profile_free(p);
	}
	return 0;
}
