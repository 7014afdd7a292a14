#!/bin/sh
# Replays the committed demangler fuzz corpus (tests/fuzz/demangle-corpus)
# through the fuzz target's checks, without libFuzzer.
set -e
corpus="$TOP_SRCDIR/tests/fuzz/demangle-corpus"
n=$(ls "$corpus" | wc -l)
if [ "$n" -lt 20 ]; then
	echo "demangle fuzz corpus has only $n files" >&2
	exit 1
fi
exec "$TOP_BUILDDIR/tests/fuzz/replay_demangle" "$corpus"
