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
#
# Then the realistic fixture (issue 14), kvservice (an acceptor, 2 busy
# workers, idle service threads, a short-lived compactor), in the same run,
# rounds interleaved over 4 configurations: gdb and Debian's python-free
# gdb-minimal (as bench/stop_modes.sh gets it; $GDB_MINIMAL if set), each
# in the tracer's default non-stop mode and with --all-stop:
#   - exact: `set exact true` on kvservice::handle_request over a launched
#     3 s run, against the count the service prints at exit (must be equal);
#   - budget: the default 5% budget on the same function of a running
#     service for 5 s: the estimate and its 95% interval against the
#     service's own count over the traced window (its --progress file, read
#     when xgdbprof says the probes are armed and when it exits);
#   - stop per hit: the hitting thread's stop, median and p99 per run, as
#     xgdbprof measures it (its part plus gdb's, from the thread's clocks);
#   - others: spin_hit (one thread hitting a probe, one spinning that never
#     sleeps), exact trace for 3 s: the spinner's stopped time, wall - on
#     CPU - waiting for a CPU from its schedstat, from the probes armed to
#     xgdbprof's exit (the detach included), per second and per hit;
#   - attach hold: the ms attaching and arming held the running service
#     (xgdbprof's own figures from the budget run).
# Then timed_calls (issue 26): elapsed / the handler's own timing, the
# count's estimate / its own count, and the cost to the target.
# Then syscalls (issue 26): the shipped `syscalls` recipe attached to
# kvservice for the window, in its default mode (all-stop: syscall probes
# under the budget) and with --non-stop, against the service alone: its
# operations a second (its --progress file) and loss, and the stopped
# share xgdbprof reports. In non-stop mode gdb went on stopping the threads
# at every system call after the budget disabled the catchpoints.
# Then syscall_rows (issue 26 item 3): the syscalls recipe's table beside
# the kernel's own count of each call over the same seconds (`perf stat -e
# 'syscalls:sys_enter_*'` on the process from the probes' arming to
# xgdbprof's exit: it counts without stopping anything, where strace -c's
# stops make a service contend more and call futex tens of times more
# often), on kvservice and the demo: perf's five most frequent calls, and
# for each the table's `est. calls` and its ratio to perf's count.
# `--only "trace_hot"`, `--only "kvservice"`, `--only "timed_calls"`,
# `--only "syscalls"` or `--only "syscall_rows"` runs one part.
# See bench/README.md. Needs: cc, gdb, cargo (the fixture).
set -eu

rounds=5
window=6
. "$(dirname "$0")/lib.sh"
[ -z "$other_xgdbprof" ] || { echo "$0: --compare is bench/profile.sh's" >&2; exit 2; }
case " ${only:-trace_hot kvservice} " in *" trace_hot "*) part_hot=1 ;; *) part_hot= ;; esac
case " ${only:-trace_hot kvservice} " in *" kvservice "*) part_kv=1 ;; *) part_kv= ;; esac
case " ${only:-trace_hot kvservice timed_calls} " in *" timed_calls "*) part_tc=1 ;; *) part_tc= ;; esac
case " ${only:-trace_hot kvservice timed_calls syscalls} " in *" syscalls "*) part_sc=1 ;; *) part_sc= ;; esac
case " ${only:-trace_hot kvservice timed_calls syscalls syscall_rows} " in *" syscall_rows "*) part_rows=1 ;; *) part_rows= ;; esac
[ -n "$part_hot$part_kv$part_tc$part_sc$part_rows" ] ||
	{ echo "$0: --only takes trace_hot, kvservice, timed_calls, syscalls and/or syscall_rows" >&2; exit 2; }
hot=$build/tests/fixtures/bin/trace_hot
kv=$build/tests/fixtures/bin/kvservice
demo=$build/tests/fixtures/bin/cache-service
spin=$build/tests/fixtures/bin/spin_hit

log "building xgdbprof and the fixtures in $build"
make -s -C "$build" xgdbprof tests/fixtures/bin/trace_hot tests/fixtures/bin/kvservice tests/fixtures/bin/spin_hit \
	tests/fixtures/bin/timed_calls tests/fixtures/bin/cache-service >&2

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

if [ -n "$part_hot" ]; then
configs="baseline xgdbprof-5% xgdbprof-10%"
: >"$tmp/results"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_rounds measure "" "$configs"
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
fi

