// SPDX-License-Identifier: Apache-2.0
// COMPUTE engine bench (tb/unit/strata_compute_engine_tb_top.sv: engine +
// strata_banks). Instructions are built with strata/isa.hpp; banks, PE caches
// and parameters are filled through the engine's and the banks' ports; every
// result word is compared, channel by channel, with a reference from
// strata/numerics.hpp (conv2d_acc / fc_acc, requantize, maxpool / avgpool,
// clamp) and read back through the store port; stray and repeated writes are
// errors. Covered: random convolutions (kernel 1..5 with kernel_h != kernel_w,
// stride 1..2, pad < kernel, 1..4 groups, inputs 1..16) with fused max / avg
// pooling (floor and ceil), BANK and PE_CACHE destinations; FC batch to BANK
// and PE_TRANSPOSE (partial last word); POOL; DEPTHWISE (kernel 1..3,
// stride 1..3, asymmetric padding); random back-pressure on both bank ports,
// gaps on the instruction, grants, and load-engine cache writes competing
// for the PE cache port; completion and fine-grained dependencies
// (an emulated load engine writes each row only when it releases its unit);
// every decode error class against strata::IsaSim's verdict; every COMPUTE
// rule of the target-rule table (strata/target_rules.hpp) on its boundary
// instructions against the table's verdict; abort at any point (CONV and
// DEPTHWISE); the PE array
// utilisation of a 16x16x32 -> 32, 5x5 pad 2 layer.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "compute_engine_bench.hpp"
#include "strata/target_rules.hpp"

namespace strata::tb {
namespace {

constexpr int kHalfBank = kBankDepth / 2;
constexpr int kWeightArea = 400;  // PE cache words [0, 400): weights / features
constexpr int kBgLo = 400;        // [400, 512): load-engine traffic during runs
constexpr int kBgHi = 512;
constexpr int kPeDstLo = 512;  // [512, depth): PE_CACHE / PE_TRANSPOSE results

using isa::ComputeDst;

class StrataComputeEngine : public ComputeEngineBench {
 protected:
  int clamp_pick(int& lo, int& hi) {
    switch (rand_int(0, 2)) {
      case 0:
        lo = -128;
        hi = 127;
        break;
      case 1:
        lo = 0;
        hi = 127;
        break;
      default:
        lo = int(rand_int(-128, 100));
        hi = int(rand_int(lo, 127));
        break;
    }
    return lo;
  }

  // asym: half the layers get padding of its own on every side (convolution
  // and pooling), the others the same padding before and after.
  ConvLayer random_conv(bool pool, bool pe_dst, int max_in = 16, bool asym = false) {
    ConvLayer l;
    l.kh = int(rand_int(1, 5));
    l.kw = rand_int(0, 2) == 0 ? int(rand_int(1, 5)) : l.kh;
    l.sh = int(rand_int(1, 2));
    l.sw = rand_int(0, 3) == 0 ? int(rand_int(1, 2)) : l.sh;
    l.ph = int(rand_int(0, l.kh - 1));
    l.pw = int(rand_int(0, l.kw - 1));
    asym = asym && rand_int(0, 1) == 1;
    if (asym) {
      l.pb = int(rand_int(0, l.kh - 1));
      l.pr = int(rand_int(0, l.kw - 1));
    }
    l.in_h = int(rand_int(std::max(1, l.kh - l.ph - l.pad_bottom()), max_in));
    l.in_w = int(rand_int(std::max(1, l.kw - l.pw - l.pad_right()), max_in));
    l.groups = int(rand_int(1, 4));
    l.in_id = int(rand_int(0, kBanks - 1));
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.cache_base = int(rand_int(0, kWeightArea - l.taps()));
    l.param_base = int(rand_int(0, kParamDepth - kP));
    clamp_pick(l.clamp_lo, l.clamp_hi);
    if (pool) {
      l.pool = true;
      l.avg = rand_int(0, 1) == 1;
      l.ceil_mode = rand_int(0, 1) == 1;
      random_pool_window(l, l.out_h(), l.out_w(), asym);
      clamp_pick(l.post_lo, l.post_hi);
    }
    l.dst_row_stride = l.res_w() + int(rand_int(0, 3));
    random_dst(l, pe_dst, (l.res_h() - 1) * l.dst_row_stride + l.res_w());
    return l;
  }

  // A random pooling window, stride and padding that fit an h x w input;
  // asym: a padding of its own on every side.
  void random_pool_window(PoolStage& l, int h, int w, bool asym) {
    do {
      l.pk = int(rand_int(1, hw::kMaxPoolKernel));
      l.pp = int(rand_int(0, l.pk - 1));
      for (int& side : l.pp_side) side = asym ? int(rand_int(0, l.pk - 1)) : -1;
    } while (!l.pool_fits(h, w));
    l.ps = int(rand_int(1, 3));
  }

  // A random destination for a result of `span` words: a PE cache above the
  // weight area, or a bank (its upper half if it is the input's bank).
  template <class Layer>
  void random_dst(Layer& l, bool pe_dst, int span) {
    if (pe_dst) {
      l.dst = ComputeDst::kPeCache;
      l.dst_id = int(rand_int(0, kP - 1));
      l.dst_base = int(rand_int(kPeDstLo, kCacheDepth - span));
    } else {
      l.dst_id = int(rand_int(0, kBanks - 1));
      l.dst_base = l.dst_id == l.in_id ? int(rand_int(kHalfBank, kBankDepth - span))
                                       : int(rand_int(0, kBankDepth - span));
    }
  }

  // Input, weights and parameters of a layer, through the ports.
  void load_conv(const ConvLayer& l, double gap = 0.0) {
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()), gap);
    for (int p = 0; p < kP; ++p) fill_cache(p, l.cache_base, random_words(l.taps()), gap);
    std::vector<Param> q;
    for (int p = 0; p < kP; ++p) q.push_back(random_param(rng(), l.kh * l.kw * l.groups * kN));
    // Corners of the requantiser now and then: M = 0, S = 0, S = 47.
    if (rand_int(0, 3) == 0) q[rand_int(0, kP - 1)].mult = 0;
    if (rand_int(0, 3) == 0) q[rand_int(0, kP - 1)].shift = 0;
    if (rand_int(0, 3) == 0) q[rand_int(0, kP - 1)].shift = kMaxShift;
    fill_params(l.param_base, q, gap);
  }

  // The bench's reference agrees with strata::conv2d_acc where that applies.
  void check_reference(const ConvLayer& l) {
    if (l.kh != l.kw || l.sh != l.sw || l.ph != l.pw || !l.symmetric()) return;
    EXPECT_EQ(l.acc(mem_), l.golden_acc(mem_))
        << "bench reference differs from strata::conv2d_acc for " << l.str();
  }

  // Runs layer l with header hdr (its units provided), the background cache
  // writer outside the layers and a budget of `budget` cycles; `expect` adds
  // the layer's own expectations on the run. Then checks the results (IsaSim
  // too) and returns the number of words compared.
  template <typename Layer>
  int run_layer(const Layer& l, const isa::Header& hdr, RunOptions o, uint64_t budget,
                const std::string& tag, const std::function<void(const RunResult&)>& expect) {
    EXPECT_EQ(isa_sim_verdict(isa::encode(l.instr())), SimError::kNone)
        << "IsaSim rejects " << l.str();
    const Expected e = l.expected(mem_);
    isa::ComputeInstr c = l.instr();
    c.hdr = hdr;
    provide(c.hdr);
    o.bg_addr_lo = kBgLo;
    o.bg_addr_hi = kBgHi;
    o.budget = budget;
    sim_memories_ = mem_;
    const RunResult r = run(isa::encode(c), o);
    EXPECT_TRUE(r.retired) << tag << " " << l.str() << " did not retire, STRATA_SEED=" << seed();
    expect(r);
    const isa::Instruction in = isa::encode(c);
    return check(tag + " " + l.str(), e, r, &in);
  }

  // Runs a layer with default dependencies (acq/rel 1 each) and checks it.
  int run_conv(const ConvLayer& l, const RunOptions& o, const std::string& tag) {
    check_reference(l);
    const uint64_t budget = 40 * uint64_t(l.beats() + 200 + l.out_h() * l.out_w() * 4);
    return run_layer(l, {1, 1, 1, 1, 1, 0, 7}, o, budget, tag, [&](const RunResult& r) {
      EXPECT_EQ(int64_t(r.beats), l.beats()) << tag << " " << l.str() << " beats";
      EXPECT_EQ(int64_t(r.reads.size()), l.beats()) << tag << " " << l.str() << " reads";
      EXPECT_EQ(r.macs, r.beats * kP * kN) << tag << " MAC count";
      EXPECT_EQ(r.released[0], 1);
      EXPECT_EQ(r.released[1], 1);
      // Every read is inside the input.
      for (const auto& rd : r.reads) {
        if (rd.bank != l.in_id || rd.addr < l.in_base || rd.addr >= l.in_base + l.in_words()) {
          ADD_FAILURE() << tag << " " << l.str() << ": read of bank " << rd.bank << " word "
                        << rd.addr << " outside the input, STRATA_SEED=" << seed();
          break;
        }
      }
    });
  }

  // Runs `layers` random convolutions, and more (up to 4 x layers) until at
  // least `min_words` result words have been checked: the coverage a test
  // asks for does not depend on how small its seed's shapes happen to be.
  int conv_batch(int layers, double pool_share, double pe_share, const RunOptions& o,
                 double fill_gap = 0.0, int min_words = 0, bool asym = true) {
    int words = 0;
    for (int i = 0; (i < layers || (words < min_words && i < 4 * layers)) && !HasFailure(); ++i) {
      const bool pool = std::uniform_real_distribution<>(0, 1)(rng()) < pool_share;
      const bool pe = std::uniform_real_distribution<>(0, 1)(rng()) < pe_share;
      const ConvLayer l = random_conv(pool, pe, 16, asym);
      load_conv(l, fill_gap);
      words += run_conv(l, o, fmt::format("layer {}", i));
    }
    return words;
  }

  FcLayer random_fc(bool transpose) {
    FcLayer l;
    l.groups = int(rand_int(1, 8));
    l.neurons = int(rand_int(1, 40));
    l.in_id = int(rand_int(0, kBanks - 1));
    l.in_base = int(rand_int(0, kHalfBank - l.neurons * l.groups));
    l.cache_base = int(rand_int(0, kWeightArea - l.groups));
    l.param_base = int(rand_int(0, kParamDepth - l.neurons));
    clamp_pick(l.clamp_lo, l.clamp_hi);
    if (transpose) {
      l.dst = ComputeDst::kPeTranspose;
      l.dst_id = int(rand_int(0, 63));  // ignored
      l.dst_base = int(rand_int(kPeDstLo, kCacheDepth - l.out_words()));
    } else {
      l.dst_id = int(rand_int(0, kBanks - 1));
      l.dst_base = l.dst_id == l.in_id ? int(rand_int(kHalfBank, kBankDepth - l.neurons))
                                       : int(rand_int(0, kBankDepth - l.neurons));
    }
    return l;
  }

  void load_fc(const FcLayer& l, bool features = true) {
    fill_bank(l.in_id, l.in_base, random_words(l.neurons * l.groups));
    if (features) {
      for (int p = 0; p < kP; ++p) fill_cache(p, l.cache_base, random_words(l.groups));
    }
    std::vector<Param> q;
    for (int o = 0; o < l.neurons; ++o) q.push_back(random_param(rng(), l.groups * kN));
    fill_params(l.param_base, q);
  }

