// SPDX-License-Identifier: Apache-2.0
// Implementation of the numerics contract; see numerics.hpp. The loops
// follow the formulas in docs/numerics.md, except the dot products of
// convolutions and fully connected layers, which run on the exact fast
// kernels of int8_kernels.cpp (the formula loops stay as strata::reference,
// which the tests compare them with).
#include "strata/numerics.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <limits>

#include "int8_kernels.hpp"
#include "strata/error.hpp"

namespace strata {

int64_t rshift_round(int64_t v, int s) {
  if (s < 0 || s > kMaxShift) throw Error(fmt::format("shift {} outside 0..{}", s, kMaxShift));
  if (s == 0) return v;
  return (v + (int64_t{1} << (s - 1))) >> s;  // >> on signed is arithmetic (C++20)
}

namespace {

// A table activation has exactly kActTableSize entries (or none).
void check_table(const std::vector<int8_t>& table) {
  if (!table.empty() && table.size() != kActTableSize) {
    throw Error(
        fmt::format("activation table has {} entries, expected {}", table.size(), kActTableSize));
  }
}

}  // namespace

int8_t requantize(int32_t acc, uint16_t m, int s, int lo, int hi) {
  const int64_t scaled = rshift_round(static_cast<int64_t>(acc) * m, s);
  return static_cast<int8_t>(std::clamp<int64_t>(scaled, lo, hi));
}

int32_t avg_round(int64_t sum, int64_t n) {
  if (n <= 0) throw Error("average over an empty window");
  const int64_t num = 2 * sum + n;
  const int64_t den = 2 * n;
  int64_t q = num / den;                   // truncates toward zero
  if ((num % den != 0) && (num < 0)) --q;  // make it floor
  return static_cast<int32_t>(q);
}

int conv_out_size(int in, const ConvGeometry& g) {
  if (in < 1 || g.kernel < 1 || g.stride < 1 || g.pad < 0) {
    throw Error(fmt::format("invalid convolution geometry: input {}, kernel {}, stride {}, pad {}",
                            in, g.kernel, g.stride, g.pad));
  }
  const int span = in + 2 * g.pad - g.kernel;
  if (span < 0) {
    throw Error(fmt::format("kernel {} larger than the padded input {} (input {}, pad {})",
                            g.kernel, in + 2 * g.pad, in, g.pad));
  }
  return span / g.stride + 1;
}

int conv_out_size(int in, int kernel, int stride, int before, int after) {
  if (in < 1 || kernel < 1 || stride < 1 || before < 0 || after < 0) {
    throw Error(
        fmt::format("invalid convolution geometry: input {}, kernel {}, stride {}, pad {} "
                    "before and {} after",
                    in, kernel, stride, before, after));
  }
  const int span = in + before + after - kernel;
  if (span < 0) {
    throw Error(fmt::format("kernel {} larger than the padded input {} (input {}, pads {} and {})",
                            kernel, in + before + after, in, before, after));
  }
  return span / stride + 1;
}

ConvWindow conv_window(const ConvGeometry& g) {
  return ConvWindow{g.kernel, g.stride, Pads{g.pad, g.pad, g.pad, g.pad}, 1};
}

int pool_out_size(int in, const PoolGeometry& g) {
  if (in < 1 || g.kernel < 1 || g.stride < 1 || g.pad < 0) {
    throw Error(fmt::format("invalid pooling geometry: input {}, kernel {}, stride {}, pad {}", in,
                            g.kernel, g.stride, g.pad));
  }
  if (g.pad >= g.kernel) {
    throw Error(fmt::format("pooling pad {} must be smaller than the kernel {}", g.pad, g.kernel));
  }
  const int span = in + 2 * g.pad - g.kernel;
  if (span < 0) {
    throw Error(
        fmt::format("pooling kernel {} larger than the padded input {}", g.kernel, in + 2 * g.pad));
  }
  return pool_out_size(in, g.kernel, g.stride, g.pad, g.pad, g.ceil_mode);
}

int pool_out_size(int in, int kernel, int stride, int before, int after, bool ceil_mode) {
  if (in < 1 || kernel < 1 || stride < 1 || before < 0 || after < 0) {
    throw Error(
        fmt::format("invalid pooling geometry: input {}, kernel {}, stride {}, pad {} "
                    "before and {} after",
                    in, kernel, stride, before, after));
  }
  if (before >= kernel || after >= kernel) {
    throw Error(fmt::format("pooling pads {} and {} must be smaller than the kernel {}", before,
                            after, kernel));
  }
  const int span = in + before + after - kernel;
  if (span < 0) {
    throw Error(fmt::format("pooling kernel {} larger than the padded input {}", kernel,
                            in + before + after));
  }
  int out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // The last window must start inside the input or the padding before it.
  if (ceil_mode && (out - 1) * stride >= in + before) --out;
  return out;
}

PoolWindow pool_window(const PoolGeometry& g) {
  return PoolWindow{g.kernel, g.stride, Pads{g.pad, g.pad, g.pad, g.pad}, g.ceil_mode};
}

namespace {

void require_rank(const Tensor<int8_t>& t, size_t rank, const char* what) {
  if (t.rank() != rank) {
    throw Error(fmt::format("{} must have rank {}, has rank {}", what, rank, t.rank()));
  }
}

}  // namespace

Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvGeometry& g) {
  return conv2d_acc(in, w, bias, conv_window(g));
}

