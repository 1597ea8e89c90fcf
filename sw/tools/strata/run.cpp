// SPDX-License-Identifier: Apache-2.0
// `strata run NET.yaml --input X.npy --output Y.npy [--backend golden|isa|rtl]`:
// a network run on the golden model, the ISA simulator or the Verilated
// accelerator (one, or a chain of --instances K), its outputs written and
// summarised (checksum, top-1).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/bench_report.hpp"
#include "strata/cascade.hpp"
#include "strata/file_io.hpp"
#include "strata/golden.hpp"
#include "strata/isa_sim.hpp"
#include "strata/npy.hpp"
#include "strata/rtl_backend.hpp"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::string network;
  std::string input;
  std::vector<std::string> outputs;  // --output, once per network output
  std::string weights;
  std::string backend = "golden";
  std::string dump_dir;
  std::string target;  // hardware configuration YAML for --backend isa / rtl ("" = default)
  bool check = false;  // rtl: compare every element with the golden model
  int instances = 0;   // --instances K: a chain of K accelerators (isa, rtl)
  RtlArgs rtl{"fine"};
};

// What a backend gave: one tensor per network output, and how they compare
// with the golden model (--check).
struct Outcome {
  std::vector<Tensor<int8_t>> outputs;
  int64_t mismatches = 0;
  std::string first_mismatch;
};

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

Tensor<int8_t> join_outputs(const std::vector<Tensor<int8_t>>& outs, bool batch) {
  if (!batch) return outs.front();
  Shape shape = outs.front().shape();
  shape.insert(shape.begin(), static_cast<int64_t>(outs.size()));
  std::vector<int8_t> v;
  for (const Tensor<int8_t>& t : outs) v.insert(v.end(), t.values().begin(), t.values().end());
  return Tensor<int8_t>(shape, std::move(v));
}

// Per network output, the images' results joined (`outs`: image by image, per
// image each of the `count` outputs in order).
std::vector<Tensor<int8_t>> join_per_output(const std::vector<Tensor<int8_t>>& outs, size_t count,
                                            bool batch) {
  std::vector<Tensor<int8_t>> joined;
  for (size_t j = 0; j < count; ++j) {
    std::vector<Tensor<int8_t>> one;
    for (size_t i = j; i < outs.size(); i += count) one.push_back(outs[i]);
    joined.push_back(join_outputs(one, batch));
  }
  return joined;
}

// `run --instances K`: the images through a chain, one after another (isa:
// stage after stage on the ISA simulator; rtl: streamed through
// strata_cascade_top). Outputs in image order.
std::vector<Tensor<int8_t>> run_chain(const Network& net, const HwTarget& target,
                                      const std::vector<Tensor<int8_t>>& images, const RunArgs& a) {
  const ChainProgram chain = compile_chain(net, target, a.instances);
  fmt::print("{}", chain_partition(chain, net));
  const std::string stages = fmt::format("{} stage{}, {} image{}", chain.stages.size(),
                                         chain.stages.size() == 1 ? "" : "s", images.size(),
                                         images.size() == 1 ? "" : "s");
  if (a.backend == "isa") {
    std::vector<Tensor<int8_t>> outputs;
    for (size_t i = 0; i < images.size(); ++i) {
      ChainSimResult r = simulate_chain(chain, images[i]);
      if (!r.ok()) {
        const SimResult& f = r.stages.back();
        throw Error(fmt::format("image {}: stage {} stopped with {} at instruction {}: {}", i,
                                r.failed_stage, sim_error_name(f.error), f.error_index, f.message));
      }
      outputs.push_back(std::move(r.output));
    }
    fmt::print("ISA simulator, {}: every stage's dependencies checked\n", stages);
    return outputs;
  }
  if (!rtl::built()) throw Error("RTL backend not built: this strata was built without Verilator");
  rtl::ChainStream s =
      rtl::stream_chain(chain, target, images, a.rtl.run, a.rtl.mode != "completion");
  fmt::print("RTL cascade (strata_cascade_top), {}: {} cycles\n", stages, s.cycles);
  return std::move(s.outputs);
}

Outcome run_chain_backend(const Network& net, const HwTarget& target, const Tensor<int8_t>& input,
                          bool batch, const RunArgs& a) {
  const std::vector<Tensor<int8_t>> images = split_images(input, net.input_shape);
  RtlResult check;
  check.outputs = run_chain(net, target, images, a);
  // --check is the RTL backend's: a build without it leaves it out.
  if (a.check && rtl::built()) {
    check_against_golden(check, golden_outputs(net, images));
    fmt::print("check   every output element compared with the golden model: {} mismatches\n",
               check.mismatches);
  }
  return {{join_outputs(check.outputs, batch)}, check.mismatches, check.first_mismatch};
}

