// SPDX-License-Identifier: Apache-2.0
// Row bands and column strips of a map op (docs/compiler.md, "Large maps"):
// the geometry of one tile along one axis (what it produces, what it reads,
// the padding it keeps), and the choice of band and strip sizes for a target.
// Internal to strata_core and its tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::compiler {

// A map op along one axis (rows or columns): the convolution (a POOL op:
// kernel 1, stride 1, no padding, so its output is its input) and the pool
// that follows it, if any. Padding may differ before (top / left) and after
// (bottom / right) the image.
struct AxisGeometry {
  int64_t in = 0;  // input size
  int kernel = 1, stride = 1, pad_before = 0, pad_after = 0;
  int64_t conv_out = 0;  // convolution output size
  bool pooled = false;
  int pool_kernel = 1, pool_stride = 1, pool_pad_before = 0, pool_pad_after = 0;
  bool pool_ceil = false;
  int64_t out = 0;  // final output size: pooled, or conv_out
};

// One tile of an axis: the final outputs it produces, the convolution outputs
// it computes for them (with a fused pool, the rows of the windows that reach
// into a neighbour tile are computed by both), the inputs it reads (with the
// halo of the kernel), and the padding each instruction keeps: the image's
// padding at the image's edges, none at an edge inside the image. The
// hardware's size rules applied to the tile give exactly its ranges (checked).
struct AxisTile {
  int64_t out_begin = 0, out_end = 0;
  int64_t conv_begin = 0, conv_end = 0;
  int64_t in_begin = 0, in_end = 0;
  int pad_before = 0, pad_after = 0;
  int pool_pad_before = 0, pool_pad_after = 0;
  bool pool_ceil = false;  // the layer's rounding (every tile: one flag per instruction)
};

// The output size of a window walk over `in` with the given kernel, stride and
// padding: floor((in + a + b - k) / s) + 1, or in ceil mode rounded up with the
// rule that the last window starts inside the input or the padding before it.
// 0 when no window fits.
int64_t window_count(int64_t in, int kernel, int stride, int pad_before, int pad_after,
                     bool ceil_mode);

// The tile of final outputs [out_begin, out_end) of `g`. Throws an internal
// strata::Error when the hardware rules would not reproduce the tile's ranges.
AxisTile axis_tile(const AxisGeometry& g, int64_t out_begin, int64_t out_end);

// The whole axis as one instruction runs it on a map kept whole in a bank: every
// input and convolution output (the stored map's sizes), the layer's padding.
AxisTile whole_axis(const AxisGeometry& g);

// `count` tiles covering g.out as evenly as possible (sizes differ by at most 1).
std::vector<AxisTile> axis_tiles(const AxisGeometry& g, int64_t count);

// What the choice of a tiling needs to know about an op and its target.
struct TilingProblem {
  AxisGeometry rows, cols;
  int64_t in_groups = 1;       // input words per pixel
  int64_t pass_groups = 1;     // CONV: input words per pixel each pass reads (grouped ops: fewer)
  bool grouped = false;        // each pass reads only its own groups: a tile holds those
                               // (in_groups = pass_groups) and every tile runs per pass
  int64_t out_groups = 1;      // output words per pixel
  int64_t passes = 1;          // CONV: passes of P output channels (each writes one group)
  bool pool_op = false;        // a POOL instruction handles every group at once
  int64_t window_beats = 0;    // DEPTHWISE: beats per window (B), its input rows through the
                               // line buffer; 0: CONV or POOL
  int64_t in_buf_words = 0;    // one input buffer (two alternate)
  int64_t out_buf_words = 0;   // one output buffer (two alternate); 0: output on chip
  int64_t line_buffer = 0;     // max_image_width: widest pooling (DEPTHWISE: input) row
  bool strips_allowed = true;  // external column offsets fit the AXI beat
  int64_t weight_words = 0;    // streamed weights: words per PE per pass (0 = resident)
  // Split passes (docs/compiler.md, "Split passes"): COMPUTEs per pass, and the words of
  // int32 partial sums per convolution output pixel (4; 0: unsplit) that a tile keeps in
  // its own spill buffer of `spill_buf_words`, or (0) after its results in the output
  // buffer. A split pass reloads its weights for every tile.
  int64_t chunks = 1;
  int64_t spill_words = 0;
  int64_t spill_buf_words = 0;
  int64_t pes = 1;
  int64_t words_per_beat_inv = 1;  // AXI beats per N-byte word (>= 1)
};

// A chosen tiling: bands x strips, loop order and the predicted cost.
struct TilingChoice {
  std::vector<AxisTile> bands, strips;
  bool pass_outer = false;       // streamed weights: every tile per pass (inputs reloaded)
  int64_t compute_beats = 0;     // PE-array beats, halo recomputation included (DEPTHWISE: the
                                 // larger of its beats and its input words, one per cycle)
  int64_t ext_words = 0;         // N-byte words moved over AXI (loads, stores, weights)
  int64_t predicted_cycles = 0;  // max(compute, memory) + a fixed cost per instruction
};

// The bands and strips that minimise the predicted cycles within the buffers,
// or an empty choice (no bands) with `why` set when no tile fits.
TilingChoice choose_tiling(const TilingProblem& p, std::string* why);

}  // namespace strata::compiler
