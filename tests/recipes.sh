#!/bin/sh
# Golden tests of the recipe language (strace style: one case per file).
#   NAME.recipe + NAME.events : run with tests/recipe_run; stdout must equal
#                               NAME.expected, stderr NAME.stderr (or be empty).
#   NAME.recipe alone         : `xgdbprof check`; stdout must equal NAME.expected
#                               (if present), stderr NAME.stderr (or be empty);
#                               exit 1 when NAME.stderr has an error, else 0.
#   NAME.args                 : extra arguments (e.g. -DFUNC=main).
# Paths in messages are relative: the cases run from tests/recipes.
set -u
src=${TOP_SRCDIR:-.}/tests/recipes
runner=${TOP_BUILDDIR:-.}/tests/recipe_run
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
cd "$src" || exit 99
for recipe in *.recipe; do
	name=${recipe%.recipe}
	args=
	[ -f "$name.args" ] && args=$(cat "$name.args")
	if [ -f "$name.events" ]; then
		# shellcheck disable=SC2086
		"$runner" $args "$recipe" "$name.events" >"$tmp/out" 2>"$tmp/err"
		status=$?
		want_status=0
		if [ -f "$name.stderr" ]; then
			if grep -q 'runtime error' "$name.stderr"; then want_status=1
			elif grep -q ': error: ' "$name.stderr"; then want_status=2; fi
		fi
	else
		# shellcheck disable=SC2086
		"$XGDBPROF" check $args "$recipe" >"$tmp/out" 2>"$tmp/err"
		status=$?
		want_status=0
		[ -f "$name.stderr" ] && grep -q 'error' "$name.stderr" && want_status=1
	fi
	ok=1
	if [ -f "$name.expected" ]; then
		cmp -s "$tmp/out" "$name.expected" || { echo "FAIL $name: stdout differs"; diff -u "$name.expected" "$tmp/out" | head -40; ok=0; }
	fi
	if [ -f "$name.stderr" ]; then
		cmp -s "$tmp/err" "$name.stderr" || { echo "FAIL $name: stderr differs"; diff -u "$name.stderr" "$tmp/err" | head -40; ok=0; }
	elif [ -s "$tmp/err" ]; then
		echo "FAIL $name: unexpected stderr"; head -20 "$tmp/err"; ok=0
	fi
	[ "$status" = "$want_status" ] || { echo "FAIL $name: exit $status, want $want_status"; ok=0; }
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done

# Generated cases too large to keep in the tree.
# 1 MiB of valid recipe: must check, and quickly.
{
	i=0
	while [ $i -lt 12000 ]; do
		echo "function \"f$i\" { @calls[\"f$i\", thread.name] = count(); @lat = hist(nsecs); } # pad pad pad"
		i=$((i + 1))
	done
} >"$tmp/big.recipe"
if "$XGDBPROF" check "$tmp/big.recipe" >/dev/null 2>"$tmp/err"; then pass=$((pass + 1)); else echo "FAIL big.recipe"; head "$tmp/err"; fail=$((fail + 1)); fi
# 1 MiB of nested parentheses: bounded recursion, one error.
awk 'BEGIN { printf "begin { $x = "; for (i = 0; i < 500000; i++) printf "("; print "1; }" }' >"$tmp/deep.recipe"
"$XGDBPROF" check "$tmp/deep.recipe" >/dev/null 2>"$tmp/err"
if [ $? = 1 ] && grep -q 'nesting is too deep' "$tmp/err"; then pass=$((pass + 1)); else echo "FAIL deep.recipe"; head -5 "$tmp/err"; fail=$((fail + 1)); fi
# 10 MiB of binary garbage, and one 10 MiB token: what the errors echo
# stays small (the line around the column, quoted text cut, at most
# DIAG_PRINT_MAX errors) and is text; `check` exits 1, a run 2.
head -c 10485760 /dev/urandom >"$tmp/garbage.recipe"
awk 'BEGIN { printf "sample { "; for (i = 0; i < 10240; i++) printf "%s", s = s ? s : sprintf("%01024d", 0); print "(); }" }' |
	tr 0 a >"$tmp/token.recipe"
for case in "garbage:invalid UTF-8 byte" "token:unknown statement 'aaa"; do
	f=${case%%:*} want=${case#*:}
	for run in check run; do
		if [ $run = check ]; then
			"$XGDBPROF" check "$tmp/$f.recipe" >/dev/null 2>"$tmp/err"; status=$? want_status=1
		else
			"$XGDBPROF" -r "$tmp/$f.recipe" 999999999 >/dev/null 2>"$tmp/err"; status=$? want_status=2
		fi
		size=$(wc -c <"$tmp/err")
		if [ $status = $want_status ] && [ "$size" -lt 4096 ] && grep -q "$want" "$tmp/err" &&
			! tr -d '\t\n' <"$tmp/err" | LC_ALL=C grep -q '[[:cntrl:]]'; then
			pass=$((pass + 1))
		else
			echo "FAIL 10 MiB $f.recipe ($run): exit $status (want $want_status), $size bytes of stderr"
			head -c 600 "$tmp/err" | cat -v; echo; fail=$((fail + 1))
		fi
	done
done
# Shipped recipes all pass check.
for r in "$TOP_SRCDIR"/recipes/*.recipe; do
	if "$XGDBPROF" check -DFUNC=main "$r" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then pass=$((pass + 1)); else echo "FAIL shipped $r"; cat "$tmp/err"; fail=$((fail + 1)); fi
done
# `xgdbprof recipes` lists each shipped recipe with its one-line description.
"$XGDBPROF" recipes >"$tmp/list" 2>&1
for n in hot-cpu off-cpu panic sled-insert func-latency syscalls alloc heap heap-growth; do
	if grep -q "^$n  *[a-z]" "$tmp/list"; then pass=$((pass + 1)); else echo "FAIL recipes lists $n"; cat "$tmp/list"; fail=$((fail + 1)); fi
done
# -e text, and the exit status of check with one bad recipe among good ones.
if "$XGDBPROF" check -e 'sample { @[ustack] = count(); }' >/dev/null 2>&1; then pass=$((pass + 1)); else echo "FAIL check -e"; fail=$((fail + 1)); fi
"$XGDBPROF" check "$TOP_SRCDIR/recipes/panic.recipe" -e 'sampel {}' >/dev/null 2>&1
if [ $? = 1 ]; then pass=$((pass + 1)); else echo "FAIL check status with an error"; fail=$((fail + 1)); fi
echo "recipes.sh: $pass passed, $fail failed"
[ $fail = 0 ]
