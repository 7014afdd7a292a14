#!/usr/bin/env bash
# Allocation rates on glibc within 2x of the program's own counts (issues
# 25 item 3 and 26 item 1): the alloc recipe under the default budget, on
# glibc_churn (2 threads each making ~8 M malloc+free pairs a second of
# 4096 and 64 bytes, a third keeping a 64 KiB block every 100 ms; it prints
# its own cumulative counts every second). malloc is counted in the target
# (docs/tracing.md, "Counted in the target") and each stack's hits stand
# for their share of its stratum's calls. Before: the estimates were lower
# bounds 470x under (139 MB for ~65 GB).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

"$XGDBPROF" -d 3s --recipe alloc -o "$TMP/out" -- "$FIXTURES/glibc_churn" 2 4 >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
check "alloc ran (rc $rc)" test "$rc" = 0 || show "$TMP/run.err"
# the program's own counts at the line closest to the run's end (3 s)
truth() { sed -n "s/^t=3\.[0-9]* .*$1=\([0-9]*\).*/\1/p" "$TMP/run.out" | head -n 1; }
# the file holding print()'s text of @MAP (the recipe's detail beside its report)
map_file() { if [ "$1" = allocs ]; then echo alloc-counts.txt; else echo alloc-bytes.txt; fi; }
# the estimate of the @MAP entry whose stack holds FUNCTION
estimate() {
	awk -v map="@$1[" -v fn="$2" '
		index($0, map) == 1 { inside = 1; hit = 0; next }
		inside && index($0, fn " (") { hit = 1 }
		inside && /^\]: / { if (hit && match($0, /est\. [0-9]+/)) { print substr($0, RSTART + 5, RLENGTH - 5); exit } inside = 0 }
	' "$TMP/out/$(map_file "$1")"
}
check "malloc is counted in the target" grep -q "counted in the target" "$TMP/run.err" || show "$TMP/run.err"
for what in page small; do
	calls=$(truth "${what}_calls")
	bytes=$(truth "${what}_bytes")
	est_calls=$(estimate allocs "churn_$what")
	est_bytes=$(estimate bytes "churn_$what")
	echo "# churn_$what: est. ${est_calls:-none} allocations, ${est_bytes:-none} bytes; the program's own ${calls:-?} and ${bytes:-?} over 3 s"
	check "churn_$what: allocations within 2x of the program's own count" within_2x "$est_calls" "$calls"
	check "churn_$what: bytes within 2x of the program's own" within_2x "$est_bytes" "$bytes"
done
# the rare caller: the leak thread's stratum is its own (libc's .bss tail
# holds 8 slots 16 bytes apart), so its few hits stand for its own calls
# (with one slot for all, its 30 calls came out at ~1 M)
calls=$(truth leak_calls)
est_calls=$(estimate allocs leak_block)
echo "# leak_block: est. ${est_calls:-none} allocations; the program's own ${calls:-?}"
if [ -n "$est_calls" ]; then
	check "leak_block: allocations within 2x of the program's own count" within_2x "$est_calls" "$calls"
else
	echo "# (no hit in leak_block this run: nothing to check)"
fi
# glibc's free, valloc and memalign test their argument before anything
# else: the counting jump then moves a conditional jump, which the code
# takes as its rel32 form (before: "the instruction at +3 (je …) cannot
# be moved", and free was only estimated). glibc_churn frees every block
# it churns at once: free's count is theirs, leak blocks aside, less the
# calls after the counters' last read (the program exits before xgdbprof
# can read them at the end; 1.4-2.6% in runs).
"$XGDBPROF" -e 'function "free" { @frees = count(); }' -- "$FIXTURES/glibc_churn" 2 2 >"$TMP/free.out" 2>"$TMP/free.err"
check "free: xgdbprof ran (rc $?)" test $? = 0 || show "$TMP/free.err"
frees=$(sed -n 's/^@frees: \([0-9]*\) counted in the target (exact.*/\1/p' "$TMP/free.out")
last=$(grep '^t=' "$TMP/free.out" | tail -n 1)
churned=$(( $(sed -n 's/.* page_calls=\([0-9]*\).*/\1/p' <<<"$last") + $(sed -n 's/.* small_calls=\([0-9]*\).*/\1/p' <<<"$last") ))
echo "# free: ${frees:-not} counted in the target; the program freed $churned churned blocks"
check "free: counted in the target: at least 90% of the churned blocks, at most them and 100 of libc's own" \
	test -n "$frees" -a $(( ${frees:-0} * 10 )) -ge $(( churned * 9 )) -a "${frees:-0}" -le $(( churned + 100 )) ||
	show "$TMP/free.err"
