#!/usr/bin/env bash
# alloc.sh — the alloc and heap recipes against alloc_sites, whose truth is
# known: every WORK_US of its CPU time site_a() mallocs 192 bytes and
# site_b() callocs 4 x 16 (3x A's bytes at B's count), and leak_site()
# keeps 1000 bytes the first LEAKS times. Under the default 5% budget the
# probes see a small share of the run: the estimates' 95% intervals must
# hold the program's own totals (one retry: a 95% interval misses one run
# in twenty by design), stacks must end in the caller, not in the
# allocator, and go tool pprof must read alloc_space and alloc_objects as
# those estimates (sampled_alloc_space: what was measured).
# heap, traced exactly (every allocation), must find the 20 leaked blocks
# live at leak_site's stack and nothing else live.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# bounds LINE: "measured low high" (an exact count is its own interval)
bounds() {
	# an interval, a lower bound (its high end unbounded: 1e18), or the count alone
	sed -n 's/^\]: \([0-9]*\)[^·]*· est\. [0-9]* (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2 \3/p; t
		s/^\]: \([0-9]*\)[^·]*· est\. at least \([0-9]*\) .*/\1 \2 1000000000000000000/p; t
		s/^\]: \([0-9]*\)$/\1 \1 \1/p' <<<"$1"
}

held=0
for try in 1 2; do
	"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/alloc.recipe" -o "$TMP/alloc-$try" \
		-- "$FIXTURES/alloc_sites" 2000 4 0 >"$TMP/alloc-$try.out" 2>"$TMP/alloc-$try.err"
	truth=$(sed -n 's/^a_bytes \([0-9]*\)$/\1/p' "$TMP/alloc-$try.out")
	a_line=$(map_entry bytes site_a "$TMP/alloc-$try/alloc-bytes.txt")
	b_line=$(map_entry bytes site_b "$TMP/alloc-$try/alloc-bytes.txt")
	read -r a a_lo a_hi < <(bounds "$a_line")
	read -r b b_lo b_hi < <(bounds "$b_line")
	echo "# run $try: the program allocated ${truth:-?} bytes at site_a; @bytes[site_a…]$a_line; @bytes[site_b…]$b_line"
	if [ -n "$truth" ] && [ -n "$a_lo" ] && [ "$a_lo" -le "$truth" ] && [ "$truth" -le "$a_hi" ]; then
		held=1
		break
	fi
done
OUT=$TMP/alloc-$try
check "alloc: site_a's bytes, estimated for the whole run, hold the program's own total (${truth:-?} bytes)" \
	test "$held" = 1 || show "$OUT.err"
# (rests on the calls counted in the target since malloc and calloc both
# take a counter, else on the armed share)
check "alloc: the estimate is printed with its rate and what it rests on" \
	grep -qE "est\. .*/s(( \(95% .*\))?, probes armed .*% of the target's CPU time|: its hits' share of the calls counted in the target)" "$OUT/alloc-bytes.txt"
check "alloc: the stacks end in the code that allocates, the allocator folded away" \
	test -n "$a_line" -a -n "$b_line"
read -r b_bytes b_calls < <(sed -n 's/^\]: \([0-9]*\) measured in \([0-9]*\) updates.*/\1 \2/p' <<<"$b_line")
read -r a_bytes a_calls < <(sed -n 's/^\]: \([0-9]*\) measured in \([0-9]*\) updates.*/\1 \2/p' <<<"$a_line")
check "alloc: sizes read from the argument registers: 192 a malloc at site_a, 4 x 16 a calloc at site_b" \
	test -n "$b_calls" -a -n "$a_calls" -a "${b_bytes:-0}" = "$((64 * ${b_calls:-0}))" -a "${a_bytes:-0}" = "$((192 * ${a_calls:-0}))"
ratio_ok=$(awk -v a="${a:-0}" -v b="${b:-0}" -v al="${a_lo:-0}" -v ah="${a_hi:-0}" -v bl="${b_lo:-0}" -v bh="${b_hi:-0}" \
	'BEGIN { print (b > 0 && bl > 0 && al / bh <= 3 && 3 <= ah / bl) ? 1 : 0 }')
check "alloc: A's bytes are 3x B's within the estimates' intervals (measured ${a:-?} : ${b:-?})" test "$ratio_ok" = 1
check "alloc: a flame graph weighted by bytes" grep -q 'site_a' "$OUT/alloc-bytes.svg"
# the terminal shows finished reports, the maps' own text is in the files:
# by bytes, #1 is site_a (192 bytes a call against site_b's 64, as often)
headline=$(sed -n '/^allocations by bytes$/,$ { /^#1 code path by bytes/ { N; N; p; q } }' "$OUT.out")
echo "# by bytes: $(tr '\n' ' ' <<<"$headline")"
check "alloc: the report by bytes names site_a #1, with its share's interval and whole-run estimate" \
	grep -qE '^#1 code path by bytes \([0-9.]+% ±[0-9.]+, est\. [0-9.]+ [KMG]?B\):.* site_a ' <<<"$(tr '\n' ' ' <<<"$headline")" ||
	show "$OUT.out"
