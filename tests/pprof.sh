#!/usr/bin/env bash
# pprof and speedscope files end to end: a sampling run on the inline_c
# fixture writes profile.pb.gz and profile.speedscope.json beside its
# profile.json; `go tool pprof` (Debian's golang-go) reads the pprof file
# with the same shares as our report, the inline frames, the source lines
# and the build-id; the speedscope file validates against the schema the
# speedscope npm package publishes (python3-jsonschema). `xgdbprof report
# --format pprof|speedscope` writes the same from a saved profile.
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool go golang-go
require_tool python3 python3
# Debian's python3-jsonschema lives under /usr/bin/python3, which another
# python3 first on PATH (pyenv) does not see.
JSONSCHEMA_PY=
for py in /usr/bin/python3 python3; do
	"$py" -c 'import jsonschema' 2>/dev/null && { JSONSCHEMA_PY=$py; break; }
done
[ -n "$JSONSCHEMA_PY" ] || skip_test "python3-jsonschema is not installed (Debian: apt-get install python3-jsonschema)"

# go keeps a cache and reads its settings under HOME: all of it in $TMP,
# nothing fetched (pprof ships with the toolchain).
export HOME="$TMP/home" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS= GOTOOLCHAIN=local GOPROXY=off
mkdir -p "$HOME"
pprof() { go tool pprof "$@" 2>>"$TMP/pprof.err"; }

