// SPDX-License-Identifier: Apache-2.0
#include "strata/perf_counts.hpp"

#include <fmt/format.h>

#include "strata/error.hpp"

namespace strata {

size_t perf_index(uint32_t offset) {
  const size_t i = perf_slot(offset);
  if (i >= csr::kPerfCounters.size()) {
    throw Error(fmt::format("no performance counter at 0x{:x}", offset));
  }
  return i;
}

}  // namespace strata
