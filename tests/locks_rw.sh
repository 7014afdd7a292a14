#!/usr/bin/env bash
# locks_rw.sh — the locks recipe's RwLock rows against locks_c (glibc's
# pthread_rwlock, preferring writers) and locks_rust (std's futex RwLock)
# run with `rwlock`: three workers take one rwlock, for writing every third
# round, else for reading, each held ~2 ms of CPU work; each acquisition is
# tried first, so the program counts its own contended reads and writes
# (a failed try, then the lock call that waits) and prints the lock's
# address, the two lines that take it after a failed try, and the counts.
#
# Traced exactly, the report must hold a read row and a write row for that
# address at those lines, the operation told apart (pthread_rwlock_rdlock /
# pthread_rwlock_wrlock, RwLock::read / RwLock::write), and no read or
# write of the rwlock at any other address: glibc's rwlock sleeps on a futex word inside
# the lock (at offset 0, 8 or 12), so a wrong offset would show as a second
# lock. Counts are of acquisitions that waited: std's
# read_contended/write_contended return once per acquisition, so within 2
# of the program's count (a lock freed between the failed try and the call
# takes the fast path); a glibc acquisition can sleep in the futex several
# times (a reader preferring writers: until no writer waits, then until the
# write phase ends), and the recipe folds them into one (docs/locks.md,
# "pthread_rwlock"), so its rows must carry the program's counts, never
# more, at most one less for that race (counting sleeps gave 221 for 206
# reads, 98 for 86). The waits' totals must be within 0.2-1.1 of the
# program's own (wall-clock, so with our stops of the waiter in them).
# glibc's rows also carry holds, timed from the last wake to the same
# thread's pthread_rwlock_unlock: the program times each contended
# acquisition's hold on its CPU clock and on CLOCK_MONOTONIC, and our p50,
# on the target's own clock, must lie between half the CPU-clock median and
# 3 times the wall-clock one (the holder works that CPU time, and a
# reader shares the CPUs with the other readers; the wall clock also holds
# our stops, which target_nsecs takes out). 3x is issue 26's bound for a
# latency against the program's own timing. It was 1.5x until a CI
# rehearsal on an idle machine (2026-12-04) measured the read hold at 1.7x
# the program's wall p50 (2100 us against 1238; writes 1100 against 2155),
# and the same run's non-stop read-held 4.6 ms against 2.23 (not judged
# there): our read holds run from the reader's last futex wake, which
# includes its wait for a CPU (3 workers on 2 CPUs) before rdlock returns,
# where the program's start once it holds the lock. Not fixed (issue 26
# item 4).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

