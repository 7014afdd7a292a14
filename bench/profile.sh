#!/bin/sh
# bench/profile.sh — observer effect of the sampling profiler (issue 5).
#
#   bench/profile.sh [--quick] [--rounds N] [--window SECONDS]
#                    [--only "CONFIG ..."] [--compare OTHER_BUILD] BUILD_DIR
#
# BUILD_DIR is a configured tree where `make xgdbprof libmi.a` has run (this
# script runs `make xgdbprof libmi.a tests/fixtures/bin/cache-service` there
# itself). Builds bench/bench_target.rs (release + debuginfo, and the ~20 MB
# `--cfg bloat` variant) and bench/naive_mi.c into BUILD_DIR/bench/, then in
# this one invocation measures, in interleaved rounds (each round runs every
# configuration once, the order rotated by one each round):
#   - the bench target's throughput over a window with each profiler attached
#     and with none (baseline), and the profiler's stop statistics;
#   - attach-to-first-sample time of xgdbprof on the demo target and on the
#     ~20 MB binary.
# Prints medians over the rounds. See bench/README.md for the columns.
# --only runs just the configurations named (baseline is always kept: every
# loss is against it). --compare adds rows other-19 and other-49: the same
# runs as xgdbprof-19/49 with OTHER_BUILD's xgdbprof, to judge a change side
# by side with the build before it.
# Needs: rustc (RUSTC), cc (CC), gdb, python3 (for a monotonic launch
# timestamp); perf and eu-stack are used when they work.
set -eu

rounds=3
window=5
. "$(dirname "$0")/lib.sh"
out=$build/bench
RUSTC=${RUSTC:-rustc}
CC=${CC:-cc}
mkdir -p "$out"

# ---- build ---------------------------------------------------------------
log "building xgdbprof, libmi.a and the demo target in $build"
make -s -C "$build" xgdbprof libmi.a tests/fixtures/bin/cache-service >&2
newer() { # true when $1 is missing or older than $2
	[ ! -e "$1" ] || [ "$2" -nt "$1" ]
}
if newer "$out/bench_target" "$src/bench/bench_target.rs"; then
	log "building bench_target"
	$RUSTC --edition 2018 -C opt-level=2 -g -o "$out/bench_target" "$src/bench/bench_target.rs"
fi
if newer "$out/bench_target_big" "$src/bench/bench_target.rs"; then
	log "building bench_target_big (~20 MB, takes a while)"
	$RUSTC --edition 2018 --cfg bloat -C opt-level=0 -C debuginfo=2 \
		-o "$out/bench_target_big" "$src/bench/bench_target.rs"
fi
if newer "$out/bare_ptrace" "$src/bench/bare_ptrace.c"; then
	log "building bare_ptrace"
	$CC -std=c11 -O2 -Wall -Wextra -o "$out/bare_ptrace" "$src/bench/bare_ptrace.c"
fi
if newer "$out/naive_mi" "$src/bench/naive_mi.c" || newer "$out/naive_mi" "$build/libmi.a"; then
	log "building naive_mi"
	$CC -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -I"$src/mi" -o "$out/naive_mi" \
		"$src/bench/naive_mi.c" "$build/libmi.a"
fi

have_perf=no
if command -v perf >/dev/null 2>&1 &&
	perf record -F 49 -g -o "$tmp/perf-probe.data" -- sleep 0.1 >/dev/null 2>&1; then
	have_perf=yes
fi
clk_tck=$(getconf CLK_TCK)
have_eustack=no
command -v eu-stack >/dev/null 2>&1 && have_eustack=yes

