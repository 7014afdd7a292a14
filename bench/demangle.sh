#!/bin/sh
# Demangler throughput: xgdbprof's filter vs rustfilt (rustc-demangle) on the
# same input, plus the in-process library rate. Not part of `make check`.
#   bench/demangle.sh [BUILDDIR]   (default: the current directory)
# Input: the symbols of tests/demangle/corpus-full.txt (real Rust legacy and
# v0 names from the fixtures), repeated to ~300k lines.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-.}" && pwd)
xgdbprof="$build/xgdbprof"
[ -x "$xgdbprof" ] || { echo "no $xgdbprof: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cut -f1 "$src/tests/demangle/corpus-full.txt" > "$tmp/one"
per=$(wc -l < "$tmp/one")
reps=$(( (300000 + per - 1) / per ))
i=0
while [ $i -lt $reps ]; do cat "$tmp/one"; i=$((i + 1)); done > "$tmp/syms"
n=$(wc -l < "$tmp/syms")
echo "input: $n symbols ($per distinct, $(wc -c < "$tmp/syms") bytes)"

best_time() { # command... ; prints best wall seconds of 3 runs
	best=
	for _ in 1 2 3; do
		t0=$(date +%s.%N)
		"$@" < "$tmp/syms" > /dev/null
		t1=$(date +%s.%N)
		best=$(echo "$t0 $t1 ${best:-999}" | awk '{ d = $2 - $1; print (d < $3 ? d : $3) }')
	done
	echo "$best"
}

t_ours=$(best_time "$xgdbprof" demangle)
t_ours_nh=$(best_time "$xgdbprof" demangle --no-hash)
printf '%-34s %10s %14s\n' "filter (stdin -> stdout)" "seconds" "symbols/s"
printf '%-34s %10.3f %14.0f\n' "xgdbprof demangle" "$t_ours" "$(echo "$n $t_ours" | awk '{print $1/$2}')"
printf '%-34s %10.3f %14.0f\n' "xgdbprof demangle --no-hash" "$t_ours_nh" "$(echo "$n $t_ours_nh" | awk '{print $1/$2}')"
if command -v rustfilt >/dev/null 2>&1; then
	t_rf=$(best_time rustfilt -h)
	t_rf_nh=$(best_time rustfilt)
	printf '%-34s %10.3f %14.0f\n' "rustfilt -h" "$t_rf" "$(echo "$n $t_rf" | awk '{print $1/$2}')"
	printf '%-34s %10.3f %14.0f\n' "rustfilt" "$t_rf_nh" "$(echo "$n $t_rf_nh" | awk '{print $1/$2}')"
	printf 'ratio (rustfilt time / xgdbprof time): full %.2fx, no-hash %.2fx\n' \
		"$(echo "$t_rf $t_ours" | awk '{print $1/$2}')" "$(echo "$t_rf_nh $t_ours_nh" | awk '{print $1/$2}')"
else
	echo "rustfilt not installed (apt install rustfilt): no comparison"
fi

${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -I"$build" -I"$src/src" -o "$tmp/bench" \
	"$src/bench/demangle_bench.c" "$src/src/symbols/demangle.c" "$src/src/symbols/rust_demangle_unicode.c"
"$tmp/bench" "$tmp/syms"
