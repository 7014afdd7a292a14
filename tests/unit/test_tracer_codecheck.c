/* test_tracer_codecheck.c — helper for the tracer's end-to-end tests:
 * prints how many bytes of PID's executable file mappings differ from their
 * files (0 when no breakpoint was left behind). Exit 0 when it could tell. */
#include "target/restore.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PID\n", argv[0]);
		return 2;
	}
	struct xerr e;
	long n = restore_count_code_differences((pid_t)atoi(argv[1]), &e);
	if (n < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("%ld\n", n);
	return 0;
}
