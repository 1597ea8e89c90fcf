// SPDX-License-Identifier: Apache-2.0
// The compiler and the ISA simulator together: every example network, the
// digits model and many random networks compiled for the default and a
// P = N = 16 target, simulated, and compared with the golden model element by
// element; the dependency bookkeeping checked in both modes; every target
// limit rejected with an error naming the layer.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <regex>
#include <set>
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

// Files written by a test, removed at the end of it.
class TempFiles {
 public:
  TempFiles() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("strata_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempFiles() { fs::remove_all(dir_); }
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

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
  Network net =
      load_network((kSource / "examples" / (name + ".yaml")).string(), LoadOptions{"", false});
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

struct SimRun {
  SimResult sim;
  std::vector<Tensor<int8_t>> outputs;             // per image, output 0
  std::vector<std::vector<Tensor<int8_t>>> every;  // per image, every network output
};

SimRun run_program(const Program& prog, const std::vector<Tensor<int8_t>>& images,
                   const SimOptions& options = {}) {
  std::vector<uint8_t> memory = prog.image;
  for (size_t i = 0; i < images.size(); ++i) {
    write_input(prog, memory, static_cast<int>(i), images[i]);
  }
  SimRun r;
  r.sim = IsaSim(prog.target).run(memory, options);
  if (r.sim.ok()) {
    for (size_t i = 0; i < images.size(); ++i) {
      r.outputs.push_back(read_output(prog, memory, static_cast<int>(i)));
      r.every.emplace_back();
      for (size_t j = 0; j < prog.outputs.size(); ++j) {
        r.every.back().push_back(read_output(prog, memory, static_cast<int>(i), j));
      }
    }
  }
  return r;
}

// Every element of `got` equals the golden model's output for `image`.
void expect_equal_output(const Tensor<int8_t>& want, const Tensor<int8_t>& got,
                         const std::string& where) {
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

void expect_golden(const Network& net, const Tensor<int8_t>& image, const Tensor<int8_t>& got,
                   const std::string& where) {
  expect_equal_output(run_network(net, image), got, where);
}

// Every network output of `image` equals the golden model's, element by element.
void expect_golden_outputs(const Network& net, const Tensor<int8_t>& image,
                           const std::vector<Tensor<int8_t>>& got, const std::string& where) {
  const std::vector<Tensor<int8_t>> want = run_network_outputs(net, image);
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t j = 0; j < want.size(); ++j) {
    expect_equal_output(want[j], got[j],
                        fmt::format("{}, output {} '{}'", where, j, net.output_name(j)));
  }
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
  const SimRun r = run_program(prog, images);
  expect_clean(prog, r.sim, where);
  if (!r.sim.ok()) return prog;
  for (size_t i = 0; i < images.size(); ++i) {
    expect_golden_outputs(net, images[i], r.every[i], fmt::format("{}, image {}", where, i));
  }
  return prog;
}

// Whether `text` contains `part`.
bool contains_text(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
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
    ::testing::Values(
        ExampleCase{"cifar10_quick", 1, false, false}, ExampleCase{"cifar10_quick", 1, false, true},
        ExampleCase{"cifar10_quick", 1, true, false}, ExampleCase{"cifar10_quick", 1, true, true},
        ExampleCase{"lenet5", 2, false, false}, ExampleCase{"lenet5", 2, false, true},
        ExampleCase{"lenet5", 2, true, false}, ExampleCase{"lenet5", 2, true, true},
        ExampleCase{"strided_net", 3, false, false}, ExampleCase{"strided_net", 3, false, true},
        ExampleCase{"strided_net", 3, true, false}, ExampleCase{"strided_net", 3, true, true},
        ExampleCase{"residual_net", 8, false, false}, ExampleCase{"residual_net", 8, false, true},
        ExampleCase{"residual_net", 8, true, false},
        ExampleCase{"inverted_residual_net", 9, false, false},
        ExampleCase{"inverted_residual_net", 9, false, true},
        ExampleCase{"inverted_residual_net", 9, true, true},
        ExampleCase{"sppf_pools", 10, false, false}, ExampleCase{"sppf_pools", 10, false, true},
        ExampleCase{"sppf_pools", 10, true, false}, ExampleCase{"concat_net", 11, false, false},
        ExampleCase{"concat_net", 11, true, true}, ExampleCase{"table_net", 12, false, false},
        ExampleCase{"table_net", 12, true, true}, ExampleCase{"se_net", 13, false, false},
        ExampleCase{"se_net", 13, false, true}, ExampleCase{"se_net", 13, true, true},
        ExampleCase{"two_heads", 14, false, false}, ExampleCase{"two_heads", 14, false, true},
        ExampleCase{"two_heads", 14, true, true}),
    case_name);

// ---- sparse programs (docs/sparsity.md) ----------------------------------------------------

HwTarget sparse_target() {
  return HwTarget::from_yaml((kSource / "config" / "sparse.yaml").string());
}

// Total PE-array beats of a simulated run.
int64_t beats_of(const SimResult& r) {
  int64_t beats = 0;
  for (const InstrStats& s : r.stats) beats += s.beats;
  return beats;
}

struct SparseCase {
  std::string name;
  uint64_t seed;
  int sparsity_percent;
};

class SparseExamples : public ::testing::TestWithParam<SparseCase> {};

// Every example network with unstructured zeros, compiled for the sparse
// configuration: packed CONVs equal the golden model element by element, with
// dependencies clean in both modes, and never take more beats than the dense
// program on the same weights; at 50 % and 90 % zeros they take fewer.
TEST_P(SparseExamples, PackedProgramsEqualTheGoldenModel) {
  const SparseCase& c = GetParam();
  Network net =
      load_network((kSource / "examples" / (c.name + ".yaml")).string(), LoadOptions{"", false});
  GenOptions o;
  o.seed = c.seed;
  o.sparsity = c.sparsity_percent / 100.0;
  generate_parameters(net, o, random_images(net.input_shape, o.images, c.seed));
  const auto images = split(random_images(net.input_shape, 2, c.seed + 100));
  const std::string where = fmt::format("{} at {} % zeros", c.name, c.sparsity_percent);
  const Program sparse = check_network(net, sparse_target(), images, where + ", sparse");
  CompileOptions two;
  two.batch = 2;
  const Program dense = compile(net, HwTarget::defaults(), two);
  const SimRun rs = run_program(sparse, images), rd = run_program(dense, images);
  ASSERT_TRUE(rs.sim.ok() && rd.sim.ok()) << rs.sim.message << rd.sim.message;
  int packed_ops = 0;
  for (const CompiledOp& op : sparse.ops) packed_ops += op.packed;
  EXPECT_LE(beats_of(rs.sim), beats_of(rd.sim)) << where;
  if (c.sparsity_percent >= 50) {
    EXPECT_GT(packed_ops, 0) << where;
    EXPECT_LT(beats_of(rs.sim), beats_of(rd.sim)) << where;
  }
  std::cout << fmt::format(
      "[ SPARSE   ] {}: {} packed ops, {} beats (dense program {}, {:.2f}x)\n", where, packed_ops,
      beats_of(rs.sim), beats_of(rd.sim),
      static_cast<double>(beats_of(rd.sim)) / static_cast<double>(beats_of(rs.sim)));
}

std::string sparse_case_name(const ::testing::TestParamInfo<SparseCase>& info) {
  return fmt::format("{}_{}", info.param.name, info.param.sparsity_percent);
}

INSTANTIATE_TEST_SUITE_P(
    Compiler, SparseExamples,
    ::testing::Values(SparseCase{"cifar10_quick", 11, 0}, SparseCase{"cifar10_quick", 12, 50},
                      SparseCase{"cifar10_quick", 13, 90}, SparseCase{"lenet5", 14, 0},
                      SparseCase{"lenet5", 15, 50}, SparseCase{"lenet5", 16, 90},
                      SparseCase{"strided_net", 17, 50}, SparseCase{"strided_net", 18, 90},
                      SparseCase{"residual_net", 19, 50}, SparseCase{"residual_net", 20, 90},
                      SparseCase{"inverted_residual_net", 21, 50},
                      SparseCase{"inverted_residual_net", 22, 90}),
    sparse_case_name);

// A program runs only on the build it was compiled for: a dense program on a
// sparse configuration and a sparse one on a dense configuration stop at
// CONFIG with UNSUPPORTED, saying which is which.
TEST(Compiler, DenseAndSparseProgramsAreRefusedByTheOtherBuild) {
  const Network net = generated_example("lenet5", 5);
  const auto images = split(random_images(net.input_shape, 1, 6));
  const Program dense = compile(net, HwTarget::defaults());
  Program sparse = compile(net, sparse_target());
  const auto run_on = [&](const Program& prog, const HwTarget& t) {
    std::vector<uint8_t> memory = prog.image;
    write_input(prog, memory, 0, images[0]);
    return IsaSim(t).run(memory, {});
  };
  const SimResult a = run_on(dense, sparse_target());
  EXPECT_EQ(a.error, SimError::kUnsupported);
  EXPECT_EQ(a.error_index, 0);
  EXPECT_TRUE(contains_text(a.message, "compiled for a dense build")) << a.message;
  const SimResult b = run_on(sparse, HwTarget::defaults());
  EXPECT_EQ(b.error, SimError::kUnsupported);
  EXPECT_EQ(b.error_index, 0);
  EXPECT_TRUE(contains_text(b.message, "compiled for a sparse build")) << b.message;
}

// Graphs whose corners the example networks do not reach: an add of the input
// with itself as the first op (two operands from one external map), a 5x5
// stride-2 depthwise layer, a shortcut convolution with a ceil-mode max pool
// fused, an add with an average pool fused into it, global pools over a
// non-square map and over 1x1, an FC after a pool of an add; P = 8 and P = 16.
TEST(Compiler, GraphCornersEqualTheGoldenModel) {
  const std::vector<std::pair<std::string, std::string>> nets = {
      {"corners",
       "input: [5, 9, 7]\nlayers:\n"
       "  - {name: a0, type: add, inputs: [input, input], activation: relu}\n"
       "  - {name: d1, type: depthwise, kernel: 5, stride: 2, pad: 2}\n"
       "  - {name: c2, type: conv, out_channels: 5, kernel: 3, pad: 1, inputs: a0}\n"
       "  - {name: p2, type: maxpool, kernel: 2, stride: 2, ceil_mode: true}\n"
       "  - {name: a3, type: add, inputs: [p2, d1]}\n"
       "  - {name: mp, type: avgpool, kernel: 2, stride: 1}\n"
       "  - {name: g, type: global_avgpool}\n"},
      {"shortcuts_from_input",
       "input: [3, 12, 12]\nlayers:\n"
       "  - {name: c1, type: conv, out_channels: 16, kernel: 3, pad: 1}\n"
       "  - {name: c2, type: conv, out_channels: 3, kernel: 1, inputs: input}\n"
       "  - {name: c3, type: conv, out_channels: 3, kernel: 3, pad: 1, inputs: c1}\n"
       "  - {name: a, type: add, inputs: [c3, c2]}\n"
       "  - {name: a2, type: add, inputs: [a, input], activation: {clamp: [-20, 50]}}\n"
       "  - {name: d, type: depthwise, kernel: 3, pad: 1}\n"
       "  - {name: dp, type: avgpool, kernel: 3, stride: 3}\n"
       "  - {name: g, type: global_avgpool}\n"
       "  - {name: fl, type: flatten}\n"
       "  - {name: fc, type: fc, out_features: 7}\n"},
      {"one_pixel",
       "input: [24, 1, 1]\nlayers:\n"
       "  - {name: g, type: global_avgpool}\n"
       "  - {name: d, type: depthwise, kernel: 1}\n"
       "  - {name: a, type: add, inputs: [d, g]}\n"},
  };
  TempFiles files;
  for (const auto& [name, yaml] : nets) {
    Network net = load_network(files.write(name + ".yaml", "name: " + name + "\n" + yaml),
                               LoadOptions{"", false});
    GenOptions go;
    go.seed = 11;
    generate_parameters(net, go, random_images(net.input_shape, go.images, 11));
    for (const HwTarget& target : {HwTarget::defaults(), p16n16()}) {
      const auto images = split(random_images(net.input_shape, 2, 12));
      check_network(net, target, images, fmt::format("{} on {}", name, target.name));
    }
  }
}

// Channel-wise multiplies (docs/compiler.md, "Channel-wise multiply"): the map
// from the previous op (whole) or a shared one (tiled), of the network input, on
// channels off the lane groups, one vector read by two muls, a vector computed
// before the map, an FC right after a mul (through a copy into the PE caches), a
// pool after it; on P = N = 8 and 16 and the tiny target (tiles), batches of 2.
// Every output equals the golden model, dependencies clean in both modes; the
// mul ops run in DEPTHWISE mode, each after P selector CONVs into the PE caches.
TEST(Compiler, ChannelMultipliesEqualTheGoldenModel) {
  const std::vector<std::pair<std::string, std::string>> nets = {
      {"se_chain",
       "input: [12, 10, 9]\nlayers:\n"
       "  - {name: c1, type: conv, out_channels: 20, kernel: 3, pad: 1, activation: relu}\n"
       "  - {name: q, type: global_avgpool}\n"
       "  - {name: r, type: conv, out_channels: 5, kernel: 1, activation: relu}\n"
       "  - {name: e, type: conv, out_channels: 20, kernel: 1, activation: {table: e.npy}}\n"
       "  - {name: m, type: mul, inputs: [c1, e], activation: {clamp: [-30, 90]}}\n"
       "  - {name: m2, type: mul, inputs: [m, e]}\n"
       "  - {name: p, type: maxpool, kernel: 2}\n"
       "  - {name: f, type: fc, out_features: 6}\n"},
      {"se_of_input",
       "input: [9, 6, 6]\nlayers:\n"
       "  - {name: q, type: global_avgpool}\n"
       "  - {name: e, type: conv, out_channels: 9, kernel: 1, activation: {table: e.npy}}\n"
       "  - {name: m, type: mul, inputs: [input, e], activation: {table: m.npy}}\n"
       "  - {name: c, type: conv, out_channels: 9, kernel: 3, pad: 1}\n"
       "  - {name: a, type: add, inputs: [c, m]}\n"},
      {"vector_first",
       "input: [16, 5, 5]\nlayers:\n"
       "  - {name: q, type: global_avgpool}\n"
       "  - {name: e, type: conv, out_channels: 16, kernel: 1, activation: relu}\n"
       "  - {name: d, type: depthwise, kernel: 3, pad: 1, inputs: input}\n"
       "  - {name: m, type: mul, inputs: [d, e]}\n"
       "  - {name: f, type: fc, out_features: 3}\n"},
  };
  TempFiles files;
  const HwTarget tiny = HwTarget::from_yaml((kSource / "config" / "tiny.yaml").string());
  for (const auto& [name, yaml] : nets) {
    Network net = load_network(files.write(name + ".yaml", "name: " + name + "\n" + yaml),
                               LoadOptions{"", false});
    GenOptions go;
    go.seed = 21;
    generate_parameters(net, go, random_images(net.input_shape, go.images, 21));
    for (const HwTarget& target : {HwTarget::defaults(), p16n16(), tiny}) {
      const auto images = split(random_images(net.input_shape, 2, 22));
      const Program prog =
          check_network(net, target, images, fmt::format("{} on {}", name, target.name));
      int muls = 0;
      for (const CompiledOp& op : prog.ops) {
        if (op.kind != "mul") continue;
        ++muls;
        EXPECT_NE(op.detail.find("COMPUTE DEPTHWISE with the vector as weights"), std::string::npos)
            << op.detail;
      }
      EXPECT_EQ(muls, name == "se_chain" ? 2 : 1) << name << " on " << target.name;
    }
  }
}

// Table activations on conv (with a fused max pool, a clamp after it folded
// into the table), depthwise in both mappings, add and fc (into the PE caches
// and the last layer): resident when the distinct tables fit act_tables (8),
// loaded before each use into 2 slots or 1 slot otherwise (the dependencies
// order the reuse), on P = N = 8, P = N = 16 and the tiny target (tiles).
// Every output equals the golden model and both dependency modes are race free.
TEST(Compiler, TableActivationsEqualTheGoldenModel) {
  const std::string yaml =
      "name: tables\ninput: [5, 14, 14]\nlayers:\n"
      "  - {name: c1, type: conv, out_channels: 12, kernel: 3, pad: 1, activation: {table: "
      "t1.npy}}\n"
      "  - {name: r1, type: clamp, lo: -30, hi: 90}\n"
      "  - {name: p1, type: maxpool, kernel: 2}\n"
      "  - {name: d1, type: depthwise, kernel: 3, pad: 1, activation: {table: t2.npy}}\n"
      "  - {name: d2, type: depthwise, kernel: 5, pad: 2, activation: {table: t3.npy}}\n"
      "  - {name: a1, type: add, inputs: [d2, p1], activation: {table: t4.npy}}\n"
      "  - {name: c2, type: conv, out_channels: 9, kernel: 3, stride: 2, activation: {table: "
      "t5.npy}}\n"
      "  - {name: f1, type: fc, out_features: 20, activation: {table: t6.npy}}\n"
      "  - {name: f2, type: fc, out_features: 7, activation: {table: t7.npy}}\n";
  TempFiles files;
  Network net = load_network(files.write("tables.yaml", yaml), LoadOptions{"", false});
  GenOptions go;
  go.seed = 21;
  generate_parameters(net, go, random_images(net.input_shape, go.images, 21));
  HwTarget t8 = HwTarget::defaults(), big = p16n16(),
           tiny = HwTarget::from_yaml((kSource / "config" / "tiny.yaml").string());
  for (const auto& [target, slots] :
       {std::pair{t8, 8}, std::pair{big, 8}, std::pair{tiny, 2}, std::pair{tiny, 1}}) {
    HwTarget t = target;
    t.act_tables = slots;
    const std::string where = fmt::format("{} with act_tables {}", t.name, t.act_tables);
    const auto images = split(random_images(net.input_shape, 2, 22));
    const Program prog = check_network(net, t, images, where);
    int table_loads = 0, lookups = 0;
    for (const isa::Instruction& in : prog.instructions) {
      if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kLoad) &&
          isa::decode_load(in).dst_kind == isa::LoadDst::kTable) {
        ++table_loads;
      }
      if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kCompute) &&
          isa::decode_compute(in).act_table_en) {
        ++lookups;
      }
    }
    EXPECT_EQ(isa::decode_config(prog.instructions.front()).act_tables, std::min(7, t.act_tables))
        << where;
    EXPECT_GE(lookups, 7) << where;
    if (t.act_tables >= 7) {
      EXPECT_EQ(table_loads, 1) << where << ": resident tables, one LOAD";
    } else {
      EXPECT_EQ(table_loads, 2 * 5 + 2)
          << where << ": a LOAD before each use (per image; FC: per batch)";
    }
  }
  // Without the table unit: refused, naming the layer.
  try {
    HwTarget bare = HwTarget::defaults();
    bare.act_tables = 0;
    compile(net, bare, {});
    ADD_FAILURE() << "compiled tables for act_tables = 0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'c1'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("act_tables = 0"), std::string::npos) << e.what();
  }
  // A relu after a table layer: folded into the table, the COMPUTE's clamp stays full.
  Network folded =
      load_network(files.write("fold.yaml",
                               "name: fold\ninput: [3, 6, 6]\nlayers:\n"
                               "  - {name: c, type: conv, out_channels: 8, kernel: 3, pad: 1, "
                               "activation: {table: t.npy}}\n"
                               "  - {name: r, type: relu}\n"),
                   LoadOptions{"", false});
  generate_parameters(folded, go, random_images(folded.input_shape, go.images, 21));
  t8.act_tables = 8;
  const Program fp =
      check_network(folded, t8, split(random_images(folded.input_shape, 1, 3)), "folded relu");
  for (const isa::Instruction& in : fp.instructions) {
    if (in.opcode_value() != static_cast<uint64_t>(isa::Opcode::kCompute)) continue;
    const isa::ComputeInstr c = isa::decode_compute(in);
    EXPECT_TRUE(c.act_table_en);
    EXPECT_EQ(c.clamp_lo, -128);
    EXPECT_EQ(c.clamp_hi, 127);
  }
}

