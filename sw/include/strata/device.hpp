// SPDX-License-Identifier: Apache-2.0
// An FPGA the design planner plans for (docs/planner.md, "Devices"): its
// logic, DSP blocks, block RAMs, the Fmax the design reaches on it and the
// external memory bandwidth of a typical board. Devices are data: one YAML
// file each under config/devices/, and a user adds a device by writing one.
#pragma once

#include <string>
#include <vector>

namespace strata {

struct Device {
  std::string name;            // file stem and --device name ("ecp5-85f")
  std::string part;            // the vendor's part number
  std::string family;          // ecp5, xilinx7, xilinx_usp, gowin
  int luts = 0;                // look-up tables
  int lut_inputs = 0;          // 4 or 6
  int ffs = 0;                 // flip-flops
  std::string dsp_kind;        // the DSP primitive (MULT18X18D, DSP48E1, ...)
  int dsps = 0;                // DSP blocks
  int int8_per_dsp = 0;        // int8 products one block computes per cycle
  std::string bram_kind;       // the block RAM primitive (DP16KD, RAMB18E1, ...)
  int brams = 0;               // block RAMs
  int bram_bits = 0;           // bits per block RAM
  int bram_max_width = 0;      // widest port of one block RAM (bits)
  double fmax_mhz = 0;         // the Fmax strata_top reaches on the device
  bool fmax_measured = false;  // false: an estimate (docs/planner.md)
  std::string board;           // the typical board the bandwidth is of
  double ext_mbytes_s = 0;     // external memory bandwidth of that board (MB/s)

  int int8_multipliers() const { return dsps * int8_per_dsp; }

  // A device file (config/devices/*.yaml format). Every key must be present
  // and of its type; unknown keys and impossible values are strata::Error
  // naming the file and line.
  static Device from_yaml(const std::string& path);

  // `name_or_path`: a YAML file, or the name of one under `devices_dir`
  // (config/devices of the source tree). Throws strata::Error listing the
  // devices there when neither exists.
  static Device find(const std::string& name_or_path, const std::string& devices_dir);

  // The stems of the device files under `devices_dir`, sorted.
  static std::vector<std::string> list(const std::string& devices_dir);
};

}  // namespace strata
