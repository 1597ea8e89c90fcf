// SPDX-License-Identifier: Apache-2.0
// Network description reader: the examples load with the right shapes and MAC
// counts, and every malformed description gives a strata::Error that names
// the file, the line, the layer and the problem.
#include "strata/network.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "strata/error.hpp"
#include "strata/npy.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

using test::expect_error;
namespace fs = std::filesystem;

const std::string kExamples = std::string(STRATA_SOURCE_DIR) + "/examples/";

// MACs of a conv layer counted tap by tap: a tap is a MAC when it lands inside
// the image (written independently of Layer::macs, which multiplies per-axis
// tap counts).
int64_t brute_force_conv_macs(const Layer& l) {
  const int64_t h = l.in_shape[1], w = l.in_shape[2];
  int64_t taps = 0;
  for (int64_t y = 0; y < l.out_shape[1]; ++y) {
    for (int64_t x = 0; x < l.out_shape[2]; ++x) {
      for (int ky = 0; ky < l.conv.kernel; ++ky) {
        for (int kx = 0; kx < l.conv.kernel; ++kx) {
          const int64_t iy = y * l.conv.stride - l.conv.pad + ky;
          const int64_t ix = x * l.conv.stride - l.conv.pad + kx;
          if (iy >= 0 && iy < h && ix >= 0 && ix < w) ++taps;
        }
      }
    }
  }
  return taps * l.in_shape[0] * l.out_channels;
}

struct Expected {
  const char* name;
  LayerType type;
  Shape out;
};

void expect_layers(const Network& net, const std::vector<Expected>& want) {
  ASSERT_EQ(net.layers.size(), want.size());
  Shape in = net.input_shape;
  for (size_t i = 0; i < want.size(); ++i) {
    const Layer& l = net.layers[i];
    SCOPED_TRACE(l.name);
    EXPECT_EQ(l.name, want[i].name);
    EXPECT_EQ(l.type, want[i].type);
    EXPECT_EQ(l.in_shape, in);
    EXPECT_EQ(l.out_shape, want[i].out);
    in = l.out_shape;
  }
  EXPECT_EQ(net.output_shape(), want.back().out);
}

TEST(NetworkExamples, Cifar10QuickShapesAndMacs) {
  const Network net = load_network(kExamples + "cifar10_quick.yaml", {"", false});
  EXPECT_EQ(net.name, "cifar10_quick");
  EXPECT_EQ(net.input_shape, (Shape{3, 32, 32}));
  // Caffe's ceil-mode pooling: 32 -> 16 -> 8 -> 4.
  expect_layers(net, {{"conv1", LayerType::kConv, {32, 32, 32}},
                      {"pool1", LayerType::kMaxPool, {32, 16, 16}},
                      {"relu1", LayerType::kClamp, {32, 16, 16}},
                      {"conv2", LayerType::kConv, {32, 16, 16}},
                      {"pool2", LayerType::kAvgPool, {32, 8, 8}},
                      {"conv3", LayerType::kConv, {64, 8, 8}},
                      {"pool3", LayerType::kAvgPool, {64, 4, 4}},
                      {"ip1", LayerType::kFc, {64, 1, 1}},
                      {"ip2", LayerType::kFc, {10, 1, 1}}});
  EXPECT_TRUE(net.layers[1].pool.ceil_mode);
  EXPECT_EQ(net.layers[2].lo, 0);  // standalone relu
  EXPECT_EQ(net.layers[2].hi, 127);
  EXPECT_EQ(net.layers[0].requant.lo, -128);  // conv1: no activation
  EXPECT_EQ(net.layers[3].requant.lo, 0);     // conv2: relu

  int64_t total = 0;
  for (const Layer& l : net.layers) {
    SCOPED_TRACE(l.name);
    int64_t want = 0;
    if (l.type == LayerType::kConv) want = brute_force_conv_macs(l);
    if (l.type == LayerType::kFc) want = l.out_channels * shape_elements(l.in_shape);
    EXPECT_EQ(l.macs(), want);
    total += want;
  }
  EXPECT_EQ(net.macs(), total);
  // conv1 by hand: along each axis, output columns 0,1,30,31 see 3,4,4,3 of
  // the 5 taps and the other 28 see all 5: 154 taps; 154^2 * 3 * 32.
  EXPECT_EQ(net.layers[0].macs(), 154 * 154 * 3 * 32);
  EXPECT_EQ(net.layers[7].macs(), 64 * 64 * 4 * 4);  // ip1: 1024 inputs
  EXPECT_EQ(net.layers[8].macs(), 10 * 64);
  // Parameter bytes: int8 weights + 4 (bias) + 2 (M) + 1 (S) per channel.
  EXPECT_EQ(net.layers[0].param_bytes(), 32 * 3 * 5 * 5 + 32 * 7);
  EXPECT_EQ(net.layers[7].param_bytes(), 64 * 1024 + 64 * 7);
  EXPECT_EQ(net.layers[1].param_bytes(), 0);
}

TEST(NetworkExamples, Lenet5Shapes) {
  const Network net = load_network(kExamples + "lenet5.yaml", {"", false});
  expect_layers(net, {{"c1", LayerType::kConv, {6, 28, 28}},
                      {"s2", LayerType::kMaxPool, {6, 14, 14}},
                      {"c3", LayerType::kConv, {16, 10, 10}},
                      {"s4", LayerType::kMaxPool, {16, 5, 5}},
                      {"f5", LayerType::kFc, {120, 1, 1}},
                      {"f6", LayerType::kFc, {84, 1, 1}},
                      {"f7", LayerType::kFc, {10, 1, 1}}});
  EXPECT_EQ(net.layers[1].pool.stride, 2);  // stride defaults to the kernel
  EXPECT_EQ(net.layers[4].macs(), 120 * 400);
  // No padding: every tap is inside the image.
  EXPECT_EQ(net.layers[0].macs(), 6 * 28 * 28 * 25);
}

