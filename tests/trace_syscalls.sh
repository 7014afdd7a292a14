# trace_syscalls.sh — the syscalls recipe counts a fixture's write(2) calls
# exactly (exact mode), with durations and results.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
GO=$TMP/go
{ echo "set exact true"; cat "$TOP_SRCDIR/recipes/syscalls.recipe"; } >"$TMP/syscalls.recipe"
( for i in $(seq 1 400); do grep -q "attached" "$TMP/err" 2>/dev/null && break; sleep 0.05; done; touch "$GO" ) &
"$XGDBPROF" -o "$TMP/out" --recipe "$TMP/syscalls.recipe" -- "$FIXTURES/trace_write" "$GO" >"$TMP/out.txt" 2>"$TMP/err"
wait
sed 's/^/# /' "$TMP/out.txt" | head -40
check "@calls[write] is exactly 50" grep -qx "@calls\[write\]: 50" "$TMP/out.txt"
check "time spent in write is recorded" grep -q "^@time_ns\[write\]: [1-9]" "$TMP/out.txt"
check "no write failed" sh -c "! grep -q '^@errors\[write' '$TMP/out.txt'"
check "latency histograms per syscall" grep -q "^@latency_ns\[write\]" "$TMP/out.txt"

# Calls our own stops interrupt: the kernel restarts them (ERESTARTSYS and
# kin, which the program never sees), so each is one call, with no error,
# and a sleep restarted through restart_syscall is still the sleep.
"$XGDBPROF" -o "$TMP/out-sleep" --recipe "$TMP/syscalls.recipe" -- "$FIXTURES/sleepers" 3 60 \
	>"$TMP/sleep.txt" 2>"$TMP/sleep.err"
check "sleepers: xgdbprof and the command exit 0" test $? -eq 0 || show "$TMP/sleep.err"
truth=$(sed -n 's/^clock_nanosleep \([0-9]*\)$/\1/p' "$TMP/sleep.txt")
counted=$(sed -n 's/^@calls\[clock_nanosleep\]: \([0-9]*\)$/\1/p' "$TMP/sleep.txt")
restarted=$(sed -n "s/^xgdbprof: \\([0-9]*\\) system calls* w[a-z]* restarted after our stops.*/\\1/p" "$TMP/sleep.err")
echo "  clock_nanosleep: the program made ${truth:-?}, the trace counted ${counted:-?}; ${restarted:-no} calls restarted after our stops"
check "sleepers: every clock_nanosleep counted once" test -n "$truth" -a "${counted:-x}" = "$truth" ||
	show "$TMP/sleep.txt"
check "sleepers: no restart shows up as a call of its own" \
	sh -c "! grep -q '^@calls\[restart_syscall\]' '$TMP/sleep.txt'"
check "sleepers: no error from our own stops (ERESTART*, or a number for a name)" \
	sh -c "! grep -E '^@errors\[.*(E\?|-51[2-6])' '$TMP/sleep.txt'" || show "$TMP/sleep.txt"
check "sleepers: errors are named (the waiter's timeouts: ETIMEDOUT)" \
	grep -q '^@errors\[futex, ETIMEDOUT\]: [1-9]' "$TMP/sleep.txt"
finish
