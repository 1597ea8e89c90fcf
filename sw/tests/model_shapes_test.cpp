// SPDX-License-Identifier: Apache-2.0
// Every convolution shape of ResNet-50, MobileNet-v2 (its full and pointwise
// convolutions; the depthwise ones need the depthwise layer) and YOLOv3-tiny at
// their input sizes compiles for the default configuration, as a one-layer
// network (with the pool that follows it where the model has one): maps in
// external memory, bands and strips, weights and parameters per pass. The
// programs of the smaller shapes also run on the ISA simulator equal to the
// golden model; tb/network runs whole networks of this size on the RTL.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

struct ConvShape {
  const char* model;
  int in_c, size, out_c, kernel, stride, pad;
  const char* pool = "";  // a pool layer that follows, YAML flow mapping
};

// in_c -> out_c, kernel k, stride s, pad p, on a size x size input.
const std::vector<ConvShape>& shapes() {
  static const std::vector<ConvShape> v = {
      // ResNet-50 (torchvision, stride on the 3x3), 224 x 224.
      {"resnet50", 3, 224, 64, 7, 2, 3, "{type: maxpool, kernel: 3, stride: 2, pad: 1}"},
      {"resnet50", 64, 56, 64, 1, 1, 0},
      {"resnet50", 64, 56, 64, 3, 1, 1},
      {"resnet50", 64, 56, 256, 1, 1, 0},
      {"resnet50", 256, 56, 64, 1, 1, 0},
      {"resnet50", 256, 56, 128, 1, 1, 0},
      {"resnet50", 128, 56, 128, 3, 2, 1},
      {"resnet50", 256, 56, 512, 1, 2, 0},
      {"resnet50", 128, 28, 512, 1, 1, 0},
      {"resnet50", 512, 28, 128, 1, 1, 0},
      {"resnet50", 128, 28, 128, 3, 1, 1},
      {"resnet50", 512, 28, 256, 1, 1, 0},
      {"resnet50", 256, 28, 256, 3, 2, 1},
      {"resnet50", 512, 28, 1024, 1, 2, 0},
      {"resnet50", 256, 14, 1024, 1, 1, 0},
      {"resnet50", 1024, 14, 256, 1, 1, 0},
      {"resnet50", 256, 14, 256, 3, 1, 1},
      {"resnet50", 1024, 14, 512, 1, 1, 0},
      {"resnet50", 512, 14, 512, 3, 2, 1},
      {"resnet50", 1024, 14, 2048, 1, 2, 0},
      {"resnet50", 512, 7, 2048, 1, 1, 0},
      {"resnet50", 2048, 7, 512, 1, 1, 0},
      {"resnet50", 512, 7, 512, 3, 1, 1},
      // MobileNet-v2, 224 x 224: the first convolution, expansions and projections.
      {"mobilenet_v2", 3, 224, 32, 3, 2, 1},
      {"mobilenet_v2", 32, 112, 16, 1, 1, 0},
      {"mobilenet_v2", 16, 112, 96, 1, 1, 0},
      {"mobilenet_v2", 96, 56, 24, 1, 1, 0},
      {"mobilenet_v2", 24, 56, 144, 1, 1, 0},
      {"mobilenet_v2", 144, 56, 24, 1, 1, 0},
      {"mobilenet_v2", 144, 28, 32, 1, 1, 0},
      {"mobilenet_v2", 32, 28, 192, 1, 1, 0},
      {"mobilenet_v2", 192, 28, 32, 1, 1, 0},
      {"mobilenet_v2", 192, 14, 64, 1, 1, 0},
      {"mobilenet_v2", 64, 14, 384, 1, 1, 0},
      {"mobilenet_v2", 384, 14, 64, 1, 1, 0},
      {"mobilenet_v2", 384, 14, 96, 1, 1, 0},
      {"mobilenet_v2", 96, 14, 576, 1, 1, 0},
      {"mobilenet_v2", 576, 14, 96, 1, 1, 0},
      {"mobilenet_v2", 576, 7, 160, 1, 1, 0},
      {"mobilenet_v2", 160, 7, 960, 1, 1, 0},
      {"mobilenet_v2", 960, 7, 160, 1, 1, 0},
      {"mobilenet_v2", 960, 7, 320, 1, 1, 0},
      {"mobilenet_v2", 320, 7, 1280, 1, 1, 0},
      // YOLOv3-tiny, 416 x 416 (each 3x3 of the backbone with its 2x2 max pool).
      {"yolov3_tiny", 3, 416, 16, 3, 1, 1, "{type: maxpool, kernel: 2, stride: 2}"},
      {"yolov3_tiny", 16, 208, 32, 3, 1, 1, "{type: maxpool, kernel: 2, stride: 2}"},
      {"yolov3_tiny", 32, 104, 64, 3, 1, 1, "{type: maxpool, kernel: 2, stride: 2}"},
      {"yolov3_tiny", 64, 52, 128, 3, 1, 1, "{type: maxpool, kernel: 2, stride: 2}"},
      {"yolov3_tiny", 128, 26, 256, 3, 1, 1, "{type: maxpool, kernel: 2, stride: 2}"},
      {"yolov3_tiny", 256, 13, 512, 3, 1, 1},
      {"yolov3_tiny", 512, 13, 1024, 3, 1, 1},
      {"yolov3_tiny", 1024, 13, 256, 1, 1, 0},
      {"yolov3_tiny", 256, 13, 512, 3, 1, 1},
      {"yolov3_tiny", 512, 13, 255, 1, 1, 0},
      {"yolov3_tiny", 256, 13, 128, 1, 1, 0},
      {"yolov3_tiny", 384, 26, 256, 3, 1, 1},
      {"yolov3_tiny", 256, 26, 255, 1, 1, 0},
  };
  return v;
}

