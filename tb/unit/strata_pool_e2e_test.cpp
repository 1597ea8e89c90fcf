// SPDX-License-Identifier: Apache-2.0
// End-to-end bench of the pooling path (strata_pool_e2e_tb_top: image stream
// -> strata_window_gen -> strata_pool): every channel of every pooled pixel
// against strata::maxpool / strata::avgpool, for a sweep of every kernel,
// stride (including stride > kernel), pad and rounding mode on odd sizes,
// 1x1 and 2x2 images, the cifar10_quick pooling shapes, random input gaps and
// back-pressure; cycles per frame against the input beats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "Vstrata_pool_e2e_tb_top.h"
#include "pool_bench_util.hpp"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"
#include "strata/numerics.hpp"

namespace strata::tb {
namespace {

constexpr int kLanes = hw::kLanes;
constexpr int kData = hw::kDataWidth;
constexpr int kMaxPool = hw::kMaxPoolKernel;

struct PoolFrame {
  WindowGeometry g;
  bool avg = false;
  Tensor<int8_t> image;     // [lanes][H][W]
  Tensor<int8_t> expected;  // [lanes][Ho][Wo] from the golden model; empty if illegal
  bool legal = true;
  std::string str() const { return fmt::format("{} {}", g.str(), avg ? "avg" : "max"); }
};

struct FrameTiming {
  bool error_flag = false;  // cfg_error_o the cycle after the configuration
  uint64_t cfg_cycle = 0;
  uint64_t last_out_cycle = 0;
  size_t outputs = 0;
};

class StrataPoolE2e : public SimFixture<Vstrata_pool_e2e_tb_top> {
 protected:
  PoolFrame make_frame(const WindowGeometry& g, bool avg) {
    PoolFrame f;
    f.g = g;
    f.avg = avg;
    f.legal = legal(g) && g.kernel <= kMaxPool && g.width <= hw::kMaxImageWidth;
    if (g.height > 0 && g.width > 0) f.image = random_image(kLanes, g.height, g.width, rng());
    if (f.legal) f.expected = avg ? avgpool(f.image, g.pool()) : maxpool(f.image, g.pool());
    return f;
  }

