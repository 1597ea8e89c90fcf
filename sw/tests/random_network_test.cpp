// SPDX-License-Identifier: Apache-2.0
// The random network generator (random_network.hpp), and "compiled => runs"
// on the ISA simulator: every random network the compiler accepts for the
// default target runs without a simulator error, deadlock or race, and its
// outputs equal the golden model's element by element; every other network is
// refused by the reader or the compiler with a strata::Error
// (random_network_check.hpp). The RTL counterpart is
// tb/network/random_network_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "random_network_check.hpp"
#include "strata/bundle.hpp"
#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/isa_device.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/random_network.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

// A directory for the test's network files, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("strata_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() { fs::remove_all(dir_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string str() const { return dir_.string(); }

 private:
  fs::path dir_;
};

Network load_text(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string p = dir.path(name);
  std::ofstream(p) << text;
  return load_network(p, LoadOptions{"", false});
}

// ---- the generator -------------------------------------------------------------------------

TEST(RandomNetworkGen, SameSeedSameNetwork) {
  std::set<std::string> distinct;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const std::string a = random_network_yaml(seed);
    EXPECT_EQ(a, random_network_yaml(seed)) << "seed " << seed;
    EXPECT_EQ(random_network_yaml(seed, RandomNetworkOptions::large()),
              random_network_yaml(seed, RandomNetworkOptions::large()));
    EXPECT_NE(a.find(fmt::format("# random network {} ", seed)), std::string::npos) << a;
    EXPECT_NE(a.find(fmt::format("name: random_{}\n", seed)), std::string::npos) << a;
    distinct.insert(a.substr(a.find("input:")));
  }
  EXPECT_GT(distinct.size(), 95u);
}

