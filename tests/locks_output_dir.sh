# locks_output_dir.sh — `--recipe locks -o DIR` keeps what it printed: a
# trace that writes no file of its own saves its report as DIR/report.txt
# and names it (issue 26 item 4: it created nothing and said nothing).
# Mutation: drop the save_report_copy(rc) call in src/cli/cmd_run.c:
# "DIR/report.txt written" fails.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
"$FIXTURES/contend" 4 30 "$TMP/progress" >/dev/null 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
sleep 0.5
"$XGDBPROF" --recipe locks -d 2s -o "$TMP/out" "$PID" >"$TMP/stdout.txt" 2>"$TMP/err"
check "xgdbprof exits 0" test $? -eq 0 || show "$TMP/err"
check "DIR/report.txt written" test -f "$TMP/out/report.txt" || show "$TMP/err"
check "report.txt is the report printed" cmp -s "$TMP/stdout.txt" "$TMP/out/report.txt"
check "the report names the contended lock" grep -q "contended lock .* taken at contend.c" "$TMP/out/report.txt" ||
	show "$TMP/stdout.txt"
check "the run says where it saved the report" grep -q "^xgdbprof: output saved in $TMP/out: report.txt$" "$TMP/err" ||
	show "$TMP/err"
kill -0 "$PID" 2>/dev/null
check "the target still runs" test $? -eq 0
finish
