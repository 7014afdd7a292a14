#!/usr/bin/env bash
# hot-cpu on a PID stops one thread at a time (gdb non-stop mode): each
# busy thread is interrupted, walked and resumed before the next, and the
# stop budget (5%) is each thread's own share of its time. So two busy
# threads at -F 99 get a real rate each, and whatever happens mid-round (a
# thread exits while interrupted, threads appear, the target exits, Ctrl-C)
# no thread is left stopped once xgdbprof is gone.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# no_thread_stopped PID: every thread of PID runs free, nobody traces it.
no_thread_stopped() {
	python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
if not os.path.exists("/proc/%s" % pid):
    sys.exit(0)   # gone: nothing left to be stopped
for tid in os.listdir("/proc/%s/task" % pid):
    try:
        stat = open("/proc/%s/task/%s/stat" % (pid, tid)).read()
        status = open("/proc/%s/task/%s/status" % (pid, tid)).read()
    except OSError:
        continue   # exited meanwhile
    state = stat.rsplit(") ", 1)[1][0]
    assert state not in "Tt", "thread %s in state %s" % (tid, state)
    assert "TracerPid:\t0\n" in status, "thread %s still traced" % tid
PY
}

# --- Two busy threads, the default budget: a real rate for each ----------
"$FIXTURES/ratio" &
RATIO=$!
TEST_PIDS="$TEST_PIDS $RATIO"
sleep 0.5
load_begin "$RATIO"
"$XGDBPROF" --recipe hot-cpu -F 99 -d 4s -o "$TMP/rate" "$RATIO" >"$TMP/rate.txt" 2>"$TMP/rate.err"
check "rate run exits 0" test $? -eq 0 || show "$TMP/rate.err"
check "the header gives the budget's figure, each thread's held share" \
	grep -q "observer effect: each thread held at most [0-9.]*% of its time (the budget's measure" "$TMP/rate.txt" ||
	grep 'observer effect' "$TMP/rate.txt"
check "... and only that one: gdb's round trip waits for -v" sh -c "! grep -q \"gdb's round trip\" '$TMP/rate.txt'"
"$XGDBPROF" -v report "$TMP/rate" >"$TMP/rate-v.txt" 2>&1
check "-v adds gdb's round trip, each thread's stopped share" \
	grep -q "gdb's round trip: each thread stopped at most [0-9.]*% of its time" "$TMP/rate-v.txt" ||
	grep -A1 'observer effect' "$TMP/rate-v.txt"
# The rate is a timing check (judged when other work left the CPUs; at
# load 10 it fell under 20 Hz without the budget being spent), the budget
# is the guarantee (judged always, exact by the kernel's account).
rate_verdict() {   # rate_verdict rate|budget
	python3 - "$TMP/rate/profile.json" "$1" <<'PY'
import collections, json, sys
p = json.load(open(sys.argv[1]))
meta = p["meta"]
per_thread = collections.Counter()
for e in p["samples"]:
    per_thread[e["thread"]] += e.get("events", e["weight"])   # hot-cpu weighs samples by CPU ns
secs = meta["duration_actual_s"]
busy = sorted(((n / secs, name) for name, n in per_thread.items() if name.startswith("spin")), reverse=True)
assert meta["stop_mode"] == "non-stop", meta["stop_mode"]
assert len(busy) == 2, busy
if sys.argv[2] == "rate":
    print("  stop mode %s; per busy thread %s Hz; each thread stopped at most %.2f%% (summed %.2f%%); "
          "per stop median %.2f ms, p99 %.2f ms" % (meta["stop_mode"], ", ".join("%.1f" % hz for hz, _ in busy),
          meta["thread_stopped_max_pct"], meta["stopped_pct"], meta["stop_median_ms"], meta["stop_p99_ms"]))
    # 20 Hz each, or else the budget was what held the rate down: the busiest
    # thread was stopped for at least 60% of the 5% it may be (stops that take
    # long, on a loaded machine, spend the budget at a lower rate; a bug that
    # slowed sampling without spending the budget fails here).
    if not all(hz >= 20 for hz, _ in busy):
        print("  (under 20 Hz: the budget must be what limited it; busiest thread held %.2f%%)"
              % meta["thread_held_max_pct"])
        assert meta["thread_held_max_pct"] >= 3.0, (busy, meta["thread_held_max_pct"])
else:
    # The budget counts what each stop held its thread by the kernel's account
    # (wall time less what the thread ran or queued for a CPU meanwhile).
    print("  held by the kernel's account: at most %.2f%%; per stop median %.2f ms, p99 %.2f ms"
          % (meta["thread_held_max_pct"], meta["held_median_ms"], meta["held_p99_ms"]))
    assert meta["thread_held_max_pct"] <= 5.5, meta["thread_held_max_pct"]
PY
}
check_timing "each busy thread sampled at >= 20 Hz, or the 5% budget was what limited it (busiest thread >= 3% stopped)" \
	rate_verdict rate
