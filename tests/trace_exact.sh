#!/usr/bin/env bash
# Exact counts are exact: a launched program is held at its entry point
# until the probes are armed, so a trace of its whole life counts every call
# the program itself counts — the calls its main thread makes in its first
# microseconds and those of threads that live for a few hundred calls.
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
finish
