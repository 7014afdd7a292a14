# tests/lib.sh — shared helpers for the end-to-end shell tests (sourced).
# Each test prints "ok - ..." / "not ok - ..." lines and exits non-zero if
# anything failed. Real processes only: fixtures from $FIXTURES, the built
# xgdbprof in $XGDBPROF, the real gdb.
set -u
: "${XGDBPROF:?run through make check}"
: "${FIXTURES:?run through make check}"
# Output is laid out for $COLUMNS (else 100 in a pipe): the tests grep whole
# lines of content, so they get a width no line reaches; the layout at 80
# columns is tests/report_width.sh's and tests/report/report.sh's to check.
COLUMNS=10000; export COLUMNS
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xgdbprof-test.XXXXXX")
TEST_FAILURES=0
TEST_PIDS=""
cleanup_test() {
	for p in $TEST_PIDS; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup_test EXIT

# A test that cannot run here says why and exits 77, which automake
# reports as SKIP (not as a failure, nor as a pass).
skip_test() { echo "SKIP: $*"; exit 77; }
# require_tool NAME PACKAGE: skips unless NAME is on PATH.
require_tool() { command -v "$1" >/dev/null 2>&1 || skip_test "$1 is not installed (Debian: apt-get install $2)"; }
# Tests that attach to processes they did not start as gdb's children need
# ptrace rights: root, or Yama's ptrace_scope 0.
require_attach() {
	local scope
	scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
	[ "$(id -u)" = 0 ] || [ "$scope" = 0 ] ||
		skip_test "attaching needs root or kernel.yama.ptrace_scope=0 (it is $scope); run as root, or sysctl -w kernel.yama.ptrace_scope=0"
	require_tool gdb gdb
}
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; TEST_FAILURES=$((TEST_FAILURES + 1)); }
check() {   # check "description" command...; returns the command's success
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; return 1; fi
}
show() {   # show FILE: prints a file indented, to explain a failure
	sed 's/^/    | /' "$1" | head -40
}
finish() {
	if [ "$TEST_FAILURES" -gt 0 ]; then echo "$TEST_FAILURES check(s) failed"; exit 1; fi
	exit 0
}

# Starts the counter fixture; sets COUNTER_PID and PROGRESS.
start_counter() {
	PROGRESS=$TMP/progress.$RANDOM
	"$FIXTURES/counter" "$PROGRESS" "$@" >/dev/null &
	COUNTER_PID=$!
	TEST_PIDS="$TEST_PIDS $COUNTER_PID"
	wait_for_file "$PROGRESS"
}

# wait_exe PID PATH: up to 5 s for PID to be running PATH (a process just
# started with & may still be the forking shell when we look).
wait_exe() {
	local i
	for i in $(seq 1 500); do [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ] && return 0; sleep 0.01; done
	return 1
}

wait_for_dir() {
	local i
	for i in $(seq 1 400); do [ -d "$1" ] && return 0; sleep 0.05; done
	return 1
}

wait_for_file() {
	local i
	for i in $(seq 1 200); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

# The /proc state letter of a process ("" if gone).
proc_state() {
	sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null
}

# map_entry MAP LEAF FILE: in a report's printed maps, the value line ("]:
# ...") of @MAP's entry whose stack starts at the frame LEAF.
map_entry() {
	awk -v map="@$1[" -v leaf="$2" '
		index($0, map) == 1 { want = 1; first = 1; next }
		want && first { first = 0; hit = ($1 == leaf); next }
		want && /^\]: / { if (hit) print; want = 0 }' "$3" | head -1
}

# After xgdbprof was SIGKILLed: its guardian process continues a target
# gdb's detach left stopped, once gdb is gone, so allow it a moment.
settles_running() {   # up to 2 s for no thread of $1 in state T
	local i task stopped
	for i in $(seq 1 40); do
		stopped=0
		for task in /proc/"$1"/task/*; do
			case "$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)" in T|t) stopped=1 ;; esac
		done
		[ "$stopped" = 0 ] && return 0
		sleep 0.05
	done
	return 1
}

# True if the process exists, none of its threads is stopped, it is not
# traced, and its progress file advances within 2 seconds.
target_runs_free() {
	local pid=$1 file=$2 before after i state tracer
	state=$(proc_state "$pid")
	case "$state" in ""|T|t|Z|X) echo "  target $pid state '$state'"; return 1 ;; esac
	for task in /proc/"$pid"/task/*; do
		state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)
		case "$state" in T|t) echo "  thread ${task##*/} of $pid in state '$state'"; return 1 ;; esac
	done
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status")
	[ "$tracer" = 0 ] || { echo "  target $pid still traced by $tracer"; return 1; }
	before=$(cat "$file")
	for i in $(seq 1 40); do
		sleep 0.05
		after=$(cat "$file")
		[ "$after" != "$before" ] && return 0
	done
	echo "  target $pid made no progress ($before)"
	return 1
}

# Waits (up to $2 seconds, default 20) for a process to exit; true if it did.
wait_exit() {
	local i n=$(( ${2:-20} * 20 ))
	for i in $(seq 1 "$n"); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	return 1
}

# Finds the gdb child of a process (our xgdbprof), if any.
gdb_child_of() {
	local pid
	for pid in $(pgrep -P "$1"); do
		case "$(cat /proc/$pid/comm 2>/dev/null)" in gdb*) echo "$pid"; return 0 ;; esac
	done
	return 1
}

# expect_error "what" STATUS PATTERN command...: the command exits with
# STATUS and says one line on stderr matching PATTERN (bad input gets one
# clear message).
expect_error() {
	local what=$1 want_status=$2 pattern=$3; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local status=$?
	local lines
	lines=$(wc -l <"$TMP/err")
	if [ "$status" -eq "$want_status" ] && grep -q -- "$pattern" "$TMP/err" && [ "$lines" -eq 1 ]; then
		ok "$what: $(cat "$TMP/err")"
	else
		not_ok "$what: status $status (want $want_status), $lines line(s) on stderr:"
		sed 's/^/    /' "$TMP/err"
	fi
}
