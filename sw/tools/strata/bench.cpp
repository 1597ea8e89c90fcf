// SPDX-License-Identifier: Apache-2.0
// `strata bench NET.yaml`: the network on the RTL accelerator in each
// scheduling mode (or streamed through a chain of --instances K), every
// output checked against the golden model, and the report (strata/bench_report.hpp)
// as tables or JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/bench_report.hpp"
#include "strata/file_io.hpp"
#include "strata/gen.hpp"
#include "strata/rtl_backend.hpp"

namespace strata::cli {
namespace {

struct BenchArgs {
  std::string network;
  std::string weights;
  double sparsity = 0.0;  // generated parameters (no --weights): fraction of zero weights
  std::string input;      // "" = random images (seed --seed)
  std::string target;     // hardware configuration YAML ("" = default)
  int batch = 1;
  bool batch_given = false;  // --batch given (a chain's default is 16 images)
  int instances = 0;         // --instances K: a chain of K accelerators (0: one accelerator)
  bool json = false;         // --json given
  std::string json_path;     // "" with --json = stdout
  RtlArgs rtl{"both"};
};

// The network with its parameters: those of --weights or, without, the ones
// `strata gen --seed 1` would write (cycle counts do not depend on parameter
// values; every run is still checked against the golden model with the same
// parameters). `params` says which.
Network load_parameters(const BenchArgs& a, std::string& params) {
  if (!a.weights.empty()) {
    params = a.weights;
    return load_network(a.network, LoadOptions{a.weights, true});
  }
  Network net = load_network(a.network, LoadOptions{"", false});
  generate_seed_one(net, a.sparsity);
  params = a.sparsity > 0.0 ? fmt::format(
                                  "generated, seed 1, sparsity {} (strata gen --seed 1 "
                                  "--sparsity {})",
                                  a.sparsity, a.sparsity)
                            : "generated, seed 1 (strata gen --seed 1)";
  return net;
}

// The images of --input or random ones; `source` says which.
std::vector<Tensor<int8_t>> load_images(const BenchArgs& a, const Network& net,
                                        std::string& source) {
  if (!a.input.empty()) {
    source = a.input;
    return split_images(load_input(a.input, net), net.input_shape);
  }
  const int count = a.instances > 0 && !a.batch_given ? 16 : a.batch;
  source = fmt::format("random images, seed {}", a.rtl.run.seed);
  return split_images(random_images(net.input_shape, count, a.rtl.run.seed), net.input_shape);
}

void write_json(const nlohmann::ordered_json& j, const std::string& path) {
  write_file(path, j.dump(2) + "\n");
  fmt::print("wrote {}\n", path);
}

// `--instances K`: a stream of images through a chain of K accelerators
// (strata_cascade_top) and, for K > 1, through one accelerator (the same
// runner, one stage) for the speed-up.
void bench_chain(const BenchArgs& a, ChainBenchReport& report,
                 const std::vector<Tensor<int8_t>>& images,
                 const std::vector<Tensor<int8_t>>& golden) {
  rtl::require_chain_model(report.target, a.instances);
  std::vector<int> ks{a.instances};
  if (a.instances > 1) ks.insert(ks.begin(), 1);
  for (int k : ks) {
    report.measures.push_back(
        rtl::measure_chain(report.net, report.target, k, images, golden, a.rtl.run, report.fine));
  }
  fmt::print("{}", chain_bench_table(report));
  if (!a.json) return;
  const nlohmann::ordered_json j = chain_bench_json(report);
  if (a.json_path.empty()) {
    fmt::print("{}\n", j.dump(2));
  } else {
    write_json(j, a.json_path);
  }
}

// One accelerator: every requested mode, the dense twin of a sparse build.
void bench_modes(const BenchArgs& a, BenchReport& report, const std::vector<Tensor<int8_t>>& images,
                 const std::vector<Tensor<int8_t>>& golden) {
  std::vector<bool> modes;
  if (a.rtl.mode != "completion") modes.push_back(true);
  if (a.rtl.mode != "fine") modes.push_back(false);
  for (size_t m = 0; m < modes.size(); ++m) {
    const bool trace = m == 0 && !a.rtl.run.trace.empty();
    report.results.push_back(
        rtl::run(report.net, report.target, images, a.rtl.run, modes[m], trace));
    check_against_golden(report.results.back(), golden);
  }
  const bool fine = report.results.front().fine;
  if (report.target.sparse) {
    report.twin =
        rtl::dense_twin(report.net, report.target, report.shape, images, golden, a.rtl.run, fine);
  }
  for (const RtlResult& r : report.results) {
    report.predicted.push_back(
        predicted_cycles(report.net, report.target, images.size(), a.rtl.run.latency, r.fine));
  }
}

void run_bench(const BenchArgs& a) {
  if (!rtl::built()) {
    throw Error(
        "strata bench needs the RTL backend, and this strata was built without it "
        "(STRATA_BUILD_RTL=OFF)");
  }
  BenchSetup setup;
  const Network net = load_parameters(a, setup.parameters);
  const HwTarget target = load_target(a.target);
  const std::vector<Tensor<int8_t>> images = load_images(a, net, setup.images);
  setup.modes = a.rtl.mode;
  setup.latency = a.rtl.run.latency;
  setup.stall = a.rtl.run.stall;
  setup.seed = a.rtl.run.seed;
  const auto n = static_cast<int64_t>(images.size());
  const std::vector<Tensor<int8_t>> golden = golden_outputs(net, images);
  if (a.instances > 0) {
    // One mode: fine unless --mode completion.
    ChainBenchReport report{
        net, target, setup, a.rtl.mode != "completion", n, element_count(golden), {}};
    bench_chain(a, report, images, golden);
    return;
  }
  const Program shape = compile(net, target, CompileOptions{});
  BenchReport report{net, target, shape, setup, n, {}, {}, std::nullopt};
  bench_modes(a, report, images, golden);
  const nlohmann::ordered_json j = bench_json(report);
  if (a.json && a.json_path.empty()) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}{}", bench_table(report), rtl::trace_note(a.rtl.run.trace));
  }
  if (a.json && !a.json_path.empty()) write_json(j, a.json_path);
  const std::string mismatch = bench_mismatch(report);
  if (!mismatch.empty()) throw MismatchError(mismatch);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Run a network on the RTL accelerator and report cycles, MACs, utilisation, "
      "stalls and bytes per layer (every run checked against the golden model)");
  add_network_argument(cmd, a->network);
  CLI::Option* weights = cmd->add_option("--weights", a->weights,
                                         "Directory of the .npy parameter files (default: the "
                                         "parameters `strata gen --seed 1` makes)");
  cmd->add_option("--sparsity", a->sparsity,
                  "Without --weights: fraction of each layer's generated weights set to zero "
                  "(as strata gen --sparsity; with --weights, prune the weights themselves)")
      ->check(kFraction)
      ->capture_default_str()
      ->excludes(weights);
  CLI::Option* input = cmd->add_option("--input", a->input,
                                       "int8 .npy input, [C][H][W] or [N][C][H][W] (default: "
                                       "--batch random images drawn with --seed)");
  CLI::Option* batch =
      cmd->add_option("--batch", a->batch,
                      "Random images to run (P per run at most; an --input file sets the batch "
                      "itself)")
          ->check(CLI::Range(1, 4096))
          ->capture_default_str()
          ->excludes(input);
  add_target_option(cmd, a->target,
                    "Hardware configuration YAML (default: config/default.yaml as built)");
  cmd->add_option("--instances", a->instances,
                  "Stream the images through a chain of K accelerators (strata_cascade_top, "
                  "docs/cascade.md) and through one, and report throughput, latency and the "
                  "speed-up (default 16 images)")
      ->check(CLI::Range(1, 4));
  CLI::Option* json =
      cmd->add_option("--json", a->json_path,
                      "Write the report as JSON: to FILE, or alone on stdout without FILE")
          ->expected(0, 1);
  add_rtl_options(cmd, a->rtl, true);
  cmd->callback([a, json, batch] {
    a->json = json->count() > 0;
    a->batch_given = batch->count() > 0;
    run_bench(*a);
  });
}

}  // namespace strata::cli
