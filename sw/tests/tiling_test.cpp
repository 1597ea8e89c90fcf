// SPDX-License-Identifier: Apache-2.0
// The geometry of bands and strips (sw/src/compiler/tiling.hpp) against a
// one-dimensional model of a convolution and its pool: every tile, computed
// from its own input range with its own padding and rounding, must give
// exactly the whole layer's outputs in its range; and the tiling choice must
// respect its buffers and the line buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "compiler/tiling.hpp"

namespace strata::compiler {
namespace {

// Window walk along one axis: output o's window starts at o * s - before and
// takes the taps inside [0, in); `count` windows (the caller's size rule).
struct Walk {
  int kernel, stride, before;
};

// 1-D convolution: the sum of w[k] * x[i] over the taps inside the input.
std::vector<int64_t> conv1d(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                            const Walk& g, int64_t count) {
  std::vector<int64_t> y(static_cast<size_t>(count), 0);
  for (int64_t o = 0; o < count; ++o) {
    for (int k = 0; k < g.kernel; ++k) {
      const int64_t i = o * g.stride - g.before + k;
      if (i >= 0 && i < static_cast<int64_t>(x.size())) y[o] += w[k] * x[i];
    }
  }
  return y;
}

// 1-D pool: max, and the sum with the number of taps inside (the average's
// divisor), over the taps inside the input.
std::vector<int64_t> pool1d(const std::vector<int64_t>& x, const Walk& g, int64_t count) {
  std::vector<int64_t> y;
  for (int64_t o = 0; o < count; ++o) {
    int64_t mx = INT64_MIN, sum = 0, n = 0;
    for (int k = 0; k < g.kernel; ++k) {
      const int64_t i = o * g.stride - g.before + k;
      if (i >= 0 && i < static_cast<int64_t>(x.size())) {
        mx = std::max(mx, x[i]);
        sum += x[i];
        ++n;
      }
    }
    EXPECT_GT(n, 0) << "a window with no tap inside";
    y.push_back(mx * 1000003 + sum * 101 + n);  // max, sum and divisor in one value
  }
  return y;
}

std::vector<int64_t> slice(const std::vector<int64_t>& v, int64_t b, int64_t e) {
  return {v.begin() + b, v.begin() + e};
}

TEST(Tiling, WindowCountIsThePoolAndConvolutionSizeRule) {
  EXPECT_EQ(window_count(32, 3, 1, 1, 1, false), 32);
  EXPECT_EQ(window_count(32, 3, 2, 0, 0, true), 16);  // cifar10_quick's pools
  EXPECT_EQ(window_count(5, 2, 2, 0, 0, true), 3);
  EXPECT_EQ(window_count(5, 2, 2, 0, 0, false), 2);
  EXPECT_EQ(window_count(4, 3, 3, 1, 1, true), 2);  // last start must be < in + before
  EXPECT_EQ(window_count(2, 5, 1, 1, 1, false), 0);
}

TEST(Tiling, EveryTileReproducesTheWholeLayerInItsRange) {
  std::mt19937 rng(7);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    AxisGeometry g;
    g.in = pick(1, 40);
    g.kernel = pick(1, 7);
    g.stride = pick(1, 4);
    g.pad_before = pick(0, g.kernel - 1);
    g.pad_after = pick(0, g.kernel - 1);
    g.conv_out = window_count(g.in, g.kernel, g.stride, g.pad_before, g.pad_after, false);
    if (g.conv_out < 1) continue;
    g.pooled = pick(0, 2) != 0;
    g.out = g.conv_out;
    if (g.pooled) {
      g.pool_kernel = pick(1, 4);
      g.pool_stride = pick(1, 3);
      g.pool_pad_before = pick(0, g.pool_kernel - 1);
      g.pool_pad_after = pick(0, g.pool_kernel - 1);
      g.pool_ceil = pick(0, 1) != 0;
      g.out = window_count(g.conv_out, g.pool_kernel, g.pool_stride, g.pool_pad_before,
                           g.pool_pad_after, g.pool_ceil);
      if (g.out < 1) continue;
    }
    std::vector<int64_t> x(static_cast<size_t>(g.in)), w(static_cast<size_t>(g.kernel));
    for (auto& v : x) v = pick(-50, 50);
    for (auto& v : w) v = pick(-9, 9);
    const auto layer = [&](const std::vector<int64_t>& in, int pb, int pa, int ppb, int ppa,
                           bool ceil) {
      const int64_t n =
          window_count(static_cast<int64_t>(in.size()), g.kernel, g.stride, pb, pa, false);
      std::vector<int64_t> c = conv1d(in, w, {g.kernel, g.stride, pb}, n);
      if (!g.pooled) return c;
      const int64_t m = window_count(n, g.pool_kernel, g.pool_stride, ppb, ppa, ceil);
      return pool1d(c, {g.pool_kernel, g.pool_stride, ppb}, m);
    };
    const std::vector<int64_t> whole =
        layer(x, g.pad_before, g.pad_after, g.pool_pad_before, g.pool_pad_after, g.pool_ceil);
    ASSERT_EQ(static_cast<int64_t>(whole.size()), g.out);
    for (int64_t count = 1; count <= g.out; ++count) {
      const std::vector<AxisTile> tiles = axis_tiles(g, count);
      ASSERT_EQ(static_cast<int64_t>(tiles.size()), count);
      int64_t next = 0;
      for (const AxisTile& t : tiles) {
        ASSERT_EQ(t.out_begin, next);
        next = t.out_end;
        EXPECT_TRUE(t.pad_before == 0 || t.in_begin == 0) << "padding inside the image";
        EXPECT_TRUE(t.pad_after == 0 || t.in_end == g.in) << "padding inside the image";
        const std::vector<int64_t> part =
            layer(slice(x, t.in_begin, t.in_end), t.pad_before, t.pad_after, t.pool_pad_before,
                  t.pool_pad_after, t.pool_ceil);
        ASSERT_EQ(part, slice(whole, t.out_begin, t.out_end))
            << "in " << g.in << " k " << g.kernel << " s " << g.stride << " p " << g.pad_before
            << "/" << g.pad_after << " pool " << g.pooled << " k " << g.pool_kernel << " s "
            << g.pool_stride << " p " << g.pool_pad_before << "/" << g.pool_pad_after << " ceil "
            << g.pool_ceil << ", tile [" << t.out_begin << ", " << t.out_end << ") of " << count;
        ++checked;
      }
      ASSERT_EQ(next, g.out);
    }
  }
  EXPECT_GT(checked, 20000);
}

AxisGeometry conv_axis(int64_t in, int k, int s, int p) {
  AxisGeometry g;
  g.in = in;
  g.kernel = k;
  g.stride = s;
  g.pad_before = g.pad_after = p;
  g.conv_out = g.out = window_count(in, k, s, p, p, false);
  return g;
}

TEST(Tiling, TheChoiceFitsItsBuffersAndPrefersFewTiles) {
  // 224 x 224, 8 groups in and out, 3x3 pad 1: whole rows, bands of 4096-word buffers.
  TilingProblem p;
  p.rows = p.cols = conv_axis(224, 3, 1, 1);
  p.in_groups = 8;
  p.pass_groups = 8;
  p.out_groups = 8;
  p.passes = 8;
  p.in_buf_words = 4096;
  p.out_buf_words = 4096;
  p.line_buffer = 64;
  p.pes = 8;
  std::string why;
  TilingChoice c = choose_tiling(p, &why);
  ASSERT_FALSE(c.bands.empty()) << why;
  for (const AxisTile& b : c.bands) {
    for (const AxisTile& s : c.strips) {
      EXPECT_LE(8 * (b.in_end - b.in_begin) * (s.in_end - s.in_begin), 4096);
      EXPECT_LE((b.out_end - b.out_begin) * (s.out_end - s.out_begin), 4096);
    }
  }
  EXPECT_GE(c.compute_beats, 224LL * 224 * 9 * 8 * 8 - 4 * 224 * 3 * 8 * 8 * 224);
  // A pooled row wider than the line buffer: strips of at most 64 conv columns.
  p.rows.pooled = p.cols.pooled = true;
  for (AxisGeometry* a : {&p.rows, &p.cols}) {
    a->pool_kernel = a->pool_stride = 2;
    a->out = window_count(a->conv_out, 2, 2, 0, 0, false);
  }
  c = choose_tiling(p, &why);
  ASSERT_FALSE(c.strips.empty()) << why;
  EXPECT_GE(c.strips.size(), 4u);
  for (const AxisTile& s : c.strips) EXPECT_LE(s.conv_end - s.conv_begin, 64);
  // Nothing fits: a clear reason.
  p.in_buf_words = 10;
  c = choose_tiling(p, &why);
  EXPECT_TRUE(c.bands.empty());
  EXPECT_FALSE(why.empty());
}

// A DEPTHWISE (grouped, one group per tile, B = 2 beats per window): its input
// rows pass through the line buffer, so strips read at most 64 input columns;
// a tile costs the larger of its beats and its input words (stride 2: the input).
TEST(Tiling, DepthwiseStripsReadRowsThatFitTheLineBufferAndCostTheirInput) {
  TilingProblem p;
  p.rows = p.cols = conv_axis(150, 3, 2, 1);  // 75 x 75 windows
  p.grouped = true;
  p.passes = 3;
  p.window_beats = 2;
  p.in_buf_words = 4096;
  p.out_buf_words = 4096;
  p.line_buffer = 64;
  p.pes = 8;
  std::string why;
  const TilingChoice c = choose_tiling(p, &why);
  ASSERT_FALSE(c.bands.empty()) << why;
  EXPECT_GE(c.strips.size(), 3u);
  int64_t cycles = 0;
  for (const AxisTile& b : c.bands) {
    for (const AxisTile& s : c.strips) {
      EXPECT_LE(s.in_end - s.in_begin, 64);
      const int64_t windows = (b.conv_end - b.conv_begin) * (s.conv_end - s.conv_begin);
      cycles += std::max(2 * windows, (b.in_end - b.in_begin) * (s.in_end - s.in_begin));
    }
  }
  EXPECT_EQ(c.compute_beats, 3 * cycles);
  EXPECT_GT(c.compute_beats, 3 * 2 * 75 * 75);  // the input words bound it at stride 2
}

// Split passes (docs/compiler.md): a tile keeps its partial sums, 4 words per
// convolution pixel (a fused pool's windows included), after its results in the
// output buffer, or in a spill buffer of its own; the bands shrink until both fit,
// and every tile runs every chunk of every pass (no pass-outer order).
TEST(Tiling, SplitPassesBudgetTheirPartialSums) {
  TilingProblem p;
  p.rows = p.cols = conv_axis(32, 3, 1, 1);
  p.rows.pooled = p.cols.pooled = true;
  for (AxisGeometry* a : {&p.rows, &p.cols}) {
    a->pool_kernel = a->pool_stride = 2;
    a->out = window_count(a->conv_out, 2, 2, 0, 0, false);
  }
  p.in_groups = p.pass_groups = 4;
  p.out_groups = 2;
  p.passes = 2;
  p.in_buf_words = 4096;
  p.out_buf_words = 1024;
  p.line_buffer = 64;
  p.weight_words = 36;
  p.pes = 8;
  std::string why;
  const TilingChoice whole = choose_tiling(p, &why);
  ASSERT_EQ(whole.bands.size(), 1u) << why;  // 16 x 16 results fit 1,024 words
  p.chunks = 3;
  p.spill_words = 4;
  const auto check = [&](const TilingChoice& c, int64_t out_budget, int64_t spill_budget) {
    ASSERT_FALSE(c.bands.empty()) << why;
    EXPECT_FALSE(c.pass_outer);
    for (const AxisTile& b : c.bands) {
      for (const AxisTile& s : c.strips) {
        const int64_t results = (b.out_end - b.out_begin) * (s.out_end - s.out_begin);
        const int64_t spill = 4 * (b.conv_end - b.conv_begin) * (s.conv_end - s.conv_begin);
        EXPECT_LE(results + (spill_budget == 0 ? spill : 0), out_budget);
        if (spill_budget > 0) {
          EXPECT_LE(spill, spill_budget);
        }
      }
    }
  };
  // After the results: 256 + 4 * 1,024 words do not fit 1,024; bands do.
  const TilingChoice after = choose_tiling(p, &why);
  check(after, 1024, 0);
  EXPECT_GE(after.bands.size() * after.strips.size(), 5u);
  // In a spill buffer of its own, 512 words: at most 128 convolution pixels a tile.
  p.spill_buf_words = 512;
  const TilingChoice own = choose_tiling(p, &why);
  check(own, 1024, 512);
  EXPECT_GE(own.bands.size() * own.strips.size(), 8u);
  // Not even one pooled row's partial sums: no tiling, a reason.
  p.spill_buf_words = 4;
  EXPECT_TRUE(choose_tiling(p, &why).bands.empty());
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace strata::compiler
