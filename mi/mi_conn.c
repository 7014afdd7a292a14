/* mi_conn.c — gdb child process, line framing, calls and the event queue. */
#include "mi_conn.h"
#include "mi_quote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define STDERR_KEEP 8192
#define READ_CHUNK 65536
#define DEFAULT_STARTUP_MS 10000
/* How long a gdb that closed its output gets to finish exiting before we
 * report it without an exit status. */
#define REAP_GRACE_MS 2000
#define TERM_GRACE_MS 500
/* Waits are cut into slices this long to notice a gdb that died while a
 * launched program still holds its pipes, and cancel requests. */
#define LIVENESS_CHECK_MS 250
/* mi_conn_kill: how long gdb gets to quit (and detach) on SIGTERM. */
#define KILL_GRACE_MS 1000
/* Attempts to find an MI record inside a line that starts with other text. */
#define MAX_RECOVERY_TRIES 64

struct event_node {
	struct mi_record *record;
	struct event_node *next;
};

struct mi_conn {
	pid_t pid;
	int in_fd;                 /* socket: gdb's stdin */
	int out_fd;                /* pipe: gdb's stdout */
	int err_fd;                /* pipe: gdb's stderr, -1 after EOF */
	bool out_eof;
	bool exit_asked;           /* -gdb-exit sent (mi_conn_ask_exit) */
	bool reaped;
	int wait_status;           /* valid when reaped and status_known */
	bool status_known;
	char death[320];           /* the message every call returns once gdb is gone */
	int stall_kill_ms;         /* options.stall_kill_ms */
	int64_t stopped_since;     /* when gdb was first seen in state T/t, 0 if not */
	bool stall_resumed;        /* we sent SIGCONT to a gdb found stopped */
	bool (*on_silence)(void *ctx, int silent_ms); /* options.on_silence */
	bool event_wait;           /* wait_event is waiting: on_silence may end it */
	void *on_silence_ctx;
	int64_t heard_ms;          /* when gdb last printed anything on stdout */

	char *buf;                 /* unread stdout bytes are buf[start..len) */
	size_t start, len, capacity;
	size_t scanned;            /* buf[start..scanned) holds no newline */

	char stderr_text[STDERR_KEEP + 1];
	size_t stderr_len;

	long long next_token;
	struct event_node *head, *tail;
	unsigned long junk_lines;
	FILE *trace;
	const volatile sig_atomic_t *cancel;
};

/* What a call is waiting for while lines are pumped. */
struct pending_call {
	long long token;
	char *console;
	size_t console_len;
	bool out_of_memory;
	struct mi_record *result;
};

/* ---- time ---- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* -1 = never */
static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

static int remaining_ms(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - now_ms();
	if (left < 0)
		return 0;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

/* ---- process state ---- */

static void describe_status(int status, bool known, char *out, size_t size)
{
	if (!known)
		snprintf(out, size, "exit status unknown");
	else if (WIFEXITED(status))
		snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, size, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(out, size, "wait status 0x%x", status);
}

/* Returns true once gdb has been reaped (now or before). */
static bool conn_try_reap(struct mi_conn *c)
{
	if (c->reaped)
		return true;
	int status;
	pid_t r;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->reaped = true;
		c->status_known = true;
		c->wait_status = status;
	} else if (r < 0 && errno == ECHILD) {
		/* Someone else reaped it (e.g. SIGCHLD set to SIG_IGN). */
		c->reaped = true;
	}
	return c->reaped;
}

