#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer harness of a STRATA_FUZZ build for a fixed time
# (docs/regression.md, Fuzzing). `make fuzz` and `make regress` call it.
#   sw/fuzz/run.sh BUILD HARNESS SECONDS [--fresh] [libFuzzer options...]
# Inputs: the committed seeds tests/fuzz/HARNESS/ and the working corpus
# BUILD/fuzz/corpus/HARNESS/, where the fuzzer keeps the new inputs it finds
# for the next run. --fresh starts from the seeds alone in a corpus that is
# removed afterwards, so the run's cost does not grow from night to night.
# A finding stops the fuzzer: the input is saved as
# BUILD/fuzz/artifacts/HARNESS/{crash,leak,timeout,oom}-<sha1>, the replay
# command is printed, and the exit status is non-zero.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 BUILD HARNESS SECONDS [--fresh] [libFuzzer options...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
harness=$2
seconds=$3
shift 3
fresh=0
if [[ "${1:-}" == --fresh ]]; then
  fresh=1
  shift
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=$build/sw/fuzz/fuzz_$harness
seeds=$root/tests/fuzz/$harness
artifacts=$build/fuzz/artifacts/$harness/
if [[ ! -x "$exe" ]]; then
  echo "fuzz: $exe not built (make fuzz builds it)" >&2
  exit 2
fi
if ((fresh)); then
  mkdir -p "$build/fuzz"
  corpus=$(mktemp -d "$build/fuzz/fresh-$harness.XXXXXX")
  trap 'rm -rf "$corpus"' EXIT
else
  corpus=$build/fuzz/corpus/$harness
fi
mkdir -p "$corpus" "$artifacts"
# A smaller ASan quarantine than the default 256 MB: with it the resident size
# of a long run grows by about 1.7 MB per 1000 inputs until the 2 GB limit
# (measured on network_yaml; without a quarantine it stays flat). The higher
# limit still stops a run whose memory really runs away, and one allocation
# above 1 GB is a finding of its own.
export ASAN_OPTIONS="quarantine_size_mb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
options=(-max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=1024
         -print_final_stats=1 -artifact_prefix="$artifacts")
[[ -f $root/sw/fuzz/$harness.dict ]] && options+=(-dict="$root/sw/fuzz/$harness.dict")

echo "fuzz: $harness for $seconds s on $seeds (working corpus $corpus)"
status=0
"$exe" "${options[@]}" "$@" "$corpus" "$seeds" || status=$?
if ((status != 0)); then
  echo "fuzz: $harness: FINDING (exit status $status); input saved under $artifacts" >&2
  echo "fuzz: replay: STRATA_FUZZ_VERBOSE=1 $exe $artifacts<file>" >&2
fi
exit "$status"
