#!/usr/bin/env bash
# Estimates under the stop budget contain the truth. steady_calls makes its
# calls at a steady pace of its own CPU time and prints how many it made;
# traced for its whole life under the default 5% budget, the probes are armed
# a small share of its CPU time and the count is printed as measured, with an
# estimate for the whole run and its 95% interval. That interval must hold
# the program's own count — in at least 2 of 3 runs, since a 95% interval
# misses one run in twenty by design. When calls come faster than a stop per
# call can time, the estimate is printed as a lower bound, which must hold.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

trace_run() {   # trace_run NAME WORK_US
	"$XGDBPROF" -e 'function "counted_call" { @calls = count(); }' \
		-o "$TMP/out-$1" -- "$FIXTURES/steady_calls" 2 "$2" 3 >"$TMP/$1.out" 2>"$TMP/$1.err"
}

held=0
for i in 1 2 3; do
	trace_run "paced-$i" 2000
	truth=$(sed -n 's/^calls \([0-9]*\)$/\1/p' "$TMP/paced-$i.out")
	line=$(grep '^@calls:' "$TMP/paced-$i.out")
	read -r low high < <(sed -n 's/.*est\. [0-9]* (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2/p' <<<"$line")
	echo "  run $i: the program made ${truth:-?} calls; $line"
	if [ -n "$truth" ] && [ -n "$low" ] && [ "$low" -le "$truth" ] && [ "$truth" -le "$high" ]; then
		held=$((held + 1))
	fi
done
check "a call every 2 ms of CPU: the estimate's 95% interval holds the program's own count in >= 2 of 3 runs" \
	test "$held" -ge 2 || show "$TMP/paced-1.err"
check "the estimate is printed with the armed share of the target's CPU time" \
	grep -q "probes armed .*% of the target's CPU time" "$TMP/paced-1.out"

trace_run fast 2
truth=$(sed -n 's/^calls \([0-9]*\)$/\1/p' "$TMP/fast.out")
line=$(grep '^@calls:' "$TMP/fast.out")
bound=$(sed -n 's/.*est\. at least \([0-9]*\).*/\1/p' <<<"$line")
echo "  fast: the program made ${truth:-?} calls; $line"
check "a call every 2 us of CPU: the estimate is only a lower bound, and says so" test -n "$bound" \
	|| show "$TMP/fast.out"
check "... and the bound holds" test -n "$truth" -a "${bound:-0}" -le "${truth:-0}"
finish