check "no thread held over the 5% budget by the kernel's account (one stop's slack)" rate_verdict budget
check "ratio: no thread left stopped or traced" no_thread_stopped "$RATIO"

# Ctrl-C in the middle of a run: the report is still written, and the
# target runs free (SIGINT at several instants, so one lands mid-round).
for delay in 0.7 1.13 1.51; do
	"$XGDBPROF" --recipe hot-cpu -F 99 -d 30s -o "$TMP/int$delay" "$RATIO" >"$TMP/int$delay.txt" 2>"$TMP/int$delay.err" &
	XG=$!
	sleep "$delay"
	kill -INT "$XG"
	wait "$XG"
	check "Ctrl-C after ${delay}s: xgdbprof exits 0 with its report" test $? -eq 0 -a -s "$TMP/int$delay/profile.json" ||
		show "$TMP/int$delay.err"
	check "Ctrl-C after ${delay}s: no thread left stopped or traced" no_thread_stopped "$RATIO"
	# A run under a second still gives each thread's share: threads stopped
	# (summed > 0) can't all have been stopped 0% of their time, nor the
	# rate a thread got be 0 Hz where stacks were taken.
	check "Ctrl-C after ${delay}s: per-thread shares and rate are given, not 0" python3 - "$TMP/int$delay/profile.json" \
		"$TMP/int$delay.txt" <<'PY' || grep -A4 'observer effect' "$TMP/int$delay.txt"
import json, sys
meta = json.load(open(sys.argv[1]))["meta"]
if meta["stopped_pct"] > 0:
    assert meta["thread_stopped_max_pct"] > 0, meta
assert " to 0.0 Hz a thread" not in open(sys.argv[2]).read()
PY
done
kill "$RATIO"

# --- Thread churn: busy threads of ~10-50 ms that come and go --------------
# (3 threads of ~40 ms at a time.) Threads exit while interrupted or between plan and stop, new ones appear
# every round, and the target exits in the middle of the run.
"$FIXTURES/churn" 0 100000 3000000 >/dev/null &
CHURN=$!
TEST_PIDS="$TEST_PIDS $CHURN"
sleep 0.3
"$XGDBPROF" --recipe hot-cpu -F 99 -d 3s -o "$TMP/churn" "$CHURN" >"$TMP/churn.txt" 2>"$TMP/churn.err"
check "churn run exits 0" test $? -eq 0 || show "$TMP/churn.err"
check "churn: threads born during the run were sampled" grep -q 'thread stacks' "$TMP/churn.txt"
check "churn: no thread left stopped or traced" no_thread_stopped "$CHURN"
kill "$CHURN"

# The target exits mid-run (about 1 s in): the run ends, says so, exits 0.
"$FIXTURES/churn" 0 10 10000000 >/dev/null &
SHORT=$!
TEST_PIDS="$TEST_PIDS $SHORT"
sleep 0.2
"$XGDBPROF" --recipe hot-cpu -F 99 -d 20s -o "$TMP/exit" "$SHORT" >"$TMP/exit.txt" 2>"$TMP/exit.err"
check "target exiting mid-run: run exits 0" test $? -eq 0 || show "$TMP/exit.err"
check "target exiting mid-run: the report says it exited" grep -q 'the target exited during the run' "$TMP/exit.txt"
finish
