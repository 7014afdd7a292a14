# locks_malloc_arena.sh — `--recipe locks` names glibc's malloc arena lock
# (__lll_lock_wait_private) and the allocation site that waits on it, on
# a fixture whose threads malloc/free in one arena (MALLOC_ARENA_MAX=1),
# where perf shows the private lock's frames (issue 26 item 4).
# Mutation: drop "(_private)?" from the locks recipe's function and return
# patterns (recipes/locks.recipe): "a malloc arena lock row" fails.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
MALLOC_ARENA_MAX=1 "$FIXTURES/glibc_churn" 6 40 >"$TMP/churn.out" 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
sleep 1
# perf first (one tracer at a time is not needed for perf, but it keeps
# the two views apart): the private lock's frames must be there to find.
if command -v perf >/dev/null && perf record -q -o "$TMP/probe.data" -F 99 -- true >/dev/null 2>&1; then
	perf record -q -F 499 -g -p "$PID" -o "$TMP/perf.data" -- sleep 2 >/dev/null 2>&1
	frames=$(perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null | grep -c '__lll_lock_wa[ik][te]_private')
	echo "  perf: ${frames:-0} frames in __lll_lock_wait_private/__lll_lock_wake_private"
	check "perf sees the malloc arena lock's frames (the fixture contends)" sh -c "[ '${frames:-0}' -gt 0 ]"
else
	echo "ok - skipped: perf cannot record here (perf_event_paranoid or no perf)"
fi
"$XGDBPROF" --recipe locks -d 3s "$PID" >"$TMP/out.txt" 2>"$TMP/err"
check "xgdbprof exits 0" test $? -eq 0 || show "$TMP/err"
sed 's/^/# /' "$TMP/out.txt" | head -30
check "a malloc arena lock row" grep -q "glibc private lock (malloc arena" "$TMP/out.txt" || show "$TMP/out.txt"
check "its waits are taken at the fixture's allocation sites (malloc's internals folded)" \
	grep -qE "taken at glibc_churn\.c:[0-9]+" "$TMP/out.txt"
check "the waiting allocation site's function is named" grep -qE "^ +in (churn_page|churn_small|leak_block) " "$TMP/out.txt"
kill -0 "$PID" 2>/dev/null
check "the target still runs" test $? -eq 0
finish
