// SPDX-License-Identifier: Apache-2.0
// The design planner (strata/planner.hpp): its winner fits the device and is
// the fastest of the candidates that fit, a larger device gets a faster
// plan, the sparse build and chains are weighed where they apply, the
// configuration file it writes loads back as the same target, and a device
// nothing fits is an error.
#include <gtest/gtest.h>

#include <string>

#include "strata/cascade.hpp"
#include "strata/cycle_model.hpp"
#include "strata/device.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/network.hpp"
#include "strata/planner.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

const std::string kSource = STRATA_SOURCE_DIR;

Network example(const std::string& name, double sparsity = 0) {
  Network net = load_network(kSource + "/examples/" + name + ".yaml", LoadOptions{"", false});
  GenOptions g;
  g.sparsity = sparsity;
  generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
  return net;
}
Device device(const std::string& name) { return Device::find(name, kSource + "/config/devices"); }

TEST(Planner, WinnerFitsAndIsTheFastestThatFits) {
  const Device d = device("ecp5-45f");
  const PlanResult r = plan({example("cifar10_quick"), example("lenet5")}, d);
  ASSERT_GE(r.winner, 0);
  const PlanCandidate& w = r.candidates[static_cast<size_t>(r.winner)];
  EXPECT_TRUE(w.fits);
  EXPECT_LE(w.resources.dsp, d.dsps);
  EXPECT_LE(w.resources.bram, d.brams);
  EXPECT_EQ(w.cycles.size(), 2u);
  int fitting = 0, over = 0;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.fits) {
      EXPECT_FALSE(c.why_not.empty());
      ++over;
      continue;
    }
    ++fitting;
    EXPECT_FALSE(faster(c, w)) << c.target.pes << " " << c.target.bank_depth;
  }
  EXPECT_GT(fitting, 1);
  EXPECT_GT(over, 0);  // the 72 DSPs leave P = N = 16 and 32 out
  // The default configuration needs 99 DSPs: the winner puts lanes in LUTs.
  EXPECT_GT(w.target.pe_fabric_lanes, 0);
}

TEST(Planner, LargerDeviceGetsAFasterPlan) {
  const std::vector<Network> nets = {example("cifar10_quick")};
  const PlanResult small = plan(nets, device("ecp5-45f"));
  const PlanResult big = plan(nets, device("xczu3eg"));
  ASSERT_GE(small.winner, 0);
  ASSERT_GE(big.winner, 0);
  const PlanCandidate& s = small.candidates[static_cast<size_t>(small.winner)];
  const PlanCandidate& b = big.candidates[static_cast<size_t>(big.winner)];
  EXPECT_GT(b.target.pes, s.target.pes);
  EXPECT_LT(b.seconds_per_image, s.seconds_per_image);
}

TEST(Planner, LatencyWeighsOneAcceleratorOfEveryShape) {
  const PlanResult r = plan({example("lenet5")}, device("ecp5-85f"));
  bool sparse = false, eight_banks = false;
  for (const PlanCandidate& c : r.candidates) {
    EXPECT_EQ(c.instances, 1);  // a chain does not shorten one image's run
    sparse = sparse || c.target.sparse;
    eight_banks = eight_banks || c.target.banks == 8;
  }
  EXPECT_TRUE(sparse);
  EXPECT_TRUE(eight_banks);
}

// The sparse build wins when the weights have zeros to skip, and loses (the
// same cycles for more LUTs) when they have none.
TEST(Planner, SparseBuildWinsOnSparseWeights) {
  const Device d = device("ecp5-85f");
  const PlanResult dense = plan({example("cifar10_quick")}, d);
  const PlanResult sparse = plan({example("cifar10_quick", 0.75)}, d);
  ASSERT_GE(dense.winner, 0);
  ASSERT_GE(sparse.winner, 0);
  const PlanCandidate& dw = dense.candidates[static_cast<size_t>(dense.winner)];
  const PlanCandidate& sw = sparse.candidates[static_cast<size_t>(sparse.winner)];
  EXPECT_FALSE(dw.target.sparse);
  EXPECT_TRUE(sw.target.sparse);
  EXPECT_LT(sw.cycles[0], dw.cycles[0] * 3 / 4);
}

// For throughput, chains of K = 2 and 4 are weighed: K times the resources
// of one stage, and an image every largest stage (compile_chain's
// prediction), less than one accelerator's run of the image. (Not K times
// less: each stage has a memory port of its own.)
TEST(Planner, ThroughputWeighsChains) {
  const Device d = device("xczu3eg");
  PlanOptions o;
  o.objective = PlanObjective::kThroughput;
  const PlanResult r = plan({example("strided_net")}, d, o);
  ASSERT_GE(r.winner, 0);
  const PlanResult one = plan({example("strided_net")}, d);  // latency: one image per run
  int chains = 0, compared = 0;
  for (const PlanCandidate& c : r.candidates) {
    // A chain is rejected for its budget, never for its cycle model.
    if (c.instances > 1) EXPECT_EQ(c.why_not.find("cycle model"), std::string::npos) << c.why_not;
    if (c.instances == 1 || !c.fits) continue;
    ++chains;
    for (const PlanCandidate& s : one.candidates) {
      if (!(s.target == c.target)) continue;
      ++compared;
      EXPECT_EQ(c.resources.dsp, c.instances * s.resources.dsp);
      EXPECT_EQ(c.resources.lut, c.instances * s.resources.lut);
      ASSERT_TRUE(s.fits);
      EXPECT_LT(c.cycles[0], s.cycles[0]);
    }
  }
  EXPECT_GT(chains, 0);
  EXPECT_GT(compared, 0);
  // A chain's cycles are its largest stage's.
  for (const PlanCandidate& c : r.candidates) {
    if (c.instances == 1 || !c.fits) continue;
    CycleModelOptions cm;
    cm.beats_per_cycle = r.beats_per_cycle;
    int64_t largest = 0;
    for (const ChainStage& st :
         compile_chain(example("strided_net"), c.target, c.instances, cm).stages) {
      largest = std::max(largest, st.predicted_cycles);
    }
    EXPECT_EQ(c.cycles[0], largest);
    break;
  }
}

class PlannerFiles : public test::TempDirTest {};

TEST_F(PlannerFiles, ConfigurationFileLoadsBackAsTheWinner) {
  const PlanResult r = plan({example("lenet5")}, device("ecp5-85f"));
  ASSERT_GE(r.winner, 0);
  HwTarget t = r.candidates[static_cast<size_t>(r.winner)].target;
  t.name = "planned";
  const std::string path = write("planned.yaml", config_yaml(t, "planned for a test\nsecond line"));
  EXPECT_EQ(HwTarget::from_yaml(path), t);
}

TEST_F(PlannerFiles, NothingFitsIsReported) {
  std::string text = test::slurp(kSource + "/config/devices/ecp5-25f.yaml");
  text.replace(text.find("name: ecp5-25f"), 14, "name: micro");
  text.replace(text.find("  count: 28"), 11, "  count: 2");
  const PlanResult r = plan({example("lenet5")}, Device::from_yaml(write("micro.yaml", text)));
  EXPECT_EQ(r.winner, -1);
  for (const PlanCandidate& c : r.candidates) {
    EXPECT_FALSE(c.fits);
    EXPECT_NE(c.why_not.find("DSP"), std::string::npos) << c.why_not;
  }
}

}  // namespace
}  // namespace strata