Outcome run_rtl_backend(const Network& net, const HwTarget& target, const Tensor<int8_t>& input,
                        bool batch, const RunArgs& a) {
  if (!rtl::built()) {
    throw Error(
        "RTL backend not built: this strata was built without Verilator "
        "(STRATA_BUILD_RTL=OFF); use --backend golden or isa");
  }
  const std::vector<Tensor<int8_t>> images = split_images(input, net.input_shape);
  const bool fine = a.rtl.mode != "completion";
  RtlResult res = rtl::run(net, target, images, a.rtl.run, fine, !a.rtl.run.trace.empty());
  fmt::print("{}", rtl_run_summary(net, target, res, static_cast<int64_t>(images.size()),
                                   a.rtl.run.latency, a.rtl.run.stall));
  if (a.check) {
    const std::vector<Tensor<int8_t>> golden = golden_outputs(net, images);
    check_against_golden(res, golden);
    fmt::print("check   {} output elements compared with the golden model: {} mismatches\n",
               element_count(golden), res.mismatches);
  }
  fmt::print("{}", rtl::trace_note(a.rtl.run.trace));
  return {join_per_output(res.outputs, net.output_count(), batch), res.mismatches,
          res.first_mismatch};
}

std::vector<Tensor<int8_t>> run_isa(const Network& net, const HwTarget& target,
                                    const Tensor<int8_t>& input) {
  IsaRunSummary s;
  std::vector<Tensor<int8_t>> outputs = run_isa_backend(net, target, input, &s);
  fmt::print(
      "ISA simulator, target '{}' (P {}, N {}): {} run{} of {} program{}, {} "
      "instructions, {} PE-array beats; dependencies checked in both modes\n",
      target.name, target.pes, target.lanes, s.runs, s.runs == 1 ? "" : "s", s.programs,
      s.programs == 1 ? "" : "s", s.instructions, s.beats);
  return outputs;
}

// The golden model, with a table of every layer's output (and --dump-dir files).
std::vector<Tensor<int8_t>> run_golden(const Network& net, const Tensor<int8_t>& input, int64_t n,
                                       const std::string& dump_dir, OutputFiles& files) {
  fmt::print("{:>3}  {:<12} {:<14} {:<16} {:>12} {:>10}\n", "#", "name", "type", "out", "MACs",
             "fnv1a32");
  const auto observer = [&](size_t i, const Layer& l, const Tensor<int8_t>& out) {
    fmt::print("{:>3}  {:<12} {:<14} {:<16} {:>12} {:>10}\n", i, l.name, type_label(l),
               shape_str(l.out_shape), l.macs() * n,
               fmt::format("{:#010x}", fnv1a32(out.values())));
    if (!dump_dir.empty()) {
      files.add((fs::path(dump_dir) / fmt::format("{:02}_{}.npy", i, l.name)).string(),
                npy_file(out));
    }
  };
  return run_network_outputs(net, input, observer);
}

// One --output per network output, in the network's order, each a file name given once.
void check_outputs(const Network& net, const std::vector<std::string>& outputs) {
  if (outputs.size() != net.output_count()) {
    std::vector<std::string> names;
    for (size_t j = 0; j < net.output_count(); ++j) names.push_back(net.output_name(j));
    throw Error(fmt::format("network '{}' has {} output{} ({}): give --output {}, in that order",
                            net.name, net.output_count(), net.output_count() == 1 ? "" : "s",
                            fmt::join(names, ", "),
                            net.output_count() == 1 ? "once" : "once per output"));
  }
  std::error_code ec;
  for (const std::string& o : outputs) {
    if (fs::is_directory(o, ec)) {
      throw Error("output is a directory, not a file name", ErrorContext{o, 0, ""});
    }
    if (std::count(outputs.begin(), outputs.end(), o) > 1) {
      throw Error(fmt::format("--output '{}' is given twice", o));
    }
  }
}

