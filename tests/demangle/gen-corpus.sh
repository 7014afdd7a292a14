#!/bin/sh
# Regenerates the checked-in corpus from the fixture binaries, with Debian's
# rustfilt (rustc-demangle 0.1.21) as the oracle:
#   tests/demangle/gen-corpus.sh BUILDDIR/tests/fixtures/bin
# Writes tests/demangle/corpus-full.txt and corpus-alt.txt (mangled TAB
# expected), deduplicated and sorted.
set -eu
bin=${1:?usage: gen-corpus.sh FIXTURE_BIN_DIR}
here=$(cd "$(dirname "$0")" && pwd)
command -v rustfilt >/dev/null || { echo "gen-corpus.sh: needs rustfilt (apt install rustfilt)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm "$bin"/demangle_legacy "$bin"/demangle_v0 "$bin"/demangle_legacy_opt "$bin"/demangle_v0_opt |
	awk 'NF >= 2 { print $NF }' | grep -E '^_(ZN|R)' | LC_ALL=C sort -u > "$tmp/syms"
rustfilt -h < "$tmp/syms" > "$tmp/full"
rustfilt < "$tmp/syms" > "$tmp/alt"
paste "$tmp/syms" "$tmp/full" > "$here/corpus-full.txt"
paste "$tmp/syms" "$tmp/alt" > "$here/corpus-alt.txt"
wc -l "$here/corpus-full.txt" "$here/corpus-alt.txt"
