// SPDX-License-Identifier: Apache-2.0
// Predicted FPGA resources of a hardware configuration (docs/planner.md,
// "Resources"): DSP blocks and block RAMs counted from the RTL's structure
// (which products and which memories a configuration builds, and how a
// memory of a given depth and width maps onto the device's blocks), LUTs and
// flip-flops from a linear model fitted to Yosys runs of the ECP5 flow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/device.hpp"
#include "strata/hw_target.hpp"

namespace strata {

// One kind of RAM a configuration builds (strata_ram_1r1w instances of one shape).
struct MemoryUse {
  std::string name;      // what it holds ("bank slices", "PE caches", ...)
  int copies = 0;        // instances
  int64_t depth = 0;     // words
  int width = 0;         // bits per word
  bool lut_ram = false;  // shallow: synthesis builds it from LUT RAM, not block RAM
  int blocks_each = 0;   // block RAMs per instance (0 when lut_ram)
};

struct ResourceEstimate {
  int64_t dsp = 0;     // DSP blocks (one int8 product each on ECP5)
  int64_t dsp_pe = 0;  // of which the PE array's products
  int64_t bram = 0;    // block RAMs of the device's size
  int64_t lut = 0;     // LUT4 equivalents (a carry cell counts two)
  int64_t ff = 0;      // flip-flops
  std::vector<MemoryUse> memories;
};

// The memories of `t` (every strata_ram_1r1w of strata_top), mapped onto the
// block RAMs of `d`.
std::vector<MemoryUse> memory_uses(const HwTarget& t, const Device& d);

// Block RAMs of `d` (bram_bits, bram_max_width) that hold `depth` words of
// `width` bits: the cheapest aspect ratio (widths 1, 2, 4, 9, 18, 36, ...
// up to max_width).
int bram_blocks(int64_t depth, int width, const Device& d);

// The whole of strata_top built for `t` on `d`.
ResourceEstimate predict_resources(const HwTarget& t, const Device& d);

}  // namespace strata
