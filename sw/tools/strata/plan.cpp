// SPDX-License-Identifier: Apache-2.0
// `strata plan NET.yaml... --device D`: the planner (docs/planner.md), its
// candidates with their predicted resources and cycles, and the winner
// written as a configuration file with --out.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/device.hpp"
#include "strata/file_io.hpp"
#include "strata/planner.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct PlanArgs {
  std::vector<std::string> networks;
  std::string weights;  // one directory for every network (default: each YAML's weights:)
  std::string device;   // a name under config/devices/, or a file
  std::string objective = "latency";
  std::string out;      // the winner's configuration file
  bool all = false;     // print every candidate, not the twelve fastest
  double sparsity = 0;  // zero weights of generated parameters (networks without .npy files)
};

std::vector<Network> load_networks(const PlanArgs& a) {
  std::vector<Network> nets;
  for (const std::string& path : a.networks) {
    Network net = load_network(path, LoadOptions{a.weights, false});
    if (missing_files(net).empty()) {
      net = load_network(path, LoadOptions{a.weights, true});
    } else {  // cycles depend on the shapes and, on a sparse build, on the zero weights
      generate_seed_one(net, a.sparsity);
    }
    nets.push_back(std::move(net));
  }
  return nets;
}

void print_header(const Device& device, const PlanArgs& a, const PlanOptions& o,
                  const PlanResult& r) {
  fmt::print(
      "device {} ({}): {} {} ({} int8 products), {} {} x {} bits, {} LUTs, {} FFs, "
      "Fmax {} MHz ({}), {} MB/s ({})\n",
      device.name, device.part, device.dsps, device.dsp_kind, device.int8_multipliers(),
      device.brams, device.bram_kind, device.bram_bits, device.luts, device.ffs, device.fmax_mhz,
      device.fmax_measured ? "measured" : "estimate", device.ext_mbytes_s, device.board);
  fmt::print(
      "objective: {} ({}); resources: docs/planner.md, Resources; cycles: the cycle model "
      "at a {}-cycle read latency and {:.2f} AXI beats per cycle (the board's bandwidth "
      "at the device's Fmax)\n\n",
      a.objective,
      o.objective == PlanObjective::kLatency ? "one image at a time"
                                             : "batches of P images, per image",
      o.mem_latency, r.beats_per_cycle);
}

// The candidates that fit, fastest first (the twelve fastest unless `all`), and
// how many the budget left out.
void print_candidates(const PlanResult& r, const std::vector<Network>& nets, const Device& device,
                      bool all) {
  std::vector<size_t> order;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    if (r.candidates[i].fits) order.push_back(i);
  }
  // Stable: of equal candidates the first weighed is listed first, as plan() picks it.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return faster(r.candidates[x], r.candidates[y]); });
  fmt::print("{:>3} {:>2} {:>5} {:>3} {:>3} {:>6} {:>6} {:>5} {:>5} {:>5} {:>7} {:>7}", "#", "K",
             "P=N", "LUT", "sp", "banks", "cache", "lbuf", "DSP", "BRAM", "LUT4", "FF");
  for (const Network& n : nets) fmt::print(" {:>14}", n.name);
  fmt::print(" {:>10}\n", "img/s");
  const size_t shown = all ? order.size() : std::min<size_t>(order.size(), 12);
  for (size_t k = 0; k < shown; ++k) {
    const PlanCandidate& c = r.candidates[order[k]];
    const HwTarget& t = c.target;
    fmt::print("{:>3} {:>2} {:>5} {:>3} {:>3} {:>6} {:>6} {:>5} {:>5} {:>5} {:>7} {:>7}", k + 1,
               c.instances, t.pes, t.pe_fabric_lanes, t.sparse ? "yes" : "no",
               fmt::format("{}x{}", t.banks, t.bank_depth), t.pe_cache_depth, t.max_image_width,
               c.resources.dsp, c.resources.bram, c.resources.lut, c.resources.ff);
    for (int64_t cyc : c.cycles) fmt::print(" {:>14}", cyc);
    fmt::print(" {:>10.1f}\n", 1.0 / c.seconds_per_image);
  }
  std::map<std::string, int> rejected;
  for (const PlanCandidate& c : r.candidates) {
    if (!c.fits) ++rejected[c.why_not.substr(0, c.why_not.find(' '))];
  }
  fmt::print("\n{} candidates weighed: {} fit", r.candidates.size(), order.size());
  for (const auto& [what, count] : rejected) fmt::print(", {} over the {} budget", count, what);
  fmt::print(
      "\ncolumns: K: accelerators in a chain; P = N of each; LUT: PE lanes in LUTs; sp: "
      "sparse build; banks x depth; PE cache depth; line-buffer width; predicted DSP, "
      "block RAM, LUT4 equivalents, FFs (all K); predicted cycles per image (a chain: "
      "its largest stage); images per second at {} MHz (all networks once)\n",
      device.fmax_mhz);
}

