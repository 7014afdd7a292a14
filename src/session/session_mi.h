/* session_mi.h — the session's raw MI hooks, for the one module that speaks
 * MI itself (trace/: breakpoints, catchpoints, expression evaluation).
 * Everything else goes through session.h's typed calls; this header is
 * included only where a module needs gdb's records, so the MI vocabulary
 * stays out of the sampler and the commands.
 *
 * Return conventions as in session.h: 0 (or 1 with a record) on success,
 * -1 with e filled.
 */
#ifndef XGDBPROF_SESSION_MI_H
#define XGDBPROF_SESSION_MI_H

#include "session/session.h"

struct mi_record;
struct mi_conn;

/* Runs one command with the session's timeout. args is NULL-terminated
 * (may be NULL). *result, when asked for, is the ^record (caller frees with
 * mi_record_free). */
int session_call(struct session *s, struct mi_record **result, struct xerr *e, const char *command,
		 const char *const *args);

/* Next async record from gdb (exec/notify/status), waiting up to timeout_ms
 * (0: poll, -1: forever). Keeps the session's view in sync: *stopped marks
 * the target stopped (and exited when the reason says so), *running marks it
 * running. Returns 1 with *event (caller frees), 0 on timeout, -1 when gdb is
 * gone. */
int session_wait_event(struct session *s, int timeout_ms, struct mi_record **event, struct xerr *e);

#endif
