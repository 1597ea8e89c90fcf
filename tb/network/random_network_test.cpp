// SPDX-License-Identifier: Apache-2.0
// "Compiled => runs" on the RTL: random networks of every layer type and order
// (strata::random_network_yaml), parameters as `strata gen --seed S` makes
// them, compiled for the default target; each one the compiler accepts runs
// on the Verilated accelerator (strata_top, through AccelRunner) to the
// interrupt without an error, bench error or AXI protocol error, and every
// output element equals the golden model's. A network the target cannot run
// must be refused by the reader or the compiler (a strata::Error), never by
// the RTL at run time. Each program also passes the ISA simulator's
// dependency check (races, deadlocks) before it runs on the RTL. The ISA-simulator counterpart,
// with a few hundred networks, is sw/tests/random_network_test.cpp.
//
// The committed reproducers of tests/random_networks run first. Network i of
// a run is seed STRATA_SEED + i (STRATA_SEED=<network seed>
// replays one network first); STRATA_RANDOM_RTL_NETWORKS and
// STRATA_RANDOM_RTL_LARGE change the counts. Odd seeds run in fine-grained
// mode, every third network under random memory stalls, every fifth with a
// batch of 2..4 images.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "accel_runner.hpp"
#include "random_network_check.hpp"
#include "sim_fixture.hpp"
#include "strata/compiler.hpp"
#include "strata/csr_map.hpp"
#include "strata/isa_sim.hpp"
#include "strata/random_network.hpp"

