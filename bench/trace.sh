#!/bin/sh
# bench/trace.sh — does the tracer's stop budget hold? (issue 6)
#
#   bench/trace.sh [--quick] [--rounds N] [--window SECONDS] BUILD_DIR
#
# BUILD_DIR is a configured tree (this script runs `make xgdbprof
# tests/fixtures/bin/trace_hot` there). The target is the trace_hot fixture:
# one thread calling hot_step() ~1.1 M times a second, writing its progress
# ("CALLS NANOS" by its own clock) to a file every 50 ms. In this one
# invocation, in interleaved rounds (each round runs every configuration once,
# the order rotated by one each round), it measures over a window:
#   - the fixture's throughput with nothing attached (baseline) and under
#     `xgdbprof --recipe func-latency -D FUNC=hot_step` in default mode
#     (budget 5%) and with `set max_stopped 10%`;
#   - the time the fixture's thread really spent stopped, from its own
#     /proc/PID/task/TID/schedstat (wall - on CPU - waiting for a CPU),
#     independently of xgdbprof;
#   - what xgdbprof itself reports: stopped %, hits, hits measured from the
#     scheduler clocks, gdb's part of a hit, coverage.
# Prints medians over the rounds, loss% against this run's baseline.
# See bench/README.md. Needs: cc, gdb.
set -eu

rounds=5
window=6
. "$(dirname "$0")/lib.sh"
[ -z "$only$other_xgdbprof" ] || { echo "$0: --only and --compare are bench/profile.sh's" >&2; exit 2; }
hot=$build/tests/fixtures/bin/trace_hot

log "building xgdbprof and the trace_hot fixture in $build"
make -s -C "$build" xgdbprof tests/fixtures/bin/trace_hot >&2

# The recipe shipped as func-latency, with a 10% budget: the budget is a
# recipe setting (no command-line option).
sed 's/^function /set max_stopped 10%\nfunction /' "$src/recipes/func-latency.recipe" >"$tmp/func-latency-10.recipe"
grep -q '^set max_stopped 10%' "$tmp/func-latency-10.recipe" || { log "could not derive the 10% recipe"; exit 1; }