namespace {

// The shape of a convolution after the contract's checks (numerics.hpp).
kernels::ConvShape conv_shape(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                              const Tensor<int32_t>& bias, const ConvWindow& g) {
  require_rank(in, 3, "conv input");
  require_rank(w, 4, "conv weights");
  const int64_t cin = in.dim(0), h = in.dim(1), wd = in.dim(2);
  const int64_t cout = w.dim(0);
  if (g.groups < 1 || cin % g.groups != 0 || cout % g.groups != 0) {
    throw Error(fmt::format("{} groups do not divide {} input and {} output channels", g.groups,
                            cin, cout));
  }
  const int64_t cin_g = cin / g.groups;
  if (w.dim(1) != cin_g || w.dim(2) != g.kernel || w.dim(3) != g.kernel) {
    throw Error(
        fmt::format("conv weights [{}][{}][{}][{}] do not match {} input channels per "
                    "group and kernel {}",
                    w.dim(0), w.dim(1), w.dim(2), w.dim(3), cin_g, g.kernel));
  }
  if (bias.rank() != 1 || bias.dim(0) != cout) {
    throw Error(fmt::format("conv bias must be [{}]", cout));
  }
  const int ho = conv_out_size(static_cast<int>(h), g.kernel, g.stride, g.pad.top, g.pad.bottom);
  const int wo = conv_out_size(static_cast<int>(wd), g.kernel, g.stride, g.pad.left, g.pad.right);
  return kernels::ConvShape{cin,      h,        wd,       cout,      ho,        wo,
                            g.groups, g.kernel, g.stride, g.pad.top, g.pad.left};
}

void check_fc(const Tensor<int8_t>& in, const Tensor<int8_t>& w, const Tensor<int32_t>& bias) {
  const int64_t n_in = in.size();
  if (w.rank() < 2 || w.dim(0) < 1) throw Error("fc weights must be [Cout][Cin]");
  const int64_t cout = w.dim(0);
  if (w.size() != cout * n_in) {
    throw Error(fmt::format("fc weights have {} inputs per output, the input has {} elements",
                            w.size() / cout, n_in));
  }
  if (bias.rank() != 1 || bias.dim(0) != cout) {
    throw Error(fmt::format("fc bias must be [{}]", cout));
  }
}

}  // namespace

Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvWindow& g) {
  const kernels::ConvShape s = conv_shape(in, w, bias, g);
  Tensor<int32_t> acc({s.cout, s.ho, s.wo});
  kernels::conv(s, in.data(), w.data(), bias.data(), acc.data());
  return acc;
}

