// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the built `strata` binary: gen -> info -> run on
// cifar10_quick, per-layer dumps, batches, determinism, and exit codes and
// messages for every kind of bad input.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "strata_rt.h"
#include "sw_test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::Outcome;
using test::slurp;

const std::string kSource = STRATA_SOURCE_DIR;
const std::string kCifar = kSource + "/examples/cifar10_quick.yaml";

class Cli : public test::TempDirTest {
 protected:
  Outcome strata(const std::vector<std::string>& args) {
    return test::run_command(STRATA_CLI, args, dir_);
  }

  // A failure: the exit code, and exactly one stderr line "strata: error: ..."
  // containing every part.
  void expect_failure(const Outcome& r, int code, const std::vector<std::string>& parts) {
    test::expect_cli_failure(r, code, parts);
    if (code == 1) EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  // Generates cifar10_quick parameters into dir/<sub> (seed 1).
  std::string generate(const std::string& sub = "w", const std::string& seed = "1") {
    const Outcome r = strata({"gen", kCifar, "--seed", seed, "--out", path(sub)});
    EXPECT_EQ(r.code, 0) << r.err;
    return path(sub);
  }
};

uint32_t fnv1a32(const Tensor<int8_t>& t) {
  uint32_t h = 2166136261u;
  for (int8_t v : t.values()) {
    h ^= static_cast<uint8_t>(v);
    h *= 16777619u;
  }
  return h;
}

TEST_F(Cli, GenInfoRunCifar10Quick) {
  const Outcome g = strata({"gen", kCifar, "--seed", "1", "--out", path("w")});
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_TRUE(contains(g.out, "wrote 22 files")) << g.out;
  EXPECT_TRUE(g.err.empty()) << g.err;

  const Outcome info = strata({"info", kCifar, "--weights", path("w")});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "(loaded and validated)")) << info.out;
  EXPECT_TRUE(contains(info.out, "conv1")) << info.out;
  EXPECT_TRUE(contains(info.out, "[32, 16, 16]")) << info.out;
  EXPECT_TRUE(contains(info.out, " 2276736 ")) << info.out;  // conv1 MACs
  const Network net = load_network(kCifar, {path("w"), true});
  EXPECT_TRUE(contains(info.out, fmt::format("{} MACs per image", net.macs()))) << info.out;

  const Outcome run = strata({"run", kCifar, "--weights", path("w"), "--input", path("w/input.npy"),
                              "--output", path("out/y.npy")});
  ASSERT_EQ(run.code, 0) << run.err;
  const Tensor<int8_t> y = load_npy<int8_t>(path("out/y.npy"));
  EXPECT_EQ(y.shape(), (Shape{10, 1, 1}));
  const Tensor<int8_t> want = run_network(net, load_npy<int8_t>(path("w/input.npy")));
  EXPECT_EQ(y, want);
  int64_t sum = 0;
  for (int8_t v : want.values()) sum += v;
  EXPECT_TRUE(
      contains(run.out, fmt::format("checksum fnv1a32 {:#010x}, sum {}", fnv1a32(want), sum)))
      << run.out;
  const auto top =
      std::max_element(want.values().begin(), want.values().end()) - want.values().begin();
  EXPECT_TRUE(contains(run.out, fmt::format("top-1 class {} (value {})", top, want[top])))
      << run.out;
  for (const Layer& l : net.layers) EXPECT_TRUE(contains(run.out, " " + l.name + " ")) << l.name;
}

