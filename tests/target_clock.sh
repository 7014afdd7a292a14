#!/usr/bin/env bash
# target_clock.sh — `target_nsecs` in gdb non-stop mode is the thread's own
# clock: the wall clock less the stops of that thread, not of every thread.
# own_clock's main thread calls nap_begin, sleeps NAP_MS, calls nap_end;
# its other thread calls busy_tick every 200 us of CPU time meanwhile.
# Traced exactly with the three probed, the busy thread is stopped hundreds
# of times during each nap, but that does not hold the napper: the naps
# measured on target_nsecs must average NAP_MS (within -5%/+15%: the calls
# themselves, and each end placed at gdb's report less its median report
# time). Subtracting every thread's stops, they came out a quarter of it
# (48 ms for 200). The 190-230 ms is a timing check: judged when other
# work left the CPUs (check_timing in tests/lib.sh), skipped otherwise.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

cat >"$TMP/clock.recipe" <<'RECIPE'
set exact true
function nap_begin { @since[tid] = target_nsecs; }
function nap_end /@since[tid] != 0/ { @nap_ns = sum(target_nsecs - @since[tid]); @naps = count(); }
function busy_tick { @ticks = count(); }
end { print(@nap_ns); print(@naps); print(@ticks); clear(@since); }
RECIPE
load_begin
"$XGDBPROF" --non-stop --recipe "$TMP/clock.recipe" -- "$FIXTURES/own_clock" 5 200 >"$TMP/out" 2>"$TMP/err"
value() { sed -n "s/^@$1: \\([0-9]*\\)\$/\\1/p" "$TMP/out" | head -1; }
ns=$(value nap_ns) naps=$(value naps) ticks=$(value ticks)
mean_ms=$(awk -v s="${ns:-0}" -v n="${naps:-0}" 'BEGIN { if (n > 0) printf "%.1f", s / n / 1e6 }')
echo "# $naps naps of 200 ms on the napper's target_nsecs: mean ${mean_ms:-?} ms; busy_tick hit ${ticks:-?} times"
check "the busy thread was stopped often meanwhile (${ticks:-0} hits, at least 100)" test "${ticks:-0}" -ge 100 \
	|| show "$TMP/err"
check "5 naps measured" test "${naps:-0}" = 5
check_timing "a nap on the napper's own clock is 200 ms (mean ${mean_ms:-?} ms, 190-230), the busy thread's stops not taken out" \
	awk -v m="${mean_ms:-0}" 'BEGIN { exit !(m >= 190 && m <= 230) }'
finish
