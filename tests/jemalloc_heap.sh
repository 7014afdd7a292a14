#!/usr/bin/env bash
# jemalloc_heap.sh — `--recipe heap` on a target whose allocator is jemalloc
# with profiling on (docs/alloc.md, "jemalloc's profile"): jemservice, a
# tokio service on the system's jemalloc, keeps a 16 KiB vector every 50th
# write (keep_snapshot) and prints its own retained bytes every second.
# Started with MALLOC_CONF=prof:true,lg_prof_sample:16 (and an interval
# dump, so that jemalloc writes a profile of its own for jeprof):
#  1. the run takes jemalloc's profile, not the probes (no breakpoint armed);
#  2. `go tool pprof -sample_index=inuse_space -top` names keep_snapshot first;
#  3. its inuse_space lies within 2x of the fixture's own retained bytes
#     (its ring of 1024 vectors is full before the run: 16 MiB throughout);
#     ~225 of the vectors are sampled (p = 1 - exp(-1/4) = 0.22), a 7%
#     relative error, so 2x is ~10 standard errors: no false failure;
#  4. jeprof --text on a dump jemalloc wrote itself puts keep_snapshot on
#     >= 90% of the live bytes, and so does ours (the same top stack);
#  5. the target runs on, untraced, none of its threads stopped.
# Without profiling (no MALLOC_CONF) the run says that jemalloc's profiling
# is off and uses the probes; with prof_active:false it says so and names
# --jemalloc-activate, which takes the profile and switches it off after.
# Mutations seen to fail: in src/cli/jemalloc_heap.c, no skip_leaf
# (s/if (rc == 0 \&\& skip_leaf \&\& skip_leaf\[0\])/if (0)/: 2 fails, the top is
# RawVecInner::try_allocate_in); in src/procfs/jemalloc_profile.c, no scale
# (s/c->est_bytes = (double)c->bytes \* scale;/c->est_bytes = (double)c->bytes;/:
# 3 fails, 4.5x low); in src/cli/cmd_run.c, never from jemalloc
# (s/rc.from_jemalloc = got == 1;/rc.from_jemalloc = false;/: 1 fails); in
# src/cli/jemalloc_heap.c, never switched off (s/if (activated && session_is_stopped(s))/if (0)/:
# the third inactive run fails); in src/cli/cmd_continuous.c, window_prefix
# always PROFILE_PREFIX (the --every checks fail).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool go golang-go
require_tool jeprof libjemalloc-dev

# retained_now FILE: the retained bytes of the fixture's last truth line
retained_now() { sed -n 's/^truth .* retained_bytes=\([0-9]*\) .*/\1/p' "$1" | tail -1; }

mkdir "$TMP/self"
# a ring of 1024 vectors (16 MiB), full after ~2.6 s: the retained bytes
# are then the same before, during and after the run
MALLOC_CONF="prof:true,lg_prof_sample:16,lg_prof_interval:26,prof_prefix:$TMP/self/jeprof" \
	JEMSERVICE_KEEP_MAX=1024 "$FIXTURES/jemservice" >"$TMP/jem.out" &
pid=$!
TEST_PIDS="$pid"
wait_prefixed_lines "$TMP/jem.out" 4 "truth " || { not_ok "jemservice prints its truth"; show "$TMP/jem.out"; finish; }
before=$(retained_now "$TMP/jem.out")
"$XGDBPROF" --recipe heap -d 2s -o "$TMP/run" "$pid" >"$TMP/run.out" 2>"$TMP/run.err"
status=$?
lines=$(grep -c '^truth ' "$TMP/jem.out")
wait_prefixed_lines "$TMP/jem.out" $((lines + 1)) "truth "
after=$(retained_now "$TMP/jem.out")

check "the run succeeds" [ "$status" = 0 ] || show "$TMP/run.err"
check "the report speaks of bytes, not samples: #1's share in MB" \
	grep -Eq '^#1 code path by bytes \([0-9.]+%, [0-9.]+ MB\): ' "$TMP/run.out" || show "$TMP/run.out"
check "... and no word of thread stacks or a sampling rate (none were ours)" \
	sh -c "! grep -Eq 'no thread stacks were recorded|rate [0-9.]+ Hz' '$TMP/run.out'"
# (the header printed "target CPU: min 0%, avg 0%, max 0%" and "observer
# effect: target stopped 0.0%" here before the sampler's figures were left
# out of jemalloc's runs: nothing watched the CPU, and the two stops for
# jemalloc's calls were not counted)
check "... no target CPU line (nothing watched it), and the stops for jemalloc's calls are counted" \
	sh -c "! grep -q 'target CPU' '$TMP/run.out' && grep -Eq '^  observer effect: target stopped [0-9.]+% of the time; per stop median [0-9.]+ ms' '$TMP/run.out' && ! grep -q 'stopped 0.0% of the time; per stop median 0.00' '$TMP/run.out'"
