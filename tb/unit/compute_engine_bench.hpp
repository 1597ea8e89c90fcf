// SPDX-License-Identifier: Apache-2.0
// Bench infrastructure of the COMPUTE engine (tb/unit/strata_compute_engine_tb_top.sv):
//   - Memories: the bench's view of the banks, PE caches and parameter RAM;
//   - ConvLayer / FcLayer / PoolLayer / DepthwiseLayer: one instruction's
//     geometry, its isa::ComputeInstr (encoded with strata/isa.hpp) and its
//     expected results from strata/numerics.hpp (conv2d_acc, fc_acc,
//     requantize, maxpool, avgpool, clamp);
//   - ComputeEngineBench: the fixture: fills banks / caches / parameters
//     through the ports, runs one instruction with a semaphore model, random
//     back-pressure and input gaps, concurrent load-engine cache writes and an
//     emulated load engine feeding L2C units; records every bank read, bank
//     write, PE cache write and release; reads results back through the store
//     port; every wait has a cycle budget.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Vstrata_compute_engine_tb_top.h"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/isa_sim.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {

using Vtop = Vstrata_compute_engine_tb_top;

inline constexpr int kP = hw::kPes;
inline constexpr int kN = hw::kLanes;
inline constexpr int kBanks = hw::kBanks;
inline constexpr int kBankDepth = hw::kBankDepth;
inline constexpr int kCacheDepth = hw::kPeCacheDepth;
inline constexpr int kParamDepth = hw::kParamDepth;
static_assert(kP == kN, "the engine requires P = N");
static_assert(kN * 8 == 64, "the bench packs words into 64 bits");

using Word = std::array<int8_t, kN>;

inline uint64_t pack(const Word& w) {
  uint64_t v = 0;
  for (int l = 0; l < kN; ++l) v |= uint64_t(uint8_t(w[l])) << (8 * l);
  return v;
}

inline Word unpack(uint64_t v) {
  Word w{};
  for (int l = 0; l < kN; ++l) w[l] = int8_t(uint8_t(v >> (8 * l)));
  return w;
}

struct Param {
  int32_t bias = 0;
  uint16_t mult = 0;
  uint8_t shift = 0;
  // The parameter RAM entry of docs/isa.md: bias bytes 0-3, M 4-5, S 6.
  uint64_t entry() const {
    return uint64_t(uint32_t(bias)) | uint64_t(mult) << 32 | uint64_t(shift) << 48;
  }
};

// The bench's view of the engine's memories (what it wrote or saw written).
struct Memories {
  std::vector<std::vector<Word>> bank =
      std::vector<std::vector<Word>>(kBanks, std::vector<Word>(kBankDepth));
  std::vector<std::vector<Word>> cache =
      std::vector<std::vector<Word>>(kP, std::vector<Word>(kCacheDepth));
  std::vector<Param> param = std::vector<Param>(kParamDepth);
};

// Expected result words: one per destination word (BANK / PE_CACHE: that word;
// PE_TRANSPOSE: one per PE and word).
struct Expected {
  bool bank = true;  // destination is a bank (else PE caches)
  int id = 0;        // bank (BANK) or PE (PE_CACHE); PE_TRANSPOSE: -1
  struct Item {
    int pe = 0;                       // PE of the word (PE_CACHE / PE_TRANSPOSE)
    int addr = 0;                     // word address
    int group = 0, row = 0, col = 0;  // position (FC: row = neuron / word)
    Word word{};
  };
  std::vector<Item> items;
  int rows = 0;  // result rows (rel0 units in fine-grained mode)

  // One word per pixel of frame t [kN][h][w] (group g), in PE pe, row y at
  // word base + y * row_stride.
  void add_frame(const Tensor<int8_t>& t, int pe, int g, int base, int row_stride) {
    for (int y = 0; y < t.dim(1); ++y) {
      for (int x = 0; x < t.dim(2); ++x) {
        Item it;
        it.pe = pe;
        it.addr = base + y * row_stride + x;
        it.group = g;
        it.row = y;
        it.col = x;
        for (int l = 0; l < kN; ++l) it.word[l] = t(l, y, x);
        items.push_back(it);
      }
    }
  }
};

// Output size along one dimension with padding a before and b after the input.
inline int conv_out(int in, int k, int s, int a, int b) { return (in + a + b - k) / s + 1; }

// Requantisation parameters that keep typical results inside int8 for a dot
// product over `terms` int8 x int8 products.
inline Param random_param(std::mt19937_64& rng, int terms) {
  std::uniform_int_distribution<int> bias(-3000, 3000), mult(1, 65535), jitter(-2, 2);
  Param q;
  q.bias = bias(rng);
  q.mult = uint16_t(mult(rng));
  const double spread = 128.0 * 128.0 * std::sqrt(double(std::max(terms, 1))) / 4.0;
  int s = int(std::lround(std::log2(spread * q.mult / 64.0))) + jitter(rng);
  q.shift = uint8_t(std::clamp(s, 0, kMaxShift));
  return q;
}

// Partial sums (docs/isa.md, "Partial sums"): the int32 of lane p of pixel i
// in the layout acc_out writes and acc_in reads (4 words per pixel, word k
// byte k of every lane).
inline int32_t partial_sum(const Memories& m, int bank, int base, int i, int p) {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= uint32_t(uint8_t(m.bank[bank][base + 4 * i + k][p])) << (8 * k);
  return int32_t(v);
}

// The 4 words of one pixel's accumulators a[p] as acc_out writes them.
inline std::array<Word, 4> partial_words(const std::array<int32_t, kP>& a) {
  std::array<Word, 4> w{};
  for (int k = 0; k < 4; ++k) {
    for (int p = 0; p < kP; ++p) w[k][p] = int8_t(uint8_t(uint32_t(a[p]) >> (8 * k)));
  }
  return w;
}

// The partial-sum fields of a CONV or FC (both off: the layer is unsplit).
struct PartialSums {
  bool acc_in = false, acc_out = false;
  int acc_id = 0, acc_base = 0;

  void set_acc_fields(isa::ComputeInstr& c) const {
    c.acc_in = acc_in;
    c.acc_out = acc_out;
    c.acc_id = acc_id;
    c.acc_base = acc_base;
  }
  std::string acc_str() const {
    return fmt::format("{}{}", acc_in ? fmt::format(" acc_in {}@{}", acc_id, acc_base) : "",
                       acc_out ? " acc_out" : "");
  }
};

// ---------------------------------------------------------------------------

// The pooling stage: the whole of a POOL instruction, or the one after a CONV.
struct PoolStage {
  bool avg = false, ceil_mode = false;
  int pk = 1, ps = 1, pp = 0, post_lo = -128, post_hi = 127;
  // Padding per side (top, left, bottom, right); -1: pp.
  std::array<int, 4> pp_side{-1, -1, -1, -1};

