#include "config.h"
#include "cli/cli.h"
#include "util/edit_distance.h"
#include "util/hyperlink.h"
#include "util/text_escape.h"
#include "session/signals.h"
#include "symbols/source_map.h"
#include "util/clock.h"
#include "procfs/proc.h"
#include "report/report.h"
#include "report/profile.h"
#include "session/restore.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

struct cli_globals cli_globals;

struct session_options cli_session_options(void)
{
	struct session_options o = {
		.gdb_path = cli_globals.gdb_path,
		.command_timeout_ms = cli_globals.timeout_ms,
		.verbose = cli_globals.verbose,
	};
	return o;
}

struct source_map *cli_source_map(struct xerr *e)
{
	struct source_map *map = source_map_new();
	if (!map) {
		xerr_oom(e);
		return NULL;
	}
	for (int i = 0; i < cli_globals.nsource_maps; i++)
		if (source_map_add_spec(map, cli_globals.source_maps[i], e) < 0) {
			xerr_prefix(e, "--source-map %s", cli_globals.source_maps[i]);
			source_map_free(map);
			return NULL;
		}
	return map;
}

bool cli_links_wanted(bool to_tty)
{
	if (cli_globals.links != CLI_LINKS_AUTO)
		return cli_globals.links == CLI_LINKS_ALWAYS;
	return to_tty && !getenv("NO_COLOR");
}

void cli_put_source_location(FILE *out, const char *path, int line, int column, bool links)
{
	bool linked = links && hyperlink_open(out, path, line);
	text_put(out, path, TEXT_FORM_TERMINAL);
	if (line > 0 && column > 0)
		fprintf(out, ":%d:%d", line, column);
	else if (line > 0)
		fprintf(out, ":%d", line);
	if (linked)
		hyperlink_close(out);
}

size_t cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d = edit_distance(a, la, b, lb);
	return d == EDIT_DISTANCE_TOO_LONG ? (la > lb ? la : lb) : d;
}

/* The one line of an error: it echoes the user's text (-D values, names
 * in a recipe) and lower layers' messages, which may hold anything: written
 * as target text is (util/text_escape.h), so no ESC or newline in them
 * splits the line or reaches the terminal raw. */
static void put_message(const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *message = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (message) {
		vsnprintf(message, (size_t)n + 1, fmt, again);
		text_put(stderr, message, TEXT_FORM_TERMINAL);
		free(message);
	} else {
		fputs("out of memory", stderr);
	}
	va_end(again);
}

static void put_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_say(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("xgdbprof: ", stderr);
	put_message(fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return status;
}

int cli_usage_error(const char *subcommand, const char *message)
{
	if (subcommand)
		put_line("xgdbprof %s: %s (see `xgdbprof %s --help`)", subcommand, message, subcommand);
	else
		put_line("xgdbprof: %s (see `xgdbprof --help`)", message);
	return XGP_EXIT_USAGE;
}

int cli_getopt_error(const char *subcommand, int c, char **argv)
{
	char message[160];
	const char *word = argv[optind - 1];
	if (c == ':')
		snprintf(message, sizeof message, "option %.100s needs a value", word);
	else if (optopt)
		snprintf(message, sizeof message, "unknown option -%c", optopt);
	else
		snprintf(message, sizeof message, "unknown option %.100s", word);
	return cli_usage_error(subcommand, message);
}

int cli_parse_whole(const char *text, const char *suffix, long low, long high, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (end != text && suffix && strcmp(end, suffix) == 0)
		end += strlen(suffix);
	if (end == text || *end || errno || v < low || v > high)
		return -1;
	*out = v;
	return 0;
}

int cli_duration_option(const char *subcommand, const char *arg, double low_s, double high_s, const char *usage,
			double *out)
{
	double v;
	if (cli_parse_duration(arg, &v) < 0 || v < low_s || v > high_s)
		return cli_usage_error(subcommand, usage);
	*out = v;
	return XGP_EXIT_OK;
}

int cli_link_option(int c)
{
	if (c != CLI_OPT_LINKS && c != CLI_OPT_NO_LINKS)
		return 0;
	cli_globals.links = c == CLI_OPT_LINKS ? CLI_LINKS_ALWAYS : CLI_LINKS_NEVER;
	if (c == CLI_OPT_LINKS && optarg && hyperlink_set_format(optarg) < 0) {
		cli_input_error("--links takes vscode, idea, kitty, file or a URL template with {path} "
				"(e.g. 'vscode://file{path}:{line}:{col}'), not '%.100s'", optarg);
		return -1;
	}
	return 1;
}

int cli_parse_frequency(const char *text, double *hz)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || (*end && strcasecmp(end, "hz") != 0) || !(v >= 1) || v > 10000)
		return -1;
	*hz = v;
	return 0;
}