TEST(NetworkExamples, StridedNetShapesAndFiles) {
  const Network net = load_network(kExamples + "strided_net.yaml", {"", false});
  expect_layers(net, {{"conv1", LayerType::kConv, {16, 16, 16}},
                      {"pw1", LayerType::kConv, {32, 16, 16}},
                      {"conv2", LayerType::kConv, {32, 8, 8}},
                      {"pw2", LayerType::kConv, {64, 8, 8}},
                      {"conv3", LayerType::kConv, {64, 4, 4}},
                      {"gap", LayerType::kAvgPool, {64, 1, 1}},
                      {"flat", LayerType::kFlatten, {64, 1, 1}},
                      {"fc", LayerType::kFc, {10, 1, 1}}});
  for (const Layer& l : net.layers) {
    if (l.type == LayerType::kConv) EXPECT_EQ(l.macs(), brute_force_conv_macs(l)) << l.name;
  }
  EXPECT_EQ(net.layers[0].conv.stride, 2);
  EXPECT_EQ(net.layers[1].files.weights, "pointwise/pw1_weight.npy");
  EXPECT_EQ(net.layers[1].files.multiplier, "pw1_mult.npy");
  // pw2: inline multiplier for every channel, shifts from a file.
  EXPECT_EQ(net.layers[3].files.multiplier, "");
  EXPECT_EQ(net.layers[3].requant.multiplier, std::vector<uint16_t>(64, 32768));
  EXPECT_EQ(net.layers[3].files.shift, "pw2_shift.npy");
  EXPECT_EQ(net.layers[3].requant.lo, 0);
  EXPECT_EQ(net.layers[3].requant.hi, 96);
  EXPECT_EQ(net.weights_dir, std::string(STRATA_SOURCE_DIR) + "/examples");
}

// ---- a small valid network with parameters ---------------------------------

class NetworkLoad : public test::TempDirTest {
 protected:
  // conv c1 (1 -> 2 channels, 3x3) on [1, 4, 4], fc f1 (fc_in -> 3).
  void write_params(const std::string& sub = "", int64_t fc_in = 2) {
    fs::create_directories(dir_ / sub);
    save_npy(path(sub + "c1_weight.npy"), Tensor<int8_t>({2, 1, 3, 3}, 1));
    save_npy(path(sub + "c1_bias.npy"), Tensor<int32_t>({2}, std::vector<int32_t>{5, -5}));
    save_npy(path(sub + "f1_w.npy"), Tensor<int8_t>({3, fc_in}, -2));
    save_npy(path(sub + "f1_bias.npy"), Tensor<int32_t>({3}, 0));
    save_npy(path(sub + "f1_shift.npy"), Tensor<uint8_t>({3}, std::vector<uint8_t>{0, 7, 47}));
  }
  std::string write_net(const std::string& weights_key = "") {
    return write("net.yaml",
                 "name: small\n"
                 "input: [1, 4, 4]\n" +
                     weights_key +
                     "layers:\n"
                     "  - name: c1\n"
                     "    type: conv\n"
                     "    out_channels: 2\n"
                     "    kernel: 3\n"
                     "    requant: {multiplier: [100, 200], shift: 4}\n"
                     "    activation: {clamp: [-10, 90]}\n"
                     "  - {name: p1, type: maxpool, kernel: 2, ceil_mode: true}\n"
                     "  - {name: f1, type: fc, out_features: 3, weights: f1_w.npy,\n"
                     "     requant: {multiplier: 7, shift: f1_shift.npy}}\n");
  }
};

TEST_F(NetworkLoad, ParsesStructureDefaultsAndParameters) {
  write_params();
  const std::string yaml = write_net();
  const Network net = load_network(yaml);
  ASSERT_EQ(net.layers.size(), 3u);
  const Layer& c1 = net.layers[0];
  EXPECT_EQ(c1.line, 4);
  EXPECT_EQ(c1.conv.stride, 1);
  EXPECT_EQ(c1.conv.pad, 0);
  EXPECT_EQ(c1.out_shape, (Shape{2, 2, 2}));
  EXPECT_EQ(c1.requant.multiplier, (std::vector<uint16_t>{100, 200}));
  EXPECT_EQ(c1.requant.shift, (std::vector<uint8_t>{4, 4}));
  EXPECT_EQ(c1.requant.lo, -10);
  EXPECT_EQ(c1.requant.hi, 90);
  EXPECT_EQ(c1.files.weights, "c1_weight.npy");
  EXPECT_EQ(c1.files.multiplier, "");
  EXPECT_EQ(c1.bias.values()[1], -5);
  const Layer& p1 = net.layers[1];
  EXPECT_EQ(p1.line, 10);
  EXPECT_EQ(p1.pool.stride, 2);
  EXPECT_EQ(p1.out_shape, (Shape{2, 1, 1}));
  const Layer& f1 = net.layers[2];
  EXPECT_EQ(f1.in_shape, (Shape{2, 1, 1}));
  EXPECT_EQ(f1.weights.shape(), (Shape{3, 2}));
  EXPECT_EQ(f1.requant.multiplier, (std::vector<uint16_t>{7, 7, 7}));
  EXPECT_EQ(f1.requant.shift, (std::vector<uint8_t>{0, 7, 47}));
  EXPECT_EQ(net.weights_dir, dir_.string());
}

TEST_F(NetworkLoad, FcWeightsAreFlattenedInput) {
  // fc after [2][2][2]: weights are [Cout][8].
  write_params("", 8);
  write("net.yaml",
        "name: flat\ninput: [2, 2, 2]\nlayers:\n"
        "  - {name: f1, type: fc, out_features: 3, weights: f1_w.npy,\n"
        "     requant: {multiplier: 7, shift: f1_shift.npy}}\n");
  const Network net = load_network(path("net.yaml"));
  EXPECT_EQ(net.layers[0].weights.shape(), (Shape{3, 8}));
  EXPECT_EQ(net.layers[0].macs(), 24);
  EXPECT_EQ(net.layers[0].param_bytes(), 24 + 3 * 7);
}

