#!/usr/bin/env bash
# stripped_name.sh — a function name not found in a stripped program says
# the program is stripped (issue 28, item 8): "no function named 'x'" alone
# reads as a typo. The same program built with symbols finds the name, and
# a real typo there does not blame stripping.
# Mutation: in src/trace/tracer_resolve.c make find_stripped_program()
# `return DWARF_CB_OK;` at its top: the first check fails.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

cat >"$TMP/hidden.c" <<'C'
#include <unistd.h>
volatile long sink;
static __attribute__((noinline)) void hidden_step(long x) { sink += x; }
int main(void) { for (long i = 0;; i++) { hidden_step(i); if (i % 100000 == 0) usleep(1000); } }
C
cc -O1 -o "$TMP/hidden" "$TMP/hidden.c" || exit 99
cp "$TMP/hidden" "$TMP/hidden-stripped" && strip "$TMP/hidden-stripped" || exit 99

"$TMP/hidden-stripped" &
P=$!
TEST_PIDS="$TEST_PIDS $P"
sleep 0.2
expect_error "stripped: the name is not found, and the program is said to be stripped" 2 \
	"hidden-stripped is stripped (no symbol table, no debug info)" \
	"$XGDBPROF" -d 1s -e 'function "hidden_step" { @c = count(); }' "$P"
kill "$P"

"$TMP/hidden" &
P=$!
TEST_PIDS="$TEST_PIDS $P"
sleep 0.2
"$XGDBPROF" -d 1s -e 'function "hidden_step" { @c = count(); }' "$P" >"$TMP/found.out" 2>"$TMP/found.err"
check "with symbols: the same name is found and traced" grep -q "^@c: [1-9]" "$TMP/found.out" ||
	{ show "$TMP/found.out"; show "$TMP/found.err"; }
expect_error "with symbols: a typo is not blamed on stripping" 2 "no function named 'hidden_stepx'" \
	"$XGDBPROF" -d 1s -e 'function "hidden_stepx" { @c = count(); }' "$P"
check "... and says nothing of stripping" sh -c "! grep -q stripped '$TMP/err'"
kill "$P"
finish
