#!/bin/bash
# bench/stress_harm.sh — fuzz-style stress of "never harm the target".
#
#   bench/stress_harm.sh [--seed S] [--rounds R] [--build DIR] [--timeout MS]
#                        [--kinds "K ..."] [--modes "M ..."] [--actions "A ..."]
#                        [--verbose]
#
# Each round starts a tests/fixtures/canary (plain, fork-every 50 or
# exec-after 300..1800 ms, at random), runs xgdbprof from DIR against it in a
# random mode and, 0..2 s after xgdbprof started, does one random thing to it
# or its gdb. Then, when xgdbprof is gone (bounded waits) and after a 1 s
# settle (ten dlopens), tests/harm_check.sh judges the canary. Prints one line
# per round on stderr, then a table mode x action of harmed/rounds and
# `harmed: N of R`. Choices come from bash's RANDOM seeded with --seed, so a
# seed replays the same rounds (their timing is the machine's). --kinds,
# --modes, --actions draw from a subset only (names as in the table). Exit 0
# whatever was found; 2 on bad options.
# Mode trace-counted (issue 26): canary_mix counted in the target by a
# counting jump, with no breakpoint (its probe only counts): the jump and
# its code run on every call of the canary's workers, whatever happens.
# Mode heap-mallctl (issue 25): `--recipe heap` on the canary's own
# mallctl, which answers as a profiling jemalloc and takes 300 ms to dump:
# the calls run through our stub on a worker the register oracle watches,
# and the kills land during them often.
# Actions added for issue 28: kill-gdb-in-trap waits (up to 1.5 s) until a
# canary thread is in trace stop (a trap gdb is handling), then SIGKILLs gdb;
# the round says whether the canary died, whether xgdbprof said so, and the
# exposure measured before the kill: the share of /proc polls (about one a
# millisecond, 300 ms) that found a thread in trace stop. stop-xg holds
# xgdbprof stopped for 3 s, then continues it, and says how much of that the
# canary spent stopped; stop-guardian stops the guardian for the rest of the
# round. The table ends with the mean exposure per mode where measured.
set -u

seed=1
rounds=100
build=./build
xg_timeout=
verbose=0
modes="sample-allstop sample-nonstop trace-budget trace-counted trace-exact dump heap-mallctl"
actions="none kill-gdb stop-gdb int-xg term-xg kill-xg kill-gdb-in-trap stop-xg stop-guardian"
kinds="plain fork exec"
all_modes=$modes all_actions=$actions all_kinds=$kinds
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--timeout) xg_timeout=$2; shift 2 ;;
	--kinds) kinds=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--actions) actions=$2; shift 2 ;;
	--verbose) verbose=1; shift ;;
	*) echo "usage: $0 [--seed S] [--rounds R] [--build DIR] [--timeout MS] [--kinds \"K ...\"] [--modes \"M ...\"] [--actions \"A ...\"] [--verbose]" >&2; exit 2 ;;
	esac
