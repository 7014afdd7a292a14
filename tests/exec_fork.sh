#!/usr/bin/env bash
# exec_fork.sh — a target that execs, forks or was stopped before we came.
#  - exec while probes are armed (budgeted and exact) and while sampling
#    (all-stop and non-stop): xgdbprof ends the run at the exec within a few
#    seconds (it used to leave every thread in state t for ~35 s), says so,
#    and the new program runs free: not stopped, not traced, its code equal
#    to its file;
#  - fork / vfork / posix_spawn while probes are armed: every child exits 0
#    (an int3 a child inherited kills it with SIGTRAP), the parent is left
#    clean;
#  - sampling a target that posix_spawns: exit status 0, the parent clean;
#  - a target in state T: nothing is run, it stays in T, exit status 2.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck
PROBE='function "hot_step" { @c = count(); }'

# Waits until process $1 runs the program $2 (a child started with & is
# still the shell for a moment before its exec).
wait_attached() { local i; for i in $(seq 1 600); do grep -q "attached" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
wait_traced() { local i; for i in $(seq 1 600); do t=$(tracer_of "$1"); [ -n "$t" ] && [ "$t" != 0 ] && return 0; sleep 0.05; done; return 1; }

# True when every thread of $1 is in one of the states $2 (e.g. "RSD").
threads_in() {
	local task state
	for task in /proc/"$1"/task/*; do
		state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)
		case "$2" in *"$state"*) ;; *) echo "  thread ${task##*/} of $1 in state '$state'"; return 1 ;; esac
	done
}

# The exec'd program runs free: alive, no thread stopped, not traced, its
# code bytes those of its file (an int3 left there would also kill it).
runs_free_after_exec() {
	local pid=$1 tracer
	kill -0 "$pid" 2>/dev/null || { echo "  process $pid is gone"; return 1; }
	grep -q "/nonexistent" "/proc/$pid/cmdline" || { echo "  process $pid did not exec"; return 1; }
	threads_in "$pid" "RSD" || return 1
	tracer=$(tracer_of "$pid")
	[ "$tracer" = 0 ] || { echo "  process $pid traced by $tracer"; return 1; }
	[ "$("$CODECHECK" "$pid")" = 0 ] || { echo "  code bytes of $pid differ from its file"; return 1; }
}

# exec_case NAME WAIT_FOR PREFIX -- XGDBPROF_ARGS...: starts exec_later
# (which execs itself into a copy waiting forever, its threads still calling
# hot_step), runs xgdbprof on it, triggers the exec once it is at work.
exec_case() {
	local name=$1 wait_for=$2 prefix=$3; shift 4
	local trig=$TMP/trig.$name out=$TMP/$name
	$prefix "$FIXTURES/exec_later" "$trig" "$FIXTURES/exec_later" /nonexistent &
	local pid=$!
	TEST_PIDS="$TEST_PIDS $pid"
	wait_exe "$pid" "$FIXTURES/exec_later"
	"$XGDBPROF" -d 60s -o "$out.dir" "$@" "$pid" >"$out.out" 2>"$out.err" &
	local xp=$!
	if [ "$wait_for" = attached ]; then wait_attached "$out.err"; else wait_traced "$pid"; fi
	sleep 1
	# That the run ends at the exec is judged whatever the load (20 s of
	# a 60 s run); how soon, only when other work left us the CPUs (a
	# loaded suite run saw 5 s pass once, issue 28 item 4).
	load_begin "$pid" "$xp" "$(gdb_child_of "$xp")"
	local t0 t1
	t0=$(date +%s%N)
	touch "$trig"
	if wait_exit "$xp" 20; then
		t1=$(date +%s%N)
		ok "$name: xgdbprof ends the run after the exec (in $(( (t1 - t0) / 1000000 )) ms)"
		check_timing "$name: ... within 5 s of it" test $(( (t1 - t0) / 1000000 )) -le 5000
		wait "$xp"
		check "$name: exit status 0" test $? = 0
	else
		not_ok "$name: xgdbprof still running 20 s after the exec"
		threads_in "$pid" "RSD" >/dev/null || echo "  # the target is stopped meanwhile: $(cat /proc/$pid/task/*/stat | awk '{print $3}' | tr -d '\n')"
		kill "$xp"; wait_exit "$xp" 60 || kill -9 "$xp"
	fi
	sleep 0.3
	check "$name: the new program runs free" runs_free_after_exec "$pid"
	check "$name: stderr says the target exec'd" grep -q "exec'd" "$out.err" || show "$out.err"
	kill -9 "$pid" 2>/dev/null
}

exec_case trace-budget attached "" -- -e "$PROBE"
exec_case trace-exact attached "" -- -e "set exact true
$PROBE"
exec_case sample-all-stop traced "" -- --all-stop --recipe hot-cpu
check "sample-all-stop: the report says the target exec'd" grep -q "exec'd" "$TMP/sample-all-stop.out"
exec_case sample-non-stop traced "" -- --non-stop --recipe hot-cpu

