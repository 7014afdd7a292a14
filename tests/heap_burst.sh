#!/usr/bin/env bash
# heap_burst.sh — the heap recipe on a leak made at start (leak_burst: N
# blocks of SIZE bytes in one loop, then churn of 256-byte blocks that are
# freed). Under the stop budget the probes are armed a share of the
# target's CPU time, and the burst falls in the first armed window: scaled
# by that share as if the allocations came evenly over the run, the
# retained bytes came out 50-75 times the truth (an "est. at least 1480784
# bytes" for 20 blocks of 1000). The heap's own census of chunks of the
# sizes seen bounds it: the report must give leak_burst's retained bytes as
# a range (or an interval) that holds the truth N x SIZE and whose top is
# within 50% of it, and say why the estimate was not used. Since
# 2026-12-05 it gives the stack's share of those blocks (here all of them:
# exactly 20000 and 120000), not the range from the bytes seen to the bound.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

for args in "20 1000" "400 300"; do
	set -- $args
	n=$1 size=$2 truth=$(($1 * $2))
	OUT=$TMP/burst-$n
	"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/heap.recipe" -d 4s -o "$OUT" -- "$FIXTURES/leak_burst" "$n" "$size" 8 1000 \
		>"$OUT.out" 2>"$OUT.err"
	line=$(grep -A12 '^        leak_burst (' "$OUT/heap-live.txt" | grep -m1 '^\]: ')
	echo "# $n blocks of $size bytes (program: $(grep '^leaked' "$OUT.out")); report: $line"
	# "retained LOW–HIGH bytes", "retained N bytes", "est. E bytes retained (95% LOW–HIGH)",
	# or (too little CPU between calls to time them) "est. at least LOW bytes retained"
	read -r lo hi < <(sed -n -e 's/.* retained \([0-9]*\)–\([0-9]*\) bytes: .*/\1 \2/p' \
		-e 's/.* retained \([0-9]*\) bytes: .*/\1 \1/p' \
		-e 's/.* est\. [0-9]* bytes retained (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/p' \
		-e 's/.* est\. at least \([0-9]*\) bytes retained.*/\1 unbounded/p' <<<"$line" | head -1)
	check "$n x $size bytes leaked at start: retained ${lo:-?}–${hi:-?} bytes holds the truth $truth, the top within 50% of it" \
		awk -v lo="${lo:-}" -v hi="${hi:-}" -v t="$truth" 'BEGIN { exit !(lo != "" && hi != "unbounded" && lo <= t && hi >= t && hi <= 1.5 * t) }' \
		|| show "$OUT.err"
	# the census share in place of the scaled estimate: it must say why
	if grep -q "this stack's share of them" <<<"$line"; then
		check "$n x $size: the report gives the stack's share of the heap's blocks and says why the scaled estimate was not used" \
			grep -q "the heap holds [0-9]* blocks\{0,1\} of the sizes seen here; this stack's share of them by the [0-9]* of [0-9]* live allocations\{0,1\} seen in them; .*\(do not stand for the others at that share\|too few armed windows\|too little of the target's CPU time\)" <<<"$line"
	fi
done
finish
