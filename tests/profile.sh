#!/usr/bin/env bash
# The sampling profiler end to end, on real fixtures: the hottest code path of
# the Rust cache service (named by its own code), a C program with a known 3:1 split, an off-CPU wait
# site, the saved profile re-rendered offline, and the flame graph.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

marker_line() {   # marker_line FILE MARKER -> line number of "LINE: MARKER"
	grep -n "LINE: $2\( \|\$\)" "$1" | cut -d: -f1
}
TREE_RS=$TOP_SRCDIR/tests/fixtures/sled/tree.rs
HOT_LINE=$(marker_line "$TREE_RS" view-for-key-hot)
BELOW_LINE=$(marker_line "$TREE_RS" below-leaf)

# --- The user story: which path burns the CPU of the cache service? --------
"$FIXTURES/cache-service" 120 --progress "$TMP/demo.progress" >/dev/null &
DEMO=$!
TEST_PIDS="$TEST_PIDS $DEMO"
wait_for_file "$TMP/demo.progress"
"$XGDBPROF" --recipe hot-cpu -d 5s -F 49 -o "$TMP/hot" "$DEMO" >"$TMP/hot.txt" 2>"$TMP/hot.err"
check "hot-cpu run exits 0" test $? -eq 0
cat "$TMP/hot.err"
check "the report names the #1 hottest code path" grep -q '^#1 hottest code path' "$TMP/hot.txt"
# The headline names the service's own code with its line, never the std
# leaf the time ends in (core::tuple::…::cmp, tuple.rs:230).
# A headline wider than the terminal (100 columns in a pipe) goes on in
# lines indented by 4: joined back into one.
awk '/^#1 hottest code path/ { h = $0; on = 1; next }
	on && /^    [^ 0-9]/ { sub(/^    /, " "); h = h $0; next }
	on { print h; exit }' "$TMP/hot.txt" >"$TMP/headline.txt"
check "the #1 headline ends on the sled tree's own code (tree.rs:N), no core:: frame" \
	sh -c "grep -v 'core::' '$TMP/headline.txt' | grep -Eq ' → [^ ]+ \(tree\.rs:[0-9]+\)\$'" ||
	cat "$TMP/headline.txt"
check "the report records the observer effect, per thread (one at a time)" \
	grep -q "observer effect: each thread held at most [0-9.]*% of its time (the budget's measure" "$TMP/hot.txt"
# The demo's threads live as long as it does: all its CPU time is seen.
check "long-lived threads: no note of CPU time never sampled" sh -c "! grep -q 'never sampled' '$TMP/hot.txt'" ||
	grep 'never sampled' "$TMP/hot.txt"
check "no unknown thread states in the threads section (hot-cpu keeps none)" \
	sh -c "! sed -n '/^threads/,\$p' '$TMP/hot.txt' | grep -q '[?] [0-9.]*%'"
check "the flame graph was written" test -s "$TMP/hot/hot-cpu.svg"
check "folded stacks were written" test -s "$TMP/hot/hot-cpu.folded"
check "the raw profile was saved" test -s "$TMP/hot/profile.json"
check "target runs free after the run" target_runs_free "$DEMO" "$TMP/demo.progress"

# The stop budget (5% by default) holds each thread's stopped time over the
# whole run: hot-cpu asks 99 Hz, which a ~1 ms stop per thread cannot afford.
"$XGDBPROF" --recipe hot-cpu -d 3s -o "$TMP/budget" "$DEMO" >/dev/null 2>"$TMP/budget.err"
check "budget run exits 0" test $? -eq 0
check "the default budget keeps the demo stopped <= 5% (one stop's slack) and says it lowered the rate" \
	python3 - "$TMP/budget/profile.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["meta"]
print("  each thread stopped at most %.2f%% (summed %.2f%%) at %.1f Hz (asked %s); notes: %s" % (
      meta["thread_stopped_max_pct"], meta["stopped_pct"], meta["frequency_achieved_hz"],
      meta.get("frequency_asked_hz"), meta.get("notes")))
