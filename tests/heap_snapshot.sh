#!/usr/bin/env bash
# heap_snapshot.sh — snapshot() inside a run, the diff of two snapshots,
# and the heap recipe's retained-bytes estimate under the stop budget,
# each against a fixture whose truth is known.
# 1. heap_growth keeps one 1000-byte block every 50 ms of wall time (on a
#    schedule that catches up after our stops) and frees everything else:
#    traced exactly, with a snapshot a second, `report --diff-base` of
#    snapshots 2 and 4 must show leak_site grown by their distance in time
#    over 50 ms, in blocks of 1000 bytes (give or take 3 of the 40: where
#    each snapshot falls in a block's 50 ms, and the catch-up after a stop).
# 2. alloc_sites leaks 60 blocks of 1000 bytes, one every other round of
#    8 ms of its CPU, all of them well before the trace ends: under a 10%
#    budget the retained-bytes estimate's 95% interval must hold 60000
#    (one retry: the interval misses one run in twenty by design).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# field FILE KEY: a number from a saved profile's meta
field() { sed -n "s/^ *\"$2\": \\([0-9.]*\\),\$/\\1/p" "$1" | head -1; }

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/heap.recipe"; } >"$TMP/heap-exact.recipe"
"$XGDBPROF" --recipe "$TMP/heap-exact.recipe" -D SNAPSHOT=1s -d 4500ms -o "$TMP/snap" \
	-- "$FIXTURES/heap_growth" 50 100000 1000 7 >"$TMP/snap.out" 2>"$TMP/snap.err"
check "snapshot(): one file a second and one at the end, each said on stderr" \
	sh -c "test -f '$TMP/snap/heap-3.json' && grep -q '^xgdbprof: heap snapshot 3 at .* bytes live, the target held .* ms: heap-3.json' '$TMP/snap.err' && grep -q 'tested before the detach' '$TMP/snap.err'" \
	|| show "$TMP/snap.err"
"$XGDBPROF" report --diff-base "$TMP/snap/heap-2.json" "$TMP/snap/heap-4.json" >"$TMP/diff.txt" 2>&1
t2=$(field "$TMP/snap/heap-2.json" duration_actual_s)
t3=$(field "$TMP/snap/heap-4.json" duration_actual_s)
grew=$(sed -n 's/^ *+\([0-9]*\) .* leak_site$/\1/p' "$TMP/diff.txt")
truth=$(awk -v a="${t2:-0}" -v b="${t3:-0}" 'BEGIN { printf "%d", (b - a) / 0.050 * 1000 }')
echo "# snapshots at ${t2:-?} s and ${t3:-?} s: leak_site grew by ${grew:-?} bytes, the schedule says $truth"
check "report --diff-base of two snapshots: leak_site grew by the bytes leaked between them (±3 blocks)" \
	awk -v g="${grew:--1}" -v t="$truth" 'BEGIN { d = g - t; exit !(g >= 0 && d <= 3000 && d >= -3000) }' \
	|| show "$TMP/diff.txt"
check "the diff of two snapshots ranks allocation sites by bytes, leak_site first" \
	sh -c "grep -A2 '^grew most:' '$TMP/diff.txt' | tail -1 | grep -q 'leak_site\$' && grep -q 'Heap snapshots: bytes' '$TMP/diff.txt'"
check "churn_site's blocks (freed at once) did not grow" \
	sh -c "! grep -A3 '^grew most:' '$TMP/diff.txt' | grep -qE '^ *\\+[0-9]{4,} .*churn_site'"
check "a snapshot is a profile: xgdbprof report reads it, its note says when it was taken" \
	sh -c "'$XGDBPROF' report '$TMP/snap/heap-3.json' | grep -q 'heap snapshot 3, [0-9.]* s into the run'"

cat >"$TMP/bad.recipe" <<'R'
function /^malloc$/ { @n[ustack] = count(); }
end { snapshot(@n); }
R
"$XGDBPROF" --recipe "$TMP/bad.recipe" -- "$FIXTURES/heap_growth" 50 1 1 1 >"$TMP/bad.out" 2>&1
status=$?
check "snapshot() of a map that is not live(): exit 2, named" \
	sh -c "test $status = 2 && grep -q 'snapshot() takes a map of live() values' '$TMP/bad.out'" || show "$TMP/bad.out"

held=0
for try in 1 2; do
	"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/heap.recipe" --max-stopped 10 -d 6s -o "$TMP/budget-$try" \
		-- "$FIXTURES/alloc_sites" 8000 8 60 2 >"$TMP/budget-$try.out" 2>"$TMP/budget-$try.err"
	line=$(awk '/^@heap\[/ { want = 1; first = 1; next }
		want && first { first = 0; hit = ($1 == "leak_site"); next }
		want && /^\]: / { if (hit) print; want = 0 }' "$TMP/budget-$try/heap-live.txt" | head -1)
	read -r nleaked size < <(sed -n 's/^leaked \([0-9]*\) \([0-9]*\) .*/\1 \2/p' "$TMP/budget-$try.out")
	truth=$(( ${nleaked:-0} * ${size:-0} ))
	# an estimate's interval; a lower bound capped by the heap's own count
	# of chunks; or, for allocations seen in too few armed windows to
	# extrapolate (these leaks come in the run's first second), the range
	# that count bounds
	read -r lo hi < <(sed -n 's/.* est\. [0-9]* bytes retained (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/p; t
		s/.* · est\. at least \([0-9]*\) bytes retained (95%), at most \([0-9]*\): .*/\1 \2/p; t
		s/.* · retained \([0-9]*\)–\([0-9]*\) bytes: .*/\1 \2/p' <<<"$line")
	echo "# budget run $try: the program kept ${nleaked:-?} blocks of ${size:-?} bytes; @heap[leak_site…]$line"
	if [ "${nleaked:-0}" = 60 ] && [ -n "$lo" ] && [ "$lo" -le "$truth" ] && [ "$truth" -le "$hi" ]; then
		held=1
		break
	fi
done
check "heap under the budget: the retained-bytes estimate's 95% interval (or the heap-bounded range) holds the leak (60 x 1000 bytes)" \
	test "$held" = 1 || show "$TMP/budget-$try.err"
check "heap under the budget: snapshots note the armed share they stand for" \
	grep -q 'the probes were armed .* so far: the whole run' "$TMP/budget-$try/heap-1.json"
finish
