/* cmd_dump.c — `xgdbprof dump`: one snapshot of every thread's stack, then
 * the target continues untouched (in the spirit of eu-stack and py-spy dump). */
#include "config.h"
#include "cli/commands.h"
#include "cli/cli.h"
#include "stacks/sampler.h"
#include "session/session.h"
#include "session/signals.h"
#include "symbols/source_map.h"
#include "symbols/symbolize.h"
#include "util/array.h"
#include "util/text_escape.h"
#include "util/clock.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct thread_snapshot {
	struct session_thread thread;
	struct gdb_frame *frames;  /* --walker gdb: frames as gdb names them */
	size_t nframes;
	struct frame *symbolized;  /* default: our walker + symbolizer, inline frames marked */
	size_t nsymbolized;
	bool walkers_agree;        /* --check-walkers */
	int partial_regs_agree;    /* --check-walkers: event_walk.partial_regs_agree */
	uint64_t *pcs, *ref_pcs;
	size_t npcs, nref_pcs;
	char error[256];           /* why frames are missing, if they are */
};

struct snapshot {
	pid_t pid;
	char exe[4096];
	struct thread_snapshot *threads;
	size_t nthreads, threads_cap;
	double stopped_ms;         /* how long the target was held stopped */
	bool gdb_walker;
	bool check_walkers;
};

static const char *state_word(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'T': return "stopped";
	case 't': return "tracing stop";
	case 'Z': return "zombie";
	case 'I': return "idle";
	default: return "unknown";
	}
}

/* Threads resumed from the stop of attaching leave their tracing stop one by
 * one and are briefly runnable on their way back to sleep. Their /proc state
 * is the snapshot's, so wait until none is in tracing stop, then a little. */
static void settle_after_attach(pid_t pid)
{
	struct timespec step = { 0, 5 * 1000 * 1000 };
	for (int i = 0; i < 100 && proc_any_thread_in(pid, "t"); i++)
		nanosleep(&step, NULL);
	struct timespec settle = { 0, 20 * 1000 * 1000 };
	nanosleep(&settle, NULL);
}

/* Takes the snapshot: /proc states are read while the target is still
 * running (stopping it would make every thread look stopped), then stacks. */
static int snapshot_take(struct session *s, int max_frames, struct snapshot *snap, struct xerr *e)
{
	settle_after_attach(session_pid(s));
	struct proc_thread *running_states = NULL;
	int nstates = proc_threads(session_pid(s), &running_states, NULL);
	double t0 = monotonic_ms();
	if (session_stop(s, e) < 0) {
		free(running_states);
		return -1;
	}
	struct session_thread *threads;
	size_t n;
	if (session_threads(s, &threads, &n, e) < 0) {
		free(running_states);
		return -1;
	}
	snap->threads = calloc(n ? n : 1, sizeof *snap->threads);
	if (!snap->threads) {
		free(threads);
		free(running_states);
		return xerr_oom(e);
	}
	snap->nthreads = n;
	snap->threads_cap = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct thread_snapshot *t = &snap->threads[i];
		t->thread = threads[i];
		for (int k = 0; k < nstates; k++)
			if (running_states[k].tid == t->thread.tid)
				t->thread.state = running_states[k].state;
		struct xerr frame_error;
		if (session_thread_frames(s, t->thread.gdb_id, max_frames, &t->frames, &t->nframes, &frame_error) < 0)
			snprintf(t->error, sizeof t->error, "%.255s", frame_error.msg);
	}
	free(threads);
	free(running_states);
	int rc = session_resume(s, e);
	snap->stopped_ms = monotonic_ms() - t0;
	return rc;
}

