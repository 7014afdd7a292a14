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
TEST_FAILED_CHECKS=""
TEST_PIDS=""
# kill_own_child PID: SIGKILL, only if PID is still a child of this shell.
# bash reaps a background job the moment it exits, so the pid of one that
# ended early is free, and the suite wraps pid_max (32768) in minutes: a
# bare "kill -9 $pid" at the end of a test can hit another test's process.
kill_own_child() {
	local stat parent
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	parent=${stat##*) }   # after the command name, which may hold anything
	parent=${parent#* }
	parent=${parent%% *}
	[ "$parent" = "$$" ] || [ "$parent" = "${BASHPID:-$$}" ] || return 0
	kill -9 "$1" 2>/dev/null
}
cleanup_test() {
	for p in $TEST_PIDS; do kill_own_child "$p"; wait "$p" 2>/dev/null; done
	# XGDBPROF_KEEP_TEST_TMP=1 keeps a failed test's files to read after
	if [ -n "${XGDBPROF_KEEP_TEST_TMP:-}" ] && [ "${TEST_FAILURES:-0}" -gt 0 ]; then
		echo "# files kept in $TMP" >&2
		return
	fi
	rm -rf "$TMP" ${RAM_TMP:+"$RAM_TMP"}
}
# ram_tmp: sets RAM_TMP to a directory on a RAM file system (/dev/shm) for
# a fixture's progress file, removed with $TMP ($TMP itself when there is
# no such file system; call it as a command, not in $(...)). A fixture
# thread that renames its progress file over the old one on ext4 waits for
# the disk now and then (the rename flushes the new file's data,
# auto_da_alloc): 0.17-0.9 s in state D
# (submit_bio_wait) in 3 of 25 runs of trace_panic_budget.sh here. In
# all-stop mode gdb holds every thread of the target until each has
# stopped, so one such wait held panic_storm 11-13% of a 3 s run; a timing
# check of the hold cannot judge that run.
RAM_TMP=""
ram_tmp() {
	[ -n "$RAM_TMP" ] || RAM_TMP=$(mktemp -d /dev/shm/xgdbprof-test.XXXXXX 2>/dev/null) || RAM_TMP=$TMP
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
not_ok() {
	echo "not ok - $*"
	TEST_FAILURES=$((TEST_FAILURES + 1))
	TEST_FAILED_CHECKS="$TEST_FAILED_CHECKS
  not ok - $*"
}
check() {   # check "description" command...; returns the command's success
	local what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what"; return 1; fi
}
show() {   # show FILE: prints a file indented, to explain a failure
	sed 's/^/    | /' "$1" | head -40
}
finish() {
	# named again at the end: a CI log may keep only a test's last lines
	if [ "$TEST_FAILURES" -gt 0 ]; then echo "$TEST_FAILURES check(s) failed:$TEST_FAILED_CHECKS"; exit 1; fi
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

# wait_prefixed_lines FILE N PREFIX: up to 20 s for FILE to hold N lines starting
# with PREFIX (a fixture's truth lines).
wait_prefixed_lines() {
	local i
	for i in $(seq 1 200); do
		[ "$(grep -c "^$3" "$1" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# xg_window NAME PROGRESS XGDBPROF-ARGS...: runs xgdbprof (out and err in
# $TMP/NAME.out, .err) and copies the fixture's PROGRESS file as the probes
# are armed ($TMP/before) and after it exits ($TMP/after): the program's own
# counts over a window that holds the traced one (under load the attach
# alone can outlast a short run). `before` is the last copy taken before
# "attached" was printed (the probes go in just before it), `after` the
# first version the program wrote after xgdbprof's exit: copies taken the
# other way round under load (at 15 on 2 CPUs, the file written late)
# held 59797 counted calls in a window of 54806. Returns xgdbprof's status.
xg_window() {
	local name=$1 progress=$2 xg rc
	shift 2
	cp "$progress" "$TMP/before"
	"$XGDBPROF" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	xg=$!
	for _ in $(seq 1500); do
		grep -q "attached" "$TMP/$name.err" 2>/dev/null && break
		kill -0 "$xg" 2>/dev/null || break   # gone without arming: its status says why
		cp "$progress" "$TMP/before"
		sleep 0.02
	done
	wait "$xg"
	rc=$?
	progress_after "$progress" "$TMP/after"
	return "$rc"
}

# clocks_around_trace CLOCKS TARGET XGDBPROF-ARGS...: runs xgdbprof (out
# and err in $TMP/out, $TMP/err; err shown as comments) and reads
# `CLOCKS TARGET` once the probes are armed (CLOCKS_BEFORE) and after
# xgdbprof's exit (CLOCKS_AFTER): the whole traced window, the arming left
# out (reported apart). Checks that it armed and exited 0.
clocks_around_trace() {
	local clocks=$1 target=$2 xg rc
	shift 2
	"$XGDBPROF" "$@" "$target" >"$TMP/out" 2>"$TMP/err" &
	xg=$!
	for _ in $(seq 1 600); do grep -q attached "$TMP/err" 2>/dev/null && break; sleep 0.02; done
	check "probes armed" grep -q attached "$TMP/err"
	CLOCKS_BEFORE=$("$clocks" "$target")
	wait "$xg"
	rc=$?
	check "xgdbprof exits 0" test "$rc" -eq 0
	CLOCKS_AFTER=$("$clocks" "$target")
	sed 's/^/# /' "$TMP/err"
}

# progress_after PROGRESS COPY: copies PROGRESS once the program has
# rewritten it since now (within 10 s; else as it is), so that the copy
# holds every call made before now.
progress_after() {
	local _
	cp "$1" "$2"
	for _ in $(seq 500); do
		cmp -s "$1" "$2" || break
		sleep 0.02
	done
	cp "$1" "$2"
}

# The /proc state letter of a process ("" if gone).
proc_state() {
	sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null
}

# within_2x ESTIMATE TRUTH: ESTIMATE (integer or real) lies within 2x of
# TRUTH, which must be positive; an empty ESTIMATE (none printed) is not.
within_2x() { [ -n "$1" ] && awk -v e="$1" -v t="$2" 'BEGIN { exit !(t > 0 && e <= 2 * t && t <= 2 * e) }'; }

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

# progresses FILE [SECONDS]: the counter in FILE moves within SECONDS
# (default 10); says so when it does not.
progresses() {
	local before after i
	before=$(cat "$1")
	for i in $(seq 1 $(( ${2:-10} * 20 ))); do
		sleep 0.05
		after=$(cat "$1")
		[ "$after" != "$before" ] && return 0
	done
	echo "  no progress in ${2:-10} s ($before)"
	return 1
}

# True if the process exists, none of its threads is stopped, it is not
# traced, and its progress file advances within 10 seconds.
target_runs_free() {
	local pid=$1 file=$2 state tracer
	state=$(proc_state "$pid")
	case "$state" in ""|T|t|Z|X) echo "  target $pid state '$state'"; return 1 ;; esac
	for task in /proc/"$pid"/task/*; do
		state=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$task/stat" 2>/dev/null)
		case "$state" in T|t) echo "  thread ${task##*/} of $pid in state '$state'"; return 1 ;; esac
	done
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status")
	[ "$tracer" = 0 ] || { echo "  target $pid still traced by $tracer"; return 1; }
	# progress within 10 s: it returns as soon as the counter moves; a
	# loaded machine (load 11 in a CI rehearsal) left a running counter
	# unscheduled for the old 2 s
	progresses "$file" 10 || { echo "  (target $pid)"; return 1; }
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

# --- Statistical checks: a share judged by its sample count (issue 31) -----
# A share K of N samples is judged by its Wilson score interval with
# continuity correction at z = 3.719, the one-sided 10^-4 quantile: a check
# fails only when the whole interval lies on the wrong side of its
# threshold, so a correct program fails it at most about once in 10^4 runs
# whatever N is. The interval narrows as N grows: each test takes enough
# samples that the broken variant it guards against falls outside (the
# mutation that shows it is in the test's header). The TAP line gives K, N
# and the interval. With N too small for any K to fail the check, it cannot
# judge: it prints "ok - skipped: ..." with the count it would need.
STAT_Z=3.719
# wilson K N: "LOW HIGH", the interval in percent (N = 0: "0 100"; K
# outside 0..N, a test's own mistake: "nan nan").
wilson() {
	awk -v k="$1" -v n="$2" -v z="$STAT_Z" 'BEGIN {
		if (k < 0 || k > n) { print "nan", "nan"; exit }
		if (n <= 0) { print 0, 100; exit }
		p = k / n; d = 2 * (n + z * z)
		lo = (k == 0) ? 0 : (2 * n * p + z * z - 1 - z * sqrt(z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / d
		hi = (k == n) ? 1 : (2 * n * p + z * z + 1 + z * sqrt(z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / d
		if (lo < 0) lo = 0; if (hi > 1) hi = 1
		printf "%.1f %.1f\n", 100 * lo, 100 * hi }'
}
# min_samples_for PCT SIDE: the least N at which K = 0 (SIDE "least") or
# K = N (SIDE "most") would fail a threshold of PCT percent.
min_samples_for() {
	local n=1 lo hi
	while [ "$n" -lt 100000 ]; do
		if [ "$2" = least ]; then read -r lo hi <<<"$(wilson 0 "$n")"; awk -v h="$hi" -v t="$1" 'BEGIN { exit !(h < t) }' && break
		else read -r lo hi <<<"$(wilson "$n" "$n")"; awk -v l="$lo" -v t="$1" 'BEGIN { exit !(l > t) }' && break; fi
		n=$((n < 200 ? n + 1 : n + n / 10))
	done
	echo "$n"
}
# share_text K N: "K of N = S%, 1e-4 interval LO-HI%".
share_text() {
	local lo hi
	read -r lo hi <<<"$(wilson "$1" "$2")"
	awk -v k="$1" -v n="$2" -v lo="$lo" -v hi="$hi" \
		'BEGIN { printf "%d of %d = %.1f%%, 1e-4 interval %s-%s%%", k, n, n ? 100 * k / n : 0, lo, hi }'
}
# share_counts_valid WHAT K N: K and N are counts with K <= N, else "not ok".
share_counts_valid() {
	case "$2$3" in ''|*[!0-9]*) not_ok "$1: '$2' of '$3' are not counts"; return 1 ;; esac
	[ "$2" -le "$3" ] || { not_ok "$1: $2 of $3 is not a share (more than the whole)"; return 1; }
}
# check_share_at_least WHAT K N PCT: passes unless the share's interval is
# wholly below PCT percent.
check_share_at_least() {
	local what=$1 k=${2:-0} n=${3:-0} pct=$4 lo hi
	share_counts_valid "$what" "$k" "$n" || return 1
	read -r lo hi <<<"$(wilson 0 "$n")"
	if awk -v h="$hi" -v t="$pct" 'BEGIN { exit !(h >= t) }'; then
		ok "skipped: $what: $n samples cannot tell a share below ${pct}% at 1e-4 (needs $(min_samples_for "$pct" least) or more)"
		return 0
	fi
	read -r lo hi <<<"$(wilson "$k" "$n")"
	check "$what: $(share_text "$k" "$n") reaches >= ${pct}%" awk -v h="$hi" -v t="$pct" 'BEGIN { exit !(h >= t) }'
}
# check_share_at_most WHAT K N PCT: passes unless the share's interval is
# wholly above PCT percent.
check_share_at_most() {
	local what=$1 k=${2:-0} n=${3:-0} pct=$4 lo hi
	share_counts_valid "$what" "$k" "$n" || return 1
	read -r lo hi <<<"$(wilson "$n" "$n")"
	if awk -v l="$lo" -v t="$pct" 'BEGIN { exit !(l <= t) }'; then
		ok "skipped: $what: $n samples cannot tell a share above ${pct}% at 1e-4 (needs $(min_samples_for "$pct" most) or more)"
		return 0
	fi
	read -r lo hi <<<"$(wilson "$k" "$n")"
	check "$what: $(share_text "$k" "$n") reaches <= ${pct}%" awk -v l="$lo" -v t="$pct" 'BEGIN { exit !(l <= t) }'
}
# check_share_between WHAT K N LO HI: both of the above.
check_share_between() {
	local status=0
	check_share_at_least "$1" "$2" "$3" "$4" || status=1
	check_share_at_most "$1" "$2" "$3" "$5" || status=1
	return $status
}

# --- Timing checks: judged only when the machine's other work allows ------
# A rate or a duration measured on a 2-CPU machine says something of the
# tool only when other work left it the CPUs. load_begin PIDS... starts
# counting; others_load_pct then prints the share of all CPUs' time (in
# percent) that went to anything but this test's shell, its waited-for
# children (xgdbprof, gdb) and PIDS (the targets it started): /proc/stat's
# busy and steal time less /proc/PID/stat's user, system and children's
# times. check_timing WHAT COMMAND... runs the check when that share stayed
# under TIMING_LOAD_LIMIT (25%: half a CPU of 2) and otherwise prints
# "ok - skipped: WHAT: other work used N% ..." (never a silent pass). Call
# it after the timed command has been waited for.
TIMING_LOAD_LIMIT=${TIMING_LOAD_LIMIT:-25}
load_jiffies() {   # "BUSY_ALL OWN" in clock ticks now
	local own=0 p t
	own=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$$/stat")
	for p in $LOAD_PIDS; do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) && own=$((own + t))
	done
	awk -v own="$own" '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, own; exit }' /proc/stat
}
load_begin() { LOAD_PIDS="$*"; LOAD_FROM=$(load_jiffies); LOAD_FROM_NS=$(date +%s%N); }
others_load_pct() {
	local b0 o0 b1 o1
	read -r b0 o0 <<<"$LOAD_FROM"
	read -r b1 o1 <<<"$(load_jiffies)"
	awk -v b="$((b1 - b0))" -v o="$((o1 - o0))" -v ns="$(($(date +%s%N) - LOAD_FROM_NS))" \
		-v hz="$(getconf CLK_TCK)" -v cpus="$(nproc)" \
		'BEGIN { x = 100 * (b - o) / hz / (ns / 1e9) / cpus; if (x < 0) x = 0; printf "%d", x + 0.5 }'
}
check_timing() {
	local what=$1 pct
	shift
	pct=$(others_load_pct)
	if [ "$pct" -gt "$TIMING_LOAD_LIMIT" ]; then
		ok "skipped: $what: other work used ${pct}% of the $(nproc) CPUs meanwhile (over ${TIMING_LOAD_LIMIT}%: the timing cannot be judged)"
		return 0
	fi
	check "$what (other work: ${pct}% of the CPUs)" "$@"
}

# fewest_to_hold N COVERAGE: the least K such that a procedure right with
# probability COVERAGE (0.95 for a 95% interval) is right in fewer than K
# of N independent runs with probability at most 10^-4 (binomial tail).
fewest_to_hold() {
	awk -v n="$1" -v p="$2" 'BEGIN {
		k = 0; tail = 0
		while (k <= n) {
			c = 1; for (i = 0; i < k; i++) c = c * (n - i) / (i + 1)
			pk = c * p ^ k * (1 - p) ^ (n - k)
			if (tail + pk > 1e-4) break
			tail += pk; k++
		}
		print k }'
}

# syscall_table_cell KEY HEADER FILE: the cell of FILE's strace -c table
# (syscall_table(), recipes/syscalls.recipe) in row KEY under HEADER; empty
# when the row has none. Cells are right-aligned: one ends where its header
# ends (errors may be blank). The rows end at the table's second rule.
syscall_table_cell() {
	awk -v key="$1" -v col="$2" '
		!table && $NF == "syscall" && $1 == "%" {
			rest = $0; at = 0; prev_end = 0
			while (match(rest, /[^ ]+/)) {
				end = at + RSTART + RLENGTH - 1
				if (substr(rest, RSTART, RLENGTH) == col && !to) { from = prev_end + 1; to = end }
				prev_end = end; at += RSTART + RLENGTH - 1; rest = substr(rest, RSTART + RLENGTH)
			}
			table = 1; next
		}
		table && /^------/ { if (++rules == 2) exit; next }
		table && $NF == key { cell = substr($0, from, to - from + 1); gsub(/ /, "", cell); print cell; exit }
	' "$3"
}
