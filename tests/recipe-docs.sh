#!/bin/sh
# Every ```recipe block of docs/recipes.md must pass `xgdbprof check`.
set -u
doc=${TOP_SRCDIR:-.}/docs/recipes.md
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
	/^```recipe[ \t]*$/ { n++; file = sprintf("%s/example%03d.recipe", dir, n); inblock = 1; next }
	/^```/ && inblock { inblock = 0; close(file); next }
	inblock { print > file }
	END { print n > (dir "/count") }' "$doc"
count=$(cat "$tmp/count")
[ "${count:-0}" -ge 20 ] || { echo "docs/recipes.md has only ${count:-0} recipe examples"; exit 1; }
fail=0
for f in "$tmp"/example*.recipe; do
	if ! "$XGDBPROF" check -DFUNC=main "$f" >/dev/null 2>"$tmp/err"; then
		echo "FAIL: example $(basename "$f") of docs/recipes.md:"; cat "$f"; cat "$tmp/err"; fail=$((fail + 1))
	fi
done
echo "recipe-docs.sh: $count examples, $fail failed"
[ $fail = 0 ]