static void conn_read_stderr(struct mi_conn *c)
{
	char chunk[4096];
	while (c->err_fd >= 0) {
		ssize_t n = read(c->err_fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		if (n == 0) {
			close(c->err_fd);
			c->err_fd = -1;
			return;
		}
		size_t add = (size_t)n; /* <= sizeof chunk < STDERR_KEEP */
		if (c->stderr_len + add > STDERR_KEEP) {
			size_t drop = c->stderr_len + add - STDERR_KEEP;
			memmove(c->stderr_text, c->stderr_text + drop, c->stderr_len - drop);
			c->stderr_len -= drop;
		}
		memcpy(c->stderr_text + c->stderr_len, chunk, add);
		c->stderr_len += add;
		c->stderr_text[c->stderr_len] = '\0';
	}
}

/* The last non-empty stderr line, for death messages. */
static void stderr_last_line(const struct mi_conn *c, char *out, size_t size)
{
	size_t end = c->stderr_len;
	while (end > 0 && (c->stderr_text[end - 1] == '\n' || c->stderr_text[end - 1] == '\r'))
		end--;
	size_t begin = end;
	while (begin > 0 && c->stderr_text[begin - 1] != '\n')
		begin--;
	snprintf(out, size, "%.*s", (int)(end - begin), c->stderr_text + begin);
}

/* gdb's output ended or a write failed: wait briefly for the exit, then fix
 * the message all later calls return. Returns -1 with it in err. */
static int conn_died(struct mi_conn *c, struct mi_error *err)
{
	if (!c->death[0]) {
		int64_t deadline = now_ms() + REAP_GRACE_MS;
		while (!conn_try_reap(c) && now_ms() < deadline) {
			conn_read_stderr(c);
			struct timespec pause = {0, 5 * 1000 * 1000};
			nanosleep(&pause, NULL);
		}
		conn_read_stderr(c);
		char status[96], last[160];
		if (c->reaped)
			describe_status(c->wait_status, c->status_known, status, sizeof status);
		else
			snprintf(status, sizeof status, "closed its output but is still running");
		stderr_last_line(c, last, sizeof last);
		snprintf(c->death, sizeof c->death, "gdb died (pid %d %s)%s%s", (int)c->pid, status,
			 last[0] ? "; last stderr line: " : "", last);
		c->out_eof = true;
	}
	return mi_error_set(err, "%s", c->death);
}

/* ---- reading ---- */

/* Waits until stdout is readable (draining stderr meanwhile).
 * Returns 1 readable (or hung up), 0 timeout, -1 when gdb has exited even
 * though its stdout is still open (a launched program may hold a copy).
 * Always polls at least once. */
static bool conn_cancelled(const struct mi_conn *c)
{
	return c->cancel && *c->cancel;
}

/* gdb's own state letter from /proc/PID/stat (proc(5)), or 0. */
static char gdb_state(const struct mi_conn *c)
{
	char path[64], text[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)c->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	const char *paren = strrchr(text, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

static bool conn_wait_exit(struct mi_conn *c, int timeout_ms);

void mi_conn_kill(struct mi_conn *c, const char *why)
{
	if (!c || conn_try_reap(c))
		return;
	/* SIGTERM makes gdb quit the way `quit` does: it detaches from the
	 * processes it attached to, taking its breakpoints out and handling a
	 * breakpoint trap a thread is stopped in. SIGKILL would leave such a
	 * thread to receive the SIGTRAP and die. SIGCONT first: a stopped gdb
	 * acts on nothing. */
	kill(c->pid, SIGCONT);
	kill(c->pid, SIGTERM);
	if (!conn_wait_exit(c, KILL_GRACE_MS)) {
		kill(c->pid, SIGKILL);
		conn_wait_exit(c, -1);
	}
	c->out_eof = true;
	if (!c->death[0])
		snprintf(c->death, sizeof c->death, "gdb (pid %d) %s; xgdbprof ended it", (int)c->pid,
			 why ? why : "was ended");
}

/* A stopped gdb (SIGSTOP, SIGTSTP, or a debugger holding it) answers
 * nothing until someone resumes it, while the target it holds may be
 * stopped too, or sitting in a breakpoint trap only gdb can take it out
 * of (killing gdb then delivers the SIGTRAP). Past stall_kill_ms in state
 * T it is resumed once with SIGCONT (mi_conn_was_stalled then says so);
 * stopped again, or held by a debugger (t), it is ended. Returns true when
 * it was ended. */
static bool conn_kill_if_stalled(struct mi_conn *c)
{
	if (c->stall_kill_ms <= 0 || c->reaped)
		return false;
	char state = gdb_state(c);
	if (state != 'T' && state != 't') {
		c->stopped_since = 0;
		return false;
	}
	int64_t now = now_ms();
	if (!c->stopped_since)
		c->stopped_since = now;
	if (now - c->stopped_since < c->stall_kill_ms)
		return false;
	if (state == 'T' && !c->stall_resumed) {
		c->stall_resumed = true;
		c->stopped_since = 0;
		kill(c->pid, SIGCONT);
		return false;
	}
	char why[96];
	snprintf(why, sizeof why, "was stopped (state %c) for over %d ms and could not answer", state,
		 c->stall_kill_ms);
	mi_conn_kill(c, why);
	return true;
}

static int conn_wait_readable(struct mi_conn *c, int64_t deadline)
{
	for (;;) {
		if (conn_cancelled(c))
			return 0;
		int left = remaining_ms(deadline);
		int slice = left < 0 || left > LIVENESS_CHECK_MS ? LIVENESS_CHECK_MS : left;
		struct pollfd fds[2] = {{c->out_fd, POLLIN, 0}, {c->err_fd, POLLIN, 0}};
		int r = poll(fds, c->err_fd >= 0 ? 2 : 1, slice);
		if (r < 0 && errno == EINTR)
			continue; /* the loop top notices a cancel request */
		if (r < 0)
			return 1; /* let read() report the problem */
		if (r > 0 && c->err_fd >= 0 && fds[1].revents)
			conn_read_stderr(c);
		if (r > 0 && fds[0].revents)
			return 1;
		if (r == 0 && (conn_try_reap(c) || conn_kill_if_stalled(c)))
			return -1;
		if (r == 0 && c->on_silence && c->on_silence(c->on_silence_ctx, (int)(now_ms() - c->heard_ms)) &&
		    c->event_wait)
			return 0;
		if (remaining_ms(deadline) == 0)
			return 0;
	}
}

/* Reads what is available from stdout into the buffer.
 * Returns 1 if bytes arrived, 0 if none were available, -1 on EOF/error. */
static int conn_read_some(struct mi_conn *c)
{
	if (c->start > 0 && (c->start == c->len || c->start > c->capacity / 2)) {
		memmove(c->buf, c->buf + c->start, c->len - c->start);
		c->len -= c->start;
		c->scanned -= c->start;
		c->start = 0;
	}
	if (c->capacity - c->len < READ_CHUNK / 4) {
		size_t capacity = c->capacity ? c->capacity * 2 : READ_CHUNK;
		char *grown = realloc(c->buf, capacity);
		if (!grown)
			return 0; /* retried later; lines may then be split but never lost */
		c->buf = grown;
		c->capacity = capacity;
	}
	for (;;) {
		ssize_t n = read(c->out_fd, c->buf + c->len, c->capacity - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			c->out_eof = true;
			return -1;
		}
		c->len += (size_t)n;
		c->heard_ms = now_ms();
		return 1;
	}
}

/* Next complete line (without "\n" / "\r\n"), pointing into the buffer and
 * valid until the next read. Returns 1, 0 on timeout, -1 when gdb is gone. */
static int conn_read_line(struct mi_conn *c, int64_t deadline, const char **line,
			  size_t *line_len, struct mi_error *err)
{
	for (;;) {
		if (c->scanned < c->start)
			c->scanned = c->start;
		char *newline = c->len > c->scanned
					? memchr(c->buf + c->scanned, '\n', c->len - c->scanned)
					: NULL;
		if (newline) {
			size_t end = (size_t)(newline - c->buf);
			*line = c->buf + c->start;
			*line_len = end - c->start;
			if (*line_len && (*line)[*line_len - 1] == '\r')
				(*line_len)--;
			c->start = c->scanned = end + 1;
			return 1;
		}
		c->scanned = c->len;
		if (c->out_eof) {
			if (c->len > c->start) { /* a last line without its newline */
				*line = c->buf + c->start;
				*line_len = c->len - c->start;
				c->start = c->scanned = c->len;
				return 1;
			}
			return conn_died(c, err);
		}
		int got = conn_read_some(c);
		if (got > 0)
			continue;
		if (got < 0)
			continue; /* EOF: the branch above flushes and reports */
		int ready = conn_wait_readable(c, deadline);
		if (ready == 0)
			return 0;
		if (ready < 0) {
			while (conn_read_some(c) > 0)
				;
			c->out_eof = true;
			continue;
		}
		if (conn_read_some(c) == 0 && (remaining_ms(deadline) == 0 || conn_cancelled(c)))
			return 0;
	}
}

/* ---- records ---- */

static int queue_push(struct mi_conn *c, struct mi_record *r)
{
	struct event_node *node = malloc(sizeof *node);
	if (!node) {
		mi_record_free(r);
		return -1;
	}
	node->record = r;
	node->next = NULL;
	if (c->tail)
		c->tail->next = node;
	else
		c->head = node;
	c->tail = node;
	return 0;
}

/* Unlinks and returns the first queued record matching (or the first one
 * when klass is NULL); NULL if none. */
static struct mi_record *queue_take(struct mi_conn *c, enum mi_record_kind kind, const char *klass)
{
	struct event_node **link = &c->head, *prev = NULL;
	for (struct event_node *node = c->head; node; prev = node, node = node->next) {
		if (!klass || (node->record->kind == kind && strcmp(node->record->klass, klass) == 0)) {
			*link = node->next;
			if (c->tail == node)
				c->tail = prev;
			struct mi_record *r = node->record;
			free(node);
			return r;
		}
		link = &node->next;
	}
	return NULL;
}

/* Parses a line; when it is not MI, looks for a record that starts later in
 * it (a launched program's output without a trailing newline, followed by
 * gdb's record). Returns the record or NULL for junk. */
static struct mi_record *conn_parse(struct mi_conn *c, const char *line, size_t len)
{
	struct mi_record *r;
	if (len == 0)
		return NULL;
	if (mi_parse_line(line, len, &r, NULL) == 0)
		return r;
	c->junk_lines++;
	int tries = 0;
	for (size_t i = 1; i < len && tries < MAX_RECOVERY_TRIES; i++) {
		if (!strchr("^*+=~@&(0123456789", line[i]) || line[i] == '\0')
			continue;
		if (line[i] >= '0' && line[i] <= '9' && line[i - 1] >= '0' && line[i - 1] <= '9')
			continue; /* only the start of a token can start a record */
		tries++;
		if (mi_parse_line(line + i, len - i, &r, NULL) == 0)
			return r;
	}
	return NULL;
}

static void pending_add_console(struct pending_call *call, const char *text, size_t n)
{
	char *grown = realloc(call->console, call->console_len + n + 1);
	if (!grown) {
		call->out_of_memory = true;
		return;
	}
	memcpy(grown + call->console_len, text, n);
	call->console_len += n;
	grown[call->console_len] = '\0';
	call->console = grown;
}

/* The first of the n calls still waiting for its answer, or NULL. */
static struct pending_call *first_unanswered(struct pending_call *calls, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!calls[i].result)
			return &calls[i];
	return NULL;
}

/* Reads one line and sorts its record (see the header comment): an answer
 * goes to the waiting call with its token, console text to the first call
 * not yet answered (gdb answers in order).
 * Returns 1 when a line was handled, 0 on timeout, -1 when gdb is gone. */
static int conn_pump_calls(struct mi_conn *c, int64_t deadline, struct pending_call *calls, size_t ncalls,
			   struct mi_error *err)
{
	const char *line;
	size_t len;
	int got = conn_read_line(c, deadline, &line, &len, err);
	if (got <= 0)
		return got;
	if (c->trace)
		fprintf(c->trace, "<- %.*s\n", (int)len, line);
	struct mi_record *r = conn_parse(c, line, len);
	if (!r)
		return 1;
	switch (r->kind) {
	case MI_RECORD_RESULT:
		for (size_t i = 0; i < ncalls; i++)
			if (!calls[i].result && r->token == calls[i].token) {
				calls[i].result = r;
				return 1;
			}
		break;
	case MI_RECORD_EXEC:
	case MI_RECORD_STATUS:
	case MI_RECORD_NOTIFY:
		if (queue_push(c, r) < 0)
			return mi_error_set(err, "out of memory queueing a gdb event");
		return 1;
	case MI_RECORD_CONSOLE: {
		struct pending_call *call = first_unanswered(calls, ncalls);
		if (call)
			pending_add_console(call, r->text, r->text_len);
		break;
	}
	default:
		break;
	}
	mi_record_free(r);
	return 1;
}

static int conn_pump(struct mi_conn *c, int64_t deadline, struct pending_call *call, struct mi_error *err)
{
	return conn_pump_calls(c, deadline, call, call ? 1 : 0, err);
}

/* ---- writing ---- */

static int conn_write_all(struct mi_conn *c, const char *data, size_t n, int64_t deadline,
			  struct mi_error *err)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = send(c->in_fd, data + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return conn_died(c, err);
		/* gdb is not reading: keep draining its output so it cannot block on us. */
		if (conn_cancelled(c))
			return mi_error_set(err, "interrupted while gdb was not reading its input");
		struct pollfd fds[2] = {{c->in_fd, POLLOUT, 0}, {c->out_fd, POLLIN, 0}};
		int left = remaining_ms(deadline);
		int r = poll(fds, 2, left < 0 || left > LIVENESS_CHECK_MS ? LIVENESS_CHECK_MS : left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && (conn_try_reap(c) || conn_kill_if_stalled(c)))
			return conn_died(c, err);
		if (r == 0 && remaining_ms(deadline) == 0)
			return mi_error_set(err, "gdb did not read its input within the timeout");
		if (fds[1].revents && conn_read_some(c) < 0)
			return conn_died(c, err);
		conn_read_stderr(c);
	}
	return 0;
}

/* ---- public API ---- */

/* Whether command may be sent: a connection to a live gdb, a non-empty
 * command on one line. 0, or -1 with err. */
static int check_command(struct mi_conn *c, const char *command, struct mi_error *err)
{
	if (!c)
		return mi_error_set(err, "no gdb connection");
	if (!command || !*command || strpbrk(command, "\r\n"))
		return mi_error_set(err, "invalid MI command \"%s\": empty or contains a newline",
				    command ? command : "(null)");
	if (c->out_eof || c->reaped)
		return conn_died(c, err);
	return 0;
}

/* Appends "TOKEN-command arg...\n", each argument quoted, to *text (of
 * *len bytes, malloc'd, grown here). 0, or -1 with err (out of memory). */
static int append_command(char **text, size_t *len, long long token, const char *command,
			  const char *const *args, struct mi_error *err)
{
	size_t size = *len + 32 + strlen(command);
	for (size_t i = 0; args && args[i]; i++)
		size += 4 * strlen(args[i]) + 3;
	char *grown = realloc(*text, size);
	if (!grown)
		return mi_error_set(err, "out of memory building %s", command);
	*text = grown;
	size_t n = *len;
	n += (size_t)snprintf(grown + n, size - n, "%lld%s%s", token, command[0] == '-' ? "" : "-", command);
	for (size_t i = 0; args && args[i]; i++) {
		char *quoted = mi_quote_arg(args[i]);
		if (!quoted)
			return mi_error_set(err, "out of memory quoting an argument of %s", command);
		n += (size_t)snprintf(grown + n, size - n, " %s", quoted);
		free(quoted);
	}
	grown[n++] = '\n';
	*len = n;
	return 0;
}

/* Turns an answered call into mi_conn_callv's return: 0 for a success
 * class, -1 with err otherwise. Takes call's console text into the record. */
static int finish_call(struct pending_call *call, const char *command, struct mi_record **result,
		       struct mi_error *err)
{
	struct mi_record *r = call->result;
	r->console = call->console ? call->console : strdup("");
	call->console = NULL;
	if (!r->console || call->out_of_memory) {
		mi_record_free(r);
		call->result = NULL;
		return mi_error_set(err, "out of memory collecting the console output of %s", command);
	}
	const char *klass = r->klass;
	int rc;
	if (strcmp(klass, "done") == 0 || strcmp(klass, "running") == 0 ||
	    strcmp(klass, "connected") == 0 || strcmp(klass, "exit") == 0) {
		rc = 0;
	} else if (strcmp(klass, "error") == 0) {
		const char *msg = mi_value_get_string(r->results, "msg");
		rc = mi_error_set(err, "%s", msg ? msg : "gdb reported an error without a message");
	} else {
		rc = mi_error_set(err, "gdb answered %s with unknown result class ^%s", command, klass);
	}
	if (result)
		*result = r;
	else
		mi_record_free(r);
	call->result = NULL;
	return rc;
}

/* Writes text (n commands, one per line) in one go and reads until each of
 * calls[0..n) has its answer. 0, or -1 with err (gdb gone, timeout, or
 * interrupted; then the answers that came are still in calls). */
static int send_and_wait(struct mi_conn *c, int timeout_ms, char *text, size_t len, struct pending_call *calls,
			 size_t n, const char *what, struct mi_error *err)
{
	if (c->trace)
		fprintf(c->trace, "-> %.*s\n", (int)(len - 1), text);
	int64_t deadline = deadline_after(timeout_ms);
	if (conn_write_all(c, text, len, deadline, err) < 0)
		return -1;
	while (first_unanswered(calls, n)) {
		int got = conn_pump_calls(c, deadline, calls, n, err);
		if (got < 0)
			return -1;
		if (got == 0) {
			if (conn_cancelled(c))
				return mi_error_set(err, "interrupted while waiting for gdb to answer %s", what);
			return mi_error_set(err, "gdb did not answer %s within %d ms", what, timeout_ms);
		}
	}
	return 0;
}

int mi_conn_callv(struct mi_conn *c, int timeout_ms, struct mi_record **result,
		  struct mi_error *err, const char *command, const char *const *args)
{
	if (result)
		*result = NULL;
	if (check_command(c, command, err) < 0)
		return -1;
	struct pending_call call = {.token = c->next_token++};
	char *text = NULL;
	size_t len = 0;
	if (append_command(&text, &len, call.token, command, args, err) < 0) {
		free(text);
		return -1;
	}
	int rc = send_and_wait(c, timeout_ms, text, len, &call, 1, command, err);
	free(text);
	if (rc < 0) {
		free(call.console);
		return -1;
	}
	return finish_call(&call, command, result, err);
}

int mi_conn_call_batch(struct mi_conn *c, int timeout_ms, struct mi_batch_call *batch, size_t n,
		       struct mi_error *err)
{
	for (size_t i = 0; i < n; i++) {
		batch[i].result = NULL;
		batch[i].rc = -1;
		mi_error_set(&batch[i].err, "not sent");
	}
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (check_command(c, batch[i].command, err) < 0)
			return -1;
	struct pending_call *calls = calloc(n, sizeof *calls);
	if (!calls)
		return mi_error_set(err, "out of memory sending %s", batch[0].command);
	char *text = NULL;
	size_t len = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		calls[i].token = c->next_token++;
		rc = append_command(&text, &len, calls[i].token, batch[i].command, batch[i].args, err);
	}
	if (rc == 0)
		rc = send_and_wait(c, timeout_ms, text, len, calls, n, batch[0].command, err);
	free(text);
	for (size_t i = 0; i < n; i++) {
		if (calls[i].result) {
			batch[i].rc = finish_call(&calls[i], batch[i].command, &batch[i].result, &batch[i].err);
			if (batch[i].rc < 0 && rc == 0)
				rc = mi_error_set(err, "%s: %s", batch[i].command, batch[i].err.message);
		} else if (rc < 0) {
			batch[i].err = *err;
		}
		free(calls[i].console);
	}
	free(calls);
	return rc;
}

