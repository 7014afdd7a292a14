#!/usr/bin/env bash
# A hit stops only the thread that hit: in an exact trace where one thread
# of spin_hit hits a probe hundreds of times, its other thread — a spinner
# that never sleeps — is not stopped once, and runs on (gdb non-stop mode
# with displaced stepping: docs/tracing.md, "Which threads a hit stops").
# Oracle: the spinner's voluntary context switches, from /proc. A spinning
# thread makes none of its own; each ptrace stop is one. So in gdb's
# all-stop mode (the tracer's only mode before, still `--all-stop`) they
# grow by one per hit — checked below, which shows the oracle sees stops —
# and in non-stop mode by the attach and the detach only.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

field() { sed -n "s/.*$2=\([0-9]*\).*/\1/p" "$1"; }
switches() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/task/$2/status" 2>/dev/null; }

trace_spin() {   # trace_spin LABEL XGDBPROF-OPTIONS...: sets HITS, STOPS, SPINS_PER_S
	local label=$1 st=$TMP/status.$1
	shift
	"$FIXTURES/spin_hit" 30 "$st" & local pid=$!
	TEST_PIDS="$TEST_PIDS $pid"
	wait_for_file "$st"
	sleep 0.3
	local tid before spins0 t0 spins1 t1
	tid=$(field "$st" spinner_tid)
	before=$(switches "$pid" "$tid")
	spins0=$(field "$st" spins)
	t0=$(date +%s%N)
	"$XGDBPROF" "$@" -d 3s -e 'set exact true; function "probed_step" { @c = count(); }' "$pid" \
		>"$TMP/$label.out" 2>"$TMP/$label.err"
	local rc=$?
	sleep 0.15   # the fixture's next status line
	spins1=$(field "$st" spins)
	t1=$(date +%s%N)
	check "$label: xgdbprof exited 0 (got $rc)" test "$rc" = 0 || show "$TMP/$label.err"
	STOPS=$(( $(switches "$pid" "$tid") - before ))
	HITS=$(sed -n 's/^@c: \([0-9]*\)$/\1/p' "$TMP/$label.out")
	SPINS_PER_S=$(( (spins1 - spins0) * 1000 / ((t1 - t0) / 1000000) ))
	check "$label: the target runs on after the trace, untraced" target_runs_free "$pid" "$st"
	check "$label: no breakpoint left in the code" \
		test "$("$TOP_BUILDDIR/tests/unit/test_tracer_codecheck" "$pid")" = 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

trace_spin nonstop
echo "  non-stop: ${HITS:-?} hits; the spinner was stopped $STOPS times, spun $SPINS_PER_S/s"
check "non-stop: the probe was hit at least 100 times (got ${HITS:-none})" test "${HITS:-0}" -ge 100 ||
	show "$TMP/nonstop.out"
check "non-stop: the spinner was stopped at most 4 times (attach, detach), not per hit (got $STOPS)" \
	test "$STOPS" -le 4
check "non-stop: the summary says the other threads ran on" \
	grep -q "the other threads ran on (gdb non-stop mode)" "$TMP/nonstop.err" || show "$TMP/nonstop.err"
check "non-stop: attaching held the target, arming did not (arming 0.0 ms)" \
	grep -q "arming the probes 0.0 ms" "$TMP/nonstop.err"

trace_spin allstop --all-stop
echo "  all-stop: ${HITS:-?} hits; the spinner was stopped $STOPS times, spun $SPINS_PER_S/s"
check "all-stop: the spinner was stopped at every hit (the oracle sees stops: $STOPS for ${HITS:-?} hits)" \
	test -n "$HITS" -a "$STOPS" -ge "${HITS:-1}"
check "all-stop: the summary says every other thread was held" \
	grep -q "every other thread was held as long (gdb all-stop mode)" "$TMP/allstop.err" || show "$TMP/allstop.err"

# gdb displaced-steps in a buffer at the program's entry point and puts
# its bytes back after each step. A gdb killed mid-step leaves the copy
# there, which is no int3: the rescue after gdb's death must heal it from
# the file too (the int3-only heal left it). Planted by hand here (a
# RIP-relative lea, as gdb copies one), then healed as after gdb's death.
"$FIXTURES/spin_hit" 30 "$TMP/status.heal" & HEAL=$!
TEST_PIDS="$TEST_PIDS $HEAL"
wait_for_file "$TMP/status.heal"
python3 - "$HEAL" <<'PY'
import struct, sys
pid = sys.argv[1]
aux = open("/proc/%s/auxv" % pid, "rb").read()
entry = dict(struct.iter_unpack("<QQ", aux))[9]   # AT_ENTRY
with open("/proc/%s/mem" % pid, "r+b", buffering=0) as mem:
    mem.seek(entry)
    mem.write(b"\x48\x8d\x0d\x10\x00\x00\x00")
PY
planted=$("$TOP_BUILDDIR/tests/unit/test_tracer_codecheck" "$HEAL")
check "a displaced-step copy planted at the entry point differs from the file ($planted bytes)" \
	test "${planted:-0}" -gt 0
check "the rescue after gdb's death puts the entry point's bytes back from the file" \
	test "$("$TOP_BUILDDIR/tests/unit/test_tracer_codecheck" --heal "$HEAL")" = 0
check "the target runs on after the heal, untraced" target_runs_free "$HEAL" "$TMP/status.heal"
finish
