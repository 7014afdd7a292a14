/* path.h — lexical path normalization.
 *
 * A build configured as ../configure names its sources "/b/build/../src/x.c"
 * in debug info and in $(abs_top_srcdir), while a user writes "/b/src/x.c":
 * comparisons of absolute paths go through path_normalize. It is lexical:
 * "." and ".." components are resolved and repeated or trailing slashes
 * dropped without looking at the file system (no symlink is followed; ".."
 * above "/" stays at "/"). A relative path comes back as it is, without its
 * trailing slashes.
 *
 * path_normalize returns a malloc'd string (the caller frees it), or NULL
 * when out of memory.
 */
#ifndef XGDBPROF_PATH_H
#define XGDBPROF_PATH_H

#include <stdbool.h>

char *path_normalize(const char *path);
/* Whether an absolute path has components path_normalize would change
 * ("/./", "/../", "//"): a cheap test before normalizing. */
bool path_has_dot_components(const char *path);

#endif
