#!/usr/bin/env bash
# heap_census.sh — the heap recipe's retained bytes per stack on glibc,
# where the blocks live in threads' arenas (docs/alloc.md, "The census's
# share"). Under the stop budget the probes see a few dozen allocations;
# scaled by the armed share as if they came evenly over the run, the bytes
# still live come out far off (a leak's blocks made before the run, a
# tree's blocks made just before the end). The heap's own census of the
# classes (chunk size and heap) the live ones fall in, shared among the
# stacks by their part of the live allocations seen there, gives them:
# 1. glibc_churn, launched for 4 s: leak_block keeps 64 KiB every 100 ms in
#    its thread's arena (two churner threads make millions of pairs a
#    second beside it); its retained bytes within 2x of the fixture's own.
# 2. The demo service (the sled cache of the README) with its trees never
#    emptied (CACHE_SERVICE_CAPACITY), attached for 4 s: each worker's
#    stacks' retained bytes, summed, within 2x of the service's own live
#    count for that worker (its global allocator counts by thread; the
#    trees grow slowly by then, so the progress file read after the run is
#    within a few percent of the moment of the census).
# Before (the census walked the main heap only): leak_block printed
# "est. at least 973515 bytes" or a range of 65536 to the bound; the demo's
# workers "est. at least 1310 bytes" for ~0.5 MB, or an estimate 3-5x over.
# Mutation seen to fail: glibc_heap_chunk_class answering -1 for a thread
# arena's chunk (both parts: no census, lower bounds only).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# retained_of MAP-FILE LEAF-OR-CALLER: the estimates of the @heap entries
# whose stack holds "FUNCTION (", summed: "est. N bytes retained" (the
# census's share or the scaled estimate; never "at least"); an entry none
# of whose sampled allocations is live retains nothing and prints no
# estimate: it adds 0 (in a loaded run the insert worker's stacks were
# such entries and one census share, 13.7 MB of its 14.7, and the test
# read "none")
retained_of() {
	awk -v fn="$2 (" '
		index($0, "@heap[") == 1 { inside = 1; hit = 0; next }
		inside && index($0, fn) { hit = 1 }
		inside && /^\]: / {
			if (hit && match($0, /· est\. [0-9]+ bytes retained/)) { t += substr($0, RSTART + 7, RLENGTH - 22); n++ }
			else if (hit && /^\]: 0 bytes live in 0 of [0-9]+ sampled allocations/ && !/est\./) n++
			else if (hit) bad++
			inside = 0
		}
		END { if (n && !bad) printf "%.0f\n", t }' "$1"
}

# 1. glibc_churn's leak, in its thread's arena
COLUMNS=10000 "$XGDBPROF" --recipe heap -d 4s -o "$TMP/churn.d" -- "$FIXTURES/glibc_churn" 2 6 \
	>"$TMP/churn.out" 2>"$TMP/churn.err"
rc=$?
check "glibc_churn: heap ran (rc $rc)" test "$rc" = 0 || show "$TMP/churn.err"
# the fixture's retained bytes on its count line nearest the trace's end (4 s)
truth=$(awk '/^t=/ { t = substr($1, 3) + 0; d = t - 4; if (d < 0) d = -d; if (best == "" || d < best) { best = d; r = $NF } }
	END { sub(/retained=/, "", r); print r }' "$TMP/churn.out")
est=$(retained_of "$TMP/churn.d/heap-live.txt" leak_block)
echo "# glibc_churn: leak_block est. ${est:-none} bytes retained; the fixture kept ${truth:-?} by the trace's end"
echo "#   $(map_entry heap leak_block "$TMP/churn.d/heap-live.txt" | cut -c1-300)"
if [ -n "$(map_entry heap leak_block "$TMP/churn.d/heap-live.txt")" ]; then
	check "glibc_churn: leak_block's retained bytes within 2x of the fixture's own" within_2x "$est" "$truth" ||
		show "$TMP/churn.err"
else
	echo "# (no allocation of leak_block sampled this run: nothing to check)"
fi

# 2. The demo's trees, each worker's blocks in its own arena
ram_tmp
CACHE_SERVICE_CAPACITY=100000000 "$FIXTURES/cache-service" 120 --progress "$RAM_TMP/cs.progress" >/dev/null 2>&1 &
CS=$!
TEST_PIDS="$TEST_PIDS $CS"
wait_for_file "$RAM_TMP/cs.progress"
sleep 3
COLUMNS=10000 "$XGDBPROF" --recipe heap -d 4s -o "$TMP/cs.d" "$CS" >"$TMP/cs.out" 2>"$TMP/cs.err"
rc=$?
cp "$RAM_TMP/cs.progress" "$TMP/cs.after"
check "demo: heap ran (rc $rc)" test "$rc" = 0 || show "$TMP/cs.err"
for worker in insert_worker session_worker; do
	truth=$(awk -v r="${worker/_/-}" '$1 == "live" && $2 == r { print $3 }' "$TMP/cs.after")
	est=$(retained_of "$TMP/cs.d/heap-live.txt" "cache_service::$worker")
	echo "# demo $worker: est. ${est:-none} bytes retained over its stacks; the service's own live count ${truth:-?}"
	check "demo $worker: retained bytes within 2x of the service's own live count" within_2x "$est" "$truth" ||
		grep "^\]: " "$TMP/cs.d/heap-live.txt"
	# the terminal's report: the paths through the worker, their estimates summed
	# ("#N code path by bytes (P% ±H, est. 1.2 MB): ... cache_service::WORKER (...")
	shown=$(awk -v fn="cache_service::$worker (" '
		/^#[0-9]+ code path by bytes \(/ && index($0, fn) && match($0, /est\. [0-9.]+ [KMGT]?B\)/) {
			split(substr($0, RSTART + 5, RLENGTH - 6), v, " ")
			u = v[2]; f = u == "KB" ? 1e3 : u == "MB" ? 1e6 : u == "GB" ? 1e9 : u == "TB" ? 1e12 : 1
			t += v[1] * f; n++
		}
		END { if (n) printf "%.0f\n", t }' "$TMP/cs.out")
	echo "# demo $worker: the report's paths through it: est. ${shown:-none} bytes"
	check "demo $worker: the report's headlines through it estimate the service's own live count within 2x" \
		within_2x "$shown" "$truth" || grep "code path by bytes" "$TMP/cs.out"
done
check "demo: no raw map on the terminal (print()'s text is in heap-live.txt)" sh -c "! grep -q '^@' '$TMP/cs.out'"
check "demo: the service keeps running free" target_runs_free "$CS" "$RAM_TMP/cs.progress"
finish
