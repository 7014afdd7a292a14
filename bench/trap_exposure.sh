#!/usr/bin/env bash
# bench/trap_exposure.sh — how long the target's threads sit in a
# breakpoint trap, the one state in which a gdb killed outright (SIGKILL,
# the OOM killer) kills the target with SIGTRAP (docs/safety.md, issue 28).
# The target is tests/fixtures/canary (2 worker threads calling canary_mix
# and canary_step in a loop, built here). Interleaved rounds, a fresh canary
# each, WINDOW seconds each:
#   sample        `xgdbprof -d WINDOW PID` (hot-cpu): no breakpoint, the baseline
#   trace-count   `function "canary_mix" { @c = count(); }`: counted in the target, no breakpoint
#   trace-budget  `function "canary_step" { @c = count(); }` (its first instruction is
#                 RIP-relative: breakpoints under the stop budget)
#   trace-latency `return "canary_mix" { @t = avg(elapsed); }` under the budget
#   trace-exact   `set exact true` on canary_step: a stop at every call
# bench/trap_exposure.c (with the build's procfs library) polls every thread
# about every 0.4 ms from gdb's attach (the target's TracerPid) to 1 s
# before the window ends: the share of polls
# a thread sat in a tracing stop with an int3 at or just before its PC (a
# lower bound: gdb's in-place step takes the int3 out) and in any tracing
# stop (the upper bound), for the thread with the most; and the share of
# polls with any thread in a trap. Beside them, the stopped share
# xgdbprof's own report gives. BESIDE_LOOPS=N in the environment runs N
# CPU-bound loops meanwhile (the machine under load).
# CONFIG-other (with --compare OTHER_BUILD) runs CONFIG with the other
# build's xgdbprof, in the same rounds.
# Usage: bench/trap_exposure.sh [--rounds N] [--window SECONDS] [--only "CONFIG ..."] [--compare OTHER_BUILD] BUILD_DIR
set -eu
rounds=3
window=6
. "$(dirname "$0")/lib.sh"
make -s -C "$build" xgdbprof >/dev/null
cc -O1 -g -pthread -o "$tmp/canary" "$src/tests/fixtures/canary.c" -ldl
make -s -C "$build" src/procfs/libprocfs.a src/util/libutil.a >/dev/null
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I"$src/src" -I"$build" -o "$tmp/trap_exposure" "$src/bench/trap_exposure.c" \
	"$build/src/procfs/libprocfs.a" "$build/src/util/libutil.a"
configs=${only:-"sample trace-count trace-budget trace-latency trace-exact"}
results=$tmp/results
: >"$results"
loops=()
for _ in $(seq 1 "${BESIDE_LOOPS:-0}"); do
	sh -c 'while :; do :; done' & loops+=($!)
done
stop_loops() { [ ${#loops[@]} -eq 0 ] || kill "${loops[@]}" 2>/dev/null || true; }
trap 'stop_loops; cleanup' EXIT

measure() {
	local config=$1 recipe bin=$xgdbprof
	# CONFIG-other: the same with the --compare build's xgdbprof
	case "$config" in *-other) bin=${other_xgdbprof:?"$config needs --compare OTHER_BUILD"} ;; esac
	case "${config%-other}" in
	sample) recipe=(--recipe hot-cpu) ;;
	trace-count) recipe=(-e 'function "canary_mix" { @c = count(); }') ;;
	trace-budget) recipe=(-e 'function "canary_step" { @c = count(); }') ;;
	trace-latency) recipe=(-e 'return "canary_mix" { @t = avg(elapsed); }') ;;
	trace-exact) recipe=(-e 'set exact true
function "canary_step" { @c = count(); }') ;;
	*) log "unknown configuration $config"; return ;;
	esac
	"$tmp/canary" "$tmp/status" >/dev/null 2>&1 & target_pid=$!
	sleep 0.3
	"$bin" -d "${window}s" -o "$tmp/out.$config.$r" "${recipe[@]}" "$target_pid" \
		>"$tmp/xg.out" 2>"$tmp/xg.err" & xg_pid=$!
	local tracer=0
	for _ in $(seq 1 300); do
		tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$target_pid/status" 2>/dev/null || echo 0)
		[ "${tracer:-0}" != 0 ] && break
		sleep 0.01
	done
	local line
	line=$("$tmp/trap_exposure" "$target_pid" $(( (window - 1) * 1000 )))
	wait "$xg_pid" || true
	xg_pid=
	# what xgdbprof says: "target held stopped N%" (tracing) or "held at most N%" (sampling)
	local said
	said=$(grep -oE 'held stopped [0-9.]+%|held at most [0-9.]+%|stopped [0-9.]+% of the time' "$tmp/xg.err" "$tmp/xg.out" 2>/dev/null |
		head -1 | grep -oE '[0-9.]+%' || echo -)
	kill "$target_pid" 2>/dev/null || true
	wait "$target_pid" 2>/dev/null || true
	target_pid=
	echo "$config $line said $said" >>"$results"
	log "  $config: $line; xgdbprof: $said"
}

log "bench/trap_exposure.sh: canary (2 workers), window ${window}s, ${BESIDE_LOOPS:-0} CPU loops beside; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
run_rounds measure "" "$configs"

col() { awk -v c="$1" -v k="$2" '$1 == c { for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' "$results"; }
echo "medians over $rounds round(s), % of polls (thread with the most)"
printf '%-14s %12s %14s %12s %16s\n' config "in a trap" "tracing stop" "any thread" "xgdbprof says"
for c in $configs; do
	printf '%-14s %12s %14s %12s %16s\n' "$c" "$(col "$c" trap_max | median)" "$(col "$c" stopped_max | median)" \
		"$(col "$c" any_trap | median)" "$(col "$c" said | tr -d % | median)%"
done