int mi_conn_call(struct mi_conn *c, int timeout_ms, struct mi_record **result,
		 struct mi_error *err, const char *command, ...)
{
	enum { MAX_ARGS = 64 };
	const char *args[MAX_ARGS + 1];
	size_t n = 0;
	va_list ap;
	va_start(ap, command);
	const char *arg;
	while ((arg = va_arg(ap, const char *)) != NULL) {
		if (n == MAX_ARGS) {
			va_end(ap);
			if (result)
				*result = NULL;
			return mi_error_set(err, "%s: more than %d arguments", command, MAX_ARGS);
		}
		args[n++] = arg;
	}
	va_end(ap);
	args[n] = NULL;
	return mi_conn_callv(c, timeout_ms, result, err, command, args);
}

int mi_conn_console(struct mi_conn *c, int timeout_ms, char **output, struct mi_error *err,
		    const char *cli_command)
{
	*output = NULL;
	if (strpbrk(cli_command, "\r\n"))
		return mi_error_set(err, "a console command must be one line");
	struct mi_record *r;
	const char *args[] = {"console", cli_command, NULL};
	int rc = mi_conn_callv(c, timeout_ms, &r, err, "-interpreter-exec", args);
	if (rc == 0) {
		*output = r->console;
		r->console = NULL;
	}
	mi_record_free(r);
	return rc;
}

