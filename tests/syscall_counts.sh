#!/usr/bin/env bash
# syscall_counts.sh — the syscall-counts recipe counts glibc's system call
# wrappers in the target (entry counters, no breakpoint: docs/tracing.md,
# "A probe that only counts needs no breakpoint") within 2x of `strace -c
# -f` over an equal window just before (the two cannot trace at once), on
# kvservice, whose progress file is rewritten every 50 ms (open, write,
# close, rename: paced by its clock, not slowed much by strace) while its
# workers spin (sched_yield) and take parking_lot locks (futex through
# syscall()). Issue 26 item 3: the syscalls recipe's catchpoints stop a
# thread per call and under the budget see a few calls of thousands.
# Measured 2026-12-04 (idle machine, 4 s each): write 78, close 78, open
# 78, __clock_nanosleep 119; strace: write 78, close 78, openat 78,
# clock_nanosleep 118. rename (the progress file's) was never seen before
# its wrapper was counted (issue 26: perf counted 79-82 in 4 s, the
# syscalls recipe printed no row).
# Mutation shown to fail: `--no-entry-counters` added to the run below
# (every wrapper then gets a breakpoint and an estimate: "counted in the
# target (exact" is not printed for write).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool strace strace
[ -x "$FIXTURES/kvservice" ] || skip_test "the kvservice fixture was not built (cargo, Debian's Rust crates)"

