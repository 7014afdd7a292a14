#!/usr/bin/env bash
# deep_stacks.sh — saved profiles with deep and wide stacks, generated here:
# `report` in every format and `insights` read them without crashing (no
# walk of the stack tree recurses on its depth), deeper stacks than a run
# writes keep their leaf end and are said to be cut, outputs stop growing
# with the depth past that cap, inputs over the reader's limits get one line
# and exit status 2, and no temporary output file is left behind
# (docs/reports.md, "Limits").
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_tool python3 python3

# gen KIND N FILE [START]: a profile of
#   deep   one stack of N distinct frames (f0 the leaf), and a shallow one;
#   repeat one stack of one frame N times (the smallest file for its depth);
#   wide   N stacks main -> wN, each its own sample;
#   long   one frame whose name is N bytes.
gen() {
	python3 - "$@" <<'EOF'
import json, sys
kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start = sys.argv[4] if len(sys.argv) > 4 else None
def frame(name, line):
    return {"function": name, "file": "/src/deep.c", "line": line, "column": 0, "inlined": False,
            "lang": "c", "source": "dwarf", "module": "/x", "pc": "0x%x" % (0x1000 + line)}
if kind == "deep":
    frames = [frame("f%d" % i, i + 1) for i in range(n)] + [frame("main", 1)]
    samples = [{"thread": "t", "state": "R", "weight": 3, "stack": list(range(n))},
               {"thread": "t", "state": "R", "weight": 1, "stack": [n]}]
elif kind == "repeat":
    frames = [frame("again", 7)]
    samples = [{"thread": "t", "state": "R", "weight": 2, "stack": [0] * n}]
elif kind == "wide":
    frames = [frame("main", 1)] + [frame("w%d" % i, i + 2) for i in range(n)]
    samples = [{"thread": "t", "state": "R", "weight": 1, "stack": [i + 1, 0]} for i in range(n)]
else:
    frames = [frame("x" * n, 1)]
    samples = [{"thread": "t", "state": "R", "weight": 1, "stack": [0]}]
json.dump({"format": "xgdbprof-profile", "version": 1, "meta": {"start_time": start, "notes": []},
           "frames": frames, "samples": samples}, open(out, "w"))
EOF
}

# Every format `report --help` lists.
FORMATS=$("$XGDBPROF" report --help | sed -n '/--format FORMAT/,/--annotate/s/^ \{28\}\([a-z]\+\) .*/\1/p')
check "report --help lists the formats" test "$(echo $FORMATS | wc -w)" -ge 6

no_temp_files() {   # no_temp_files DIR: no .NAME.XXXXXX left
	test -z "$(find "$1" -name '.*.??????' | head -1)"
}
size() { stat -c %s "$1"; }

P=$TMP/profiles
mkdir -p "$P"
gen deep 30000 "$P/deep30000.json"
gen deep 100000 "$P/deep100000.json"
gen repeat 300000 "$P/repeat.json"
gen wide 50000 "$P/wide.json"

for f in $FORMATS; do
	for name in deep30000 deep100000 repeat wide; do
		OUT=$TMP/out-$name
		mkdir -p "$OUT"
		"$XGDBPROF" report -f "$f" -o "$OUT/r.$f" "$P/$name.json" >/dev/null 2>"$TMP/err"
		rc=$?
		check "report -f $f of $name exits 0 (got $rc)" test "$rc" = 0 || show "$TMP/err"
		check "report -f $f of $name leaves no temporary file" no_temp_files "$OUT"
		check "report -f $f of $name writes under 64 MB" test "$(size "$OUT/r.$f" 2>/dev/null || echo 0)" -lt 67108864
	done
	# Past the cap, depth adds nothing: 100,000 frames render as 30,000 do.
	a=$(size "$TMP/out-deep30000/r.$f" 2>/dev/null || echo 0)
	b=$(size "$TMP/out-deep100000/r.$f" 2>/dev/null || echo 0)
	check "report -f $f: 100,000 frames give no more output than 30,000 ($b vs $a bytes)" \
		test "$a" -gt 0 -a "$b" -le $((a + a / 100 + 4096))
done

"$XGDBPROF" report "$P/deep100000.json" >"$TMP/deep.txt" 2>&1
check "the text report says the stack was cut, and how deep it was" \
	grep -q 'note: 1 stack deeper than [0-9]* frames .*100000 frames' "$TMP/deep.txt" || show "$TMP/deep.txt"
"$XGDBPROF" report -f folded "$P/deep100000.json" >"$TMP/deep.folded" 2>&1
check "the stack keeps its leaf end, under a [truncated] frame" \
	grep -Eq '^\[truncated: [0-9]+ frames\];f[0-9]+;.*;f1;f0 3$' "$TMP/deep.folded" || head -c 300 "$TMP/deep.folded"

