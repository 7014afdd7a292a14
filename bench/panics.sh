#!/usr/bin/env bash
# bench/panics.sh — what tracing panics costs a service that panics often,
# side by side (docs/tracing.md, "Panics under the budget"). The target is
# tests/fixtures/panic_storm: 2 workers computing, each panicking (caught)
# 100 times a second, counting its panics and compute rounds itself. In
# interleaved rounds, over the middle WINDOW seconds of a WINDOW+2 s attach:
#   free    untraced;
#   budget  `panic { @n = count(); }` under the default 5% budget;
#   exact   the same with `set exact true` (every panic stopped at, as
#           every run was before panics kept to the budget);
# the compute rounds per second as a ratio to the same round's untraced
# rate, the share of the time xgdbprof says it held the target, and the
# panics it counted against the program's own over its window.
# Usage: bench/panics.sh [--rounds N] [--window SECONDS] BUILD_DIR
set -eu
rounds=3
window=4
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof tests/fixtures/bin/panic_storm >/dev/null
storm=$build/tests/fixtures/bin/panic_storm
prog=$tmp/storm.progress
"$storm" 2 100 100000 "$prog" >/dev/null 2>&1 &
target_pid=$!
sleep 1
field() { sed -n "s/.* $1 \\([0-9]*\\).*/\\1/p; s/^$1 \\([0-9]*\\).*/\\1/p" "$2" | head -n 1; }
rate() { cp "$prog" "$tmp/a"; sleep "$window"; cp "$prog" "$tmp/b"; echo $(( ($(field work "$tmp/b") - $(field work "$tmp/a")) / window )); }
printf 'set exact true\npanic { @n = count(); }\n' >"$tmp/exact.recipe"
printf 'panic { @n = count(); }\n' >"$tmp/budget.recipe"
measure() {
	if [ "$1" = free ]; then
		echo "free $(rate) $r - - -" >>"$tmp/rows"
		return
	fi
	"$xgdbprof" --recipe "$tmp/$1.recipe" -d $((window + 2))s "$target_pid" >"$tmp/xg.out" 2>"$tmp/xg.err" &
	xg_pid=$!
	for _ in $(seq 600); do grep -q attached "$tmp/xg.err" 2>/dev/null && break; sleep 0.02; done
	cp "$prog" "$tmp/before"
	sleep 1
	local ops
	ops=$(rate)
	wait "$xg_pid" || log "xgdbprof failed: $(tail -n 2 "$tmp/xg.err")"
	xg_pid=
	cp "$prog" "$tmp/after"
	local own held counted
	own=$(( $(field panics "$tmp/after") - $(field panics "$tmp/before") ))
	held=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$tmp/xg.err" | head -n 1)
	counted=$(sed -n 's/^note: panics: \([0-9]*\) in all.*/\1/p' "$tmp/xg.err" | head -n 1)
	# exact mode reports every panic: its count is the map's
	[ -n "$counted" ] || counted=$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$tmp/xg.out")
	echo "$1 $ops $r ${held:--} ${counted:--} $own" >>"$tmp/rows"
}
: >"$tmp/rows"
run_rounds measure "" "free budget exact"
echo
echo "panic_storm (2 workers, 200 panics/s), $(nproc) CPUs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg); medians:"
printf '  %-8s %12s %10s %8s %18s\n' config "rounds/s" "÷untraced" "held%" "panics ÷ own"
for c in free budget exact; do
	m=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/rows" | median)
	ratio=$(awk -v c="$c" '$1 == "free" { f[$3] = $2 } $1 == c { v[$3] = $2 } END { for (k in v) if (f[k] > 0) print v[k] / f[k] }' "$tmp/rows" | median)
	held=$(awk -v c="$c" '$1 == c { print $4 }' "$tmp/rows" | median)
	counts=$(awk -v c="$c" '$1 == c && $6 != "-" && $6 > 0 { print $5 / $6 }' "$tmp/rows" | median)
	printf '  %-8s %12s %10s %8s %18s\n' "$c" "$m" "$ratio" "$held" "$counts"
done
echo "budget: panics counted in the target at the panic hook, the first 20 and a budget's share reported;"
echo "exact: every panic stopped at and reported (what every run did before the budget covered panics)"