static int collect_symbolized(void *ctx, const struct event *ev, struct xerr *e)
{
	struct snapshot *snap = ctx;
	const struct event_walk *walk = &ev->walk;
	struct thread_snapshot *grown = array_grow(snap->threads, &snap->threads_cap, snap->nthreads + 1, sizeof *grown);
	if (!grown)
		return xerr_oom(e);
	snap->threads = grown;
	struct thread_snapshot *ts = &snap->threads[snap->nthreads++];
	memset(ts, 0, sizeof *ts);
	ts->thread.tid = (pid_t)ev->thread.id;
	ts->thread.state = ev->thread.state;
	snprintf(ts->thread.name, sizeof ts->thread.name, "%s", ev->thread.name);
	ts->symbolized = malloc((ev->stack->nframes ? ev->stack->nframes : 1) * sizeof *ts->symbolized);
	ts->pcs = malloc((walk->npcs + walk->nref_pcs + 1) * sizeof *ts->pcs);
	if (!ts->symbolized || !ts->pcs)
		return xerr_oom(e);
	memcpy(ts->symbolized, ev->stack->frames, ev->stack->nframes * sizeof *ts->symbolized);
	ts->nsymbolized = ev->stack->nframes;
	memcpy(ts->pcs, walk->pcs, walk->npcs * sizeof *ts->pcs);
	ts->npcs = walk->npcs;
	ts->ref_pcs = ts->pcs + walk->npcs;
	memcpy(ts->ref_pcs, walk->ref_pcs, walk->nref_pcs * sizeof *ts->ref_pcs);
	ts->nref_pcs = walk->nref_pcs;
	ts->walkers_agree = walk->npcs == walk->nref_pcs &&
			    memcmp(walk->pcs, walk->ref_pcs, walk->npcs * sizeof *walk->pcs) == 0;
	ts->partial_regs_agree = walk->partial_regs_agree;
	return 0;
}

/* The default snapshot: our walker and symbolizer (inline frames as frames
 * of their own). States come from /proc before the stop. */
static int snapshot_take_symbolized(struct session *s, struct symbolizer *sym, int max_frames,
				    struct snapshot *snap, struct xerr *e)
{
	settle_after_attach(session_pid(s));
	struct sampler_stats stats;
	enum sampler_walker walker = snap->check_walkers ? SAMPLER_WALKER_BOTH : SAMPLER_WALKER_FAST;
	const struct event_sink sink = { .ctx = snap, .take = collect_symbolized };
	int rc = sampler_snapshot(s, sym, walker, max_frames, &sink, &stats, e);
	snap->stopped_ms = stats.run.stopped_s * 1e3;
	return rc;
}

static void snapshot_release(struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nthreads; i++) {
		session_gdb_frames_free(snap->threads[i].frames, snap->threads[i].nframes);
		free(snap->threads[i].symbolized);
		free(snap->threads[i].pcs);
	}
	free(snap->threads);
}

/* Every name below comes from the target: written through text_put. */
static void put(FILE *out, const char *target_text)
{
	text_put(out, target_text, TEXT_FORM_TERMINAL);
}

