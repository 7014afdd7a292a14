/* cmd_continuous.c — --every PERIOD: one ordinary run (run_recipe) per
 * window, the target detached and untraced between windows
 * (docs/continuous.md).
 *
 * Layout of -o DIR, which other tools (`xgdbprof insights`) rely on:
 *   DIR/cpu_profile_YYYYmmdd_HHMMSS.pb.gz  the window's pprof (UTC start);
 *                                          memory_profile_... with --recipe heap
 *   DIR/YYYYmmdd_HHMMSS/                   the run's usual outputs, and its
 *                                          report text in report.txt
 *   DIR/index.jsonl                        one JSON object per window
 * Retention (--keep, --max-size) deletes only names of this layout, only
 * files the index says a window wrote (or a run's fixed names), and never
 * through a symlink.
 */
#include "config.h"
#include "cli/cli.h"
#include "procfs/proc.h"
#include "report/profile.h"
#include "report/report_metrics.h"
#include "session/signals.h"
#include "util/clock.h"
#include "util/output_file.h"
#include "util/array.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STAMP_LEN 15   /* YYYYmmdd_HHMMSS */
#define PROFILE_PREFIX "cpu_profile_"
#define MEMORY_PROFILE_PREFIX "memory_profile_"   /* the heap recipe's windows */
#define PROFILE_SUFFIX ".pb.gz"
#define INDEX_NAME "index.jsonl"
#define CONTINUOUS_FEW_SAMPLES 30   /* insights marks windows of fewer stacks alike */
/* A run's own fixed names: what retention may delete in a window's folder
 * when the index no longer lists that window's files. */
static const char *const run_fixed_names[] = {
	"profile.json", "profile.pb.gz", "profile.speedscope.json", "report.txt",
};

struct window {
	int number;
	char stamp[STAMP_LEN + 1];
	char start[32], end[32];      /* ISO 8601, UTC */
	pid_t pid, previous_pid;
	const char *status;
	int cut_by;                  /* the signal (SIGINT, SIGTERM) that ended the window early, 0 if none */
	struct run_outcome outcome;
	cJSON *files;                 /* names relative to DIR */
};

struct continuous {
	const struct run_request *base;
	const struct continuous_request *req;
	const char *dir;
	bool tty;
	pid_t pid;                    /* the process followed, 0 before the first */
	uint64_t pid_start;           /* its start time: a reused PID is another process */
	char last_stamp[STAMP_LEN + 1];
	bool attached_once;           /* a window has sampled (attach works) */
	bool warned_foreign;
};

static bool is_stamp(const char *s)
{
	for (int i = 0; i < STAMP_LEN; i++)
		if (i == 8 ? s[i] != '_' : !isdigit((unsigned char)s[i]))
			return false;
	return s[STAMP_LEN] == '\0';
}

/* The stamp of DIR's entry `name` if it is one of our pprof files, else NULL. */
static const char *profile_file_stamp(const char *name, char *stamp)
{
	const char *kind = strncmp(name, MEMORY_PROFILE_PREFIX, strlen(MEMORY_PROFILE_PREFIX)) == 0 ? MEMORY_PROFILE_PREFIX
												      : PROFILE_PREFIX;
	size_t prefix = strlen(kind);
	if (strncmp(name, kind, prefix) != 0 || strlen(name) != prefix + STAMP_LEN + strlen(PROFILE_SUFFIX) ||
	    strcmp(name + prefix + STAMP_LEN, PROFILE_SUFFIX) != 0)
		return NULL;
	memcpy(stamp, name + prefix, STAMP_LEN);
	stamp[STAMP_LEN] = '\0';
	return is_stamp(stamp) ? stamp : NULL;
}

