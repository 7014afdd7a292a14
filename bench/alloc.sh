#!/bin/sh
# bench/alloc.sh — what the alloc recipe costs its target, and how its
# estimates compare with the truth (issue 16).
#
#   bench/alloc.sh [--quick] [--rounds N] [--window SECONDS] [--only "SECTION ..."] BUILD_DIR
#
# Sections, in order (--only runs those named): sites (alloc_sites),
# kvservice, growth (glibc_churn with heap-growth), churn (glibc_churn with
# alloc and heap), demo (the demo service with alloc and heap), jemservice.
#
# The target is tests/fixtures/alloc_sites: one thread, every 2 ms of its
# own CPU time, site_a() mallocs 192 bytes and site_b() callocs 64; it prints
# its own totals at exit. In interleaved rounds (the order rotated by one
# each round) it runs for the window:
#   - alone (baseline): allocations a second;
#   - under `xgdbprof --recipe alloc -- alloc_sites ...` (the default 5%
#     budget), traced from its first instruction to its exit: its
#     allocations a second, the stopped share xgdbprof reports, and site_a's
#     bytes as estimated (with the 95% interval) against the program's own
#     total, and the measured A:B byte ratio (truth 3).
# On the realistic fixture (kvservice, when built), the same rounds
# attached for the window after 2 s of warm-up, against a baseline run
# of the same length: operations a second from the service's own counters
# (--progress) and the loss, the stopped share, and the bytes a second its
# make_key and make_value allocate, estimated against the truth its
# counters give (each operation formats one 24-byte key, each put one value
# of 96 + 8..207 bytes: mean 203.5); then the stacks that allocate most
# (they must end in kvservice's code, not in the allocator).
# Prints one line a round and the medians. Needs: cc, gdb.
set -eu

rounds=3
window=6
# report lines whole (a pipe would fit them to 100 columns)
COLUMNS=10000
export COLUMNS
. "$(dirname "$0")/lib.sh"
[ -z "$other_xgdbprof" ] || { echo "$0: --compare is bench/profile.sh's" >&2; exit 2; }
# wants SECTION: --only names it, or no --only
wants() { [ -z "$only" ] || case " $only " in *" $1 "*) ;; *) return 1 ;; esac; }
sites=$build/tests/fixtures/bin/alloc_sites
log "building xgdbprof and the alloc_sites fixture in $build"
make -s -C "$build" xgdbprof tests/fixtures/bin/alloc_sites >&2

# map_text OUT MAP: the file in the run's directory OUT.d holding print()'s
# text of @MAP (the shipped recipes print reports on the terminal and each
# map's entries, with their estimates and intervals, into these files)
map_text() {
	case $2 in
	bytes) echo "$1.d/alloc-bytes.txt" ;;
	allocs) echo "$1.d/alloc-counts.txt" ;;
	heap) echo "$1.d/heap-live.txt" ;;
	growth) echo "$1.d/heap-growth.txt" ;;
	esac
}

# value LEAF FILE: "measured estimate low high" of @bytes' entry whose stack starts at LEAF
# (a lower bound, "est. at least N": "measured N N inf")
value() {
	awk -v leaf="$1" '
		index($0, "@bytes[") == 1 { want = 1; first = 1; next }
		want && first { first = 0; hit = ($1 == leaf); next }
		want && /^\]: / { if (hit) print; want = 0 }' "$2" | head -1 |
		sed -n 's/^\]: \([0-9]*\)[^·]*· est\. \([0-9]*\) (95% \([0-9]*\)–\([0-9]*\)).*/\1 \2 \3 \4/p; t
			s/^\]: \([0-9]*\)[^·]*· est\. at least \([0-9]*\) .*/\1 \2 \2 inf/p; t; s/^\]: \([0-9]*\)$/\1 \1 \1 \1/p'
}

