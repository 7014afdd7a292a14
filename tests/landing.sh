#!/usr/bin/env bash
# Where a stop lands. gdb stops a thread with a signal; a thread running its
# own code notices it at its next return to user mode, and on this VM the
# interrupt that should bring it there often comes later than its next
# system call. inline_c spin-syscall runs hot_function's inline chain and
# calls getpid every few microseconds: perf sees it in getpid a few percent
# of the time (the kernel's own accounting agrees), but stops that land at
# the returns of calls made after they were asked put 45-99% of the samples
# there. Such samples are left out beyond the kernel's share of the
# thread's CPU time (docs/sampling.md, "Where a stop lands"), while a thread
# whose work is its system calls, or that blocks in one, is sampled there
# as before.
#
# Which stops land in the thread's own code depends on where gdb runs: a
# thread on its own CPU while gdb signals it from the other is caught at its
# next getpid return nearly every time (300 of 300 stops in a bare ptrace
# loop; 979 of 990 in a CI run, which kept 11 stacks in 40 s), and only a
# thread that was queued behind other work on its CPU when asked (gdb on the
# same CPU, or any other task) resumes where it was preempted, in its own
# code. The spin case has the thread share CPU 1 with a busy loop (each
# holds it about half the time) and xgdbprof and gdb run on CPU 0. Until
# 2026-12-04 the queued half of its stops were taken, in its own code (one
# run of 5 s kept 229-245 stacks). Since then a thread found queued is not
# stopped (docs/sampling.md, "A thread queued for a CPU is not stopped";
# tests/phase_mix.sh shows the bias that taking them made), and the stacks
# come from its on-CPU stops: the few that land before its next getpid,
# and the getpid returns up to the kernel's share (22 stacks in two runs of
# 5 s, pooled as below).
#
# The shares are judged by their sample counts (tests/lib.sh, 1e-4 each).
# Mutations that showed them failing (./dev test --repeat 1 tests/landing.sh):
#   sed -i 's/else if (sampler_landing_kept(t))/else if (1 || sampler_landing_kept(t))/' src/stacks/sampler.c
#     every late landing kept: "spin: hot_function leads" (221 of 418 =
#     52.9%, interval 43.7-61.8%, with runs of 5 s) and "spin: getpid holds
#     no more than the kernel's share + 15" (193 of 418, 37.3-55.3% over
#     17%) fail;
#   sed -i 's/else if (sampler_landing_kept(t))/else if (0 \&\& sampler_landing_kept(t))/' src/stacks/sampler.c
#     every stop at a call's return left out: the yielder keeps 1 stack,
#     "yield: enough stacks to judge" fails; so does the calls case, seen
#     2026-12-05: "calls: enough stacks to judge (7 >= 20)" after 8 runs
#     (its share check then skips itself: 7 stacks cannot judge it).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

