#!/usr/bin/env bash
# Call counts under the budget within 2x of the program's own (issue 26,
# item 1): a function called every few microseconds is counted in the
# target itself, by a counter behind a jump at its first block, with no
# stop per call (docs/tracing.md, "Counted in the target"). Before, the
# estimate was a lower bound 166x under the truth (`est. at least 5813`
# for ~950,000 calls of kvstore::tree::Tree::insert in 5 s).
# kvservice (2 busy workers, 11 threads) counts its own calls in a progress
# file; the run's count must lie between half the program's count over a
# window that holds the run, and that count. Afterwards the target's code
# equals its files (the jump and the counting code gone), no thread is
# left stopped, and it keeps serving.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck

"$FIXTURES/kvservice" 120 --progress "$TMP/kv.progress" >/dev/null 2>&1 &
KV=$!
echo "$KV" >>"$TMP/pids"
wait_for_file "$TMP/kv.progress"
sleep 1
count_of() { sed -n "s/^$1 \([0-9]*\)$/\1/p" "$2"; }
ops_of() { sed -n '1s/^\([0-9]*\) .*/\1/p' "$1"; }

for mode in "" --all-stop; do
	name=${mode:-non-stop}
	# the program's count from when the probes are armed to xgdbprof's exit
	xg_window "$name" "$TMP/kv.progress" $mode -d 3s -e 'function "kvstore::tree::Tree::insert" { @calls = count(); }' "$KV"
	rc=$?
	check "$name: xgdbprof ran (rc 0)" test "$rc" = 0 || show "$TMP/$name.err"
	truth=$(( $(count_of 'kvstore::tree::Tree::insert' "$TMP/after") - $(count_of 'kvstore::tree::Tree::insert' "$TMP/before") ))
	counted=$(sed -n 's/^@calls: \([0-9]*\) counted in the target (exact.*/\1/p' "$TMP/$name.out")
	held=$(sed -n 's/.*: [0-9]* hits at .* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$TMP/$name.err")
	check "$name: no hit held the target (${held:-?}% held)" test "${held:-x}" = 0.0 || show "$TMP/$name.err"
	echo "# $name: counted ${counted:-none} in the target; the program's own count from the arming to xgdbprof's exit: $truth"
	check "$name: the count is printed as counted in the target" test -n "$counted" || show "$TMP/$name.out"
	check "$name: the count is within 2x of the program's own (at least half of $truth, at most all of it)" \
		test -n "$counted" -a "${counted:-0}" -ge $(( truth / 2 )) -a "${counted:-0}" -le "$truth"
	check "$name: a probe that only counts sets no breakpoint: nothing stopped the target for it" \
		grep -q 'no breakpoint: the probe only counts' "$TMP/$name.out"
	sleep 0.5
	diffs=$("$CODECHECK" "$KV")
	check "$name: the target's code equals its files afterwards ($diffs bytes differ)" test "$diffs" = 0
	check "$name: no thread of the target is left stopped" target_runs_free "$KV" "$TMP/kv.progress"
	ops1=$(ops_of "$TMP/kv.progress"); sleep 0.5; ops2=$(ops_of "$TMP/kv.progress")
	check "$name: the target keeps serving ($ops1 -> $ops2 operations)" test "$ops2" -gt "$ops1"
done

# A probe that also keys by thread needs its breakpoint: the count stays
# exact, and the breakpoints see a budget's share of the calls.
# traced NAME ARGS...: runs xgdbprof, the program's counts read when the
# probes are armed ($TMP/before) and at its exit ($TMP/after)
traced() {
	local name=$1
	shift
	xg_window "$name" "$TMP/kv.progress" "$@"
}
traced keyed -d 3s -e 'function "kvstore::tree::Tree::insert" { @calls = count(); @by_thread[tid] = count(); }' "$KV"
truth=$(( $(count_of 'kvstore::tree::Tree::insert' "$TMP/after") - $(count_of 'kvstore::tree::Tree::insert' "$TMP/before") ))
counted=$(sed -n 's/^@calls: \([0-9]*\) counted in the target (exact; [0-9]* seen at the breakpoints).*/\1/p' "$TMP/keyed.out")
echo "# keyed: counted ${counted:-none} with the breakpoints in; the program's own from the arming to the exit: $truth"
check "keyed: @calls counted in the target with the breakpoints in, within 2x of the program's own" \
	test -n "$counted" -a "${counted:-0}" -ge $(( truth / 2 )) -a "${counted:-0}" -le "$truth" || show "$TMP/keyed.out"

# Several functions in one map, keyed by function: a probe that only
# counts, so each key is its own site's count, with no breakpoint (since
# 2026-12-04; before, `func` as a key needed the breakpoints, and each
# key's estimate stood on its hits).
traced multi -d 3s -e 'function /^kvstore::store::Store::(get|put|scan)$/ { @c[func] = count(); }' "$KV"
check "multi: keyed by the function, still counted with no breakpoint" \
	grep -q "^@c\[kvstore::store::Store::get\]: [0-9]* counted in the target (exact; no breakpoint" "$TMP/multi.out" ||
	show "$TMP/multi.out"
for f in get put scan; do
	# (a site whose counter could not go in has breakpoints and an
	# estimate, and scan, a sixth of the calls, can then go unseen in 3 s
	# on a loaded machine: a key with no hit is not in the map)
	if [ "$f" = scan ] && ! grep -q "^@c\[kvstore::store::Store::scan\]" "$TMP/multi.out"; then
		echo "# @c[kvstore::store::Store::scan]: no hit this run"
		continue
	fi
	name="kvstore::store::Store::$f"
	truth=$(( $(count_of "$name" "$TMP/after") - $(count_of "$name" "$TMP/before") ))
	est=$(sed -n -e "s/^@c\[$name\]: \([0-9]*\) counted in the target (exact.*/\1/p" \
		-e "s/^@c\[$name\]: .* est\. \([0-9]*\) .*/\1/p" "$TMP/multi.out")
	echo "# @c[$name]: est. ${est:-none}; the program's own count from the arming to the exit: $truth"
	check "@c[$name] within 2x of the program's own count" \
		test -n "$est" -a "${est:-0}" -ge $(( truth / 2 )) -a "${est:-0}" -le $(( truth * 2 ))
done
diffs=$("$CODECHECK" "$KV")
check "the target's code equals its files at the end ($diffs bytes differ)" test "$diffs" = 0
kill "$KV" 2>/dev/null

# The demo service (README): sled-insert counts Tree::insert's two
# instances in the target; its return probes' `elapsed`, for a call of
# ~0.2 us, can only be our stops: the run must say so rather than present
# them as the function's (it printed a mean of 0.5 ms as the latency).
"$FIXTURES/cache-service" 60 --progress "$TMP/cs.progress" >/dev/null 2>&1 &
CS=$!
echo "$CS" >>"$TMP/pids"
wait_for_file "$TMP/cs.progress"
# the service's own count of Tree::insert calls, from the arming to xgdbprof's exit
xg_window cs "$TMP/cs.progress" -d 3s --recipe sled-insert "$CS"
rc=$?
truth=$(( $(awk '$1 == "inserts" { print $2 }' "$TMP/after") - $(awk '$1 == "inserts" { print $2 }' "$TMP/before") ))
counted=$(sed -n 's/^@calls: \([0-9]*\) counted in the target (exact.*/\1/p' "$TMP/cs.out")
echo "# demo: ${counted:-no count} inserts counted in the target; the service's own count from the arming to xgdbprof's exit: $truth"
check "demo: sled-insert ran (rc 0)" test "$rc" = 0 || show "$TMP/cs.err"
# (issue 26: "counts within 2x on the demo service")
check "demo: Tree::insert counted in the target within 2x of the service's own count (at least half of $truth, at most all of it)" \
	test -n "$counted" -a "${counted:-0}" -gt 0 -a "${counted:-0}" -le "$truth" -a $((2 * ${counted:-0})) -ge "$truth"
check "demo: the returns' elapsed is said to be our stops', not the function's" \
	grep -q "elapsed: NOT the function's" "$TMP/cs.err" || show "$TMP/cs.err"
diffs=$("$CODECHECK" "$CS")
check "demo: the target's code equals its files afterwards ($diffs bytes differ)" test "$diffs" = 0
check "demo: the service keeps running free" target_runs_free "$CS" "$TMP/cs.progress"
kill "$CS" 2>/dev/null

# A function that ends fewer than 5 bytes after its first instruction
# (counter's spin_step: `lock addq $1,x(%rip); ret`), with a breakpoint on
# that first instruction: the jump would have taken the next function's
# first bytes (its caller's, here), and the target died of SIGILL at once.
# It is not counted in the target, and the run says why.
start_counter
"$XGDBPROF" -d 2s -e 'function "spin_step" { @c[tid] = count(); }' "$COUNTER_PID" >"$TMP/short.out" 2>"$TMP/short.err"
rc=$?
check "short function: xgdbprof ran (rc 0)" test "$rc" = 0 || show "$TMP/short.err"
check "short function: not counted in the target, and the run says why" \
	grep -q "not counted in the target (spin_step: only 1 byte of it follows its first instruction" \
	"$TMP/short.err" || show "$TMP/short.err"
diffs=$("$CODECHECK" "$COUNTER_PID")
check "short function: the target's code equals its files afterwards ($diffs bytes differ)" test "$diffs" = 0
check "short function: the target lives and runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
finish