  int run_fc(const FcLayer& l, const RunOptions& o, const std::string& tag) {
    const uint64_t budget = 40 * uint64_t(l.neurons * l.groups + 300);
    return run_layer(l, {2, 1, 3, 2, 2, 0, 9}, o, budget, tag, [&](const RunResult& r) {
      EXPECT_EQ(int64_t(r.beats), int64_t(l.neurons) * l.groups) << tag << " beats";
      EXPECT_EQ(r.released[0], 3);
      EXPECT_EQ(r.released[1], 2);
    });
  }

  // ---- partial sums (acc_in, acc_out) --------------------------------------

  // Splits `groups` input groups into `chunks` non-empty ranges [cut[i], cut[i+1]).
  std::vector<int> random_cuts(int groups, int chunks) {
    std::vector<int> cut = {0};
    for (int c = 1; c < chunks; ++c) {
      cut.push_back(int(rand_int(cut.back() + 1, groups - (chunks - c))));
    }
    cut.push_back(groups);
    return cut;
  }

  // A bank for partial sums that is neither the input's nor (if a bank) the
  // destination's.
  int spill_bank(int in_id, int dst_id, bool dst_bank) {
    for (;;) {
      const int b = int(rand_int(0, kBanks - 1));
      if (b != in_id && !(dst_bank && b == dst_id)) return b;
    }
  }

  // Biases anywhere in int32 now and then, so that partial sums use all
  // four bytes and the wrapping sum is exercised.
  void maybe_wide_biases(int param_base, int count) {
    if (rand_int(0, 2) != 0) return;
    std::vector<Param> q(mem_.param.begin() + param_base, mem_.param.begin() + param_base + count);
    for (auto& e : q) e.bias = int32_t(uint32_t(rng()()));
    fill_params(param_base, q);
  }

  // Runs one pass (its units provided) and checks it: the PE array takes
  // the window's taps, the bank reads add four per pixel with acc_in, and
  // every read is in the input or in the partial sums.
  template <typename Layer>
  int run_pass(const Layer& l, int64_t beats, int64_t pixels, int in_words, const RunOptions& o,
               const std::string& tag) {
    const uint64_t budget = 40 * uint64_t(beats + 300 + pixels * 8);
    return run_layer(l, {1, 1, 1, 1, 1, 0, 7}, o, budget, tag, [&](const RunResult& r) {
      EXPECT_EQ(int64_t(r.beats), beats) << tag << " " << l.str() << " beats";
      EXPECT_EQ(int64_t(r.reads.size()), beats + (l.acc_in ? 4 * pixels : 0))
          << tag << " " << l.str() << " reads";
      EXPECT_EQ(r.macs, r.beats * kP * kN) << tag << " MAC count";
      for (const auto& rd : r.reads) {
        const bool in =
            rd.bank == l.in_id && rd.addr >= l.in_base && rd.addr < l.in_base + in_words;
        const bool acc = l.acc_in && rd.bank == l.acc_id && rd.addr >= l.acc_base &&
                         rd.addr < l.acc_base + 4 * pixels;
        if (!in && !acc) {
          ADD_FAILURE() << tag << " " << l.str() << ": read of bank " << rd.bank << " word "
                        << rd.addr
                        << " outside the input and the partial sums, STRATA_SEED=" << seed();
          break;
        }
      }
    });
  }

  // The partial-sum fields of pass c of n: the first starts at the bias and
  // writes raw sums, the middle ones read and write them (in place, or
  // between two areas), the last reads them and produces the layer's result.
  static void set_pass(PartialSums& l, int c, int n, int spill, int area0, int area1,
                       bool in_place) {
    l.acc_in = c > 0;
    l.acc_out = c + 1 < n;
    l.acc_id = spill;
    l.acc_base = (in_place || c % 2 == 1) ? area0 : area1;  // read area of pass c
  }
  static int pass_write_area(int c, int area0, int area1, bool in_place) {
    return (in_place || c % 2 == 0) ? area0 : area1;
  }

  // A convolution run as passes over chunks of its input groups; the last
  // pass's results equal the unsplit layer's. Returns words checked.
  int run_split_conv(const ConvLayer& full, int chunks, bool in_place, const RunOptions& o,
                     const std::string& tag) {
    const Expected want = full.expected(mem_);
    const std::vector<int> cut = random_cuts(full.groups, chunks);
    const int plane = full.in_h * full.in_w, taps = full.kh * full.kw;
    const int pixels = full.out_h() * full.out_w();
    const int spill = spill_bank(full.in_id, full.dst_id, full.dst == ComputeDst::kBank);
    const int area0 = 0, area1 = 4 * pixels;
    // Each chunk's weights, in the layout of a pass with its groups.
    std::vector<ConvLayer> pass;
    int cache = 0;
    std::vector<std::vector<std::vector<Word>>> weights;  // [chunk][pe][word]
    for (int c = 0; c < chunks; ++c) {
      ConvLayer l = full;
      l.groups = cut[c + 1] - cut[c];
      l.in_base = full.in_base + cut[c] * plane;
      l.cache_base = cache;
      cache += taps * l.groups;
      std::vector<std::vector<Word>> w(kP);
      for (int p = 0; p < kP; ++p) {
        for (int t = 0; t < taps; ++t) {
          for (int g = cut[c]; g < cut[c + 1]; ++g) {
            w[p].push_back(mem_.cache[p][full.cache_base + t * full.groups + g]);
          }
        }
      }
      weights.push_back(w);
      set_pass(l, c, chunks, spill, area0, area1, in_place);
      if (l.acc_out) {
        l.pool = false;
        l.dst = ComputeDst::kBank;
        l.dst_id = spill;
        l.dst_base = pass_write_area(c, area0, area1, in_place);
        l.dst_row_stride = 4 * l.out_w();
      }
      pass.push_back(l);
    }
    for (int c = 0; c < chunks; ++c) {
      for (int p = 0; p < kP; ++p) fill_cache(p, pass[c].cache_base, weights[c][p]);
    }
    int words = 0;
    for (int c = 0; c < chunks && !HasFailure(); ++c) {
      const ConvLayer& l = pass[c];
      if (c + 1 == chunks) {
        const Expected last = l.expected(mem_);
        EXPECT_EQ(last.items.size(), want.items.size()) << tag;
        for (size_t i = 0; i < std::min(last.items.size(), want.items.size()); ++i) {
          if (last.items[i].word != want.items[i].word ||
              last.items[i].addr != want.items[i].addr) {
            ADD_FAILURE() << tag << ": the split layer's result differs from the unsplit one at "
                          << "word " << want.items[i].addr << ", STRATA_SEED=" << seed();
            break;
          }
        }
      }
      words += run_pass(l, l.beats(), pixels, l.in_words(), o,
                        fmt::format("{} pass {}/{}", tag, c + 1, chunks));
    }
    return words;
  }

  // The same for an FC: pass c streams words [cut[c], cut[c+1]) of every
  // neuron's weights (re-laid out as its own in_groups) against the matching
  // feature words in the PE caches.
  int run_split_fc(const FcLayer& full, int chunks, bool in_place, const RunOptions& o,
                   const std::string& tag) {
    const Expected want = full.expected(mem_);
    const std::vector<int> cut = random_cuts(full.groups, chunks);
    const int spill = spill_bank(full.in_id, full.dst_id, full.dst == ComputeDst::kBank);
    const int area0 = 0, area1 = 4 * full.neurons;
    std::vector<FcLayer> pass;
    std::vector<std::vector<Word>> weights;
    int base = full.in_base;
    for (int c = 0; c < chunks; ++c) {
      FcLayer l = full;
      l.groups = cut[c + 1] - cut[c];
      l.in_base = base;
      base += l.groups * l.neurons;
      l.cache_base = full.cache_base + cut[c];
      std::vector<Word> w;
      for (int n = 0; n < full.neurons; ++n) {
        for (int t = cut[c]; t < cut[c + 1]; ++t) {
          w.push_back(mem_.bank[full.in_id][full.in_base + n * full.groups + t]);
        }
      }
      weights.push_back(w);
      set_pass(l, c, chunks, spill, area0, area1, in_place);
      if (l.acc_out) {
        l.dst = ComputeDst::kBank;
        l.dst_id = spill;
        l.dst_base = pass_write_area(c, area0, area1, in_place);
      }
      pass.push_back(l);
    }
    for (int c = 0; c < chunks; ++c) fill_bank(full.in_id, pass[c].in_base, weights[c]);
    int words = 0;
    for (int c = 0; c < chunks && !HasFailure(); ++c) {
      const FcLayer& l = pass[c];
      if (c + 1 == chunks) {
        const Expected last = l.expected(mem_);
        for (size_t i = 0; i < std::min(last.items.size(), want.items.size()); ++i) {
          if (last.items[i].word != want.items[i].word) {
            ADD_FAILURE() << tag << ": the split FC's result differs from the unsplit one, "
                          << "STRATA_SEED=" << seed();
            break;
          }
        }
      }
      words += run_pass(l, int64_t(l.neurons) * l.groups, l.neurons, l.neurons * l.groups, o,
                        fmt::format("{} pass {}/{}", tag, c + 1, chunks));
    }
    return words;
  }

  PoolLayer random_pool(bool pe_dst, bool asym = false) {
    PoolLayer l;
    l.in_h = int(rand_int(1, 16));
    l.in_w = int(rand_int(1, 16));
    l.groups = int(rand_int(1, 4));
    random_pool_window(l, l.in_h, l.in_w, asym && rand_int(0, 1) == 1);
    l.avg = rand_int(0, 1) == 1;
    l.ceil_mode = rand_int(0, 1) == 1;
    clamp_pick(l.post_lo, l.post_hi);
    l.in_id = int(rand_int(0, kBanks - 1));
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.dst_row_stride = l.res_w() + int(rand_int(0, 2));
    l.dst_group_stride = l.res_h() * l.dst_row_stride + int(rand_int(0, 5));
    const int span =
        (l.groups - 1) * l.dst_group_stride + (l.res_h() - 1) * l.dst_row_stride + l.res_w();
    random_dst(l, pe_dst && span <= kCacheDepth - kPeDstLo, span);
    return l;
  }

  int run_pool(const PoolLayer& l, const RunOptions& o, const std::string& tag) {
    const uint64_t budget = 60 * uint64_t(l.in_words() + 300);
    return run_layer(l, {1, 1, 1, 1, 1, 0, 3}, o, budget, tag, [&](const RunResult& r) {
      EXPECT_EQ(r.beats, 0u) << "POOL uses no MAC";
      EXPECT_EQ(int(r.reads.size()), l.in_words()) << tag << " " << l.str() << " reads";
    });
  }

  // A random DEPTHWISE layer: kernel 1..max_pool_kernel, stride 1..3, its
  // own padding on each side now and then, up to max_image_width columns.
  DepthwiseLayer random_dw(int max_in = 16) {
    DepthwiseLayer l;
    l.in_h = int(rand_int(1, max_in));
    l.in_w = int(rand_int(1, std::min(max_in, hw::kMaxImageWidth)));
    random_pool_window(l, l.in_h, l.in_w, rand_int(0, 1) == 1);
    l.in_id = int(rand_int(0, kBanks - 1));
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.cache_base = int(rand_int(0, kWeightArea - kDwBeats));
    l.param_base = int(rand_int(0, kParamDepth - kP));
    clamp_pick(l.clamp_lo, l.clamp_hi);
    l.dst_row_stride = l.res_w() + int(rand_int(0, 3));
    const int span = (l.res_h() - 1) * l.dst_row_stride + l.res_w();
    l.dst_id = int(rand_int(0, kBanks - 1));
    l.dst_base = l.dst_id == l.in_id ? int(rand_int(kHalfBank, kBankDepth - span))
                                     : int(rand_int(0, kBankDepth - span));
    return l;
  }

