#!/usr/bin/env bash
# xgdbprof dump: every thread with names, states and frames; the target
# continues untouched; --json is well-formed and says the same.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

"$FIXTURES/cache-service" 60 --progress "$TMP/demo.progress" >/dev/null &
DEMO=$!
TEST_PIDS="$TEST_PIDS $DEMO"
wait_for_file "$TMP/demo.progress"
sleep 0.3

"$XGDBPROF" dump "$DEMO" >"$TMP/dump.txt" 2>"$TMP/dump.err"
check "dump exits 0" test $? -eq 0
cat "$TMP/dump.err"
nthreads=$(ls /proc/$DEMO/task | wc -l)
check "dump shows all $nthreads threads" test "$(grep -c '^Thread ' "$TMP/dump.txt")" -eq "$nthreads"
for name in insert-worker session-worker conn-0 conn-3 cache-service; do
	check "thread $name listed" grep -q "^Thread [0-9]* \"$name\"" "$TMP/dump.txt"
done
check "worker state is running" grep -q '"insert-worker" (running)' "$TMP/dump.txt"
check "conn threads are sleeping" grep -q '"conn-1" (sleeping)' "$TMP/dump.txt"
# A dump is one instant: the two workers spend ~3/4 of their time in the
# tree, so both are elsewhere in about one dump in twenty. Up to five dumps
# for one that catches a worker there.
cp "$TMP/dump.txt" "$TMP/dump-tree.txt"
for _ in 1 2 3 4; do
	grep -q 'sled::tree::Tree::\(insert\|view_for_key\)' "$TMP/dump-tree.txt" && break
	"$XGDBPROF" dump "$DEMO" >"$TMP/dump-tree.txt" 2>/dev/null
done
check "the hot Rust function is named" grep -q 'sled::tree::Tree::\(insert\|view_for_key\)' "$TMP/dump-tree.txt"
check "frames carry tree.rs:LINE:COL" grep -q 'at .*/tests/fixtures/sled/tree.rs:[0-9]\+:[0-9]\+$' "$TMP/dump-tree.txt"
check "main frame carries cache_service.rs:LINE:COL" grep -q 'cache_service.rs:[0-9]\+:[0-9]\+$' "$TMP/dump.txt"
check "inline frames are shown and marked" grep -q '\[inlined\]$' "$TMP/dump.txt"
check "target still runs free after dump" target_runs_free "$DEMO" "$TMP/demo.progress"

"$XGDBPROF" dump --json "$DEMO" >"$TMP/dump.json"
check "dump --json exits 0" test $? -eq 0
check "json parses and lists every thread with frames" python3 - "$TMP/dump.json" "$nthreads" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
threads = d["threads"]
assert len(threads) == int(sys.argv[2]), len(threads)
names = {t["name"] for t in threads}
assert {"insert-worker", "session-worker", "conn-0"} <= names, names
worker = next(t for t in threads if t["name"] == "insert-worker")
assert worker["state"] == "R", worker["state"]
assert any("insert_worker" in (f.get("function") or "") for f in worker["frames"]), worker["frames"]
assert all(f["pc"].startswith("0x") for t in threads for f in t["frames"])
PY
check "target still runs free after dump --json" target_runs_free "$DEMO" "$TMP/demo.progress"

# The dwfl walker takes only registers and memory from gdb, so gdb loads no
# symbols (its per-stop frame description is cheapest then); gdb's walker
# needs them. -v logs each MI command.
"$XGDBPROF" -v dump "$DEMO" >/dev/null 2>"$TMP/dump-v.err"
check "dwfl dump: gdb gets the program without its symbols" grep -q 'mi -file-exec-file:' "$TMP/dump-v.err"
"$XGDBPROF" -v dump --walker gdb "$DEMO" >/dev/null 2>"$TMP/dump-gv.err"
check "gdb-walker dump: gdb loads the program's symbols" grep -q 'mi -file-exec-and-symbols:' "$TMP/dump-gv.err"

# --source-map rewrites the paths debug info gives.
"$XGDBPROF" --source-map "$TOP_SRCDIR/tests/fixtures=/mapped/src" dump "$DEMO" >"$TMP/mapped.txt"
check "--source-map rewrites frame paths" grep -q 'at /mapped/src/sled/tree.rs:[0-9]*:[0-9]*$' "$TMP/mapped.txt" || show "$TMP/mapped.txt"
check "--source-map leaves other paths alone" grep -q 'at /rustc/\|at \.\./sysdeps\|/usr/src\|/rustlib/src/' "$TMP/mapped.txt"

