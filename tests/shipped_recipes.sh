#!/usr/bin/env bash
# The shipped tracing recipes, run as a user would (--recipe NAME), end to end
# on fixtures: panic, sled-insert, func-latency. (syscalls: trace_syscalls.sh.)
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

go_when_attached() {   # go_when_attached ERRFILE GOFILE: release a fixture once probes are in
	( for i in $(seq 1 400); do grep -q "attached" "$1" 2>/dev/null && break; sleep 0.05; done; touch "$2" ) &
	GO_PID=$!
}

# panic: every panic (7 caught in worker threads, 1 uncaught) with message and location.
go_when_attached "$TMP/panic.err" "$TMP/go1"
"$XGDBPROF" -o "$TMP/panic" --recipe panic -- "$FIXTURES/trace_panic" "$TMP/go1" >"$TMP/panic.txt" 2>"$TMP/panic.err"
status=$?
wait "$GO_PID"
check "panic recipe: xgdbprof exits with the fixture's status (101)" test "$status" -eq 101
want=$(grep -c '^EXPECT ' "$TMP/panic.txt")
got=$(grep -c '^thread .* panicked at .*trace_panic.rs:[0-9]*:[0-9]*: ' "$TMP/panic.txt")
check "panic recipe: every panic reported ($got of $want)" test "$got" -eq "$want" -a "$want" -gt 1
check "panic recipe: formatted messages read from the payload" grep -q 'panicked at .*: called `Result::unwrap()` on an `Err` value: "bad input 1"$' "$TMP/panic.txt"
check "panic recipe: @panics groups by location (8 panics at 4)" grep -qx '@panics: 8 panics at 4 locations, most frequent first' "$TMP/panic.txt"
check "panic recipe: 3 panics at each worker location" \
	test "$(grep -c '^#[12]  3 panics at .*trace_panic.rs:[0-9]*:[0-9]*$' "$TMP/panic.txt")" -eq 2
grep 'panicked at' "$TMP/panic.txt" | head -3 | sed 's/^/  /'

# sled-insert on the cache service: calls, latency, callers of every instance.
"$FIXTURES/cache-service" 120 --progress "$TMP/demo.progress" >/dev/null &
DEMO=$!
TEST_PIDS="$TEST_PIDS $DEMO"
wait_for_file "$TMP/demo.progress"
"$XGDBPROF" -o "$TMP/sled" -d 3s --recipe sled-insert "$DEMO" >"$TMP/sled.txt" 2>"$TMP/sled.err"
check "sled-insert: exits 0" test $? -eq 0
check "sled-insert: attached to every instance" grep -q 'attached .* probes' "$TMP/sled.err"
check "sled-insert: counted calls" grep -q '^@calls: [1-9]' "$TMP/sled.txt"
# A bucket "[LOW, HIGH)", or "[0]"/"[1]": a call read as taking no time once
# the cost of our own stops is taken out (docs/tracing.md).
check "sled-insert: latency histogram" grep -q '^\[[0-9]*[KMG]*\(, [0-9]*[KMG]*)\|\]\) *[1-9]' "$TMP/sled.txt"
check "sled-insert: callers are the two workers" grep -q 'cache_service::\(insert\|session\)_worker' "$TMP/sled.txt"
# a finished report: calls by thread as a table whose est. column holds the
# calls counted in the target behind each thread's hits (with the share by
# them), not the raw @by_thread map (issue 29 item 6)
check "sled-insert: calls by thread in a table, the workers' estimates from the counted calls" \
	sh -c "grep -q '^calls by thread:' '$TMP/sled.txt' && ! grep -q '^@by_thread' '$TMP/sled.txt' &&
		grep -Eq '^ *[0-9.]+ +[0-9]+ +[0-9]{4,} +(insert|session)-worker\$' '$TMP/sled.txt' &&
		grep -q 'weighed by the calls counted in the target' '$TMP/sled.txt'" || show "$TMP/sled.txt"
check "sled-insert: the budget note says what was measured" grep -q 'note: .*probes were switched off\|note: function entries' "$TMP/sled.err"
check "sled-insert: target runs free, no breakpoint left" target_runs_free "$DEMO" "$TMP/demo.progress"
sed -n '/^@calls/,/^$/p' "$TMP/sled.txt" | head -3 | sed 's/^/  /'

# func-latency, parameterised with -D.
go_when_attached "$TMP/func.err" "$TMP/go2"
"$XGDBPROF" -o "$TMP/func" --recipe func-latency -D FUNC=trace_tree::tree::Tree::insert \
	-- "$FIXTURES/trace_tree" "$TMP/go2" >"$TMP/func.txt" 2>"$TMP/func.err"
check "func-latency: exits with the fixture's status (0)" test $? -eq 0
wait "$GO_PID"
check "func-latency: names the function it measured" grep -q '^latency of trace_tree::tree::Tree::insert:' "$TMP/func.txt"
check "func-latency: counts calls per thread" grep -q '^@calls\[.*\]: [1-9]' "$TMP/func.txt"
"$XGDBPROF" -o "$TMP/func2" --recipe func-latency -- "$FIXTURES/trace_tree" "$TMP/go2" >"$TMP/nodef.txt" 2>"$TMP/nodef.err"
check "func-latency without -D: exit 2 naming -D FUNC=" sh -c "test $? -eq 2 && grep -q 'D FUNC=' '$TMP/nodef.err'"
finish
