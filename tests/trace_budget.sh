#!/usr/bin/env bash
# trace_budget.sh — the default 5% stop budget, judged by the target's own
# scheduler clocks rather than by xgdbprof's accounting: trace_hot calls
# hot_step ~1 M times a second, so without the budget it would be stopped
# almost all the time. Ranges are wide (a loaded 2-CPU machine); what must
# not happen is xgdbprof counting less than the thread was really stopped.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# Summed "on CPU" and "waiting for a CPU" ns of the fixture's threads, and
# our wall clock, read together.
clocks() {
	echo "$(date +%s%N) $(cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f", r, w }')"
}

"$FIXTURES/trace_hot" 60 >/dev/null &
HOT=$!
TEST_PIDS="$TEST_PIDS $HOT"
sleep 0.3
# the whole traced window, from the arming to xgdbprof's exit: a hit of
# 200 ms (a loaded CI run) overdraws the budget and keeps the probes off
# for seconds, so a fixed 3 s part of the run read 0.2% stopped where
# xgdbprof held the fixture 5.5% of its run
clocks_around_trace clocks "$HOT" -o "$TMP/o" -d 5s --recipe func-latency -D FUNC=hot_step
a=$CLOCKS_BEFORE
b=$CLOCKS_AFTER
# Stopped = neither on a CPU nor waiting for one (trace_hot never sleeps).
true_pct=$(echo "$a $b" | awk '{ w = $4 - $1; printf "%.1f", 100 * (w - ($5 - $2) - ($6 - $3)) / w }')
xg_pct=$(sed -n 's/^xgdbprof: traced .*target held stopped \([0-9.]*\)% of the time.*/\1/p' "$TMP/err")
hits=$(sed -n 's/^xgdbprof: traced [0-9.]* s: \([0-9]*\) hits* at .*/\1/p' "$TMP/err")
measured=$(sed -n 's/.*schedstat (wall - on CPU) for \([0-9]*\) of [0-9]* hits.*/\1/p' "$TMP/err")
# Of the hits that note counts (calibration hits included).
all_hits=$(sed -n 's/.*schedstat (wall - on CPU) for [0-9]* of \([0-9]*\) hits.*/\1/p' "$TMP/err")
echo "# fixture stopped ${true_pct}% over the traced window by its own clocks; xgdbprof says ${xg_pct}%, ${measured:-0} of ${hits:-0} hits measured"
check "budget note printed" grep -q 'probes were switched off .* <= 5% of the time' "$TMP/err"
# 70%, judged by the hit count (tests/lib.sh): 202 of 202 measured here; a
# clock that measured every other hit (145 of 290, interval 39.2-60.8%) fails:
#   sed -i '78s/if (tid > 0 \&\& w->exact) {/if (tid > 0 \&\& w->exact \&\& c->bounded++ % 3 == 0) {/' src/trace/stop_clock.c
check_share_at_least "the hidden part of most hits read from the thread's clocks" "${measured:-0}" "${all_hits:-0}" 70
check "the fixture was really stopped at most 2x the budget (${true_pct}%)" \
	awk -v t="$true_pct" 'BEGIN { exit !(t <= 10) }'
check "the probes did run: stopped at least 1% (${true_pct}%)" awk -v t="$true_pct" 'BEGIN { exit !(t >= 1) }'
check "xgdbprof does not under-count: ${xg_pct}% >= ${true_pct}% - 2" \
	awk -v x="${xg_pct:-0}" -v t="$true_pct" 'BEGIN { exit !(x >= t - 2) }'
# A budget missed is said (issue 28 item 5), as the sampler says it: a 1 s
# trace under a 1% budget, whose first hits cost more than the whole
# slack (here: 15.7-16.7% held, a hit of 150-160 ms beside a median of
# 3-4 ms), carries a note with the share, a hit's cost and the machine's
# load exactly when the share printed is over 1.2x the budget.
"$XGDBPROF" --max-stopped 1 -d 1s --recipe func-latency -D FUNC=hot_step "$HOT" >"$TMP/short.out" 2>"$TMP/short.err"
short_pct=$(sed -n 's/^xgdbprof: traced .*target held stopped \([0-9.]*\)% of the time.*/\1/p' "$TMP/short.err")
# (the printed share is rounded to 0.1: within 0.05 of the bound either way is right)
if awk -v x="${short_pct:-0}" 'BEGIN { exit !(x > 1.25) }'; then
	check "1 s under a 1% budget, held ${short_pct}%: the note says the budget was not kept, with a hit's cost and the load" \
		grep -Eq '^note: the 1% budget was not kept: the probes held the target [0-9.]+% of the time over [0-9.]+ s; a hit held it a median [0-9.]+ ms \(p99 [0-9.]+ ms\) here, the machine at load average' "$TMP/short.err" ||
		show "$TMP/short.err"
elif awk -v x="${short_pct:-0}" 'BEGIN { exit !(x < 1.15) }'; then
	check "1 s under a 1% budget, held ${short_pct:-?}% (kept): no note says it was not" \
		sh -c "test -n '$short_pct' && ! grep -q 'budget was not kept' '$TMP/short.err'" || show "$TMP/short.err"
else
	ok "skipped: 1 s under a 1% budget, held ${short_pct}%: at the bound as rounded, either is right"
fi
check "target runs free afterwards" sh -c "kill -0 $HOT && test \"\$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$HOT/status)\" = 0"
kill "$HOT" 2>/dev/null
finish