check "alloc: no raw map on the terminal (print()'s text goes to alloc-bytes.txt, alloc-counts.txt)" \
	sh -c "! grep -q '^@' '$OUT.out' && grep -q '^@allocs\[' '$OUT/alloc-counts.txt'"

if command -v go >/dev/null 2>&1; then
	export HOME="$TMP/home" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS= GOTOOLCHAIN=local GOPROXY=off
	mkdir -p "$HOME"
	go tool pprof -sample_index=alloc_space -top "$OUT/alloc.pb.gz" >"$TMP/space.txt" 2>"$TMP/pprof.err"
	go tool pprof -sample_index=alloc_objects -top "$OUT/alloc.pb.gz" >"$TMP/objects.txt" 2>>"$TMP/pprof.err"
	check "go tool pprof -sample_index=alloc_space -top: bytes by function, site_a on top" \
		sh -c "grep -q '^Type: alloc_space\$' '$TMP/space.txt' && grep -m1 -E '^ +[0-9.]+[kMG]?B ' '$TMP/space.txt' | grep -q site_a" \
		|| show "$TMP/space.txt"
	check "go tool pprof -sample_index=alloc_objects reads the counts" grep -q '^Type: alloc_objects$' "$TMP/objects.txt"
	# pprof's values are the whole run's estimates (the text report's
	# "est."), the measured ones under sampled_alloc_space/objects
	est=$(sed -n 's/^\]: [0-9]* measured in [0-9]* updates · est\. \([0-9]*\) .*/\1/p' <<<"$a_line")
	# a lower bound: pprof holds the point estimate it bounds (measured / armed share), at least the bound
	bound=$(sed -n 's/^\]: [0-9]* measured in [0-9]* updates · est\. at least \([0-9]*\) .*/\1/p' <<<"$a_line")
	flat() { go tool pprof -sample_index="$1" -unit=B -top "$OUT/alloc.pb.gz" 2>/dev/null |
		awk '$NF == "site_a" { sub(/B$/, "", $1); print $1; exit }'; }
	p_est=$(flat alloc_space)
	p_measured=$(flat sampled_alloc_space)
	echo "# site_a: text est. ${est:-?} measured ${a:-?}; pprof alloc_space ${p_est:-?}, sampled_alloc_space ${p_measured:-?}"
	check "go tool pprof -sample_index=alloc_space shows the whole-run estimate (the text report's est.)" \
		awk -v p="${p_est:--9}" -v t="${est:--99}" -v b="${bound:--1}" 'BEGIN { exit !((p - t <= 2 && t - p <= 2) || (b > 0 && p >= b)) }'
	check "go tool pprof -sample_index=sampled_alloc_space shows the measured bytes" \
		test "${p_measured:-x}" = "${a:-y}"
else
	echo "# go is not installed (Debian: apt-get install golang-go): pprof checks skipped"
fi

# heap: every allocation traced (exact), the leak's 20 blocks of 1000 bytes
# must be found live at leak_site, site_a's freed blocks not (its newest one
# may be live if the end caught it between malloc and free).
{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/heap.recipe"; } >"$TMP/heap-exact.recipe"
"$XGDBPROF" --recipe "$TMP/heap-exact.recipe" -d 3s -o "$TMP/heap" \
	-- "$FIXTURES/alloc_sites" 2000 8 20 >"$TMP/heap.out" 2>"$TMP/heap.err"
leak_line=$(map_entry heap leak_site "$TMP/heap/heap-live.txt")
a_heap=$(map_entry heap site_a "$TMP/heap/heap-live.txt")
echo "# heap: @heap[leak_site…]$leak_line; @heap[site_a…]$a_heap"
check "heap: the 20 leaked blocks of 1000 bytes are live at leak_site's stack" \
	grep -q '^\]: 20000 bytes live in 20 of 20 sampled allocations (0 freed, 0 unknown' <<<"$leak_line" \
	|| show "$TMP/heap.err"
check "heap: site_a's blocks were freed (at most its newest one live)" \
	grep -qE '^\]: (0|192) bytes live in [01] of [0-9]+ sampled allocations' <<<"$a_heap"
check "heap: says how liveness was tested" grep -q "heap: the recorded allocations were tested at the end" "$TMP/heap.err"
finish
