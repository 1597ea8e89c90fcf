// SPDX-License-Identifier: Apache-2.0
// Each pass of the compiler on its own (sw/src/compiler/passes.hpp): what lower()
// makes of small networks, the layouts and tiles plan() chooses, the
// instructions emit() puts in each job, the dependency fields of a
// hand-assembled program, the moves of dispatch_order() and what assemble()
// relocates and refuses. compiler_test.cpp runs the whole pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/passes.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/network.hpp"
#include "strata/target_rules.hpp"
#include "sw_test_util.hpp"

namespace strata::compiler {
namespace {

using isa::ComputeDst;
using isa::ComputeInstr;
using isa::ComputeMode;
using isa::Engine;
using isa::LoadDst;
using isa::LoadInstr;
using isa::StoreInstr;

// An op's plan as the kind its op has (std::get throws on any other).
const FcPlan& fc_plan(const Plan& pl, size_t k) { return std::get<FcPlan>(pl.ops.at(k)); }
const ConvPlan& conv_plan(const Plan& pl, size_t k) { return std::get<ConvPlan>(pl.ops.at(k)); }

// A network from YAML text, with strata gen's parameters.
class PassTest : public test::TempDirTest {
 protected:
  Network network(const std::string& layers_yaml) const {
    const std::string path = write("net.yaml", "name: net\n" + layers_yaml);
    Network net = load_network(path, LoadOptions{"", false});
    GenOptions go;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, 1));
    return net;
  }

  // Two FC layers (f1: 30 neurons with ReLU, f2: 9) on a 16 x side x side
  // input, lowered and planned for the default target with `bank_depth` words
  // per bank.
  struct TwoFc {
    HwTarget t;
    Network net;
    std::vector<Op> ops;
    Plan pl;
  };
  TwoFc two_fc(int side, int bank_depth) const {
    TwoFc f;
    f.t = t_;
    f.t.bank_depth = bank_depth;
    const std::string hw = std::to_string(side);
    f.net = network("input: [16, " + hw + ", " + hw + R"(]
layers:
  - {name: f1, type: fc, out_features: 30, activation: relu}
  - {name: f2, type: fc, out_features: 9}
)");
    f.ops = lower(f.net, f.t);
    f.pl = plan(f.net, f.ops, f.t, {});
    return f;
  }

  const HwTarget t_ = HwTarget::defaults();  // P = N = 8
};

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return test::contains(l, part); });
}

// ---- 1. lower ------------------------------------------------------------------------------

class LowerPass : public PassTest {};

TEST_F(LowerPass, ConvPoolAndClampsFuseIntoOneOp) {
  const Network net = network(R"(input: [3, 8, 8]
layers:
  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: 1}
  - {name: p1, type: maxpool, kernel: 2}
  - {name: r1, type: relu}
  - {name: c2, type: conv, out_channels: 4, kernel: 3, pad: 1, activation: {clamp: [-50, 60]}}
  - {name: r2, type: relu}
  - {name: a2, type: avgpool, kernel: 2}
  - {name: k2, type: clamp, lo: -10, hi: 20}
)");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_TRUE(is<ConvOp>(ops[0]));
  ASSERT_TRUE(is<ConvOp>(ops[1]));

  // A clamp after a fused max pool moves before it, into the requantisation clamp.
  const ConvOp& c1 = std::get<ConvOp>(ops[0]);
  EXPECT_EQ(c1.layers, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(c1.main, &net.layers[0]);
  ASSERT_TRUE(c1.pool.has_value());
  EXPECT_FALSE(c1.pool->avg);
  EXPECT_EQ(c1.pool->window.kernel, 2);
  EXPECT_EQ(c1.params.lo, 0);
  EXPECT_EQ(c1.params.hi, 127);
  EXPECT_EQ(c1.pool->post_lo, -128);
  EXPECT_EQ(c1.pool->post_hi, 127);
  EXPECT_EQ(c1.conv_h, 8);
  EXPECT_EQ(c1.out_h, 4);
  EXPECT_TRUE(any_contains(c1.notes, "clamp 'r1' moves before the max pool"));

  // A clamp before the pool merges with the activation; one after a fused average
  // pool composes into the post clamp.
  const ConvOp& c2 = std::get<ConvOp>(ops[1]);
  EXPECT_EQ(c2.layers, (std::vector<size_t>{3, 4, 5, 6}));
  EXPECT_EQ(c2.in_c, 4);
  EXPECT_EQ(c2.in_h, 4);
  EXPECT_EQ(c2.params.lo, 0);
  EXPECT_EQ(c2.params.hi, 60);
  ASSERT_TRUE(c2.pool.has_value());
  EXPECT_TRUE(c2.pool->avg);
  EXPECT_EQ(c2.pool->post_lo, -10);
  EXPECT_EQ(c2.pool->post_hi, 20);
  EXPECT_EQ(c2.out_h, 2);
  EXPECT_EQ(c2.params.bias.size(), 4u);
  EXPECT_EQ(c2.weights.shape(), (Shape{4, 4, 3, 3}));
  EXPECT_EQ(pooling(ops[1]), &*c2.pool);
  EXPECT_EQ(channel_params(ops[1]), &c2.params);
}

TEST_F(LowerPass, AClampFirstIsA1x1PoolOverTheInputMapEvenAfterAFlatten) {
  const Network net = network(R"(input: [3, 5, 4]
layers:
  - {name: fl, type: flatten}
  - {name: r, type: clamp, lo: -9, hi: 40}
  - {name: f, type: fc, out_features: 6}
)");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_TRUE(is<PoolOp>(ops[0]));
  const PoolOp& clamp = std::get<PoolOp>(ops[0]);
  EXPECT_TRUE(clamp.clamp_only);
  EXPECT_EQ(clamp.pool.window.kernel, 1);
  EXPECT_EQ(clamp.pool.window.stride, 1);
  EXPECT_EQ(clamp.pool.post_lo, -9);
  EXPECT_EQ(clamp.pool.post_hi, 40);
  EXPECT_EQ(clamp.main, &net.layers[1]);
  EXPECT_EQ(clamp.layers, (std::vector<size_t>{1}));
  // The map as stored, not the flattened [60][1][1].
  EXPECT_EQ((Shape{clamp.in_c, clamp.in_h, clamp.in_w}), (Shape{3, 5, 4}));
  EXPECT_EQ((Shape{clamp.out_c, clamp.out_h, clamp.out_w}), (Shape{3, 5, 4}));
  EXPECT_EQ(channel_params(ops[0]), nullptr);
  ASSERT_TRUE(is<FcOp>(ops[1]));
  EXPECT_EQ(std::get<FcOp>(ops[1]).features, 60);
  EXPECT_EQ(std::get<FcOp>(ops[1]).weights.shape(), (Shape{6, 60}));
}