# Prints "CALLS NANOS WALL RUN WAIT": the fixture's progress (retrying while
# the file is being replaced), then our wall clock and the summed schedstat
# of the fixture's threads (on CPU, waiting for a CPU), read together.
read_state() {
	line=
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		line=$(cat "$1" 2>/dev/null || true)
		[ -n "$line" ] && break
		sleep 0.01
	done
	[ -n "$line" ] || line="0 0"
	wall=$(now_ns)
	clocks=$(cat /proc/"$target_pid"/task/*/schedstat 2>/dev/null | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f", r, w }')
	echo "$line $wall $clocks"
}

# Waits until xgdbprof says its probes are armed (the trace has begun).
wait_attached() {
	for _ in $(seq 1 600); do
		grep -q 'attached' "$1" 2>/dev/null && return 0
		kill -0 "$xg_pid" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}

# One measurement: a fresh fixture, 1 s warm-up, then config $1 over the
# window. Appends to $tmp/results:
#   CONFIG CALLS_PER_S TRUE_STOPPED% RUNQ% XG_STOPPED% HITS MEASURED GDB_MS COVERAGE% ROUND
measure() {
	config=$1
	prog=$tmp/progress
	rm -f "$prog" "$prog.tmp"
	"$hot" $((window + 40)) "$prog" >/dev/null &
	target_pid=$!
	sleep 1
	xs=- hits=- measured=- gdbms=- cov=-
	case "$config" in
	baseline)
		a=$(read_state "$prog")
		sleep "$window"
		b=$(read_state "$prog")
		;;
	xgdbprof-*)
		recipe=func-latency
		[ "$config" = xgdbprof-10% ] && recipe=$tmp/func-latency-10.recipe
		# The trace lasts a second longer than the window, which starts
		# once the probes are armed: the window holds no attach or detach.
		"$xgdbprof" -o "$tmp/xout" -d "$((window + 1))s" --recipe "$recipe" -D FUNC=hot_step \
			"$target_pid" >"$tmp/xlog" 2>"$tmp/xerr" &
		xg_pid=$!
		if ! wait_attached "$tmp/xerr"; then
			log "xgdbprof did not attach: $(tail -n 3 "$tmp/xerr")"
		fi
		a=$(read_state "$prog")
		sleep "$window"
		b=$(read_state "$prog")
		wait "$xg_pid" || log "xgdbprof failed: $(tail -n 3 "$tmp/xerr")"
		xg_pid=
		summary=$(grep '^xgdbprof: traced ' "$tmp/xerr" | head -n 1)
		xs=$(printf '%s\n' "$summary" | sed -n 's/.*target held stopped \([0-9.]*\)% of the time.*/\1/p')
		hits=$(printf '%s\n' "$summary" | sed -n 's/^xgdbprof: traced [0-9.]* s: \([0-9]*\) hits* at .*/\1/p')
		measured=$(sed -n 's/.*schedstat (wall - on CPU) for \([0-9]*\) of [0-9]* hits.*/\1/p' "$tmp/xerr" | head -n 1)
		gdbms=$(sed -n 's/.*a hit cost gdb a median \([0-9.]*\) ms.*/\1/p; s/.*estimated at \([0-9.]*\) ms from the gaps.*/\1/p' "$tmp/xerr" | head -n 1)
		cov=$(sed -n 's/.*they were armed \([0-9.]*\)% of the run.*/\1/p' "$tmp/xerr" | head -n 1)
		[ -n "$cov" ] || cov=100
		;;
	esac
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	# Throughput by the fixture's own clock; stopped share by ours, from the
	# schedstat read at the same instants. trace_hot's one thread is always
	# runnable, so whatever is neither on a CPU nor waiting for one is time
	# it was held stopped.
	tput=$(echo "$a $b" | awk '{ if ($7 > $2) printf "%.0f", ($6 - $1) / (($7 - $2) / 1e9); else print "-" }')
	true_pct=$(echo "$a $b" | awk '{ w = $8 - $3; if (w > 0) printf "%.2f", 100 * (w - ($9 - $4) - ($10 - $5)) / w; else print "-" }')
	runq=$(echo "$a $b" | awk '{ w = $8 - $3; if (w > 0) printf "%.2f", 100 * ($10 - $5) / w; else print "-" }')
	echo "$config $tput $true_pct $runq ${xs:--} ${hits:--} ${measured:--} ${gdbms:--} ${cov:--} $r" >>"$tmp/results"
	log "  $config: $tput calls/s, truly stopped $true_pct% (run queue $runq%), xgdbprof says ${xs:--}%," \
		"${hits:--} hits (${measured:--} measured), gdb ${gdbms:--} ms/hit, armed ${cov:--}%"
}

configs="baseline xgdbprof-5% xgdbprof-10%"
: >"$tmp/results"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ $r -lt "$rounds" ]; do
	order=$(rotated "$configs" "$r")
	log "round $((r + 1))/$rounds: $order"
	for c in $order; do
		measure "$c"
	done
	r=$((r + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

base=$(awk '$1 == "baseline" { print $2 }' "$tmp/results" | median)
echo
echo "xgdbprof tracing bench: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $rounds round(s), ${window} s windows"
echo "load average before: $load_before, after: $load_after"
echo "target: trace_hot (one thread, hot_step ~1.1 M calls/s); recipe func-latency -D FUNC=hot_step; medians over rounds"
printf '%-13s %9s %6s %6s %9s %6s %8s %6s %8s %7s %7s\n' configuration calls/s loss% rloss% stopped% runq% \
	xg_stop% hits measured gdb_ms armed%
for c in $configs; do
	col() { awk -v c="$c" -v k="$1" '$1 == c { print $k }' "$tmp/results" | median; }
	t=$(col 2)
	loss=$(awk -v t="$t" -v b="$base" 'BEGIN { if (t == "-" || b == "-" || b == 0) print "-"; else printf "%.1f", 100 * (b - t) / b }')
	# The same, round by round against that round's baseline: less
	# exposed to load that comes and goes during the run.
	rloss=$(awk -v c="$c" '$1 == "baseline" { b[$10] = $2 } $1 == c { t[$10] = $2 }
		END { for (r in t) if (b[r] > 0 && t[r] != "-") printf "%.1f\n", 100 * (b[r] - t[r]) / b[r] }' "$tmp/results" | median)
	printf '%-13s %9s %6s %6s %9s %6s %8s %6s %8s %7s %7s\n' "$c" "$t" "$loss" "$rloss" "$(col 3)" "$(col 4)" \
		"$(col 5)" "$(col 6)" "$(col 7)" "$(col 8)" "$(col 9)"
done
echo "loss% = against the median baseline; rloss% = median over rounds of the loss against that round's baseline"
echo "stopped% = (wall - on CPU - waiting for a CPU) / wall of the fixture's thread over the window, from /proc schedstat"
echo "runq% = waiting for a CPU / wall; xg_stop% = xgdbprof's own figure over its whole trace"
echo "measured = hits whose hidden part xgdbprof read from the thread's clocks; gdb_ms = gdb's part of a hit (median)"