done
for w in $kinds; do case " $all_kinds " in *" $w "*) ;; *) echo "$0: unknown kind $w (one of: $all_kinds)" >&2; exit 2 ;; esac; done
for w in $modes; do case " $all_modes " in *" $w "*) ;; *) echo "$0: unknown mode $w (one of: $all_modes)" >&2; exit 2 ;; esac; done
for w in $actions; do case " $all_actions " in *" $w "*) ;; *) echo "$0: unknown action $w (one of: $all_actions)" >&2; exit 2 ;; esac; done
[ -n "$kinds" ] && [ -n "$modes" ] && [ -n "$actions" ] || { echo "$0: --kinds, --modes and --actions need at least one name" >&2; exit 2; }
case "$seed$rounds${xg_timeout:-0}" in *[!0-9]*) echo "$0: --seed, --rounds and --timeout take numbers" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" 2>/dev/null && pwd) || { echo "$0: no build directory $build (give --build DIR)" >&2; exit 2; }
xgdbprof=$build/xgdbprof
codecheck=$build/tests/unit/test_tracer_codecheck
[ -x "$xgdbprof" ] || { echo "$0: no $xgdbprof; build it (make -C $build) or give --build DIR" >&2; exit 2; }
[ -x "$codecheck" ] || { echo "$0: no $codecheck; build it: make -C $build tests/unit/test_tracer_codecheck" >&2; exit 2; }
. "$src/tests/harm_check.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stress_harm.XXXXXX")
canary_pid=
xg_pid=
gdb_pid=
cleanup() {
	local p
	for p in $xg_pid $gdb_pid $canary_pid; do
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The canary: the build's own if it has one, else compiled here (a build of
# an older tree, such as main's, predates it).
canary=$build/tests/fixtures/bin/canary
if [ ! -x "$canary" ] || [ "$canary" -ot "$src/tests/fixtures/canary.c" ]; then
	canary=$tmp/canary
	${CC:-cc} -O1 -g -pthread -o "$canary" "$src/tests/fixtures/canary.c" -ldl ||
		{ echo "$0: could not build the canary" >&2; exit 1; }
fi

log() { printf '%s\n' "$*" >&2; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Waits up to $2 ms for process $1 to be gone; true if it is.
wait_gone() {
	local deadline=$(( $(now_ms) + $2 ))
	while kill -0 "$1" 2>/dev/null; do
		case "$(harm__state "/proc/$1")" in Z|X|"") return 0 ;; esac
		[ "$(now_ms)" -ge "$deadline" ] && return 1
		sleep 0.02
	done
	return 0
}

gdb_of() {   # the gdb child of xgdbprof $1
	local p
	for p in $(pgrep -P "$1" 2>/dev/null); do
		case "$(cat /proc/"$p"/comm 2>/dev/null)" in gdb*) echo "$p"; return 0 ;; esac
	done
	return 1
}

# Share (%) of polls of /proc/$1/task/*/stat over $2 ms that found a thread
# in state $3 (t: trace stop, held in a trap or by gdb; T|t: any stop).
# Builtins only: a poll every millisecond or so, no fork per poll.
stopped_share() {
	local pid=$1 ms=$2 want=$3 polls=0 hits=0 line st task deadline
	deadline=$(( $(now_ms) + ms ))
	while [ "$(now_ms)" -lt "$deadline" ]; do
		polls=$((polls + 1))
		for task in /proc/"$pid"/task/*/stat; do
			read -r line <"$task" 2>/dev/null || continue
			st=${line##*) }; st=${st%% *}
			case "$st" in [$want]) hits=$((hits + 1)); break ;; esac
		done
	done
	echo $(( polls ? 100 * hits / polls : 0 ))
}
any_thread_in() {   # any_thread_in PID STATES: one thread of PID in one of STATES now
	local line st task
	for task in /proc/"$1"/task/*/stat; do
		read -r line <"$task" 2>/dev/null || continue
		st=${line##*) }; st=${st%% *}
		case "$st" in [$2]) return 0 ;; esac
	done
	return 1
}
guardian_of() {   # the child of xgdbprof $1 that is not gdb
	local p
	for p in $(pgrep -P "$1" 2>/dev/null); do
		case "$(cat /proc/"$p"/comm 2>/dev/null)" in gdb*) ;; *) echo "$p"; return 0 ;; esac
	done
	return 1
}
declare -A exposure_sum exposure_n

# pick VAR "A B C": one at random into VAR (no subshell, where RANDOM would
# not advance the parent's sequence).
pick() { local a=($2); printf -v "$1" '%s' "${a[$((RANDOM % ${#a[@]}))]}"; }