static void print_text(const struct snapshot *snap, FILE *out, bool links)
{
	const char *base = strrchr(snap->exe, '/');
	fprintf(out, "Process %d: ", (int)snap->pid);
	put(out, base ? base + 1 : snap->exe);
	fprintf(out, " (%zu thread%s, stopped for %.1f ms)\n", snap->nthreads, snap->nthreads == 1 ? "" : "s",
		snap->stopped_ms);
	fputs("  executable: ", out);
	put(out, snap->exe);
	fputc('\n', out);
	for (size_t i = 0; i < snap->nthreads; i++) {
		const struct thread_snapshot *t = &snap->threads[i];
		fprintf(out, "\nThread %d \"", (int)t->thread.tid);
		put(out, t->thread.name);
		fprintf(out, "\" (%s)\n", state_word(t->thread.state));
		if (t->error[0]) {
			fputs("    <no stack: ", out);
			put(out, t->error);
			fputs(">\n", out);
		}
		for (size_t k = 0; k < t->nframes; k++) {
			const struct gdb_frame *f = &t->frames[k];
			fprintf(out, "  #%-3d 0x%016llx ", f->level, (unsigned long long)f->pc);
			put(out, f->function ? f->function : "??");
			if (f->file && f->line > 0) {
				fputs("\n        at ", out);
				cli_put_source_location(out, f->file, f->line, 0, links);
			} else if (f->library) {
				fputs("\n        in ", out);
				put(out, f->library);
			}
			fputc('\n', out);
		}
		for (size_t k = 0; k < t->nsymbolized; k++) {
			const struct frame *f = &t->symbolized[k];
			fprintf(out, "  #%-3zu 0x%016llx ", k, (unsigned long long)f->pc);
			put(out, f->function ? f->function : "??");
			fputs(f->inlined ? " [inlined]" : "", out);
			if (f->file && f->line > 0) {
				fputs("\n        at ", out);
				cli_put_source_location(out, f->file, f->line, f->column, links);
			} else if (f->module) {
				fputs("\n        in ", out);
				put(out, f->module);
			}
			fputc('\n', out);
		}
		if (snap->check_walkers && !t->walkers_agree) {
			fprintf(out, "  walkers disagree: dwfl");
			for (size_t k = 0; k < t->npcs; k++)
				fprintf(out, " %llx", (unsigned long long)t->pcs[k]);
			fprintf(out, "\n                    gdb ");
			for (size_t k = 0; k < t->nref_pcs; k++)
				fprintf(out, " %llx", (unsigned long long)t->ref_pcs[k]);
			fputc('\n', out);
		}
	}
	if (snap->check_walkers) {
		size_t agree = 0;
		for (size_t i = 0; i < snap->nthreads; i++)
			agree += snap->threads[i].walkers_agree;
		fprintf(out, "\nwalkers agree on %zu of %zu threads\n", agree, snap->nthreads);
		/* The non-stop sampler's walks start from rip, rsp and rbp alone
		 * (docs/sampling.md, "What a stop costs"). */
		size_t partial_agree = 0, partial_tried = 0;
		for (size_t i = 0; i < snap->nthreads; i++) {
			partial_tried += snap->threads[i].partial_regs_agree >= 0;
			partial_agree += snap->threads[i].partial_regs_agree == 1;
		}
		fprintf(out, "walks from rip, rsp and rbp alone agree on %zu of %zu threads\n", partial_agree,
			partial_tried);
	}
}

/* Appends a frame object with the fields both walkers have; returns it. */
static cJSON *json_frame(cJSON *frames, uint64_t pc, const char *function, const char *file, int line)
{
	cJSON *jf = cJSON_CreateObject();
	char pc_text[32];
	snprintf(pc_text, sizeof pc_text, "0x%llx", (unsigned long long)pc);
	cJSON_AddStringToObject(jf, "pc", pc_text);
	if (function)
		cJSON_AddStringToObject(jf, "function", function);
	else
		cJSON_AddNullToObject(jf, "function");
	if (file)
		cJSON_AddStringToObject(jf, "file", file);
	if (line > 0)
		cJSON_AddNumberToObject(jf, "line", line);
	cJSON_AddItemToArray(frames, jf);
	return jf;
}

static int print_json(const struct snapshot *snap, struct symbolizer *sym, FILE *out)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "pid", snap->pid);
	cJSON_AddStringToObject(root, "exe", snap->exe);
	cJSON_AddNumberToObject(root, "stopped_ms", snap->stopped_ms);
	cJSON_AddStringToObject(root, "walker", snap->gdb_walker ? "gdb" : "dwfl");
	cJSON *threads = cJSON_AddArrayToObject(root, "threads");
	for (size_t i = 0; i < snap->nthreads; i++) {
		const struct thread_snapshot *t = &snap->threads[i];
		cJSON *jt = cJSON_CreateObject();
		char state[2] = { t->thread.state, 0 };
		cJSON_AddNumberToObject(jt, "tid", t->thread.tid);
		cJSON_AddNumberToObject(jt, "gdb_id", t->thread.gdb_id);
		cJSON_AddStringToObject(jt, "name", t->thread.name);
		cJSON_AddStringToObject(jt, "state", state);
		if (t->error[0])
			cJSON_AddStringToObject(jt, "error", t->error);
		cJSON *frames = cJSON_AddArrayToObject(jt, "frames");
		for (size_t k = 0; k < t->nsymbolized; k++) {
			const struct frame *f = &t->symbolized[k];
			cJSON *jf = json_frame(frames, f->pc, f->function, f->file, f->line);
			if (f->full_function)   /* the display name's full demangled form */
				cJSON_AddStringToObject(jf, "full_function", f->full_function);
			if (f->column > 0)
				cJSON_AddNumberToObject(jf, "column", f->column);
			cJSON_AddBoolToObject(jf, "inlined", f->inlined);
			if (f->module)
				cJSON_AddStringToObject(jf, "module", f->module);
		}
		for (size_t k = 0; k < t->nframes; k++) {
			const struct gdb_frame *f = &t->frames[k];
			cJSON *jf = json_frame(frames, f->pc, f->function, f->file, f->line);
			if (f->library)
				cJSON_AddStringToObject(jf, "library", f->library);
		}
		cJSON_AddItemToArray(threads, jt);
	}
	/* What the frames do not say: no symbols, files read through /proc. */
	cJSON *notes = cJSON_AddArrayToObject(root, "notes");
	for (size_t i = 0; sym && i < symbolizer_note_count(sym); i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(symbolizer_note(sym, i)));
	char *text = cJSON_Print(root);
	int rc = text ? 0 : -1;
	if (text) {
		text_put_json_document(out, text);
		fputc('\n', out);
	}
	free(text);
	cJSON_Delete(root);
	return rc;
}

