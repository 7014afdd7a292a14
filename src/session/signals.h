/* signals.h — turn SIGINT/SIGTERM/SIGHUP into a flag the main loop polls.
 *
 * Contract: after signals_install(), those signals never kill xgdbprof; they
 * set signals_pending() so every loop can wind down through the one exit path
 * that detaches from the target. SIGPIPE is ignored (gdb may die while we
 * write to it; the write then fails with EPIPE and the MI layer reports it).
 * A second SIGINT sets signals_urgent(): skip the report, never the detach.
 * A third restores the default action, as a last resort for a wedged run.
 */
#ifndef XGDBPROF_SIGNALS_H
#define XGDBPROF_SIGNALS_H

#include <stdbool.h>

void signals_install(void);
/* The first terminating signal received, or 0. */
int signals_pending(void);
bool signals_urgent(void);

#endif
