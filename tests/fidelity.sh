#!/usr/bin/env bash
# Does hot-cpu tell the truth on a realistic service (issue 13)? xgdbprof's
# hot-cpu and `perf record -F 499 -g` sample the kvservice fixture (2 busy
# workers among 11 threads, parking_lot locks, malloc churn, a B-tree store)
# at the same time; their flat self-time profiles must overlap >= 70% at
# symbol level (bench/fidelity.py: kernel frames left out, names normalized),
# within 8 points of what a sampler without bias reaches with as many
# stacks, with no function perf gives >= 5% outside 2x of ours (issue 32),
# and the #1 hottest path's headline must name the fixture's own code. The
# bench, bench/fidelity.sh, measures the figures over rounds.
# Also checks the fixture itself: both manglings built, its counters advance,
# and it runs free after the profile.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool perf linux-perf
require_tool python3 python3
perf record -F 99 -g -o "$TMP/probe.data" -- sleep 0.1 >"$TMP/probe.log" 2>&1 ||
	skip_test "perf cannot record here ($(tail -n 1 "$TMP/probe.log")); run as root or lower kernel.perf_event_paranoid"
ANALYSE="python3 $TOP_SRCDIR/bench/fidelity.py"
WINDOW=30   # ~400 stacks at the default rate: issue 32 judges at >= 300

# --- The fixture: both builds, its own counters -----------------------------
check "kvservice (legacy mangling) was built" test -x "$FIXTURES/kvservice"
check "kvservice-v0 was built" test -x "$FIXTURES/kvservice-v0"
check "the two builds differ only in mangling: legacy names kvstore's functions _ZN7kvstore…, v0 _RN…7kvstore" \
	sh -c "nm '$FIXTURES/kvservice' | grep -q ' _ZN7kvstore4tree4Tree6insert17h' &&
	       nm '$FIXTURES/kvservice-v0' | grep -q ' _R.*7kvstore4tree.*4Tree6insert' &&
	       ! nm '$FIXTURES/kvservice-v0' | grep -q ' _ZN7kvstore'"

"$FIXTURES/kvservice" 120 --progress "$TMP/kv.progress" >/dev/null &
KV=$!
TEST_PIDS="$TEST_PIDS $KV"
wait_for_file "$TMP/kv.progress"
sleep 3   # its tree fills up: a steady state
check "the fixture runs 11 threads" test "$(ls /proc/$KV/task | wc -l)" -ge 11
check "its progress file counts Tree::insert and Tree::get calls" \
	sh -c "grep -q '^kvstore::tree::Tree::insert [1-9]' '$TMP/kv.progress' && grep -q '^kvstore::tree::Tree::get [1-9]' '$TMP/kv.progress'"