# leaf_share FOLDED REGEX: "MATCHING TOTAL" samples whose leaf frame matches.
leaf_share() {
	awk -v re="$2" '{ n = $NF; total += n; split($0, f, ";"); leaf = f[length(f)]; sub(/ [0-9]+$/, "", leaf)
	       if (leaf ~ re) hit += n }
	     END { print hit + 0, total + 0 }' "$1"
}
# frame_share FOLDED REGEX: "MATCHING TOTAL" samples with a frame matching anywhere.
frame_share() {
	awk -v re="$2" '{ n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
	       for (i = 1; i <= k; i++) if (f[i] ~ re) { hit += n; break } }
	     END { print hit + 0, total + 0 }' "$1"
}
profile() {   # profile NAME PID THREADS [SECONDS]: 5 s at 99 Hz, a 20% budget for enough samples under load
	$XGDBPROF -e "set threads $3; set frequency 99; set duration ${4:-5}s; set max_stopped 20%
sample { @s[ustack] = count(); } end { report(@s); folded(@s); }" -o "$TMP/$1" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	check "$1: the run exits 0" test $? -eq 0 || show "$TMP/$1.err"
	folded=$(ls "$TMP/$1"/*.folded 2>/dev/null | head -1)
}
GETPID='^(__GI_getpid|getpid|__getpid|\[in kernel: getpid\])$'
# profile_pooled NAME PID: runs of 5 s, up to 8, their stacks pooled until
# there are 20 to judge by (one run has given 380-490 since the pinning). Most stops of a thread that calls getpid in a
# loop land at a later getpid return, and only the kernel's share of those
# is kept. $TMP/NAME.out is the last run's report.
profile_pooled() {
	: >"$TMP/$1.pooled"
	for run in 1 2 3 4 5 6 7 8; do
		rm -rf "$TMP/$1"
		profile "$1" "$2" running 5
		cat "${folded:-/dev/null}" >>"$TMP/$1.pooled"
		read -r _ pooled <<<"$(leaf_share "$TMP/$1.pooled" '^$')"
		[ "${pooled:-0}" -ge 20 ] && break
	done
	folded=$TMP/$1.pooled
}
# profile_pinned NAME MODE: `inline_c MODE` on CPU 1 beside a busy loop
# (each holds it about half the time), profiled as profile_pooled does
# from CPU 0 (see the top); its PID in PINNED, the loop's in CORUNNER.
can_pin() { [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; }
profile_pinned() {
	taskset -c 1 "$FIXTURES/inline_c" spin >/dev/null &
	CORUNNER=$!
	taskset -c 1 "$FIXTURES/inline_c" "$2" >/dev/null &
	PINNED=$!
	TEST_PIDS="$TEST_PIDS $CORUNNER $PINNED"
	sleep 0.5
	local unpinned=$XGDBPROF
	XGDBPROF="taskset -c 0 $XGDBPROF"
	profile_pooled "$1" "$PINNED"
	XGDBPROF=$unpinned
}

# --- A busy thread that calls getpid every few microseconds ----------------
# It shares CPU 1 with a busy loop, xgdbprof and gdb are on CPU 0 (see the
# top): its stops land at a later getpid return when it held the CPU as we
# asked, and where it was preempted when the loop did.
if can_pin; then
	profile_pinned spin spin-syscall
	SPIN=$PINNED
	read -r in_getpid total <<<"$(leaf_share "${folded:-/dev/null}" "$GETPID")"
	read -r in_hot _ <<<"$(frame_share "${folded:-/dev/null}" '^hot_function$')"
	kernel=$(awk '{ printf "%d", 100 * $15 / ($14 + $15 + 0.001) }' "/proc/$SPIN/stat")
	stops=$(sed -n 's/.*samples: \([0-9]*\) stops.*/\1/p' "$TMP/spin.out")
	echo "  $in_getpid of $total stacks end in getpid, $in_hot pass through hot_function; the kernel says ${kernel}% of its CPU time was in system calls"
	check "spin: enough stacks to judge ($total >= 20)" test "${total:-0}" -ge 20
	check_share_at_least "spin: hot_function leads" "$in_hot" "$total" 70
	check_share_at_most "spin: getpid holds no more than the kernel's share (${kernel}%) + 15 points" \
		"$in_getpid" "$total" $((${kernel:-0} + 15))
	left_out=$(sed -n "s/.*note: \([0-9]*\) samples landed at a later system call's return and were left out.*/\1/p" "$TMP/spin.out")
	echo "  the report says ${left_out:-no} of ${stops:-no} stops were left out (the last run's)"
	check "spin: the report says how many samples landed at a later call's return (${left_out:-none})" \
		test "${left_out:-0}" -ge 1
	check "spin: target runs free afterwards" settles_running "$SPIN"
	kill "$SPIN" "$CORUNNER"
else
	echo "ok - skipped: the spin case needs 2 CPUs and taskset (the thread shares one CPU with a busy loop, gdb runs on the other)"
fi

# --- A thread whose work is its system calls: it is sampled in them --------
# Set up as spin is, for the same reason: alone on an idle CPU nearly every
# stop lands at a later getpid return and only the kernel's share of them
# is kept (15 stacks in 40 s in a CI rehearsal after spin was pinned).
if can_pin; then
	profile_pinned calls syscalls
	CALLS=$PINNED
	read -r in_getpid total <<<"$(leaf_share "${folded:-/dev/null}" "$GETPID")"
	kernel=$(awk '{ printf "%d", 100 * $15 / ($14 + $15 + 0.001) }' "/proc/$CALLS/stat")
	echo "  $in_getpid of $total stacks end in getpid; the kernel says ${kernel}% of its CPU time was in system calls"
	check "calls: enough stacks to judge ($total >= 20)" test "${total:-0}" -ge 20
	check_share_at_least "calls: getpid holds at least the kernel's share (${kernel}%) - 15 points" \
		"$in_getpid" "$total" $((${kernel:-0} - 15))
	kill "$CALLS" "$CORUNNER"
else
	echo "ok - skipped: the calls case needs 2 CPUs and taskset (the thread shares one CPU with a busy loop, gdb runs on the other)"
fi

# --- A spinning waiter alone on its CPU: sched_yield returns at once -------
# A stop found in sched_yield is off the CPU (a yielding waiter is mostly
# queued) unless /proc/PID/task/TID/stack, read as we asked it to stop, said
# it was on a CPU then; that file needs root, and says nothing of a thread
# on the reader's own CPU (a yielder gives its CPU to the reader): the
# fixture runs on CPU 1, xgdbprof and gdb on CPU 0.
if [ "$(id -u)" = 0 ] && can_pin; then
	taskset -c 1 "$FIXTURES/inline_c" yield >/dev/null &
	YIELD=$!
	TEST_PIDS="$TEST_PIDS $YIELD"
	sleep 0.5
	XGDBPROF_UNPINNED=$XGDBPROF
	XGDBPROF="taskset -c 0 $XGDBPROF"
	# Other work on CPU 1 takes the yielder's CPU (each yield hands it
	# over), and a yielder queued in sched_yield is not stopped: at load
	# 10-17 it ran 10-19% of the time and got 1-23 stops in 5 s. Runs of
	# 5 s are pooled, up to 8, until 20 stops and 16 stacks (14 in one run
	# here at load 3: most yield returns are left out as late landings; 15
	# in 4 runs, 1946 stops, in a CI run beside other work);
	# the kernel's run-queue time
	# (schedstat's second field) says how long it waited for its CPU.
	queued_ns() { awk '{ print $2 }' "/proc/$YIELD/schedstat"; }
	queued_from=$(queued_ns)
	wall_from=$(date +%s%N)
	: >"$TMP/yield.pooled"
	stops=0 waiting=0
	for run in 1 2 3 4 5 6 7 8; do
		rm -rf "$TMP/yield"
		profile yield "$YIELD" running
		cat "${folded:-/dev/null}" >>"$TMP/yield.pooled"
		run_stops=$(sed -n 's/.*samples: \([0-9]*\) stops.*/\1/p' "$TMP/yield.out")
		run_waiting=$(sed -n 's/.*note: \([0-9]*\) stacks of running threads were left out: the thread sat in a waiting.*/\1/p' "$TMP/yield.out")
		stops=$((stops + ${run_stops:-0})) waiting=$((waiting + ${run_waiting:-0}))
		read -r _ pooled <<<"$(leaf_share "$TMP/yield.pooled" '^$')"
		[ "$stops" -ge 20 ] && [ "${pooled:-0}" -ge 16 ] && break
	done
	queued_pct=$((100 * ($(queued_ns) - queued_from) / ($(date +%s%N) - wall_from)))
	XGDBPROF=$XGDBPROF_UNPINNED
	read -r in_yield total <<<"$(leaf_share "$TMP/yield.pooled" '^((__GI_)?_*sched_yield|\[in kernel: sched_yield\])$')"
	echo "  $in_yield of $total stacks end in sched_yield"
	echo "  $stops stops in $run runs, $waiting of them left out as waiting; the yielder was queued for CPU 1 ${queued_pct}% of the time"
	if [ "$stops" -lt 20 ] && [ "$queued_pct" -ge 50 ]; then
		# Not a lone yielder: what the checks ask cannot be seen.
		echo "ok - skipped: the yield checks need a yielder alone on CPU 1; other work kept it queued ${queued_pct}% of the time ($stops stops)"
	else
		# The stops that land elsewhere than in the call are few in a
		# loop this tight (a stop lands at a call's return: "Where a stop
		# lands"), and the yield's returns count up to the kernel's share
		# of its CPU time (~90%) over them: not many stacks, so the check
		# is on what became of the stops. A stop is called waiting when
		# the yielder was queued behind other work on its CPU: a few, not
		# most.
		check_share_at_most "yield: the yielder's stops are mostly not called waiting" "$waiting" "$stops" 50
		# 16 stacks at least: fewer cannot show a share under 50% at 1e-4,
		# and a sampler that left the yields out keeps 0-1 (see the top).
		check "yield: enough stacks to judge ($total >= 16)" test "${total:-0}" -ge 16
		check_share_at_least "yield: most of its stacks end in sched_yield" "$in_yield" "$total" 50
	fi
	# Now it shares CPU 1 with another yielder: each yield hands the CPU to
	# the other, and a stop asked while it is queued in sched_yield would
	# land there and be left out. It is not stopped at all.
	taskset -c 1 "$FIXTURES/inline_c" yield >/dev/null &
	BUSY=$!
	TEST_PIDS="$TEST_PIDS $BUSY"
	sleep 0.5
	XGDBPROF="taskset -c 0 $XGDBPROF_UNPINNED"
	# 10 s (15 s until 2026-12-04: 30 times in 15 s then): how often it is
	# found queued when asked varies (4 to 40 times in 5 s between CI
	# rehearsals)
	# Other work on CPU 1 (a loaded machine) is a third party in the
	# handover the check relies on: judged only when the two yielders had
	# the CPUs to themselves (check_timing; once 1 time at load 3+)
	load_begin "$YIELD" "$BUSY"
	profile shared "$YIELD" running 10
	XGDBPROF=$XGDBPROF_UNPINNED
	skipped=$(sed -n 's/.*note: \([0-9]*\) times a running thread was not stopped: \/proc showed it queued in a waiting.*/\1/p' "$TMP/shared.out")
	stops=$(sed -n 's/.*samples: \([0-9]*\) stops.*/\1/p' "$TMP/shared.out")
	echo "  sharing its CPU: ${stops:-no} stops, ${skipped:-no} times not stopped as queued in a wait"
	check_timing "shared: a yielder queued in sched_yield is not stopped (${skipped:-0} times)" test "${skipped:-0}" -ge 5
	kill "$BUSY" "$YIELD"
else
	echo "ok - skipped: the on-CPU test of sched_yield needs root (it reads /proc/PID/task/TID/stack), 2 CPUs and taskset"
fi

# --- A thread blocked in read: all threads sampled, it sits in read --------
sleep 30 | "$FIXTURES/inline_c" read &
READER=$!
TEST_PIDS="$TEST_PIDS $READER"
sleep 0.5
profile blocked "$READER" all
read -r in_read total <<<"$(leaf_share "${folded:-/dev/null}" '^(__GI___libc_read|__libc_read|read)$')"
echo "  $in_read of $total stacks end in read"
check "blocked: every stack of the reader ends in read ($in_read of $total)" \
	test "${total:-0}" -ge 1 -a "${in_read:-0}" -eq "${total:-0}"
check "blocked: no sample was left out as a late landing" \
	sh -c "! grep -q 'landed at a later system call' '$TMP/blocked.out'"
kill "$READER"
finish