TEST_F(LowerPass, AMaxPoolAfterAFirstClampTakesTheWindowsPlace) {
  const Network net = network(R"(input: [3, 6, 6]
layers:
  - {name: r, type: relu}
  - {name: p, type: maxpool, kernel: 2}
)");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 1u);
  const PoolOp& op = std::get<PoolOp>(ops[0]);
  EXPECT_FALSE(op.clamp_only);
  EXPECT_FALSE(op.pool.avg);
  EXPECT_EQ(op.pool.window.kernel, 2);
  EXPECT_EQ(op.pool.post_lo, 0);
  EXPECT_EQ(op.pool.post_hi, 127);
  EXPECT_EQ(op.layers, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(op.out_h, 3);
  EXPECT_TRUE(any_contains(op.notes, "moves after it"));
}

TEST_F(LowerPass, ALargeAveragePoolIsAnIdentityConvolutionNeverFusedIntoTheOneBefore) {
  const Network net = network(R"(input: [8, 8, 8]
layers:
  - {name: c, type: conv, out_channels: 6, kernel: 1}
  - {name: gap, type: avgpool, kernel: 4, stride: 4}
)");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_FALSE(std::get<ConvOp>(ops[0]).pool.has_value());
  ASSERT_TRUE(is<ConvOp>(ops[1]));
  const ConvOp& id = std::get<ConvOp>(ops[1]);
  EXPECT_EQ(id.kind, ConvKind::kIdentityPool);
  EXPECT_EQ(id.kernel, 4);
  EXPECT_EQ(id.stride, 4);
  EXPECT_EQ(id.pad, Pads{});
  EXPECT_FALSE(id.pool.has_value());
  EXPECT_EQ(id.weights.shape(), (Shape{6, 6, 4, 4}));
  for (int64_t co = 0; co < 6; ++co) {
    for (int64_t ci = 0; ci < 6; ++ci) {
      EXPECT_EQ(id.weights(co, ci, 3, 1), co == ci ? 1 : 0) << co << " " << ci;
    }
  }
  EXPECT_EQ(id.params.bias, std::vector<int32_t>(6, 0));
  EXPECT_EQ(id.params.mult, std::vector<uint16_t>(6, 1));
  EXPECT_EQ(id.params.shift, std::vector<uint8_t>(6, 4));  // rshift_round(sum, log2 16)
  EXPECT_EQ(id.params.lo, -128);
  EXPECT_EQ(id.params.hi, 127);
  EXPECT_EQ((Shape{id.out_c, id.out_h, id.out_w}), (Shape{6, 2, 2}));
  EXPECT_EQ(id.layers, (std::vector<size_t>{1}));
  EXPECT_TRUE(any_contains(id.notes, "identity weights, M = 1, S = 4"));
}

// A residual block: ops read the ops they name; the add reads both operands
// as one pass's two groups with weights wa, wb on the channel's lane and
// M = gcd(Ma, Mb); the ReLU after it fuses into its clamp; the depthwise
// layer runs in DEPTHWISE mode, one group per pass, with the layer's weights.
TEST_F(LowerPass, ShortcutsAddsAndDepthwiseLayersBecomeGroupedOps) {
  Network net = network(R"(input: [8, 6, 6]
layers:
  - {name: c0, type: conv, out_channels: 12, kernel: 3, pad: 1, activation: relu}
  - {name: d1, type: depthwise, kernel: 3, pad: 1}
  - {name: a, type: add, inputs: [d1, c0]}
  - {name: r, type: relu}
)");
  Layer& add = net.layers[2];
  add.requant.multiplier = std::vector<uint16_t>(12, 300);  // 3 * 100
  add.multiplier_b = std::vector<uint16_t>(12, 500);        // 5 * 100
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(base(ops[0]).srcs, (std::vector<int>{kInputSrc}));
  const ConvOp& dw = std::get<ConvOp>(ops[1]);
  EXPECT_EQ(dw.kind, ConvKind::kDepthwise);
  EXPECT_EQ(dw.srcs, (std::vector<int>{0}));
  EXPECT_EQ(dw.pass_groups, 1);
  EXPECT_TRUE(dw.depthwise_mode);
  EXPECT_EQ(dw.weights, net.layers[1].weights);
  const ConvOp& a = std::get<ConvOp>(ops[2]);
  EXPECT_EQ(a.kind, ConvKind::kAdd);
  EXPECT_EQ(a.srcs, (std::vector<int>{1, 0}));
  EXPECT_EQ(a.pass_groups, 2);
  EXPECT_EQ(a.layers, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(a.params.lo, 0);  // the ReLU
  EXPECT_EQ(a.params.mult, std::vector<uint16_t>(12, 100));
  EXPECT_EQ(a.params.bias, std::vector<int32_t>(12, 0));
  EXPECT_EQ(a.params.shift, add.requant.shift);
  EXPECT_EQ(a.weights.shape(), (Shape{12, 16, 1, 1}));
  EXPECT_EQ(a.weights(9, 1, 0, 0), 3);  // wa on lane 9 mod 8 of the pass's group 0 (d1's)
  EXPECT_EQ(a.weights(9, 9, 0, 0), 5);  // wb on the same lane of group 1 (c0's)
  EXPECT_EQ(a.weights(9, 2, 0, 0), 0);
  // Two ops read c0's result: it is stored, and both read it from external
  // memory, as tiled ops do; the add reads both of its operands there.
  const Plan pl = plan(net, ops, t_, {});
  EXPECT_TRUE(conv_plan(pl, 0).out_external);
  EXPECT_TRUE(conv_plan(pl, 1).tiled);
  EXPECT_TRUE(conv_plan(pl, 2).tiled);
  EXPECT_EQ(conv_plan(pl, 2).g_in, 4);  // two operands of two groups
  EXPECT_EQ(conv_plan(pl, 2).g_pass, 2);
  EXPECT_EQ(conv_plan(pl, 2).per_pass, 2);
  EXPECT_EQ(conv_plan(pl, 1).per_pass, 2);  // B = ceil(3 * 3 / 8)
}

// Depthwise layers run in COMPUTE mode DEPTHWISE when the window generator can
// run them, else as grouped CONVs with diagonal weights, and the notes say why:
// a kernel above max_pool_kernel, an FC right after it (DEPTHWISE writes a
// bank). A pool after a DEPTHWISE is an op of its own.
TEST_F(LowerPass, DepthwiseLayersRunInDepthwiseModeWhereTheWindowGeneratorCan) {
  const Network net = network(R"(input: [10, 9, 9]
layers:
  - {name: d3, type: depthwise, kernel: 3, stride: 2, pad: 1, activation: relu}
  - {name: p, type: maxpool, kernel: 2, stride: 1}
  - {name: d5, type: depthwise, kernel: 5, pad: 2}
  - {name: d1, type: depthwise, kernel: 1}
  - {name: fl, type: flatten}
  - {name: f, type: fc, out_features: 4}
)");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 5u);
  const ConvOp& d3 = std::get<ConvOp>(ops[0]);
  EXPECT_TRUE(d3.depthwise_mode);
  EXPECT_FALSE(d3.pool);
  EXPECT_EQ(d3.params.lo, 0);  // the ReLU
  EXPECT_EQ(d3.weights.shape(), (Shape{10, 1, 3, 3}));
  EXPECT_TRUE(any_contains(d3.notes, "COMPUTE mode DEPTHWISE"));
  EXPECT_TRUE(is<PoolOp>(ops[1]));
  const ConvOp& d5 = std::get<ConvOp>(ops[2]);
  EXPECT_FALSE(d5.depthwise_mode);
  EXPECT_EQ(d5.weights.shape(), (Shape{10, 8, 5, 5}));
  EXPECT_EQ(d5.weights(9, 1, 4, 0), net.layers[2].weights(9, 0, 4, 0));
  EXPECT_EQ(d5.weights(9, 2, 4, 0), 0);
  EXPECT_TRUE(any_contains(d5.notes, "kernel 5 exceeds max_pool_kernel 3"));
  const ConvOp& d1 = std::get<ConvOp>(ops[3]);
  EXPECT_FALSE(d1.depthwise_mode);
  EXPECT_EQ(d1.weights.shape(), (Shape{10, 8, 1, 1}));
  EXPECT_TRUE(any_contains(d1.notes, "a fully-connected layer follows"));

  // Rows wider than the line buffer run in column strips, which need external
  // column offsets on the AXI beat: with a beat wider than a word, a grouped CONV.
  HwTarget wide_beat = t_;
  wide_beat.axi_data_width = 128;
  wide_beat.max_image_width = 8;
  const std::vector<Op> narrow = lower(net, wide_beat);
  EXPECT_FALSE(std::get<ConvOp>(narrow[0]).depthwise_mode);
  EXPECT_TRUE(any_contains(std::get<ConvOp>(narrow[0]).notes,
                           "rows of 9 exceed max_image_width 8 and column strips need"));
  EXPECT_TRUE(std::get<ConvOp>(narrow[0]).pool.has_value());  // the pool fuses into it again

  // d3's weights image: per pass (group) and PE, B = 2 words; byte l of word b
  // is tap b * 8 + l = ky * 3 + kx, 0 past the 9 taps and past the channels.
  const Plan pl = plan(net, ops, t_, {});
  const ConvPlan& q = conv_plan(pl, 0);
  EXPECT_EQ(q.per_pass, 2);
  EXPECT_EQ(q.passes, 2);
  for (int64_t pass = 0; pass < 2; ++pass) {
    for (int64_t pe = 0; pe < 8; ++pe) {
      const int64_t co = pass * 8 + pe;
      for (int64_t tap = 0; tap < 16; ++tap) {
        const auto got = static_cast<int8_t>(
            pl.weights[q.weights_ext + ((pass * 8 + pe) * 2 + tap / 8) * 8 + tap % 8]);
        const int8_t want =
            co < 10 && tap < 9 ? net.layers[0].weights(co, 0, tap / 3, tap % 3) : int8_t{0};
        EXPECT_EQ(got, want) << "pass " << pass << " pe " << pe << " tap " << tap;
      }
    }
  }
}

// Ma / Mb that is no ratio of two int8 weights cannot be a two-tap sum.
TEST_F(LowerPass, AnAddWhoseMultipliersDoNotFactorIsAnErrorNamingTheLayer) {
  Network net = network(R"(input: [8, 4, 4]
layers:
  - {name: c0, type: conv, out_channels: 8, kernel: 1}
  - {name: a, type: add, inputs: [c0, input]}
)");
  net.layers[1].requant.multiplier = std::vector<uint16_t>(8, 40000);
  net.layers[1].multiplier_b = std::vector<uint16_t>(8, 40001);
  try {
    lower(net, t_);
    ADD_FAILURE() << "lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().layer, "a");
    EXPECT_TRUE(test::contains(e.what(), "Ma = 40000, Mb = 40001 are not wa * M, wb * M"))
        << e.what();
  }
}

// The mean of n int8 values as a weighted sum and a requantisation equals
// floor((2 sum + n) / (2 n)) for every sum, for every window up to 8 x 8 and
// the final maps of common networks (checked here independently of avg_round).
TEST(ExactMean, EveryWindowUpTo8x8AndLargeMapsHaveExactParameters) {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 64; ++n) sizes.push_back(n);
  for (int64_t side : {10, 14, 28, 56}) sizes.push_back(side * side);
  for (const int64_t n : sizes) {
    const std::optional<MeanParams> mp = exact_mean_params(n);
    ASSERT_TRUE(mp.has_value()) << n;
    for (int64_t sum = -128 * n; sum <= 127 * n; ++sum) {
      const int64_t num = 2 * sum + n, den = 2 * n;
      const int64_t want = num >= 0 ? num / den : -((-num + den - 1) / den);
      const int64_t v = (mp->weight * sum + mp->bias) * int64_t{mp->mult};
      const int64_t got = mp->shift == 0 ? v : (v + (int64_t{1} << (mp->shift - 1))) >> mp->shift;
      ASSERT_EQ(got, want) << "n " << n << ", sum " << sum;
    }
  }
}

TEST_F(LowerPass, ANetworkThatOnlyFlattensIsACopy) {
  const Network net = network("input: [2, 3, 4]\nlayers:\n  - {name: fl, type: flatten}\n");
  const std::vector<Op> ops = lower(net, t_);
  ASSERT_EQ(ops.size(), 1u);
  const PoolOp& copy = std::get<PoolOp>(ops[0]);
  EXPECT_TRUE(copy.clamp_only);
  EXPECT_EQ(copy.main, nullptr);
  EXPECT_EQ(copy.layers, (std::vector<size_t>{0}));
  EXPECT_EQ(copy.pool.post_lo, -128);
  EXPECT_EQ(copy.pool.post_hi, 127);
  EXPECT_EQ((Shape{copy.out_c, copy.out_h, copy.out_w}), (Shape{2, 3, 4}));
}

TEST_F(LowerPass, WhatNoOpCanComputeIsAnErrorNamingTheLayer) {
  const Network net = network(R"(input: [4, 1, 1]
layers:
  - {name: f, type: fc, out_features: 4}
  - {name: c, type: conv, out_channels: 4, kernel: 1}
)");
  try {
    lower(net, t_);
    ADD_FAILURE() << "lowered";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().layer, "c");
    EXPECT_EQ(e.where().line, net.layers[1].line);
    EXPECT_TRUE(test::contains(e.what(), "after a fully-connected layer")) << e.what();
  }
}

