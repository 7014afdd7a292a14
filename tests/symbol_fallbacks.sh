#!/usr/bin/env bash
# Executables whose symbols are not where /proc/PID/maps says: a report says
# so in a note instead of leaving bare addresses unexplained.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99

start_copy() {   # start_copy PATH: runs a copy of the recurse fixture; sets PID and PROGRESS
	PROGRESS=$TMP/progress.$RANDOM
	"$1" "$PROGRESS" 10 &
	PID=$!
	TEST_PIDS="$TEST_PIDS $PID"
	wait_for_file "$PROGRESS"
}

profile() {   # profile NAME: the default report of PID into $TMP/NAME.out
	"$XGDBPROF" -d 2s -o "$TMP/out-$1" "$PID" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		{ echo "  xgdbprof failed:"; show "$TMP/$1.err"; return 1; }
}

# A stripped executable: addresses only, and a note naming the file and the fix.
cp "$FIXTURES/recurse" "$TMP/stripped"
strip "$TMP/stripped"
start_copy "$TMP/stripped"
if profile stripped; then
	check "stripped: a note says there are no symbols, and how to get them" \
		grep -qF "note: no symbols in $TMP/stripped (stripped; install debug symbols or build with -g)" \
		"$TMP/stripped.out" || show "$TMP/stripped.out"
else
	not_ok "stripped: profiling failed"
fi
check "stripped: target runs free afterwards" target_runs_free "$PID" "$PROGRESS"
kill "$PID"

# An executable deleted after it started: its symbols are not read yet (the
# /proc/PID/exe fallback is still to come), but a note says why.
cp "$FIXTURES/recurse" "$TMP/deleted"
start_copy "$TMP/deleted"
rm "$TMP/deleted"
if profile deleted; then
	check "deleted: a note says the executable was deleted" \
		grep -q "note: .*$TMP/deleted (deleted).*deleted" "$TMP/deleted.out" || show "$TMP/deleted.out"
	check "deleted: not called stripped" eval '! grep -q "(stripped;" "$TMP/deleted.out"'
else
	not_ok "deleted: profiling failed"
fi
kill "$PID"

# The same executable with its symbols: no such note.
start_copy "$FIXTURES/recurse"
if profile unstripped; then
	check "with symbols: frames named, no 'no symbols' note" \
		eval 'grep -q "descend" "$TMP/unstripped.out" && ! grep -q "no symbols in" "$TMP/unstripped.out"' ||
		show "$TMP/unstripped.out"
else
	not_ok "with symbols: profiling failed"
fi
kill "$PID"
finish
