#!/usr/bin/env bash
# async_names.sh — async Rust reads as async (docs/reports.md, "Names"): an
# async fn's body, a closure to both manglings (legacy
# `handle_write::{{closure}}`, v0 `handle_write::{closure#0}`), is named
# `handle_write (async)` in dumps and reports, for both manglings; an async
# block `serve::{async block}`; and `probes` spells closures as reports do.
# Mutation seen failing: entry_names without async_display_name.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
untouched() {   # untouched PID: no thread stopped, nobody tracing
	local t
	for t in /proc/"$1"/task/*; do
		case "$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$t/stat")" in T|t) return 1 ;; esac
	done
	[ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status")" = 0 ]
}

for build in legacy v0; do
	bin=$FIXTURES/async_names; [ "$build" = v0 ] && bin=$FIXTURES/async_names_v0
	"$bin" "$TMP/$build.ready" >/dev/null &
	pid=$!
	TEST_PIDS="$TEST_PIDS $pid"
	wait_for_file "$TMP/$build.ready"
	# 5 s: a 2 s run kept 6 stacks beside a CI run's other test, 3 through
	# the async block, and in one rehearsal none (the name checks below need
	# a stack through each frame, not a rate)
	"$XGDBPROF" -d 5s -o "$TMP/run-$build" "$pid" >"$TMP/$build.txt" 2>"$TMP/$build.err"
	check "$build: hot-cpu exits 0" test $? -eq 0 || show "$TMP/$build.err"
	check "$build: the async fn is named handle_write (async)" grep -q 'async_names::handle_write (async)' "$TMP/$build.txt" ||
		grep -E 'handle_write|closure' "$TMP/$build.txt" | head -5
	check "$build: the caller is serve (async)" grep -q 'serve (async)' "$TMP/$build.txt"
	# in the report, or in the run's folded stacks when the report's paths
	# stop above it (a short run beside load: too few stacks to show it)
	check "$build: the async block is serve::{async block}" \
		grep -q 'async_names::serve::{async block}' "$TMP/$build.txt" "$TMP/run-$build/hot-cpu.folded"
	check "$build: no closure spelling of an async body" sh -c "! grep -Eq '(serve|handle_write)::\\{\\{?closure' '$TMP/$build.txt'" ||
		grep -E '(serve|handle_write)::\{' "$TMP/$build.txt" | head -3
	"$XGDBPROF" dump "$pid" >"$TMP/$build.dump" 2>&1
	check "$build: dump names it too" grep -q 'async_names::serve (async)' "$TMP/$build.dump" || head -20 "$TMP/$build.dump"
	check "$build: the target runs on, untraced" untouched "$pid"
	kill "$pid" 2>/dev/null
done
"$XGDBPROF" probes '/closure/' "$FIXTURES/async_names" >"$TMP/probes.txt" 2>&1
check "probes spells closures as reports do ({closure}; the symbol's own only as [instance …])" \
	sh -c "grep -q '::{closure}' '$TMP/probes.txt' && ! sed 's/\\[instance .*\\]//' '$TMP/probes.txt' | grep -Eq '\\{\\{closure\\}\\}|\\{closure#'" ||
	head -5 "$TMP/probes.txt"
finish
