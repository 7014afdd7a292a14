#!/bin/sh
# `xgdbprof demangle`: arguments, options, exit codes, and the stdin filter
# over mixed Rust/C++/plain text.
set -u
: "${XGDBPROF:?}"
fail=0
check() { # name want got
	if [ "$2" != "$3" ]; then
		printf 'FAIL %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3" >&2
		fail=1
	else
		echo "ok $1"
	fi
}

check "legacy full" "std::rt::lang_start::h94faa16d8b540789" \
	"$("$XGDBPROF" demangle _ZN3std2rt10lang_start17h94faa16d8b540789E)"
check "legacy --no-hash" "std::rt::lang_start" \
	"$("$XGDBPROF" demangle --no-hash _ZN3std2rt10lang_start17h94faa16d8b540789E)"
check "v0 full" "<alloc[3c1c0]::string::String as core[3c1c0]::fmt::Display>::fmt" \
	"$("$XGDBPROF" demangle _RNvXs5_NtCs1234_5alloc6stringNtB5_6StringNtNtCs1234_4core3fmt7Display3fmt 2>&1)"
check "several symbols, one per line" "$(printf 'foo::bar\nfoo(int)\nmain')" \
	"$("$XGDBPROF" demangle --no-hash _RNvC3foo3bar _Z3fooi main)"
check "-- ends options" "--no-hash" "$("$XGDBPROF" demangle -- --no-hash)"

out=$(printf '%s\n' \
	'#0  0x1 in _ZN4core9panicking9panic_fmt17h0123456789abcdefE () at x.rs:1' \
	'#1  0x2 in _RINvCs1234_3foo3barjE.llvm.123 (n=3)' \
	'#2  0x3 in _ZNSt6vectorIiSaIiEE9push_backERKi ()' \
	'plain main, keep_ZN3fooE and _R alone' | "$XGDBPROF" demangle)
want=$(printf '%s\n' \
	'#0  0x1 in core::panicking::panic_fmt::h0123456789abcdef () at x.rs:1' \
	'#1  0x2 in foo[3c1c0]::bar::<usize> (n=3)' \
	'#2  0x3 in std::vector<int, std::allocator<int> >::push_back(int const&) ()' \
	'plain main, keep_ZN3fooE and _R alone')
check "stdin filter" "$want" "$out"

# A line longer than any buffer and input without a final newline.
long=$(head -c 300000 /dev/zero | tr '\0' 'x')
check "huge line passes through" 300000 "$(printf '%s' "$long" | "$XGDBPROF" demangle | wc -c | tr -d ' ')"
check "no trailing newline" "foo::bar" "$(printf '_RNvC3foo3bar' | "$XGDBPROF" demangle)"

"$XGDBPROF" demangle --help | grep -q 'usage: xgdbprof demangle' || { echo "FAIL --help" >&2; fail=1; }
"$XGDBPROF" demangle --bogus >/dev/null 2>&1
check "unknown option exits 2" 2 $?
exit $fail