# ---- helpers --------------------------------------------------------------
# Prints "OPS NANOS TICKS": the target's progress file (retrying while it is
# being created) and the CPU time (utime+stime, clock ticks) its busy worker
# thread has used so far.
read_progress() {
	line="0 0"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if [ -s "$1" ] && line=$(cat "$1" 2>/dev/null) && [ -n "$line" ]; then
			break
		fi
		line="0 0"
		sleep 0.05
	done
	ticks=0
	for task in /proc/"$target_pid"/task/*; do
		if [ "$(cat "$task/comm" 2>/dev/null)" = busy ]; then
			ticks=$(sed 's/.*) //' "$task/stat" | awk '{ print $12 + $13 }')
			break
		fi
	done
	echo "$line $ticks"
}

# Waits until something ptrace-attaches to $1 (TracerPid != 0 in any of its
# threads: bare_ptrace seizes only the busy one) or $2 s pass.
wait_traced() {
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

json_num() { # FILE KEY: first numeric value of "KEY": in FILE
	sed -n "s/.*\"$2\": *\([-0-9.eE+]*\).*/\1/p" "$1" | head -n 1
}

# One measurement: start a fresh target, warm up 1 s, then run config $1 for
# $window s and record throughput (ops/s over the window, by the target's
# own clock) and the profiler's figures into $tmp/results as
#   CONFIG OPS_PER_S STOP_MEDIAN STOP_P99 STOPPED_PCT HZ
measure() {
	config=$1
	prog=$tmp/progress
	rm -f "$prog" "$prog.tmp"
	"$out/bench_target" "$prog" $((window + 30)) &
	target_pid=$!
	sleep 1
	med=- p99=- pct=- hz=-
	case "$config" in
	baseline)
		a=$(read_progress "$prog")
		sleep "$window"
		b=$(read_progress "$prog")
		;;
	xgdbprof-* | other-*)
		f=${config##*-}
		mode=
		case "$config" in xgdbprof-allstop-*) mode=--all-stop ;; esac
		tool=$xgdbprof
		case "$config" in other-*) tool=$other_xgdbprof ;; esac
		rm -rf "$tmp/xout"
		"$tool" $mode -e "set max_stopped 100%; set threads running; sample { @s[ustack] = count(); } end { report(@s); }" \
			-F "$f" -d "${window}s" -o "$tmp/xout" "$target_pid" >"$tmp/xlog" 2>&1 &
		ppid=$!
		wait_traced "$target_pid" 30 || true
		a=$(read_progress "$prog")
		wait "$ppid" || log "xgdbprof failed: $(tail -n 3 "$tmp/xlog")"
		b=$(read_progress "$prog")
		j=$tmp/xout/profile.json
		if [ -s "$j" ]; then
			med=$(json_num "$j" stop_median_ms)
			p99=$(json_num "$j" stop_p99_ms)
			pct=$(json_num "$j" stopped_pct)
			hz=$(json_num "$j" frequency_achieved_hz)
			if grep -q 'rate lowered' "$j"; then
				log "note: $config: $(grep -o 'rate lowered[^"]*' "$j" | head -n 1)"
			fi
		fi
		;;
	naive-* | bare-*)
		f=${config##*-}
		tool=naive_mi hold=
		case "$config" in bare-*) tool=bare_ptrace ;; esac
		# A stop as long as xgdbprof's, held by ptrace alone: what the
		# stop's length costs, apart from what gdb does during it.
		case "$config" in bare-hold-*) hold="-H 1" ;; esac
		"$out/$tool" -F "$f" -d "$window" $hold "$target_pid" >"$tmp/nlog" 2>&1 &
		ppid=$!
		wait_traced "$target_pid" 30 || true
		a=$(read_progress "$prog")
		wait "$ppid" || log "$tool failed: $(tail -n 3 "$tmp/nlog")"
		b=$(read_progress "$prog")
		line=$(grep -e '^naive:' -e '^bare:' "$tmp/nlog" || true)
		field() { printf '%s\n' "$line" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
		med=$(field median_ms) p99=$(field p99_ms) pct=$(field stopped_pct) hz=$(field hz)
		;;
	perf-49)
		a=$(read_progress "$prog")
		perf record -F 49 -g -p "$target_pid" -o "$tmp/perf.data" -- sleep "$window" >"$tmp/plog" 2>&1 || true
		b=$(read_progress "$prog")
		n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$tmp/plog" | head -n 1)
		[ -n "$n" ] && hz=$(awk -v n="$n" -v w="$window" 'BEGIN { printf "%.1f", n / w }')
		pct=0
		;;
	eu-stack)
		: >"$tmp/eu-times"
		a=$(read_progress "$prog")
		end=$(( $(now_ns) + window * 1000000000 ))
		calls=0
		start=$(now_ns)
		while [ "$(now_ns)" -lt "$end" ]; do
			t0=$(now_ns)
			eu-stack -p "$target_pid" >/dev/null 2>&1 || true
			t1=$(now_ns)
			echo $(( (t1 - t0) / 1000 )) >>"$tmp/eu-times"
			calls=$((calls + 1))
		done
		b=$(read_progress "$prog")
		# A whole eu-stack call (attach, unwind every thread, detach): an upper
		# bound of the time the target is held stopped.
		med=$(awk '{ print $1 / 1000 }' "$tmp/eu-times" | median)
		p99=$(sort -n "$tmp/eu-times" | awk '{ v[NR] = $1 } END { r = int(NR * 0.99 + 0.999999); if (r < 1) r = 1; print v[r] / 1000 }')
		pct=$(awk -v s="$start" -v e="$(now_ns)" '{ t += $1 } END { printf "%.1f", 100 * t * 1000 / (e - s) }' "$tmp/eu-times")
		hz=$(awk -v n="$calls" -v w="$window" 'BEGIN { printf "%.1f", n / w }')
		;;
	esac
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	tput=$(echo "$a $b" | awk '{ if ($5 > $2) printf "%.0f", ($4 - $1) / (($5 - $2) / 1e9); else print "-" }')
	busy=$(echo "$a $b" | awk -v tck="$clk_tck" '{ if ($5 > $2) printf "%.1f", 100 * ($6 - $3) / tck / (($5 - $2) / 1e9); else print "-" }')
	fmt() { awk -v v="$1" 'BEGIN { if (v == "" || v == "-") print "-"; else printf "%.2f", v }'; }
	med=$(fmt "$med") p99=$(fmt "$p99") pct=$(fmt "$pct") hz=$(fmt "$hz")
	echo "$config $tput $med $p99 $pct $hz $busy" >>"$tmp/results"
	log "  $config: $tput ops/s, worker on CPU $busy%, stop median $med ms, p99 $p99 ms, stopped $pct%, $hz Hz"
}