// ---- 2. plan -------------------------------------------------------------------------------

class PlanPass : public PassTest {};

TEST_F(PlanPass, EachOpsPlanHasTheKindOfItsOp) {
  const Network net = network(R"(input: [3, 12, 12]
layers:
  - {name: c, type: conv, out_channels: 8, kernel: 3, pad: 1}
  - {name: p, type: maxpool, kernel: 2, stride: 2}
  - {name: q, type: maxpool, kernel: 2, stride: 2}
  - {name: flat, type: flatten}
  - {name: f, type: fc, out_features: 5}
)");
  const std::vector<Op> ops = lower(net, t_);
  const Plan pl = plan(net, ops, t_, {});
  ASSERT_EQ(pl.ops.size(), ops.size());
  int conv = 0, pool = 0, fc = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    EXPECT_EQ(std::holds_alternative<ConvPlan>(pl.ops[k]), is<ConvOp>(ops[k])) << k;
    EXPECT_EQ(std::holds_alternative<FcPlan>(pl.ops[k]), is<FcOp>(ops[k])) << k;
    EXPECT_EQ(std::holds_alternative<PoolPlan>(pl.ops[k]), is<PoolOp>(ops[k])) << k;
    EXPECT_EQ(map_input(pl.ops[k]) == nullptr, is<FcOp>(ops[k])) << k;
    conv += is<ConvOp>(ops[k]);
    pool += is<PoolOp>(ops[k]);
    fc += is<FcOp>(ops[k]);
  }
  // conv + fused pool, the second pool on its own, the FC.
  EXPECT_EQ(conv, 1);
  EXPECT_EQ(pool, 1);
  EXPECT_EQ(fc, 1);
  const PoolPlan& pq = std::get<PoolPlan>(pl.ops[1]);
  EXPECT_EQ(pq.param_entries, 0);  // a POOL has no parameters
  EXPECT_EQ(pq.g_in, 1);
  EXPECT_EQ(pq.map_h, 6);
  EXPECT_EQ(pq.dst, Dst::kPeCache);  // an FC follows
  EXPECT_EQ(pq.next_feat_base, fc_plan(pl, 2).feat_base);
}

