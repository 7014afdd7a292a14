#!/usr/bin/env bash
# locks.sh — the locks recipe against locks_c (pthread mutex) and locks_rust
# (std Mutex), whose truth is known: three workers take `hot` in turns and
# hold it for ~2 ms of CPU work while the others wait; the main thread
# takes `quiet`, which nobody else touches. Each program prints the lock
# addresses, the line that takes `hot` after a failed try, its count of
# contended acquisitions, its median wait (wall clock) and hold (CPU clock).
#
# Traced exactly (every hit, in all-stop mode: there every stop holds the
# holder too and target_nsecs takes them all out; in non-stop mode it takes
# out the holder's own stops only, and a hold also counts the holder's
# waits for a CPU while gdb serves the other threads' hits, 1.3-1.8 times
# its CPU time on 2 busy cores: docs/locks.md, "Time"), the report must name `hot` at that line with
# exactly the program's count of waits (within 2: a lock freed between the
# failed try and the lock() takes the fast path), its measured hold p50
# within 50% of the program's, and never `quiet`. Under the default 5%
# budget, the whole-run estimate's 95% interval must hold the program's count
# (one retry; a lower bound, printed when a hit's cost cannot be told from
# the calls' CPU, must not exceed it), and
# the wait p50 of the waits seen must be within a factor of 3 of the
# program's median (a timing check: judged unless other work took the
# CPUs meanwhile). (Before the estimator took out the calibrated CPU cost of
# our hits, the intervals ran low, 0.52-0.88 of the truth, and this check only
# asked for a factor of 2: docs/tracing.md, "Estimates".) The tolerances are wide because each end of a wait or
# hold is placed at gdb's report of the hit less gdb's median time to
# report one, which on 2 loaded cores varies by milliseconds, and because
# after each of our resumes the holder competes for a CPU with gdb and us,
# which lengthens the waits of an armed window (docs/locks.md, "Precision").
# Then parking_lot on kvservice (call sites in store.rs), and an attach by
# PID that must leave the target running, untraced and without int3.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# truth FILE KEY: the program's own figure
truth() { sed -n "s/^$2 \\(.*\\)\$/\\1/p" "$1" | head -1; }
# block FILE ADDR: the report's block of the lock at ADDR (headline, wait, hold, estimate)
block() { grep -A3 "^#[0-9]* contended lock $2 " "$1"; }
# us FIGURE (e.g. "p50 2.9 ms"): microseconds
us() {
	awk -v want="$1" '{ for (i = 1; i < NF; i++) if ($i == want) {
		v = $(i + 1); u = $(i + 2); sub(/[,;]$/, "", u)
		if ($(i + 1) == ">=") { v = $(i + 2); u = $(i + 3); sub(/[,;]$/, "", u) }
		print (u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v); exit } }'
}
within() {   # within X TRUTH LOW_FACTOR HIGH_FACTOR
	awk -v x="$1" -v t="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(x != "" && t > 0 && x >= t * lo && x <= t * hi) }'
}

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/locks.recipe"; } >"$TMP/exact.recipe"

