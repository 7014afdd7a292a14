# trace_tree.sh — function/return probes on every instance of a generic
# Rust function: exact counts, call sites, latency histogram.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach
GO=$TMP/go
( wait_for_file_any() { for i in $(seq 1 400); do grep -q "attached" "$TMP/err" 2>/dev/null && break; sleep 0.05; done; }; wait_for_file_any; touch "$GO" ) &
"$XGDBPROF" -o "$TMP/out" -e 'set exact true
function "trace_tree::tree::Tree::insert" { @calls = count(); @callers[ustack(2)] = count(); }
return "trace_tree::tree::Tree::insert" { @latency = hist(elapsed); @returns = count(); }
end { print(@calls); print(@returns); print(@callers); print(@latency); }' \
	-- "$FIXTURES/trace_tree" "$GO" >"$TMP/out.txt" 2>"$TMP/err"
wait
cat "$TMP/out.txt" "$TMP/err" | sed 's/^/# /'
want=$(sed -n 's/.*total \([0-9]*\)$/\1/p' "$TMP/out.txt")
check "fixture printed its call count" test -n "$want"
check "@calls equals the fixture's count ($want)" grep -qx "@calls: $want" "$TMP/out.txt"
check "@returns equals it too" grep -qx "@returns: $want" "$TMP/out.txt"
"$XGDBPROF" probes trace_tree::tree::Tree::insert "$FIXTURES/trace_tree" >"$TMP/probes" 2>&1
check "probes lists two out-of-line instances" grep -q "2 sites (2 out-of-line" "$TMP/probes"
check "instances are named with their generic arguments" grep -q "insert<alloc::string::String, u32>" "$TMP/probes"
# call sites: the lines marked CALLSITE in the fixture
numbers=$(grep -n "CALLSITE: numbers" "$TOP_SRCDIR/tests/fixtures/trace_tree.rs" | cut -d: -f1)
names=$(grep -n "CALLSITE: names" "$TOP_SRCDIR/tests/fixtures/trace_tree.rs" | cut -d: -f1)
check "callers: fill_names at its call site, 25 calls" \
	sh -c "tr -d '\n' <'$TMP/out.txt' | grep -q 'trace_tree::fill_names (.*trace_tree.rs:$names)]: 25'"
check "callers: fill_numbers at its call site, 55 calls" \
	sh -c "tr -d '\n' <'$TMP/out.txt' | grep -q 'trace_tree::fill_numbers (.*trace_tree.rs:$numbers)]: 55'"
# histogram: non-empty, buckets in increasing order
awk '/^@latency:/{on=1; next} on && /^\[/{print} on && /^$/{on=0}' "$TMP/out.txt" >"$TMP/hist"
check "latency histogram is not empty" test -s "$TMP/hist"
# A bucket line: "[LOW, HIGH)  COUNT |@@@|", or "[0]" / "[1]" for the
# single values (a call of a few ns reads 0 once our stops' cost is out).
check "histogram buckets in increasing order" sh -c "sed 's/^\[\([0-9]*\)\([KMG]*\)[],].*/\1 \2/' '$TMP/hist' | awk '{m=\$2==\"K\"?1e3:\$2==\"M\"?1e6:\$2==\"G\"?1e9:1; v=\$1*m; if (NR>1 && v<=p) exit 1; p=v}'"
total=$(sed 's/ *|.*//; s/.* //' "$TMP/hist" | awk '{s += $1} END {print s+0}')
check "histogram holds every return ($total)" test "$total" = "$want"
"$XGDBPROF" probes trace_tree::tree::Tree::insrt "$FIXTURES/trace_tree" >"$TMP/unknown" 2>&1
check "an unknown SPEC fails and names the closest function" grep -q "closest names: trace_tree::tree::Tree::insert" "$TMP/unknown"
finish
