#!/usr/bin/env bash
# bench/attach_hold.sh — how long attaching and arming hold a target
# stopped, side by side with another build (--compare), in interleaved
# rounds. The target is the demo service (tests/fixtures/cache-service:
# large DWARF, seven threads); each configuration attaches with a 1 s trace
# and reads what xgdbprof says it held ("attaching held the target stopped
# at most A ms and arming the probes B ms"):
#   arg      function "sled::tree::Tree::insert" { @trees[arg(self)] = count(); }
#            (gdb needs the program's symbols)
#   plain    the same probe with @calls = count() (gdb reads no symbols)
# Usage: bench/attach_hold.sh [--rounds N] [--only "arg plain"] [--compare OTHER_BUILD] BUILD_DIR
set -eu
rounds=6
window=1
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof tests/fixtures/bin/cache-service >/dev/null
"$build/tests/fixtures/bin/cache-service" 3600 >/dev/null 2>&1 &
target_pid=$!
sleep 2
probe_of() {
	case "$1" in
	arg) echo 'function "sled::tree::Tree::insert" { @trees[arg(self)] = count(); }' ;;
	plain) echo 'function "sled::tree::Tree::insert" { @calls = count(); }' ;;
	esac
}
measure() {   # measure BUILD:CONFIG
	local which=${1%%:*} config=${1#*:} bin=$xgdbprof
	[ "$which" = new ] || bin=$other_xgdbprof
	"$bin" -d "${window}s" -e "$(probe_of "$config")" "$target_pid" >"$tmp/xg.out" 2>"$tmp/xg.err" ||
		log "xgdbprof failed: $(tail -n 2 "$tmp/xg.err")"
	sed -n 's/.*attaching held the target stopped at most \([0-9.]*\) ms and arming the probes \([0-9.]*\) ms (not counted above).*/\1 \2/p' \
		"$tmp/xg.err" | awk -v c="$1" '{ printf "%s %.1f %.1f %.1f\n", c, $1, $2, $1 + $2 }' >>"$tmp/rows"
}
: >"$tmp/rows"
configs=
for c in ${only:-arg plain}; do
	configs="$configs new:$c"
	[ -z "$other_xgdbprof" ] || configs="$configs old:$c"
done
run_rounds measure "" "$configs"
echo
echo "cache-service, $(nproc) CPUs, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg); held stopped, ms (median, range):"
printf '  %-12s %18s %18s %22s\n' build:probe attaching arming "attach + arm"
for c in $configs; do
	cols=""
	for f in 2 3 4; do
		med=$(awk -v c="$c" -v f="$f" '$1 == c { print $f }' "$tmp/rows" | median)
		range=$(awk -v c="$c" -v f="$f" '$1 == c { print $f }' "$tmp/rows" | sort -g | sed -n '1p;$p' | tr '\n' '-' | sed 's/-$//')
		cols="$cols $(printf '%18s' "$med ($range)")"
	done
	printf '  %-12s%s\n' "$c" "$cols"
done
echo "(new: $build; old: ${other_xgdbprof:-none})"
