/* output_file.c — output files written through a fresh temporary file and
 * rename(), and the output directory checked before a run (contract in
 * output_file.h). */
#include "util/output_file.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The temporary files open now, for a signal that ends the process
 * (output_file_remove_on_signal): set once a file exists, cleared before
 * its name is freed. */
#define PENDING_MAX 8
static char *volatile pending[PENDING_MAX];

static void pending_add(char *tmp_path)
{
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (!pending[i]) {
			pending[i] = tmp_path;
			return;
		}
}

static void pending_remove(const char *tmp_path)
{
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (tmp_path && pending[i] == tmp_path)
			pending[i] = NULL;
}

static void remove_pending_and_die(int sig)
{
	for (size_t i = 0; i < PENDING_MAX; i++) {
		char *p = pending[i];
		if (p)
			unlink(p);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void output_file_remove_on_signal(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction sa = { .sa_handler = remove_pending_and_die };
		struct sigaction old;
		/* a signal the caller ignores (nohup, SIG_IGN for SIGPIPE) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

static void release(struct output_file *out)
{
	pending_remove(out->tmp_path);
	free(out->path);
	free(out->tmp_path);
	out->path = out->tmp_path = NULL;
	out->stream = NULL;
}

int output_file_open(struct output_file *out, const char *path, struct xerr *e)
{
	memset(out, 0, sizeof *out);
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	if (!*base)
		return xerr_set(e, "cannot create %s: not a file name", path);
	out->path = strdup(path);
	out->tmp_path = malloc(dir_len + strlen(base) + 16);
	if (!out->path || !out->tmp_path) {
		release(out);
		return xerr_oom_doing(e, "creating %s", path);
	}
	/* O_EXCL makes a name someone planted (or guessed) fail with EEXIST
	 * rather than be written through: try another. */
	uint32_t seed = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)out;
	int fd = -1;
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		seed = seed * 1103515245u + 12345u;
		sprintf(out->tmp_path, "%.*s.%s.%06x", (int)dir_len, path, base, (unsigned)(seed >> 8) & 0xffffff);
		fd = open(out->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0)
		pending_add(out->tmp_path);
	if (fd < 0) {
		int err = errno;
		release(out);
		return xerr_set(e, "cannot create %s: %s", path, strerror(err));
	}
	out->stream = fdopen(fd, "w");
	if (!out->stream) {
		int err = errno;
		close(fd);
		output_file_abort(out);
		return xerr_set(e, "cannot create %s: %s", path, strerror(err));
	}
	return 0;
}

int output_file_commit(struct output_file *out, struct xerr *e)
{
	bool failed = ferror(out->stream);
	int err = failed ? EIO : 0;
	if (fclose(out->stream) != 0 && !failed) {
		failed = true;
		err = errno;
	}
	out->stream = NULL;
	if (!failed && rename(out->tmp_path, out->path) < 0) {
		failed = true;
		err = errno;
	}
	if (failed) {
		xerr_set(e, "cannot write %s: %s", out->path, strerror(err));
		unlink(out->tmp_path);
		release(out);
		return -1;
	}
	release(out);
	return 0;
}

void output_file_abort(struct output_file *out)
{
	if (out->stream)
		fclose(out->stream);
	if (out->tmp_path)
		unlink(out->tmp_path);
	release(out);
}

/* The directory holding path's last component ("." for a bare name). */
static int parent_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	while (slash && slash > path && slash[1] == '\0') {
		/* "dir/" : look past trailing slashes */
		const char *p = slash;
		while (p > path && p[-1] == '/')
			p--;
		slash = NULL;
		for (const char *q = path; q < p; q++)
			if (*q == '/')
				slash = q;
	}
	if (!slash)
		return snprintf(buf, size, ".") < (int)size ? 0 : -1;
	if (slash == path)
		return snprintf(buf, size, "/") < (int)size ? 0 : -1;
	return snprintf(buf, size, "%.*s", (int)(slash - path), path) < (int)size ? 0 : -1;
}

/* 0 if a file can be created in the directory open at fd, else the errno.
 * Creating one is the only test that holds for root, read-only mounts and
 * /proc alike (access(2) says yes to root). */
static int create_error(int fd)
{
	char probe[48];
	snprintf(probe, sizeof probe, ".xgdbprof-write-test.%ld", (long)getpid());
	int pfd = openat(fd, probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (pfd < 0)
		return errno == EEXIST ? 0 : errno;
	close(pfd);
	unlinkat(fd, probe, 0);
	return 0;
}

int output_dir_prepare(const char *dir, bool create, struct xerr *e)
{
	struct stat link_st, st;
	if (lstat(dir, &link_st) < 0) {
		if (errno != ENOENT)
			return xerr_set(e, "-o %s: %s", dir, strerror(errno));
		if (!create) {
			char parent[4096];
			if (parent_of(dir, parent, sizeof parent) < 0)
				return xerr_set(e, "-o %s: path too long", dir);
			int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			int err = pfd < 0 ? errno : create_error(pfd);
			if (pfd >= 0)
				close(pfd);
			if (err)
				return xerr_set(e, "-o %s: cannot create the directory in %s (%s); give -o a "
						"directory you can write, or create it first", dir, parent,
						strerror(err));
			return 0;
		}
		if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			return xerr_set(e, "-o %s: cannot create the directory: %s (give -o a directory "
					"you can write, or create it first)", dir, strerror(errno));
		if (lstat(dir, &link_st) < 0)
			return xerr_set(e, "-o %s: %s", dir, strerror(errno));
	}
	/* Open without following a link at the last component, so what we
	 * check is what is there; a link is then judged by who owns it. */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && S_ISLNK(link_st.st_mode)) {
		char parent[4096];
		struct stat parent_st;
		if (parent_of(dir, parent, sizeof parent) == 0 && stat(parent, &parent_st) == 0 &&
		    (parent_st.st_mode & S_ISVTX) && (parent_st.st_mode & S_IWOTH) && link_st.st_uid != geteuid())
			return xerr_set(e, "-o %s: a symlink owned by another user (uid %u) in the shared "
					"directory %s; give -o a directory of your own", dir,
					(unsigned)link_st.st_uid, parent);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0) {
		if (errno == ENOTDIR)
			return xerr_set(e, "-o %s: exists and is not a directory; give -o a new or existing "
					"directory", dir);
		return xerr_set(e, "-o %s: %s", dir, strerror(errno));
	}
	int rc = 0, err;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		rc = xerr_set(e, "-o %s: exists and is not a directory; give -o a new or existing directory", dir);
	else if ((err = create_error(fd)) != 0)
		rc = xerr_set(e, "-o %s: cannot create files in this directory (%s); give -o a directory "
			      "you can write", dir, strerror(err));
	close(fd);
	return rc;
}

int output_name_check(const char *name, struct xerr *e)
{
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return xerr_set(e, "file name \"%s\" must be a plain name (no '/'): outputs go into the "
				"run's directory, choose it with -o DIR", name);
	return 0;
}

bool output_file_dir_writable(const char *path)
{
	size_t n = strlen(path);
	if (!n || path[n - 1] == '/') {
		errno = EISDIR;
		return false;
	}
	char dir[PATH_MAX];
	if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir) {
		errno = ENAMETOOLONG;
		return false;
	}
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	return access(slash ? dir : ".", W_OK) == 0;
}
