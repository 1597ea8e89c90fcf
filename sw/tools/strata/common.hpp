// SPDX-License-Identifier: Apache-2.0
// What the commands of `strata` share: one helper per shared option (the
// hardware configuration, seeds, fractions, the RTL run options), validated
// one way, and the network and input loading the commands have in common.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/rtl_backend.hpp"
#include "strata/tensor.hpp"

namespace strata::cli {

// ---- options -------------------------------------------------------------------

// A seed: decimal digits only, 0..2^64-1 (CLI11's own conversion wraps "-1"
// and saturates values past 2^64-1; both are usage errors here).
extern const CLI::Validator kSeedCheck;

// A finite number in [lo, hi] (CLI::Range lets NaN through: every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);

// A probability or fraction: a finite number in [0, 1].
extern const CLI::Validator kFraction;

// A usage error found after parsing (a combination of option values that
// CLI11's needs / excludes cannot express): exit status 2, like every other.
void usage_check(bool ok, const std::string& message);

// The network description, the positional argument of most commands.
CLI::Option* add_network_argument(CLI::App* cmd, std::string& network);

// The hardware configuration option, spelled --target or --config on every command.
CLI::Option* add_target_option(CLI::App* cmd, std::string& target, const std::string& help);

// Options of a run on the Verilated accelerator.
struct RtlArgs {
  explicit RtlArgs(std::string default_mode) : mode(std::move(default_mode)) {}
  std::string mode;  // run: fine | completion; bench: also both
  rtl::Options run;
};

// --mode (with `both` when `both`), --stall, --latency, --seed, --timeout,
// --checked-model and --trace.
void add_rtl_options(CLI::App* cmd, RtlArgs& a, bool both);

// ---- networks and inputs ---------------------------------------------------------

// The configuration of a --target file, the build's default without one.
HwTarget load_target(const std::string& path);

// Parameter files of the network that are not in its weights directory.
std::vector<std::string> missing_files(const Network& net);

// Fills the network's parameters with those `strata gen --seed 1 --sparsity
// <sparsity>` makes.
void generate_seed_one(Network& net, double sparsity);

// "relu" reads better than "clamp" for the [0, 127] clamp the YAML calls relu.
std::string type_label(const Layer& l);

// An int8 .npy input of the network: [C][H][W] or [N][C][H][W], N >= 1.
Tensor<int8_t> load_input(const std::string& path, const Network& net);

// The images of an input, each [C][H][W].
std::vector<Tensor<int8_t>> split_images(const Tensor<int8_t>& input, const Shape& image);

}  // namespace strata::cli
