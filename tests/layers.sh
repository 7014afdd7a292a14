#!/bin/sh
# tests/layers.sh — the layer rule of docs/design.md for every folder of
# src/ and mi/: includes and library symbols (nm -u) against the diagram's
# arrows (tests/layers.py says how). Needs the built libraries; make check
# builds them first.
: "${TOP_SRCDIR:?run through make check}"
: "${TOP_BUILDDIR:?run through make check}"
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed (Debian: apt-get install binutils)"; exit 77; }
exec python3 "$TOP_SRCDIR/tests/layers.py" "$TOP_SRCDIR" "$TOP_BUILDDIR"
