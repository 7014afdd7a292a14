#!/usr/bin/env bash
# Attaching and arming hold the target stopped at most 100 ms, arg() too (xgdbprof's
# account: from gdb's attach request to the resume, an upper bound). gdb reading a Rust
# program's symbols while the target waited held it 0.3-1.3 s before; the
# tracer needs none of gdb's symbols unless a recipe asks for arg().
# The 100 ms is a timing check: judged when other work left the CPUs
# (check_timing in tests/lib.sh), skipped with the load printed otherwise.
# Judged whatever the load and broken on purpose, all three fail (1445 ms):
#   sed -i '257s/st->attach_hold_s \* 1e3,/st->attach_hold_s * 1e5,/' src/trace/tracer_estimate.c
#   make -C build check TESTS=tests/trace_hold.sh TESTS_ENVIRONMENT="TIMING_LOAD_LIMIT=100; export TIMING_LOAD_LIMIT;"
# rust-arg fails alone (230.9 ms) with `if (0 && tracing && !so.no_symbols && every_site_module(rc, carries_own_dwarf, NULL))`
# in src/cli/cmd_run.c (gdb then reads libc6-dbg's DWARF during the attach).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

hold_of() {   # hold_of NAME PID RECIPE...: runs it, checks its attach+arm hold
	local name=$1 pid=$2; shift 2
	load_begin "$pid"
	"$XGDBPROF" "$@" -d 1s -o "$TMP/out-$name" "$pid" >"$TMP/$name.out" 2>"$TMP/$name.err"
	check "$name: xgdbprof exits 0" test $? -eq 0 || show "$TMP/$name.err"
	ours=$(sed -n 's/.*attaching held the target stopped at most \([0-9.]*\) ms and arming the probes \([0-9.]*\) ms (not counted above)/\1 \2/p' "$TMP/$name.err")
	read -r attach arm <<<"$ours"
	echo "  $name: attaching held it ${attach:-?} ms, arming ${arm:-?} ms"
	check_timing "$name: attach and arming together hold the target at most 100 ms (${attach:-?} + ${arm:-?})" \
		awk -v a="${attach:-1e9}" -v r="${arm:-1e9}" 'BEGIN { exit !(a + r <= 100) }'
}

"$FIXTURES/trace_hot" 60 >/dev/null &
HOT=$!
TEST_PIDS="$TEST_PIDS $HOT"
sleep 0.3
hold_of c "$HOT" --recipe func-latency -D FUNC=report_second
check "c: target runs free afterwards" sh -c "kill -0 $HOT && test \"\$(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$HOT/status)\" = 0"
kill "$HOT"

# The Rust demo: large DWARF, seven threads.
"$FIXTURES/cache-service" 60 --progress "$TMP/rust.progress" >/dev/null &
RUST=$!
TEST_PIDS="$TEST_PIDS $RUST"
wait_for_file "$TMP/rust.progress"
hold_of rust-latency "$RUST" --recipe func-latency -D FUNC=sled::tree::Tree::insert
hold_of rust-panic "$RUST" --recipe panic
# arg() makes gdb read symbols; the demo's own DWARF suffices, and libc's
# separate debug files (libc6-dbg) stay unread: 188 ms before, ~40 after.
hold_of rust-arg "$RUST" -e 'function "sled::tree::Tree::insert" { @trees[arg(self)] = count(); }'
check "rust: target runs free afterwards" target_runs_free "$RUST" "$TMP/rust.progress"
kill "$RUST"
finish
