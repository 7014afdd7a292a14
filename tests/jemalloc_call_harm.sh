#!/usr/bin/env bash
# jemalloc_call_harm.sh — gdb or xgdbprof SIGKILLed while a thread of the
# target runs the mallctl call we sent it into (issue 25's done-when, issue
# 28). gdb's own inferior call left a dummy frame returning onto gdb's
# breakpoint at the entry point: gdb killed mid-call, the target died of
# SIGTRAP (docs/safety.md said so). Calls now go through our stub
# (session/target_call.h), which restores every register itself.
#
# The fixture (tests/fixtures/slow_mallctl.c) has its own mallctl that
# answers as a profiling jemalloc and takes 2 s to dump; its main thread,
# the one the call is sent through, checks its general and vector registers
# every step and prints CORRUPT if a call gave them back changed.
#  - a plain `--recipe heap` run: the dump is read, the target runs on, and
#    the unused bytes the call ran from read as before (test_tracer_codecheck);
#  - gdb, xgdbprof, or both SIGKILLed during the dump: the call finishes
#    (the fixture's "returned"), the target runs on uncorrupted, untraced,
#    not stopped, and the stub's bytes are put back once the call's done
#    mark is set (xgdbprof's rescue, or the guardian: restore.h's
#    call_mark), so the code equals the files again.
#  - the calling thread stopped in read() on a FIFO (a call the kernel
#    restarts): the call goes through, then the thread goes back into the
#    read, which takes the byte the test writes afterwards.
# Seen to fail: with the PC written alone (`$pc = ...`, orig_rax left as the
# system call's number), the blocked fixture died of SIGSEGV (the kernel
# "restarted" the read by moving the new PC back 2 bytes); against the
# build before the stub (gdb's `call`), the target died whenever gdb was
# killed mid-call (4 checks).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck

progress_of() { cat "$1/progress" 2>/dev/null || echo 0; }
# runs_on DIR PID: the main loop advances over 0.5 s and nothing is corrupt
runs_on() {
	local before after
	before=$(progress_of "$1")
	sleep 0.5
	after=$(progress_of "$1")
	kill -0 "$2" 2>/dev/null && [ "$after" -gt "$before" ] && ! grep -q CORRUPT "$1/out"
}
untraced_and_running() {   # PID: within 10 s, no tracer and no thread stopped
	local i
	for i in $(seq 1 200); do
		if [ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)" = 0 ] &&
			! grep -h '^State:' /proc/"$1"/task/*/status 2>/dev/null | grep -q '[Tt] ('; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

start_fixture() {   # start_fixture NAME: the fixture in $TMP/NAME, its pid in FIX
	mkdir -p "$TMP/$1"
	"$FIXTURES/slow_mallctl" "$TMP/$1" 2 >"$TMP/$1/out" 2>&1 &
	FIX=$!
	TEST_PIDS="$TEST_PIDS $FIX"
	for _ in $(seq 1 100); do [ -s "$TMP/$1/progress" ] && break; sleep 0.05; done
}

# The plain run.
start_fixture plain
"$XGDBPROF" --recipe heap -d 500ms -o "$TMP/plain/run" "$FIX" >"$TMP/plain/run.out" 2>"$TMP/plain/run.err"
rc=$?
check "plain: the run ends well (rc $rc)" test "$rc" = 0 || show "$TMP/plain/run.err"
check "plain: the heap comes from the target's own mallctl" grep -q "heap from jemalloc's own profile" "$TMP/plain/run.out" ||
	show "$TMP/plain/run.out"
check "plain: the target runs on, its registers intact" runs_on "$TMP/plain" "$FIX" || show "$TMP/plain/out"
diffs=$("$CODECHECK" "$FIX")
check "plain: the target's code equals its files ($diffs bytes differ)" test "$diffs" = 0
kill "$FIX"

# A thread stopped in a system call the kernel restarts (read on a FIFO,
# the main thread, the first one the call may use): it must go back into
# the read, not return from it (the stub puts the call's number back in
# rax and goes back onto the syscall instruction)
mkdir -p "$TMP/blocked"
"$FIXTURES/slow_mallctl" "$TMP/blocked" 0.2 blocked >"$TMP/blocked/out" 2>&1 &
FIX=$!
TEST_PIDS="$TEST_PIDS $FIX"
for _ in $(seq 1 100); do [ -e "$TMP/blocked/blocked" ] && break; sleep 0.05; done
sleep 0.2
"$XGDBPROF" -v --recipe heap -d 300ms -o "$TMP/blocked/run" "$FIX" >"$TMP/blocked/run.out" 2>"$TMP/blocked/run.err"
rc=$?
check "blocked: the run ends well (rc $rc)" test "$rc" = 0 || show "$TMP/blocked/run.err"
check "blocked: the dump went through the target's mallctl" test -e "$TMP/blocked/dumped"
sleep 0.3
check "blocked: the read was restarted, not returned from" sh -c "! grep -q 'READ FAILED' '$TMP/blocked/out'" ||
	show "$TMP/blocked/out"
# (not blocking on a FIFO nobody reads, should the fixture be gone)
timeout 5 sh -c "echo x >'$TMP/blocked/fifo'"
for _ in $(seq 1 100); do grep -q 'read ok' "$TMP/blocked/out" && break; sleep 0.05; done
check "blocked: the read then took the byte written" grep -q '^read ok x$' "$TMP/blocked/out" || show "$TMP/blocked/out"

for victim in gdb xgdbprof both; do
	start_fixture "$victim"
	"$XGDBPROF" --recipe heap -d 300ms -o "$TMP/$victim/run" "$FIX" >"$TMP/$victim/run.out" 2>"$TMP/$victim/run.err" &
	XP=$!
	G=""
	for _ in $(seq 1 200); do
		[ -n "$G" ] || G=$(gdb_child_of "$XP")
		[ -e "$TMP/$victim/dumping" ] && break
		sleep 0.05
	done
	check "$victim: the dump started" test -e "$TMP/$victim/dumping"
	case $victim in
	gdb) kill -9 "$G" ;;
	xgdbprof) kill -9 "$XP" ;;
	both) kill -9 "$XP" "$G" ;;
	esac
	wait_exit "$XP" 30 || kill -9 "$XP"
	for _ in $(seq 1 100); do [ -e "$TMP/$victim/returned" ] && break; sleep 0.05; done
	check "$victim killed mid-call: the call finished" test -e "$TMP/$victim/returned"
	check "$victim killed mid-call: the target runs on, its registers intact" runs_on "$TMP/$victim" "$FIX" ||
		show "$TMP/$victim/out"
	check "$victim killed mid-call: no tracer left, no thread stopped" untraced_and_running "$FIX"
	# the rescue (gdb killed) or the guardian (xgdbprof killed) waits for
	# the call's done mark, then puts the stub's bytes back
	for _ in $(seq 1 100); do diffs=$("$CODECHECK" "$FIX"); [ "$diffs" = 0 ] && break; sleep 0.1; done
	check "$victim killed mid-call: the stub's bytes are put back once the call is done ($diffs bytes differ)" \
		test "$diffs" = 0
	kill "$FIX"
done
finish