if command -v go >/dev/null 2>&1; then
	export HOME="$TMP/home" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS= GOTOOLCHAIN=local GOPROXY=off
	mkdir -p "$HOME"
	space=$(go tool pprof -sample_index=alloc_space -unit=B -top "$TMP/out/alloc.pb.gz" 2>/dev/null |
		awk '$NF == "churn_page" { sub(/B$/, "", $1); print $1; exit }')
	bytes=$(truth page_bytes)
	echo "# go tool pprof alloc_space for churn_page: ${space:-none} bytes; the program's own ${bytes:-?}"
	check "go tool pprof -sample_index=alloc_space: churn_page's bytes within 2x of the program's own" \
		within_2x "${space%.*}" "$bytes"
fi

# The demo (the sled cache service, README): two workers insert into their
# trees; each leaf split allocates the upper half (split_off: malloc) and
# each insert into a full leaf grows it (realloc), ~70 k of each a second
# per worker. Its global allocator counts every call by thread, the truth
# here. Before, realloc got no counter (libc's .bss tail went to valloc
# and pvalloc, named first) and its stacks printed only lower bounds, 10x
# under; and the service's own GlobalAlloc frame hid Tree::insert.
ram_tmp
"$FIXTURES/cache-service" 120 --progress "$RAM_TMP/cs.progress" >/dev/null 2>&1 &
CS=$!
TEST_PIDS="$TEST_PIDS $CS"
wait_for_file "$RAM_TMP/cs.progress"
sleep 1
cp "$RAM_TMP/cs.progress" "$TMP/cs.before"
# 8 s: at load 7 (two CPU loops beside the suite) a 4 s run kept to the 5%
# budget took 8-18 hits, and a worker none of whose calls was hit had no
# stack of its own (its counted calls went to the other's): 2 of 3 loaded
# runs on 2026-12-05 failed so, the figures right in the third.
COLUMNS=10000 "$XGDBPROF" -v -d 8s --recipe alloc -o "$TMP/cs.out.d" "$CS" >"$TMP/cs.out" 2>"$TMP/cs.err"
rc=$?
cp "$RAM_TMP/cs.progress" "$TMP/cs.after"
check "demo: alloc ran (rc $rc)" test "$rc" = 0 || show "$TMP/cs.err"
# every allocator entry the recipe names: libc's .bss tail holds two
# counters with their totals, the program's tail (out of a 32-bit
# displacement's reach of libc's code, so addressed whole) the rest; Rust's
# System allocator calls calloc for zeroed memory and posix_memalign for
# alignments over 16 (before: only malloc and realloc were counted, the
# others stopped at a breakpoint under the budget)
for fn in malloc realloc calloc valloc pvalloc aligned_alloc posix_memalign; do
	check "demo: $fn is counted in the target" grep -q "^xgdbprof: entry counter at 0x[0-9a-f]* ($fn)" "$TMP/cs.err" ||
		grep "entry counter\|$fn" "$TMP/cs.err"