marker_line() {   # marker_line FILE MARKER -> line number of "LINE: MARKER"
	grep -n "LINE: $2\( \|\$\)" "$1" | cut -d: -f1
}
INLINE_C=$TOP_SRCDIR/tests/fixtures/inline_c.c
EXE=$(readlink -f "$FIXTURES/inline_c")
BUILD_ID=$(readelf -n "$EXE" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')

"$FIXTURES/inline_c" spin >/dev/null &
TARGET=$!
TEST_PIDS="$TEST_PIDS $TARGET"
sleep 0.3
"$XGDBPROF" --recipe hot-cpu -d 4s -F 49 -o "$TMP/run" "$TARGET" >"$TMP/run.txt" 2>"$TMP/run.err"
check "hot-cpu run exits 0" test $? -eq 0 || show "$TMP/run.err"
PB=$TMP/run/profile.pb.gz
check "the run wrote profile.pb.gz" test -s "$PB"
check "the run wrote profile.speedscope.json" test -s "$TMP/run/profile.speedscope.json"
check "the run says where they are" grep -q 'profile.pb.gz (for go tool pprof)' "$TMP/run.err"
check "profile.pb.gz is gzip" sh -c "gzip -t '$PB'"

# -top: the same shares as our report (its JSON form, the same model).
"$XGDBPROF" report --format json "$TMP/run" >"$TMP/report.json"
pprof -top -nodecount=200 "$PB" >"$TMP/top.txt"
check "go tool pprof -top reads it as a CPU profile" grep -q '^Type: cpu$' "$TMP/top.txt" ||
	{ show "$TMP/top.txt"; show "$TMP/pprof.err"; }
same_shares() {   # same_shares REPORT.json TOP.txt
	python3 - "$1" "$2" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
rows = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+([\d.]+)%\s+(.*?)( \(inline\))?$", line)
    if m:
        rows[m.group(3)] = (float(m.group(1)), float(m.group(2)))
top = report["top_self"][0]
hot = [f for f in report["top_total"] + report.get("left_out_of_top_total", []) if f["function"] == "hot_function"][0]
print("  ours: %s self %.2f%%, hot_function total %.2f%%" % (top["function"], top["self_share"], hot["total_share"]))
print("  pprof: %s flat %s, hot_function cum %s" % (top["function"], rows.get(top["function"]), rows.get("hot_function")))
# (Which function is hottest depends on where the stops land (tests/fixtures/inline_c.c says why getpid is called rarely). The check is that pprof reads the same shares.)
assert abs(rows[top["function"]][0] - top["self_share"]) <= 1
assert abs(rows["hot_function"][1] - hot["total_share"]) <= 1
PY
}
check "-top: the hottest function's flat% and hot_function's cum% match our report (±1 point)" \
	same_shares "$TMP/report.json" "$TMP/top.txt"

# -traces: the inline chain of one PC, innermost first, under hot_function;
# each sample labelled with its thread.
pprof -traces "$PB" >"$TMP/traces.txt"
check "-traces shows mix_leaf → mix_middle → mix_outer inlined into hot_function" python3 - "$TMP/traces.txt" <<'PY'
import re, sys
want = ["mix_leaf (inline)", "mix_middle (inline)", "mix_outer (inline)", "hot_function"]
for block in open(sys.argv[1]).read().split("-----------+")[1:]:
    names = [re.sub(r"^\s*(\S+ms|\S+s)?\s+", "", l).strip() for l in block.splitlines() if l.strip() and ":" not in l]
    for i in range(len(names) - 3):
        if names[i:i + 4] == want:
            sys.exit(0)
print("  no trace holds %s" % " / ".join(want))
sys.exit(1)
PY
check "-traces labels samples with the thread id" grep -Eq "^ *thread_id: +$TARGET( |$)" "$TMP/traces.txt"
check "-traces labels samples with the thread name" grep -Eq "^ *thread: +inline_c$" "$TMP/traces.txt"

# -list: the source of hot_function, with time on the marked call line.
pprof -list '^hot_function$' "$PB" >"$TMP/list.txt"
CALL_LINE=$(marker_line "$INLINE_C" hot-calls-outer)
check "-list finds hot_function's source file" grep -q "^ROUTINE =* hot_function in .*tests/fixtures/inline_c.c$" "$TMP/list.txt" ||
	show "$TMP/list.txt"
check "-list puts time on the line hot_function calls the inlined chain from" \
	grep -Eq "^ +[^ ]+ +[0-9.]+m?s +$CALL_LINE:.*LINE: hot-calls-outer" "$TMP/list.txt"

# -raw: the executable's mapping first, with its build-id, symbolized.
pprof -raw "$PB" >"$TMP/raw.txt"
check "the fixture has a build-id to look for" test -n "$BUILD_ID"
check "-raw: mapping 1 is the executable, with its build-id and every symbol flag" \
	grep -Fq " $EXE $BUILD_ID [FN][FL][LN][IN]" "$TMP/raw.txt" || show "$TMP/raw.txt"
check "-raw: the period is the achieved sampling interval in CPU nanoseconds" \
	grep -q '^PeriodType: cpu nanoseconds$' "$TMP/raw.txt"
pprof -comments "$PB" >"$TMP/comments.txt"
check "comments: the command line, xgdbprof's version, the observer effect" sh -c "
	grep -q '^command line: .*inline_c spin\$' '$TMP/comments.txt' &&
	grep -q '^xgdbprof [0-9]' '$TMP/comments.txt' &&
	grep -Eq '^observer effect: (target|each thread) (stopped|held) (at most )?[0-9.]*% of (the|its) time' '$TMP/comments.txt'" || show "$TMP/comments.txt"

# report --format pprof from the saved profile.json (the recipe's map: the
# same samples here, no thread ids).
"$XGDBPROF" report --format pprof -o "$TMP/report.pb.gz" "$TMP/run"
check "report --format pprof -o FILE exits 0" test $? -eq 0
pprof -top -nodecount=200 "$TMP/report.pb.gz" >"$TMP/top2.txt"
check "report --format pprof: the same shares" same_shares "$TMP/report.json" "$TMP/top2.txt"
pprof -raw "$TMP/report.pb.gz" >"$TMP/raw2.txt"
check "report --format pprof: the build-id survives profile.json" grep -Fq " $EXE $BUILD_ID [FN][FL][LN][IN]" \
	"$TMP/raw2.txt"
"$XGDBPROF" report -f pprof "$TMP/run" >"$TMP/stdout.pb.gz"
check "report --format pprof to a pipe or file writes it" cmp -s "$TMP/stdout.pb.gz" "$TMP/report.pb.gz"
if command -v script >/dev/null 2>&1; then
	script -qec "'$XGDBPROF' report -f pprof '$TMP/run'" /dev/null >"$TMP/tty.out" 2>&1
	check "report --format pprof to a terminal is refused with exit 2" test $? -eq 2
	check "... naming the fix" grep -q 'give -o FILE' "$TMP/tty.out"
fi

# speedscope: the schema from the npm package speedscope (fetched once into
# the build tree), checked with python3-jsonschema; then what the schema
# cannot say (indices, order, per-thread profiles).
NPM_DIR=$TOP_BUILDDIR/tests/npm
SCHEMA=$NPM_DIR/package/dist/release/file-format-schema.json
if [ ! -s "$SCHEMA" ] && command -v npm >/dev/null 2>&1; then
	mkdir -p "$NPM_DIR"
	(cd "$NPM_DIR" && npm_config_cache="$NPM_DIR/cache" npm pack --silent speedscope@1.25.0 >/dev/null &&
		tar xzf speedscope-1.25.0.tgz package/dist/release/file-format-schema.json) 2>"$TMP/npm.err"
fi
check "speedscope's file-format schema, from its npm package (npm pack speedscope@1.25.0)" test -s "$SCHEMA" ||
	show "$TMP/npm.err"
"$XGDBPROF" report --format speedscope "$TMP/run" >"$TMP/report.speedscope.json"
check "report --format speedscope exits 0" test $? -eq 0
HOT_DECL=$(grep -n 'uint64_t hot_function(' "$INLINE_C" | cut -d: -f1)
speedscope_ok() {   # speedscope_ok FILE PROFILE.json
	"$JSONSCHEMA_PY" - "$SCHEMA" "$1" "$2" "$HOT_DECL" <<'PY'
import json, sys, jsonschema
schema, doc, profile = (json.load(open(p)) for p in sys.argv[1:4])
jsonschema.Draft7Validator.check_schema(schema)
jsonschema.Draft7Validator(schema).validate(doc)
broken = json.loads(json.dumps(doc)); del broken["profiles"][0]["weights"]
assert not jsonschema.Draft7Validator(schema).is_valid(broken), "the schema accepts anything"
frames = doc["shared"]["frames"]
threads = {(s["thread"], s.get("tid")) for s in profile["samples"]}
assert len(doc["profiles"]) == len(threads), (len(doc["profiles"]), threads)
hot = [f for f in frames if f["name"] == "hot_function"]
assert len(hot) == 1 and hot[0]["file"].endswith("tests/fixtures/inline_c.c") and hot[0]["line"] == int(sys.argv[4]), hot
order_seen = False
for p in doc["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "nanoseconds"
    assert len(p["samples"]) == len(p["weights"]) and p["endValue"] == sum(p["weights"])
    for stack in p["samples"]:
        assert all(0 <= i < len(frames) for i in stack)
        names = [frames[i]["name"] for i in stack]
        if "main" in names and "hot_function" in names:
            assert names.index("main") < names.index("hot_function"), "stacks must be root first"
            order_seen = True
assert order_seen, "no stack holds main and hot_function"
print("  %d profiles, %d frames: valid" % (len(doc["profiles"]), len(frames)))
PY
}
check "the run's profile.speedscope.json is valid speedscope" \
	speedscope_ok "$TMP/run/profile.speedscope.json" "$TMP/run/profile.json"
check "report --format speedscope is valid speedscope" speedscope_ok "$TMP/report.speedscope.json" "$TMP/run/profile.json"

# Two busy threads (ratio: spin-1, spin-2; main sleeps): one speedscope
# profile and one pprof thread label per thread, with the threads' real ids.
"$FIXTURES/ratio" &
RATIO=$!
TEST_PIDS="$TEST_PIDS $RATIO"
sleep 0.3
"$XGDBPROF" --recipe hot-cpu -d 3s -F 49 -o "$TMP/ratio" "$RATIO" >/dev/null 2>"$TMP/ratio.err"
check "ratio run exits 0" test $? -eq 0 || show "$TMP/ratio.err"
for task in /proc/"$RATIO"/task/*; do echo "$(cat "$task/comm") (tid ${task##*/})"; done | sort >"$TMP/threads"
check "speedscope: one profile per busy thread, named with its id" "$JSONSCHEMA_PY" - "$SCHEMA" \
	"$TMP/ratio/profile.speedscope.json" "$TMP/threads" <<'PY'
import json, sys, jsonschema
schema, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.Draft7Validator(schema).validate(doc)
names = sorted(p["name"] for p in doc["profiles"])
real = [l.strip() for l in open(sys.argv[3]) if l.startswith("spin-")]
print("  profiles: %s; threads: %s" % (names, real))
assert names == real, (names, real)
PY
pprof -tags "$TMP/ratio/profile.pb.gz" >"$TMP/tags.txt"
tags_name_threads() {
	local tid
	grep -q 'spin-1' "$TMP/tags.txt" && grep -q 'spin-2' "$TMP/tags.txt" || return 1
	for tid in $(sed -n 's/^spin-. (tid \([0-9]*\))$/\1/p' "$TMP/threads"); do
		grep -Eq "(^|[^0-9])$tid([^0-9]|$)" "$TMP/tags.txt" || return 1
	done
}
check "pprof -tags: both threads by name and by id" tags_name_threads || show "$TMP/tags.txt"

"$XGDBPROF" report --format nonsense "$TMP/run" 2>"$TMP/bad.err"
check "an unknown --format is exit 2, listing pprof and speedscope" sh -c \
	"test $? -eq 2 && grep -q 'pprof, speedscope' '$TMP/bad.err'"
finish