// Every drawn description is valid: the reader accepts its structure (the
// generator draws shapes that fit by construction), within the options'
// limits; and the parameters generate, as `strata gen` makes them.
TEST(RandomNetworkGen, EveryDrawIsAValidNetworkWithinTheLimits) {
  TempDir dir;
  for (const bool large : {false, true}) {
    const RandomNetworkOptions o = large ? RandomNetworkOptions::large() : RandomNetworkOptions{};
    for (uint64_t seed = 1; seed <= (large ? 300u : 400u); ++seed) {
      const std::string text = random_network_yaml(seed, o);
      SCOPED_TRACE(fmt::format("{} seed {}:\n{}", large ? "large" : "default", seed, text));
      Network net;
      try {
        net = load_text(dir, fmt::format("n{}.yaml", seed), text);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_LE(net.input_shape[0], o.max_channels);
      EXPECT_LE(net.input_shape[1], o.max_side);
      EXPECT_LE(net.input_shape[2], o.max_side);
      EXPECT_GE(net.layers.size(), 1u);
      EXPECT_LE(net.layers.size(), 2u * static_cast<size_t>(o.max_layers));  // + flatten before fc
      for (const Layer& l : net.layers) {
        if (l.type == LayerType::kConv) {
          EXPECT_LE(l.out_channels, o.max_channels);
        } else if (l.type == LayerType::kFc) {
          EXPECT_LE(l.out_channels, o.max_features);
        }
        // Any weights and bias 0 fit int32: 2^31 / 128^2 products per output.
        const int64_t fan_in =
            l.type == LayerType::kConv        ? l.in_shape[0] * l.conv.kernel * l.conv.kernel
            : l.type == LayerType::kDepthwise ? int64_t{l.conv.kernel} * l.conv.kernel
                                              : shape_elements(l.in_shape);
        if (l.has_weights()) {
          EXPECT_LE(fan_in, 131072) << l.name;
        }
      }
      if (!large && seed <= 150) {
        EXPECT_NO_THROW(load_generated(dir.path(fmt::format("n{}.yaml", seed)), seed));
      }
    }
  }
}

// Over a few hundred seeds the generator draws every layer type and every
// order and geometry the tests are for.
TEST(RandomNetworkGen, CoversEveryLayerTypeAndOrder) {
  TempDir dir;
  std::map<std::string, int> seen;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const std::string text = random_network_yaml(seed);
    const Network net = load_text(dir, "n.yaml", text);
    const Shape& in = net.input_shape;
    if (in[1] != in[2]) ++seen["non-square input"];
    if (in[0] == 1) ++seen["one input channel"];
    if (in[1] <= 2 || in[2] <= 2) ++seen["input side <= 2"];
    if (in[1] % 2 == 1 && in[2] % 2 == 1) ++seen["odd input sides"];
    if (text.find("requant:") != std::string::npos) ++seen["inline requant"];
    if (text.find("activation: {clamp") != std::string::npos) ++seen["clamp activation"];
    for (size_t i = 0; i < net.layers.size(); ++i) {
      const Layer& l = net.layers[i];
      const LayerType prev = i > 0 ? net.layers[i - 1].type : LayerType::kConv;
      const bool first = i == 0;
      const bool after_fc = i > 0 && prev == LayerType::kFc;
      const bool map_in = l.in_shape[1] * l.in_shape[2] > 1;
      ++seen[layer_type_name(l.type)];
      if (first) ++seen[fmt::format("{} first", layer_type_name(l.type))];
      switch (l.type) {
        case LayerType::kConv:
          if (l.conv.stride > 1) ++seen["conv stride > 1"];
          if (l.conv.stride > 2) ++seen["conv stride > 2"];
          if (l.conv.pad > 0) ++seen["conv pad"];
          if (!l.symmetric_pads()) ++seen["conv pads per side"];
          if (l.conv.kernel >= 5) ++seen["conv kernel >= 5"];
          if (l.conv.kernel > 7) ++seen["conv kernel > 7 (beyond the target)"];
          if (l.out_channels > 32) ++seen["conv > 32 channels"];
          if (after_fc) ++seen["conv after fc"];
          if (l.groups > 1) ++seen["conv with channel groups"];
          break;
        case LayerType::kMaxPool:
        case LayerType::kAvgPool:
          if (l.pool.ceil_mode) ++seen["pool ceil mode"];
          if (l.pool.pad > 0) ++seen["pool pad"];
          if (!l.symmetric_pads()) ++seen["pool pads per side"];
          if (l.pool.stride != l.pool.kernel) ++seen["pool stride != kernel"];
          if (l.pool.kernel > 3) ++seen["pool kernel > 3"];
          if (l.type == LayerType::kAvgPool && (l.pool.kernel == 4 || l.pool.kernel == 8) &&
              l.pool.pad == 0 && !l.pool.ceil_mode && l.pool.stride == l.pool.kernel) {
            ++seen["avgpool 4 or 8, exact"];
          }
          if (i > 0 && prev == LayerType::kConv) ++seen["pool after conv"];
          if (after_fc) ++seen["pool after fc"];
          break;
        case LayerType::kFc:
          if (after_fc) ++seen["fc after fc"];
          if (i > 0 && prev == LayerType::kFlatten &&
              net.layers[i - 1].in_shape[1] * net.layers[i - 1].in_shape[2] > 1) {
            ++seen["fc after flatten of a map"];
          }
          if (map_in) ++seen["fc on a map"];
          if (map_in && l.in_shape[1] != l.in_shape[2]) ++seen["fc on a non-square map"];
          break;
        case LayerType::kClamp:
          if (after_fc) ++seen["clamp after fc"];
          if (i > 0 && prev == LayerType::kFlatten) ++seen["clamp after flatten"];
          break;
        case LayerType::kFlatten:
          if (map_in) ++seen["flatten of a map"];
          break;
        case LayerType::kDepthwise:
          if (l.conv.stride > 1) ++seen["depthwise stride > 1"];
          if (l.conv.pad > 0) ++seen["depthwise pad"];
          if (!l.symmetric_pads()) ++seen["depthwise pads per side"];
          if (l.conv.kernel >= 5) ++seen["depthwise kernel >= 5"];
          break;
        case LayerType::kAdd:
          if (l.inputs[0] == kNetworkInput || l.inputs[1] == kNetworkInput) {
            ++seen["add of the network input"];
          }
          break;
        case LayerType::kGlobalAvgPool:
          if (l.in_shape[1] * l.in_shape[2] > 1) ++seen["global pool of a map"];
          if (i + 1 < net.layers.size() && net.layers[i + 1].type == LayerType::kFc) {
            ++seen["global pool before fc"];
          }
          break;
        case LayerType::kConcat:
          if (l.inputs.size() > 2) ++seen["concat of three maps"];
          for (int k : l.inputs) {
            if (k == kNetworkInput) ++seen["concat of the network input"];
          }
          if (l.out_shape[0] % 8 != 0) ++seen["concat off the 8-lane groups"];
          break;
        case LayerType::kSlice:
          if (l.slice_begin % 8 != 0) ++seen["slice off the 8-lane groups"];
          break;
        case LayerType::kUpsample:
          if (l.scale > 2) ++seen["upsample by more than 2"];
          break;
        case LayerType::kMul:
          if (l.has_table()) ++seen["mul with a table"];
          if (l.out_shape[0] % 8 != 0) ++seen["mul off the 8-lane groups"];
          if (l.out_shape[1] * l.out_shape[2] > 1) ++seen["mul of a map"];
          break;
      }
    }
    for (const std::string& f : test::graph_features(net)) ++seen["network with " + f];
    if (!net.is_chain()) ++seen["graph (not a chain)"];
    for (int o : net.outputs) {
      const auto li = static_cast<size_t>(o);
      bool read = false;
      for (const Layer& l : net.layers) {
        read = read || std::find(l.inputs.begin(), l.inputs.end(), o) != l.inputs.end();
      }
      if (read) ++seen["output read by a later layer"];
      if (net.layers[li].name.rfind("out", 0) == 0) ++seen["output from a side branch"];
    }
    if (net.output_count() > 1 && net.outputs.back() + 1 != static_cast<int>(net.layers.size())) {
      ++seen["last layer not the last output"];
    }
  }
  std::string counts;
  for (const auto& [what, n] : seen) counts += fmt::format("  {:5} {}\n", n, what);
  std::cout << counts;
  for (const char* what : {"conv",
                           "fc",
                           "maxpool",
                           "avgpool",
                           "clamp",
                           "flatten",
                           "conv first",
                           "fc first",
                           "maxpool first",
                           "avgpool first",
                           "clamp first",
                           "flatten first",
                           "non-square input",
                           "one input channel",
                           "input side <= 2",
                           "odd input sides",
                           "inline requant",
                           "clamp activation",
                           "conv stride > 1",
                           "conv stride > 2",
                           "conv pad",
                           "conv kernel >= 5",
                           "conv kernel > 7 (beyond the target)",
                           "conv > 32 channels",
                           "conv after fc",
                           "pool ceil mode",
                           "pool pad",
                           "pool stride != kernel",
                           "pool kernel > 3",
                           "avgpool 4 or 8, exact",
                           "pool after conv",
                           "pool after fc",
                           "fc after fc",
                           "fc after flatten of a map",
                           "fc on a map",
                           "fc on a non-square map",
                           "clamp after fc",
                           "clamp after flatten",
                           "flatten of a map",
                           "depthwise stride > 1",
                           "depthwise pad",
                           "depthwise pads per side",
                           "depthwise kernel >= 5",
                           "add of the network input",
                           "global pool of a map",
                           "global pool before fc",
                           "graph (not a chain)",
                           "concat",
                           "slice",
                           "upsample",
                           "concat of three maps",
                           "concat of the network input",
                           "concat off the 8-lane groups",
                           "slice off the 8-lane groups",
                           "upsample by more than 2",
                           "conv with channel groups",
                           "mul",
                           "mul with a table",
                           "mul off the 8-lane groups",
                           "mul of a map",
                           "network with several outputs",
                           "output read by a later layer",
                           "output from a side branch",
                           "last layer not the last output"}) {
    EXPECT_GE(seen[what], 3) << what << "\n" << counts;
  }
  for (const char* f : test::kGraphFeatures) {
    const std::string what = std::string("network with ") + f;
    EXPECT_GE(seen[what], 3) << what << "\n" << counts;
  }
  // relu is a clamp [0, 127] in the API; the YAML spelling must occur too.
  int relu = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    relu += random_network_yaml(seed).find("type: relu") != std::string::npos ? 1 : 0;
  }
  EXPECT_GT(relu, 5);
}