namespace reference {

Tensor<int32_t> conv2d_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                           const Tensor<int32_t>& bias, const ConvWindow& g) {
  const kernels::ConvShape s = conv_shape(in, w, bias, g);
  const int64_t cin_g = s.cin / s.groups, cout_g = s.cout / s.groups;
  Tensor<int32_t> acc({s.cout, s.ho, s.wo});
  for (int64_t co = 0; co < s.cout; ++co) {
    const int64_t c0 = co / cout_g * cin_g;  // first input channel of the filter's group
    for (int64_t y = 0; y < s.ho; ++y) {
      for (int64_t x = 0; x < s.wo; ++x) {
        int64_t sum = bias(co);
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          for (int ky = 0; ky < g.kernel; ++ky) {
            const int64_t iy = y * g.stride - g.pad.top + ky;
            if (iy < 0 || iy >= s.h) continue;
            for (int kx = 0; kx < g.kernel; ++kx) {
              const int64_t ix = x * g.stride - g.pad.left + kx;
              if (ix < 0 || ix >= s.w) continue;
              sum += int64_t{w(co, ci, ky, kx)} * in(c0 + ci, iy, ix);
            }
          }
        }
        acc(co, y, x) = static_cast<int32_t>(sum);  // modulo 2^32, the int32 accumulator
      }
    }
  }
  return acc;
}

Tensor<int32_t> fc_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                       const Tensor<int32_t>& bias) {
  check_fc(in, w, bias);
  const int64_t n_in = in.size(), cout = w.dim(0);
  Tensor<int32_t> acc({cout, 1, 1});
  for (int64_t co = 0; co < cout; ++co) {
    int64_t sum = bias(co);
    for (int64_t i = 0; i < n_in; ++i) sum += int64_t{w[co * n_in + i]} * in[i];
    acc[co] = static_cast<int32_t>(sum);
  }
  return acc;
}

}  // namespace reference

Tensor<int8_t> residual_add(const Tensor<int8_t>& a, const Tensor<int8_t>& b,
                            const AddRequant& rq) {
  require_rank(a, 3, "add input");
  if (a.shape() != b.shape()) {
    throw Error(fmt::format("add inputs differ in shape: [{}] and [{}]", fmt::join(a.shape(), ", "),
                            fmt::join(b.shape(), ", ")));
  }
  const int64_t c = a.dim(0), plane = a.dim(1) * a.dim(2);
  const auto n = static_cast<size_t>(c);
  if (rq.mult_a.size() != n || rq.mult_b.size() != n || rq.shift.size() != n) {
    throw Error(fmt::format("add requantisation needs {} values per channel parameter", c));
  }
  if (rq.lo < kInt8Min || rq.lo > rq.hi || rq.hi > kInt8Max) {
    throw Error(fmt::format("add clamp [{}, {}] outside int8", rq.lo, rq.hi));
  }
  check_table(rq.table);
  Tensor<int8_t> out(a.shape());
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = ch * plane; i < (ch + 1) * plane; ++i) {
      const int64_t sum =
          int64_t{a.values()[i]} * rq.mult_a[ch] + int64_t{b.values()[i]} * rq.mult_b[ch];
      out.values()[i] = apply_table(rq.table, static_cast<int8_t>(std::clamp<int64_t>(
                                                  rshift_round(sum, rq.shift[ch]), rq.lo, rq.hi)));
    }
  }
  return out;
}

Tensor<int32_t> channel_mul_acc(const Tensor<int8_t>& x, const Tensor<int8_t>& s) {
  require_rank(x, 3, "mul input");
  if (s.shape() != Shape{x.dim(0), 1, 1}) {
    throw Error(fmt::format("mul vector has shape [{}], expected [{}, 1, 1] for the map [{}]",
                            fmt::join(s.shape(), ", "), x.dim(0), fmt::join(x.shape(), ", ")));
  }
  const int64_t plane = x.dim(1) * x.dim(2);
  Tensor<int32_t> acc(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) {
    acc.values()[i] = int32_t{x.values()[i]} * s.values()[i / plane];
  }
  return acc;
}

Tensor<int8_t> global_avgpool(const Tensor<int8_t>& in) {
  require_rank(in, 3, "global average pool input");
  const int64_t c = in.dim(0), plane = in.dim(1) * in.dim(2);
  Tensor<int8_t> out({c, 1, 1});
  for (int64_t ch = 0; ch < c; ++ch) {
    int64_t sum = 0;
    for (int64_t i = ch * plane; i < (ch + 1) * plane; ++i) sum += in.values()[i];
    out.values()[ch] = static_cast<int8_t>(avg_round(sum, plane));
  }
  return out;
}

