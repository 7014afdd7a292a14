#!/usr/bin/env bash
# On-CPU truth under lock contention. xgdbprof stops the threads of a target
# one after another; a thread that ran into a lock held by one stopped
# before it sits in futex(FUTEX_WAIT) when its turn comes. Counting that
# stack as CPU time was our own artefact (perf, the ground truth, never has
# an on-CPU sample in a futex wait: a waiting thread is off the CPU).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

"$FIXTURES/contend" 4 60 "$TMP/contend.progress" &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/contend.progress"

# Waiting leaves: glibc's futex wait paths and the raw syscall wrapper.
waiting_share() {   # waiting_share FOLDED: "WAITING TOTAL" thread samples
	awk '{ n = $NF; total += n; split($0, f, ";"); leaf = f[length(f)]; sub(/ [0-9]+$/, "", leaf)
	       if (leaf ~ /^(futex_wait|__futex_abstimed_wait_common|__futex_abstimed_wait_common64|__GI___lll_lock_wait|__lll_lock_wait|__lll_lock_wait_private|syscall)$/) waiting += n }
	     END { print waiting + 0, total + 0 }' "$1"
}

"$XGDBPROF" -e 'set threads running; set frequency 99; set duration 5s; set max_stopped 20%
sample { @s[ustack] = count(); } end { report(@s); folded(@s); }' -o "$TMP/run" "$PID" >"$TMP/run.out" 2>"$TMP/run.err"
check "on-CPU run exits 0" test $? -eq 0 || show "$TMP/run.err"
folded=$(ls "$TMP"/run/*.folded 2>/dev/null | head -1)
read -r waiting total <<<"$(waiting_share "${folded:-/dev/null}")"
echo "  $waiting of $total running-thread stacks end in a futex wait"
check "enough running-thread stacks to judge ($total >= 30)" test "${total:-0}" -ge 30
# The artefact was 14-22% here. Since session 10 a thread on a CPU when
# asked that went into a futex wait by itself before the stop landed is kept
# (non-stop; docs/sampling.md): 12 of 323 and 19 of 368 stacks then, against
# perf's 80 of 2342 and 93 of 2419. perf, below, is the bound that counts;
# this one (was 5%, which 19 of 368 crossed) only catches the artefact.
check "no more than 10% of on-CPU stacks end in a futex wait ($waiting of $total)" \
	test $((100 * ${waiting:-0})) -le $((10 * ${total:-1}))
left_out=$(sed -n 's/.*note: \([0-9]*\) stacks of running threads were left out: the thread sat in a waiting system call.*/\1/p' "$TMP/run.out")
# How many stacks the sampler found waiting depends on the machine's load;
# the report says so when there were some.
echo "  the report says ${left_out:-no} stacks were left out"

# Ground truth where perf can record here: its share of on-CPU samples in a
# futex wait (kernel frames left out) is the bound ours must stay within.
if command -v perf >/dev/null && perf record -q -o "$TMP/probe.data" -F 99 -- true >/dev/null 2>&1; then
	perf record -q -F 499 -g -p "$PID" -o "$TMP/perf.data" -- sleep 3 >/dev/null 2>&1
	# The first user frame of each sample's call chain (kernel frames left out).
	perf script -i "$TMP/perf.data" -F comm,ip,sym,dso 2>/dev/null |
		awk '/^[^ \t]/ { want = 1; next } want && NF >= 3 && $NF != "([kernel.kallsyms])" { print $2; want = 0 }' \
		>"$TMP/perf.leaves"
	perf_total=$(wc -l <"$TMP/perf.leaves")
	perf_waiting=$(grep -cE '^(futex_wait|__futex_abstimed_wait_common|__futex_abstimed_wait_common64|__GI___lll_lock_wait|__lll_lock_wait|syscall)$' "$TMP/perf.leaves")
	echo "  perf: $perf_waiting of $perf_total on-CPU samples end in a futex wait (user frames)"
	check "within 5 points of perf's futex-wait share" \
		test $((100 * waiting * perf_total)) -le $(((100 * perf_waiting + 5 * perf_total) * total))
else
	echo "ok - skipped: perf cannot record here (the perf comparison runs in bench/)"
fi
check "target runs free afterwards" target_runs_free "$PID" "$TMP/contend.progress"
check "long-lived threads: no note of CPU never sampled" sh -c "! grep -q 'never sampled' '$TMP/run.out'"
kill "$PID"

# Threads that live a millisecond, far shorter than a sampling period: their
# CPU time is seen by /proc/PID/stat (the process's total) but by no tick.
"$FIXTURES/churn" 0 1000000 300000 >/dev/null &
CHURN=$!
TEST_PIDS="$TEST_PIDS $CHURN"
sleep 0.5
"$XGDBPROF" --recipe hot-cpu -d 3s -o "$TMP/churn" "$CHURN" >"$TMP/churn.out" 2>"$TMP/churn.err"
check "short-lived threads: run exits 0" test $? -eq 0 || show "$TMP/churn.err"
unseen=$(sed -n "s/.*note: \([0-9]*\)% of the target's CPU time .* never sampled.*/\1/p" "$TMP/churn.out")
echo "  the report says ${unseen:-no}% of the CPU time was never sampled"
# The share is the fixture's threads' part of its CPU time, 48-59% on an
# idle machine (the main thread's thread creation is the rest): the bar is
# 40, not "most", which failed CI rehearsals at 48-49%.
check "short-lived threads: the report says a large share of the CPU time was never sampled (${unseen:-none}%, at least 40%)" \
	test "${unseen:-0}" -ge 40
kill "$CHURN"
finish
