// SPDX-License-Identifier: Apache-2.0
// The accelerator's performance counters as one value: what the RTL runners
// read (sim/accel_runner.hpp), split per layer and sum, and what the bench
// reports render (strata/bench_report.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "strata/csr_map.hpp"

namespace strata {

// Performance figures in csr::kPerfCounters order (PERF_CYCLES first).
using PerfCounts = std::array<uint64_t, csr::kPerfCounters.size()>;

// Index of a counter (csr::kPerf*) in PerfCounts; kPerfCounters.size() if none.
constexpr size_t perf_slot(uint32_t offset) {
  for (size_t i = 0; i < csr::kPerfCounters.size(); ++i) {
    if (csr::kPerfCounters[i] == offset) return i;
  }
  return csr::kPerfCounters.size();
}
// The same, throwing strata::Error for an offset that is not a counter.
size_t perf_index(uint32_t offset);

// The counter at `offset` (csr::kPerf*) of `c`.
inline uint64_t perf(const PerfCounts& c, uint32_t offset) { return c[perf_index(offset)]; }

}  // namespace strata
