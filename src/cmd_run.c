/* cmd_run.c — the default mode: a recipe against a PID or a command. */
#include "config.h"
#include "cli.h"

int run_recipe(const struct run_request *run)
{
	(void)run;
	return cli_error("running recipes against a process is not built yet");
}
