// SPDX-License-Identifier: Apache-2.0
// Unit tests of the numerics contract functions (numerics.hpp): the rounding
// and requantisation rule at its extremes, output sizes, and each layer
// function on edge cases computed by hand. (The PyTorch reference vectors in
// reference_test.cpp check the same functions against an independent
// framework.)
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <random>

#include "strata/error.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

Tensor<int8_t> image(Shape shape, std::vector<int8_t> values) {
  return Tensor<int8_t>(std::move(shape), std::move(values));
}

TEST(Numerics, RshiftRoundHalfTowardPlusInfinity) {
  EXPECT_EQ(rshift_round(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(rshift_round(-5, 1), -2);  // -2.5 -> -2
  EXPECT_EQ(rshift_round(-6, 1), -3);
  EXPECT_EQ(rshift_round(-7, 1), -3);  // -3.5 -> -3
  EXPECT_EQ(rshift_round(6, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(rshift_round(-6, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(rshift_round(7, 0), 7);    // shift 0 is the identity
  EXPECT_EQ(rshift_round(-7, 0), -7);
  // At the largest shift: 2^(S-1) is exactly 0.5.
  const int64_t half = INT64_C(1) << (kMaxShift - 1);
  EXPECT_EQ(rshift_round(half, kMaxShift), 1);      // exactly 0.5 -> 1
  EXPECT_EQ(rshift_round(half - 1, kMaxShift), 0);  // just below 0.5
  EXPECT_EQ(rshift_round(-half, kMaxShift), 0);     // -0.5 -> 0
  EXPECT_EQ(rshift_round(-half - 1, kMaxShift), -1);
  EXPECT_THROW(rshift_round(1, kMaxShift + 1), Error);
  EXPECT_THROW(rshift_round(1, -1), Error);
}

TEST(Numerics, RequantiseExtremes) {
  // Largest product: INT32_MIN * 65535 needs 48 bits and must not overflow.
  EXPECT_EQ(requantize(INT32_MIN, 65535, 47, -128, 127), -1);   // -2^31*65535/2^47 = -0.99998 -> -1
  EXPECT_EQ(requantize(INT32_MAX, 65535, 47, -128, 127), 1);    // 0.99998 -> 1
  EXPECT_EQ(requantize(INT32_MAX, 65535, 40, -128, 127), 127);  // saturates
  EXPECT_EQ(requantize(INT32_MIN, 65535, 40, -128, 127), -128);
  EXPECT_EQ(requantize(INT32_MIN, 65535, 0, -128, 127), -128);
  EXPECT_EQ(requantize(12345, 0, 10, -128, 127), 0);  // multiplier 0
  EXPECT_EQ(requantize(-3, 1, 0, -128, 127), -3);     // shift 0, M 1: identity
  EXPECT_EQ(requantize(-3, 1, 0, 0, 127), 0);         // ReLU
  EXPECT_EQ(requantize(100, 1, 0, 0, 6), 6);          // ReLU6-style
  EXPECT_EQ(requantize(-100, 1, 0, -20, -10), -20);   // negative-only range
  EXPECT_EQ(requantize(0, 1, 0, -20, -10), -10);
  EXPECT_EQ(requantize(3, 1, 1, -128, 127), 2);    // 1.5 -> 2
  EXPECT_EQ(requantize(-3, 1, 1, -128, 127), -1);  // -1.5 -> -1
}

TEST(Numerics, RequantiseMatchesWideArithmeticOnRandomValues) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int32_t> acc(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int> mult(0, 65535), shift(0, kMaxShift);
  for (int i = 0; i < 100000; ++i) {
    const int32_t a = acc(rng);
    const int m = mult(rng), s = shift(rng);
    // Independent formulation: floor((a*m)/2^s + 1/2) with 128-bit arithmetic.
    const __int128 p = static_cast<__int128>(a) * m;
    __int128 num = 2 * p + (static_cast<__int128>(1) << s);
    __int128 den = static_cast<__int128>(2) << s;
    __int128 q = num / den;
    if (num % den != 0 && num < 0) --q;
    const int64_t want = static_cast<int64_t>(std::min<__int128>(127, std::max<__int128>(-128, q)));
    ASSERT_EQ(requantize(a, static_cast<uint16_t>(m), s, -128, 127), want)
        << "acc " << a << " M " << m << " S " << s;
  }
}

TEST(Numerics, AverageRoundingHalfUp) {
  EXPECT_EQ(avg_round(3, 2), 2);    // 1.5 -> 2
  EXPECT_EQ(avg_round(-3, 2), -1);  // -1.5 -> -1
  EXPECT_EQ(avg_round(-4, 3), -1);  // -1.33 -> -1
  EXPECT_EQ(avg_round(-5, 3), -2);  // -1.67 -> -2
  EXPECT_EQ(avg_round(127 * 9, 9), 127);
  EXPECT_EQ(avg_round(-128 * 9, 9), -128);
  EXPECT_EQ(avg_round(0, 1), 0);
  EXPECT_THROW(avg_round(1, 0), Error);
  for (int n = 1; n <= 49; ++n) {
    for (int sum = -128 * n; sum <= 127 * n; ++sum) {
      const double exact = static_cast<double>(sum) / n;
      const int64_t want = static_cast<int64_t>(std::floor(exact + 0.5));
      ASSERT_EQ(avg_round(sum, n), want) << "sum " << sum << " n " << n;
    }
  }
}

TEST(Numerics, OutputSizes) {
  EXPECT_EQ(conv_out_size(32, {5, 1, 2}), 32);
  EXPECT_EQ(conv_out_size(7, {3, 2, 1}), 4);
  EXPECT_EQ(conv_out_size(1, {3, 1, 1}), 1);  // kernel larger than the input, padded
  EXPECT_EQ(conv_out_size(5, {1, 3, 0}), 2);  // stride larger than the kernel
  EXPECT_THROW(conv_out_size(2, {5, 1, 1}), Error);
  EXPECT_THROW(conv_out_size(4, {3, 0, 0}), Error);
  // cifar10_quick pooling, ceil mode: 32 -> 16 -> 8 -> 4.
  EXPECT_EQ(pool_out_size(32, {3, 2, 0, true}), 16);
  EXPECT_EQ(pool_out_size(16, {3, 2, 0, true}), 8);
  EXPECT_EQ(pool_out_size(8, {3, 2, 0, true}), 4);
  EXPECT_EQ(pool_out_size(32, {3, 2, 0, false}), 15);
  // Ceil mode with padding: a last window starting in the right padding is dropped.
  EXPECT_EQ(pool_out_size(4, {2, 2, 1, true}), 3);  // starts -1, 1, 3
  EXPECT_EQ(pool_out_size(5, {2, 2, 1, true}), 3);  // 4th would start at 5 = H: dropped
  EXPECT_EQ(pool_out_size(1, {2, 2, 1, true}), 1);
  EXPECT_THROW(pool_out_size(4, {2, 2, 2, false}), Error);  // pad >= kernel
  EXPECT_THROW(pool_out_size(2, {5, 1, 1, false}), Error);
}

TEST(Numerics, ConvHandComputed) {
  // 1 channel 3x3, kernel 3, pad 1: centre output sums all nine inputs.
  auto in = image({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor<int8_t> w({1, 1, 3, 3}, 1);
  Tensor<int32_t> bias({1}, 100);
  auto acc = conv2d_acc(in, w, bias, {3, 1, 1});
  ASSERT_EQ(acc.shape(), Shape({1, 3, 3}));
  EXPECT_EQ(acc(0, 1, 1), 100 + 45);
  EXPECT_EQ(acc(0, 0, 0), 100 + 1 + 2 + 4 + 5);  // padded taps contribute nothing
  EXPECT_EQ(acc(0, 2, 2), 100 + 5 + 6 + 8 + 9);
  // Stride 2 larger than the kernel 1.
  auto acc2 = conv2d_acc(in, Tensor<int8_t>({1, 1, 1, 1}, -2), Tensor<int32_t>({1}, 0), {1, 2, 0});
  ASSERT_EQ(acc2.shape(), Shape({1, 2, 2}));
  EXPECT_EQ(acc2(0, 0, 0), -2);
  EXPECT_EQ(acc2(0, 0, 1), -6);
  EXPECT_EQ(acc2(0, 1, 0), -14);
  EXPECT_EQ(acc2(0, 1, 1), -18);
  // 1x1 image, 3x3 kernel, pad 1: only the centre tap is inside.
  auto one = image({2, 1, 1}, {-128, 127});
  Tensor<int8_t> w3({1, 2, 3, 3}, -128);
  auto acc3 = conv2d_acc(one, w3, Tensor<int32_t>({1}, 0), {3, 1, 1});
  ASSERT_EQ(acc3.shape(), Shape({1, 1, 1}));
  EXPECT_EQ(acc3[0], -128 * -128 + -128 * 127);
  EXPECT_THROW(conv2d_acc(in, Tensor<int8_t>({1, 2, 3, 3}), bias, {3, 1, 1}), Error);
}

// The fast kernels behind conv2d_acc and fc_acc against the formula loops
// (strata::reference) on random geometries: grouped, depthwise and dense
// convolutions, kernels 1..7, strides 1..4, pads per side, values at the
// int8 extremes, and biases near the int32 limits, where the sums wrap
// modulo 2^32 like the accumulator.
TEST(Numerics, FastKernelsEqualTheFormulaLoops) {
  std::mt19937 rng(20261207);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto fill = [&](Tensor<int8_t>& t) {
    for (int8_t& v : t.values()) {
      const int r = pick(0, 9);
      v = static_cast<int8_t>(r == 0 ? -128 : r == 1 ? 127 : pick(-128, 127));
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int kind = trial % 3;  // dense, grouped, depthwise
    const int k = pick(1, 7), stride = pick(1, 4);
    const Pads pad{pick(0, k - 1), pick(0, k - 1), pick(0, k - 1), pick(0, k - 1)};
    const int h = pick(std::max(1, k - pad.top - pad.bottom), 20);
    const int w = pick(std::max(1, k - pad.left - pad.right), 20);
    int groups = 1, cin = pick(1, 40), cout = pick(1, 70);
    if (kind == 1) {
      groups = pick(2, 4);
      cin = groups * pick(1, 9);
      cout = groups * pick(1, 9);
    } else if (kind == 2) {
      groups = cin = cout = pick(1, 24);
    }
    Tensor<int8_t> in({cin, h, w}), wt({cout, cin / groups, k, k});
    fill(in);
    fill(wt);
    Tensor<int32_t> bias({cout});
    for (int32_t& b : bias.values()) {
      b = pick(0, 3) == 0 ? (pick(0, 1) ? INT32_MAX - pick(0, 1000) : INT32_MIN + pick(0, 1000))
                          : pick(-100000, 100000);
    }
    const ConvWindow g{k, stride, pad, groups};
    SCOPED_TRACE(fmt::format("trial {}: in [{}][{}][{}], cout {}, groups {}, k {}, s {}", trial,
                             cin, h, w, cout, groups, k, stride));
    const Tensor<int32_t> fast = conv2d_acc(in, wt, bias, g);
    const Tensor<int32_t> slow = reference::conv2d_acc(in, wt, bias, g);
    ASSERT_EQ(fast.shape(), slow.shape());
    ASSERT_TRUE(std::equal(fast.values().begin(), fast.values().end(), slow.values().begin()));

    const int n_in = pick(1, 3000), n_out = pick(1, 150);
    Tensor<int8_t> x({n_in}), fw({n_out, n_in});
    fill(x);
    fill(fw);
    Tensor<int32_t> fb({n_out});
    for (int32_t& b : fb.values()) b = pick(0, 3) == 0 ? INT32_MAX - pick(0, 1000) : pick(-9, 9);
    const Tensor<int32_t> ffast = fc_acc(x, fw, fb), fslow = reference::fc_acc(x, fw, fb);
    ASSERT_TRUE(std::equal(ffast.values().begin(), ffast.values().end(), fslow.values().begin()))
        << "fc " << n_in << " -> " << n_out;
  }
}

// The map requantisation (its per-channel loop) against the scalar rule, at
// every shift, the extreme multipliers and accumulators, with a table.
TEST(Numerics, MapRequantisationEqualsTheScalarRule) {
  std::mt19937 rng(7);
  const int c = 48, plane = 37;
  Tensor<int32_t> acc({c, 1, plane});
  for (int32_t& v : acc.values()) {
    const int r = static_cast<int>(rng() % 8);
    v = r == 0 ? INT32_MIN : r == 1 ? INT32_MAX : static_cast<int32_t>(rng());
  }
  Requant rq;
  for (int ch = 0; ch < c; ++ch) {
    rq.multiplier.push_back(ch % 5 == 0 ? 65535 : static_cast<uint16_t>(rng()));
    rq.shift.push_back(static_cast<uint8_t>(ch));  // 0 .. 47
  }
  rq.lo = -100;
  rq.hi = 90;
  for (int i = 0; i < 256; ++i) rq.table.push_back(static_cast<int8_t>(127 - i));
  const Tensor<int8_t> out = requantize(acc, rq);
  for (int ch = 0; ch < c; ++ch) {
    for (int i = 0; i < plane; ++i) {
      const int8_t v = requantize(acc(ch, 0, i), rq.multiplier[ch], rq.shift[ch], rq.lo, rq.hi);
      ASSERT_EQ(out(ch, 0, i), apply_table(rq.table, v)) << "channel " << ch << ", element " << i;
    }
  }
}

TEST(Numerics, FullyConnectedFlattensInCHWOrder) {
  auto in = image({2, 1, 2}, {1, 2, 3, 4});                     // c0: 1 2, c1: 3 4
  auto w = Tensor<int8_t>({2, 4}, {1, 0, 0, 0, 0, 0, 10, -1});  // picks in[0], 10*in[2]-in[3]
  auto acc = fc_acc(in, w, Tensor<int32_t>({2}, {5, -5}));
  ASSERT_EQ(acc.shape(), Shape({2, 1, 1}));
  EXPECT_EQ(acc[0], 6);
  EXPECT_EQ(acc[1], -5 + 30 - 4);
  EXPECT_THROW(fc_acc(in, Tensor<int8_t>({2, 3}), Tensor<int32_t>({2})), Error);
}

TEST(Numerics, PoolingIgnoresElementsOutsideTheInput) {
  auto in = image({1, 3, 3}, {-5, -6, -7, -8, -9, -10, -11, -12, -13});
  // Max with padding: padding is never a zero that wins over negatives.
  auto mx = maxpool(in, {2, 2, 1, false});
  ASSERT_EQ(mx.shape(), Shape({1, 2, 2}));
  EXPECT_EQ(mx(0, 0, 0), -5);
  EXPECT_EQ(mx(0, 0, 1), -6);
  EXPECT_EQ(mx(0, 1, 0), -8);
  EXPECT_EQ(mx(0, 1, 1), -9);
  // Avg ceil mode, last window cut by the edge: divides by valid elements only.
  auto av = avgpool(in, {2, 2, 0, true});
  ASSERT_EQ(av.shape(), Shape({1, 2, 2}));
  EXPECT_EQ(av(0, 0, 0), avg_round(-5 - 6 - 8 - 9, 4));  // -7
  EXPECT_EQ(av(0, 0, 1), avg_round(-7 - 10, 2));         // -8.5 -> -8
  EXPECT_EQ(av(0, 1, 0), avg_round(-11 - 12, 2));        // -11.5 -> -11
  EXPECT_EQ(av(0, 1, 1), -13);                           // one element
  // Stride larger than the kernel skips elements.
  auto sk = maxpool(image({1, 1, 5}, {1, 9, 2, 8, 3}), {1, 2, 0, false});
  EXPECT_EQ(sk.values()[0], 1);
  EXPECT_EQ(sk.values()[1], 2);
  EXPECT_EQ(sk.values()[2], 3);
}

TEST(Numerics, Clamp) {
  auto in = image({1, 1, 4}, {-128, -1, 5, 127});
  auto r = clamp(in, 0, 127);
  EXPECT_EQ(r, image({1, 1, 4}, {0, 0, 5, 127}));
  EXPECT_EQ(clamp(in, 0, 3), image({1, 1, 4}, {0, 0, 3, 3}));
  EXPECT_THROW(clamp(in, 5, 4), Error);
  EXPECT_THROW(clamp(in, -129, 4), Error);
}

TEST(Numerics, GroupsMustDivideTheChannels) {
  const Tensor<int32_t> bias({4}, 0);
  const auto in = image({4, 3, 3}, std::vector<int8_t>(36, 1));
  const Pads p1{1, 1, 1, 1};
  // 3 groups divide neither the 4 input nor the 4 output channels.
  EXPECT_THROW(conv2d_acc(in, Tensor<int8_t>({4, 1, 3, 3}), bias, ConvWindow{3, 1, p1, 3}), Error);
  EXPECT_THROW(conv2d_acc(image({6, 3, 3}, std::vector<int8_t>(54, 1)),
                          Tensor<int8_t>({4, 3, 3, 3}), bias, ConvWindow{3, 1, p1, 4}),
               Error);  // 4 groups do not divide 6 input channels
  EXPECT_THROW(conv2d_acc(in, Tensor<int8_t>({3, 2, 3, 3}), Tensor<int32_t>({3}, 0),
                          ConvWindow{3, 1, p1, 2}),
               Error);  // 2 groups do not divide 3 output channels
  EXPECT_THROW(conv2d_acc(in, Tensor<int8_t>({4, 1, 3, 3}), bias, ConvWindow{3, 1, p1, 0}), Error);
  // Weights whose second dimension is not Cin / groups.
  EXPECT_THROW(conv2d_acc(in, Tensor<int8_t>({4, 4, 3, 3}), bias, ConvWindow{3, 1, p1, 4}), Error);
  // Depthwise with 4 groups is fine: each output reads its own channel.
  const auto dw = conv2d_acc(in, Tensor<int8_t>({4, 1, 3, 3}, 1), bias, ConvWindow{3, 1, p1, 4});
  EXPECT_EQ(dw(2, 1, 1), 9);
  EXPECT_EQ(dw(3, 0, 0), 4);
}

TEST(Numerics, ResidualAddRejectsBadShapesAndParameters) {
  const auto a = image({2, 1, 2}, {1, 2, 3, 4});
  const AddRequant rq{{1, 1}, {1, 1}, {0, 0}, kInt8Min, kInt8Max};
  EXPECT_EQ(residual_add(a, a, rq), image({2, 1, 2}, {2, 4, 6, 8}));
  EXPECT_THROW(residual_add(a, image({2, 2, 1}, {1, 2, 3, 4}), rq), Error);  // shape mismatch
  EXPECT_THROW(residual_add(a, image({1, 1, 2}, {1, 2}), rq), Error);
  EXPECT_THROW(residual_add(a, a, AddRequant{{1}, {1, 1}, {0, 0}, -128, 127}), Error);
  EXPECT_THROW(residual_add(a, a, AddRequant{{1, 1}, {1, 1, 1}, {0, 0}, -128, 127}), Error);
  EXPECT_THROW(residual_add(a, a, AddRequant{{1, 1}, {1, 1}, {0}, -128, 127}), Error);
  EXPECT_THROW(residual_add(a, a, AddRequant{{1, 1}, {1, 1}, {0, 48}, -128, 127}), Error);
}

// Channel-wise multiply: acc = x * s[c], the int8 ends included (2^14), then the
// convolution's requantisation; a vector not [C][1][1] is an error.
TEST(Numerics, ChannelMulProductsThenRequantisation) {
  const auto x = image({2, 1, 3}, {-128, 5, 127, -3, 3, -128});
  const auto s = image({2, 1, 1}, {-128, 3});
  const Tensor<int32_t> acc = channel_mul_acc(x, s);
  EXPECT_EQ(acc,
            Tensor<int32_t>({2, 1, 3}, std::vector<int32_t>{16384, -640, -16256, -9, 9, -384}));
  // M = 3, S = 7: y = floor((3 * acc + 64) / 128): 384.5 -> 384 -> 127, -14.5 -> -15,
  // -380.5 -> -381 -> -128, 0, 0, -8.5 -> -9.
  const Requant rq{{3, 3}, {7, 7}, -128, 127};
  EXPECT_EQ(requantize(acc, rq), image({2, 1, 3}, {127, -15, -128, 0, 0, -9}));
  EXPECT_THROW(channel_mul_acc(x, image({2, 1, 2}, {1, 2, 3, 4})), Error);
  EXPECT_THROW(channel_mul_acc(x, image({3, 1, 1}, {1, 2, 3})), Error);
  EXPECT_THROW(channel_mul_acc(Tensor<int8_t>({2, 3}), s), Error);
}

// A table activation looks up the clamped value: y = T[clamp(...) + 128],
// after the clamp (an entry outside [lo, hi] is never read).
TEST(Numerics, TableActivationAfterTheClamp) {
  std::vector<int8_t> table(kActTableSize);
  for (int i = 0; i < kActTableSize; ++i)
    table[static_cast<size_t>(i)] = static_cast<int8_t>(127 - i);
  EXPECT_EQ(apply_table(table, -128), 127);
  EXPECT_EQ(apply_table(table, 0), -1);
  EXPECT_EQ(apply_table(table, 127), -128);
  EXPECT_EQ(apply_table({}, 42), 42);  // no table
  Requant rq{{1, 2}, {0, 1}, -128, 127, table};
  const Tensor<int32_t> acc({2, 1, 3}, std::vector<int32_t>{-1000, 0, 5, 3, -3, 1000});
  // channel 0: -128, 0, 5; channel 1: rshift_round(6, 1) = 3, -3, 127
  EXPECT_EQ(requantize(acc, rq), image({2, 1, 3}, {127, -1, -6, -4, 2, -128}));
  rq.lo = 0;
  rq.hi = 4;  // clamp first: [0, 0, 4], [3, 0, 4]
  EXPECT_EQ(requantize(acc, rq), image({2, 1, 3}, {-1, -1, -5, -4, -1, -5}));
  rq.table.resize(255);
  EXPECT_THROW(requantize(acc, rq), Error);
  // Residual add: the table after the add's clamp.
  const auto a = image({1, 1, 3}, {-100, 0, 100});
  const AddRequant add{{1}, {1}, {0}, -50, 127, table};
  EXPECT_EQ(residual_add(a, a, add), image({1, 1, 3}, {49, -1, -128}));
}

TEST(Numerics, GlobalAvgPoolOfOnePixelIsTheInput) {
  const auto in = image({4, 1, 1}, {-128, -1, 0, 127});
  EXPECT_EQ(global_avgpool(in), in);
  // 1 x 2 maps: halves round toward +infinity.
  EXPECT_EQ(global_avgpool(image({2, 1, 2}, {0, 1, -1, 0})), image({2, 1, 1}, {1, 0}));
}

// The ConvGeometry overload is the ConvWindow one with the same pad on every
// side and one group.
TEST(Numerics, ConvGeometryEqualsSymmetricConvWindow) {
  std::mt19937 rng(20261127);
  std::uniform_int_distribution<int> v8(kInt8Min, kInt8Max);
  for (int trial = 0; trial < 20; ++trial) {
    const int k = 1 + static_cast<int>(rng() % 5), s = 1 + static_cast<int>(rng() % 3);
    const int p = static_cast<int>(rng() % k);
    const int64_t cin = 1 + rng() % 4, cout = 1 + rng() % 4, h = k + rng() % 6, w = k + rng() % 6;
    Tensor<int8_t> in({cin, h, w}), wt({cout, cin, k, k});
    Tensor<int32_t> bias({cout});
    for (auto& x : in.values()) x = static_cast<int8_t>(v8(rng));
    for (auto& x : wt.values()) x = static_cast<int8_t>(v8(rng));
    for (auto& x : bias.values()) x = v8(rng) * 100;
    EXPECT_EQ(conv2d_acc(in, wt, bias, ConvGeometry{k, s, p}),
              conv2d_acc(in, wt, bias, ConvWindow{k, s, Pads{p, p, p, p}, 1}))
        << "kernel " << k << " stride " << s << " pad " << p;
  }
}

TEST(Numerics, WorstCaseAccumulator) {
  const std::vector<int8_t> w = {-128, 127, 0, 1};
  auto r = worst_case_acc(w.data(), 4, 10);
  EXPECT_EQ(r.max, 10 + 128 * 128 + 127 * 127 + 0 + 127);
  EXPECT_EQ(r.min, 10 - 128 * 127 - 127 * 128 + 0 - 128);
  // ReLU inputs: negative products only from negative weights times 127, 0 from padding.
  auto relu = worst_case_acc(w.data(), 4, 0, 0, 127);
  EXPECT_EQ(relu.min, -128 * 127);
  EXPECT_EQ(relu.max, 127 * 127 + 127);
}

// The example in docs/numerics.md, number for number.
TEST(Numerics, WorkedExampleFromTheDocs) {
  auto in = image({1, 3, 3}, {10, -20, 30, -40, 50, -60, 70, -80, 90});
  Tensor<int8_t> w({1, 1, 3, 3}, std::vector<int8_t>{1, 2, 1, 0, -1, 0, -1, 2, -1});
  auto acc = conv2d_acc(in, w, Tensor<int32_t>({1}, -7), {3, 1, 1});
  EXPECT_EQ(acc, Tensor<int32_t>({1, 3, 3}, {-147, 213, -207, 253, -377, 353, -107, 73, -167}));
  auto y = requantize(acc, Requant{{23170}, {16}, -128, 127});
  EXPECT_EQ(y, image({1, 3, 3}, {-52, 75, -73, 89, -128, 125, -38, 26, -59}));
  EXPECT_EQ(avgpool(y, {2, 2, 0, true}), image({1, 2, 2}, {-4, 26, -6, -59}));
}

}  // namespace
}  // namespace strata