static void dump_usage(FILE *out)
{
	fputs("usage: xgdbprof dump [OPTIONS] PID\n"
	      "       xgdbprof dump [OPTIONS] -- COMMAND [ARGS...]\n"
	      "Prints every thread of the target (id, name, state) with its stack, then\n"
	      "lets it continue untouched. With -- COMMAND, starts the command, waits\n"
	      "DURATION (default 1s), takes the snapshot, and waits for the command to\n"
	      "exit; xgdbprof then exits with the command's status.\n"
	      "  --json            print the snapshot as JSON\n"
	      "  --max-frames N    at most N frames per thread (default 256)\n"
	      "  --delay DURATION  with -- COMMAND: how long to let it run first\n"
	      "  --walker dwfl|gdb dwfl (default): xgdbprof's unwinder and symbolizer, with\n"
	      "                    inline frames marked; gdb: gdb's own unwinder and names\n"
	      "  --check-walkers   walk each thread with both and report where they differ,\n"
	      "                    and dwfl's walk from rip, rsp and rbp alone against its\n"
	      "                    walk from every register (exit 1 if any differ)\n"
	      "  --links, --no-links  file:line as terminal hyperlinks (default: on a\n"
	      "                    terminal without NO_COLOR)\n", out);
}

struct dump_options {
	bool json, gdb_walker, check_walkers;
	int max_frames;
	double delay_s;
	bool launch;               /* -- COMMAND rather than a PID */
};

/* Parses the options up to the PID or the command at argv[optind].
 * Returns -1 to go on, else the exit code (help shown, or bad usage said). */
static int parse_dump_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "max-frames", required_argument, NULL, 'm' },
		{ "delay", required_argument, NULL, 'w' },
		{ "walker", required_argument, NULL, 'W' },
		{ "check-walkers", no_argument, NULL, 'C' },
		CLI_LINK_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct dump_options){ .max_frames = 256, .delay_s = 1.0 };
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jm:w:W:Ch", options, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'm':
			o->max_frames = atoi(optarg);
			if (o->max_frames <= 0)
				return cli_usage_error("dump", "--max-frames takes a positive number");
			break;
		case 'w':
			if ((rc = cli_duration_option("dump", optarg, 0, INFINITY,
						      "--delay takes a duration such as 500ms or 2s", &o->delay_s)))
				return rc;
			break;
		case 'W':
			if (strcmp(optarg, "gdb") == 0)
				o->gdb_walker = true;
			else if (strcmp(optarg, "dwfl") != 0)
				return cli_usage_error("dump", "--walker takes dwfl or gdb");
			break;
		case 'C': o->check_walkers = true; break;
		case 'h': dump_usage(stdout); return XGP_EXIT_OK;
		default:
			switch (cli_link_option(c)) {
			case 0: return cli_getopt_error("dump", c, argv);
			case -1: return XGP_EXIT_USAGE;
			}
		}
	}
	if (o->gdb_walker && o->check_walkers)
		return cli_usage_error("dump", "--check-walkers compares the dwfl walker with gdb: drop --walker gdb");
	o->launch = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	if (optind >= argc)
		return cli_usage_error("dump", o->launch ? "no command given after --" : "missing PID: give a PID or -- COMMAND");
	return -1;
}

/* Launches the command (and lets it run the delay) or attaches to the PID.
 * Returns XGP_EXIT_OK with *s set, or the exit code (said). */