# timed_calls (issue 26): a 2-worker pool whose handler times itself (its
# wall time and its thread's CPU per call) and counts its calls. Per round
# and call size, a run untraced and one traced with a return probe under
# the default budget, 4 s each: elapsed / the handler's own CPU and wall
# per call, the count's estimate / the handler's own count, and the cost to
# the target (its calls/s traced over untraced).
if [ -n "$part_tc" ]; then
	tc=$build/tests/fixtures/bin/timed_calls
	: >"$tmp/tc"
	r=0
	while [ "$r" -lt "$rounds" ]; do
		r=$((r + 1))
		for work in 20 200; do
			base=$("$tc" 2 "$work" 4 | sed -n 's/^calls \([0-9]*\) .*/\1/p')
			"$xgdbprof" -e 'return "handle_request" { @lat = avg(elapsed); @n = count(); }' \
				-- "$tc" 2 "$work" 4 >"$tmp/tc.out" 2>"$tmp/tc.err" || true
			own=$(sed -n 's/^calls \([0-9]*\) .*/\1/p' "$tmp/tc.out")
			wall=$(sed -n 's/^calls [0-9]* mean_us \([0-9.]*\) .*/\1/p' "$tmp/tc.out")
			cpu=$(sed -n 's/.* cpu_us \([0-9.]*\)$/\1/p' "$tmp/tc.out")
			lat=$(sed -n 's/^@lat: \([0-9]*\).*/\1/p' "$tmp/tc.out")
			est=$(sed -n 's/^@n: .* est\. \(at least \)\{0,1\}\([0-9]*\).*/\2/p' "$tmp/tc.out")
			low=$(grep -q '^@n: .* est\. at least' "$tmp/tc.out" && echo '>=' || echo '')
			echo "$work ${base:-0} ${own:-0} ${wall:-0} ${cpu:-0} ${lat:-0} ${est:-0} ${low:--}" >>"$tmp/tc"
		done
	done
	echo "timed_calls: 2 workers, handle_request self-timed; medians over $rounds rounds"
	printf '%-8s %12s %12s %14s %10s\n' work_us lat/own_cpu lat/own_wall est/own_count cost%
	for work in 20 200; do
		awk -v w="$work" '$1 == w {
			n++; lc[n] = $6 / 1e3 / $5; lw[n] = $6 / 1e3 / $4; ec[n] = $7 / $3; c[n] = 100 * (1 - $3 / $2); b = $8 }
		function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { printf "%-8s %12.2f %12.2f %14s %10.1f\n", w, med(lc, n), med(lw, n),
			(b == ">=" ? ">=" : "") sprintf("%.3f", med(ec, n)), med(c, n) }' "$tmp/tc"
	done
	echo "lat = mean elapsed (the thread's CPU in the call, schedstat); own_cpu/own_wall = the handler's own means;"
	echo "est = the count's whole-run estimate (>=: a lower bound); cost% = calls/s lost traced vs untraced"
fi

