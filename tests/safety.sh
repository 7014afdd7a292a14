#!/usr/bin/env bash
# Never harm the target: whatever happens to xgdbprof or gdb, and at whatever
# moment, the target ends up running (not in state T/t), detached, and still
# making progress.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

start_counter

# sigkill_once XP LOG LINE DELAY TARGET: once xgdbprof (XP) has written LINE
# to LOG (polled every 20 ms, up to 20 s), waits DELAY, SIGKILLs it, waits
# for its gdb to exit, then up to 2 s for TARGET's threads to leave state T
# (the guardian continues what gdb's detach left stopped).
sigkill_once() {
	local xp=$1 g
	for _ in $(seq 1 1000); do grep -q "$3" "$2" 2>/dev/null && break; sleep 0.02; done
	sleep "$4"
	g=$(gdb_child_of "$xp")
	kill -9 "$xp"
	[ -n "$g" ] && wait_exit "$g" 20
	settles_running "$5"
}

# A terminating signal to xgdbprof at different moments of a dump: while gdb
# starts, while attaching, while the stacks are walked, while detaching.
for sig in INT TERM HUP; do
	for delay in 0.02 0.15 0.3 0.5 0.8; do
		"$XGDBPROF" dump "$COUNTER_PID" >/dev/null 2>&1 &
		XP=$!
		sleep "$delay"
		kill -"$sig" "$XP" 2>/dev/null
		if wait_exit "$XP" 20; then ok "SIG$sig after ${delay}s: xgdbprof exited"; else
			not_ok "SIG$sig after ${delay}s: xgdbprof still running"; kill -9 "$XP"; fi
		check "SIG$sig after ${delay}s: target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
	done
done

# gdb killed (SIGKILL) at different moments.
for delay in 0.1 0.25 0.4 0.6; do
	"$XGDBPROF" dump "$COUNTER_PID" >/dev/null 2>"$TMP/gdbkill.err" &
	XP=$!
	sleep "$delay"
	G=$(gdb_child_of "$XP") && kill -9 "$G"
	if wait_exit "$XP" 20; then ok "gdb SIGKILL after ${delay}s: xgdbprof exited"; else
		not_ok "gdb SIGKILL after ${delay}s: xgdbprof still running"; kill -9 "$XP"; fi
	check "gdb SIGKILL after ${delay}s: target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
done

# xgdbprof itself killed with SIGKILL (no handler can run): gdb sees its
# input close and detaches on the way out.
for delay in 0.3 0.6; do
	"$XGDBPROF" dump "$COUNTER_PID" >/dev/null 2>&1 &
	XP=$!
	sleep "$delay"
	G=$(gdb_child_of "$XP")
	kill -9 "$XP"
	[ -n "$G" ] && wait_exit "$G" 20
	check "xgdbprof SIGKILL after ${delay}s: target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
done

# ... also mid-sampling in non-stop mode (hot-cpu's default on a PID), at a
# rate that keeps a thread interrupt in flight most of the time: gdb's
# detach on its way out then left a SIGSTOP it had sent pending, and the
# target stopped (state T) in 9 of 20 runs, until xgdbprof's guardian
# process (which outlives it) continued it. It acts once gdb is gone, so
# the target may be seen stopped for a few ms first.
for delay in 0.05 0.15 0.25 0.35 0.45 0.55; do
	"$XGDBPROF" -v -F 999 --max-stopped 60 -d 60s -o "$TMP/killed-$delay" "$COUNTER_PID" >/dev/null 2>"$TMP/killed.err" &
	sigkill_once "$!" "$TMP/killed.err" 'first sample' "$delay" "$COUNTER_PID"
	check "xgdbprof SIGKILL while sampling (non-stop, 999 Hz), +${delay}s: target runs free" \
		target_runs_free "$COUNTER_PID" "$PROGRESS"
done

