#!/usr/bin/env bash
# The guardian (session_start_guardian): a child of xgdbprof, forked before
# the attach, that outlives it to continue a target left stopped should
# xgdbprof be killed. Whatever happens to the guardian, the run must end as
# usual: a guardian someone stopped (kill -STOP) is not waited on for ever.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

start_counter

# guardian_of XP: xgdbprof's child that is not gdb.
guardian_of() {
	local pid
	for pid in $(pgrep -P "$1"); do
		case "$(cat /proc/$pid/comm 2>/dev/null)" in gdb*) ;; *) echo "$pid"; return 0 ;; esac
	done
	return 1
}

out=$TMP/stopped-guardian
"$XGDBPROF" -v --recipe hot-cpu -d 2s -o "$out" "$COUNTER_PID" >"$out.txt" 2>"$out.err" &
XP=$!
TEST_PIDS="$TEST_PIDS $XP"
for _ in $(seq 1 400); do grep -q 'first sample' "$out.err" 2>/dev/null && break; sleep 0.05; done
G=$(guardian_of "$XP")
check "the guardian is there during the run (xgdbprof's child that is not gdb)" test -n "$G" || { show "$out.err"; finish; }
TEST_PIDS="$TEST_PIDS $G"
kill -STOP "$G"
stopped_at=$(date +%s%N)
# The run ends 2 s after its first sample; then the detach, the guardian
# (a second at most) and the report, all before the guardian is resumed.
exited=no
wait_exit "$XP" 8 && exited=yes
took=$(( ($(date +%s%N) - stopped_at) / 1000000 ))
check "xgdbprof exited within 8 s of its guardian being stopped (a 2 s run; ${took} ms)" test "$exited" = yes
check "the report was printed" grep -q '#1 hottest code path' "$out.txt"
check "the profile was saved" test -s "$out/profile.json"
if [ "$exited" = yes ]; then
	wait "$XP"
	check "... with status 0" test "$?" -eq 0
else
	echo "  guardian $G in state $(proc_state "$G"); resuming it to end the run"
	kill -CONT "$G"
	wait_exit "$XP" 10 || kill -9 "$XP"
fi
check "-v says the guardian was ended" grep -q "guardian process $G .*killed it" "$out.err" || show "$out.err"
check "the target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
check "no guardian left behind" wait_exit "$G" 2
finish
