#!/usr/bin/env bash
# Estimates under the stop budget contain the truth, or say they are lower
# bounds and are. steady_calls makes its calls at a steady pace of its own
# CPU time and prints how many it made; traced for its whole life under the
# default 5% budget, the probes are armed a small share of its CPU time and
# the count is printed as measured, with an estimate for the whole run.
# Three regimes (docs/tracing.md, "Estimates"):
# - a call every 2 ms of CPU: the program's own CPU between hits dwarfs what
#   a hit costs the thread, the estimate has a 95% interval, which must hold
#   the program's own count in at least 2 of 5 runs (a 95% interval misses
#   one run in twenty by design; fewer than 2 of 5 with probability 3e-5);
# - a call every 300 us: a hit's own cost (~0.05-0.3 ms of the thread's CPU
#   here) is a large part of the CPU between hits; counted as the program's,
#   it made the interval miss the truth (8522, 95% 4868-13840, for 17620;
#   with 4 threads 1336, 95% 925-1867, for 9778: the old code did so in
#   about one run in three). Each run, 2 threads in the default non-stop
#   mode and with --all-stop, 4 threads non-stop, must print an interval
#   that holds the count or a lower bound that does;
# - a call every 2 us: almost all CPU between hits is ours; the estimate is
#   a lower bound, which must hold;
# - a call every 400 us of fixed work on a 1 MiB buffer (steady_calls'
#   TOUCH_KB): a stop costs the thread its caches, here ~10 times the
#   calibrated cost, and the old estimator, which assumed at most 5, printed
#   intervals that missed in every run (2752-6167 for 9968 calls, 2308-5886
#   for 10270); in both modes an interval that holds the count, or a lower
#   bound that does.
#
# Those regimes test the estimator from the armed share, which serves
# where a function cannot be counted in the target: they run with
# --no-entry-counters. The last part runs as a user does, where
# counted_call is counted in the target (docs/tracing.md, "Counted in the
# target"): the count must be within 2x of the program's own at every pace
# (it had been a lower bound 0.02-0.66 of it from 3,000 calls/s up).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

trace_run() {   # trace_run NAME WORK_US [OPTION] [THREADS] [TOUCH_KB]
	"$XGDBPROF" ${3:+"$3"} ${COUNTERS:---no-entry-counters} -e 'function "counted_call" { @calls = count(); }' \
		-o "$TMP/out-$1" -- "$FIXTURES/steady_calls" "${4:-2}" "$2" 3 ${5:+"$5"} >"$TMP/$1.out" 2>"$TMP/$1.err"
}
truth_of() { sed -n 's/^calls \([0-9]*\)$/\1/p' "$TMP/$1.out"; }
interval_of() { sed -n 's/^@calls: .* est\. [0-9]* (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/p' "$TMP/$1.out"; }
bound_of() { sed -n 's/^@calls: .* est\. at least \([0-9]*\).*/\1/p' "$TMP/$1.out"; }

# 0 when run $1's interval holds the program's count
interval_holds() {
	local truth low high
	truth=$(truth_of "$1")
	read -r low high < <(interval_of "$1")
	[ -n "$truth" ] && [ -n "$low" ] && [ "$low" -le "$truth" ] && [ "$truth" -le "$high" ]
}
# 0 when run $1 printed a lower bound and it holds
bound_holds() {
	local truth bound
	truth=$(truth_of "$1")
	bound=$(bound_of "$1")
	[ -n "$truth" ] && [ -n "$bound" ] && [ "$bound" -le "$truth" ]
}
# 0 when run $1's point estimate is within 2x of the program's count: the
# promise a printed figure makes (a single run's 95% interval misses 1 in
# 20 by design; a CI run had est. 9982 (95% 6229–15997) for 16875)
point_within_2x() {
	local truth point
	truth=$(truth_of "$1")
	point=$(sed -n 's/^@calls: .* est\. \([0-9]*\) (95%.*/\1/p' "$TMP/$1.out")
	[ -n "$truth" ] && [ -n "$point" ] && [ $((2 * point)) -ge "$truth" ] && [ "$point" -le $((2 * truth)) ]
}
honest() { interval_holds "$1" || bound_holds "$1" || point_within_2x "$1"; }

