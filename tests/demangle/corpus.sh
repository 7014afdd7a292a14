#!/bin/sh
# Live corpus check: every _ZN/_R symbol of the freshly built fixture binaries
# through `xgdbprof demangle` (both forms, as a stdin filter, bare and
# embedded in text) against rustfilt, the rustc-demangle oracle, when it is
# installed. Byte-identical or fail, printing the first differences.
# Without rustfilt it still checks every symbol demangles cleanly (the
# checked-in expectations are compared by tests/unit/test_demangle).
set -eu
: "${XGDBPROF:?}" "${FIXTURES:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

bins="$FIXTURES/demangle_legacy $FIXTURES/demangle_v0 $FIXTURES/demangle_legacy_opt $FIXTURES/demangle_v0_opt"
for b in $bins; do
	[ -x "$b" ] || { echo "missing fixture $b (make check builds it)" >&2; exit 1; }
done
# shellcheck disable=SC2086
nm $bins | awk 'NF >= 2 { print $NF }' | grep -E '^_(ZN|R)' | LC_ALL=C sort -u > "$tmp/syms"
n=$(wc -l < "$tmp/syms")
legacy=$(grep -c '^_ZN' "$tmp/syms" || true)
v0=$(grep -c '^_R' "$tmp/syms" || true)
echo "corpus: $n symbols ($legacy legacy, $v0 v0)"
if [ "$n" -lt 1000 ] || [ "$legacy" -lt 100 ] || [ "$v0" -lt 100 ]; then
	echo "FAIL: corpus too small" >&2
	exit 1
fi

"$XGDBPROF" demangle < "$tmp/syms" > "$tmp/got-full"
"$XGDBPROF" demangle --no-hash < "$tmp/syms" > "$tmp/got-alt"
# Embedded in text the way backtraces and profiler output carry them.
sed 's/.*/#3 0x00005555 in & (self=0x1) at src\/main.rs:12 [&]/' "$tmp/syms" > "$tmp/text"
"$XGDBPROF" demangle < "$tmp/text" > "$tmp/got-text"

compare() { # name want got
	if ! cmp -s "$2" "$3"; then
		echo "FAIL $1: $(paste "$2" "$3" | awk -F'\t' '$1 != $2' | wc -l) lines differ; first ones (want / got):" >&2
		paste -d '\n' "$2" "$3" | paste - - | awk -F'\t' '$1 != $2 { print "  want: " $1; print "  got:  " $2 }' | head -12 >&2
		fail=1
	else
		echo "ok $1: $(wc -l < "$2") lines byte-identical"
	fi
}

if command -v rustfilt >/dev/null 2>&1; then
	rustfilt -h < "$tmp/syms" > "$tmp/want-full"
	rustfilt < "$tmp/syms" > "$tmp/want-alt"
	rustfilt -h < "$tmp/text" > "$tmp/want-text"
	compare "full form vs rustfilt -h" "$tmp/want-full" "$tmp/got-full"
	compare "no-hash form vs rustfilt" "$tmp/want-alt" "$tmp/got-alt"
	compare "symbols in text vs rustfilt -h" "$tmp/want-text" "$tmp/got-text"
else
	echo "note: rustfilt not installed; live oracle comparison not run (apt install rustfilt)"
fi

# With or without the oracle: nothing may stay mangled or come out damaged.
if paste "$tmp/syms" "$tmp/got-full" | awk -F'\t' '$1 == $2' | grep -q .; then
	echo "FAIL: symbols left mangled:" >&2
	paste "$tmp/syms" "$tmp/got-full" | awk -F'\t' '$1 == $2 { print "  " $1 }' | head -5 >&2
	fail=1
fi
damaged='\{invalid syntax\}|\{recursion limit reached\}|punycode\{'
if grep -q -E "$damaged" "$tmp/got-full"; then
	echo "FAIL: damaged demangling:" >&2
	grep -n -E "$damaged" "$tmp/got-full" | head -5 >&2
	fail=1
fi
grep -q '17h[0-9a-f]\{16\}E' "$tmp/got-alt" && { echo "FAIL: hash left in --no-hash output" >&2; fail=1; }
exit $fail
