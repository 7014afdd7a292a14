#!/bin/sh
# tests/report/report.sh — `xgdbprof report` on saved profiles: every format
# re-rendered from the file equals the expected rendering of the profile it
# was saved from (tests/report/*.expected), the SVG is well-formed XML with
# names escaped, and bad input gets a clear error and exit code.
. "$TOP_SRCDIR/tests/lib.sh"
R=$TOP_SRCDIR/tests/report

# The saved profiles hold @SRCDIR@ where the source tree is.
mkdir -p "$TMP/run"
sed "s|@SRCDIR@|$TOP_SRCDIR|g" "$R/cache-service.profile.json" > "$TMP/run/profile.json"
sed "s|@SRCDIR@|$TOP_SRCDIR|g" "$R/escaping.profile.json" > "$TMP/escaping.json"
unsrc() { sed "s|$TOP_SRCDIR|@SRCDIR@|g"; }

# The comparisons below are of the content, at a width no line reaches
# (widths would depend on where the source tree is); text-80.expected is
# the 80-column layout of the same profile, its sources put under /src.
COLUMNS=10000; export COLUMNS
"$XGDBPROF" report "$TMP/run" 2>"$TMP/err" | unsrc > "$TMP/text"
check "report DIR renders text equal to the expected report" diff -u "$R/text.expected" "$TMP/text"
sed "s|@SRCDIR@|/src|g" "$R/cache-service.profile.json" > "$TMP/src-profile.json"
COLUMNS=80 "$XGDBPROF" report "$TMP/src-profile.json" > "$TMP/text80"
check "at COLUMNS=80: the expected 80-column report" diff -u "$R/text-80.expected" "$TMP/text80"
check "at COLUMNS=80: no line wider than 80 characters" python3 -c '
import sys
sys.exit(max(len(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")) > 80)' "$TMP/text80"
# (the saved profile predates display names: its Rust frames hold the full
# demangled name, shown as today's runs show it; text.expected says how)
check "std paths are short in the text report" grep -q '(std/src/sync/mpsc/mod.rs:850)' "$TMP/text"
check "the rustc commit is said once, in the header" \
	test "$(grep -c '0123456789abcdef0123456789abcdef01234567' "$TMP/text")" = 1
"$XGDBPROF" report --format folded "$TMP/run/profile.json" | unsrc > "$TMP/folded"
check "folded from the saved profile" diff -u "$R/folded.expected" "$TMP/folded"
"$XGDBPROF" report -f folded --thread-roots --inlined-suffix "$TMP/run" | unsrc > "$TMP/folded2"
check "folded with thread roots and _[i]" diff -u "$R/folded-threads.expected" "$TMP/folded2"
"$XGDBPROF" report --format json "$TMP/run" | unsrc > "$TMP/json"
check "json from the saved profile" diff -u "$R/json.expected" "$TMP/json"
"$XGDBPROF" report --top 2 --full --functions 3 "$TMP/run" | unsrc > "$TMP/top2"
check "--top 2 --full --functions 3" diff -u "$R/text-full-top2.expected" "$TMP/top2"
"$XGDBPROF" report --focus 'Tree<K,V>::get|recv' "$TMP/run" | unsrc > "$TMP/focus"
check "--focus" diff -u "$R/text-focus.expected" "$TMP/focus"
NO_COLOR= "$XGDBPROF" report --color never "$TMP/run" > "$TMP/nocolor"
check "no escape sequences when not asked" sh -c "! grep -q \"$(printf '\033')\" '$TMP/nocolor'"

# --functions 12: std routines come after the user's own and the crates' (docs/reports.md, "--annotate")
RUSTC=/nonexistent/rustc "$XGDBPROF" report --annotate --functions 12 "$TMP/run" > "$TMP/annotate"
check "--annotate lists the hottest function" grep -q '^ROUTINE sled::tree::below_leaf ' "$TMP/annotate"
check "--annotate shows the hot source line with its share" \
	grep -q ' 65.0%   65.0%     21      key.cmp(leaf_low) == Ordering::Less // LINE: below-leaf' "$TMP/annotate"
check "--annotate says when std sources are missing" grep -q 'source not available' "$TMP/annotate"

# Rust std sources come from the local rust-src only when the local rustc is
# the commit that built the code: a fake toolchain whose rust-src holds
# alloc/src/vec/mod.rs, once of the profile's commit, once of another.
STD_COMMIT=0123456789abcdef0123456789abcdef01234567
fake_toolchain() {   # fake_toolchain DIR COMMIT: a rustc in DIR and its sysroot with rust-src
	mkdir -p "$1/sysroot/lib/rustlib/src/rust/library/alloc/src/vec"
	awk 'BEGIN { for (i = 1; i <= 3900; i++) print "// fake rust-src line " i }' \
		> "$1/sysroot/lib/rustlib/src/rust/library/alloc/src/vec/mod.rs"
	printf '#!/bin/sh\ncase "$1" in\n-vV) printf "rustc 1.0.0\\ncommit-hash: %s\\n" ;;\n--print) echo %s/sysroot ;;\n*) exit 3 ;;\nesac\n' \
		"$2" "$1" > "$1/rustc"
	chmod +x "$1/rustc"
}
fake_toolchain "$TMP/same" "$STD_COMMIT"
fake_toolchain "$TMP/other" fedcba9876543210fedcba9876543210fedcba98
RUSTC=$TMP/same/rustc "$XGDBPROF" report --annotate --functions 12 "$TMP/run" > "$TMP/annotate-same"
check "--annotate reads std sources from the rust-src of the same rustc commit" \
	grep -q '   5.0%    5.0%   3850  // fake rust-src line 3850' "$TMP/annotate-same" || show "$TMP/annotate-same"
check "--annotate names the local file and the short std path" \
	grep -qF "$TMP/same/sysroot/lib/rustlib/src/rust/library/alloc/src/vec/mod.rs (from alloc/src/vec/mod.rs)" \
	"$TMP/annotate-same"
RUSTC=$TMP/other/rustc "$XGDBPROF" report --annotate --functions 12 "$TMP/run" > "$TMP/annotate-other"
check "--annotate never shows another rustc commit's std sources" \
	sh -c "! grep -q 'fake rust-src line' '$TMP/annotate-other'"
check "--annotate says the local rustc is another commit" \
	grep -q 'source not shown: the code is from rustc commit 0123456789ab, the local rustc is commit fedcba987654' \
	"$TMP/annotate-other" || show "$TMP/annotate-other"
check "--annotate says how to point at the right sources" \
	grep -qF -- "--source-map /rustc/$STD_COMMIT=SYSROOT/lib/rustlib/src/rust" "$TMP/annotate-other"
"$XGDBPROF" report --annotate --source-map "$TOP_SRCDIR/tests/report=$TMP/nowhere" "$TMP/run" > "$TMP/annotate2"
check "--source-map rewrites annotated paths" grep -q "cannot open $TMP/nowhere/sled_tree.rs" "$TMP/annotate2"

# SVG: well-formed XML, escaped names, self-contained.
well_formed() {
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$1"
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1"
	else
		echo "neither xmllint (libxml2-utils) nor python3 is installed" >&2
		return 1
	fi
}
"$XGDBPROF" report --format svg -o "$TMP/flame.svg" "$TMP/run"
check "svg written with -o" test -s "$TMP/flame.svg"
check "svg is well-formed XML" well_formed "$TMP/flame.svg"
check "svg hover data carries path:line" grep -q "data-l=\"$TOP_SRCDIR/tests/report/sled_tree.rs:39\"" "$TMP/flame.svg"
check "svg loads nothing from outside" sh -c "! grep -Eq 'href|https?://[^w]' '$TMP/flame.svg'"
"$XGDBPROF" report --format svg "$TMP/escaping.json" > "$TMP/esc.svg"
check "svg with <>&\"' in names is well-formed" well_formed "$TMP/esc.svg"
check "svg escapes names" grep -q '&lt;&amp;&apos;static str as core::fmt::Display&gt;::fmt' "$TMP/esc.svg"
check "svg escapes the title" grep -q 'xgdbprof: /tmp/a&amp;b/&lt;weird&gt; &quot;exe&quot;' "$TMP/esc.svg"
"$XGDBPROF" report --format folded "$TMP/escaping.json" > "$TMP/esc.folded"
check "folded keeps ';' out of names" diff -u "$R/escaping-folded.expected" "$TMP/esc.folded"

# --inverted: folded lines leaf first, each the reverse of a plain line; the
# SVG merges stacks leaf first and draws them top down (an icicle of callers).
"$XGDBPROF" report -f folded --inverted "$TMP/run" | unsrc > "$TMP/folded-inv"
check "folded --inverted from the saved profile" diff -u "$R/folded-inverted.expected" "$TMP/folded-inv"
reverse_frames() {
	awk '{ match($0, / [0-9]+$/); n = substr($0, RSTART); k = split(substr($0, 1, RSTART - 1), f, ";")
	       s = f[k]; for (i = k - 1; i >= 1; i--) s = s ";" f[i]; print s n }' "$1" | LC_ALL=C sort
}
reverse_frames "$R/folded.expected" > "$TMP/folded-reversed"
check "folded --inverted: every line is a plain line's frames reversed" \
	sh -c "LC_ALL=C sort '$TMP/folded-inv' | diff -u '$TMP/folded-reversed' -"
"$XGDBPROF" report --format svg --inverted -o "$TMP/icicle.svg" "$TMP/run"
check "inverted svg is well-formed XML" well_formed "$TMP/icicle.svg"
# depth and name of each frame, and the y of each depth's row
frame_names() { grep -o "data-d=\"$2\"[^>]*data-n=\"[^\"]*\"" "$1" | sed 's/.*data-n="//; s/"$//' | LC_ALL=C sort -u; }
row_y() {
	awk -v d="$2" 'index($0, "data-d=\"" d "\"") && match($0, /<rect x="[^"]*" y="[0-9.]+"/) {
		s = substr($0, RSTART, RLENGTH); sub(/.*y="/, "", s); sub(/"$/, "", s); print s; exit }' "$1"
}
sed 's/ [0-9]*$//; s/;.*//; s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' "$R/folded-inverted.expected" | LC_ALL=C sort -u > "$TMP/leaves"
frame_names "$TMP/icicle.svg" 1 > "$TMP/icicle-row1"
check "inverted svg: the leaf functions are the first level under all" diff -u "$TMP/leaves" "$TMP/icicle-row1"
check "inverted svg: a hot leaf's callers are beneath it" \
	grep -q 'data-d="2"[^>]*data-n="sled::tree::Tree::view_for_key"' "$TMP/icicle.svg"
check "inverted svg: all, then the leaves, then their callers, top down" \
	awk "BEGIN { exit !($(row_y "$TMP/icicle.svg" 0) < $(row_y "$TMP/icicle.svg" 1) &&
			     $(row_y "$TMP/icicle.svg" 1) < $(row_y "$TMP/icicle.svg" 2)) }"
