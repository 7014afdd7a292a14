#!/usr/bin/env bash
# trace_panic_budget.sh — panic tracing keeps to the budget (issue 26 item
# 5: a service panicking 5 times a second was held 52% of the time), and
# says how many panics there were in all. panic_storm's two workers panic
# 100 times a second each (caught) and count their panics themselves.
# Attached for 3 s, in non-stop and all-stop mode:
# - the budget switched the probes off (said in a note);
# - the panics counted in the target at the panic hook's entry lie within
#   2x of the program's own count over the run (at most all of it), and the
#   map's estimate too;
# - the target held stopped at most 10% (the budget's 5% with room for a
#   loaded machine; a timing check: judged when other work left the CPUs);
# - afterwards the target's code equals its files, no thread is stopped,
#   and it keeps running.
# `--recipe panic`'s grouped report gives that total under its headline.
# `set exact true` still reports every panic, each with its location.
# Seen to fail on the commit before (ae0ad39): held 62-67%, no panic count;
# and with the hook's breakpoint inserted as not budgeted
# (`tracer_insert_breakpoint(t, a->hook, false, ...)` in tracer_arm.c).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck
panics_of() { sed -n 's/^panics \([0-9]*\).*/\1/p' "$1"; }

# its progress file on a RAM file system: tests/lib.sh, ram_tmp
ram_tmp
STORM_PROGRESS=$RAM_TMP/storm.progress
"$FIXTURES/panic_storm" 2 100 120 "$STORM_PROGRESS" >/dev/null 2>&1 &
STORM=$!
TEST_PIDS="$TEST_PIDS $STORM"
wait_for_file "$STORM_PROGRESS"
sleep 0.5

for mode in "" --all-stop; do
	name=${mode:-non-stop}
	load_begin "$STORM"
	xg_window "$name" "$STORM_PROGRESS" $mode -d 3s -e 'panic { @n = count(); @at[panic.location] = count(); }' "$STORM"
	rc=$?
	check "$name: xgdbprof ran (rc 0)" test "$rc" = 0 || show "$TMP/$name.err"
	truth=$(( $(panics_of "$TMP/after") - $(panics_of "$TMP/before") ))
	counted=$(sed -n 's/^note: panics: \([0-9]*\) in all, counted in the target.*/\1/p' "$TMP/$name.err")
	est=$(sed -n 's/^@n: [0-9]* measured · est\. \([0-9]*\) .*/\1/p' "$TMP/$name.out")
	held=$(sed -n 's/.*: [0-9]* hits* at .* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$TMP/$name.err")
	echo "# $name: ${counted:-?} panics counted in the target, @n est. ${est:-?}; the program's own count over the run: $truth; held ${held:-?}%"
	grep '^note: panics' "$TMP/$name.err" | sed 's/^/#   /'
	check "$name: the budget switched the panic probes off" grep -q '^note: probes were switched off' "$TMP/$name.err" ||
		show "$TMP/$name.err"
	check "$name: the panics counted are within 2x of the program's own (half of $truth to all of it)" \
		test -n "$counted" -a "${counted:-0}" -ge $(( truth / 2 )) -a "${counted:-0}" -le "$truth"
	check "$name: @n's estimate is within 2x of the program's own count ($truth)" \
		test -n "$est" -a "${est:-0}" -ge $(( truth / 2 )) -a "${est:-0}" -le $(( truth * 2 ))
	check "$name: the location map scales the same way" \
		grep -q '^@at\[.*panic_storm.rs:[0-9]*:[0-9]*\]: [0-9]* measured · est\. [0-9]' "$TMP/$name.out"
	check_timing "$name: the target was held stopped at most 10% (${held:-?}%)" \
		awk -v h="${held:-100}" 'BEGIN { exit !(h <= 10) }'
	sleep 0.3
	diffs=$("$CODECHECK" "$STORM")
	check "$name: the target's code equals its files afterwards ($diffs bytes differ)" test "$diffs" = 0
	check "$name: no thread of the target is left stopped" target_runs_free "$STORM" "$STORM_PROGRESS"
done
kill "$STORM" 2>/dev/null

# --recipe panic's grouped report says how many there were in all
# (the program's count from its file: its stdout is xgdbprof's, whose
# buffered report may cut its line)
"$XGDBPROF" --recipe panic -o "$TMP/grouped" -- "$FIXTURES/panic_storm" 2 100 3 "$TMP/grouped.progress" \
	>"$TMP/grouped.out" 2>"$TMP/grouped.err"
check "--recipe panic: xgdbprof ran (rc $?)" test $? = 0 || show "$TMP/grouped.err"
truth=$(panics_of "$TMP/grouped.progress")
all=$(sed -n 's/^    of \([0-9]*\) in all, counted in the target.*/\1/p' "$TMP/grouped.out")
echo "# --recipe panic: the report's total ${all:-none}, the program's own $truth"
check "--recipe panic: the grouped report gives the total, within 2x of the program's own ($truth)" \
	test -n "$all" -a "${all:-0}" -ge $(( truth / 2 )) -a "${all:-0}" -le "$truth" || show "$TMP/grouped.out"

# exact: every panic, each with its location
{ echo "set exact true"; echo 'panic { @n = count(); @at[panic.location] = count(); }'; } >"$TMP/exact.recipe"
"$XGDBPROF" --recipe "$TMP/exact.recipe" -- "$FIXTURES/panic_storm" 2 10 2 "$TMP/exact.progress" \
	>"$TMP/exact.out" 2>"$TMP/exact.err"
check "exact: xgdbprof ran (rc $?)" test $? = 0 || show "$TMP/exact.err"
truth=$(panics_of "$TMP/exact.progress")
n=$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$TMP/exact.out")
echo "# exact: @n ${n:-?}, the program's own count $truth"
check "exact: every panic reported (@n = $truth)" test -n "$truth" -a "${n:-x}" = "$truth" || show "$TMP/exact.out"
check "exact: no probe switched off" test -z "$(grep '^note: probes were switched off' "$TMP/exact.err")"
finish
