# canary.sh — the harm oracle sees harm: tests/harm_check.sh passes an
# untouched canary (and one a careful gdb stopped and left), and reports each
# kind of harm a plain gdb injects: rewritten registers, a changed code byte,
# a tracer still attached, a child killed, an int3 left in ld.so's hooks.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
. "$TOP_SRCDIR/tests/harm_check.sh"
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck
GDB_BATCH="timeout 30 gdb -nx -q -batch"

start_canary() {   # start_canary NAME [ARGS...]: sets CANARY and STATUS
	STATUS=$TMP/status.$1
	shift
	"$FIXTURES/canary" "$STATUS" "$@" >"$STATUS.out" 2>&1 &
	CANARY=$!
	TEST_PIDS="$TEST_PIDS $CANARY"
	wait_for_file "$STATUS"
}
judge() {   # runs the oracle on the canary; HARMS is how many harms it found
	harm_check "$CANARY" "$STATUS" "$CODECHECK" >"$TMP/verdict"
	HARMS=$?
	sed 's/^/# /' "$TMP/verdict"
}
said() { grep -q -- "$1" "$TMP/verdict"; }

# 1. Left alone, forking children and exec'ing itself.
start_canary alone fork-every 50 exec-after 300
sleep 0.8
judge
check "an untouched canary is unharmed" test "$HARMS" = 0
check "it exec'd itself" test "$(harm_field "$STATUS" generation)" = 1
check "it forked children" test "$(harm_field "$STATUS" children)" -gt 0
check "it loaded and unloaded libm" test "$(harm_field "$STATUS" dlopens)" -gt 0
kill "$CANARY"

# 2. A careful gdb (displaced stepping off, as xgdbprof runs it: gdb 13's
# out-of-line step over canary_step's RIP-relative first instruction
# corrupts other threads' registers now and then, docs/safety.md) stops it
# at canary_step and leaves cleanly: no harm.
start_canary gdb
$GDB_BATCH -iex 'set displaced-stepping off' -p "$CANARY" -ex 'break canary_step' -ex 'continue' -ex 'continue' \
	-ex 'delete' -ex 'detach' >"$TMP/gdb.out" 2>&1
check "gdb stopped at canary_step" grep -q "canary_step" "$TMP/gdb.out"
judge
check "stopped at breakpoints and left cleanly: unharmed" test "$HARMS" = 0

# 3. Registers rewritten while it was stopped.
$GDB_BATCH -p "$CANARY" -ex 'break canary_step' -ex 'continue' -ex 'set $r12 = 1' \
	-ex 'set $rcx = 2' -ex 'delete' -ex 'detach' >/dev/null 2>&1
sleep 0.1
judge
check "rewritten registers reported" said "register(s) harmed"
check "the first one named (rcx, checked before r12)" said "rcx expected"

# 4. A code byte changed where it never runs (_init ran at startup).
start_canary code
$GDB_BATCH -p "$CANARY" -ex 'set *(unsigned char *)_init = 0xcc' -ex 'detach' >/dev/null 2>&1
judge
check "a changed code byte reported" said "code byte(s) differ"

# 5. A tracer still attached, holding it stopped.
start_canary held
gdb -nx -q -batch -p "$CANARY" -ex 'shell sleep 30' >/dev/null 2>&1 &
HOLDER=$!
TEST_PIDS="$TEST_PIDS $HOLDER"
all_stopped() {   # every thread of $1 in state t (gdb attaches them one by one)
	local task
	for task in /proc/"$1"/task/*; do
		[ "$(harm__state "$task")" = t ] || return 1
	done
}
for i in $(seq 1 200); do all_stopped "$CANARY" && break; sleep 0.05; done
judge
check "a tracer still attached reported" said "still traced"
check "threads left stopped reported" said "left stopped"
check "no progress reported" said "no progress"
kill -9 "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null

# 6. A child that did not exit normally (each lives 30 ms: killed until one
# is caught alive).
start_canary child fork-every 20
for i in $(seq 1 300); do
	[ "$(harm_field "$STATUS" abnormal_children)" = 0 ] || break
	for CHILD in $(pgrep -P "$CANARY"); do kill -9 "$CHILD" 2>/dev/null; done
	sleep 0.01
done
judge
check "an abnormal child reported" said "abnormal child"

# 7. gdb SIGKILLed while the process runs: its internal breakpoints in ld.so's
# debugger hooks stay, and the next dlopen dies of SIGTRAP there.
start_canary ldso dlopen-every 10
gdb -nx -q -batch -p "$CANARY" -ex 'echo READY\n' -ex 'continue' >"$TMP/gdb7.out" 2>&1 &
KILLED_GDB=$!
TEST_PIDS="$TEST_PIDS $KILLED_GDB"
# Killed once attached and running on (not mid-attach, which leaves the
# process group-stopped instead).
for i in $(seq 1 400); do grep -q READY "$TMP/gdb7.out" && break; sleep 0.05; done
sleep 0.5
kill -9 "$KILLED_GDB"
wait "$KILLED_GDB" 2>/dev/null
wait_exit "$CANARY" 5
judge
check "death by a leftover int3 reported" said "is dead: SIGTRAP rip="
finish
