#!/usr/bin/env bash
# bench/forks.sh — what gdb's handling of forks costs a target that forks
# often, beside what xgdbprof says it held it. The target is
# tests/fixtures/forks_after_main.c (built here; its main thread stays):
# one thread calls probed() 500 times, forks, waits for the child (which
# calls probed() 200 times and exits), and does it again every ~2 ms, and
# counts its children itself. Interleaved rounds, each a fresh target,
# WINDOW seconds each:
#   untraced  nothing attached: the fixture's forks a second
#   sampled   `xgdbprof -d WINDOW PID` (hot-cpu, default mode)
#   traced    `xgdbprof -d WINDOW -e 'function probed { @n = count(); }' PID`
# For each: forks a second by the fixture's own count (from gdb's attach,
# seen as the target's TracerPid, or 0.5 s after the start untraced, to
# xgdbprof's exit; the detach and the report's writing are in it), its
# ratio to the same round's untraced rate, and what xgdbprof's report says
# it held the target ("held at most N%" or "target stopped N%").
# Usage: bench/forks.sh [--rounds N] [--window SECONDS] [--only "CONFIG ..."] BUILD_DIR
set -eu
rounds=3
window=5
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof >/dev/null
fixture=$tmp/forks_after_main
cc -O1 -g -pthread -o "$fixture" "$src/tests/fixtures/forks_after_main.c"
configs=${only:-"untraced sampled traced"}
results=$tmp/results
: >"$results"

children() { awk '{ print $2 }' "$1" 2>/dev/null || echo 0; }

measure() {
	local config=$1 progress=$tmp/progress.$r.$1 a b t0 t1 held=-
	rm -f "$progress"
	"$fixture" "$progress" >/dev/null &
	target_pid=$!
	for _ in $(seq 200); do [ -s "$progress" ] && break; sleep 0.01; done
	sleep 0.5
	case "$config" in
	untraced)
		a=$(children "$progress"); t0=$(now_ns)
		sleep "$window"
		b=$(children "$progress"); t1=$(now_ns)
		;;
	sampled | traced)
		if [ "$config" = sampled ]; then
			"$xgdbprof" -d "${window}s" -o "$tmp/xg.$r.$config" "$target_pid" >"$tmp/xg.out" 2>"$tmp/xg.err" &
		else
			"$xgdbprof" -d "${window}s" -o "$tmp/xg.$r.$config" -e 'function probed { @n = count(); }' "$target_pid" \
				>"$tmp/xg.out" 2>"$tmp/xg.err" &
		fi
		xg_pid=$!
		# from the attach (gdb's TracerPid on the target), as far as the
		# fixture's count can tell
		for _ in $(seq 3000); do
			[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$target_pid/status" 2>/dev/null)" != 0 ] && break
			sleep 0.005
		done
		a=$(children "$progress"); t0=$(now_ns)
		wait "$xg_pid" || log "$config: xgdbprof failed: $(tail -n 2 "$tmp/xg.err")"
		xg_pid=
		b=$(children "$progress"); t1=$(now_ns)
		held=$(tr -s ' \n' ' ' <"$tmp/xg.out" | grep -o 'held at most [0-9.]*%\|target stopped [0-9.]*% of the time' | head -1 | grep -o '[0-9.]*%' || echo -)
		;;
	esac
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	echo "$r $config $(awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (b - a) * 1e9 / (t1 - t0) }') $held" >>"$results"
}

log "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run_rounds measure "" "$configs"
echo "bench/forks.sh: forks_after_main, window ${window} s, $rounds round(s); load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
printf '%-6s %-9s %10s %8s %s\n' round config "forks/s" "÷untr." "what xgdbprof says it held"
awk '{ rate[$1" "$2] = $3 } END { }
	{ line[NR] = $0 } END {
		for (i = 1; i <= NR; i++) {
			split(line[i], f, " ")
			base = rate[f[1]" untraced"]
			ratio = (base > 0) ? sprintf("%.2f", f[3] / base) : "-"
			printf "%-6s %-9s %10s %8s %s\n", f[1], f[2], f[3], ratio, (f[4] == "" ? "-" : f[4])
		}
	}' "$results"
