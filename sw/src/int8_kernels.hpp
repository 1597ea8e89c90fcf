// SPDX-License-Identifier: Apache-2.0
// Fast kernels behind the golden model's accumulations (numerics.hpp): the
// int8 dot products of convolutions and fully connected layers, exact.
//
// Operands are widened to int16 and multiplied pairwise into int32 sums, the
// form a vector unit's multiply-add takes (x86 pmaddwd: two int8 x int8
// products never exceed 2^15, so nothing saturates). The sums wrap modulo
// 2^32 (int8_kernels.cpp is compiled with -fwrapv), the contract's int32
// accumulator, so every result equals the reference loop's
// static_cast<int32_t> of its int64 sum bit for bit, for any input.
#pragma once

#include <cstdint>
#include <functional>

namespace strata::kernels {

// out[r * out_stride + c] = bias[r] + sum_{k < depth} a[r * a_stride + k] * b[c * b_stride + k]
// for r < rows, c < cols. `a` and `b` rows hold `depth` values (more allowed).
void dot_block(const int16_t* a, int64_t a_stride, int64_t rows, const int16_t* b, int64_t b_stride,
               int64_t cols, int64_t depth, const int32_t* bias, int32_t* out, int64_t out_stride);

// The geometry of one convolution: input [cin][h][w], output [cout][ho][wo],
// `groups` equal channel groups, a square kernel, the window of output
// (oy, ox) starting at row oy * stride - pad_top, column ox * stride - pad_left.
struct ConvShape {
  int64_t cin, h, w, cout, ho, wo;
  int64_t groups, kernel, stride, pad_top, pad_left;
};

// Convolution accumulators out [cout][ho][wo] = bias + the taps inside the
// image, weights [cout][cin / groups][kernel][kernel] (int8, as the network
// stores them). Patches of 64 output pixels are gathered as int16 rows and
// multiplied by the filters with dot_block, on parallel_for's threads;
// depthwise layers (one channel per group) run a direct loop per channel.
void conv(const ConvShape& s, const int8_t* in, const int8_t* weights, const int32_t* bias,
          int32_t* out);

// Fully connected accumulators out[o] = bias[o] + sum_i w[o * n_in + i] * in[i].
void fc(const int8_t* in, int64_t n_in, const int8_t* weights, int64_t n_out, const int32_t* bias,
        int32_t* out);

// Calls fn(begin, end) on disjoint ranges covering [0, n), on up to
// worker_count() threads (the calling thread is one of them). fn must not
// throw.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

// Threads the kernels use: STRATA_THREADS when set (1 .. 64), else the
// machine's hardware threads.
int worker_count();

}  // namespace strata::kernels
