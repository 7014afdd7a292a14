#!/usr/bin/env bash
# `xgdbprof insights` and differential profiles end to end. The switch_hot
# fixture spins in spin_alpha, and in spin_beta after SIGUSR1: three short
# windows of it go into a directory like a continuous profile's; insights
# over them prints the CPU across windows and the hottest path through
# spin_alpha with its share per window, writes a well-formed timeline SVG
# and a merged profile `report` reads, and never takes its own output for a
# window. After the switch, a fourth window: the differential report
# (`report --diff-base`, `insights --diff-base`, `insights --since --vs`)
# names spin_beta as grown and spin_alpha as shrunk, and the differential
# flame graph is well-formed with spin_beta's frame red (absent from the
# base) and main's unchanged. Bad input: one line, exit status 2.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool python3 python3

SWITCH=$FIXTURES/switch_hot
W=$TMP/windows
mkdir -p "$W"
"$SWITCH" alpha &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"

window() {   # window NAME: a 2-second sampling window into $W/NAME
	"$XGDBPROF" -d 2s -o "$W/$1" "$PID" >"$TMP/run.$1.out" 2>&1 ||
		{ not_ok "window $1 ran"; show "$TMP/run.$1.out"; }
}
# folder names as a continuous profile writes them (times: the profiles' own)
for i in 1 2 3; do
	window "$(date +%Y%m%d_%H%M%S)"
	sleep 1
done
ALPHA_WINDOWS=$(ls "$W")
FIRST=$(ls "$W" | head -1)

"$XGDBPROF" insights "$W" >"$TMP/ins.out" 2>"$TMP/ins.err"
rc=$?
check "insights over 3 windows exits 0" [ "$rc" = 0 ] || { show "$TMP/ins.out"; show "$TMP/ins.err"; }
check "insights counts the 3 windows" grep -q "^insights over 3 windows: " "$TMP/ins.out" || show "$TMP/ins.out"
# its observer effect is the mean of the figures the windows' budgets kept,
# as each window's own report states it (non-stop: each thread's held
# share by the kernel's account), not their stopped time summed over
# threads (issue 29 item 5: 9.1% where the windows said at most 4.0-5.0%)
check "insights' observer effect: the mean of the windows' budget figures" python3 - "$W" "$TMP/ins.out" <<'PY' || show "$TMP/ins.out"
import json, os, re, sys
figures = []
for name in sorted(n for n in os.listdir(sys.argv[1]) if re.fullmatch(r"[0-9]{8}_[0-9]{6}", n)):
    m = json.load(open(os.path.join(sys.argv[1], name, "profile.json")))["meta"]
    non_stop = m.get("stop_mode") == "non-stop"
    held, stopped = m.get("thread_held_max_pct"), m.get("thread_stopped_max_pct")
    if non_stop and held is not None:
        figures.append(("held", held))
    elif non_stop and stopped is not None:
        figures.append(("stopped", stopped))
    elif m.get("stopped_pct") is not None:
        figures.append(("stopped", m["stopped_pct"]))
text = open(sys.argv[2]).read()
line = re.search(r"^observer effect: (each thread held at most|target stopped) ([0-9.]+)%", text, re.M)
assert line, "no observer line"
mean = sum(f for _, f in figures) / len(figures)
kinds = {k for k, _ in figures}
print("  windows: %s; insights: %s %s%%" % (figures, line.group(1), line.group(2)))
assert abs(float(line.group(2)) - mean) <= 0.051, (line.group(2), mean)
assert (line.group(1) == "each thread held at most") == (kinds == {"held"}), (line.group(1), kinds)
PY
# In a pipe (a journal, a log) the text keeps to 100 columns, and to
# $COLUMNS when set: wide lines wrap (38 of 73 lines were over 100, up to
# 269; mutation seen failing: cmd_insights writing to stdout unfitted).
widest() { python3 -c 'import sys; print(max(len(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")))' "$1"; }
env -u COLUMNS "$XGDBPROF" insights "$W" >"$TMP/ins100.out" 2>/dev/null   # lib.sh sets 10000 for the greps
check "insights in a pipe: no line over 100 columns (widest $(widest "$TMP/ins100.out"))" test "$(widest "$TMP/ins100.out")" -le 100 ||
	awk 'length > 100' "$TMP/ins100.out" | head -3
