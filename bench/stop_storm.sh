#!/usr/bin/env bash
# bench/stop_storm.sh — how often a storm of the user's kill -STOP/kill -CONT
# pairs leaves the target held while we sample, side by side with another
# build (--compare), in interleaved rounds. Each round starts the counter
# fixture, samples it at 1000 Hz (hot-cpu, -v, the mode in --only:
# all-stop, non-stop), sends 40 STOP/CONT pairs as tests/stop_storm.sh
# does, then waits up to --window seconds (default 5) for the counter to
# move: a round where it does not is "held". It also counts what -v says of
# gdb's lost stops (docs/safety.md): SIGSTOPs sent again, new attaches,
# SIGCONTs found held in gdb, SIGSTOPs dropped for a SIGCONT after them,
# and command timeouts. Run it beside load (two CPU loops) to see them.
# Usage: bench/stop_storm.sh [--rounds N] [--window S] [--only "all-stop non-stop"] [--compare OTHER_BUILD] BUILD_DIR
set -eu
rounds=10
window=5
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof tests/fixtures/bin/counter >/dev/null

measure() {   # measure BUILD:MODE
	local which=${1%%:*} mode=${1#*:} bin=$xgdbprof progress=$tmp/progress before held=1 i
	[ "$which" = new ] || bin=$other_xgdbprof
	rm -f "$progress"
	"$build/tests/fixtures/bin/counter" "$progress" >/dev/null &
	target_pid=$!
	while [ ! -s "$progress" ]; do sleep 0.02; done
	"$bin" -v "--$mode" -F 1000 --recipe hot-cpu -d 60s -o "$tmp/out" "$target_pid" >"$tmp/xg.out" 2>"$tmp/xg.err" &
	xg_pid=$!
	for i in $(seq 1 400); do grep -q 'first sample' "$tmp/xg.err" 2>/dev/null && break; sleep 0.05; done
	for i in $(seq 1 40); do
		kill -STOP "$target_pid"
		sleep "0.0$((RANDOM % 3))"
		kill -CONT "$target_pid"
		sleep "0.0$((RANDOM % 3))"
	done
	sleep 1
	before=$(cat "$progress")
	for i in $(seq 1 $((window * 20))); do
		sleep 0.05
		[ "$(cat "$progress")" != "$before" ] && { held=0; break; }
	done
	kill -INT "$xg_pid" 2>/dev/null || true
	for i in $(seq 1 100); do kill -0 "$xg_pid" 2>/dev/null || break; sleep 0.05; done
	kill -9 "$xg_pid" 2>/dev/null || true
	wait "$xg_pid" 2>/dev/null || true
	kill -9 "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	xg_pid= target_pid=
	printf '%s %d %d %d %d %d %d\n' "$1" "$held" \
		"$(grep -c 'sent it one' "$tmp/xg.err" || true)" \
		"$(grep -c 'sat in a tracing stop gdb did not report' "$tmp/xg.err" || true)" \
		"$(grep -c 'took a SIGCONT gdb has not reported yet' "$tmp/xg.err" || true)" \
		"$(grep -c 'hold a SIGSTOP of the user' "$tmp/xg.err" || true)" \
		"$(grep -c 'did not answer' "$tmp/xg.err" || true)" >>"$tmp/rows"
}
: >"$tmp/rows"
configs=
for c in ${only:-all-stop non-stop}; do
	configs="$configs new:$c"
	[ -z "$other_xgdbprof" ] || configs="$configs old:$c"
done
run_rounds measure "" "$configs"
echo
echo "counter, 40 STOP/CONT pairs at 1000 Hz sampling, $(nproc) CPUs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg):"
printf '  %-14s %6s %8s %10s %12s %13s %9s\n' build:mode held resent reattached cont-in-gdb stop-dropped timeouts
for c in $configs; do
	awk -v c="$c" '$1 == c { n++; h += $2; s += $3; a += $4; g += $5; d += $6; t += $7 }
		END { printf "  %-14s %3d/%-2d %8d %10d %12d %13d %9d\n", c, h, n, s, a, g, d, t }' "$tmp/rows"
done
echo "(held: no progress within $window s of the storm's end; new: $build; old: ${other_xgdbprof:-none})"