/* Takes the first queued event of class klass (NULL: any event), reading
 * gdb until one is queued or the timeout. Returns 1 / 0 / -1 as
 * mi_conn_next_event. */
static int wait_event(struct mi_conn *c, int timeout_ms, const char *klass, struct mi_record **event,
		      struct mi_error *err)
{
	*event = NULL;
	if (!c)
		return mi_error_set(err, "no gdb connection");
	int64_t deadline = deadline_after(timeout_ms);
	for (;;) {
		*event = queue_take(c, MI_RECORD_EXEC, klass);
		if (*event)
			return 1;
		c->event_wait = true;
		int got = conn_pump(c, deadline, NULL, err);
		c->event_wait = false;
		if (got <= 0) {
			*event = queue_take(c, MI_RECORD_EXEC, klass);
			return *event ? 1 : got;
		}
	}
}

int mi_conn_next_event(struct mi_conn *c, int timeout_ms, struct mi_record **event,
		       struct mi_error *err)
{
	return wait_event(c, timeout_ms, NULL, event, err);
}

int mi_conn_wait_stopped(struct mi_conn *c, int timeout_ms, struct mi_record **stopped,
			 struct mi_error *err)
{
	return wait_event(c, timeout_ms, "stopped", stopped, err);
}

int mi_conn_fd(const struct mi_conn *c)
{
	return c->out_fd;
}