# issue 29 item 9: tokio's executor (Debian's registry crates under
# /usr/share/cargo/registry: not the user's code) folds away in the path, as
# std's frames do; writer's async body is named as such
awk '/^#1 code path by bytes/ { on = 1 } on && /^$/ { exit } on' "$TMP/run.out" >"$TMP/path1"
check "tokio's executor frames fold out of path #1 (… N frames …), writer (async) named" \
	sh -c "grep -Eq '… [0-9]+ frames …' '$TMP/path1' && grep -q 'jemservice::writer (async)' '$TMP/path1' &&
		! grep -q 'tokio::' '$TMP/path1'" || show "$TMP/path1"
if grep -q 'jemalloc.s own profile' "$TMP/run.out" && ! grep -q 'attached [0-9]* probes' "$TMP/run.err"; then
	ok "1. the heap is jemalloc's own profile, no probe armed"
else
	not_ok "1. the heap is jemalloc's own profile, no probe armed"
	show "$TMP/run.err"
fi

top=$(go tool pprof -sample_index=inuse_space -unit=B -top "$TMP/run/profile.pb.gz" 2>/dev/null |
	awk '/flat%/ { getline; print; exit }')
name=$(awk '{ for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "") }' <<<"$top")
check "2. go tool pprof's first inuse_space row is keep_snapshot ($name)" [ "$name" = "jemservice::keep_snapshot" ]
est=$(awk '{ sub(/B$/, "", $1); print $1 }' <<<"$top")
echo "# keep_snapshot: ours ${est:-?} bytes live; the fixture kept $before..$after bytes"
check "3. keep_snapshot's inuse_space ${est:-?} within 2x of the fixture's $before..$after" \
	awk -v e="${est:-0}" -v lo="${before:-0}" -v hi="${after:-0}" 'BEGIN { exit !(lo > 0 && e >= lo / 2 && e <= hi * 2) }'

dump=$(ls -t "$TMP"/self/jeprof.*.heap 2>/dev/null | head -1)
if [ -z "$dump" ]; then
	not_ok "4. jemalloc wrote an interval dump of its own"
else
	theirs=$(jeprof --text --cum "$FIXTURES/jemservice" "$dump" 2>/dev/null |
		awk '$NF == "jemservice::keep_snapshot" { sub(/%/, "", $5); print $5; exit }')
	ours=$(go tool pprof -sample_index=inuse_space -top -cum "$TMP/run/profile.pb.gz" 2>/dev/null |
		awk '$NF == "jemservice::keep_snapshot" { sub(/%/, "", $5); print $5; exit }')
	echo "# keep_snapshot's share of live bytes: jeprof ${theirs:-?}%, ours ${ours:-?}%"
	check "4. keep_snapshot holds >= 90% in jeprof (${theirs:-?}%) and in ours (${ours:-?}%)" \
		awk -v a="${theirs:-0}" -v b="${ours:-0}" 'BEGIN { exit !(a >= 90 && b >= 90) }'
fi

check "5. the target runs on, untraced, no thread stopped" settles_running "$pid"
check "5. ... untraced" [ "$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status")" = 0 ]
kill "$pid"; wait "$pid" 2>/dev/null

# no profiling: said, and the probes are used
"$FIXTURES/jemservice" >"$TMP/plain.out" &
pid=$!
TEST_PIDS="$pid"
wait_prefixed_lines "$TMP/plain.out" 1 "truth "
"$XGDBPROF" --recipe heap -d 1s -o "$TMP/plain" "$pid" >"$TMP/plain.run" 2>"$TMP/plain.err"
check "without MALLOC_CONF: jemalloc's profiling is said to be off" grep -q "jemalloc's profiling is off" "$TMP/plain.err" ||
	show "$TMP/plain.err"
check "... and the probes are used" grep -q 'attached [0-9]* probes' "$TMP/plain.err"
kill "$pid"; wait "$pid" 2>/dev/null

# profiling on but inactive: said, with the flag that switches it on;
# --jemalloc-activate then takes jemalloc's profile and switches it off
# again (a third run finds it inactive)
MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:16 JEMSERVICE_KEEP_MAX=1024 \
	"$FIXTURES/jemservice" >"$TMP/inactive.out" &
pid=$!
TEST_PIDS="$pid"
wait_prefixed_lines "$TMP/inactive.out" 1 "truth "
"$XGDBPROF" --recipe heap -d 1s -o "$TMP/inactive1" "$pid" >/dev/null 2>"$TMP/inactive1.err"
check "inactive: said, naming --jemalloc-activate" grep -q "inactive (prof.active is false).*--jemalloc-activate" \
	"$TMP/inactive1.err" || show "$TMP/inactive1.err"