// A network of two outputs (examples/two_heads.yaml): `info` lists them, `run`
// writes one .npy per --output in the network's order, the ISA simulator's
// files equal the golden model's, a wrong --output count or a repeated path is
// an error naming the outputs, and the bundle lists both heads.
TEST_F(Cli, TwoOutputsRunCompileAndInfo) {
  const std::string yaml = kSource + "/examples/two_heads.yaml";
  const Outcome g = strata({"gen", yaml, "--seed", "14", "--out", path("w")});
  ASSERT_EQ(g.code, 0) << g.err;
  const Outcome info = strata({"info", yaml, "--weights", path("w")});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "2 outputs: 0 head32 [18, 3, 3], 1 head16 [18, 6, 6]"))
      << info.out;
  const Network net = load_network(yaml, {path("w"), true});
  const Tensor<int8_t> images = load_npy<int8_t>(path("w/images.npy"));
  const std::vector<Tensor<int8_t>> want = run_network_outputs(net, images);
  ASSERT_EQ(want.size(), 2u);
  for (const std::string backend : {"golden", "isa"}) {
    SCOPED_TRACE(backend);
    const Outcome run = strata({"run", yaml, "--weights", path("w"), "--input",
                                path("w/images.npy"), "--output", path(backend + "_32.npy"),
                                "--output", path(backend + "_16.npy"), "--backend", backend});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(load_npy<int8_t>(path(backend + "_32.npy")), want[0]);
    EXPECT_EQ(load_npy<int8_t>(path(backend + "_16.npy")), want[1]);
    EXPECT_TRUE(
        contains(run.out, "output 0 'head32' " + path(backend + "_32.npy") + " [4, 18, 3, 3]"))
        << run.out;
    EXPECT_TRUE(contains(run.out, fmt::format("checksum fnv1a32 {:#010x}", fnv1a32(want[1]))))
        << run.out;
  }
  expect_failure(strata({"run", yaml, "--weights", path("w"), "--input", path("w/input.npy"),
                         "--output", path("y.npy")}),
                 1,
                 {"network 'two_heads' has 2 outputs (head32, head16): give --output once per "
                  "output, in that order"});
  expect_failure(strata({"run", yaml, "--weights", path("w"), "--input", path("w/input.npy"),
                         "--output", path("y.npy"), "--output", path("y.npy")}),
                 1, {"--output '" + path("y.npy") + "' is given twice"});
  EXPECT_FALSE(fs::exists(path("y.npy")));
  // A network of one output takes exactly one --output.
  const std::string w = generate("c");
  expect_failure(strata({"run", kCifar, "--weights", w, "--input", w + "/input.npy", "--output",
                         path("a.npy"), "--output", path("b.npy")}),
                 1, {"network 'cifar10_quick' has 1 output (ip2): give --output once"});

  const Outcome comp = strata({"compile", yaml, "--weights", path("w"), "--bundle", path("t.strb"),
                               "--out", path("t.bin"), "--listing", path("t.txt")});
  ASSERT_EQ(comp.code, 0) << comp.err;
  EXPECT_TRUE(contains(comp.out, "output0:head32")) << comp.out;
  const std::string listing = slurp(path("t.txt"));
  EXPECT_TRUE(contains(listing, "# output 0 'head32' [18][3][3]: map [row][group][col] per image"))
      << listing;
  EXPECT_TRUE(contains(listing, "# output 1 'head16' [18][6][6]: map [group][row][col] per image"))
      << listing;
  const std::string bytes = slurp(path("t.strb"));
  strata_bundle b{};
  strata_error err{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK) << err.text;
  ASSERT_EQ(b.output_count, 2u);
  strata_tensor_info t32{}, t16{};
  ASSERT_EQ(strata_bundle_output(&b, 0, &t32), STRATA_OK);
  ASSERT_EQ(strata_bundle_output(&b, 1, &t16), STRATA_OK);
  EXPECT_EQ(t32.h, 3u);
  EXPECT_EQ(t16.h, 6u);
  // A cascade chain carries one map: refused for two outputs.
  expect_failure(
      strata({"compile", yaml, "--weights", path("w"), "--out", path("c.bin"), "--instances", "2"}),
      1, {"network 'two_heads' has 2 outputs: a cascade chain carries one map"});
}

TEST_F(Cli, DumpDirWritesOneFilePerLayer) {
  const std::string w = generate();
  const Outcome r = strata({"run", kCifar, "--weights", w, "--input", w + "/input.npy", "--output",
                            path("y.npy"), "--dump-dir", path("dump")});
  ASSERT_EQ(r.code, 0) << r.err;
  const Network net = load_network(kCifar, {w, true});
  std::vector<std::string> want_files;
  std::vector<Tensor<int8_t>> outs;
  run_network(net, load_npy<int8_t>(w + "/input.npy"),
              [&](size_t i, const Layer& l, const Tensor<int8_t>& t) {
                want_files.push_back(fmt::format("{:02}_{}.npy", i, l.name));
                outs.push_back(t);
              });
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path("dump")))
    files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files, want_files);
  EXPECT_EQ(files.front(), "00_conv1.npy");
  EXPECT_EQ(files.back(), "08_ip2.npy");
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(load_npy<int8_t>(path("dump/" + files[i])), outs[i]) << files[i];
    // The table row ends in the layer output's checksum, 0x + 8 hex digits.
    const std::string row_end = fmt::format(" {:#010x}\n", fnv1a32(outs[i]));
    EXPECT_TRUE(contains(r.out, row_end)) << row_end << " not in:\n" << r.out;
  }
}