Tensor<int32_t> fc_acc(const Tensor<int8_t>& in, const Tensor<int8_t>& w,
                       const Tensor<int32_t>& bias) {
  check_fc(in, w, bias);
  Tensor<int32_t> acc({w.dim(0), 1, 1});
  kernels::fc(in.data(), in.size(), w.data(), w.dim(0), bias.data(), acc.data());
  return acc;
}

Tensor<int8_t> requantize(const Tensor<int32_t>& acc, const Requant& rq) {
  if (acc.rank() != 3) throw Error("requantise: accumulators must be [C][H][W]");
  const int64_t c = acc.dim(0);
  if (static_cast<int64_t>(rq.multiplier.size()) != c ||
      static_cast<int64_t>(rq.shift.size()) != c) {
    throw Error(fmt::format("requantise: {} channels but {} multipliers and {} shifts", c,
                            rq.multiplier.size(), rq.shift.size()));
  }
  if (rq.lo < kInt8Min || rq.hi > kInt8Max || rq.lo > rq.hi) {
    throw Error(
        fmt::format("clamp bounds [{}, {}] must satisfy -128 <= lo <= hi <= 127", rq.lo, rq.hi));
  }
  check_table(rq.table);
  Tensor<int8_t> out(acc.shape());
  const int64_t plane = acc.dim(1) * acc.dim(2);
  for (int64_t ch = 0; ch < c; ++ch) {
    // requantize(acc, m, s, lo, hi) with the channel's checks and constants
    // taken out of the loop: rshift_round(acc * m, s) = (acc * m + half) >> s.
    const int s = rq.shift[ch];
    rshift_round(0, s);  // throws on a shift outside 0..kMaxShift
    const int64_t m = rq.multiplier[ch], half = s == 0 ? 0 : int64_t{1} << (s - 1);
    const int32_t* a = acc.data() + ch * plane;
    int8_t* o = out.data() + ch * plane;
    for (int64_t i = 0; i < plane; ++i) {
      o[i] = static_cast<int8_t>(std::clamp<int64_t>((a[i] * m + half) >> s, rq.lo, rq.hi));
    }
    if (!rq.table.empty()) {
      for (int64_t i = 0; i < plane; ++i) o[i] = apply_table(rq.table, o[i]);
    }
  }
  return out;
}

namespace {

// Visits every pooling window; f(c, oy, ox, elements) gets the valid elements.
template <typename F>
Tensor<int8_t> pool(const Tensor<int8_t>& in, const PoolWindow& g, F reduce) {
  require_rank(in, 3, "pooling input");
  const int64_t c = in.dim(0), h = in.dim(1), w = in.dim(2);
  const int ho =
      pool_out_size(static_cast<int>(h), g.kernel, g.stride, g.pad.top, g.pad.bottom, g.ceil_mode);
  const int wo =
      pool_out_size(static_cast<int>(w), g.kernel, g.stride, g.pad.left, g.pad.right, g.ceil_mode);
  Tensor<int8_t> out({c, ho, wo});
  std::vector<int8_t> window;
  window.reserve(static_cast<size_t>(g.kernel) * g.kernel);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int oy = 0; oy < ho; ++oy) {
      for (int ox = 0; ox < wo; ++ox) {
        window.clear();
        for (int ky = 0; ky < g.kernel; ++ky) {
          const int64_t iy = int64_t{oy} * g.stride - g.pad.top + ky;
          if (iy < 0 || iy >= h) continue;
          for (int kx = 0; kx < g.kernel; ++kx) {
            const int64_t ix = int64_t{ox} * g.stride - g.pad.left + kx;
            if (ix < 0 || ix >= w) continue;
            window.push_back(in(ch, iy, ix));
          }
        }
        out(ch, oy, ox) = reduce(window);
      }
    }
  }
  return out;
}

}  // namespace

Tensor<int8_t> maxpool(const Tensor<int8_t>& in, const PoolWindow& g) {
  return pool(in, g, [](const std::vector<int8_t>& v) {
    if (v.empty()) throw Error("max pooling over an empty window");
    return *std::max_element(v.begin(), v.end());
  });
}