// Depthwise layers in COMPUTE mode DEPTHWISE and, where the window generator
// cannot run them, as grouped CONVs: kernel 3 at stride 1 and 2, kernel 2 and
// 1, asymmetric padding, a pool after a DEPTHWISE (an op of its own), kernel 5
// (grouped CONV), a depthwise right before an FC (grouped CONV: DEPTHWISE
// writes a bank), maps wider than the line buffer (column strips) and several
// channel groups; P = 8, P = 16 and the tiny target (16-pixel line buffer).
// The packing report (listing): each CONV op's weight passes, read back from
// the image as the PE caches take them, packed and checked exact. 50 % random
// zeros pack like the Monte-Carlo of docs/sparsity.md; a convolution with one
// non-zero tap per filter packs each pass into one row, and an all-zero pass
// still takes one; FC layers report no rows.
TEST(Compiler, PackingReportCountsEveryPassOfTheWeightsInTheImage) {
  Network net =
      load_network((kSource / "examples" / "cifar10_quick.yaml").string(), LoadOptions{"", false});
  GenOptions o;
  o.seed = 7;
  o.sparsity = 0.5;
  generate_parameters(net, o, random_images(net.input_shape, o.images, o.seed));
  const Program prog = compile(net, HwTarget::defaults());
  const std::vector<OpPacking> packing = op_packing(prog);
  ASSERT_EQ(packing.size(), prog.ops.size());
  // conv1 runs with the reordered input (5 x ceil(5 * 3 / 8) words, 32 / 8
  // passes), conv2 and conv3 5 x 5 x 32 / 8 words in 4 and 8 passes.
  const std::vector<int64_t> dense = {5 * 2 * 4, 25 * 4 * 4, 25 * 4 * 8, 0, 0};
  for (size_t k = 0; k < prog.ops.size(); ++k) {
    const OpPacking& q = packing[k];
    EXPECT_EQ(q.dense_rows, dense[k]) << prog.ops[k].name;
    if (q.dense_rows == 0) continue;
    EXPECT_GE(q.zero_slots * 2, q.slots) << prog.ops[k].name;
    EXPECT_GE(q.packed_rows * 2, q.dense_rows) << prog.ops[k].name << ": one-step moves";
    EXPECT_LE(q.packed_rows * 5, q.dense_rows * 4) << prog.ops[k].name << ": below 1.25x";
  }
  const std::string text = listing(prog);
  EXPECT_NE(text.find(fmt::format("{:>11} {:>11}", dense[2], packing[2].packed_rows)),
            std::string::npos)
      << text;

  TempFiles files;
  Network one = load_network(files.write("one_tap.yaml",
                                         "name: one_tap\ninput: [8, 6, 6]\nlayers:\n"
                                         "  - {name: c, type: conv, out_channels: 16, "
                                         "kernel: 3, pad: 1}\n"),
                             LoadOptions{"", false});
  generate_parameters(one, GenOptions{}, random_images(one.input_shape, 4, 1));
  Tensor<int8_t>& w = one.layers[0].weights;
  for (int64_t co = 0; co < 16; ++co) {
    for (int64_t ci = 0; ci < 8; ++ci) {
      for (int64_t ky = 0; ky < 3; ++ky) {
        for (int64_t kx = 0; kx < 3; ++kx) {
          // Filters 0..7: the centre tap only; filters 8..15 (the second pass): none.
          w(co, ci, ky, kx) = co < 8 && ky == 1 && kx == 1 ? int8_t(1 + ci) : int8_t(0);
        }
      }
    }
  }
  const std::vector<OpPacking> q = op_packing(compile(one, HwTarget::defaults()));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].dense_rows, 18);
  EXPECT_EQ(q[0].packed_rows, 2);
  EXPECT_EQ(q[0].zero_slots, q[0].slots - 64);
}