# Non-stop mode budgets what each stop really held its thread (the kernel's
# account, thread_held_max_pct; docs/sampling.md), all-stop mode the stop.
held = meta.get("thread_held_max_pct")
bound = held if meta["stop_mode"] == "non-stop" else meta["thread_stopped_max_pct"]
print("  held by the kernel's account: at most %s%%" % held)
# one stop's slack: a run of 3 s ends at most one (long) stop over
slack = max(0.3, 100.0 * (meta.get("held_p99_ms") or 0) / 1e3 / meta["duration_actual_s"])
assert bound <= 5.0 + slack, (bound, slack)
assert meta["frequency_achieved_hz"] < 90, meta["frequency_achieved_hz"]
assert any("lowered from 99 Hz" in n for n in meta.get("notes", [])), meta.get("notes")
PY

"$XGDBPROF" report --format json "$TMP/hot" >"$TMP/hot.json"
# The hottest distinct stack goes through Tree::insert into view_for_key,
# its leaf on the marked line. With -F 49 for 5 s (40-60 stacks under
# load) the top two stacks (insert -> view_for_key from either worker, and
# insert -> binary_search_by, 20/20/8% on an idle run) can swap by chance:
# s11-l1 (beside two CPU loops) ranked binary_search_by's eq first at
# 32.1%. So the first path through view_for_key must be #1 or within the
# 1e-4 bound (z = 3.89) of #1's share for the stacks taken, each stack one
# draw (docs/reports.md), and its leaf must be on the marked line.
# Mutation seen failing: the marked lines moved by one
# (python3 ... "$((HOT_LINE + 1))" "$((BELOW_LINE + 1))").
check "#1 path: Tree::insert -> view_for_key (or within chance of #1), leaf on the marked line of tree.rs" \
	python3 - "$TMP/hot.json" "$HOT_LINE" "$BELOW_LINE" <<'PY'
import json, math, sys
report = json.load(open(sys.argv[1]))
marked = {int(sys.argv[2]), int(sys.argv[3])}
stacks = report["run"]["thread_samples"]
def names(path):
    return [f["function"] or "" for f in path["frames"]]
top = report["paths"][0]
print("  #1 path (%.1f%%, %d stacks): %s" % (top["share"], stacks, " -> ".join(n.split("::")[-1] for n in names(top)[-4:])))
hot = [p for p in report["paths"] if "sled::tree::Tree::insert" in names(p) and any("view_for_key" in n for n in names(p))]
assert hot, "no path goes through Tree::insert into view_for_key"
hot = hot[0]
p0, p1 = top["share"] / 100, hot["share"] / 100
bound = 3.89 * math.sqrt(max(p0 + p1 - (p0 - p1) ** 2, 0) / stacks)
print("  first path through view_for_key: #%d at %.1f%% (#1 minus it %.1f points, chance allows %.1f)" % (
      hot["rank"], 100 * p1, 100 * (p0 - p1), 100 * bound))
assert hot is top or p0 - p1 <= bound, (p0, p1, bound)
own = [f for f in hot["frames"] if (f["file"] or "").endswith("sled/tree.rs")]
leaf = own[-1]
print("  leaf-most tree.rs frame: %s:%d" % (leaf["function"], leaf["line"]))
assert leaf["line"] in marked, (leaf["line"], marked)
PY

check "#1 code path: its headline frame is sled::tree code in tree.rs; no frame exceeds its caller" \
	python3 - "$TMP/hot.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
path = report["code_paths"][0]
frames = path["frames"]
head = frames[path["headline_frame"]]
print("  #1 code path (%.1f%%): %s ... %s (%s:%d)" % (path["share"], frames[path["headline_first"]]["function"],
      head["function"], (head["file"] or "?").rsplit("/", 1)[-1], head["line"]))
assert head["function"].startswith("sled::tree::"), head
assert (head["file"] or "").endswith("sled/tree.rs") and head["user"], head
for path in report["code_paths"]:
    shares = [f["samples"] for f in path["frames"]]
    assert shares == sorted(shares, reverse=True), shares
    assert shares[-1] == path["samples"], (shares, path["samples"])
PY

