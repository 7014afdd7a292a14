#!/usr/bin/env bash
# glibc_heap_growth.sh — the heap-growth recipe (docs/alloc.md, "Byte-weighted
# evidence on glibc") against glibc_churn, which prints its own counts: two
# threads do millions of 4096-B and 64-B malloc+free pairs a second, a third
# keeps one 64 KiB block every 100 ms (leak_block).
# 1. Launched and traced to its exit: the bytes the recipe attributes to
#    leak_block lie within 2x of the fixture's own retained bytes, leak_block
#    is first in the report and in `go tool pprof -sample_index=inuse_space
#    -top`, and the stopped share stays under 10% (one stop per growth,
#    none per allocation).
# 2. Attached for 3 s to a running one: leak_block's bytes within 2x of what
#    the fixture's own lines say it kept while we were attached, and the
#    churn sites none at all (their arenas grew once, at their start).
# Mutations seen to fail: the mprotect probe's predicate `arg2 != 0` made
# `arg2 == 0` (no thread-arena growth counted: 1 and 2 fail); skip_leaf
# without `grow_heap|sysmalloc` (stacks end in glibc: leak_block not first).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# retained LINE: the fixture's retained bytes on one of its count lines
retained() { sed -n 's/.* retained=\([0-9]*\)$/\1/p' <<<"$1"; }
# growth_of LEAF FILE: the bytes of @growth's entry whose stack starts at LEAF
growth_of() { map_entry growth "$1" "$2" | sed -n 's/^\]: \([0-9]*\).*/\1/p'; }

"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/heap-growth.recipe" -d 30s -o "$TMP/run" \
	-- "$FIXTURES/glibc_churn" 2 5 >"$TMP/run.out" 2>"$TMP/run.err"
truth=$(retained "$(grep '^t=' "$TMP/run.out" | tail -1)")
est=$(growth_of leak_block "$TMP/run.out")
page=$(growth_of churn_page "$TMP/run.out"); small=$(growth_of churn_small "$TMP/run.out")
echo "# traced to exit: leak_block kept ${truth:-?} bytes by its own count; heap growth attributed to it ${est:-?}; churn_page ${page:-0}, churn_small ${small:-0}"
check "launched: leak_block's heap growth within 2x of the bytes it kept by its own count" \
	awk -v e="${est:-0}" -v t="${truth:-0}" 'BEGIN { exit !(t > 0 && e >= t / 2 && e <= t * 2) }' \
	|| { show "$TMP/run.out"; show "$TMP/run.err"; }
check "launched: leak_block is the first entry of the report (largest last: the last printed)" \
	sh -c "awk '/^@growth\\[/ { getline; leaf = \$1 } END { print leaf }' '$TMP/run.out' | grep -qx leak_block"
stopped=$(sed -n 's/.*target held stopped \([0-9.]*\)% of the time.*/\1/p' "$TMP/run.err" | head -1)
check "launched: the target was held stopped under 10% of the time (${stopped:-?}%)" \
	awk -v s="${stopped:-100}" 'BEGIN { exit !(s < 10) }' || show "$TMP/run.err"
if command -v go >/dev/null 2>&1; then
	go tool pprof -sample_index=inuse_space -top "$TMP/run/heap-growth.pb.gz" >"$TMP/top.txt" 2>&1
	check "go tool pprof -sample_index=inuse_space -top names leak_block first" \
		sh -c "grep -A1 '^ *flat ' '$TMP/top.txt' | tail -1 | grep -q ' leak_block\$'" || show "$TMP/top.txt"
else
	ok "skipped: go tool pprof is not installed (Debian: golang-go)"
fi

"$FIXTURES/glibc_churn" 2 12 >"$TMP/attach.out" &
pid=$!
TEST_PIDS="$TEST_PIDS $pid"
wait_exe "$pid" "$FIXTURES/glibc_churn"
sleep 1.5
before=$(grep -c '^t=' "$TMP/attach.out")
"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/heap-growth.recipe" -d 3s -o "$TMP/attach" "$pid" \
	>"$TMP/attach-report.out" 2>"$TMP/attach.err"
sleep 1.2
after=$(grep -c '^t=' "$TMP/attach.out")
kill "$pid" 2>/dev/null
# the trace lies between the fixture's last line before it (number
# before) and its first line after it (number after): leak_block's growth
# must be at least half what the lines printed during the trace say it kept,
# and at most twice what the lines around the trace say
est=$(growth_of leak_block "$TMP/attach-report.out")
page=$(growth_of churn_page "$TMP/attach-report.out"); small=$(growth_of churn_small "$TMP/attach-report.out")
read -r outer inner < <(awk -v a="$before" -v b="$after" '/^t=/ { n++; sub(/.* retained=/, ""); r[n] = $0 }
	END { printf "%d %d\n", r[b] - r[a], (b - 1 > a + 1) ? r[b - 1] - r[a + 1] : 0 }' "$TMP/attach.out")
echo "# attached 3 s: heap growth attributed to leak_block ${est:-?}; by its own count it kept ${inner:-?} bytes during the trace and ${outer:-?} around it; churn_page ${page:-0}, churn_small ${small:-0}"
check "attached: leak_block's heap growth within 2x of what it kept while traced" \
	awk -v e="${est:-0}" -v o="${outer:-0}" -v i="${inner:-0}" 'BEGIN { exit !(i > 0 && e >= i / 2 && e <= o * 2) }' \
	|| { show "$TMP/attach-report.out"; show "$TMP/attach.out"; }
check "attached: the churn sites (millions of pairs a second, freed at once) caused no heap growth" \
	test "${page:-0}" = 0 -a "${small:-0}" = 0 || show "$TMP/attach-report.out"
finish
