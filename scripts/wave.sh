#!/usr/bin/env bash
# Runs one testbench test (gtest name Suite.Test) with an FST trace and prints
# the gtkwave command that opens it with the block's committed layout.
set -euo pipefail
build=$1
test=$2
cd "$(dirname "$0")/.."
bin=$(cd "$build" && ctest -N -R "^${test}\$" -V 2>/dev/null | sed -n 's/.*Test command: \([^ ]*\).*/\1/p' | head -1)
if [[ -z "$bin" ]]; then
  echo "wave: no test named '$test' (see: cd $build && ctest -N)" >&2
  exit 2
fi
export STRATA_TRACE=1 STRATA_WAVE_DIR="$PWD/$build/waves"
"$bin" --gtest_filter="$test"
fst="$STRATA_WAVE_DIR/${test/./_}.fst"
suite=${test%%.*}
layout=""
for cand in tb/waves/*.gtkw; do
  [[ -e "$cand" ]] || continue
  name=$(basename "$cand" .gtkw)
  if [[ "${suite,,}" == *"${name#strata_}"* || "${suite,,}" == "${name,,}"* ]]; then layout=$cand; fi
done
echo
echo "FST written: $fst"
echo "open it with: gtkwave $fst ${layout}"