  // Input, weights (random in every byte: the unused taps' bytes must not
  // matter) and parameters of a DEPTHWISE layer.
  void load_dw(const DepthwiseLayer& l) {
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    for (int p = 0; p < kP; ++p) fill_cache(p, l.cache_base, random_words(kDwBeats));
    std::vector<Param> q;
    for (int p = 0; p < kP; ++p) q.push_back(random_param(rng(), l.pk * l.pk));
    if (rand_int(0, 3) == 0) q[rand_int(0, kP - 1)].shift = 0;
    fill_params(l.param_base, q);
  }

  int run_dw(const DepthwiseLayer& l, const RunOptions& o, const std::string& tag) {
    const uint64_t budget = 60 * uint64_t(l.in_words() + kDwBeats * l.res_h() * l.res_w() + 300);
    return run_layer(l, {1, 1, 1, 1, 1, 0, 5}, o, budget, tag, [&](const RunResult& r) {
      EXPECT_EQ(int64_t(r.beats), int64_t(kDwBeats) * l.res_h() * l.res_w())
          << tag << " " << l.str() << " beats";
      // PERF_MACS counts the kernel's taps, not the beats' P x N lane slots.
      EXPECT_EQ(int64_t(r.macs), int64_t(kP) * l.pk * l.pk * l.res_h() * l.res_w())
          << tag << " " << l.str() << " MAC count";
      EXPECT_EQ(int(r.reads.size()), l.in_words()) << tag << " " << l.str() << " reads";
      EXPECT_EQ(r.released[0], 1);
      EXPECT_EQ(r.released[1], 1);
    });
  }

  // Fine-grained run of a layer `l` (POOL or DEPTHWISE) that streams `rows`
  // input rows of l.in_w words: an emulated load engine writes each row only
  // when it releases its L2C unit, the instruction takes one unit per row and
  // releases one per result row, and no row is read before its unit is
  // acquired. Checks the results (IsaSim too) and the releases.
  template <class Layer>
  void run_fine_rows(const Layer& l, int rows, int result_rows, const std::string& what) {
    std::deque<Feed> feeds;
    for (int row = 0; row < rows; ++row) {
      Feed f;
      f.delay = int(rand_int(0, 20));
      f.write(l.in_id, l.in_base + row * l.in_w, random_words(l.in_w));
      feeds.push_back(f);
    }
    const Memories final_mem = after_feeds(mem_, feeds);
    const Expected e = l.expected(final_mem);
    isa::ComputeInstr c = l.instr();
    c.hdr.acq0 = rows;
    c.hdr.acq0_first = 1;
    c.hdr.acq0_step = 1;
    c.hdr.rel0 = result_rows;
    RunOptions o;
    o.fine = true;
    const RunResult r = run(isa::encode(c), o, feeds, [&](const BankRead& rd, const RunResult& rr) {
      const int row = (rd.addr - l.in_base) / l.in_w;
      if (row >= rr.acquired[0]) {
        ADD_FAILURE() << l.str() << ": input row " << row << " read with " << rr.acquired[0]
                      << " acquired, STRATA_SEED=" << seed();
      }
    });
    ASSERT_TRUE(r.retired) << l.str();
    check_fine(what, e, r, c, final_mem);
    EXPECT_EQ(r.released[0], result_rows);
  }

  // Runs c (its units provided) under stress and aborts it `at` cycles after
  // the take: no error, the engine idle, and quiet afterwards (no bank
  // access, no cache write).
  void abort_and_check_quiet(isa::ComputeInstr c, uint64_t at) {
    c.hdr = {1, 1, 1, 1, 1, 0, 0};
    provide(c.hdr);
    RunOptions o = stressed();
    o.abort_at = at;
    o.background_pe = false;
    const RunResult r = run(isa::encode(c), o);
    EXPECT_FALSE(r.error) << "abort at " << at;
    auto& d = dut();
    settle();
    EXPECT_TRUE(d.idle_o && !d.busy_o) << "abort at " << at << ": not idle";
    for (int i = 0; i < 30; ++i) {
      settle();
      EXPECT_FALSE(d.obs_rd_fire_o || d.obs_wr_fire_o || d.obs_cache_we_o)
          << "activity after the abort at " << at;
      tick();
    }
    sem_ = {};
  }

  // Runs c from the memories as they are and checks it (IsaSim too) if it
  // retired; the caller asserts that it did.
  RunResult run_and_check(const std::string& what, const Expected& e, const isa::ComputeInstr& c,
                          const RunOptions& o) {
    sim_memories_ = mem_;
    const isa::Instruction in = isa::encode(c);
    const RunResult r = run(in, o);
    if (r.retired) check(what, e, r, &in);
    return r;
  }

  // A small valid convolution, loaded, for runs after errors and aborts.
  ConvLayer small_conv() {
    ConvLayer l;
    l.in_h = 6;
    l.in_w = 5;
    l.groups = 2;
    l.kh = 3;
    l.kw = 3;
    l.ph = 1;
    l.pw = 1;
    l.in_id = 1;
    l.in_base = 100;
    l.cache_base = 20;
    l.param_base = 40;
    l.dst_id = 2;
    l.dst_base = 300;
    l.dst_row_stride = 5;
    return l;
  }

  RunOptions stressed() {
    RunOptions o;
    o.instr_gap = 0.5;
    o.rd_stall = 0.3;
    o.wr_stall = 0.3;
    o.grant_gap = 0.3;
    o.background_pe = true;
    o.pe_gap = 0.5;
    return o;
  }
};

// ---------------------------------------------------------------------------
// Convolution.

TEST_F(StrataComputeEngine, ConvRandomFullRate) {
  const int words = conv_batch(40, 0.3, 0.25, RunOptions{}, 0.0, 1000);
  std::cout << "[ CHECKED  ] " << words << " result words (x " << kP << " channels)" << std::endl;
  EXPECT_GE(words, 1000);
}

TEST_F(StrataComputeEngine, ConvRandomBackPressure) {
  const int words = conv_batch(24, 0.3, 0.25, stressed(), 0.3, 200);
  std::cout << "[ CHECKED  ] " << words << " result words" << std::endl;
  EXPECT_GE(words, 200);
}

TEST_F(StrataComputeEngine, ConvRandomHeavyStall) {
  RunOptions o = stressed();
  o.rd_stall = 0.8;
  o.wr_stall = 0.8;
  o.pe_gap = 0.1;
  conv_batch(8, 0.5, 0.3, o);
}

