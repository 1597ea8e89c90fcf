// SPDX-License-Identifier: Apache-2.0
// Cascade chains on the RTL (docs/cascade.md): example networks split by the
// compiler into 2 and 4 stages (as many as their cuts allow), streamed
// through the Verilated strata_cascade_top with random stalls on the links
// and on the memories, every output compared element by element with the
// golden model; an error in one stage stops the whole chain, names the stage,
// and a correct run follows on the same chain; a misrouted or malformed
// transfer is error CASCADE.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "chain_runner.hpp"
#include "example_network.hpp"
#include "sim_fixture.hpp"
#include "strata/cascade.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"

namespace strata::tb {
namespace {

std::vector<Tensor<int8_t>> images_of(const Network& net, int count, uint64_t seed) {
  const Tensor<int8_t> batch = random_images(net.input_shape, count, seed);
  const int64_t per = shape_elements(net.input_shape);
  std::vector<Tensor<int8_t>> v;
  for (int64_t i = 0; i < count; ++i) {
    v.emplace_back(net.input_shape,
                   std::vector<int8_t>(batch.data() + i * per, batch.data() + (i + 1) * per));
  }
  return v;
}

// Instruction `index` of a stage's program replaced (in the image too).
void patch(Program& p, size_t index, const isa::Instruction& in) {
  p.instructions.at(index) = in;
  in.to_bytes(&p.image[index * isa::kInstrBytes]);
}

// The first LOAD CASCADE of a program.
size_t first_cascade_load(const Program& p) {
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const isa::Instruction& in = p.instructions[i];
    if (in.opcode_value() == static_cast<uint64_t>(isa::Opcode::kLoad) &&
        isa::decode_load(in).src_kind == isa::LoadSrc::kCascade) {
      return i;
    }
  }
  ADD_FAILURE() << "no LOAD CASCADE in the stage's program";
  return 0;
}

class StrataCascade : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = test_seed();
    std::cout << "[ SEED     ] STRATA_SEED=" << seed_ << std::endl;
  }

  ChainRunnerOptions options(double link_stall, double mem_stall) const {
    ChainRunnerOptions o;
    o.run.seed = seed_;
    o.run.stall = mem_stall;
    o.run.fine_grain = seed_ % 2 == 0;
    o.run.timeout = 20000000;
    o.link_stall = link_stall;
    return o;
  }

  // Streams `images` and checks every output against the golden model.
  void expect_bit_exact(ChainRunner& runner, const ChainProgram& chain, const Network& net,
                        const std::vector<Tensor<int8_t>>& images, const std::string& what) {
    std::vector<Tensor<int8_t>> outputs;
    const ChainReport r = runner.run_stream(chain, images, outputs);
    ASSERT_TRUE(r.bench_errors.empty()) << what << ": " << r.bench_errors.front();
    ASSERT_EQ(r.failed_stage, -1) << what << ": stage " << r.failed_stage << " stopped with "
                                  << csr::to_string(r.error) << " at " << r.error_index;
    ASSERT_TRUE(r.finished) << what << ": timeout";
    ASSERT_EQ(outputs.size(), images.size()) << what;
    for (size_t i = 0; i < images.size(); ++i) {
      const Tensor<int8_t> want = run_network(net, images[i]);
      ASSERT_EQ(outputs[i].shape(), want.shape()) << what;
      for (int64_t e = 0; e < want.size(); ++e) {
        ASSERT_EQ(outputs[i][e], want[e])
            << what << ", image " << i << ", element " << e << " (STRATA_SEED=" << seed_ << ")";
      }
    }
    for (size_t k = 0; k < r.stages.size(); ++k) {
      EXPECT_EQ(r.stages[k].runs, int(images.size())) << what << ": runs of stage " << k;
    }
  }

  // An AXI read error on `stage`'s weights: the chain stops, the report
  // names the stage and AXI_READ, every stage is idle (none hangs on its
  // link), the others stopped with CHAIN_STOP or done, no image left the
  // chain; then the same runner streams correct images.
  void expect_stage_error_then_recovery(ChainRunner& runner, const Network& net,
                                        const ChainProgram& chain, int stage) {
    const MemRegion& w = chain.stages[static_cast<size_t>(stage)].program.region("weights");
    runner.add_read_error(stage, w.offset, w.offset + 8);
    std::vector<Tensor<int8_t>> outputs;
    const ChainReport r = runner.run_stream(chain, images_of(net, 3, seed_), outputs);
    EXPECT_TRUE(r.finished) << "every stage stopped";
    EXPECT_EQ(r.failed_stage, stage);
    EXPECT_EQ(r.error, csr::ErrorCode::kAxiRead) << csr::to_string(r.error);
    EXPECT_TRUE(outputs.empty()) << "no image left the chain";
    int chain_stops = 0;
    for (size_t k = 0; k < r.stages.size(); ++k) {
      if (static_cast<int>(k) == stage) continue;
      const csr::ErrorCode e = r.stages[k].error;
      EXPECT_TRUE(e == csr::ErrorCode::kNone || e == csr::ErrorCode::kChainStop)
          << "stage " << k << ": " << csr::to_string(e);
      chain_stops += e == csr::ErrorCode::kChainStop;
    }
    EXPECT_GE(chain_stops, 1) << "the stages waiting on stage " << stage << " were stopped";
    runner.clear_errors();
    expect_bit_exact(runner, chain, net, images_of(net, 2, seed_ + 1), "after the error");
  }

  uint64_t seed_ = 1;
};

struct ChainCase {
  const char* network;
  int instances;
  double link_stall, mem_stall;
};

class StrataCascadeExamples : public StrataCascade,
                              public ::testing::WithParamInterface<ChainCase> {};

