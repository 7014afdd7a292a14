# bench/lib.sh — what the side-by-side bench scripts share; sourced, not run.
#
# Sets from the command line ([--quick] [--rounds N] [--window SECONDS]
# [--only "CONFIG ..."] [--compare OTHER_BUILD] BUILD_DIR; defaults from
# $rounds and $window set before sourcing): rounds, window, only (empty: all
# configurations), other_xgdbprof (empty unless --compare), src (the source
# tree), build, xgdbprof, tmp (a scratch directory removed at exit). At exit, kills the processes whose PIDs are in
# $target_pid and $xg_pid. Defines log, now_ns, median, rotated and run_rounds.

only=
other_xgdbprof=
while [ $# -gt 1 ]; do
	case "$1" in
	--quick) rounds=1; shift ;;
	--rounds) rounds=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--compare) other_xgdbprof=$(cd "$2" && pwd)/xgdbprof; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--quick] [--rounds N] [--window SECONDS] [--only \"CONFIG ...\"] [--compare OTHER_BUILD] BUILD_DIR" >&2; exit 2; }
[ -z "${other_xgdbprof:-}" ] || [ -x "$other_xgdbprof" ] || { echo "$0: no xgdbprof in the --compare build" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
xgdbprof=$build/xgdbprof
tmp=$(mktemp -d)
target_pid=
xg_pid=
cleanup() {
	[ -n "$xg_pid" ] && kill "$xg_pid" 2>/dev/null || true
	[ -n "$target_pid" ] && kill "$target_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

now_ns() { date +%s%N; }

# Nearest-rank median of the numbers on stdin ("-" and empty lines skipped).
median() {
	grep -v -e '^-$' -e '^$' | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		print v[int((NR + 1) / 2)] }'
}

# The configurations $1 in the order for round $2 (0-based): rotated by one
# each round, so none always runs first or right after the same neighbour.
rotated() {
	echo "$1" | tr ' ' '\n' | grep -v '^$' | awk -v k="$2" '{ c[NR - 1] = $0 }
		END { for (i = 0; i < NR; i++) print c[(i + k) % NR] }' | tr '\n' ' '
}

# run_rounds MEASURE LABEL CONFIGS: $rounds rounds of each configuration
# once, in an order rotated every round (rotated); MEASURE CONFIG may read
# the round number in $r.
run_rounds() {
	r=0
	while [ "$r" -lt "$rounds" ]; do
		order=$(rotated "$3" "$r")
		log "$2round $((r + 1))/$rounds: $order"
		for c in $order; do
			"$1" "$c"
		done
		r=$((r + 1))
	done
}