# Steady state, in one process: the target's throughput over a window
# before xgdbprof attaches, over a window inside the sampling (starting 1.5 s
# after the attach, so attach, warm-up and detach are all outside it), and
# over a window after xgdbprof has exited. Loss = during against the mean of
# before and after. Removes the spread between fresh processes and the fixed
# cost of attaching and detaching; what is left is the cost of sampling as
# such. Records "CONFIG LOSS_PCT DURING_OPS" in $tmp/paired.
rate_between() { # "OPS NANOS ..." "OPS NANOS ..." -> ops/s
	echo "$1 $2" | awk '{ n = NF / 2; if ($(n + 2) > $2) printf "%.0f", ($(n + 1) - $1) / (($(n + 2) - $2) / 1e9); else print "-" }'
}
measure_paired() {
	config=$1
	f=${config##*-}
	prog=$tmp/progress
	rm -f "$prog" "$prog.tmp"
	"$out/bench_target" "$prog" $((3 * window + 40)) &
	target_pid=$!
	sleep 1
	a=$(read_progress "$prog"); sleep "$window"; b=$(read_progress "$prog")
	before=$(rate_between "$a" "$b")
	rm -rf "$tmp/pout"
	"$xgdbprof" -e "set max_stopped 100%; set threads running; sample { @s[ustack] = count(); } end { report(@s); }" \
		-F "$f" -d "$((window + 3))s" -o "$tmp/pout" "$target_pid" >"$tmp/plog2" 2>&1 &
	ppid=$!
	wait_traced "$target_pid" 30 || true
	sleep 1.5
	a=$(read_progress "$prog"); sleep "$window"; b=$(read_progress "$prog")
	during=$(rate_between "$a" "$b")
	wait "$ppid" || log "xgdbprof failed: $(tail -n 3 "$tmp/plog2")"
	sleep 0.5
	a=$(read_progress "$prog"); sleep "$window"; b=$(read_progress "$prog")
	after=$(rate_between "$a" "$b")
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	loss=$(awk -v x="$before" -v d="$during" -v y="$after" 'BEGIN {
		if (x == "-" || d == "-" || y == "-") print "-"; else printf "%.1f", 100 * ((x + y) / 2 - d) / ((x + y) / 2) }')
	log "  $config: before $before, during $during, after $after ops/s: loss $loss%"
	echo "$config $loss $during" >>"$tmp/paired"
}

# Attach-to-first-sample: python3 prints CLOCK_MONOTONIC just before exec'ing
# xgdbprof; the recipe prints `nsecs` (CLOCK_MONOTONIC) in the sample probe.
# The earliest such timestamp minus the launch time is the delay from
# starting xgdbprof to its first sample, everything included (gdb spawn,
# symbol loading, attach, first stop and unwind). Prints ms or "-".
first_sample_ms() {
	"$@" >/dev/null 2>&1 &
	tpid=$!
	target_pid=$tpid
	sleep 1
	python3 -c 'import os, sys, time
sys.stdout.write("LAUNCH %d\n" % time.monotonic_ns()); sys.stdout.flush()
os.execv(sys.argv[1], sys.argv[1:])' "$xgdbprof" \
		-e 'set max_stopped 100%; set threads all; set frequency 49; sample { printf("SAMPLE %d\n", nsecs); }' \
		-d 300ms -o "$tmp/aout" "$tpid" >"$tmp/alog" 2>"$tmp/aerr" || true
	kill "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	target_pid=
	awk '$1 == "LAUNCH" { l = $2 } $1 == "SAMPLE" && (f == "" || $2 < f) { f = $2 }
		END { if (l != "" && f != "") printf "%.0f", (f - l) / 1e6; else print "-" }' "$tmp/alog"
}

# ---- run ------------------------------------------------------------------
configs="baseline xgdbprof-19 xgdbprof-49 xgdbprof-allstop-19 xgdbprof-allstop-49 naive-19 naive-49 bare-49 bare-hold-19 bare-hold-49"
[ "$have_perf" = yes ] && configs="$configs perf-49"
[ "$have_eustack" = yes ] && configs="$configs eu-stack"
configs="$configs paired-19 paired-49"
[ -n "$other_xgdbprof" ] && configs="$configs other-19 other-49"
if [ -n "$only" ]; then
	for c in $only; do
		case " $configs " in *" $c "*) ;; *) echo "$0: --only: no configuration $c (known: $configs)" >&2; exit 2 ;; esac
	done
	case " $only " in *" baseline "*) configs=$only ;; *) configs="baseline $only" ;; esac