TEST_F(StrataComputeEngine, ConvPooledAllModes) {
  // Max and avg, floor and ceil, every window and pad, on odd sizes.
  int words = 0, i = 0;
  for (bool avg : {false, true}) {
    for (bool ceil_mode : {false, true}) {
      for (int k = 1; k <= hw::kMaxPoolKernel; ++k) {
        for (int s = 1; s <= 3; ++s) {
          ConvLayer l = random_conv(false, false, 9);
          l.pool = true;
          l.avg = avg;
          l.ceil_mode = ceil_mode;
          l.pk = k;
          l.ps = s;
          l.pp = int(rand_int(0, k - 1));
          if (l.out_h() + 2 * l.pp < k || l.out_w() + 2 * l.pp < k) continue;
          l.dst_row_stride = l.res_w();
          l.dst_id = l.in_id ^ 1;
          l.dst_base = int(rand_int(0, kBankDepth - l.res_h() * l.res_w()));
          load_conv(l);
          words += run_conv(l, RunOptions{}, fmt::format("pooled {}", i++));
          if (HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GE(words, 50);
}

TEST_F(StrataComputeEngine, ConvEdgeShapes) {
  // 1x1 images, 1x1 kernels, kernels as tall as the padded input, the first
  // layer's reordered k x 1 form, stride 2 with pad, 16 x 16 x 4 groups.
  struct Shape {
    int h, w, g, kh, kw, sh, sw, ph, pw;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1, 1, 1, 1, 0, 0}, {1, 1, 4, 3, 3, 1, 1, 1, 1},   {1, 1, 1, 5, 5, 2, 2, 4, 4},
      {7, 1, 2, 5, 1, 1, 1, 2, 0}, {16, 16, 1, 5, 1, 1, 1, 2, 0}, {16, 16, 4, 5, 5, 1, 1, 2, 2},
      {9, 9, 3, 5, 5, 2, 2, 2, 2}, {2, 16, 1, 4, 3, 2, 1, 3, 0},  {16, 2, 2, 1, 5, 2, 2, 0, 4},
      {5, 5, 1, 5, 5, 1, 1, 0, 0},
  };
  int i = 0;
  for (const Shape& s : shapes) {
    ConvLayer l = random_conv(false, false);
    l.in_h = s.h;
    l.in_w = s.w;
    l.groups = s.g;
    l.kh = s.kh;
    l.kw = s.kw;
    l.sh = s.sh;
    l.sw = s.sw;
    l.ph = s.ph;
    l.pw = s.pw;
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.cache_base = int(rand_int(0, kWeightArea - l.taps()));
    l.dst_row_stride = l.out_w();
    l.dst_id = l.in_id ^ 1;
    l.dst_base = int(rand_int(0, kBankDepth - l.out_h() * l.out_w()));
    load_conv(l);
    run_conv(l, RunOptions{}, fmt::format("shape {}", i++));
    if (HasFailure()) return;
  }
}

// Padding of its own on each side (docs/isa.md, COMPUTE): top != bottom,
// left != right, padding on one side only, with and without a fused pool whose
// padding is asymmetric too, in floor and ceil mode.
TEST_F(StrataComputeEngine, ConvAsymmetricPadding) {
  struct Case {
    int h, w, kh, kw, sh, sw;
    std::array<int, 4> pad;       // top, left, bottom, right
    int pk, ps;                   // pk 0: no pool
    std::array<int, 4> pool_pad;  // top, left, bottom, right
    bool avg, ceil_mode;
  };
  const Case cases[] = {
      {7, 6, 3, 3, 1, 1, {1, 0, 0, 1}, 0, 0, {}, false, false},
      {9, 8, 5, 3, 2, 2, {2, 0, 0, 2}, 0, 0, {}, false, false},
      {6, 6, 3, 3, 1, 1, {1, 0, 0, 0}, 0, 0, {}, false, false},
      {5, 7, 4, 2, 1, 2, {0, 1, 3, 0}, 0, 0, {}, false, false},
      {8, 8, 3, 3, 1, 1, {0, 1, 1, 0}, 3, 2, {1, 0, 0, 1}, false, true},
      {7, 9, 3, 3, 1, 1, {1, 1, 0, 0}, 2, 2, {0, 0, 1, 1}, true, true},
      {9, 7, 3, 3, 1, 1, {2, 0, 1, 2}, 3, 1, {2, 1, 0, 0}, true, false},
      {6, 6, 3, 3, 1, 1, {0, 0, 2, 2}, 3, 2, {0, 0, 0, 2}, false, true},
      {10, 5, 5, 1, 1, 1, {4, 0, 0, 0}, 3, 3, {0, 2, 2, 0}, true, true},
  };
  int i = 0, words = 0;
  for (const Case& k : cases) {
    ConvLayer l = random_conv(false, false);
    l.in_h = k.h;
    l.in_w = k.w;
    l.kh = k.kh;
    l.kw = k.kw;
    l.sh = k.sh;
    l.sw = k.sw;
    l.ph = k.pad[0];
    l.pw = k.pad[1];
    l.pb = k.pad[2];
    l.pr = k.pad[3];
    if (k.pk > 0) {
      l.pool = true;
      l.pk = k.pk;
      l.ps = k.ps;
      l.pp_side = k.pool_pad;
      l.avg = k.avg;
      l.ceil_mode = k.ceil_mode;
    }
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.cache_base = int(rand_int(0, kWeightArea - l.taps()));
    l.dst_row_stride = l.res_w();
    l.dst_id = l.in_id ^ 1;
    l.dst_base = int(rand_int(0, kBankDepth - l.res_h() * l.res_w()));
    load_conv(l);
    words += run_conv(l, i % 2 == 0 ? RunOptions{} : stressed(), fmt::format("asym {}", i));
    ++i;
    if (HasFailure()) return;
  }
  // The same at random: every pad, kernel and pooling window drawn anew.
  for (int j = 0; j < 12 && !HasFailure(); ++j) {
    ConvLayer l = random_conv(rand_int(0, 1) == 1, false, 12);
    l.pb = int(rand_int(0, l.kh - 1));
    l.pr = int(rand_int(0, l.kw - 1));
    l.in_h = std::max(l.in_h, l.kh - l.ph - l.pb);
    l.in_w = std::max(l.in_w, l.kw - l.pw - l.pr);
    if (l.pool) {
      do {
        for (int& side : l.pp_side) side = int(rand_int(0, l.pk - 1));
      } while (!l.pool_fits(l.out_h(), l.out_w()));
    }
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.dst_row_stride = l.res_w();
    l.dst_id = l.in_id ^ 1;
    l.dst_base = int(rand_int(0, kBankDepth - l.res_h() * l.res_w()));
    load_conv(l);
    words += run_conv(l, RunOptions{}, fmt::format("random asym {}", j));
  }
  std::cout << "[ CHECKED  ] " << words << " result words" << std::endl;
}

// ---------------------------------------------------------------------------
// FC and POOL.

TEST_F(StrataComputeEngine, FcBatchBank) {
  int words = 0;
  for (int i = 0; i < 10 && !HasFailure(); ++i) {
    const FcLayer l = random_fc(false);
    load_fc(l);
    words += run_fc(l, RunOptions{}, fmt::format("fc {}", i));
  }
  EXPECT_GE(words, 50);
}

TEST_F(StrataComputeEngine, FcBatchTranspose) {
  // Neuron counts around multiples of N: full words and a partial last word
  // (zero bytes), in_groups = 1 (one neuron per cycle) included.
  const int counts[] = {1, kN - 1, kN, kN + 1, 2 * kN, 3 * kN + 5};
  int i = 0;
  for (int n : counts) {
    FcLayer l = random_fc(true);
    l.neurons = n;
    l.groups = i == 0 ? 1 : int(rand_int(1, 6));
    if (i == 2) l.groups = 1;
    l.in_base = int(rand_int(0, kHalfBank - l.neurons * l.groups));
    l.cache_base = int(rand_int(0, kWeightArea - l.groups));
    l.param_base = int(rand_int(0, kParamDepth - l.neurons));
    l.dst_base = int(rand_int(kPeDstLo, kCacheDepth - l.out_words()));
    load_fc(l);
    run_fc(l, RunOptions{}, fmt::format("fc transpose {}", i++));
    if (HasFailure()) return;
  }
}

TEST_F(StrataComputeEngine, FcRandomBackPressure) {
  for (int i = 0; i < 10 && !HasFailure(); ++i) {
    const FcLayer l = random_fc(rand_int(0, 1) == 1);
    load_fc(l);
    run_fc(l, stressed(), fmt::format("fc {}", i));
  }
}

// ---------------------------------------------------------------------------
// Partial sums: layers split over their input groups, the int32 sums carried
// between the passes through a bank (acc_out, then acc_in); the last pass
// equals the unsplit layer word for word.

TEST_F(StrataComputeEngine, PartialSumsConv) {
  int words = 0;
  for (int i = 0; i < 16 && !HasFailure(); ++i) {
    ConvLayer l = random_conv(rand_int(0, 2) == 0, rand_int(0, 3) == 0, 12, true);
    l.groups = int(rand_int(2, 4));
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.cache_base = int(rand_int(0, kWeightArea - l.taps()));
    load_conv(l);
    maybe_wide_biases(l.param_base, kP);
    const int chunks = int(rand_int(2, l.groups));
    words += run_split_conv(l, chunks, i % 2 == 0, i % 3 == 2 ? stressed() : RunOptions{},
                            fmt::format("split conv {}", i));
  }
  std::cout << "[ CHECKED  ] " << words << " result words" << std::endl;
  EXPECT_GE(words, 500);
}

TEST_F(StrataComputeEngine, PartialSumsFc) {
  int words = 0;
  for (int i = 0; i < 12 && !HasFailure(); ++i) {
    FcLayer l = random_fc(i % 3 == 1);
    l.groups = int(rand_int(2, 8));
    l.in_base = int(rand_int(0, kHalfBank - l.neurons * l.groups));
    l.cache_base = int(rand_int(0, kWeightArea - l.groups));
    load_fc(l);
    maybe_wide_biases(l.param_base, l.neurons);
    const int chunks = int(rand_int(2, std::min(l.groups, 4)));
    words += run_split_fc(l, chunks, i % 2 == 0, i % 4 == 3 ? stressed() : RunOptions{},
                          fmt::format("split fc {}", i));
  }
  EXPECT_GE(words, 100);
}

TEST_F(StrataComputeEngine, PoolMode) {
  int words = 0;
  for (int i = 0; i < 16 && !HasFailure(); ++i) {
    const PoolLayer l = random_pool(rand_int(0, 3) == 0, true);
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    words += run_pool(l, i % 2 == 0 ? RunOptions{} : stressed(), fmt::format("pool {}", i));
  }
  EXPECT_GE(words, 100);
}

// POOL with padding of its own on each side, floor and ceil mode (the last
// ceil window must start inside the input or its top / left padding).
TEST_F(StrataComputeEngine, PoolAsymmetricPadding) {
  struct Case {
    int h, w, k, s;
    std::array<int, 4> pad;  // top, left, bottom, right
    bool avg, ceil_mode;
  };
  const Case cases[] = {
      {6, 6, 3, 2, {0, 1, 2, 0}, false, true},  {6, 6, 2, 2, {1, 0, 0, 1}, true, true},
      {9, 7, 3, 3, {2, 2, 0, 0}, false, false}, {7, 6, 3, 2, {0, 0, 0, 2}, true, true},
      {5, 8, 3, 1, {1, 0, 2, 1}, true, false},  {1, 1, 3, 1, {2, 0, 0, 2}, false, false},
      {6, 7, 2, 2, {0, 1, 1, 0}, true, true},   {8, 5, 3, 2, {1, 2, 0, 1}, false, true},
  };
  int i = 0, words = 0;
  for (const Case& k : cases) {
    PoolLayer l = random_pool(false);
    l.in_h = k.h;
    l.in_w = k.w;
    l.pk = k.k;
    l.ps = k.s;
    l.pp_side = k.pad;
    l.avg = k.avg;
    l.ceil_mode = k.ceil_mode;
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.dst_row_stride = l.res_w();
    l.dst_group_stride = l.res_h() * l.res_w();
    l.dst_id = l.in_id ^ 1;
    l.dst_base = int(rand_int(0, kBankDepth - l.groups * l.dst_group_stride));
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    words += run_pool(l, i % 2 == 0 ? RunOptions{} : stressed(), fmt::format("asym {}", i));
    ++i;
    if (HasFailure()) return;
  }
  for (int j = 0; j < 12 && !HasFailure(); ++j) {
    PoolLayer l = random_pool(rand_int(0, 3) == 0, true);
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    words += run_pool(l, RunOptions{}, fmt::format("random asym {}", j));
  }
  EXPECT_GE(words, 100);
}

TEST_F(StrataComputeEngine, StandaloneClamp) {
  // POOL with a 1x1 window: the standalone clamp of docs/isa.md.
  PoolLayer l = random_pool(false);
  l.pk = 1;
  l.ps = 1;
  l.pp = 0;
  l.ceil_mode = false;
  l.post_lo = -20;
  l.post_hi = 33;
  l.dst_row_stride = l.in_w;
  l.dst_group_stride = l.in_h * l.in_w;
  l.dst_id = l.in_id ^ 2;
  l.dst_base = 0;
  fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
  run_pool(l, RunOptions{}, "clamp");
}

// CONV results into every PE's cache (batch features), then an FC layer reads
// them: the PE_CACHE destination feeds the next layer.
TEST_F(StrataComputeEngine, PeCacheFeedsFc) {
  ConvLayer conv = random_conv(true, true, 8);
  conv.kh = conv.kw = 3;
  conv.sh = conv.sw = 1;
  conv.ph = conv.pw = 1;
  conv.in_h = conv.in_w = 6;
  conv.pool = true;
  conv.pk = 2;
  conv.ps = 2;
  conv.pp = 0;
  conv.ceil_mode = false;
  conv.dst_row_stride = conv.res_w();
  conv.cache_base = 0;
  const int feat = conv.res_h() * conv.res_w();  // FC groups
  conv.dst_base = 300;
  for (int p = 0; p < kP && !HasFailure(); ++p) {
    conv.dst_id = p;
    conv.in_base = int(rand_int(0, kHalfBank - conv.in_words()));
    load_conv(conv);
    run_conv(conv, p % 2 ? stressed() : RunOptions{}, fmt::format("image {}", p));
  }
  FcLayer fc = random_fc(false);
  fc.groups = feat;
  fc.cache_base = 300;
  fc.in_base = 0;
  fc.neurons = 20;
  fc.param_base = 100;
  load_fc(fc, false);  // the features are the convolutions' results
  run_fc(fc, RunOptions{}, "fc on the conv features");
}

// ---------------------------------------------------------------------------
// Throughput: a 16x16x32 -> 32 layer, 5x5 kernel, pad 2, as four passes of P
// output channels with no stall anywhere.

TEST_F(StrataComputeEngine, ConvThroughput) {
  ConvLayer l;
  l.in_h = l.in_w = 16;
  l.groups = 32 / kN;
  l.kh = l.kw = 5;
  l.ph = l.pw = 2;
  l.in_id = 0;
  l.in_base = 0;
  l.dst_id = 1;
  l.dst_row_stride = 16;
  l.clamp_lo = 0;
  fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
  uint64_t beats = 0, cycles = 0;
  const int passes = 32 / kP;
  for (int pass = 0; pass < passes && !HasFailure(); ++pass) {
    l.cache_base = pass * l.taps();
    l.param_base = pass * kP;
    l.dst_base = pass * 256;
    for (int p = 0; p < kP; ++p) fill_cache(p, l.cache_base, random_words(l.taps()));
    std::vector<Param> q;
    for (int p = 0; p < kP; ++p) q.push_back(random_param(rng(), l.taps() * kN));
    fill_params(l.param_base, q);
    const Expected e = l.expected(mem_);
    isa::ComputeInstr c = l.instr();
    c.hdr = {1, 0, 1, 0, 1, 0, 0};
    provide(c.hdr);
    RunOptions o;
    o.budget = 100000;
    const RunResult r = run_and_check(fmt::format("pass {}", pass), e, c, o);
    ASSERT_TRUE(r.retired);
    EXPECT_EQ(int64_t(r.beats), l.beats());
    // One beat every cycle from the first to the last: no bubble between
    // taps, windows or rows.
    EXPECT_EQ(r.last_beat - r.first_beat + 1, r.beats) << "beats are not back to back";
    EXPECT_EQ(r.stall_cycles, 0u);
    beats += r.beats;
    cycles += r.cycles();
    std::cout << fmt::format(
                     "[ MEASURED ] pass {}: {} beats in {} cycles (take to retire), "
                     "first beat {} cycles after the take, drain {} cycles",
                     pass, r.beats, r.cycles(), r.first_beat - r.take, r.done - r.last_beat)
              << std::endl;
  }
  const double util = double(beats) / double(cycles);
  std::cout << fmt::format(
                   "[ MEASURED ] conv 16x16x32 -> 32, 5x5 pad 2: {} beats ({} MACs) in "
                   "{} cycles: {:.4f} beats/cycle (PE array utilisation {:.2f} %)",
                   beats, beats * kP * kN, cycles, util, 100.0 * util)
            << std::endl;
  RecordProperty("beats_per_cycle", fmt::format("{:.4f}", util));
  EXPECT_EQ(beats, uint64_t(passes) * 21904u);  // 74 x 74 valid taps x 4 groups per pass
  EXPECT_GE(util, 0.95);
}

// Full-rate properties of the other shapes, no stall anywhere: FC beats are
// back to back across neurons, a pooled convolution keeps the array busy, and
// POOL streams one pixel per cycle within a frame. Figures are printed.
TEST_F(StrataComputeEngine, OtherThroughput) {
  auto report = [&](const std::string& what, const RunResult& r, uint64_t work) {
    std::cout << fmt::format(
                     "[ MEASURED ] {}: {} beats, {} reads in {} cycles (take to retire): "
                     "{:.4f} per cycle",
                     what, r.beats, r.reads.size(), r.cycles(), double(work) / double(r.cycles()))
              << std::endl;
  };
  RunOptions o;
  o.budget = 100000;
  {  // FC 128 inputs -> 64 neurons for 8 images, BANK.
    FcLayer l;
    l.groups = 16;
    l.neurons = 64;
    l.in_id = 0;
    l.dst_id = 1;
    load_fc(l);
    const Expected e = l.expected(mem_);
    isa::ComputeInstr c = l.instr();
    const RunResult r = run_and_check("fc throughput", e, c, o);
    ASSERT_TRUE(r.retired);
    EXPECT_EQ(r.beats, 1024u);
    EXPECT_EQ(r.last_beat - r.first_beat + 1, r.beats) << "FC beats are not back to back";
    report("FC 128 -> 64 x 8 images (16 groups), BANK", r, r.beats);
  }
  {  // FC with one group per neuron into PE_TRANSPOSE: the documented half rate.
    FcLayer l;
    l.groups = 1;
    l.neurons = 64;
    l.in_id = 0;
    l.cache_base = 0;
    l.param_base = 64;
    l.dst = ComputeDst::kPeTranspose;
    l.dst_base = kPeDstLo;
    load_fc(l);
    const Expected e = l.expected(mem_);
    const RunResult r = run(isa::encode(l.instr()), o);
    ASSERT_TRUE(r.retired);
    check("fc transpose throughput", e, r);
    EXPECT_LE(r.cycles(), 2 * r.beats + 60) << "PE_TRANSPOSE slower than half rate";
    report("FC 8 -> 64 x 8 images (1 group), PE_TRANSPOSE", r, r.beats);
  }
  {  // cifar10_quick conv1 shape after input reordering: 32x32, 5x1 kernel,
     // then max pool 3x3 s2 ceil.
    ConvLayer l;
    l.in_h = l.in_w = 32;
    l.groups = 1;
    l.kh = 5;
    l.kw = 1;
    l.ph = 2;
    l.in_id = 2;
    l.cache_base = 0;
    l.param_base = 0;
    l.pool = true;
    l.pk = 3;
    l.ps = 2;
    l.ceil_mode = true;
    l.clamp_lo = 0;
    l.dst_id = 3;
    l.dst_base = 0;
    l.dst_row_stride = 16;
    load_conv(l);
    const Expected e = l.expected(mem_);
    isa::ComputeInstr c = l.instr();
    const RunResult r = run_and_check("pooled conv throughput", e, c, o);
    ASSERT_TRUE(r.retired);
    EXPECT_EQ(int64_t(r.beats), l.beats());
    EXPECT_EQ(r.last_beat - r.first_beat + 1, r.beats) << "pooled conv beats not back to back";
    EXPECT_GE(double(r.beats) / double(r.cycles()), 0.95);
    report("CONV 32x32 k5x1 p2 + maxpool 3x3 s2 ceil -> 16x16", r, r.beats);
  }
  {  // POOL 16x16 x 4 groups, avg 3x3 s2 ceil.
    PoolLayer l;
    l.in_h = l.in_w = 16;
    l.groups = 4;
    l.avg = true;
    l.pk = 3;
    l.ps = 2;
    l.ceil_mode = true;
    l.in_id = 0;
    l.in_base = 0;
    l.dst_id = 1;
    l.dst_base = 0;
    l.dst_row_stride = l.res_w();
    l.dst_group_stride = l.res_h() * l.res_w();
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    const Expected e = l.expected(mem_);
    isa::ComputeInstr c = l.instr();
    const RunResult r = run_and_check("pool throughput", e, c, o);
    ASSERT_TRUE(r.retired);
    // One pixel per cycle within a frame; frames do not overlap in the
    // window generator (its tail: the last output row's walk).
    EXPECT_LE(r.cycles(), uint64_t(l.in_words()) + uint64_t(l.groups) * 40 + 60);
    report("POOL 16x16 x 4 groups, avg 3x3 s2 ceil -> 8x8", r, r.reads.size());
  }
}

// ---------------------------------------------------------------------------
// DEPTHWISE.

// Random depthwise layers (kernel 1..3, stride 1..3, symmetric and
// asymmetric padding, clamps, requantiser corners), half of them under
// back-pressure, instruction and grant gaps and load-engine cache traffic.
TEST_F(StrataComputeEngine, DepthwiseMode) {
  int words = 0;
  for (int i = 0; i < 24 && !HasFailure(); ++i) {
    const DepthwiseLayer l = random_dw();
    load_dw(l);
    words += run_dw(l, i % 2 == 0 ? RunOptions{} : stressed(), fmt::format("dw {}", i));
  }
  EXPECT_GE(words, 200);
}

// The corners: a 1x1 map, one row, one column, the widest row the line
// buffer holds, kernels 1 and 2, stride 3, every padding side alone.
TEST_F(StrataComputeEngine, DepthwiseEdgeShapes) {
  struct Case {
    int h, w, k, s;
    std::array<int, 4> pad;  // top, left, bottom, right
  };
  const Case cases[] = {
      {1, 1, 3, 1, {1, 1, 1, 1}}, {1, 9, 3, 1, {1, 1, 1, 1}},
      {9, 1, 3, 2, {1, 1, 1, 1}}, {3, hw::kMaxImageWidth, 3, 1, {1, 1, 1, 1}},
      {5, 6, 1, 1, {0, 0, 0, 0}}, {6, 5, 2, 2, {0, 0, 0, 0}},
      {7, 7, 2, 1, {1, 0, 0, 1}}, {10, 11, 3, 3, {0, 0, 0, 0}},
      {8, 8, 3, 2, {1, 0, 0, 0}}, {8, 8, 3, 2, {0, 1, 0, 0}},
      {8, 8, 3, 2, {0, 0, 1, 0}}, {8, 8, 3, 2, {0, 0, 0, 1}},
      {8, 8, 3, 2, {0, 0, 1, 1}},
  };
  int i = 0;
  for (const Case& k : cases) {
    if (k.k > hw::kMaxPoolKernel) continue;
    DepthwiseLayer l = random_dw();
    l.in_h = k.h;
    l.in_w = k.w;
    l.pk = k.k;
    l.ps = k.s;
    l.pp_side = k.pad;
    l.in_base = int(rand_int(0, kHalfBank - l.in_words()));
    l.dst_row_stride = l.res_w();
    l.dst_id = l.in_id ^ 1;
    l.dst_base = int(rand_int(0, kBankDepth - l.res_h() * l.res_w()));
    load_dw(l);
    run_dw(l, i % 2 == 0 ? RunOptions{} : stressed(), fmt::format("dw edge {}", i));
    ++i;
    if (HasFailure()) return;
  }
}

// Fine-grained DEPTHWISE: one L2C unit per input row, one C2S unit per
// result row.
TEST_F(StrataComputeEngine, FineGrainedDepthwise) {
  for (int iter = 0; iter < 4 && !HasFailure(); ++iter) {
    const DepthwiseLayer l = random_dw();
    load_dw(l);
    run_fine_rows(l, l.in_h, l.res_h(), fmt::format("fine dw {}", iter));
  }
}

// Lane use of DEPTHWISE: a stride-1 3x3 window takes kDwBeats back-to-back
// beats, so a frame runs at one window per kDwBeats cycles; stride 2 is
// bound by the generator's input (one word per cycle).
TEST_F(StrataComputeEngine, DepthwiseThroughput) {
  RunOptions o;
  o.budget = 100000;
  for (const int stride : {1, 2}) {
    DepthwiseLayer l;
    l.in_h = l.in_w = 32;
    l.pk = std::min(3, hw::kMaxPoolKernel);
    l.ps = stride;
    l.pp = l.pk / 2;
    l.in_id = 0;
    l.dst_id = 1;
    l.dst_row_stride = l.res_w();
    load_dw(l);
    const Expected e = l.expected(mem_);
    const RunResult r = run_and_check(fmt::format("dw throughput s{}", stride), e, l.instr(), o);
    ASSERT_TRUE(r.retired);
    const uint64_t windows = uint64_t(l.res_h()) * uint64_t(l.res_w());
    EXPECT_EQ(r.beats, windows * kDwBeats);
    const uint64_t bound = std::max<uint64_t>(windows * kDwBeats, l.in_words());
    EXPECT_LE(r.cycles(), bound + bound / 10 + 80) << "DEPTHWISE slower than its bound";
    const double useful = double(windows) * l.pk * l.pk * kN;
    std::cout << fmt::format(
                     "[ MEASURED ] DEPTHWISE 32x32 k{} s{} -> {}x{}: {} beats in {} "
                     "cycles (take to retire), {:.1f} % of the array's MAC slots used",
                     l.pk, stride, l.res_h(), l.res_w(), r.beats, r.cycles(),
                     100.0 * useful / (double(r.cycles()) * kP * kN))
              << std::endl;
  }
}

// Performance strobes: one MAC strobe per beat with P x N MACs, stall_out_o
// while the destination holds the array back, dep_wait_o while waiting.
TEST_F(StrataComputeEngine, PerfStrobes) {
  ConvLayer l = small_conv();
  l.kh = l.kw = 1;  // one beat per output pixel per group: the result path is busy
  l.ph = l.pw = 0;
  l.groups = 1;
  // 144 beats, so the stall count is far above the bound for every seed (with
  // the 6 x 5 image's 30 beats it was 19 for STRATA_SEED=1600272181).
  l.in_h = l.in_w = 12;
  l.dst_row_stride = 12;
  load_conv(l);
  const Expected e = l.expected(mem_);
  isa::ComputeInstr c = l.instr();
  c.hdr = {1, 0, 1, 0, 1, 0, 0};
  std::deque<Feed> feeds;
  feeds.push_back({0, 1, 150, {}, {}});  // the L2C unit arrives 150 cycles in
  RunOptions o;
  o.wr_stall = 0.9;
  const RunResult r = run(isa::encode(c), o, feeds);
  ASSERT_TRUE(r.retired);
  check("perf strobes", e, r);
  EXPECT_EQ(int64_t(r.beats), l.beats());
  EXPECT_EQ(r.macs, r.beats * kP * kN);
  EXPECT_GT(r.stall_cycles, 20u) << "stall_out_o never rose with a stalled destination";
  EXPECT_GE(r.dep_wait_cycles, 100u) << "dep_wait_o while the L2C unit is missing";
  EXPECT_GT(r.cycles(), 4 * r.beats) << "a 90 % stalled destination must slow the layer";
}

// ---------------------------------------------------------------------------
// Dependencies.

// Completion mode: nothing is read before both acquisitions, everything is
// released after the last write, with the header's amounts.
TEST_F(StrataComputeEngine, CompletionDependencies) {
  const ConvLayer l = small_conv();
  load_conv(l);
  const Expected e = l.expected(mem_);
  isa::ComputeInstr c = l.instr();
  c.hdr = {5, 3, 7, 2, 0, 0, 1};
  std::deque<Feed> feeds;
  feeds.push_back({1, 3, 150, {}, {}});
  feeds.push_back({0, 2, 50, {}, {}});
  feeds.push_back({0, 3, 80, {}, {}});
  uint64_t acquired_at = 0;
  const RunResult r = run(
      isa::encode(c), RunOptions{}, feeds,
      [&](const BankRead& rd, const RunResult& rr) {
        if (rr.acquired[0] != 5 || rr.acquired[1] != 3) {
          ADD_FAILURE() << "read of word " << rd.addr << " at cycle " << rd.cycle
                        << " before the acquisitions (L2C " << rr.acquired[0] << ", S2C "
                        << rr.acquired[1] << "), STRATA_SEED=" << seed();
        }
        if (acquired_at == 0) acquired_at = rd.cycle;
      },
      [&](const Release& rel, const RunResult& rr) {
        EXPECT_FALSE(rr.writes.empty());
        EXPECT_EQ(rr.writes.size(), e.items.size())
            << "release at cycle " << rel.cycle << " before the last write";
      });
  ASSERT_TRUE(r.retired);
  check("completion", e, r);
  EXPECT_EQ(r.released[0], 7);
  EXPECT_EQ(r.released[1], 2);
  EXPECT_EQ(r.releases.size(), 2u) << "completion mode releases once per edge";
  EXPECT_GT(r.dep_wait_cycles, 200u) << "dep_wait_o while waiting for the units";
}

// Fine-grained CONV: the emulated load engine writes input row y (all groups)
// and then releases one L2C unit; the engine must start on the first rows and
// release a C2S unit per result row, each after that row is written.
TEST_F(StrataComputeEngine, FineGrainedConv) {
  for (int iter = 0; iter < 6 && !HasFailure(); ++iter) {
    ConvLayer l = random_conv(iter % 2 == 1, false, 12);
    l.in_h = std::max(l.in_h, 6);
    // More rows make the input longer: keep it in the lower half of the bank
    // (random_conv placed it for the original height), below a destination
    // in the upper half, or the instruction is rightly UNSUPPORTED (overlap).
    l.in_base = std::min(l.in_base, kHalfBank - l.in_words());
    l.dst_row_stride = l.res_w() + 1;
    l.dst_base = l.dst_id == l.in_id ? kHalfBank : 0;
    load_conv(l);  // the input region now holds stale data
    // The real rows, written only by the feeds.
    std::vector<std::vector<Word>> rows(l.in_h);
    std::deque<Feed> feeds;
    for (int y = 0; y < l.in_h; ++y) {
      Feed f;
      f.edge = 0;
      f.units = 1;
      f.delay = int(rand_int(0, 40));
      for (int g = 0; g < l.groups; ++g) {
        f.write(l.in_id, l.in_base + (g * l.in_h + y) * l.in_w, random_words(l.in_w));
      }
      feeds.push_back(f);
    }
    const Memories final_mem = after_feeds(mem_, feeds);
    const Expected e = l.expected(final_mem);
    isa::ComputeInstr c = l.instr();
    c.hdr.acq0 = l.in_h;
    c.hdr.acq0_first = std::min(l.in_h, l.kh - l.ph);
    c.hdr.acq0_step = l.sh;
    c.hdr.acq1 = 1;
    c.hdr.rel0 = l.res_h();
    c.hdr.rel1 = 1;
    sem_[1] += 1;
    RunOptions o;
    o.fine = true;
    o.rd_stall = 0.2;
    o.wr_stall = 0.4;
    o.budget = 200000;
    int64_t min_acquired = l.in_h;
    const int res_w = l.res_w();
    const RunResult r = run(
        isa::encode(c), o, feeds,
        [&](const BankRead& rd, const RunResult& rr) {
          const int y = ((rd.addr - l.in_base) / l.in_w) % l.in_h;
          if (y >= rr.acquired[0]) {
            ADD_FAILURE() << l.str() << ": read of input row " << y << " with only "
                          << rr.acquired[0] << " rows acquired, STRATA_SEED=" << seed();
          }
          min_acquired = std::min(min_acquired, rr.acquired[0]);
        },
        [&](const Release& rel, const RunResult& rr) {
          if (rel.edge != 0) return;
          // Result rows completely written so far.
          std::map<int, int> cols;
          for (const auto& w : rr.writes) ++cols[(w.addr - l.dst_base) / l.dst_row_stride];
          int complete = 0;
          while (cols.count(complete) && cols[complete] == res_w) ++complete;
          if (rr.released[0] > complete) {
            ADD_FAILURE() << l.str() << ": " << rr.released[0] << " C2S units released with "
                          << complete << " result rows written, STRATA_SEED=" << seed();
          }
        });
    ASSERT_TRUE(r.retired) << l.str();
    check_fine(fmt::format("fine {} {}", iter, l.str()), e, r, c, final_mem);
    EXPECT_EQ(r.released[0], l.res_h());
    EXPECT_EQ(r.released[1], 1);
    EXPECT_EQ(r.acquired[0], l.in_h);
    // It really overlapped: it read before the last row was loaded, and
    // released result rows one by one.
    EXPECT_LT(min_acquired, l.in_h) << l.str() << " waited for every row";
    if (l.res_h() >= 3) {
      EXPECT_GE(releases_on(r, 0), l.res_h() - 1) << "C2S not released row by row";
    }
  }
}

// Fine-grained FC: one L2C unit per neuron's weights, one C2S unit per neuron.
TEST_F(StrataComputeEngine, FineGrainedFc) {
  for (int iter = 0; iter < 4 && !HasFailure(); ++iter) {
    FcLayer l = random_fc(iter % 2 == 1);
    l.neurons = int(rand_int(5, 30));
    l.in_base = 0;
    l.param_base = 0;
    if (!(iter % 2)) l.dst_base = l.dst_id == l.in_id ? kHalfBank : 0;
    l.dst_base = l.dst == ComputeDst::kBank ? l.dst_base : kPeDstLo;
    load_fc(l);
    std::deque<Feed> feeds;
    for (int o = 0; o < l.neurons; ++o) {
      Feed f;
      f.delay = int(rand_int(0, 30));
      f.write(l.in_id, l.in_base + o * l.groups, random_words(l.groups));
      feeds.push_back(f);
    }
    const Memories final_mem = after_feeds(mem_, feeds);
    const Expected e = l.expected(final_mem);
    isa::ComputeInstr c = l.instr();
    c.hdr.acq0 = l.neurons;
    c.hdr.acq0_first = 1;
    c.hdr.acq0_step = 1;
    c.hdr.rel0 = l.neurons;
    RunOptions o;
    o.fine = true;
    o.wr_stall = 0.4;
    const RunResult r = run(isa::encode(c), o, feeds, [&](const BankRead& rd, const RunResult& rr) {
      const int neuron = (rd.addr - l.in_base) / l.groups;
      if (neuron >= rr.acquired[0]) {
        ADD_FAILURE() << l.str() << ": weights of neuron " << neuron << " read with "
                      << rr.acquired[0] << " acquired, STRATA_SEED=" << seed();
      }
    });
    ASSERT_TRUE(r.retired) << l.str();
    check_fine(fmt::format("fine fc {}", iter), e, r, c, final_mem);
    EXPECT_EQ(r.released[0], l.neurons);
    EXPECT_GE(releases_on(r, 0), l.dst == ComputeDst::kBank ? l.neurons - 1 : l.out_words() - 1);
  }
}

// Fine-grained POOL: one L2C unit per input row, in (group, row) order.
TEST_F(StrataComputeEngine, FineGrainedPool) {
  for (int iter = 0; iter < 4 && !HasFailure(); ++iter) {
    const PoolLayer l = random_pool(false);
    fill_bank(l.in_id, l.in_base, random_words(l.in_words()));
    run_fine_rows(l, l.groups * l.in_h, l.groups * l.res_h(), fmt::format("fine pool {}", iter));
  }
}

// ---------------------------------------------------------------------------
// Errors and abort.

struct ErrorCase {
  const char* what;
  SimError code;
  std::function<void(isa::ComputeInstr&)> edit;  // on the valid base instruction
  std::function<void(isa::Instruction&)> raw;    // or on its bits
  bool compare_sim = true;                       // IsaSim runs a whole program (it executes a LOAD)
};

TEST_F(StrataComputeEngine, DecodeErrors) {
  using M = isa::ComputeMode;
  const auto U = SimError::kUnsupported;
  const auto I = SimError::kIllegalInstr;
  auto fc = [](isa::ComputeInstr& c) {
    c.mode = M::kFc;
    c.in_groups = 4;
    c.out_h = 10;
    c.out_w = 1;
    c.pool_en = false;
  };
  auto pool = [](isa::ComputeInstr& c) {
    c.mode = M::kPool;
    c.out_h = c.in_h;
    c.out_w = c.in_w;
    c.pool_en = true;
    c.pool_k = 2;
    c.pool_s = 2;
    c.pool_pad_top = c.pool_pad_left = c.pool_pad_bottom = c.pool_pad_right = 0;
    c.pool_out_h = 3;
    c.pool_out_w = 3;
    c.dst_row_stride = 3;
    c.dst_group_stride = 9;
  };
  // A DEPTHWISE 3x3 pad 1 over group 0 of the base's input.
  auto dw = [](isa::ComputeInstr& c) {
    c.mode = M::kDepthwise;
    c.in_groups = 1;
    c.out_h = c.in_h;
    c.out_w = c.in_w;
    c.pool_en = true;
    c.pool_op = isa::PoolOp::kMax;
    c.pool_ceil = false;
    c.pool_k = 3;
    c.pool_s = 1;
    c.pool_pad_top = c.pool_pad_left = c.pool_pad_bottom = c.pool_pad_right = 1;
    c.pool_out_h = c.in_h;
    c.pool_out_w = c.in_w;
    c.dst_row_stride = c.in_w;
  };
  // Pooling k x k, stride s, to out_h x out_w after the convolution.
  auto pooled = [](isa::ComputeInstr& c, int k, int s, int64_t out_h, int64_t out_w) {
    c.pool_en = true;
    c.pool_k = k;
    c.pool_s = s;
    c.pool_out_h = out_h;
    c.pool_out_w = out_w;
  };
  const std::vector<ErrorCase> cases = {
      {"opcode LOAD in the compute queue",
       I,
       {},
       [](isa::Instruction& in) { in.set(isa::hdr::kOpcode, int64_t(isa::Opcode::kLoad)); },
       false},
      {"reserved bit", I, {}, [](isa::Instruction& in) { in.words[2] |= uint64_t{1} << 2; }},
      {"reserved header bit", I, {}, [](isa::Instruction& in) { in.words[0] |= 1u << 7; }},
      {"mode 4", I, {}, [](isa::Instruction& in) { in.set(isa::compute::kMode, 4); }},
      {"mode 7", I, {}, [](isa::Instruction& in) { in.set(isa::compute::kMode, 7); }},
      {"dst_kind 3", I, {}, [](isa::Instruction& in) { in.set(isa::compute::kDstKind, 3); }},
      {"acq0_first > acq0", I, [](auto& c) { c.hdr.acq0_first = c.hdr.acq0 + 1; }, {}},
      {"in_id >= Banks", U, [](auto& c) { c.in_id = kBanks; }, {}},
      {"in_groups 0", U, [](auto& c) { c.in_groups = 0; }, {}},
      {"in_h 0", U, [](auto& c) { c.in_h = 0; }, {}},
      {"kernel 0", U, [](auto& c) { c.kernel_w = 0; }, {}},
      {"kernel > MaxKernel",
       U,
       [](auto& c) {
         c.kernel_h = hw::kMaxKernel + 1;
         c.pad_top = c.pad_bottom = 0;
         c.in_h = 12;
         c.out_h = 12 - hw::kMaxKernel;
       },
       {}},
      {"stride 0", U, [](auto& c) { c.stride_h = 0; }, {}},
      {"pad >= kernel", U, [](auto& c) { c.pad_left = c.kernel_w; }, {}},
      {"pad_top >= kernel", U, [](auto& c) { c.pad_top = c.kernel_h; }, {}},
      {"pad_bottom >= kernel",
       U,
       [](auto& c) {
         c.pad_bottom = c.kernel_h;
         c.out_h += c.pad_bottom - 1;  // the size the pads give
       },
       {}},
      {"pad_right >= kernel",
       U,
       [](auto& c) {
         c.pad_right = c.kernel_w;
         c.out_w += c.pad_right - 1;
         c.dst_row_stride = c.out_w;
       },
       {}},
      {"kernel larger than the padded input",
       U,
       [](auto& c) {
         c.in_h = 2;
         c.kernel_h = 5;
         c.pad_top = c.pad_bottom = 1;
         c.out_h = 1;
       },
       {}},
      {"kernel larger than the input + top + bottom",
       U,
       [](auto& c) {
         c.in_h = 2;
         c.kernel_h = 4;
         c.pad_top = 1;
         c.pad_bottom = 0;
         c.out_h = 1;
       },
       {}},
      {"out_h wrong", U, [](auto& c) { c.out_h += 1; }, {}},
      {"out_h of the symmetric pad", U, [](auto& c) { c.pad_bottom = 0; }, {}},
      {"out_w of the symmetric pad", U, [](auto& c) { c.pad_right = 2; }, {}},
      {"out_w wrong", U, [](auto& c) { c.out_w -= 1; }, {}},
      {"input past the bank", U, [](auto& c) { c.in_base = kBankDepth - 10; }, {}},
      {"weights past the cache", U, [](auto& c) { c.cache_base = kCacheDepth - 5; }, {}},
      {"channels past the parameter RAM", U, [](auto& c) { c.param_base = kParamDepth - 3; }, {}},
      {"clamp lo > hi",
       U,
       [](auto& c) {
         c.clamp_lo = 5;
         c.clamp_hi = 4;
       },
       {}},
      {"pool window > MaxPoolKernel",
       U,
       [&](auto& c) {
         pooled(c, hw::kMaxPoolKernel + 1, 1, c.out_h - hw::kMaxPoolKernel,
                c.out_w - hw::kMaxPoolKernel);
       },
       {}},
      {"pool stride 0", U, [&](auto& c) { pooled(c, 2, 0, 1, 1); }, {}},
      {"pool pad >= window",
       U,
       [&](auto& c) {
         pooled(c, 2, 2, 4, 3);  // the size the pads give: only the pad is wrong
         c.pool_pad_top = 2;
       },
       {}},
      {"pool pad right >= window",
       U,
       [&](auto& c) {
         pooled(c, 2, 2, 3, 4);
         c.pool_pad_right = 2;
       },
       {}},
      {"pool_out of the symmetric pool pad",
       U,
       [&](auto& c) {
         // 6 x 6, window 2, stride 2, pad 1 left only: 3 x 3, not the 4
         // columns of pad 1 on both sides.
         pooled(c, 2, 2, 3, 4);
         c.pool_pad_left = 1;
       },
       {}},
      {"pool_out ceil, last window past the padding before",
       U,
       [&](auto& c) {
         // 6 rows, pad 1 below, ceil: ceil(5 / 2) + 1 = 4 windows, but the
         // last would start at row 6, past the input: 3. 6 columns: 3.
         pooled(c, 2, 2, 4, 3);
         c.pool_ceil = true;
         c.pool_pad_bottom = 1;
       },
       {}},
      {"pool_out wrong", U, [&](auto& c) { pooled(c, 2, 2, 3, 4); }, {}},  // 6 -> 3
      {"pool_out ceil wrong",
       U,
       [&](auto& c) {
         pooled(c, 3, 2, 3, 2);  // 6 -> 3 in ceil mode
         c.pool_ceil = true;
       },
       {}},
      {"post clamp lo > hi",
       U,
       [&](auto& c) {
         pooled(c, 2, 2, 3, 3);
         c.post_lo = 1;
         c.post_hi = 0;
       },
       {}},
      {"pooling input wider than MaxImageWidth",
       U,
       [&](auto& c) {
         c.in_groups = 1;
         c.in_h = 2;
         c.in_w = hw::kMaxImageWidth + 1;
         c.kernel_h = c.kernel_w = 1;
         c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 0;
         c.out_h = 2;
         c.out_w = hw::kMaxImageWidth + 1;
         c.cache_base = 0;
         pooled(c, 1, 1, 2, hw::kMaxImageWidth + 1);
         c.dst_row_stride = 100;
       },
       {}},
      {"CONV to PE_TRANSPOSE", U, [](auto& c) { c.dst_kind = ComputeDst::kPeTranspose; }, {}},
      {"dst bank >= Banks", U, [](auto& c) { c.dst_id = kBanks; }, {}},
      {"dst past the bank", U, [](auto& c) { c.dst_base = kBankDepth - 20; }, {}},
      {"dst overlaps the input",
       U,
       [](auto& c) {
         c.dst_id = c.in_id;
         c.dst_base = c.in_base + 10;
       },
       {}},
      {"dst PE >= P",
       U,
       [](auto& c) {
         c.dst_kind = ComputeDst::kPeCache;
         c.dst_id = kP;
         c.dst_base = 600;
       },
       {}},
      {"dst PE cache overlaps the weights",
       U,
       [](auto& c) {
         c.dst_kind = ComputeDst::kPeCache;
         c.dst_id = 3;
         c.dst_base = c.cache_base + 5;
       },
       {}},
      {"dst past the PE cache",
       U,
       [](auto& c) {
         c.dst_kind = ComputeDst::kPeCache;
         c.dst_base = kCacheDepth - 10;
       },
       {}},
      {"FC out_w 2",
       U,
       [&](auto& c) {
         fc(c);
         c.out_w = 2;
       },
       {}},
      {"FC with pooling",
       U,
       [&](auto& c) {
         fc(c);
         c.pool_en = true;
       },
       {}},
      {"FC to PE_CACHE",
       U,
       [&](auto& c) {
         fc(c);
         c.dst_kind = ComputeDst::kPeCache;
       },
       {}},
      {"FC channels past the parameter RAM",
       U,
       [&](auto& c) {
         fc(c);
         c.param_base = kParamDepth - 9;
       },
       {}},
      {"FC transpose past the cache",
       U,
       [&](auto& c) {
         fc(c);
         c.dst_kind = ComputeDst::kPeTranspose;
         c.dst_base = kCacheDepth - 1;
       },
       {}},
      {"FC transpose overlaps the features",
       U,
       [&](auto& c) {
         fc(c);
         c.dst_kind = ComputeDst::kPeTranspose;
         c.dst_base = c.cache_base + 2;
       },
       {}},
      // The PE caches are written in whole words: IsaSim and the RTL both refuse.
      {"FC transpose with dst_lane != 0",
       U,
       [&](auto& c) {
         fc(c);
         c.dst_kind = ComputeDst::kPeTranspose;
         c.dst_base = 700;
         c.dst_lane = 3;
       },
       {}},
      {"POOL with out_h != in_h",
       U,
       [&](auto& c) {
         pool(c);
         c.out_h += 1;
       },
       {}},
      {"POOL without pool_en",
       U,
       [&](auto& c) {
         pool(c);
         c.pool_en = false;
       },
       {}},
      {"POOL to PE_TRANSPOSE",
       U,
       [&](auto& c) {
         pool(c);
         c.dst_kind = ComputeDst::kPeTranspose;
       },
       {}},
      {"DEPTHWISE over 2 groups",
       U,
       [&](auto& c) {
         dw(c);
         c.in_groups = 2;
       },
       {}},
      {"DEPTHWISE in ceil mode",
       U,
       [&](auto& c) {
         dw(c);
         c.pool_ceil = true;
       },
       {}},
      {"DEPTHWISE with AVG",
       U,
       [&](auto& c) {
         dw(c);
         c.pool_op = isa::PoolOp::kAvg;
       },
       {}},
      {"DEPTHWISE without pool_en",
       U,
       [&](auto& c) {
         dw(c);
         c.pool_en = false;
       },
       {}},
      {"DEPTHWISE window > MaxPoolKernel",
       U,
       [&](auto& c) {
         dw(c);
         c.pool_k = hw::kMaxPoolKernel + 1;
         c.pool_out_h = c.in_h + 3 - c.pool_k;
         c.pool_out_w = c.in_w + 3 - c.pool_k;
       },
       {}},
      {"DEPTHWISE clamp lo > hi",
       U,
       [&](auto& c) {
         dw(c);
         c.clamp_lo = 5;
         c.clamp_hi = 4;
       },
       {}},
      {"DEPTHWISE to PE_CACHE",
       U,
       [&](auto& c) {
         dw(c);
         c.dst_kind = ComputeDst::kPeCache;
       },
       {}},
      {"DEPTHWISE weights past the cache",
       U,
       [&](auto& c) {
         dw(c);
         c.cache_base = kCacheDepth - kDwBeats + 1;
       },
       {}},
      {"DEPTHWISE parameters past the RAM",
       U,
       [&](auto& c) {
         dw(c);
         c.param_base = kParamDepth - kP + 1;
       },
       {}},
      {"DEPTHWISE pool_out_w off by one",
       U,
       [&](auto& c) {
         dw(c);
         c.pool_out_w -= 1;
       },
       {}},
      {"DEPTHWISE input past the bank",
       U,
       [&](auto& c) {
         dw(c);
         c.in_base = kBankDepth - c.in_h * c.in_w + 1;
       },
       {}},
      {"POOL groups past the bank",
       U,
       [&](auto& c) {
         pool(c);
         c.dst_group_stride = 4000;
       },
       {}},
  };

  // The base: a valid 6x6 x 2 groups, 3x3 pad 1 convolution.
  ConvLayer base = small_conv();
  base.in_h = base.in_w = 6;
  base.dst_row_stride = 6;
  load_conv(base);
  isa::ComputeInstr good = base.instr();
  good.hdr = {2, 1, 1, 1, 1, 0, 0};
  ASSERT_EQ(isa_sim_verdict(isa::encode(good)), SimError::kNone);
  {
    isa::ComputeInstr f = good;
    fc(f);
    ASSERT_EQ(isa_sim_verdict(isa::encode(f)), SimError::kNone) << "FC base";
    f.dst_kind = ComputeDst::kPeTranspose;
    f.dst_base = 700;
    ASSERT_EQ(isa_sim_verdict(isa::encode(f)), SimError::kNone) << "FC transpose base";
    isa::ComputeInstr p = good;
    pool(p);
    ASSERT_EQ(isa_sim_verdict(isa::encode(p)), SimError::kNone) << "POOL base";
    isa::ComputeInstr d = good;
    dw(d);
    ASSERT_EQ(isa_sim_verdict(isa::encode(d)), SimError::kNone) << "DEPTHWISE base";
  }

  for (const ErrorCase& ec : cases) {
    isa::ComputeInstr c = good;
    if (ec.edit) ec.edit(c);
    isa::Instruction in = isa::encode(c);
    if (ec.raw) ec.raw(in);
    if (ec.compare_sim) {
      EXPECT_EQ(isa_sim_verdict(in), ec.code) << ec.what << ": IsaSim disagrees with the case";
    }
    RunOptions o;
    o.expect_error = true;
    o.budget = 200;
    const uint16_t index = next_index_;
    const RunResult r = run(in, o);
    ASSERT_TRUE(r.error) << ec.what << ": no error, STRATA_SEED=" << seed();
    EXPECT_EQ(r.code, int(ec.code)) << ec.what;
    EXPECT_EQ(r.err_index, index) << ec.what;
    EXPECT_TRUE(r.reads.empty() && r.writes.empty()) << ec.what << ": touched a bank";
    EXPECT_EQ(r.acquired[0] + r.acquired[1], 0) << ec.what << ": acquired units";
    // The error is held until abort; abort returns to idle.
    auto& d = dut();
    for (int i = 0; i < 20; ++i) {
      settle();
      EXPECT_TRUE(d.err_o && !d.instr_ready_o && !d.idle_o) << ec.what << " not held";
      tick();
    }
    d.abort_i = 1;
    tick();
    d.abort_i = 0;
    int n = 0;
    for (; n < 20 && !d.idle_o; ++n) tick();
    settle();
    EXPECT_TRUE(d.idle_o && !d.err_o) << ec.what << ": not idle after abort";
  }
  std::cout << "[ CHECKED  ] " << cases.size() << " decode error cases" << std::endl;

  // And a good instruction still works.
  run_conv(base, RunOptions{}, "after the errors");
}

// The decoder against the target-rule table: for every rule the table says
// strata_compute_decode refuses, its boundary instructions (generated by the
// table for this configuration, operands not loaded): the just-illegal one
// stops with UNSUPPORTED within the decode time, before touching anything; the
// just-legal one has no error by then (it is aborted there: the decoder has
// passed it; a POOL there may be offering the window generator its frame
// configuration, which must stay offered through the abort).
TEST_F(StrataComputeEngine, TargetRulesAgreeWithTheDecoder) {
  const HwTarget t = HwTarget::defaults();
  ASSERT_EQ(t.banks, kBanks);
  ASSERT_EQ(t.bank_depth, kBankDepth);
  ASSERT_EQ(t.pe_cache_depth, kCacheDepth);
  ASSERT_EQ(t.param_depth, kParamDepth);
  ASSERT_EQ(t.pes, kP);
  // Cycles from the take by which the decoder has reported an error (its 23
  // cycles from the start, and the capture).
  constexpr uint64_t kDecodeCycles = 30;
  // The engine's verdict: the error code it stops with, 0 when none by kDecodeCycles.
  const auto verdict = [&](const isa::ComputeInstr& c, const std::string& what) {
    SCOPED_TRACE(what);
    RunOptions o;
    o.expect_error = true;  // checked below
    o.budget = 20000;
    o.abort_at = kDecodeCycles;
    const RunResult r = run(isa::encode(c), o);
    auto& d = dut();
    if (r.error) {
      EXPECT_LT(r.done - r.take, kDecodeCycles) << what << ": error after the decode time";
      EXPECT_TRUE(r.reads.empty() && r.writes.empty()) << what << ": touched a bank";
      d.abort_i = 1;
      tick();
      d.abort_i = 0;
    }
    for (int n = 0; n < 50 && !d.idle_o; ++n) tick();
    settle();
    EXPECT_TRUE(d.idle_o && !d.err_o) << what << ": not idle after abort";
    return r.error ? r.code : 0;
  };
  int rules = 0, pairs = 0;
  for (const TargetRule& rule : target_rules()) {
    if (rule.rtl.find("strata_compute_decode") == std::string_view::npos) continue;
    ++rules;
    int k = 0;
    for (const RuleBoundary& b : rule.boundaries(t)) {
      const auto* legal = std::get_if<isa::ComputeInstr>(&b.legal);
      const auto* illegal = std::get_if<isa::ComputeInstr>(&b.illegal);
      ASSERT_TRUE(legal != nullptr && illegal != nullptr) << rule.id;
      const std::string what = fmt::format("rule {} pair {}", rule.id, k++);
      ASSERT_FALSE(first_violation(*legal, t).has_value()) << what;
      const auto v = first_violation(*illegal, t);
      ASSERT_TRUE(v.has_value() && v->rule == &rule) << what;
      EXPECT_EQ(verdict(*legal, what + " (just legal)"), 0)
          << what << " just legal: the decoder refuses " << isa::disassemble(isa::encode(*legal))
          << ", STRATA_SEED=" << seed();
      EXPECT_EQ(verdict(*illegal, what + " (just illegal)"), int(SimError::kUnsupported))
          << what << " just illegal (" << v->message << "): the decoder accepts "
          << isa::disassemble(isa::encode(*illegal)) << ", STRATA_SEED=" << seed();
      ++pairs;
    }
  }
  EXPECT_GE(rules, 25);
  std::cout << "[ CHECKED  ] " << rules << " rules, " << pairs << " boundary pairs" << std::endl;
}

TEST_F(StrataComputeEngine, AbortAnywhere) {
  ConvLayer l = random_conv(true, false, 12);
  l.in_h = l.in_w = 12;
  l.groups = 3;
  l.kh = l.kw = 3;
  l.ph = l.pw = 1;
  l.sh = l.sw = 1;
  l.pk = 2;
  l.pp = 0;
  l.ps = 2;
  l.dst_row_stride = l.res_w();
  l.in_base = 0;
  l.cache_base = 0;
  l.dst_id = l.in_id ^ 1;
  l.dst_base = 0;
  load_conv(l);
  const uint64_t points[] = {1, 5, 21, 24, 30, 200, 900, uint64_t(l.beats()), 4000};
  for (uint64_t at : points) {
    abort_and_check_quiet(l.instr(), at);
    // The same layer then runs correctly.
    run_conv(l, RunOptions{}, fmt::format("after an abort at {}", at));
    if (HasFailure()) return;
  }
}

// Abort of a DEPTHWISE instruction at any point (decode, line fill, beats,
// drain) leaves the engine idle and quiet; the layer then runs correctly.
TEST_F(StrataComputeEngine, AbortDepthwiseAnywhere) {
  DepthwiseLayer l = random_dw();
  l.in_h = l.in_w = 12;
  l.pk = std::min(3, hw::kMaxPoolKernel);
  l.pp = l.pk / 2;
  l.pp_side = {-1, -1, -1, -1};
  l.ps = 1;
  l.in_base = 0;
  l.dst_row_stride = l.res_w();
  l.dst_id = l.in_id ^ 1;
  l.dst_base = 0;
  load_dw(l);
  const uint64_t points[] = {1, 21, 30, 45, 120, 250, 400};
  for (uint64_t at : points) {
    abort_and_check_quiet(l.instr(), at);
    run_dw(l, RunOptions{}, fmt::format("after an abort at {}", at));
    if (HasFailure()) return;
  }
}

// A one-cycle abort pulse, with the next instruction offered from the very
// next cycle: it is taken only once the engine is idle again, and runs.
TEST_F(StrataComputeEngine, AbortPulseThenNextInstruction) {
  const ConvLayer l = small_conv();
  load_conv(l);
  auto& d = dut();
  for (int at : {3, 12, 30}) {
    isa::ComputeInstr c = l.instr();
    c.hdr = {1, 0, 1, 0, 1, 0, 0};  // no unit given: it waits after decoding
    set_instr(d, isa::encode(c));
    d.instr_index_i = next_index_++;
    d.instr_valid_i = 1;
    settle();
    ASSERT_TRUE(d.instr_ready_o);
    tick();
    d.instr_valid_i = 0;
    for (int i = 0; i < at; ++i) tick();
    d.abort_i = 1;
    tick();
    d.abort_i = 0;
    run_conv(l, RunOptions{}, fmt::format("after an abort pulse at {}", at));
    if (HasFailure()) return;
  }
}

// The decode slot: the next instruction is taken and checked while the
// current one runs, so a queued instruction retires one walk (plus the
// pipeline drain) after the previous one instead of also paying the checks.
TEST_F(StrataComputeEngine, DecodeSlotHidesTheChecks) {
  ConvLayer l = random_conv(false, false, 8);
  load_conv(l);
  isa::ComputeInstr c = l.instr();
  c.hdr = {};  // no dependencies: nothing to wait for
  const isa::Instruction in = isa::encode(c);
  const RunResult alone = run(in, RunOptions{});
  ASSERT_TRUE(alone.retired && !alone.error);
  const uint64_t decode = 23;  // checks (strata_compute_decode)
  ASSERT_GT(alone.cycles(), decode + alone.beats) << "the lone run should include the checks";

  auto& d = dut();
  idle_inputs();
  int taken = 0;
  std::vector<uint64_t> takes, retires;
  for (uint64_t n = 0; retires.size() < 2 && n < 4 * alone.cycles() + 200; ++n) {
    d.instr_valid_i = taken < 2;
    set_instr(d, in);
    d.instr_index_i = next_index_;
    settle();
    if (d.instr_valid_i && d.instr_ready_o) {
      ++taken;
      ++next_index_;
      takes.push_back(cycle());
    }
    if (d.retire_o) retires.push_back(cycle());
    EXPECT_FALSE(d.err_o) << "error code " << int(d.err_code_o);
    tick();
  }
  d.instr_valid_i = 0;
  ASSERT_EQ(retires.size(), 2u) << "two queued instructions did not both retire";
  ASSERT_EQ(takes.size(), 2u);
  EXPECT_LT(takes[1], retires[0]) << "the second instruction was not taken while the first ran";
  const uint64_t gap = retires[1] - retires[0];
  std::cout << fmt::format(
      "[ MEASURED ] alone {} cycles (take to retire); queued: the second "
      "retires {} cycles after the first ({} beats)\n",
      alone.cycles(), gap, alone.beats);
  EXPECT_LE(gap + decode, alone.cycles() + 1) << "the checks were not hidden";
}

// An abort while the engine waits for its units releases nothing.
TEST_F(StrataComputeEngine, AbortWhileWaiting) {
  const ConvLayer l = small_conv();
  load_conv(l);
  isa::ComputeInstr c = l.instr();
  c.hdr = {3, 1, 1, 1, 1, 0, 0};
  RunOptions o;
  o.abort_at = 100;
  const RunResult r = run(isa::encode(c), o);
  EXPECT_TRUE(r.reads.empty());
  EXPECT_TRUE(r.releases.empty());
  EXPECT_GT(r.dep_wait_cycles, 50u);
  run_conv(l, RunOptions{}, "after abort while waiting");
}

}  // namespace
}  // namespace strata::tb