TEST_F(NetworkLoad, WeightsDirectoryResolution) {
  // YAML `weights:` is relative to the YAML file; LoadOptions overrides it.
  write_params("w/");
  const std::string yaml = write_net("weights: w\n");
  EXPECT_EQ(load_network(yaml).weights_dir, (dir_ / "w").string());
  write_params("other/");
  EXPECT_EQ(load_network(yaml, {path("other"), true}).weights_dir, path("other"));
  // Without parameters the structure still loads.
  fs::remove_all(dir_ / "w");
  EXPECT_NO_THROW(load_network(yaml, {"", false}));
  expect_error([&] { load_network(yaml); }, yaml, 5, "c1",
               {"weights file '" + (dir_ / "w" / "c1_weight.npy").string() + "' not found"});
}

// ---- malformed descriptions ----------------------------------------------------

class NetworkErrors : public test::TempDirTest {
 protected:
  // Writes a network whose layers start at line 4.
  std::string net(const std::string& layers, const std::string& input = "[1, 8, 8]") {
    yaml_ = write("bad.yaml", "name: bad\ninput: " + input + "\nlayers:\n" + layers);
    return yaml_;
  }
  void expect(const std::string& layers, int line, const std::string& layer,
              const std::vector<std::string>& parts, bool load_weights = false) {
    net(layers);
    expect_error([&] { load_network(yaml_, {"", load_weights}); }, yaml_, line, layer, parts);
  }
  std::string yaml_;
};

TEST_F(NetworkErrors, YamlSyntaxErrorReportsLine) {
  const std::string yaml = write("bad.yaml",
                                 "name: bad\n"
                                 "input: [1, 8, 8]\n"
                                 "layers:\n"
                                 "  - {name: c1, type: conv, out_channels: 4, kernel: 3}\n"
                                 "  - {name: p1, type: maxpool, kernel: 2\n"
                                 "  - {name: p2, type: maxpool, kernel: 2}\n");
  try {
    load_network(yaml);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, yaml);
    EXPECT_GE(e.where().line, 5) << e.what();  // where the parser notices it
    EXPECT_LE(e.where().line, 7) << e.what();
    EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(yaml + ":" + std::to_string(e.where().line) + ": ", 0),
              0u);
  }
  // A tab in the indentation: the line of the tab.
  const std::string tab =
      write("tab.yaml", "name: bad\ninput: [1, 8, 8]\nlayers:\n\t- {name: x}\n");
  expect_error([&] { load_network(tab); }, tab, 4, "", {"YAML syntax error"});
}

TEST_F(NetworkErrors, MissingFileAndEmptyFile) {
  const std::string missing = path("nope.yaml");
  expect_error([&] { load_network(missing); }, missing, 0, "", {"no such file"});
  const std::string empty = write("empty.yaml", "");
  expect_error([&] { load_network(empty); }, empty, 0, "", {"top level must be a mapping"});
}

TEST_F(NetworkErrors, TopLevelKeys) {
  const std::string a = write("a.yaml", "name: a\nnmae: b\ninput: [1, 8, 8]\nlayers: []\n");
  expect_error([&] { load_network(a); }, a, 2, "", {"unknown key 'nmae'", "the network"});
  const std::string b = write("b.yaml", "name: b\ninput: [1, 8, 8]\n");
  expect_error([&] { load_network(b); }, b, 1, "", {"missing required key 'layers'"});
  const std::string c = write("c.yaml", "name: c\ninput: [1, 8, 8]\nlayers: []\n");
  expect_error([&] { load_network(c); }, c, 3, "", {"'layers' must be a non-empty list"});
  const std::string d =
      write("d.yaml", "name: d\ninput: [8, 8]\nlayers: [{name: r, type: relu}]\n");
  expect_error([&] { load_network(d); }, d, 2, "", {"'input' must be a list [C, H, W]"});
  const std::string e =
      write("e.yaml", "name: e\ninput: [0, 8, 8]\nlayers: [{name: r, type: relu}]\n");
  expect_error([&] { load_network(e); }, e, 2, "", {"'input' is 0, must be in 1..65535"});
  const std::string f =
      write("f.yaml", "name: f g\ninput: [1, 8, 8]\nlayers: [{name: r, type: relu}]\n");
  expect_error([&] { load_network(f); }, f, 1, "", {"network name 'f g'"});
  const std::string g =
      write("g.yaml", "name: g\ninput: [65535, 65535, 1]\nlayers: [{name: r, type: relu}]\n");
  expect_error([&] { load_network(g); }, g, 2, "", {"input [65535, 65535, 1] is too large"});
}

TEST_F(NetworkErrors, UnknownKey) {
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, strdie: 2}\n", 4, "c1",
         {"unknown key 'strdie' in conv layer", "stride"});
}

TEST_F(NetworkErrors, DuplicateKey) {
  expect("  - name: c1\n    type: conv\n    out_channels: 4\n    kernel: 3\n    kernel: 5\n", 8,
         "c1", {"key 'kernel' given twice", "first at line 7"});
}

TEST_F(NetworkErrors, UnknownType) {
  expect(
      "  - {name: c1, type: conv, out_channels: 4, kernel: 3}\n"
      "  - {name: d1, type: deconv}\n",
      5, "d1", {"unknown layer type 'deconv'"});
}

TEST_F(NetworkErrors, MissingField) {
  expect("  - name: c1\n    type: conv\n    out_channels: 4\n", 4, "c1",
         {"missing required key 'kernel' in conv layer"});
  expect("  - {type: relu}\n", 4, "", {"missing required key 'name' in layer #1"});
  expect("  - {name: c1, type: clamp, lo: 0}\n", 4, "c1", {"missing required key 'hi'"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, requant: {shift: 3}}\n", 4, "c1",
         {"missing required key 'multiplier' in requant"});
}

TEST_F(NetworkErrors, WrongType) {
  expect("  - name: c1\n    type: conv\n    out_channels: 4\n    kernel: three\n", 7, "c1",
         {"'kernel' must be an integer, got 'three'"});
  expect("  - {name: c1, type: conv, out_channels: \"4\", kernel: 3}\n", 4, "c1",
         {"'out_channels' must be an integer, got the string '4'"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 2.5}\n", 4, "c1",
         {"'kernel' must be an integer, got '2.5'"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: [3, 3]}\n", 4, "c1",
         {"'kernel' must be an integer, got a list"});
  expect("  - {name: p1, type: maxpool, kernel: 2, ceil_mode: maybe}\n", 4, "p1",
         {"'ceil_mode' must be true or false, got 'maybe'"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, activation: gelu}\n", 4, "c1",
         {"unknown activation 'gelu'"});
  expect(
      "  - {name: c1, type: conv, out_channels: 4, kernel: 3, requant: {multiplier: abc, "
      "shift: 0}}\n",
      4, "c1", {"'multiplier' must be an integer 0..65535, a list of 4 integers or a .npy file"});
  expect("  - {name: [c1], type: relu}\n", 4, "", {"'name' must be text, got a list"});
}

