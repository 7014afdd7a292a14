#!/usr/bin/env bash
# arg(NAME) on optimized code is right or says why not: parameters read at
# the probed function's entry through the DWARF location valid there, never
# a stale register, a caller's variable or a global of the target; what
# cannot be read prints "<unavailable: …>". C strings and Rust byte slices
# print as text. Fixtures: opt_args_c (-O2 C) and opt_args (-O3 Rust), each
# with parameters whose values must agree with one another.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

"$FIXTURES/opt_args_c" & C_PID=$!
"$FIXTURES/opt_args" & RUST_PID=$!
TEST_PIDS="$TEST_PIDS $C_PID $RUST_PID"
sleep 0.3

"$XGDBPROF" -d 1s -e 'set exact true; function "handle" { @c[arg(key), arg(len), arg(b)] = count(); }' \
	"$C_PID" >"$TMP/c.out" 2>"$TMP/c.err"
keys=$(grep -c '^@c\[' "$TMP/c.out")
bad=$(sed -n 's/^@c\[\([^,]*\), \([0-9]*\), .*/\1 \2/p' "$TMP/c.out" | awk 'length($1) != $2' | wc -l)
echo "  C -O2: $keys distinct (key, len, b) seen, $bad where len differs from the key's length"
check "C -O2: a char * parameter prints as its text" grep -q '^@c\[alpha, 5, {a = ' "$TMP/c.out" || show "$TMP/c.out"
check "C -O2: each len read equals the length of the key read with it (all 3 keys seen)" \
	sh -c "[ $bad -eq 0 ] && grep -q '^@c\[beta, 4,' '$TMP/c.out' && grep -q '^@c\[gamma-delta, 11,' '$TMP/c.out'"
check "C -O2: a struct passed by value prints its fields" grep -q '{a = [0-9]*, b = 7, c = 8}' "$TMP/c.out"

"$XGDBPROF" -d 1s -e 'set exact true;
	function "opt_args::insert_key" { @k[arg(key), arg(value)] = count(); }
	function "opt_args::take_pair" { @p[arg(pair), arg(name)] = count(); }' \
	"$RUST_PID" >"$TMP/rust.out" 2>"$TMP/rust.err"
pairs=$(sed -n 's/^@k\[key-\([0-9]\), \([0-9]*\)\].*/\1 \2/p' "$TMP/rust.out")
mismatched=$(awk '$1 != $2 % 7' <<<"$pairs" | grep -c .)
echo "  Rust -O3: $(grep -c . <<<"$pairs") (key, value) pairs, $mismatched where key is not key-(value % 7)"
check "Rust -O3: a &[u8] parameter prints as its text, and agrees with the integer read with it" \
	sh -c "[ -n '$pairs' ] && [ $mismatched -eq 0 ]" || show "$TMP/rust.out"
check "Rust -O3: a tuple passed by value prints its fields" grep -q '^@p\[([0-9]*, [0-2]), ' "$TMP/rust.out"
# rustc keeps only name's length (take_pair never reads its bytes): the
# pointer half has no location at the entry. Either gdb reads it whole or we
# say it is unavailable; never a wrong value.
check "Rust -O3: a parameter without a location here is '<unavailable: …>' (or right: hello)" \
	sh -c "grep '^@p\[' '$TMP/rust.out' | grep -v -e ', <unavailable: optimized out at this address>\]' -e ', hello\]' | grep -q . && exit 1; grep -q '^@p\[' '$TMP/rust.out'"

# Only parameters: any other name would be looked up among the target's
# globals (libc's system() here).
"$XGDBPROF" -d 1s -e 'set exact true; function "handle" { @c[arg(system)] = count(); }' \
	"$C_PID" >"$TMP/sys.out" 2>"$TMP/sys.err"
check "arg(system) is refused: not a parameter of the probed function" \
	grep -q "has no argument named 'system'" "$TMP/sys.err" || show "$TMP/sys.err"
check "... and no value of libc's system() was printed" sh -c "! grep -q 'system' '$TMP/sys.out'"
check "both targets still run" sh -c "kill -0 $C_PID && kill -0 $RUST_PID"
finish