# --- The same process, perf and hot-cpu at the same time --------------------
window() {   # window N: hot-cpu and perf over the same WINDOW seconds; compare-N.txt
	"$XGDBPROF" --recipe hot-cpu -d "${WINDOW}s" -o "$TMP/hot$1" "$KV" >"$TMP/hot$1.txt" 2>"$TMP/hot$1.err" &
	XG=$!
	TEST_PIDS="$TEST_PIDS $XG"
	for _ in $(seq 1 600); do   # perf starts once xgdbprof has attached
		grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/"$KV"/task/*/status 2>/dev/null && break
		sleep 0.05
	done
	perf record -F 499 --call-graph dwarf -p "$KV" -o "$TMP/perf$1.data" -- sleep "$WINDOW" >"$TMP/perf$1.log" 2>&1
	check "perf recorded the fixture (window $1)" test $? -eq 0 || show "$TMP/perf$1.log"
	wait "$XG"
	check "hot-cpu run exits 0 (window $1)" test $? -eq 0 || show "$TMP/hot$1.err"
	check "the fixture runs free after the profile (window $1)" target_runs_free "$KV" "$TMP/kv.progress"
	perf script --no-inline -i "$TMP/perf$1.data" -F comm,tid,ip,sym,dso >"$TMP/perf$1.txt" 2>/dev/null
}
window 1
cp "$TMP/hot1.txt" "$TMP/hot.txt"
$ANALYSE compare "$TMP/perf1.txt" "$TMP/hot1/profile.json" --top 12 --perf-seconds "$WINDOW" >"$TMP/compare.txt"
check "the profiles were compared" test $? -eq 0
show "$TMP/compare.txt"
echo "    | headline: $(grep -m 1 '^#1 hottest' "$TMP/hot.txt")"

value() { sed -n "s/^$1 //p" "$TMP/compare.txt"; }
overlap=$(value overlap_pct)
# Known to fail before issue 13's on-CPU, rate and hottest-path work: measured
# 38-43% overlap and a parking_lot/sched_yield headline (bench/README.md).
# The issue asks 70% here (85% in bench/fidelity.sh). Session 9's code
# measured 70-75% at 100-220 stacks (the bound was 60% then); since session
# 10's cheaper stops and futex-wait rule, CI rehearsals measured 80.2% at 424
# stacks and 84.4% at 449.
# Judged at 100 stacks or more: at 14 (a CI rehearsal at load 11) a
# perfect sampler itself reaches little more than 50%. The run must have
# taken stacks at all (exact).
check "the run took thread stacks ($(value our_samples))" test "$(value our_samples)" -gt 0 2>/dev/null
if [ "$(value our_samples)" -ge 100 ] 2>/dev/null; then
	check "issue 13: flat self-time overlap with perf >= 70% (measured: ${overlap:-none}%, $(value our_samples) thread stacks)" \
		awk -v o="${overlap:--1}" 'BEGIN { exit !(o != "-" && o >= 70) }'
else
	echo "ok - skipped: issue 13's 70% overlap needs >= 100 stacks ($(value our_samples) here, load $(cut -d' ' -f1 /proc/loadavg))"
fi
# Issue 32's bars: the overlap within 8 points of what a sampler without
# bias reaches with as many stacks (perf's distribution resampled:
# fidelity.py's perfect_overlap_pct), at 300 stacks or more; and no
# function perf gives >= 5% off by more than 2x (judged where the stack
# count makes 2x wider than the 1e-4 binomial bound: fidelity.py).
# One window holds a few hundred stacks, and the acceptor (a
# sched_yield spinner, ~14% of the CPU, on a CPU at 1% of our asks) gets
# 1-5 of them: where those land moves 10 points between sched_yield and
# syscall, more than sampling noise at its CPU share allows (2026-12-07:
# single 20 s windows 0.2-7.8 points short, median 5.2; bench/README.md). So a
# window that misses a bar is followed by a second one on the same
# process, and the bars are judged on both together (fidelity.py sums
# "A+B"): the ten pairs of five such windows, summed, 0.7-6.2 points
# short (median 3.6). A bias fails
# both. Mutation that fails it (2 windows, 2026-12-07: 62.6% against a
# perfect sampler's 94.9%, sched_yield 47.4% and 49.0% against perf's 16.4):
# in src/stacks/sampler.c keep the stops that land in a waiting call
# (sampler_round: `if (0) continue;` after st->waiting_at_stop++) and stop
# the threads queued in one (one_thread_at_a_time: `if (0) {` for the
# waits_in_kernel skip). Not caught: handing the CPU of left-out rounds to
# the thread's next sample (the bias this pool removed, ~1-2 points of
# overlap): 90.1% and 90.3% against 92.5% and 93.3% with it put back.
judge_32() {   # judge_32: 0 when the bars of compare.txt hold
	p=$(value perfect_overlap_pct) n=$(value our_samples)
	[ "${n:-0}" -ge 300 ] && [ "${p:--}" != "-" ] || return 2
	awk -v o="$(value overlap_pct)" -v p="$p" 'BEGIN { exit !(o != "-" && p - o <= 8) }' && [ "$(value off_2x)" = "-" ]
}
judge_32
verdict=$?
windows="1 window"
if [ "$verdict" -eq 1 ]; then
	echo "# window 1 misses a bar (overlap $(value overlap_pct)% against a perfect sampler's $(value perfect_overlap_pct)% for $(value our_samples) stacks; outside 2x: $(value off_2x)): a second window, judged with it"
	window 2
	$ANALYSE compare "$TMP/perf1.txt+$TMP/perf2.txt" "$TMP/hot1/profile.json+$TMP/hot2/profile.json" --top 12 \
		--perf-seconds $((2 * WINDOW)) >"$TMP/compare.txt"
	show "$TMP/compare.txt"
	judge_32
	verdict=$?
	windows="2 windows"
fi
if [ "$verdict" -eq 2 ]; then
	echo "ok - skipped: issue 32's bars need >= 300 stacks ($(value our_samples) here, load $(cut -d' ' -f1 /proc/loadavg))"
else
	check "issue 32: overlap within 8 points of a perfect sampler's, and no function perf gives >= 5% outside 2x ($windows: $(value overlap_pct)% against $(value perfect_overlap_pct)% for $(value our_samples) stacks; outside 2x: $(value off_2x))" \
		test "$verdict" -eq 0
fi
check "issue 13: the #1 hottest path's headline names the fixture's own code (kvstore::/kvservice::)" \
	sh -c "grep -m 1 '^#1 hottest' '$TMP/hot.txt' | grep -q -e 'kvstore::' -e 'kvservice::'"
finish