static int dump_open_target(const struct dump_options *o, int argc, char **argv, struct session **s)
{
	struct session_options opts = cli_session_options();
	/* Frames are named by our symbolizer unless gdb's walker prints them:
	 * then gdb needs the libraries' debug files (see docs/sampling.md). */
	opts.no_separate_debug = !o->gdb_walker;
	opts.no_symbols = !o->gdb_walker && !o->check_walkers;
	struct xerr e;
	if (o->launch) {
		if (session_launch(s, argv + optind, &opts, &e) < 0)
			return cli_input_error("%s", e.msg);
		cli_sleep_unless_signalled(o->delay_s);
		return XGP_EXIT_OK;
	}
	pid_t pid;
	if (optind + 1 < argc)
		return cli_usage_error("dump", "give exactly one PID");
	if (cli_parse_pid(argv[optind], &pid) < 0)
		return cli_usage_error("dump", "a PID is a positive number (see `pgrep NAME`)");
	return cli_attach(s, pid, &opts);
}

static void print_snapshot(const struct dump_options *o, const struct snapshot *snap, struct symbolizer *sym)
{
	if (o->json) {
		print_json(snap, sym, stdout);
	} else {
		print_text(snap, stdout, cli_links_wanted(isatty(STDOUT_FILENO)));
		for (size_t i = 0; sym && i < symbolizer_note_count(sym); i++)
			printf("%snote: %s\n", i ? "" : "\n", symbolizer_note(sym, i));
	}
	fflush(stdout);
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	int rc = parse_dump_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	signals_install();
	struct session *s = NULL;
	struct xerr e;
	rc = dump_open_target(&o, argc, argv, &s);
	if (rc != XGP_EXIT_OK)
		return rc;
	struct snapshot snap = { .pid = session_pid(s), .gdb_walker = o.gdb_walker, .check_walkers = o.check_walkers };
	proc_exe_path(snap.pid, snap.exe, sizeof snap.exe, NULL);
	bool launch_exited = false;
	struct symbolizer *sym = NULL;
	struct source_map *map = NULL;
	if (!o.gdb_walker) {
		sym = symbolizer_new_pid(snap.pid, &e);
		map = cli_source_map(&e);
		if (!sym || !map)
			rc = XGP_EXIT_FAILURE;
		else
			symbolizer_set_source_map(sym, map);
	}
	if (signals_pending()) {
		rc = XGP_EXIT_FAILURE;
	} else if (rc != XGP_EXIT_OK ||
		   (o.gdb_walker ? snapshot_take(s, o.max_frames, &snap, &e)
				 : snapshot_take_symbolized(s, sym, o.max_frames, &snap, &e)) < 0) {
		if (!session_target_alive(s)) {
			const char *killed_by = session_exit_signal(s);
			if (killed_by)
				cli_error("process %d was killed by %s before the snapshot was taken", (int)snap.pid,
					  killed_by);
			else
				cli_error("process %d exited before the snapshot was taken", (int)snap.pid);
			/* Not our failure when we launched it: its status is the answer. */
			rc = o.launch ? XGP_EXIT_OK : XGP_EXIT_FAILURE;
			launch_exited = true;
		} else {
			cli_error("%s", e.msg);
			rc = XGP_EXIT_FAILURE;
		}
	}
	pid_t child = session_launched_child(s);
	rc = cli_rescue_if_gdb_lost(s, rc);
	/* Detach before printing: the target should not wait on our output. */
	if (session_end(s, &e) < 0) {
		cli_error("%s", e.msg);
		rc = XGP_EXIT_FAILURE;
	}
	if (rc == XGP_EXIT_OK && !launch_exited)
		print_snapshot(&o, &snap, sym);
	if (rc == XGP_EXIT_OK && o.check_walkers)
		for (size_t i = 0; i < snap.nthreads; i++)
			if (!snap.threads[i].walkers_agree || snap.threads[i].partial_regs_agree == 0)
				rc = XGP_EXIT_FAILURE;
	snapshot_release(&snap);
	symbolizer_free(sym);
	source_map_free(map);
	if (child > 0)
		return cli_wait_command(child, argv[optind], rc);
	return rc;
}