// Each output's file, shape, checksum and, for a vector per image, top-1.
// `several`: the run gave more than one output tensor.
void print_output(const Network& net, size_t j, bool several, const Tensor<int8_t>& output,
                  const std::string& file, int64_t n) {
  const std::string which =
      several ? fmt::format(" {} '{}'", j, net.output_name(j)) : std::string();
  fmt::print("output{} {} {}\n", which, file, shape_str(output.shape()));
  fmt::print("checksum fnv1a32 {:#010x}, sum {}\n", fnv1a32(output.values()),
             element_sum(output.values()));
  // Top-1 when each image's output is a vector [K][1][1] (first maximum wins).
  const Shape& out = net.output_shape(j);
  if (out[1] != 1 || out[2] != 1) return;
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

void run_run(const RunArgs& a) {
  const HwTarget target = a.backend != "golden" ? load_target(a.target) : HwTarget{};
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  std::error_code ec;
  if (!fs::is_regular_file(a.input, ec)) {
    throw Error(fs::exists(a.input, ec) ? "input is not a regular file" : "input file not found",
                ErrorContext{a.input, 0, ""});
  }
  check_outputs(net, a.outputs);
  const Tensor<int8_t> input = load_input(a.input, net);
  const bool batch = input.rank() == 4;
  const int64_t n = batch ? input.dim(0) : 1;
  OutputFiles files;  // --output and the --dump-dir files: all or none

  fmt::print("network {} ({}), backend {}, input {} {}\n\n", net.name, net.source_file, a.backend,
             a.input, shape_str(input.shape()));
  Outcome r;
  if (a.instances > 0) {
    r = run_chain_backend(net, target, input, batch, a);
  } else if (a.backend == "rtl") {
    r = run_rtl_backend(net, target, input, batch, a);
  } else if (a.backend == "isa") {
    r.outputs = run_isa(net, target, input);
  } else {
    r.outputs = run_golden(net, input, n, a.dump_dir, files);
  }
  for (size_t j = 0; j < r.outputs.size(); ++j) files.add(a.outputs[j], npy_file(r.outputs[j]));
  files.commit();
  fmt::print("\ntotal MACs {} ({} image{})\n", net.macs() * n, n, n == 1 ? "" : "s");
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    print_output(net, j, r.outputs.size() > 1, r.outputs[j], a.outputs[j], n);
  }
  if (r.mismatches > 0) {
    throw MismatchError(
        fmt::format("RTL output differs from the golden model in {} element{}; "
                    "first: {}",
                    r.mismatches, r.mismatches == 1 ? "" : "s", r.first_mismatch));
  }
}

// The option combinations of `run` that depend on --backend's value (usage
// errors that CLI11's excludes / needs, which look at presence only, cannot express).
void check_run_usage(const RunArgs& a) {
  usage_check(a.backend == "golden" || a.dump_dir.empty(),
              fmt::format("--dump-dir needs --backend golden (the {} backend gives the final "
                          "output only)",
                          a.backend));
  usage_check(a.backend != "golden" || a.target.empty(),
              "--target applies to --backend isa and rtl only");
  usage_check(a.backend != "golden" || a.instances == 0,
              "--instances needs --backend isa or rtl (the golden model runs the whole network)");
  usage_check(a.backend == "rtl" || (!a.check && a.rtl.run.trace.empty()) || a.instances > 0,
              "--check and --trace apply to --backend rtl only");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a network on an int8 input");
  add_network_argument(cmd, a->network);
  cmd->add_option("--input", a->input, "int8 .npy input, [C][H][W] or [N][C][H][W]")->required();
  cmd->add_option("--output", a->outputs,
                  "Output .npy file to write; a network of several outputs: once per output, "
                  "in the order of its 'outputs:'")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--weights", a->weights, "Directory of the .npy parameter files");
  cmd->add_option("--backend", a->backend,
                  "golden (C++ model), isa (compiled, run on the ISA simulator) or rtl")
      ->check(CLI::IsMember({"golden", "isa", "rtl"}))
      ->capture_default_str();
  add_target_option(cmd, a->target,
                    "Hardware configuration YAML for --backend isa or rtl (default: "
                    "config/default.yaml as built)");
  cmd->add_option("--dump-dir", a->dump_dir,
                  "Write every layer's output as <NN>_<layer>.npy into this directory");
  cmd->add_option("--instances", a->instances,
                  "Run on a chain of K accelerators (docs/cascade.md): --backend isa runs the "
                  "stages one after another, rtl streams the images through strata_cascade_top")
      ->check(CLI::Range(1, 4));
  cmd->add_flag("--check", a->check,
                "--backend rtl: compare every output element with the golden model (exit "
                "status 3 when any differs)");
  add_rtl_options(cmd, a->rtl, false);
  cmd->parse_complete_callback([a] { check_run_usage(*a); });
  cmd->callback([a] { run_run(*a); });
}

}  // namespace strata::cli