TEST_F(PlanPass, FcTilesAreWholeWordsOfNeurons) {
  // 64 features = 8 words per neuron; 12 neurons fit a 100-word bank, rounded
  // down to 8 (one PE-cache word of transposed results).
  const Plan pl = two_fc(2, 100).pl;
  ASSERT_EQ(pl.ops.size(), 2u);
  EXPECT_EQ(pl.input_layout, InputLayout::kFeatures);
  EXPECT_EQ(pl.input_words, 8);
  EXPECT_EQ(fc_plan(pl, 0).fc_words, 8);
  EXPECT_EQ(fc_plan(pl, 0).tile, 8);
  EXPECT_EQ(base(pl.ops[0]).dst, Dst::kTranspose);
  EXPECT_EQ(base(pl.ops[0]).next_feat_base, fc_plan(pl, 1).feat_base);
  EXPECT_EQ(fc_plan(pl, 1).order.per_word, 0);  // whole words: N features per word
  EXPECT_EQ(fc_plan(pl, 1).fc_words, 4);
  EXPECT_EQ(fc_plan(pl, 1).tile, 9);
  EXPECT_EQ(base(pl.ops[1]).dst, Dst::kBank);
  EXPECT_TRUE(base(pl.ops[1]).is_final);
  EXPECT_EQ(base(pl.ops[0]).name, "f1");
}

TEST_F(PlanPass, TilesNarrowerThanAWordEachStartAWord) {
  // 144 features = 18 words per neuron: 3 neurons per 64-word bank. f2 then reads
  // 3 features per word (lanes 0..2), 10 words per neuron.
  const TwoFc two = two_fc(3, 64);
  const Plan& pl = two.pl;
  EXPECT_EQ(fc_plan(pl, 0).fc_words, 18);
  EXPECT_EQ(fc_plan(pl, 0).tile, 3);
  const FeatureOrder& f = fc_plan(pl, 1).order;
  EXPECT_FALSE(f.from_map);
  EXPECT_EQ(f.per_word, 3);
  EXPECT_EQ(fc_plan(pl, 1).fc_words, 10);
  const int64_t n = two.t.lanes;
  EXPECT_EQ(f.at(0, 0, n), 0);
  EXPECT_EQ(f.at(0, 2, n), 2);
  EXPECT_EQ(f.at(0, 3, n), -1);
  EXPECT_EQ(f.at(1, 0, n), 3);
  EXPECT_EQ(f.at(9, 2, n), 29);
  EXPECT_EQ(f.at(10, 0, n), -1);
  // The weight image follows that order: f2's neuron 0, word 1 holds W[0][3..5].
  const FcOp& f2 = std::get<FcOp>(two.ops[1]);
  const uint64_t word1 = fc_plan(pl, 1).weights_ext + static_cast<uint64_t>(n);
  EXPECT_EQ(static_cast<int8_t>(pl.weights[word1]), f2.weights(0, 3));
  EXPECT_EQ(static_cast<int8_t>(pl.weights[word1 + 2]), f2.weights(0, 5));
  EXPECT_EQ(pl.weights[word1 + 3], 0);
  EXPECT_EQ(fc_plan(pl, 1).weights_ext % kRegionAlign, 0u);
}

TEST_F(PlanPass, AnFcAfterAMapReadsItsFeaturesInTheHardwareOrder) {
  const Network net = network(R"(input: [12, 2, 3]
layers:
  - {name: c, type: conv, out_channels: 10, kernel: 1}
  - {name: f, type: fc, out_features: 5}
)");
  const std::vector<Op> ops = lower(net, t_);
  const Plan pl = plan(net, ops, t_, {});
  EXPECT_EQ(base(pl.ops[0]).dst, Dst::kPeCache);
  EXPECT_EQ(base(pl.ops[0]).next_feat_base, fc_plan(pl, 1).feat_base);
  const FeatureOrder& f = fc_plan(pl, 1).order;
  EXPECT_TRUE(f.from_map);
  EXPECT_EQ(fc_plan(pl, 1).fc_words, 2 * 2 * 3);  // 2 channel groups x H x W
  // Word t = (g*H + y)*W + x, lane l: channel g*N + l at (y, x), flattened (c*H + y)*W + x.
  const int64_t n = t_.lanes;
  EXPECT_EQ(f.at(0, 0, n), 0);
  EXPECT_EQ(f.at(1, 0, n), 1);            // x = 1
  EXPECT_EQ(f.at(0, 1, n), 6);            // channel 1
  EXPECT_EQ(f.at(7, 1, n), 55);           // g 1, y 0, x 1: channel 9 -> (9*2+0)*3+1
  EXPECT_EQ(f.at(7, 2, n), -1);           // channel 10 does not exist
  EXPECT_EQ(conv_plan(pl, 0).passes, 2);  // 10 output channels, P = 8
  EXPECT_EQ(base(pl.ops[0]).param_entries, 16);
}

