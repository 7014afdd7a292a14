#!/usr/bin/env bash
# Bad input: one clear line naming the fix, and a non-zero exit.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99

expect_error() {   # expect_error "what" STATUS PATTERN command...
	local what=$1 want_status=$2 pattern=$3; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local status=$?
	local lines
	lines=$(wc -l <"$TMP/err")
	if [ "$status" -eq "$want_status" ] && grep -q -- "$pattern" "$TMP/err" && [ "$lines" -eq 1 ]; then
		ok "$what: $(cat "$TMP/err")"
	else
		not_ok "$what: status $status (want $want_status), $lines line(s) on stderr:"
		sed 's/^/    /' "$TMP/err"
	fi
}

# A PID that cannot exist (above pid_max).
expect_error "no such PID" 2 "no process with PID" "$XGDBPROF" dump 999999999
expect_error "not a PID" 2 "PID is a positive number" "$XGDBPROF" dump abc
expect_error "unknown option" 2 "unknown option" "$XGDBPROF" --no-such-option
expect_error "no target" 2 "give a PID" "$XGDBPROF"

# A zombie: a child whose parent never reaps it (exec replaces the shell).
bash -c 'sleep 0 & exec sleep 30' &
PARENT=$!
TEST_PIDS="$TEST_PIDS $PARENT"
sleep 0.5
ZOMBIE=$(pgrep -P "$PARENT" | head -1)
expect_error "zombie" 2 "is a zombie" "$XGDBPROF" dump "$ZOMBIE"

# Permission denied: an unprivileged user attaching to root's process.
start_counter
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$TMP"
	expect_error "permission denied" 2 "permission denied attaching to process $COUNTER_PID.*CAP_SYS_PTRACE" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$XGDBPROF" dump "$COUNTER_PID"
	check "target runs free after the refused attach" target_runs_free "$COUNTER_PID" "$PROGRESS"
else
	not_ok "permission test needs root and setpriv (util-linux) to drop to another user"
fi

# gdb missing, and gdb too old (a script that answers --version like gdb 9).
XGDBPROF_GDB=/nonexistent/gdb expect_error "gdb missing" 2 "apt-get install gdb" "$XGDBPROF" dump "$COUNTER_PID"
printf '#!/bin/sh\necho "GNU gdb (GDB) 9.2"\n' >"$TMP/old-gdb"
chmod +x "$TMP/old-gdb"
expect_error "gdb too old" 2 "needs gdb 10 or newer" "$XGDBPROF" --gdb "$TMP/old-gdb" dump "$COUNTER_PID"
# --gdb wins over $XGDBPROF_GDB (the man page says so).
XGDBPROF_GDB=/nonexistent/gdb expect_error "--gdb over XGDBPROF_GDB" 2 "needs gdb 10 or newer" \
	"$XGDBPROF" --gdb "$TMP/old-gdb" dump "$COUNTER_PID"
check "target runs free after the refusals" target_runs_free "$COUNTER_PID" "$PROGRESS"

expect_error "command not found" 2 "command not found: no-such-command-xyz" \
	"$XGDBPROF" dump -- no-such-command-xyz
finish