pid_t mi_conn_gdb_pid(const struct mi_conn *c)
{
	return c->pid;
}

bool mi_conn_was_stalled(const struct mi_conn *c)
{
	return c && c->stall_resumed;
}

bool mi_conn_alive(struct mi_conn *c)
{
	if (!c)
		return false;
	return !conn_try_reap(c) && !c->out_eof;
}

unsigned long mi_conn_junk_lines(const struct mi_conn *c)
{
	return c->junk_lines;
}

static void conn_release(struct mi_conn *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	while (c->head)
		mi_record_free(queue_take(c, MI_RECORD_EXEC, NULL));
	free(c->buf);
	free(c);
}

/* Waits up to timeout_ms for gdb to exit, discarding its output meanwhile. */
static bool conn_wait_exit(struct mi_conn *c, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	for (;;) {
		if (conn_try_reap(c))
			return true;
		int left = remaining_ms(deadline);
		if (left == 0)
			return false;
		struct pollfd fds[2] = {{c->out_eof ? -1 : c->out_fd, POLLIN, 0}, {c->err_fd, POLLIN, 0}};
		int wait = left < 0 || left > 10 ? 10 : left;
		if (poll(fds, 2, wait) > 0) {
			if (fds[0].revents) {
				c->start = c->len = c->scanned = 0; /* nobody reads these any more */
				conn_read_some(c);
			}
			if (fds[1].revents)
				conn_read_stderr(c);
		}
	}
}