if [ -n "$part_sc" ]; then
	: >"$tmp/sc"
	for r in $(seq 0 $((rounds - 1))); do
		for config in $(rotated "alone syscalls syscalls-nonstop" "$r"); do
			prog=$tmp/sc.progress
			rm -f "$prog" "$prog.tmp"
			"$kv" $((window + 60)) --workers 2 --progress "$prog" >/dev/null 2>&1 &
			target_pid=$!
			sleep 1.5
			cp "$prog" "$tmp/sc.before"
			case $config in
			alone) sleep "$window" ;;
			syscalls) "$xgdbprof" --recipe syscalls -d "${window}s" "$target_pid" >"$tmp/sc.out" 2>"$tmp/sc.err" || true ;;
			syscalls-nonstop) "$xgdbprof" --non-stop --recipe syscalls -d "${window}s" "$target_pid" \
				>"$tmp/sc.out" 2>"$tmp/sc.err" || true ;;
			esac
			cp "$prog" "$tmp/sc.after"
			kill "$target_pid" 2>/dev/null || true
			wait "$target_pid" 2>/dev/null || true
			target_pid=
			ops=$(awk 'FNR == 1 && NF == 2 { o[++n] = $1; t[n] = $2 }
				END { if (n == 2 && t[2] > t[1]) printf "%.0f", (o[2] - o[1]) / ((t[2] - t[1]) / 1e9); else print 0 }' \
				"$tmp/sc.before" "$tmp/sc.after")
			held=-
			[ "$config" = alone ] || held=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$tmp/sc.err")
			echo "$r $config $ops ${held:--}" >>"$tmp/sc"
			log "syscalls round $((r + 1))/$rounds: $config $ops ops/s, held ${held:--}%"
		done
	done
	echo "syscalls recipe on kvservice (2 workers), ${window} s attached after 1.5 s, $rounds round(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-6s %-17s %10s %7s %8s\n' round config ops/s loss% held%
	awk '{ if ($2 == "alone") base[$1] = $3; row[NR] = $0 }
		END { for (i = 1; i <= NR; i++) { split(row[i], f, " ")
			loss = (f[2] != "alone" && base[f[1]] > 0) ? sprintf("%.1f", 100 * (1 - f[3] / base[f[1]])) : "-"
			printf "%-6s %-17s %10s %7s %8s\n", f[1], f[2], f[3], loss, f[4] } }' "$tmp/sc"
	echo "ops/s = the service's own operations a second over the window; loss% against the round's alone;"
	echo "held% = the stopped share xgdbprof reports (syscalls: all-stop, its default for syscall probes under the budget)"
fi

if [ -n "$part_rows" ]; then
	: >"$tmp/rows"
	for r in $(seq 0 $((rounds - 1))); do
		for name in kvservice demo; do
			case $name in
			kvservice) "$kv" $((window + 60)) --workers 2 --progress "$tmp/rows.progress" >/dev/null 2>&1 & ;;
			demo) "$demo" $((window + 60)) >/dev/null 2>&1 & ;;
			esac
			target_pid=$!
			sleep 1.5
			# the same count over as long a window just before, untraced:
			# our stops make calls of their own (a futex wait or a sleep
			# interrupted is entered again: restart_syscall, futex)
			perf stat -e 'syscalls:sys_enter_*' -x, -o "$tmp/rows.before" -p "$target_pid" -- sleep "$window" \
				>/dev/null 2>&1 || true
			"$xgdbprof" --recipe syscalls -d "${window}s" "$target_pid" >"$tmp/rows.out" 2>"$tmp/rows.err" &
			xg_pid=$!
			wait_attached "$tmp/rows.err" || true
			perf stat -e 'syscalls:sys_enter_*' -x, -o "$tmp/rows.perf" -p "$target_pid" >/dev/null 2>&1 &
			perf_pid=$!
			wait "$xg_pid" || true
			xg_pid=
			kill -INT "$perf_pid" 2>/dev/null || true
			wait "$perf_pid" 2>/dev/null || true
			kill "$target_pid" 2>/dev/null || true
			wait "$target_pid" 2>/dev/null || true
			target_pid=
			# perf's five most frequent calls, each with the table's
			# est. calls (the column before the name; - when no row)
			awk -F, '!/^#/ && $1 + 0 > 0 { sub(/^syscalls:sys_enter_/, "", $3); print $1, $3 }' "$tmp/rows.perf" |
				sort -rn | head -5 | while read -r count call; do
				est=$(awk -v call="$call" '$NF == call && $1 ~ /^[0-9.]+$/ { print $(NF-1); exit }' "$tmp/rows.out")
				before=$(awk -F, -v ev="syscalls:sys_enter_$call" '$3 == ev { print $1 + 0 }' "$tmp/rows.before")
				echo "$r $name $call ${before:-0} $count ${est:--}"
			done >>"$tmp/rows"
			grep '^syscall(): ' "$tmp/rows.out" >&2 || true
			log "syscall_rows round $((r + 1))/$rounds: $name done"
		done
	done
	echo "syscalls recipe's est. calls against perf's count of each call over the traced window (${window} s), $rounds round(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-6s %-10s %-16s %9s %9s %10s %7s %7s\n' round target syscall before perf est. ratio ÷before
	awk '{ e = $6; sub(/^>=/, "", e); ratio = (e != "-" && $5 > 0) ? sprintf("%.2f", e / $5) : "-"
		rb = (e != "-" && $4 > 0) ? sprintf("%.2f", e / $4) : "-"
		printf "%-6s %-10s %-16s %9s %9s %10s %7s %7s\n", $1, $2, $3, $4, $5, $6, ratio, rb }' "$tmp/rows"
	echo "perf = perf stat's count of the call's sys_enter tracepoint on the process from the probes' arming to xgdbprof's exit"
	echo "(perf's five largest there); before = the same count over as long a window just before, untraced;"
	echo "est. = the table's whole-run estimate (>=: a lower bound; -: no row); ratio = est. / perf; ÷before = est. / before"
fi

[ -n "$part_kv" ] || exit 0