# ... and mid-trace in gdb's non-stop mode (tracing's default): a hit being
# handled, a thread stepped over a breakpoint in gdb's scratch copy, the
# probes armed or off. The calling thread must go on calling (an int3 left
# in probed_step would kill the process with SIGTRAP).
"$FIXTURES/spin_hit" 120 "$TMP/spin.status" >/dev/null 2>&1 &
SPIN=$!
TEST_PIDS="$TEST_PIDS $SPIN"
for _ in $(seq 1 100); do [ -s "$TMP/spin.status" ] && break; sleep 0.05; done
spin_calls() { sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$TMP/spin.status"; }
n=0
for delay in 0.2 0.7 1.3; do
	for mode in budget exact; do
		n=$((n + 1))
		exact=; [ "$mode" = exact ] && exact="set exact true;"
		"$XGDBPROF" -e "$exact function \"probed_step\" { @calls = count(); }" -d 60s -o "$TMP/traced-$n" "$SPIN" \
			>/dev/null 2>"$TMP/traced.err" &
		sigkill_once "$!" "$TMP/traced.err" 'attached' "$delay" "$SPIN"
		before=$(spin_calls)
		check "xgdbprof SIGKILL while tracing ($mode, non-stop), +${delay}s: target runs free" \
			target_runs_free "$SPIN" "$TMP/spin.status"
		sleep 0.3
		after=$(spin_calls)
		check "... and its probed function is still called (${before:-?} -> ${after:-?} calls)" \
			sh -c "kill -0 $SPIN && [ '${after:-0}' -gt '${before:-0}' ]"
	done
done
kill "$SPIN" 2>/dev/null

# The target exits while a session is open: launched with a 0.5 s lifetime,
# dumped after 2 s. xgdbprof reports it and exits with its status.
"$XGDBPROF" dump --delay 2s -- "$FIXTURES/counter" "$TMP/short.progress" 0.5 >"$TMP/short.out" 2>"$TMP/short.err"
status=$?
check "target exiting mid-session: xgdbprof exits with its status (7)" test "$status" -eq 7
check "target exiting mid-session: said on stderr" grep -q 'exited' "$TMP/short.err"

# -v says when the first sample was taken (the output directory appears
# only with the first file, at the end).
wait_for_first_sample() {
	local i
	for i in $(seq 1 400); do grep -q 'first sample' "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# Sampling runs in both of gdb's stop modes (non-stop stops single threads,
# so a thread left stopped would not show in the process's own state).
for mode in --all-stop --non-stop; do
	# During a sampling run: SIGINT/SIGTERM/SIGHUP end it early, the target is
	# detached first, then the report of what was collected is written.
	for sig in INT TERM HUP; do
		out=$TMP/run$mode-$sig
		"$XGDBPROF" -v $mode --recipe hot-cpu -d 60s -F 49 -o "$out" "$COUNTER_PID" >"$out.txt" 2>"$out.err" &
		XP=$!
		wait_for_first_sample "$out.err"
		sleep 1.5
		kill -"$sig" "$XP"
		if wait_exit "$XP" 20; then ok "run $mode, SIG$sig: xgdbprof exited"; else
			not_ok "run $mode, SIG$sig: xgdbprof still running"; kill -9 "$XP"; fi
		check "run $mode, SIG$sig: target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
		check "run $mode, SIG$sig: the report was printed" grep -q '#1 hottest code path' "$out.txt"
		check "run $mode, SIG$sig: the profile was saved" test -s "$out/profile.json"
	done

	# gdb killed in the middle of a sampling run: the target is woken and
	# detached by the kernel; what was collected is still reported.
	out=$TMP/run$mode-gdbkill
	"$XGDBPROF" -v $mode --recipe hot-cpu -d 60s -F 49 -o "$out" "$COUNTER_PID" >"$out.txt" 2>"$out.err" &
	XP=$!
	wait_for_first_sample "$out.err"
	sleep 1.5
	G=$(gdb_child_of "$XP") && kill -9 "$G"
	if wait_exit "$XP" 20; then ok "run $mode, gdb SIGKILL: xgdbprof exited"; else
		not_ok "run $mode, gdb SIGKILL: xgdbprof still running"; kill -9 "$XP"; fi
	check "run $mode, gdb SIGKILL: target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
	check "run $mode, gdb SIGKILL: says gdb died" grep -q 'gdb died' "$out.err"
	check "run $mode, gdb SIGKILL: the report of what was collected was printed" grep -q '#1 hottest code path' "$out.txt"
done

check "after everything, the first target still runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
check "no gdb left behind" test -z "$(pgrep -x gdb -P $$)"
finish