if wants sites; then
echo "bench/alloc.sh: alloc_sites (2 ms of CPU an iteration), window ${window} s, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "round config    allocs/s  loss%  stopped%  site_a bytes: truth / est. (95%)        in?  A:B measured"
for r in $(seq 0 $((rounds - 1))); do
	base_rate=
	for config in $(rotated "baseline alloc" "$r"); do
		out=$tmp/$config-$r
		if [ "$config" = baseline ]; then
			"$sites" 2000 "$window" 0 >"$out.out"
		else
			"$xgdbprof" --recipe "$src/recipes/alloc.recipe" -o "$out.d" -- "$sites" 2000 "$window" 0 \
				>"$out.out" 2>"$out.err" || true
		fi
		a=$(sed -n 's/^a_bytes \([0-9]*\)$/\1/p' "$out.out")
		rate=$(awk -v a="${a:-0}" -v w="$window" 'BEGIN { printf "%.0f", a / 192 / w }')
		echo "$rate" >>"$tmp/rate-$config"
		[ "$config" = baseline ] && echo "$rate" >"$tmp/base-$r"
	done
	base=$(cat "$tmp/base-$r")
	out=$tmp/alloc-$r
	a=$(sed -n 's/^a_bytes \([0-9]*\)$/\1/p' "$out.out")
	rate=$(awk -v a="${a:-0}" -v w="$window" 'BEGIN { printf "%.0f", a / 192 / w }')
	stopped=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$out.err")
	set -- $(value site_a "$(map_text "$out" bytes)") - - - -
	ma=$1 est=$2 lo=$3 hi=$4
	set -- $(value site_b "$(map_text "$out" bytes)") - - - -
	mb=$1
	inside=$(awk -v t="${a:-0}" -v l="$lo" -v h="$hi" 'BEGIN { print (l != "-" && t >= l && (h == "inf" || t <= h)) ? "yes" : "no" }')
	ratio=$(awk -v x="$ma" -v y="$mb" 'BEGIN { if (y + 0 > 0) printf "%.2f", x / y; else print "-" }')
	loss=$(awk -v b="$base" -v p="$rate" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
	echo "$loss" >>"$tmp/loss"
	echo "$stopped" >>"$tmp/stopped"
	echo "$ratio" >>"$tmp/ratio"
	echo "$inside" >>"$tmp/inside"
	printf '%-5s baseline  %8s\n' "$r" "$base"
	printf '%-5s alloc     %8s  %5s  %8s  %8s / %s (%s–%s)  %4s  %s\n' "$r" "$rate" "$loss" "${stopped:--}" "${a:--}" \
		"$est" "$lo" "$hi" "$inside" "$ratio"
done
echo "median: loss $(median <"$tmp/loss")%, stopped $(median <"$tmp/stopped")%, A:B $(median <"$tmp/ratio"); truth inside the interval in $(grep -c yes "$tmp/inside") of $rounds rounds"
fi # sites

kv=$build/tests/fixtures/bin/kvservice
# counter FILE NAME: a count from kvservice's --progress file ("OPS" for the
# first line's operations, "NS" for its elapsed nanoseconds)
counter() {
	case "$2" in
	OPS) sed -n '1s/^\([0-9]*\) .*/\1/p' "$1" ;;
	NS) sed -n '1s/^[0-9]* \([0-9]*\)$/\1/p' "$1" ;;
	*) sed -n "s/^$2 \\([0-9]*\\)\$/\\1/p" "$1" ;;
	esac
}
# rate LEAF FILE: "rate low high" summed over @bytes' entries whose stack
# starts at LEAF (bytes/s; the bounds summed: a conservative interval; an
# entry printed "est. N (95% LO–HI) · R/s" gets LO and HI scaled by R/N); a
# lower bound ("at least N/s": calls too close together to time) gives
# "N N inf"
rate() {
	awk -v leaf="$1" '
		index($0, "@bytes[") == 1 { want = 1; first = 1; next }
		want && first { first = 0; hit = ($1 == leaf); next }
		want && /^\]: / {
			if (hit && match($0, /est\. [0-9.e+]+ \(95% [0-9.e+]+[^0-9]+[0-9.e+]+\) · [0-9.e+]+\/s/)) {
				# "est. N (95% LO–HI) · R/s": the interval of the rate is the
				# one of the estimate, scaled as the rate is
				t = substr($0, RSTART + 5, RLENGTH - 5)
				gsub(/[^0-9.e+]+/, " ", t)
				split(t, f, " ")   # est, 95, low, high, rate
				if (f[1] > 0) { r += f[5]; lo += f[3] * f[5] / f[1]; hi += f[4] * f[5] / f[1]; n++ }
			} else if (hit && match($0, / [0-9.e+]+\/s \(95% [0-9.e+]+.[^0-9]*[0-9.e+]+\)/)) {
				t = substr($0, RSTART, RLENGTH)
				gsub(/[^0-9.e+]+/, " ", t)
				split(t, f, " ")   # rate, 95, low, high
				r += f[1]; lo += f[3]; hi += f[4]; n++
			} else if (hit && match($0, /at least [0-9.e+]+\/s/)) {
				t = substr($0, RSTART + 9, RLENGTH - 11)
				r += t; lo += t; open = 1; n++
			}
			want = 0
		}
		END { if (n) { if (open) printf "%.0f %.0f inf\n", r, lo; else printf "%.0f %.0f %.0f\n", r, lo, hi } }' "$2"
}
if wants kvservice; then
if [ -x "$kv" ]; then
	# kvservice counts its requests and puts: every operation formats a
	# 24-byte key (String::with_capacity(24), never grown) in make_key, and
	# every put a value of String::with_capacity(96 + payload), payload
	# uniform in 8..207 (mean 203.5 bytes), never grown, in make_value.
	echo
	echo "kvservice (2 workers, attached after 2 s, window ${window} s): truth from its own counters"
	echo "round config    ops/s    loss%  stopped%  traced  make_key B/s: truth / est. (95%)    in?  make_value B/s: truth / est. (95%)   in?"
	for r in $(seq 0 $((rounds - 1))); do
		for config in $(rotated "baseline alloc" "$r"); do
			out=$tmp/kv-$config-$r
			# a long life: under load, attaching and arming can take seconds
			"$kv" $((window + 120)) --workers 2 --progress "$out.progress" >/dev/null 2>&1 &
			target_pid=$!
			sleep 2
			cp "$out.progress" "$out.before"
			if [ "$config" = baseline ]; then
				sleep "$window"
			else
				"$xgdbprof" --recipe "$src/recipes/alloc.recipe" -d "${window}s" -o "$out.d" "$target_pid" \
					>"$out.out" 2>"$out.err" || true
			fi
			cp "$out.progress" "$out.after"
			kill "$target_pid" 2>/dev/null || true
			wait "$target_pid" 2>/dev/null || true
			target_pid=
			awk -v o0="$(counter "$out.before" OPS)" -v o1="$(counter "$out.after" OPS)" \
				-v n0="$(counter "$out.before" NS)" -v n1="$(counter "$out.after" NS)" \
				-v q0="$(counter "$out.before" kvservice::handle_request)" -v q1="$(counter "$out.after" kvservice::handle_request)" \
				-v p0="$(counter "$out.before" kvstore::store::Store::put)" -v p1="$(counter "$out.after" kvstore::store::Store::put)" \
				'BEGIN { s = (n1 - n0) / 1e9; printf "%.0f %.0f %.0f\n", (o1 - o0) / s, (q1 - q0) / s, (p1 - p0) / s }' \
				>"$out.rates"
		done
		read -r base _ _ <"$tmp/kv-baseline-$r.rates"
		out=$tmp/kv-alloc-$r
		read -r ops requests puts <"$out.rates"
		key_truth=$(awk -v q="$requests" 'BEGIN { printf "%.0f", q * 32 * 24 }')
		value_truth=$(awk -v p="$puts" 'BEGIN { printf "%.0f", p * 203.5 }')
		set -- $(rate kvservice::make_key "$(map_text "$out" bytes)") - - -
		key_est=$1 key_lo=$2 key_hi=$3
		set -- $(rate kvservice::make_value "$(map_text "$out" bytes)") - - -
		value_est=$1 value_lo=$2 value_hi=$3
		within() { awk -v t="$1" -v l="$2" -v h="$3" 'BEGIN { print (l != "-" && t >= l && (h == "inf" || t <= h)) ? "yes" : "no" }'; }
		key_in=$(within "$key_truth" "$key_lo" "$key_hi")
		value_in=$(within "$value_truth" "$value_lo" "$value_hi")
		stopped=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$out.err")
		traced=$(sed -n 's/^xgdbprof: traced \([0-9.]*\) s:.*/\1/p' "$out.err")
		loss=$(awk -v b="$base" -v p="$ops" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
		echo "$loss" >>"$tmp/kv-loss"
		echo "${stopped:-}" >>"$tmp/kv-stopped"
		echo "$key_in" >>"$tmp/kv-in"
		echo "$value_in" >>"$tmp/kv-in"
		printf '%-5s baseline  %7s\n' "$r" "$base"
		printf '%-5s alloc     %7s  %5s  %8s  %6s  %8s / %s (%s–%s)  %4s  %8s / %s (%s–%s)  %4s\n' "$r" "$ops" "$loss" \
			"${stopped:--}" "${traced:--}" "$key_truth" "$key_est" "$key_lo" "$key_hi" "$key_in" \
			"$value_truth" "$value_est" "$value_lo" "$value_hi" "$value_in"
	done
	echo "median: loss $(median <"$tmp/kv-loss")%, stopped $(median <"$tmp/kv-stopped")%; truth inside the interval in $(grep -c yes "$tmp/kv-in") of $((2 * rounds)) estimates"
	echo "kvservice, last round: the stacks that allocate most bytes (leaf, then caller):"
	awk '/^@bytes\[/ { getline l1; getline l2; sub(/^ +/, "", l1); sub(/^ +/, "", l2); s = l1 " <- " l2 }
		/^\]: / && s != "" { print "  " s; print "     " $0; s = "" }' "$(map_text "$tmp/kv-alloc-$((rounds - 1))" bytes)" | tail -6
