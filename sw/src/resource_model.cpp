// SPDX-License-Identifier: Apache-2.0
// Resource prediction of a configuration (strata/resource_model.hpp).
#include "strata/resource_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata {
namespace {

// Products outside the PE array (DSPs of strata_top's netlist): the compute
// decoder's three small products and its shared check multiplier, the load
// and store engines' transfer checks (two stride spans and one memory span
// each) and the store engine's word count; the sparse build adds the packed
// walker's two address products. Per channel: the requantiser's two partial products; per lane:
// the average pool's divider.
constexpr int kFixedProducts = 3 + 1 + 2 * 3 + 1;
constexpr int kSparseProducts = 2;
constexpr int kRequantProductsPerPe = 2;
constexpr int kAvgPoolProductsPerLane = 1;

// Memories at most this deep become LUT RAM (Yosys' memory_libmap on ECP5:
// the 32-deep parameter banks of config/p16n16.yaml and the 16-deep line
// buffer of config/tiny.yaml are DPR16X4, the default configuration's
// 64-deep ones DP16KD).
constexpr int64_t kLutRamDepth = 32;

// LUT4 equivalents and flip-flops (Yosys on ECP5, strata_top without the
// synthesis harness): a fixed part and a part per int8 MAC, from the
// default configuration (P = N = 8: 28,401 and 21,758) and P = N = 16
// (48,578 and 40,414); per product moved into LUTs (strata_fabric_mul,
// synth_Ecp5PeFabric against synth_Ecp5Pe); per MAC of the sparse build
// (config/sparse.yaml against the default: +6,039 and +3,242 at 64 MACs).
// Per bank beyond four (eight banks of 2048 words against the default's four
// of 4096: +919 and +883).
constexpr double kLutFixed = 21675, kLutPerMac = 105.1, kLutPerFabric = 171,
                 kLutSparsePerMac = 94.4;
constexpr double kFfFixed = 15537, kFfPerMac = 97.2, kFfPerFabric = 68, kFfSparsePerMac = 50.7;
constexpr double kLutPerBank = 230, kFfPerBank = 221;
constexpr int kFittedBanks = 4;

int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }
int log2_ceil(int64_t v) {
  int b = 0;
  while ((int64_t{1} << b) < v) ++b;
  return b;
}

}  // namespace

int bram_blocks(int64_t depth, int width, const Device& d) {
  int best = std::numeric_limits<int>::max();
  for (int w : {1, 2, 4, 9, 18, 36, 72}) {
    if (w > d.bram_max_width) break;
    // Widths of 9, 18, ... use the parity bits; 1, 2, 4 do not.
    const int64_t words = (w % 9 == 0) ? d.bram_bits / w : (d.bram_bits / 9 * 8) / w;
    best = std::min(best, ceil_div(width, w) * ceil_div(depth, words));
  }
  return best;
}

std::vector<MemoryUse> memory_uses(const HwTarget& t, const Device& d) {
  const int word = 8 * t.lanes;
  const int slice = (word % 16 == 0) ? 16 : word;  // strata_banks' SliceWidth
  std::vector<MemoryUse> m = {
      // strata_banks: each bank in 16-bit slices; the sparse build's second
      // compute read port is a replica of every bank.
      {"bank slices", t.banks * (word / slice) * (t.sparse ? 2 : 1), t.bank_depth, slice},
      // strata_pe: each PE's operand cache (a word of N int8).
      {"PE caches", t.pes, t.pe_cache_depth, word},
      // strata_param_ram: bias, M, S (32 + 16 + 6 bits), one bank per PE.
      {"parameter banks", t.pes, ceil_div(t.param_depth, t.pes), 32 + 16 + 6},
      // strata_line_buffer: 2^ceil(log2(max_pool_kernel + 1)) rows of pixels.
      {"line-buffer rows", 1 << log2_ceil(t.max_pool_kernel + 1),
       int64_t{1} << log2_ceil(std::max(t.max_image_width, 2)), word},
      // strata_load_engine: the 128-beat read buffer.
      {"load beat buffer", 1, 128, t.axi_data_width},
  };
  if (t.sparse) {
    // strata_pe's control plane (2 N + 2 bits a word, P of them plus the
    // schedule's) and strata_packed_walker's tap table.
    m.push_back({"PE control planes", t.pes, t.pe_cache_depth, 2 * t.lanes + 2});
    m.push_back({"packed-walker taps", 1, t.pe_cache_depth, 24});
  }
  if (t.act_tables > 0) {
    // strata_requant's activation tables: act_tables x 256 bytes, one copy
    // per lane (each lane looks up in its own read port).
    m.push_back({"activation tables", t.lanes, int64_t{t.act_tables} * 256, 8});
  }
  for (MemoryUse& u : m) {
    u.lut_ram = u.depth <= kLutRamDepth;
    u.blocks_each = u.lut_ram ? 0 : bram_blocks(u.depth, u.width, d);
  }
  return m;
}

ResourceEstimate predict_resources(const HwTarget& t, const Device& d) {
  ResourceEstimate r;
  const int64_t dsp_lanes = t.lanes - t.pe_fabric_lanes;
  r.dsp_pe = (int64_t{t.pes} * dsp_lanes + d.int8_per_dsp - 1) / d.int8_per_dsp;
  r.dsp = r.dsp_pe + kRequantProductsPerPe * t.pes + kAvgPoolProductsPerLane * t.lanes +
          kFixedProducts + (t.sparse ? kSparseProducts : 0);
  const double macs = double(t.pes) * t.lanes;
  const double fabric = double(t.pes) * t.pe_fabric_lanes;
  const double more_banks = double(t.banks - kFittedBanks);
  r.lut = std::llround(kLutFixed + kLutPerMac * macs + kLutPerFabric * fabric +
                       (t.sparse ? kLutSparsePerMac * macs : 0.0) + kLutPerBank * more_banks);
  r.ff = std::llround(kFfFixed + kFfPerMac * macs + kFfPerFabric * fabric +
                      (t.sparse ? kFfSparsePerMac * macs : 0.0) + kFfPerBank * more_banks);
  r.memories = memory_uses(t, d);
  for (const MemoryUse& u : r.memories) r.bram += int64_t{u.copies} * u.blocks_each;
  return r;
}

}  // namespace strata