TEST_F(PlanPass, TheFirstConvolutionsInputIsReorderedWhenThatSavesBeats) {
  const Network net = network(R"(input: [3, 16, 16]
layers:
  - {name: c, type: conv, out_channels: 8, kernel: 5, pad: 2}
)");
  const std::vector<Op> ops = lower(net, t_);
  const Plan reordered = plan(net, ops, t_, {});
  EXPECT_EQ(reordered.input_layout, InputLayout::kReordered);
  const ConvPlan& q = conv_plan(reordered, 0);
  EXPECT_TRUE(q.reorder);
  EXPECT_EQ(q.g_in, 2);  // 5 taps x 3 channels in 8-lane words
  EXPECT_EQ(q.map_w, 16);
  EXPECT_EQ(q.kh, 5);
  EXPECT_EQ(q.kw, 1);
  EXPECT_EQ(q.sw, 1);
  EXPECT_EQ(q.pad, (Pads{2, 0, 2, 0}));  // rows keep the 5 x 5 kernel's padding
  EXPECT_EQ(q.per_pass, 10);
  EXPECT_EQ(reordered.input_words, 2 * 16 * 16);
  EXPECT_TRUE(any_contains(reordered.notes, "c: input reordered on the host"));

  CompileOptions never;
  never.reorder = Reorder::kNever;
  const Plan plain = plan(net, ops, t_, never);
  EXPECT_EQ(plain.input_layout, InputLayout::kMap);
  EXPECT_FALSE(conv_plan(plain, 0).reorder);
  EXPECT_EQ(conv_plan(plain, 0).g_in, 1);
  EXPECT_EQ(conv_plan(plain, 0).kw, 5);
  EXPECT_EQ(conv_plan(plain, 0).per_pass, 25);

  const Network one = network(R"(input: [3, 16, 16]
layers:
  - {name: c, type: conv, out_channels: 8, kernel: 1}
)");
  const Plan p1 = plan(one, lower(one, t_), t_, {});
  EXPECT_EQ(p1.input_layout, InputLayout::kMap);
  EXPECT_TRUE(any_contains(p1.notes, "c: plain input layout"));
}

TEST_F(PlanPass, ParametersAndWeightsAreResidentWhenTheyFitElseLoadedPerUse) {
  const Network net = network(R"(input: [8, 8, 8]
layers:
  - {name: c1, type: conv, out_channels: 16, kernel: 3, pad: 1}
  - {name: c2, type: conv, out_channels: 16, kernel: 3, pad: 1}
)");
  const std::vector<Op> ops = lower(net, t_);
  // c1: 9 words per pass (1 group), c2: 18 (2 groups); 2 passes each.
  const Plan resident = plan(net, ops, t_, {});
  EXPECT_TRUE(resident.params_resident);
  EXPECT_EQ(base(resident.ops[0]).param_base, 0);
  EXPECT_EQ(base(resident.ops[1]).param_base, 16);
  EXPECT_TRUE(resident.weights_resident);
  EXPECT_EQ(conv_plan(resident, 0).cache_base, 0);
  EXPECT_EQ(conv_plan(resident, 1).cache_base, 18);
  EXPECT_EQ(conv_plan(resident, 1).per_pass, 18);
  // The parameter image: one 8-byte entry per channel, op by op, 64-byte aligned.
  EXPECT_EQ(base(resident.ops[1]).param_ext, 128u);
  EXPECT_EQ(resident.params.size(), 256u);

  HwTarget t = t_;
  t.param_depth = 24;     // 16 fit, 32 do not
  t.pe_cache_depth = 40;  // 54 words do not fit, two slots of 18 do
  const Plan streamed = plan(net, ops, t, {});
  EXPECT_FALSE(streamed.params_resident);
  EXPECT_EQ(base(streamed.ops[0]).param_base, -1);
  EXPECT_FALSE(streamed.weights_resident);
  EXPECT_EQ(conv_plan(streamed, 0).cache_base, -1);
  EXPECT_EQ(streamed.weight_words, 40);
  EXPECT_EQ(conv_plan(streamed, 0).slots, 4);  // 9-word passes: at most 4 slots
  EXPECT_EQ(conv_plan(streamed, 1).slots, 2);  // 18-word passes side by side
  EXPECT_FALSE(conv_plan(streamed, 1).slots_overlap);
  t.pe_cache_depth = 30;
  const Plan overlapping = plan(net, ops, t, {});
  EXPECT_EQ(conv_plan(overlapping, 0).slots, 3);
  EXPECT_FALSE(conv_plan(overlapping, 0).slots_overlap);
  EXPECT_EQ(conv_plan(overlapping, 1).slots, 2);  // 18 + 18 > 30: two that share 6 words
  EXPECT_TRUE(conv_plan(overlapping, 1).slots_overlap);
  // 18 > 16 words: c2's passes split into chunks of one input group (9 words each,
  // docs/compiler.md, Split passes), streamed like passes of their own.
  t.pe_cache_depth = 16;
  const Plan split = plan(net, ops, t, {});
  EXPECT_EQ(conv_plan(split, 0).chunks, 1);
  EXPECT_EQ(conv_plan(split, 1).chunks, 2);
  EXPECT_EQ(conv_plan(split, 1).chunk_groups, 1);
  EXPECT_EQ(conv_plan(split, 1).per_pass, 9);
  EXPECT_EQ(conv_plan(split, 1).weight_blocks(), 4);  // 2 passes x 2 chunks
  EXPECT_TRUE(any_contains(split.notes,
                           "c2: the weights of one pass need 18 words in every "
                           "PE cache, 16 are free: split into 2 chunks of 1 "
                           "input group (9 words)"));
  // One input group's 9 taps do not fit 8 words: no split helps.
  t.pe_cache_depth = 8;
  try {
    plan(net, ops, t, {});
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().layer, "c1");
    EXPECT_TRUE(test::contains(e.what(), "the weights of one pass need 9 words")) << e.what();
  }
}

