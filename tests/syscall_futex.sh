#!/usr/bin/env bash
# syscall_futex.sh — futex calls made through libc's syscall() (as
# parking_lot and Rust's std make them) get an exact estimate in the
# syscalls recipe's table under the budget (issue 26 item 3: futex was a
# lower bound, >=N of the few calls the armed windows saw, where strace
# counted thousands). The recipe counts syscall()'s calls in the target and
# sums their first argument (the call's number): a total of exactly the
# count times futex's number means every call was a futex. A probe that
# only counts and sums an argument register needs no breakpoint
# (docs/tracing.md, "A probe that only counts needs no breakpoint").
#
# The fixture (tests/fixtures/futex_pairs.c) is two pairs of threads
# handing a token back and forth through futex wait/wake, ~10^5 calls a
# second, and writes its own count every 20 ms; xg_window copies it when
# the probes are armed and when xgdbprof exits (the counters are read just
# before the detach, so the program's count runs on a little longer).
# Measured 2026-12-05, idle: est. 584,155 for the program's 757,891 (0.77);
# sum(arg0) 64,949,262 over 321,531 calls, 202 x. Mixed numbers (a gettid
# every 10th turn): the line under the table says so, and futex keeps the
# armed share's estimate. Mutation shown to fail: attributing syscall()'s
# calls by the rounded mean of their numbers (no exactness test) gave the
# mixed run's 538,157 calls to `time` (mean 201.2) and failed the mixed
# check.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
[ -x "$FIXTURES/futex_pairs" ] || skip_test "the futex_pairs fixture was not built"

# futex_row FILE: the est. calls cell of futex's row (the column before
# the call's name, present in every row under a budget)
futex_row() { awk '$NF == "futex" && $1 ~ /^[0-9.]+$/ { print $(NF-1); exit }' "$1"; }
progress_futex() { awk '{ print $2 }' "$1"; }

"$FIXTURES/futex_pairs" 60 2 0 "$TMP/pure.progress" >/dev/null 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/pure.progress"
sleep 0.5
xg_window pure "$TMP/pure.progress" --recipe syscalls -d 3s "$PID"
check "the syscalls run exits 0" test $? -eq 0 || show "$TMP/pure.err"
truth=$(($(progress_futex "$TMP/after") - $(progress_futex "$TMP/before")))
est=$(futex_row "$TMP/pure.out")
echo "  futex: est. ${est:-?} in the table; the program's own count over the armed window: $truth"
check "futex's est. calls is exact (a number, not a >= bound): '${est:-}'" \
	grep -Eq '^[0-9]+$' <<<"${est:-}" || show "$TMP/pure.out"
check "futex: est. ${est:-?} within 2x of the program's $truth" within_2x "${est:-0}" "$truth"
check "the table says futex's N is syscall()'s calls, their numbers summed" \
	grep -q "futex's N: the [0-9]* calls into syscall(), counted in the target with their numbers summed" \
	<(tr '\n' ' ' <"$TMP/pure.out" | tr -s ' ')
check "syscall() got a counter, no breakpoint (the probe only counts and sums)" \
	grep -q "1 breakpoint)" "$TMP/pure.err" || grep "attached" "$TMP/pure.err"

# A probe that only counts and sums, written by hand: the total and the
# count kept in the target; every number futex's (202 on x86-64).
"$XGDBPROF" -e 'function syscall { @numbers[func] = sum(arg0); } end { print(@numbers); }' -d 2s "$PID" \
	>"$TMP/sum.out" 2>"$TMP/sum.err"
check "the summing run exits 0" test $? -eq 0 || show "$TMP/sum.err"
line=$(tr '\n' ' ' <"$TMP/sum.out" | tr -s ' ' | grep -o "@numbers\[syscall\]: [0-9]* summed in the target over [0-9]* calls (exact; no breakpoint")
total=$(sed -n 's/.*: \([0-9]*\) summed in the target over \([0-9]*\) calls.*/\1/p' <<<"$line")
calls=$(sed -n 's/.*: \([0-9]*\) summed in the target over \([0-9]*\) calls.*/\2/p' <<<"$line")
echo "  sum(arg0) at syscall(): ${total:-?} over ${calls:-?} calls"
check "sum(arg0) is exact and totalled in the target, no breakpoint" test -n "$line" || show "$TMP/sum.out"
check "its total is 202 x its calls (${total:-?} = 202 x ${calls:-?})" \
	test -n "$calls" -a "${calls:-0}" -gt 1000 -a "$((202 * ${calls:-0}))" = "${total:-x}"
kill "$PID" 2>/dev/null

# Mixed numbers: a gettid through syscall() every 10th turn
"$FIXTURES/futex_pairs" 60 2 10 "$TMP/mixed.progress" >/dev/null 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/mixed.progress"
sleep 0.5
"$XGDBPROF" --recipe syscalls -d 2s "$PID" >"$TMP/mixed.out" 2>"$TMP/mixed.err"
check "the mixed run exits 0" test $? -eq 0 || show "$TMP/mixed.err"
check "mixed numbers are said under the table, attributed to no row" \
	grep -q "^syscall(): [0-9]* calls counted in the target, their numbers summing to [0-9]* (a mean of [0-9.]*): calls of more than one number, not attributed to any row" \
	"$TMP/mixed.out" || show "$TMP/mixed.out"
check "futex's N is not syscall()'s count then" \
	sh -c "! tr '\n' ' ' <'$TMP/mixed.out' | tr -s ' ' | grep -q \"futex's N: the\""
kill "$PID" 2>/dev/null
finish
