#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
# Suites are named after the block: StrataWindowGen -> tb/waves/strata_window_gen.gtkw.
snake=$(sed -E 's/([a-z0-9])([A-Z])/\1_\2/g' <<<"$suite" | tr '[:upper:]' '[:lower:]')
layout=""
if [[ -e "tb/waves/$snake.gtkw" ]]; then
  layout=tb/waves/$snake.gtkw
else
  for cand in tb/waves/*.gtkw; do
    [[ -e "$cand" ]] || continue
    name=$(basename "$cand" .gtkw)
    if [[ "${suite,,}" == *"${name#strata_}"* || "${suite,,}" == "${name,,}"* ]]; then layout=$cand; fi
  done
fi
echo
echo "FST written: $fst"
echo "open it with: gtkwave $fst ${layout}"