  Pads pool_pads() const {
    const auto side = [&](int i) { return pp_side[i] < 0 ? pp : pp_side[i]; };
    return Pads{side(0), side(1), side(2), side(3)};
  }
  PoolWindow pool_window() const { return PoolWindow{pk, ps, pool_pads(), ceil_mode}; }
  int pool_out_h(int h) const {
    return pool_out_size(h, pk, ps, pool_pads().top, pool_pads().bottom, ceil_mode);
  }
  int pool_out_w(int w) const {
    return pool_out_size(w, pk, ps, pool_pads().left, pool_pads().right, ceil_mode);
  }
  // Whether a window fits the padded h x w input.
  bool pool_fits(int h, int w) const {
    const Pads q = pool_pads();
    return h + q.top + q.bottom >= pk && w + q.left + q.right >= pk;
  }
  std::string pool_pad_str() const {
    const Pads q = pool_pads();
    return fmt::format("p{},{},{},{}", q.top, q.left, q.bottom, q.right);
  }

  // x pooled and clamped to [post_lo, post_hi], as the engine's pool unit does.
  Tensor<int8_t> pooled(const Tensor<int8_t>& x) const {
    return clamp(avg ? avgpool(x, pool_window()) : maxpool(x, pool_window()), post_lo, post_hi);
  }

  // The pooling fields of c but pool_en, for a pooled result of res_h x res_w.
  void set_pool_fields(isa::ComputeInstr& c, int res_h, int res_w) const {
    c.pool_op = avg ? isa::PoolOp::kAvg : isa::PoolOp::kMax;
    c.pool_ceil = ceil_mode;
    c.pool_k = pk;
    c.pool_s = ps;
    const Pads q = pool_pads();
    c.pool_pad_top = q.top;
    c.pool_pad_left = q.left;
    c.pool_pad_bottom = q.bottom;
    c.pool_pad_right = q.right;
    c.pool_out_h = res_h;
    c.pool_out_w = res_w;
    c.post_lo = post_lo;
    c.post_hi = post_hi;
  }
};

// The input image of a CONV or POOL: `groups` frames of in_h x in_w words,
// frame after frame from word in_base of bank in_id.
struct ImageInput {
  int in_h = 1, in_w = 1, groups = 1;
  int in_id = 0, in_base = 0;

  int in_words() const { return groups * in_h * in_w; }
  const Word& pixel(const Memories& m, int g, int y, int x) const {
    return m.bank[in_id][in_base + (g * in_h + y) * in_w + x];
  }
  void set_input_fields(isa::ComputeInstr& c) const {
    c.in_id = in_id;
    c.in_base = in_base;
    c.in_h = in_h;
    c.in_w = in_w;
    c.in_groups = groups;
  }
};

// ---------------------------------------------------------------------------

struct ConvLayer : ImageInput, PoolStage, PartialSums {
  // ph, pw: padding above and left of the input; pb, pr: below and right
  // (-1: the same as ph, pw).
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, pb = -1, pr = -1;
  int cache_base = 0, param_base = 0;
  int clamp_lo = -128, clamp_hi = 127;
  bool pool = false;  // the PoolStage runs on the convolution's result
  isa::ComputeDst dst = isa::ComputeDst::kBank;
  int dst_id = 0, dst_base = 0, dst_row_stride = 0;

  int pad_bottom() const { return pb < 0 ? ph : pb; }
  int pad_right() const { return pr < 0 ? pw : pr; }
  bool symmetric() const { return pad_bottom() == ph && pad_right() == pw; }
  int out_h() const { return conv_out(in_h, kh, sh, ph, pad_bottom()); }
  int out_w() const { return conv_out(in_w, kw, sw, pw, pad_right()); }
  int res_h() const { return pool ? pool_out_h(out_h()) : out_h(); }
  int res_w() const { return pool ? pool_out_w(out_w()) : out_w(); }
  int taps() const { return kh * kw * groups; }

  std::string str() const {
    std::string s =
        fmt::format("CONV {}x{}x{}g k{}x{} s{},{} p{},{},{},{} -> {}x{}", in_h, in_w, groups, kh,
                    kw, sh, sw, ph, pw, pad_bottom(), pad_right(), out_h(), out_w());
    if (pool) {
      s += fmt::format(" {}pool k{} s{} {}{} -> {}x{}", avg ? "avg" : "max", pk, ps, pool_pad_str(),
                       ceil_mode ? " ceil" : "", res_h(), res_w());
    }
    s += fmt::format(" clamp[{},{}] {} {} @{}", clamp_lo, clamp_hi,
                     dst == isa::ComputeDst::kBank ? "bank" : "pe", dst_id, dst_base);
    return s + acc_str();
  }

  isa::ComputeInstr instr() const {
    isa::ComputeInstr c;
    c.mode = isa::ComputeMode::kConv;
    set_input_fields(c);
    c.kernel_h = kh;
    c.kernel_w = kw;
    c.stride_h = sh;
    c.stride_w = sw;
    c.pad_top = ph;
    c.pad_left = pw;
    c.pad_bottom = pad_bottom();
    c.pad_right = pad_right();
    c.out_h = out_h();
    c.out_w = out_w();
    c.cache_base = cache_base;
    c.param_base = param_base;
    c.clamp_lo = clamp_lo;
    c.clamp_hi = clamp_hi;
    c.pool_en = pool;
    if (pool) set_pool_fields(c, res_h(), res_w());
    c.dst_kind = dst;
    c.dst_id = dst_id;
    c.dst_base = dst_base;
    c.dst_row_stride = dst_row_stride;
    set_acc_fields(c);
    return c;
  }

  // Beats the padding-skipping walk takes: valid taps x groups per pixel.
  int64_t beats() const {
    int64_t rows = 0, cols = 0;
    for (int oy = 0; oy < out_h(); ++oy) {
      const int y0 = oy * sh - ph;
      rows += std::min(kh, in_h - y0) - std::max(0, -y0);
    }
    for (int ox = 0; ox < out_w(); ++ox) {
      const int x0 = ox * sw - pw;
      cols += std::min(kw, in_w - x0) - std::max(0, -x0);
    }
    return rows * cols * groups;
  }

