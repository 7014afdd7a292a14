#!/usr/bin/env bash
# CPU truth where stops land late (issue 32). phase_mix's two workers cycle
# through a contended lock, plain compute, and a 2 MiB copy into fresh
# pages (a page fault every 4 KiB: kernel time, and a way back to user mode
# where a stop asked during the compute before it is noticed). Every 8th
# cycle each worker times each phase with its own CLOCK_THREAD_CPUTIME_ID
# (user and kernel time alike): that is the truth. hot-cpu's share of each
# phase (its stacks through lock_phase, compute_phase, copy_phase, over the
# stacks through any of them) must lie within the binomial bound of the
# truth for its stack count (z = 3.89: a false failure at most 1e-4 per
# phase), and the CPU-weighted share the report prints within 2x.
# Stacks outside the three phases (the clock calls of the timed cycles,
# where the scheduler also preempts: see docs/sampling.md) are printed,
# not judged.
#
# The workers share CPU 1 and xgdbprof runs on CPU 0, so when asked a
# worker is either on its CPU (noticed late) or queued behind the other.
# Measured at load 5-13: 1054 stacks, lock 13.8% (truth 15.6), compute 25.0
# (24.8), copy 61.3 (59.6); 94 stops left out at a later page fault.
#
# NOT JUDGED, still (issue 32 is open): the binomial bounds are printed,
# and only the 2x rule for printed figures is judged. Judged again for one
# CI rehearsal on 2026-12-04, they failed it: copy_phase 63.0% against its
# truth of 57.5% (bound ±4.0), at 2367 stacks; stops asked in the compute
# and landing at the copy's first fault, kept since that day (below), are
# the likely excess. Before that day every stop of a
# runnable thread was taken: a worker queued behind the other was caught at
# its preemption point (the other's wake-up in the lock phase, a fault's
# return), and the worker running only because we had just stopped the
# other was caught wherever that left it; stops beyond the kernel's share at
# a fault's return were left out, their CPU passed to the next sample. The
# lock phase came out 2.3-4.5 points under its truth, compute up to 9.4
# over. Now a thread queued behind another thread of the program is not
# stopped, nor one on the CPU of a thread stopped before it that round, and
# stops after a fault are kept: runs on an idle machine gave lock -1.5..+0.5
# points, compute -3.1..+1.4, copy -1.3..+4.3, at ~1750-1900 stacks (bounds
# ±3.5-4.6); the CI rehearsal's lock -2.0, compute -3.5, copy +5.5. Largest
# miss: 9.4 points before, 5.5 since.
# Mutation that failed the binomial bounds when they were judged (2 runs of
# 2: lock_phase 11.4% and 13.5% against 16.4% and 16.8%, bounds ±2.9-3.0;
# copy_phase once 63.1% against 57.3%); the 2x rule does not catch it:
# in src/stacks/sampler.c's one_thread_at_a_time, make the block under
# `if (sp->cfg->threads == SAMPLER_THREADS_RUNNING) {` that skips threads off
# their CPU or on a stopped thread's CPU never skip (`if (0) {`): every
# runnable thread stopped, as before.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool python3 python3
require_tool taskset util-linux
[ "$(nproc)" -ge 2 ] || skip_test "needs 2 CPUs (the workers on one, xgdbprof on the other)"

# Both workers on CPU 1, xgdbprof and gdb on CPU 0 (as in tests/landing.sh):
# a worker is on its CPU about half the time it is asked to stop, and such
# stops are noticed late, at its next way back to user mode.
taskset -c 1 "$FIXTURES/phase_mix" "$TMP/truth" 120 >/dev/null &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/truth"
sleep 1
cp "$TMP/truth" "$TMP/truth.before"
taskset -c 0 "$XGDBPROF" --recipe hot-cpu -d 25s -o "$TMP/run" "$PID" >"$TMP/run.out" 2>"$TMP/run.err"
check "the run exits 0" test $? -eq 0 || show "$TMP/run.err"
sleep 0.2   # the truth file is rewritten every 100 ms
cp "$TMP/truth" "$TMP/truth.after"

python3 - "$TMP/truth.before" "$TMP/truth.after" "$TMP/run/profile.json" >"$TMP/judge" 2>&1 <<'PY'
import collections, json, math, sys
PHASES = ("lock_phase", "compute_phase", "copy_phase")
read = lambda path: {k: int(v) for k, v in (line.split() for line in open(path))}
before, after = read(sys.argv[1]), read(sys.argv[2])
truth = {p: after[p] - before[p] for p in PHASES}
truth_total = sum(truth.values())
profile = json.load(open(sys.argv[3]))
frames = profile["frames"]
count, weight, outside = collections.Counter(), collections.Counter(), 0
for s in profile["samples"]:
    names = {frames[i]["function"] for i in s["stack"]}
    phase = next((p for p in PHASES if p in names), None)
    if phase is None:
        outside += s.get("events", 1)
        continue
    count[phase] += s.get("events", 1)
    weight[phase] += s["weight"]
n, w = sum(count.values()), sum(weight.values())
print("stacks %d in the phases, %d outside (%.1f%%)" % (n, outside, 100.0 * outside / max(1, n + outside)))
for p in PHASES:
    share = truth[p] / truth_total
    bound = 3.89 * math.sqrt(share * (1 - share) / max(1, n))
    ours, ours_w = count[p] / max(1, n), weight[p] / max(1, w)
    verdict = "ok" if abs(ours - share) <= bound else "OUT"
    verdict_w = "ok" if share / 2 <= ours_w <= share * 2 else "OUT"
    print("%s truth %.1f%% stacks %.1f%% (bound ±%.1f) %s weighted %.1f%% %s"
          % (p, 100 * share, 100 * ours, 100 * bound, verdict, 100 * ours_w, verdict_w))
PY
grep -E "^  (samples|started|note):" "$TMP/run.out"
cat "$TMP/judge"
read -r _ stacks _ <<<"$(head -1 "$TMP/judge")"
if [ "${stacks:-0}" -lt 150 ]; then
	echo "ok - skipped: $stacks stacks in the phases, too few to judge shares at ±1e-4 (load $(cut -d' ' -f1 /proc/loadavg))"
else
	echo "# the binomial bounds above are not judged until issue 32 (see the header)"
	for phase in lock_phase compute_phase copy_phase; do
		check "$phase: its CPU-weighted share is within 2x of the truth" \
			sh -c "grep '^$phase ' '$TMP/judge' | grep -q 'weighted [0-9.]*% ok$'"
	done
fi
check "the target runs free afterwards" settles_running "$PID"
kill "$PID"
finish
