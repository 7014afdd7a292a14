#!/usr/bin/env bash
# hostile_text.sh — target text (thread names, symbols, panic messages) that
# holds terminal controls or bytes that are not UTF-8 never reaches an output
# raw: every text output shows them as \xNN, every JSON output is strict
# UTF-8 and gives the controls back exactly (docs/reports.md, "Hostile text").
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# clean FILE [json]: no C0 control but newline and tab, no DEL, no C1 control,
# strict UTF-8; with json, also a JSON document.
clean() {
	python3 - "$@" <<'PY'
import json, re, sys
data = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", data)
if bad:
    sys.exit("  raw byte 0x%02x at offset %d: %r" % (data[bad.start()], bad.start(),
             data[max(0, bad.start() - 20):bad.start() + 20]))
try:
    text = data.decode("utf-8", "strict")
except UnicodeDecodeError as e:
    sys.exit("  not UTF-8: %s" % e)
c1 = re.search("[\x80-\x9f]", text)
if c1:
    sys.exit("  raw C1 control U+%04X" % ord(c1.group()))
if len(sys.argv) > 2:
    json.loads(text)
PY
}

"$FIXTURES/hostile_names" "$TMP/named" &
TARGET=$!
TEST_PIDS="$TEST_PIDS $TARGET"
wait_for_file "$TMP/named"

# Everything that needs the (CPU-burning) target first, checks once it is gone.
"$XGDBPROF" dump "$TARGET" >"$TMP/dump.txt" 2>"$TMP/dump.err"
dump_rc=$?
"$XGDBPROF" dump --json "$TARGET" >"$TMP/dump.json" 2>"$TMP/dump-json.err"
dump_json_rc=$?
# a profiling run: the report on stdout, profile.json, svg, folded, report json
"$XGDBPROF" -d 2 -o "$TMP/run" -e 'set threads all
sample {
	@stacks[thread.name, ustack] = count();
	@threads[thread.name] = count();
	printf("%s|%-16s|%c\n", thread.name, thread.name, 27);
}
end {
	print(@threads);
	report(@stacks);
	flamegraph(@stacks);
	folded(@stacks);
	json(@stacks);
}' "$TARGET" >"$TMP/run.txt" 2>"$TMP/run.err"
run_rc=$?
kill "$TARGET"

# dump: every name, as text and as JSON
check "dump exits 0" test $dump_rc -eq 0 || show "$TMP/dump.err"
check "dump text holds no raw control or invalid byte" clean "$TMP/dump.txt"
check "dump shows ESC[2J as \\x1b[2J" grep -qF '"\x1b[2J\x1b[Hclr"' "$TMP/dump.txt"
check "dump shows OSC 52 and BEL escaped" grep -qF '"\x1b]52;c;aGk=\x07"' "$TMP/dump.txt"
check "dump shows CR, TAB, NL of a name escaped" grep -qF '"bel\x07cr\x0dtab\x09nl\x0a"' "$TMP/dump.txt"
check "dump shows bytes that are not UTF-8 as \\xNN" grep -qF '"bad\xff\xfeutf8"' "$TMP/dump.txt"
check "dump shows C1 and DEL escaped" grep -qF '"c1\xc2\x9bdel\x7f"' "$TMP/dump.txt"

check "dump --json exits 0" test $dump_json_rc -eq 0 || show "$TMP/dump-json.err"
check "dump --json is clean, strict UTF-8 JSON" clean "$TMP/dump.json" json
check "dump --json gives controls back exactly, bad bytes as \\xNN text" python3 - "$TMP/dump.json" <<'PY'
import json, sys
names = {t["name"] for t in json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["threads"]}
want = {"\x1b[2J\x1b[Hclr", "\x1b]52;c;aGk=\x07", "\x1b]8;;x:\x07ln", "bel\x07cr\rtab\tnl\n",
        "bad\\xff\\xfeutf8", "c1\x9bdel\x7f"}
assert want <= names, (want - names, names)
PY

check "run exits 0" test $run_rc -eq 0 || show "$TMP/run.err"
check "run output (print, printf, report) is clean" clean "$TMP/run.txt"
check "run output shows the names escaped" grep -qF '\x1b]52;c;aGk=\x07' "$TMP/run.txt"
check "printf's %c of ESC is escaped too" grep -qF '|\x1b' "$TMP/run.txt"
check "profile.json is clean, strict UTF-8 JSON" clean "$TMP/run/profile.json" json
check "profile.json keeps names exactly, bad bytes as \\xNN text" python3 - "$TMP/run/profile.json" <<'PY'
import json, sys
names = {s["thread"] for s in json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["samples"]}
assert names & {"\x1b[2J\x1b[Hclr", "\x1b]52;c;aGk=\x07", "bad\\xff\\xfeutf8"}, names
PY
check "flamegraph.svg is clean" clean "$TMP/run/flamegraph.svg"
check "flamegraph.svg parses as XML" python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
	"$TMP/run/flamegraph.svg"
