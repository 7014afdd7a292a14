/* session_internal.h — what session/'s files share: the raw MI calls
 * behind the typed ones of session.h and probes.h. Private to session/:
 * no other folder includes it, so gdb's vocabulary stays here and in mi/.
 *
 * Return conventions as in session.h: 0 (or 1 with a record) on success,
 * -1 with e filled.
 */
#ifndef XGDBPROF_SESSION_INTERNAL_H
#define XGDBPROF_SESSION_INTERNAL_H

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

struct session_stop;

/* Reads one record into *out (a non-stop record gives SESSION_STOP_NONE).
 * 0, or -1 with e when out of memory (*out then empty). */
int session_stop_from_record(const struct mi_record *ev, struct session_stop *out, struct xerr *e);

#endif