TEST_F(Cli, BatchInput) {
  const std::string w = generate();
  const Outcome r = strata({"run", kCifar, "--weights", w, "--input", w + "/images.npy", "--output",
                            path("y.npy"), "--dump-dir", path("dump")});
  ASSERT_EQ(r.code, 0) << r.err;
  const Network net = load_network(kCifar, {w, true});
  const Tensor<int8_t> images = load_npy<int8_t>(w + "/images.npy");
  const Tensor<int8_t> y = load_npy<int8_t>(path("y.npy"));
  ASSERT_EQ(y.shape(), (Shape{4, 10, 1, 1}));
  EXPECT_EQ(y, run_network(net, images));
  EXPECT_EQ(load_npy<int8_t>(path("dump/03_conv2.npy")).shape(), (Shape{4, 32, 16, 16}));
  EXPECT_TRUE(contains(r.out, "top-1 classes [")) << r.out;
  EXPECT_TRUE(contains(r.out, "(4 images)")) << r.out;
}

TEST_F(Cli, InfoWithoutWeightsShowsStructure) {
  const Outcome r = strata({"info", kCifar});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "structure only")) << r.out;
  EXPECT_TRUE(contains(r.out, "[64, 4, 4]")) << r.out;
  EXPECT_TRUE(contains(r.out, "10317824 MACs per image")) << r.out;
  // Weights present but one of them broken: that is an error, not "absent".
  const std::string w = generate();
  save_npy(w + "/conv2_bias.npy", Tensor<int32_t>({31}, 0));
  expect_failure(strata({"info", kCifar, "--weights", w}), 1,
                 {"layer 'conv2'", "has shape [31], expected [32]"});
}

TEST_F(Cli, GenIsDeterministic) {
  generate("a", "5");
  generate("b", "5");
  generate("c", "6");
  int files = 0, differing = 0;
  for (const auto& e : fs::directory_iterator(path("a"))) {
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    EXPECT_EQ(slurp(e.path()), slurp(dir_ / "b" / name));
    differing += slurp(e.path()) != slurp(dir_ / "c" / name);
    ++files;
  }
  EXPECT_EQ(files, 22);
  EXPECT_GE(differing, 2 * 5 + 2);  // weights, biases and images all change
  EXPECT_NE(slurp(dir_ / "a" / "conv1_weight.npy"), slurp(dir_ / "c" / "conv1_weight.npy"));
}