else
	echo "kvservice: not built (make tests/fixtures/bin/kvservice): row skipped"
fi
fi # kvservice

# glibc_churn (issue 25): two threads doing millions of 4096-B and 64-B
# malloc+free pairs a second, a third keeping one 64 KiB block every 100 ms
# (leak_block); its own count lines every second are the truth. Each round
# runs it for window + 3 s alone and with heap-growth attached for the
# window after 1.5 s: the churn pairs a second over the whole run (the
# cost, diluted by the 3 s unobserved), the stopped share, and the growth
# attributed to leak_block against what its own lines say it kept while
# traced (the lines printed during the trace, and around it).
churn=$build/tests/fixtures/bin/glibc_churn
make -s -C "$build" tests/fixtures/bin/glibc_churn >&2
# churn_window OUT SECONDS RECIPE: glibc_churn (2 churners) for SECONDS,
# its count lines in OUT.lines; after 1.5 s RECIPE attached for the
# window (OUT.out, OUT.err, OUT.d), or nothing ("baseline"); sets pid and
# before, the count lines printed before the window
churn_window() {
	"$churn" 2 "$2" >"$1.lines" &
	pid=$!
	sleep 1.5
	before=$(grep -c '^t=' "$1.lines" || true)
	if [ "$3" = baseline ]; then
		sleep "$window"
	else
		COLUMNS=10000 "$xgdbprof" --recipe "$3" -d "${window}s" -o "$1.d" "$pid" >"$1.out" 2>"$1.err" || true
	fi
}
if wants growth; then
echo
echo "glibc_churn (2 churners, leak 64 KiB / 100 ms), heap-growth attached for ${window} s: truth from its own counts"
echo "round config       pairs/s  loss%  stopped%  leak_block bytes: est. / kept during..around  est÷truth"
: >"$tmp/gc-loss"; : >"$tmp/gc-stopped"; : >"$tmp/gc-ratio"
for r in $(seq 0 $((rounds - 1))); do
	base=
	for config in $(rotated "baseline heap-growth" "$r"); do
		out=$tmp/gc-$config-$r
		recipe=$src/recipes/heap-growth.recipe
		[ "$config" = baseline ] && recipe=baseline
		churn_window "$out" "$((window + 3))" "$recipe"
		sleep 1.2
		after=$(grep -c '^t=' "$out.lines" || true)
		wait "$pid" || true
		pairs=$(awk '/^t=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
			END { if (v["t"] > 0) printf "%.0f", (v["page_calls"] + v["small_calls"]) / 2 / v["t"] }' "$out.lines")
		if [ "$config" = baseline ]; then
			base=$pairs
			continue
		fi
		observed=$pairs
		read -r outer inner <<-EOF2
		$(awk -v a="$before" -v b="$after" '/^t=/ { n++; sub(/.* retained=/, ""); r[n] = $0 }
			END { printf "%d %d\n", r[b] - r[a], (b - 1 > a + 1) ? r[b - 1] - r[a + 1] : 0 }' "$out.lines")
		EOF2
		est=$(awk 'index($0, "@growth[") == 1 { want = 1; first = 1; next }
			want && first { first = 0; hit = ($1 == "leak_block"); next }
			want && /^\]: / { if (hit) print; want = 0 }' "$(map_text "$out" growth)" | head -1 |
			sed -n -e 's/.* est\. \(at least \)\{0,1\}\([0-9]*\) .*/\2/p;t' -e 's/^\]: \([0-9]*\).*/\1/p')
		stopped=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$out.err")
	done
	pairs=$observed
	loss=$(awk -v b="$base" -v p="$pairs" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
	# the truth lies between what it kept during the trace and around it
	ratio=$(awk -v e="${est:-0}" -v i="$inner" -v o="$outer" 'BEGIN { if (i > 0 && o > 0) printf "%.2f..%.2f", e / o, e / i; else print "-" }')
	echo "$loss" >>"$tmp/gc-loss"; echo "${stopped:--}" >>"$tmp/gc-stopped"; echo "$ratio" >>"$tmp/gc-ratio"
	printf '%-5s baseline    %9s\n' "$r" "$base"
	printf '%-5s heap-growth %9s  %5s  %8s  %s / %s..%s  %s\n' "$r" "$pairs" "$loss" "${stopped:--}" \
		"${est:--}" "$inner" "$outer" "$ratio"
done
echo "median: loss $(median <"$tmp/gc-loss")%, stopped $(median <"$tmp/gc-stopped")%, leak_block est÷truth $(sed 's/\.\./ /' "$tmp/gc-ratio" | cut -d' ' -f1 | median)..$(sed 's/\.\./ /' "$tmp/gc-ratio" | cut -d' ' -f2 | median) (truth: between what it kept during the trace and around it)"
fi # growth

# stack_values MAP FILE NEEDLE...: "EST RATE" summed over the @MAP entries
# whose stack holds every NEEDLE ("FUNCTION (", or "FILE:LINE)" for the
# leaf's line when it starts with "leaf="): EST the whole run's estimate
# ("est. N" or "est. N bytes retained"), RATE its "· R/s"; "bound bound"
# if an entry is only a lower bound, "none none" if no entry matched
stack_values() {
	map=$1 file=$2
	shift 2
	awk -v map="@$map[" -v needles="$*" '
		BEGIN { n = split(needles, want, " ") }
		index($0, map) == 1 { inside = 1; first = 1; for (i = 1; i <= n; i++) got[i] = 0; next }
		inside && /^\]: / {
			all = 1
			for (i = 1; i <= n; i++) all = all && got[i]
			if (all) {
				if (index($0, "est. at least")) open = 1
				else if (match($0, /est\. [0-9.e+]+/)) {
					e += substr($0, RSTART + 5, RLENGTH - 5); k++
					if (match($0, /· [0-9.e+]+\/s/)) rate += substr($0, RSTART + 2, RLENGTH - 4)
				}
			}
			inside = 0; next
		}
		inside {
			for (i = 1; i <= n; i++) {
				w = want[i]
				if (substr(w, 1, 5) == "leaf=") { if (first && index($0, substr(w, 6) ")")) got[i] = 1 }
				else if (index($0, w " (")) got[i] = 1
			}
			first = 0
		}
		END { if (open) print "bound bound"; else if (k) printf "%.0f %.0f\n", e, rate; else print "none none" }' "$file"
}
# ratio EST TRUTH: EST/TRUTH to two places; EST itself when not a number
# ("none", "bound"); "-" without a truth
ratio() { awk -v e="$1" -v t="$2" 'BEGIN { if (e !~ /^[0-9.e+]+$/) print e; else if (t > 0) printf "%.2f", e / t; else print "-" }'; }
# spread FILE: "median (min–max), K of N within 2x" of the ratios in FILE,
# then the figures that were not a ratio (none: no entry; bound: a lower
# bound), counted
spread() {
	grep '^[0-9.][0-9.]*$' "$1" | sort -g | awk '{ v[NR] = $1; if ($1 >= 0.5 && $1 <= 2) in2++ } END {
		if (NR == 0) printf "-"; else printf "%s (%s–%s), %d of %d within 2x", v[int((NR + 1) / 2)], v[1], v[NR], in2, NR }'
	grep -v -e '^[0-9.][0-9.]*$' -e '^$' "$1" | sort | uniq -c | awk '{ printf "; %s %s", $2, $1 }'
	echo
}

