// SPDX-License-Identifier: Apache-2.0
// Bench of strata_window_gen (and its strata_line_buffer): every window of
// every frame (taps of all lanes, valid mask, tap count and bounds, position,
// first/last flags) against a C++ extraction built on strata::pool_out_size,
// with random input gaps and output back-pressure, back-to-back frames of
// different geometries, illegal configurations, reset in mid-frame and a
// cycle-count bound with no stalls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "Vstrata_window_gen.h"
#include "pool_bench_util.hpp"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"
#include "strata/numerics.hpp"

namespace strata::tb {
namespace {

constexpr int kLanes = hw::kLanes;
constexpr int kMaxKernel = hw::kMaxKernel;
constexpr int kMaxWidth = hw::kMaxImageWidth;
constexpr int kData = hw::kDataWidth;
constexpr int kPixelBits = kLanes * kData;
constexpr int kTaps = kMaxKernel * kMaxKernel;
static_assert(kPixelBits <= 64, "bench packs a pixel vector into 64 bits");
static_assert(kTaps <= 64, "bench packs the tap mask into 64 bits");

struct Frame {
  WindowGeometry g;
  Tensor<int8_t> image;  // [lanes][H][W]; empty for frames with H or W = 0
  bool legal = true;
};

struct FrameStats {
  uint64_t cfg_cycle = 0;               // cycle of the configuration handshake
  std::vector<uint64_t> window_cycles;  // cycle of each window handshake
  bool error_flag = false;              // cfg_error_o the cycle after the handshake
};

class StrataWindowGen : public SimFixture<Vstrata_window_gen> {
 protected:
  Frame make_frame(const WindowGeometry& g) {
    Frame f;
    f.g = g;
    f.legal = legal(g) && g.width <= kMaxWidth && g.kernel <= kMaxKernel && g.stride <= 15;
    if (g.height > 0 && g.width > 0) f.image = random_image(kLanes, g.height, g.width, rng());
    return f;
  }

  // Compares one presented window with the reference; "" when they agree.
  std::string compare(const RefWindow& ref, int frame) {
    auto& d = dut();
    const std::string where = fmt::format("frame {} window (oy {}, ox {})", frame, ref.oy, ref.ox);
    if (d.win_oy_o != ref.oy || d.win_ox_o != ref.ox) {
      return fmt::format("{}: position expected ({}, {}), got ({}, {})", where, ref.oy, ref.ox,
                         d.win_oy_o, d.win_ox_o);
    }
    if (bool(d.win_first_o) != ref.first || bool(d.win_last_o) != ref.last) {
      return fmt::format("{}: first/last expected {}/{}, got {}/{}", where, ref.first, ref.last,
                         d.win_first_o, d.win_last_o);
    }
    const uint64_t mask = get_field(d.win_mask_o, 0, kTaps);
    if (mask != ref.mask) {
      return fmt::format("{}: mask expected {:#x}, got {:#x}", where, ref.mask, mask);
    }
    if (d.win_count_o != ref.count) {
      return fmt::format("{}: count expected {}, got {}", where, ref.count, d.win_count_o);
    }
    if (d.win_ky_lo_o != ref.ky_lo || d.win_ky_hi_o != ref.ky_hi || d.win_kx_lo_o != ref.kx_lo ||
        d.win_kx_hi_o != ref.kx_hi) {
      return fmt::format("{}: tap bounds expected ky {}..{} kx {}..{}, got ky {}..{} kx {}..{}",
                         where, ref.ky_lo, ref.ky_hi, ref.kx_lo, ref.kx_hi, d.win_ky_lo_o,
                         d.win_ky_hi_o, d.win_kx_lo_o, d.win_kx_hi_o);
    }
    for (int t = 0; t < kTaps; ++t) {
      for (int l = 0; l < kLanes; ++l) {
        const int8_t got =
            get_i8(get_field(d.win_data_o, static_cast<unsigned>((t * kLanes + l) * kData), kData));
        const int8_t exp = ref.taps[static_cast<size_t>(t) * kLanes + l];
        if (got != exp) {
          return fmt::format("{}: tap (ky {}, kx {}) lane {} expected {}, got {}{}", where,
                             t / kMaxKernel, t % kMaxKernel, l, exp, got,
                             (ref.mask >> t) & 1 ? "" : " (padded tap must be 0)");
        }
      }
    }
    return "";
  }

