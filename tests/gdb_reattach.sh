#!/usr/bin/env bash
# gdb_reattach.sh — a stop gdb never reports (issue 28): gdb 13 in non-stop
# mode, after a stop met a thread in its vfork, left every thread in a
# tracing stop and reported none (src/session/session_stop.c), and the run
# ended with gdb killed and exit status 1 (tests/exec_fork.sh, 1 run in 80
# beside two CPU loops). Now xgdbprof detaches and attaches again.
# That gdb state comes at random; here a gdb wrapper
# (tests/fixtures/gdb_losing_stops.py, through XGDBPROF_GDB) makes it on
# demand: the real gdb stops the threads, the wrapper drops its *stopped
# records from the Nth -exec-interrupt --all on, until xgdbprof detaches.
# Cases: the stop that puts the entry counter in (N=1), and the one that
# takes it out at the end (N=2); and N=1 with a SIGSTOP left pending in a
# thread at the detach (as gdb left one of its own when a thread's stop was
# lost: a 200-thread target beside two CPU loops entered a group stop
# once detached, the new attach took that stop over, and the run ended
# leaving the target in state T, tests/many_threads.sh). Each: exit status
# 0, stderr says what was done, the breakpoint still hit after the new
# attach (keyed by the target's thread ids, which gdb renumbered), the
# counter counted, and the target is left running free, untraced, its
# code equal to its file.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool python3 python3
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck
WRAPPER=$TOP_SRCDIR/tests/fixtures/gdb_losing_stops.py

"$FIXTURES/fork_loop" fork 1 "$TMP/result" 2>"$TMP/children" &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/result"

threads_run_free() {
	local task state
	for task in /proc/"$PID"/task/*; do
		state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)
		case "$state" in T|t|Z|X|"") echo "  thread ${task##*/} in state '$state'"; return 1 ;; esac
	done
	[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$PID/status")" = 0 ] || { echo "  still traced"; return 1; }
}

# Every key of @k is one of the target's threads.
keys_are_target_threads() {
	local keys key n=0
	keys=$(sed -n 's/^@k\[\([0-9]*\)\]:.*/\1/p' "$1")
	for key in $keys; do
		[ -d "/proc/$PID/task/$key" ] || { echo "  @k[$key] is no thread of $PID"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "  no @k key in the report"; return 1; }
}

for case in 1 2 1-sigstop; do
	at=${case%-sigstop}
	sigstop=0
	[ "$case" = "$at" ] || sigstop=1
	name="lost at interrupt $at"
	[ "$sigstop" = 0 ] || name="$name, a SIGSTOP pending at the detach"
	log=$TMP/lose.$case
	LOSE_STOPS_AT_INTERRUPT=$at LOSE_STOPS_SIGSTOP_AT_DETACH=$sigstop LOSE_STOPS_LOG=$log XGDBPROF_GDB=$WRAPPER \
		"$XGDBPROF" -d 3s -o "$TMP/out.$case" -e 'function "hot_step" { @c = count(); @k[tid] = count(); }' \
		"$PID" >"$TMP/$case.out" 2>"$TMP/$case.err"
	rc=$?
	check "$name: exit status 0" test "$rc" = 0 || show "$TMP/$case.err"
	check "$name: the wrapper dropped the stop, xgdbprof detached and attached again" \
		grep -qx "attach" "$log" || show "$log"
	check "$name: stderr says so" grep -q "reported none of process $PID's threads stopped.*attached again" \
		"$TMP/$case.err" || show "$TMP/$case.err"
	if [ "$sigstop" = 1 ]; then
		check "$name: the wrapper queued the SIGSTOP" grep -q "^sigstop " "$log" || show "$log"
	fi
	if [ "$at" = 1 ]; then
		check "$name: the breakpoint was hit after the new attach" grep -qx "hit-after" "$log"
		check "$name: the report keys hits by the target's threads" keys_are_target_threads "$TMP/$case.out" ||
			show "$TMP/$case.out"
	fi
	check "$name: the entry counter counted" grep -q "^@c: [1-9][0-9]* counted in the target" "$TMP/$case.out" ||
		show "$TMP/$case.out"
	sleep 0.3
	check "$name: the target runs free, untraced" threads_run_free
	check "$name: the target's code equals its file" test "$("$CODECHECK" "$PID")" = 0
done
finish