TEST_P(StrataCascadeExamples, BitExact) {
  const ChainCase& c = GetParam();
  const Network net = example_network(c.network, 5);
  const ChainProgram chain = compile_chain(net, HwTarget::defaults(), c.instances);
  ChainRunner runner(options(c.link_stall, c.mem_stall));
  expect_bit_exact(runner, chain, net, images_of(net, 2, seed_),
                   fmt::format("{} on {} stages", c.network, c.instances));
}

// Every example network small enough for make test, on 2 stages and on as
// many as its cuts allow up to 4 (cifar10_quick: 3; lenet5, residual_net: 2).
INSTANTIATE_TEST_SUITE_P(Networks, StrataCascadeExamples,
                         ::testing::Values(ChainCase{"lenet5", 2, 0.3, 0.0},
                                           ChainCase{"cifar10_quick", 2, 0.3, 0.1},
                                           ChainCase{"cifar10_quick", 3, 0.0, 0.0},
                                           ChainCase{"strided_net", 2, 0.0, 0.1},
                                           ChainCase{"strided_net", 4, 0.4, 0.1},
                                           ChainCase{"inverted_residual_net", 2, 0.3, 0.0},
                                           ChainCase{"inverted_residual_net", 4, 0.3, 0.1},
                                           ChainCase{"residual_net", 2, 0.2, 0.0}),
                         [](const ::testing::TestParamInfo<ChainCase>& i) {
                           return fmt::format("{}_K{}", i.param.network, i.param.instances);
                         });

// An AXI read error in stage 2 of 4 (its weights) stops the chain, named;
// then a correct run (expect_stage_error_then_recovery).
TEST_F(StrataCascade, StageErrorStopsTheChainThenACorrectRun) {
  const Network net = example_network("strided_net", 5);
  ChainRunner runner(options(0.2, 0.0));
  expect_stage_error_then_recovery(runner, net, compile_chain(net, HwTarget::defaults(), 4), 2);
}

// A transfer of another link id, and one a beat longer than its LOAD, stop
// the receiving stage with CASCADE (the sender with CHAIN_STOP or done); then
// the correct chain runs on the same runner.
TEST_F(StrataCascade, MisroutedAndMalformedTransfersAreErrors) {
  const Network net = example_network("strided_net", 5);
  const ChainProgram good = compile_chain(net, HwTarget::defaults(), 2);
  ChainRunner runner(options(0.0, 0.0));
  for (int variant = 0; variant < 2; ++variant) {
    ChainProgram bad = good;
    Program& p = bad.stages[1].program;
    const size_t i = first_cascade_load(p);
    isa::LoadInstr l = isa::decode_load(p.instructions[i]);
    if (variant == 0) {
      l.link_id ^= 0x100;  // misrouted
    } else {
      l.row_words -= 1;  // the transfer is longer than the LOAD: no TLAST on its last beat
      if (l.row_words == 0) {
        l.row_words = 1;
        l.rows -= 1;
      }
    }
    patch(p, i, isa::encode(l));
    std::vector<Tensor<int8_t>> outputs;
    const ChainReport r = runner.run_stream(bad, images_of(net, 1, seed_), outputs);
    const std::string what = variant == 0 ? "another link id" : "a transfer longer than its LOAD";
    EXPECT_TRUE(r.finished) << what;
    EXPECT_EQ(r.failed_stage, 1) << what;
    EXPECT_EQ(r.error, csr::ErrorCode::kCascade) << what << ": " << csr::to_string(r.error);
    EXPECT_EQ(r.error_index, i) << what;
    expect_bit_exact(runner, good, net, images_of(net, 2, seed_ + 2), what + ", then good");
    if (HasFailure()) return;
  }
}

// The cascade of config/p4n4.yaml (P = N = 4, 32-bit AXI and cascade
// beats), whose two-stage build is placed and routed on the LFE5U-85F
// (docs/fpga.md); skipped unless its model is built (CMake option
// STRATA_CHAIN_CONFIGS, set by make regress). Every example network on two
// stages, and strided_net on four, under link and memory stalls equals the
// golden model; an AXI read error in stage 1 stops the chain, named, then a
// correct run.
TEST_F(StrataCascade, NarrowBusChainRunsExamplesBitExact) {
  const HwTarget p4n4 = HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/p4n4.yaml");
  if (!ChainRunner::built_for(p4n4)) {
    GTEST_SKIP() << "no cascade model of config/p4n4.yaml (STRATA_CHAIN_CONFIGS)";
  }
  ChainRunner runner(options(0.3, 0.1), p4n4);
  EXPECT_EQ(runner.stages(), ChainRunner::kStages);
  for (const char* name :
       {"lenet5", "cifar10_quick", "strided_net", "inverted_residual_net", "residual_net"}) {
    const Network net = example_network(name, 5);
    const ChainProgram chain = compile_chain(net, p4n4, 2);
    expect_bit_exact(runner, chain, net, images_of(net, 2, seed_),
                     fmt::format("{} on 2 stages of p4n4", name));
  }
  const Network net = example_network("strided_net", 5);
  expect_bit_exact(runner, compile_chain(net, p4n4, 4), net, images_of(net, 2, seed_),
                   "strided_net on 4 stages of p4n4");
  expect_stage_error_then_recovery(runner, net, compile_chain(net, p4n4, 2), 1);

  // A chain compiled for another configuration is refused by this model.
  std::vector<Tensor<int8_t>> outputs;
  try {
    runner.run_stream(compile_chain(net, HwTarget::defaults(), 2), images_of(net, 1, seed_),
                      outputs);
    ADD_FAILURE() << "a chain for the default configuration ran on the p4n4 model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built for configuration 'p4n4'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::tb
