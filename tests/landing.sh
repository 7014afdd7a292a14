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
profile() {   # profile NAME PID THREADS: 5 s at 99 Hz, a 20% budget for enough samples under load
	"$XGDBPROF" -e "set threads $3; set frequency 99; set duration 5s; set max_stopped 20%
sample { @s[ustack] = count(); } end { report(@s); folded(@s); }" -o "$TMP/$1" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	check "$1: the run exits 0" test $? -eq 0 || show "$TMP/$1.err"
	folded=$(ls "$TMP/$1"/*.folded 2>/dev/null | head -1)
}
GETPID='^(__GI_getpid|getpid|__getpid)$'

# --- A busy thread that calls getpid every few microseconds ----------------
"$FIXTURES/inline_c" spin-syscall >/dev/null &
SPIN=$!
TEST_PIDS="$TEST_PIDS $SPIN"
sleep 0.5
profile spin "$SPIN" running
read -r in_getpid total <<<"$(leaf_share "${folded:-/dev/null}" "$GETPID")"
read -r in_hot _ <<<"$(frame_share "${folded:-/dev/null}" '^hot_function$')"
kernel=$(awk '{ printf "%d", 100 * $15 / ($14 + $15 + 0.001) }' "/proc/$SPIN/stat")
echo "  $in_getpid of $total stacks end in getpid, $in_hot pass through hot_function; the kernel says ${kernel}% of its CPU time was in system calls"
check "spin: enough stacks to judge ($total >= 20)" test "${total:-0}" -ge 20
check "spin: hot_function leads (on $in_hot of $total stacks, at least 70%)" \
	test $((100 * ${in_hot:-0})) -ge $((70 * ${total:-1}))
check "spin: getpid holds no more than the kernel's share + 15 points ($in_getpid of $total, kernel ${kernel}%)" \
	test $((100 * ${in_getpid:-0})) -le $(((${kernel:-0} + 15) * ${total:-1}))
left_out=$(sed -n "s/.*note: \([0-9]*\) samples landed at a later system call's return and were left out.*/\1/p" "$TMP/spin.out")
echo "  the report says ${left_out:-no} samples were left out"
check "spin: the report says how many samples landed at a later call's return (${left_out:-none})" \
	test "${left_out:-0}" -ge 1
check "spin: target runs free afterwards" settles_running "$SPIN"
kill "$SPIN"

# --- A thread whose work is its system calls: it is sampled in them --------
"$FIXTURES/inline_c" syscalls >/dev/null &
CALLS=$!
TEST_PIDS="$TEST_PIDS $CALLS"
sleep 0.5
profile calls "$CALLS" running
read -r in_getpid total <<<"$(leaf_share "${folded:-/dev/null}" "$GETPID")"
kernel=$(awk '{ printf "%d", 100 * $15 / ($14 + $15 + 0.001) }' "/proc/$CALLS/stat")
echo "  $in_getpid of $total stacks end in getpid; the kernel says ${kernel}% of its CPU time was in system calls"
check "calls: enough stacks to judge ($total >= 20)" test "${total:-0}" -ge 20
check "calls: getpid holds at least the kernel's share - 15 points ($in_getpid of $total, kernel ${kernel}%)" \
	test $((100 * ${in_getpid:-0})) -ge $(((${kernel:-0} - 15) * ${total:-1}))
kill "$CALLS"

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
