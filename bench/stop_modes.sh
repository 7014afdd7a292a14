#!/bin/sh
# bench/stop_modes.sh — all-stop against one-thread-at-a-time non-stop
# sampling (and the full gdb against Debian's python-free gdb-minimal), side
# by side on the realistic fixture (kvservice, 2 busy workers of 11+
# threads), with perf recording the same process as ground truth.
#
#   bench/stop_modes.sh [--rounds N] [--window SECONDS] BUILD_DIR
#
# Runs bench/fidelity.sh with the modes baseline, all-stop, default
# (non-stop, one thread at a time) and, when gdb-minimal can be had,
# all-stop-min and default-min: each round runs every mode once on a fresh
# fixture, rotated so none always runs first; at least 3 rounds (the
# machine is shared: a single round says little). Prints the medians and
# the min-max over rounds of: achieved Hz per busy thread, stop median/p99,
# the largest share of its time any thread was held stopped, overlap with
# perf, and throughput loss against the unprofiled baseline of each round;
# and the load average before and after.
#
# gdb-minimal: $GDB_MINIMAL if set, else `apt-get download gdb-minimal`
# unpacked with dpkg-deb -x into a scratch directory (the package conflicts
# with gdb, its binary runs from anywhere). Figures: bench/README.md,
# "stop_modes.sh".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=3
args=
while [ $# -gt 1 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--window) args="$args --window $2"; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--rounds N] [--window SECONDS] BUILD_DIR" >&2; exit 2; }
[ "$rounds" -ge 3 ] || { echo "$0: --rounds must be at least 3 (single rounds scatter too much here)" >&2; exit 2; }
modes="baseline all-stop default"
scratch=
if [ -z "${GDB_MINIMAL:-}" ]; then
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch"' EXIT
	if (cd "$scratch" && apt-get download gdb-minimal >/dev/null 2>&1) &&
		dpkg-deb -x "$scratch"/gdb-minimal_*.deb "$scratch/root" 2>/dev/null; then
		GDB_MINIMAL=$scratch/root/usr/bin/gdb
	else
		echo "$0: gdb-minimal not available (apt-get download gdb-minimal failed): comparing stop modes only" >&2
	fi
fi
if [ -n "${GDB_MINIMAL:-}" ] && [ -x "$GDB_MINIMAL" ]; then
	export GDB_MINIMAL
	modes="$modes all-stop-min default-min"
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
"$here/fidelity.sh" --rounds "$rounds" $args --only "$modes" "$1"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