if wants churn; then
# glibc_churn with `alloc` and `heap` (issue 25): each stack's allocations
# and bytes a second (malloc counted in the target, docs/tracing.md) and
# the leak's retained bytes (the heap census's share, docs/alloc.md)
# against its own count lines. alloc attached for the window after 1.5 s:
# the truth is the rates between the first and the last count line
# printed during the trace; heap: the retained bytes on the last count
# line printed before xgdbprof returned (the census is taken at the end;
# the leak keeps 640 KiB a second, so within a line of it).
echo
echo "glibc_churn (2 churners, leak 64 KiB / 100 ms), alloc and heap attached for ${window} s after 1.5 s: est÷truth"
echo "round config    pairs/s  loss%  churn_page allocs/s bytes/s  churn_small allocs/s bytes/s  leak_block retained"
: >"$tmp/gh-loss-alloc"; : >"$tmp/gh-loss-heap"; : >"$tmp/gh-rates"; : >"$tmp/gh-leak"
for r in $(seq 0 $((rounds - 1))); do
	base=
	for config in $(rotated "baseline alloc heap" "$r"); do
		out=$tmp/gh-$config-$r
		churn_window "$out" "$((window + 4))" "$config"
		after=$(grep -c '^t=' "$out.lines" || true)
		wait "$pid" || true
		pairs=$(awk '/^t=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
			END { if (v["t"] > 0) printf "%.0f", (v["page_calls"] + v["small_calls"]) / 2 / v["t"] }' "$out.lines")
		echo "$pairs" >"$out.pairs"
		[ "$config" = baseline ] && continue
		# truth KEY: KEY's count a second between the first and the last
		# line printed while traced; KEY at the last of them for "retained"
		truth() { awk -v a="$before" -v b="$after" -v k="$1" '/^t=/ { n++; for (i = 1; i <= NF; i++) { split($i, kv, "="); v[n, kv[1]] = kv[2] } }
			END { if (k == "retained") { print v[b, k] + 0; exit }
				if (b > a + 1 && v[b, "t"] > v[a + 1, "t"]) printf "%.0f", (v[b, k] - v[a + 1, k]) / (v[b, "t"] - v[a + 1, "t"]); else print 0 }' "$out.lines"; }
		if [ "$config" = alloc ]; then
			row=
			for what in page small; do
				set -- $(stack_values allocs "$(map_text "$out" allocs)" "churn_$what")
				ac=$(ratio "$2" "$(truth "${what}_calls")")
				set -- $(stack_values bytes "$(map_text "$out" bytes)" "churn_$what")
				ab=$(ratio "$2" "$(truth "${what}_bytes")")
				echo "$ac $ab" | tr ' ' '\n' >>"$tmp/gh-rates"
				row="$row  $(printf '%19s %7s' "$ac" "$ab")"
			done
			echo "$row" >"$out.row"
		else
			set -- $(stack_values heap "$(map_text "$out" heap)" leak_block)
			leak=$(ratio "$1" "$(truth retained)")
			echo "$leak" >>"$tmp/gh-leak"
			printf '  %73s  (%s / %s)\n' "$leak" "$1" "$(truth retained)" >"$out.row"
		fi
	done
	# the losses once the round's baseline is in
	base=$(cat "$tmp/gh-baseline-$r.pairs")
	printf '%-5s baseline %9s\n' "$r" "$base"
	for config in alloc heap; do
		pairs=$(cat "$tmp/gh-$config-$r.pairs")
		loss=$(awk -v b="$base" -v p="$pairs" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
		echo "$loss" >>"$tmp/gh-loss-$config"
		printf '%-5s %-8s %9s  %5s%s\n' "$r" "$config" "$pairs" "$loss" "$(cat "$tmp/gh-$config-$r.row")"
	done
done
echo "est÷truth, median (range): alloc rates $(spread "$tmp/gh-rates"); leak_block retained $(spread "$tmp/gh-leak"); loss $(median <"$tmp/gh-loss-alloc")% alloc, $(median <"$tmp/gh-loss-heap")% heap"
fi # churn

# The demo service (README; the sled cache of the user story: two workers
# inserting into their trees, tests/fixtures/cache_service.rs) with `alloc`
# and `heap`, against its own counting global allocator (--progress: calls
# and bytes by thread role, and the bytes each role holds). alloc attached
# for the window after 2 s: each worker's allocations and bytes a second
# at the leaf's split (split_off: malloc, tree.rs "LINE: split-leaf") and
# at the leaf's growth (realloc, "LINE: grow-leaf"), against the service's
# counts over the same span. heap with the trees never emptied
# (CACHE_SERVICE_CAPACITY, else the trees empty every few tens of ms and
# no truth can be read at the census's moment), attached after 3 s: each
# worker's retained bytes over its stacks against its live count read at
# the end.
if wants demo; then
cs=$build/tests/fixtures/bin/cache-service
if make -s -C "$build" tests/fixtures/bin/cache-service >&2 2>/dev/null; then
	tree=$src/tests/fixtures/sled/tree.rs
	split_line=$(grep -n 'LINE: split-leaf' "$tree" | cut -d: -f1)
	grow_line=$(grep -n 'LINE: grow-leaf' "$tree" | cut -d: -f1)
	# progress FILE KIND ROLE FIELD(3 calls, 4 bytes; 3 for live)
	progress() { awk -v k="$2" -v r="$3" -v f="$4" '$1 == k && $2 == r { print $f }' "$1"; }
	echo
	echo "demo service (2 workers), alloc attached for ${window} s after 2 s, heap (trees never emptied) after 3 s: est÷truth"
	echo "round config    ops/s    loss%  stopped%   insert_worker: split allocs/s B/s, grow allocs/s B/s   session_worker: the same   retained insert / session"
	echo "      (kept: the service alone with its trees never emptied, heap's baseline)"
	: >"$tmp/cs-loss-alloc"; : >"$tmp/cs-loss-heap"; : >"$tmp/cs-stopped"; : >"$tmp/cs-rates"; : >"$tmp/cs-live"
	for r in $(seq 0 $((rounds - 1))); do
		base=
		for config in $(rotated "baseline alloc kept heap" "$r"); do
			out=$tmp/cs-$config-$r
			capacity=
			warm=2
			case $config in kept|heap) capacity=100000000 warm=3 ;; esac
			CACHE_SERVICE_CAPACITY=$capacity "$cs" $((window + 120)) --progress "$out.progress" >/dev/null 2>&1 &
			target_pid=$!
			sleep "$warm"
			cp "$out.progress" "$out.before"
			case $config in
			baseline|kept) sleep "$window" ;;
			*) COLUMNS=10000 "$xgdbprof" --recipe "$config" -d "${window}s" -o "$out.d" "$target_pid" >"$out.out" 2>"$out.err" || true ;;
			esac
			cp "$out.progress" "$out.after"
			kill "$target_pid" 2>/dev/null || true
			wait "$target_pid" 2>/dev/null || true
			target_pid=
			seconds=$(awk '$1 == "elapsed_ns" { t[FILENAME] = $2 } END { printf "%.3f", (t[ARGV[2]] - t[ARGV[1]]) / 1e9 }' "$out.before" "$out.after")
			ops=$(awk -v s="$seconds" 'FNR == 1 { o[FILENAME] = $1 } END { printf "%.0f", (o[ARGV[2]] - o[ARGV[1]]) / s }' "$out.before" "$out.after")
			echo "$ops" >"$out.ops"
			case $config in baseline|kept) continue ;; esac
			stopped=$(sed -n 's/.* target held stopped \([0-9.]*\)% of the time.*/\1/p' "$out.err")
			echo "${stopped:--}" >"$out.stopped"
			row=
			for worker in insert_worker session_worker; do
				role=$(echo "$worker" | tr _ -)
				if [ "$config" = alloc ]; then
					for kind in alloc realloc; do
						line=$split_line
						[ "$kind" = realloc ] && line=$grow_line
						for field in 3 4; do
							truth=$(awk -v a="$(progress "$out.before" "$kind" "$role" "$field")" -v b="$(progress "$out.after" "$kind" "$role" "$field")" \
								-v s="$seconds" 'BEGIN { printf "%.0f", (b - a) / s }')
							map=allocs
							[ "$field" = 4 ] && map=bytes
							set -- $(stack_values "$map" "$(map_text "$out" "$map")" "cache_service::$worker" "leaf=tree.rs:$line")
							x=$(ratio "$2" "$truth")
							echo "$x" >>"$tmp/cs-rates"
							row="$row $(printf '%5s' "$x")"
						done
					done
					row="$row   "
				else
					set -- $(stack_values heap "$(map_text "$out" heap)" "cache_service::$worker")
					x=$(ratio "$1" "$(progress "$out.after" live "$role" 3)")
					echo "$x" >>"$tmp/cs-live"
					row="$row $x"
				fi
			done
			echo "$row" >"$out.row"
		done
		# the losses once the round's baselines are in: alloc against the
		# service as it ships, heap against the same trees never emptied
		for config in baseline alloc kept heap; do
			out=$tmp/cs-$config-$r
			ops=$(cat "$out.ops")
			case $config in
			baseline|kept) printf '%-5s %-8s %8s\n' "$r" "$config" "$ops"; continue ;;
			alloc) base=$(cat "$tmp/cs-baseline-$r.ops") ;;
			heap) base=$(cat "$tmp/cs-kept-$r.ops") ;;
			esac
			loss=$(awk -v b="$base" -v p="$ops" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
			echo "$loss" >>"$tmp/cs-loss-$config"
			cat "$out.stopped" >>"$tmp/cs-stopped"
			if [ "$config" = alloc ]; then
				printf '%-5s alloc    %8s  %5s  %8s  %s\n' "$r" "$ops" "$loss" "$(cat "$out.stopped")" "$(cat "$out.row")"
			else
				printf '%-5s heap     %8s  %5s  %8s  %88s\n' "$r" "$ops" "$loss" "$(cat "$out.stopped")" "$(cat "$out.row")"
			fi
		done
	done
	echo "est÷truth, median (range): alloc rates $(spread "$tmp/cs-rates"); retained $(spread "$tmp/cs-live"); loss $(median <"$tmp/cs-loss-alloc")% alloc, $(median <"$tmp/cs-loss-heap")% heap; stopped $(median <"$tmp/cs-stopped")%"
else
	echo "demo service: not built (make tests/fixtures/bin/cache-service: cargo): row skipped"
fi
fi # demo

# jemservice (issue 25): a tokio service on the system's jemalloc,
# MALLOC_CONF=prof:true,lg_prof_sample:16, keeping a 16 KiB vector every
# 50th write in a ring of 1024 (16 MiB, full after ~2.6 s); its own lines
# every second are the truth. Each round runs it for window + 5 s alone and
# with `--recipe heap` (jemalloc's own profile: no probe, one dump at the
# end) attached for the window after 4 s: the allocations a second over
# the whole run (the cost), the stopped share, and keep_snapshot's
# inuse_space in pprof over the ring's 16 MiB; and with `--recipe alloc`
# attached for the window after 4 s: the bytes and allocations a second
# summed over the stacks against the service's own (its last truth line's
# totals over its time: a steady rate), the calls counted and the sizes
# totalled in the target (docs/alloc.md, "Bytes totalled in the target").
if wants jemservice; then
jem=$build/tests/fixtures/bin/jemservice
if make -s -C "$build" tests/fixtures/bin/jemservice >&2 2>/dev/null && command -v go >/dev/null; then
	echo
	echo "jemservice (tokio on jemalloc, 16 KiB kept every 50th write, ring 16 MiB), heap from jemalloc's profile for ${window} s"
	echo "round config      allocs/s  loss%  stopped%  keep_snapshot inuse_space: est. / truth  est÷truth"
	echo "      (alloc rows: bytes/s est. / truth and allocs/s est. / truth, each with est÷truth)"
	: >"$tmp/jm-loss"; : >"$tmp/jm-stopped"; : >"$tmp/jm-ratio"; : >"$tmp/ja-bytes"; : >"$tmp/ja-allocs"; : >"$tmp/ja-stopped"
	for r in $(seq 0 $((rounds - 1))); do
		base=
		alloc_row=
		for config in $(rotated "baseline heap alloc" "$r"); do
			out=$tmp/jm-$config-$r
			MALLOC_CONF=prof:true,lg_prof_sample:16 JEMSERVICE_KEEP_MAX=1024 "$jem" >"$out.lines" &
			pid=$!
			sleep 4
			if [ "$config" = baseline ]; then
				sleep "$window"
			else
				"$xgdbprof" --recipe "$config" -d "${window}s" -o "$out.d" "$pid" >"$out.out" 2>"$out.err" || true
			fi
			sleep 1.2
			kill "$pid"
			wait "$pid" 2>/dev/null || true
			allocs=$(awk '/^truth / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
				END { if (v["t"] > 0) printf "%.0f", v["allocs"] / v["t"] }' "$out.lines")
			if [ "$config" = baseline ]; then
				base=$allocs
				continue
			fi
			if [ "$config" = alloc ]; then
				# the @bytes and @allocs entries' estimates, summed, per second of the window
				sum_est() { awk -v map="$1" -v w="$window" '$0 ~ "^@" map "\\[" { inside = 1 }
					inside && /^\]: / { if (match($0, /est\. [0-9]+/)) s += substr($0, RSTART + 5, RLENGTH - 5); inside = 0 }
					END { printf "%.0f", s / w }' "$(map_text "$out" "$1")"; }
				own() { awk -v k="$1" '/^truth / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
					END { if (v["t"] > 0) printf "%.0f", v[k] / v["t"] }' "$out.lines"; }
				b_est=$(sum_est bytes); b_own=$(own bytes); a_est=$(sum_est allocs); a_own=$(own allocs)
				b_ratio=$(awk -v e="$b_est" -v t="$b_own" 'BEGIN { if (e > 0 && t > 0) printf "%.2f", e / t; else print "-" }')
				a_ratio=$(awk -v e="$a_est" -v t="$a_own" 'BEGIN { if (e > 0 && t > 0) printf "%.2f", e / t; else print "-" }')
				a_stopped=$(sed -n 's/.*"stopped_pct": *\([0-9.]*\).*/\1/p' "$out.d/profile.json" 2>/dev/null | head -1)
				a_stopped=$(awk -v s="${a_stopped:-}" 'BEGIN { if (s != "") printf "%.2f", s; else print "-" }')
				echo "$b_ratio" >>"$tmp/ja-bytes"; echo "$a_ratio" >>"$tmp/ja-allocs"; echo "$a_stopped" >>"$tmp/ja-stopped"
				alloc_row=$(printf '%-5s alloc      %9s  %5s  %8s  bytes/s %s / %s  %s · allocs/s %s / %s  %s' "$r" "$allocs" \
					"$(awk -v b="$base" -v p="$allocs" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')" \
					"$a_stopped" "$b_est" "$b_own" "$b_ratio" "$a_est" "$a_own" "$a_ratio")
				continue
			fi
			observed=$allocs
			truth=$(sed -n 's/^truth .* retained_bytes=\([0-9]*\) .*/\1/p' "$out.lines" | tail -1)
			est=$(go tool pprof -sample_index=inuse_space -unit=B -top "$out.d/profile.pb.gz" 2>/dev/null |
				awk '$NF == "jemservice::keep_snapshot" { sub(/B$/, "", $1); print $1; exit }')
			stopped=$(sed -n 's/.*"stopped_pct": *\([0-9.]*\).*/\1/p' "$out.d/profile.json" 2>/dev/null | head -1)
		done
		loss=$(awk -v b="$base" -v p="$observed" 'BEGIN { if (b > 0) printf "%.1f", 100 * (1 - p / b); else print "-" }')
		ratio=$(awk -v e="${est:-0}" -v t="${truth:-0}" 'BEGIN { if (e > 0 && t > 0) printf "%.2f", e / t; else print "-" }')
		stopped=$(awk -v s="${stopped:-}" 'BEGIN { if (s != "") printf "%.2f", s; else print "-" }')
		echo "$loss" >>"$tmp/jm-loss"; echo "$stopped" >>"$tmp/jm-stopped"; echo "$ratio" >>"$tmp/jm-ratio"
		printf '%-5s baseline   %9s\n' "$r" "$base"
		printf '%-5s heap       %9s  %5s  %8s  %s / %s  %s\n' "$r" "$observed" "$loss" "$stopped" "${est:--}" "${truth:--}" "$ratio"
		[ -n "$alloc_row" ] && echo "$alloc_row"
	done
	echo "median: loss $(median <"$tmp/jm-loss")%, stopped $(median <"$tmp/jm-stopped")%, keep_snapshot est÷truth $(median <"$tmp/jm-ratio")"
	echo "median, alloc: stopped $(median <"$tmp/ja-stopped")%, bytes/s est÷truth $(median <"$tmp/ja-bytes"), allocs/s est÷truth $(median <"$tmp/ja-allocs")"
else
	echo "jemservice: not built (make tests/fixtures/bin/jemservice: cargo, librust-tokio-dev, libjemalloc-dev) or no go: row skipped"
fi
fi # jemservice
