#!/usr/bin/env bash
# Reports that read at 80 columns (issue 17, item 3): every shipped recipe
# that applies runs against the demo (cache-service) with COLUMNS=80, and no
# line of its standard output may be wider than 80 characters (UTF-8
# characters, not bytes), and no figure is cut by a "…" (wide lines wrap
# instead; tests/unit/test_text_fit is the check the old middle cut in
# text_fit's emit_line fails: these runs may not reach it). Also: the run's header comes before the maps END prints, an
# empty map says "(no events)", off-cpu names threads (not S/t) with their
# wait reasons and headlines the call that waits, the tracer's
# summary is a sentence, and a one-second run reports real CPU figures.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool python3 python3

# 1200 s: the test takes ~190 s idle in CI and went past 300 s beside a
# suite run and two CPU loops (the demo had ended by its own limit, and
# "runs free afterwards" found it gone); the test kills it at its end.
"$FIXTURES/cache-service" 1200 --progress "$TMP/demo.progress" >/dev/null &
DEMO=$!
TEST_PIDS="$TEST_PIDS $DEMO"
wait_for_file "$TMP/demo.progress"

# figure_cut FILE: succeeds when some figure of FILE was cut by a "…" (a
# word of digits and units with a … in it: "14…+05/s"); a long path or
# name shortened in its middle ("/rustc/5980…0/library/…") is not a figure
figure_cut() {
	python3 -c 'import re, sys
words = open(sys.argv[1], encoding="utf-8").read().split()
cut = [w for w in words if "\u2026" in w and re.fullmatch(r"[(]?[0-9.,+%e/:×x-]*\u2026[0-9.,+%e/:×x-]*(/s|[KMG]?B|ms|us|s)?[)]?,?", w)
       and any(c.isdigit() for c in w)]
print("\n".join(cut[:3]))
sys.exit(0 if cut else 1)' "$1"
}

# widest FILE: the widest line of FILE in characters, and the line
widest() {
	python3 -c 'import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
w = max(lines, key=len)
print(len(w), w)' "$1"
}

run() {   # run NAME ARGS...: xgdbprof at 80 columns into $TMP/NAME.{txt,err}
	local name=$1; shift
	COLUMNS=80 "$XGDBPROF" -o "$TMP/out-$name" -d 2s "$@" "$DEMO" >"$TMP/$name.txt" 2>"$TMP/$name.err"
	check "$name: exits 0" test $? -eq 0 || show "$TMP/$name.err"
	local w
	w=$(widest "$TMP/$name.txt")
	check "$name: no line wider than 80 columns (widest ${w%% *})" test "${w%% *}" -le 80 ||
		echo "    widest: ${w#* }"
	# wide lines wrap; a figure is never shortened ("est. at least 14…+05/s")
	if figure_cut "$TMP/$name.txt" >"$TMP/cut"; then
		check "$name: no figure cut by a … ($(tr '\n' ' ' <"$TMP/cut"))" false
	else
		check "$name: no figure cut by a …" true
	fi
}

run hot-cpu --recipe hot-cpu
run off-cpu --recipe off-cpu
run sled-insert --recipe sled-insert
run func-latency --recipe func-latency -D FUNC=sled::tree::Tree::insert
run syscalls --recipe syscalls
run panic --recipe panic

# At 60 and 100 columns too, every shipped recipe that applies to the
# demo (issue 29: width checks at 60, 80 and 100): no line past the width,
# no figure cut.
at_width() {   # at_width COLUMNS NAME ARGS...
	local cols=$1 name=$2 w; shift 2
	COLUMNS=$cols "$XGDBPROF" -o "$TMP/out-$name-$cols" -d 1s "$@" "$DEMO" >"$TMP/$name-$cols.txt" 2>"$TMP/$name-$cols.err"
	check "$name at $cols: exits 0" test $? -eq 0 || show "$TMP/$name-$cols.err"
	w=$(widest "$TMP/$name-$cols.txt")
	check "$name at $cols: no line wider than $cols columns (widest ${w%% *})" test "${w%% *}" -le "$cols" ||
		echo "    widest: ${w#* }"
	if figure_cut "$TMP/$name-$cols.txt" >"$TMP/cut"; then
		check "$name at $cols: no figure cut by a … ($(tr '\n' ' ' <"$TMP/cut"))" false
	else
		check "$name at $cols: no figure cut by a …" true
	fi
}
for cols in 60 100; do
	at_width "$cols" hot-cpu --recipe hot-cpu
	at_width "$cols" off-cpu --recipe off-cpu
	at_width "$cols" sled-insert --recipe sled-insert
	at_width "$cols" func-latency --recipe func-latency -D FUNC=sled::tree::Tree::insert
	at_width "$cols" syscalls --recipe syscalls
	at_width "$cols" panic --recipe panic
	at_width "$cols" alloc --recipe alloc
	at_width "$cols" heap --recipe heap
	at_width "$cols" locks --recipe locks
done

