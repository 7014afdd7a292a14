# trace_panic.sh — every Rust panic, caught or not, with its exact message
# and file:line:col (the fixture prints what std will report).
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
require_tool python3 python3
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

# --recipe panic's report: panics grouped by location, the most frequent
# first, with their counts and messages; the stack root first with the
# runtime's frames folded; every line within 80 columns.
GO2=$TMP/go2
( for i in $(seq 1 400); do grep -q "attached" "$TMP/groups.err" 2>/dev/null && break; sleep 0.05; done; touch "$GO2" ) &
COLUMNS=80 "$XGDBPROF" -o "$TMP/groups" --recipe panic -- "$FIXTURES/panic_groups" "$GO2" \
	>"$TMP/groups.txt" 2>"$TMP/groups.err"
check "--recipe panic on panic_groups exits 0" test $? -eq 0 || show "$TMP/groups.err"
wait
sed -n '/^@panics/,$p' "$TMP/groups.txt" >"$TMP/report"
sed 's/^/# /' "$TMP/report"
# what the fixture says std reported: location | message, counted by location
grep '^EXPECT ' "$TMP/groups.txt" | sed 's/^EXPECT //' >"$TMP/expected2"
parse_at=$(grep '| bad record' "$TMP/expected2" | sed 's/ |.*//' | sort -u)
flush_at=$(grep '| batch was empty' "$TMP/expected2" | sed 's/ |.*//' | sort -u)
check "the fixture panicked 5 times at one place and 2 at another" \
	test "$(grep -c "^$parse_at |" "$TMP/expected2")" -eq 5 -a "$(grep -c "^$flush_at |" "$TMP/expected2")" -eq 2
check "report: 7 panics at 2 locations" grep -qx '@panics: 7 panics at 2 locations, most frequent first' "$TMP/report"
check "report: #1 is the 5 panics at file:line:col" grep -qxF "#1  5 panics at $parse_at" "$TMP/report"
check "report: #2 is the 2 panics at file:line:col" grep -qxF "#2  2 panics at $flush_at" "$TMP/report"
group() { sed -n "/^#$1 /,/^#$(($1 + 1)) /p" "$TMP/report" | grep -v "^#$(($1 + 1)) "; }
check "report: 3 of #1's 5 messages, then how many more" \
	test "$(group 1 | grep -c '^      1× bad record [0-4]$')" -eq 3 -a "$(group 1 | grep -c '^      … 2 other messages$')" -eq 1
check "report: #2's one message counted twice" grep -qx '      2× batch was empty' "$TMP/report"
# root first: the thread's closure, then parse_record, then fail (the leaf of
# the user's code); the std frames around them folded
first_line() { group 1 | grep -n "$1" | head -1 | cut -d: -f1; }
c=$(first_line 'panic_groups::main::{closure} (')
p=$(first_line 'panic_groups::parse_record (')
f=$(first_line 'panic_groups::fail (')
check "report: #1's stack root first (closure, parse_record, fail)" test -n "$c" -a -n "$p" -a -n "$f" && test "$c" -lt "$p" -a "$p" -lt "$f"
check "report: the stack starts and ends with the runtime folded" \
	test "$(group 1 | sed -n '/stack, root first/{n;p}')" != "" -a \
	"$(group 1 | sed -n '/stack, root first/{n;p}' | grep -c '^      … [0-9]* runtime frames$')" -eq 1 -a \
	"$(group 1 | tail -1 | grep -c '^      … [0-9]* runtime frames$')" -eq 1
check "report: no std/core/panic machinery frame shown" \
	sh -c "! grep -E '(std|core)::|rust_panic|rust_begin_unwind|_Unwind_|lang_start|start_thread' '$TMP/report'"
widest=$(python3 -c 'import sys; print(max(len(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")))' "$TMP/report")
check "report: every line within 80 columns (widest $widest)" test "$widest" -le 80
finish