// ---- 3. emit -------------------------------------------------------------------------------

class EmitPass : public PassTest {};

int64_t count(const std::vector<Emit>& emits, Engine engine) {
  return std::count_if(emits.begin(), emits.end(),
                       [&](const Emit& e) { return e.engine == engine; });
}

std::string engines(const std::vector<Emit>& emits) {
  std::string s;
  for (const Emit& e : emits) s += "LCS"[static_cast<int>(e.engine)];
  return s;
}

TEST_F(EmitPass, ConvolutionJobs) {
  // 16 channels (2 groups): one input LOAD per image row; 20 output channels: 3
  // passes, each a COMPUTE and (last op) a STORE.
  const Network net = network(R"(input: [16, 6, 6]
layers:
  - {name: c, type: conv, out_channels: 20, kernel: 3, pad: 1}
)");
  const std::vector<Op> ops = lower(net, t_);
  const Plan pl = plan(net, ops, t_, {});
  ASSERT_TRUE(pl.params_resident && pl.weights_resident);
  const Emission one = emit(ops, pl, t_, 1);
  // Parameters, weights (all passes), 6 input rows; then pass by pass.
  EXPECT_EQ(engines(one.emits), "LLLLLLLLCSCSCS");
  const auto& w = std::get<LoadInstr>(one.emits[1].instr);
  EXPECT_EQ(w.dst_kind, LoadDst::kPeCache);
  EXPECT_EQ(w.rows, 3 * 8);  // passes x P
  const auto& row1 = std::get<LoadInstr>(one.emits[3].instr);
  EXPECT_EQ(row1.rows, 2);  // one per group
  EXPECT_EQ(row1.dst_addr, 6);
  const auto& c = std::get<ComputeInstr>(one.emits[8].instr);
  EXPECT_EQ(c.mode, ComputeMode::kConv);
  EXPECT_EQ(c.in_groups, 2);
  EXPECT_EQ(c.hdr.acq0, 0);  // no dependency fields yet
  EXPECT_EQ(one.data.inputs.size(), 1u);
  EXPECT_EQ(one.data.input_bytes, 2u * 6 * 6 * 8);
  EXPECT_EQ(one.data.output_bytes, 3u * 6 * 6 * 8);

  // Two images: the second one's input rows load before the first one's last pass.
  const Emission two = emit(ops, pl, t_, 2);
  EXPECT_EQ(engines(two.emits), "LLLLLLLLCSCSLLLLLLCSCSCSCS");
  EXPECT_EQ(two.data.inputs.size(), 2u);
  EXPECT_EQ(two.data.outputs.size(), 2u);

  // Streamed weights: one LOAD of P rows before each pass.
  HwTarget t = t_;
  t.pe_cache_depth = 40;
  const Plan streamed = plan(net, ops, t, {});
  ASSERT_FALSE(streamed.weights_resident);
  const Emission s = emit(ops, streamed, t, 1);
  EXPECT_EQ(count(s.emits, Engine::kLoad), 1 + 6 + 3);
  EXPECT_EQ(count(s.emits, Engine::kCompute), 3);
  EXPECT_EQ(count(s.emits, Engine::kStore), 3);

  // 18-word passes in 30 free words: slots at 0 and 12 that share words
  // 12..17. Each pass loads the words outside the other slot first, then the
  // shared ones, and only those wait for the pass before.
  t.pe_cache_depth = 30;
  const Plan overlapping = plan(net, ops, t, {});
  const Dependencies deps = dependencies(emit(ops, overlapping, t, 1).emits);
  struct Chunk {
    int64_t ext_word, row_words, dst_addr, acq;
  };
  std::vector<Chunk> chunks;
  std::vector<int64_t> bases;
  for (const Emit& e : deps.emits) {
    if (const auto* l = std::get_if<LoadInstr>(&e.instr); l && l->dst_kind == LoadDst::kPeCache) {
      EXPECT_EQ(l->rows, 8);
      EXPECT_EQ(l->ext_row_stride, 18 * 8);
      chunks.push_back({l->ext_addr / 8, l->row_words, l->dst_addr, l->hdr.acq0});  // acq0: C2L
    }
    if (const auto* c = std::get_if<ComputeInstr>(&e.instr)) bases.push_back(c->cache_base);
  }
  EXPECT_EQ(bases, (std::vector<int64_t>{0, 12, 0}));
  ASSERT_EQ(chunks.size(), 6u);
  const int64_t w0 = chunks[0].ext_word;  // pass p's word i at w0 + p * 8 * 18 + i
  const std::vector<std::array<int64_t, 4>> want = {
      {0, 12, 0, 0},        {12, 6, 12, 0},         // pass 0 into [0, 18)
      {144 + 6, 12, 18, 0}, {144 + 0, 6, 12, 1},    // pass 1 into [12, 30): 12..17 wait
      {288 + 0, 12, 0, 0},  {288 + 12, 6, 12, 1}};  // pass 2: 0..11 held pass 0
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(chunks[i].ext_word - w0, want[i][0]) << i;
    EXPECT_EQ(chunks[i].row_words, want[i][1]) << i;
    EXPECT_EQ(chunks[i].dst_addr, want[i][2]) << i;
    EXPECT_EQ(chunks[i].acq, want[i][3]) << i;
  }
}

TEST_F(EmitPass, FullyConnectedTilesAreOneLoadAndOneComputeEach) {
  // f1 in 4 tiles of 8 neurons (see PlanPass.FcTilesAreWholeWordsOfNeurons).
  const TwoFc two = two_fc(2, 100);
  const Plan& pl = two.pl;
  const Emission em = emit(two.ops, pl, two.t, 3);
  // f1's parameters, then the batch's features (one row per image), f2's parameters
  // (after the first job's loads), four f1 tiles, one f2 tile with its STORE.
  EXPECT_EQ(count(em.emits, Engine::kLoad), 2 + 1 + 4 + 1);
  EXPECT_EQ(count(em.emits, Engine::kCompute), 4 + 1);
  EXPECT_EQ(count(em.emits, Engine::kStore), 1);
  std::vector<int64_t> bases;
  for (const Emit& e : em.emits) {
    if (const auto* c = std::get_if<ComputeInstr>(&e.instr); c != nullptr && c->hdr.tag == 0) {
      EXPECT_EQ(c->mode, ComputeMode::kFc);
      EXPECT_EQ(c->dst_kind, ComputeDst::kPeTranspose);
      EXPECT_EQ(c->dst_lane, 0);
      bases.push_back(c->dst_base);
    }
  }
  const int64_t b = base(pl.ops[0]).next_feat_base;
  EXPECT_EQ(bases, (std::vector<int64_t>{b, b + 1, b + 2, b + 3}));
  const auto& features = std::get<LoadInstr>(em.emits[1].instr);
  EXPECT_EQ(features.rows, 3);
  EXPECT_TRUE(features.dst_pe_step);
  EXPECT_EQ(em.data.outputs.size(), 1u);  // neuron o of image i at byte o*N + i
  EXPECT_EQ(em.data.output_bytes, 9u * 8);
  const auto& store = std::get<StoreInstr>(em.emits.back().instr);
  EXPECT_EQ(store.rows, 9);
}