truth() { sed -n "s/^$2 \\(.*\\)\$/\\1/p" "$1" | head -1; }
# waits FILE ADDR SITE OP: the count of waits of the report's row
waits() {
	grep -A1 "^#[0-9]* contended lock $2 taken at $3 ($4)\$" "$1" | sed -n 's/^   \([0-9]*\) waits\{0,1\},.*/\1/p' | head -1
}
# held_p50 FILE ADDR SITE OP: the row's hold p50 in us
held_p50() {
	grep -A2 "^#[0-9]* contended lock $2 taken at $3 ($4)\$" "$1" | sed -n 's/^   \(read-\)\{0,1\}held p50 \([0-9.]*\) \([mu]*s\),.*/\2 \3/p' |
		head -1 | awk '{ print ($2 == "s" ? $1 * 1e6 : $2 == "ms" ? $1 * 1000 : $1) }'
}
between() {   # between X LOW HIGH
	[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/locks.recipe"; } >"$TMP/exact.recipe"

# locks_c twice: in gdb's non-stop mode (the default) for the totals, and
# in all-stop mode for the holds (there target_nsecs takes every stop out
# of a hold; in non-stop mode a hold also counts the holder's waits for a
# CPU while gdb serves the other threads' hits, and readers woken together
# made reads come to 1.9 times the program's wall-clock hold: docs/locks.md,
# "Time"); the totals in all-stop mode are mostly our stops.
for run in locks_c locks_c:all-stop locks_rust; do
	prog=${run%%:*} mode=
	[ "$run" != "$prog" ] && mode=--all-stop
	if [ $prog = locks_c ]; then rd_op=pthread_rwlock_rdlock wr_op=pthread_rwlock_wrlock under=1 over=0
	else rd_op=RwLock::read wr_op=RwLock::write under=2 over=2; fi
	OUT=$TMP/${prog}${mode}
	# shellcheck disable=SC2086
	"$XGDBPROF" $mode --recipe "$TMP/exact.recipe" -o "$OUT" -- "$FIXTURES/$prog" 3 3 2000 rwlock >"$OUT.out" 2>"$OUT.err"
	rw=$(truth "$OUT.out" rw_lock)
	rd_site=$(truth "$OUT.out" rd_site) wr_site=$(truth "$OUT.out" wr_site)
	rd_n=$(truth "$OUT.out" rd_contended) wr_n=$(truth "$OUT.out" wr_contended)
	grep -E '^(rd|wr)_hold' "$OUT.out" | sed 's/^/# program: /'
	prog="$prog${mode:+ ($mode)}"
	echo "# $prog: the program took $rw for reading at $rd_site ($rd_n contended), for writing at $wr_site ($wr_n); report:"
	grep -A2 '^#[0-9]* contended lock' "$OUT.out" | sed 's/^/#   /'
	rd=$(waits "$OUT.out" "$rw" "$rd_site" "$rd_op")
	wr=$(waits "$OUT.out" "$rw" "$wr_site" "$wr_op")
	check "$prog: the contended reads of $rw at $rd_site ($rd_op): ${rd:-no row} for the program's ${rd_n:-?} (at most $under under, $over over)" \
		between "${rd:-}" "$((${rd_n:-0} - under))" "$((${rd_n:-0} + over))" || show "$OUT.err"
	check "$prog: the contended writes of $rw at $wr_site ($wr_op): ${wr:-no row} for the program's ${wr_n:-?} (at most $under under, $over over)" \
		between "${wr:-}" "$((${wr_n:-0} - under))" "$((${wr_n:-0} + over))"
	# totals: the program's waits are wall time and hold our stops of the
	# waiter itself (each sleep's entry and return: two hits of 2-5 ms,
	# traced exactly), which its own clock (target_nsecs) takes out; the
	# other threads' stops it no longer takes out (docs/locks.md, "Time")
	for kind in rd wr; do
		[ -n "$mode" ] && break
		op=$([ $kind = rd ] && echo "$rd_op" || echo "$wr_op")
		site=$([ $kind = rd ] && echo "$rd_site" || echo "$wr_site")
		total=$(grep -A1 "^#[0-9]* contended lock $rw taken at $site ($op)\$" "$OUT.out" | grep -o 'total [0-9.]* [mu]*s' | head -1 |
			awk '{ print ($3 == "s" ? $2 * 1e6 : $3 == "ms" ? $2 * 1000 : $2) }')
		truth_total=$(truth "$OUT.out" ${kind}_wait_total_us)
		check "$prog: $op waits total ${total:-?} us, 0.2-1.1 of the program's wall-clock ${truth_total:-?} us" \
			awk -v x="${total:-}" -v t="${truth_total:-0}" 'BEGIN { exit !(x != "" && t > 0 && x >= 0.2 * t && x <= 1.1 * t) }'
	done
	if [ -n "$mode" ]; then
		for kind in rd wr; do
			op=$([ $kind = rd ] && echo "$rd_op" || echo "$wr_op")
			site=$([ $kind = rd ] && echo "$rd_site" || echo "$wr_site")
			held=$(held_p50 "$OUT.out" "$rw" "$site" "$op")
			cpu=$(truth "$OUT.out" ${kind}_hold_p50_us) wall=$(truth "$OUT.out" ${kind}_hold_wall_p50_us)
			check "$prog: $op hold p50 ${held:-not measured} us, between half the program's CPU-clock ${cpu:-?} us and 3 x its wall-clock ${wall:-?} us" \
				awk -v x="${held:-}" -v c="${cpu:-0}" -v w="${wall:-0}" 'BEGIN { exit !(x != "" && c > 0 && x >= 0.5 * c && x <= 3 * w) }'
		done
	fi
	# What this check is about is the rwlock's futex word showing up as a
	# lock at another address: a row of a read or write of the rwlock (its
	# operation, or one of its two sites) at any address but the lock's.
	# Other locks are the program's own and real: locks_c's `tally` mutex
	# (locks_c.c:123), and glibc's dl_load_lock that a thread takes at its
	# first thread-local destructor (cxa_thread_atexit_impl.c:118), each
	# seen contended once in CI under load; they are shown, not judged.
	others=$(grep '^#[0-9]* contended lock ' "$OUT.out" | grep -v " lock $rw " |
		grep -F -e "($rd_op)" -e "($wr_op)" -e " taken at $rd_site " -e " taken at $wr_site " || true)
	check "$prog: no read or write of the rwlock at another address (the futex word mapped back to its rwlock)${others:+: $others}" \
		sh -c 'test -n "$1" && test -z "$2"' _ "$rw" "$others"
done
finish
