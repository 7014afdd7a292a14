#!/bin/sh
# Replays the recipe fuzz corpus (and the golden recipes) through the fuzz target.
# Runs in a scratch directory: recipes that call folded()/json() write files.
builddir=$(cd "${TOP_BUILDDIR:-.}" && pwd)
scratch=$(mktemp -d) || exit 99
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 99
"$builddir/tests/fuzz/replay_recipe" "$TOP_SRCDIR/tests/fuzz/recipe-corpus" "$TOP_SRCDIR/tests/recipes" "$TOP_SRCDIR/recipes"