# The saved profile re-renders to exactly the report shown live.
"$XGDBPROF" report "$TMP/hot" >"$TMP/rerendered.txt"
check "report DIR exits 0" test $? -eq 0
check "the re-rendered report equals the live one" python3 - "$TMP/hot.txt" "$TMP/rerendered.txt" <<'PY'
import sys
live, again = open(sys.argv[1]).read(), open(sys.argv[2]).read()
assert again and again in live, "re-rendered report is not the live report"
PY

check "the flame graph is well-formed XML naming the hot function" python3 - "$TMP/hot/hot-cpu.svg" <<'PY'
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
text = open(sys.argv[1]).read()
assert "view_for_key" in text
PY
check "folded stacks are 'root;...;leaf N' lines" python3 - "$TMP/hot/hot-cpu.folded" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines
for line in lines:
    stack, count = line.rsplit(" ", 1)
    assert int(count) > 0 and ";" in stack, line
PY

# --- A C program with a known 3:1 split between two functions -------------
# The split is judged by the sample count (tests/lib.sh, 1e-4 per bound).
# Shares over twice the samples (heavy_work 142 of 386 = 36.8%, interval
# 28.1-46.4%; all-stop 64 of 160) fail "75% within 10 points":
#   sed -i '131s/share(fn->self, m->total)/share(fn->self, 2 * m->total)/' src/report/report_json.c
"$FIXTURES/ratio" &
RATIO=$!
TEST_PIDS="$TEST_PIDS $RATIO"
sleep 0.5
# ratio_run NAME SECONDS MIN_SAMPLES STOP_MODE [OPTIONS...]: profiles the 3:1
# fixture with the budget out of the way (this checks that shares are right),
# then checks the split and which stop mode ran.
ratio_run() {
	local name=$1 seconds=$2 min_samples=$3 stop_mode=$4
	shift 4
	"$XGDBPROF" "$@" -e 'set threads running; set max_stopped 100%
sample { @s[thread.name, ustack] = count(); }
end { report(@s); }' -d "$seconds" -F 49 -o "$TMP/$name" "$RATIO" >"$TMP/$name.txt" 2>"$TMP/$name.err"
	check "$name run exits 0" test $? -eq 0
	"$XGDBPROF" report --format json "$TMP/$name" >"$TMP/$name.json"
	check "$name ($stop_mode): the stop mode, and at least $min_samples samples" \
		python3 - "$TMP/$name.json" "$min_samples" "$stop_mode" "$TMP/$name.counts" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
min_samples, stop_mode = int(sys.argv[2]), sys.argv[3]
share = {f["function"]: f["self_share"] for f in report["top_self"]}
heavy, light = share.get("heavy_work", 0), share.get("light_work", 0)
n = report["total_samples"]
print("  %s: heavy_work %.1f%%, light_work %.1f%% of %d samples" % (stop_mode, heavy, light, n))
open(sys.argv[4], "w").write("%d %d %d\n" % (round(heavy * n / 100), round(light * n / 100), n))
assert report["run"]["stop_mode"] == stop_mode, report["run"].get("stop_mode")
assert n >= min_samples, n
PY
	# Judged by the sample count (tests/lib.sh): 75:25 within 10 points.
	local heavy light n
	read -r heavy light n <"$TMP/$name.counts" 2>/dev/null
	check_share_between "$name ($stop_mode): heavy_work's share is 75% within 10 points" "${heavy:-0}" "${n:-0}" 65 85
	check_share_between "$name ($stop_mode): light_work's share is 25% within 10 points" "${light:-0}" "${n:-0}" 15 35
}

ratio_run ratio 5s 100 non-stop
check "two busy threads: the header says only the walked threads stop (non-stop chosen)" \
	grep -q 'stops only the walked threads' "$TMP/ratio.txt"
# The same split with --all-stop (a sample stops every thread at once).
ratio_run ratio-as 4s 80 all-stop --all-stop
check "the --all-stop header says every thread is stopped" grep -q 'stops every thread' "$TMP/ratio-as.txt"
check "ratio target: no thread left stopped or traced" python3 - "$RATIO" <<'PY'
import os, sys
pid = sys.argv[1]
for tid in os.listdir("/proc/%s/task" % pid):
    state = open("/proc/%s/task/%s/stat" % (pid, tid)).read().rsplit(") ", 1)[1][0]
    assert state not in "Tt", (tid, state)
