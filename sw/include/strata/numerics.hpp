// SPDX-License-Identifier: Apache-2.0
// The Strata numerics contract (docs/numerics.md), as plain functions.
// Every backend (golden model, RTL) must match these bit for bit.
//   - activations and weights int8 (zero point 0), bias and accumulators int32;
//   - requantisation per output channel: clamp(rshift_round(acc * M, S), lo, hi)
//     with M uint16, S in 0..47, round half toward +infinity;
//   - pooling ignores elements outside the input; average rounds half up.
// Functions throw strata::Error on impossible shapes or parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/hw_config.hpp"
#include "strata/tensor.hpp"

namespace strata {

inline constexpr int kMaxShift = hw::kMaxShift;  // config/default.yaml max_shift
inline constexpr int kInt8Min = -128;
inline constexpr int kInt8Max = 127;

// (v + 2^(s-1)) >> s with an arithmetic shift for s > 0; v for s == 0.
int64_t rshift_round(int64_t v, int s);

// One requantised value: clamp(rshift_round(acc * m, s), lo, hi).
int8_t requantize(int32_t acc, uint16_t m, int s, int lo, int hi);

// A lookup-table activation: 256 int8 entries, entry v + 128 for the value v.
inline constexpr int kActTableSize = 256;
// The table's value for a requantised (clamped) value v: table[v + 128];
// v itself when the table is empty (no table activation).
inline int8_t apply_table(const std::vector<int8_t>& table, int8_t v) {
  return table.empty() ? v : table[static_cast<size_t>(int{v} + 128)];
}

// Average of n valid elements with the contract's rounding:
// floor((2 * sum + n) / (2 * n)), i.e. round half toward +infinity.
int32_t avg_round(int64_t sum, int64_t n);

// Per-output-channel requantisation parameters and the layer's clamp.
struct Requant {
  std::vector<uint16_t> multiplier;  // M[c]
  std::vector<uint8_t> shift;        // S[c], 0..47
  int lo = kInt8Min;                 // clamp bounds, kInt8Min <= lo <= hi <= kInt8Max
  int hi = kInt8Max;
  // Lookup-table activation applied after the clamp: empty (none) or
  // kActTableSize entries, y = table[clamp(...) + 128].
  std::vector<int8_t> table;
};

struct ConvGeometry {
  int kernel = 1;  // square kernel side
  int stride = 1;
  int pad = 0;  // symmetric zero padding
};

struct PoolGeometry {
  int kernel = 2;
  int stride = 2;
  int pad = 0;
  bool ceil_mode = false;
};

// Zero padding on each side of a 2-D window walk, as the ISA's COMPUTE
// fields have it (ONNX's `pads` order: top, left, bottom, right).
struct Pads {
  int top = 0;
  int left = 0;
  int bottom = 0;
  int right = 0;

  bool operator==(const Pads&) const = default;
};

// A pooling window with its padding per side; PoolGeometry is the case of
// the same padding on every side (pool_window). Not an aggregate, so a braced
// list of four numbers still means a PoolGeometry.
struct PoolWindow {
  int kernel = 2;
  int stride = 2;
  Pads pad;
  bool ceil_mode = false;

  PoolWindow() = default;
  PoolWindow(int k, int s, Pads p, bool ceil) : kernel(k), stride(s), pad(p), ceil_mode(ceil) {}
};
PoolWindow pool_window(const PoolGeometry& g);

// floor((in + 2p - k) / s) + 1; throws when the padded input is smaller than k.
int conv_out_size(int in, const ConvGeometry& g);
// Floor or ceil mode (Caffe/PyTorch rule: the last window must start inside
// the input or its left padding); throws when no window fits.
int pool_out_size(int in, const PoolGeometry& g);
// Along one dimension with `before` and `after` padding (each below k):
// floor((in + before + after - k) / s) + 1, or in ceil mode ceil(...) + 1
// less one if that last window would start at or past in + before (it must
// start inside the input or the padding before it). Throws when no window
// fits. pool_out_size(in, g) is pool_out_size(in, k, s, p, p, ceil).
int pool_out_size(int in, int kernel, int stride, int before, int after, bool ceil_mode);

// A convolution window with padding per side and channel groups: the Cin
// input channels and the Cout filters split into `groups` equal parts, filter
// o reading the input channels of its part, o / (Cout / groups); weights
// [Cout][Cin / groups][K][K]. groups = Cin = Cout is a depthwise convolution.
// ConvGeometry is the case of one group and the same padding on every side.
// Not an aggregate, so a braced list of three numbers still means a ConvGeometry.
struct ConvWindow {
  int kernel = 1;
  int stride = 1;
  Pads pad;
  int groups = 1;

