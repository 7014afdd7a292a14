#!/bin/sh
# bench/fidelity.sh — does xgdbprof's hot-cpu profile tell the truth on a
# realistic service? (issue 13, "Measure")
#
#   bench/fidelity.sh [--quick] [--rounds N] [--window SECONDS]
#                     [--only "MODE ..."] [--compare OTHER_BUILD] BUILD_DIR
#
# On the realistic fixture (tests/fixtures/kvservice: 2 busy workers among
# 11 threads, parking_lot locks, malloc churn, a B-tree store; WORKERS=N in
# the environment runs N workers instead), in one
# invocation, each round runs every mode on a fresh fixture warmed up for 5 s:
#   baseline   no profiler: the fixture's own throughput (its --progress
#              counters, by its own clock) over the window
#   perf-only  `perf record -F 499 --call-graph dwarf -p PID` alone: what perf costs
#   all-stop   xgdbprof --recipe hot-cpu --all-stop, and perf record on the
#              same process over the same time (perf starts as soon as
#              xgdbprof has attached, for the window xgdbprof samples)
#   default    the same with xgdbprof's default stop mode (non-stop, one
#              thread at a time, for hot-cpu on a PID)
#   non-stop   the same with --non-stop
#   *-alone    (all-stop-alone, non-stop-alone, default-alone) the same
#              modes without perf: what xgdbprof alone costs the fixture's
#              throughput, the ground truth for the stop budget (perf -g
#              at 499 Hz costs more than the budget by itself)
#   MODE~perf-alone  (rows added when perf-only and a *-alone mode ran)
#              the *-alone mode's profile against the same round's
#              perf-only recording: each tool alone on the undisturbed
#              program, since perf beside xgdbprof records a program our
#              stops disturb (on the demo, perf's share of the workers'
#              contended counter goes from ~4% alone to ~22% beside us)
#   *-other    (default-other, default-alone-other, ...) the mode with the
#              xgdbprof of --compare OTHER_BUILD: old against new, interleaved
#   *-min      (all-stop-min, non-stop-min, default-min) the same modes
#              driving the gdb binary in $GDB_MINIMAL (Debian's python-free
#              gdb-minimal; bench/stop_modes.sh unpacks it)
# and prints, per mode (medians over rounds): xgdbprof's stop mode; the
# overlap of the flat self-time profiles at symbol level, Σ min(p, q) over
# functions with kernel frames left out (bench/fidelity.py says exactly how
# a sample's function is chosen and names normalized); the share of samples
# waiting on a lock (futex wait, __lll_lock_wait*) for perf and for
# xgdbprof, and the share in sched_yield (where parking_lot's spinning
# waiters yield the CPU: runnable, mostly not running); xgdbprof's achieved rate per busy thread (its samples of each
# worker thread over its run, min and median), the busy threads' CPU share
# (perf's rate over 499 Hz: the most a sampler of running threads can see);
# stop median/p99, the share of time stopped (summed over threads in
# non-stop mode) and the largest share any one thread was held, from xgdbprof's report
# header; thread stacks recorded; the fixture's throughput and its loss
# against the baseline. Then each mode's #1 hottest path headline and the
# top functions of the last round side by side (perf vs xgdbprof).
# TARGET=demo in the environment runs the bundled demo (cache-service: two
# busy workers on the miniature sled tree, four idle connection threads)
# instead of kvservice; its throughput is timed by this script.
# PERF_CALL_GRAPH=fp records perf's call graphs by frame pointers instead
# of DWARF (`--call-graph dwarf` copies 8 KiB of stack a sample, a cost
# the target pays beside ours); the first user frame, to which a kernel
# sample is charged, is the interrupted user PC either way.
#
# Defaults: 1 round, a 20 s window (≥ 2000 thread samples need ~17 Hz per
# busy thread over 20 s). --quick: 1 round of 8 s. Needs perf (Debian:
# linux-perf) able to record the fixture (root, or perf_event_paranoid ≤ 1
# and ptrace rights), gdb, python3, and what builds the fixture (cargo and
# Debian's librust-parking-lot-dev librust-crossbeam-channel-dev).
# Figures: bench/README.md, "fidelity.sh".
set -eu