"$XGDBPROF" --recipe heap --jemalloc-activate -d 2s -o "$TMP/inactive2" "$pid" >"$TMP/inactive2.out" 2>"$TMP/inactive2.err"
check "--jemalloc-activate: jemalloc's profile, the switch noted" grep -q "prof.active was switched on for the run" \
	"$TMP/inactive2.out" || show "$TMP/inactive2.err"
first=$(go tool pprof -sample_index=inuse_space -top "$TMP/inactive2/profile.pb.gz" 2>/dev/null | awk '/flat%/ { getline; print $NF; exit }')
check "--jemalloc-activate: keep_snapshot first ($first)" [ "$first" = "jemservice::keep_snapshot" ]
"$XGDBPROF" --recipe heap -d 1s -o "$TMP/inactive3" "$pid" >/dev/null 2>"$TMP/inactive3.err"
check "--jemalloc-activate: prof.active off again after the run" grep -q "inactive (prof.active is false)" \
	"$TMP/inactive3.err" || show "$TMP/inactive3.err"
kill "$pid"; wait "$pid" 2>/dev/null

# --every with the heap recipe (issue 25 item 4): memory_profile_*.pb.gz per
# window, listed in index.jsonl, no cpu_profile_*; the ring never fills, so
# keep_snapshot's inuse_space grows from the first window to the last
MALLOC_CONF=prof:true,lg_prof_sample:16 JEMSERVICE_KEEP_MAX=100000 "$FIXTURES/jemservice" >"$TMP/every.out" &
pid=$!
TEST_PIDS="$pid"
wait_prefixed_lines "$TMP/every.out" 1 "truth "
"$XGDBPROF" --every 3s --duration 1s --recipe heap -o "$TMP/every" "$pid" >/dev/null 2>"$TMP/every.err" &
xg=$!
TEST_PIDS="$pid $xg"
for i in $(seq 1 200); do
	[ "$(ls "$TMP"/every/memory_profile_*.pb.gz 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
kill -INT "$xg"; wait "$xg" 2>/dev/null
set -- "$TMP"/every/memory_profile_*.pb.gz
check "--every: memory_profile files written ($#)" [ -f "$1" ] && [ "$#" -ge 2 ] || show "$TMP/every.err"
check "--every: no cpu_profile files" [ -z "$(ls "$TMP"/every/cpu_profile_* 2>/dev/null)" ]
listed=yes
for f in "$@"; do grep -q "\"${f##*/}\"" "$TMP/every/index.jsonl" || listed=no; done
check "--every: each listed in index.jsonl" [ "$listed" = yes ]
inuse() { go tool pprof -sample_index=inuse_space -unit=B -top "$1" 2>/dev/null |
	awk '$NF == "jemservice::keep_snapshot" { sub(/B$/, "", $1); print $1; exit }'; }
first=$(inuse "$1"); eval "last=\$(inuse \"\${$#}\")"
check "--every: keep_snapshot grew from the first window (${first:-?}) to the last (${last:-?})" \
	awk -v a="${first:-0}" -v b="${last:-0}" 'BEGIN { exit !(a > 0 && b > a) }'
# insights over the memory windows: each path's live bytes per window and
# what it grew by, first to last, in bytes (not shares, not "samples")
"$XGDBPROF" insights "$TMP/every" >"$TMP/insights.out" 2>"$TMP/insights.err"
check "insights: keep_snapshot's path grew by a positive amount of bytes" \
	grep -Eq 'live [0-9.]+ [KMG]B in the first window, [0-9.]+ [KMG]B in the last: grew by \+[0-9.]+ [KMG]B' \
	"$TMP/insights.out" || show "$TMP/insights.out"
check "insights: a 'grew by' row under the windows' live bytes" grep -Eq '^  grew by +\+[0-9.]+ [KMG]B' \
	"$TMP/insights.out"
check "insights: no \"samples\" for bytes" sh -c "! grep -q '[0-9] samples' '$TMP/insights.out'"
# the grew-by figure against pprof's own reading of the same two files
grew=$(grep -A4 'keep_snapshot' "$TMP/insights.out" | sed -n 's/.*grew by +\([0-9.]*\) \([KMG]\)B.*/\1 \2/p' | head -1)
echo "# insights: keep_snapshot grew by ${grew:-?}B; pprof: ${first:-?} to ${last:-?} bytes"
check "insights: keep_snapshot's growth within 2x of pprof's reading of the first and last windows" \
	awk -v g="${grew:-0 K}" -v a="${first:-0}" -v b="${last:-0}" 'BEGIN { split(g, p, " ");
		m = p[2] == "K" ? 1e3 : p[2] == "M" ? 1e6 : 1e9; v = p[1] * m; d = b - a
		exit !(v > 0 && d > 0 && v <= 2 * d && d <= 2 * v) }'
finish