  std::vector<FrameTiming> run(const std::vector<PoolFrame>& frames, double in_gap,
                               double out_stall) {
    auto& d = dut();
    StreamSource<size_t> cfg_src(in_gap);
    StreamSource<uint64_t> px_src(in_gap);
    StreamSink sink(out_stall);
    uint64_t budget = 2000;
    for (size_t f = 0; f < frames.size(); ++f) {
      cfg_src.push(f);
      const auto& g = frames[f].g;
      for (int y = 0; y < g.height; ++y) {
        for (int x = 0; x < g.width; ++x) px_src.push(pack_pixel(frames[f].image, y, x));
      }
      budget += 40 * uint64_t(std::max(g.height, 0) * std::max(g.width, 0) + 50) +
                40 * uint64_t(frames[f].expected.size() / kLanes * g.kernel);
    }
    std::vector<FrameTiming> timing(frames.size());
    // Results arrive in frame order; a frame's results may still be in the
    // pool after the next frame's configuration was taken.
    size_t out_frame = 0, out_index = 0;
    auto skip_empty = [&] {
      while (out_frame < frames.size() &&
             out_index == size_t(frames[out_frame].expected.size() / kLanes)) {
        ++out_frame;
        out_index = 0;
      }
    };
    skip_empty();
    size_t cfg_frame = 0;
    int error_flag_delay = 0;  // cfg_error_o is settled 2 cycles after the handshake
    int failures = 0;
    const uint64_t start = cycle();
    while (out_frame < frames.size() || !cfg_src.empty() || !px_src.empty() || d.busy_o) {
      const bool cfg_v = cfg_src.drive(rng());
      if (cfg_v) {
        const PoolFrame& fr = frames[cfg_src.front()];
        d.cfg_height_i = static_cast<uint16_t>(fr.g.height);
        d.cfg_width_i = static_cast<uint16_t>(fr.g.width);
        d.cfg_kernel_i = static_cast<uint8_t>(fr.g.kernel);
        d.cfg_stride_i = static_cast<uint8_t>(fr.g.stride);
        d.cfg_pad_top_i = static_cast<uint8_t>(fr.g.pads().top);
        d.cfg_pad_left_i = static_cast<uint8_t>(fr.g.pads().left);
        d.cfg_pad_bottom_i = static_cast<uint8_t>(fr.g.pads().bottom);
        d.cfg_pad_right_i = static_cast<uint8_t>(fr.g.pads().right);
        d.cfg_ceil_i = fr.g.ceil_mode;
        d.cfg_op_i = fr.avg ? 1 : 0;
      }
      d.cfg_valid_i = cfg_v;
      const bool in_v = px_src.drive(rng());
      d.in_data_i = in_v ? px_src.front() : rng()();
      d.in_valid_i = in_v;
      d.out_ready_i = sink.ready(rng());
      settle();

      if (error_flag_delay > 0 && --error_flag_delay == 0) {
        timing[cfg_frame].error_flag = d.cfg_error_o;
      }
      const bool cfg_fire = cfg_v && d.cfg_ready_o;
      const bool in_fire = in_v && d.in_ready_o;
      if (cfg_fire) {
        error_flag_delay = 2;
        cfg_frame = cfg_src.front();
        timing[cfg_frame].cfg_cycle = cycle();
      }
      if (d.out_valid_o && d.out_ready_i) {
        if (out_frame >= frames.size()) {
          ADD_FAILURE() << "output (oy " << d.out_oy_o << ", ox " << d.out_ox_o
                        << ") after the last expected one, STRATA_SEED=" << seed();
          return timing;
        }
        const PoolFrame& fr = frames[out_frame];
        const int ho = int(fr.expected.dim(1)), wo = int(fr.expected.dim(2));
        const int oy = int(out_index) / wo, ox = int(out_index) % wo;
        std::string err;
        if (d.out_oy_o != oy || d.out_ox_o != ox) {
          err = fmt::format("position expected ({}, {}), got ({}, {})", oy, ox, d.out_oy_o,
                            d.out_ox_o);
        } else if (bool(d.out_first_o) != (out_index == 0) ||
                   bool(d.out_last_o) != (oy == ho - 1 && ox == wo - 1)) {
          err = fmt::format("first/last flags {}/{} wrong", d.out_first_o, d.out_last_o);
        }
        for (int c = 0; c < kLanes && err.empty(); ++c) {
          const int8_t got = get_i8(get_field(d.out_data_o, unsigned(c * kData), kData));
          const int8_t exp = fr.expected(c, oy, ox);
          if (got != exp) {
            err = fmt::format("channel {} row {} column {}: expected {}, got {}", c, oy, ox, exp,
                              got);
          }
        }
        if (!err.empty()) {
          ADD_FAILURE() << "frame " << out_frame << " (" << fr.str() << "): " << err
                        << ", STRATA_SEED=" << seed();
          if (++failures >= 5) return timing;
        }
        timing[out_frame].last_out_cycle = cycle();
        ++timing[out_frame].outputs;
        ++out_index;
        skip_empty();
      }
      tick();
      cfg_src.handshake(cfg_fire);
      px_src.handshake(in_fire);
      if (cycle() - start > budget) {
        ADD_FAILURE() << "timeout after " << budget << " cycles: configured frame " << cfg_frame
                      << ", waiting for output " << out_index << " of frame " << out_frame << ", "
                      << px_src.pending() << " pixels pending, STRATA_SEED=" << seed();
        return timing;
      }
    }
    return timing;
  }

  // Every legal combination of kernel 1..3, pads p, q < kernel (p above and
  // right, q left and below: asymmetric where p != q), stride 1..4 and both
  // rounding modes on the given image sizes; max and avg alternate.
  std::vector<PoolFrame> sweep(const std::vector<std::pair<int, int>>& sizes) {
    std::vector<PoolFrame> frames;
    bool avg = false;
    for (auto [h, w] : sizes) {
      for (int k = 1; k <= kMaxPool; ++k) {
        for (int p = 0; p < k; ++p) {
          for (int q = 0; q < k; ++q) {
            for (int s = 1; s <= 4; ++s) {
              for (bool ceil_mode : {false, true}) {
                const WindowGeometry g{h, w, k, s, p, ceil_mode, p, q, q, p};
                if (!legal(g)) continue;
                frames.push_back(make_frame(g, avg));
                avg = !avg;
              }
            }
          }
        }
      }
    }
    return frames;
  }

  static size_t outputs(const std::vector<PoolFrame>& frames) {
    size_t n = 0;
    for (const auto& f : frames) n += size_t(f.expected.size() / kLanes);
    return n;
  }

  void run_sweep(double in_gap, double out_stall) {
    reset();
    const auto frames = sweep({{7, 9}, {5, 4}, {1, 1}, {2, 2}, {6, 13}});
    const auto t = run(frames, in_gap, out_stall);
    size_t got = 0;
    for (const auto& x : t) got += x.outputs;
    EXPECT_EQ(got, outputs(frames)) << "STRATA_SEED=" << seed();
    EXPECT_GE(got, 1000u);
    std::cout << "[ INFO     ] " << frames.size() << " frames, " << got << " pooled pixels"
              << std::endl;
  }