void write_winner(const PlanCandidate& w, const std::vector<Network>& nets, const Device& device,
                  const PlanArgs& a) {
  HwTarget t = w.target;
  t.name = fs::path(a.out).stem().string();
  std::string nets_list;
  for (const Network& n : nets) nets_list += (nets_list.empty() ? "" : ", ") + n.name;
  const std::string chain = w.instances == 1
                                ? ""
                                : fmt::format(
                                      "\nEach of the K = {} accelerators of a strata_cascade_top "
                                      "chain (docs/cascade.md).",
                                      w.instances);
  write_file(a.out, std::string_view(config_yaml(
                        t, fmt::format("Strata hardware configuration planned by `strata plan` "
                                       "for {} on {}\n(objective: {}; docs/planner.md).{}",
                                       nets_list, device.name, a.objective, chain))));
  fmt::print("wrote {}\n", a.out);
}

void run_plan(const PlanArgs& a) {
  const Device device = Device::find(a.device, std::string(STRATA_SOURCE_DIR) + "/config/devices");
  const std::vector<Network> nets = load_networks(a);
  PlanOptions o;
  o.objective = a.objective == "throughput" ? PlanObjective::kThroughput : PlanObjective::kLatency;
  const PlanResult r = plan(nets, device, o);
  print_header(device, a, o, r);
  print_candidates(r, nets, device, a.all);
  if (r.winner < 0) {
    throw Error(fmt::format("no configuration fits {} ({} candidates weighed)", device.name,
                            r.candidates.size()));
  }
  const PlanCandidate& w = r.candidates[static_cast<size_t>(r.winner)];
  fmt::print("winner: #1, {}P = N = {}{}, {:.1f} images/s predicted\n",
             w.instances > 1 ? fmt::format("a chain of K = {} accelerators of ", w.instances) : "",
             w.target.pes, w.target.sparse ? ", sparse" : "", 1.0 / w.seconds_per_image);
  if (!a.out.empty()) write_winner(w, nets, device, a);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Choose a hardware configuration for networks on an FPGA (docs/planner.md)");
  cmd->add_option("networks", a->networks, "Network descriptions (YAML)")->required();
  cmd->add_option("--weights", a->weights,
                  "Directory of the .npy parameter files (default: generated)");
  cmd->add_option("--device", a->device,
                  "A device of config/devices/ (ecp5-45f, xc7z020, ...) or a device YAML")
      ->required();
  cmd->add_option("--objective", a->objective, "What to maximise")
      ->check(CLI::IsMember({"latency", "throughput"}))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write the winner as a configuration file");
  cmd->add_flag("--all", a->all, "List every candidate that fits");
  cmd->add_option("--sparsity", a->sparsity,
                  "Fraction of zero weights in generated parameters (networks without .npy "
                  "files), which the sparse build's candidates run on")
      ->check(kFraction);
  cmd->callback([a] { run_plan(*a); });
}

}  // namespace strata::cli
