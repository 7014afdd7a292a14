/* test_tracer_codecheck.c — helper for the tracer's end-to-end tests:
 * prints how many bytes of PID's executable file mappings differ from their
 * files (0 when no breakpoint was left behind). Exit 0 when it could tell.
 * With --heal first, runs what xgdbprof runs after gdb died
 * (restore_set_after_gdb_died, with none of its own bytes remembered), then
 * counts: what a test plants by hand must be healed from the files. */
#include "session/restore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	bool heal = argc == 3 && strcmp(argv[1], "--heal") == 0;
	if (argc != 2 && !heal) {
		fprintf(stderr, "usage: %s [--heal] PID\n", argv[0]);
		return 2;
	}
	pid_t pid = (pid_t)atoi(argv[argc - 1]);
	struct xerr e;
	if (heal) {
		struct restore_set none;
		struct restore_report report;
		restore_set_init(&none, pid);
		int rc = restore_set_after_gdb_died(&none, 2000, &report, &e);
		restore_set_release(&none);
		if (rc < 0) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
	}
	long n = restore_count_code_differences(pid, &e);
	if (n < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("%ld\n", n);
	return 0;
}