TEST(Compiler, DepthwiseLayersEqualTheGoldenModelInBothMappings) {
  struct Case {
    std::string name, yaml;
    int depthwise_ops, grouped_ops;  // per target
  };
  const std::vector<Case> nets = {
      {"dw_modes",
       "input: [20, 11, 13]\nlayers:\n"
       "  - {name: d1, type: depthwise, kernel: 3, pad: 1, activation: relu}\n"
       "  - {name: d2, type: depthwise, kernel: 3, stride: 2, pad: [0, 0, 1, 1]}\n"
       "  - {name: mp, type: maxpool, kernel: 2, stride: 1}\n"
       "  - {name: d3, type: depthwise, kernel: 2, pad: [1, 0, 0, 1]}\n"
       "  - {name: d4, type: depthwise, kernel: 5, pad: 2}\n"
       "  - {name: d5, type: depthwise, kernel: 1, stride: 2}\n",
       4, 1},
      {"dw_wide",
       "input: [10, 7, 150]\nlayers:\n"
       "  - {name: d1, type: depthwise, kernel: 3, pad: 1, activation: relu}\n"
       "  - {name: d2, type: depthwise, kernel: 3, stride: 2, pad: [1, 1, 0, 1]}\n"
       "  - {name: c, type: conv, out_channels: 9, kernel: 1}\n"
       "  - {name: d3, type: depthwise, kernel: 2, stride: 2}\n",
       3, 0},
      {"dw_before_fc",
       "input: [12, 6, 6]\nlayers:\n"
       "  - {name: d1, type: depthwise, kernel: 3, stride: 2, pad: 1}\n"
       "  - {name: d2, type: depthwise, kernel: 3, pad: 1}\n"
       "  - {name: fl, type: flatten}\n"
       "  - {name: fc, type: fc, out_features: 5}\n",
       1, 1},
  };
  const HwTarget tiny = HwTarget::from_yaml((kSource / "config" / "tiny.yaml").string());
  TempFiles files;
  for (const Case& c : nets) {
    Network net = load_network(files.write(c.name + ".yaml", "name: " + c.name + "\n" + c.yaml),
                               LoadOptions{"", false});
    GenOptions go;
    go.seed = 23;
    generate_parameters(net, go, random_images(net.input_shape, go.images, 23));
    for (const HwTarget& target : {HwTarget::defaults(), p16n16(), tiny}) {
      const std::string where = fmt::format("{} on {}", c.name, target.name);
      const auto images = split(random_images(net.input_shape, 2, 24));
      const Program prog = check_network(net, target, images, where);
      std::set<int64_t> dw_tags, conv_tags;
      int64_t widest = 0;
      for (const isa::Instruction& in : prog.instructions) {
        if (in.opcode_value() != static_cast<uint64_t>(isa::Opcode::kCompute)) continue;
        const isa::ComputeInstr ci = isa::decode_compute(in);
        if (ci.mode == isa::ComputeMode::kDepthwise) {
          dw_tags.insert(ci.hdr.tag);
          widest = std::max(widest, ci.in_w);
        } else if (ci.mode == isa::ComputeMode::kConv) {
          conv_tags.insert(ci.hdr.tag);
        }
      }
      int grouped = 0;
      for (const CompiledOp& op : prog.ops) {
        if (op.kind != "depthwise") continue;
        if (contains_text(op.detail, "grouped COMPUTE CONV")) {
          ++grouped;
          EXPECT_TRUE(conv_tags.count(op.tag)) << where << ": " << op.name;
        } else {
          EXPECT_TRUE(contains_text(op.detail, "COMPUTE DEPTHWISE")) << where << ": " << op.detail;
          EXPECT_TRUE(dw_tags.count(op.tag)) << where << ": " << op.name;
        }
      }
      EXPECT_EQ(static_cast<int>(dw_tags.size()), c.depthwise_ops) << where;
      EXPECT_EQ(grouped, c.grouped_ops) << where;
      EXPECT_LE(widest, target.max_image_width) << where;
      if (c.name == "dw_wide") {  // rows wider than the line buffer: in column strips
        EXPECT_LT(widest, 150) << where;
      }
      if (c.grouped_ops > 0) {
        bool why = false;
        for (const std::string& note : prog.notes) {
          why = why || contains_text(note, "exceeds max_pool_kernel") ||
                contains_text(note, "a fully-connected layer follows");
        }
        EXPECT_TRUE(why) << where << ": no note says why a depthwise layer is a grouped CONV";
      }
    }
  }
}

// strata run --backend isa: more images than one run holds run in batches of
// P, each executed in an order the semaphores allow (program order is not
// one: the dispatch-order pass moves computes ahead of loads), every image
// equal to the golden model, the last batch a shorter program.
TEST(Compiler, IsaBackendRunsEveryBatchInSemaphoreOrder) {
  const Network net = generated_example("inverted_residual_net", 9);
  const HwTarget target = HwTarget::defaults();
  const Tensor<int8_t> batch = random_images(net.input_shape, 2 * target.pes + 3, 21);
  IsaRunSummary summary;
  const Tensor<int8_t> got = run_isa_backend(net, target, batch, &summary).front();
  EXPECT_EQ(summary.runs, 3);
  EXPECT_EQ(summary.programs, 2);
  const auto images = split(batch);
  const auto outputs = split(got);
  ASSERT_EQ(outputs.size(), images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    expect_golden(net, images[i], outputs[i], fmt::format("image {}", i));
  }
}

// ---- the trained digits model: all 1797 images in batches of P --------------------------------

TEST(Digits, AllImagesInBatchesOfPMatchTheGoldenModelAndTheExpectedPredictions) {
  const fs::path dir = kSource / "examples" / "digits";
  const Network net = load_network((dir / "digits.yaml").string());
  const Tensor<int8_t> all = load_npy<int8_t>((dir / "images.npy").string());
  const Tensor<int32_t> expected = load_npy<int32_t>((dir / "expected_predictions.npy").string());
  const auto images = split(all);
  ASSERT_EQ(images.size(), 1797u);
  ASSERT_EQ(expected.size(), 1797);
  const HwTarget target = HwTarget::defaults();
  const int p = target.pes;
  CompileOptions full;
  full.batch = p;
  const Program prog_full = compile(net, target, full);
  CompileOptions rest;
  rest.batch = static_cast<int>(images.size() % p);
  const Program prog_rest = compile(net, target, rest);
  int64_t wrong_outputs = 0, wrong_predictions = 0;
  for (size_t first = 0; first < images.size(); first += p) {
    const size_t count = std::min<size_t>(p, images.size() - first);
    const Program& prog = count == static_cast<size_t>(p) ? prog_full : prog_rest;
    SimOptions o;
    o.check_dependencies = first == 0 || count != static_cast<size_t>(p);
    const std::vector<Tensor<int8_t>> chunk(images.begin() + first, images.begin() + first + count);
    const SimRun r = run_program(prog, chunk, o);
    if (o.check_dependencies) expect_clean(prog, r.sim, fmt::format("batch at {}", first));
    ASSERT_TRUE(r.sim.ok()) << describe_problems(r.sim);
    for (size_t i = 0; i < count; ++i) {
      const Tensor<int8_t>& out = r.outputs[i];
      if (out != run_network(net, chunk[i])) {
        if (wrong_outputs++ == 0) ADD_FAILURE() << "image " << first + i << " differs from golden";
      }
      int best = 0;
      for (int64_t k = 1; k < out.size(); ++k) {
        if (out[k] > out[best]) best = static_cast<int>(k);
      }
      if (best != expected[static_cast<int64_t>(first + i)]) ++wrong_predictions;
    }
  }
  EXPECT_EQ(wrong_outputs, 0);
  EXPECT_EQ(wrong_predictions, 0);
}

// ---- lowering decisions ------------------------------------------------------------------

TEST(Compiler, ReorderingTheFirstLayerNeverChangesTheResult) {
  const Network net = generated_example("cifar10_quick", 1);
  const auto images = split(random_images(net.input_shape, 2, 77));
  const Program plain = check_network(net, HwTarget::defaults(), images, "never", Reorder::kNever);
  const Program reordered =
      check_network(net, HwTarget::defaults(), images, "always", Reorder::kAlways);
  const Program automatic = check_network(net, HwTarget::defaults(), images, "auto");
  EXPECT_EQ(plain.input.layout, InputLayout::kMap);
  EXPECT_EQ(reordered.input.layout, InputLayout::kReordered);
  EXPECT_EQ(automatic.input.layout, InputLayout::kReordered)
      << "5x5 taps x 3 channels: fewer beats";
  EXPECT_EQ(reordered.input.groups, 2);  // 15 taps x channels in 8-lane words
  // The first convolution runs as 5x1 over the reordered 32 x 32 map.
  const isa::ComputeInstr* first = nullptr;
  isa::ComputeInstr c;
  for (const isa::Instruction& in : reordered.instructions) {
    if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kCompute)) {
      c = isa::decode_compute(in);
      first = &c;
      break;
    }
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(c.kernel_h, 5);
  EXPECT_EQ(c.kernel_w, 1);
  EXPECT_EQ(c.pad_left, 0);
  EXPECT_EQ(c.pad_right, 0);
  EXPECT_EQ(c.pad_top, c.pad_bottom);
  EXPECT_EQ(c.in_groups, 2);
  // Fewer PE-array beats with the reordered input.
  std::vector<uint8_t> m1 = plain.image, m2 = reordered.image;
  const SimResult r1 = IsaSim(plain.target).run(m1);
  const SimResult r2 = IsaSim(reordered.target).run(m2);
  EXPECT_LT(r2.beats, r1.beats);
}

TEST(Compiler, PlainLayoutWhenReorderingDoesNotSaveBeats) {
  // 1x1 convolution: one tap, reordering cannot help.
  Network net = generated_example("strided_net", 3);
  const auto images = split(random_images(net.input_shape, 1, 5));
  const Program prog = check_network(net, HwTarget::defaults(), images, "strided");
  EXPECT_EQ(prog.input.layout, InputLayout::kReordered);  // conv1 3x3 s2 on 3 channels
  bool gap_note = false;
  for (const std::string& n : prog.notes) {
    gap_note = gap_note || n.find("identity weights, M = 1, S = 4") != std::string::npos;
  }
  EXPECT_TRUE(gap_note) << "the 4x4 global average pool runs as a convolution";
}