COLUMNS=60 "$XGDBPROF" insights "$W" >"$TMP/ins60.out" 2>/dev/null
check "insights at COLUMNS=60: no line over 60 columns (widest $(widest "$TMP/ins60.out"))" test "$(widest "$TMP/ins60.out")" -le 60 ||
	awk 'length > 60' "$TMP/ins60.out" | head -3
check "insights prints CPU min/avg/max across windows" \
	grep -Eq "^CPU across windows .*: min [0-9.]+%, avg [0-9.]+%, max [0-9.]+%$" "$TMP/ins.out" ||
	show "$TMP/ins.out"
check "insights prints the highest instantaneous CPU" grep -q "^highest instantaneous CPU: [0-9.]*% (window 2" "$TMP/ins.out"
check "the hottest path over the period is the fixture's spin_alpha" \
	grep -Eq "^#1 hottest code path \((9[0-9]|100)\.[0-9]% ±[0-9.]+, [0-9]+ ms CPU\): main \(switch_hot.c:[0-9]+\) → spin_alpha \(switch_hot.c:[0-9]+\)" \
	"$TMP/ins.out" || show "$TMP/ins.out"
check "the path's share per window: three windows, each above 90%" \
	awk '/^#1 hottest/ { on = 1 }
	     on && /per window:/ { if (match($0, /min [0-9.]+%/)) { v = substr($0, RSTART + 4, RLENGTH - 5); high = v + 0 > 90 }
				   seen = 1; exit }
	     END { exit !(seen && high) }' \
	"$TMP/ins.out" || show "$TMP/ins.out"
# (a window of few stacks, as on a loaded machine, shows its share in
# parentheses: noise)
check "the windows table lists each window with its share" \
	[ "$(grep -cE '^  20[0-9]{6}_[0-9]{6} +[0-9]+ .*%\)?$' "$TMP/ins.out")" = 3 ]
OUT=$W/insights
check "timeline, flame graph and merged profile are written to DIR/insights" \
	[ -s "$OUT/timeline.svg" ] && [ -s "$OUT/flamegraph.svg" ] && [ -s "$OUT/profile.json" ] && [ -s "$OUT/profile.pb.gz" ]
# The timeline: well-formed, three CPU points, spin_alpha's path in the legend.
python3 - "$OUT/timeline.svg" >"$TMP/timeline.check" 2>&1 <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
cpu = [g for g in root.iter("{http://www.w3.org/2000/svg}g")
       if "CPU average" in (g.findtext("s:title", "", ns))]
assert len(cpu) == 3, "CPU points: %d" % len(cpu)
texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "#1 (" in texts and "spin_alpha" in texts, texts
points = [c for c in root.iter("{http://www.w3.org/2000/svg}circle")
          if (c.findtext("s:title", "", ns)).startswith("#1 in ")]
assert len(points) == 3, "path points: %d" % len(points)
EOF
check "timeline.svg is well-formed: 3 CPU points, path #1 (spin_alpha) with 3 points" [ $? = 0 ] ||
	show "$TMP/timeline.check"
"$XGDBPROF" report "$OUT" >"$TMP/merged.out" 2>&1
check "report reads the merged profile" grep -Eq "main \(switch_hot.c:[0-9]+\) → spin_alpha" "$TMP/merged.out" || show "$TMP/merged.out"
"$XGDBPROF" insights "$W" >"$TMP/ins2.out" 2>&1
check "a second insights does not take its own output for a window" grep -q "^insights over 3 windows: " "$TMP/ins2.out" ||
	show "$TMP/ins2.out"