  // Conv accumulators [P][out_h][out_w] of the data in `m`, walking every tap
  // inside the image (docs/isa.md); equal to strata::conv2d_acc when the
  // kernel, stride and padding are square and symmetric (checked by the caller).
  Tensor<int32_t> acc(const Memories& m) const {
    Tensor<int32_t> a({kP, out_h(), out_w()});
    for (int p = 0; p < kP; ++p) {
      for (int oy = 0; oy < out_h(); ++oy) {
        for (int ox = 0; ox < out_w(); ++ox) {
          int64_t s = acc_in ? partial_sum(m, acc_id, acc_base, oy * out_w() + ox, p)
                             : m.param[param_base + p].bias;
          for (int ky = 0; ky < kh; ++ky) {
            const int iy = oy * sh - ph + ky;
            if (iy < 0 || iy >= in_h) continue;
            for (int kx = 0; kx < kw; ++kx) {
              const int ix = ox * sw - pw + kx;
              if (ix < 0 || ix >= in_w) continue;
              for (int g = 0; g < groups; ++g) {
                const Word& x = pixel(m, g, iy, ix);
                const Word& w = m.cache[p][cache_base + (ky * kw + kx) * groups + g];
                for (int l = 0; l < kN; ++l) s += int64_t(x[l]) * w[l];
              }
            }
          }
          a(p, oy, ox) = int32_t(uint32_t(uint64_t(s)));  // the accumulator wraps
        }
      }
    }
    return a;
  }

  // The same accumulators from strata::conv2d_acc (square geometry only).
  Tensor<int32_t> golden_acc(const Memories& m) const {
    const int c_in = groups * kN;
    Tensor<int8_t> in({c_in, in_h, in_w});
    for (int g = 0; g < groups; ++g) {
      for (int y = 0; y < in_h; ++y) {
        for (int x = 0; x < in_w; ++x) {
          const Word& w = pixel(m, g, y, x);
          for (int l = 0; l < kN; ++l) in(g * kN + l, y, x) = w[l];
        }
      }
    }
    Tensor<int8_t> wt({kP, c_in, kh, kw});
    Tensor<int32_t> bias({kP});
    for (int p = 0; p < kP; ++p) {
      bias(p) = m.param[param_base + p].bias;
      for (int ky = 0; ky < kh; ++ky) {
        for (int kx = 0; kx < kw; ++kx) {
          for (int g = 0; g < groups; ++g) {
            const Word& w = m.cache[p][cache_base + (ky * kw + kx) * groups + g];
            for (int l = 0; l < kN; ++l) wt(p, g * kN + l, ky, kx) = w[l];
          }
        }
      }
    }
    return conv2d_acc(in, wt, bias, ConvGeometry{kh, sh, ph});
  }

  Expected expected(const Memories& m) const {
    const Tensor<int32_t> a = acc(m);
    if (acc_out) {  // 4 words of raw accumulators per pixel
      Expected e;
      e.id = dst_id;
      e.rows = out_h();
      for (int oy = 0; oy < out_h(); ++oy) {
        for (int ox = 0; ox < out_w(); ++ox) {
          std::array<int32_t, kP> px{};
          for (int p = 0; p < kP; ++p) px[p] = a(p, oy, ox);
          const auto w = partial_words(px);
          for (int k = 0; k < 4; ++k) {
            Expected::Item it;
            it.addr = dst_base + oy * dst_row_stride + 4 * ox + k;
            it.row = oy;
            it.col = 4 * ox + k;
            it.word = w[k];
            e.items.push_back(it);
          }
        }
      }
      return e;
    }
    Tensor<int8_t> y({kP, out_h(), out_w()});
    for (int p = 0; p < kP; ++p) {
      const Param& q = m.param[param_base + p];
      for (int oy = 0; oy < out_h(); ++oy) {
        for (int ox = 0; ox < out_w(); ++ox) {
          y(p, oy, ox) = requantize(a(p, oy, ox), q.mult, q.shift, clamp_lo, clamp_hi);
        }
      }
    }
    if (pool) y = pooled(y);
    Expected e;
    e.bank = dst == isa::ComputeDst::kBank;
    e.id = dst_id;
    e.rows = res_h();
    e.add_frame(y, dst_id, 0, dst_base, dst_row_stride);
    return e;
  }
};

// ---------------------------------------------------------------------------

struct FcLayer : PartialSums {
  int groups = 1, neurons = 1;
  int in_id = 0, in_base = 0, cache_base = 0, param_base = 0;
  int clamp_lo = -128, clamp_hi = 127;
  isa::ComputeDst dst = isa::ComputeDst::kBank;
  int dst_id = 0, dst_base = 0;

  std::string str() const {
    return fmt::format("FC {} groups -> {} neurons clamp[{},{}] {} {} @{}{}", groups, neurons,
                       clamp_lo, clamp_hi, dst == isa::ComputeDst::kBank ? "bank" : "transpose",
                       dst_id, dst_base, acc_str());
  }
  int out_words() const { return (neurons + kN - 1) / kN; }

  isa::ComputeInstr instr() const {
    isa::ComputeInstr c;
    c.mode = isa::ComputeMode::kFc;
    c.in_id = in_id;
    c.in_base = in_base;
    c.in_groups = groups;
    c.out_h = neurons;
    c.out_w = 1;
    c.cache_base = cache_base;
    c.param_base = param_base;
    c.clamp_lo = clamp_lo;
    c.clamp_hi = clamp_hi;
    c.dst_kind = dst;
    c.dst_id = dst_id;
    c.dst_base = dst_base;
    set_acc_fields(c);
    return c;
  }

  // acc[o][p]: the accumulator of neuron o, image p (strata::fc_acc; with
  // acc_in the partial sums replace the bias, the sum wrapping).
  Tensor<int32_t> accs(const Memories& m) const {
    const int n_in = groups * kN;
    Tensor<int8_t> w({neurons, n_in});
    Tensor<int32_t> bias({neurons});
    for (int o = 0; o < neurons; ++o) {
      bias(o) = m.param[param_base + o].bias;
      for (int t = 0; t < groups; ++t) {
        const Word& wd = m.bank[in_id][in_base + o * groups + t];
        for (int l = 0; l < kN; ++l) w(o, t * kN + l) = wd[l];
      }
    }
    Tensor<int32_t> y({neurons, kP});
    for (int p = 0; p < kP; ++p) {
      Tensor<int8_t> x({n_in});
      for (int t = 0; t < groups; ++t) {
        for (int l = 0; l < kN; ++l) x(t * kN + l) = m.cache[p][cache_base + t][l];
      }
      const Tensor<int32_t> a = fc_acc(x, w, bias);
      for (int o = 0; o < neurons; ++o) {
        int32_t v = a[o];
        if (acc_in) {
          v = int32_t(uint32_t(v) - uint32_t(bias(o)) +
                      uint32_t(partial_sum(m, acc_id, acc_base, o, p)));
        }
        y(o, p) = v;
      }
    }
    return y;
  }

