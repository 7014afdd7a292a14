# trace_panic.sh — every Rust panic, caught or not, with its exact message
# and file:line:col (the fixture prints what std will report).
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
GO=$TMP/go
( for i in $(seq 1 400); do grep -q "attached" "$TMP/err" 2>/dev/null && break; sleep 0.05; done; touch "$GO" ) &
"$XGDBPROF" -o "$TMP/out" -e 'panic { printf("PANIC %s | %s | %s\n", panic.location, panic.message, thread.name); }' \
	-- "$FIXTURES/trace_panic" "$GO" >"$TMP/out.txt" 2>"$TMP/err"
rc=$?
wait
cat "$TMP/out.txt" | sed 's/^/# /'
grep '^EXPECT ' "$TMP/out.txt" | sed 's/^EXPECT //' >"$TMP/expected"
grep '^PANIC ' "$TMP/out.txt" | sed 's/^PANIC //; s/ | [^|]*$//' >"$TMP/got"
check "fixture announced 8 panics" test "$(wc -l <"$TMP/expected")" -eq 8
check "8 panics reported (7 caught + 1 uncaught)" test "$(wc -l <"$TMP/got")" -eq 8
check "messages and locations match exactly, in order" cmp -s "$TMP/expected" "$TMP/got"
check "worker thread names reported" grep -q '^PANIC .* | worker-2$' "$TMP/out.txt"
check "the uncaught panic ends the fixture with status 101" grep -q "status 101" "$TMP/err"
finish
