#!/usr/bin/env bash
# Bad input: one clear line naming the fix, and a non-zero exit.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# A PID that cannot exist (above pid_max).
expect_error "no such PID" 2 "no process with PID" "$XGDBPROF" dump 999999999
expect_error "not a PID" 2 "PID is a positive number" "$XGDBPROF" dump abc
expect_error "unknown option" 2 "unknown option" "$XGDBPROF" --no-such-option
expect_error "no target" 2 "give a PID" "$XGDBPROF"

# A zombie: a child whose parent never reaps it (exec replaces the shell).
bash -c 'sleep 0.3 & exec sleep 30' &   # the child outlives the exec: bash cannot reap it first (with sleep 0 it sometimes did, and no zombie came)
PARENT=$!
TEST_PIDS="$TEST_PIDS $PARENT"
ZOMBIE=
for _ in $(seq 300); do   # the child exists, then dies, once bash has run: wait for both (up to 15 s under load)
	ZOMBIE=$(pgrep -P "$PARENT" | head -1)
	[ -n "$ZOMBIE" ] && [ "$(proc_state "$ZOMBIE")" = Z ] && break
	sleep 0.05
done
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

# Two tracers on one PID. One already attached: the second run names it.
"$XGDBPROF" -d 20s -o "$TMP/first-run" "$COUNTER_PID" >/dev/null 2>&1 &
FIRST=$!
TEST_PIDS="$TEST_PIDS $FIRST"
for i in $(seq 1 200); do
	[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$COUNTER_PID/status")" != 0 ] && break
	sleep 0.05
done
expect_error "traced by another xgdbprof" 2 "already traced by PID [0-9]* (gdb, child of PID $FIRST xgdbprof)" \
	"$XGDBPROF" dump "$COUNTER_PID"
kill -INT "$FIRST"
wait_exit "$FIRST" || not_ok "first xgdbprof did not stop on SIGINT"
# Racing: the other tracer attaches after our checks, before gdb's attach
# (a gdb wrapper starts it), so ptrace's EPERM is the first sign of it. It
# is not a permission problem, whoever we run as.
GDB=$(command -v gdb)
cat >"$TMP/racing-gdb" <<SCRIPT
#!/bin/sh
case "\$*" in *--version*) exec "$GDB" "\$@" ;; esac
"$GDB" -nx -batch -p $COUNTER_PID -ex 'shell sleep 3' </dev/null >/dev/null 2>&1 &
echo \$! >"$TMP/racer.pid"
i=0
while [ "\$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$COUNTER_PID/status)" = 0 ] && [ \$i -lt 200 ]; do
	sleep 0.05; i=\$((i + 1))
done
exec "$GDB" "\$@"
SCRIPT
chmod +x "$TMP/racing-gdb"
expect_error "another tracer got there first" 2 "already traced by PID [0-9]* (gdb, child of PID [0-9]* gdb)" \
	"$XGDBPROF" --gdb "$TMP/racing-gdb" dump "$COUNTER_PID"
RACER=$(cat "$TMP/racer.pid" 2>/dev/null)
[ -n "$RACER" ] && { TEST_PIDS="$TEST_PIDS $RACER"; wait_exit "$RACER" 10; }
check "target runs free after both tracers" target_runs_free "$COUNTER_PID" "$PROGRESS"

# A probe whose SPEC matches nothing in the live target: bad input (2), one
# line naming `xgdbprof probes`, nothing armed, no empty output directory,
# the target detached and running.
mkdir "$TMP/run-dir"
in_run_dir() { (cd "$TMP/run-dir" && "$@"); }
expect_error "function probe matching nothing" 2 \
	"no function named 'no_such_function'.*xgdbprof probes 'no_such_function' $COUNTER_PID" \
	in_run_dir "$XGDBPROF" -e 'function "no_such_function" { @calls = count(); }' -d 2s "$COUNTER_PID"
expect_error "return probe regex matching nothing" 2 "/^no_such_.*/ matches no function.*xgdbprof probes" \
	in_run_dir "$XGDBPROF" -e 'function "main" { @a = count(); } return /^no_such_.*/ { @b = count(); }' \
	-d 2s "$COUNTER_PID"
check "no output directory left by the refused probes" [ -z "$(ls "$TMP/run-dir")" ]
check "target runs free after the refused probes" target_runs_free "$COUNTER_PID" "$PROGRESS"

# report reads only a regular file of a sane size. Bounded in time and
# memory here: reading /dev/zero used to go on until memory ran out.
bounded() { (ulimit -v 2000000; exec timeout 10 "$@"); }
mkdir "$TMP/no-profile"
mkfifo "$TMP/fifo"
truncate -s 2G "$TMP/huge.json"
expect_error "report /dev/zero" 2 "/dev/zero is not a regular file" bounded "$XGDBPROF" report /dev/zero
expect_error "report FIFO" 2 "fifo is not a regular file" bounded "$XGDBPROF" report "$TMP/fifo"
expect_error "report directory without a profile" 2 "no-profile holds no profile.json" \
	bounded "$XGDBPROF" report "$TMP/no-profile"
expect_error "report 2 GiB file" 2 "huge.json is 2.0 GiB, larger than a profile can be" \
	bounded "$XGDBPROF" report "$TMP/huge.json"

# -D values are the user's text, echoed in errors (a bad define, a probe
# that matches nothing after ${F} is replaced): escaped as target text, so
# an ESC or a newline in one cannot split the error or drive the terminal.
no_raw_controls() { ! tr -d '\n' <"$TMP/err" | LC_ALL=C grep -q '[[:cntrl:]]'; }
HOSTILE=$'x\033[2Jy\nz'
expect_error "-D with a bad name and control bytes" 2 'bad define .*\\x1b\[2Jy\\x0az' \
	"$XGDBPROF" -D "a b=$HOSTILE" -e 'function "main" { @a = count(); }' -d 1s "$COUNTER_PID"
check "... no raw control byte in the error" no_raw_controls
expect_error "check -D with a bad name and control bytes" 2 'bad define .*\\x1b\[2Jy\\x0az' \
	"$XGDBPROF" check -D "a b=$HOSTILE" -e 'function "main" { @a = count(); }'
check "... no raw control byte in the error" no_raw_controls
expect_error "-D value with control bytes in a probe matching nothing" 2 'no_such_fnx\\x1b\[2Jy\\x0az' \
	in_run_dir "$XGDBPROF" -D "F=no_such_fn$HOSTILE" -e 'function "${F}" { @calls = count(); }' -d 2s "$COUNTER_PID"
check "... no raw control byte in the error" no_raw_controls
check "target runs free after the hostile -D values" target_runs_free "$COUNTER_PID" "$PROGRESS"

expect_error "command not found" 2 "command not found: no-such-command-xyz" \
	"$XGDBPROF" dump -- no-such-command-xyz
finish