// ---- compiled => runs, on the ISA simulator -------------------------------------------------

// Runs a program on the ISA simulator: the run must end without an error, with
// no deadlock or race in either dependency mode, balanced edges and no
// accumulator wrap (the reader guarantees int32 suffices); then again from
// its bundle through the driver library (strata_rt on an IsaDevice), with the
// same outputs.
test::BackendRun run_isa(const Program& prog, const std::vector<Tensor<int8_t>>& inputs) {
  test::BackendRun run;
  std::vector<uint8_t> memory = prog.image;
  for (size_t i = 0; i < inputs.size(); ++i) {
    write_input(prog, memory, static_cast<int>(i), inputs[i]);
  }
  const SimResult r = IsaSim(prog.target).run(memory);
  if (!r.ok()) {
    run.failure_class = fmt::format("ISA simulator {}", sim_error_name(r.error));
    run.failure =
        fmt::format("{} at instruction {}: {}", sim_error_name(r.error), r.error_index, r.message);
    return run;
  }
  const std::string problems = describe_problems(r);
  if (!problems.empty() || r.acc_wraps != 0) {
    run.failure_class = "ISA simulator dependency check";
    run.failure = fmt::format("{}{} accumulator wraps", problems, r.acc_wraps);
    return run;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < prog.outputs.size(); ++j) {
      run.outputs.push_back(read_output(prog, memory, static_cast<int>(i), j));
    }
  }
  // The same program from its bundle through the driver library, placed at
  // another address: the same outputs.
  const std::vector<uint8_t> bytes = make_bundle(prog);
  IsaDevice device(prog.target, kBundleBlockAlign + prog.image.size());
  const strata_hal hal = device.hal();
  strata_device dev{};
  strata_bundle b{};
  strata_network net{};
  std::vector<int8_t> in,
      out(inputs.size() * static_cast<size_t>(shape_elements(prog.outputs.front().shape)));
  for (const Tensor<int8_t>& t : inputs) in.insert(in.end(), t.values().begin(), t.values().end());
  if (strata_open(&dev, &hal) != STRATA_OK ||
      strata_bundle_parse(&b, bytes.data(), bytes.size(), &dev.error) != STRATA_OK ||
      strata_load(&dev, &b, kBundleBlockAlign, prog.image.size(), &net) != STRATA_OK ||
      strata_run(&net, in.data(), in.size(), out.data(), out.size(),
                 static_cast<uint32_t>(inputs.size())) != STRATA_OK) {
    run.failure_class = "driver library";
    run.failure = fmt::format("{}: {}", strata_status_name(dev.error.status), dev.error.text);
    run.outputs.clear();
    return run;
  }
  // Per image, output 0 from strata_run and the others from strata_read_output_at.
  std::vector<int8_t> direct, driven;
  for (const Tensor<int8_t>& t : run.outputs) {
    direct.insert(direct.end(), t.values().begin(), t.values().end());
  }
  const size_t each = out.size() / inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    driven.insert(driven.end(), out.begin() + static_cast<std::ptrdiff_t>(i * each),
                  out.begin() + static_cast<std::ptrdiff_t>((i + 1) * each));
    for (uint32_t j = 1; j < prog.outputs.size(); ++j) {
      std::vector<int8_t> v(static_cast<size_t>(strata_output_elements_at(&b, j)));
      if (strata_read_output_at(&net, static_cast<uint32_t>(i), j, v.data()) != STRATA_OK) {
        run.failure_class = "driver library";
        run.failure = fmt::format("{}: {}", strata_status_name(dev.error.status), dev.error.text);
        run.outputs.clear();
        return run;
      }
      driven.insert(driven.end(), v.begin(), v.end());
    }
  }
  if (direct != driven) {
    run.failure_class = "driver library";
    run.failure = "the outputs through the bundle and the driver differ from the direct run";
    run.outputs.clear();
  }
  return run;
}

