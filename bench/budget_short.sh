#!/usr/bin/env bash
# bench/budget_short.sh — does the tracer keep its 5% budget over a short
# run (a 1 s `--every` window, a `-d 1s`)? Side by side with another build
# (--compare), in interleaved rounds. The target is
# tests/fixtures/steady_calls: 2 threads, each calling counted_call() once
# per 100 us of its CPU. Each run traces `function counted_call {
# @n[tid] = count(); }` (the key needs the breakpoint: one stop a hit) for
# WINDOW seconds; measured per run:
#   - what xgdbprof says it held the target ("target held stopped N%");
#   - what the fixture's threads really lost, by their own scheduler
#     clocks (/proc/PID/task/*/schedstat: wall - on CPU - waiting for a
#     CPU, summed over the 2 threads, as a share of 2 x the traced wall
#     time), from the "attached" line to xgdbprof's exit.
# PROBE='function counted_call { @n[ustack(5)] = count(); }' traces
# another probe instead (a stack key: each hit walks and symbolizes its
# thread's stack, the first one with every module's debug file read).
# Usage: [PROBE=...] bench/budget_short.sh [--rounds N] [--window SECONDS] [--compare OTHER_BUILD] BUILD_DIR
set -eu
rounds=5
window=1
. "$(dirname "$0")/lib.sh"
probe=${PROBE:-'function counted_call { @n[tid] = count(); }'}
make -s -C "$build" xgdbprof tests/fixtures/bin/steady_calls >/dev/null
"$build/tests/fixtures/bin/steady_calls" 2 100 100000 >/dev/null &
target_pid=$!
sleep 0.5
# "WALL_NS RUN_NS WAIT_NS" of the fixture's worker threads (all but main)
clocks() {
	local main=$target_pid
	echo "$(date +%s%N) $(for t in /proc/"$main"/task/*; do [ "${t##*/}" = "$main" ] || cat "$t/schedstat"; done 2>/dev/null |
		awk '{ r += $1; w += $2 } END { printf "%.0f %.0f", r, w }')"
}
measure() {
	local bin=$xgdbprof
	[ "$1" = new ] || bin=$other_xgdbprof
	"$bin" -d "${window}s" -e "$probe" "$target_pid" >"$tmp/xg.out" 2>"$tmp/xg.err" &
	xg_pid=$!
	for _ in $(seq 3000); do grep -q attached "$tmp/xg.err" 2>/dev/null && break; sleep 0.005; done
	local a b
	a=$(clocks)
	wait "$xg_pid" || log "xgdbprof failed: $(tail -n 2 "$tmp/xg.err")"
	b=$(clocks)
	xg_pid=
	local held own
	held=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$tmp/xg.err" | head -n 1)
	own=$(echo "$a $b" | awk '{ w = 2 * ($4 - $1); printf "%.1f", 100 * (w - ($5 - $2) - ($6 - $3)) / w }')
	echo "$1 $r ${held:--} $own" >>"$tmp/rows"
}
: >"$tmp/rows"
configs=new
[ -z "$other_xgdbprof" ] || configs="new old"
run_rounds measure "" "$configs"
echo
echo "probe: $probe"
echo "steady_calls 2 100, -d ${window}s, $(nproc) CPUs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg); stopped % of the traced time:"
printf '  %-6s %16s %22s %24s\n' build "xgdbprof says" "the fixture's clocks" "runs over 5% (clocks)"
for c in $configs; do
	says=$(awk -v c="$c" '$1 == c { print $3 }' "$tmp/rows" | median)
	own=$(awk -v c="$c" '$1 == c { print $4 }' "$tmp/rows" | median)
	range=$(awk -v c="$c" '$1 == c { print $4 }' "$tmp/rows" | sort -g | sed -n '1p;$p' | tr '\n' ' ')
	over=$(awk -v c="$c" '$1 == c { n++; if ($4 > 5) k++ } END { printf "%d of %d", k, n }' "$tmp/rows")
	printf '  %-6s %16s %22s %24s\n' "$c" "$says" "$own ($(echo $range | tr ' ' '-'))" "$over"
done
echo "(new: $build; old: ${other_xgdbprof:-none})"