fi
: >"$tmp/paired"
: >"$tmp/results"
: >"$tmp/attach"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ $r -lt "$rounds" ]; do
	order=$(rotated "$configs" "$r")
	log "round $((r + 1))/$rounds: $order"
	for c in $order; do
		case "$c" in
		paired-*) measure_paired "$c" ;;
		*) measure "$c" ;;
		esac
	done
	if [ -z "$only" ]; then
		d=$(first_sample_ms "$build/tests/fixtures/bin/cache-service")
		g=$(first_sample_ms "$out/bench_target_big" "$tmp/big-progress" 60)
		log "  attach to first sample: demo $d ms, 20 MB binary $g ms"
		echo "$d $g" >>"$tmp/attach"
	fi
	r=$((r + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Where a stop's time goes: one extra verbose run per rate (not part of the
# throughput figures, since -v adds logging to every stop).
breakdown="xgdbprof -v per-stop breakdown (separate ${window} s runs):"
[ -n "$only" ] && breakdown="$breakdown not measured (--only)"
for f in $([ -z "$only" ] && echo 19 49); do
	rm -f "$tmp/progress"
	"$out/bench_target" "$tmp/progress" $((window + 30)) >/dev/null 2>&1 &
	target_pid=$!
	sleep 1
	"$xgdbprof" -v -e "set max_stopped 100%; set threads running; sample { @s[ustack] = count(); } end { report(@s); }" \
		-F "$f" -d "${window}s" -o "$tmp/vout" "$target_pid" >/dev/null 2>"$tmp/vlog" || true
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	breakdown="$breakdown
$f Hz: $(sed -n 's/^xgdbprof: per stop: //p' "$tmp/vlog" | tail -n 1)"
done

# ---- report ---------------------------------------------------------------
base=$(awk '$1 == "baseline" { print $2 }' "$tmp/results" | median)
echo
echo "xgdbprof sampling bench: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $rounds round(s), ${window} s windows"
echo "load average before: $load_before, after: $load_after"
echo "target: bench_target (1 busy worker, 4 idle threads, main); medians over rounds"
printf '%-19s %12s %7s %7s %9s %9s %9s %7s\n' configuration ops/s loss% busy% stop_med stop_p99 stopped% Hz
for c in $configs; do
	case "$c" in paired-*) continue ;; esac
	col() { awk -v c="$c" -v k="$1" '$1 == c { print $k }' "$tmp/results" | median; }
	t=$(col 2)
	loss=$(awk -v t="$t" -v b="$base" 'BEGIN { if (t == "-" || b == "-" || b == 0) print "-"; else printf "%.1f", 100 * (b - t) / b }')
	printf '%-19s %12s %7s %7s %9s %9s %9s %7s\n' "$c" "$t" "$loss" "$(col 7)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
done
echo "busy% = CPU time the busy worker got / window wall time (below ~100% in the baseline: other load on the machine)"
echo "per round, M ops/s, in the order run (single runs scatter; judge by the medians):"
for c in $configs; do
	case "$c" in paired-*) continue ;; esac
	printf '  %-17s%s\n' "$c" "$(awk -v c="$c" '$1 == c { printf " %.1f", $2 / 1e6 }' "$tmp/results")"
