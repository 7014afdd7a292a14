/* hyperlink.h — OSC 8 terminal hyperlinks around source locations, so a
 * click on "src/tree.rs:120" in a report opens the file.
 *
 * The sequence is ESC ] 8 ; ; URL ESC \ before the text and ESC ] 8 ; ; ESC \
 * after it (Egmont Koblinger's "Hyperlinks (a.k.a. HTML-like anchors) in
 * terminal emulators", which GNOME Terminal, iTerm2, kitty, WezTerm and
 * Windows Terminal follow; others show the text alone). The URL is file://HOST/PATH with the path
 * percent-encoded: a file URL carries no line, and no fragment for one is
 * standard, so the default opens the file (what ls, systemd and ripgrep's
 * "default" format do). XGDBPROF_HYPERLINK_FORMAT chooses another form with
 * ripgrep's placeholders {host}, {path} (absolute, percent-encoded, leading
 * '/') and {line}: "vscode://file{path}:{line}", or kitty's
 * "file://{host}{path}#{line}" (docs/reports.md, "Source links").
 *
 * Safety: the URL holds printable ASCII only (every other byte of the path,
 * ESC included, is percent-encoded; the format's own controls and non-ASCII
 * are dropped), so target text never reaches the terminal raw through it.
 * Callers write the visible text themselves, escaped (text_escape.h).
 */
#ifndef XGDBPROF_HYPERLINK_H
#define XGDBPROF_HYPERLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The links' URL form for this process, over the environment's: a preset
 * name ("vscode": vscode://file{path}:{line}:{col}, "idea":
 * idea://open?file={path}&line={line}, "kitty": file://{host}{path}#{line},
 * "file": file://{host}{path}) or a template holding {path}. Returns 0, or
 * -1 (nothing changed) for a name no preset has and no {path}. Without a
 * call, XGDBPROF_EDITOR_URL, then XGDBPROF_HYPERLINK_FORMAT, then "file". */
int hyperlink_set_format(const char *name_or_template);

/* The editor URL template chosen explicitly (hyperlink_set_format, else
 * XGDBPROF_EDITOR_URL, else XGDBPROF_HYPERLINK_FORMAT), with {host}
 * already filled in, into out; false when none was chosen (the plain
 * file:// default) or it does not fit. For renderers that build the URL
 * later themselves (the flame graph's script): {path}, {line}, {col} stay. */
bool hyperlink_editor_template(char *out, size_t size);

/* The URL for line of the local file path (absolute) into out ({col} is
 * 1: a report's location has no column). Returns false when it does not
 * fit or path is not absolute. */
bool hyperlink_url(const char *path, int line, char *out, size_t size);

/* Opens a link to path:line when path is absolute and exists here; returns
 * whether it did (then close it with hyperlink_close after the text). */
bool hyperlink_open(FILE *out, const char *path, int line);
void hyperlink_close(FILE *out);

#endif