TEST_F(NetworkErrors, OutOfRangeValues) {
  const std::string conv = "  - {name: c1, type: conv, out_channels: 4, ";
  expect(conv + "kernel: 12}\n", 4, "c1", {"'kernel' is 12, must be in 1..11"});
  expect(conv + "kernel: 0}\n", 4, "c1", {"'kernel' is 0, must be in 1..11"});
  expect(conv + "kernel: 3, stride: 9}\n", 4, "c1", {"'stride' is 9, must be in 1..8"});
  expect(conv + "kernel: 3, stride: 0}\n", 4, "c1", {"'stride' is 0, must be in 1..8"});
  expect(conv + "kernel: 3, pad: 3}\n", 4, "c1", {"'pad' is 3, must be in 0..2"});
  expect(conv + "kernel: 3, pad: -1}\n", 4, "c1", {"'pad' is -1, must be in 0..2"});
  expect("  - {name: c1, type: conv, out_channels: 0, kernel: 3}\n", 4, "c1",
         {"'out_channels' is 0, must be in 1..65535"});
  expect("  - {name: f1, type: fc, out_features: 0}\n", 4, "f1",
         {"'out_features' is 0, must be in 1..65535"});
  expect(conv + "kernel: 3, requant: {multiplier: 1, shift: 48}}\n", 4, "c1",
         {"'shift' is 48, must be in 0..47"});
  expect(conv + "kernel: 3, requant: {multiplier: 65536, shift: 4}}\n", 4, "c1",
         {"'multiplier' is 65536, must be in 0..65535"});
  expect(conv + "kernel: 3, requant: {multiplier: [1, 2, -1, 4], shift: 4}}\n", 4, "c1",
         {"'multiplier' is -1, must be in 0..65535"});
  expect(conv + "kernel: 3, requant: {multiplier: [1, 2, 3], shift: 4}}\n", 4, "c1",
         {"'multiplier' lists 3 values, the layer has 4 output channels"});
  expect(conv + "kernel: 3, activation: {clamp: [-129, 0]}}\n", 4, "c1",
         {"'clamp lo' is -129, must be in -128..127"});
  expect(conv + "kernel: 3, activation: {clamp: [0, 128]}}\n", 4, "c1",
         {"'clamp hi' is 128, must be in -128..127"});
  expect(conv + "kernel: 3, activation: {clamp: [10, 5]}}\n", 4, "c1",
         {"activation clamp [10, 5] has lo > hi"});
  expect("  - {name: k1, type: clamp, lo: 5, hi: 4}\n", 4, "k1",
         {"clamp lo 5 is greater than hi 4"});
  expect("  - {name: k1, type: clamp, lo: -200, hi: 4}\n", 4, "k1", {"'lo' is -200"});
  expect("  - {name: p1, type: avgpool, kernel: 2, pad: 2}\n", 4, "p1",
         {"'pad' is 2, must be in 0..1"});
}

TEST_F(NetworkErrors, DuplicateLayerNames) {
  expect(
      "  - {name: c1, type: conv, out_channels: 4, kernel: 3}\n"
      "  - {name: r1, type: relu}\n"
      "  - {name: c1, type: relu}\n",
      6, "c1", {"duplicate layer name 'c1' (first defined at line 4)"});
  expect("  - {name: 'c 1', type: relu}\n", 4, "", {"layer name 'c 1' must match"});
}

TEST_F(NetworkErrors, ImpossibleShapes) {
  // 8x8, pad 1: the padded input is 10, the kernel 11.
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 11, pad: 1}\n", 4, "c1",
         {"impossible shape for input [1, 8, 8]", "kernel 11 larger than the padded input 10"});
  // After two poolings the map is 2x2: no 3x3 pooling window fits.
  expect(
      "  - {name: p1, type: maxpool, kernel: 2}\n"
      "  - {name: p2, type: maxpool, kernel: 2}\n"
      "  - {name: p3, type: avgpool, kernel: 3}\n",
      6, "p3", {"impossible shape for input [1, 2, 2]", "pooling kernel 3 larger"});
}

// ---- graphs, depthwise, add, global average pool, padding per side ---------------

TEST_F(NetworkErrors, GraphsParseWithInputsAndDefaults) {
  net("  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: [0, 1, 2, 1]}\n"
      "  - {name: d1, type: depthwise, kernel: 3, stride: 2, pad: 1, activation: relu}\n"
      "  - {name: c2, type: conv, out_channels: 4, kernel: 1, stride: 2, inputs: c1}\n"
      "  - {name: a1, type: add, inputs: [d1, c2], activation: relu,\n"
      "     requant: {multiplier_a: 3, multiplier_b: [1, 2, 3, 4], shift: 2}}\n"
      "  - {name: g1, type: global_avgpool}\n",
      "[2, 9, 8]");
  const Network n = load_network(yaml_, {"", false});
  ASSERT_EQ(n.layers.size(), 5u);
  EXPECT_FALSE(n.is_chain());
  const Layer& c1 = n.layers[0];
  EXPECT_EQ(c1.inputs, (std::vector<int>{kNetworkInput}));
  EXPECT_FALSE(c1.symmetric_pads());
  EXPECT_EQ(c1.pads.bottom, 2);
  EXPECT_EQ(c1.out_shape, (Shape{4, 9, 8}));  // 9 + 0 + 2 - 3 + 1 rows, 8 + 1 + 1 - 3 + 1 columns
  const Layer& d1 = n.layers[1];
  EXPECT_EQ(d1.type, LayerType::kDepthwise);
  EXPECT_EQ(d1.out_channels, 4);
  EXPECT_EQ(d1.out_shape, (Shape{4, 5, 4}));
  EXPECT_EQ(d1.files.weights, "d1_weight.npy");
  EXPECT_EQ(d1.conv_window().groups, 4);
  EXPECT_EQ(n.layers[2].inputs, (std::vector<int>{0}));
  const Layer& a1 = n.layers[3];
  EXPECT_EQ(a1.inputs, (std::vector<int>{1, 2}));
  EXPECT_EQ(a1.requant.multiplier, (std::vector<uint16_t>{3, 3, 3, 3}));
  EXPECT_EQ(a1.multiplier_b, (std::vector<uint16_t>{1, 2, 3, 4}));
  EXPECT_EQ(a1.requant.lo, 0);
  EXPECT_EQ(a1.param_bytes(), 4 * 5);
  EXPECT_EQ(n.layers[4].out_shape, (Shape{4, 1, 1}));
  // Depthwise MACs: one input channel per output, in-image taps only.
  EXPECT_EQ(d1.macs(), 4 * (2 + 3 + 3 + 3 + 2) * (2 + 3 + 3 + 3));
}

