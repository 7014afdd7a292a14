#!/usr/bin/env bash
# Recursive stacks keep one frame per call, with either walker (`set exact
# true`: gdb's unwinder) and in tracing: a recursive function returns to the
# same pc in every frame, and only inline frames at one pc may be folded.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

PROGRESS=$TMP/progress
"$FIXTURES/recurse" "$PROGRESS" 10 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$PROGRESS" || { not_ok "recurse fixture did not start"; finish; }

# Every stack printed through hot_leaf (the recipe's @[ustack] map, one
# frame a line): 11 descend calls with the 10 inlined steps between them.
stacks_ok() {   # stacks_ok OUTPUT
	awk '/^@\[/ { d = s = leaf = 0; next }
		$1 == "hot_leaf" { leaf = 1; seen = 1 }
		$1 == "descend" { d++ }
		$1 == "step" { s++ }
		/^\]:/ && leaf && (d != 11 || s != 10) { print "  " d " descend and " s " step frames (want 11 and 10)"; bad = 1 }
		END { if (!seen) print "  no stack through hot_leaf"; exit bad || !seen }' "$1"
}

for mode in exact fast; do
	set_exact=""
	[ "$mode" = exact ] && set_exact="set exact true;"
	if "$XGDBPROF" -e "$set_exact sample { @[ustack] = count(); }" -d 1s -o "$TMP/out-$mode" "$PID" \
		>"$TMP/sample-$mode" 2>"$TMP/err"; then
		check "sampling ($mode walker): one frame per recursive call, inline frames once" \
			stacks_ok "$TMP/sample-$mode" || show "$TMP/sample-$mode"
	else
		not_ok "sampling ($mode walker) failed"; show "$TMP/err"
	fi
done

if "$XGDBPROF" -e 'set exact true; function "hot_leaf" { @[ustack] = count(); }' -d 3s -o "$TMP/out-trace" \
	"$PID" >"$TMP/trace" 2>"$TMP/err"; then
	check "tracing (exact): one frame per recursive call, inline frames once" stacks_ok "$TMP/trace" ||
		show "$TMP/trace"
else
	not_ok "tracing (exact) failed"; show "$TMP/err"
fi
check "target runs free afterwards" target_runs_free "$PID" "$PROGRESS"
finish