done
# progress FILE KIND ROLE FIELD: a count of the demo's ("alloc insert-worker CALLS BYTES")
progress() { awk -v k="$2" -v r="$3" -v f="$4" '$1 == k && $2 == r { print $(f == "calls" ? 3 : 4) }' "$1"; }
seconds=$(awk '$1 == "elapsed_ns" { t[FILENAME] = $2 } END { printf "%.3f", (t[ARGV[2]] - t[ARGV[1]]) / 1e9 }' \
	"$TMP/cs.before" "$TMP/cs.after")
tree=$TOP_SRCDIR/tests/fixtures/sled/tree.rs
split_line=$(grep -n 'LINE: split-leaf' "$tree" | cut -d: -f1)
grow_line=$(grep -n 'LINE: grow-leaf' "$tree" | cut -d: -f1)
# rate MAP WORKER LINE: the per-second estimate of the @MAP entry whose
# leaf is Tree::insert at tree.rs:LINE, called from WORKER
rate() {
	awk -v map="@$1[" -v worker="cache_service::$2 (" -v leaf="tree.rs:$3)" '
		index($0, map) == 1 { inside = 1; first = 1; w = 0; l = 0; next }
		inside && first { first = 0; l = index($0, "sled::tree::Tree::insert (") && index($0, leaf) }
		inside && index($0, worker) { w = 1 }
		inside && /^\]: / {
			if (w && l && !index($0, "at least") && match($0, /· [0-9.e+]+\/s/)) { print substr($0, RSTART + 3, RLENGTH - 5) + 0; exit }
			inside = 0
		}' "$TMP/cs.out.d/$(map_file "$1")"
}
# apart MAP THREAD FUNCTION: the per-second figure of the line under @MAP
# that holds FUNCTION's calls made by threads no hit saw, when it names
# THREAD alone. A worker none of whose calls was hit has no entry: its
# calls are said there, not given to the other worker's stacks.
apart() {
	awk -v map="@$1: and " -v who="by threads no hit saw ($2)" -v fn=" of $3, counted" '
		index($0, map) == 1 && index($0, who) && index($0, fn) && match($0, /\([0-9.e+]+\/s\)/) {
			print substr($0, RSTART + 1, RLENGTH - 4) + 0; exit
		}' "$TMP/cs.out.d/$(map_file "$1")"
}
for worker in insert_worker session_worker; do
	role=${worker/_/-}
	for kind in alloc realloc; do
		line=$split_line what="split_off (malloc)"
		[ "$kind" = realloc ] && line=$grow_line what="the leaf's growth (realloc)"
		calls=$(awk -v a="$(progress "$TMP/cs.before" "$kind" "$role" calls)" -v b="$(progress "$TMP/cs.after" "$kind" "$role" calls)" \
			-v s="$seconds" 'BEGIN { printf "%.0f", (b - a) / s }')
		bytes=$(awk -v a="$(progress "$TMP/cs.before" "$kind" "$role" bytes)" -v b="$(progress "$TMP/cs.after" "$kind" "$role" bytes)" \
			-v s="$seconds" 'BEGIN { printf "%.0f", (b - a) / s }')
		est_calls=$(rate allocs "$worker" "$line")
		est_bytes=$(rate bytes "$worker" "$line")
		fn=malloc
		[ "$kind" = realloc ] && fn=realloc
		if [ -z "$est_calls" ] && [ -n "$(apart allocs "$role" "$fn")" ]; then
			est_calls=$(apart allocs "$role" "$fn")
			est_bytes=$(apart bytes "$role" "$fn")
			echo "# demo $worker: no hit saw its $fn calls: they are said apart under the maps"
		fi
		echo "# demo $worker, $what at tree.rs:$line: est. ${est_calls:-none} allocations/s, ${est_bytes:-none} B/s; its own ${calls} and ${bytes}"
		check "demo $worker: $what, allocations/s within 2x of the service's own count" within_2x "$est_calls" "$calls"
		check "demo $worker: $what, bytes/s within 2x of the service's own" within_2x "$est_bytes" "$bytes"
	done
done
finish
