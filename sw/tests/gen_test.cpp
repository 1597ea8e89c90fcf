// SPDX-License-Identifier: Apache-2.0
// `strata gen` logic: reproducible files, exact sparsity, weight range,
// calibration that puts each channel's largest output near the target, inline
// requantisation left alone, and clear errors.
#include "strata/gen.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "strata/numerics.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test::expect_error;

const std::string kExamples = std::string(STRATA_SOURCE_DIR) + "/examples/";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class Gen : public test::TempDirTest {};

TEST_F(Gen, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string yaml = kExamples + "strided_net.yaml";
  const GenResult a = generate_network(yaml, path("a"), GenOptions{.seed = 7});
  const GenResult b = generate_network(yaml, path("b"), GenOptions{.seed = 7});
  const GenResult c = generate_network(yaml, path("c"), GenOptions{.seed = 8});
  ASSERT_EQ(a.files, b.files);
  // Every parameter file of the YAML plus input.npy and images.npy.
  EXPECT_EQ(a.files.size(), 25u);
  int differing = 0;
  for (const std::string& f : a.files) {
    SCOPED_TRACE(f);
    const std::string bytes = slurp(dir_ / "a" / f);
    EXPECT_GT(bytes.size(), 64u);
    EXPECT_EQ(bytes, slurp(dir_ / "b" / f));
    differing += bytes != slurp(dir_ / "c" / f);
  }
  // Another seed changes every weight, bias and image file (M and S may agree).
  EXPECT_GE(differing, 2 * 5 + 2);
  EXPECT_EQ(slurp(dir_ / "a" / "input.npy").size(), slurp(dir_ / "c" / "input.npy").size());
}

TEST_F(Gen, WrittenFilesReloadAndRun) {
  const GenResult r = generate_network(kExamples + "cifar10_quick.yaml", path("w"), {});
  const Network net = load_network(kExamples + "cifar10_quick.yaml", {path("w"), true});
  const Tensor<int8_t> input = load_npy<int8_t>(path("w/input.npy"));
  ASSERT_EQ(input.shape(), (Shape{3, 32, 32}));
  const Tensor<int8_t> images = load_npy<int8_t>(path("w/images.npy"));
  ASSERT_EQ(images.shape(), (Shape{4, 3, 32, 32}));
  EXPECT_TRUE(std::equal(input.values().begin(), input.values().end(), images.values().begin()));
  EXPECT_EQ(images, r.images);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    EXPECT_EQ(net.layers[i].weights, r.network.layers[i].weights);
    EXPECT_EQ(net.layers[i].requant.multiplier, r.network.layers[i].requant.multiplier);
  }
  const Tensor<int8_t> y = run_network(net, input);
  EXPECT_EQ(y.shape(), (Shape{10, 1, 1}));
}

TEST_F(Gen, CalibrationMapsEachChannelsLargestAccToTheTarget) {
  GenOptions o;
  o.seed = 3;
  const GenResult r = generate_network(kExamples + "cifar10_quick.yaml", path("cal"), o);
  const Network& net = r.network;
  const int64_t n = r.images.dim(0);
  const int64_t size = shape_elements(net.input_shape);
  std::vector<Tensor<int8_t>> acts;
  for (int64_t i = 0; i < n; ++i) {
    acts.emplace_back(net.input_shape,
                      std::vector<int8_t>(r.images.values().begin() + i * size,
                                          r.images.values().begin() + (i + 1) * size));
  }
  for (size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& l = net.layers[li];
    SCOPED_TRACE(l.name);
    if (l.has_weights()) {
      // Recompute: the largest |rshift_round(acc * M, S)| per channel over the
      // calibration images must be the target (100) up to rounding.
      std::vector<int64_t> peak(static_cast<size_t>(l.out_channels), 0);
      for (const Tensor<int8_t>& a : acts) {
        const Tensor<int32_t> acc = layer_accumulators(l, a);
        const int64_t plane = acc.dim(1) * acc.dim(2);
        for (int64_t i = 0; i < acc.size(); ++i) {
          const int64_t ch = i / plane;
          const int64_t v =
              rshift_round(int64_t{acc[i]} * l.requant.multiplier[ch], l.requant.shift[ch]);
          peak[ch] = std::max(peak[ch], std::abs(v));
        }
      }
      for (int64_t ch = 0; ch < l.out_channels; ++ch) {
        EXPECT_GE(peak[ch], 99) << "channel " << ch;
        EXPECT_LE(peak[ch], 101) << "channel " << ch;
        // The most precise multiplier: as large as 16 bits allow.
        EXPECT_GE(l.requant.multiplier[ch], 32768) << "channel " << ch;
      }
    }
    for (Tensor<int8_t>& a : acts) a = run_layer(l, a);
    // Not saturated, not dead: some non-zero outputs, none at the int8 limits.
    EXPECT_LT(r.layers[li].zero_fraction, 0.9);
    EXPECT_EQ(r.layers[li].limit_fraction, 0.0);
  }
}