RANDOM=$seed
declare -A cell_rounds cell_harmed
total_harmed=0
for round in $(seq 1 "$rounds"); do
	# All of the round's choices first, so that a seed fixes them.
	pick kind "$kinds"
	pick mode "$modes"
	pick action "$actions"
	delay_ms=$((RANDOM % 2001))
	exec_ms=$((300 + RANDOM % 1501))
	status=$tmp/status.$round
	case "$kind" in
	plain) extra=() ;;
	fork) extra=(fork-every 50) ;;
	exec) extra=(exec-after "$exec_ms") ;;
	esac
	"$canary" "$status" "${extra[@]}" >"$tmp/canary.out.$round" 2>&1 &
	canary_pid=$!
	for _ in $(seq 1 100); do [ -s "$status" ] && break; sleep 0.02; done
	sleep 0.2

	opts=(-o "$tmp/out.$round")
	[ -n "$xg_timeout" ] && opts+=(--timeout "$xg_timeout")
	case "$mode" in
	sample-allstop) opts+=(--recipe hot-cpu --all-stop -d 3s) ;;
	sample-nonstop) opts+=(--recipe hot-cpu --non-stop -d 3s) ;;
	trace-budget) opts+=(-d 3s -e 'function "canary_step" { @c = count(); }') ;;
	trace-counted) opts+=(-d 3s -e 'function "canary_mix" { @c = count(); }') ;;
	trace-exact) opts+=(-d 3s -e 'set exact true
function "canary_step" { @c = count(); }') ;;
	dump) opts+=(dump) ;;
	heap-mallctl) opts+=(--recipe heap -d 500ms) ;;
	esac
	start=$(now_ms)
	"$xgdbprof" "${opts[@]}" "$canary_pid" >"$tmp/xg.out.$round" 2>"$tmp/xg.err.$round" &
	xg_pid=$!
	sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
	# Found now, not earlier: xgdbprof may run more than one gdb in turn.
	gdb_pid=$(gdb_of "$xg_pid")
	did=$action
	act_note=
	xg_alive=1
	kill -0 "$xg_pid" 2>/dev/null && [ "$(harm__state "/proc/$xg_pid")" != Z ] || xg_alive=0
	[ "$action" != none ] && [ "$xg_alive" = 0 ] && did="$action(late)"
	case "$action" in
	kill-gdb) [ -n "$gdb_pid" ] && kill -9 "$gdb_pid" 2>/dev/null ;;
	stop-gdb) [ -n "$gdb_pid" ] && kill -STOP "$gdb_pid" 2>/dev/null ;;
	int-xg) kill -INT "$xg_pid" 2>/dev/null ;;
	term-xg) kill -TERM "$xg_pid" 2>/dev/null ;;
	kill-xg) kill -9 "$xg_pid" 2>/dev/null ;;
	kill-gdb-in-trap)
		# gdb may not be there yet at a short delay: wait for it and its attach.
		for _ in $(seq 1 200); do
			[ -n "$gdb_pid" ] && [ "$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/"$canary_pid"/status 2>/dev/null)" = "$gdb_pid" ] && break
			sleep 0.01
			gdb_pid=$(gdb_of "$xg_pid")
		done
		if [ -n "$gdb_pid" ]; then
			exposure=$(stopped_share "$canary_pid" 300 t)
			exposure_sum[$mode]=$(( ${exposure_sum[$mode]:-0} + exposure ))
			exposure_n[$mode]=$(( ${exposure_n[$mode]:-0} + 1 ))
			in_trap=no
			deadline=$(( $(now_ms) + 1500 ))
			while [ "$(now_ms)" -lt "$deadline" ]; do
				any_thread_in "$canary_pid" t && { in_trap=yes; break; }
			done
			kill -9 "$gdb_pid" 2>/dev/null
			act_note="exposure ${exposure}% of 300 ms; killed with a thread in trace stop: $in_trap;"
		fi ;;
	stop-xg)
		kill -STOP "$xg_pid" 2>/dev/null
		held=$(stopped_share "$canary_pid" 3000 Tt)
		kill -CONT "$xg_pid" 2>/dev/null
		act_note="canary stopped ${held}% of the 3 s xgdbprof was stopped;" ;;
	stop-guardian)
		guardian_pid=$(guardian_of "$xg_pid") && kill -STOP "$guardian_pid" 2>/dev/null ;;
	esac
	note=$act_note
	verdict=
	nharm=0
	# Bounded: xgdbprof must give up on a stopped gdb by itself (its
	# --timeout); 20 s is the patience here for everything else too. A
	# target still held then is judged as it is, before xgdbprof is killed.
	if ! wait_gone "$xg_pid" 20000; then
		note="xgdbprof still running after 20 s;"
		verdict=$(harm_check "$canary_pid" "$status" "$codecheck")
		nharm=$?
		kill -9 "$xg_pid" 2>/dev/null
	fi
	{ wait "$xg_pid"; } 2>/dev/null
	xg_rc=$?
	xg_ms=$(( $(now_ms) - start ))
	if [ "$action" = kill-xg ] && [ -n "$gdb_pid" ]; then
		# What gdb does when its xgdbprof dies: it reads EOF on stdin.
		if wait_gone "$gdb_pid" 5000; then note="$note gdb exited after xgdbprof's SIGKILL;"
		else note="$note gdb still there 5 s after xgdbprof's SIGKILL (state $(harm__state "/proc/$gdb_pid"));"; fi
	fi
	if [ "$action" = stop-gdb ] && [ -n "$gdb_pid" ] && kill -0 "$gdb_pid" 2>/dev/null; then
		note="$note stopped gdb still there;"
	fi
	if [ "$nharm" = 0 ]; then
		sleep 1
		verdict=$(harm_check "$canary_pid" "$status" "$codecheck")
		nharm=$?
	fi
	if [ "$action" = kill-gdb-in-trap ]; then
		if [ -z "$(harm__state "/proc/$canary_pid")" ] || [ "$(harm__state "/proc/$canary_pid")" = Z ]; then
			if grep -Eq "process $canary_pid (died of|is gone|was killed)" "$tmp/xg.err.$round"; then
				note="$note canary died, xgdbprof said so;"
			else
				note="$note canary died, xgdbprof did NOT say so;"
			fi
		fi
	fi
	if [ -n "${guardian_pid:-}" ]; then
		kill -CONT "$guardian_pid" 2>/dev/null
		guardian_pid=
	fi
	# Only now let a stopped or orphaned gdb go.
	if [ -n "$gdb_pid" ] && kill -0 "$gdb_pid" 2>/dev/null; then
		kill -9 "$gdb_pid" 2>/dev/null
		kill -CONT "$gdb_pid" 2>/dev/null
	fi
	kill -9 "$canary_pid" 2>/dev/null
	{ wait "$canary_pid"; } 2>/dev/null
	canary_pid=
	xg_pid=
	gdb_pid=

	cell="$mode|$action"
	cell_rounds[$cell]=$(( ${cell_rounds[$cell]:-0} + 1 ))
	if [ "$nharm" -gt 0 ]; then
		cell_harmed[$cell]=$(( ${cell_harmed[$cell]:-0} + 1 ))
		total_harmed=$((total_harmed + 1))
		result=HARMED
	else
		result=ok
	fi
	log "round $round: $kind $mode $did at ${delay_ms}ms; xgdbprof rc=$xg_rc after ${xg_ms}ms; $result${note:+ ($note)}"
	[ -n "$verdict" ] && printf '%s\n' "$verdict" | sed 's/^/    /' >&2
	if [ "$verbose" = 1 ] || [ "$nharm" -gt 0 ]; then
		tail -n 3 "$tmp/xg.err.$round" | sed 's/^/    xgdbprof: /' >&2
	fi
done

printf '%-16s' "mode \\ action"
for a in $actions; do printf ' %9s' "$a"; done
printf '\n'
for m in $modes; do
	printf '%-16s' "$m"
	for a in $actions; do
		c="$m|$a"
		if [ -n "${cell_rounds[$c]:-}" ]; then
			printf ' %9s' "${cell_harmed[$c]:-0}/${cell_rounds[$c]}"
		else
			printf ' %9s' -
		fi
	done
	printf '\n'
done
for m in $modes; do
	[ -n "${exposure_n[$m]:-}" ] &&
		echo "exposure ($m): a canary thread in trace stop in $(( exposure_sum[$m] / exposure_n[$m] ))% of polls (mean of ${exposure_n[$m]} rounds)"
done
echo "harmed: $total_harmed of $rounds"
