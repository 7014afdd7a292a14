#!/usr/bin/env bash
# A CPU-time profile (issue 13 item 2): each hot-cpu sample weighs the CPU
# time its thread used since its previous sample (schedstat), so a stop
# left out (here: landing at a later system call's return) hands its CPU
# on to the thread's next kept sample instead of losing it. cpu_split runs
# two threads that each want a whole CPU; "calls" keeps few samples for its
# CPU (most of its stops are left out), "plain" many. Counting samples
# gave "calls" a few percent of the profile; the truth is the kernel's own
# split of their CPU time over the run (schedstat, read around it).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

"$FIXTURES/cpu_split" 120 >/dev/null &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
sleep 0.5

# on-CPU ns of each named thread: "NAME NS" lines
cpu_by_name() {
	for d in /proc/"$1"/task/*; do
		printf '%s %s\n' "$(cat "$d/comm")" "$(cut -d' ' -f1 "$d/schedstat")"
	done
}
# read_run BEFORE AFTER PROFILE: each named thread's CPU between two
# cpu_by_name listings, the profile, and its weight and samples by thread
cat >"$TMP/cpu_split_run.py" <<'PY'
import collections, json
def read_run(before_path, after_path, profile_path):
    def read(path):
        return {name: int(ns) for name, ns in (line.split() for line in open(path))}
    before, after = read(before_path), read(after_path)
    cpu = {n: after[n] - before.get(n, 0) for n in ("plain", "calls")}
    p = json.load(open(profile_path))
    weight, samples = collections.Counter(), collections.Counter()
    for s in p["samples"]:
        weight[s["thread"]] += s["weight"]
        samples[s["thread"]] += s.get("events", 1)
    return cpu, p, weight, samples
PY
cpu_by_name "$PID" >"$TMP/before"
"$XGDBPROF" --recipe hot-cpu -d 6s -o "$TMP/run" "$PID" >"$TMP/run.out" 2>"$TMP/run.err"
check "hot-cpu run exits 0" test $? -eq 0 || show "$TMP/run.err"
cpu_by_name "$PID" >"$TMP/after"

check "each thread's share of the profile is its share of the CPU (the kernel's), within 12 points" \
	python3 - "$TMP/before" "$TMP/after" "$TMP/run/profile.json" "$TMP/run.out" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
from cpu_split_run import read_run
truth, p, weight, samples = read_run(*sys.argv[1:4])
total = sum(truth.values())
ours = sum(weight[n] for n in truth)
left_out = re.search(r"note: (\d+) samples landed at a later", open(sys.argv[4]).read())
for n in ("plain", "calls"):
    print("  %s: %.1f%% of the two threads' CPU (kernel), %.1f%% of the profile (%d samples)"
          % (n, 100.0 * truth[n] / total, 100.0 * weight[n] / ours if ours else 0, samples[n]))
print("  stops left out at a later call's return: %s" % (left_out.group(1) if left_out else "none"))
assert p["meta"].get("weight_unit") == "ns", p["meta"].get("weight_unit")
assert samples["plain"] >= 20 and samples["calls"] >= 1, samples
for n in ("plain", "calls"):
    assert abs(100.0 * truth[n] / total - 100.0 * weight[n] / ours) <= 12, n
PY
check "the report's figures are CPU milliseconds" grep -q 'hottest code path ([0-9.]*% ±[0-9.]*, [0-9]* ms CPU)' "$TMP/run.out" ||
	grep 'hottest code path' "$TMP/run.out"
# Each thread's weight is all its CPU over the run, the CPU after its last
# kept sample included (the sampler weighs it on that sample's stack at the
# end). At 1 Hz for 4 s that tail is a quarter of the run or more: before it
# was weighed, plain's weight was 0.66-0.68 of its CPU and calls' 0.22-0.68.
# The kernel's figures bracket xgdbprof's whole run (gdb's start, attach,
# detach), so they are scaled to the sampler's duration (both threads run
# flat out). A thread whose every stop was left out has no sample to weigh
# its CPU on (the report's "CPU not sampled" note): not judged.
cpu_by_name "$PID" >"$TMP/before1"
bracket_start=$(date +%s%N)
"$XGDBPROF" --recipe hot-cpu -F 1 -d 4s -o "$TMP/sparse" "$PID" >"$TMP/sparse.out" 2>"$TMP/sparse.err"
check "sparse hot-cpu run exits 0" test $? -eq 0 || show "$TMP/sparse.err"
bracket_ns=$(( $(date +%s%N) - bracket_start ))
cpu_by_name "$PID" >"$TMP/after1"
check "at 1 Hz each sampled thread's weight is its CPU over the run (0.8 to 1.15 of it)" \
	python3 - "$TMP/before1" "$TMP/after1" "$TMP/sparse/profile.json" "$bracket_ns" <<'PY'
import sys
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
from cpu_split_run import read_run
cpu, p, weight, samples = read_run(*sys.argv[1:4])
scale = p["meta"]["duration_actual_s"] * 1e9 / int(sys.argv[4])
judged = 0
ok = True
for n in ("plain", "calls"):
    truth = cpu[n] * scale
    print("  %s: %.0f ms in the profile over %d samples; %.0f ms of CPU in the sampler's %.2f s (%.2f)"
          % (n, weight[n] / 1e6, samples[n], truth / 1e6, p["meta"]["duration_actual_s"], weight[n] / truth))
    if samples[n] == 0:
        print("  %s: no stop kept, its CPU is in no sample: not judged" % n)
        continue
    judged += 1
    ok &= 0.8 <= weight[n] / truth <= 1.15
sys.exit(0 if ok and judged else 1)
PY
check "target runs free afterwards" settles_running "$PID"
kill "$PID"
finish