TEST_F(Gen, SparsityIsExactAndWeightsStayInRange) {
  GenOptions o;
  o.seed = 11;
  o.sparsity = 0.3;
  o.weight_min = -5;
  o.weight_max = 9;
  const GenResult r = generate_network(kExamples + "lenet5.yaml", path("sp"), o);
  for (const Layer& l : r.network.layers) {
    if (!l.has_weights()) continue;
    SCOPED_TRACE(l.name);
    int64_t zeros = 0;
    int lo = 127, hi = -128;
    for (int8_t w : l.weights.values()) {
      zeros += w == 0;
      lo = std::min<int>(lo, w);
      hi = std::max<int>(hi, w);
    }
    EXPECT_EQ(zeros, std::llround(0.3 * static_cast<double>(l.weights.size())));
    EXPECT_EQ(lo, -5);
    EXPECT_EQ(hi, 9);
  }
  // Without sparsity no weight is zero.
  o.sparsity = 0.0;
  const GenResult dense = generate_network(kExamples + "lenet5.yaml", path("dense"), o);
  for (const Layer& l : dense.network.layers) {
    for (int8_t w : l.weights.values()) ASSERT_NE(w, 0) << l.name;
  }
  // Fully sparse: every weight zero, the network still validates and runs.
  o.sparsity = 1.0;
  const GenResult empty = generate_network(kExamples + "lenet5.yaml", path("empty"), o);
  for (const Layer& l : empty.network.layers) {
    for (int8_t w : l.weights.values()) ASSERT_EQ(w, 0) << l.name;
  }
  EXPECT_NO_THROW(run_network(empty.network, load_npy<int8_t>(path("empty/input.npy"))));
}

TEST_F(Gen, ImageCountDoesNotChangeWeights) {
  const Tensor<int8_t> two = random_images({3, 4, 4}, 2, 5);
  const Tensor<int8_t> five = random_images({3, 4, 4}, 5, 5);
  EXPECT_TRUE(std::equal(two.values().begin(), two.values().end(), five.values().begin()));
  GenOptions o;
  o.images = 1;
  generate_network(kExamples + "lenet5.yaml", path("one"), o);
  o.images = 3;
  generate_network(kExamples + "lenet5.yaml", path("three"), o);
  EXPECT_EQ(slurp(dir_ / "one" / "c1_weight.npy"), slurp(dir_ / "three" / "c1_weight.npy"));
  EXPECT_EQ(slurp(dir_ / "one" / "f7_bias.npy"), slurp(dir_ / "three" / "f7_bias.npy"));
  EXPECT_EQ(load_npy<int8_t>(path("three/images.npy")).shape(), (Shape{3, 1, 32, 32}));
}

TEST_F(Gen, InlineRequantIsKept) {
  const std::string yaml = write("net.yaml",
                                 "name: inl\ninput: [2, 8, 8]\nlayers:\n"
                                 "  - {name: a, type: conv, out_channels: 3, kernel: 3,\n"
                                 "     requant: {multiplier: [7, 8, 9], shift: 3}}\n"
                                 "  - {name: b, type: conv, out_channels: 2, kernel: 3,\n"
                                 "     requant: {multiplier: 20000, shift: b_s.npy}}\n"
                                 "  - {name: c, type: fc, out_features: 4,\n"
                                 "     requant: {multiplier: c_m.npy, shift: 20}}\n");
  const GenResult r = generate_network(yaml, path("out"), {});
  const Network& net = r.network;
  EXPECT_EQ(net.layers[0].requant.multiplier, (std::vector<uint16_t>{7, 8, 9}));
  EXPECT_EQ(net.layers[0].requant.shift, (std::vector<uint8_t>{3, 3, 3}));
  EXPECT_EQ(net.layers[1].requant.multiplier, (std::vector<uint16_t>{20000, 20000}));
  EXPECT_EQ(net.layers[2].requant.shift, (std::vector<uint8_t>(4, 20)));
  // Only files the YAML names are written: no a_mult.npy, b_mult.npy, c_shift.npy.
  EXPECT_FALSE(fs::exists(dir_ / "out" / "a_mult.npy"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "b_mult.npy"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "c_shift.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "b_s.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "c_m.npy"));
  // b: the shift was chosen for the fixed M; c: M for the fixed S. Both land
  // each channel's peak near 100.
  for (size_t li : {size_t{1}, size_t{2}}) {
    const LayerCalibration& cal = r.layers[li];
    const Layer& l = net.layers[li];
    for (int64_t ch = 0; ch < l.out_channels; ++ch) {
      const double peak =
          std::ldexp(static_cast<double>(cal.acc_max_abs[ch]) * l.requant.multiplier[ch],
                     -l.requant.shift[ch]);
      EXPECT_GT(peak, 50.0) << l.name << " channel " << ch;
      EXPECT_LT(peak, 200.0) << l.name << " channel " << ch;
    }
  }
}