  // y[o][p]: neuron o of image p, requantised.
  Tensor<int8_t> outputs(const Memories& m) const {
    const Tensor<int32_t> a = accs(m);
    Tensor<int8_t> y({neurons, kP});
    for (int p = 0; p < kP; ++p) {
      for (int o = 0; o < neurons; ++o) {
        const Param& q = m.param[param_base + o];
        y(o, p) = requantize(a(o, p), q.mult, q.shift, clamp_lo, clamp_hi);
      }
    }
    return y;
  }

  Expected expected(const Memories& m) const {
    Expected e;
    if (acc_out) {  // 4 words of raw accumulators per neuron
      const Tensor<int32_t> a = accs(m);
      e.id = dst_id;
      e.rows = neurons;
      for (int o = 0; o < neurons; ++o) {
        std::array<int32_t, kP> px{};
        for (int p = 0; p < kP; ++p) px[p] = a(o, p);
        const auto w = partial_words(px);
        for (int k = 0; k < 4; ++k) {
          Expected::Item it;
          it.addr = dst_base + 4 * o + k;
          it.row = o;
          it.col = k;
          it.word = w[k];
          e.items.push_back(it);
        }
      }
      return e;
    }
    const Tensor<int8_t> y = outputs(m);
    e.bank = dst == isa::ComputeDst::kBank;
    e.id = e.bank ? dst_id : -1;
    e.rows = neurons;
    if (e.bank) {
      for (int o = 0; o < neurons; ++o) {
        Expected::Item it;
        it.addr = dst_base + o;
        it.row = o;
        for (int p = 0; p < kP; ++p) it.word[p] = y(o, p);
        e.items.push_back(it);
      }
      return e;
    }
    for (int wd = 0; wd < out_words(); ++wd) {
      for (int p = 0; p < kP; ++p) {
        Expected::Item it;
        it.pe = p;
        it.addr = dst_base + wd;
        it.row = wd;
        for (int b = 0; b < kN; ++b) {
          const int o = wd * kN + b;
          it.word[b] = o < neurons ? y(o, p) : int8_t{0};
        }
        e.items.push_back(it);
      }
    }
    return e;
  }
};

// ---------------------------------------------------------------------------

struct PoolLayer : ImageInput, PoolStage {
  isa::ComputeDst dst = isa::ComputeDst::kBank;
  int dst_id = 0, dst_base = 0, dst_row_stride = 0, dst_group_stride = 0;

  int res_h() const { return pool_out_h(in_h); }
  int res_w() const { return pool_out_w(in_w); }

  std::string str() const {
    return fmt::format("POOL {}x{}x{}g {} k{} s{} {}{} -> {}x{} post[{},{}] {} {} @{}", in_h, in_w,
                       groups, avg ? "avg" : "max", pk, ps, pool_pad_str(),
                       ceil_mode ? " ceil" : "", res_h(), res_w(), post_lo, post_hi,
                       dst == isa::ComputeDst::kBank ? "bank" : "pe", dst_id, dst_base);
  }

  isa::ComputeInstr instr() const {
    isa::ComputeInstr c;
    c.mode = isa::ComputeMode::kPool;
    set_input_fields(c);
    c.out_h = in_h;
    c.out_w = in_w;
    c.pool_en = true;
    set_pool_fields(c, res_h(), res_w());
    c.dst_kind = dst;
    c.dst_id = dst_id;
    c.dst_base = dst_base;
    c.dst_row_stride = dst_row_stride;
    c.dst_group_stride = dst_group_stride;
    return c;
  }

  Expected expected(const Memories& m) const {
    Expected e;
    e.bank = dst == isa::ComputeDst::kBank;
    e.id = dst_id;
    e.rows = groups * res_h();
    for (int g = 0; g < groups; ++g) {
      Tensor<int8_t> x({kN, in_h, in_w});
      for (int y = 0; y < in_h; ++y) {
        for (int c = 0; c < in_w; ++c) {
          const Word& w = pixel(m, g, y, c);
          for (int l = 0; l < kN; ++l) x(l, y, c) = w[l];
        }
      }
      e.add_frame(pooled(x), dst_id, g, dst_base + g * dst_group_stride, dst_row_stride);
    }
    return e;
  }
};

// ---------------------------------------------------------------------------

// DEPTHWISE (docs/isa.md): one group's map through the window generator, PE p
// = channel p, its weights in kDwBeats cache words, tap t = ky * kMaxPoolKernel
// + kx at byte t % N of word t / N.
inline constexpr int kDwBeats = (hw::kMaxPoolKernel * hw::kMaxPoolKernel + kN - 1) / kN;

struct DepthwiseLayer : ImageInput, PoolStage {
  int cache_base = 0, param_base = 0;
  int clamp_lo = -128, clamp_hi = 127;
  int dst_id = 0, dst_base = 0, dst_row_stride = 0;

  int res_h() const { return pool_out_h(in_h); }
  int res_w() const { return pool_out_w(in_w); }

  std::string str() const {
    return fmt::format("DEPTHWISE {}x{} k{} s{} {} -> {}x{} clamp[{},{}] bank {} @{}", in_h, in_w,
                       pk, ps, pool_pad_str(), res_h(), res_w(), clamp_lo, clamp_hi, dst_id,
                       dst_base);
  }

  isa::ComputeInstr instr() const {
    isa::ComputeInstr c;
    c.mode = isa::ComputeMode::kDepthwise;
    set_input_fields(c);
    c.out_h = in_h;
    c.out_w = in_w;
    c.pool_en = true;
    set_pool_fields(c, res_h(), res_w());
    c.cache_base = cache_base;
    c.param_base = param_base;
    c.clamp_lo = clamp_lo;
    c.clamp_hi = clamp_hi;
    c.dst_kind = isa::ComputeDst::kBank;
    c.dst_id = dst_id;
    c.dst_base = dst_base;
    c.dst_row_stride = dst_row_stride;
    return c;
  }

  // Weight of PE p's tap (ky, kx) in the caches of m.
  int8_t weight(const Memories& m, int p, int ky, int kx) const {
    const int t = ky * hw::kMaxPoolKernel + kx;
    return m.cache[p][cache_base + t / kN][t % kN];
  }

  // Per channel: bias + the taps inside the image, requantised and clamped.
  Expected expected(const Memories& m) const {
    const Pads q = pool_pads();
    Tensor<int8_t> y({kP, res_h(), res_w()});
    for (int p = 0; p < kP; ++p) {
      const Param& par = m.param[param_base + p];
      for (int oy = 0; oy < res_h(); ++oy) {
        for (int ox = 0; ox < res_w(); ++ox) {
          int64_t s = par.bias;
          for (int ky = 0; ky < pk; ++ky) {
            const int iy = oy * ps - q.top + ky;
            if (iy < 0 || iy >= in_h) continue;
            for (int kx = 0; kx < pk; ++kx) {
              const int ix = ox * ps - q.left + kx;
              if (ix < 0 || ix >= in_w) continue;
              s += int64_t(pixel(m, 0, iy, ix)[p]) * weight(m, p, ky, kx);
            }
          }
          y(p, oy, ox) = requantize(int32_t(s), par.mult, par.shift, clamp_lo, clamp_hi);
        }
      }
    }
    Expected e;
    e.bank = true;
    e.id = dst_id;
    e.rows = res_h();
    e.add_frame(y, dst_id, 0, dst_base, dst_row_stride);
    return e;
  }
};