/* A --top or --functions count: 1 to a million. */
static int parse_count(const char *text, size_t *out)
{
	long v;
	if (cli_parse_whole(text, NULL, 1, 1000000, &v) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

int cli_display_option(const char *subcommand, int c, const char *arg, struct report_options *ro,
		       const char **color)
{
	switch (c) {
	case 'n':
		if (parse_count(arg, &ro->top) < 0)
			return cli_usage_error(subcommand, "--top takes a positive number");
		return XGP_EXIT_OK;
	case 'F':
		if (parse_count(arg, &ro->top_functions) < 0)
			return cli_usage_error(subcommand, "--functions takes a positive number");
		ro->annotate_functions = ro->top_functions;
		return XGP_EXIT_OK;
	case 'l':
		ro->full_paths = true;
		return XGP_EXIT_OK;
	case 'C':
		*color = arg;
		return XGP_EXIT_OK;
	default:
		return CLI_NOT_A_DISPLAY_OPTION;
	}
}

int cli_color_wanted(const char *subcommand, const char *when, bool to_tty, bool *wanted)
{
	if (strcmp(when, "auto") && strcmp(when, "always") && strcmp(when, "never"))
		return cli_usage_error(subcommand, "--color is auto, always or never");
	*wanted = strcmp(when, "always") == 0 || (strcmp(when, "auto") == 0 && to_tty && !getenv("NO_COLOR"));
	return XGP_EXIT_OK;
}

int cli_parse_duration(const char *text, double *seconds)
{
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (end == text || errno || !isfinite(value) || value < 0)
		return -1;
	double scale;
	if (*end == '\0' || strcmp(end, "s") == 0)
		scale = 1;
	else if (strcmp(end, "ms") == 0)
		scale = 1e-3;
	else if (strcmp(end, "us") == 0)
		scale = 1e-6;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		scale = 60;
	else if (strcmp(end, "h") == 0)
		scale = 3600;
	else
		return -1;
	*seconds = value * scale;
	return 0;
}

int cli_parse_pid(const char *text, pid_t *pid)
{
	long value;
	if (cli_parse_whole(text, NULL, 1, 0x3fffffff, &value) < 0)
		return -1;
	*pid = (pid_t)value;
	return 0;
}

void cli_sleep_unless_signalled(double seconds)
{
	struct timespec step = { 0, 20 * 1000 * 1000 };
	double start = monotonic_ms();
	while (!signals_pending()) {
		if (monotonic_ms() - start >= seconds * 1e3)
			break;
		nanosleep(&step, NULL);
	}
}

int cli_rescue_if_gdb_lost(struct session *s, int rc)
{
	struct restore_report report;
	struct xerr e;
	int rescued = session_rescue(s, &report, &e);
	if (rescued < 0)
		return cli_error("gdb was lost and the target could not be healed: %s", e.msg);
	if (rescued > 0) {
		char what[200], fate[240];
		restore_report_describe(&report, what, sizeof what);
		if (restore_report_fate(&report, fate, sizeof fate))
			fprintf(stderr, "xgdbprof: gdb was lost, and %s (xgdbprof %s)\n", fate, what);
		else
			fprintf(stderr, "xgdbprof: gdb was lost; xgdbprof %s and left process %d running, detached\n",
				what, (int)session_pid(s));
		char children[320];
		if (restore_report_children(session_pid(s), children, sizeof children))
			fprintf(stderr, "xgdbprof: %s\n", children);
	}
	return rc;
}

int cli_attach(struct session **s, pid_t pid, const struct session_options *opts)
{
	struct xerr e;
	/* 0 for a zombie or no process: alive before only if not 0 */
	uint64_t started = proc_start_ticks(pid);
	int attached = session_attach(s, pid, opts, &e);
	if (attached == 0)
		return XGP_EXIT_OK;
	/* gdb lost during the attach, or the target gone: not the input's fault */
	if (attached == SESSION_ATTACH_LOST || (started && proc_start_ticks(pid) != started))
		return cli_error("%s", e.msg);
	return cli_input_error("%s", e.msg);
}

int cli_wait_command(pid_t child, const char *name, int rc)
{
	int status;
	pid_t got;
	do
		got = waitpid(child, &status, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return rc;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) != 0)
			fprintf(stderr, "xgdbprof: %s exited with status %d\n", name, WEXITSTATUS(status));
		return rc != XGP_EXIT_OK ? rc : WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "xgdbprof: %s was killed by signal %d (%s)\n", name, WTERMSIG(status),
			strsignal(WTERMSIG(status)));
		return rc != XGP_EXIT_OK ? rc : 128 + WTERMSIG(status);
	}
	return rc;
}

int cli_parse_size(const char *text, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (end == text || errno || !isfinite(value) || value < 0)
		return -1;
	double scale = 1;
	const char *unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (unit) {
		for (const char *u = units; u <= unit; u++)
			scale *= 1024;
		end++;
		if (strcmp(end, "iB") == 0)
			end += 2;
	}
	if (strcmp(end, "B") == 0)
		end++;
	if (*end || value * scale >= 1.8e19)
		return -1;
	*bytes = (uint64_t)(value * scale);
	return 0;
}

int cli_load_profile_arg(const char *arg, struct profile **out)
{
	struct xerr e = { "" };
	char path[4096];
	struct stat st;
	*out = NULL;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof path, "%s/profile.json", arg);
		if (access(path, F_OK) != 0 && errno == ENOENT)
			return cli_input_error("%s holds no profile.json: give the directory a run wrote (-o DIR, "
					       "named in its last line) or a profile.json", arg);
	} else
		snprintf(path, sizeof path, "%s", arg);
	*out = profile_load(path, &e);
	if (!*out)
		return cli_input_error("%s", e.msg);
	return XGP_EXIT_OK;
}
