/* cli.h — what every subcommand shares: global options, parsing of PIDs and
 * durations, and the one-line error convention ("xgdbprof: MESSAGE").
 *
 * cli_error/cli_usage_error print one line to stderr and return the exit code
 * to use (XGP_EXIT_FAILURE / XGP_EXIT_USAGE), so callers write
 * `return cli_usage_error(...)`.
 */
#ifndef XGDBPROF_CLI_H
#define XGDBPROF_CLI_H

#include "util/error.h"
#include "session/session.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CLI_MAX_SOURCE_MAPS 64

struct source_map;

struct cli_globals {
	const char *gdb_path;      /* --gdb */
	const char *source_maps[CLI_MAX_SOURCE_MAPS];  /* --source-map FROM=TO */
	int nsource_maps;
	bool verbose;              /* -v */
	enum cli_stop_mode { CLI_STOP_AUTO, CLI_STOP_ALL, CLI_STOP_NON } stop_mode;  /* --all-stop, --non-stop */
	int timeout_ms;            /* --timeout */
	enum cli_links { CLI_LINKS_AUTO, CLI_LINKS_ALWAYS, CLI_LINKS_NEVER } links;  /* --links, --no-links */
	uint64_t start_ns;         /* CLOCK_MONOTONIC when xgdbprof started */
	bool no_entry_counters;    /* --no-entry-counters: no counting jumps (trace/entry_counter.h) */
};

extern struct cli_globals cli_globals;

struct session_options cli_session_options(void);

/* The source map the --source-map options describe (plus rust-src
 * discovery), or NULL with e. Caller frees with source_map_free. */
struct source_map *cli_source_map(struct xerr *e);

/* Whether source locations in a text report become OSC 8 hyperlinks:
 * --links / --no-links, else only on a terminal (to_tty) without NO_COLOR
 * (a pipe or a file would keep the escape sequences as bytes). */
bool cli_links_wanted(bool to_tty);

/* --links[=EDITOR] and --no-links, the same in every subcommand that prints
 * source locations: put CLI_LINK_OPTIONS in the getopt table and pass
 * getopt's c to cli_link_option, which sets cli_globals.links (and, for
 * --links=vscode|idea|kitty|file|TEMPLATE, the links' URL form: util/
 * hyperlink.h) and returns 1 for these two, 0 for any other c, and -1 for a
 * value it refuses (said on stderr: the caller exits with XGP_EXIT_USAGE). */
enum { CLI_OPT_LINKS = 0x4c00, CLI_OPT_NO_LINKS };
#define CLI_LINK_OPTIONS                                                        \
	{ "links", optional_argument, NULL, CLI_OPT_LINKS },                    \
	{ "no-links", no_argument, NULL, CLI_OPT_NO_LINKS }
int cli_link_option(int c);

/* Writes "path:line" (":line:column" when column > 0; the path alone when
 * line <= 0), the path escaped as target text, as an OSC 8 hyperlink when
 * links and the file is here (util/hyperlink.h). */
void cli_put_source_location(FILE *out, const char *path, int line, int column, bool links);

/* The profile a DIR|FILE argument of report/open names (DIR: its
 * profile.json). Returns XGP_EXIT_OK with *out set, or the exit code (said)
 * with *out NULL. */
struct profile;
int cli_load_profile_arg(const char *arg, struct profile **out);

/* Levenshtein distance between two short words (for "did you mean"). */
size_t cli_edit_distance(const char *a, const char *b);

/* Says "xgdbprof: MESSAGE" on stderr and returns status; MESSAGE is
 * written as target text (util/text_escape.h), so callers pass user and
 * target text as it is. cli_error is a
 * failure (XGP_EXIT_FAILURE); cli_input_error is bad input found after
 * option parsing (no such PID, permission denied, gdb missing:
 * XGP_EXIT_USAGE). */