check "plain svg: all at the bottom, growing up" \
	awk "BEGIN { exit !($(row_y "$TMP/flame.svg" 0) > $(row_y "$TMP/flame.svg" 1)) }"
sed 's/;.*//' "$R/folded.expected" | LC_ALL=C sort -u > "$TMP/roots"
frame_names "$TMP/flame.svg" 1 > "$TMP/flame-row1"
check "plain svg: the roots are the first level" diff -u "$TMP/roots" "$TMP/flame-row1"
"$XGDBPROF" report --inverted "$TMP/run" 2>"$TMP/err"; rc=$?
check "--inverted with the text format: exit 2 naming the formats" \
	sh -c "test $rc = 2 && grep -q 'inverted goes with --format svg or folded' '$TMP/err'"

# Errors: exit 2 for bad input, one line naming the fix.
"$XGDBPROF" report "$TMP/missing" 2>"$TMP/err"; rc=$?
check "missing profile: exit 2" test "$rc" = 2
check "missing profile: says so" grep -q 'cannot open' "$TMP/err"
echo '{"format": "something-else"}' > "$TMP/other.json"
"$XGDBPROF" report "$TMP/other.json" 2>"$TMP/err"; rc=$?
check "not a profile: exit 2 and a clear message" sh -c "test $rc = 2 && grep -q 'not an xgdbprof profile' '$TMP/err'"
"$XGDBPROF" report --format pdf "$TMP/run" 2>"$TMP/err"; rc=$?
check "unknown format: exit 2" sh -c "test $rc = 2 && grep -q 'text, svg, folded, json' '$TMP/err'"
"$XGDBPROF" report --focus '(' "$TMP/run" 2>"$TMP/err"; rc=$?
check "bad focus regex: exit 1 with the regex error" sh -c "test $rc = 1 && grep -q 'focus regex' '$TMP/err'"
"$XGDBPROF" report --annotate --format json "$TMP/run" 2>/dev/null; rc=$?
check "--annotate with json: exit 2" test "$rc" = 2
finish