TEST(Compiler, FusionMovesClampsAndFreesFlatten) {
  const Network net = generated_example("cifar10_quick", 1);
  const Program prog = compile(net, HwTarget::defaults());
  ASSERT_EQ(prog.ops.size(), 5u);
  EXPECT_EQ(prog.ops[0].name, "conv1+pool1+relu1");
  EXPECT_NE(prog.ops[0].detail.find("clamp [0, 127], maxpool 3/2/0 ceil"), std::string::npos)
      << prog.ops[0].detail;
  EXPECT_EQ(prog.ops[1].name, "conv2+pool2");
  EXPECT_EQ(prog.ops[3].kind, "fc");
  const Network strided = generated_example("strided_net", 3);
  const Program sp = compile(strided, HwTarget::defaults());
  EXPECT_EQ(sp.ops.back().name, "fc");
  EXPECT_EQ(sp.ops[sp.ops.size() - 2].name, "gap+flat");
}

// A conv on an 8-channel 8x8 input: the dependency numbers of docs/compiler.md.
TEST(Compiler, FineGrainedCountsOfAFirstLayer) {
  TempFiles files;
  const std::string yaml = files.write("one.yaml", R"(name: one
input: [8, 8, 8]
layers:
  - {name: c, type: conv, out_channels: 8, kernel: 3, pad: 1, requant: {multiplier: 1, shift: 8}}
)");
  Network net = load_network(yaml, LoadOptions{"", false});
  GenOptions go;
  generate_parameters(net, go, random_images(net.input_shape, 1, 1));
  const Program prog = compile(net, HwTarget::defaults());
  isa::Header h;
  isa::Header store;
  for (const isa::Instruction& in : prog.instructions) {
    if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kCompute))
      h = isa::decode_header(in);
    if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kStore))
      store = isa::decode_header(in);
  }
  // params (1 row) + weights (8 rows, one per PE) + input (8 rows).
  EXPECT_EQ(h.acq0, 17);
  EXPECT_EQ(h.acq0_first, 1 + 8 + 2);  // k - pad = 2 input rows for output row 0
  EXPECT_EQ(h.acq0_step, 1);           // then stride rows per output row
  EXPECT_EQ(h.rel0, 8);                // one C2S unit per output row
  EXPECT_EQ(store.acq0, 8);
  EXPECT_EQ(store.acq0_first, 1);
  EXPECT_EQ(store.acq0_step, 1);
  const auto images = split(random_images(net.input_shape, 1, 3));
  check_network(net, HwTarget::defaults(), images, "one conv");
}

// ---- target variants: allocation paths ----------------------------------------------------

struct TargetCase {
  std::string name;
  std::function<void(HwTarget&)> edit;
  std::string note;  // a note the program must carry
};

TEST(Compiler, EveryAllocationPathComputesTheSameResults) {
  const std::vector<TargetCase> cases = {
      {"resident weights", [](HwTarget& t) { t.pe_cache_depth = 4096; }, "resident"},
      {"overlapping weight slots", [](HwTarget& t) { t.pe_cache_depth = 300; },
       "two overlapping slots"},
      {"params per use", [](HwTarget& t) { t.param_depth = 72; }, "loaded before each use"},
      {"two banks", [](HwTarget& t) { t.banks = 2; }, ""},
      {"small banks", [](HwTarget& t) { t.bank_depth = 2048; }, "tiles of 16"},
      {"32-bit AXI", [](HwTarget& t) { t.axi_data_width = 32; }, ""},
  };
  const Network net = generated_example("cifar10_quick", 1);
  const auto images = split(random_images(net.input_shape, 3, 9));
  for (const TargetCase& c : cases) {
    HwTarget t = HwTarget::defaults();
    c.edit(t);
    const Program prog = check_network(net, t, images, c.name);
    if (c.note.empty()) continue;
    bool found = false;
    for (const std::string& n : prog.notes) found = found || n.find(c.note) != std::string::npos;
    EXPECT_TRUE(found) << c.name << ": no note with '" << c.note << "'";
  }
}

TEST(Compiler, ProgramsRunWithAQueueOfOneInstructionPerEngine) {
  const Network net = generated_example("lenet5", 2);
  const auto images = split(random_images(net.input_shape, 4, 2));
  CompileOptions o;
  o.batch = 4;
  const Program prog = compile(net, HwTarget::defaults(), o);
  SimOptions so;
  so.queue_depth = 1;
  const SimRun r = run_program(prog, images, so);
  expect_clean(prog, r.sim, "queue depth 1");
}

// ---- I/O description ---------------------------------------------------------------------

TEST(Compiler, InputAndOutputAccessCheckTheirArguments) {
  const Network net = generated_example("lenet5", 2);
  CompileOptions o;
  o.batch = 2;
  const Program prog = compile(net, HwTarget::defaults(), o);
  std::vector<uint8_t> memory = prog.image;
  const Tensor<int8_t> good(net.input_shape);
  EXPECT_THROW(write_input(prog, memory, 2, good), Error);
  EXPECT_THROW(write_input(prog, memory, -1, good), Error);
  EXPECT_THROW(write_input(prog, memory, 0, Tensor<int8_t>({1, 32, 31})), Error);
  std::vector<uint8_t> small(100);
  EXPECT_THROW(write_input(prog, small, 0, good), Error);
  EXPECT_THROW(read_output(prog, small, 0), Error);
  EXPECT_THROW(read_output(prog, memory, 5), Error);
  EXPECT_NO_THROW(write_input(prog, memory, 1, good));
  EXPECT_EQ(read_output(prog, memory, 1).shape(), net.output_shape());
  EXPECT_THROW(prog.region("nothing"), Error);
  for (const MemRegion& r : prog.regions) EXPECT_EQ(r.offset % 64, 0u) << r.name;
  EXPECT_EQ(prog.region("instructions").offset, 0u);
  EXPECT_EQ(prog.region("instructions").size, prog.instructions.size() * isa::kInstrBytes);
  EXPECT_LT(prog.region("params").offset, prog.region("weights").offset);
  EXPECT_LT(prog.region("weights").offset, prog.region("input0").offset);
  EXPECT_LT(prog.region("input1").offset, prog.region("output").offset);
}

