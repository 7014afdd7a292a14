#!/bin/sh
# bench/alloc.sh — what the alloc recipe costs its target, and how its
# estimates compare with the truth (issue 16).
#
#   bench/alloc.sh [--quick] [--rounds N] [--window SECONDS] BUILD_DIR
#
# The target is tests/fixtures/alloc_sites: one thread, every 2 ms of its
# own CPU time, site_a() mallocs 192 bytes and site_b() callocs 64; it prints
# its own totals at exit. In interleaved rounds (the order rotated by one
# each round) it runs for the window:
#   - alone (baseline): allocations a second;
#   - under `xgdbprof --recipe alloc -- alloc_sites ...` (the default 5%
#     budget), traced from its first instruction to its exit: its
#     allocations a second, the stopped share xgdbprof reports, and site_a's
#     bytes as estimated (with the 95% interval) against the program's own
#     total, and the measured A:B byte ratio (truth 3).
# On the realistic fixture (kvservice, when built) one more row: the
# stopped share and the three stacks that allocate most bytes, leaf first
# (they must end in kvservice's code, not in the allocator).
# Prints one line a round and the medians. Needs: cc, gdb.
set -eu

rounds=3
window=6
. "$(dirname "$0")/lib.sh"
[ -z "$only$other_xgdbprof" ] || { echo "$0: --only and --compare are bench/profile.sh's" >&2; exit 2; }
sites=$build/tests/fixtures/bin/alloc_sites
log "building xgdbprof and the alloc_sites fixture in $build"
make -s -C "$build" xgdbprof tests/fixtures/bin/alloc_sites >&2

# value LEAF FILE: "measured estimate low high" of @bytes' entry whose stack starts at LEAF
value() {
	awk -v leaf="$1" '
		index($0, "@bytes[") == 1 { want = 1; first = 1; next }
		want && first { first = 0; hit = ($1 == leaf); next }
		want && /^\]: / { if (hit) print; want = 0 }' "$2" | head -1 |
		sed -n 's/^\]: \([0-9]*\)[^·]*· est\. \([0-9]*\) (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2 \3 \4/p; t; s/^\]: \([0-9]*\)$/\1 \1 \1 \1/p'
}

echo "bench/alloc.sh: alloc_sites (2 ms of CPU an iteration), window ${window} s, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "round config    allocs/s  loss%  stopped%  site_a bytes: truth / est. (95%)        in?  A:B measured"
for r in $(seq 0 $((rounds - 1))); do
	base_rate=
	for config in $(rotated "baseline alloc" "$r"); do
		out=$tmp/$config-$r
		if [ "$config" = baseline ]; then
			"$sites" 2000 "$window" 0 >"$out.out"
		else
			"$xgdbprof" --recipe "$src/recipes/alloc.recipe" -o "$out.d" -- "$sites" 2000 "$window" 0 \
				>"$out.out" 2>"$out.err" || true
		fi
		a=$(sed -n 's/^a_bytes \([0-9]*\)$/\1/p' "$out.out")
		rate=$(awk -v a="${a:-0}" -v w="$window" 'BEGIN { printf "%.0f", a / 192 / w }')
		echo "$rate" >>"$tmp/rate-$config"
		[ "$config" = baseline ] && echo "$rate" >"$tmp/base-$r"
	done
	base=$(cat "$tmp/base-$r")
	out=$tmp/alloc-$r
	a=$(sed -n 's/^a_bytes \([0-9]*\)$/\1/p' "$out.out")
	rate=$(awk -v a="${a:-0}" -v w="$window" 'BEGIN { printf "%.0f", a / 192 / w }')
	stopped=$(sed -n 's/^tracer: .*target stopped [0-9.]* s (\([0-9.]*\)%).*/\1/p' "$out.err")
	set -- $(value site_a "$out.out") - - - -
	ma=$1 est=$2 lo=$3 hi=$4
	set -- $(value site_b "$out.out") - - - -
	mb=$1
	inside=$(awk -v t="${a:-0}" -v l="$lo" -v h="$hi" 'BEGIN { print (l != "-" && t >= l && t <= h) ? "yes" : "no" }')
	ratio=$(awk -v x="$ma" -v y="$mb" 'BEGIN { if (y + 0 > 0) printf "%.2f", x / y; else print "-" }')
	loss=$(awk -v b="$base" -v p="$rate" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
	echo "$loss" >>"$tmp/loss"
	echo "$stopped" >>"$tmp/stopped"
	echo "$ratio" >>"$tmp/ratio"
	echo "$inside" >>"$tmp/inside"
	printf '%-5s baseline  %8s\n' "$r" "$base"
	printf '%-5s alloc     %8s  %5s  %8s  %8s / %s (%s–%s)  %4s  %s\n' "$r" "$rate" "$loss" "${stopped:--}" "${a:--}" \
		"$est" "$lo" "$hi" "$inside" "$ratio"
done
echo "median: loss $(median <"$tmp/loss")%, stopped $(median <"$tmp/stopped")%, A:B $(median <"$tmp/ratio"); truth inside the interval in $(grep -c yes "$tmp/inside") of $rounds rounds"

kv=$build/tests/fixtures/bin/kvservice
if [ -x "$kv" ]; then
	"$kv" $((window + 30)) --workers 2 >/dev/null 2>&1 &
	target_pid=$!
	sleep 2
	"$xgdbprof" --recipe "$src/recipes/alloc.recipe" -d "${window}s" -o "$tmp/kv.d" "$target_pid" >"$tmp/kv.out" 2>"$tmp/kv.err" || true
	kill "$target_pid" 2>/dev/null || true
	target_pid=
	echo "kvservice: stopped $(sed -n 's/^tracer: .*target stopped [0-9.]* s (\([0-9.]*\)%).*/\1/p' "$tmp/kv.err")%; top stacks by bytes (leaf, then caller):"
	awk '/^@bytes\[/ { getline l1; getline l2; sub(/^ +/, "", l1); sub(/^ +/, "", l2); s = l1 " <- " l2 }
		/^\]: / && s != "" { print "  " s; print "     " $0; s = "" }' "$tmp/kv.out" | tail -6
else
	echo "kvservice: not built (make tests/fixtures/bin/kvservice): row skipped"
fi
