# trace_safety.sh — nothing left behind: SIGKILL to gdb mid-trace leaves
# the target running with its code bytes equal to the file; SIGTERM to
# xgdbprof mid-trace removes the breakpoints and still writes the report.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck

wait_attached() { for i in $(seq 1 400); do grep -q "attached" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# 1. gdb killed while probes are inserted (keyed by thread: a breakpoint
# and, under the budget, a counting jump; a probe that only counts would
# have no breakpoint)
TRACE_HOT_TRIGGER=$TMP/trigger "$FIXTURES/trace_hot" 60 >"$TMP/hot.out" &
HOT=$!
TEST_PIDS="$TEST_PIDS $HOT"
sleep 0.3
# on_trigger runs only when the test creates $TMP/trigger: its int3 sits in
# memory unhit until then. (A gdb killed while a thread sits in an unhandled
# breakpoint trap leaves that SIGTRAP to the target, which no rescue can
# take back: docs/safety.md. A probe that is not hit keeps that race out.)
"$XGDBPROF" -o "$TMP/o1" -e 'function "on_trigger" { @c[tid] = count(); }' "$HOT" >"$TMP/out1" 2>"$TMP/err1" &
XG=$!
check "probes armed" wait_attached "$TMP/err1"
GDB=$(pgrep -P "$XG" gdb | head -1)
check "found xgdbprof's gdb" test -n "$GDB"
[ -n "$GDB" ] && kill -9 "$GDB"
wait "$XG"
sed 's/^/# /' "$TMP/err1"
touch "$TMP/trigger"   # now on_trigger runs: an int3 left there would kill the target
for _ in $(seq 100); do grep -q triggered "$TMP/hot.out" && break; sleep 0.05; done
check "the probed function ran after the rescue" grep -q triggered "$TMP/hot.out"
check "target still alive after gdb died" kill -0 "$HOT"
state=$(awk '{print $3}' "/proc/$HOT/stat" 2>/dev/null)
check "target not left stopped (state $state)" test "$state" = R -o "$state" = S
check "code bytes equal the file" test "$("$CODECHECK" "$HOT")" = 0
# gdb steps over a breakpoint in place (displaced stepping is off), taking
# the int3 out meanwhile: killed then, the byte is already intact.
check "xgdbprof restored the byte under its breakpoint (or found it intact)" \
	grep -Eq "restored 1 code byte|restored 0 code bytes itself \(1 already intact" "$TMP/err1"

# 2. SIGTERM to xgdbprof: breakpoints removed, report written
"$XGDBPROF" -o "$TMP/o2" -e 'set exact true
function "hot_step" { @c = count(); }
end { print(@c); }' "$HOT" >"$TMP/out2" 2>"$TMP/err2" &
XG=$!
check "probes armed again" wait_attached "$TMP/err2"
sleep 0.5
kill -TERM "$XG"
wait "$XG"
sed 's/^/# /' "$TMP/out2" "$TMP/err2"
check "report written after SIGTERM" grep -q "^@c: [1-9]" "$TMP/out2"
check "target alive after SIGTERM" kill -0 "$HOT"
check "no breakpoint left in the code" test "$("$CODECHECK" "$HOT")" = 0
state=$(awk '{print $3}' "/proc/$HOT/stat" 2>/dev/null)
check "target running (state $state)" test "$state" = R -o "$state" = S
kill "$HOT" 2>/dev/null
finish
