#!/usr/bin/env bash
# bench/entry_counter.sh — what counting calls in the target costs it
# (docs/tracing.md, "Counted in the target"), side by side:
# 1. the counting code alone (bench/entry_counter_cost.c): ns per call with
#    none, one shared counter and the per-thread slots, 1 and 2 threads;
# 2. the demo service (cache-service, ~7 M Tree::insert calls/s on 2
#    threads: the hottest function a user would trace): its operations per
#    second over the middle 4 s of a 7 s trace of sled::tree::Tree::insert
#    with the counter and with --no-entry-counters, both at
#    --max-stopped=1 (the breakpoints' share kept small), and untraced;
#    rounds interleaved, medians, each as a ratio to the untraced rate of
#    the same round.
# Usage: bench/entry_counter.sh [--rounds N] BUILD_DIR
set -eu
rounds=5
window=4
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof tests/fixtures/bin/cache-service >/dev/null
cc -O2 -pthread -o "$tmp/cost" "$src/bench/entry_counter_cost.c"
echo "counting code alone (ns per call per thread; 20 M calls a thread):"
for threads in 1 2; do
	for mode in 0 1 2; do
		"$tmp/cost" "$mode" "$threads"
	done
done | sed 's/^mode 0/  none        /; s/^mode 1/  shared line /; s/^mode 2/  slots       /'

cs=$build/tests/fixtures/bin/cache-service
prog=$tmp/cs.progress
"$cs" 100000 --progress "$prog" >/dev/null 2>&1 &
target_pid=$!
sleep 1
rate() { local a b; a=$(head -n 1 "$prog"); sleep "$window"; b=$(head -n 1 "$prog"); echo $(( (b - a) / window )); }
measure() {
	local opts
	case "$1" in
	free) echo "free $(rate) $r" >>"$tmp/rates"; return ;;
	counter) opts="--max-stopped=1" ;;
	breakpoints) opts="--max-stopped=1 --no-entry-counters" ;;
	esac
	# shellcheck disable=SC2086
	"$xgdbprof" $opts -d $((window + 3))s -e 'function "sled::tree::Tree::insert" { @c = count(); }' "$target_pid" \
		>"$tmp/xg.out" 2>&1 &
	xg_pid=$!
	sleep 2
	echo "$1 $(rate) $r" >>"$tmp/rates"
	wait "$xg_pid" || log "xgdbprof failed: $(tail -n 2 "$tmp/xg.out")"
	xg_pid=
}
: >"$tmp/rates"
run_rounds measure "" "free counter breakpoints"
echo
echo "cache-service, $(nproc) CPUs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg): operations/s, median, and ratio to untraced"
free=$(awk '$1 == "free" { print $2 }' "$tmp/rates" | median)
for c in free counter breakpoints; do
	m=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/rates" | median)
	# each round's ratio to that round's untraced rate
	ratio=$(awk -v c="$c" '$1 == "free" { f[$3] = $2 } $1 == c { v[$3] = $2 } END { for (k in v) if (f[k] > 0) print v[k] / f[k] }' "$tmp/rates" | median)
	printf '  %-12s %10s/s  %s of untraced (median of per-round ratios)\n' "$c" "$m" "$ratio"
done
echo "counter = Tree::insert counted in the target, breakpoints at a 1% budget; breakpoints = the same with"
echo "--no-entry-counters: their difference is the counter's cost to the service"