  // Runs the frames back to back. Returns per-frame statistics; failures are
  // reported through gtest (at most a few mismatches, then the run stops).
  std::vector<FrameStats> run(const std::vector<Frame>& frames, double in_gap, double out_stall,
                              double cfg_gap = 0.0) {
    auto& d = dut();
    std::vector<std::vector<RefWindow>> expected;
    StreamSource<size_t> cfg_src(cfg_gap);
    StreamSource<uint64_t> px_src(in_gap);
    StreamSink sink(out_stall);
    uint64_t budget = 2000;
    for (size_t f = 0; f < frames.size(); ++f) {
      const Frame& fr = frames[f];
      expected.push_back(fr.legal ? reference_windows(fr.image, fr.g, kMaxKernel)
                                  : std::vector<RefWindow>{});
      cfg_src.push(f);
      for (int y = 0; y < fr.g.height; ++y) {
        for (int x = 0; x < fr.g.width; ++x) px_src.push(pack_pixel(fr.image, y, x));
      }
      budget += 40 * (uint64_t(std::max(fr.g.height, 0)) * std::max(fr.g.width, 0) +
                      expected.back().size() * fr.g.kernel + 64);
    }

    std::vector<FrameStats> stats(frames.size());
    size_t cur_frame = 0;  // frame whose configuration was taken last
    bool any_cfg = false;
    size_t next_window = 0;    // index into expected[cur_frame]
    int error_flag_delay = 0;  // cfg_error_o is settled 2 cycles after the handshake
    int failures = 0;
    const uint64_t start = cycle();

    while (true) {
      const bool frames_done = cfg_src.empty() && px_src.empty() &&
                               (!any_cfg || next_window == expected[cur_frame].size());
      // Drive point.
      const bool cfg_v = cfg_src.drive(rng());
      if (cfg_v) {
        const WindowGeometry& g = frames[cfg_src.front()].g;
        d.cfg_height_i = static_cast<uint16_t>(g.height);
        d.cfg_width_i = static_cast<uint16_t>(g.width);
        d.cfg_kernel_i = static_cast<uint8_t>(g.kernel);
        d.cfg_stride_i = static_cast<uint8_t>(g.stride);
        d.cfg_pad_top_i = static_cast<uint8_t>(g.pads().top);
        d.cfg_pad_left_i = static_cast<uint8_t>(g.pads().left);
        d.cfg_pad_bottom_i = static_cast<uint8_t>(g.pads().bottom);
        d.cfg_pad_right_i = static_cast<uint8_t>(g.pads().right);
        d.cfg_ceil_i = g.ceil_mode;
      } else {
        d.cfg_height_i = static_cast<uint16_t>(rng()());
        d.cfg_kernel_i = static_cast<uint8_t>(rng()() & 7);
      }
      d.cfg_valid_i = cfg_v;
      const bool in_v = px_src.drive(rng());
      d.in_data_i = in_v ? px_src.front() : rng()();
      d.in_valid_i = in_v;
      d.win_ready_i = sink.ready(rng());
      settle();

      // Sample point.
      if (error_flag_delay > 0 && --error_flag_delay == 0) {
        stats[cur_frame].error_flag = d.cfg_error_o;
        EXPECT_EQ(bool(d.cfg_error_o), !frames[cur_frame].legal)
            << "cfg_error_o after the configuration of frame " << cur_frame << " ("
            << frames[cur_frame].g.str() << "), STRATA_SEED=" << seed();
      }
      if (frames_done && !d.busy_o && !cfg_v) break;
      const bool cfg_fire = cfg_v && d.cfg_ready_o;
      const bool win_fire = d.win_valid_o && d.win_ready_i;
      if (cfg_fire) {
        if (any_cfg && next_window != expected[cur_frame].size()) {
          ADD_FAILURE() << "frame " << cfg_src.front() << " configured after only " << next_window
                        << " of " << expected[cur_frame].size() << " windows of frame " << cur_frame
                        << ", STRATA_SEED=" << seed();
          return stats;
        }
        cur_frame = cfg_src.front();
        any_cfg = true;
        next_window = 0;
        stats[cur_frame].cfg_cycle = cycle();
        error_flag_delay = 2;
      }
      if (win_fire) {
        if (!any_cfg || next_window >= expected[cur_frame].size()) {
          ADD_FAILURE() << "unexpected window (oy " << d.win_oy_o << ", ox " << d.win_ox_o
                        << ") after frame " << cur_frame << " (" << frames[cur_frame].g.str()
                        << ") was complete, STRATA_SEED=" << seed();
          return stats;
        }
        const std::string err = compare(expected[cur_frame][next_window], int(cur_frame));
        if (!err.empty()) {
          ADD_FAILURE() << err << " [" << frames[cur_frame].g.str() << "], STRATA_SEED=" << seed();
          if (++failures >= 5) return stats;
        }
        stats[cur_frame].window_cycles.push_back(cycle());
        ++next_window;
      }
      const bool in_fire = in_v && d.in_ready_o;
      tick();
      cfg_src.handshake(cfg_fire);
      px_src.handshake(in_fire);
      if (cycle() - start > budget) {
        ADD_FAILURE() << "timeout after " << budget << " cycles: frame " << cur_frame << " ("
                      << frames[cur_frame].g.str() << "), " << next_window << " of "
                      << expected[cur_frame].size() << " windows, " << px_src.pending()
                      << " pixels and " << cfg_src.pending()
                      << " configurations pending, STRATA_SEED=" << seed();
        return stats;
      }
    }
    return stats;
  }