"$XGDBPROF" insights -o "$TMP/of_merged" "$OUT" >"$TMP/ins3.out" 2>&1
check "a merged profile given by name is a window" grep -q "^insights over 1 window: " "$TMP/ins3.out" ||
	show "$TMP/ins3.out"
check "--since 1h keeps the 3 windows" sh -c '"$1" insights --since 1h "$2" | grep -q "^insights over 3 windows: "' _ "$XGDBPROF" "$W"

# A window folder without a profile (its target vanished) is named, not merged.
cp -r "$W" "$TMP/w_missing"
rm -rf "$TMP/w_missing/insights"
MISSING=$(date -d "@$(($(date +%s) + 3600))" +%Y%m%d_%H%M%S)
mkdir "$TMP/w_missing/$MISSING"
"$XGDBPROF" insights -o "$TMP/missing.out.d" "$TMP/w_missing" >"$TMP/missing.out" 2>&1
check "a window without profile.json is reported as such" \
	grep -q "^windows without a profile: $MISSING (no profile.json" "$TMP/missing.out" || show "$TMP/missing.out"
check "a window an hour after the others is a gap" grep -q "^gaps: no window from " "$TMP/missing.out" ||
	show "$TMP/missing.out"

# The switch: spin_beta becomes the hot function; one more window.
sleep 1
SWITCH_AT=$(date +%Y-%m-%dT%H:%M:%S)
kill -USR1 "$PID"
sleep 1
window "$(date +%Y%m%d_%H%M%S)"
BETA=$(ls "$W" | grep -v insights | tail -1)

"$XGDBPROF" report --diff-base "$W/$FIRST" "$W/$BETA" >"$TMP/diff.out" 2>&1
check "report --diff-base exits 0" [ $? = 0 ] || show "$TMP/diff.out"
grown() { sed -n '/^grew most:/,/^shrank most:/p' "$1" | grep -q " $2\$"; }
shrunk() { sed -n '/^shrank most:/,$p' "$1" | grep -q " $2\$"; }
check "the diff names spin_beta as grown" grown "$TMP/diff.out" spin_beta || show "$TMP/diff.out"
check "the diff names spin_alpha as shrunk" shrunk "$TMP/diff.out" spin_alpha || show "$TMP/diff.out"
check "spin_beta is new: not in the base" grep -Eq '^ +\+[0-9.]+ \(new\) .* spin_beta$' "$TMP/diff.out"
# at a terminal's width the rows (75 columns of figures) wrap, the name on
# an indented line of its own; nothing is cut (issue 29 item 2: it printed
# 151-column lines at COLUMNS=80)
for cols in 60 80 100; do
	COLUMNS=$cols "$XGDBPROF" report --diff-base "$W/$FIRST" "$W/$BETA" >"$TMP/diff$cols.out" 2>&1
	check "report --diff-base at COLUMNS=$cols: no line wider, spin_beta still named grown and alpha shrunk" \
		sh -c "python3 -c 'import sys; sys.exit(max(len(l.rstrip(chr(10))) for l in open(sys.argv[1], encoding=\"utf-8\")) > $cols)' '$TMP/diff$cols.out' &&
			sed -n '/^grew most:/,/^shrank most:/p' '$TMP/diff$cols.out' | grep -q ' spin_beta\$' &&
			sed -n '/^shrank most:/,\$p' '$TMP/diff$cols.out' | grep -q ' spin_alpha\$'" || show "$TMP/diff$cols.out"
done