for opts in "--inverted" "--thread-roots" "--diff-base $P/deep30000.json"; do
	# shellcheck disable=SC2086
	"$XGDBPROF" report -f svg $opts -o "$TMP/out-deep100000/opts.svg" "$P/deep100000.json" 2>"$TMP/err"
	check "report -f svg $opts of 100,000 frames exits 0" test $? = 0 || show "$TMP/err"
done
"$XGDBPROF" report --diff-base "$P/deep30000.json" "$P/deep100000.json" >/dev/null 2>"$TMP/err"
check "report --diff-base of deep profiles exits 0" test $? = 0 || show "$TMP/err"
check "no temporary file after the options" no_temp_files "$TMP/out-deep100000"

# A signal that ends `report` while it writes (SIGTERM from a supervisor,
# SIGHUP from a closed terminal) removes the temporary file first, then
# ends it as it would have. report is stopped once its temporary file
# shows, so the signal lands mid-write. (SIGINT is not tried: a script's
# background job ignores it, and a signal ignored stays ignored.) Left
# behind before the fix.
OUT=$TMP/out-signal
mkdir -p "$OUT"
for sig in TERM HUP; do
	"$XGDBPROF" report -f svg -o "$OUT/sig.svg" "$P/wide.json" >/dev/null 2>&1 &
	R=$!
	for _ in $(seq 1 3000); do
		[ -n "$(find "$OUT" -name '.sig.svg.*' | head -1)" ] && break
		kill -0 "$R" 2>/dev/null || break
		sleep 0.002
	done
	kill -STOP "$R" 2>/dev/null
	if [ -n "$(find "$OUT" -name '.sig.svg.*' | head -1)" ]; then
		kill -"$sig" "$R"
		kill -CONT "$R"
		wait "$R"
		rc=$?
		check "report ended by SIG$sig mid-write dies of it (status $rc)" test "$rc" -eq $((128 + $(kill -l "$sig")))
		check "... and leaves no temporary file" no_temp_files "$OUT"
	else
		kill -CONT "$R" 2>/dev/null
		wait "$R"
		ok "not judged: report wrote its file before SIG$sig could land mid-write"
	fi
done

# Over the limits: one line, exit status 2, nothing written.
gen long $((2 * 1024 * 1024)) "$P/long.json"
OUT=$TMP/out-long
mkdir -p "$OUT"
"$XGDBPROF" report -f svg -o "$OUT/r.svg" "$P/long.json" >/dev/null 2>"$TMP/err"
check "a 2 MiB name exits 2" test $? = 2
check "... with one line naming the limit" \
	test "$(wc -l <"$TMP/err")" = 1 -a -n "$(grep 'longer than' "$TMP/err")" || show "$TMP/err"
check "... and writes nothing" test -z "$(ls -A "$OUT")"

# insights: a deep window, a good one, and damaged ones that are skipped.
W=$TMP/windows
mkdir -p "$W/20260101_000000" "$W/20260101_000100" "$W/20260101_000200" "$W/20260101_000300"
gen deep 5 "$W/20260101_000000/profile.json" 2026-01-01T00:00:00Z
gen deep 100000 "$W/20260101_000100/profile.json" 2026-01-01T00:01:00Z
echo '{"format": "xgdbprof-profile", "version": 1, "meta": {}, "frames": [], "samples": [' \
	>"$W/20260101_000200/profile.json"
cp "$P/long.json" "$W/20260101_000300/profile.json"
"$XGDBPROF" insights "$W" >"$TMP/ins.out" 2>"$TMP/ins.err"
rc=$?
check "insights over deep and damaged windows exits 0 (got $rc)" test "$rc" = 0 || show "$TMP/ins.err"
check "... over the 2 readable windows" grep -q '^insights over 2 windows ' "$TMP/ins.out" || show "$TMP/ins.out"
for bad in 20260101_000200 20260101_000300; do
	check "... window $bad skipped with the reason" grep -q "window $bad skipped: " "$TMP/ins.err" ||
		show "$TMP/ins.err"
done
for f in timeline.svg flamegraph.svg profile.json profile.pb.gz profile.speedscope.json; do
	check "... $f written" test -s "$W/insights/$f"
done
check "... no temporary file left" no_temp_files "$W"
"$XGDBPROF" report "$W/insights" >"$TMP/merged.txt" 2>&1
check "the merged profile reads back" grep -q 'f0 (/src/deep.c:1)' "$TMP/merged.txt" || show "$TMP/merged.txt"

# Only damaged windows: exit status 2.
mkdir -p "$TMP/bad/20260101_000000"
cp "$P/long.json" "$TMP/bad/20260101_000000/profile.json"
"$XGDBPROF" insights "$TMP/bad" >/dev/null 2>"$TMP/bad.err"
check "insights with no readable window exits 2" test $? = 2 || show "$TMP/bad.err"
finish