# Forks while probes are armed: children never keep an int3.
for mode in fork vfork spawn; do
	for exact in "" "set exact true"; do
		name="$mode${exact:+-exact}"
		result=$TMP/$name.result
		"$FIXTURES/fork_loop" "$mode" 0 "$result" 2>"$TMP/$name.children" &
		pid=$!
		TEST_PIDS="$TEST_PIDS $pid"
		wait_for_file "$result"
		# -v: each fork record read is said ("fork child N: ..."), for a
		# child that dies all the same
		"$XGDBPROF" -v -d 3s -o "$TMP/$name.dir" -e "$exact
$PROBE" "$pid" >"$TMP/$name.out" 2>"$TMP/$name.err"
		status=$?
		sleep 0.3
		read -r started abnormal <"$result"
		check "$name: xgdbprof exit status 0" test "$status" = 0 || grep -v '^xgdbprof: mi ' "$TMP/$name.err" | show /dev/stdin
		if ! check "$name: $started children started, none died ($abnormal abnormal)" test "$abnormal" = 0; then
			show "$TMP/$name.children"
			for child in $(sed -n 's/.*child \([0-9]*\) trapped.*/\1/p' "$TMP/$name.children"); do
				echo "  # child $child, what xgdbprof said of it: $(grep "fork child $child:" "$TMP/$name.err" || echo nothing)"
				echo "  # the 3 lines before: $(grep -B3 "fork child $child:" "$TMP/$name.err" | head -3 | tr '\n' '|')"
			done
			echo "  # fork records read: $(grep -c 'fork child' "$TMP/$name.err"), of which let go first: $(grep -c 'already let go' "$TMP/$name.err")"
		fi
		check "$name: the parent runs free" threads_in "$pid" "RSD"
		check "$name: the parent is not traced" test "$(tracer_of "$pid")" = 0
		check "$name: the parent's code equals its file" test "$("$CODECHECK" "$pid")" = 0
		if [ "$mode" = fork ]; then
			check "$name: the report counts the forks" grep -q "forked [0-9]* time" "$TMP/$name.err"
		fi
		kill -9 "$pid" 2>/dev/null
	done
done

# Sampling (non-stop, one thread at a time) a target that posix_spawns
# every 10 ms: gdb 13 loses the stop of a thread asked while another one is
# in a vfork (src/session/session_stop.c, lost_thread_stop). It used to end
# the run after 15 s with gdb killed and exit status 1, in 3 runs of 3; now
# each lost stop is mended by a new attach and the run says so.
name=sample-spawn
result=$TMP/$name.result
"$FIXTURES/fork_loop" spawn 0 "$result" 2>"$TMP/$name.children" &
pid=$!
TEST_PIDS="$TEST_PIDS $pid"
wait_for_file "$result"
"$XGDBPROF" -d 4s -o "$TMP/$name.dir" --recipe hot-cpu "$pid" >"$TMP/$name.out" 2>"$TMP/$name.err"
status=$?
sleep 0.3
read -r started abnormal <"$result"
check "$name: xgdbprof exit status 0" test "$status" = 0 || show "$TMP/$name.err"
check "$name: the busy threads were sampled" grep -q "hot_step\|busy" "$TMP/$name.out" || show "$TMP/$name.out"
check "$name: $started children started, none died ($abnormal abnormal)" test "$abnormal" = 0 ||
	show "$TMP/$name.children"
check "$name: the parent runs free" threads_in "$pid" "RSD"
check "$name: the parent is not traced" test "$(tracer_of "$pid")" = 0
if grep -q "attached again" "$TMP/$name.err"; then
	echo "# $name: $(grep -c 'lost the stop\|lost [0-9]* stops' "$TMP/$name.err") line(s) on lost stops: $(grep 'lost [0-9]* stops' "$TMP/$name.err" | cut -c1-60)"
fi
kill -9 "$pid" 2>/dev/null

# A target stopped before we came (SIGSTOP): left exactly as found.
start_counter
kill -STOP "$COUNTER_PID"
sleep 0.2
for what in trace sample; do
	if [ "$what" = trace ]; then args=(-e 'function "spin_step" { @c = count(); }'); else args=(--recipe hot-cpu); fi
	"$XGDBPROF" -d 2s -o "$TMP/stopped-$what.dir" "${args[@]}" "$COUNTER_PID" >"$TMP/stopped-$what.out" \
		2>"$TMP/stopped-$what.err" &
	xp=$!
	moved=0
	while kill -0 "$xp" 2>/dev/null; do
		threads_in "$COUNTER_PID" "T" >/dev/null || moved=1
		sleep 0.02
	done
	wait "$xp"
	status=$?
	check "stopped target, $what: every thread stayed in T during the run" test "$moved" = 0
	check "stopped target, $what: exit status 2" test "$status" = 2
	check "stopped target, $what: says it is stopped and how to resume it" \
		grep -q "is stopped (state T).*kill -CONT $COUNTER_PID" "$TMP/stopped-$what.err" || show "$TMP/stopped-$what.err"
	check "stopped target, $what: still in T after" threads_in "$COUNTER_PID" "T"
	check "stopped target, $what: not traced after" test "$(tracer_of "$COUNTER_PID")" = 0
done
kill -CONT "$COUNTER_PID"
check "stopped target: runs again after SIGCONT" target_runs_free "$COUNTER_PID" "$PROGRESS"
finish