static void iso_utc(const struct timespec *t, char *out, size_t size)
{
	struct tm tm;
	gmtime_r(&t->tv_sec, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void format_period(double seconds, char *out, size_t size)
{
	long s = lround(seconds);
	if (s >= 3600)
		snprintf(out, size, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(out, size, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(out, size, "%lds", s);
}

static int check_request(const struct run_request *run, const struct continuous_request *cont)
{
	if (cont->every_s <= 0)
		return cli_usage_error(NULL, "--keep, --max-size, --name and --metrics-file go with --every PERIOD "
				       "(e.g. --every 5m --duration 60s -o DIR)");
	if (cont->metrics_top && !cont->metrics_file)
		return cli_usage_error(NULL, "--metrics-top goes with --metrics-file PATH");
	/* the file is replaced each window by a rename in its directory: that
	 * directory must exist and take files (checked now, not after the
	 * first window) */
	if (cont->metrics_file && !output_file_dir_writable(cont->metrics_file))
		return cli_usage_error(NULL, "--metrics-file takes a file in a directory that exists and that "
				       "xgdbprof can write (the node exporter's --collector.textfile.directory), "
				       "e.g. /var/lib/prometheus/node-exporter/xgdbprof.prom");
	if (run->launch)
		return cli_usage_error(NULL, "--every samples a running process: give a PID or --name NAME, "
				       "not -- COMMAND");
	if (!run->output_dir)
		return cli_usage_error(NULL, "--every needs -o DIR: each window writes its files there");
	if (!run->duration_set || run->duration_s <= 0)
		return cli_usage_error(NULL, "--every needs --duration, how long each window samples "
				       "(e.g. --every 5m --duration 60s)");
	if (cont->every_s < 1)
		return cli_usage_error(NULL, "--every takes a period of at least 1s (windows are named by "
				       "the second they start)");
	if (cont->every_s < run->duration_s)
		return cli_usage_error(NULL, "--every is shorter than --duration: a window must end before "
				       "the next begins; give a longer --every or a shorter --duration");
	if (cont->name) {
		if (run->argc > 0)
			return cli_usage_error(NULL, "give a PID or --name NAME, not both");
		if (!cont->name[0] || strchr(cont->name, '/'))
			return cli_usage_error(NULL, "--name takes a process name as `ps -o comm` shows it "
				       "(no '/'), e.g. --name nginx");
		return XGP_EXIT_OK;
	}
	pid_t pid;
	if (run->argc != 1 || cli_parse_pid(run->argv[0], &pid) < 0)
		return cli_usage_error(NULL, "--every needs one PID, or --name NAME to follow a process "
				       "across restarts");
	return XGP_EXIT_OK;
}

/* Finds the window's process. Returns its PID, or 0 with w->status said. */
static pid_t find_target(struct continuous *c, struct window *w)
{
	if (!c->req->name) {
		if (proc_start_ticks(c->pid) != c->pid_start) {
			w->status = "target vanished";
			w->pid = c->pid;
			return 0;
		}
		return c->pid;
	}
	uint64_t start;
	int matches;
	pid_t pid = proc_find_by_name(c->req->name, &start, &matches);
	if (!pid) {
		w->status = "target not found";
		return 0;
	}
	if (c->pid && (pid != c->pid || start != c->pid_start)) {
		w->status = "restarted";
		w->previous_pid = c->pid;
	}
	c->pid = pid;
	c->pid_start = start;
	return pid;
}

/* The window pprof's prefix: a heap run's profile is memory, not CPU. */
static const char *window_prefix(const struct continuous *c)
{
	const char *r = c->base->recipe;
	return r && strcmp(r, "heap") == 0 ? MEMORY_PROFILE_PREFIX : PROFILE_PREFIX;
}

/* Copies the window's DIR/STAMP/profile.pb.gz to DIR/cpu_profile_STAMP.pb.gz
 * (through output_file: a fresh file renamed into place). 1 copied, 0 no
 * such profile, -1 failed (said). */
static int copy_pprof(const struct continuous *c, const struct window *w)
{
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(from, sizeof from, "%s/%s/profile.pb.gz", c->dir, w->stamp);
	snprintf(to, sizeof to, "%s/%s%s" PROFILE_SUFFIX, c->dir, window_prefix(c), w->stamp);
	int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 && errno == ENOENT)
		return 0;   /* a run that sampled nothing */
	if (in < 0) {
		cli_error("cannot read %s: %s", from, strerror(errno));
		return -1;
	}
	struct output_file out;
	struct xerr e;
	if (output_file_open(&out, to, &e) < 0) {
		close(in);
		cli_error("%s", e.msg);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, out.stream);
	int read_errno = n < 0 ? errno : 0;
	close(in);
	if (read_errno) {
		output_file_abort(&out);
		cli_error("cannot read %s: %s", from, strerror(read_errno));
		return -1;
	}
	if (output_file_commit(&out, &e) < 0) {
		cli_error("%s", e.msg);
		return -1;
	}
	return 1;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the regular files the run left in its fresh folder into w->files
 * (after the pprof copy); removes the folder if the run wrote nothing. */
static void list_window_files(const struct continuous *c, struct window *w, bool copied)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", c->dir, w->stamp);
	if (copied) {
		char name[64];
		snprintf(name, sizeof name, "%s%s" PROFILE_SUFFIX, window_prefix(c), w->stamp);
		cJSON_AddItemToArray(w->files, cJSON_CreateString(name));
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		char **grown = array_grow(names, &cap, n + 1, sizeof *grown);
		if (!grown)
			break;
		names = grown;
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, compare_names);
	for (size_t i = 0; i < n; i++) {
		char rel[STAMP_LEN + 2 + NAME_MAX + 1];
		snprintf(rel, sizeof rel, "%s/%s", w->stamp, names[i]);
		cJSON_AddItemToArray(w->files, cJSON_CreateString(rel));
		free(names[i]);
	}
	free(names);
	if (n == 0)
		rmdir(path);   /* ours, made for this window, and empty */
}

static cJSON *number_or_null(double value)
{
	return isfinite(value) ? cJSON_CreateNumber(round(value * 100) / 100) : cJSON_CreateNull();
}

/* The window's status as index.jsonl and the window's line say it. */
static void window_status_text(const struct window *w, char *buf, size_t size)
{
	if (w->previous_pid && strcmp(w->status, "restarted") == 0)
		snprintf(buf, size, "restarted: pid %d \u2192 %d", (int)w->previous_pid, (int)w->pid);
	else if (w->cut_by && strcmp(w->status, "ok") == 0)
		snprintf(buf, size, "cut short by SIG%s", sigabbrev_np(w->cut_by) ? sigabbrev_np(w->cut_by) : "NAL");
	else
		snprintf(buf, size, "%s", w->status);
}

static cJSON *window_json(const struct window *w)
{
	cJSON *o = cJSON_CreateObject();
	char status[96];
	window_status_text(w, status, sizeof status);
	cJSON_AddStringToObject(o, "window", w->stamp);
	cJSON_AddStringToObject(o, "start", w->start);
	cJSON_AddStringToObject(o, "end", w->end);
	cJSON_AddItemToObject(o, "pid", w->pid ? cJSON_CreateNumber(w->pid) : cJSON_CreateNull());
	if (w->previous_pid)
		cJSON_AddNumberToObject(o, "previous_pid", w->previous_pid);
	cJSON_AddStringToObject(o, "status", status);
	cJSON_AddItemToObject(o, "cpu_min_pct", number_or_null(w->outcome.cpu_min_pct));
	cJSON_AddItemToObject(o, "cpu_avg_pct", number_or_null(w->outcome.cpu_avg_pct));
	cJSON_AddItemToObject(o, "cpu_max_pct", number_or_null(w->outcome.cpu_max_pct));
	cJSON_AddItemToObject(o, "stopped_pct", number_or_null(w->outcome.stopped_pct));
	cJSON_AddItemToObject(o, "held_max_pct", number_or_null(w->outcome.held_max_pct));
	cJSON_AddItemToObject(o, "samples", w->outcome.samples >= 0 ? cJSON_CreateNumber((double)w->outcome.samples)
								     : cJSON_CreateNull());
	/* insights marks such a window too: its shares are noise */
	if (w->outcome.samples >= 0 && w->outcome.samples < CONTINUOUS_FEW_SAMPLES)
		cJSON_AddStringToObject(o, "note", "fewer than 30 samples: a share over so few moves by "
						   "±17 points or more by chance alone");
	cJSON_AddItemToObject(o, "files", cJSON_Duplicate(w->files, true));
	return o;
}

/* --- Retention ------------------------------------------------------ */

struct stored_window {
	char stamp[STAMP_LEN + 1];
	bool has_pprof, has_folder;
	uint64_t bytes;
};

struct index_line {
	cJSON *json;
	char stamp[STAMP_LEN + 1];
	bool has_files;
};

struct index {
	struct index_line *lines;
	size_t n, cap;
};

static void index_free(struct index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		cJSON_Delete(ix->lines[i].json);
	free(ix->lines);
}

static int index_add(struct index *ix, cJSON *json)
{
	struct index_line *grown = array_grow(ix->lines, &ix->cap, ix->n + 1, sizeof *grown);
	if (!grown) {
		cJSON_Delete(json);
		return -1;
	}
	ix->lines = grown;
	struct index_line *l = &ix->lines[ix->n++];
	l->json = json;
	const char *stamp = cJSON_GetStringValue(cJSON_GetObjectItem(json, "window"));
	snprintf(l->stamp, sizeof l->stamp, "%s", stamp && is_stamp(stamp) ? stamp : "");
	l->has_files = cJSON_GetArraySize(cJSON_GetObjectItem(json, "files")) > 0;
	return 0;
}

/* Reads DIR/index.jsonl (never through a symlink); lines that are not one
 * of our windows are dropped. */
static void index_read(const struct continuous *c, struct index *ix)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/" INDEX_NAME, c->dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	FILE *f = NULL;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *line = NULL;
	size_t size = 0;
	while (getline(&line, &size, f) > 0) {
		cJSON *json = cJSON_Parse(line);
		if (json && cJSON_IsObject(json) && cJSON_GetStringValue(cJSON_GetObjectItem(json, "window")))
			index_add(ix, json);
		else
			cJSON_Delete(json);
	}
	free(line);
	fclose(f);
}

static int index_write(const struct continuous *c, const struct index *ix, const bool *keep)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/" INDEX_NAME, c->dir);
	struct output_file out;
	struct xerr e;
	if (output_file_open(&out, path, &e) < 0)
		return cli_error("%s", e.msg);
	for (size_t i = 0; i < ix->n; i++) {
		if (!keep[i])
			continue;
		char *text = cJSON_PrintUnformatted(ix->lines[i].json);
		if (text)
			fprintf(out.stream, "%s\n", text);
		free(text);
	}
	if (output_file_commit(&out, &e) < 0)
		return cli_error("%s", e.msg);
	return 0;
}

static uint64_t folder_bytes(int dir_fd, const char *stamp)
{
	int fd = openat(dir_fd, stamp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	uint64_t bytes = 0;
	struct dirent *de;
	struct stat st;
	while ((de = readdir(d)) != NULL)
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			bytes += (uint64_t)st.st_size;
	closedir(d);
	return bytes;
}

static int compare_stored(const void *a, const void *b)
{
	return strcmp(((const struct stored_window *)a)->stamp, ((const struct stored_window *)b)->stamp);
}

/* Whether the folder STAMP holds what a window writes: a sampling run's
 * profile.json, or the report.txt every window with output writes (a
 * tracing recipe's window has no profile). */
static bool window_folder_written(int dir_fd, const char *stamp)
{
	static const char *const written[] = { "profile.json", "report.txt" };
	for (size_t i = 0; i < sizeof written / sizeof written[0]; i++) {
		char path[STAMP_LEN + 32];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", stamp, written[i]);
		if (fstatat(dir_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* The windows on disk, oldest first: a stamp with our pprof file or a
 * folder holding what a window writes. */
static size_t stored_windows(int dir_fd, struct stored_window **out)
{
	*out = NULL;
	int fd = dup(dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	struct stored_window *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char stamp[STAMP_LEN + 1];
		struct stat st;
		bool pprof = profile_file_stamp(de->d_name, stamp) != NULL;
		if (!pprof) {
			if (!is_stamp(de->d_name))
				continue;
			/* is_stamp: exactly STAMP_LEN characters (a copy by
			 * length, which -Wformat-truncation cannot misread) */
			memcpy(stamp, de->d_name, STAMP_LEN);
			stamp[STAMP_LEN] = '\0';
		}
		if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(pprof ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)))
			continue;
		if (!pprof && !window_folder_written(dir_fd, stamp))
			continue;
		size_t i = 0;
		while (i < n && strcmp(all[i].stamp, stamp) != 0)
			i++;
		if (i == n) {
			struct stored_window *grown = array_grow(all, &cap, n + 1, sizeof *grown);
			if (!grown)
				break;
			all = grown;
			memset(&all[n], 0, sizeof all[n]);
			snprintf(all[n].stamp, sizeof all[n].stamp, "%s", stamp);
			n++;
		}
		if (pprof) {
			all[i].has_pprof = true;
			all[i].bytes += (uint64_t)st.st_size;
		} else {
			all[i].has_folder = true;
			all[i].bytes += folder_bytes(dir_fd, stamp);
		}
	}
	closedir(d);
	if (n)
		qsort(all, n, sizeof *all, compare_stored);
	*out = all;
	return n;
}

/* Unlinks DIR/name if it is a regular file (never a link's target). */
static void remove_regular(int dir_fd, const char *name)
{
	struct stat st;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		unlinkat(dir_fd, name, 0);
}

static void delete_window(struct continuous *c, int dir_fd, const struct stored_window *w, const struct index *ix)
{
	char name[PATH_MAX];
	if (w->has_pprof) {
		snprintf(name, sizeof name, PROFILE_PREFIX "%s" PROFILE_SUFFIX, w->stamp);
		remove_regular(dir_fd, name);
		snprintf(name, sizeof name, MEMORY_PROFILE_PREFIX "%s" PROFILE_SUFFIX, w->stamp);
		remove_regular(dir_fd, name);
	}
	if (!w->has_folder)
		return;
	const cJSON *listed = NULL;
	for (size_t i = 0; i < ix->n && !listed; i++)
		if (strcmp(ix->lines[i].stamp, w->stamp) == 0)
			listed = cJSON_GetObjectItem(ix->lines[i].json, "files");
	const cJSON *file;
	cJSON_ArrayForEach(file, listed) {
		const char *rel = cJSON_GetStringValue(file);
		/* Only "STAMP/NAME": a plain name inside this window's folder. */
		if (rel && strncmp(rel, w->stamp, STAMP_LEN) == 0 && rel[STAMP_LEN] == '/' &&
		    output_name_check(rel + STAMP_LEN + 1, NULL) == 0)
			remove_regular(dir_fd, rel);
	}
	for (size_t i = 0; i < sizeof run_fixed_names / sizeof run_fixed_names[0]; i++) {
		snprintf(name, sizeof name, "%s/%s", w->stamp, run_fixed_names[i]);
		remove_regular(dir_fd, name);
	}
	if (unlinkat(dir_fd, w->stamp, AT_REMOVEDIR) < 0 && errno == ENOTEMPTY && !c->warned_foreign) {
		fprintf(stderr, "xgdbprof: kept the folder %s/%s: it holds files xgdbprof did not write there\n",
			c->dir, w->stamp);
		c->warned_foreign = true;
	}
}

/* Deletes the oldest windows beyond --keep and --max-size (the newest
 * always stays), then rewrites the index: the windows still on disk, and
 * of those that wrote nothing, the ones among the last --keep lines. */
static int retain(struct continuous *c, struct index *ix)
{
	int dir_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return cli_error("cannot open %s: %s", c->dir, strerror(errno));
	struct stored_window *stored;
	size_t n = stored_windows(dir_fd, &stored);
	long keep = c->req->keep;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += stored[i].bytes;
	size_t first_kept = 0;
	while (n - first_kept > 1 && ((long)(n - first_kept) > keep || (c->req->max_size && total > c->req->max_size))) {
		delete_window(c, dir_fd, &stored[first_kept], ix);
		total -= stored[first_kept].bytes;
		first_kept++;
	}
	bool *keep_line = calloc(ix->n ? ix->n : 1, sizeof *keep_line);
	if (!keep_line) {
		free(stored);
		close(dir_fd);
		return cli_error("out of memory");
	}
	for (size_t i = 0; i < ix->n; i++) {
		const struct index_line *l = &ix->lines[i];
		if (!l->has_files) {
			keep_line[i] = (long)(ix->n - i) <= keep;
			continue;
		}
		for (size_t j = first_kept; j < n && !keep_line[i]; j++)
			keep_line[i] = strcmp(stored[j].stamp, l->stamp) == 0;
	}
	int rc = index_write(c, ix, keep_line);
	free(keep_line);
	free(stored);
	close(dir_fd);
	return rc;
}

/* --- Prometheus metrics ------------------------------------------------ */

/* The window's figures as Prometheus text, into --metrics-file by a new
 * file renamed over it (a reader sees the old file or the new one, never
 * half of one; a link planted at the name is replaced, not followed). A
 * window without a profile (the target gone, not found) removes the file:
 * its series go stale rather than repeat the last window's. */
static void write_metrics(const struct continuous *c, const struct window *w)
{
	const char *path = c->req->metrics_file;
	if (!path)
		return;
	char profile_path[PATH_MAX + 64];
	snprintf(profile_path, sizeof profile_path, "%s/%s/profile.json", c->dir, w->stamp);
	struct xerr e = { "" };
	struct profile *p = access(profile_path, F_OK) == 0 ? profile_load(profile_path, &e) : NULL;
	if (!p) {
		if (unlink(path) != 0 && errno != ENOENT)
			cli_error("cannot remove %s: %s", path, strerror(errno));
		return;
	}
	struct timespec end;
	clock_gettime(CLOCK_REALTIME, &end);
	struct report_metrics_window fig = {
		.cpu_min_pct = w->outcome.cpu_min_pct, .cpu_avg_pct = w->outcome.cpu_avg_pct,
		.cpu_max_pct = w->outcome.cpu_max_pct, .end_unix_s = (double)end.tv_sec + end.tv_nsec / 1e9,
	};
	struct output_file out;
	if (output_file_open(&out, path, &e) < 0) {
		cli_error("%s", e.msg);
	} else if (report_metrics_prometheus(p, &fig, c->req->metrics_top, out.stream, &e) < 0) {
		output_file_abort(&out);
		cli_error("%s", e.msg);
	} else if (output_file_commit(&out, &e) < 0) {
		cli_error("%s", e.msg);
	}
	profile_free(p);
}

/* --- The loop ------------------------------------------------------- */

/* One line per window on standard error: on a terminal it replaces the
 * countdown; in a pipe or a journal it is a plain line, so a service's log
 * shows each window. */
static void say_window(const struct continuous *c, const struct window *w)
{
	char figures[192] = "", observer[64];
	/* the figure the budget keeps, as the report's observer line */
	if (isfinite(w->outcome.held_max_pct))
		snprintf(observer, sizeof observer, "each thread held at most %.2f%%", w->outcome.held_max_pct);
	else
		snprintf(observer, sizeof observer, "stopped %.2f%%", w->outcome.stopped_pct);
	if (w->outcome.samples >= 0)
		snprintf(figures, sizeof figures, ", CPU %.0f/%.0f/%.0f%% min/avg/max, %s, %lld sample%s",
			 w->outcome.cpu_min_pct, w->outcome.cpu_avg_pct, w->outcome.cpu_max_pct, observer,
			 (long long)w->outcome.samples, w->outcome.samples == 1 ? "" : "s");
	else if (isfinite(w->outcome.stopped_pct))
		snprintf(figures, sizeof figures, ", %s", observer);
	const cJSON *first = cJSON_GetArrayItem(w->files, 0);
	fprintf(stderr, "%sxgdbprof: window %d (%s UTC)", c->tty ? "\r\033[K" : "", w->number, w->stamp);
	if (w->pid)
		fprintf(stderr, ", pid %d", (int)w->pid);
	char status[96];
	window_status_text(w, status, sizeof status);
	fprintf(stderr, ": %s%s", status, figures);
	if (first)
		fprintf(stderr, " -> %s/%s", c->dir, cJSON_GetStringValue(first));
	fputc('\n', stderr);
}

/* Waits until the monotonic time due_ns, with a countdown on a terminal.
 * Returns false if a signal came first. */
static bool wait_until(const struct continuous *c, uint64_t due_ns, int next_window)
{
	for (;;) {
		if (signals_pending())
			break;
		uint64_t now = monotonic_ns();
		if (now >= due_ns)
			break;
		double left = (double)(due_ns - now) / 1e9;
		if (c->tty) {
			char when[32];
			format_period(ceil(left), when, sizeof when);
			fprintf(stderr, "\r\033[Kxgdbprof: window %d in %s (target detached)", next_window, when);
		}
		cli_sleep_unless_signalled(left > 1 ? 1 : left);
	}
	if (c->tty)
		fputs("\r\033[K", stderr);
	return !signals_pending();
}

/* Runs one window on pid into DIR/STAMP. Returns run_recipe's exit code. */
static int sample_window(struct continuous *c, struct window *w, pid_t pid)
{
	char folder[PATH_MAX + 32], report_path[PATH_MAX + 64], pid_text[16];
	snprintf(folder, sizeof folder, "%s/%s", c->dir, w->stamp);
	struct xerr e;
	if (output_dir_prepare(folder, true, &e) < 0)
		return cli_error("%s", e.msg);
	/* The report text each window would print goes into its folder. */
	struct output_file report;
	snprintf(report_path, sizeof report_path, "%s/report.txt", folder);
	if (output_file_open(&report, report_path, &e) < 0)
		return cli_error("%s", e.msg);
	snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
	char *argv[] = { pid_text, NULL };
	struct run_request run = *c->base;
	run.output_dir = folder;
	run.argv = argv;
	run.argc = 1;
	run.report_stream = report.stream;
	run.quiet = true;
	run.outcome = &w->outcome;
	int exit_code = run_recipe(&run);
	if (ftell(report.stream) > 0) {
		if (output_file_commit(&report, &e) < 0)
			cli_error("%s", e.msg);
	} else {
		output_file_abort(&report);
	}
	return exit_code;
}

static void window_begin(struct continuous *c, struct window *w, int number)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm;
	gmtime_r(&now.tv_sec, &tm);
	strftime(w->stamp, sizeof w->stamp, "%Y%m%d_%H%M%S", &tm);
	if (strcmp(w->stamp, c->last_stamp) == 0) {
		/* Two windows in one second would share a name: wait for the next. */
		struct timespec rest = { 0, 1000000000L - now.tv_nsec };
		nanosleep(&rest, NULL);
		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(w->stamp, sizeof w->stamp, "%Y%m%d_%H%M%S", &tm);
	}
	snprintf(c->last_stamp, sizeof c->last_stamp, "%s", w->stamp);
	iso_utc(&now, w->start, sizeof w->start);
	w->number = number;
	w->status = "ok";
	w->outcome = (struct run_outcome){
		.samples = -1, .cpu_min_pct = NAN, .cpu_avg_pct = NAN, .cpu_max_pct = NAN, .stopped_pct = NAN,
		.held_max_pct = NAN,
	};
	w->files = cJSON_CreateArray();
}

/* Runs window `number`; returns XGP_EXIT_OK to go on, else the exit code
 * to stop with (*stop set). */
static int run_window(struct continuous *c, int number, bool *stop)
{
	struct window w = { 0 };
	window_begin(c, &w, number);
	pid_t pid = find_target(c, &w);
	int exit_code = XGP_EXIT_OK;
	if (pid) {
		w.pid = pid;
		int ran = sample_window(c, &w, pid);
		/* a signal during the window ended it early: written, and said */
		w.cut_by = signals_pending();
		if (proc_start_ticks(pid) != c->pid_start || w.outcome.target_exited)
			w.status = "target vanished";
		else if (ran != XGP_EXIT_OK)
			w.status = "failed";
		/* Never attached, with the target there, and no window has:
		 * bad input (permissions, a stopped target) to fix, not wait out. */
		if (ran == XGP_EXIT_USAGE && w.outcome.pid == 0 && !c->attached_once &&
		    strcmp(w.status, "failed") == 0) {
			*stop = true;
			exit_code = ran;
		}
		c->attached_once |= w.outcome.pid != 0;
		int copied = copy_pprof(c, &w);
		list_window_files(c, &w, copied > 0);
	}
	if (!c->req->name && strcmp(w.status, "target vanished") == 0)
		*stop = true;
	struct timespec end;
	clock_gettime(CLOCK_REALTIME, &end);
	iso_utc(&end, w.end, sizeof w.end);
	struct index ix = { 0 };
	index_read(c, &ix);
	index_add(&ix, window_json(&w));
	if (retain(c, &ix) != 0)
		exit_code = exit_code != XGP_EXIT_OK ? exit_code : XGP_EXIT_FAILURE;
	index_free(&ix);
	write_metrics(c, &w);
	say_window(c, &w);
	if (!c->req->name && *stop && exit_code == XGP_EXIT_OK)
		fprintf(stderr, "xgdbprof: process %d is gone; stopping after %d window%s (--name NAME follows a "
			"process across restarts)\n", (int)c->pid, number, number == 1 ? "" : "s");
	cJSON_Delete(w.files);
	return exit_code;
}

int run_continuous(const struct run_request *run, const struct continuous_request *cont)
{
	int exit_code = check_request(run, cont);
	if (exit_code != XGP_EXIT_OK)
		return exit_code;
	struct continuous_request req = *cont;
	if (req.keep <= 0)
		req.keep = CONTINUOUS_DEFAULT_KEEP;
	struct continuous c = {
		.base = run, .req = &req, .dir = run->output_dir, .tty = isatty(STDERR_FILENO),
	};
	exit_code = run_recipe_check(run);
	if (exit_code != XGP_EXIT_OK)
		return exit_code;
	if (!req.name) {
		struct xerr e;
		cli_parse_pid(run->argv[0], &c.pid);
		if (proc_check_target(c.pid, &e) < 0)
			return cli_input_error("%s", e.msg);
		c.pid_start = proc_start_ticks(c.pid);
	}
	struct xerr e;
	if (output_dir_prepare(c.dir, true, &e) < 0)
		return cli_input_error("%s", e.msg);
	signals_install();
	uint64_t period_ns = (uint64_t)(req.every_s * 1e9);
	uint64_t due = monotonic_ns();
	bool stop = false;
	int windows = 0;
	while (!stop && wait_until(&c, due, windows + 1)) {
		exit_code = run_window(&c, ++windows, &stop);
		/* On the grid of --every from the first window. A window that
		 * ran past the next start skips it rather than run back to back:
		 * the target is never sampled more than --duration per --every. */
		uint64_t now = monotonic_ns();
		do
			due += period_ns;
		while (due <= now);
		if (signals_pending())
			break;
	}
	/* Continuous mode over: its series disappear rather than go on saying
	 * the last window is now. */
	if (req.metrics_file && unlink(req.metrics_file) != 0 && errno != ENOENT)
		cli_error("cannot remove %s: %s", req.metrics_file, strerror(errno));
	/* the summary at SIGINT/SIGTERM: on a terminal and in a journal alike */
	if (signals_pending())
		fprintf(stderr, "xgdbprof: stopped after %d window%s; index in %s/" INDEX_NAME "\n", windows,
			windows == 1 ? "" : "s", c.dir);
	return exit_code;
}
