// `strata`: the command line of the Strata tool flow.
//   strata info NET.yaml [--weights DIR]          per-layer table and totals
//   strata run  NET.yaml --input X --output Y     run a network (golden model or
//               [--backend isa] [--target CFG]    the ISA simulator)
//   strata gen  NET.yaml --seed S --out DIR       random calibrated parameters
//   strata compile NET.yaml --out prog.bin        accelerator program (memory image)
//               [--target CFG] [--batch B] [--listing prog.txt]
// Exit codes: 0 success, 1 error (bad network, files, data), 2 usage error.
// Every error is one line on stderr: "strata: error: <what>".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "strata/tensor.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// FNV-1a, 32 bit, over the int8 elements as bytes in C order (the .npy data
// without its header): a quick fingerprint to compare runs and backends.
uint32_t fnv1a32(std::span<const int8_t> bytes) {
  uint32_t h = 0x811C9DC5u;
  for (int8_t b : bytes) {
    h ^= static_cast<uint8_t>(b);
    h *= 0x01000193u;
  }
  return h;
}

int64_t element_sum(std::span<const int8_t> v) {
  int64_t s = 0;
  for (int8_t e : v) s += e;
  return s;
}

// "relu" reads better than "clamp" for the [0, 127] clamp the YAML calls relu.
std::string type_label(const Layer& l) {
  if (l.type == LayerType::kClamp && l.lo == 0 && l.hi == kInt8Max) return "relu";
  return layer_type_name(l.type);
}

std::string geometry_label(const Layer& l) {
  switch (l.type) {
    case LayerType::kConv: return fmt::format("{}/{}/{}", l.conv.kernel, l.conv.stride, l.conv.pad);
    case LayerType::kMaxPool:
    case LayerType::kAvgPool:
      return fmt::format("{}/{}/{}{}", l.pool.kernel, l.pool.stride, l.pool.pad,
                         l.pool.ceil_mode ? " ceil" : "");
    default: return "-";
  }
}

std::string activation_label(const Layer& l) {
  if (l.type == LayerType::kClamp) return fmt::format("clamp [{}, {}]", l.lo, l.hi);
  if (!l.has_weights()) return "";
  if (l.requant.lo == kInt8Min && l.requant.hi == kInt8Max) return "none";
  if (l.requant.lo == 0 && l.requant.hi == kInt8Max) return "relu";
  return fmt::format("clamp [{}, {}]", l.requant.lo, l.requant.hi);
}

// Parameter files of the network that are not in its weights directory.
std::vector<std::string> missing_files(const Network& net) {
  std::vector<std::string> missing;
  for (const Layer& l : net.layers) {
    if (!l.has_weights()) continue;
    for (const std::string& f :
         {l.files.weights, l.files.bias, l.files.multiplier, l.files.shift}) {
      std::error_code ec;
      if (!f.empty() && !fs::is_regular_file(fs::path(net.weights_dir) / f, ec)) {
        missing.push_back(f);
      }
    }
  }
  return missing;
}

// ---- info ------------------------------------------------------------------

struct InfoArgs {
  std::string network;
  std::string weights;
};

int cmd_info(const InfoArgs& a) {
  // The structure first (any structural error is reported as such); the
  // parameters only when every file is there, so a bad file is still an error.
  Network net = load_network(a.network, LoadOptions{a.weights, false});
  const std::vector<std::string> missing = missing_files(net);
  std::string weights_note;
  if (missing.empty()) {
    net = load_network(a.network, LoadOptions{a.weights, true});
    weights_note = fmt::format("{} (loaded and validated)", net.weights_dir);
  } else {
    weights_note = fmt::format(
        "not present in '{}' ({} of the files missing, e.g. {}): "
        "structure only",
        net.weights_dir, missing.size(), missing.front());
  }
  fmt::print("network {} ({})\n", net.name, net.source_file);
  fmt::print("input   {}\n", shape_str(net.input_shape));
  fmt::print("weights {}\n\n", weights_note);
  fmt::print("{:>3}  {:<12} {:<8} {:<16} {:<16} {:<11} {:<15} {:>12} {:>10}\n", "#", "name", "type",
             "in", "out", "k/s/p", "activation", "MACs", "params(B)");
  int64_t params = 0;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    fmt::print("{:>3}  {:<12} {:<8} {:<16} {:<16} {:<11} {:<15} {:>12} {:>10}\n", i, l.name,
               type_label(l), shape_str(l.in_shape), shape_str(l.out_shape), geometry_label(l),
               activation_label(l), l.macs(), l.param_bytes());
    params += l.param_bytes();
  }
  fmt::print("\ntotal: {} layers, {} MACs per image, {} parameter bytes, output {}\n",
             net.layers.size(), net.macs(), params, shape_str(net.output_shape()));
  fmt::print(
      "MACs count only taps inside the image (a padded tap is not a multiply-accumulate);\n"
      "parameter bytes = int8 weights + per channel 4 (bias) + 2 (M) + 1 (S).\n");
  return 0;
}

