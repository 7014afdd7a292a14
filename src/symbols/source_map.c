#include "symbols/source_map.h"
#include "util/array.h"
#include "util/path.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct source_map_rule {
	char *from;
	char *to;
	size_t from_len;
};

enum rust_probe { RUST_PROBE_PENDING, RUST_PROBE_DONE };

struct source_map {
	struct source_map_rule *rules;
	size_t nrules, cap;
	char *rustc;               /* NULL: discovery off */
	enum rust_probe probe;
	bool rustc_ran;            /* `rustc -vV` answered */
	char rust_commit[41];      /* its commit-hash, "" when it gave none */
	char *rust_library;        /* .../lib/rustlib/src/rust/library, or NULL */
};


struct source_map *source_map_new(void)
{
	struct source_map *map = calloc(1, sizeof *map);
	if (!map)
		return NULL;
	const char *rustc = getenv("RUSTC");
	map->rustc = strdup(rustc && *rustc ? rustc : "rustc");
	if (!map->rustc) {
		free(map);
		return NULL;
	}
	return map;
}

void source_map_free(struct source_map *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->nrules; i++) {
		free(map->rules[i].from);
		free(map->rules[i].to);
	}
	free(map->rules);
	free(map->rustc);
	free(map->rust_library);
	free(map);
}

int source_map_add(struct source_map *map, const char *from, const char *to,
		   struct xerr *err)
{
	if (!from || !*from)
		return xerr_set(err, "source map rule has an empty FROM prefix");
	if (!to)
		to = "";
	struct source_map_rule *grown = array_grow(map->rules, &map->cap, map->nrules + 1, sizeof *grown);
	if (!grown)
		return xerr_oom_doing(err, "adding a source map rule");
	map->rules = grown;
	struct source_map_rule *r = &map->rules[map->nrules];
	r->from = path_normalize(from);
	r->to = path_normalize(to);
	if (!r->from || !r->to) {
		free(r->from);
		free(r->to);
		return xerr_oom_doing(err, "adding a source map rule");
	}
	r->from_len = strlen(r->from);
	map->nrules++;
	return 0;
}

int source_map_add_spec(struct source_map *map, const char *spec, struct xerr *err)
{
	const char *eq = spec ? strchr(spec, '=') : NULL;
	if (!eq || eq == spec)
		return xerr_set(err, "bad --source-map '%s': expected FROM=TO, e.g. "
				"--source-map /build/src=/home/me/src", spec ? spec : "");
	char *from = strndup(spec, (size_t)(eq - spec));
	if (!from)
		return xerr_oom_doing(err, "adding a source map rule");
	int rc = source_map_add(map, from, eq + 1, err);
	free(from);
	return rc;
}

void source_map_set_rustc(struct source_map *map, const char *rustc)
{
	free(map->rustc);
	map->rustc = rustc ? strdup(rustc) : NULL;
	free(map->rust_library);
	map->rust_library = NULL;
	map->rustc_ran = false;
	map->rust_commit[0] = '\0';
	map->probe = RUST_PROBE_PENDING;
}

bool source_map_active(const struct source_map *map)
{
	return map && (map->nrules > 0 || map->rustc);
}

/* Runs `RUSTC ARG1 [ARG2]` without a shell and returns what it printed
 * (malloc'd, at most 4 KiB), or NULL if rustc is missing or fails. */
static char *run_rustc(const char *rustc, const char *arg1, const char *arg2)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	char *argv[] = {(char *)rustc, (char *)arg1, (char *)arg2, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, rustc, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		return NULL;
	}
	char buf[4096];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(pipefd[0], buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof buf - 1)
			break;
	}
	close(pipefd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return NULL;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NULL;
	buf[len] = '\0';
	return strdup(buf);
}

/* The sysroot `rustc --print sysroot` prints (its first line), or NULL. */
static char *run_rustc_sysroot(const char *rustc)
{
	char *out = run_rustc(rustc, "--print", "sysroot");
	if (!out)
		return NULL;
	out[strcspn(out, "\r\n")] = '\0';
	if (out[0] != '/') {
		free(out);
		return NULL;
	}
	return out;
}