  static std::vector<WindowGeometry> known_geometries() {
    return {
        {32, 32, 5, 1, 2, false},        // cifar10_quick conv, "same" padding
        {32, 32, 7, 2, 3, false},        // 7x7 stride 2 pad 3
        {32, 32, 3, 2, 0, true},         // cifar10_quick pool 1: 32 -> 16 (ceil)
        {16, 16, 3, 2, 0, true},         // pool 2: 16 -> 8
        {8, 8, 3, 2, 0, true},           // pool 3: 8 -> 4
        {1, 1, 1, 1, 0, false},          // 1x1 image
        {2, 2, 3, 1, 1, false},          // kernel larger than the image
        {1, 1, 7, 1, 6, false},          // 7x7 windows over one pixel: one valid tap each
        {5, kMaxWidth, 3, 1, 1, false},  // full line-buffer width
        {9, 13, 2, 4, 0, false},         // stride > kernel
        {11, 10, 1, 3, 0, true},         // 1x1 kernel, stride 3, ceil
        {7, 9, 4, 3, 1, true},           // even kernel, ceil cuts the last window
        {6, 5, 7, 1, 3, false},          // kernel larger than both sides
        {20, 3, 7, 2, 2, false},         // tall and narrow
        // Padding per side (top, left, bottom, right):
        {32, 32, 3, 2, 0, true, 0, 0, 1, 1},         // ceil, padding after only
        {6, 6, 2, 2, 0, true, 0, 0, 1, 1},           // ceil drops the window starting at 6
        {9, 9, 3, 2, 0, true, 1, 0, 0, 1},           // top and right
        {7, 9, 5, 1, 0, false, 4, 0, 0, 3},          // one side each, up to k - 1
        {1, 1, 7, 1, 0, false, 6, 0, 0, 6},          // one pixel, all padding on two sides
        {10, 12, 4, 3, 0, true, 3, 1, 0, 2},         // stride 3, ceil
        {5, kMaxWidth, 3, 1, 0, false, 0, 2, 2, 0},  // full width, left padding 2
        {12, 11, 3, 4, 0, false, 2, 2, 0, 0},        // stride > kernel, padding before only
    };
  }

