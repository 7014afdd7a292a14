#!/usr/bin/env bash
# signal_frame.sh — an entry counter is never put where a signal handler
# will return to. tests/fixtures/handler_frames: a thread blocked in
# glibc's flock (`mov $0x49,%eax; syscall; cmp ...`) is sent a SIGUSR1
# whose handler sleeps 6 s; its frame keeps the PC just past the
# `syscall` (no SA_RESTART: flock then fails with EINTR), inside the
# instructions a counter at flock would move. A counting probe on flock,
# armed while the handler runs and traced until after it returns, must
# find that frame on the thread's stack and give the site a breakpoint
# instead of the counter; the handler returns into the original bytes and
# the thread goes on. Mutation shown to fail: entry_counter_signal_frame_pc
# returning false (the counter went in; when the handler returned, the
# target was killed by SIGSEGV). Its rule reads the kernel's frame layout
# (tests/unit/test_tracer.c checks it in a real handler) so that a stale
# copy of such an address elsewhere on a stack (ld.so's resolver saves rcx,
# which after a system call holds the address past it) no longer refuses
# the counter: 1 arming in ~25 of tests/syscall_futex.sh did.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
[ -x "$FIXTURES/handler_frames" ] || skip_test "the handler_frames fixture was not built"
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck

"$FIXTURES/handler_frames" 60 "$TMP/status" >/dev/null 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
for _ in $(seq 200); do grep -q 'in_handler=1' "$TMP/status" 2>/dev/null && break; sleep 0.05; done
check "the thread is in its handler, the frame on its stack" grep -q 'in_handler=1' "$TMP/status" ||
	show "$TMP/status"
"$XGDBPROF" -d 9s -e 'function flock { @c = count(); }' "$PID" >"$TMP/run.out" 2>"$TMP/run.err" &
XG=$!
for _ in $(seq 600); do grep -q "attached" "$TMP/run.err" 2>/dev/null && break; sleep 0.02; done
at_arming=$(cat "$TMP/status")
wait "$XG"
check "the run exits 0" test $? -eq 0 || show "$TMP/run.err"
# the handler outlives the arming unless the attach took ~6 s
if grep -q 'handled=0' <<<"$at_arming"; then
	check "flock got no counter: a handler's frame holds a PC inside the instructions to move" \
		grep -q "a thread's stack holds an address inside the instructions to move" \
		<(tr '\n' ' ' <"$TMP/run.out" | tr -s ' ') || show "$TMP/run.out"
else
	ok "not judged: the handler had returned before the probes were armed (status then: $at_arming)"
fi
check "the handler returned while traced, and flock failed with EINTR past its syscall" \
	grep -Eq 'handled=[1-9][0-9]* eintr=[1-9]' "$TMP/status" || show "$TMP/status"
check "the target lives (not killed by SIGSEGV or SIGILL)" kill -0 "$PID"
check "no harm said by the run" sh -c "! grep -q 'killed by' '$TMP/run.err'" || show "$TMP/run.err"
check "the target's code equals its files after the run" test "$("$CODECHECK" "$PID")" = 0
check "the target runs free afterwards" settles_running "$PID"
kill "$PID"
finish
