/* main.c — argument dispatch. Subcommands live in src/cmd_*.c. */
#include "config.h"
#include "commands.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	/* name, entry point, one line for --help */
};

int main(int argc, char **argv)
{
	if (argc >= 2) {
		for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "xgdbprof: usage: xgdbprof COMMAND ...\n");
	return XGP_EXIT_USAGE;
}
