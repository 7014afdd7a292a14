#!/usr/bin/env bash
# output_files.sh — output files never follow a planted symlink (each is a
# new temporary file renamed over its name), and a bad -o is refused with
# exit status 2 before the target is touched (docs/reports.md, "Output files").
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
umask 022
start_counter
tracer_of() { sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$1/status"; }

# planted symlinks in the output directory: the run replaces the links, the
# files they point to stay as they were (or absent)
OUT=$TMP/out
mkdir "$OUT"
echo keep >"$TMP/victim-kept"
ln -s "$TMP/victim-created" "$OUT/profile.json"
ln -s "$TMP/victim-svg" "$OUT/hot-cpu.svg"
ln -s "$TMP/victim-kept" "$OUT/hot-cpu.folded"
"$XGDBPROF" -d 1 -o "$OUT" "$COUNTER_PID" >"$TMP/run.txt" 2>"$TMP/run.err"
check "run with planted links exits 0" test $? -eq 0 || show "$TMP/run.err"
check "the profile.json link's target was not created" test ! -e "$TMP/victim-created"
check "the svg link's target was not created" test ! -e "$TMP/victim-svg"
check "the folded link's existing target is untouched" test "$(cat "$TMP/victim-kept")" = keep
for f in profile.json hot-cpu.svg hot-cpu.folded; do
	check "$f is now a regular file" test -f "$OUT/$f" -a ! -L "$OUT/$f"
done
check "files are created 0644 under umask 022" test "$(stat -c %a "$OUT/profile.json")" = 644
check "no temporary file is left behind" test -z "$(ls -A "$OUT" | grep '^\.')"
"$XGDBPROF" report "$OUT" >"$TMP/report.txt" 2>"$TMP/report.err"
check "the report reads the written profile" grep -q 'spin_step' "$TMP/report.txt" || show "$TMP/report.err"

# report -o FILE: same rule
ln -s "$TMP/victim-report" "$OUT/report.txt"
"$XGDBPROF" report -o "$OUT/report.txt" "$OUT" 2>"$TMP/report.err"
check "report -o over a planted link exits 0" test $? -eq 0 || show "$TMP/report.err"
check "report -o did not write through the link" test ! -e "$TMP/victim-report"
check "report -o wrote the report" grep -q 'spin_step' "$OUT/report.txt"

# a recipe names files inside the output directory only
"$XGDBPROF" -d 1 -o "$OUT" -e 'sample { @s[ustack] = count(); } end { folded(@s, "../escaped"); }' \
	"$COUNTER_PID" >/dev/null 2>"$TMP/name.err"
check "a recipe file name with '/' exits 2" test $? -eq 2
check "... naming the rule" grep -q 'must be a plain name' "$TMP/name.err" || show "$TMP/name.err"
check "... and writes nothing" test ! -e "$TMP/escaped"

# refused before attaching: the target's TracerPid never changes, at once
refused() {   # refused WHAT -o-ARG EXPECTED-MESSAGE
	local what=$1 dir=$2 message=$3 start end rc
	start=$(date +%s%N)
	( for i in $(seq 1 40); do t=$(tracer_of "$COUNTER_PID"); [ "$t" != 0 ] && echo "$t"; sleep 0.025; done ) \
		>"$TMP/tracers" &
	local watcher=$!
	"$XGDBPROF" -d 5 -o "$dir" "$COUNTER_PID" >/dev/null 2>"$TMP/refused.err"
	rc=$?
	end=$(date +%s%N)
	wait "$watcher"
	check "-o $what exits 2" test "$rc" -eq 2 || show "$TMP/refused.err"
	check "-o $what: one line naming the fix" \
		test "$(wc -l <"$TMP/refused.err")" -eq 1 -a -n "$(grep -- "$message" "$TMP/refused.err")"
	check "-o $what is refused in < 1 s" test $(( (end - start) / 1000000 )) -lt 1000
	check "-o $what: the target was never traced" test ! -s "$TMP/tracers"
	check "-o $what: the target runs free" target_runs_free "$COUNTER_PID" "$PROGRESS"
}
echo data >"$TMP/a-file"
refused "an existing file" "$TMP/a-file" "not a directory; give -o"
check "... and the file is untouched" test "$(cat "$TMP/a-file")" = data
refused "a directory nobody can write (/proc/PID)" "/proc/$COUNTER_PID" "give -o a directory you can write"
if [ "$(id -u)" != 0 ]; then
	mkdir "$TMP/ro" && chmod 0500 "$TMP/ro"
	refused "a mode 0500 directory" "$TMP/ro" "give -o a directory you can write"
	echo "# skipped: a symlink owned by another user needs root to plant"
else
	echo "# skipped: mode 0500 does not stop root (the /proc/PID case covers an unwritable directory)"
	mkdir -m 1777 "$TMP/shared" "$TMP/elsewhere"
	ln -s "$TMP/elsewhere" "$TMP/shared/out"
	chown -h nobody "$TMP/shared/out"
	refused "another user's symlink in a sticky shared directory" "$TMP/shared/out" "owned by another user"
	check "... and nothing was written where it points" test -z "$(ls -A "$TMP/elsewhere")"
fi

# -o FILE.svg (FILE.pb.gz, …) writes that one file, as py-spy's -o does:
# no directory named flame.svg, nothing else beside it, and a link planted
# at the name is replaced, not followed
mkdir "$TMP/one"
"$XGDBPROF" -d 1 -o "$TMP/one/flame.svg" "$COUNTER_PID" >/dev/null 2>"$TMP/one.err"
check "-o flame.svg exits 0" test $? -eq 0 || show "$TMP/one.err"
check "-o flame.svg writes a file, not a directory" test -f "$TMP/one/flame.svg" || ls -la "$TMP/one"
check "... a flame graph of the run" grep -q 'spin_step' "$TMP/one/flame.svg"
check "... and nothing else beside it" test "$(ls -A "$TMP/one")" = flame.svg || ls -A "$TMP/one"
check "... and says where it went" grep -q "flame graph written to $TMP/one/flame.svg" "$TMP/one.err" || show "$TMP/one.err"
ln -s "$TMP/victim-one" "$TMP/one/planted.svg"
"$XGDBPROF" -d 0.5 -o "$TMP/one/planted.svg" "$COUNTER_PID" >/dev/null 2>"$TMP/one.err"
check "-o over a planted link: the link's target was not created" test ! -e "$TMP/victim-one"
check "... the link became the flame graph" test -f "$TMP/one/planted.svg" -a ! -L "$TMP/one/planted.svg"
"$XGDBPROF" -d 0.5 -o "$TMP/one/cpu.pb.gz" "$COUNTER_PID" >/dev/null 2>"$TMP/one.err"
check "-o cpu.pb.gz writes one gzip'd pprof file" gzip -t "$TMP/one/cpu.pb.gz" || show "$TMP/one.err"
if command -v go >/dev/null; then
	go tool pprof -top "$TMP/one/cpu.pb.gz" >"$TMP/one.top" 2>&1
	check "... which go tool pprof reads" grep -q spin_step "$TMP/one.top" || show "$TMP/one.top"
fi
refused "a file in a directory nobody can write" "/proc/$COUNTER_PID/flame.svg" "give -o a file in a directory you can write"

# a run that took no stacks writes no empty folded file (mutation seen
# failing: sink_render without its map_len check left a 0-byte hot-cpu.folded)
"$XGDBPROF" -d 1 -o "$TMP/empty" -- /bin/sleep 0.05 >/dev/null 2>"$TMP/empty.err"
check "a run of no stacks leaves no 0-byte file" test -z "$(find "$TMP/empty" -type f -size 0 2>/dev/null)" ||
	ls -la "$TMP/empty"

# a missing -o directory is created
"$XGDBPROF" -d 0.5 -o "$TMP/new" "$COUNTER_PID" >/dev/null 2>"$TMP/new.err"
check "a missing -o directory is created and used" test -f "$TMP/new/profile.json" || show "$TMP/new.err"
finish