TEST(Compiler, ListingShowsRegionsOpsAndEveryInstruction) {
  const Network net = generated_example("lenet5", 2);
  const Program prog = compile(net, HwTarget::defaults());
  const std::string text = listing(prog);
  for (const char* part : {"network 'lenet5'", "instructions", "params", "weights", "input0",
                           "output", "c1+s2", "f7", "CONFIG", "END"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    EXPECT_NE(text.find(isa::disassemble(prog.instructions[i])), std::string::npos) << i;
  }
}

// ---- random networks -----------------------------------------------------------------------

// A random valid network: conv / pool / clamp stacks with random geometry
// (padding, stride 2, ceil mode, 1x1 kernels, few and many channels, the
// 4x4 average pool that runs as a convolution), then fully-connected layers.
std::string random_network(std::mt19937_64& rng, const std::string& name) {
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int c = pick(0, 2) == 0 ? pick(1, 3) : pick(1, 20);
  int h = pick(1, 14), w = pick(1, 14);
  std::string out = fmt::format("name: {}\ninput: [{}, {}, {}]\nlayers:\n", name, c, h, w);
  const auto activation = [&]() -> std::string {
    switch (pick(0, 2)) {
      case 0:
        return "none";
      case 1:
        return "relu";
      default: {
        const int lo = pick(-128, 40);
        return fmt::format("{{clamp: [{}, {}]}}", lo, pick(lo, 127));
      }
    }
  };
  const int count = pick(1, 6);
  bool fc = false;
  for (int i = 0; i < count; ++i) {
    const std::string ln = fmt::format("l{}", i);
    const int kind = fc ? pick(6, 9) : pick(0, 9);
    if (kind <= 3) {  // convolution
      const int k = pick(0, 3) == 0 ? 1 : pick(1, 5);
      const int s = pick(1, 2);
      int pad = pick(0, k - 1);
      if (h + 2 * pad < k || w + 2 * pad < k) pad = k - 1;
      const int oc = pick(0, 4) == 0 ? pick(9, 24) : pick(1, 12);
      out += fmt::format(
          "  - {{name: {}, type: conv, out_channels: {}, kernel: {}, stride: {}, "
          "pad: {}, activation: {}}}\n",
          ln, oc, k, s, pad, activation());
      h = (h + 2 * pad - k) / s + 1;
      w = (w + 2 * pad - k) / s + 1;
      c = oc;
    }
    if (kind <= 5 && (kind >= 4 || pick(0, 2) == 0)) {  // pooling, often right after a conv
      const bool avg = pick(0, 1) == 1;
      if (avg && h >= 4 && w >= 4 && pick(0, 3) == 0) {  // too big for the pooling unit
        out += fmt::format("  - {{name: {}p, type: avgpool, kernel: 4}}\n", ln);
        h = (h - 4) / 4 + 1;
        w = (w - 4) / 4 + 1;
        continue;
      }
      const int k = pick(1, 3), s = pick(1, 3);
      int pad = pick(0, k - 1);
      if (h + 2 * pad < k || w + 2 * pad < k) pad = k - 1;
      const bool ceil = pick(0, 1) == 1;
      out += fmt::format(
          "  - {{name: {}p, type: {}, kernel: {}, stride: {}, pad: {}, ceil_mode: "
          "{}}}\n",
          ln, avg ? "avgpool" : "maxpool", k, s, pad, ceil ? "true" : "false");
      const PoolGeometry g{k, s, pad, ceil};
      h = pool_out_size(h, g);
      w = pool_out_size(w, g);
    } else if (kind <= 5) {
      continue;
    } else if (kind == 6) {
      out += fmt::format("  - {{name: {}, type: relu}}\n", ln);
    } else if (kind == 7) {
      const int lo = pick(-128, 60);
      out += fmt::format("  - {{name: {}, type: clamp, lo: {}, hi: {}}}\n", ln, lo, pick(lo, 127));
    } else {  // fully connected, sometimes after an explicit flatten
      if (!fc && pick(0, 1) == 1) out += fmt::format("  - {{name: {}f, type: flatten}}\n", ln);
      const int features = pick(1, 40);
      out += fmt::format("  - {{name: {}, type: fc, out_features: {}, activation: {}}}\n", ln,
                         features, activation());
      fc = true;
      c = features;
      h = w = 1;
    }
  }
  return out;
}

// Seeds that once failed; they run first, every time.
const std::vector<uint64_t> kRegressionSeeds = {
    1298,  // FC tile of 7 neurons before another FC: transposed tiles off word boundaries
};

TEST(RandomNetworks, CompiledAndSimulatedEqualTheGoldenModel) {
  const uint64_t base = test_seed(20240601);
  constexpr int kNetworks = 300;
  std::cout << "[ SEED     ] RandomNetworks STRATA_SEED=" << base << std::endl;
  std::vector<uint64_t> seeds = kRegressionSeeds;
  for (int i = 0; i < kNetworks; ++i) seeds.push_back(base + static_cast<uint64_t>(i));
  TempFiles files;
  int64_t compiled = 0, ops = 0, reordered = 0, multi_pass = 0, fused_pool = 0;
  for (const uint64_t seed : seeds) {
    std::mt19937_64 rng(seed);
    const std::string text = random_network(rng, "random");
    const std::string path = files.write(fmt::format("net_{}.yaml", seed), text);
    const std::string where = fmt::format("seed {} (STRATA_SEED={}):\n{}", seed, seed, text);
    try {
      Network net = load_network(path, LoadOptions{"", false});
      GenOptions go;
      go.seed = seed;
      go.images = 2;
      generate_parameters(net, go, random_images(net.input_shape, go.images, seed));
      const HwTarget target = seed % 4 == 3 ? p16n16() : HwTarget::defaults();
      const int batch = 1 + static_cast<int>(rng() % static_cast<uint64_t>(target.pes));
      const Reorder reorder = static_cast<Reorder>(rng() % 3);
      const auto images = split(random_images(net.input_shape, batch, seed + 7));
      const Program prog = check_network(net, target, images, where, reorder);
      ++compiled;
      ops += static_cast<int64_t>(prog.ops.size());
      reordered += prog.input.layout == InputLayout::kReordered ? 1 : 0;
      for (const CompiledOp& op : prog.ops) {
        multi_pass += op.detail.find("passes") != std::string::npos ? 1 : 0;
        fused_pool += op.kind == "conv" && op.detail.find("pool ") != std::string::npos ? 1 : 0;
      }
    } catch (const Error& e) {
      ADD_FAILURE() << where << "\n" << e.what();
    }
    if (::testing::Test::HasFailure()) break;  // one network's report is enough
  }
  std::cout << "[ COVERAGE ] " << compiled << " networks, " << ops << " ops, " << reordered
            << " with a reordered input, " << multi_pass << " multi-pass convolutions, "
            << fused_pool << " convolutions with a fused pool" << std::endl;
  // The generator must keep exercising what it is for.
  EXPECT_EQ(compiled, static_cast<int64_t>(seeds.size()));
  EXPECT_GT(reordered, 10);
  EXPECT_GT(multi_pass, 10);
  EXPECT_GT(fused_pool, 10);
}

// ---- what the target cannot run ----------------------------------------------------------

struct LimitCase {
  std::string name;
  std::string yaml;                       // the layers (input line included)
  std::function<void(HwTarget&)> target;  // edits of the default target
  std::string layer;                      // the layer the error names ("" = none)
  std::vector<std::string> parts;         // substrings of the message
  int batch = 1;
};

TEST(CompilerLimits, WhatTheTargetCannotRunIsAClearError) {
  const auto none = [](HwTarget&) {};
  const std::vector<LimitCase> cases = {
      {"kernel",
       "input: [4, 12, 12]\nlayers:\n  - {name: big, type: conv, out_channels: 4, kernel: 9}\n",
       none,
       "big",
       {"kernel 9 exceeds the target's max_kernel 7", "bounded by max_kernel",
        "[rule conv.kernel]"}},
      // (A convolution would run split over chunks of its input groups; a pool handles
      // every group of a pixel at once.)
      {"no tile fits",
       "input: [4096, 2, 2]\nlayers:\n  - {name: c, type: maxpool, kernel: 2}\n",
       [](HwTarget& t) { t.bank_depth = 256; },
       "c",
       {"input feature map [4096][2][2] (512 words per pixel) cannot be split into tiles that fit",
        "bank_depth", "[rule compute.in_range]"}},
      {"weights per pass",
       "input: [8, 6, 6]\nlayers:\n  - {name: w5, type: conv, out_channels: 8, kernel: 5, pad: "
       "2}\n",
       [](HwTarget& t) { t.pe_cache_depth = 16; },
       "w5",
       {"the weights of one pass need 25 words in every PE cache, 16 are free",
        "[rule compute.cache_range]"}},
      {"max pool kernel, no smaller window to cascade",
       "input: [8, 8, 8]\nlayers:\n  - {name: p4, type: maxpool, kernel: 4}\n",
       [](HwTarget& t) { t.max_pool_kernel = 1; },
       "p4",
       {"pooling window 4 exceeds the target's max_pool_kernel 1", "[rule pool.kernel]"}},
      {"avg pool kernel, cut windows",
       "input: [8, 7, 7]\nlayers:\n  - {name: a4, type: avgpool, kernel: 4, stride: 2, ceil_mode: "
       "true}\n",
       none,
       "a4",
       {"pooling window 4 exceeds the target's max_pool_kernel 3", "power-of-two"}},
      {"one pass's channels",
       "input: [8, 4, 4]\nlayers:\n  - {name: many, type: conv, out_channels: 8, kernel: 1}\n",
       [](HwTarget& t) { t.param_depth = 4; },
       "many",
       {"8 output channels need 8 parameter entries, the parameter RAM holds 4 (param_depth)",
        "[rule compute.param_range]"}},
      {"fc features",
       "input: [8, 6, 10]\nlayers:\n  - {name: f, type: fc, out_features: 100}\n  - {name: f2, "
       "type: fc, out_features: 4}\n",
       [](HwTarget& t) { t.pe_cache_depth = 64; },
       "f",
       {"features of the fully-connected layers need 60 + 13 words", "pe_cache_depth",
        "[rule compute.cache_range]"}},
      {"fc neuron, split, too few banks",
       "input: [8, 10, 10]\nlayers:\n  - {name: f, type: fc, out_features: 4}\n",
       [](HwTarget& t) {
         t.bank_depth = 64;
         t.banks = 2;
       },
       "f",
       {"one neuron's weights need 100 words", "they need 3 banks, the target has 2",
        "[rule compute.in_range]"}},
      {"conv after fc",
       "input: [4, 1, 1]\nlayers:\n  - {name: f, type: fc, out_features: 4}\n  - {name: c, type: "
       "conv, out_channels: 4, kernel: 1}\n",
       none,
       "c",
       {"a convolution after a fully-connected layer is not supported"}},
      {"pool after fc",
       "input: [4, 1, 1]\nlayers:\n  - {name: f, type: fc, out_features: 4}\n  - {name: p, type: "
       "maxpool, kernel: 1}\n",
       none,
       "p",
       {"pooling after a fully-connected layer is not supported"}},
      {"conv after flatten",
       "input: [2, 3, 3]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: c, type: conv, "
       "out_channels: 4, kernel: 1}\n",
       none,
       "c",
       {"after flatten"}},
      // A clamp of a flattened map is still one (the op keeps the map as stored): a
      // pool, depthwise or global pool after it is refused, not fused with the map.
      {"avg pool after conv, flatten, clamp",
       "input: [7, 8, 8]\nlayers:\n  - {name: c, type: conv, out_channels: 12, kernel: 5}\n  - "
       "{name: fl, type: flatten}\n  - {name: cl, type: clamp, lo: 74, hi: 117}\n  - {name: p, "
       "type: avgpool, kernel: 2, pad: [1, 1, 0, 1]}\n",
       none,
       "p",
       {"pooling after flatten of a map larger than 1x1 is not supported"}},
      {"avg pool after flatten, relu of the input",
       "input: [28, 8, 8]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: relu}\n  - "
       "{name: p, type: avgpool, kernel: 1, stride: 3}\n",
       none,
       "p",
       {"pooling after flatten of a map larger than 1x1 is not supported"}},
      {"global pool after flatten, relu",
       "input: [1, 2, 2]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: relu}\n  - "
       "{name: g, type: global_avgpool}\n",
       none,
       "g",
       {"a global average pool after flatten of a map larger than 1x1 is not supported"}},
      {"depthwise after flatten, relu, flatten",
       "input: [9, 12, 12]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: relu}\n  - "
       "{name: fl2, type: flatten}\n  - {name: d, type: depthwise, kernel: 1, stride: 2}\n",
       none,
       "d",
       {"a depthwise convolution after flatten of a map larger than 1x1 is not supported"}},
      {"add of a flattened map",
       "input: [2, 2, 2]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: g, type: "
       "global_avgpool, inputs: input}\n  - {name: c, type: conv, out_channels: 8, kernel: 1}\n  - "
       "{name: a, type: add, inputs: [c, fl]}\n",
       none,
       "a",
       {"an add after flatten of a map larger than 1x1 is not supported"}},
      {"add of an fc result as its second operand",
       "input: [2, 2, 2]\nlayers:\n  - {name: f, type: fc, out_features: 4}\n  - {name: p, type: "
       "conv, out_channels: 4, kernel: 1, stride: 2, inputs: input}\n  - {name: a, type: add, "
       "inputs: [p, f]}\n",
       none,
       "a",
       {"an add after a fully-connected layer is not supported"}},
      {"mul by the network input",
       "input: [4, 1, 1]\nlayers:\n  - {name: c, type: conv, out_channels: 4, kernel: 1}\n  - "
       "{name: m, type: mul, inputs: [c, input]}\n",
       none,
       "m",
       {"a mul whose vector is the network input is not supported"}},
      {"batch above P",
       "input: [4, 4, 4]\nlayers:\n  - {name: c, type: conv, out_channels: 4, kernel: 1}\n",
       none,
       "",
       {"batch 9 is outside 1..8"},
       9},
      {"batch 0",
       "input: [4, 4, 4]\nlayers:\n  - {name: c, type: conv, out_channels: 4, kernel: 1}\n",
       none,
       "",
       {"batch 0 is outside 1..8"},
       0},
  };
  TempFiles files;
  for (const LimitCase& c : cases) {
    const std::string path = files.write("limit.yaml", "name: limit\n" + c.yaml);
    Network net = load_network(path, LoadOptions{"", false});
    GenOptions go;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, 1));
    HwTarget t = HwTarget::defaults();
    c.target(t);
    CompileOptions o;
    o.batch = c.batch;
    try {
      compile(net, t, o);
      ADD_FAILURE() << c.name << ": compiled";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.where().layer, c.layer) << c.name << ": " << what;
      EXPECT_EQ(e.where().file, path) << c.name << ": " << what;
      if (!c.layer.empty()) {
        int line = 0;
        for (const Layer& l : net.layers) {
          if (l.name == c.layer) line = l.line;
        }
        EXPECT_EQ(e.where().line, line) << c.name << ": " << what;
      }
      for (const std::string& part : c.parts) {
        EXPECT_NE(what.find(part), std::string::npos)
            << c.name << ": '" << part << "' not in " << what;
      }
    }
  }
}

