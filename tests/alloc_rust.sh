#!/usr/bin/env bash
# alloc_rust.sh — the alloc and heap recipes on Rust, against alloc_rust,
# whose truth is known: each round vec_site() makes a Vec::with_capacity
# (1500 bytes), box_site() a Box<[u64; 16]> (128), clone_site() clones a
# 300-byte Vec (300), all dropped at once, and leak_site() leaks a
# 1000-byte Vec (mem::forget) the first LEAKS times; it prints its totals.
# - Traced exactly (every allocation), from its first instruction to its
#   exit: each site's bytes are the program's own, and each stack ends in
#   the user's function, the allocator, __rust_alloc, __rdl_alloc and the
#   alloc:: plumbing (RawVec, exchange_malloc, <[_]>::to_vec_in,
#   <Vec as Clone>::clone) folded away by skip_leaf.
# - Under the default 5% budget: vec_site's estimate holds the program's
#   total (a lower bound when the run was too tight to time calls; one
#   retry, a 95% interval misses one run in twenty by design).
# - heap, traced exactly: the 10 leaked Vecs (10 x 1000 bytes) are live at
#   leak_site, and the other sites' blocks are freed.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

truth() { sed -n "s/^$1 \\([0-9]*\\)\$/\\1/p" "$2"; }

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/alloc.recipe"; } >"$TMP/alloc-exact.recipe"
"$XGDBPROF" --recipe "$TMP/alloc-exact.recipe" -o "$TMP/exact" \
	-- "$FIXTURES/alloc_rust" 20000 2 10 >"$TMP/exact.out" 2>"$TMP/exact.err"
for site in vec box clone; do
	want=$(truth "${site}_bytes" "$TMP/exact.out")
	line=$(map_entry bytes "alloc_rust::${site}_site" "$TMP/exact/alloc-bytes.txt")
	echo "# exact: the program allocated ${want:-?} bytes at ${site}_site; @bytes[alloc_rust::${site}_site…]$line"
	check "alloc (exact): ${site}_site's stack ends in the user's function and its bytes are the program's own" \
		test -n "$want" -a "$line" = "]: $want" || show "$TMP/exact.err"
done
check "alloc (exact): the leak's 10 Vecs of 1000 bytes at leak_site" \
	test "$(map_entry bytes alloc_rust::leak_site "$TMP/exact/alloc-bytes.txt")" = "]: 10000"
# no stack of the program's own allocations ends in allocator or alloc:: frames
leaves=$(awk '/^@bytes\[/ { getline; sub(/^ +/, ""); sub(/ \(.*/, ""); print }' "$TMP/exact/alloc-bytes.txt" | sort -u)
echo "# leaves of @bytes:" $leaves
check "alloc (exact): no stack ends in malloc, __rust_alloc, __rdl_alloc or alloc:: plumbing" \
	sh -c "! grep -qE '^(malloc|calloc|realloc|__rust|__rdl|<?alloc::|<\\[_\\]>|<T as|core::alloc|std::alloc)' <<'L'
$leaves
L"

held=0
for try in 1 2; do
	"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/alloc.recipe" -o "$TMP/budget-$try" \
		-- "$FIXTURES/alloc_rust" 8000 5 0 >"$TMP/budget-$try.out" 2>"$TMP/budget-$try.err"
	want=$(truth vec_bytes "$TMP/budget-$try.out")
	line=$(map_entry bytes alloc_rust::vec_site "$TMP/budget-$try/alloc-bytes.txt")
	echo "# budget run $try: the program allocated ${want:-?} bytes at vec_site; @bytes[alloc_rust::vec_site…]$line"
	read -r lo hi < <(sed -n 's/.* · est\. [0-9]* (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/; t p; s/.* · est\. at least \([0-9]*\) .*/\1 inf/; t p; d; :p p' <<<"$line")
	if [ -n "$want" ] && [ -n "$lo" ] && [ "$lo" -le "$want" ] && { [ "$hi" = inf ] || [ "$want" -le "$hi" ]; }; then
		held=1
		break
	fi
done
check "alloc (budget): vec_site's whole-run estimate holds the program's total" test "$held" = 1 \
	|| show "$TMP/budget-$try.err"

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/heap.recipe"; } >"$TMP/heap-exact.recipe"
"$XGDBPROF" --recipe "$TMP/heap-exact.recipe" -d 5s -o "$TMP/heap" \
	-- "$FIXTURES/alloc_rust" 10000 7 10 >"$TMP/heap.out" 2>"$TMP/heap.err"
leak_line=$(map_entry heap alloc_rust::leak_site "$TMP/heap/heap-live.txt")
vec_line=$(map_entry heap alloc_rust::vec_site "$TMP/heap/heap-live.txt")
echo "# heap: @heap[leak_site…]$leak_line; @heap[vec_site…]$vec_line"
check "heap: the 10 leaked Vecs of 1000 bytes are live at leak_site's stack" \
	grep -q '^\]: 10000 bytes live in 10 of 10 sampled allocations (0 freed, 0 unknown' <<<"$leak_line" \
	|| show "$TMP/heap.err"
check "heap: vec_site's blocks were freed (at most its newest one live)" \
	grep -qE '^\]: (0|1500) bytes live in [01] of [0-9]+ sampled allocations' <<<"$vec_line"
finish
