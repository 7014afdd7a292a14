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
# Fails on the generic table() the recipe printed before (issue 26 item 3).
check "the default report is strace -c's table: % time, seconds, usecs/call, calls, errors, syscall" \
	grep -qE '^% time +seconds +usecs/call +calls +errors +syscall$' "$TMP/out.txt" || show "$TMP/out.txt"
check "...with a total row, as strace's" grep -qE '^100\.00 +[0-9]+\.[0-9]{6} +[0-9]+ +[0-9]+ +[0-9]* *total$' "$TMP/out.txt"
check "@calls[write] is exactly 50" test "$(syscall_table_cell write calls "$TMP/out.txt")" = 50
check "time spent in write is recorded, in seconds" \
	python3 -c "import sys; sys.exit(not float(sys.argv[1] or 0) > 0)" "$(syscall_table_cell write seconds "$TMP/out.txt")"
check "no write failed" sh -c "! grep -q '^errors of write:' '$TMP/out.txt'"
check "latency histograms per syscall" grep -q "^@latency_ns\[write\]" "$TMP/out.txt"

# Calls our own stops interrupt: the kernel restarts them (ERESTARTSYS and
# kin, which the program never sees), so each is one call, with no error,
# and a sleep restarted through restart_syscall is still the sleep.
"$XGDBPROF" -o "$TMP/out-sleep" --recipe "$TMP/syscalls.recipe" -- "$FIXTURES/sleepers" 3 60 \
	>"$TMP/sleep.txt" 2>"$TMP/sleep.err"
check "sleepers: xgdbprof and the command exit 0" test $? -eq 0 || show "$TMP/sleep.err"
truth=$(sed -n 's/^clock_nanosleep \([0-9]*\)$/\1/p' "$TMP/sleep.txt")
counted=$(syscall_table_cell clock_nanosleep calls "$TMP/sleep.txt")
restarted=$(sed -n "s/^xgdbprof: \\([0-9]*\\) system calls* w[a-z]* restarted after our stops.*/\\1/p" "$TMP/sleep.err")
echo "  clock_nanosleep: the program made ${truth:-?}, the trace counted ${counted:-?}; ${restarted:-no} calls restarted after our stops"
check "sleepers: every clock_nanosleep counted once" test -n "$truth" -a "${counted:-x}" = "$truth" ||
	show "$TMP/sleep.txt"
check "sleepers: no restart shows up as a call of its own" \
	test -z "$(syscall_table_cell restart_syscall calls "$TMP/sleep.txt")"
check "sleepers: no error from our own stops (ERESTART*, or a number for a name)" \
	sh -c "! grep -E '^errors of .*(E\?|-51[2-6])' '$TMP/sleep.txt'" || show "$TMP/sleep.txt"
check "sleepers: errors are named (the waiter's timeouts: ETIMEDOUT)" \
	grep -Eq '^errors of futex: (.*, )?ETIMEDOUT [1-9]' "$TMP/sleep.txt"

# strace, the ground truth of system calls, on the same command (ptrace
# allows one tracer: one run after the other). The sleepers' own calls are
# the same in both runs: clock_nanosleep every time, futex's timed waits
# ending in ETIMEDOUT about as often. Every call our table names must be
# one strace saw (nothing of our own making), with no error strace did not
# see; strace also sees ld.so's calls before the entry point, where our
# trace begins.
check "strace is installed (./dev installs it for the tests)" sh -c "command -v strace >/dev/null"
{
	strace -f -qq -c -U name,calls,errors -o "$TMP/strace.txt" "$FIXTURES/sleepers" 3 60 >/dev/null 2>&1
	st() { awk -v key="$1" -v col="$2" '$1 == key { print ($col == "" ? 0 : $col) }' "$TMP/strace.txt"; }
	echo "  strace: clock_nanosleep $(st clock_nanosleep 2) calls, futex $(st futex 2) calls $(st futex 3) errors"
	check "strace: clock_nanosleep counted as strace counts it ($(st clock_nanosleep 2))" \
		test "${counted:-x}" = "$(st clock_nanosleep 2)"
	ours=$(awk '!table && $NF == "syscall" && $1 == "%" { table = 1; next } table && /^------/ { if (++rules == 2) exit; next } table { print $NF }' \
		"$TMP/sleep.txt")
	unseen=$(for name in $ours; do [ -n "$(st "$name" 2)" ] || echo "$name"; done)
	check "strace: every call in our table is one strace saw (not seen by strace: ${unseen:-none})" \
		test -n "$ours" -a -z "$unseen"
	our_errors=$(syscall_table_cell futex errors "$TMP/sleep.txt")
	check "strace: futex's errors as strace counts them within 20% (ours ${our_errors:-0}, strace $(st futex 3))" \
		python3 -c "import sys; a, b = float(sys.argv[1] or 0), float(sys.argv[2] or 0); sys.exit(not (b > 0 and abs(a - b) <= 0.2 * b))" \
		"${our_errors:-0}" "$(st futex 3)"
	extra=$(for name in $ours; do
		e=$(syscall_table_cell "$name" errors "$TMP/sleep.txt"); [ -z "$e" ] || [ "$e" = 0 ] || [ "$(st "$name" 3)" != 0 ] || echo "$name"
	done)
	check "strace: no call has errors in our table that strace saw none of (${extra:-none})" test -z "$extra"
}
finish