namespace strata::tb {
namespace {

namespace fs = std::filesystem;

class RandomNetworksRtl : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = test_seed();
    std::cout << "[ SEED     ] STRATA_SEED=" << seed_ << std::endl;
    RecordProperty("seed", std::to_string(seed_));
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("strata_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The RTL backend for network `seed`: a fresh accelerator per run, after the
  // ISA simulator's dependency check of the program (no race or deadlock in
  // either scheduling mode, balanced semaphores), which the RTL alone could miss.
  static test::Backend rtl(uint64_t seed) {
    return [seed](const Program& prog, const std::vector<Tensor<int8_t>>& inputs) {
      test::BackendRun run;
      std::vector<uint8_t> memory = prog.image;
      for (size_t i = 0; i < inputs.size(); ++i) {
        write_input(prog, memory, static_cast<int>(i), inputs[i]);
      }
      const SimResult isa = IsaSim(prog.target).run(memory);
      const std::string problems = describe_problems(isa);
      if (!problems.empty()) {
        run.failure_class = "ISA simulator dependency check";
        run.failure = problems;
        return run;
      }
      RunnerOptions o;
      o.seed = seed;
      o.fine_grain = seed % 2 == 1;
      o.stall = seed % 3 == 0 ? 0.2 : 0.0;
      // A budget per image: a large draw run as a batch of four takes more
      // than 5 M cycles (5.8 M for one such network at one beat per cycle).
      o.timeout = 5000000 * std::max<uint64_t>(1, inputs.size());
      AccelRunner runner(prog.target, o);
      const RunReport r = runner.run_program(prog, inputs, run.outputs);
      const std::string mode =
          fmt::format("{} mode, stall {}", o.fine_grain ? "fine" : "completion", o.stall);
      if (!r.finished) {
        run.failure_class = "RTL hang (no interrupt)";
        run.failure = fmt::format("no interrupt after {} cycles ({})", o.timeout, mode);
      } else if (r.error != csr::ErrorCode::kNone) {
        run.failure_class = fmt::format("RTL error {}", csr::to_string(r.error));
        run.failure = fmt::format("the accelerator stopped with {} at instruction {} ({})",
                                  csr::to_string(r.error), r.error_index, mode);
      } else if (!r.bench_errors.empty()) {
        run.failure_class = "RTL bench error";
        run.failure = fmt::format("{} bench errors ({}), first: {}", r.bench_errors.size(), mode,
                                  r.bench_errors.front());
      } else if (runner.protocol_errors() != 0) {
        run.failure_class = "AXI protocol error";
        run.failure = fmt::format("{} AXI protocol errors ({})", runner.protocol_errors(), mode);
      }
      if (!run.failure.empty()) run.outputs.clear();
      return run;
    };
  }

  // Checks `count` networks drawn with `options`, seeds seed_ .. seed_ + count - 1.
  // With `kept`, the committed reproducers (tests/random_networks) run first.
  void check_networks(const RandomNetworkOptions& options, int count, const char* what,
                      const char* count_variable, bool kept,
                      const HwTarget& target = HwTarget::defaults()) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    test::RandomNetworkTally tally(
        fmt::format("RTL, {} networks", what), seed_, count,
        fmt::format("STRATA_SEED={{}} {}=1 build/tb/strata_random_network_tests "
                    "--gtest_filter={}.{}",
                    count_variable, info->test_suite_name(), info->name()),
        target);
    const auto start = std::chrono::steady_clock::now();
    if (kept) {
      for (const fs::path& p : test::kept_networks()) tally.check_kept(p, rtl(seed_));
    }
    for (int i = 0; i < count; ++i) {
      const uint64_t seed = seed_ + static_cast<uint64_t>(i);
      const int batch = seed % 5 == 0 ? 2 + static_cast<int>(seed / 5 % 3) : 1;
      // A sparse target: 0, 45 or 90 % zero weights, so packed and dense CONVs mix.
      const double sparsity = target.sparse ? 0.45 * static_cast<double>(seed % 3) : 0.0;
      tally.check(seed, options, batch, rtl(seed), dir_.string(), sparsity);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << tally.summary() << fmt::format("[ RANDOM   ] {:.1f} s\n", seconds);
  }

  uint64_t seed_ = 1;
  fs::path dir_;
};

TEST_F(RandomNetworksRtl, AcceptedNetworksMatchTheGoldenModel) {
  check_networks(RandomNetworkOptions{}, test::count_from_env("STRATA_RANDOM_RTL_NETWORKS", 80),
                 "default", "STRATA_RANDOM_RTL_NETWORKS", true);
}

// Bigger networks (RandomNetworkOptions::large): inputs past the pooling
// unit's line buffer, more channels and layers; a few per seed.
TEST_F(RandomNetworksRtl, AcceptedLargeNetworksMatchTheGoldenModel) {
  check_networks(RandomNetworkOptions::large(), test::count_from_env("STRATA_RANDOM_RTL_LARGE", 20),
                 "large", "STRATA_RANDOM_RTL_LARGE", false);
}

// The same networks compiled for config/tiny.yaml (256-word banks, a
// 16-pixel line buffer, small PE caches and parameter RAM), on its RTL model:
// maps in external memory, bands and strips with halos, pools across tile
// edges, streamed weights and per-pass parameters, RTL == golden element by
// element. STRATA_RANDOM_RTL_TINY sets the count.
TEST_F(RandomNetworksRtl, TiledNetworksMatchTheGoldenModel) {
  const HwTarget tiny = HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/tiny.yaml");
  const std::vector<std::string> built = AccelRunner::built_configurations();
  if (std::find(built.begin(), built.end(), "tiny") == built.end()) {
    GTEST_SKIP() << "no RTL model of config/tiny.yaml (STRATA_RTL_CONFIGS)";
  }
  check_networks(RandomNetworkOptions{}, test::count_from_env("STRATA_RANDOM_RTL_TINY", 60),
                 "tiny-target", "STRATA_RANDOM_RTL_TINY", true, tiny);
}

// The default networks compiled for config/sparse.yaml (packed CONVs), a
// third each with 0, 45 and 90 % zero weights, on the sparse build's RTL
// model. STRATA_RANDOM_RTL_SPARSE sets the count.
TEST_F(RandomNetworksRtl, SparseNetworksMatchTheGoldenModel) {
  const HwTarget sparse =
      HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/sparse.yaml");
  const std::vector<std::string> built = AccelRunner::built_configurations();
  if (std::find(built.begin(), built.end(), "sparse") == built.end()) {
    GTEST_SKIP() << "no RTL model of config/sparse.yaml (STRATA_RTL_CONFIGS)";
  }
  check_networks(RandomNetworkOptions{}, test::count_from_env("STRATA_RANDOM_RTL_SPARSE", 30),
                 "sparse-target", "STRATA_RANDOM_RTL_SPARSE", false, sparse);
}

// The default networks compiled for config/p4n4.yaml (P = N = 4, 32-bit AXI:
// words of one beat, parameter entries of two), on its RTL model.
// STRATA_RANDOM_RTL_P4N4 sets the count.
TEST_F(RandomNetworksRtl, NarrowBusNetworksMatchTheGoldenModel) {
  const HwTarget p4n4 = HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/p4n4.yaml");
  const std::vector<std::string> built = AccelRunner::built_configurations();
  if (std::find(built.begin(), built.end(), "p4n4") == built.end()) {
    GTEST_SKIP() << "no RTL model of config/p4n4.yaml (STRATA_RTL_CONFIGS)";
  }
  check_networks(RandomNetworkOptions{}, test::count_from_env("STRATA_RANDOM_RTL_P4N4", 60),
                 "p4n4-target", "STRATA_RANDOM_RTL_P4N4", false, p4n4);
}

// The default networks on the RTL models of the other configurations `make
// test` builds (STRATA_RTL_CONFIGS): the planner's LFE5U-45F pick (LUT
// products) and P = N = 16 on a 64-bit bus (two beats per word).
// STRATA_RANDOM_RTL_CONFIGS sets the count per configuration.
TEST_F(RandomNetworksRtl, FurtherConfigurationsMatchTheGoldenModel) {
  const std::vector<std::string> built = AccelRunner::built_configurations();
  for (const char* name : {"ecp5_45f_cifar", "p16n16"}) {
    SCOPED_TRACE(name);
    if (std::find(built.begin(), built.end(), name) == built.end()) {
      std::cout << "[ SKIPPED  ] no RTL model of config/" << name << ".yaml\n";
      continue;
    }
    const HwTarget t =
        HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/" + name + ".yaml");
    check_networks(RandomNetworkOptions{}, test::count_from_env("STRATA_RANDOM_RTL_CONFIGS", 20),
                   name, "STRATA_RANDOM_RTL_CONFIGS", false, t);
  }
}

// Networks of any size (RandomNetworkOptions::any_size: inputs up to 300 x
// 300, up to 300 channels) on the default configuration: maps in external
// memory between most layers. STRATA_RANDOM_RTL_ANY_SIZE sets the count.
TEST_F(RandomNetworksRtl, AnySizeNetworksMatchTheGoldenModel) {
  check_networks(RandomNetworkOptions::any_size(),
                 test::count_from_env("STRATA_RANDOM_RTL_ANY_SIZE", 8), "any-size",
                 "STRATA_RANDOM_RTL_ANY_SIZE", false);
}

}  // namespace
}  // namespace strata::tb
