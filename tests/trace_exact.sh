#!/usr/bin/env bash
# Exact counts are exact: a launched program is held at its entry point
# until the probes are armed, so a trace of its whole life counts every call
# the program itself counts — the calls its main thread makes in its first
# microseconds and those of threads that live for a few hundred calls; and
# an attached program with thread churn, armed before its calls begin.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

run_exact() {   # run_exact NAME WARMUP ROUNDS PER_THREAD
	local name=$1; shift
	"$XGDBPROF" -e 'set exact true; function "counted_call" { @calls = count(); }' \
		-o "$TMP/out-$name" -- "$FIXTURES/churn" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

for shape in "start 400 0 0" "churn 300 8 40"; do
	set -- $shape
	name=$1; shift
	run_exact "$name" "$@"
	status=$?
	check "$name: xgdbprof and the command exit 0" test "$status" -eq 0 || show "$TMP/$name.err"
	truth=$(sed -n 's/^calls \([0-9]*\)$/\1/p' "$TMP/$name.out")
	counted=$(sed -n 's/^@calls: \([0-9]*\)$/\1/p' "$TMP/$name.out")
	echo "  $name: the program counted ${truth:-?} calls, the trace ${counted:-?}"
	check "$name: the trace counts exactly the program's own calls" \
		test -n "$truth" -a "${counted:-x}" = "$truth" || show "$TMP/$name.out"
done
check "the probe was armed before the program's first instruction (held at its entry point)" \
	grep -q "held at its entry point" "$TMP/start.err"
# Nothing but print() output: no profile was saved, and none is announced;
# a directory of our naming would have been removed.
check "no 'profile saved in' when nothing was saved" sh -c "! grep -q 'profile saved in' '$TMP/start.err'"
(cd "$TMP" && "$XGDBPROF" -e 'set exact true; function "counted_call" { @calls = count(); }' \
	-- "$FIXTURES/churn" 5 0 0 >/dev/null 2>&1)
check "no empty output directory of ours left behind" \
	sh -c "! ls -d '$TMP'/xgdbprof-* >/dev/null 2>&1"

# Attached, not launched: the program waits for a go file, xgdbprof
# attaches and arms, then the program makes its calls — from its main thread
# and from 3 x 40 short-lived threads — and exits. The trace covers all of
# them, so it must count exactly what the program counted.
"$FIXTURES/churn" 200 40 50 "$TMP/go" >"$TMP/attached.out" & CHURN=$!
TEST_PIDS="$TEST_PIDS $CHURN"
wait_exe "$CHURN" "$FIXTURES/churn"   # else the probe's name is looked up in the forking shell
# The trace ends when the program exits (3 s on an idle machine); the
# duration is only a bound. Under a load of 40 on 2 CPUs the program took
# over 60 s with every call a stop: a 60 s trace then counted what it saw
# until its end, not what the program made after.
"$XGDBPROF" -d 300s -e 'set exact true; function "counted_call" { @calls = count(); }' \
	-o "$TMP/out-attached" "$CHURN" >"$TMP/attached.trace" 2>"$TMP/attached.err" & TRACER=$!
for _ in $(seq 1 200); do grep -q "attached 1 probe" "$TMP/attached.err" 2>/dev/null && break; sleep 0.05; done
touch "$TMP/go"
wait "$TRACER"; status=$?
wait "$CHURN" 2>/dev/null
truth=$(sed -n 's/^calls \([0-9]*\)$/\1/p' "$TMP/attached.out")
counted=$(sed -n 's/^@calls: \([0-9]*\)$/\1/p' "$TMP/attached.trace")
echo "  attached: the program counted ${truth:-?} calls (200 on its main thread, 6000 on 120 short-lived threads), the trace ${counted:-?}"
check "attached: xgdbprof exits 0 when the program exits" test "$status" -eq 0 || show "$TMP/attached.err"
check "attached: the trace ended at the program's exit, not at its duration" \
	grep -q "process $CHURN exited" "$TMP/attached.err" || show "$TMP/attached.err"
check "attached: the trace counts exactly the program's own calls, short-lived threads included" \
	test -n "$truth" -a "${counted:-x}" = "$truth" || show "$TMP/attached.trace"
finish