// ---------------------------------------------------------------------------

// How one instruction is run.
struct RunOptions {
  double instr_gap = 0.0;              // probability of withholding the instruction a cycle
  double rd_stall = 0.0;               // probability of refusing a bank read request
  double wr_stall = 0.0;               // probability of refusing a bank write
  double grant_gap = 0.0;              // probability of withholding a grant that could be given
  double pe_gap = 0.0;                 // load-engine cache writes: probability of a gap
  bool fine = false;                   // CTRL.FINE_GRAIN
  bool background_pe = false;          // load-engine writes into PE caches during the run
  int bg_addr_lo = 0, bg_addr_hi = 0;  // their address range [lo, hi)
  bool expect_error = false;
  uint64_t budget = 0;               // cycle budget (0: from the work)
  std::optional<uint64_t> abort_at;  // raise abort this many cycles after the take
};

// A unit the emulated load / store engine releases once its bank writes are done.
struct Feed {
  int edge = 0;  // 0: L2C, 1: S2C
  int units = 1;
  int delay = 0;                           // cycles after the previous feed completed
  std::vector<std::pair<int, int>> words;  // (bank, addr) to write from `data`
  std::vector<Word> data;

  // Adds the writes of w to consecutive words of `bank` from `addr`.
  void write(int bank, int addr, const std::vector<Word>& w) {
    for (size_t i = 0; i < w.size(); ++i) {
      words.push_back({bank, addr + int(i)});
      data.push_back(w[i]);
    }
  }
};

// The memories m once every feed has written its words.
inline Memories after_feeds(Memories m, const std::deque<Feed>& feeds) {
  for (const Feed& f : feeds) {
    for (size_t i = 0; i < f.words.size(); ++i) {
      m.bank[f.words[i].first][f.words[i].second] = f.data[i];
    }
  }
  return m;
}

struct BankWrite {
  uint64_t cycle;
  int bank, addr;
  Word word;
};
struct CacheWrite {
  uint64_t cycle;
  unsigned mask;
  int addr;
  Word word;
  bool engine;  // written by the engine (else by the load engine)
};
struct BankRead {
  uint64_t cycle;
  int bank, addr;
};
struct Release {
  uint64_t cycle;
  int edge, amount;
};

struct RunResult {
  bool retired = false;
  bool error = false;
  int code = 0, err_index = -1;
  uint64_t take = 0, done = 0;  // take and retire (or error) cycles
  uint64_t first_beat = 0, last_beat = 0, beats = 0, macs = 0;
  uint64_t stall_cycles = 0, dep_wait_cycles = 0;
  std::vector<BankRead> reads;
  std::vector<BankWrite> writes;
  std::vector<CacheWrite> cache_writes;
  std::vector<Release> releases;
  std::array<int64_t, 2> acquired{};  // per incoming edge
  std::array<int64_t, 2> released{};  // C2S, C2L
  uint64_t cycles() const { return done - take; }
};

// A valid/ready source with random gaps: a gap may only come before a word is
// offered; once offered, valid stays up until the handshake.
class Offer {
 public:
  explicit Offer(double gap) : th_(gap) {}
  bool drive(std::mt19937_64& rng, bool have) {
    if (!on_ && have && !th_.stall(rng)) on_ = true;
    return on_ && have;
  }
  void fired() { on_ = false; }

 private:
  Throttle th_;
  bool on_ = false;
};

