#!/usr/bin/env bash
# A target that ends on its own is reported as it ended: one that exits
# while gdb attaches is not a permission problem, and one killed by a
# signal during a run did not "exit".
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# The race made certain: xgdbprof's checks see the target alive, then the
# gdb it starts (a wrapper) first kills the target and waits until /proc
# shows STATE (Z: a zombie its parent does not reap; gone: reaped), then
# attaches. ptrace refuses a zombie with EPERM, the same error as a
# permission problem.
gdb_killing() {   # gdb_killing PID STATE: writes the wrapper, prints its path
	local gdb script=$TMP/gdb-killing-$1
	gdb=$(command -v gdb)
	cat >"$script" <<SCRIPT
#!/bin/sh
case "\$*" in *--version*) exec "$gdb" "\$@" ;; esac
kill -9 $1
i=0
while [ \$i -lt 400 ]; do
	state=\$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' /proc/$1/stat 2>/dev/null)
	case "$2:\$state" in Z:Z|gone:) break ;; esac
	sleep 0.01; i=\$((i + 1))
done
exec "$gdb" "\$@"
SCRIPT
	chmod +x "$script"
	echo "$script"
}

# start_unreaped_child: sets CHILD, a sleep whose parent (PARENT) never
# reaps it (exec replaces the shell), so it stays a zombie once killed.
SLEEP=$(readlink -f "$(command -v sleep)")
start_unreaped_child() {
	bash -c 'sleep 60 & exec sleep 60' &
	PARENT=$!
	disown   # killed by the test: no "Killed" from the shell
	TEST_PIDS="$TEST_PIDS $PARENT"
	CHILD=
	for _ in $(seq 300); do
		CHILD=$(pgrep -P "$PARENT" | head -1)
		[ -n "$CHILD" ] && [ "$(readlink "/proc/$CHILD/exe")" = "$SLEEP" ] && return 0
		sleep 0.05
	done
	return 1
}

for args in "-d 2s" "dump"; do
	start_unreaped_child
	# shellcheck disable=SC2086 # the words of args
	expect_error "xgdbprof $args: target turned zombie while gdb attached" 1 \
		"process $CHILD exited while xgdbprof attached" "$XGDBPROF" --gdb "$(gdb_killing "$CHILD" Z)" $args "$CHILD"
	check "... not called a permission problem" sh -c "! grep -q 'permission denied' '$TMP/err'"
	kill -9 "$PARENT"
done

# Gone altogether: our own child, reaped by this shell as it dies.
sleep 60 &
GONE=$!
disown   # still reaped by this shell as it dies, without a "Killed"
wait_exe "$GONE" "$SLEEP"
expect_error "run: target gone while gdb attached" 1 "process $GONE exited while xgdbprof attached" \
	"$XGDBPROF" --gdb "$(gdb_killing "$GONE" gone)" -d 2s "$GONE"

# Killed by a signal mid-run, sampling (all-stop, non-stop) and tracing:
# stderr and the report's note name the signal, not an exit; a target that
# exits by itself still "exited".
# A fault (segv: SIGSEGV, sent here) is said as it comes, where it landed.
for mode in --all-stop --non-stop trace exit segv; do
	out=$TMP/killed$mode
	signal=KILL
	case $mode in
	exit) start_counter 2; args=(-d 20s) ;;   # exits with status 7 after 2 s
	trace) start_counter; args=(-e 'function "spin_step" { @calls = count(); }' -d 20s) ;;
	segv) start_counter; args=(--non-stop -d 20s); signal=SEGV ;;
	*) start_counter; args=("$mode" -d 20s) ;;
	esac
	"$XGDBPROF" -v "${args[@]}" -o "$out" "$COUNTER_PID" >"$out.txt" 2>"$out.err" &
	XP=$!
	for _ in $(seq 1 400); do grep -q 'first sample\|attached' "$out.err" 2>/dev/null && break; sleep 0.05; done
	sleep 0.5
	[ "$mode" = exit ] || { kill -"$signal" "$COUNTER_PID"; wait "$COUNTER_PID" 2>/dev/null; }
	wait_exit "$XP" 20 || { not_ok "$mode: xgdbprof still running after its target's end"; kill -9 "$XP"; }
	if [ "$mode" = exit ]; then
		check "$mode: stderr says it exited" grep -q "process $COUNTER_PID exited; reporting" "$out.err"
		check "$mode: the report says it exited" grep -q 'note: the target exited during the run' "$out.txt"
	else
		check "$mode: stderr names the signal" grep -q "process $COUNTER_PID was killed by SIG$signal; reporting" "$out.err" ||
			grep -v '^xgdbprof: mi ' "$out.err" | show /dev/stdin
		check "$mode: the report's note names the signal" \
			grep -q "note: the target was killed by SIG$signal during the run" "$out.txt" || grep note "$out.txt" | show /dev/stdin
	fi
	if [ "$mode" = segv ]; then
		check "$mode: stderr says the fault as it came, and where" \
			grep -q "process $COUNTER_PID received SIGSEGV at 0x[0-9a-f]*.*: a fault, passed on to it" "$out.err" ||
			grep -v '^xgdbprof: mi ' "$out.err" | show /dev/stdin
	fi
done
finish