TEST_F(Cli, GenOptions) {
  const Outcome r = strata({"gen", kCifar, "--seed", "2", "--out", path("s"), "--sparsity", "0.5",
                            "--images", "2", "--weight-min=-7", "--weight-max", "7"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Tensor<int8_t> w = load_npy<int8_t>(path("s/conv2_weight.npy"));
  int64_t zeros = 0;
  for (int8_t v : w.values()) {
    zeros += v == 0;
    EXPECT_LE(std::abs(v), 7);
  }
  EXPECT_EQ(zeros, w.size() / 2);
  EXPECT_EQ(load_npy<int8_t>(path("s/images.npy")).shape(), (Shape{2, 3, 32, 32}));
}

// strata plan: the table, the winner written as a configuration that loads
// (the planner's own checks are sw/tests/planner_test.cpp), and its errors.
TEST_F(Cli, PlanWritesALoadableConfiguration) {
  const std::string out = path("cfg/planned.yaml");
  const Outcome r = strata({"plan", kCifar, "--device", "ecp5-45f", "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "device ecp5-45f")) << r.out;
  EXPECT_TRUE(contains(r.out, "540 candidates weighed")) << r.out;
  EXPECT_TRUE(contains(r.out, "winner: #1, P = N = 8")) << r.out;
  const HwTarget t = HwTarget::from_yaml(out);
  EXPECT_EQ(t.name, "planned");
  EXPECT_EQ(t.pes, 8);
  EXPECT_GT(t.pe_fabric_lanes, 0);  // 72 DSPs: some products in LUTs
  // The configuration make test builds an RTL model of (CliRtlCycleModel,
  // StrataTop.FurtherConfigurationsBitExact) is this plan's winner.
  HwTarget shipped = HwTarget::from_yaml(kSource + "/config/ecp5_45f_cifar.yaml");
  shipped.name = t.name;
  EXPECT_EQ(shipped, t) << "config/ecp5_45f_cifar.yaml is not what strata plan picks";

  // Throughput: chains weighed too; sparse generated weights.
  const Outcome chains = strata(
      {"plan", kCifar, "--device", "ecp5-85f", "--objective", "throughput", "--sparsity", "0.75"});
  ASSERT_EQ(chains.code, 0) << chains.err;
  EXPECT_TRUE(contains(chains.out, "1620 candidates weighed")) << chains.out;
  EXPECT_TRUE(contains(chains.out, ", sparse, ")) << chains.out;
  expect_failure(strata({"plan", kCifar, "--device", "ecp5-45f", "--sparsity", "1.5"}), 2,
                 {"--sparsity"});

  expect_failure(strata({"plan", kCifar, "--device", "ecp5-12x"}), 1,
                 {"unknown device 'ecp5-12x'", "ecp5-45f"});
  expect_failure(strata({"plan", kCifar, "--device", "ecp5-45f", "--objective", "fast"}), 2,
                 {"--objective"});
  expect_failure(strata({"plan", path("missing.yaml"), "--device", "ecp5-45f"}), 1,
                 {"missing.yaml"});
  const std::string bad_device = write("broken.yaml", "name: broken\nluts: 5\n");
  expect_failure(strata({"plan", kCifar, "--device", bad_device}), 1, {bad_device, "missing key"});
}

// info --target: the cycle model's prediction; --device: the resources.
TEST_F(Cli, InfoPredictsCyclesAndResources) {
  const Outcome r = strata(
      {"info", kCifar, "--target", kSource + "/config/default.yaml", "--device", "ecp5-85f"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "done at")) << r.out;
  EXPECT_TRUE(contains(r.out, "cycles per image (the cycle model")) << r.out;
  // 122 DP16KD as routed before the tables, and one per lane for the 8 tables.
  EXPECT_TRUE(contains(r.out, "99 of 156 MULT18X18D, 130 of 208 DP16KD")) << r.out;
  EXPECT_TRUE(contains(r.out, "PE caches")) << r.out;
  expect_failure(strata({"info", kCifar, "--device", "ecp5-85f"}), 2, {"--device requires"});
}

TEST_F(Cli, ErrorsExitWithOneAndAClearMessage) {
  const std::string w = generate();
  // Bad YAML: file and line.
  const std::string bad =
      write("bad.yaml",
            "name: bad\ninput: [1, 8, 8]\nlayers:\n"
            "  - {name: c1, type: conv, out_channels: 4, kernel: 3, strdie: 2}\n");
  expect_failure(strata({"info", bad}), 1, {bad + ":4: layer 'c1': unknown key 'strdie'"});
  expect_failure(strata({"run", bad, "--input", w + "/input.npy", "--output", path("y.npy")}), 1,
                 {bad + ":4:"});
  expect_failure(strata({"gen", bad, "--seed", "1", "--out", path("g")}), 1, {bad + ":4:"});
  const std::string syntax = write("syntax.yaml", "name: x\ninput: [1, 8, 8\nlayers: []\n");
  expect_failure(strata({"info", syntax}), 1, {syntax + ":", "YAML syntax error"});
  expect_failure(strata({"info", path("none.yaml")}), 1, {path("none.yaml"), "no such file"});

  // Missing, wrong-shaped and wrong-typed inputs.
  const std::vector<std::string> run = {"run",      kCifar,        "--weights", w,
                                        "--output", path("y.npy"), "--input"};
  auto with_input = [&](const std::string& input) {
    std::vector<std::string> a = run;
    a.push_back(input);
    return a;
  };
  expect_failure(strata(with_input(path("missing.npy"))), 1,
                 {path("missing.npy") + ": input file not found"});
  expect_failure(strata(with_input(path("w"))), 1, {path("w") + ": input is not a regular file"});
  expect_failure(
      strata({"run", kCifar, "--weights", w, "--input", w + "/input.npy", "--output", path("w")}),
      1, {path("w") + ": output is a directory"});
  save_npy(path("small.npy"), Tensor<int8_t>({3, 16, 16}, 1));
  expect_failure(
      strata(with_input(path("small.npy"))), 1,
      {"has shape [3, 16, 16], network 'cifar10_quick' expects [3, 32, 32] or [N, 3, 32, 32]"});
  save_npy(path("wide.npy"), Tensor<int32_t>({3, 32, 32}, 1));
  expect_failure(strata(with_input(path("wide.npy"))), 1, {"expected int8, file has int32"});
  write("junk.npy", "junk");
  expect_failure(strata(with_input(path("junk.npy"))), 1, {path("junk.npy")});
  EXPECT_FALSE(fs::exists(path("y.npy")));

  // Weights missing for run.
  expect_failure(strata({"run", kCifar, "--weights", path("nowhere"), "--input", w + "/input.npy",
                         "--output", path("y.npy")}),
                 1, {"layer 'conv1'", "weights file", "not found"});

  // Options of the other backends are refused before anything runs.
  const std::vector<std::string> good_run = {
      "run", kCifar, "--weights", w, "--input", w + "/input.npy", "--output", path("y.npy")};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = good_run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_failure(strata(with({"--check"})), 2, {"--check and --trace apply to --backend rtl"});
  expect_failure(strata(with({"--backend", "isa", "--trace", path("t.fst")})), 2,
                 {"--backend rtl only"});
  expect_failure(strata(with({"--backend", "rtl", "--dump-dir", path("d")})), 2,
                 {"--dump-dir needs --backend golden"});
  expect_failure(strata(with({"--target", kSource + "/config/default.yaml"})), 2,
                 {"--target applies to --backend isa and rtl only"});
  EXPECT_FALSE(fs::exists(path("y.npy")));
  EXPECT_FALSE(fs::exists(path("t.fst")));

  // A hardware configuration that is not a file, and YAML nested past the reader's depth.
  expect_failure(strata(with({"--backend", "isa", "--target", "/dev/null"})), 1,
                 {"/dev/null: hardware configuration is not a regular file"});
  const std::string deep =
      write("deep.yaml", "name: " + std::string(2000, '[') + std::string(2000, ']') + "\n");
  expect_failure(strata({"info", deep}), 1, {deep + ":1: YAML nesting deeper than"});
  expect_failure(strata(with({"--backend", "isa", "--target", deep})), 1,
                 {deep + ":1: YAML nesting deeper than"});

#ifndef STRATA_HAVE_RTL
  // A build without Verilator has no RTL backend, and says so.
  const Outcome rtl = strata(with({"--backend", "rtl"}));
  expect_failure(rtl, 1, {"RTL backend not built", "STRATA_BUILD_RTL=OFF"});
  expect_failure(strata({"bench", kCifar, "--weights", w}), 1, {"STRATA_BUILD_RTL=OFF"});
#endif
}

// A file that cannot be written completely is exit 1 with the path and the
// reason, and nothing is left under its name: the output of `run` on a full
// device, and `gen` and `compile` under a file-size limit (as on a full disk).
TEST_F(Cli, FailedWritesExitWithOneAndLeaveNoPartialFile) {
  const std::string w = generate();
  const std::vector<std::string> run = {"run",     kCifar,           "--weights", w,
                                        "--input", w + "/input.npy", "--output"};
  for (const char* backend : {"golden", "isa"}) {
    std::vector<std::string> a = run;
    a.insert(a.end(), {"/dev/full", "--backend", backend});
    expect_failure(strata(a), 1, {"/dev/full: cannot write file", "No space left on device"});
  }
  // 64 KiB: enough for the YAML's small files, not for conv3's weights or the program.
  const auto limited = [&](const std::vector<std::string>& args) {
    std::string cmd = "trap '' XFSZ; ulimit -f 64; exec " + test::shell_quote(STRATA_CLI);
    for (const std::string& arg : args) cmd += " " + test::shell_quote(arg);
    return test::run_command("/bin/bash", {"-c", cmd}, dir_);
  };
  const Outcome gen = limited({"gen", kCifar, "--seed", "1", "--out", path("g")});
  expect_failure(gen, 1, {path("g") + "/", "File too large"});
  EXPECT_FALSE(contains(gen.err, "magic")) << gen.err;
  const Outcome comp = limited(
      {"compile", kCifar, "--weights", w, "--out", path("p.bin"), "--listing", path("p.txt")});
  expect_failure(comp, 1, {path("p.bin") + ": cannot write file", "File too large"});
  EXPECT_FALSE(fs::exists(path("p.bin")));
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
    EXPECT_FALSE(contains(entry.path().filename().string(), ".tmp")) << entry.path();
  }
}

// Every usage error of every subcommand (a missing or unknown option, a value
// out of its range, options that exclude or need each other, an option of
// another backend) exits with 2, says what is wrong in its first line, and
// writes nothing.
TEST_F(Cli, EveryUsageErrorOfEverySubcommandExitsWithTwo) {
  const std::string w = generate();
  const std::string in = w + "/input.npy";
  const std::string cfg = kSource + "/config/default.yaml";
  const std::string y = path("out/y.npy");
  const std::vector<std::string> run = {"run",     kCifar, "--weights", w,
                                        "--input", in,     "--output",  y};
  const auto plus = [](std::vector<std::string> a, const std::vector<std::string>& extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  struct Case {
    std::vector<std::string> args;
    std::string part;  // in the message
  };
  const std::vector<Case> cases = {
      {{}, "subcommand"},
      {{"frobnicate"}, "subcommand"},
      {{"info"}, "network"},
      {{"info", kCifar, "--bogus"}, "--bogus"},
      {{"info", kCifar, "--device", "ecp5-45f"}, "--device requires --target"},
      {plus(run, {"--check"}), "--check and --trace apply to --backend rtl only"},
      {plus(run, {"--backend", "isa", "--check"}), "--check and --trace apply to --backend rtl"},
      {plus(run, {"--backend", "isa", "--trace", path("t.fst")}), "--backend rtl only"},
      {plus(run, {"--backend", "rtl", "--dump-dir", path("d")}),
       "--dump-dir needs --backend golden"},
      {plus(run, {"--target", cfg}), "--target applies to --backend isa and rtl only"},
      {plus(run, {"--config", cfg}), "--target applies to --backend isa and rtl only"},
      {plus(run, {"--instances", "2"}), "--instances needs --backend isa or rtl"},
      {plus(run, {"--backend", "isa", "--instances", "5"}), "--instances"},
      {plus(run, {"--backend", "gpu"}), "gpu"},
      {plus(run, {"--backend", "rtl", "--mode", "both"}), "both"},
      {plus(run, {"--backend", "rtl", "--stall", "nan"}), "--stall"},
      {plus(run, {"--backend", "rtl", "--latency", "0"}), "--latency"},
      {plus(run, {"--backend", "rtl", "--seed", "-1"}), "--seed"},
      {plus(run, {"--backend", "rtl", "--timeout", "0"}), "--timeout"},
      {{"run", kCifar, "--input", in}, "--output"},
      {{"bench"}, "network"},
      {{"bench", kCifar, "--batch", "2", "--input", in}, "excludes"},
      {{"bench", kCifar, "--weights", w, "--sparsity", "0.5"}, "excludes"},
      {{"bench", kCifar, "--sparsity", "nan"}, "--sparsity"},
      {{"bench", kCifar, "--sparsity", "1.5"}, "--sparsity"},
      {{"bench", kCifar, "--mode", "eager"}, "eager"},
      {{"bench", kCifar, "--batch", "0"}, "--batch"},
      {{"bench", kCifar, "--instances", "5"}, "--instances"},
      {{"bench", kCifar, "--stall", "inf"}, "--stall"},
      {{"gen", kCifar, "--out", path("g")}, "--seed"},
      {{"gen", kCifar, "--seed", "1"}, "--out"},
      {{"gen", kCifar, "--seed", "x", "--out", path("g")}, "--seed"},
      {{"gen", kCifar, "--seed", "1", "--out", path("g"), "--sparsity", "nan"}, "--sparsity"},
      {{"gen", kCifar, "--seed", "1", "--out", path("g"), "--images", "0"}, "--images"},
      {{"gen", kCifar, "--seed", "1", "--out", path("g"), "--weight-min=-200"}, "--weight-min"},
      {{"gen", kCifar, "--seed", "1", "--out", path("g"), "--weight-min", "5", "--weight-max=-5"},
       "--weight-min 5 is larger than --weight-max -5"},
      {{"gen", kCifar, "--seed", "1", "--out", path("g"), "--weight-min", "0", "--weight-max", "0"},
       "holds no non-zero weight"},
      {{"compile", kCifar, "--weights", w}, "--out"},
      {{"compile", kCifar, "--weights", w, "--out", path("p.bin"), "--batch", "0"}, "--batch"},
      {{"compile", kCifar, "--weights", w, "--out", path("p.bin"), "--instances", "2", "--batch",
        "2"},
       "excludes"},
      {{"compile", kCifar, "--weights", w, "--out", path("p.bin"), "--instances", "9"},
       "--instances"},
      {{"compile", kCifar, "--weights", w, "--bundle", path("b.strb"), "--instances", "2"},
       "excludes"},
      {{"compile", kCifar, "--weights", w, "--bundle", path("b.strb"), "--listing", path("p.txt")},
       "--listing requires --out"},
      {{"rules", "--update", path("a.md"), "--check", path("b.md")}, "excludes"},
      {{"plan", kCifar}, "--device"},
      {{"plan", kCifar, "--device", "ecp5-45f", "--sparsity", "nan"}, "--sparsity"},
      {{"plan", kCifar, "--device", "ecp5-45f", "--objective", "fast"}, "--objective"},
      {{"import", path("m.onnx"), "--out", path("i")}, "--calibration"},
      {{"import", path("m.onnx"), "--calibration", in}, "--out"},
  };
  const auto listing = [&] {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
  };
  const std::vector<std::string> before = listing();
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("strata {}", fmt::join(c.args, " ")));
    const Outcome r = strata(c.args);
    expect_failure(r, 2, {c.part});
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(listing(), before) << "a usage error wrote a file";
  // --config names the configuration on every command that takes one, as --target does.
  const Outcome comp =
      strata({"compile", kCifar, "--weights", w, "--config", cfg, "--out", path("p.bin")});
  EXPECT_EQ(comp.code, 0) << comp.err;
  EXPECT_TRUE(contains(comp.out, "for target 'default'")) << comp.out;
}

// compile --bundle: a bundle the driver library reads back, with the
// network's shapes and, from the YAML's scales, its quantisation scales.
TEST_F(Cli, CompileWritesABundleTheDriverReads) {
  const std::string w = generate();
  const std::string yaml = write(
      "scaled.yaml", "name: scaled\ninput: [3, 32, 32]\nscales: {input: 0.5, output: 0.25}\n" +
                         slurp(kCifar).substr(slurp(kCifar).find("layers:")));
  const Outcome r = strata({"compile", yaml, "--weights", w, "--config",
                            kSource + "/config/default.yaml", "--bundle", path("c.strb")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "wrote bundle " + path("c.strb"))) << r.out;
  const std::string bytes = slurp(path("c.strb"));
  strata_bundle b{};
  strata_error err{};
  ASSERT_EQ(strata_bundle_parse(&b, bytes.data(), bytes.size(), &err), STRATA_OK) << err.text;
  EXPECT_EQ(std::string(b.network), "scaled");
  EXPECT_EQ(b.input.c, 3u);
  EXPECT_EQ(b.input.h, 32u);
  EXPECT_EQ(b.output.c, 10u);
  EXPECT_EQ(b.input.scale, 0.5f);
  EXPECT_EQ(b.output.scale, 0.25f);
  // Bad scales are the YAML's errors.
  const std::string bad =
      write("bad.yaml", "name: bad\ninput: [3, 32, 32]\nscales: {input: nan}\n" +
                            slurp(kCifar).substr(slurp(kCifar).find("layers:")));
  expect_failure(strata({"info", bad}), 1,
                 {bad + ":3:", "'input' must be a finite number above 0"});
}

// A command writes all of its files or none: an unwritable listing leaves no
// program, a failed --output no --dump-dir files (and the reverse); standard
// output that cannot be written is an error too.
TEST_F(Cli, OutputIsAllOrNothing) {
  const std::string w = generate();
  const std::vector<std::string> compile = {"compile", kCifar,        "--weights", w,
                                            "--out",   path("p.bin"), "--listing"};
  const auto plus = [](std::vector<std::string> a, const std::vector<std::string>& extra) {
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  expect_failure(strata(plus(compile, {"/dev/full"})), 1,
                 {"/dev/full: cannot write file", "No space left on device"});
  EXPECT_FALSE(fs::exists(path("p.bin")));
  fs::create_directories(path("listing_dir"));
  expect_failure(strata(plus(compile, {path("listing_dir")})), 1,
                 {path("listing_dir") + ": cannot write file: it is a directory"});
  EXPECT_FALSE(fs::exists(path("p.bin")));
  // The same with the program's directory to be created: it is not left behind.
  expect_failure(strata({"compile", kCifar, "--weights", w, "--out", path("new/sub/p.bin"),
                         "--listing", "/dev/full"}),
                 1, {"/dev/full"});
  EXPECT_FALSE(fs::exists(path("new")));
  // A chain's programs: every stage or none (the second stage's listing is a directory).
  fs::create_directories(path("c.stage1.txt"));
  expect_failure(strata({"compile", kCifar, "--weights", w, "--out", path("c.bin"), "--instances",
                         "2", "--listing", path("c.txt")}),
                 1, {path("c.stage1.txt") + ": cannot write file: it is a directory"});
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(!contains(name, "c.stage") || name == "c.stage1.txt") << e.path();
  }
  // run: the output and the per-layer dumps.
  const std::vector<std::string> run = {"run", kCifar, "--weights", w, "--input", w + "/input.npy"};
  expect_failure(strata(plus(run, {"--output", "/dev/full", "--dump-dir", path("dump")})), 1,
                 {"/dev/full"});
  EXPECT_FALSE(fs::exists(path("dump")));
  fs::create_directories(path("dump2"));
  std::ofstream(path("dump2/04_pool2.npy")) << "a file that must stay as it is";
  fs::create_directories(path("dump2/05_conv3.npy"));  // a directory where a dump goes
  expect_failure(strata(plus(run, {"--output", path("y.npy"), "--dump-dir", path("dump2")})), 1,
                 {"05_conv3.npy: cannot write file: it is a directory"});
  EXPECT_FALSE(fs::exists(path("y.npy")));
  EXPECT_EQ(slurp(path("dump2/04_pool2.npy")), "a file that must stay as it is");
  EXPECT_FALSE(fs::exists(path("dump2/00_conv1.npy")));
  // Standard output on a full device: exit 1, whatever the command.
  const auto to_full = [&](const std::vector<std::string>& args) {
    std::string cmd = "exec " + test::shell_quote(STRATA_CLI);
    for (const std::string& arg : args) cmd += " " + test::shell_quote(arg);
    return test::run_command("/bin/bash", {"-c", cmd + " > /dev/full"}, dir_);
  };
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", kCifar}, plus(run, {"--output", path("z.npy")}),
        std::vector<std::string>{"rules"}, std::vector<std::string>{"--help"}}) {
    SCOPED_TRACE(fmt::format("strata {} > /dev/full", fmt::join(args, " ")));
    const Outcome r = to_full(args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "strata: error: ")) << r.err;
    EXPECT_TRUE(contains(r.err, "No space left on device")) << r.err;
  }
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  expect_failure(strata({}), 2, {});
  expect_failure(strata({"frobnicate"}), 2, {});
  expect_failure(strata({"info"}), 2, {"network"});
  expect_failure(strata({"run", kCifar, "--output", path("y.npy")}), 2, {"--input"});
  expect_failure(
      strata({"run", kCifar, "--input", "x.npy", "--output", "y.npy", "--backend", "gpu"}), 2,
      {"gpu"});
  expect_failure(strata({"gen", kCifar, "--out", path("g")}), 2, {"--seed"});
  expect_failure(strata({"gen", kCifar, "--seed", "1", "--out", path("g"), "--sparsity", "1.5"}), 2,
                 {"sparsity"});
  expect_failure(strata({"gen", kCifar, "--seed", "one", "--out", path("g")}), 2, {"seed"});
  expect_failure(strata({"info", kCifar, "--bogus"}), 2, {"--bogus"});
  expect_failure(strata({"run", kCifar, "--input", "x.npy", "--output", "y.npy", "--backend", "rtl",
                         "--mode", "both"}),
                 2, {"both"});
  expect_failure(strata({"bench", kCifar, "--mode", "eager"}), 2, {"eager"});
  expect_failure(strata({"bench", kCifar, "--batch", "0"}), 2, {"batch"});
  expect_failure(strata({"bench"}), 2, {"network"});
  // Numbers CLI11 would convert quietly: NaN passes a range check (every
  // comparison with it is false), and unsigned seeds wrap or saturate.
  expect_failure(strata({"gen", kCifar, "--seed", "1", "--out", path("g"), "--sparsity", "nan"}), 2,
                 {"sparsity", "nan"});
  for (const char* seed : {"-1", "18446744073709551616", "99999999999999999999999", "1.5", ""}) {
    expect_failure(strata({"gen", kCifar, "--seed", seed, "--out", path("g")}), 2, {"--seed"});
    expect_failure(strata({"bench", kCifar, "--seed", seed}), 2, {"--seed"});
  }
  for (const char* stall : {"nan", "inf", "-0.1", "0.95", "0.5x"}) {
    expect_failure(strata({"bench", kCifar, "--stall", stall}), 2, {"--stall"});
    expect_failure(strata({"run", kCifar, "--input", "x.npy", "--output", "y.npy", "--backend",
                           "rtl", "--stall", stall}),
                   2, {"--stall"});
  }
  EXPECT_FALSE(fs::exists(path("g")));

  const Outcome help = strata({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "info")) << help.out;
  EXPECT_TRUE(contains(help.out, "gen")) << help.out;
  const Outcome run_help = strata({"run", "--help"});
  EXPECT_EQ(run_help.code, 0);
  EXPECT_TRUE(contains(run_help.out, "--dump-dir")) << run_help.out;
  EXPECT_TRUE(contains(run_help.out, "--check")) << run_help.out;
  const Outcome bench_help = strata({"bench", "--help"});
  EXPECT_EQ(bench_help.code, 0);
  for (const char* option : {"--batch", "--mode", "--json", "--stall", "--latency", "--seed",
                             "--weights", "--config", "--timeout", "--trace"}) {
    EXPECT_TRUE(contains(bench_help.out, option)) << option << " in: " << bench_help.out;
  }
}

}  // namespace
}  // namespace strata
