#include "session/signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t first_signal;
static volatile sig_atomic_t signal_count;

static void on_terminating_signal(int sig)
{
	if (!first_signal)
		first_signal = sig;
	signal_count++;
	if (signal_count >= 3)
		signal(sig, SIG_DFL);
}

void signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_terminating_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking poll() must return so the loop sees the flag. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int signals_pending(void)
{
	return first_signal;
}

bool signals_urgent(void)
{
	return signal_count >= 2;
}