# ---- the realistic fixture ------------------------------------------------
gdb_full=$(command -v gdb)
COLUMNS=10000; export COLUMNS   # whole report lines, never cut to a terminal's width
if [ -z "${GDB_MINIMAL:-}" ]; then
	mkdir -p "$tmp/gdbmin"
	if (cd "$tmp/gdbmin" && apt-get download gdb-minimal >/dev/null 2>&1) &&
		dpkg-deb -x "$tmp"/gdbmin/gdb-minimal_*.deb "$tmp/gdbmin/root" 2>/dev/null; then
		GDB_MINIMAL=$tmp/gdbmin/root/usr/bin/gdb
	else
		log "gdb-minimal not available (apt-get download gdb-minimal failed): gdb only"
	fi
fi
kv_configs="gdb gdb-allstop"
[ -n "${GDB_MINIMAL:-}" ] && [ -x "$GDB_MINIMAL" ] && kv_configs="$kv_configs min min-allstop"
probe='function "kvservice::handle_request" { @calls = count(); }'

# The gdb and mode options of configuration $1.
kv_options() {
	case "$1" in
	gdb) echo "--gdb $gdb_full" ;;
	gdb-allstop) echo "--gdb $gdb_full --all-stop" ;;
	min) echo "--gdb $GDB_MINIMAL" ;;
	min-allstop) echo "--gdb $GDB_MINIMAL --all-stop" ;;
	esac
}
own_count() { sed -n 's/^ *kvservice::handle_request \([0-9]*\)$/\1/p' "$1" 2>/dev/null | tail -n 1; }
hit_stop() { sed -n 's/.*a hit held the thread that hit a median \([0-9.]*\) ms (p99 \([0-9.]*\) ms).*/\1 \2/p' "$1" | head -n 1; }
spinner_clocks() {   # wall_ns run_ns wait_ns of thread $2 of process $1
	echo "$(now_ns) $(cat /proc/"$1"/task/"$2"/schedstat 2>/dev/null | cut -d' ' -f1-2)"
}