TEST_F(Gen, BadOptionsAndNetworksAreErrors) {
  const std::string yaml = kExamples + "lenet5.yaml";
  GenOptions o;
  o.sparsity = 1.5;
  expect_error([&] { generate_network(yaml, path("x"), o); }, "", 0, "",
               {"sparsity 1.5 must be in 0..1"});
  o = {};
  o.weight_min = 0;
  o.weight_max = 0;
  expect_error([&] { generate_network(yaml, path("x"), o); }, "", 0, "",
               {"weight range [0, 0] holds no non-zero weight"});
  o = {};
  o.weight_min = 5;
  o.weight_max = -5;
  expect_error([&] { generate_network(yaml, path("x"), o); }, "", 0, "", {"weight range [5, -5]"});
  o = {};
  o.images = 0;
  expect_error([&] { generate_network(yaml, path("x"), o); }, "", 0, "",
               {"calibration images 0 must be in 1..1024"});

  // Two layers naming one file: gen cannot write both.
  const std::string shared =
      write("shared.yaml",
            "name: s\ninput: [1, 4, 4]\nlayers:\n"
            "  - {name: a, type: conv, out_channels: 1, kernel: 1, bias: b_bias.npy}\n"
            "  - {name: b, type: conv, out_channels: 1, kernel: 1}\n");
  expect_error([&] { generate_network(shared, path("x"), {}); }, shared, 5, "b",
               {"file 'b_bias.npy' is also used by layer 'a'"});
  // A fan-in so large that full-range int8 weights could overflow int32.
  const std::string big = write("big.yaml",
                                "name: big\ninput: [8, 256, 256]\nlayers:\n"
                                "  - {name: f, type: fc, out_features: 1}\n");
  expect_error([&] { generate_network(big, path("x"), {}); }, big, 4, "f",
               {"output channel 0 can overflow the int32 accumulator even with zero bias"});
  // Structure errors come from the reader, with their line.
  const std::string bad =
      write("bad.yaml", "name: bad\ninput: [1, 4, 4]\nlayers:\n  - {name: a}\n");
  expect_error([&] { generate_network(bad, path("x"), {}); }, bad, 4, "a",
               {"missing required key 'type'"});
}

// A graph with a depthwise convolution, an add and a global average pool:
// generated, written, read back, run by the golden model and compiled (the
// global pool over a map that is not square).
TEST_F(Gen, GraphNetworksGenerateAndRunOnTheGoldenModel) {
  const std::string yaml =
      write("g.yaml",
            "name: g\ninput: [8, 9, 7]\nlayers:\n"
            "  - {name: c1, type: conv, out_channels: 8, kernel: 3, pad: 1, activation: relu}\n"
            "  - {name: d1, type: depthwise, kernel: 3, stride: 1, pad: [1, 1, 1, 1]}\n"
            "  - {name: a1, type: add, inputs: [d1, c1], activation: relu}\n"
            "  - {name: g1, type: global_avgpool}\n");
  const GenResult r = generate_network(yaml, path("w"), GenOptions{.seed = 3});
  EXPECT_TRUE(fs::exists(dir_ / "w" / "a1_mult_a.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "w" / "a1_mult_b.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "w" / "d1_weight.npy"));
  const Network net = load_network(yaml, {path("w"), true});
  const Layer& a1 = net.layers[2];
  EXPECT_EQ(a1.requant.multiplier, a1.multiplier_b);  // calibrated Ma = Mb
  const Tensor<int8_t> input = load_npy<int8_t>(path("w/input.npy"));
  const Tensor<int8_t> y = run_network(net, input);
  EXPECT_EQ(y.shape(), (Shape{8, 1, 1}));
  // The add's calibration keeps its outputs in range without saturating them all.
  const LayerCalibration& cal = r.layers[2];
  EXPECT_GT(cal.out_max, 20);
  EXPECT_LT(cal.limit_fraction, 0.5);
  const Program prog = compile(net, HwTarget::defaults());
  EXPECT_EQ(prog.ops.size(), 4u);
}

}  // namespace
}  // namespace strata
