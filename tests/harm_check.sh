# tests/harm_check.sh — was the target harmed? Sourced (by tests and by
# bench/stress_harm.sh); defines functions only, needs nothing set.
#
#   harm_check PID STATUS_FILE CODECHECK
#       PID is a running tests/fixtures/canary writing STATUS_FILE; CODECHECK
#       is build/tests/unit/test_tracer_codecheck. Prints one line per harm
#       found and returns how many (0: unharmed). Checks, in order: the
#       process exists (if not: what killed it, from STATUS_FILE.fatal); no
#       thread is stopped (state T/t) or traced (TracerPid); no child of it is
#       stopped; the code bytes of every executable file mapping equal the
#       file; every worker's calls and the dlopen count advance within 2 s;
#       the canary saw no register harmed and no abnormal child.
#   harm_field STATUS_FILE KEY   prints KEY's value
#   harm_registers PID [REGS]    every thread's REGS (default "rcx rbx") read
#       by a plain gdb that attaches and detaches — for a look by hand, the
#       canary's own check is the oracle.

harm_field() {
	sed -n "s/^$2=//p" "$1" 2>/dev/null | head -1
}

harm__state() {   # the /proc state letter of a process or task directory
	sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "$1/stat" 2>/dev/null
}

# harm__where PID "SIGNAME rip=0xADDR": "SIGNAME at MODULE+0xOFFSET", the
# address placed in PID's mappings; the text as given when in none.
harm__where() {
	local pid=$1 what=$2 rip=${2##*rip=0x} start end off path line
	case "$rip" in ""|*[!0-9a-fA-F]*) echo "$what"; return ;; esac
	while read -r line; do
		set -- $line
		start=${1%-*} end=${1#*-} off=$3 path=${6:-}
		if [ $((16#$rip)) -ge $((16#$start)) ] && [ $((16#$rip)) -lt $((16#$end)) ]; then
			printf '%s at %s+0x%x\n' "${what%% *}" "${path##*/}" $((16#$rip - 16#$start + 16#$off))
			return
		fi
	done <"/proc/$pid/maps" 2>/dev/null
	echo "$what"
}

harm_check() {
	local pid=$1 status=$2 codecheck=$3 failures=0 task state tracer child n stopped traced
	local before_calls before_dl after_calls after_dl i advanced_calls=0 advanced_dl=0
	harm__fail() { echo "harm: $*"; failures=$((failures + 1)); }
	state=$(harm__state "/proc/$pid")
	case "$state" in
	""|Z|X)
		if [ -s "$status.fatal" ]; then
			harm__fail "canary $pid is dead: $(cat "$status.fatal")"
		else
			harm__fail "canary $pid is gone (state '$state')"
		fi
		return "$failures" ;;
	esac
	stopped=
	traced=
	for task in /proc/"$pid"/task/*; do
		state=$(harm__state "$task")
		case "$state" in T|t) stopped="$stopped ${task##*/}($(cat "$task/comm" 2>/dev/null))" ;; esac
		tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "$task/status" 2>/dev/null)
		case "$tracer" in ""|0) ;; *) traced="$traced ${task##*/}:$tracer($(cat /proc/"$tracer"/comm 2>/dev/null))" ;; esac
	done
	[ -z "$stopped" ] || harm__fail "thread(s) left stopped (T/t):$stopped"
	[ -z "$traced" ] || harm__fail "thread(s) still traced, thread:tracer:$traced"
	for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
		state=$(harm__state "/proc/$child")
		case "$state" in T|t) harm__fail "child $child left in state $state" ;; esac
	done
	n=$("$codecheck" "$pid" 2>&1)
	case "$n" in
	0) ;;
	*[!0-9]*|"") harm__fail "could not compare the code bytes: $n" ;;
	*) harm__fail "$n code byte(s) differ from the file (a breakpoint left behind)" ;;
	esac
	before_calls=$(harm_field "$status" calls)
	before_dl=$(harm_field "$status" dlopens)
	for i in $(seq 1 40); do
		sleep 0.05
		after_calls=$(harm_field "$status" calls)
		after_dl=$(harm_field "$status" dlopens)
		[ "$advanced_calls" = 0 ] && harm__all_advanced "$before_calls" "$after_calls" && advanced_calls=1
		[ "$after_dl" != "$before_dl" ] && advanced_dl=1
		[ "$advanced_calls$advanced_dl" = 11 ] && break
	done
	[ "$advanced_calls" = 1 ] || harm__fail "a worker made no progress in 2 s (calls $before_calls -> $after_calls)"
	[ "$advanced_dl" = 1 ] || harm__fail "dlopen made no progress in 2 s (dlopens $before_dl -> $after_dl)"
	n=$(harm_field "$status" harmed)
	[ "${n:-x}" = 0 ] || harm__fail "$n register(s) harmed; first: $(harm_field "$status" first_harm)"
	n=$(harm_field "$status" abnormal_children)
	local where=
	# A child that dies of a signal records it where the canary would
	# (STATUS.fatal, its handler inherited), its PC in the canary's own
	# mappings: said as module+offset (gdb's step of a fork child ends
	# just after _Fork's syscall, docs/safety.md).
	[ "${n:-x}" != 0 ] && [ -s "$status.fatal" ] && where=" (a child's last fatal signal: $(harm__where "$pid" "$(cat "$status.fatal")"))"
	[ "${n:-x}" = 0 ] || harm__fail "$n abnormal child(ren); first: $(harm_field "$status" first_abnormal)$where"
	return "$failures"
}

# True if every field of $2 differs from the same field of $1 (each worker's
# count moved), or the number of workers changed (an exec restarted them).
harm__all_advanced() {
	[ -n "$1" ] && [ -n "$2" ] || return 1
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = split(a, x, " "); m = split(b, y, " ")
		if (n != m) exit 0
		for (i = 1; i <= n; i++) if (x[i] == y[i]) exit 1
		exit 0 }'
}

harm_registers() {
	local pid=$1 regs=${2:-rcx rbx}
	timeout 30 gdb -nx -batch -p "$pid" -ex "thread apply all info registers $regs" 2>/dev/null |
		grep -E '^(Thread|[a-z0-9]+ +0x)'
}
