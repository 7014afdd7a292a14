# trace_registers.sh — traced threads keep their registers.
#
# regs_hot's workers call hot_step (first instruction RIP-relative, the
# case gdb 13's displaced stepping rewrites with a scratch register) about
# a million times a second and check rcx, rdx, rsi and r8-r11 after every
# call. gdb 13 left the scratch register holding its own address whenever
# a displaced step was interrupted before the instruction ran (its
# displaced_step_buffers::finish only relocates the PC then), which our
# stop/detach sequence did several times a second. Each mode runs three times;
# on the unfixed build every mode corrupted a register in most runs.
# Oracles: the program's own check after every call, and a plain gdb
# reading the registers of the workers after xgdbprof has left.
. "$TOP_SRCDIR/tests/lib.sh"
require_attach

# Plain gdb stops the program once and prints, for each thread stopped in
# the assembly loop, "pc rcx rdx rsi r8 r9 r10 r11" (the loop's bounds
# come from the program's own labels).
gdb_register_snapshot() {
	gdb -nx -batch -p "$1" \
		-ex 'printf "loop %#lx %#lx\n", &regs_loop_begin, &regs_loop_end' \
		-ex 'thread apply all -q printf "regs %#lx %#lx %#lx %#lx %#lx %#lx %#lx %#lx\n", $pc, $rcx, $rdx, $rsi, $r8, $r9, $r10, $r11' \
		2>/dev/null | grep -E '^(loop|regs) '
}

# Reads the snapshot: every thread inside the loop must hold rcx <= 100
# and the constants; at least one must be there (else nothing was read).
registers_as_the_program_holds_them() {
	local tag a b c d e f g h lo=0 hi=0 inside=0 bad=0
	while read -r tag a b c d e f g h; do
		if [ "$tag" = loop ]; then lo=$((a)); hi=$((b)); continue; fi
		[ $((a)) -ge "$lo" ] && [ $((a)) -lt "$hi" ] || continue
		inside=$((inside + 1))
		if [ $((b)) -gt 100 ] || [ "$c $d $e $f $g $h" != "0x1111111111111111 0x2222222222222222 0x3333333333333333 0x4444444444444444 0x5555555555555555 0x6666666666666666" ]; then
			echo "  a thread in the loop holds: pc=$a rcx=$b rdx..r11=$c $d $e $f $g $h"
			bad=$((bad + 1))
		fi
	done <"$1"
	[ "$inside" -gt 0 ] || echo "  no worker thread was stopped inside the loop"
	[ "$inside" -gt 0 ] && [ "$bad" = 0 ]
}

status_field() { sed -n "s/.*$2=\([^ ]*\).*/\1/p" "$1"; }

run_mode() {   # run_mode LABEL XGDBPROF-ARGS...
	local label=$1 run
	shift
	for run in 1 2 3; do
		local st=$TMP/status.$label.$run
		"$FIXTURES/regs_hot" 3 30 "$st" >/dev/null &
		local pid=$!
		TEST_PIDS="$TEST_PIDS $pid"
		wait_for_file "$st"
		sleep 0.3
		"$XGDBPROF" -o "$TMP/out.$label.$run" -d 2s "$@" "$pid" >"$TMP/xg.$label.$run" 2>&1
		local rc=$?
		check "$label run $run: xgdbprof exited 0 (got $rc)" test "$rc" = 0 || show "$TMP/xg.$label.$run"
		local calls_before
		calls_before=$(status_field "$st" calls)
		sleep 0.5
		check "$label run $run: the program ran on after xgdbprof left" \
			test "$(status_field "$st" calls)" -gt "$calls_before"
		local harmed
		harmed=$(status_field "$st" harmed)
		check "$label run $run: no register changed across any call (program says harmed=$harmed, $(status_field "$st" first_bad_reg)=$(status_field "$st" first_bad_value))" \
			test "$harmed" = 0
		gdb_register_snapshot "$pid" >"$TMP/snap.$label.$run"
		check "$label run $run: plain gdb reads the workers' registers as the program holds them" \
			registers_as_the_program_holds_them "$TMP/snap.$label.$run" || show "$TMP/snap.$label.$run"
		check "$label run $run: no breakpoint left in the code" \
			test "$("$TOP_BUILDDIR/tests/unit/test_tracer_codecheck" "$pid")" = 0
		if grep -q "^@c: [1-9]\|^latency of hot_step" "$TMP/xg.$label.$run"; then
			ok "$label run $run: the probe saw calls"
		else
			not_ok "$label run $run: the probe saw calls"
			show "$TMP/xg.$label.$run"
		fi
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
}

run_mode exact -e 'set exact true
function "hot_step" { @c = count(); }
end { print(@c); }'
run_mode budgeted --recipe func-latency -D FUNC=hot_step
finish
