/* output_file.h — creating output files and the output directory safely.
 *
 * xgdbprof often runs as root and writes into directories others can write
 * to (/tmp). A name planted there — DIR/profile.json as a symlink to
 * /etc/passwd — must never make us write through it. So every file we write
 * is created as a new temporary file in its directory (O_CREAT|O_EXCL|
 * O_NOFOLLOW: it cannot exist yet, a link is not followed), filled, and then
 * renamed over the final name: rename() replaces a symlink itself, never
 * its target, and readers never see a half-written file.
 *
 * Contract:
 *  - output_file_open: the temporary file ".NAME.XXXXXX" in PATH's directory,
 *    mode 0666 less the umask (like any file we create). out->stream is for
 *    writing. On failure returns -1 with the reason naming PATH.
 *  - output_file_commit: flushes, closes and renames over PATH; on any write
 *    error the temporary file is removed and PATH is left as it was. Always
 *    releases out. output_file_abort removes the temporary file.
 *  - output_dir_prepare: makes DIR usable for outputs: with create, creates
 *    it (mode 0777 less the umask) if missing, without following a symlink
 *    planted at its last component; without, only checks that it could be
 *    created (a run checks before attaching, creates after: tests and users
 *    take the directory's appearance as "sampling has begun"). Refuses an existing
 *    non-directory, a directory this process cannot write, and a symlink to
 *    a directory owned by another user inside a sticky world-writable
 *    directory (the /tmp trick). Errors are one sentence naming the fix.
 */
#ifndef XGDBPROF_OUTPUT_FILE_H
#define XGDBPROF_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"

struct output_file {
	FILE *stream;
	char *path;      /* final name */
	char *tmp_path;  /* where it is written until commit */
};

int output_file_open(struct output_file *out, const char *path, struct xerr *e);
int output_file_commit(struct output_file *out, struct xerr *e);
void output_file_abort(struct output_file *out);

int output_dir_prepare(const char *dir, bool create, struct xerr *e);

/* For commands that keep the default action of SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE (report, insights): such a signal first removes the temporary
 * files open then, and then ends the process as it would have. A signal
 * the process ignores stays ignored. Not for a run, whose own handlers
 * detach first and write out what was collected. */
void output_file_remove_on_signal(void);

/* Whether the directory that would hold the file path ("." for a bare
 * name) exists and this process may create files in it (access(2)), so a
 * -o FILE or --metrics-file is refused before any work; false for a path
 * ending in '/'. Sets errno when false. */
bool output_file_dir_writable(const char *path);

/* A file name a recipe gives (flamegraph(@m, "NAME")) is a plain name inside
 * the output directory: no '/', not "", "." or "..". Returns 0 or -1. */
int output_name_check(const char *name, struct xerr *e);

#endif