# The run's header first, then what END prints.
header_line() { grep -n '^xgdbprof .* profile of' "$1" | head -1 | cut -d: -f1; }
first_map() { grep -n '^@\|^what each thread was doing' "$1" | head -1 | cut -d: -f1; }
for name in off-cpu sled-insert syscalls panic; do
	h=$(header_line "$TMP/$name.txt"); m=$(first_map "$TMP/$name.txt")
	check "$name: the header (line ${h:-none}) comes before the maps (line ${m:-none})" \
		test -n "$h" -a -n "$m" -a "${h:-0}" -lt "${m:-0}"
done
check "panic: no panic in the demo: @panics: (no events)" grep -qx '@panics: (no events)' "$TMP/panic.txt"
check "hot-cpu: one header" test "$(grep -c '^xgdbprof .* profile of' "$TMP/hot-cpu.txt")" -eq 1

# off-cpu: thread names and wait reasons; the headline names Mutex::lock.
check "off-cpu: threads table names the connection threads" grep -q '^ *[0-9]* *[0-9.]*%  conn-[0-3]$' "$TMP/off-cpu.txt"
check "off-cpu: no thread named S or t" sh -c "! grep -q '^ *[0-9]* *[0-9.]*%  [St]\$' '$TMP/off-cpu.txt'"
check "off-cpu: conn threads wait on a futex" grep -q '^ *[0-9.]* *[1-9][0-9]*  conn-[0-3], futex wait$' "$TMP/off-cpu.txt"
check "off-cpu: main sleeps" grep -q '^ *[0-9.]* *[1-9][0-9]*  cache-service, sleep$' "$TMP/off-cpu.txt"
check "off-cpu: our own ptrace stop is no wait (every thread has a reason)" \
	sh -c "grep -q '^what each thread was doing' '$TMP/off-cpu.txt' && ! grep -q ', \(unknown\|t\)$' '$TMP/off-cpu.txt'"
check "off-cpu: a finished report, no raw map lines" sh -c "! grep -q '^@' '$TMP/off-cpu.txt'" ||
	grep '^@' "$TMP/off-cpu.txt" | head -3
check "off-cpu: a headline names Mutex::lock at cache_service.rs:79" \
	grep -q 'waits in Mutex::lock (cache_service.rs:79)' "$TMP/off-cpu.txt" || sed -n '/^#/,+1p' "$TMP/off-cpu.txt"
check "off-cpu: its paths are waiting code paths, not hottest ones (no CPU is spent there)" \
	sh -c "grep -q '^#1 waiting code path (' '$TMP/off-cpu.txt' && ! grep -q 'hottest' '$TMP/off-cpu.txt'" ||
	grep '^#[0-9]' "$TMP/off-cpu.txt"
check "off-cpu: writes a flame graph" test -s "$TMP/out-off-cpu/off-cpu.svg"

# The tracer's summary: one sentence, no "tracer:" jargon lines.
check "sled-insert: the summary is a sentence" \
	grep -q '^xgdbprof: traced [0-9.]* s: [0-9]* hits* at 2 probe sites .* seen while the probes were armed ([0-9.]*% of the time); target held stopped [0-9.]*% of the time' "$TMP/sled-insert.err"
check "sled-insert: no tracer: lines" sh -c "! grep -q '^tracer:' '$TMP/sled-insert.err'"

# A short run: the CPU of the whole run, not 0%/0%/0% (two busy workers).
# The old code said 0% when the run ended before its first one-second CPU
# window closed; the window and the run's duration both count from the
# sampler's start, so a run whose header says under a second closed none.
# Under load the sampling loop can overrun -d 500ms past a second (then a
# window closes, and the old code's figures were real by luck): such a
# run proves nothing, so it is tried again, shorter. On a machine so loaded
# that no run stays under a second the check has nothing to judge and says
# so in a comment line (not a pass it did not earn).
short_s=""
is_short() { python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 0.95)' "${1:-9}"; }
for d in 500ms 400ms 300ms 250ms 250ms; do
	COLUMNS=80 "$XGDBPROF" -o "$TMP/out-short" -d "$d" "$DEMO" >"$TMP/short.txt" 2>"$TMP/short.err"
	short_s=$(sed -n 's/.*· duration \([0-9.]*\) s.*/\1/p' "$TMP/short.txt" | head -1)
	is_short "$short_s" && break
done
if is_short "$short_s"; then
	check "short run: real target CPU figures, none 0% (a run of $short_s s, so no one-second CPU window closed: $(grep -o 'target CPU: .*' "$TMP/short.txt"))" \
		grep -q 'target CPU: min [1-9][0-9]*%, avg [1-9][0-9]*%, max [1-9][0-9]*%$' "$TMP/short.txt"
else
	echo "# SKIP short run: not judged: five runs of 250-500 ms all lasted a second or more on this loaded machine (last: ${short_s:-?} s)"
fi
check "the demo runs free afterwards" target_runs_free "$DEMO" "$TMP/demo.progress"
finish
