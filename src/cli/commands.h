/* commands.h — one entry point per subcommand, each in src/cli/cmd_<name>.c.
 *
 * Contract: cmd_X(argc, argv) gets argv[0] == "X" (the subcommand name) and
 * the remaining arguments unparsed; it returns an exit code from error.h and
 * prints its own diagnostics (one line, naming the fix) on stderr.
 */
#ifndef XGDBPROF_COMMANDS_H
#define XGDBPROF_COMMANDS_H

int cmd_dump(int argc, char **argv);
int cmd_demangle(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_recipes(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_open(int argc, char **argv);
int cmd_probes(int argc, char **argv);
int cmd_insights(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