# gdb's own unwinder, the reference walker, names the same functions.
"$XGDBPROF" dump --walker gdb "$DEMO" >"$TMP/dump-gdb.txt"
check "dump --walker gdb exits 0" test $? -eq 0
check "gdb walker shows the threads too" test "$(grep -c '^Thread ' "$TMP/dump-gdb.txt")" -eq "$nthreads"
check "gdb walker frames carry tree.rs:LINE" grep -q 'at .*/tests/fixtures/sled/tree.rs:[0-9]\+$' "$TMP/dump-gdb.txt"

# Both walkers, same stop: identical machine frames on every thread, for the
# Rust demo and for the C fixture.
for i in 1 2 3; do
	"$XGDBPROF" dump --check-walkers "$DEMO" >"$TMP/walkers.txt"
	check "walkers agree on every thread of cache-service (round $i)" grep -q "walkers agree on $nthreads of $nthreads threads" "$TMP/walkers.txt" ||
		grep -A2 'walkers disagree\|walkers agree\|^xgdbprof' "$TMP/walkers.txt" | sed 's/^/    | /' 
	# The non-stop sampler reads rip and rsp from /proc and only rbp from
	# gdb: its walks must be the walks from every register.
	check "walks from rip, rsp and rbp alone agree on cache-service (round $i)" \
		grep -q "walks from rip, rsp and rbp alone agree on $nthreads of $nthreads threads" "$TMP/walkers.txt"
done
# The same with frame pointers: at -O0 every frame's CFA is rbp-based.
cc -O0 -g -pthread -fno-omit-frame-pointer -o "$TMP/counter-O0" "$TOP_SRCDIR/tests/fixtures/counter.c"
"$TMP/counter-O0" "$TMP/progress.O0" >/dev/null &
COUNTER_O0=$!
TEST_PIDS="$TEST_PIDS $COUNTER_O0"
wait_for_file "$TMP/progress.O0"
for i in 1 2; do
	"$XGDBPROF" dump --check-walkers "$COUNTER_O0" >"$TMP/walkers-O0.txt"
	check "walks from rip, rsp and rbp alone agree on the -O0 counter (round $i)" \
		grep -q "walks from rip, rsp and rbp alone agree on 4 of 4 threads" "$TMP/walkers-O0.txt" ||
		sed 's/^/    | /' "$TMP/walkers-O0.txt" | tail -5
done
kill "$COUNTER_O0" 2>/dev/null
start_counter
"$XGDBPROF" dump --check-walkers "$COUNTER_PID" >"$TMP/walkers-c.txt"
check "walks from rip, rsp and rbp alone agree on the C counter" \
	grep -q "walks from rip, rsp and rbp alone agree on 4 of 4 threads" "$TMP/walkers-c.txt"
check "walkers agree on every thread of the C counter" grep -q "walkers agree on 4 of 4 threads" "$TMP/walkers-c.txt" ||
	grep -B1 -A2 'walkers disagree\|walkers agree\|^xgdbprof' "$TMP/walkers-c.txt" | sed 's/^/    | /'
check "walkers agree on every thread of the C counter (again)" sh -c \
	"'$XGDBPROF' dump --check-walkers $COUNTER_PID | grep -q 'walkers agree on 4 of 4 threads'"
check "target still runs free after the walker checks" target_runs_free "$DEMO" "$TMP/demo.progress"

# Launch mode: the command runs, is dumped, and its exit status is ours.
"$XGDBPROF" dump --delay 2s -- "$FIXTURES/counter" "$TMP/launched.progress" 5 >"$TMP/launch.txt" 2>"$TMP/launch.err"
status=$?
check "dump -- COMMAND exits with the command's status (7)" test "$status" -eq 7
check "launched command's threads are dumped" grep -q '"spinner-a"' "$TMP/launch.txt"
check "launched command's output passes through" grep -q 'counter: exiting after' "$TMP/launch.txt"
check "the command's status is reported" grep -q 'exited with status 7' "$TMP/launch.err"

# gdb reads the launched program's symbols when it execs; the dwfl walker's
# session drops them once gdb has switched programs.
"$XGDBPROF" -v dump --delay 1s -- "$FIXTURES/counter" "$TMP/launched2.progress" 2 >"$TMP/launch2.txt" 2>"$TMP/launch2.err"
check "launched dump: gdb's symbols dropped after the exec" grep -q 'mi -file-symbol-file:' "$TMP/launch2.err"
check "launched dump without gdb's symbols still names the threads' frames" \
	sh -c "grep -A1 ' spinner\$' '$TMP/launch2.txt' | grep -q 'counter.c:[0-9]'"
finish