class ComputeEngineBench : public SimFixture<Vtop> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    idle_inputs();
    reset();
  }

  void idle_inputs() {
    auto& d = dut();
    d.abort_i = 0;
    d.fine_i = 0;
    d.instr_valid_i = 0;
    d.instr_index_i = 0;
    d.acq_grant_i = 0;
    d.rd_stall_i = 0;
    d.wr_stall_i = 0;
    d.lw_valid_i = 0;
    d.sr_req_valid_i = 0;
    d.sr_active_i = 0;
    d.pe_valid_i = 0;
    d.param_valid_i = 0;
  }

  std::string where() const { return fmt::format("STRATA_SEED={} cycle {}", seed(), cycle()); }

  // ---- filling the memories through the ports ----------------------------
  void fill_bank(int bank, int addr, const std::vector<Word>& words, double gap = 0.0) {
    auto& d = dut();
    fill_port(
        words, gap, "bank", d.lw_valid_i, d.lw_ready_o,
        [&](size_t i) {
          d.lw_bank_i = bank;
          d.lw_addr_i = addr + int(i);
          d.lw_data_i = pack(words[i]);
        },
        [&](size_t i) { mem_.bank[bank][addr + i] = words[i]; });
  }

  void fill_cache(int pe, int addr, const std::vector<Word>& words, double gap = 0.0) {
    auto& d = dut();
    fill_port(
        words, gap, "cache", d.pe_valid_i, d.pe_ready_o,
        [&](size_t i) {
          d.pe_i = pe;
          d.pe_addr_i = addr + int(i);
          d.pe_data_i = pack(words[i]);
        },
        [&](size_t i) { mem_.cache[pe][addr + i] = words[i]; });
  }

  // Offers words[i] on a valid/ready write port (random gaps), `drive(i)` sets
  // its address and data, `written(i)` updates the bench's view on the handshake.
  template <typename Valid, typename Ready>
  void fill_port(const std::vector<Word>& words, double gap, const char* what, Valid& valid,
                 const Ready& ready, const std::function<void(size_t)>& drive,
                 const std::function<void(size_t)>& written) {
    Offer src(gap);
    size_t i = 0;
    const uint64_t limit = cycle() + 20 * words.size() + 100;
    while (i < words.size()) {
      const bool v = src.drive(rng(), true);
      valid = v;
      drive(i);
      settle();
      if (v && ready) {
        written(i);
        ++i;
        src.fired();
      }
      tick();
      ASSERT_LT(cycle(), limit) << what << " fill timed out, " << where();
    }
    valid = 0;
  }

  void fill_params(int ch, const std::vector<Param>& params, double gap = 0.0) {
    auto& d = dut();
    Offer src(gap);
    size_t i = 0;
    const uint64_t limit = cycle() + 20 * params.size() + 100;
    while (i < params.size()) {
      const bool v = src.drive(rng(), true);
      d.param_valid_i = v;
      d.param_channel_i = ch + int(i);
      d.param_data_i = params[i].entry();
      settle();
      if (v && d.param_ready_o) {
        mem_.param[ch + i] = params[i];
        ++i;
        src.fired();
      }
      tick();
      ASSERT_LT(cycle(), limit) << "parameter fill timed out, " << where();
    }
    d.param_valid_i = 0;
  }

  // Words read back through the store read port.
  std::vector<Word> read_bank(int bank, int addr, int count) {
    auto& d = dut();
    std::vector<Word> out;
    int issued = 0;
    const uint64_t limit = cycle() + 4 * uint64_t(count) + 100;
    // The bank is announced a cycle before the first request (strata_banks).
    d.sr_active_i = 1;
    d.sr_bank_i = bank;
    tick();
    while (int(out.size()) < count) {
      d.sr_req_valid_i = issued < count;
      d.sr_bank_i = bank;
      d.sr_addr_i = addr + issued;
      settle();
      if (d.sr_rsp_valid_o) out.push_back(unpack(d.sr_rsp_data_o));
      if (d.sr_req_valid_i && d.sr_req_ready_o) ++issued;
      tick();
      if (cycle() > limit) {
        ADD_FAILURE() << "bank read-back timed out, " << where();
        break;
      }
    }
    d.sr_req_valid_i = 0;
    d.sr_active_i = 0;
    return out;
  }

  std::vector<Word> random_words(int count) {
    std::vector<Word> v(count);
    for (Word& w : v) {
      for (auto& b : w) b = int8_t(rand_int(-128, 127));
    }
    return v;
  }

  // ---- running one instruction -------------------------------------------
  static void set_instr(Vtop& d, const isa::Instruction& in) {
    for (int w = 0; w < isa::kInstrWords; ++w) {
      d.instr_i[2 * w] = uint32_t(in.words[w]);
      d.instr_i[2 * w + 1] = uint32_t(in.words[w] >> 32);
    }
  }

  // Runs `in` to its retirement (or error); `feeds` are released in order by
  // the emulated load / store engines; on_read / on_release check ordering.
  RunResult run(const isa::Instruction& in, const RunOptions& o, std::deque<Feed> feeds = {},
                const std::function<void(const BankRead&, const RunResult&)>& on_read = {},
                const std::function<void(const Release&, const RunResult&)>& on_release = {}) {
    auto& d = dut();
    RunResult r;
    Throttle rd_th(o.rd_stall), wr_th(o.wr_stall), grant_th(o.grant_gap);
    Offer instr_src(o.instr_gap), bg_src(o.pe_gap);
    const uint16_t index = next_index_++;
    bool taken = false, aborting = false;
    uint64_t budget = o.budget != 0 ? o.budget : 200000;
    const uint64_t start = cycle();
    // Background load-engine traffic into the caches.
    struct Bg {
      int pe, addr;
      Word word;
    };
    std::deque<Bg> bg;
    if (o.background_pe) {
      for (int i = 0; i < 64; ++i) {
        Bg b{int(rand_int(0, kP - 1)), int(rand_int(o.bg_addr_lo, o.bg_addr_hi - 1)), {}};
        for (auto& x : b.word) x = int8_t(rand_int(-128, 127));
        bg.push_back(b);
      }
    }
    // Feed state: the current feed's next word and the cycle it may start.
    size_t feed_word = 0;
    uint64_t feed_ready = cycle() + (feeds.empty() ? 0 : feeds.front().delay);

    d.fine_i = o.fine;
    while (true) {
      // Drive.
      const bool offer = instr_src.drive(rng(), !taken);
      d.instr_valid_i = offer;
      set_instr(d, in);
      d.instr_index_i = index;
      d.rd_stall_i = rd_th.stall(rng());
      d.wr_stall_i = wr_th.stall(rng());
      d.abort_i = aborting;
      const bool bg_v = bg_src.drive(rng(), !bg.empty());
      d.pe_valid_i = bg_v;
      if (!bg.empty()) {
        d.pe_i = bg.front().pe;
        d.pe_addr_i = bg.front().addr;
        d.pe_data_i = pack(bg.front().word);
      }
      const bool feed_v =
          !feeds.empty() && cycle() >= feed_ready && feed_word < feeds.front().words.size();
      d.lw_valid_i = feed_v;
      if (feed_v) {
        d.lw_bank_i = feeds.front().words[feed_word].first;
        d.lw_addr_i = feeds.front().words[feed_word].second;
        d.lw_data_i = pack(feeds.front().data[feed_word]);
      }
      d.acq_grant_i = 0;
      settle();
      // Semaphores: grant what is held, in the request's cycle (the earliest a
      // grant may come; strata_dep_sems grants a cycle later).
      unsigned grant = 0;
      for (int e = 0; e < 2; ++e) {
        const int64_t amount = (d.acq_amount_o >> (16 * e)) & 0xFFFF;
        if (((d.acq_req_o >> e) & 1) && sem_[e] >= amount && !grant_th.stall(rng())) {
          grant |= 1u << e;
        }
      }
      if (grant != 0) {
        d.acq_grant_i = grant;
        settle();
      }

      // Sample.
      if (offer && d.instr_ready_o) {
        taken = true;
        r.take = cycle();
        if (o.abort_at) budget = std::min<uint64_t>(budget, *o.abort_at + 2000);
      }
      for (int e = 0; e < 2; ++e) {
        if ((grant >> e) & 1) {
          const int64_t amount = (d.acq_amount_o >> (16 * e)) & 0xFFFF;
          sem_[e] -= amount;
          r.acquired[e] += amount;
        }
      }
      if (d.obs_rd_fire_o) {
        r.reads.push_back({cycle(), int(d.obs_rd_bank_o), int(d.obs_rd_addr_o)});
        if (on_read) on_read(r.reads.back(), r);
      }
      if (d.obs_wr_fire_o) {
        const BankWrite w{cycle(), int(d.obs_wr_bank_o), int(d.obs_wr_addr_o),
                          unpack(d.obs_wr_data_o)};
        r.writes.push_back(w);
        mem_.bank[w.bank][w.addr] = w.word;
      }
      const bool bg_fire = bg_v && d.pe_ready_o;
      if (d.obs_cache_we_o) {
        CacheWrite w{cycle(), unsigned(d.obs_cache_mask_o), int(d.obs_cache_addr_o),
                     unpack(d.obs_cache_data_o), true};
        if (bg_fire) {
          const Bg& b = bg.front();
          w.engine = false;
          EXPECT_TRUE(w.mask == (1u << b.pe) && w.addr == b.addr && w.word == b.word)
              << "load-engine cache write not passed through unchanged, " << where();
        }
        for (int p = 0; p < kP; ++p) {
          if ((w.mask >> p) & 1) mem_.cache[p][w.addr] = w.word;
        }
        r.cache_writes.push_back(w);
      } else {
        EXPECT_FALSE(bg_fire) << "load-engine cache write accepted but not written, " << where();
      }
      if (bg_fire) {
        bg.pop_front();
        bg_src.fired();
      }
      if (feed_v && d.lw_ready_o) {
        const auto [b, a] = feeds.front().words[feed_word];
        mem_.bank[b][a] = feeds.front().data[feed_word];
        ++feed_word;
      }
      if (!feeds.empty() && cycle() >= feed_ready && feed_word == feeds.front().words.size()) {
        sem_[feeds.front().edge] += feeds.front().units;
        feeds.pop_front();
        feed_word = 0;
        feed_ready = cycle() + 1 + (feeds.empty() ? 0 : feeds.front().delay);
      }
      for (int e = 0; e < 2; ++e) {
        if ((d.rel_valid_o >> e) & 1) {
          const int amount = int((d.rel_amount_o >> (16 * e)) & 0xFFFF);
          r.released[e] += amount;
          r.releases.push_back({cycle(), e, amount});
          if (on_release) on_release(r.releases.back(), r);
        }
      }
      if (d.mac_active_o) {
        if (r.beats == 0) r.first_beat = cycle();
        r.last_beat = cycle();
        ++r.beats;
        r.macs += d.macs_o;
      }
      if (d.stall_out_o) ++r.stall_cycles;
      if (d.dep_wait_o) ++r.dep_wait_cycles;
      const bool retire = d.retire_o;
      const bool error = d.err_o;
      if (retire) {
        EXPECT_EQ(d.index_o, index) << "retired instruction index, " << where();
      }
      tick();

      if (aborting && d.idle_o) break;
      if (!aborting && o.abort_at && taken && cycle() - r.take >= *o.abort_at) aborting = true;
      if (!aborting && retire) {
        r.retired = true;
        r.done = cycle();
        break;
      }
      if (!aborting && error) {
        r.error = true;
        r.code = d.err_code_o;
        r.err_index = d.err_index_o;
        r.done = cycle();
        EXPECT_TRUE(o.expect_error) << "unexpected error code " << r.code << ", " << where();
        break;
      }
      if (cycle() - start > budget) {
        ADD_FAILURE() << "instruction timed out after " << budget << " cycles (taken " << taken
                      << ", beats " << r.beats << "), " << where();
        break;
      }
    }
    // Back to quiet inputs; the load-engine traffic finishes after the run.
    d.instr_valid_i = 0;
    d.abort_i = 0;
    d.rd_stall_i = 0;
    d.wr_stall_i = 0;
    d.lw_valid_i = 0;
    d.acq_grant_i = 0;
    const uint64_t limit = cycle() + 50 * bg.size() + 100;
    while (!bg.empty() && cycle() < limit) {
      d.pe_valid_i = 1;
      d.pe_i = bg.front().pe;
      d.pe_addr_i = bg.front().addr;
      d.pe_data_i = pack(bg.front().word);
      settle();
      if (d.pe_ready_o) {
        EXPECT_TRUE(d.obs_cache_we_o) << where();
        mem_.cache[bg.front().pe][bg.front().addr] = bg.front().word;
        bg.pop_front();
      }
      tick();
    }
    EXPECT_TRUE(bg.empty()) << "load-engine cache writes stuck, " << where();
    d.pe_valid_i = 0;
    settle();
    return r;
  }

  // Gives the semaphores what the instruction's header asks for.
  void provide(const isa::Header& h) {
    sem_[0] += h.acq0;
    sem_[1] += h.acq1;
  }

  // ---- checking -----------------------------------------------------------
  // Releases the run made on `edge` (0: C2S, 1: C2L).
  static int releases_on(const RunResult& r, int edge) {
    int n = 0;
    for (const auto& rel : r.releases) n += rel.edge == edge;
    return n;
  }

  // check() of a run fed by the emulated load engine: IsaSim starts from the
  // memories as the feeds left them.
  int check_fine(const std::string& what, const Expected& e, const RunResult& r,
                 const isa::ComputeInstr& c, const Memories& final_mem) {
    sim_memories_ = final_mem;
    const isa::Instruction in = isa::encode(c);
    return check(what, e, r, &in);
  }

  // Every expected word is in place (banks: read back through the store port)
  // and the engine wrote nothing else. Returns the number of words compared.
  int check(const std::string& what, const Expected& e, const RunResult& r,
            const isa::Instruction* sim_instr = nullptr) {
    int failures = 0;
    // strata::IsaSim on the same memories (bank destinations).
    std::vector<Word> sim;
    if (sim_instr != nullptr && e.bank) {
      std::string problem;
      sim = isa_sim_bank(sim_memories_, *sim_instr, e.id, &problem);
      EXPECT_TRUE(problem.empty()) << what << ": IsaSim: " << problem;
      if (!problem.empty()) sim.clear();
    }
    auto report = [&](const Expected::Item& it, int lane, int got) {
      if (++failures > 8) return;
      ADD_FAILURE() << what << ": " << (e.bank ? "bank " : "PE ") << (e.bank ? e.id : it.pe)
                    << " word " << it.addr << " (group " << it.group << ", row " << it.row
                    << ", col " << it.col << "), channel/lane " << lane << ": expected "
                    << int(it.word[lane]) << ", actual " << got << ", STRATA_SEED=" << seed();
    };
    // Stray or repeated writes.
    std::map<std::pair<int, int>, int> want;  // (id, addr) -> writes expected
    for (const auto& it : e.items) want[{e.bank ? e.id : it.pe, it.addr}] = 1;
    std::map<std::pair<int, int>, int> seen;
    if (e.bank) {
      for (const auto& w : r.writes) ++seen[{w.bank, w.addr}];
      EXPECT_TRUE(std::none_of(r.cache_writes.begin(), r.cache_writes.end(),
                               [](const CacheWrite& w) { return w.engine; }))
          << what << ": a bank destination wrote a PE cache, STRATA_SEED=" << seed();
    } else {
      EXPECT_TRUE(r.writes.empty())
          << what << ": a PE destination wrote a bank, STRATA_SEED=" << seed();
      for (const auto& w : r.cache_writes) {
        if (!w.engine) continue;
        for (int p = 0; p < kP; ++p) {
          if ((w.mask >> p) & 1) ++seen[{p, w.addr}];
        }
      }
    }
    for (const auto& [key, n] : seen) {
      if (!want.count(key)) {
        ADD_FAILURE() << what << ": stray write to " << (e.bank ? "bank " : "PE ") << key.first
                      << " word " << key.second << ", STRATA_SEED=" << seed();
      } else if (n != 1) {
        ADD_FAILURE() << what << ": " << (e.bank ? "bank " : "PE ") << key.first << " word "
                      << key.second << " written " << n << " times, STRATA_SEED=" << seed();
      }
    }
    for (const auto& [key, n] : want) {
      if (!seen.count(key)) {
        ADD_FAILURE() << what << ": " << (e.bank ? "bank " : "PE ") << key.first << " word "
                      << key.second << " never written, STRATA_SEED=" << seed();
      }
    }
    // Contents.
    for (const auto& it : e.items) {
      Word got;
      if (e.bank) {
        got = read_bank(e.id, it.addr, 1).at(0);
        if (got != mem_.bank[e.id][it.addr]) {
          ADD_FAILURE() << what << ": bank " << e.id << " word " << it.addr
                        << " differs from the write seen on the port, STRATA_SEED=" << seed();
        }
      } else {
        got = mem_.cache[it.pe][it.addr];
      }
      for (int l = 0; l < kN; ++l) {
        if (got[l] != it.word[l]) report(it, l, got[l]);
      }
      if (!sim.empty() && sim[it.addr] != it.word) {
        if (++failures <= 8) {
          ADD_FAILURE() << what << ": strata::IsaSim disagrees with the numerics reference at "
                        << "bank " << e.id << " word " << it.addr << " (row " << it.row << ", col "
                        << it.col << "), STRATA_SEED=" << seed();
        }
      }
    }
    return int(e.items.size());
  }

  // The destination bank after strata::IsaSim ran `compute` on the bench's
  // view of every bank, PE cache and parameter (loaded with LOAD instructions
  // from an external memory image), read out with a STORE. The reference of
  // docs/isa.md, independent of the bench's own reference.
  static std::vector<Word> isa_sim_bank(const Memories& m, const isa::Instruction& compute,
                                        int dst_bank, std::string* problem) {
    constexpr uint64_t kBankBytes = uint64_t(kBankDepth) * kN;
    constexpr uint64_t kCacheBytes = uint64_t(kCacheDepth) * kN;
    const uint64_t caches = kBanks * kBankBytes;
    const uint64_t params = caches + kP * kCacheBytes;
    const uint64_t out = params + uint64_t(kParamDepth) * 8;
    const uint64_t prog = out + kBankBytes;
    std::vector<uint8_t> mem(prog + 16 * isa::kInstrBytes);
    for (int b = 0; b < kBanks; ++b) {
      for (int a = 0; a < kBankDepth; ++a) {
        std::copy_n(reinterpret_cast<const uint8_t*>(m.bank[b][a].data()), kN,
                    &mem[b * kBankBytes + uint64_t(a) * kN]);
      }
    }
    for (int p = 0; p < kP; ++p) {
      for (int a = 0; a < kCacheDepth; ++a) {
        std::copy_n(reinterpret_cast<const uint8_t*>(m.cache[p][a].data()), kN,
                    &mem[caches + p * kCacheBytes + uint64_t(a) * kN]);
      }
    }
    for (int c = 0; c < kParamDepth; ++c) {
      const uint64_t e = m.param[c].entry();
      for (int i = 0; i < 8; ++i) mem[params + uint64_t(c) * 8 + i] = uint8_t(e >> (8 * i));
    }
    std::vector<isa::Instruction> program;
    program.push_back(config_instr());
    for (int b = 0; b < kBanks; ++b) {
      isa::LoadInstr l;
      l.ext_addr = int64_t(b * kBankBytes);
      l.ext_row_stride = int64_t(kBankBytes);
      l.rows = 1;
      l.row_words = kBankDepth;
      l.dst_kind = isa::LoadDst::kBank;
      l.dst_id = b;
      program.push_back(isa::encode(l));
    }
    isa::LoadInstr lc;  // row r -> PE r
    lc.ext_addr = int64_t(caches);
    lc.ext_row_stride = int64_t(kCacheBytes);
    lc.rows = kP;
    lc.row_words = kCacheDepth;
    lc.dst_kind = isa::LoadDst::kPeCache;
    lc.dst_pe_step = true;
    program.push_back(isa::encode(lc));
    isa::LoadInstr lp;
    lp.ext_addr = int64_t(params);
    lp.ext_row_stride = kParamDepth * 8;
    lp.rows = 1;
    lp.row_words = kParamDepth;
    lp.dst_kind = isa::LoadDst::kParam;
    program.push_back(isa::encode(lp));
    program.push_back(compute);
    isa::StoreInstr st;
    st.ext_addr = int64_t(out);
    st.ext_row_stride = int64_t(kBankBytes);
    st.rows = 1;
    st.row_words = kBankDepth;
    st.src_id = dst_bank;
    program.push_back(isa::encode(st));
    program.push_back(isa::encode(isa::EndInstr{}));
    for (size_t i = 0; i < program.size(); ++i) {
      program[i].to_bytes(&mem[prog + i * isa::kInstrBytes]);
    }
    SimOptions o;
    o.instr_base = prog;
    o.check_dependencies = false;
    const SimResult r = IsaSim(HwTarget::defaults()).run(mem, o);
    std::vector<Word> bank(kBankDepth);
    if (!r.ok()) {
      *problem = describe_problems(r);
      return bank;
    }
    for (int a = 0; a < kBankDepth; ++a) {
      std::copy_n(&mem[out + uint64_t(a) * kN], kN, reinterpret_cast<uint8_t*>(bank[a].data()));
    }
    return bank;
  }

  // The CONFIG instruction of a program for the configuration the bench is built for.
  static isa::Instruction config_instr() {
    isa::ConfigInstr cfg;
    cfg.version = hw::kVersion;
    cfg.pes = hw::kPes;
    cfg.lanes = hw::kLanes;
    cfg.banks = hw::kBanks;
    cfg.bank_depth = hw::kBankDepth;
    cfg.pe_cache_depth = hw::kPeCacheDepth;
    cfg.param_depth = hw::kParamDepth;
    return isa::encode(cfg);
  }

  // IsaSim's verdict on one COMPUTE (CONFIG, COMPUTE, END; no dependency model).
  static SimError isa_sim_verdict(const isa::Instruction& c) {
    std::vector<uint8_t> mem(4096);
    config_instr().to_bytes(&mem[0]);
    c.to_bytes(&mem[64]);
    isa::encode(isa::EndInstr{}).to_bytes(&mem[128]);
    SimOptions o;
    o.check_dependencies = false;
    o.onchip_seed = 1;
    return IsaSim(HwTarget::defaults()).run(mem, o).error;
  }

  Memories mem_;
  Memories sim_memories_;         // the memories an instruction started from (IsaSim)
  std::array<int64_t, 2> sem_{};  // L2C, S2C units available
  uint16_t next_index_ = 0;
};

}  // namespace strata::tb