// ---- 4. dependencies, 5. dispatch order ------------------------------------------------------

// Hand-made instructions: LOADs of bank-0 rows (4 words each), a POOL copying
// `rows` rows of bank 0 into bank 1, a STORE of them.
LoadInstr row_load(int64_t row, int64_t rows = 1) {
  LoadInstr l;
  l.ext_addr = row * 32;
  l.ext_row_stride = 32;
  l.rows = rows;
  l.row_words = 4;
  l.dst_kind = LoadDst::kBank;
  l.dst_id = 0;
  l.dst_addr = row * 4;
  l.dst_row_stride = 4;
  return l;
}

ComputeInstr pool_copy(int64_t rows) {
  ComputeInstr c;
  c.mode = ComputeMode::kPool;
  c.in_id = 0;
  c.in_h = rows;
  c.in_w = 4;
  c.in_groups = 1;
  c.out_h = rows;
  c.out_w = 4;
  c.pool_en = true;
  c.pool_k = 1;
  c.pool_s = 1;
  c.pool_out_h = rows;
  c.pool_out_w = 4;
  c.dst_kind = ComputeDst::kBank;
  c.dst_id = 1;
  c.dst_row_stride = 4;
  c.dst_group_stride = rows * 4;
  return c;
}

StoreInstr store_rows(int64_t rows) {
  StoreInstr s;
  s.ext_addr = 4096;
  s.ext_row_stride = 32;
  s.rows = rows;
  s.row_words = 4;
  s.src_id = 1;
  s.src_row_stride = 4;
  return s;
}

const isa::Header& header(const Emit& e) { return header_of(e.instr); }

TEST(DependenciesPass, FieldsOfATinyProgram) {
  const Emitter em(HwTarget::defaults());
  LoadInstr again = row_load(0);  // overwrites what the POOL wrote and the STORE reads
  again.dst_id = 1;
  again.ext_addr = 8192;
  const std::vector<Emit> emits = {em.load(row_load(0, 2), "l"), em.compute(pool_copy(2), "p"),
                                   em.store(store_rows(2), "p"), em.load(again, "l2")};
  const Dependencies d = dependencies(emits);
  ASSERT_EQ(d.emits.size(), 4u);
  const isa::Header& l = header(d.emits[0]);
  const isa::Header& c = header(d.emits[1]);
  const isa::Header& s = header(d.emits[2]);
  const isa::Header& l2 = header(d.emits[3]);
  EXPECT_EQ(l.rel0, 2);  // L2C: one unit per row
  EXPECT_EQ(l.acq0 + l.acq1, 0);
  EXPECT_EQ(c.acq0, 2);  // L2C: both rows; the first output row needs row 0 only
  EXPECT_EQ(c.acq0_first, 1);
  EXPECT_EQ(c.acq0_step, 1);
  EXPECT_EQ(c.acq1, 0);  // S2C: no store before it
  EXPECT_EQ(c.rel0, 2);  // C2S: one unit per result row
  EXPECT_EQ(c.rel1, 1);  // C2L: the second LOAD overwrites its result
  EXPECT_EQ(s.acq0, 2);
  EXPECT_EQ(s.acq0_first, 1);
  EXPECT_EQ(s.acq0_step, 1);
  EXPECT_EQ(s.rel0, 0);   // S2C: no compute after it
  EXPECT_EQ(s.rel1, 1);   // S2L: the second LOAD waits until the rows are stored
  EXPECT_EQ(l2.acq0, 1);  // C2L
  EXPECT_EQ(l2.acq0_first, 1);
  EXPECT_EQ(l2.acq0_step, 0);
  EXPECT_EQ(l2.acq1, 1);                                                  // S2L
  EXPECT_EQ(d.units, (std::array<int64_t, isa::kEdges>{2, 2, 1, 0, 1}));  // L2C C2S C2L S2C S2L
  EXPECT_EQ(header(emits[1]), isa::Header{}) << "the input is not changed";
}

TEST(DispatchOrderPass, AComputeMovesAheadOfTheLoadsItsFirstStepDoesNotNeed) {
  const Emitter em(HwTarget::defaults());
  std::vector<Emit> emits;
  for (int64_t row = 0; row < 4; ++row) emits.push_back(em.load(row_load(row), "l"));
  emits.push_back(em.compute(pool_copy(4), "p"));
  emits.push_back(em.store(store_rows(4), "p"));
  const Dependencies d = dependencies(emits);
  EXPECT_EQ(header(d.emits[4]).acq0_first, 1);
  const std::vector<Emit> order = dispatch_order(d.emits);
  ASSERT_EQ(order.size(), 6u);
  EXPECT_EQ(engines(order), "LCLLLS");
  // Row 0 stays in front; rows 1..3 follow the compute, in their order; the
  // headers are the ones computed in program order.
  const std::vector<size_t> from = {0, 4, 1, 2, 3, 5};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].instr, d.emits[from[i]].instr) << i;
  }

  // Loaded the other way round, row 0 comes last: the first step needs every load.
  std::vector<Emit> reversed;
  for (int64_t row = 3; row >= 0; --row) reversed.push_back(em.load(row_load(row), "l"));
  reversed.push_back(em.compute(pool_copy(4), "p"));
  const Dependencies r = dependencies(reversed);
  EXPECT_EQ(header(r.emits[4]).acq0_first, 4);
  EXPECT_EQ(engines(dispatch_order(r.emits)), "LLLLC");
}