// Checks `count` networks drawn with `options` (seeds STRATA_SEED + i) on the
// ISA simulator. Every fourth network runs a batch of 2..P images.
// With `kept`, the committed reproducers (tests/random_networks) run first.
void check_networks(const RandomNetworkOptions& options, const char* what,
                    const char* count_variable, int fallback_count, bool kept,
                    const HwTarget& target = HwTarget::defaults()) {
  const uint64_t base = test::random_seed_from_env(31);
  const int count = test::count_from_env(count_variable, fallback_count);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::cout << "[ SEED     ] " << info->name() << " STRATA_SEED=" << base << std::endl;
  TempDir dir;
  test::RandomNetworkTally tally(
      fmt::format("ISA simulator, {} networks", what), base, count,
      fmt::format("STRATA_SEED={{}} {}=1 build/sw/strata_compiler_tests --gtest_filter={}.{}",
                  count_variable, info->test_suite_name(), info->name()),
      target);
  const int pes = target.pes;
  const auto start = std::chrono::steady_clock::now();
  if (kept) {
    for (const fs::path& p : test::kept_networks()) tally.check_kept(p, run_isa);
  }
  for (int i = 0; i < count; ++i) {
    const uint64_t seed = base + static_cast<uint64_t>(i);
    const int batch = seed % 4 == 0 ? 2 + static_cast<int>(seed / 4 % (pes - 1)) : 1;
    // A sparse target: 0, 45 or 90 % zero weights, so packed and dense CONVs mix.
    const double sparsity = target.sparse ? 0.45 * static_cast<double>(seed % 3) : 0.0;
    tally.check(seed, options, batch, run_isa, dir.str(), sparsity);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << tally.summary() << fmt::format("[ RANDOM   ] {:.1f} s\n", seconds);
  // The generator must keep drawing networks the target can run.
  EXPECT_GE(tally.accepted() + tally.failed(), count / 3) << "most networks refused";
}

// The kept reproducers, then a few hundred networks per run; STRATA_SEED picks
// another set (network i is seed STRATA_SEED + i), STRATA_RANDOM_NETWORKS
// another count.
TEST(RandomNetworks, AcceptedNetworksRunOnTheIsaSimulator) {
  check_networks(RandomNetworkOptions{}, "default", "STRATA_RANDOM_NETWORKS", 300, true);
}

// Fewer large networks (RandomNetworkOptions::large): wider inputs, more
// channels, layers and features (e.g. more channels than the parameter RAM
// holds); STRATA_RANDOM_LARGE sets the count.
TEST(RandomNetworks, AcceptedLargeNetworksRunOnTheIsaSimulator) {
  check_networks(RandomNetworkOptions::large(), "large", "STRATA_RANDOM_LARGE", 60, false);
}

// The same networks compiled for config/tiny.yaml (256-word banks, a 16-pixel
// line buffer, small PE caches and parameter RAM): most maps live in external
// memory and most layers run in bands and strips with halos, streamed weights
// and per-pass parameters. STRATA_RANDOM_TINY sets the count.
TEST(RandomNetworks, TiledNetworksRunOnTheIsaSimulator) {
  check_networks(RandomNetworkOptions{}, "tiny-target", "STRATA_RANDOM_TINY", 200, true,
                 HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/tiny.yaml"));
}

// Networks of any size (RandomNetworkOptions::any_size: inputs up to 300 x 300,
// up to 300 channels) on the default and the tiny configuration.
// STRATA_RANDOM_ANY_SIZE sets the count of each.
TEST(RandomNetworks, AnySizeNetworksRunOnTheIsaSimulator) {
  check_networks(RandomNetworkOptions::any_size(), "any-size", "STRATA_RANDOM_ANY_SIZE", 40, false);
  check_networks(RandomNetworkOptions::any_size(), "any-size, tiny-target",
                 "STRATA_RANDOM_ANY_SIZE", 40, false,
                 HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/tiny.yaml"));
}

// The default networks compiled for config/sparse.yaml, a third each with 0,
// 45 and 90 % zero weights: packed CONVs (docs/sparsity.md) beside dense ones.
// STRATA_RANDOM_SPARSE sets the count.
TEST(RandomNetworks, SparseNetworksRunOnTheIsaSimulator) {
  check_networks(RandomNetworkOptions{}, "sparse-target", "STRATA_RANDOM_SPARSE", 150, false,
                 HwTarget::from_yaml(std::string(STRATA_SOURCE_DIR) + "/config/sparse.yaml"));
}

// Every further configuration `make test` builds an RTL model of
// (STRATA_RTL_CONFIGS), and P = N = 16 on a 128-bit bus (one word per beat):
// the dependency model's race check must be exact whatever the word and beat
// sizes. The kept reproducers run first on each. STRATA_RANDOM_CONFIGS sets
// the count per configuration.
TEST(RandomNetworks, FurtherConfigurationsRunOnTheIsaSimulator) {
  const std::string dir = std::string(STRATA_SOURCE_DIR) + "/config/";
  HwTarget wide_bus = HwTarget::from_yaml(dir + "p16n16.yaml");
  wide_bus.name = "p16n16_axi128";
  wide_bus.axi_data_width = 128;
  wide_bus.validate();
  std::vector<HwTarget> targets;
  for (const char* name : {"p4n4", "ecp5_45f_cifar", "p16n16"}) {
    targets.push_back(HwTarget::from_yaml(dir + name + ".yaml"));
  }
  targets.push_back(wide_bus);
  for (const HwTarget& t : targets) {
    SCOPED_TRACE(t.name);
    check_networks(RandomNetworkOptions{}, (t.name + "-target").c_str(), "STRATA_RANDOM_CONFIGS",
                   150, true, t);
  }
}

}  // namespace
}  // namespace strata
