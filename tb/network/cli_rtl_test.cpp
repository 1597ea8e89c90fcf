// SPDX-License-Identifier: Apache-2.0
// The `strata` command line on the Verilated accelerator: `run --backend rtl`
// (bit-exact with the golden backend, --check, --trace), `bench --json` (every
// field, per-layer sums against the whole-run counters, both scheduling modes)
// and the errors of the RTL backend (bad options, a configuration without a
// built model, missing weights, a hung run). Small networks only (lenet5):
// each cifar10_quick run is ~180k cycles, `make demo` covers that one.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "strata/tensor.hpp"
#include "sw_test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::contains;
using test::Outcome;
using test::slurp;

const std::string kSource = STRATA_SOURCE_DIR;
const std::string kLenet = kSource + "/examples/lenet5.yaml";
// Parameters generated at build time (sw/CMakeLists.txt, examples target).
const std::string kLenetWeights = std::string(STRATA_BINARY_DIR) + "/examples/lenet5";

class CliRtl : public test::TempDirTest {
 protected:
  Outcome strata(const std::vector<std::string>& args) {
    return test::run_command(STRATA_CLI, args, dir_);
  }

  static void expect_failure(const Outcome& r, int code, const std::vector<std::string>& parts) {
    test::expect_cli_failure(r, code, parts);
  }

  // A configuration file like config/default.yaml with half-deep banks (no model is built
  // for it).
  std::string small_config() const {
    std::string text = slurp(kSource + "/config/default.yaml");
    const auto set = [&](const std::string& key, const std::string& value) {
      const size_t at = text.find("\n" + key + ":");
      const size_t end = text.find('\n', at + 1);
      text.replace(at + 1, end - at - 1, key + ": " + value);
    };
    set("name", "shallow");
    set("bank_depth", "2048");
    return write("shallow.yaml", text);
  }

