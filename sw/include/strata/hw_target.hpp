// SPDX-License-Identifier: Apache-2.0
// The hardware configuration a program is compiled for: P, N, memory sizes and
// the limits of the window generator and pooling units. The default comes from
// the generated strata/hw_config.hpp (config/default.yaml); any other
// configuration file in the same format (config/*.yaml) can be loaded at run
// time, so the compiler and the ISA simulator serve every configuration without
// a rebuild.
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct HwTarget {
  std::string name;         // configuration name ("default")
  int version = 0;          // configuration / hardware version (CONFIG, CFG VERSION)
  int pes = 0;              // P: processing elements
  int lanes = 0;            // N: MAC lanes per PE = bytes per word
  int banks = 0;            // on-chip banks
  int bank_depth = 0;       // words per bank
  int pe_cache_depth = 0;   // words per PE cache
  int param_depth = 0;      // channels in the parameter RAM
  int axi_data_width = 0;   // bits per AXI beat
  int axi_addr_width = 0;   // bits of an external address
  int max_kernel = 0;       // largest convolution kernel side
  int max_pool_kernel = 0;  // largest pooling window side
  int max_image_width = 0;  // longest row the pooling line buffer holds
  bool sparse = false;      // stagers and packed CONV schedules (docs/sparsity.md; CONFIG sparse)
  int act_tables = 0;       // activation tables of 256 int8 entries (0: no table unit;
                            // docs/numerics.md, "Table activations"; CONFIG act_tables)
  int pe_fabric_lanes = 0;  // lanes of each PE multiplying in LUTs (no effect on programs;
                            // docs/fpga.md, "The cascade")

  // config/default.yaml, as compiled into strata/hw_config.hpp.
  static HwTarget defaults();
  // A configuration file (config/default.yaml format). Every key the target
  // uses must be present; unknown keys, values of the wrong type, a data or
  // accumulator width other than 8 / 32 and a target the ISA cannot address
  // (validate()) are strata::Error naming the file and line.
  static HwTarget from_yaml(const std::string& path);

  // Throws strata::Error when the ISA cannot drive this configuration (P != N,
  // more banks or PEs than the 6-bit ids address, depths beyond the 16-bit word
  // addresses, an AXI width that is not 32..512 bits, ...).
  void validate() const;

  int word_bytes() const { return lanes; }
  int beat_bytes() const { return axi_data_width / 8; }
  int64_t macs_per_beat() const { return int64_t{pes} * lanes; }
  // Words (N bytes) of the activation-table memory as LOAD TABLE addresses it:
  // table t's entry i is byte (t * 256 + i) % N of word (t * 256 + i) / N.
  int64_t table_words() const { return (int64_t{act_tables} * 256 + lanes - 1) / lanes; }
  // B: the PE-cache words of one channel's DEPTHWISE weights, max_pool_kernel^2
  // taps N to a word (docs/isa.md, COMPUTE).
  int64_t depthwise_weight_words() const {
    return (int64_t{max_pool_kernel} * max_pool_kernel + lanes - 1) / lanes;
  }

  bool operator==(const HwTarget&) const = default;
  // Same hardware: every parameter the RTL is elaborated with (the name aside).
  bool same_hardware(const HwTarget& other) const {
    HwTarget a = *this;
    a.name = other.name;
    return a == other;
  }
};

}  // namespace strata