void mi_conn_ask_exit(struct mi_conn *c)
{
	if (!c || c->exit_asked || conn_try_reap(c) || c->out_eof)
		return;
	static const char quit[] = "-gdb-exit\n";
	if (c->trace)
		fprintf(c->trace, "-> -gdb-exit\n");
	(void)!send(c->in_fd, quit, sizeof quit - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	c->exit_asked = true;
}

int mi_conn_close(struct mi_conn *c, int timeout_ms)
{
	if (!c)
		return -1;
	bool killed = false;
	if (!conn_try_reap(c)) {
		mi_conn_ask_exit(c);
		if (!conn_wait_exit(c, timeout_ms < 0 ? 0 : timeout_ms)) {
			kill(c->pid, SIGTERM);
			if (!conn_wait_exit(c, TERM_GRACE_MS)) {
				kill(c->pid, SIGKILL);
				conn_wait_exit(c, -1);
			}
			killed = true;
		}
	}
	int rc = -1;
	if (!killed && c->status_known && WIFEXITED(c->wait_status))
		rc = WEXITSTATUS(c->wait_status);
	conn_release(c);
	return rc;
}

void mi_conn_free(struct mi_conn *c)
{
	if (!c)
		return;
	if (!conn_try_reap(c)) {
		kill(c->pid, SIGKILL);
		conn_wait_exit(c, -1);
	}
	conn_release(c);
}

/* ---- spawning ---- */

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Starts argv[0] with the given child descriptors for 0/1/2 in its own
 * process group with default signal handling. Returns 0 or an errno. */
static int spawn_gdb(char *const *argv, int child_in, int child_out, int child_err, pid_t *pid)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	int rc = posix_spawn_file_actions_init(&actions);
	if (rc)
		return rc;
	rc = posix_spawnattr_init(&attr);
	if (rc) {
		posix_spawn_file_actions_destroy(&actions);
		return rc;
	}
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	/* dup2 onto 0/1/2 clears close-on-exec for exactly those three. */
	if (!(rc = posix_spawn_file_actions_adddup2(&actions, child_in, 0)) &&
	    !(rc = posix_spawn_file_actions_adddup2(&actions, child_out, 1)) &&
	    !(rc = posix_spawn_file_actions_adddup2(&actions, child_err, 2)) &&
	    !(rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
							   POSIX_SPAWN_SETSIGDEF)) &&
	    !(rc = posix_spawnattr_setpgroup(&attr, 0)) &&
	    !(rc = posix_spawnattr_setsigmask(&attr, &none)) &&
	    !(rc = posix_spawnattr_setsigdefault(&attr, &all)))
		rc = posix_spawnp(pid, argv[0], &actions, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	return rc;
}