  ConvWindow() = default;
  ConvWindow(int k, int s, Pads p, int groups) : kernel(k), stride(s), pad(p), groups(groups) {}
};
ConvWindow conv_window(const ConvGeometry& g);

// Along one dimension with `before` and `after` padding:
// floor((in + before + after - k) / s) + 1; throws when the padded input is
// smaller than k. conv_out_size(in, g) is conv_out_size(in, k, s, p, p).
int conv_out_size(int in, int kernel, int stride, int before, int after);

// Convolution accumulators [Cout][Ho][Wo] from in [Cin][H][W],
// w [Cout][Cin / groups][K][K], bias [Cout]. Window (oy, ox) starts at row
// oy * stride - pad.top, column ox * stride - pad.left; taps outside the
// image contribute nothing.
Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvGeometry& g);
Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvWindow& g);

// The requantisation of a residual addition, per channel (a per-layer value
// repeated for every channel): multipliers of the two inputs, one shift, the
// activation clamp.
struct AddRequant {
  std::vector<uint16_t> mult_a;  // Ma[c]
  std::vector<uint16_t> mult_b;  // Mb[c]
  std::vector<uint8_t> shift;    // S[c], 0..47
  int lo = kInt8Min;
  int hi = kInt8Max;
  std::vector<int8_t> table;  // empty or kActTableSize entries (Requant::table)
};

// Element-wise sum of two [C][H][W] maps of one shape:
// y = clamp(rshift_round(a * Ma[c] + b * Mb[c], S[c]), lo, hi), exact in int64,
// then the table when there is one.
Tensor<int8_t> residual_add(const Tensor<int8_t>& a, const Tensor<int8_t>& b, const AddRequant& rq);

// Channel-wise product (squeeze-and-excitation) of a [C][H][W] map and a
// [C][1][1] vector: acc[c][y][x] = x[c][y][x] * s[c] (|acc| <= 2^14); the layer
// requantises it with `requantize` as a convolution's accumulators.
Tensor<int32_t> channel_mul_acc(const Tensor<int8_t>& x, const Tensor<int8_t>& s);

// Average of each channel's whole map: [C][H][W] -> [C][1][1],
// avg_round(sum, H * W).
Tensor<int8_t> global_avgpool(const Tensor<int8_t>& in);

// Fully connected accumulators [Cout][1][1]: the input is flattened in C, H, W
// order (any rank), w is [Cout][Cin_flat] (or any shape with that many elements
// per output), bias [Cout].
Tensor<int32_t> fc_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                       const Tensor<int32_t>& bias);

// The same accumulators by the formula loops of docs/numerics.md (an int64
// sum per output, truncated to int32), slow and obviously right: the tests
// compare conv2d_acc and fc_acc, which run on exact vectorised, threaded
// kernels, with them.
namespace reference {
Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvWindow& g);
Tensor<int32_t> fc_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                       const Tensor<int32_t>& bias);
}  // namespace reference

// Requantise accumulators [C][H][W] channel by channel, then apply the
// table activation when rq.table is not empty.
Tensor<int8_t> requantize(const Tensor<int32_t>& acc, const Requant& rq);

// Pooling over [C][H][W]; elements outside the input are ignored.
Tensor<int8_t> maxpool(const Tensor<int8_t>& in, const PoolGeometry& g);
Tensor<int8_t> avgpool(const Tensor<int8_t>& in, const PoolGeometry& g);
// The same with padding per side (window (oy, ox) starts at row
// oy * stride - pad.top, column ox * stride - pad.left).
Tensor<int8_t> maxpool(const Tensor<int8_t>& in, const PoolWindow& g);
Tensor<int8_t> avgpool(const Tensor<int8_t>& in, const PoolWindow& g);

// [C][H][W] maps of one H x W stacked along the channels, in order.
Tensor<int8_t> concat_channels(const std::vector<Tensor<int8_t>>& maps);
// Channels [begin, end) of a [C][H][W] map.
Tensor<int8_t> slice_channels(const Tensor<int8_t>& in, int64_t begin, int64_t end);
// Nearest-neighbour upsampling of [C][H][W] to [C][H * s][W * s]: output
// (c, y, x) is input (c, y / s, x / s).
Tensor<int8_t> upsample_nearest(const Tensor<int8_t>& in, int64_t s);

// Standalone clamp (ReLU is clamp(x, 0, 127)).
Tensor<int8_t> clamp(const Tensor<int8_t>& in, int lo, int hi);

// Worst-case accumulator range of one output channel over all int8 inputs in
// [in_lo, in_hi] (and 0, for padded taps): bias + sum of each weight's extreme
// products. It also bounds every partial sum, in any summation order, so a
// layer whose range fits int32 can never wrap the hardware accumulator; one
// whose range leaves int32 must be rejected.
struct AccRange {
  int64_t min = 0;
  int64_t max = 0;
};
AccRange worst_case_acc(const int8_t* weights, int64_t count, int32_t bias, int in_lo = kInt8Min,
                        int in_hi = kInt8Max);

}  // namespace strata
