## cli/: main, option parsing, one cmd_*.c per subcommand. Uses everything.
noinst_LIBRARIES += src/cli/libcli.a
src_cli_libcli_a_SOURCES = \
	src/cli/cli.c \
	src/cli/cli.h \
	src/cli/cmd_check.c \
	src/cli/cmd_continuous.c \
	src/cli/cmd_demangle.c \
	src/cli/cmd_dump.c \
	src/cli/cmd_insights.c \
	src/cli/cmd_open.c \
	src/cli/cmd_probes.c \
	src/cli/cmd_recipes.c \
	src/cli/cmd_report.c \
	src/cli/cmd_run.c \
	src/cli/cmd_top.c \
	src/cli/commands.h \
	src/cli/jemalloc_heap.c \
	src/cli/jemalloc_heap.h \
	src/cli/profile_exports.c

xgdbprof_SOURCES = src/cli/main.c
xgdbprof_LDADD = $(cli_ldadd)