  std::vector<PoolFrame> named_frames() {
    return {
        make_frame({32, 32, 3, 2, 0, true}, false),  // cifar10_quick pool1: 32 -> 16
        make_frame({16, 16, 3, 2, 0, true}, true),   // pool2: 16 -> 8
        make_frame({8, 8, 3, 2, 0, true}, true),     // pool3: 8 -> 4
        make_frame({1, 1, 1, 1, 0, false}, true),    // 1x1 image
        make_frame({1, 1, 3, 2, 1, true}, false),    // 1x1 image, 3x3 window with padding
        make_frame({2, 2, 3, 1, 1, false}, true),    // kernel larger than the input
        make_frame({2, 2, 3, 2, 1, true}, false),
        make_frame({9, 11, 2, 4, 0, false}, true),  // stride > kernel
        make_frame({9, 11, 1, 3, 0, true}, false),
        make_frame({4, hw::kMaxImageWidth, 3, 1, 1, false}, true),  // full width
        make_frame({13, 15, 2, 2, 1, true}, true),  // odd sizes, ceil cuts the last window
    };
  }
};

TEST_F(StrataPoolE2e, SweepFullRate) { run_sweep(0.0, 0.0); }
TEST_F(StrataPoolE2e, SweepInputGaps) { run_sweep(0.5, 0.0); }
TEST_F(StrataPoolE2e, SweepBackPressure) { run_sweep(0.0, 0.5); }
TEST_F(StrataPoolE2e, SweepGapsAndBackPressure) { run_sweep(0.3, 0.3); }

TEST_F(StrataPoolE2e, NamedShapes) {
  reset();
  const auto frames = named_frames();
  const auto t = run(frames, 0.2, 0.2);
  for (size_t f = 0; f < frames.size(); ++f) {
    EXPECT_EQ(t[f].outputs, size_t(frames[f].expected.size() / kLanes)) << frames[f].str();
  }
}

// No stalls: cycles from the configuration to the last pooled pixel stay
// within the window generator's bound plus the pool unit's latency.
TEST_F(StrataPoolE2e, CyclesPerFrame) {
  reset();
  for (const WindowGeometry& g : std::vector<WindowGeometry>{{32, 32, 3, 2, 0, true},
                                                             {16, 16, 3, 2, 0, true},
                                                             {8, 8, 3, 2, 0, true},
                                                             {32, 32, 2, 2, 0, false},
                                                             {32, 32, 3, 1, 1, false}}) {
    for (bool avg : {false, true}) {
      const auto frames = std::vector<PoolFrame>{make_frame(g, avg)};
      const auto t = run(frames, 0.0, 0.0);
      ASSERT_FALSE(HasFailure());
      const uint64_t cycles = t[0].last_out_cycle - t[0].cfg_cycle + 1;
      const uint64_t pixels = uint64_t(g.height) * g.width;
      const int wo = g.out_width(), ho = g.out_height();
      const uint64_t latency = avg ? 8 : 6;  // strata_pool: avg / max unit (3x3), select
                                             // stage, output buffer
      const uint64_t bound = window_gen_cycle_bound(g) + latency;
      std::cout << fmt::format(
                       "[ CYCLES   ] {:<22} {} {:>6} cycles, {:>5} input beats, {:>4} "
                       "outputs, {:.3f} cycles/beat, bound {}",
                       g.str(), avg ? "avg" : "max", cycles, pixels, ho * wo,
                       double(cycles) / pixels, bound)
                << std::endl;
      EXPECT_LE(cycles, bound) << g.str();
    }
  }
}

// Illegal configurations raise cfg_error_o, give no output and drain their
// pixels; the legal frames around them are pooled correctly.
TEST_F(StrataPoolE2e, IllegalConfigurations) {
  reset();
  std::vector<PoolFrame> frames;
  for (const WindowGeometry& g : std::vector<WindowGeometry>{{8, 8, 0, 1, 0, false},
                                                             {8, 8, 2, 2, 2, false},
                                                             {8, 8, 3, 0, 1, false},
                                                             {1, 1, 3, 1, 0, true}}) {
    frames.push_back(make_frame(g, true));
    ASSERT_FALSE(frames.back().legal);
    frames.push_back(make_frame({7, 5, 3, 2, 1, true}, true));
  }
  auto& d = dut();
  const auto t = run(frames, 0.1, 0.1);
  for (size_t f = 0; f < frames.size(); ++f) {
    EXPECT_EQ(t[f].outputs, size_t(frames[f].expected.size() / kLanes)) << frames[f].str();
    EXPECT_EQ(t[f].error_flag, !frames[f].legal) << frames[f].str();
  }
  // The flag reflects the last configuration (legal) and the path is idle.
  settle();
  EXPECT_FALSE(d.cfg_error_o);
  EXPECT_FALSE(d.busy_o);
}

}  // namespace
}  // namespace strata::tb
