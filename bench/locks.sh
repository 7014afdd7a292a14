#!/bin/sh
# bench/locks.sh — what the locks recipe costs its target, and how its
# figures compare with the truth (issue 16 item 3).
#
#   bench/locks.sh [--quick] [--rounds N] [--window SECONDS] BUILD_DIR
#
# The target is tests/fixtures/locks_c: three workers take one pthread
# mutex in turns, hold it for 2 ms of CPU work and sleep 1 ms; it prints its
# own count of contended acquisitions, its median wait and hold at exit. In
# interleaved rounds (the order rotated by one each round) it runs for the
# window:
#   - alone (baseline): acquisitions a second;
#   - under `xgdbprof --recipe locks -- locks_c ...` (the default 5%
#     budget), traced from its first instruction to its exit: its
#     acquisitions a second, the stopped share xgdbprof reports, the waits
#     as estimated (with the 95% interval) against the program's own count,
#     and the wait p50 measured against the program's.
# On the realistic fixture (kvservice, when built: parking_lot locks) one
# more row: the stopped share and the top contended locks, as reported.
# Prints one line a round and the medians. Needs: cc, gdb.
set -eu

rounds=3
window=8
. "$(dirname "$0")/lib.sh"
[ -z "$only$other_xgdbprof" ] || { echo "$0: --only and --compare are bench/profile.sh's" >&2; exit 2; }
target=$build/tests/fixtures/bin/locks_c
log "building xgdbprof and the locks_c fixture in $build"
make -s -C "$build" xgdbprof tests/fixtures/bin/locks_c >&2

# acquisitions a second: the holds the program counted over the window
acq() { awk -v w="$window" '/^holds / { printf "%.0f", $2 / w }' "$1"; }
truth() { sed -n "s/^$1 \\(.*\\)\$/\\1/p" "$2" | head -1; }
# the first lock's "waits lo hi p50_us" from a report
figures() {
	awk '/^#1 contended lock / { on = 1; next }
		on && /waits?,/ { n = $1; for (i = 1; i < NF; i++) if ($i == "p50") { k = i + 1; pre = ""
				if ($k == "<" || $k == ">=") { pre = $k; k++ } v = $k; u = $(k + 1) }
			sub(/[,;]$/, "", u); p = pre (u == "ms" ? v * 1000 : v) }
		on && /est\. / { match($0, /95% [0-9]+–[0-9]+/); r = substr($0, RSTART + 4, RLENGTH - 4); split(r, b, "–");
			print n, b[1], b[2], p; exit }' "$1"
}

echo "bench/locks.sh: locks_c (3 workers, 2 ms CPU holds), window ${window} s, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "round config    acq/s  loss%  stopped%  waits: truth / seen, est. (95%)   in?  wait p50 us: truth / measured"
for r in $(seq 0 $((rounds - 1))); do
	for config in $(rotated "baseline locks" "$r"); do
		out=$tmp/$config-$r
		if [ "$config" = baseline ]; then
			"$target" 3 "$window" 2000 >"$out.out"
		else
			"$xgdbprof" --recipe "$src/recipes/locks.recipe" -o "$out.d" -- "$target" 3 "$window" 2000 \
				>"$out.out" 2>"$out.err" || true
		fi
	done
	base=$(acq "$tmp/baseline-$r.out")
	out=$tmp/locks-$r
	rate=$(acq "$out.out")
	n=$(truth contended "$out.out")
	wait=$(truth wait_p50_us "$out.out")
	stopped=$(sed -n 's/^xgdbprof: traced .*target held stopped \([0-9.]*\)% of the time.*/\1/p' "$out.err")
	set -- $(figures "$out.out") - - - -
	seen=$1 lo=$2 hi=$3 p50=$4
	inside=$(awk -v t="${n:-0}" -v l="$lo" -v h="$hi" 'BEGIN { print (l != "-" && t >= l && t <= h) ? "yes" : "no" }')
	loss=$(awk -v b="${base:-0}" -v p="${rate:-0}" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
	echo "$loss" >>"$tmp/loss"
	echo "${stopped:-0}" >>"$tmp/stopped"
	echo "$inside" >>"$tmp/inside"
	printf '%-5s baseline  %5s\n' "$r" "${base:--}"
	printf '%-5s locks     %5s  %5s  %8s  %6s / %s (%s–%s)  %4s  %s / %s\n' "$r" "${rate:--}" "$loss" "${stopped:--}" \
		"${n:--}" "$seen" "$lo" "$hi" "$inside" "${wait:--}" "$p50"
done
echo "median: loss $(median <"$tmp/loss")%, stopped $(median <"$tmp/stopped")%; truth inside the interval in $(grep -c yes "$tmp/inside") of $rounds rounds"

kv=$build/tests/fixtures/bin/kvservice
if [ -x "$kv" ]; then
	"$kv" $((window + 30)) --workers 3 >/dev/null 2>&1 &
	target_pid=$!
	sleep 2
	"$xgdbprof" --recipe "$src/recipes/locks.recipe" -d "${window}s" -o "$tmp/kv.d" "$target_pid" >"$tmp/kv.out" 2>"$tmp/kv.err" || true
	kill "$target_pid" 2>/dev/null || true
	target_pid=
	echo "kvservice (3 workers): stopped $(sed -n 's/^xgdbprof: traced .*target held stopped \([0-9.]*\)% of the time.*/\1/p' "$tmp/kv.err")%; top contended locks:"
	sed -n '/^#1 contended/,/^#4 contended/p' "$tmp/kv.out" | grep -v '^#4' | sed 's/^/  /'
else
	echo "kvservice: not built (make tests/fixtures/bin/kvservice): row skipped"
fi