  void run_known(double in_gap, double out_stall) {
    reset();
    std::vector<Frame> frames;
    size_t windows = 0;
    for (const auto& g : known_geometries()) {
      frames.push_back(make_frame(g));
      windows += size_t(g.out_height()) * g.out_width();
    }
    const auto stats = run(frames, in_gap, out_stall, in_gap);
    size_t got = 0;
    for (const auto& s : stats) got += s.window_cycles.size();
    EXPECT_EQ(got, windows) << "windows received, STRATA_SEED=" << seed();
    EXPECT_GE(windows, 1000u);
  }
};

TEST_F(StrataWindowGen, KnownGeometriesFullRate) { run_known(0.0, 0.0); }
TEST_F(StrataWindowGen, KnownGeometriesInputGaps) { run_known(0.5, 0.0); }
TEST_F(StrataWindowGen, KnownGeometriesBackPressure) { run_known(0.0, 0.6); }
TEST_F(StrataWindowGen, KnownGeometriesGapsAndBackPressure) { run_known(0.3, 0.3); }

// Random legal geometries back to back (the configuration of each frame
// differs from the last), random throttles on all three streams.
TEST_F(StrataWindowGen, RandomGeometries) {
  reset();
  std::vector<Frame> frames;
  size_t windows = 0;
  while (windows < 3000) {
    WindowGeometry g;
    do {
      g.kernel = int(rand_int(1, kMaxKernel));
      g.pad = int(rand_int(0, g.kernel - 1));
      // Half the frames: a padding of its own on each side.
      const bool asym = rand_int(0, 1) == 1;
      for (int* side : {&g.pad_top, &g.pad_left, &g.pad_bottom, &g.pad_right}) {
        *side = asym ? int(rand_int(0, g.kernel - 1)) : -1;
      }
      g.stride = int(rand_int(1, 9));
      g.height = int(rand_int(1, 24));
      g.width = int(rand_int(1, kMaxWidth));
      g.ceil_mode = rand_int(0, 1) == 1;
    } while (!legal(g));
    frames.push_back(make_frame(g));
    windows += size_t(g.out_height()) * g.out_width();
  }
  const double in_gap = double(rand_int(0, 6)) / 10.0, out_stall = double(rand_int(0, 6)) / 10.0;
  std::cout << "[ INFO     ] " << frames.size() << " frames, " << windows << " windows, input gap "
            << in_gap << ", back-pressure " << out_stall << std::endl;
  const auto stats = run(frames, in_gap, out_stall, 0.5);
  size_t got = 0;
  for (const auto& s : stats) got += s.window_cycles.size();
  EXPECT_EQ(got, windows) << "STRATA_SEED=" << seed();
}

// With no stalls: stride 1 gives one window per cycle inside an output row,
// and a frame finishes within the bound of docs/rtl-blocks.md.
TEST_F(StrataWindowGen, Throughput) {
  reset();
  const std::vector<WindowGeometry> cases = {
      {32, 32, 3, 1, 1, false},
      {32, 32, 5, 1, 2, false},
      {32, 32, 7, 1, 3, false},
      {32, 32, 7, 2, 3, false},
      {32, 32, 3, 2, 0, true},
      {64, 64, 3, 1, 1, false},
      {32, 32, 1, 1, 0, false},
      {32, 32, 2, 2, 0, false},
      {32, 32, 3, 1, 0, false},
      {32, 32, 3, 1, 0, false, 1, 0, 0, 1},
      {32, 32, 5, 2, 0, true, 0, 4, 3, 0},
  };
  for (const auto& g : cases) {
    const auto stats = run({make_frame(g)}, 0.0, 0.0);
    ASSERT_FALSE(HasFailure());
    const auto& st = stats[0];
    const int ho = g.out_height(), wo = g.out_width();
    ASSERT_EQ(st.window_cycles.size(), size_t(ho) * wo);
    const uint64_t cycles = st.window_cycles.back() - st.cfg_cycle + 1;
    const uint64_t pixels = uint64_t(g.height) * g.width;
    const uint64_t bound = window_gen_cycle_bound(g);
    std::cout << fmt::format(
                     "[ CYCLES   ] {:<22} {:>6} cycles, {:>6} input beats, {:>5} windows, "
                     "{:.3f} cycles/beat, bound {}",
                     g.str(), cycles, pixels, ho * wo, double(cycles) / pixels, bound)
              << std::endl;
    EXPECT_LE(cycles, bound) << g.str();
    if (g.stride == 1) {
      for (int oy = 0; oy < ho; ++oy) {
        for (int ox = 1; ox < wo; ++ox) {
          const size_t i = size_t(oy) * wo + ox;
          ASSERT_EQ(st.window_cycles[i], st.window_cycles[i - 1] + 1)
              << g.str() << ": window (" << oy << ", " << ox << ") not on the cycle after its "
              << "left neighbour";
        }
      }
    }
  }
}

// Every class of illegal configuration raises cfg_error_o, produces no window,
// drains the frame's pixels, and the next legal frame is processed correctly.
TEST_F(StrataWindowGen, IllegalConfigurations) {
  reset();
  const std::vector<WindowGeometry> bad = {
      {0, 8, 3, 1, 1, false},              // H = 0
      {8, 0, 3, 1, 1, false},              // W = 0
      {3, kMaxWidth + 1, 3, 1, 1, false},  // wider than the line buffer
      {8, 8, 0, 1, 0, false},              // k = 0
      {8, 8, 3, 0, 1, false},              // stride 0
      {8, 8, 3, 1, 3, false},              // pad = k
      {8, 8, 2, 1, 5, false},              // pad > k
      {2, 8, 5, 1, 1, false},              // k > H + 2p
      {8, 1, 4, 1, 1, true},               // k > W + 2p
      {8, 8, 3, 1, 0, false, 0, 0, 3, 0},  // pad_bottom = k
      {8, 8, 3, 1, 0, true, 0, 0, 0, 4},   // pad_right > k
      {8, 8, 3, 1, 0, false, 0, 3, 0, 0},  // pad_left = k
      {2, 8, 5, 1, 0, false, 2, 0, 0, 0},  // k > H + pt + pb (but < H + 2 pt)
      {8, 2, 5, 1, 0, false, 0, 0, 0, 2},  // k > W + pl + pr (but < W + 2 pr)
  };
  std::vector<Frame> frames;
  for (const auto& g : bad) {
    frames.push_back(make_frame(g));
    ASSERT_FALSE(frames.back().legal) << g.str();
    frames.push_back(make_frame({6, 7, 3, 2, 1, true}));  // recovers
  }
  const auto stats = run(frames, 0.2, 0.2);
  for (size_t f = 0; f < frames.size(); ++f) {
    EXPECT_EQ(stats[f].error_flag, !frames[f].legal) << "frame " << f << " " << frames[f].g.str();
    if (!frames[f].legal) EXPECT_TRUE(stats[f].window_cycles.empty()) << frames[f].g.str();
  }
}

// A reset in the middle of a frame leaves the block idle; the next frame is
// processed correctly.
TEST_F(StrataWindowGen, ResetMidFrame) {
  reset();
  auto& d = dut();
  const Frame f = make_frame({12, 20, 3, 1, 1, false});
  // Configure, push half the pixels, take a few windows, then reset.
  d.in_valid_i = 0;
  d.win_ready_i = 0;
  d.cfg_valid_i = 1;
  d.cfg_height_i = 12;
  d.cfg_width_i = 20;
  d.cfg_kernel_i = 3;
  d.cfg_stride_i = 1;
  d.cfg_pad_top_i = 1;
  d.cfg_pad_left_i = 1;
  d.cfg_pad_bottom_i = 1;
  d.cfg_pad_right_i = 1;
  d.cfg_ceil_i = 0;
  settle();
  ASSERT_TRUE(d.cfg_ready_o);
  tick();
  d.cfg_valid_i = 0;
  d.in_valid_i = 1;
  d.win_ready_i = 1;
  int pushed = 0, windows = 0;
  for (int i = 0; i < 400 && pushed < 120; ++i) {
    d.in_data_i = pack_pixel(f.image, pushed / 20, pushed % 20);
    settle();
    if (d.in_ready_o) ++pushed;
    if (d.win_valid_o) ++windows;
    tick();
  }
  ASSERT_EQ(pushed, 120);
  ASSERT_GT(windows, 0);
  d.in_valid_i = 0;
  reset();
  settle();
  EXPECT_TRUE(d.cfg_ready_o);
  EXPECT_FALSE(d.busy_o);
  EXPECT_FALSE(d.win_valid_o);
  run({make_frame({9, 11, 5, 2, 2, true}), f}, 0.2, 0.2);
}

}  // namespace
}  // namespace strata::tb
