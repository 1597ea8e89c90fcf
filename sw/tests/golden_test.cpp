// SPDX-License-Identifier: Apache-2.0
// Golden model: run_layer / run_network on small networks whose outputs are
// worked out by hand in the comments, the per-layer observer, batches, and
// clear errors for misuse.
#include "strata/golden.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

using test::expect_error;

Tensor<int8_t> t8(Shape shape, std::vector<int8_t> v) {
  return Tensor<int8_t>(std::move(shape), std::move(v));
}

class Golden : public test::TempDirTest {
 protected:
  Network load(const std::string& yaml_text) { return load_network(write("net.yaml", yaml_text)); }
};

TEST_F(Golden, ConvByHand) {
  // in = 1 2 3 / 4 5 6 / 7 8 9, a 3x3 all-ones kernel with pad 1: each output
  // is the sum of the 3x3 neighbourhood inside the image:
  //   12 21 16 / 27 45 33 / 24 39 28;  bias -20 gives
  //   -8  1 -4 /  7 25 13 /  4 19  8;  times M = 3:
  //  -24  3 -12 / 21 75 39 / 12 57 24; rshift_round(v, 2) = floor((v + 2) / 4):
  //   -6  1 -3 /  5 19 10 /  3 14  6;  relu:
  //    0  1  0 /  5 19 10 /  3 14  6.
  save_npy(path("c_weight.npy"), Tensor<int8_t>({1, 1, 3, 3}, 1));
  save_npy(path("c_bias.npy"), Tensor<int32_t>({1}, -20));
  const Network net = load(
      "name: one\ninput: [1, 3, 3]\nlayers:\n"
      "  - {name: c, type: conv, out_channels: 1, kernel: 3, pad: 1, activation: relu,\n"
      "     requant: {multiplier: 3, shift: 2}}\n");
  const Tensor<int8_t> in = t8({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(layer_accumulators(net.layers[0], in),
            Tensor<int32_t>({1, 3, 3}, std::vector<int32_t>{-8, 1, -4, 7, 25, 13, 4, 19, 8}));
  EXPECT_EQ(run_layer(net.layers[0], in), t8({1, 3, 3}, {0, 1, 0, 5, 19, 10, 3, 14, 6}));
  EXPECT_EQ(run_network(net, in), t8({1, 3, 3}, {0, 1, 0, 5, 19, 10, 3, 14, 6}));
}

TEST_F(Golden, StridedConvTwoChannelsByHand) {
  // [2][4][4] input, channel 0 all 1, channel 1 all -1; a 2x2 kernel with
  // stride 2, output channel 0 weights +1 on ci 0 and +2 on ci 1 (acc per
  // window 4 - 8 = -4), channel 1 weights 3 on ci 0 only (acc 12), bias
  // [1, 0]: -3 and 12; M [1, 100], S [0, 4]: -3 and rshift_round(1200, 4) =
  // 75 (1208 / 16 = 75.5 floors to 75); clamp [-2, 70]: -2 and 70.
  Tensor<int8_t> w({2, 2, 2, 2});
  for (int i = 0; i < 4; ++i) {
    w[i] = 1;       // co 0, ci 0
    w[4 + i] = 2;   // co 0, ci 1
    w[8 + i] = 3;   // co 1, ci 0
    w[12 + i] = 0;  // co 1, ci 1
  }
  save_npy(path("c_weight.npy"), w);
  save_npy(path("c_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{1, 0}));
  const Network net = load(
      "name: two\ninput: [2, 4, 4]\nlayers:\n"
      "  - {name: c, type: conv, out_channels: 2, kernel: 2, stride: 2,\n"
      "     activation: {clamp: [-2, 70]}, requant: {multiplier: [1, 100], shift: [0, 4]}}\n");
  Tensor<int8_t> in({2, 4, 4}, 1);
  for (int i = 16; i < 32; ++i) in[i] = -1;
  const Tensor<int8_t> out = run_layer(net.layers[0], in);
  ASSERT_EQ(out.shape(), (Shape{2, 2, 2}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i], -2) << i;
    EXPECT_EQ(out[4 + i], 70) << i;
  }
}

TEST_F(Golden, FcByHand) {
  // in [2][1][2] = 1 -2 3 4 (flattened C, H, W). w = [1 1 1 1; 2 0 -1 1;
  // -1 -1 -1 -1], bias [0, 10, 0]: acc = 6, 2 - 3 + 4 + 10 = 13, -6.
  // M [1, 2, 5], S [0, 1, 0]: 6, rshift_round(26, 1) = 13, -30. No activation.
  save_npy(path("f_weight.npy"), t8({3, 4}, {1, 1, 1, 1, 2, 0, -1, 1, -1, -1, -1, -1}));
  save_npy(path("f_bias.npy"), Tensor<int32_t>({3}, std::vector<int32_t>{0, 10, 0}));
  const Network net = load(
      "name: fc\ninput: [2, 1, 2]\nlayers:\n"
      "  - {name: f, type: fc, out_features: 3, requant: {multiplier: [1, 2, 5], shift: [0, 1, "
      "0]}}\n");
  EXPECT_EQ(run_layer(net.layers[0], t8({2, 1, 2}, {1, -2, 3, 4})), t8({3, 1, 1}, {6, 13, -30}));
}

TEST_F(Golden, PoolClampFlattenByHand) {
  // in = -1 -2 3 / 4 5 6 / 7 8 -9; 2x2 windows, stride 2, ceil mode: 2x2 out.
  //   max: max(-1,-2,4,5)=5, max(3,6)=6, max(7,8)=8, -9;
  //   avg: (-1-2+4+5)/4 = 1.5 -> 2, (3+6)/2 = 4.5 -> 5, 7.5 -> 8, -9
  //   (only the elements inside the input count; halves round up).
  const Network net = load(
      "name: pools\ninput: [1, 3, 3]\nlayers:\n"
      "  - {name: mp, type: maxpool, kernel: 2, ceil_mode: true}\n"
      "  - {name: cl, type: clamp, lo: -3, hi: 5}\n"
      "  - {name: fl, type: flatten}\n"
      "  - {name: r, type: relu}\n");
  const Tensor<int8_t> in = t8({1, 3, 3}, {-1, -2, 3, 4, 5, 6, 7, 8, -9});
  EXPECT_EQ(run_layer(net.layers[0], in), t8({1, 2, 2}, {5, 6, 8, -9}));
  EXPECT_EQ(run_layer(net.layers[1], t8({1, 2, 2}, {5, 6, 8, -9})), t8({1, 2, 2}, {5, 5, 5, -3}));
  EXPECT_EQ(run_layer(net.layers[2], t8({1, 2, 2}, {5, 5, 5, -3})), t8({4, 1, 1}, {5, 5, 5, -3}));
  EXPECT_EQ(run_network(net, in), t8({4, 1, 1}, {5, 5, 5, 0}));

  const Network avg = load(
      "name: avg\ninput: [1, 3, 3]\nlayers:\n"
      "  - {name: ap, type: avgpool, kernel: 2, ceil_mode: true}\n");
  EXPECT_EQ(run_network(avg, in), t8({1, 2, 2}, {2, 5, 8, -9}));
}

// A three-layer network: conv (2 channels) -> maxpool -> fc (3 outputs).
class GoldenNetwork : public Golden {
 protected:
  void SetUp() override {
    Golden::SetUp();
    Tensor<int8_t> w({2, 1, 3, 3});
    for (int64_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i % 7 - 3);
    save_npy(path("c_weight.npy"), w);
    save_npy(path("c_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{10, -10}));
    Tensor<int8_t> f({3, 8});
    for (int64_t i = 0; i < f.size(); ++i) f[i] = static_cast<int8_t>(5 - i % 11);
    save_npy(path("f_weight.npy"), f);
    save_npy(path("f_bias.npy"), Tensor<int32_t>({3}, std::vector<int32_t>{0, 100, -100}));
    net_ = load(
        "name: three\ninput: [1, 6, 6]\nlayers:\n"
        "  - {name: c, type: conv, out_channels: 2, kernel: 3, pad: 1, activation: relu,\n"
        "     requant: {multiplier: 5, shift: 4}}\n"
        "  - {name: p, type: maxpool, kernel: 3, stride: 2}\n"
        "  - {name: f, type: fc, out_features: 3, requant: {multiplier: 3, shift: 5}}\n");
  }
  static Tensor<int8_t> image(int seed) {
    Tensor<int8_t> x({1, 6, 6});
    for (int64_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<int8_t>((i * 37 + seed * 101) % 256 - 128);
    return x;
  }
  Network net_;
};

TEST_F(GoldenNetwork, RunNetworkChainsLayersAndCallsObserverOncePerLayer) {
  const Tensor<int8_t> x = image(1);
  std::vector<size_t> indices;
  std::vector<Shape> shapes;
  std::vector<Tensor<int8_t>> outs;
  const Tensor<int8_t> y =
      run_network(net_, x, [&](size_t i, const Layer& l, const Tensor<int8_t>& t) {
        EXPECT_EQ(&l, &net_.layers[i]);
        indices.push_back(i);
        shapes.push_back(t.shape());
        outs.push_back(t);
      });
  EXPECT_EQ(indices, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(shapes, (std::vector<Shape>{{2, 6, 6}, {2, 2, 2}, {3, 1, 1}}));
  // Each observed tensor is the layer applied to the previous one.
  EXPECT_EQ(outs[0], run_layer(net_.layers[0], x));
  EXPECT_EQ(outs[1], run_layer(net_.layers[1], outs[0]));
  EXPECT_EQ(outs[2], run_layer(net_.layers[2], outs[1]));
  EXPECT_EQ(y, outs[2]);
  // The output is not trivially constant (the test would then prove little).
  EXPECT_NE(outs[0], Tensor<int8_t>({2, 6, 6}, 0));
}

TEST_F(GoldenNetwork, BatchEqualsImageByImage) {
  constexpr int kN = 3;
  Tensor<int8_t> batch({kN, 1, 6, 6});
  std::vector<Tensor<int8_t>> singles;
  for (int n = 0; n < kN; ++n) {
    const Tensor<int8_t> x = image(n);
    std::copy(x.values().begin(), x.values().end(), batch.values().begin() + n * 36);
    singles.push_back(run_network(net_, x));
  }
  std::vector<Shape> shapes;
  const Tensor<int8_t> y = run_network(
      net_, batch,
      [&](size_t, const Layer&, const Tensor<int8_t>& t) { shapes.push_back(t.shape()); });
  EXPECT_EQ(shapes, (std::vector<Shape>{{kN, 2, 6, 6}, {kN, 2, 2, 2}, {kN, 3, 1, 1}}));
  ASSERT_EQ(y.shape(), (Shape{kN, 3, 1, 1}));
  for (int n = 0; n < kN; ++n) {
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(y[n * 3 + k], singles[n][k]) << "image " << n << " k " << k;
  }
  EXPECT_NE(singles[0], singles[1]);  // the images do differ
}

TEST_F(GoldenNetwork, WrongShapesAreErrors) {
  expect_error(
      [&] {
        run_network(net_, Tensor<int8_t>({1, 6, 5}));
      },
      net_.source_file, 0, "",
      {"input has shape [1, 6, 5], network 'three' expects [1, 6, 6] or [N, 1, 6, 6]"});
  expect_error(
      [&] {
        run_network(net_, Tensor<int8_t>({0, 1, 6, 6}));
      },
      net_.source_file, 0, "", {"input has shape [0, 1, 6, 6]"});
  expect_error(
      [&] {
        run_layer(net_.layers[1], Tensor<int8_t>({2, 5, 5}));
      },
      "", 0, "p", {"input has shape [2, 5, 5], the layer expects [2, 6, 6]"});
  expect_error(
      [&] {
        layer_accumulators(net_.layers[1], Tensor<int8_t>({2, 6, 6}));
      },
      "", 0, "p", {"a maxpool layer has no accumulators"});
}

TEST_F(GoldenNetwork, StructureOnlyNetworkCannotRun) {
  const Network bare = load_network(net_.source_file, {"", false});
  expect_error([&] { run_network(bare, image(0)); }, "", 0, "c", {"parameters not loaded"});
}

// A graph: conv, a depthwise branch and the input, added; a global average
// pool. The golden model equals the numerics functions composed by hand.
TEST_F(Golden, ResidualGraphEqualsTheNumericsComposedByHand) {
  Tensor<int8_t> w({2, 2, 3, 3}), dw({2, 1, 3, 3});
  for (int64_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i % 9 - 4);
  for (int64_t i = 0; i < dw.size(); ++i) dw[i] = static_cast<int8_t>(3 - i % 7);
  save_npy(path("c_weight.npy"), w);
  save_npy(path("c_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{7, -7}));
  save_npy(path("d_weight.npy"), dw);
  save_npy(path("d_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{-3, 30}));
  const Network net = load(
      "name: graph\ninput: [2, 5, 6]\nlayers:\n"
      "  - {name: c, type: conv, out_channels: 2, kernel: 3, pad: [1, 0, 1, 2], activation: relu,\n"
      "     requant: {multiplier: 5, shift: 4}}\n"
      "  - {name: d, type: depthwise, kernel: 3, pad: [1, 1, 1, 1],\n"
      "     requant: {multiplier: [3, 9], shift: 3}}\n"
      "  - {name: a, type: add, inputs: [d, input], activation: {clamp: [-20, 100]},\n"
      "     requant: {multiplier_a: [200, 65535], multiplier_b: [0, 300], shift: [8, 16]}}\n"
      "  - {name: g, type: global_avgpool}\n");
  Tensor<int8_t> x({2, 5, 6});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 53) % 256 - 128);
  Requant rc{{5, 5}, {4, 4}, 0, 127}, rd{{3, 9}, {3, 3}, -128, 127};
  const Tensor<int8_t> c =
      requantize(conv2d_acc(x, w, net.layers[0].bias, ConvWindow{3, 1, Pads{1, 0, 1, 2}, 1}), rc);
  EXPECT_EQ(c.shape(), (Shape{2, 5, 6}));
  const Tensor<int8_t> d =
      requantize(conv2d_acc(c, dw, net.layers[1].bias, ConvWindow{3, 1, Pads{1, 1, 1, 1}, 2}), rd);
  const Tensor<int8_t> a =
      residual_add(d, x, AddRequant{{200, 65535}, {0, 300}, {8, 16}, -20, 100});
  const Tensor<int8_t> want = global_avgpool(a);
  std::vector<Tensor<int8_t>> seen;
  const Tensor<int8_t> y = run_network(
      net, x, [&](size_t, const Layer&, const Tensor<int8_t>& t) { seen.push_back(t); });
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], c);
  EXPECT_EQ(seen[1], d);
  EXPECT_EQ(seen[2], a);
  EXPECT_EQ(y, want);
  EXPECT_NE(a, Tensor<int8_t>(a.shape(), 0));
  // A batch of two equals image by image.
  Tensor<int8_t> batch({2, 2, 5, 6});
  for (int64_t i = 0; i < batch.size(); ++i) batch[i] = x[i % x.size()];
  const Tensor<int8_t> yb = run_network(net, batch);
  EXPECT_EQ(yb.shape(), (Shape{2, 2, 1, 1}));
  for (int64_t i = 0; i < yb.size(); ++i) EXPECT_EQ(yb[i], want[i % want.size()]);
  // An add needs both operands.
  EXPECT_THROW(run_layer(net.layers[2], x), Error);
}

// A squeeze-and-excitation block: global pool -> 1x1 conv -> ReLU -> 1x1 conv with a
// table -> mul of the map by that vector, with a table on the mul too.
TEST_F(Golden, SqueezeExcitationEqualsTheNumericsComposedByHand) {
  Tensor<int8_t> w1({2, 3, 1, 1}), w2({3, 2, 1, 1});
  for (int64_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<int8_t>(9 - 5 * i);
  for (int64_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<int8_t>(4 * i - 11);
  std::vector<int8_t> table(kActTableSize), half(kActTableSize);
  for (int i = 0; i < kActTableSize; ++i) {
    table[static_cast<size_t>(i)] = static_cast<int8_t>(std::max(0, i - 128) / 2);  // relu / 2
    half[static_cast<size_t>(i)] = static_cast<int8_t>(127 - i);
  }
  save_npy(path("f1_weight.npy"), w1);
  save_npy(path("f1_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{3, -40}));
  save_npy(path("f2_weight.npy"), w2);
  save_npy(path("f2_bias.npy"), Tensor<int32_t>({3}, std::vector<int32_t>{100, 0, -9}));
  save_npy(path("t.npy"), Tensor<int8_t>({kActTableSize}, table));
  save_npy(path("h.npy"), Tensor<int8_t>({kActTableSize}, half));
  save_npy(path("m_mult.npy"), Tensor<uint16_t>({3}, std::vector<uint16_t>{700, 65535, 1}));
  save_npy(path("m_shift.npy"), Tensor<uint8_t>({3}, std::vector<uint8_t>{13, 20, 0}));
  const Network net = load(
      "name: se\ninput: [3, 4, 5]\nlayers:\n"
      "  - {name: g, type: global_avgpool}\n"
      "  - {name: f1, type: conv, out_channels: 2, kernel: 1, activation: relu,\n"
      "     requant: {multiplier: 9, shift: 5}}\n"
      "  - {name: f2, type: conv, out_channels: 3, kernel: 1, activation: {table: t.npy},\n"
      "     requant: {multiplier: [31, 7, 50], shift: 6}}\n"
      "  - {name: m, type: mul, inputs: [input, f2], activation: {table: h.npy}}\n");
  Tensor<int8_t> x({3, 4, 5});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 71) % 256 - 128);
  const Tensor<int8_t> g = global_avgpool(x);
  const Tensor<int8_t> f1 = requantize(conv2d_acc(g, w1, net.layers[1].bias, ConvGeometry{1, 1, 0}),
                                       Requant{{9, 9}, {5, 5}, 0, 127});
  const Tensor<int8_t> f2 =
      requantize(conv2d_acc(f1, w2, net.layers[2].bias, ConvGeometry{1, 1, 0}),
                 Requant{{31, 7, 50}, {6, 6, 6}, -128, 127, table});
  const Tensor<int8_t> want =
      requantize(channel_mul_acc(x, f2), Requant{{700, 65535, 1}, {13, 20, 0}, -128, 127, half});
  // By hand: the vector scales each channel's products.
  for (int64_t c = 0; c < 3; ++c) {
    const int64_t p = x(c, 1, 2) * f2(c, 0, 0);
    const int64_t m[] = {700, 65535, 1};
    const int s[] = {13, 20, 0};
    const int64_t v = std::clamp<int64_t>(rshift_round(p * m[c], s[c]), -128, 127);
    EXPECT_EQ(want(c, 1, 2), half[static_cast<size_t>(v + 128)]) << "channel " << c;
  }
  EXPECT_NE(f2, Tensor<int8_t>(f2.shape(), 0));  // the vector is not all zero
  std::vector<Tensor<int8_t>> seen;
  const Tensor<int8_t> y = run_network(
      net, x, [&](size_t, const Layer&, const Tensor<int8_t>& t) { seen.push_back(t); });
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[2], f2);
  EXPECT_EQ(y, want);
  // A mul needs both inputs, the vector of shape [C][1][1].
  EXPECT_THROW(run_layer(net.layers[3], x), Error);
  EXPECT_THROW(run_layer(net.layers[3], std::vector<Tensor<int8_t>>{x, x}), Error);
}

TEST_F(Golden, ConcatSliceAndUpsampleByHand) {
  const Tensor<int8_t> a = t8({1, 2, 2}, {1, 2, 3, 4});
  const Tensor<int8_t> b = t8({2, 2, 2}, {5, 6, 7, 8, -1, -2, -3, -4});
  EXPECT_EQ(concat_channels({a, b}), t8({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4}));
  EXPECT_EQ(slice_channels(concat_channels({a, b}), 1, 2), t8({1, 2, 2}, {5, 6, 7, 8}));
  EXPECT_EQ(upsample_nearest(a, 2),
            t8({1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_EQ(upsample_nearest(t8({1, 1, 2}, {7, -8}), 3),
            t8({1, 3, 6}, {7, 7, 7, -8, -8, -8, 7, 7, 7, -8, -8, -8, 7, 7, 7, -8, -8, -8}));
  EXPECT_THROW(concat_channels({a, t8({1, 1, 2}, {0, 0})}), Error);
  EXPECT_THROW(slice_channels(b, 1, 1), Error);
  EXPECT_THROW(slice_channels(b, 0, 3), Error);

  write("net.yaml",
        "name: v\ninput: [2, 2, 2]\nlayers:\n"
        "  - {name: u, type: upsample, scale: 2}\n"
        "  - {name: s, type: slice, inputs: input, begin: 1, end: 2}\n"
        "  - {name: us, type: upsample, inputs: s, scale: 2}\n"
        "  - {name: k, type: concat, inputs: [us, u]}\n");
  const Network net = load_network(path("net.yaml"));
  const Tensor<int8_t> y = run_network(net, b);
  const Tensor<int8_t> up = upsample_nearest(b, 2);
  EXPECT_EQ(y, concat_channels({slice_channels(up, 1, 2), up}));
  // A concat needs all its inputs.
  EXPECT_THROW(run_layer(net.layers[3], up), Error);
}

// Several outputs: run_network_outputs returns each output layer's map in the
// order of `outputs:` (an output also read by a later layer included), for one
// image and for a batch; run_network returns output 0.
TEST_F(Golden, SeveralOutputsInTheirOrder) {
  const Tensor<int8_t> b = t8({2, 2, 2}, {5, 6, 7, 8, -1, -2, -3, -4});
  write("net.yaml",
        "name: v\ninput: [2, 2, 2]\noutputs: [k, u, s]\nlayers:\n"
        "  - {name: u, type: upsample, scale: 2}\n"
        "  - {name: s, type: slice, inputs: input, begin: 1, end: 2}\n"
        "  - {name: m, type: maxpool, inputs: u, kernel: 2}\n"
        "  - {name: k, type: concat, inputs: [s, m]}\n");
  const Network net = load_network(path("net.yaml"));
  const std::vector<Tensor<int8_t>> y = run_network_outputs(net, b);
  ASSERT_EQ(y.size(), 3u);
  const Tensor<int8_t> up = upsample_nearest(b, 2);
  EXPECT_EQ(y[1], up);
  EXPECT_EQ(y[2], slice_channels(b, 1, 2));
  EXPECT_EQ(y[0],
            concat_channels({slice_channels(b, 1, 2), maxpool(up, PoolGeometry{2, 2, 0, false})}));
  EXPECT_EQ(run_network(net, b), y[0]);
  Tensor<int8_t> batch({2, 2, 2, 2});
  for (int64_t i = 0; i < batch.size(); ++i)
    batch[i] = static_cast<int8_t>(i < 8 ? b[i] : -b[i - 8]);
  const std::vector<Tensor<int8_t>> yb = run_network_outputs(net, batch);
  ASSERT_EQ(yb.size(), 3u);
  const Tensor<int8_t> second = run_network_outputs(
      net, Tensor<int8_t>({2, 2, 2}, std::vector<int8_t>(batch.values().begin() + 8,
                                                         batch.values().end())))[1];
  EXPECT_EQ(yb[1].shape(), (Shape{2, 2, 4, 4}));
  for (int64_t i = 0; i < up.size(); ++i) {
    EXPECT_EQ(yb[1][i], up[i]);
    EXPECT_EQ(yb[1][up.size() + i], second[i]);
  }
}

// Table activations on conv, depthwise, fc and add: each layer's output is
// its requantised, clamped value looked up in its table.
TEST_F(Golden, TableActivationsOnEveryRequantisedLayer) {
  Tensor<int8_t> w({2, 1, 3, 3}), dw({2, 1, 3, 3}), f({3, 2 * 4 * 4});
  for (int64_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(i % 9 - 4);
  for (int64_t i = 0; i < dw.size(); ++i) dw[i] = static_cast<int8_t>(3 - i % 7);
  for (int64_t i = 0; i < f.size(); ++i) f[i] = static_cast<int8_t>(i % 5 - 2);
  save_npy(path("c_weight.npy"), w);
  save_npy(path("c_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{7, -7}));
  save_npy(path("d_weight.npy"), dw);
  save_npy(path("d_bias.npy"), Tensor<int32_t>({2}, 3));
  save_npy(path("f_weight.npy"), f);
  save_npy(path("f_bias.npy"), Tensor<int32_t>({3}, -5));
  // Leaky ReLU (slope 1/8), a reversal, a square-ish and a constant table.
  std::vector<int8_t> leaky(256), rev(256), sq(256), flat(256, 9);
  for (int i = 0; i < 256; ++i) {
    const int v = i - 128;
    leaky[static_cast<size_t>(i)] = static_cast<int8_t>(v >= 0 ? v : rshift_round(v, 3));
    rev[static_cast<size_t>(i)] = static_cast<int8_t>(127 - i);
    sq[static_cast<size_t>(i)] = static_cast<int8_t>(std::min(127, v * v / 64));
  }
  save_npy(path("leaky.npy"), Tensor<int8_t>({256}, leaky));
  save_npy(path("rev.npy"), Tensor<int8_t>({256}, rev));
  save_npy(path("sq.npy"), Tensor<int8_t>({256}, sq));
  save_npy(path("flat.npy"), Tensor<int8_t>({256}, flat));
  const Network net = load(
      "name: tables\ninput: [1, 4, 4]\nlayers:\n"
      "  - {name: c, type: conv, out_channels: 2, kernel: 3, pad: 1,\n"
      "     activation: {table: leaky.npy}, requant: {multiplier: 5, shift: 3}}\n"
      "  - {name: d, type: depthwise, kernel: 3, pad: 1, activation: {table: rev.npy},\n"
      "     requant: {multiplier: 7, shift: 4}}\n"
      "  - {name: a, type: add, inputs: [d, c], activation: {table: sq.npy},\n"
      "     requant: {multiplier_a: 3, multiplier_b: 5, shift: 2}}\n"
      "  - {name: f, type: fc, out_features: 3, activation: {table: flat.npy},\n"
      "     requant: {multiplier: 1, shift: 0}}\n");
  EXPECT_EQ(net.layers[0].requant.table, leaky);
  EXPECT_EQ(net.layers[0].requant.lo, kInt8Min);  // a table layer's clamp is the full range
  Tensor<int8_t> x({1, 4, 4});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 53) % 256 - 128);
  const auto by_table = [](const std::vector<int8_t>& t, Tensor<int8_t> v) {
    for (int64_t i = 0; i < v.size(); ++i) v[i] = t[static_cast<size_t>(v[i] + 128)];
    return v;
  };
  Requant rc{{5, 5}, {3, 3}, -128, 127}, rd{{7, 7}, {4, 4}, -128, 127};
  const Tensor<int8_t> c = by_table(
      leaky,
      requantize(conv2d_acc(x, w, net.layers[0].bias, ConvWindow{3, 1, Pads{1, 1, 1, 1}, 1}), rc));
  const Tensor<int8_t> d = by_table(
      rev,
      requantize(conv2d_acc(c, dw, net.layers[1].bias, ConvWindow{3, 1, Pads{1, 1, 1, 1}, 2}), rd));
  const Tensor<int8_t> a =
      by_table(sq, residual_add(d, c, AddRequant{{3, 3}, {5, 5}, {2, 2}, -128, 127}));
  std::vector<Tensor<int8_t>> seen;
  const Tensor<int8_t> y = run_network(
      net, x, [&](size_t, const Layer&, const Tensor<int8_t>& t) { seen.push_back(t); });
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], c);
  EXPECT_EQ(seen[1], d);
  EXPECT_EQ(seen[2], a);
  EXPECT_EQ(y, Tensor<int8_t>({3, 1, 1}, 9));
  EXPECT_NE(
      c,
      requantize(conv2d_acc(x, w, net.layers[0].bias, ConvWindow{3, 1, Pads{1, 1, 1, 1}, 1}), rc));
}

}  // namespace
}  // namespace strata