"$XGDBPROF" report -f svg -o "$TMP/diff.svg" --diff-base "$W/$FIRST" "$W/$BETA" >"$TMP/diffsvg.out" 2>&1
check "report -f svg --diff-base writes the differential flame graph" [ -s "$TMP/diff.svg" ] || show "$TMP/diffsvg.out"
diff_svg_check() {   # diff_svg_check FILE: well-formed; spin_beta red, main unchanged
	python3 - "$1" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
SVG = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
frames = {g.get("data-n"): g for g in root.iter(SVG + "g") if (g.get("class") or "").startswith("f")}
def hsl(name):
    fill = frames[name].find(SVG + "rect").get("fill")
    return tuple(int(v) for v in re.match(r"hsl\((\d+),(\d+)%,(\d+)%\)", fill).groups())
h, s, l = hsl("spin_beta")
assert h == 0 and s >= 80 and l <= 55, ("spin_beta not full red", h, s, l)
assert "not in the base" in frames["spin_beta"].findtext(SVG + "title"), "spin_beta tooltip"
h, s, l = hsl("main")
assert l >= 90, ("main (100% in both) is not near white", h, s, l)
assert "base 100.00%" in frames["main"].findtext(SVG + "title"), "main tooltip lacks the base share"
EOF
}
diff_svg_check "$TMP/diff.svg" >"$TMP/diffsvg.check" 2>&1
check "diff flame graph well-formed: spin_beta full red, main near white, both shares in tooltips" [ $? = 0 ] ||
	show "$TMP/diffsvg.check"

"$XGDBPROF" insights -o "$TMP/ins_diff" --diff-base "$W/$FIRST" "$W/$BETA" >"$TMP/insdiff.out" 2>&1
check "insights --diff-base: spin_beta grew, spin_alpha shrank" \
	sh -c 'sed -n "/^grew most:/,/^shrank most:/p" "$1" | grep -q " spin_beta\$" &&
	       sed -n "/^shrank most:/,\$p" "$1" | grep -q " spin_alpha\$"' _ "$TMP/insdiff.out" || show "$TMP/insdiff.out"
diff_svg_check "$TMP/ins_diff/diff.svg" >"$TMP/insdiffsvg.check" 2>&1
check "insights --diff-base writes diff.svg with spin_beta red" [ $? = 0 ] || show "$TMP/insdiffsvg.check"

"$XGDBPROF" insights -o "$TMP/ins_vs" --since "$SWITCH_AT" --vs 1h "$W" >"$TMP/vs.out" 2>&1
check "--since A --vs B: the period after the switch holds one window" grep -q "^insights over 1 window: " "$TMP/vs.out" ||
	show "$TMP/vs.out"
check "--since A --vs B compares with the 3 windows before" grep -q "^what changed against the --vs period 1h (3 windows):" "$TMP/vs.out"
check "--since A --vs B: spin_beta grew, spin_alpha shrank" \
	sh -c 'sed -n "/^grew most:/,/^shrank most:/p" "$1" | grep -q " spin_beta\$" &&
	       sed -n "/^shrank most:/,\$p" "$1" | grep -q " spin_alpha\$"' _ "$TMP/vs.out" || show "$TMP/vs.out"

kill "$PID" 2>/dev/null

# Bad input: one line naming the fix, exit status 2.
bad() {   # bad DESCRIPTION PATTERN ARGS...
	local what=$1 pattern=$2; shift 2
	"$XGDBPROF" "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
	local rc=$?
	check "$what: exit 2" [ "$rc" = 2 ] || { show "$TMP/bad.out"; show "$TMP/bad.err"; }
	check "$what: one line" [ "$(wc -l <"$TMP/bad.err")" = 1 ] || show "$TMP/bad.err"
	check "$what: says $pattern" grep -q -- "$pattern" "$TMP/bad.err" || show "$TMP/bad.err"
	check "$what: nothing on standard output" [ ! -s "$TMP/bad.out" ]
}
mkdir "$TMP/empty"
bad "a directory without windows" "holds no profiling windows" insights "$TMP/empty"
bad "no such directory" "No such file or directory" insights "$TMP/nonexistent"
bad "a bad --since" "--since takes" insights --since yesterday-ish "$W"
bad "a period without windows" "no window of .* starts between" insights --since 2000-01-01 --until 2000-01-02 "$W"
bad "--vs without --since" "give --since too" insights --vs 48h "$W"
bad "--diff-base with --format json" "--diff-base goes with" report -f json --diff-base "$W/$FIRST" "$W/$BETA"
finish
