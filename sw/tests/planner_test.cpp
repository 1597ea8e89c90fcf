// The design planner (strata/planner.hpp): its winner fits the device and is
// the fastest of the candidates that fit, a larger device gets a faster
// plan, the configuration file it writes loads back as the same target, and
// a device nothing fits is an error.
#include <gtest/gtest.h>

#include <string>

#include "strata/device.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/network.hpp"
#include "strata/planner.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

const std::string kSource = STRATA_SOURCE_DIR;

Network example(const std::string& name) {
  Network net = load_network(kSource + "/examples/" + name + ".yaml", LoadOptions{"", false});
  GenOptions g;
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