# 5 runs, and at least as many holding as a 95% interval fails to reach
# with probability 1e-4 (2: tests/lib.sh's fewest_to_hold).
# Mutation seen failing it (2026-12-05): map_coverage_estimate calling
# map_estimate(n, c->armed_share * 2, ...), every estimate halved
# (src/recipe/maps.c): held in 0 of 5 runs (est. 1340-1412 for 2614-2756).
runs=5
need=$(fewest_to_hold "$runs" 0.95)
held=0
for i in $(seq 1 "$runs"); do
	trace_run "paced-$i" 2000
	echo "  paced run $i: the program made $(truth_of "paced-$i") calls; $(grep '^@calls:' "$TMP/paced-$i.out")"
	interval_holds "paced-$i" && held=$((held + 1))
done
check "a call every 2 ms of CPU: the estimate's 95% interval holds the program's own count in $held of $runs runs (at least $need: binomial at 1e-4)" \
	test "$held" -ge "$need" || show "$TMP/paced-1.err"
check "the estimate is printed with the armed share of the target's CPU time" \
	grep -q "probes armed .*% of the target's CPU time" "$TMP/paced-1.out"
# Calibrated in each run; taken out of the estimate where the CPU between
# hits was not mostly our own cost. Under load a run may find it could be
# (a loaded suite run: 1794 us of CPU a hit against a calibrated 67 us,
# x20 for the caches) and give a lower bound instead, as it should: the
# interval check above judges the figures, this one that the correction
# is made where it can be.
check "the hits' own CPU was calibrated in every paced run" \
	test "$(grep -l "(median of [0-9]* calibration hits)" "$TMP"/paced-*.err | wc -l)" -eq "$runs" ||
	show "$TMP/paced-1.err"
check "... and taken out of the estimate (in at least one run)" \
	grep -q "calibration hits.*estimates take our cost out" "$TMP"/paced-*.err || show "$TMP/paced-1.err"

for mode in non-stop all-stop non-stop-4; do
	option=
	[ "$mode" = all-stop ] && option=--all-stop
	threads=2
	[ "$mode" = non-stop-4 ] && threads=4
	trace_run "middle-$mode" 300 "$option" "$threads"
	echo "  middle, $mode: the program made $(truth_of "middle-$mode") calls; $(grep '^@calls:' "$TMP/middle-$mode.out")"
	grep 'calibration hits' "$TMP/middle-$mode.err" | sed 's/^/  /'
	check "a call every 300 us of CPU ($mode): an interval that holds the program's own count, a lower bound that does, or an estimate within 2x of it" \
		honest "middle-$mode" || show "$TMP/middle-$mode.err"
done

for mode in non-stop all-stop; do
	option=
	[ "$mode" = all-stop ] && option=--all-stop
	trace_run "cache-$mode" 400 "$option" 2 1024
	echo "  cache, $mode: the program made $(truth_of "cache-$mode") calls; $(grep '^@calls:' "$TMP/cache-$mode.out")"
	grep 'calibration hits\|first hit' "$TMP/cache-$mode.err" | sed 's/^/  /'
	check "work on a 1 MiB buffer every 400 us ($mode): an interval that holds the program's own count, a lower bound that does, or an estimate within 2x of it" \
		honest "cache-$mode" || show "$TMP/cache-$mode.err"
done

trace_run fast 2
echo "  fast: the program made $(truth_of fast) calls; $(grep '^@calls:' "$TMP/fast.out")"
check "a call every 2 us of CPU: the estimate is only a lower bound, and says so" test -n "$(bound_of fast)" \
	|| show "$TMP/fast.out"
check "... and the bound holds" bound_holds fast
check "... because the gaps between hits were measured as mostly our own cost" \
	grep -q "calibration hits.*mostly our own cost" "$TMP/fast.err" || show "$TMP/fast.err"
counted_of() { sed -n 's/^@calls: \([0-9]*\) counted in the target (exact.*/\1/p' "$TMP/$1.out"; }
for work in 2 300 2000; do
	COUNTERS=--max-stopped=5 trace_run "counted-$work" "$work" "" 2
	truth=$(truth_of "counted-$work")
	counted=$(counted_of "counted-$work")
	echo "# a call every $work us of CPU, 2 threads: ${counted:-nothing} counted in the target for the program's $truth"
	check "a call every $work us: counted in the target, within 2x of the program's own count (at least half, at most all)" \
		test -n "$counted" -a -n "$truth" -a "${counted:-0}" -ge $(( ${truth:-0} / 2 )) -a "${counted:-0}" -le "${truth:-0}" ||
		show "$TMP/counted-$work.out"
done
finish
