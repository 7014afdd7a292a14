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
finish
