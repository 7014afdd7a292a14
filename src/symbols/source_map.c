#include "symbols/source_map.h"
#include "util/array.h"

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
	char *rust_library;        /* .../lib/rustlib/src/rust/library, or NULL */
};

/* An absolute path with "." and ".." components resolved and repeated or
 * trailing slashes dropped, lexically (no symlinks followed): a build
 * configured as ../configure names its sources "/b/build/../src/x.c" in
 * debug info and in $(abs_top_srcdir), the user writes "/b/src". A
 * relative path comes back as it is, without trailing slashes. */
static char *normalize_path(const char *path)
{
	size_t len = strlen(path);
	if (path[0] != '/') {
		while (len > 1 && path[len - 1] == '/')
			len--;
		return strndup(path, len);
	}
	char *out = malloc(len + 2);
	if (!out)
		return NULL;
	size_t n = 0;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t part = (size_t)(end - p);
		if (part == 0 || (part == 1 && p[0] == '.')) {
			/* nothing */
		} else if (part == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;   /* the slash before the dropped component */
		} else {
			out[n++] = '/';
			memcpy(out + n, p, part);
			n += part;
		}
		p = end;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

static bool has_dot_components(const char *path)
{
	return strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//");
}

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
		return xerr_set(err, "out of memory adding a source map rule");
	map->rules = grown;
	struct source_map_rule *r = &map->rules[map->nrules];
	r->from = normalize_path(from);
	r->to = normalize_path(to);
	if (!r->from || !r->to) {
		free(r->from);
		free(r->to);
		return xerr_set(err, "out of memory adding a source map rule");
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
		return xerr_set(err, "out of memory adding a source map rule");
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
	map->probe = RUST_PROBE_PENDING;
}

bool source_map_active(const struct source_map *map)
{
	return map && (map->nrules > 0 || map->rustc);
}

/* Runs `rustc --print sysroot` without a shell and returns its first output
 * line (malloc'd), or NULL if rustc is missing or fails. */
static char *run_rustc_sysroot(const char *rustc)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	char *argv[] = {(char *)rustc, (char *)"--print", (char *)"sysroot", NULL};
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
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf[0] == '/' ? strdup(buf) : NULL;
}

const char *source_map_rust_library(struct source_map *map)
{
	if (!map->rustc)
		return NULL;
	if (map->probe == RUST_PROBE_DONE)
		return map->rust_library;
	map->probe = RUST_PROBE_DONE;
	char *sysroot = run_rustc_sysroot(map->rustc);
	if (!sysroot)
		return NULL;
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
	return lib;
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

/* Returns the part of path after "/rustc/<40 hex>/library" (starting at the
 * '/' or at the end), or NULL when path is not a Rust std path. */
static const char *rust_std_tail(const char *path)
{
	static const char prefix[] = "/rustc/";
	static const char lib[] = "/library";
	if (strncmp(path, prefix, sizeof prefix - 1) != 0)
		return NULL;
	const char *p = path + sizeof prefix - 1;
	for (int i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)p[i]))
			return NULL;
	p += 40;
	if (strncmp(p, lib, sizeof lib - 1) != 0)
		return NULL;
	p += sizeof lib - 1;
	return (*p == '/' || *p == '\0') ? p : NULL;
}

char *source_map_apply(struct source_map *map, const char *path)
{
	if (!map || !path)
		return NULL;
	const char *given = path;
	char *normalized = NULL;
	if (map->nrules && path[0] == '/' && has_dot_components(path)) {
		normalized = normalize_path(path);
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
	if (best) {
		const char *tail = path + best->from_len;
		if (best->from_len == 1 && best->from[0] == '/')
			tail = path;   /* "/" maps every absolute path: keep its separator */
		char *mapped = join(best->to, tail);
		free(normalized);
		return mapped;
	}
	free(normalized);
	const char *tail = rust_std_tail(given);
	if (tail) {
		const char *lib = source_map_rust_library(map);
		if (lib)
			return join(lib, tail);
	}
	return NULL;
}
