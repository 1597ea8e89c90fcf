// SPDX-License-Identifier: Apache-2.0
// Row bands and column strips of a map op (tiling.hpp; docs/compiler.md,
// "Large maps").
#include "tiling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "strata/error.hpp"

namespace strata::compiler {

namespace {

// Fixed cost of one instruction beside its beats: fetch (one 64-byte
// instruction), the engines' setup and the pipeline's fill and drain.
constexpr int64_t kInstructionCycles = 48;

// Taps inside the input summed over the windows of a tile (the hardware walks
// no padded tap): for CONV the rows (or columns) of input each output row
// (column) reads.
int64_t valid_taps(const AxisTile& t, const AxisGeometry& g) {
  const int64_t in = t.in_end - t.in_begin;
  int64_t taps = 0;
  for (int64_t o = 0; o < t.conv_end - t.conv_begin; ++o) {
    const int64_t y0 = o * g.stride - t.pad_before;
    taps += std::min<int64_t>(g.kernel, in - y0) - std::max<int64_t>(0, -y0);
  }
  return taps;
}

}  // namespace

int64_t window_count(int64_t in, int kernel, int stride, int pad_before, int pad_after,
                     bool ceil_mode) {
  const int64_t span = in + pad_before + pad_after - kernel;
  if (in < 1 || span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_before) --out;
  return out;
}

AxisTile axis_tile(const AxisGeometry& g, int64_t out_begin, int64_t out_end) {
  AxisTile t;
  t.out_begin = out_begin;
  t.out_end = out_end;
  const bool last = out_end == g.out;
  if (g.pooled) {
    const int64_t first = out_begin * g.pool_stride - g.pool_pad_before;
    const int64_t end = (out_end - 1) * g.pool_stride - g.pool_pad_before + g.pool_kernel;
    t.conv_begin = std::max<int64_t>(0, first);
    t.conv_end = std::min(g.conv_out, end);
    t.pool_pad_before = static_cast<int>(t.conv_begin - first);
    // The layer's rounding applies to every tile (one flag per instruction).
    // The last tile keeps the layer's padding after the map when that gives
    // its windows; otherwise, and inside the map, the padding after is what
    // the last window reaches past the computed rows (0 inside the map), which
    // makes the windows fit exactly, so floor and ceil agree.
    const int64_t rows = t.conv_end - t.conv_begin;
    const auto windows = [&](int after) {
      return rows + t.pool_pad_before + after >= g.pool_kernel
                 ? window_count(rows, g.pool_kernel, g.pool_stride, t.pool_pad_before, after,
                                g.pool_ceil)
                 : 0;
    };
    t.pool_ceil = g.pool_ceil;
    t.pool_pad_after = static_cast<int>(end - t.conv_end);
    if (last && windows(g.pool_pad_after) == out_end - out_begin) {
      t.pool_pad_after = g.pool_pad_after;
    }
    const int64_t n = windows(t.pool_pad_after);
    if (n != out_end - out_begin || t.pool_pad_before >= g.pool_kernel ||
        t.pool_pad_after >= g.pool_kernel) {
      throw Error(
          fmt::format("internal: pooled tile [{}, {}) of {} does not follow from its "
                      "rows [{}, {}) (pads {} / {})",
                      out_begin, out_end, g.out, t.conv_begin, t.conv_end, t.pool_pad_before,
                      t.pool_pad_after));
    }
  } else {
    t.conv_begin = out_begin;
    t.conv_end = out_end;
  }
  // The padding after the input is what the last window reaches past it: the
  // layer's at the image's edge (or less, when the last window stops short of
  // it), none inside the image.
  const int64_t first = t.conv_begin * g.stride - g.pad_before;
  const int64_t end = (t.conv_end - 1) * g.stride - g.pad_before + g.kernel;
  t.in_begin = std::max<int64_t>(0, first);
  t.in_end = std::min(g.in, end);
  t.pad_before = static_cast<int>(t.in_begin - first);
  t.pad_after = static_cast<int>(end - t.in_end);
  const int64_t n =
      window_count(t.in_end - t.in_begin, g.kernel, g.stride, t.pad_before, t.pad_after, false);
  if (n != t.conv_end - t.conv_begin || t.pad_before >= g.kernel || t.pad_after >= g.kernel) {
    throw Error(fmt::format(
        "internal: convolution tile [{}, {}) of {} does not follow from its "
        "input [{}, {}) (pads {} / {})",
        t.conv_begin, t.conv_end, g.conv_out, t.in_begin, t.in_end, t.pad_before, t.pad_after));
  }
  return t;
}

AxisTile whole_axis(const AxisGeometry& g) {
  AxisTile t;
  t.out_end = g.out;
  t.conv_end = g.conv_out;
  t.in_end = g.in;
  t.pad_before = g.pad_before;
  t.pad_after = g.pad_after;
  t.pool_pad_before = g.pool_pad_before;
  t.pool_pad_after = g.pool_pad_after;
  t.pool_ceil = g.pool_ceil;
  return t;
}

std::vector<AxisTile> axis_tiles(const AxisGeometry& g, int64_t count) {
  count = std::clamp<int64_t>(count, 1, g.out);
  std::vector<AxisTile> tiles;
  tiles.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    tiles.push_back(axis_tile(g, i * g.out / count, (i + 1) * g.out / count));
  }
  return tiles;
}