  // `strata bench ... --json` on stdout, parsed.
  json bench_json(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"bench", kLenet, "--weights", kLenetWeights, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome r = strata(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  }
};

// `run --backend rtl --check` passes and writes the same .npy as the golden
// backend (byte for byte).
TEST_F(CliRtl, RunRtlMatchesGoldenBackend) {
  const std::string input = kLenetWeights + "/input.npy";
  const Outcome golden = strata({"run", kLenet, "--weights", kLenetWeights, "--input", input,
                                 "--output", path("golden.npy")});
  ASSERT_EQ(golden.code, 0) << golden.err;
  const Outcome rtl = strata({"run", kLenet, "--weights", kLenetWeights, "--input", input,
                              "--output", path("rtl.npy"), "--backend", "rtl", "--check"});
  ASSERT_EQ(rtl.code, 0) << rtl.err << rtl.out;
  EXPECT_TRUE(contains(rtl.out, "0 mismatches")) << rtl.out;
  EXPECT_TRUE(contains(rtl.out, "cycles")) << rtl.out;
  EXPECT_EQ(slurp(path("rtl.npy")), slurp(path("golden.npy")));
  EXPECT_FALSE(slurp(path("rtl.npy")).empty());
}

// A network of two outputs (examples/two_heads.yaml): `run --backend rtl
// --check` compares every element of both outputs and writes one .npy per
// --output, byte for byte the golden backend's; `bench` checks both outputs of
// every run (0 mismatches).
TEST_F(CliRtl, TwoOutputsRunAndBenchOnTheRtl) {
  const std::string yaml = kSource + "/examples/two_heads.yaml";
  const std::string w = std::string(STRATA_BINARY_DIR) + "/examples/two_heads";
  const std::string input = w + "/images.npy";
  const Outcome golden = strata({"run", yaml, "--weights", w, "--input", input, "--output",
                                 path("g32.npy"), "--output", path("g16.npy")});
  ASSERT_EQ(golden.code, 0) << golden.err;
  const Outcome rtl =
      strata({"run", yaml, "--weights", w, "--input", input, "--output", path("r32.npy"),
              "--output", path("r16.npy"), "--backend", "rtl", "--check"});
  ASSERT_EQ(rtl.code, 0) << rtl.err << rtl.out;
  // 4 images of [18][3][3] and [18][6][6].
  EXPECT_TRUE(contains(rtl.out,
                       "3240 output elements compared with the golden model: 0 "
                       "mismatches"))
      << rtl.out;
  EXPECT_EQ(slurp(path("r32.npy")), slurp(path("g32.npy")));
  EXPECT_EQ(slurp(path("r16.npy")), slurp(path("g16.npy")));
  EXPECT_FALSE(slurp(path("r16.npy")).empty());
  const Outcome bench = strata({"bench", yaml, "--weights", w, "--mode", "fine", "--json"});
  ASSERT_EQ(bench.code, 0) << bench.err;
  EXPECT_EQ(json::parse(bench.out)["mismatches"], 0) << bench.out;
}

// The fast model (the command's default) and the checked one (--checked-model,
// the tests' model) count the same cycles in every mode and layer, and report
// which model ran and its simulation speed.
TEST_F(CliRtl, FastAndCheckedModelsCountTheSameCycles) {
  const json fast = bench_json({});
  const json checked = bench_json({"--checked-model"});
  for (const char* mode : {"fine", "completion"}) {
    SCOPED_TRACE(mode);
    const json& f = fast.at("modes").at(mode);
    const json& c = checked.at("modes").at(mode);
    EXPECT_EQ(f.at("model"), "fast");
    EXPECT_EQ(c.at("model"), "checked");
    EXPECT_EQ(f.at("cycles"), c.at("cycles"));
    EXPECT_EQ(f.at("stalls"), c.at("stalls"));
    EXPECT_EQ(f.at("mismatches"), 0);
    EXPECT_EQ(c.at("mismatches"), 0);
    EXPECT_GT(f.at("sim_cycles_per_second").get<double>(), 0.0);
    EXPECT_GT(c.at("sim_cycles_per_second").get<double>(), 0.0);
  }
  ASSERT_EQ(fast.at("layers").size(), checked.at("layers").size());
  for (size_t i = 0; i < fast.at("layers").size(); ++i) {
    EXPECT_EQ(fast.at("layers")[i].at("cycles"), checked.at("layers")[i].at("cycles")) << i;
  }
  const std::string input = kLenetWeights + "/input.npy";
  const Outcome run = strata({"run", kLenet, "--weights", kLenetWeights, "--input", input,
                              "--output", path("rtl.npy"), "--backend", "rtl", "--checked-model"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "checked model")) << run.out;
}

// `bench --json`: every field; the per-layer split (from the trace port) adds up
// to the whole-run CSR counters, cycles and stalls by cause alike; utilisation
// is useful MACs / (P x N x cycles); the PE array takes exactly the compiler's
// beats; both scheduling modes are reported and bit-exact.
TEST_F(CliRtl, BenchJsonFieldsAndCrossChecks) {
  const json j = bench_json({});
  const HwTarget t = HwTarget::defaults();
  const Network net = load_network(kLenet, LoadOptions{kLenetWeights, true});
  const Program prog = compile(net, t, {});

  EXPECT_EQ(j.at("network"), "lenet5");
  const json& cfg = j.at("config");
  EXPECT_EQ(cfg.at("pes"), t.pes);
  EXPECT_EQ(cfg.at("lanes"), t.lanes);
  EXPECT_EQ(cfg.at("memory").at("read_latency"), 60);
  EXPECT_EQ(cfg.at("memory").at("beat_bits"), t.axi_data_width);
  EXPECT_EQ(cfg.at("memory").at("beats_per_cycle"), 1);
  EXPECT_EQ(cfg.at("mode"), "fine");
  EXPECT_EQ(j.at("mismatches"), 0);
  EXPECT_EQ(j.at("images"), 1);

  const auto cycles = j.at("cycles").get<uint64_t>();
  const auto macs = j.at("macs").get<int64_t>();
  EXPECT_EQ(macs, net.macs());
  EXPECT_GT(cycles, 0u);
  EXPECT_DOUBLE_EQ(j.at("utilization").get<double>(),
                   double(macs) / (double(t.pes) * t.lanes * double(cycles)));

  for (const char* mode : {"fine", "completion"}) {
    SCOPED_TRACE(mode);
    const json& m = j.at("modes").at(mode);
    EXPECT_EQ(m.at("mismatches"), 0);
    EXPECT_GT(m.at("cycles").get<uint64_t>(), 0u);
    EXPECT_DOUBLE_EQ(m.at("utilization").get<double>(),
                     double(macs) / (double(t.pes) * t.lanes * m.at("cycles").get<double>()));
  }
  const json& fine = j.at("modes").at("fine");
  EXPECT_EQ(fine.at("cycles").get<uint64_t>(), cycles);
  EXPECT_DOUBLE_EQ(j.at("fine_speedup").get<double>(),
                   j.at("modes").at("completion").at("cycles").get<double>() / double(cycles));

  // Per layer: one entry per compiled op, sums equal to the counters.
  const json& layers = j.at("layers");
  ASSERT_EQ(layers.size(), prog.ops.size());
  const std::vector<OpWork> work = op_work(prog);
  uint64_t sum_cycles = 0, sum_mac_active = 0;
  int64_t sum_macs = 0;
  std::map<std::string, uint64_t> stalls, busy;
  for (size_t k = 0; k < layers.size(); ++k) {
    const json& l = layers[k];
    SCOPED_TRACE(prog.ops[k].name);
    EXPECT_EQ(l.at("name"), prog.ops[k].name);
    EXPECT_EQ(l.at("tag"), prog.ops[k].tag);
    EXPECT_EQ(l.at("macs").get<int64_t>(), prog.ops[k].macs);
    const auto c = l.at("cycles").get<uint64_t>();
    EXPECT_GT(c, 0u);
    EXPECT_DOUBLE_EQ(l.at("utilization").get<double>(),
                     double(prog.ops[k].macs) / (double(t.pes) * t.lanes * double(c)));
    // Padded taps cost nothing: the PE array takes exactly the compiler's beats.
    EXPECT_EQ(l.at("mac_active_cycles").get<int64_t>(), work[k].beats);
    EXPECT_EQ(l.at("beats").get<int64_t>(), work[k].beats);
    EXPECT_EQ(l.at("skipped_beats").get<int64_t>(), work[k].dense_beats - work[k].beats);
    EXPECT_EQ(l.at("bytes").at("load").get<int64_t>(), work[k].load_bytes);
    EXPECT_EQ(l.at("bytes").at("store").get<int64_t>(), work[k].store_bytes);
    sum_cycles += c;
    sum_macs += l.at("macs").get<int64_t>();
    sum_mac_active += l.at("mac_active_cycles").get<uint64_t>();
    for (const auto& [cause, v] : l.at("stalls").items()) stalls[cause] += v.get<uint64_t>();
    for (const auto& [engine, v] : l.at("busy").items()) busy[engine] += v.get<uint64_t>();
  }
  EXPECT_EQ(sum_cycles, cycles);
  EXPECT_EQ(sum_macs, macs);
  EXPECT_EQ(sum_mac_active, fine.at("mac_active_cycles").get<uint64_t>());
  ASSERT_EQ(stalls.size(), 6u);
  for (const auto& [cause, v] : fine.at("stalls").items()) {
    EXPECT_EQ(stalls[cause], v.get<uint64_t>()) << "stall cause " << cause;
  }
  ASSERT_EQ(busy.size(), 3u);
  for (const auto& [engine, v] : fine.at("busy").items()) {
    EXPECT_EQ(busy[engine], v.get<uint64_t>()) << "busy " << engine;
  }
  EXPECT_GT(stalls["load_mem"], 0u) << "a 60-cycle memory must make the load engine wait";
}

// --json FILE keeps the table on stdout; --mode fine runs one mode only; a
// batch reports per-image figures.
TEST_F(CliRtl, BenchTableJsonFileOneModeAndBatch) {
  const Outcome r = strata({"bench", kLenet, "--weights", kLenetWeights, "--mode", "fine",
                            "--batch", "3", "--json", path("bench.json")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "total")) << r.out;
  EXPECT_TRUE(contains(r.out, "c1+s2")) << r.out;
  EXPECT_TRUE(contains(r.out, "padded taps skipped")) << r.out;
  const json j = json::parse(slurp(path("bench.json")));
  EXPECT_EQ(j.at("images"), 3);
  EXPECT_EQ(j.at("mismatches"), 0);
  EXPECT_TRUE(j.at("modes").contains("fine"));
  EXPECT_FALSE(j.at("modes").contains("completion"));
  EXPECT_FALSE(j.contains("fine_speedup"));
  EXPECT_DOUBLE_EQ(j.at("cycles_per_image").get<double>(), j.at("cycles").get<double>() / 3.0);
  EXPECT_EQ(j.at("macs").get<int64_t>(),
            3 * load_network(kLenet, LoadOptions{kLenetWeights, false}).macs());
}

// --trace writes an FST of the run and names the GTKWave layout, which exists.
// Without --weights, bench uses the parameters `strata gen --seed 1` makes: the
// same cycles as with those files (build/examples/lenet5 was made that way).
TEST_F(CliRtl, BenchWithoutWeightsGeneratesSeedOne) {
  const Outcome r = strata({"bench", kLenet, "--mode", "fine", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json generated = json::parse(r.out);
  EXPECT_EQ(generated.at("mismatches").get<int64_t>(), 0);
  EXPECT_TRUE(contains(generated.at("parameters").get<std::string>(), "seed 1"));
  const json files = bench_json({"--mode", "fine"});
  EXPECT_EQ(files.at("parameters").get<std::string>(), kLenetWeights);
  EXPECT_EQ(generated.at("cycles"), files.at("cycles"));
  EXPECT_EQ(generated.at("macs"), files.at("macs"));
}

// The sparse build (config/sparse.yaml, in the default STRATA_RTL_CONFIGS):
// bench compiles packed CONVs for it, runs the dense program of the same
// weights on the dense build of the same hardware (the default model), and
// both equal the golden model element by element. cifar10_quick with 50 %
// zero weights (issue target: at least 1.25x): the packed program's beats are
// the PE array's active cycles on the sparse build, the dense program's on the
// dense build, and the speed-up is the ratio of the two runs' cycles.
TEST_F(CliRtl, BenchOnTheSparseBuild) {
  const Outcome r =
      strata({"bench", kSource + "/examples/cifar10_quick.yaml", "--sparsity", "0.5", "--mode",
              "fine", "--config", kSource + "/config/sparse.yaml", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("mismatches").get<int64_t>(), 0);
  EXPECT_TRUE(j.at("config").at("sparse").get<bool>());
  const json& sp = j.at("sparse");
  EXPECT_EQ(sp.at("packed_ops").get<int>(), 3);  // the three convolutions
  EXPECT_EQ(sp.at("beats").get<int64_t>(),
            j.at("modes").at("fine").at("mac_active_cycles").get<int64_t>());
  const json& dense = sp.at("dense_build");
  EXPECT_EQ(dense.at("model").get<std::string>(), "default");
  EXPECT_EQ(dense.at("mismatches").get<int64_t>(), 0);
  EXPECT_EQ(dense.at("mac_active_cycles").get<int64_t>(),
            sp.at("dense_program_beats").get<int64_t>());
  const double speedup = sp.at("speedup").get<double>();
  EXPECT_DOUBLE_EQ(speedup, dense.at("cycles").get<double>() / j.at("cycles").get<double>());
  EXPECT_GE(speedup, 1.25);
  int64_t dense_cycles = 0;
  for (const json& l : j.at("layers")) dense_cycles += l.at("dense_build_cycles").get<int64_t>();
  EXPECT_EQ(dense_cycles, dense.at("cycles").get<int64_t>());

  // A dense configuration's report has no sparse section.
  const Outcome d =
      strata({"bench", kLenet, "--weights", kLenetWeights, "--mode", "fine", "--json"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_FALSE(json::parse(d.out).contains("sparse"));
}

// --instances (docs/cascade.md): compile writes one image per stage; run
// --backend isa and rtl stream images through the chain and equal the golden
// backend; bench streams through 4 stages and through one, every output
// checked, with the speed-up, the latency and the balance bound in its JSON.
TEST_F(CliRtl, CascadeInstances) {
  const std::string net = kSource + "/examples/strided_net.yaml";
  const std::string weights = std::string(STRATA_BINARY_DIR) + "/examples/strided_net";
  const Outcome c = strata({"compile", net, "--weights", weights, "--instances", "4", "--out",
                            path("chain.bin"), "--listing", path("chain.txt")});
  ASSERT_EQ(c.code, 0) << c.err;
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(fs::is_regular_file(path(fmt::format("chain.stage{}.bin", k)))) << k;
    EXPECT_TRUE(contains(slurp(path(fmt::format("chain.stage{}.txt", k))), "CONFIG")) << k;
  }
  EXPECT_TRUE(contains(slurp(path("chain.stage1.txt")), "<- cascade #"));
  EXPECT_TRUE(contains(slurp(path("chain.stage0.txt")), "-> cascade #"));
  EXPECT_TRUE(contains(c.out, "balance bound")) << c.out;
  const std::string input = weights + "/images.npy";
  const Outcome g =
      strata({"run", net, "--weights", weights, "--input", input, "--output", path("golden.npy")});
  ASSERT_EQ(g.code, 0) << g.err;
  for (const char* backend : {"isa", "rtl"}) {
    const Outcome r = strata({"run", net, "--weights", weights, "--input", input, "--output",
                              path(fmt::format("{}.npy", backend)), "--backend", backend,
                              "--instances", "2", "--check"});
    ASSERT_EQ(r.code, 0) << backend << ": " << r.err;
    EXPECT_EQ(slurp(path(fmt::format("{}.npy", backend))), slurp(path("golden.npy"))) << backend;
  }
  const Outcome b = strata({"bench", net, "--weights", weights, "--instances", "4", "--batch", "4",
                            "--json", path("chain.json")});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "0 mismatches")) << b.out;
  const json j = json::parse(slurp(path("chain.json")));
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_EQ(j.at("runs")[0].at("instances"), 1);
  EXPECT_EQ(j.at("runs")[1].at("instances"), 4);
  EXPECT_EQ(j.at("runs")[1].at("stages").size(), 4u);
  EXPECT_DOUBLE_EQ(j.at("runs")[0].at("speedup").get<double>(), 1.0);
  // Four images through four stages: faster than one accelerator, never
  // faster than the partition allows.
  const double speedup = j.at("runs")[1].at("speedup").get<double>();
  EXPECT_GT(speedup, 1.3);
  EXPECT_LE(speedup, j.at("runs")[1].at("balance_bound").get<double>());
  expect_failure(strata({"run", net, "--weights", weights, "--input", input, "--output",
                         path("x.npy"), "--instances", "2"}),
                 2, {"--instances needs --backend isa or rtl"});
  expect_failure(strata({"compile", kSource + "/examples/lenet5.yaml", "--weights", kLenetWeights,
                         "--instances", "3", "--out", path("l.bin")}),
                 1, {"can be cut only after op '", "on at most 2 instances"});
  expect_failure(strata({"bench", net, "--instances", "5"}), 2, {"--instances"});
  expect_failure(strata({"bench", net, "--instances", "2", "--config", small_config()}), 1,
                 {"no cascade model is built for configuration", "default (4 stages)"});
}

TEST_F(CliRtl, RunRtlTraceWritesFst) {
  const Outcome r =
      strata({"run", kLenet, "--weights", kLenetWeights, "--input", kLenetWeights + "/input.npy",
              "--output", path("y.npy"), "--backend", "rtl", "--trace", path("run.fst")});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(path("run.fst")));
  EXPECT_GT(fs::file_size(path("run.fst")), 10000u);
  EXPECT_TRUE(contains(r.out, "strata_top.gtkw")) << r.out;
  EXPECT_TRUE(fs::exists(kSource + "/tb/waves/strata_top.gtkw"));
}

// Bad options, a configuration without a built model, missing weights, a
// network the configuration cannot run and a hung run: one clear error line.
TEST_F(CliRtl, ErrorsAreClear) {
  const std::vector<std::string> bench = {"bench", kLenet, "--weights", kLenetWeights};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = bench;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_failure(strata(with({"--mode", "sideways"})), 2, {"sideways"});
  expect_failure(strata(with({"--batch", "0"})), 2, {"batch"});
  expect_failure(strata(with({"--stall", "2"})), 2, {"stall"});
  expect_failure(strata(with({"--latency", "0"})), 2, {"latency"});
  expect_failure(strata(with({"--batch", "2", "--input", kLenetWeights + "/input.npy"})), 2,
                 {"excludes", "--batch", "--input"});
  expect_failure(strata(with({"--sparsity", "0.5"})), 2, {"excludes", "--sparsity", "--weights"});
  expect_failure(strata({"bench", kLenet, "--sparsity", "1.5"}), 2, {"sparsity"});
  expect_failure(strata({"run", kLenet, "--weights", kLenetWeights, "--input",
                         kLenetWeights + "/input.npy", "--output", path("y.npy"), "--check"}),
                 2, {"--backend rtl only"});

  // A configuration the build has no RTL model for.
  const std::string shallow = small_config();
  expect_failure(strata(with({"--config", shallow})), 1,
                 {"no RTL model is built for configuration 'shallow'", "built: default"});
  expect_failure(
      strata({"run", kLenet, "--weights", kLenetWeights, "--input", kLenetWeights + "/input.npy",
              "--output", path("y.npy"), "--backend", "rtl", "--target", shallow}),
      1, {"no RTL model is built"});
  EXPECT_FALSE(fs::exists(path("y.npy")));

  // Missing weights.
  expect_failure(strata({"bench", kLenet, "--weights", path("nowhere")}), 1,
                 {"layer 'c1'", "not found"});

  // A network the configuration cannot run (kernel 9 > max_kernel 7).
  write("big.yaml",
        "name: big_kernel\ninput: [1, 16, 16]\nlayers:\n"
        "  - {name: wide, type: conv, out_channels: 4, kernel: 9}\n");
  ASSERT_EQ(strata({"gen", path("big.yaml"), "--seed", "1", "--out", path("bigw")}).code, 0);
  expect_failure(strata({"bench", path("big.yaml"), "--weights", path("bigw")}), 1,
                 {"wide", "max_kernel"});

  // A run that does not finish in time is reported as hung, with the limit.
  const Outcome hung = strata(with({"--timeout", "1000"}));
  expect_failure(hung, 1, {"did not finish within 1000 cycles (timeout)"});
}

// The cycle model (docs/planner.md, "Cycles") within 10 % of the RTL, both
// scheduling modes, for the small example networks on each configuration
// built here (the large ones: make regress). One test per configuration,
// when its model is built (STRATA_RTL_CONFIGS).
class CliRtlCycleModel : public CliRtl, public ::testing::WithParamInterface<const char*> {
 protected:
  // Benches each network on this configuration in both modes and checks
  // the outputs and the prediction of each mode; false when the
  // configuration's model is not built.
  bool expect_within_ten_percent(std::initializer_list<const char*> networks) {
    const std::string config = kSource + "/config/" + GetParam() + ".yaml";
    for (const char* net : networks) {
      SCOPED_TRACE(net);
      std::vector<std::string> args = {
          "bench", kSource + "/examples/" + net + ".yaml", "--config", config, "--mode", "both",
          "--json"};
      if (std::string(GetParam()) == "sparse") args.insert(args.end(), {"--sparsity", "0.5"});
      const Outcome r = strata(args);
      if (r.code != 0 && contains(r.err, "no RTL model is built")) return false;
      if (r.code != 0) {
        ADD_FAILURE() << r.err;
        continue;
      }
      const json j = json::parse(r.out);
      EXPECT_EQ(j.at("mismatches").get<int64_t>(), 0);
      for (const char* mode : {"fine", "completion"}) {
        const double rtl = j.at("modes").at(mode).at("cycles").get<double>();
        const double predicted = j.at("modes").at(mode).at("predicted_cycles").get<double>();
        EXPECT_LE(std::abs(predicted - rtl), 0.10 * rtl)
            << mode << ": predicted " << predicted << ", RTL " << rtl;
      }
    }
    return true;
  }
};

TEST_P(CliRtlCycleModel, WithinTenPercentOfTheRtl) {
  if (!expect_within_ten_percent(
          {"lenet5", "cifar10_quick", "strided_net", "inverted_residual_net", "residual_net"})) {
    GTEST_SKIP() << GetParam() << " is not built (STRATA_RTL_CONFIGS)";
  }
}

// The large examples (224 x 224 to 1024 x 768 and 416 x 416, maps in
// external memory, layers in bands and strips): minutes of simulation each,
// so only when STRATA_CYCLE_MODEL_LARGE=1 (make regress sets it), and on
// the default and P = N = 16 configurations.
TEST_P(CliRtlCycleModel, LargeNetworksWithinTenPercentOfTheRtl) {
  const char* large = std::getenv("STRATA_CYCLE_MODEL_LARGE");
  if (large == nullptr || std::string(large) != "1") {
    GTEST_SKIP() << "large networks: STRATA_CYCLE_MODEL_LARGE=1 (make regress)";
  }
  if (std::string(GetParam()) != "default" && std::string(GetParam()) != "p16n16") {
    GTEST_SKIP() << "large networks: on the default and P = N = 16 configurations";
  }
  if (!expect_within_ten_percent({"imagenet_small", "hd_1024x768", "vgg_stack224", "resnet18_stack",
                                  "yolo416_backbone"})) {
    GTEST_SKIP() << GetParam() << " is not built (STRATA_RTL_CONFIGS)";
  }
}

INSTANTIATE_TEST_SUITE_P(Configurations, CliRtlCycleModel,
                         ::testing::Values("default", "tiny", "sparse", "ecp5_45f_cifar", "p16n16",
                                           "p4n4"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace strata