/* gdb's command line: the path, our fixed settings, then the caller's
 * extra arguments; NULL-terminated. NULL when out of memory. */
static const char **gdb_argv(const char *gdb, const struct mi_conn_options *opt)
{
	static const char *const fixed_args[] = {
		"-nx", "-q", "--interpreter=mi3",
		"-iex", "set auto-load off",
		"-iex", "set debuginfod enabled off",
		"-iex", "set confirm off",
		"-iex", "set pagination off",
		"-iex", "set width 0",
		"-iex", "set height 0",
		/* A gdb internal error ends gdb (which we survive and report)
		 * without dropping a core file into the user's directory. */
		"-iex", "maint set internal-error corefile no",
		"-iex", "maint set internal-error quit yes",
		"-iex", "maint set internal-warning corefile no",
	};
	size_t nextra = 0;
	while (opt && opt->extra_args && opt->extra_args[nextra])
		nextra++;
	size_t nfixed = sizeof fixed_args / sizeof fixed_args[0];
	const char **argv = calloc(nfixed + nextra + 2, sizeof *argv);
	if (!argv)
		return NULL;
	argv[0] = gdb;
	memcpy(argv + 1, fixed_args, sizeof fixed_args);
	for (size_t i = 0; i < nextra; i++)
		argv[1 + nfixed + i] = opt->extra_args[i];
	return argv;
}

/* Creates gdb's socket and pipes, starts it and keeps our ends, made
 * non-blocking, in c. Returns 0, or -1 with err and c freed. */
static int start_gdb(struct mi_conn *c, const char *gdb, const char **argv, struct mi_error *err)
{
	int in_pair[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) < 0 ||
	    pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		mi_error_set(err, "cannot create pipes for gdb: %s", strerror(errno));
		for (int i = 0; i < 2; i++) {
			if (in_pair[i] >= 0)
				close(in_pair[i]);
			if (out_pipe[i] >= 0)
				close(out_pipe[i]);
			if (err_pipe[i] >= 0)
				close(err_pipe[i]);
		}
		free(c);
		return -1;
	}
	int rc = spawn_gdb((char *const *)argv, in_pair[1], out_pipe[1], err_pipe[1], &c->pid);
	close(in_pair[1]);
	close(out_pipe[1]);
	close(err_pipe[1]);
	c->in_fd = in_pair[0];
	c->out_fd = out_pipe[0];
	c->err_fd = err_pipe[0];
	if (rc) {
		mi_error_set(err, "cannot run gdb '%s': %s%s", gdb, strerror(rc),
			     rc == ENOENT ? " (install gdb or give its path)" : "");
		c->reaped = true; /* no child to kill */
		conn_release(c);
		return -1;
	}
	if (set_nonblocking(c->in_fd) < 0 || set_nonblocking(c->out_fd) < 0 ||
	    set_nonblocking(c->err_fd) < 0) {
		mi_error_set(err, "cannot configure gdb's pipes: %s", strerror(errno));
		mi_conn_free(c);
		return -1;
	}
	return 0;
}

/* Reads gdb's output up to its first prompt. Returns 0, or -1 with err
 * (the caller frees c). */
