# Replays the committed MI parser fuzz corpus (seeded with every line of the
# gdb transcripts, grown by `make fuzz-mi` runs) through the fuzz target.
set -e
corpus="$TOP_SRCDIR/tests/fuzz/mi-corpus"
count=$(ls "$corpus" | wc -l)
test "$count" -gt 10 || { echo "corpus $corpus has only $count files"; exit 1; }
exec "$TOP_BUILDDIR/tests/fuzz/replay_mi_parse" "$corpus"
