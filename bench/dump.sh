#!/usr/bin/env bash
# bench/dump.sh BUILD_DIR [ROUNDS] — how long one `xgdbprof dump PID` takes on
# the demo target, side by side with eu-stack (elfutils) on the same process,
# interleaved rounds, medians. Also the time the target was held stopped
# (dump prints it; eu-stack does not say).
set -euo pipefail
build=$(cd "${1:?usage: bench/dump.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
make -s -C "$build" xgdbprof tests/fixtures/bin/cache-service >/dev/null
tmp=$(mktemp -d)
"$build/tests/fixtures/bin/cache-service" 600 >/dev/null &
target=$!
trap 'kill $target 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 1

seconds() {   # seconds CMD... : wall time of one run, in seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$tmp/out" 2>&1 || true
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", a / b }'; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

: >"$tmp/xgdbprof" ; : >"$tmp/xgdbprof-gdb"; : >"$tmp/eu-stack"; : >"$tmp/eu-stack-i"; : >"$tmp/stopped"
for r in $(seq 1 "$rounds"); do
	seconds "$build/xgdbprof" dump "$target" >>"$tmp/xgdbprof"
	sed -n 's/.*stopped for \([0-9.]*\) ms.*/\1/p' "$tmp/out" >>"$tmp/stopped"
	seconds eu-stack -p "$target" >>"$tmp/eu-stack"
	seconds "$build/xgdbprof" dump --walker gdb "$target" >>"$tmp/xgdbprof-gdb"
	seconds eu-stack -i -p "$target" >>"$tmp/eu-stack-i"
done
x=$(median <"$tmp/xgdbprof"); e=$(median <"$tmp/eu-stack")
printf '%-34s %10s %10s\n' "command (demo target, $(ls /proc/$target/task | wc -l) threads)" "median s" "vs eu-stack"
printf '%-34s %10.3f %10.2fx\n' "xgdbprof dump (dwfl walker)" "$x" "$(ratio "$x" "$e")"
printf '%-34s %10.3f %10.2fx\n' "xgdbprof dump --walker gdb" "$(median <"$tmp/xgdbprof-gdb")" "$(ratio "$(median <"$tmp/xgdbprof-gdb")" "$e")"
printf '%-34s %10.3f %10.2fx\n' "eu-stack -p" "$e" 1
printf '%-34s %10.3f %10.2fx\n' "eu-stack -i -p (inline frames)" "$(median <"$tmp/eu-stack-i")" "$(ratio "$(median <"$tmp/eu-stack-i")" "$e")"
echo "xgdbprof dump held the target stopped for a median of $(median <"$tmp/stopped") ms ($rounds rounds; load: $(cut -d' ' -f1-3 /proc/loadavg))"
