#!/bin/sh
# Replays the recipe fuzz corpus (and the golden recipes) through the fuzz target.
exec "${TOP_BUILDDIR:-.}/tests/fuzz/replay_recipe" "$TOP_SRCDIR/tests/fuzz/recipe-corpus" "$TOP_SRCDIR/tests/recipes" "$TOP_SRCDIR/recipes"