status = open("/proc/%s/status" % pid).read()
assert "TracerPid:\t0\n" in status, status
PY

# --- One busy thread: non-stop mode, as for any on-CPU profile of a PID ----
"$FIXTURES/trace_hot" 30 >/dev/null &
HOT=$!
TEST_PIDS="$TEST_PIDS $HOT"
sleep 0.5
"$XGDBPROF" -e 'set threads running; sample { @s[ustack] = count(); } end { report(@s); }' \
	-d 2s -F 19 -o "$TMP/hot1" "$HOT" >"$TMP/hot1.txt" 2>"$TMP/hot1.err"
check "one-busy-thread run exits 0" test $? -eq 0
check "one busy thread: the header says only the walked threads stop (non-stop chosen)" \
	grep -q 'stops only the walked threads' "$TMP/hot1.txt"
check "the busy loop is the #1 code path" grep -q '^#1 hottest code path.*trace_hot.c:' "$TMP/hot1.txt"
# 2 s at 19 Hz of one busy thread: at most ~40 stacks, well under 300
check "a thin profile says how many stacks it has and suggests a longer --duration" \
	grep -Eq '^  note: only [0-9]+ thread stacks?: .*run longer, e\.g\. --duration [0-9]+s$' "$TMP/hot1.txt"
kill "$HOT" 2>/dev/null

# --- Off-CPU: a thread blocked on a mutex, attributed to its lock site -----
"$FIXTURES/blocked" &
BLOCKED=$!
TEST_PIDS="$TEST_PIDS $BLOCKED"
sleep 0.5
LOCK_LINE=$(marker_line "$TOP_SRCDIR/tests/fixtures/blocked.c" lock-site)
"$XGDBPROF" --recipe off-cpu -d 2s -F 19 -o "$TMP/off" "$BLOCKED" >"$TMP/off.txt" 2>"$TMP/off.err"
check "off-cpu run exits 0" test $? -eq 0
cat "$TMP/off.err"
"$XGDBPROF" report --format json --top 20 "$TMP/off" >"$TMP/off.json"
check "the blocked thread's wait is attributed to take_the_lock at the lock site" \
	python3 - "$TMP/off.json" "$LOCK_LINE" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
for path in report["paths"]:
    names = [f["function"] or "" for f in path["frames"]]
    if any(f["function"] == "take_the_lock" and f["line"] == line for f in path["frames"]):
        assert any("mutex_lock" in n or "lll_lock" in n for n in names), names
        print("  wait site: " + " -> ".join(names))
        break
else:
    raise SystemExit("no path through take_the_lock:%d in %s" % (line, [[f["function"] for f in p["frames"]] for p in report["paths"]]))
PY
check "off-cpu target runs free" test "$(proc_state "$BLOCKED")" = S

# --- The reference walker (set exact true) finds the same hot code --------
"$XGDBPROF" -e 'set exact true; set frequency 19; set duration 4s; set max_stopped 100%
sample { @s[thread.name, ustack] = count(); } end { report(@s); }' \
	-o "$TMP/exact" "$DEMO" >"$TMP/exact.txt" 2>"$TMP/exact.err"
check "exact (gdb walker) run exits 0" test $? -eq 0
check "exact run says its walker" grep -q 'walker: gdb' "$TMP/exact.txt"
"$XGDBPROF" report --format json "$TMP/exact" >"$TMP/exact.json"
check "exact run: the hottest path is in the sled tree" python3 - "$TMP/exact.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
names = [f["function"] or "" for f in report["paths"][0]["frames"]]
print("  exact #1 path (%d samples in all): %s" % (report["total_samples"], " -> ".join(n.split("::")[-1] for n in names[-3:])))
assert report["total_samples"] >= 30, report["total_samples"]
assert any(n.startswith("sled::tree::") for n in names), names
PY
check "target runs free after everything" target_runs_free "$DEMO" "$TMP/demo.progress"
finish