namespace {

int64_t max_in(const std::vector<AxisTile>& ts) {
  int64_t m = 0;
  for (const AxisTile& t : ts) m = std::max(m, t.in_end - t.in_begin);
  return m;
}
int64_t max_conv(const std::vector<AxisTile>& ts) {
  int64_t m = 0;
  for (const AxisTile& t : ts) m = std::max(m, t.conv_end - t.conv_begin);
  return m;
}
int64_t max_out(const std::vector<AxisTile>& ts) {
  int64_t m = 0;
  for (const AxisTile& t : ts) m = std::max(m, t.out_end - t.out_begin);
  return m;
}

// Words one tile of `bands` x `strips` keeps in an input and an output buffer.
bool tiles_fit(const TilingProblem& p, const std::vector<AxisTile>& bands,
               const std::vector<AxisTile>& strips) {
  if (p.in_groups * max_in(bands) * max_in(strips) > p.in_buf_words) return false;
  if (p.out_buf_words > 0) {
    const int64_t groups = p.pool_op ? p.out_groups : 1;
    if (groups * max_out(bands) * max_out(strips) > p.out_buf_words) return false;
  }
  if (p.spill_words > 0) {  // a split pass's partial sums, 4 words per convolution pixel
    const int64_t spill = p.spill_words * max_conv(bands) * max_conv(strips);
    if (p.spill_buf_words > 0 ? spill > p.spill_buf_words
                              : max_out(bands) * max_out(strips) + spill > p.out_buf_words) {
      return false;
    }
  }
  return true;
}

TilingChoice cost(const TilingProblem& p, std::vector<AxisTile> bands,
                  std::vector<AxisTile> strips) {
  TilingChoice c;
  int64_t in_words = 0, out_words = 0, beats = 0;
  for (const AxisTile& b : bands) {
    for (const AxisTile& s : strips) {
      const int64_t in = p.in_groups * (b.in_end - b.in_begin) * (s.in_end - s.in_begin);
      in_words += in;
      out_words += p.out_groups * (b.out_end - b.out_begin) * (s.out_end - s.out_begin);
      if (p.window_beats > 0) {  // B beats a window, the window generator a word a cycle
        const int64_t windows = (b.conv_end - b.conv_begin) * (s.conv_end - s.conv_begin);
        beats += std::max(windows * p.window_beats, in);
      } else {
        beats += p.pool_op ? in : p.pass_groups * valid_taps(b, p.rows) * valid_taps(s, p.cols);
      }
    }
  }
  const int64_t tiles = static_cast<int64_t>(bands.size() * strips.size());
  const int64_t weights_once = p.passes * p.pes * p.weight_words;
  const int64_t tile_outer = in_words + tiles * weights_once;
  const int64_t pass_outer = in_words * p.passes + weights_once;
  c.pass_outer = p.grouped || (p.chunks == 1 && p.weight_words > 0 && pass_outer < tile_outer);
  c.compute_beats = beats * (p.pool_op ? 1 : p.passes);
  // Grouped: each pass loads its own groups of every tile, the input once in all.
  c.ext_words = (p.grouped ? pass_outer : c.pass_outer ? pass_outer : tile_outer) + out_words;
  const int64_t instructions = tiles * (p.pool_op ? 1 : p.passes * p.chunks) * 3;
  c.predicted_cycles = std::max(c.compute_beats, c.ext_words * p.words_per_beat_inv) +
                       instructions * kInstructionCycles;
  c.bands = std::move(bands);
  c.strips = std::move(strips);
  return c;
}

}  // namespace

TilingChoice choose_tiling(const TilingProblem& p, std::string* why) {
  TilingChoice best;
  int64_t best_cycles = std::numeric_limits<int64_t>::max();
  std::string reason = "no tile fits";
  // Strips: from one (whole rows) up; a few more than the fewest that fit are
  // weighed, since narrower strips allow taller bands.
  int64_t first_fit = -1;
  for (int64_t ns = 1; ns <= p.cols.out; ++ns) {
    if (first_fit >= 0 && ns > first_fit + 8) break;
    if (ns > 1 && !p.strips_allowed) {
      reason = "rows do not fit and column strips need external offsets on the AXI beat";
      break;
    }
    std::vector<AxisTile> strips = axis_tiles(p.cols, ns);
    // A pooling stage's input rows pass through the line buffer.
    if (p.cols.pooled && max_conv(strips) > p.line_buffer) {
      reason = fmt::format("pooling input rows of {} exceed the line buffer", max_conv(strips));
      continue;
    }
    // So do a DEPTHWISE's input rows.
    if (p.window_beats > 0 && max_in(strips) > p.line_buffer) {
      reason = fmt::format("depthwise input rows of {} exceed the line buffer", max_in(strips));
      continue;
    }
    // The fewest bands that fit (more bands: smaller tiles).
    int64_t lo = 1, hi = p.rows.out;
    if (!tiles_fit(p, axis_tiles(p.rows, hi), strips)) {
      reason = fmt::format("one output row of {} strip{} does not fit the buffers", ns,
                           ns == 1 ? "" : "s");
      continue;
    }
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (tiles_fit(p, axis_tiles(p.rows, mid), strips)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (first_fit < 0) first_fit = ns;
    TilingChoice c = cost(p, axis_tiles(p.rows, lo), std::move(strips));
    if (c.predicted_cycles < best_cycles) {
      best_cycles = c.predicted_cycles;
      best = std::move(c);
    }
  }
  if (best.bands.empty() && why != nullptr) *why = reason;
  return best;
}

}  // namespace strata::compiler