"$FIXTURES/kvservice" 120 --progress "$TMP/kv.progress" --workers 2 >/dev/null 2>&1 &
PID=$!
TEST_PIDS="$TEST_PIDS $PID"
wait_for_file "$TMP/kv.progress"
sleep 1
WINDOW=4
timeout -s INT "$WINDOW" strace -f -qq -c -U name,calls -o "$TMP/strace.txt" -p "$PID" >/dev/null 2>&1
sleep 0.5
"$XGDBPROF" --recipe syscall-counts -d "${WINDOW}s" "$PID" >"$TMP/run.out" 2>"$TMP/run.err"
check "the run exits 0" test $? -eq 0 || show "$TMP/run.err"
strace_calls() { awk -v key="$1" '$1 == key { print $2 }' "$TMP/strace.txt"; }
ours() { sed -n "s/^@calls\[$1\]: \([0-9]*\) .*/\1/p" "$TMP/run.out"; }
for pair in write:write close:close open:openat rename:rename __clock_nanosleep:clock_nanosleep; do
	wrapper=${pair%%:*} call=${pair##*:}
	check "$wrapper: counted in the target, with no breakpoint" \
		grep -q "^@calls\[$wrapper\]: [0-9]* counted in the target (exact; no breakpoint" "$TMP/run.out" ||
		grep "^@calls\[$wrapper\]" "$TMP/run.out"
	check "$wrapper: $(ours "$wrapper") calls within 2x of strace -c -f's $call ($(strace_calls "$call") in ${WINDOW} s)" \
		within_2x "$(ours "$wrapper")" "$(strace_calls "$call")"
done

# rt_sigprocmask: no wrapper; glibc makes it inline (pthread_create and
# start_thread block and restore signals: 4 calls for each of the threads
# kvservice starts, 5 a second). The recipe's syscall_site probe counts it
# at each `mov $14,%eax ... syscall` of libc (docs/tracing.md, "System
# calls made inline"). Measured 2026-12-06, idle: 79 against strace's 80
# in 4 s. Before the probe, the syscalls recipe had no row for it (issue
# 26: the fifth call of strace's table by count). Mutation shown to fail:
# the recipes' syscall_site probe on kexec_load, which no code makes inline
# (no @inline line; the table's row `>=1`): 4 checks fail.
inline_rt=$(sed -n 's/^@inline\[rt_sigprocmask\]: \([0-9]*\) counted in the target (exact; no breakpoint.*/\1/p' "$TMP/run.out")
check "rt_sigprocmask: ${inline_rt:-?} calls counted in the target at glibc's inline sites, within 2x of strace -c -f's $(strace_calls rt_sigprocmask) in ${WINDOW} s" \
	within_2x "${inline_rt:-0}" "$(strace_calls rt_sigprocmask)" || grep -i "rt_sigprocmask\|site" "$TMP/run.out"
check "rt_sigprocmask: the run says how many sites it found, none refused without a word" \
	grep -Eq "syscall_site rt_sigprocmask: [1-9][0-9]* sites? in the target's code" "$TMP/run.out"

# sched_yield: kvservice's spinning workers sit in it (just back from its
# system call, between the instructions its counter moves) at most armings.
# The counter used to give up then ("a thread stood inside the instructions
# to move"), and its figure was an estimate ~100x low ("est. at least 90"
# for ~1,600 by strace); such a thread now goes on in the counting code's
# copy. The truth is the kernel's own count of sched_yield entries, by
# `perf stat` on the syscalls tracepoint over the same seconds (perf stops
# nothing, so both count at once; the rate swings with the machine's load,
# so rates over the same window are compared). Measured 2026-12-04, loaded
# by a suite run: ours 1792/s, perf 6360 in 4 s. With can_move_thread in
# src/trace/entry_counter.c returning false (no thread moved: the old
# rule), 2 runs of 2 failed it ("ours ?/s": no exact count).
#
# mprotect: kvservice's largest call the list lacked (malloc grows its
# threads' arena heaps a few pages at a time: 300-700 a second, in bursts),
# counted since libc's .bss tail (22 one-slot counters) is no longer the
# only room: counters whose slots lie in another module's tail load their
# address whole (docs/tracing.md). Measured 2026-12-05, beside a loaded
# suite run: 1887 in 4 s. Compared with perf's count over the traced
# window (from the arming to xgdbprof's exit), as rates.
CODECHECK=$TOP_BUILDDIR/tests/unit/test_tracer_codecheck
# counted_rate WRAPPER FILE: the per-second rate of @calls[WRAPPER] (or
# @inline[CALL]) counted in the target with no breakpoint (the report may
# wrap it onto a line of its own)
counted_rate() {
	tr '\n' ' ' <"$2" | sed -n "s/.*@[a-z]*\[$1\]: [0-9]* counted in the target (exact; no breakpoint: the probe only counts) · *\([0-9.e+]*\)\/s.*/\1/p"
}
# traced_beside_perf NAME PERF_OUT ARG...: xgdbprof ARG... on the target
# (its output in $TMP/NAME.out and .err), and perf stat with the events in
# PERF_EVENTS over the traced window, from the probes' arming (xgdbprof's
# "attached" line) to xgdbprof's exit; sets xg_rc and perf_s (seconds)
traced_beside_perf() {
	local name=$1 perf_out=$2
	shift 2
	"$XGDBPROF" "$@" "$PID" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	local xg=$!
	for _ in $(seq 600); do grep -q "attached" "$TMP/$name.err" 2>/dev/null && break; sleep 0.02; done
	local from
	from=$(date +%s%N)
	perf stat "${PERF_EVENTS[@]}" -x, -o "$perf_out" -p "$PID" >/dev/null 2>&1 &
	local perf=$!
	wait "$xg"
	xg_rc=$?
	kill -INT "$perf"
	wait "$perf"
	perf_s=$(awk -v a="$from" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}
if perf stat -e syscalls:sys_enter_sched_yield -x, -o "$TMP/perf.probe" true >/dev/null 2>&1; then
	# perf counts over the traced window: from the probes' arming
	# (xgdbprof's "attached" line) to xgdbprof's exit (mprotect comes in
	# bursts: a 4 s window begun before the attach failed 1 run in 3 on a
	# burst ours never saw, 4.99/s against 54 in 4 s)
	PERF_EVENTS=(-e syscalls:sys_enter_sched_yield,syscalls:sys_enter_mprotect,syscalls:sys_enter_rt_sigprocmask)
	traced_beside_perf yield "$TMP/perf.txt" --recipe syscall-counts -d 3s
	check "sched_yield run exits 0" test "$xg_rc" -eq 0 || show "$TMP/yield.err"
	perf_count=$(awk -F, '/sys_enter_sched_yield/ { print $1 }' "$TMP/perf.txt")
	our_rate=$(counted_rate sched_yield "$TMP/yield.out")
	moved=$(grep -c "stood between the instructions a counter moves" "$TMP/yield.out")
	echo "  sched_yield: ours ${our_rate:-?}/s exact, perf ${perf_count:-?} in $perf_s s; threads moved into the copy: $moved run(s)"
	check "sched_yield: counted in the target, exact, at ${our_rate:-?}/s within 2x of perf's ${perf_count:-?} in $perf_s s" \
		within_2x "${our_rate:-0}" "$(awk -v n="${perf_count:-0}" -v s="$perf_s" 'BEGIN { print n / s }')" || show "$TMP/yield.out"
	perf_mprotect=$(awk -F, '/sys_enter_mprotect/ { print $1 }' "$TMP/perf.txt")
	mprotect_rate=$(counted_rate mprotect "$TMP/yield.out")
	echo "  mprotect: ours ${mprotect_rate:-?}/s exact, perf ${perf_mprotect:-?} in $perf_s s"
	check "mprotect: counted in the target, exact, at ${mprotect_rate:-?}/s within 2x of perf's ${perf_mprotect:-?} in $perf_s s" \
		within_2x "${mprotect_rate:-}" "$(awk -v n="${perf_mprotect:-0}" -v s="$perf_s" 'BEGIN { print n / s }')" || grep -i "mprotect\|counter" "$TMP/yield.out" "$TMP/yield.err"
	perf_rt=$(awk -F, '/sys_enter_rt_sigprocmask/ { print $1 }' "$TMP/perf.txt")
	rt_rate=$(counted_rate rt_sigprocmask "$TMP/yield.out")
	echo "  rt_sigprocmask: ours ${rt_rate:-?}/s exact, perf ${perf_rt:-?} in $perf_s s"
	check "rt_sigprocmask: counted in the target at glibc's inline sites, at ${rt_rate:-?}/s within 2x of perf's ${perf_rt:-?} in $perf_s s" \
		within_2x "${rt_rate:-}" "$(awk -v n="${perf_rt:-0}" -v s="$perf_s" 'BEGIN { print n / s }')" || grep -i "rt_sigprocmask\|site" "$TMP/yield.out"
	check "sched_yield: the target's code equals its files after the run" test "$("$CODECHECK" "$PID")" = 0

	# The syscalls recipe's table (strace -c's), its `est. calls` for the
	# five calls strace -c -f counts most on kvservice (sched_yield, futex,
	# mprotect, clock_nanosleep, rt_sigprocmask), against the kernel's count
	# of the calls made over the same seconds (perf on the syscalls
	# tracepoints, from the attach to xgdbprof's exit), as rates: issue 26's
	# "top five within 2x". A call the kernel restarts after a stop of ours
	# (a futex wait interrupted by gdb's SIGSTOP: -ERESTARTSYS, the same call
	# entered again) is one call made, entered twice: the calls that exit so
	# are taken off (~20 a second: 93 futex entries in 3.5 s for 27 calls).
	# strace itself is no truth for the first two: stopping the target at
	# every call, it changes how often the workers spin and contend (144,016
	# sched_yield and 1,184 futex in 4 s under strace, ~120,000 and ~6,000 a
	# second unobserved). Measured 2026-12-06, idle: 270841, 22858, 28, 89,
	# 60 in 3 s against the kernel's 306919, 26339 (26413 entered, 74
	# restarted), 30, 103, 68 in 3.78 s; beside a suite run (the workers
	# then spin ~100x less): 2144, 76, 28, 88, 56 against 2530, 134
	# entries, 31, 100, 60. Mutations shown to fail: the recipe's
	# syscall_site probe on kexec_load (rt_sigprocmask: `>=1`); the
	# restarted calls not taken off fails futex once the workers spin
	# little (27 counted against 93 entries, by hand).
	TOP5="sched_yield futex mprotect clock_nanosleep rt_sigprocmask"
	PERF_EVENTS=()
	for call in $TOP5; do
		PERF_EVENTS+=(-e "syscalls:sys_enter_$call" -e "syscalls:sys_exit_$call"
			      --filter 'ret == -512 || ret == -513 || ret == -514')
	done
	traced_beside_perf table "$TMP/perf5.txt" --recipe syscalls -d 3s
	check "syscalls: the run exits 0" test "$xg_rc" -eq 0 || show "$TMP/table.err"
	traced_s=$(sed -n 's/.*duration \([0-9.]*\) s.*/\1/p' "$TMP/table.out" | head -1)
	for call in $TOP5; do
		# the estimate: the field before the call's name in its row
		est=$(awk -v call="$call" '$NF == call && NF >= 6 { print $(NF - 1); exit }' "$TMP/table.out")
		entered=$(awk -F, -v ev="syscalls:sys_enter_$call" '$3 == ev { print $1 }' "$TMP/perf5.txt")
		restarted=$(awk -F, -v ev="syscalls:sys_exit_$call" '$3 == ev { print $1 }' "$TMP/perf5.txt")
		kernel=$(( ${entered:-0} - ${restarted:-0} ))
		# futex's row is syscall()'s calls (parking_lot's, std's); glibc's
		# own (a thread join, its private locks: a few a second here) are
		# not counted. Once the workers contend little (a loaded machine:
		# 4 against 11 in 3 s) those are most of them: said, not judged.
		if [ "$call" = futex ] && [ "$kernel" -lt 100 ]; then
			ok "not judged: futex, the kernel's $kernel calls in $perf_s s too few for glibc's own uncounted futex calls not to weigh (ours: ${est:-none})"
			continue
		fi
		check "syscalls: $call's est. calls ${est:-none} in ${traced_s:-?} s within 2x of the kernel's ${kernel} in $perf_s s (perf: ${entered:-?} entered, ${restarted:-?} of them restarted), as rates" \
			within_2x "$(awk -v n="${est:-0}" -v s="${traced_s:-0}" 'BEGIN { if (n ~ /^[0-9]+$/ && s > 0) print n / s }')" \
			"$(awk -v n="$kernel" -v s="$perf_s" 'BEGIN { print n / s }')" ||
			sed -n '/% time/,/^est. calls/p' "$TMP/table.out"
	done
else
	ok "skipped: sched_yield against perf: perf cannot count the syscalls tracepoint here ($(head -c 200 "$TMP/perf.probe" 2>/dev/null))"
fi
check "the target runs free afterwards" settles_running "$PID"
kill "$PID"
finish
