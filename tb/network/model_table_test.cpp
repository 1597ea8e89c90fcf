// SPDX-License-Identifier: Apache-2.0
// A runner that links the fast model of the default configuration alone, as
// the strata command of a build configured for `make demo` does
// (sim/CMakeLists.txt, STRATA_CLI_MODELS=fast): the model it has runs, and
// every model it lacks is a clear error that names the configuration's file
// and how to build it, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "accel_runner.hpp"
#include "chain_runner.hpp"
#include "strata/error.hpp"
#include "strata/hw_target.hpp"

namespace strata::tb {
namespace {

const std::string kSource = STRATA_SOURCE_DIR;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The message of the strata::Error that constructing a runner throws ("" if none).
template <class F>
std::string error_of(F make) {
  try {
    make();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelTable, TheLinkedModelRuns) {
  EXPECT_EQ(AccelRunner::built_configurations(), std::vector<std::string>{"default"});
  RunnerOptions o;
  o.checked = false;
  AccelRunner runner(HwTarget::defaults(), o);
  EXPECT_EQ(runner.model_kind(), "fast");
  EXPECT_EQ(AccelRunner::built_model_of(HwTarget::defaults()), "default");
}

TEST(ModelTable, AModelOfTheBuildThatIsNotLinkedSaysHowToBuildIt) {
  RunnerOptions checked;
  checked.checked = true;
  const std::string e = error_of([&] { AccelRunner runner(HwTarget::defaults(), checked); });
  EXPECT_TRUE(contains(e,
                       "this build has no checked RTL model of config/default.yaml; built: "
                       "default (fast model only)"))
      << e;
  EXPECT_TRUE(contains(e, "`make build` builds every configuration's model")) << e;

#ifdef STRATA_FURTHER_CONFIG
  // A further configuration of the build (the first of STRATA_RTL_CONFIGS).
  const std::string file = std::string("config/") + STRATA_FURTHER_CONFIG + ".yaml";
  const HwTarget further = HwTarget::from_yaml(kSource + "/" + file);
  EXPECT_EQ(AccelRunner::built_model_of(further), "");
  for (bool kind : {false, true}) {
    RunnerOptions o;
    o.checked = kind;
    const std::string f = error_of([&] { AccelRunner runner(further, o); });
    EXPECT_TRUE(contains(f, "this build has no RTL model of " + file +
                                "; built: default (fast model only): "
                                "`make build` builds every configuration's model"))
        << f;
  }
#endif

  const std::string c = error_of([] { ChainRunner runner({}, HwTarget::defaults()); });
  EXPECT_TRUE(contains(c,
                       "this build has no cascade model of config/default.yaml; built: none: "
                       "`make build` builds every configuration's model"))
      << c;
  EXPECT_EQ(ChainRunner::stages_built_for(HwTarget::defaults()), 0);
}

TEST(ModelTable, AConfigurationTheBuildDoesNotKnowNamesTheCMakeOption) {
  HwTarget shallow = HwTarget::defaults();
  shallow.name = "shallow";
  shallow.bank_depth = 2048;
  RunnerOptions o;
  o.checked = false;
  const std::string e = error_of([&] { AccelRunner runner(shallow, o); });
  EXPECT_TRUE(contains(e, "no RTL model is built for configuration 'shallow'")) << e;
  EXPECT_TRUE(contains(e, "STRATA_RTL_CONFIGS")) << e;
  const std::string c = error_of([&] { ChainRunner runner({}, shallow); });
  EXPECT_TRUE(contains(c, "no cascade model is built for configuration 'shallow'")) << c;
  EXPECT_TRUE(contains(c, "STRATA_CHAIN_CONFIGS")) << c;
}

}  // namespace
}  // namespace strata::tb
