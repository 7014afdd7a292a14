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
	       if (leaf ~ /^\[in kernel: / && length(f) > 1) leaf = f[length(f) - 1]   # our marker: its user frame
	       if (leaf ~ /^(futex_wait|__futex_abstimed_wait_common|__futex_abstimed_wait_common64|__GI___lll_lock_wait|__lll_lock_wait|__lll_lock_wait_private|syscall)$/) waiting += n }
	     END { print waiting + 0, total + 0 }' "$1"
}

"$XGDBPROF" -e 'set threads running; set frequency 99; set duration 15s; set max_stopped 20%
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
# this one only catches the artefact: 5%, judged by the stack count
# (tests/lib.sh), which 19 of 368 passes (interval 2.2-11.5%). 15 s gives
# 1100-1500 stacks; keeping the waiting stacks (the mutation below) put 57
# of 726 in a futex wait in 10 s (7.9%, interval 4.8-12.5%: not caught), 163
# of 1524 in 15 s (10.7%, 8.1-14.0%: both checks below fail):
#   sed -i '489s/if (sp->cfg->threads == SAMPLER_THREADS_RUNNING)/if (0 \&\& sp->cfg->threads == SAMPLER_THREADS_RUNNING)/' src/stacks/sampler.c
# The 5% is raised to perf's own share + 2 points when perf, below, finds
# more: the program's real waits grow with the machine's load (a fresh-clone
# suite run beside other work: perf 106 of 2094 = 5.1%, ours 107 of 1389,
# failed at 5% though the truth was above it).
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
	# perf's share, of thousands of samples, is taken as the truth.
	check_share_at_most "within 5 points of perf's futex-wait share" "$waiting" "$total" \
		"$(awk -v w="$perf_waiting" -v t="$perf_total" 'BEGIN { printf "%.1f", t ? 100 * w / t + 5 : 5 }')"
	artefact_bound=$(awk -v w="$perf_waiting" -v t="$perf_total" 'BEGIN { b = t ? 100 * w / t + 2 : 5; printf "%.1f", (b > 5 ? b : 5) }')
else
	echo "ok - skipped: perf cannot record here (the perf comparison runs in bench/)"
	artefact_bound=5
fi
check_share_at_most "no more than ${artefact_bound}% of on-CPU stacks end in a futex wait (5%, or perf's share + 2)" \
	"$waiting" "$total" "$artefact_bound"
check "target runs free afterwards" target_runs_free "$PID" "$TMP/contend.progress"
check "long-lived threads: no note of CPU never sampled" sh -c "! grep -q 'never sampled' '$TMP/run.out'"
kill "$PID"

# Threads that live a millisecond, far shorter than a sampling period: their
# CPU time is seen by /proc/PID/stat (the process's total) but by no tick.
# 30000 calls a thread: the three of a round take 3-6 ms together under
# xgdbprof here, where rounds of 300000 took 16-20 ms (and 40 ms of CPU
# without gdb, the three contending for one counter): as long as the
# interval between two samples (10 ms at least), so samples saw much of
# their CPU, and the share left fell to 38% in a CI run.
"$FIXTURES/churn" 0 1000000 30000 >/dev/null &
CHURN=$!
TEST_PIDS="$TEST_PIDS $CHURN"
sleep 0.5
cpu_ticks() { awk '{ print $14 + $15 }' "$1" 2>/dev/null; }   # cpu_ticks STAT: utime + stime
process_before=$(cpu_ticks "/proc/$CHURN/stat")
main_before=$(cpu_ticks "/proc/$CHURN/task/$CHURN/stat")
"$XGDBPROF" --recipe hot-cpu -d 3s -o "$TMP/churn" "$CHURN" >"$TMP/churn.out" 2>"$TMP/churn.err"
check "short-lived threads: run exits 0" test $? -eq 0 || show "$TMP/churn.err"
process_cpu=$(($(cpu_ticks "/proc/$CHURN/stat") - ${process_before:-0}))
main_cpu=$(($(cpu_ticks "/proc/$CHURN/task/$CHURN/stat") - ${main_before:-0}))
# The fixture's truth: its short threads' part of its CPU time over the run
# (the main thread, which creates and joins them, is sampled all along).
threads_share=$((100 * (process_cpu - main_cpu) / (process_cpu > 0 ? process_cpu : 1)))
unseen=$(sed -n "s/.*note: \([0-9]*\)% of the target's CPU time .* never sampled.*/\1/p" "$TMP/churn.out")
echo "  the report says ${unseen:-no}% of the CPU time was never sampled; the short threads used ${threads_share}% of it (${process_cpu} ticks, the main thread $main_cpu)"
# A thread is seen only if a sample's listing of the threads comes while it
# lives, and then for its CPU before that listing: for threads shorter than
# the interval between listings that is less than half their CPU on
# average (threads 84-94%, never sampled 75-87%, quiet and loaded, here).
# Main's CPU is always seen; 10 points for the clock ticks both figures
# are counted in and the few ms between our reads and the sampler's.
check "short-lived threads: the report says most of their CPU time was never sampled (${unseen:-none}%, at least half the threads' ${threads_share}% of ${process_cpu} ticks, at least 10)" \
	test "$process_cpu" -ge 10 -a $((2 * ${unseen:-0})) -ge "$threads_share"
check "short-lived threads: no more never sampled than the threads used (${unseen:-none}%, at most ${threads_share}% + 10)" \
	test "${unseen:-0}" -le $((threads_share + 10))
kill "$CHURN"
finish
