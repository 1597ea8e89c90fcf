// SPDX-License-Identifier: Apache-2.0
// The resource model (strata/resource_model.hpp) against synthesis: the DSP
// blocks and block RAMs Yosys maps strata_top to on ECP5, configuration by
// configuration (docs/planner.md, "Resources"), and the block-RAM packing
// rule on its own.
#include <gtest/gtest.h>

#include <string>

#include "strata/device.hpp"
#include "strata/hw_target.hpp"
#include "strata/resource_model.hpp"

namespace strata {
namespace {

const std::string kSource = STRATA_SOURCE_DIR;

HwTarget config(const std::string& name) {
  return HwTarget::from_yaml(kSource + "/config/" + name + ".yaml");
}
Device ecp5_85f() { return Device::find("ecp5-85f", kSource + "/config/devices"); }

// DP16KD aspect ratios: 16384 x 1 ... 4096 x 4, then 2048 x 9, 1024 x 18,
// 512 x 36 (the parity bits used).
TEST(ResourceModel, BlockRamPackingTakesTheCheapestAspectRatio) {
  const Device d = ecp5_85f();
  EXPECT_EQ(bram_blocks(4096, 16, d), 4);  // 4 x (4096 x 4)
  EXPECT_EQ(bram_blocks(1024, 64, d), 4);  // 4 x (1024 x 18) or 2 x 2 (512 x 36)
  EXPECT_EQ(bram_blocks(64, 54, d), 2);    // 2 x (512 x 36)
  EXPECT_EQ(bram_blocks(256, 16, d), 1);   // 1024 x 18
  EXPECT_EQ(bram_blocks(16384, 1, d), 1);
  EXPECT_EQ(bram_blocks(16385, 1, d), 2);
  EXPECT_EQ(bram_blocks(1024, 18, d), 1);
  EXPECT_EQ(bram_blocks(1024, 19, d), 2);
}

// Yosys (scripts/synth.sh --target ecp5 --no-pnr; figures in docs/fpga.md):
// default 99 MULT18X18D and 122 DP16KD, the sparse build 101 and 196, the
// tiny configuration (3 of 8 lanes in LUTs) 75 and 34 per stage of
// strata_cascade_top K = 2 (150 and 68), P = N = 16 315 and 274. Those
// netlists had no activation tables: the figures are the model's with
// act_tables = 0, and the tables add one DP16KD per lane (act_tables x 256
// bytes, 2048 x 9 bits for the 8 tables of every configuration).
TEST(ResourceModel, DspAndBlockRamMatchYosys) {
  const Device d = ecp5_85f();
  struct Case {
    const char* config;
    int64_t dsp, bram;
  };
  for (const Case& c : {Case{"default", 99, 122}, Case{"sparse", 101, 196}, Case{"tiny", 75, 34},
                        Case{"p16n16", 315, 274}, Case{"ecp5_45f_cifar", 67, 82}}) {
    HwTarget t = config(c.config);
    const ResourceEstimate r = predict_resources(t, d);
    EXPECT_EQ(r.dsp, c.dsp) << c.config;
    EXPECT_EQ(r.bram, c.bram + (t.act_tables > 0 ? t.lanes : 0)) << c.config;
    t.act_tables = 0;
    EXPECT_EQ(predict_resources(t, d).bram, c.bram) << c.config << " without tables";
  }
  // Eight banks of 2048 words: the same bank slices' blocks as four of 4096.
  HwTarget banks8 = config("default");
  banks8.banks = 8;
  banks8.bank_depth = 2048;
  EXPECT_EQ(predict_resources(banks8, d).dsp, 99);
  EXPECT_EQ(predict_resources(banks8, d).bram, 122 + 8);
  // The PE array's share: one DSP per dense lane.
  EXPECT_EQ(predict_resources(config("tiny"), d).dsp_pe, 8 * 5);
  EXPECT_EQ(predict_resources(config("p16n16"), d).dsp_pe, 256);
}

// LUT4 equivalents and flip-flops within 15 % of Yosys (the block without
// the synthesis harness; the tiny configuration: half of the K = 2 cascade,
// 64,481 and 48,213 with its harness of 540 LUT4 and 908 flip-flops; the
// sparse build: the netlist before the cascade ports; strata plan's pick for
// the LFE5U-45F, which the fit did not use).
TEST(ResourceModel, LutsAndFlipFlopsWithinFifteenPercentOfYosys) {
  const Device d = ecp5_85f();
  struct Case {
    const char* config;
    double lut, ff;
  };
  for (const Case& c :
       {Case{"default", 28401, 21758}, Case{"p16n16", 48578, 40414}, Case{"sparse", 34150, 24953},
        Case{"tiny", (64481 - 540) / 2.0, (48213 - 908) / 2.0},
        Case{"ecp5_45f_cifar", 33806, 24006}}) {
    const ResourceEstimate r = predict_resources(config(c.config), d);
    EXPECT_NEAR(double(r.lut), c.lut, 0.15 * c.lut) << c.config;
    EXPECT_NEAR(double(r.ff), c.ff, 0.15 * c.ff) << c.config;
  }
  // Eight banks (the per-bank terms are fitted to this one: 29,320 and 22,641).
  HwTarget banks8 = config("default");
  banks8.banks = 8;
  banks8.bank_depth = 2048;
  EXPECT_NEAR(double(predict_resources(banks8, d).lut), 29320, 0.01 * 29320);
  EXPECT_NEAR(double(predict_resources(banks8, d).ff), 22641, 0.01 * 22641);
}

}  // namespace
}  // namespace strata