Tensor<int8_t> avgpool(const Tensor<int8_t>& in, const PoolWindow& g) {
  return pool(in, g, [](const std::vector<int8_t>& v) {
    int64_t sum = 0;
    for (int8_t e : v) sum += e;
    return static_cast<int8_t>(avg_round(sum, static_cast<int64_t>(v.size())));
  });
}

namespace {

// The symmetric geometry's own checks (their messages name the one pad).
void check_pool(const Tensor<int8_t>& in, const PoolGeometry& g) {
  require_rank(in, 3, "pooling input");
  pool_out_size(static_cast<int>(in.dim(1)), g);
  pool_out_size(static_cast<int>(in.dim(2)), g);
}

}  // namespace

Tensor<int8_t> maxpool(const Tensor<int8_t>& in, const PoolGeometry& g) {
  check_pool(in, g);
  return maxpool(in, pool_window(g));
}

Tensor<int8_t> avgpool(const Tensor<int8_t>& in, const PoolGeometry& g) {
  check_pool(in, g);
  return avgpool(in, pool_window(g));
}

Tensor<int8_t> concat_channels(const std::vector<Tensor<int8_t>>& maps) {
  if (maps.empty()) throw Error("concat of no maps");
  int64_t c = 0;
  for (const Tensor<int8_t>& m : maps) {
    require_rank(m, 3, "concat input");
    if (m.dim(1) != maps[0].dim(1) || m.dim(2) != maps[0].dim(2)) {
      throw Error(fmt::format("concat inputs of {} x {} and {} x {}", maps[0].dim(1),
                              maps[0].dim(2), m.dim(1), m.dim(2)));
    }
    c += m.dim(0);
  }
  Tensor<int8_t> out({c, maps[0].dim(1), maps[0].dim(2)});
  auto at = out.values().begin();
  for (const Tensor<int8_t>& m : maps) at = std::copy(m.values().begin(), m.values().end(), at);
  return out;
}

Tensor<int8_t> slice_channels(const Tensor<int8_t>& in, int64_t begin, int64_t end) {
  require_rank(in, 3, "slice input");
  if (begin < 0 || end > in.dim(0) || begin >= end) {
    throw Error(fmt::format("channel slice [{}, {}) of a {}-channel map", begin, end, in.dim(0)));
  }
  const int64_t plane = in.dim(1) * in.dim(2);
  Tensor<int8_t> out({end - begin, in.dim(1), in.dim(2)});
  std::copy(in.values().begin() + begin * plane, in.values().begin() + end * plane,
            out.values().begin());
  return out;
}

Tensor<int8_t> upsample_nearest(const Tensor<int8_t>& in, int64_t s) {
  require_rank(in, 3, "upsample input");
  if (s < 1) throw Error(fmt::format("upsampling factor {} must be at least 1", s));
  const int64_t c = in.dim(0), h = in.dim(1), w = in.dim(2);
  Tensor<int8_t> out({c, h * s, w * s});
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t y = 0; y < h * s; ++y) {
      for (int64_t x = 0; x < w * s; ++x) out(ch, y, x) = in(ch, y / s, x / s);
    }
  }
  return out;
}

Tensor<int8_t> clamp(const Tensor<int8_t>& in, int lo, int hi) {
  if (lo < kInt8Min || hi > kInt8Max || lo > hi) {
    throw Error(fmt::format("clamp bounds [{}, {}] must satisfy -128 <= lo <= hi <= 127", lo, hi));
  }
  Tensor<int8_t> out(in.shape());
  for (int64_t i = 0; i < in.size(); ++i)
    out[i] = static_cast<int8_t>(std::clamp<int>(in[i], lo, hi));
  return out;
}

AccRange worst_case_acc(const int8_t* weights, int64_t count, int32_t bias, int in_lo, int in_hi) {
  AccRange r{bias, bias};
  for (int64_t i = 0; i < count; ++i) {
    const int64_t a = int64_t{weights[i]} * in_lo;
    const int64_t b = int64_t{weights[i]} * in_hi;
    // Each term's range includes 0 (a padded tap), so every partial sum of any
    // subset of taps, in any order, also stays inside [min, max].
    r.min += std::min({a, b, int64_t{0}});
    r.max += std::max({a, b, int64_t{0}});
  }
  return r;
}

}  // namespace strata
