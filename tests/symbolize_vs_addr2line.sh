#!/bin/sh
# symbolize_vs_addr2line.sh — the symbolizer's inline chains must equal
# binutils addr2line's (`addr2line -a -i -f`) on every tested PC of the
# fixtures: every byte of the C fixture's functions; every 4th instruction
# (objdump -d) of every function of the Rust fixture, std included (override
# with SYMBOLIZE_FN_RE, e.g. '^_ZN11inline_rust', and SYMBOLIZE_STEP); plus
# every line-table address of the fixture's source file. Only addresses
# inside a function symbol's [start, start+size) are used.
#
# Normalization (docs/symbols.md, "Checking against addr2line"):
#  - names: addr2line's raw (linkage) names go through rustfilt, which prints
#    rustc-demangle's hash-less form, as our frames' full names do (the
#    display names reports show are checked by test_symbolize); C names pass unchanged;
#  - locations: full paths compared as strings, after removing addr2line's
#    " (discriminator N)" suffix; an unknown line prints as "FILE:?" and an
#    unknown location as "??:0" on both sides.
#  - addr2line's "NAME:?" for a PC without line info, where NAME is an
#    STT_FILE symbol of the binary, reads as "??:?" (see below).
set -u
: "${FIXTURES:?run from make check}" "${TOP_BUILDDIR:?run from make check}"
DRIVER=$TOP_BUILDDIR/tests/unit/test_symbolize
for tool in addr2line objdump rustfilt; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: symbolize_vs_addr2line needs $tool (Debian: apt-get install binutils rustfilt)"
		exit 77
	fi
done

tmp=$(mktemp -d /tmp/xgdbprof-a2l-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# $1 binary, $2 awk regex over objdump's (mangled) function names, $3 source
# file name, $4 step: test every Nth instruction, or "bytes" for every byte.
# Only addresses inside a function's symbol (start, size) count: the padding
# between functions is no function's code (addr2line names it after the
# preceding symbol and the STT_FILE of its object, we name it from nothing).
compare() {
	bin=$1 fnre=$2 srcname=$3 step=$4 tag=$(basename "$1")
	nm -S --defined-only "$bin" | awk 'NF == 4 { print $4 "@" $1, $2 }' > "$tmp/$tag.syms"
	objdump -d --no-show-raw-insn "$bin" | awk -v re="$fnre" -v step="$step" -v syms="$tmp/$tag.syms" '
		BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); size[f[1]] = f[2] } }
		function hex(h,   i, v) { v = 0; h = tolower(h); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		/^[0-9a-f]+ <.*>:$/ {
			fn = $2; sub(/^</, "", fn); sub(/>:$/, "", fn)
			key = fn "@" $1
			keep = (fn ~ re) && (key in size); n = 0
			if (keep) { lo = hex($1); hi = lo + hex(size[key]) }
			if (keep && step == "bytes") for (a = lo; a < hi; a++) printf "0x%x\n", a
			next
		}
		keep && step != "bytes" && /^ +[0-9a-f]+:/ {
			a = $1; sub(/:$/, "", a)
			if (hex(a) < hi && n++ % step == 0) print "0x" a
		}
	' > "$tmp/$tag.insn"
	"$DRIVER" lineaddrs "$bin" "$srcname" > "$tmp/$tag.lines" || { status=1; return; }
	sort -u "$tmp/$tag.insn" "$tmp/$tag.lines" > "$tmp/$tag.pcs"
	npcs=$(wc -l < "$tmp/$tag.pcs")
	if [ "$npcs" -lt 200 ]; then
		echo "FAIL $tag: only $npcs PCs to test (objdump/lineaddrs found too little)"
		status=1
		return
	fi
	# For a PC with a symbol but no line row, addr2line prints the name of
	# the preceding STT_FILE symbol (an object or codegen-unit name such as
	# "crtstuff.c" or "crate.<hash>-cgu.0", not a path) as "NAME:?"; we
	# have no file there and print "??:?". Only those exact names are mapped.
	readelf -sW "$bin" | awk '$4 == "FILE" && $8 != "" { print $8 ":?" }' | sort -u > "$tmp/$tag.sttfile"
	addr2line -a -i -f -e "$bin" < "$tmp/$tag.pcs" | rustfilt |
		sed 's/ (discriminator [0-9]*)$//' |
		awk -v f="$tmp/$tag.sttfile" 'BEGIN { while ((getline l < f) > 0) stt[l] = 1 }
			{ print (($0 in stt) ? "??:?" : $0) }' > "$tmp/$tag.want"
	"$DRIVER" addr2line "$bin" < "$tmp/$tag.pcs" | rustfilt > "$tmp/$tag.got" || { status=1; return; }
	# One line per PC: "addr | name | file:line | name | file:line ...".
	for side in want got; do
		awk '/^0x[0-9a-f]+$/ { if (rec != "") print rec; rec = $0; next }
		     { rec = rec " | " $0 } END { if (rec != "") print rec }' \
			"$tmp/$tag.$side" > "$tmp/$tag.$side.rec"
	done
	paste -d '\n' "$tmp/$tag.want.rec" "$tmp/$tag.got.rec" | awk -v tag="$tag" -v npcs="$npcs" '
		NR % 2 == 1 { want = $0; next }
		{ if (want != $0) { bad++; if (bad <= 8) { print "MISMATCH " tag; print "  addr2line: " want; print "  ours:      " $0 } }
		  else if ($0 ~ / \| .* \| .* \| /) inl++ }
		END { printf "%s %s: %d PCs, %d mismatches, %d with inline frames\n", (bad ? "FAIL" : "ok"), tag, npcs, bad, inl; exit bad ? 1 : 0 }
	' || status=1
	if [ "$(wc -l < "$tmp/$tag.want.rec")" != "$(wc -l < "$tmp/$tag.got.rec")" ]; then
		echo "FAIL $tag: record counts differ"
		status=1
	fi
}

compare "$FIXTURES/inline_c" '^(main|hot_function|cold_function)$' inline_c.c bytes
compare "$FIXTURES/inline_rust" "${SYMBOLIZE_FN_RE:-.}" inline_rust.rs "${SYMBOLIZE_STEP:-4}"
exit $status