rounds=1
window=20
case " $* " in *" --quick "*) window=8 ;; esac
. "$(dirname "$0")/lib.sh"
warmup=5
workers=${WORKERS:-2}
target=${TARGET:-kvservice}
perf_call_graph=${PERF_CALL_GRAPH:-dwarf}
case "$perf_call_graph" in dwarf | fp) ;; *) log "$0: PERF_CALL_GRAPH is dwarf or fp"; exit 2 ;; esac
modes="baseline perf-only all-stop default all-stop-alone default-alone"
[ -z "$only" ] || modes=$only
case " $modes " in
*-min\ *) [ -x "${GDB_MINIMAL:-}" ] || { log "$0: modes *-min need GDB_MINIMAL=PATH (Debian's gdb-minimal: see bench/stop_modes.sh)"; exit 2; } ;;
esac
case "$target" in
kvservice) fixture=$build/tests/fixtures/bin/kvservice ;;
demo) fixture=$build/tests/fixtures/bin/cache-service ;;
*) log "$0: TARGET is kvservice or demo"; exit 2 ;;
esac
analyse="python3 $src/bench/fidelity.py"
perf_pid=
cleanup() {
	for pid in $perf_pid $xg_pid $target_pid; do kill "$pid" 2>/dev/null || true; done
	rm -rf "$tmp"
}

log "building xgdbprof and the $target fixture in $build"
make -s -C "$build" xgdbprof "${fixture#"$build/"}" >&2
perf record -F 499 -g -o "$tmp/probe.data" -- sleep 0.1 >"$tmp/probe.log" 2>&1 || {
	log "$0: perf cannot record here: $(tail -n 2 "$tmp/probe.log")"
	log "(install linux-perf; run as root or lower kernel.perf_event_paranoid)"
	exit 2
}

# "OPS NANOS" from the fixture's progress file (written aside and renamed,
# so never half-written).
read_progress() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		# the demo writes its operations alone: timed here
		[ -s "$1" ] && awk -v now="$(now_ns)" 'NR == 1 { print $1, (NF > 1 ? $2 : now) }' "$1" && return 0
		sleep 0.05
	done
	echo "0 0"
}

wait_traced() {   # PID SECONDS: until something ptrace-attaches to PID
	end=$(( $(now_ns) + $2 * 1000000000 ))
	while [ "$(now_ns)" -lt "$end" ]; do
		for st in /proc/"$1"/task/*/status; do
			tp=$(sed -n 's/^TracerPid:[[:space:]]*//p' "$st" 2>/dev/null || echo 0)
			[ "${tp:-0}" != 0 ] && return 0
		done
		sleep 0.01
	done
	return 1
}

results=$tmp/results
: >"$results"
record() { echo "$round $mode $1 $2" >>"$results"; }

