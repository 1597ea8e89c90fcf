// The compiler and the ISA simulator together: every example network, the
// digits model and many random networks compiled for the default and a
// P = N = 16 target, simulated, and compared with the golden model element by
// element; the dependency bookkeeping checked in both modes; every target
// limit rejected with an error naming the layer.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = STRATA_SOURCE_DIR;

HwTarget p16n16() {
  HwTarget t = HwTarget::defaults();
  t.name = "p16n16";
  t.pes = 16;
  t.lanes = 16;
  return t;
}

// Seed of the random tests: STRATA_SEED if set, else fixed (printed either way).
uint64_t test_seed(uint64_t fallback) {
  if (const char* s = std::getenv("STRATA_SEED"); s != nullptr && *s != '\0') {
    return std::strtoull(s, nullptr, 0);
  }
  return fallback;
}

// An example network with parameters from strata gen's library function.
Network generated_example(const std::string& name, uint64_t seed) {
  Network net = load_network((kSource / "examples" / (name + ".yaml")).string(),
                             LoadOptions{"", false});
  GenOptions o;
  o.seed = seed;
  generate_parameters(net, o, random_images(net.input_shape, o.images, seed));
  validate_parameters(net);
  return net;
}

std::vector<Tensor<int8_t>> split(const Tensor<int8_t>& batch) {
  std::vector<Tensor<int8_t>> images;
  const int64_t per = batch.size() / batch.dim(0);
  for (int64_t i = 0; i < batch.dim(0); ++i) {
    const int8_t* first = batch.data() + i * per;
    images.emplace_back(Shape(batch.shape().begin() + 1, batch.shape().end()),
                        std::vector<int8_t>(first, first + per));
  }
  return images;
}

struct Run {
  SimResult sim;
  std::vector<Tensor<int8_t>> outputs;
};

Run run_program(const Program& prog, const std::vector<Tensor<int8_t>>& images,
                const SimOptions& options = {}) {
  std::vector<uint8_t> memory = prog.image;
  for (size_t i = 0; i < images.size(); ++i) {
    write_input(prog, memory, static_cast<int>(i), images[i]);
  }
  Run r;
  r.sim = IsaSim(prog.target).run(memory, options);
  if (r.sim.ok()) {
    for (size_t i = 0; i < images.size(); ++i) {
      r.outputs.push_back(read_output(prog, memory, static_cast<int>(i)));
    }
  }
  return r;
}

// Every element of `got` equals the golden model's output for `image`.
void expect_golden(const Network& net, const Tensor<int8_t>& image, const Tensor<int8_t>& got,
                   const std::string& where) {
  const Tensor<int8_t> want = run_network(net, image);
  ASSERT_EQ(got.shape(), want.shape()) << where;
  const Shape& s = want.shape();
  int64_t mismatches = 0;
  std::string first;
  for (int64_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (mismatches++ == 0) {
      const int64_t plane = s[1] * s[2];
      first = fmt::format("channel {}, row {}, column {} (index {}): expected {}, got {}",
                          i / plane, (i % plane) / s[2], i % s[2], i, want[i], got[i]);
    }
  }
  EXPECT_EQ(mismatches, 0) << where << ": " << mismatches << " of " << want.size()
                           << " elements differ; first at " << first;
}

// The run finished, both dependency modes are free of deadlocks and races,
// and every edge's releases equal its acquisitions and the compiler's count.
void expect_clean(const Program& prog, const SimResult& r, const std::string& where) {
  EXPECT_TRUE(r.ok()) << where << ": " << describe_problems(r);
  EXPECT_TRUE(r.completion.clean()) << where << ": " << describe_problems(r);
  EXPECT_TRUE(r.fine.clean()) << where << ": " << describe_problems(r);
  EXPECT_EQ(r.acc_wraps, 0) << where;
  for (int e = 0; e < isa::kEdges; ++e) {
    EXPECT_EQ(r.completion.released[e], prog.units[e]) << where << " edge " << e;
    EXPECT_EQ(r.completion.acquired[e], prog.units[e]) << where << " edge " << e;
    EXPECT_EQ(r.fine.acquired[e], prog.units[e]) << where << " edge " << e;
  }
}

// Compiles, simulates `images` and compares every output with the golden model.
Program check_network(const Network& net, const HwTarget& target,
                      const std::vector<Tensor<int8_t>>& images, const std::string& where,
                      Reorder reorder = Reorder::kAuto) {
  CompileOptions o;
  o.batch = static_cast<int>(images.size());
  o.reorder = reorder;
  const Program prog = compile(net, target, o);
  const Run r = run_program(prog, images);
  expect_clean(prog, r.sim, where);
  if (!r.sim.ok()) return prog;
  for (size_t i = 0; i < images.size(); ++i) {
    expect_golden(net, images[i], r.outputs[i], fmt::format("{}, image {}", where, i));
  }
  return prog;
}

// ---- the example networks ------------------------------------------------------------------

struct ExampleCase {
  std::string name;
  uint64_t seed;
  bool p16;
  bool full_batch;
};

std::string case_name(const ::testing::TestParamInfo<ExampleCase>& info) {
  return fmt::format("{}_{}_{}", info.param.name, info.param.p16 ? "P16" : "P8",
                     info.param.full_batch ? "BatchP" : "Batch1");
}

class Examples : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(Examples, EveryOutputEqualsTheGoldenModel) {
  const ExampleCase& c = GetParam();
  const Network net = generated_example(c.name, c.seed);
  const HwTarget target = c.p16 ? p16n16() : HwTarget::defaults();
  const int batch = c.full_batch ? target.pes : 1;
  const auto images = split(random_images(net.input_shape, batch, c.seed + 100));
  const Program prog = check_network(net, target, images, case_name({c, 0}));
  EXPECT_EQ(prog.batch, batch);
  EXPECT_EQ(prog.instructions.front().opcode_value(), static_cast<uint64_t>(isa::Opcode::kConfig));
  EXPECT_EQ(prog.instructions.back().opcode_value(), static_cast<uint64_t>(isa::Opcode::kEnd));
}

INSTANTIATE_TEST_SUITE_P(
    Compiler, Examples,
    ::testing::Values(ExampleCase{"cifar10_quick", 1, false, false},
                      ExampleCase{"cifar10_quick", 1, false, true},
                      ExampleCase{"cifar10_quick", 1, true, false},
                      ExampleCase{"cifar10_quick", 1, true, true},
                      ExampleCase{"lenet5", 2, false, false}, ExampleCase{"lenet5", 2, false, true},
                      ExampleCase{"lenet5", 2, true, false}, ExampleCase{"lenet5", 2, true, true},
                      ExampleCase{"strided_net", 3, false, false},
                      ExampleCase{"strided_net", 3, false, true},
                      ExampleCase{"strided_net", 3, true, false},
                      ExampleCase{"strided_net", 3, true, true}),
    case_name);

}  // namespace
}  // namespace strata