TEST_F(NetworkErrors, GraphMistakesNameTheLayerAndLine) {
  expect(
      "  - {name: c1, type: conv, out_channels: 4, kernel: 1, inputs: c2}\n"
      "  - {name: c2, type: relu}\n",
      4, "c1", {"'inputs' names 'c2', which is not an earlier layer"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 1, inputs: c1}\n", 4, "c1",
         {"'inputs' names 'c1', which is not an earlier layer"});
  expect(
      "  - {name: r1, type: relu}\n"
      "  - {name: r2, type: relu, inputs: [r1, input]}\n",
      5, "r2", {"a relu layer reads one input, 'inputs' names 2"});
  expect(
      "  - {name: r1, type: relu}\n"
      "  - {name: a1, type: add, inputs: r1}\n",
      5, "a1", {"an add layer needs 'inputs' naming its two operands"});
  expect(
      "  - {name: p1, type: maxpool, kernel: 2}\n"
      "  - {name: a1, type: add, inputs: [p1, input]}\n",
      5, "a1", {"add operands differ in shape: [1, 4, 4] and [1, 8, 8]"});
  expect(
      "  - {name: r1, type: relu}\n"
      "  - {name: r2, type: relu, inputs: input}\n",
      4, "r1", {"output is never read"});
  expect("  - {name: input, type: relu}\n", 4, "", {"not be 'input'"});
  expect("  - {name: r1, type: relu, inputs: [input, input, input]}\n", 4, "r1",
         {"'inputs' must name one or two layers, got a list of 3"});
  expect("  - {name: r1, type: relu, inputs: []}\n", 4, "r1",
         {"'inputs' must name one or two layers, got a list of 0"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: [1, 1, 1]}\n", 4, "c1",
         {"'pad' must be an integer or a list [top, left, bottom, right]"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: [0, 0, 3, 0]}\n", 4, "c1",
         {"'pad' is 3, must be in 0..2"});
  expect("  - {name: d1, type: depthwise, out_channels: 4, kernel: 3}\n", 4, "d1",
         {"unknown key 'out_channels' in depthwise layer"});
  expect("  - {name: a1, type: add, inputs: [input, input], requant: {multiplier: 1, shift: 0}}\n",
         4, "a1", {"unknown key 'multiplier' in add requant"});
  expect("  - {name: g1, type: global_avgpool, kernel: 2}\n", 4, "g1",
         {"unknown key 'kernel' in global_avgpool layer"});
}