class ModelShapes : public test::TempDirTest {};

TEST_F(ModelShapes, EveryConvolutionCompilesForTheDefaultConfiguration) {
  int ran = 0;
  for (const ConvShape& s : shapes()) {
    const std::string what =
        fmt::format("{} conv {}->{} {}x{} s{} p{} on {}x{}{}", s.model, s.in_c, s.out_c, s.kernel,
                    s.kernel, s.stride, s.pad, s.size, s.size, *s.pool ? " + pool" : "");
    SCOPED_TRACE(what);
    std::string yaml = fmt::format(
        "name: shape\ninput: [{}, {}, {}]\nlayers:\n"
        "  - {{name: c, type: conv, out_channels: {}, kernel: {}, stride: {}, pad: {}}}\n"
        "  - {{name: r, type: relu}}\n",
        s.in_c, s.size, s.size, s.out_c, s.kernel, s.stride, s.pad);
    if (*s.pool) {
      std::string pool = s.pool;
      yaml += "  - " + pool.insert(1, "name: p, ") + "\n";
    }
    Network net = load_network(write("shape.yaml", yaml), LoadOptions{"", false});
    GenOptions go;
    go.images = 1;
    const Tensor<int8_t> images = random_images(net.input_shape, 1, 5);
    generate_parameters(net, go, images);
    Program prog;
    ASSERT_NO_THROW(prog = compile(net, HwTarget::defaults(), {})) << what;
    EXPECT_GT(prog.instructions.size(), 2u);
    // Run the smaller ones (up to ~20 M MACs) on the ISA simulator.
    if (net.macs() > 20'000'000) continue;
    std::vector<uint8_t> memory = prog.image;
    const Tensor<int8_t> image = images.reshaped(net.input_shape);
    write_input(prog, memory, 0, image);
    const SimResult r = IsaSim(prog.target).run(memory);
    ASSERT_TRUE(r.ok()) << what << ": " << r.message;
    EXPECT_TRUE(r.completion.clean() && r.fine.clean()) << what << ": " << describe_problems(r);
    EXPECT_EQ(read_output(prog, memory, 0), run_network(net, image)) << what;
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

}  // namespace
}  // namespace strata
