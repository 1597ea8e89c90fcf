// SPDX-License-Identifier: Apache-2.0
// `strata gen NET.yaml --seed S --out DIR`: seeded random parameters with
// calibrated requantisation (strata/gen.hpp), and the calibration table.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/gen.hpp"

namespace strata::cli {
namespace {

struct GenArgs {
  std::string network;
  std::string out;
  GenOptions options;
};

void run_gen(const GenArgs& a) {
  const GenOptions& o = a.options;
  const GenResult r = generate_network(a.network, a.out, o);
  fmt::print(
      "network {} ({}): seed {}, weights in [{}, {}], sparsity {}, {} calibration image{}\n\n",
      r.network.name, a.network, o.seed, o.weight_min, o.weight_max, o.sparsity, o.images,
      o.images == 1 ? "" : "s");
  fmt::print("{:>3}  {:<12} {:>12} {:>13} {:>7} {:>12} {:>6} {:>8}\n", "#", "name", "max|acc|", "M",
             "S", "out range", "zero%", "at-limit%");
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerCalibration& c = r.layers[i];
    const Layer& l = r.network.layers[i];
    std::string acc = "-", mult = "-", shift = "-";
    if (l.has_weights()) {
      acc = fmt::format("{}", *std::max_element(c.acc_max_abs.begin(), c.acc_max_abs.end()));
      const auto [m0, m1] =
          std::minmax_element(l.requant.multiplier.begin(), l.requant.multiplier.end());
      const auto [s0, s1] = std::minmax_element(l.requant.shift.begin(), l.requant.shift.end());
      mult = fmt::format("{}..{}", *m0, *m1);
      shift = fmt::format("{}..{}", *s0, *s1);
    }
    fmt::print("{:>3}  {:<12} {:>12} {:>13} {:>7} {:>12} {:>6.1f} {:>8.1f}\n", i, c.layer, acc,
               mult, shift, fmt::format("[{}, {}]", c.out_min, c.out_max), 100.0 * c.zero_fraction,
               100.0 * c.limit_fraction);
  }
  fmt::print("\nwrote {} files to {} (input.npy: first image, images.npy: all)\n", r.files.size(),
             a.out);
}

// The weight range must hold a non-zero weight unless every weight is pruned.
void check_gen_usage(const GenOptions& o) {
  usage_check(
      o.weight_min <= o.weight_max,
      fmt::format("--weight-min {} is larger than --weight-max {}", o.weight_min, o.weight_max));
  usage_check(o.weight_min != 0 || o.weight_max != 0 || o.sparsity >= 1.0,
              "--weight-min 0 --weight-max 0 holds no non-zero weight (use --sparsity 1 for "
              "all zeros)");
}

}  // namespace

void add_gen_command(CLI::App& app) {
  auto a = std::make_shared<GenArgs>();
  GenOptions& o = a->options;
  CLI::App* cmd =
      app.add_subcommand("gen", "Generate seeded random parameters with calibrated requantisation");
  add_network_argument(cmd, a->network);
  cmd->add_option("--seed", o.seed, "Random seed")->required()->check(kSeedCheck);
  cmd->add_option("--out", a->out, "Directory to write the .npy files into")->required();
  cmd->add_option("--sparsity", o.sparsity,
                  "Fraction of each layer's weights set to zero (exact count)")
      ->check(kFraction)
      ->capture_default_str();
  cmd->add_option("--images", o.images, "Number of random calibration images")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--weight-min", o.weight_min, "Smallest weight value")
      ->check(CLI::Range(-128, 127))
      ->capture_default_str();
  cmd->add_option("--weight-max", o.weight_max, "Largest weight value")
      ->check(CLI::Range(-128, 127))
      ->capture_default_str();
  cmd->parse_complete_callback([a] { check_gen_usage(a->options); });
  cmd->callback([a] { run_gen(*a); });
}

}  // namespace strata::cli