int cli_say(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define cli_error(...) cli_say(XGP_EXIT_FAILURE, __VA_ARGS__)
#define cli_input_error(...) cli_say(XGP_EXIT_USAGE, __VA_ARGS__)
int cli_usage_error(const char *subcommand, const char *message);

/* The one-line message for a getopt_long failure (call it from the '?' or
 * ':' case with opterr = 0 and a leading ':' in the option string). */
int cli_getopt_error(const char *subcommand, int c, char **argv);

/* The report display options that `report` and `insights` share, their
 * getopt_long entries ending a subcommand's table (terminator included):
 * --top N, --functions N, --full, --color/--colour WHEN, --help. */
#define CLI_DISPLAY_OPTIONS                                                     \
	{ "top", required_argument, NULL, 'n' },                                \
	{ "functions", required_argument, NULL, 'F' },                          \
	{ "full", no_argument, NULL, 'l' },                                     \
	{ "color", required_argument, NULL, 'C' },                              \
	{ "colour", required_argument, NULL, 'C' },                             \
	{ "help", no_argument, NULL, 'h' },                                     \
	{ NULL, 0, NULL, 0 }
#define CLI_DISPLAY_SHORT_OPTIONS "n:h"
#define CLI_NOT_A_DISPLAY_OPTION (-1)

struct report_options;
/* Takes getopt's c and optarg when c is one of CLI_DISPLAY_OPTIONS but
 * --help, into ro and *color (the WHEN word, checked by cli_color_wanted).
 * Returns XGP_EXIT_OK, the usage error's exit status (said, naming the
 * subcommand), or CLI_NOT_A_DISPLAY_OPTION for any other c. */
int cli_display_option(const char *subcommand, int c, const char *arg, struct report_options *ro,
		       const char **color);
/* --color WHEN: "always", or "auto" with a terminal (to_tty) and no
 * NO_COLOR. Returns XGP_EXIT_OK with *wanted set, or the usage error's
 * exit status (said) for a WHEN that is not auto, always or never. */
int cli_color_wanted(const char *subcommand, const char *when, bool to_tty, bool *wanted);

/* "500ms", "30s", "5m", "1h", "2.5s", or a bare number of seconds. 0 ok, -1 bad. */
int cli_parse_duration(const char *text, double *seconds);
/* A duration option's argument from low_s to high_s seconds (0 and
 * INFINITY: no bound; DBL_MIN: positive): XGP_EXIT_OK with *out set, or the
 * usage error's exit status after saying usage (a whole sentence: "--window
 * takes a duration from 1s to 1h, such as 10s or 1m") for subcommand (NULL:
 * the main command). */
int cli_duration_option(const char *subcommand, const char *arg, double low_s, double high_s, const char *usage,
			double *out);
/* A whole decimal number from low to high, optionally followed by suffix
 * (NULL: none): 0 with *out set, -1 bad. */
int cli_parse_whole(const char *text, const char *suffix, long low, long high, long *out);
/* A sampling rate: 1 to 10000, optionally followed by "Hz": 0 with *hz
 * set, -1 bad. */
int cli_parse_frequency(const char *text, double *hz);
/* A positive decimal PID. 0 ok, -1 bad. */
int cli_parse_pid(const char *text, pid_t *pid);
/* Sleeps, returning early when a terminating signal arrives. */
void cli_sleep_unless_signalled(double seconds);
/* session_attach, its error said on stderr. Returns XGP_EXIT_OK with *s
 * set; XGP_EXIT_FAILURE when the process was alive and exited while gdb
 * attached (the PID was good: the job failed); else XGP_EXIT_USAGE (no
 * such PID, permissions, gdb missing: bad input). */
int cli_attach(struct session **s, pid_t pid, const struct session_options *opts);
/* Waits for a launched command, reports how it ended on stderr when it did
 * not exit 0, and returns the exit code xgdbprof should use: the command's
 * own status when `rc` is OK, else rc. */
int cli_wait_command(pid_t child, const char *name, int rc);

/* When gdb was lost (died, or stopped answering and was killed), heals and
 * releases the target (session_rescue) and says so on stderr, one line.
 * Returns XGP_EXIT_FAILURE if the target could not be healed, else rc. */
int cli_rescue_if_gdb_lost(struct session *s, int rc);

struct profile;
struct symbolizer;

/* Records every module sym describes in p (pprof's mappings need where each
 * was loaded and its build-id). */
void cli_profile_add_modules(struct profile *p, struct symbolizer *sym);

/* The names of the files a run wrote into its output directory, in order,
 * for its last line. Names past the capacity are dropped. */
#define CLI_MAX_FILES_WRITTEN 32
struct cli_files_written {
	char names[CLI_MAX_FILES_WRITTEN][128];
	int n;
};
void cli_files_written_add(struct cli_files_written *w, const char *name);

/* Writes p for other tools into dir (which exists): each format the table
 * marks beside_profile (report_format.h: profile.pb.gz for pprof,
 * profile.speedscope.json), each added to written once saved. Returns 0,
 * or XGP_EXIT_FAILURE (said). */
int cli_save_profile_exports(const struct profile *p, const char *dir, struct cli_files_written *written);

/* What a run found, for a caller running windows (--every): NAN / -1 where
 * the run did not get that far or did not sample. */
struct run_outcome {
	pid_t pid;                 /* 0: never attached */
	bool target_exited;        /* or exec'd: the process we sampled is gone */
	int64_t samples;
	double cpu_min_pct, cpu_avg_pct, cpu_max_pct;
	double stopped_pct;
	/* the figure the budget keeps: each thread's largest share held by
	 * the kernel's account (non-stop sampling); NAN when the run kept its
	 * budget on stopped_pct (all-stop, tracing) */
	double held_max_pct;
	double elapsed_s;
};

/* The default mode: run a recipe against a PID or a launched command. */
#define RUN_MAX_DEFINES 64
struct run_request {
	const char *recipe;        /* --recipe FILE|NAME */
	const char *recipe_text;   /* -e TEXT */
	const char *defines[RUN_MAX_DEFINES];  /* -D NAME=VALUE */
	int ndefines;
	double duration_s;
	bool duration_set;
	double frequency_hz;       /* 0: as the recipe says */
	const char *threads;       /* --threads running|all|/regex/, or NULL */
	int max_stopped_percent;   /* --max-stopped; 0: as the recipe says */
	size_t top;                /* --top: paths in text reports; 0: as the recipe says */
	bool annotate;             /* --annotate: source lines after each text report */
	bool jemalloc_activate;    /* --jemalloc-activate: prof.active on for a heap run, off after */
	const char *output_dir;
	bool launch;               /* argv is a command to start, not a PID */
	char **argv;
	int argc;
	/* Set by --every's loop (src/cli/cmd_continuous.c), else zero: */
	FILE *report_stream;       /* report() and print() text; NULL: stdout */
	bool quiet;                /* no "written to" / "saved in" lines per file */
	struct run_outcome *outcome;  /* filled when not NULL */
};

/* Runs the request (src/cli/cmd_run.c); returns the exit code. */
int run_recipe(const struct run_request *run);
/* What run_recipe checks before touching a target (the recipe, -D, -F,
 * -o), said on stderr; returns XGP_EXIT_OK or XGP_EXIT_USAGE. */
int run_recipe_check(const struct run_request *run);

/* --every: windows of run_recipe on a schedule (src/cli/cmd_continuous.c,
 * docs/continuous.md). */
struct continuous_request {
	double every_s;            /* 0: not asked for */
	const char *name;          /* --name: follow the process called NAME */
	long keep;                 /* --keep: windows kept; 0: the default */
	uint64_t max_size;         /* --max-size in bytes; 0: no limit */
	bool keep_set, max_size_set;
	const char *metrics_file;  /* --metrics-file: Prometheus text of the last window */
	size_t metrics_top;        /* --metrics-top: functions exported; 0: the default */
};
#define CONTINUOUS_DEFAULT_KEEP 288   /* a day of 5-minute windows */

/* Checks the combination, then runs windows until a signal (or, for a PID,
 * until that process is gone); returns the exit code. */
int run_continuous(const struct run_request *run, const struct continuous_request *cont);

/* "500M", "2G", "100k", "1.5G", or a bare number of bytes; K, M, G, T are
 * powers of 1024 (an optional "B" or "iB" after them). 0 ok, -1 bad. */
int cli_parse_size(const char *text, uint64_t *bytes);

#endif