// `outputs:` (docs/network-format.md, "Outputs"): the layers whose maps the
// network returns, in order; an output may also be read by later layers.
TEST_F(NetworkErrors, OutputsParseInOrderWithScales) {
  const std::string layers =
      "layers:\n"
      "  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: 1}\n"
      "  - {name: h1, type: conv, out_channels: 2, kernel: 1}\n"
      "  - {name: p1, type: maxpool, kernel: 2, inputs: c1}\n"
      "  - {name: h2, type: conv, out_channels: 3, kernel: 1}\n";
  const std::string two = write("two.yaml",
                                "name: two\ninput: [1, 8, 8]\n"
                                "outputs: [h2, h1, c1]\n"
                                "scales: {input: 0.5, output: [0.1, 0.2, 0.3]}\n" +
                                    layers);
  const Network n = load_network(two, {"", false});
  EXPECT_EQ(n.outputs, (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(n.output_count(), 3u);
  EXPECT_EQ(n.output_name(1), "h1");
  EXPECT_EQ(n.output_shape(0), (Shape{3, 4, 4}));
  EXPECT_EQ(n.output_shape(2), (Shape{4, 8, 8}));  // c1: an output read by two layers
  EXPECT_EQ(n.output_scale(1), 0.2);
  EXPECT_EQ(n.output_index(0), 2);
  EXPECT_EQ(n.output_index(2), -1);
  // Without the key: the last layer, with a number as its scale.
  const std::string one = write("one.yaml",
                                "name: one\ninput: [1, 8, 8]\n"
                                "scales: {output: 0.25}\n"
                                "layers:\n"
                                "  - {name: r1, type: relu}\n");
  const Network m = load_network(one, {"", false});
  EXPECT_EQ(m.outputs, (std::vector<int>{0}));
  EXPECT_EQ(m.output_scale(0), 0.25);
  // One name without a list.
  const std::string single = write("single.yaml",
                                   "name: s\ninput: [1, 8, 8]\noutputs: r1\n"
                                   "layers:\n  - {name: r1, type: relu}\n");
  EXPECT_EQ(load_network(single, {"", false}).outputs, (std::vector<int>{0}));
}

TEST_F(NetworkErrors, OutputMistakesNameTheFileAndLine) {
  const std::string layers =
      "layers:\n"
      "  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: 1}\n"
      "  - {name: h1, type: conv, out_channels: 2, kernel: 1}\n"
      "  - {name: h2, type: conv, out_channels: 3, kernel: 1, inputs: c1}\n";
  const auto check = [&](const std::string& top, int line, const std::string& layer,
                         const std::vector<std::string>& parts) {
    const std::string y = write("o.yaml", "name: o\ninput: [1, 8, 8]\n" + top + layers);
    expect_error([&] { load_network(y, {"", false}); }, y, line, layer, parts);
  };
  check("outputs: [h1, h3]\n", 3, "", {"'outputs' names 'h3', which is not a layer"});
  check("outputs: [h1, h2, h1]\n", 3, "", {"'outputs' names 'h1' twice"});
  check("outputs: [input, h2]\n", 3, "", {"'outputs' names 'input'", "not an output"});
  check("outputs: []\n", 3, "", {"'outputs' must be a layer name or a list of 1 to 16"});
  check("outputs: {a: h1}\n", 3, "", {"'outputs' must be a layer name or a list"});
  check("outputs: [h1, 3]\n", 3, "", {"'outputs' names '3', which is not a layer"});
  // h1 is read by nothing: an error unless it is an output.
  check("", 5, "h1", {"the layer's output is never read", "or in the network's 'outputs'"});
  // The last layer left out of the outputs.
  check("outputs: [h1]\n", 7, "h2",
        {"the last layer's output is never read: it must be one of the network's 'outputs'"});
  check("outputs: [h1, h2]\nscales: {output: 0.5}\n", 4, "",
        {"'scales: output' must be a list of 2 scales, one per output"});
  check("outputs: [h1, h2]\nscales: {output: [0.5]}\n", 4, "",
        {"'scales: output' lists 1 scales, the network has 2 outputs"});
  check("outputs: [h1, h2]\nscales: {output: [0.5, -1]}\n", 4, "",
        {"'output' must be a finite number above 0"});
  std::string many = "outputs: [";
  for (int i = 0; i < 17; ++i) many += (i > 0 ? ", " : "") + std::string("c1");
  check(many + "]\n", 3, "", {"a list of 1 to 16 layer names, got a list"});
}

TEST_F(NetworkErrors, ConcatSliceAndUpsampleMistakesNameTheLayerAndLine) {
  expect(
      "  - {name: p1, type: maxpool, kernel: 2}\n"
      "  - {name: c1, type: concat, inputs: [p1, input]}\n",
      5, "c1", {"concat inputs differ in height or width: [1, 4, 4] and [1, 8, 8]"});
  expect("  - {name: c1, type: concat, inputs: input}\n", 4, "c1",
         {"a concat layer's 'inputs' must be a list of 2 to 64 layers"});
  expect("  - {name: c1, type: concat, inputs: [input]}\n", 4, "c1",
         {"a concat layer's 'inputs' must name 2 to 64 layers, got a list of 1"});
  expect("  - {name: c1, type: concat, inputs: [input, input], axis: 2}\n", 4, "c1",
         {"unknown key 'axis' in concat layer"});
  expect("  - {name: s1, type: slice, begin: 0, end: 2}\n", 4, "s1",
         {"'end' is 2, must be in 1..1"});
  expect("  - {name: s1, type: slice, begin: 1, end: 1}\n", 4, "s1",
         {"'begin' is 1, must be in 0..0"});
  expect("  - {name: s1, type: slice, end: 1}\n", 4, "s1", {"missing required key 'begin'"});
  expect("  - {name: u1, type: upsample, scale: 1}\n", 4, "u1", {"'scale' is 1, must be in 2..8"});
  expect("  - {name: u1, type: upsample, scale: 2.5}\n", 4, "u1", {"'scale'"});
  expect("  - {name: u1, type: upsample, scale: 2, mode: bilinear}\n", 4, "u1",
         {"upsample mode 'bilinear' is not supported (nearest only)"});
  expect("  - {name: u1, type: upsample}\n", 4, "u1", {"missing required key 'scale'"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, groups: 2}\n", 4, "c1",
         {"groups 2 must divide the 1 input channels and the 4 output channels"});
  expect(
      "  - {name: c1, type: conv, out_channels: 3, kernel: 3}\n"
      "  - {name: c2, type: conv, out_channels: 4, kernel: 1, groups: 3}\n",
      5, "c2", {"groups 3 must divide the 3 input channels and the 4 output channels"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, groups: 0}\n", 4, "c1",
         {"'groups' is 0, must be in 1..65535"});
  net("  - {name: u1, type: upsample, scale: 8}\n", "[1, 10000, 10000]");
  expect_error(
      [&] {
        load_network(yaml_, {"", false});
      },
      yaml_, 4, "u1", {"upsampling [1, 10000, 10000] by 8 gives more than 65535 rows or columns"});
  net("  - {name: u1, type: upsample, scale: 8}\n", "[64, 1000, 1000]");
  expect_error(
      [&] {
        load_network(yaml_, {"", false});
      },
      yaml_, 4, "u1", {"upsampled map [64, 8000, 8000] is too large"});
}

TEST_F(NetworkErrors, ConcatSliceAndUpsampleShapes) {
  net("  - {name: c1, type: conv, out_channels: 5, kernel: 3, stride: 2, pad: 1}\n"
      "  - {name: u1, type: upsample, scale: 2}\n"
      "  - {name: s1, type: slice, inputs: u1, begin: 1, end: 4}\n"
      "  - {name: k1, type: concat, inputs: [s1, input, u1]}\n");
  const Network n = load_network(yaml_, {"", false});
  EXPECT_EQ(n.layers[1].out_shape, (Shape{5, 8, 8}));
  EXPECT_EQ(n.layers[2].out_shape, (Shape{3, 8, 8}));
  EXPECT_EQ(n.layers[3].out_shape, (Shape{9, 8, 8}));
  EXPECT_EQ(n.layers[3].inputs, (std::vector<int>{2, kNetworkInput, 1}));
  EXPECT_EQ(n.macs(), n.layers[0].macs());
}

TEST_F(NetworkErrors, MulParsesAndItsMistakesNameTheLayerAndLine) {
  net("  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: 1}\n"
      "  - {name: g1, type: global_avgpool}\n"
      "  - {name: m1, type: mul, inputs: [c1, g1], activation: {table: t.npy},\n"
      "     requant: {multiplier: [1, 2, 3, 4], shift: 9}}\n"
      "  - {name: m2, type: mul, inputs: [m1, g1]}\n");
  const Network n = load_network(yaml_, {"", false});
  const Layer& m1 = n.layers[2];
  EXPECT_EQ(m1.type, LayerType::kMul);
  EXPECT_EQ(m1.inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(m1.out_shape, (Shape{4, 8, 8}));
  EXPECT_EQ(m1.requant.multiplier, (std::vector<uint16_t>{1, 2, 3, 4}));
  EXPECT_EQ(m1.requant.shift, (std::vector<uint8_t>(4, 9)));
  EXPECT_EQ(m1.files.table, "t.npy");
  EXPECT_TRUE(m1.has_requant());
  EXPECT_FALSE(m1.has_weights());
  EXPECT_EQ(m1.param_bytes(), 4 * 3);
  EXPECT_EQ(m1.macs(), 0);
  EXPECT_EQ(n.layers[3].files.multiplier, "m2_mult.npy");
  EXPECT_EQ(n.layers[3].files.shift, "m2_shift.npy");
  EXPECT_STREQ(layer_type_name(LayerType::kMul), "mul");

  const std::string conv = "  - {name: c1, type: conv, out_channels: 4, kernel: 3, pad: 1}\n";
  expect(conv + "  - {name: m1, type: mul, inputs: c1}\n", 5, "m1",
         {"a mul layer needs 'inputs' naming its map and its [C, 1, 1] vector, got 1 input"});
  expect(conv + "  - {name: m1, type: mul}\n", 5, "m1", {"got 1 input"});
  expect(conv + "  - {name: m1, type: mul, inputs: [c1, c1, c1]}\n", 5, "m1",
         {"'inputs' must name one or two layers, got a list of 3"});
  expect(conv + "  - {name: m1, type: mul, inputs: [c1, c1]}\n", 5, "m1",
         {"the mul vector (second input) has shape [4, 8, 8], expected [C, 1, 1]"});
  expect(conv +
             "  - {name: g1, type: global_avgpool, inputs: input}\n"
             "  - {name: m1, type: mul, inputs: [c1, g1]}\n",
         6, "m1", {"the mul vector has 1 channels, the map [4, 8, 8] has 4"});
  expect(conv +
             "  - {name: g1, type: global_avgpool}\n"
             "  - {name: m1, type: mul, inputs: [c1, g1], kernel: 1}\n",
         6, "m1", {"unknown key 'kernel' in mul layer"});
  expect(conv +
             "  - {name: g1, type: global_avgpool}\n"
             "  - {name: m1, type: mul, inputs: [c1, g1], requant: {multiplier: 1}}\n",
         6, "m1", {"missing required key 'shift'"});
  expect(conv +
             "  - {name: g1, type: global_avgpool}\n"
             "  - {name: m1, type: mul, inputs: [c1, g1], requant: {multiplier: [1, 2], "
             "shift: 3}}\n",
         6, "m1", {"'multiplier' lists 2 values, the layer has 4 output channels"});
}

TEST_F(NetworkErrors, FileKeysMustStayInsideTheWeightsDirectory) {
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, weights: ../w.npy}\n", 4, "c1",
         {"'weights' file '../w.npy' must be a relative path inside the weights directory"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, bias: /tmp/b.npy}\n", 4, "c1",
         {"must be a relative path"});
  expect("  - {name: c1, type: conv, out_channels: 4, kernel: 3, bias: b.txt}\n", 4, "c1",
         {"'bias' must name a .npy file"});
}

// ---- parameter files ---------------------------------------------------------

class NetworkFiles : public NetworkErrors {
 protected:
  // c1: conv 1 -> 4, 3x3, on [1, 8, 8]; `bias: b.npy` on line 8.
  static constexpr const char* kConv =
      "  - name: c1\n"
      "    type: conv\n"
      "    out_channels: 4\n"
      "    kernel: 3\n"
      "    bias: b.npy\n";
  void write_all() {
    save_npy(path("c1_weight.npy"), Tensor<int8_t>({4, 1, 3, 3}, 3));
    save_npy(path("b.npy"), Tensor<int32_t>({4}, 0));
    save_npy(path("c1_mult.npy"), Tensor<uint16_t>({4}, 1000));
    save_npy(path("c1_shift.npy"), Tensor<uint8_t>({4}, 10));
  }
};

TEST_F(NetworkFiles, AllPresentLoads) {
  write_all();
  net(kConv);
  const Network n = load_network(yaml_);
  EXPECT_EQ(n.layers[0].weights, Tensor<int8_t>({4, 1, 3, 3}, 3));
  EXPECT_EQ(n.layers[0].requant.multiplier, std::vector<uint16_t>(4, 1000));
  EXPECT_EQ(n.layers[0].requant.shift, std::vector<uint8_t>(4, 10));
}

TEST_F(NetworkFiles, MissingWeightFile) {
  write_all();
  fs::remove(path("c1_weight.npy"));
  expect(kConv, 4, "c1", {"weights file '" + path("c1_weight.npy") + "' not found"}, true);
  write_all();
  fs::remove(path("b.npy"));  // named on line 8
  expect(kConv, 8, "c1", {"bias file '" + path("b.npy") + "' not found"}, true);
  write_all();
  fs::remove(path("c1_shift.npy"));
  expect(kConv, 4, "c1", {"shift file", "c1_shift.npy' not found"}, true);
}

TEST_F(NetworkFiles, WrongDtype) {
  write_all();
  save_npy(path("c1_weight.npy"), Tensor<int32_t>({4, 1, 3, 3}, 3));
  expect(kConv, 4, "c1", {"weights file", path("c1_weight.npy"), "expected int8, file has int32"},
         true);
  write_all();
  save_npy(path("c1_mult.npy"), Tensor<int16_t>({4}, 3));
  expect(kConv, 4, "c1", {"multiplier file", "expected uint16, file has int16"}, true);
}

TEST_F(NetworkFiles, WrongShape) {
  write_all();
  save_npy(path("c1_weight.npy"), Tensor<int8_t>({4, 1, 5, 5}, 3));
  expect(kConv, 4, "c1",
         {"weights file '" + path("c1_weight.npy") +
          "' has shape [4, 1, 5, 5], expected [4, 1, 3, 3]"},
         true);
  write_all();
  save_npy(path("b.npy"), Tensor<int32_t>({1, 4}, 0));
  expect(kConv, 8, "c1", {"bias file", "has shape [1, 4], expected [4]"}, true);
}

// `activation: {table: t.npy}`: int8 [256]; a wrong length or dtype, a
// missing file, or a table beside a clamp key names the layer and the line.
TEST_F(NetworkFiles, TableActivationFile) {
  const std::string conv_t = std::string(kConv) + "    activation: {table: t.npy}\n";
  write_all();
  std::vector<int8_t> t(256);
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = static_cast<int8_t>(i / 2 - 64);
  save_npy(path("t.npy"), Tensor<int8_t>({256}, t));
  net(conv_t);
  const Network n = load_network(yaml_);
  EXPECT_EQ(n.layers[0].requant.table, t);
  EXPECT_EQ(n.layers[0].files.table, "t.npy");
  EXPECT_TRUE(n.layers[0].has_table());
  EXPECT_EQ(n.layers[0].requant.lo, kInt8Min);
  EXPECT_EQ(n.layers[0].requant.hi, kInt8Max);
  save_npy(path("t.npy"), Tensor<int8_t>({255}, 0));
  expect(conv_t, 9, "c1", {"activation table file", "has shape [255], expected [256]"}, true);
  save_npy(path("t.npy"), Tensor<int8_t>({2, 128}, 0));
  expect(conv_t, 9, "c1", {"activation table file", "has shape [2, 128], expected [256]"}, true);
  save_npy(path("t.npy"), Tensor<uint8_t>({256}, 0));
  expect(conv_t, 9, "c1", {"activation table file", "expected int8, file has uint8"}, true);
  save_npy(path("t.npy"), Tensor<int16_t>({256}, 0));
  expect(conv_t, 9, "c1", {"activation table file", "expected int8, file has int16"}, true);
  fs::remove(path("t.npy"));
  expect(conv_t, 9, "c1", {"activation table file '" + path("t.npy") + "' not found"}, true);
  expect(std::string(kConv) + "    activation: {table: t.npy, clamp: [0, 1]}\n", 9, "c1",
         {"unknown key 'clamp'"}, false);
  expect(std::string(kConv) + "    activation: {table: t.txt}\n", 9, "c1",
         {"'table' must name a .npy file"}, false);
}

TEST_F(NetworkFiles, ShiftFileOutOfRange) {
  write_all();
  save_npy(path("c1_shift.npy"), Tensor<uint8_t>({4}, std::vector<uint8_t>{1, 2, 48, 3}));
  expect(kConv, 4, "c1", {"output channel 2 has shift 48, must be in 0..47"}, true);
}

TEST_F(NetworkFiles, MalformedNpyNamesTheFile) {
  write_all();
  write("c1_weight.npy", "not a numpy file at all");
  expect(kConv, 4, "c1", {"weights file: " + path("c1_weight.npy")}, true);
}

TEST_F(NetworkFiles, AccumulatorOverflowFromLargeWeights) {
  // 2 x 256 x 256 = 131072 inputs of weight -128: the worst case is
  // 131072 * (-128) * (-128) = 2^31, one past INT32_MAX.
  save_npy(path("f1_weight.npy"), Tensor<int8_t>({1, 131072}, -128));
  save_npy(path("f1_bias.npy"), Tensor<int32_t>({1}, 0));
  yaml_ = write("bad.yaml",
                "name: big\ninput: [2, 256, 256]\nlayers:\n"
                "  - {name: f1, type: fc, out_features: 1, requant: {multiplier: 1, shift: 20}}\n");
  expect_error([&] { load_network(yaml_); }, yaml_, 4, "f1",
               {"accumulator overflow: output channel 0 can reach [-2130706432, 2147483648]",
                "outside the int32 range"});
  // One weight less and it fits.
  Tensor<int8_t> w({1, 131072}, -128);
  w[0] = 0;
  save_npy(path("f1_weight.npy"), w);
  EXPECT_NO_THROW(load_network(yaml_));
}

TEST_F(NetworkFiles, AccumulatorOverflowFromBias) {
  // Channel 2's bias leaves no room for even one input.
  save_npy(path("f1_weight.npy"), Tensor<int8_t>({3, 64}, 1));
  save_npy(
      path("f1_bias.npy"),
      Tensor<int32_t>({3}, std::vector<int32_t>{0, -1000, std::numeric_limits<int32_t>::max()}));
  net("  - {name: f1, type: fc, out_features: 3, requant: {multiplier: 1, shift: 20}}\n");
  expect_error([&] { load_network(yaml_); }, yaml_, 4, "f1", {"output channel 2 can reach"});
}

TEST(NetworkValidate, RejectsParametersThatDoNotMatch) {
  Network net = load_network(kExamples + "lenet5.yaml", {"", false});
  // Structure only: no parameters yet.
  EXPECT_THROW(validate_parameters(net), Error);
  for (Layer& l : net.layers) {
    if (!l.has_weights()) continue;
    const int64_t fan_in =
        l.type == LayerType::kConv ? l.in_shape[0] * 25 : shape_elements(l.in_shape);
    l.weights = l.type == LayerType::kConv
                    ? Tensor<int8_t>({l.out_channels, l.in_shape[0], 5, 5}, 1)
                    : Tensor<int8_t>({l.out_channels, fan_in}, 1);
    l.bias = Tensor<int32_t>({l.out_channels}, 0);
    l.requant.multiplier.assign(static_cast<size_t>(l.out_channels), 1);
    l.requant.shift.assign(static_cast<size_t>(l.out_channels), 0);
  }
  EXPECT_NO_THROW(validate_parameters(net));
  net.layers[4].requant.shift[3] = 48;
  expect_error([&] { validate_parameters(net); }, net.source_file, net.layers[4].line, "f5",
               {"output channel 3 has shift 48"});
  net.layers[4].requant.shift[3] = 0;
  net.layers[2].bias = Tensor<int32_t>({15}, 0);
  expect_error([&] { validate_parameters(net); }, net.source_file, net.layers[2].line, "c3",
               {"bias has shape [15], expected [16]"});
}

}  // namespace
}  // namespace strata