measure() {   # MODE
	mode=$1
	prog=$tmp/progress
	rm -f "$prog"
	if [ "$target" = demo ]; then
		"$fixture" $((warmup + window + 60)) --progress "$prog" >/dev/null &
	else
		"$fixture" $((warmup + window + 60)) --progress "$prog" --workers "$workers" >/dev/null &
	fi
	target_pid=$!
	sleep "$warmup"
	case "$mode" in
	baseline)
		a=$(read_progress "$prog")
		sleep "$window"
		b=$(read_progress "$prog")
		;;
	perf-only)
		a=$(read_progress "$prog")
		perf record -F 499 --call-graph "$perf_call_graph" -p "$target_pid" -o "$tmp/perf.data" -- sleep "$window" >"$tmp/perf.log" 2>&1 || true
		b=$(read_progress "$prog")
		perf script --no-inline -i "$tmp/perf.data" -F comm,tid,ip,sym,dso >"$tmp/perf-$mode.txt" 2>/dev/null || true
		$analyse perf "$tmp/perf-$mode.txt" --perf-seconds "$window" | while read -r key value; do record "$key" "$value"; done
		cp "$tmp/perf-$mode.txt" "$tmp/perf-only-r$round.txt"   # the undisturbed program, for the *-alone modes
		;;
	all-stop | non-stop | default | all-stop-min | non-stop-min | default-min | all-stop-alone | non-stop-alone | default-alone | \
	*-other)
		flag=
		xg=$xgdbprof
		case "$mode" in *-other) xg=${other_xgdbprof:?"mode $mode needs --compare OTHER_BUILD"} ;; esac
		case "$mode" in all-stop*) flag=--all-stop ;; non-stop*) flag=--non-stop ;; esac
		with_perf=true
		case "$mode" in *-alone | *-alone-other) with_perf=false ;; esac
		case "$mode" in *-min) flag="$flag --gdb $GDB_MINIMAL" ;; esac
		rm -rf "$tmp/xg"
		"$xg" --recipe hot-cpu $flag -d "${window}s" -o "$tmp/xg" "$target_pid" \
			>"$tmp/report-$mode.txt" 2>"$tmp/xg.err" &
		xg_pid=$!
		wait_traced "$target_pid" 30 || log "$mode: xgdbprof did not attach in 30 s"
		a=$(read_progress "$prog")
		if $with_perf; then
			perf record -F 499 --call-graph "$perf_call_graph" -p "$target_pid" -o "$tmp/perf.data" -- sleep "$window" >"$tmp/perf.log" 2>&1 &
			perf_pid=$!
		fi
		wait "$xg_pid" || log "$mode: xgdbprof failed: $(tail -n 3 "$tmp/xg.err")"
		xg_pid=
		if $with_perf; then
			wait "$perf_pid" || log "$mode: perf record failed: $(tail -n 3 "$tmp/perf.log")"
			perf_pid=
		fi
		b=$(read_progress "$prog")
		if $with_perf; then
			perf script --no-inline -i "$tmp/perf.data" -F comm,tid,ip,sym,dso >"$tmp/perf-$mode.txt" 2>/dev/null || true
		else
			: >"$tmp/perf-$mode.txt"   # no perf: the comparison's perf side is empty
		fi
		case "$mode" in *-alone) [ -s "$tmp/xg/profile.json" ] && cp "$tmp/xg/profile.json" "$tmp/alone-$mode-r$round.json" ;; esac
		if [ -s "$tmp/xg/profile.json" ]; then
			$analyse compare "$tmp/perf-$mode.txt" "$tmp/xg/profile.json" --top 15 --perf-seconds "$window" >"$tmp/compare-$mode.txt"
			sed '/^function self time/,$d' "$tmp/compare-$mode.txt" | while read -r key value; do record "$key" "$value"; done
			sed -n '/^function self time/,$p' "$tmp/compare-$mode.txt" >"$tmp/top-$mode.txt"
		fi
		record headline "$(grep -m 1 '^#1 hottest' "$tmp/report-$mode.txt" || echo '(none)')"
		;;
	*) log "unknown mode $mode (baseline, perf-only, all-stop, non-stop, default; with GDB_MINIMAL set, the same with -min)"; exit 2 ;;
	esac
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	record ops_per_s "$(echo "$a $b" | awk '{ if ($4 > $2) printf "%.0f", ($3 - $1) * 1e9 / ($4 - $2); else print "-" }')"
}

log "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
round=0
while [ "$round" -lt "$rounds" ]; do
	for m in $(rotated "$modes" "$round"); do
		log "round $((round + 1))/$rounds: $m (${window} s)"
		measure "$m"
	done
	round=$((round + 1))
done

# Each tool alone, side by side: a *-alone mode's profile against the same
# round's perf-only recording (no xgdbprof beside perf). perf measured
# while xgdbprof samples sees a program our stops disturb: on the demo its
# share of the workers' contended counter goes from ~4% alone to ~22%
# beside us, with the same CPU per operation (bench/README.md,
# 2026-12-06), so the overlap beside us mixes our error with perf's view
# of a disturbed program. Recorded as mode "MODE~perf-alone".
r=0
while [ "$r" -lt "$rounds" ]; do
	for m in $modes; do
		case "$m" in *-alone) ;; *) continue ;; esac
		[ -s "$tmp/perf-only-r$r.txt" ] && [ -s "$tmp/alone-$m-r$r.json" ] || continue
		round=$r mode="$m~perf-alone"
		$analyse compare "$tmp/perf-only-r$r.txt" "$tmp/alone-$m-r$r.json" --top 15 --perf-seconds "$window" >"$tmp/compare-$mode.txt"
		sed '/^function self time/,$d' "$tmp/compare-$mode.txt" | while read -r key value; do record "$key" "$value"; done
		sed -n '/^function self time/,$p' "$tmp/compare-$mode.txt" >"$tmp/top-$mode.txt"
	done
	r=$((r + 1))
done
case " $modes " in *" perf-only "*) case "$modes" in *-alone*) modes="$modes $(for m in $modes; do case "$m" in *-alone) printf '%s~perf-alone ' "$m" ;; esac; done)" ;; esac ;; esac

echo "bench/fidelity.sh: $([ "$target" = demo ] && echo "the demo (cache-service)" || echo "kvservice ($workers workers)"), window ${window} s, warm-up ${warmup} s, perf -F 499 --call-graph $perf_call_graph; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
$analyse table "$results"
for m in $modes; do
	[ -s "$tmp/top-$m.txt" ] || continue
	echo
	echo "$m (last round): top self time by symbol, $(grep '^perf_samples\|^our_samples' "$tmp/compare-$m.txt" | tr '\n' ' ')"
	cat "$tmp/top-$m.txt"
done