check "stacks.folded is clean" clean "$TMP/run/stacks.folded"
check "report.json is clean, strict UTF-8 JSON" clean "$TMP/run/report.json" json

# pprof: every string of the file (the string table: names, files, labels,
# comments) in the text form; speedscope: strict JSON giving names back.
pprof_strings_clean() {   # pprof_strings_clean FILE.pb.gz
	python3 - "$1" <<'PY'
import gzip, re, sys
data = gzip.open(sys.argv[1]).read()
def varint(i):
    v = shift = 0
    while True:
        b = data[i]; i += 1
        v |= (b & 0x7f) << shift; shift += 7
        if b < 0x80:
            return v, i
strings, i = [], 0
while i < len(data):          # the top-level Profile message, field by field
    key, i = varint(i)
    wire = key & 7
    if wire == 0:
        _, i = varint(i)
    elif wire == 2:
        n, i = varint(i)
        if key >> 3 == 6:     # string_table
            strings.append(data[i:i + n])
        i += n
    elif wire in (1, 5):
        i += 8 if wire == 1 else 4
    else:
        sys.exit("  wire type %d: not a profile" % wire)
names = set()
for s in strings:
    if re.search(rb"[\x00-\x1f\x7f]", s):
        sys.exit("  raw control byte in %r" % s)
    t = s.decode("utf-8", "strict")
    if re.search("[\x80-\x9f]", t):
        sys.exit("  raw C1 control in %r" % t)
    names.add(t)
want = {r"\x1b[2J\x1b[Hclr", r"\x1b]52;c;aGk=\x07", r"bad\xff\xfeutf8"}
assert want <= names, want - names
PY
}
check "profile.pb.gz: every string escaped, thread names as \\xNN" pprof_strings_clean "$TMP/run/profile.pb.gz"
check "profile.speedscope.json is clean, strict UTF-8 JSON giving names back" python3 - \
	"$TMP/run/profile.speedscope.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
names = {p["name"].rsplit(" (tid", 1)[0] for p in doc["profiles"]}
assert {"\x1b[2J\x1b[Hclr", "\x1b]52;c;aGk=\x07", "bad\\xff\\xfeutf8"} <= names, names
PY
check "profile.speedscope.json holds no raw control" clean "$TMP/run/profile.speedscope.json" json

# re-rendering the saved profile, every format
for format in text svg folded json speedscope; do
	roots=; case $format in svg|folded) roots=--thread-roots ;; esac
	"$XGDBPROF" report --format "$format" $roots "$TMP/run" >"$TMP/report.$format" 2>"$TMP/report.err"
	check "report --format $format exits 0" test $? -eq 0 || show "$TMP/report.err"
	check "report --format $format is clean" clean "$TMP/report.$format" \
		$(case $format in json|speedscope) echo json ;; esac)
done
"$XGDBPROF" report --format pprof -o "$TMP/report.pb.gz" "$TMP/run" 2>"$TMP/report.err"
check "report --format pprof: every string escaped" pprof_strings_clean "$TMP/report.pb.gz" ||
	show "$TMP/report.err"
check "report text names threads escaped" grep -qF 'bad\xff\xfeutf8' "$TMP/report.text"
check "folded: escaped thread names as roots, every line one stack" python3 - "$TMP/report.folded" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines and all(re.fullmatch(r".+ [0-9]+", l) for l in lines), lines
roots = {l.split(";")[0] for l in lines}
assert roots & {r"\x1b[2J\x1b[Hclr", r"\x1b]52,c,aGk=\x07", r"bad\xff\xfeutf8", r"bel\x07cr\x0dtab\x09nl\x0a"}, roots
PY

# panic: message, thread name and a symbol full of controls
( for i in $(seq 1 400); do grep -q "attached" "$TMP/panic.err" 2>/dev/null && break; sleep 0.05; done
  touch "$TMP/go" ) &
"$XGDBPROF" --recipe panic -o "$TMP/panic" -- "$FIXTURES/hostile_panic" "$TMP/go" >"$TMP/panic.txt" 2>"$TMP/panic.err"
check "--recipe panic exits 0" test $? -eq 0 || show "$TMP/panic.err"
wait
check "--recipe panic output is clean" clean "$TMP/panic.txt"
check "--recipe panic stderr is clean" clean "$TMP/panic.err"
check "the panic message is shown escaped" \
	grep -qF 'boom\x1b[2J\x1b]52;c;aGk=\x07\x0d\xc2\x9b31m round 2' "$TMP/panic.txt"
check "the thread name is shown escaped" grep -qF 'thread p\x1b[2J\x07\x0d (' "$TMP/panic.txt"
check "the symbol is shown escaped" grep -qF 'hostile\x1b[2Jsym\x07\x0d' "$TMP/panic.txt"
finish
