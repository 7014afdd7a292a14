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

# Deeper than a walk goes (2 frames a level: the frame limit and the stack
# copied at the stop): the note counts the cut walks out of the walks made.
# It said "1 of 0 walked stacks" when it divided by the samples kept, which
# leave out walks the landing rules drop.
"$FIXTURES/recurse" "$TMP/deep.progress" 2000 &
DEEP=$!
TEST_PIDS="$TEST_PIDS $DEEP"
wait_for_file "$TMP/deep.progress"
"$XGDBPROF" --recipe hot-cpu -d 1s -o "$TMP/out-deep" "$DEEP" >"$TMP/deep.out" 2>"$TMP/deep.err"
cut_of_walked() {   # "N M" from the note "N of M walked stacks end before ..."
	tr '\n' ' ' <"$1" | sed 's/  */ /g' | sed -n 's/.* \([0-9][0-9]*\) of \([0-9][0-9]*\) walked stacks end before.*/\1 \2/p'
}
read -r CUT WALKED <<<"$(cut_of_walked "$TMP/deep.out")"
check "a walk deeper than the limit is said cut: $CUT of $WALKED walked stacks, at least 1 and no more than walked" \
	test "${CUT:-0}" -ge 1 -a "${WALKED:-0}" -ge "${CUT:-1}" || show "$TMP/deep.out"
check "deep target runs free afterwards" target_runs_free "$DEEP" "$TMP/deep.progress"
finish