// ---- run -------------------------------------------------------------------

struct RunArgs {
  std::string network;
  std::string input;
  std::string output;
  std::string weights;
  std::string backend = "golden";
  std::string dump_dir;
  std::string target;  // hardware configuration YAML for --backend isa ("" = default)
};

HwTarget load_target(const std::string& path) {
  return path.empty() ? HwTarget::defaults() : HwTarget::from_yaml(path);
}

void create_parent(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw Error(fmt::format("cannot create directory '{}': {}", parent.string(), ec.message()));
  }
}

int cmd_run(const RunArgs& a) {
  if (a.backend == "rtl") {
    throw Error(
        "RTL backend not built yet: the accelerator is not part of this build; use "
        "--backend golden or isa");
  }
  if (a.backend == "isa" && !a.dump_dir.empty()) {
    throw Error("--dump-dir needs --backend golden (the ISA backend gives the final output only)");
  }
  if (a.backend != "isa" && !a.target.empty()) {
    throw Error("--target applies to --backend isa only");
  }
  const HwTarget target = a.backend == "isa" ? load_target(a.target) : HwTarget{};
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  std::error_code ec;
  if (!fs::is_regular_file(a.input, ec)) {
    throw Error(fs::exists(a.input, ec) ? "input is not a regular file" : "input file not found",
                ErrorContext{a.input, 0, ""});
  }
  if (fs::is_directory(a.output, ec)) {
    throw Error("output is a directory, not a file name", ErrorContext{a.output, 0, ""});
  }
  Tensor<int8_t> input;
  try {
    input = load_npy<int8_t>(a.input);
  } catch (const Error& e) {
    throw Error(fmt::format("input: {}", e.what()));
  }
  const Shape& want = net.input_shape;
  const bool batch = input.rank() == 4;
  if (!(input.shape() == want || (batch && input.dim(0) >= 1 &&
                                  Shape(input.shape().begin() + 1, input.shape().end()) == want))) {
    throw Error(fmt::format("input '{}' has shape {}, network '{}' expects {} or [N, {}]", a.input,
                            shape_str(input.shape()), net.name, shape_str(want),
                            fmt::join(want, ", ")));
  }
  const int64_t n = batch ? input.dim(0) : 1;
  create_parent(a.output);
  if (!a.dump_dir.empty()) {
    fs::create_directories(a.dump_dir, ec);
    if (ec) {
      throw Error(fmt::format("cannot create dump directory: {}", ec.message()),
                  ErrorContext{a.dump_dir, 0, ""});
    }
  }

  fmt::print("network {} ({}), backend {}, input {} {}\n\n", net.name, net.source_file, a.backend,
             a.input, shape_str(input.shape()));
  Tensor<int8_t> output;
  if (a.backend == "isa") {
    IsaRunSummary s;
    output = run_isa_backend(net, target, input, &s);
    fmt::print("ISA simulator, target '{}' (P {}, N {}): {} run{} of {} program{}, {} "
               "instructions, {} PE-array beats; dependencies checked in both modes\n",
               target.name, target.pes, target.lanes, s.runs, s.runs == 1 ? "" : "s", s.programs,
               s.programs == 1 ? "" : "s", s.instructions, s.beats);
  } else {
    fmt::print("{:>3}  {:<12} {:<8} {:<16} {:>12} {:>10}\n", "#", "name", "type", "out", "MACs",
               "fnv1a32");
    const auto observer = [&](size_t i, const Layer& l, const Tensor<int8_t>& out) {
      fmt::print("{:>3}  {:<12} {:<8} {:<16} {:>12} {:>10}\n", i, l.name, type_label(l),
                 shape_str(l.out_shape), l.macs() * n,
                 fmt::format("{:#010x}", fnv1a32(out.values())));
      if (!a.dump_dir.empty()) {
        save_npy((fs::path(a.dump_dir) / fmt::format("{:02}_{}.npy", i, l.name)).string(), out);
      }
    };
    output = run_network(net, input, observer);
  }
  save_npy(a.output, output);
  fmt::print("\ntotal MACs {} ({} image{})\n", net.macs() * n, n, n == 1 ? "" : "s");
  fmt::print("output {} {}\n", a.output, shape_str(output.shape()));
  fmt::print("checksum fnv1a32 {:#010x}, sum {}\n", fnv1a32(output.values()),
             element_sum(output.values()));

  // Top-1 when each image's output is a vector [K][1][1] (first maximum wins).
  const Shape& out = net.output_shape();
  if (out[1] == 1 && out[2] == 1) {
    const int64_t k = out[0];
    std::vector<int64_t> top;
    for (int64_t i = 0; i < n; ++i) {
      const auto first = output.values().begin() + i * k;
      top.push_back(std::max_element(first, first + k) - first);
    }
    if (n == 1) {
      fmt::print("top-1 class {} (value {})\n", top[0], output[top[0]]);
    } else {
      constexpr size_t kShown = 32;
      const size_t shown = std::min(top.size(), kShown);
      fmt::print("top-1 classes [{}{}]\n",
                 fmt::join(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                 top.size() > shown ? ", ..." : "");
    }
  }
  return 0;
}

// ---- compile ---------------------------------------------------------------

struct CompileArgs {
  std::string network;
  std::string weights;
  std::string target;
  std::string out;
  std::string listing;
  CompileOptions options;
};

int cmd_compile(const CompileArgs& a) {
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  const HwTarget target = load_target(a.target);
  const Program prog = compile(net, target, a.options);
  create_parent(a.out);
  if (!a.listing.empty()) create_parent(a.listing);
  save_program(prog, a.out, a.listing);
  fmt::print("network {} -> {} instructions for target '{}' (P {}, N {}), batch {}\n", net.name,
             prog.instructions.size(), target.name, target.pes, target.lanes, prog.batch);
  for (const MemRegion& r : prog.regions) {
    fmt::print("  {:<14} 0x{:08x}  {:>9} bytes\n", r.name, r.offset, r.size);
  }
  fmt::print("wrote {} ({} bytes){}\n", a.out, prog.image.size(),
             a.listing.empty() ? "" : fmt::format(" and {}", a.listing));
  return 0;
}

// ---- gen -------------------------------------------------------------------

struct GenArgs {
  std::string network;
  std::string out;
  GenOptions options;
};

int cmd_gen(const GenArgs& a) {
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
  return 0;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Strata: CNN inference accelerator tool flow (network info, golden-model runs, "
      "parameter generation)",
      "strata"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0");

  InfoArgs info;
  CLI::App* info_cmd = app.add_subcommand("info", "Print the per-layer table of a network");
  info_cmd->add_option("network", info.network, "Network description (YAML)")->required();
  info_cmd->add_option("--weights", info.weights,
                       "Directory of the .npy parameter files (overrides the YAML's weights:)");

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a network on an int8 input");
  run_cmd->add_option("network", run.network, "Network description (YAML)")->required();
  run_cmd->add_option("--input", run.input, "int8 .npy input, [C][H][W] or [N][C][H][W]")
      ->required();
  run_cmd->add_option("--output", run.output, "Output .npy file to write")->required();
  run_cmd->add_option("--weights", run.weights, "Directory of the .npy parameter files");
  run_cmd
      ->add_option("--backend", run.backend,
                   "golden (C++ model), isa (compiled, run on the ISA simulator) or rtl")
      ->check(CLI::IsMember({"golden", "isa", "rtl"}))
      ->capture_default_str();
  run_cmd->add_option("--target", run.target,
                      "Hardware configuration YAML for --backend isa (default: config/default.yaml "
                      "as built)");
  run_cmd->add_option("--dump-dir", run.dump_dir,
                      "Write every layer's output as <NN>_<layer>.npy into this directory");

  GenArgs gen;
  CLI::App* gen_cmd =
      app.add_subcommand("gen", "Generate seeded random parameters with calibrated requantisation");
  gen_cmd->add_option("network", gen.network, "Network description (YAML)")->required();
  gen_cmd->add_option("--seed", gen.options.seed, "Random seed")->required();
  gen_cmd->add_option("--out", gen.out, "Directory to write the .npy files into")->required();
  gen_cmd
      ->add_option("--sparsity", gen.options.sparsity,
                   "Fraction of each layer's weights set to zero (exact count)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  gen_cmd->add_option("--images", gen.options.images, "Number of random calibration images")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  gen_cmd->add_option("--weight-min", gen.options.weight_min, "Smallest weight value")
      ->check(CLI::Range(-128, 127))
      ->capture_default_str();
  gen_cmd->add_option("--weight-max", gen.options.weight_max, "Largest weight value")
      ->check(CLI::Range(-128, 127))
      ->capture_default_str();

  CompileArgs comp;
  CLI::App* compile_cmd = app.add_subcommand(
      "compile", "Compile a network into an accelerator program (external memory image)");
  compile_cmd->add_option("network", comp.network, "Network description (YAML)")->required();
  compile_cmd->add_option("--weights", comp.weights, "Directory of the .npy parameter files");
  compile_cmd->add_option("--target", comp.target,
                          "Hardware configuration YAML (default: config/default.yaml as built)");
  compile_cmd->add_option("--batch", comp.options.batch, "Images per run (1..P)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  compile_cmd->add_option("--out", comp.out, "Memory image to write (instructions at byte 0)")
      ->required();
  compile_cmd->add_option("--listing", comp.listing,
                          "Disassembly listing with the memory map and I/O placement");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    fmt::print(stderr, "strata: error: {}\nRun 'strata --help' for usage.\n", e.what());
    return 2;
  }

  if (info_cmd->parsed()) return cmd_info(info);
  if (run_cmd->parsed()) return cmd_run(run);
  if (compile_cmd->parsed()) return cmd_compile(comp);
  return cmd_gen(gen);
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  try {
    return strata::run_main(argc, argv);
  } catch (const strata::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "strata: error: {}\n", e.what());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "strata: error: {}\n", e.what());
  }
  return 1;
}