static bool is_commit(const char *s, size_t len)
{
	if (len != 40)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The commit `rustc -vV` names ("commit-hash: <40 hex>") into commit; ""
 * when it names none (a rustc built outside git says "unknown"). Returns
 * false when rustc did not run. */
static bool run_rustc_commit(const char *rustc, char commit[41])
{
	commit[0] = '\0';
	char *out = run_rustc(rustc, "-vV", NULL);
	if (!out)
		return false;
	static const char key[] = "\ncommit-hash: ";
	const char *at = strstr(out, key);
	if (at) {
		at += sizeof key - 1;
		size_t len = strcspn(at, "\r\n \t");
		if (is_commit(at, len)) {
			for (size_t i = 0; i < 40; i++)
				commit[i] = (char)tolower((unsigned char)at[i]);
			commit[40] = '\0';
		}
	}
	free(out);
	return true;
}

static void rust_probe(struct source_map *map)
{
	if (map->probe == RUST_PROBE_DONE || !map->rustc)
		return;
	map->probe = RUST_PROBE_DONE;
	map->rustc_ran = run_rustc_commit(map->rustc, map->rust_commit);
	if (!map->rustc_ran)
		return;
	char *sysroot = run_rustc_sysroot(map->rustc);
	if (!sysroot)
		return;
	static const char suffix[] = "/lib/rustlib/src/rust/library";
	size_t len = strlen(sysroot);
	char *lib = malloc(len + sizeof suffix);
	if (lib) {
		memcpy(lib, sysroot, len);
		memcpy(lib + len, suffix, sizeof suffix);
		struct stat st;
		if (stat(lib, &st) != 0 || !S_ISDIR(st.st_mode)) {
			free(lib);
			lib = NULL;
		}
	}
	free(sysroot);
	map->rust_library = lib;
}

const char *source_map_rust_library(struct source_map *map)
{
	rust_probe(map);
	return map->rust_library;
}

const char *source_map_rustc_commit(struct source_map *map)
{
	rust_probe(map);
	return map->rustc_ran ? map->rust_commit : NULL;
}

static char *join(const char *head, const char *tail)
{
	size_t hl = strlen(head), tl = strlen(tail);
	char *out = malloc(hl + tl + 1);
	if (out) {
		memcpy(out, head, hl);
		memcpy(out + hl, tail, tl + 1);
	}
	return out;
}

const char *source_map_rust_std_path(const char *path, char commit[41])
{
	static const char prefix[] = "/rustc/";
	static const char lib[] = "/library/";
	if (!path || strncmp(path, prefix, sizeof prefix - 1) != 0)
		return NULL;
	const char *p = path + sizeof prefix - 1;
	for (int i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)p[i]))
			return NULL;
	if (strncmp(p + 40, lib, sizeof lib - 1) != 0 || !p[40 + sizeof lib - 1])
		return NULL;
	if (commit) {
		for (int i = 0; i < 40; i++)
			commit[i] = (char)tolower((unsigned char)p[i]);
		commit[40] = '\0';
	}
	return p + 40 + sizeof lib - 1;
}

const char *source_map_shown_path(const char *path)
{
	const char *rest = source_map_rust_std_path(path, NULL);
	return rest ? rest : path;
}

enum source_map_rust source_map_rust_status(struct source_map *map, const char *path)
{
	char commit[41];
	if (!map || !source_map_rust_std_path(path, commit))
		return SOURCE_MAP_RUST_NOT_STD;
	const char *local = source_map_rustc_commit(map);
	if (!local)
		return SOURCE_MAP_RUST_NO_RUSTC;
	if (strcmp(local, commit) != 0)
		return SOURCE_MAP_RUST_OTHER_COMMIT;
	return map->rust_library ? SOURCE_MAP_RUST_MAPPED : SOURCE_MAP_RUST_NO_SRC;
}

char *source_map_apply_rules(struct source_map *map, const char *path)
{
	if (!map || !path)
		return NULL;
	char *normalized = NULL;
	if (map->nrules && path[0] == '/' && path_has_dot_components(path)) {
		normalized = path_normalize(path);
		if (normalized)
			path = normalized;
	}
	const struct source_map_rule *best = NULL;
	for (size_t i = 0; i < map->nrules; i++) {
		const struct source_map_rule *r = &map->rules[i];
		bool root = r->from_len == 1 && r->from[0] == '/';
		if (strncmp(path, r->from, r->from_len) != 0)
			continue;
		char next = path[r->from_len];
		if (!root && next != '\0' && next != '/')
			continue;
		if (!best || r->from_len >= best->from_len)
			best = r;
	}
	char *mapped = NULL;
	if (best) {
		const char *tail = path + best->from_len;
		if (best->from_len == 1 && best->from[0] == '/')
			tail = path;   /* "/" maps every absolute path: keep its separator */
		mapped = join(best->to, tail);
	}
	free(normalized);
	return mapped;
}

char *source_map_apply(struct source_map *map, const char *path)
{
	char *mapped = source_map_apply_rules(map, path);
	if (mapped || !map || !path)
		return mapped;
	/* Only the sources of the very rustc that built the code: another
	 * release's file has other lines, and would be shown as the hot one. */
	if (source_map_rust_status(map, path) != SOURCE_MAP_RUST_MAPPED)
		return NULL;
	const char *rest = source_map_rust_std_path(path, NULL);
	size_t ll = strlen(map->rust_library), rl = strlen(rest);
	char *out = malloc(ll + 1 + rl + 1);
	if (out) {
		memcpy(out, map->rust_library, ll);
		out[ll] = '/';
		memcpy(out + ll + 1, rest, rl + 1);
	}
	return out;
}