done
echo
echo "steady state, one process each (window before / inside the sampling, from 1.5 s after attach / after): loss of the inside window"
printf '%-19s %12s %7s %s\n' configuration ops/s loss% "per round"
for c in $configs; do
	case "$c" in paired-*) ;; *) continue ;; esac
	printf '%-19s %12s %7s %s\n' "xgdbprof-${c#paired-}" \
		"$(awk -v c="$c" '$1 == c { print $3 }' "$tmp/paired" | median)" \
		"$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/paired" | median)" \
		"$(awk -v c="$c" '$1 == c { printf "%s ", $2 }' "$tmp/paired")"
done
echo "stop_med/stop_p99 in ms; perf: no stop (kernel samples on-CPU threads), Hz = samples/s"
echo "eu-stack: stop = wall time of one whole eu-stack call (attach, unwind, detach)"
[ "$have_perf" = yes ] || echo "perf record does not work here: not measured"
echo
printf 'attach to first sample (ms, launch of xgdbprof -> first sample): demo target %s, 20 MB binary %s\n' \
	"$(cut -d' ' -f1 "$tmp/attach" | median)" "$(cut -d' ' -f2 "$tmp/attach" | median)"
printf '  (20 MB binary: %s bytes)\n' "$(wc -c <"$out/bench_target_big")"
echo "$breakdown" | sed 's/^/  /'