for prog in locks_c locks_rust; do
	OUT=$TMP/$prog-exact
	load_begin
	"$XGDBPROF" --all-stop --recipe "$TMP/exact.recipe" -o "$OUT" -- "$FIXTURES/$prog" 3 3 2000 >"$OUT.out" 2>"$OUT.err"
	hot=$(truth "$OUT.out" hot_lock)
	quiet=$(truth "$OUT.out" quiet_lock)
	site=$(truth "$OUT.out" lock_site)
	n=$(truth "$OUT.out" contended)
	hold=$(truth "$OUT.out" hold_p50_us)
	b=$(block "$OUT.out" "$hot")
	echo "# $prog exact: the program took $hot at $site, $n contended, hold p50 ${hold} us; report:"
	sed 's/^/#   /' <<<"$b"
	check "$prog: the contended lock is named with its address and the line that takes it ($site)" \
		grep -q "^#1 contended lock $hot taken at $site (" <<<"$b" || show "$OUT.err"
	waits=$(sed -n 's/^   \([0-9]*\) waits\{0,1\},.*/\1/p' <<<"$b" | head -1)
	check "$prog: traced exactly, ${waits:-no} waits for the program's $n contended acquisitions (within 2)" \
		test -n "$waits" -a -n "$n" -a "${waits:-0}" -le "$((${n:-0} + 2))" -a "${waits:-0}" -ge "$((${n:-0} - 2))"
	held=$(grep -o 'held p50 [^,]*' <<<"$b" | us p50)
	# a hold is timed by the holder's clock less our stops, but counts its
	# waits for a CPU (docs/locks.md, "Time"): under other load it grows
	# (4.7 ms against 2.1 in a run beside two CPU-bound loops, load 10)
	check_timing "$prog: hold p50 ${held:-?} us within 50% of the program's ${hold:-?} us" within "$held" "$hold" 0.5 1.5
	check "$prog: the waits and holds as latency histograms" \
		sh -c "grep -A20 '^#1 contended' '$OUT.out' | grep -q '^   wait:\$' && grep -A40 '^#1 contended' '$OUT.out' | grep -q '^   held:\$'"
	check "$prog: the uncontended lock ($quiet) is not in the report" \
		sh -c "test -n '$quiet' && ! grep -q 'contended lock $quiet ' '$OUT.out'"

	held_ok=0 wait_ok=0 held_text=
	load_begin
	for try in 1 2; do
		OUT=$TMP/$prog-budget-$try
		"$XGDBPROF" --all-stop --recipe "$TOP_SRCDIR/recipes/locks.recipe" -o "$OUT" -- "$FIXTURES/$prog" 3 8 2000 \
			>"$OUT.out" 2>"$OUT.err"
		hot=$(truth "$OUT.out" hot_lock)
		n=$(truth "$OUT.out" contended)
		wait=$(truth "$OUT.out" wait_p50_us)
		b=$(block "$OUT.out" "$hot")
		read -r lo hi < <(sed -n 's/.*est\. [0-9]* waits in the run (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/p' <<<"$b")
		if [ -z "$lo" ]; then   # a lower bound: it must hold
			lo=$(sed -n 's/.*est\. >= \([0-9]*\) waits in the run.*/\1/p' <<<"$b")
			[ -n "$lo" ] && hi=$n
		fi
		measured=$(sed -n '2p' <<<"$b" | us p50)
		echo "# $prog under the budget, run $try: the program counted ${n:-?} contended, wait p50 ${wait:-?} us; report:"
		sed 's/^/#   /' <<<"$b"
		if [ -n "$lo" ] && [ -n "$n" ] && [ "$lo" -le "$n" ] && [ "$hi" -ge "$n" ]; then
			held_ok=1 held_text="${lo}–${hi} holds the program's $n"
		fi
		within "$measured" "$wait" 0.33 3 && wait_ok=1
		[ "$held_ok$wait_ok" = 11 ] && break
	done
	check "$prog: under the 5% budget, the estimate's interval holds the program's count of contended acquisitions (${held_text:-last ${lo:-?}–${hi:-?} for ${n:-?}})" \
		test "$held_ok" = 1 || show "$OUT.err"
	# the waits seen in armed windows are lengthened by each resume's
	# scramble for the CPUs (above): a load beside the run adds to it
	# (3.1-3.3 ms for 611-649 us in a CI rehearsal with a heap test and
	# SIGSTOP loops beside it, 2026-12-06), so it is judged as timing
	check_timing "$prog: under the 5% budget, wait p50 of the waits seen ${measured:-?} us within a factor of 3 of the program's ${wait:-?} us" \
		test "$wait_ok" = 1
	check "$prog: the report says what share of the run the probes saw" \
		grep -q "^probes armed for .*% of the target's CPU time: counts are estimated" "$OUT.out"
done

# parking_lot, on the realistic fixture: its RwLock shards are contended
# by get (store.rs:63, read) and put (store.rs:72, write); both must show,
# each at its line with its kind (lock_shared_slow / lock_exclusive_slow),
# lock_api's and parking_lot's frames folded away.
"$FIXTURES/kvservice" 30 --workers 3 >/dev/null 2>&1 &
kv=$!
TEST_PIDS="$TEST_PIDS $kv"
sleep 1
"$XGDBPROF" --recipe "$TMP/exact.recipe" -d 2s -o "$TMP/kv" "$kv" >"$TMP/kv.out" 2>"$TMP/kv.err"
kill "$kv" 2>/dev/null
grep '^#[0-9]* contended' "$TMP/kv.out" | head -3 | sed 's/^/# kvservice: /'
check "parking_lot: kvservice's RwLock shards, read at store.rs:63 (get) and written at store.rs:72 (put), told apart" \
	sh -c "grep -qE '^#[0-9]+ contended lock 0x[0-9a-f]+ taken at store\.rs:63 \(parking_lot RwLock::read\)' '$TMP/kv.out' &&
		grep -qE '^#[0-9]+ contended lock 0x[0-9a-f]+ taken at store\.rs:72 \(parking_lot RwLock::write\)' '$TMP/kv.out'" \
	|| show "$TMP/kv.err"

# Attached to a running process: left running, untraced, and no breakpoint
# left behind (a stray int3 in __lll_lock_wait would kill the program with
# SIGTRAP at its next contended lock, about 100 times a second). It runs
# long enough for gdb's start and the symbol reading at a load of 25, then
# is stopped by us.
"$FIXTURES/locks_c" 3 60 2000 >"$TMP/attached.out" &
target=$!
TEST_PIDS="$TEST_PIDS $target"
sleep 1
"$XGDBPROF" --recipe "$TOP_SRCDIR/recipes/locks.recipe" -d 2s -o "$TMP/attached" "$target" \
	>"$TMP/attached.report" 2>"$TMP/attached.err"
alive() {   # exists, and not a zombie (a SIGTRAP would have killed it)
	case "$(proc_state "$1")" in ""|Z|X) return 1 ;; esac
}
left_running() { alive "$1" && settles_running "$1"; }
check "attached: the target is left running, no thread stopped" left_running "$target"
untraced() {   # up to 2 s for gdb, on its way out, to have detached
	for i in $(seq 1 40); do
		grep -q '^TracerPid:[[:space:]]*0$' "/proc/$1/status" && return 0
		sleep 0.05
	done
	return 1
}
check "attached: the target is no longer traced" untraced "$target"
sleep 1
check "attached: a second after the detach the program still takes its contended lock (no SIGTRAP)" alive "$target"
kill "$target"
check "attached: the contended lock was reported" grep -q "^#1 contended lock $(truth "$TMP/attached.out" hot_lock) " "$TMP/attached.report"
finish