// The loads a compute moves over stay ahead of the computes that follow only
// as far as they need them: a second pass over the same rows (no new unit)
// goes ahead of the next job's prefetch too, and a compute that needs the
// prefetched rows after its first step goes ahead of them as well.
TEST(DispatchOrderPass, LaterComputesMoveAheadOfThePrefetchTheyDoNotNeed) {
  const Emitter em(HwTarget::defaults());
  ComputeInstr second = pool_copy(2);
  second.dst_id = 2;
  ComputeInstr all = pool_copy(4);
  all.dst_id = 3;
  const std::vector<Emit> emits = {em.load(row_load(0), "l"),     em.load(row_load(1), "l"),
                                   em.compute(pool_copy(2), "a"), em.load(row_load(2), "l"),
                                   em.load(row_load(3), "l"),     em.compute(second, "b"),
                                   em.compute(all, "c")};
  const Dependencies d = dependencies(emits);
  EXPECT_EQ(header(d.emits[2]).acq0, 2);
  EXPECT_EQ(header(d.emits[2]).acq0_first, 1);
  EXPECT_EQ(header(d.emits[5]).acq0, 0) << "the second pass reads rows already acquired";
  EXPECT_EQ(header(d.emits[6]).acq0, 2);
  EXPECT_EQ(header(d.emits[6]).acq0_first, 0);
  const std::vector<Emit> order = dispatch_order(d.emits);
  ASSERT_EQ(order.size(), emits.size());
  EXPECT_EQ(engines(order), "LCLCCLL");
  // Row 1 goes before b (a acquires it), rows 2 and 3 after c.
  const std::vector<size_t> from = {0, 2, 1, 5, 6, 3, 4};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].instr, d.emits[from[i]].instr) << i;
  }

  // Another engine's instruction takes every pending load in front of it.
  const std::vector<Emit> with_store = {em.load(row_load(0), "l"), em.load(row_load(1), "l"),
                                        em.compute(pool_copy(2), "a"),
                                        em.store(store_rows(2), "a")};
  EXPECT_EQ(engines(dispatch_order(dependencies(with_store).emits)), "LCLS");
}

// ---- 6. assemble ---------------------------------------------------------------------------

class AssemblePass : public PassTest {
 protected:
  // The passes before assemble, on a single 3x3 convolution.
  void SetUp() override {
    PassTest::SetUp();
    net_ = network(R"(input: [8, 8, 8]
layers:
  - {name: c, type: conv, out_channels: 8, kernel: 3, pad: 1}
)");
    ops_ = lower(net_, t_);
    plan_ = plan(net_, ops_, t_, {});
    emission_ = emit(ops_, plan_, t_, 1);
    deps_ = dependencies(emission_.emits);
    emits_ = dispatch_order(deps_.emits);
  }
  Program assemble_with(const std::vector<Emit>& emits) const {
    return assemble(net_, t_, 1, ops_, plan_, emits, emission_.data, deps_.units);
  }

  Network net_;
  std::vector<Op> ops_;
  Plan plan_;
  Emission emission_;
  Dependencies deps_;
  std::vector<Emit> emits_;
};

TEST_F(AssemblePass, ExternalAddressesAreRelocatedPastTheInstructions) {
  const Program prog = assemble_with(emits_);
  ASSERT_EQ(emits_.size(), 5u);  // parameters, weights, input, COMPUTE, STORE
  ASSERT_EQ(prog.instructions.size(), emits_.size() + 2);
  const uint64_t data = 7 * isa::kInstrBytes;  // CONFIG + 5 + END, 64-byte aligned already
  EXPECT_EQ(prog.region("params").offset, data);
  EXPECT_EQ(prog.region("weights").offset, data + emission_.data.weights);
  EXPECT_EQ(prog.input.image_addr, (std::vector<uint64_t>{data + emission_.data.inputs[0]}));
  EXPECT_EQ(prog.image.size(), data + emission_.data.end);
  EXPECT_EQ(prog.instructions.front().opcode_value(), static_cast<uint64_t>(isa::Opcode::kConfig));
  EXPECT_EQ(isa::decode_config(prog.instructions.front()).lanes, t_.lanes);
  for (size_t i = 0; i < emits_.size(); ++i) {
    const isa::Instruction& in = prog.instructions[i + 1];
    if (const auto* l = std::get_if<LoadInstr>(&emits_[i].instr)) {
      LoadInstr want = *l;
      want.ext_addr += static_cast<int64_t>(data);
      EXPECT_EQ(isa::decode_load(in), want) << i;
    } else if (const auto* s = std::get_if<StoreInstr>(&emits_[i].instr)) {
      StoreInstr want = *s;
      want.ext_addr += static_cast<int64_t>(data);
      EXPECT_EQ(isa::decode_store(in), want) << i;
    } else {
      EXPECT_EQ(isa::decode_compute(in), std::get<ComputeInstr>(emits_[i].instr)) << i;
    }
  }
  EXPECT_TRUE(std::equal(plan_.params.begin(), plan_.params.end(), prog.image.begin() + data));
  EXPECT_EQ(prog.units, deps_.units);
  ASSERT_EQ(prog.ops.size(), 1u);
  EXPECT_EQ(prog.ops[0].kind, "conv");
  EXPECT_EQ(prog.ops[0].name, "c");
}

TEST_F(AssemblePass, AValueThatDoesNotFitItsFieldIsAnErrorNamingTheFieldAndTheOp) {
  const auto expect_error = [&](const std::vector<Emit>& emits, const std::string& field) {
    try {
      assemble_with(emits);
      ADD_FAILURE() << field << ": assembled";
    } catch (const Error& e) {
      EXPECT_EQ(e.where().file, net_.source_file);
      EXPECT_TRUE(test::contains(e.what(), "op 'c': field '" + field + "'")) << e.what();
    }
  };
  std::vector<Emit> rows = emits_;
  std::get<LoadInstr>(rows[0].instr).rows = int64_t{1} << isa::load::kRows.width;
  expect_error(rows, "rows");
  // An address that fits before relocation but not after it.
  std::vector<Emit> addr = emits_;
  std::get<LoadInstr>(addr[0].instr).ext_addr =
      (int64_t{1} << isa::load::kExtAddr.width) - static_cast<int64_t>(kRegionAlign);
  expect_error(addr, "ext_addr");
}

// An instruction whose fields fit but that the target cannot run is an error
// naming the op and the target rule, with the rule's message (the ISA
// simulator's).
TEST_F(AssemblePass, AnInstructionTheTargetCannotRunIsAnErrorNamingTheRule) {
  std::vector<Emit> emits = emits_;
  size_t k = 0;
  while (!std::holds_alternative<ComputeInstr>(emits[k].instr)) ++k;
  std::get<ComputeInstr>(emits[k].instr).in_id = t_.banks;  // fits the 6-bit field
  const auto v = first_violation(std::get<ComputeInstr>(emits[k].instr), t_);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->rule->id, "compute.in_id");
  try {
    assemble_with(emits);
    ADD_FAILURE() << "assembled";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, net_.source_file);
    EXPECT_TRUE(test::contains(e.what(), "op 'c': " + v->message)) << e.what();
    EXPECT_TRUE(test::contains(e.what(), "bounded by banks")) << e.what();
  }
}

}  // namespace
}  // namespace strata::compiler
