#!/usr/bin/env bash
# The command line: --help, --version, and the man page agree with them.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99

"$XGDBPROF" --help >"$TMP/help"
check "--help exits 0" test $? -eq 0
"$XGDBPROF" --version >"$TMP/version"
check "--version prints the package version" grep -qx 'xgdbprof [0-9.]*' "$TMP/version"
# Every long option in --help is documented in the man page, and vice versa.
grep -o -- '--[a-z][a-z-]*' "$TMP/help" | sort -u >"$TMP/help.opts"
sed 's/\\-/-/g' "$TOP_SRCDIR/docs/xgdbprof.1" | grep -o -- '--[a-z][a-z-]*' | sort -u >"$TMP/man.opts"
check "the man page documents every option of --help" bash -c "comm -23 '$TMP/help.opts' '$TMP/man.opts' | tee /dev/stderr | wc -l | grep -qx 0"
# Every subcommand in --help has a man page section and its own --help.
for sub in $(sed -n '/^Subcommands:/,/^$/p' "$TMP/help" | awk 'NF>1 && $1 != "Subcommands:" {print $1}'); do
	check "subcommand $sub is in the man page" grep -q "^\\.SS \"\\?$sub" "$TOP_SRCDIR/docs/xgdbprof.1"
	"$XGDBPROF" "$sub" --help >/dev/null
	check "xgdbprof $sub --help exits 0" test $? -eq 0
done
finish