// Max pools larger than the pooling unit (docs/compiler.md, Lowering rules): a
// cascade of stride-1 max windows of at most max_pool_kernel, the last with the
// stride. YOLO's SPPF pool (5x5, stride 1, pad 2), then a sample of kernels 4..11,
// strides 1..min(k, 8), pads 0..k-1 per side and both ceil modes, each on the pool
// alone (POOL ops), after a convolution (the first window fused, a ReLU after the
// pool) or after a clamp of the input (its 1x1 POOL takes the first window), for
// one random and one all-negative map (a padded tap taken as 0 would show there),
// compiled for the default and the tiny target (16-pixel line buffer: column
// strips): every element equals the golden model, dependencies clean in both
// modes, and the listing notes name the cascade.
// Convolutions with channel groups, and concats, slices and upsamples, on every
// configuration: groups that line up with the lanes and PEs run pass by pass
// on their own input groups (several passes per group too), the others over
// every channel with zero weights; views read directly or gathered first; in
// whole maps and in tiles. Every output element equals the golden model's.
TEST(Compiler, GroupedConvolutionsAndViewsEqualTheGoldenModel) {
  const std::vector<std::string> nets = {
      // groups of 8 and 16 inputs, 16 and 32 filters: aligned at P = N = 8 (and 16)
      "input: [32, 12, 10]\nlayers:\n"
      "  - {name: g1, type: conv, out_channels: 64, kernel: 3, pad: 1, groups: 2, activation: "
      "relu}\n"
      "  - {name: g2, type: conv, out_channels: 32, kernel: 3, stride: 2, pad: 1, groups: 4}\n"
      "  - {name: p, type: maxpool, kernel: 2}\n"
      "  - {name: g3, type: conv, out_channels: 16, kernel: 1, groups: 16}\n",
      // a large map (tiled), groups not on the lanes, a depthwise-shaped group count
      "input: [12, 70, 90]\nlayers:\n"
      "  - {name: g1, type: conv, out_channels: 24, kernel: 3, pad: 1, groups: 3}\n"
      "  - {name: g2, type: conv, out_channels: 24, kernel: 3, pad: 1, groups: 24}\n"
      "  - {name: up, type: upsample, scale: 2, inputs: input}\n"
      "  - {name: dn, type: conv, out_channels: 12, kernel: 2, stride: 2, inputs: up}\n"
      "  - {name: k, type: concat, inputs: [g2, dn]}\n"
      "  - {name: s, type: slice, begin: 5, end: 33}\n"
      "  - {name: g3, type: conv, out_channels: 16, kernel: 3, pad: 1, groups: 4}\n",
      // a view read by a pool, an add, a depthwise layer and as the network output
      "input: [16, 9, 9]\nlayers:\n"
      "  - {name: a, type: conv, out_channels: 16, kernel: 3, pad: 1, activation: relu}\n"
      "  - {name: k, type: concat, inputs: [a, input]}\n"
      "  - {name: mp, type: maxpool, kernel: 3, stride: 1, pad: 1}\n"
      "  - {name: s, type: slice, inputs: mp, begin: 8, end: 24}\n"
      "  - {name: ad, type: add, inputs: [s, a]}\n"
      "  - {name: dw, type: depthwise, kernel: 3, pad: 1, inputs: k}\n"
      "  - {name: s2, type: slice, inputs: dw, begin: 3, end: 19}\n"
      "  - {name: k2, type: concat, inputs: [ad, s2]}\n"
      "  - {name: u2, type: upsample, scale: 3}\n"};
  std::vector<HwTarget> targets = {HwTarget::defaults()};
  for (const char* c : {"tiny", "p4n4", "p16n16", "sparse"}) {
    targets.push_back(
        HwTarget::from_yaml((kSource / "config" / (std::string(c) + ".yaml")).string()));
  }
  TempFiles files;
  int aligned = 0;
  for (size_t i = 0; i < nets.size(); ++i) {
    Network net = load_network(files.write("g.yaml", fmt::format("name: g{}\n{}", i, nets[i])),
                               LoadOptions{"", false});
    GenOptions go;
    go.seed = i + 1;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, i + 1));
    const std::vector<Tensor<int8_t>> images = split(random_images(net.input_shape, 2, 77 + i));
    for (const HwTarget& t : targets) {
      const Program prog =
          check_network(net, t, images, fmt::format("network {} on {}", i, t.name));
      aligned += contains_text(listing(prog), "input group") ? 1 : 0;
    }
  }
  EXPECT_GE(aligned, 5) << "the aligned grouped path ran";
}

// Several network outputs (docs/compiler.md, "Several outputs"): outputs read
// by later layers, a view (concat, upsample) as an output, a flattened map, a
// pool whose max pool cascade ends in an output, an output inside what would be
// one fused op (conv then relu), and the last layer listed first; on every
// configuration, in whole maps and tiles, every output equals the golden model's
// and each output other than the last layer's has its own region per image.
TEST(Compiler, SeveralOutputsEqualTheGoldenModel) {
  const std::vector<std::string> nets = {
      "input: [12, 14, 10]\noutputs: [h2, c1, k, f]\nlayers:\n"
      "  - {name: c1, type: conv, out_channels: 16, kernel: 3, pad: 1}\n"
      "  - {name: r1, type: relu}\n"
      "  - {name: p1, type: maxpool, kernel: 5, stride: 2, pad: 2}\n"
      "  - {name: up, type: upsample, scale: 2, inputs: p1}\n"
      "  - {name: k, type: concat, inputs: [up, r1]}\n"
      "  - {name: f, type: flatten, inputs: p1}\n"
      "  - {name: h2, type: conv, out_channels: 9, kernel: 1, inputs: k}\n",
      "input: [3, 40, 36]\noutputs: [head1, head2]\nlayers:\n"
      "  - {name: c1, type: conv, out_channels: 8, kernel: 3, stride: 2, pad: 1, activation: "
      "relu}\n"
      "  - {name: c2, type: conv, out_channels: 16, kernel: 3, stride: 2, pad: 1, activation: "
      "relu}\n"
      "  - {name: head1, type: conv, out_channels: 5, kernel: 1}\n"
      "  - {name: c3, type: conv, out_channels: 16, kernel: 3, pad: 1, inputs: c2}\n"
      "  - {name: g, type: global_avgpool}\n"
      "  - {name: head2, type: fc, out_features: 7}\n",
      // an output read through a flatten by a clamp, which must not fuse into its op
      "input: [1, 3, 3]\noutputs: [l2, l0]\nlayers:\n"
      "  - {name: l0, type: conv, out_channels: 3, kernel: 1, activation: relu}\n"
      "  - {name: l1, type: flatten}\n"
      "  - {name: l2, type: clamp, lo: 47, hi: 110}\n"};
  std::vector<HwTarget> targets = {HwTarget::defaults()};
  for (const char* c : {"tiny", "p4n4", "p16n16"}) {
    targets.push_back(
        HwTarget::from_yaml((kSource / "config" / (std::string(c) + ".yaml")).string()));
  }
  TempFiles files;
  for (size_t i = 0; i < nets.size(); ++i) {
    Network net = load_network(files.write("o.yaml", fmt::format("name: o{}\n{}", i, nets[i])),
                               LoadOptions{"", false});
    GenOptions go;
    go.seed = i + 3;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, i + 3));
    const std::vector<Tensor<int8_t>> images = split(random_images(net.input_shape, 2, 91 + i));
    for (const HwTarget& t : targets) {
      const std::string where = fmt::format("network {} on {}", i, t.name);
      const Program prog = check_network(net, t, images, where);
      ASSERT_EQ(prog.outputs.size(), net.output_count()) << where;
      for (size_t j = 0; j < prog.outputs.size(); ++j) {
        const OutputPlacement& o = prog.outputs[j];
        EXPECT_EQ(o.layer, net.output_name(j)) << where;
        EXPECT_EQ(o.shape, net.output_shape(j)) << where;
        const bool last = net.outputs[j] + 1 == static_cast<int>(net.layers.size());
        EXPECT_EQ(o.layout == OutputLayout::kRowMap, !last) << where << " output " << j;
        if (last) continue;
        for (int img = 0; img < 2; ++img) {
          const MemRegion& r = prog.region(fmt::format("output{}:{}", img, o.layer));
          EXPECT_EQ(r.offset, o.image_addr[static_cast<size_t>(img)]) << where;
        }
      }
    }
  }
}

// What the compiler refuses about outputs, naming the layer.
TEST(Compiler, OutputsItCannotStoreAreRefusedNamingTheLayer) {
  struct Case {
    std::string yaml, layer, text;
  };
  const std::vector<Case> cases = {
      {"outputs: [f1, c]\nlayers:\n  - {name: f1, type: fc, out_features: 4}\n"
       "  - {name: c, type: conv, out_channels: 2, kernel: 1, inputs: input}\n",
       "f1", "only the last layer may be a network output that a fully-connected layer computes"},
      {"outputs: [fl, c]\nlayers:\n  - {name: fl, type: flatten}\n"
       "  - {name: c, type: conv, out_channels: 2, kernel: 1, inputs: input}\n",
       "fl", "a network output that is the network input unchanged"},
      {"outputs: [c, f]\nlayers:\n  - {name: c, type: conv, out_channels: 2, kernel: 1}\n"
       "  - {name: fl, type: flatten}\n  - {name: f, type: fc, out_features: 3}\n",
       "f", "a fully-connected layer reads 'c', a network output: not supported"},
  };
  TempFiles files;
  for (const Case& c : cases) {
    Network net = load_network(files.write("r.yaml", "name: r\ninput: [2, 4, 4]\n" + c.yaml),
                               LoadOptions{"", false});
    GenOptions go;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, 1));
    try {
      compile(net, HwTarget::defaults());
      ADD_FAILURE() << "compiled: " << c.yaml;
    } catch (const Error& e) {
      EXPECT_EQ(e.where().layer, c.layer) << e.what();
      EXPECT_NE(e.message().find(c.text), std::string::npos) << e.what();
    }
  }
}

TEST(Compiler, MaxPoolsLargerThanThePoolingUnitEqualTheGoldenModel) {
  struct Geometry {
    int k, s, top, left, bottom, right;
    bool ceil;
  };
  const uint64_t seed = test_seed(41);
  std::mt19937_64 rng(seed);
  const auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Geometry> geometries = {{5, 1, 2, 2, 2, 2, false},
                                      {11, 8, 10, 0, 3, 10, true},
                                      {4, 4, 0, 0, 0, 0, false},
                                      {9, 1, 4, 4, 4, 4, true}};
  for (int k = 4; k <= 11; ++k) {
    for (int i = 0; i < 40; ++i) {
      geometries.push_back(Geometry{k, draw(1, std::min(k, 8)), draw(0, k - 1), draw(0, k - 1),
                                    draw(0, k - 1), draw(0, k - 1), draw(0, 1) == 1});
    }
  }
  const HwTarget standard = HwTarget::defaults();
  const HwTarget tiny = HwTarget::from_yaml((kSource / "config" / "tiny.yaml").string());
  TempFiles files;
  int runs = 0, cascades = 0;
  for (size_t gi = 0; gi < geometries.size(); ++gi) {
    const Geometry& g = geometries[gi];
    const int variant = static_cast<int>(gi % 3);
    const int c = draw(1, 12);
    const int h = draw(std::max(1, g.k - g.top - g.bottom), g.k + 10);
    const int w = draw(std::max(1, g.k - g.left - g.right), g.k + 14);
    std::string yaml = fmt::format("name: mp{}\ninput: [{}, {}, {}]\nlayers:\n", gi, c, h, w);
    if (variant == 1) {
      yaml += fmt::format("  - {{name: c, type: conv, out_channels: {}, kernel: 3, pad: 1}}\n",
                          draw(1, 12));
    } else if (variant == 2) {
      yaml += "  - {name: cl, type: clamp, lo: -100, hi: 90}\n";
    }
    yaml += fmt::format(
        "  - {{name: p, type: maxpool, kernel: {}, stride: {}, pad: [{}, {}, {}, {}], "
        "ceil_mode: {}}}\n",
        g.k, g.s, g.top, g.left, g.bottom, g.right, g.ceil ? "true" : "false");
    if (variant == 1) yaml += "  - {name: r, type: relu}\n";
    const std::string where = fmt::format(
        "max pool {}x{} stride {} pad [{}, {}, {}, {}]{} on [{}, {}, {}], variant {} (seed {})",
        g.k, g.k, g.s, g.top, g.left, g.bottom, g.right, g.ceil ? " ceil" : "", c, h, w, variant,
        seed);
    Network net;
    try {
      net = load_network(files.write("mp.yaml", yaml), LoadOptions{"", false});
    } catch (const Error&) {  // a ceil-mode window that starts in the padding after
      continue;               // the input: not a valid layer
    }
    GenOptions go;
    go.seed = gi;
    go.images = 1;
    generate_parameters(net, go, random_images(net.input_shape, 1, gi));
    Tensor<int8_t> batch = random_images(net.input_shape, 2, seed + gi);
    const int64_t per = batch.size() / 2;
    for (int64_t e = per; e < batch.size(); ++e) {
      batch[e] = static_cast<int8_t>(-1 - static_cast<int>(static_cast<uint8_t>(batch[e]) % 128));
    }
    for (const HwTarget* target : {&standard, &tiny}) {
      const Program prog = check_network(net, *target, split(batch), where + " on " + target->name);
      ++runs;
      bool parts = false, note = false;
      for (const CompiledOp& op : prog.ops) parts = parts || contains_text(op.name, "p[2/");
      for (const std::string& n : prog.notes) note = note || contains_text(n, "as a cascade of");
      cascades += parts && note;
      EXPECT_TRUE(parts && note) << where << " on " << target->name;
    }
  }
  std::cout << fmt::format(
      "max pools larger than the pooling unit: {} geometries, {} runs, {} "
      "compiled as cascades, every element equal to the golden model unless "
      "reported (seed {})\n",
      geometries.size(), runs, cascades, seed);
  EXPECT_GE(runs, 500);
}

