// SPDX-License-Identifier: Apache-2.0
#include "common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/npy.hpp"

namespace strata::cli {

namespace fs = std::filesystem;

const CLI::Validator kSeedCheck(
    [](std::string& text) -> std::string {
      uint64_t value = 0;
      const char* end = text.data() + text.size();
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
      const auto [ptr, ec] = std::from_chars(text.data(), end, value);
      if (!digits || ec != std::errc() || ptr != end) {
        return fmt::format("seed '{}' is not an integer in 0..18446744073709551615", text);
      }
      return "";
    },
    "UINT64");

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double value = 0.0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < lo || value > hi) {
          return fmt::format("'{}' is not a number in [{}, {}]", text, lo, hi);
        }
        return "";
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi));
}

const CLI::Validator kFraction = finite_range(0.0, 1.0);

void usage_check(bool ok, const std::string& message) {
  if (!ok) throw CLI::ValidationError(message);
}

CLI::Option* add_network_argument(CLI::App* cmd, std::string& network) {
  return cmd->add_option("network", network, "Network description (YAML)")->required();
}

CLI::Option* add_target_option(CLI::App* cmd, std::string& target, const std::string& help) {
  return cmd->add_option("--target,--config", target, help);
}

void add_rtl_options(CLI::App* cmd, RtlArgs& a, bool both) {
  cmd->add_option("--mode", a.mode,
                  both ? "Scheduling mode (CTRL.FINE_GRAIN): fine, completion or both"
                       : "Scheduling mode (CTRL.FINE_GRAIN) of --backend rtl: fine or "
                         "completion")
      ->check(both ? CLI::IsMember({"fine", "completion", "both"})
                   : CLI::IsMember({"fine", "completion"}))
      ->capture_default_str();
  cmd->add_option("--stall", a.run.stall,
                  "RTL: probability of a random memory stall per AXI channel and cycle")
      ->check(finite_range(0.0, 0.9))
      ->capture_default_str();
  cmd->add_option("--latency", a.run.latency, "RTL: memory read latency in cycles")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--seed", a.run.seed, "RTL: seed of the memory stalls and initial X values")
      ->check(kSeedCheck)
      ->capture_default_str();
  cmd->add_option("--timeout", a.run.timeout,
                  "RTL: cycles before a run counts as hung (default: 20,000,000 plus 10 times "
                  "the program's roofline bound)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_flag("--checked-model", a.run.checked_model,
                "RTL: run the checked model (assertions on, X values randomised, as the tests "
                "do) instead of the fast one; same cycles, about half the speed");
  cmd->add_option("--trace", a.run.trace,
                  "RTL: write an FST waveform of the run (GTKWave layout: "
                  "tb/waves/strata_top.gtkw)");
}

HwTarget load_target(const std::string& path) {
  return path.empty() ? HwTarget::defaults() : HwTarget::from_yaml(path);
}

std::vector<std::string> missing_files(const Network& net) {
  std::vector<std::string> missing;
  for (const Layer& l : net.layers) {
    if (!l.has_requant()) continue;
    for (const std::string& f : {l.files.weights, l.files.bias, l.files.multiplier,
                                 l.files.multiplier_b, l.files.shift, l.files.table}) {
      std::error_code ec;
      if (!f.empty() && !fs::is_regular_file(fs::path(net.weights_dir) / f, ec)) {
        missing.push_back(f);
      }
    }
  }
  return missing;
}

void generate_seed_one(Network& net, double sparsity) {
  GenOptions g;
  g.sparsity = sparsity;
  generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
}

std::string type_label(const Layer& l) {
  if (l.type == LayerType::kClamp && l.lo == 0 && l.hi == kInt8Max) return "relu";
  return layer_type_name(l.type);
}

Tensor<int8_t> load_input(const std::string& path, const Network& net) {
  Tensor<int8_t> input;
  try {
    input = load_npy<int8_t>(path);
  } catch (const Error& e) {
    throw Error(fmt::format("input: {}", e.what()));
  }
  const Shape& want = net.input_shape;
  const bool batch = input.rank() == 4 && input.dim(0) >= 1 &&
                     Shape(input.shape().begin() + 1, input.shape().end()) == want;
  if (input.shape() != want && !batch) {
    throw Error(fmt::format("input '{}' has shape {}, network '{}' expects {} or [N, {}]", path,
                            shape_str(input.shape()), net.name, shape_str(want),
                            fmt::join(want, ", ")));
  }
  return input;
}

std::vector<Tensor<int8_t>> split_images(const Tensor<int8_t>& input, const Shape& image) {
  if (input.shape() == image) return {input};
  std::vector<Tensor<int8_t>> v;
  const int64_t n = shape_elements(image);
  for (int64_t i = 0; i < input.dim(0); ++i) {
    std::vector<int8_t> e(input.data() + i * n, input.data() + (i + 1) * n);
    v.emplace_back(image, std::move(e));
  }
  return v;
}

}  // namespace strata::cli