# One round of configuration $1. Appends to $tmp/kv:
#   CONFIG EXACT OWN HIT_MED HIT_P99 EST LO HI TRUTH HOLD_MS SPIN_MS_PER_S SPIN_MS_PER_HIT ROUND
kv_measure() {
	config=$1
	# shellcheck disable=SC2046
	set -- $(kv_options "$config")
	# exact, launched, whole run
	"$xgdbprof" "$@" -e "set exact true; $probe" -- "$kv" 3 >"$tmp/kv.out" 2>"$tmp/kv.err" ||
		log "exact run failed: $(tail -n 2 "$tmp/kv.err")"
	exact=$(sed -n 's/^@calls: \([0-9]*\)$/\1/p' "$tmp/kv.out")
	own=$(own_count "$tmp/kv.out")
	hs=$(hit_stop "$tmp/kv.err")
	# budget, attached
	prog=$tmp/kv.progress
	rm -f "$prog" "$prog.tmp"
	"$kv" 60 --progress "$prog" >/dev/null &
	target_pid=$!
	sleep 1.5
	"$xgdbprof" "$@" -d 5s -e "$probe" "$target_pid" >"$tmp/kvb.out" 2>"$tmp/kvb.err" &
	xg_pid=$!
	wait_attached "$tmp/kvb.err" || log "xgdbprof did not attach: $(tail -n 3 "$tmp/kvb.err")"
	before=$(own_count "$prog")
	wait "$xg_pid" || log "budget run failed: $(tail -n 2 "$tmp/kvb.err")"
	xg_pid=
	after=$(own_count "$prog")
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	truth=$(( ${after:-0} - ${before:-0} ))
	# "est. N (95% LO–HI)", or "est. at least N" (a lower bound: LO = N, HI = -)
	# or "N counted in the target" (exact over the run: LO = HI = N)
	est=$(sed -n 's/^@calls: \([0-9]*\) counted in the target.*/\1 \1 \1/p
		s/^@calls: .* est\. \([0-9]*\) (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2 \3/p
		s/^@calls: .* est\. at least \([0-9]*\).*/>=\1 \1 -/p' "$tmp/kvb.out" | head -n 1)
	[ -n "$est" ] || est="$(sed -n 's/^@calls: \([0-9]*\)$/\1/p' "$tmp/kvb.out") - -"
	hold=$(sed -n 's/.*attaching held the target stopped at most \([0-9.]*\) ms and arming the probes \([0-9.]*\) ms.*/\1 \2/p' "$tmp/kvb.err" |
		awk '{ printf "%.1f", $1 + $2 }')
	# others: the spinner beside a hitting thread
	st=$tmp/spin.status
	rm -f "$st"
	"$spin" 30 "$st" &
	target_pid=$!
	for _ in $(seq 1 100); do [ -s "$st" ] && break; sleep 0.05; done
	tid=$(sed -n 's/.*spinner_tid=\([0-9]*\).*/\1/p' "$st")
	# From the probes armed to xgdbprof's exit: the attach's stop (every
	# thread, in both modes) is left out, the detach's few ms are not.
	"$xgdbprof" "$@" -d 3s -e 'set exact true; function "probed_step" { @c = count(); }' "$target_pid" \
		>"$tmp/spin.out" 2>"$tmp/spin.err" &
	xg_pid=$!
	wait_attached "$tmp/spin.err" || log "xgdbprof did not attach: $(tail -n 3 "$tmp/spin.err")"
	a=$(spinner_clocks "$target_pid" "$tid")
	wait "$xg_pid" || log "spin run failed: $(tail -n 2 "$tmp/spin.err")"
	xg_pid=
	b=$(spinner_clocks "$target_pid" "$tid")
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	spin_hits=$(sed -n 's/^@c: \([0-9]*\)$/\1/p' "$tmp/spin.out")
	spinner=$(echo "$a $b ${spin_hits:-0}" | awk '{ w = $4 - $1; s = w - ($5 - $2) - ($6 - $3); if (s < 0) s = 0
		printf "%.1f %.3f", (w > 0 ? 1e3 * s / w : 0), ($7 > 0 ? s / 1e6 / $7 : 0) }')
	echo "$config ${exact:--} ${own:--} ${hs:-- -} ${est:-- - -} $truth ${hold:--} $spinner $r" >>"$tmp/kv"
	log "  $config: exact ${exact:--} (service counted ${own:--}); hit stop ${hs:--} ms (median p99);" \
		"est. ${est:--} vs ${truth} counted; attach+arm ${hold:--} ms; spinner stopped ${spinner} (ms/s ms/hit)"
}

: >"$tmp/kv"
kv_load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_rounds kv_measure "kvservice " "$kv_configs"
kv_load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "kvservice tracing bench: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $rounds round(s); gdb $("$gdb_full" --version | head -n 1 | sed 's/.* //')${GDB_MINIMAL:+, gdb-minimal $GDB_MINIMAL}"
echo "load average before: $kv_load_before, after: $kv_load_after"
printf '%-12s %13s %15s %22s %9s %7s %11s %8s\n' configuration exact/own "hit ms med/p99" "est (95%) / truth" inside est/tru attach+arm others
for c in $kv_configs; do
	awk -v c="$c" '$1 == c' "$tmp/kv" | while read -r _ ex own med p99 est lo hi truth hold sps sph rr; do
		inside=-
		[ "$lo" = "$est" ] && [ "$hi" = "$est" ] && inside=count
		[ "$lo" != - ] && [ "$inside" = - ] && inside=$(awk -v t="$truth" -v l="$lo" -v h="$hi" 'BEGIN { print (t >= l && (h == "-" || t <= h)) ? "yes" : "no" }')
		shown="$est ($lo-$hi)/$truth"
		[ "$hi" = - ] && shown="$est/$truth"
		ratio=$(awk -v e="${est#>=}" -v t="$truth" 'BEGIN { if (t > 0 && e + 0 > 0) printf "%.2f", e / t; else print "-" }')
		printf '%-12s %13s %15s %22s %9s %7s %11s %8s\n' "$c" "$ex/$own" "$med/$p99" "$shown" "$inside" "$ratio" \
			"$hold ms" "${sps}ms/s"
	done
done
echo "exact/own = kvservice::handle_request counted by an exact trace of a launched 3 s run / by the service (must be equal)"
echo "hit ms = the hitting thread's stop per hit in that run (xgdbprof: its part + gdb's, from the thread's clocks)"
echo "est = the 5%-budget estimate over 5 s of a running service and its 95% interval (>=N: a lower bound); truth = the"
echo "service's own count then; inside = the truth lies in the interval (or above the bound); N (N-N) is a count in"
echo "the target (docs/tracing.md, \"Counted in the target\"), which covers the probes' 5 s while the truth's window"
echo "also holds the attach and the detach; est/tru = est / truth"
echo "attach+arm = ms attaching and arming held the running service; others = ms per second of trace that spin_hit's"
echo "spinner (a thread that never sleeps, beside one hitting a probe) was held stopped (wall - on CPU - runnable),"
echo "from the probes armed to xgdbprof's exit"