// What a bank, the line buffer or the parameter RAM cannot hold runs in tiles
// or per pass, equal to the golden model in both dependency modes: a map
// larger than a bank (input, output), a pooled row wider than the line buffer,
// more channels than the parameter RAM, and all at once on one small target.
TEST(Compiler, WhatDoesNotFitRunsInTiles) {
  struct Case {
    std::string name, yaml;
    std::function<void(HwTarget&)> target;
    int bands_at_least, strips_at_least;  // 0: runs whole
  };
  const std::vector<Case> cases = {
      {"input map",
       "input: [1, 20, 20]\nlayers:\n  - {name: c, type: conv, out_channels: 4, kernel: 3}\n",
       [](HwTarget& t) { t.bank_depth = 256; }, 2, 1},
      {"output map",
       "input: [8, 10, 10]\nlayers:\n  - {name: wide, type: conv, out_channels: 64, kernel: 1}\n",
       [](HwTarget& t) { t.bank_depth = 512; }, 1, 1},
      {"pool width",
       "input: [8, 4, 80]\nlayers:\n  - {name: c, type: conv, out_channels: 8, kernel: 1}\n  - "
       "{name: p, type: maxpool, kernel: 2}\n",
       [](HwTarget&) {}, 1, 2},
      {"pooled bands and strips",
       "input: [3, 41, 37]\nlayers:\n  - {name: c, type: conv, out_channels: 12, kernel: 5, "
       "stride: 1, pad: 2}\n  - {name: p, type: maxpool, kernel: 3, stride: 2, ceil_mode: true}\n  "
       "- {name: c2, type: conv, out_channels: 9, kernel: 3, stride: 2, pad: 1}\n  - {name: a, "
       "type: avgpool, kernel: 3, stride: 2, pad: 1}\n",
       [](HwTarget& t) {
         t.bank_depth = 256;
         t.max_image_width = 16;
       },
       2, 2},
      {"channels",
       "input: [8, 4, 4]\nlayers:\n  - {name: many, type: conv, out_channels: 24, kernel: 1}\n",
       [](HwTarget& t) { t.param_depth = 16; }, 0, 0},
  };
  TempFiles files;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = files.write("tiles.yaml", "name: tiles\n" + c.yaml);
    Network net = load_network(path, LoadOptions{"", false});
    GenOptions go;
    go.images = 2;
    const Tensor<int8_t> images = random_images(net.input_shape, 2, 7);
    generate_parameters(net, go, images);
    HwTarget t = HwTarget::defaults();
    c.target(t);
    const Program prog = check_network(net, t, split(images), c.name);
    std::string notes = fmt::format("{}", fmt::join(prog.notes, "\n"));
    int bands = 0, strips = 0;
    for (const std::string& n : prog.notes) {
      if (std::sscanf(n.c_str(), "%*[^:]: %d band%*[^x]x %d strip", &bands, &strips) == 2) break;
    }
    EXPECT_GE(bands, c.bands_at_least) << notes;
    EXPECT_GE(strips, c.strips_at_least) << notes;
  }
}

// Split passes (docs/compiler.md, "Split passes"): what no longer fits at once runs
// as chunks of its input groups, the int32 partial sums carried through a spill
// buffer (acc_out, acc_in). An FC whose neuron's weights exceed a bank (and whose
// features exceed the PE caches: loaded chunk by chunk), convolutions whose pass
// exceeds the free PE-cache words (whole and in tiles, with a fused pool, a ReLU,
// an activation table, results in a bank, the PE caches or stored), and global
// pools over more words than the PE caches hold, on the default and the tiny
// target, batches of 1 and 2. Every output equals the golden model's, both
// dependency modes are race free, and the chunks are what the ISA asks: the first
// starts at the bias and writes its raw sums, the middle ones read and write them
// in place, the last reads them and requantises, pools and looks up as the unsplit
// pass would; a chunk that writes partial sums writes a bank, no pool, no table.
struct SplitCounts {
  int64_t first = 0, middle = 0, last = 0;  // COMPUTEs: acc_out only, both, acc_in only
};

SplitCounts check_split_instructions(const Program& prog, const std::string& where) {
  SplitCounts n;
  for (const isa::Instruction& in : prog.instructions) {
    if (in.opcode_value() != static_cast<uint64_t>(isa::Opcode::kCompute)) continue;
    const isa::ComputeInstr c = isa::decode_compute(in);
    if (!c.acc_in && !c.acc_out) continue;
    EXPECT_TRUE(c.mode == isa::ComputeMode::kConv || c.mode == isa::ComputeMode::kFc) << where;
    EXPECT_EQ(c.packed_rows, 0) << where;
    if (c.acc_out) {
      EXPECT_FALSE(c.pool_en) << where;
      EXPECT_FALSE(c.act_table_en) << where;
      EXPECT_EQ(c.dst_kind, isa::ComputeDst::kBank) << where;
      if (c.mode == isa::ComputeMode::kConv) {
        EXPECT_EQ(c.dst_row_stride, 4 * c.out_w) << where;
      }
    }
    if (c.acc_in && c.acc_out) {  // in place
      EXPECT_EQ(c.acc_id, c.dst_id) << where;
      EXPECT_EQ(c.acc_base, c.dst_base) << where;
    }
    if (c.acc_in && !c.acc_out) {  // the last chunk: the partial sums apart from the results
      const int64_t words = 4 * c.out_h * (c.mode == isa::ComputeMode::kFc ? 1 : c.out_w);
      const int64_t results = c.pool_en ? c.pool_out_h * c.dst_row_stride
                                        : c.out_h * std::max<int64_t>(1, c.dst_row_stride);
      if (c.dst_kind == isa::ComputeDst::kBank && c.dst_id == c.acc_id) {
        EXPECT_TRUE(c.acc_base >= c.dst_base + results || c.dst_base >= c.acc_base + words)
            << where;
      }
    }
    (c.acc_in ? (c.acc_out ? n.middle : n.last) : n.first) += 1;
  }
  return n;
}

TEST(Compiler, SplitPassesEqualTheGoldenModel) {
  struct Case {
    std::string name, yaml;
    bool tiny;
    int64_t chunks;  // COMPUTEs per split pass or tile of neurons, at least
    bool tiled;      // an op runs in tiles
  };
  const std::vector<Case> cases = {
      {"fc of 32x64x64 features",
       "input: [32, 64, 64]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: f, type: fc, "
       "out_features: 10}\n",
       false, 32, false},
      {"fc of 16x20x20 features, tiny",
       "input: [16, 20, 20]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: f, type: fc, "
       "out_features: 10, activation: relu}\n  - {name: f2, type: fc, out_features: 5}\n",
       true, 4, false},
      // AlexNet's classifier in small: fc6 reads a map of 1,152 words, beyond a PE cache;
      // the convolution stores it, fc6 loads it chunk by chunk, fc7 and fc8 as usual.
      {"fc after a map beyond the PE caches",
       "input: [16, 6, 6]\nlayers:\n  - {name: c, type: conv, out_channels: 256, kernel: 3, pad: "
       "1, activation: relu}\n  - {name: fl, type: flatten}\n  - {name: f6, type: fc, "
       "out_features: 200, activation: relu}\n  - {name: f7, type: fc, out_features: 64, "
       "activation: relu}\n  - {name: f8, type: fc, out_features: 10}\n",
       false, 36, false},
      {"fc after a map beyond the PE caches, tiny",
       "input: [16, 7, 7]\nlayers:\n  - {name: c, type: conv, out_channels: 128, kernel: 3, pad: "
       "1}\n  - {name: p, type: maxpool, kernel: 2, stride: 1}\n  - {name: fl, type: flatten}\n  - "
       "{name: f6, type: fc, out_features: 20, activation: relu}\n  - {name: f7, type: fc, "
       "out_features: 10}\n",
       true, 4, true},  // the convolution's 784-word map: tiles
      {"conv 7x7 over 11 groups, relu, max pool, tiny",
       "input: [88, 4, 4]\nlayers:\n  - {name: c, type: conv, out_channels: 12, kernel: 7, pad: 3, "
       "activation: relu}\n  - {name: p, type: maxpool, kernel: 2}\n",
       true, 2, false},
      {"conv 7x7 over 21 groups, table, max pool",
       "input: [168, 12, 12]\nlayers:\n  - {name: c, type: conv, out_channels: 8, kernel: 7, pad: "
       "3, activation: {table: t.npy}}\n  - {name: p, type: maxpool, kernel: 2}\n  - {name: c2, "
       "type: conv, out_channels: 8, kernel: 3}\n",
       false, 2, false},
      {"conv in tiles, results stored",
       "input: [168, 16, 16]\nlayers:\n  - {name: c, type: conv, out_channels: 8, kernel: 7, pad: "
       "3, activation: relu}\n",
       false, 2, true},
      {"conv in tiles into the PE caches, fc after it, tiny",
       "input: [80, 12, 12]\nlayers:\n  - {name: c, type: conv, out_channels: 24, kernel: 3, pad: "
       "1, activation: {table: t.npy}}\n  - {name: f, type: fc, out_features: 7}\n",
       true, 2, true},
      // 35 input groups a pixel: no tile of one output row and column fits tiny's 256-word
      // buffers, so each tile loads one chunk of input groups at a time.
      {"conv over 280 channels, tiles of input-group chunks, stored, tiny",
       "input: [280, 6, 5]\nlayers:\n  - {name: c, type: conv, out_channels: 8, kernel: 3, pad: 1, "
       "activation: relu}\n",
       true, 2, true},
      {"conv over 280 channels, max pool, into a map, conv, tiny",
       "input: [280, 6, 5]\nlayers:\n  - {name: c, type: conv, out_channels: 16, kernel: 3, pad: "
       "1, activation: relu}\n  - {name: p, type: maxpool, kernel: 2}\n  - {name: c2, type: conv, "
       "out_channels: 8, kernel: 1}\n",
       true, 3, true},
      {"global pool over 40x40",
       "input: [8, 40, 40]\nlayers:\n  - {name: g, type: global_avgpool}\n  - {name: f, type: fc, "
       "out_features: 5}\n",
       false, 2, false},
      // EfficientNet-B0's first squeeze-and-excitation pool: a map of 12,544 words per
      // group, beyond a bank: loaded in chunks of whole rows.
      {"global pool over 32x112x112",
       "input: [32, 112, 112]\nlayers:\n  - {name: g, type: global_avgpool}\n  - {name: c, type: "
       "conv, out_channels: 8, kernel: 1, activation: relu}\n",
       false, 14, true},
      {"global pool over 16x56x56, tiny",
       "input: [16, 56, 56]\nlayers:\n  - {name: g, type: global_avgpool}\n  - {name: f, type: fc, "
       "out_features: 4}\n",
       true, 14, true},
  };
  TempFiles files;
  const HwTarget tiny = HwTarget::from_yaml((kSource / "config" / "tiny.yaml").string());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Network net =
        load_network(files.write("split.yaml", "name: split\n" + c.yaml), LoadOptions{"", false});
    GenOptions go;
    go.seed = 5;
    go.images = 2;
    generate_parameters(net, go, random_images(net.input_shape, 2, 5));
    const HwTarget target = c.tiny ? tiny : HwTarget::defaults();
    const auto images = split(random_images(net.input_shape, 2, 6));
    for (const size_t batch : {size_t{1}, size_t{2}}) {
      const std::vector<Tensor<int8_t>> some(images.begin(), images.begin() + batch);
      const std::string where = fmt::format("{}, batch {}", c.name, batch);
      const Program prog = check_network(net, target, some, where);
      const SplitCounts n = check_split_instructions(prog, where);
      EXPECT_GT(n.first, 0) << where;
      EXPECT_EQ(n.last, n.first) << where;
      EXPECT_GE(n.first + n.middle + n.last, c.chunks * n.first) << where;
      const std::string notes = fmt::format("{}", fmt::join(prog.notes, "\n"));
      EXPECT_TRUE(contains_text(notes, "split into")) << notes;
      if (contains_text(c.name, "after a map")) {
        EXPECT_TRUE(contains_text(notes, "each chunk's features loaded into the PE caches"))
            << notes;
        EXPECT_TRUE(contains_text(notes, "columns permuted to the stored map's order")) << notes;
      }
      EXPECT_EQ(contains_text(notes, "band"), c.tiled) << notes;
    }
  }
}