static int wait_for_prompt(struct mi_conn *c, const char *gdb, int startup_ms, struct mi_error *err)
{
	int64_t deadline = deadline_after(startup_ms);
	struct mi_error local;
	for (bool prompt = false; !prompt;) {
		const char *line;
		size_t len;
		int got = conn_read_line(c, deadline, &line, &len, &local);
		if (got < 0 && c->reaped && c->status_known && WIFEXITED(c->wait_status) &&
		    WEXITSTATUS(c->wait_status) == 127) {
			/* posix_spawn reports exec failures itself, except where it is
			 * emulated with fork (e.g. under valgrind): then the shell convention. */
			return mi_error_set(err, "cannot run gdb '%s': not found or not executable (exit status 127)",
					    gdb);
		}
		if (got < 0)
			return mi_error_set(err, "gdb '%s' failed to start: %s", gdb, local.message);
		if (got == 0)
			return mi_error_set(err, "gdb '%s' printed no MI prompt within %d ms", gdb, startup_ms);
		if (c->trace)
			fprintf(c->trace, "<- %.*s\n", (int)len, line);
		/* Records before the first prompt only echo our own -iex settings
		 * (=cmd-param-changed) and the initial =thread-group-added: not events. */
		struct mi_record *r = conn_parse(c, line, len);
		if (r && r->kind == MI_RECORD_PROMPT)
			prompt = true;
		mi_record_free(r);
	}
	return 0;
}

struct mi_conn *mi_conn_spawn(const struct mi_conn_options *opt, struct mi_error *err)
{
	const char *gdb = opt && opt->gdb_path ? opt->gdb_path : "gdb";
	int startup_ms = opt && opt->startup_timeout_ms > 0 ? opt->startup_timeout_ms
							    : DEFAULT_STARTUP_MS;
	const char **argv = gdb_argv(gdb, opt);
	struct mi_conn *c = calloc(1, sizeof *c);
	if (!argv || !c) {
		free(argv);
		free(c);
		mi_error_set(err, "out of memory starting gdb");
		return NULL;
	}
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->next_token = 1;
	c->trace = opt ? opt->trace : NULL;
	c->cancel = opt ? opt->cancel : NULL;
	c->stall_kill_ms = opt ? opt->stall_kill_ms : 0;
	c->on_silence = opt ? opt->on_silence : NULL;
	c->on_silence_ctx = opt ? opt->on_silence_ctx : NULL;
	c->heard_ms = now_ms();
	int started = start_gdb(c, gdb, argv, err);
	free(argv);
	if (started < 0)
		return NULL;
	struct mi_error local;
	if (wait_for_prompt(c, gdb, startup_ms, err) < 0) {
		mi_conn_free(c);
		return NULL;
	}
	if (mi_conn_call(c, startup_ms, NULL, &local, "-gdb-set", "mi-async", "on", NULL) < 0 ||
	    mi_conn_call(c, startup_ms, NULL, &local, "-gdb-set", "non-stop", "off", NULL) < 0) {
		mi_error_set(err, "gdb '%s' refused its MI settings: %s", gdb, local.message);
		mi_conn_free(c);
		return NULL;
	}
	return c;
}

int mi_gdb_version(const char *gdb_path, int *major, int *minor, struct mi_error *err)
{
	const char *gdb = gdb_path ? gdb_path : "gdb";
	int out[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		return mi_error_set(err, "cannot create a pipe: %s", strerror(errno));
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, out[1], 1);
	posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	char *const argv[] = {(char *)gdb, (char *)"-nx", (char *)"--version", NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, gdb, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(out[1]);
	if (rc) {
		close(out[0]);
		return mi_error_set(err, "cannot run gdb '%s': %s", gdb, strerror(rc));
	}
	char text[512];
	size_t len = 0;
	int64_t deadline = now_ms() + DEFAULT_STARTUP_MS;
	bool timed_out = false;
	for (;;) {
		struct pollfd pfd = {out[0], POLLIN, 0};
		int r = poll(&pfd, 1, remaining_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			timed_out = r == 0;
			break;
		}
		char sink[512];
		char *into = len < sizeof text - 1 ? text + len : sink;
		size_t room = len < sizeof text - 1 ? sizeof text - 1 - len : sizeof sink;
		ssize_t n = read(out[0], into, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (into == text + len)
			len += (size_t)n;
	}
	close(out[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	text[len] = '\0';
	if (timed_out)
		return mi_error_set(err, "'%s --version' did not finish within %d ms", gdb,
				    DEFAULT_STARTUP_MS);
	char *eol = strchr(text, '\n');
	if (eol)
		*eol = '\0';
	if (strncmp(text, "GNU gdb", 7) != 0)
		return mi_error_set(err, "'%s --version' does not look like GNU gdb: \"%.80s\"", gdb, text);
	/* The version is the last word of the first line; the parenthesised
	 * vendor part before it may contain digits too. */
	char *word = strrchr(text, ' ');
	word = word ? word + 1 : text;
	int a, b;
	if (sscanf(word, "%d.%d", &a, &b) != 2)
		return mi_error_set(err, "cannot read a version in \"%.80s\"", text);
	*major = a;
	*minor = b;
	return 0;
}
