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
# pthread_rwlock_wrlock, RwLock::read / RwLock::write), and no contended
# lock at any other address: glibc's rwlock sleeps on a futex word inside
# the lock (at offset 0, 8 or 12), so a wrong offset would show as a second
# lock. Counts: std's read_contended/write_contended return once per
# acquisition, so within 2 of the program's count (a lock freed between the
# failed try and the call takes the fast path); a glibc wait is one futex
# sleep, and a reader preferring writers can sleep twice in one acquisition
# (first until no writer waits, then until the write phase ends), so the
# read count may run over the acquisitions by up to a quarter
# (docs/locks.md, "pthread_rwlock"). The waits' totals must be within
# 0.2-1.1 of the program's own (wall-clock, so with our stops of the
# waiter in them).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach

truth() { sed -n "s/^$2 \\(.*\\)\$/\\1/p" "$1" | head -1; }
# waits FILE ADDR SITE OP: the count of waits of the report's row
waits() {
	grep -A1 "^#[0-9]* contended lock $2 taken at $3 ($4)\$" "$1" | sed -n 's/^   \([0-9]*\) waits\{0,1\},.*/\1/p' | head -1
}
between() {   # between X LOW HIGH
	[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

{ echo 'set exact true'; cat "$TOP_SRCDIR/recipes/locks.recipe"; } >"$TMP/exact.recipe"

for prog in locks_c locks_rust; do
	if [ $prog = locks_c ]; then rd_op=pthread_rwlock_rdlock wr_op=pthread_rwlock_wrlock over=5
	else rd_op=RwLock::read wr_op=RwLock::write over=0; fi
	OUT=$TMP/$prog
	"$XGDBPROF" --recipe "$TMP/exact.recipe" -o "$OUT" -- "$FIXTURES/$prog" 3 3 2000 rwlock >"$OUT.out" 2>"$OUT.err"
	rw=$(truth "$OUT.out" rw_lock)
	rd_site=$(truth "$OUT.out" rd_site) wr_site=$(truth "$OUT.out" wr_site)
	rd_n=$(truth "$OUT.out" rd_contended) wr_n=$(truth "$OUT.out" wr_contended)
	echo "# $prog: the program took $rw for reading at $rd_site ($rd_n contended), for writing at $wr_site ($wr_n); report:"
	grep -A1 '^#[0-9]* contended lock' "$OUT.out" | sed 's/^/#   /'
	rd=$(waits "$OUT.out" "$rw" "$rd_site" "$rd_op")
	wr=$(waits "$OUT.out" "$rw" "$wr_site" "$wr_op")
	check "$prog: the contended reads of $rw at $rd_site ($rd_op): ${rd:-no row} for the program's ${rd_n:-?}" \
		between "${rd:-}" "$((${rd_n:-0} - 2))" "$((${rd_n:-0} + ${rd_n:-0} * over / 20 + 2))" || show "$OUT.err"
	check "$prog: the contended writes of $rw at $wr_site ($wr_op): ${wr:-no row} for the program's ${wr_n:-?}" \
		between "${wr:-}" "$((${wr_n:-0} - 2))" "$((${wr_n:-0} + ${wr_n:-0} * over / 20 + 2))"
	# totals: the program's waits are wall time and hold our stops of the
	# waiter itself (each sleep's entry and return: two hits of 2-5 ms,
	# traced exactly), which its own clock (target_nsecs) takes out; the
	# other threads' stops it no longer takes out (docs/locks.md, "Time")
	for kind in rd wr; do
		op=$([ $kind = rd ] && echo "$rd_op" || echo "$wr_op")
		site=$([ $kind = rd ] && echo "$rd_site" || echo "$wr_site")
		total=$(grep -A1 "^#[0-9]* contended lock $rw taken at $site ($op)\$" "$OUT.out" | grep -o 'total [0-9.]* [mu]*s' | head -1 |
			awk '{ print ($3 == "s" ? $2 * 1e6 : $3 == "ms" ? $2 * 1000 : $2) }')
		truth_total=$(truth "$OUT.out" ${kind}_wait_total_us)
		check "$prog: $op waits total ${total:-?} us, 0.2-1.1 of the program's wall-clock ${truth_total:-?} us" \
			awk -v x="${total:-}" -v t="${truth_total:-0}" 'BEGIN { exit !(x != "" && t > 0 && x >= 0.2 * t && x <= 1.1 * t) }'
	done
	check "$prog: no contended lock at another address (the futex word mapped back to its rwlock)" \
		sh -c "test -n '$rw' && ! grep '^#[0-9]* contended lock ' '$OUT.out' | grep -qv ' lock $rw '"
done
finish