TEST(CompilerLimits, ParametersMustBeLoaded) {
  const Network net =
      load_network((kSource / "examples/lenet5.yaml").string(), LoadOptions{"", false});
  try {
    compile(net, HwTarget::defaults());
    ADD_FAILURE() << "compiled without weights";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().layer, "c1");
    EXPECT_NE(std::string(e.what()).find("parameters not loaded"), std::string::npos) << e.what();
  }
}

TEST(CompilerLimits, AnInvalidTargetIsRejected) {
  const Network net = generated_example("lenet5", 2);
  HwTarget t = HwTarget::defaults();
  t.lanes = 16;
  EXPECT_THROW(compile(net, t), Error);
}

// FC -> FC through PE_TRANSPOSE: the hardware writes whole PE-cache words, so
// every tile's transposed results start at lane 0 (dst_lane 0). Tiles of at
// least N neurons are whole words; a neuron's weights too large for N per bank
// make tiles of fewer than N neurons, and each of them starts a word of its own.
// Returns the dst_lane and dst_base values of the PE_TRANSPOSE computes.
struct TransposeFields {
  std::set<int64_t> lanes;
  std::vector<int64_t> bases;
};

TransposeFields transpose_fields(const std::string& input, uint64_t seed) {
  TempFiles files;
  const std::string path = files.write("tiles.yaml", "name: tiles\ninput: " + input + R"(
layers:
  - {name: f1, type: fc, out_features: 30, activation: relu}
  - {name: f2, type: fc, out_features: 9}
)");
  Network net = load_network(path, LoadOptions{"", false});
  GenOptions go;
  go.images = 2;
  generate_parameters(net, go, random_images(net.input_shape, 2, seed));
  const auto images = split(random_images(net.input_shape, 5, seed + 4));
  const Program prog = check_network(net, HwTarget::defaults(), images, "tiles");
  TransposeFields out;
  for (const isa::Instruction& in : prog.instructions) {
    if (in.opcode_value() != static_cast<uint64_t>(isa::Opcode::kCompute)) continue;
    const isa::ComputeInstr c = isa::decode_compute(in);
    if (c.dst_kind == isa::ComputeDst::kPeTranspose && c.hdr.tag == 0) {
      out.lanes.insert(c.dst_lane);
      out.bases.push_back(c.dst_base);
    }
  }
  return out;
}

TEST(Compiler, TransposedTilesAreWholeWordsWhenTheyHoldNNeurons) {
  // 3240 features = 405 words per neuron: 10 neurons per 4096-word bank, so
  // tiles of 8 neurons: one word each, consecutive.
  const TransposeFields f = transpose_fields("[18, 15, 12]", 4);
  EXPECT_EQ(f.lanes, (std::set<int64_t>{0}));
  ASSERT_EQ(f.bases.size(), 4u);
  for (size_t i = 1; i < f.bases.size(); ++i) EXPECT_EQ(f.bases[i], f.bases[0] + int64_t(i));
}

TEST(Compiler, TransposedTilesNarrowerThanAWordEachStartAWord) {
  // 4320 features = 540 words per neuron: 7 neurons per bank, so 5 tiles
  // (neurons 0, 7, 14, 21, 28), each in a word of its own, lanes 0..6 (a
  // tile continuing a word would need byte-masked PE-cache writes, which the
  // RTL refuses). check_network has run them on the ISA simulator bit-exact.
  const TransposeFields f = transpose_fields("[18, 15, 16]", 4);
  EXPECT_EQ(f.lanes, (std::set<int64_t>{0}));
  ASSERT_EQ(f.bases.size(), 5u);
  for (size_t i = 1; i < f.bases.size(); ++i) EXPECT_EQ(f.bases[i], f.bases[0] + int64_t(i));
}

// Networks whose first op is not a convolution: pooling, a clamp, a
// fully-connected layer on the raw input, and a network that only flattens.
TEST(Compiler, NetworksThatDoNotStartWithAConvolution) {
  const std::vector<std::string> nets = {
      "input: [12, 9, 9]\nlayers:\n  - {name: p, type: maxpool, kernel: 3, stride: 2, ceil_mode: "
      "true}\n  - {name: c, type: conv, out_channels: 5, kernel: 3, pad: 1}\n",
      "input: [3, 7, 5]\nlayers:\n  - {name: r, type: clamp, lo: -20, hi: 90}\n  - {name: p, type: "
      "maxpool, kernel: 2}\n  - {name: f, type: fc, out_features: 7}\n",
      "input: [3, 7, 5]\nlayers:\n  - {name: r, type: relu}\n  - {name: a, type: avgpool, kernel: "
      "3, pad: 1, stride: 1}\n",
      "input: [20, 2, 3]\nlayers:\n  - {name: f1, type: fc, out_features: 30, activation: relu}\n  "
      "- {name: f2, type: fc, out_features: 9}\n  - {name: r, type: clamp, lo: -5, hi: 5}\n",
      "input: [2, 3, 4]\nlayers:\n  - {name: fl, type: flatten}\n",
      "input: [9, 4, 4]\nlayers:\n  - {name: c, type: conv, out_channels: 9, kernel: 3, pad: 1}\n  "
      "- {name: fl, type: flatten}\n",
      // A clamp after a flatten of the input runs on the input map, not on the flat shape.
      "input: [3, 32, 32]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: relu}\n",
      "input: [1, 2, 2]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: relu}\n",
      "input: [11, 3, 5]\nlayers:\n  - {name: fl, type: flatten}\n  - {name: r, type: clamp, lo: "
      "-9, hi: 40}\n  - {name: f, type: fc, out_features: 6}\n",
  };
  TempFiles files;
  for (size_t i = 0; i < nets.size(); ++i) {
    const std::string path = files.write(fmt::format("n{}.yaml", i), "name: n\n" + nets[i]);
    Network net = load_network(path, LoadOptions{"", false});
    GenOptions go;
    go.images = 2;
    generate_parameters(net, go, random_images(net.input_shape, 2, i + 1));
    for (const HwTarget& t : {HwTarget::defaults(), p16n16()}) {
      const auto images = split(random_images(net.input_shape, 3, i + 10));
      check_network(net, t, images, fmt::format("network {} on {}:\n{}", i, t.name, nets[i]));
    }
  }
}

// ---- the command line: strata compile, strata run --backend isa ------------------------------

struct Command {
  int status = -1;
  std::string output;  // stdout and stderr
};

Command run_cli(const std::string& args) {
  Command c;
  const std::string cmd = fmt::format("'{}' {} 2>&1", STRATA_CLI, args);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return c;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) c.output += buf;
  const int status = pclose(pipe);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(Cli, CompileWritesTheMemoryImageAndAListing) {
  TempFiles files;
  const fs::path& root = files.dir();
  const std::string yaml = (kSource / "examples/lenet5.yaml").string();
  ASSERT_EQ(
      run_cli(fmt::format("gen '{}' --seed 2 --out '{}'", yaml, (root / "w").string())).status, 0);
  const Command c = run_cli(fmt::format(
      "compile '{}' --weights '{}' --batch 3 --out '{}' "
      "--listing '{}'",
      yaml, (root / "w").string(), (root / "p.bin").string(), (root / "p.txt").string()));
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(c.output.find("batch 3"), std::string::npos) << c.output;
  // The image is exactly what the library compiles for the same network.
  const Network net = load_network(yaml, LoadOptions{(root / "w").string(), true});
  CompileOptions o;
  o.batch = 3;
  const Program prog = compile(net, HwTarget::defaults(), o);
  EXPECT_EQ(read_bytes((root / "p.bin").string()), prog.image);
  const std::vector<uint8_t> text = read_bytes((root / "p.txt").string());
  EXPECT_EQ(std::string(text.begin(), text.end()), listing(prog));

  // Another target from its YAML, without rebuilding.
  std::ifstream def(kSource / "config/default.yaml");
  std::string cfg((std::istreambuf_iterator<char>(def)), {});
  cfg = std::regex_replace(cfg, std::regex("\nlanes: 8 "), "\nlanes: 16 ");
  cfg = std::regex_replace(cfg, std::regex("\npes: 8 "), "\npes: 16 ");
  const std::string target = files.write("p16.yaml", cfg);
  const Command c16 =
      run_cli(fmt::format("compile '{}' --weights '{}' --target '{}' --batch 16 "
                          "--out '{}'",
                          yaml, (root / "w").string(), target, (root / "p16.bin").string()));
  ASSERT_EQ(c16.status, 0) << c16.output;
  EXPECT_NE(c16.output.find("(P 16, N 16), batch 16"), std::string::npos) << c16.output;

  const Command bad = run_cli(fmt::format("compile '{}' --weights '{}' --batch 9 --out '{}'", yaml,
                                          (root / "w").string(), (root / "x.bin").string()));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("strata: error:"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("batch 9 is outside 1..8"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(root / "x.bin"));
}

TEST(Cli, RunWithTheIsaBackendEqualsTheGoldenBackend) {
  TempFiles files;
  const fs::path& root = files.dir();
  const std::string yaml = (kSource / "examples/strided_net.yaml").string();
  const std::string w = (root / "w").string();
  ASSERT_EQ(run_cli(fmt::format("gen '{}' --seed 3 --images 11 --out '{}'", yaml, w)).status, 0);
  // 11 images: one batch of 8 and one of 3.
  const std::string input = (root / "w" / "images.npy").string();
  const Command isa =
      run_cli(fmt::format("run '{}' --weights '{}' --input '{}' --output '{}' "
                          "--backend isa",
                          yaml, w, input, (root / "isa.npy").string()));
  ASSERT_EQ(isa.status, 0) << isa.output;
  EXPECT_NE(isa.output.find("2 runs of 2 programs"), std::string::npos) << isa.output;
  const Command golden = run_cli(fmt::format("run '{}' --weights '{}' --input '{}' --output '{}'",
                                             yaml, w, input, (root / "golden.npy").string()));
  ASSERT_EQ(golden.status, 0) << golden.output;
  EXPECT_EQ(load_npy<int8_t>((root / "isa.npy").string()),
            load_npy<int8_t>((root / "golden.npy").string()));
  const Command dump =
      run_cli(fmt::format("run '{}' --weights '{}' --input '{}' --output '{}' "
                          "--backend isa --dump-dir '{}'",
                          yaml, w, input, (root / "o.npy").string(), (root / "d").string()));
  EXPECT_EQ(dump.status, 2);  // a usage error
  EXPECT_NE(dump.output.find("--dump-dir needs --backend golden"), std::string::npos)
      << dump.output;
}

}  // namespace
}  // namespace strata
