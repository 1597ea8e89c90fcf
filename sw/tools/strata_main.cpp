// SPDX-License-Identifier: Apache-2.0
// `strata`: the command line of the Strata tool flow.
//   strata info NET.yaml [--weights DIR]          per-layer table and totals
//   strata run  NET.yaml --input X --output Y     run a network: golden model,
//               [--backend golden|isa|rtl]        ISA simulator or the Verilated
//               [--target CFG] [--check]          accelerator (rtl: --check compares
//               [--trace FILE] [--mode M]         with the golden model)
//   strata bench NET.yaml [--batch B] [--json]    RTL cycles, MACs, utilisation, stalls,
//               [--mode fine|completion|both]     bytes per layer, both scheduling modes;
//               [--sparsity F]                    sparse builds: speed-up over the dense one
//   strata gen  NET.yaml --seed S --out DIR       random calibrated parameters
//   strata compile NET.yaml --out prog.bin        accelerator program (memory image)
//               [--target CFG] [--batch B] [--listing prog.txt] [--bundle net.strb]
//   strata rules [--update DOC | --check DOC]     the target rules (Markdown table);
//                                                 write or check the section of DOC
//   strata plan NET.yaml... --device D            a configuration for the networks on an
//               [--objective O] [--out CFG.yaml]  FPGA (docs/planner.md)
//   strata import MODEL.onnx --calibration X.npy  float ONNX model -> network YAML + int8
//               --out DIR                         parameters (scripts/strata_import.py)
// Exit codes: 0 success, 1 error (bad network, files, data, a failed or hung
// RTL run), 2 usage error, 3 the RTL output differs from the golden model.
// Every error is one line on stderr: "strata: error: <what>".
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "strata/bundle.hpp"
#include "strata/cascade.hpp"
#include "strata/compiler.hpp"
#include "strata/cycle_model.hpp"
#include "strata/device.hpp"
#include "strata/error.hpp"
#include "strata/file_io.hpp"
#include "strata/gen.hpp"
#include "strata/golden.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/npy.hpp"
#include "strata/planner.hpp"
#include "strata/resource_model.hpp"
#include "strata/target_rules.hpp"
#include "strata/tensor.hpp"

#ifdef STRATA_HAVE_RTL
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <map>

#include "accel_runner.hpp"
#include "chain_runner.hpp"
#endif

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

// kernel/stride/pad; padding per side as t,l,b,r when the sides differ.
std::string geometry_label(const Layer& l) {
  const std::string pad = l.symmetric_pads() ? std::to_string(l.pads.top)
                                             : fmt::format("{},{},{},{}", l.pads.top, l.pads.left,
                                                           l.pads.bottom, l.pads.right);
  switch (l.type) {
    case LayerType::kConv:
    case LayerType::kDepthwise:
      return fmt::format("{}/{}/{}", l.conv.kernel, l.conv.stride, pad);
    case LayerType::kMaxPool:
    case LayerType::kAvgPool:
      return fmt::format("{}/{}/{}{}", l.pool.kernel, l.pool.stride, pad,
                         l.pool.ceil_mode ? " ceil" : "");
    case LayerType::kSlice:
      return fmt::format("{}:{}", l.slice_begin, l.slice_end);
    case LayerType::kUpsample:
      return fmt::format("x{}", l.scale);
    default:
      return "-";
  }
}

std::string activation_label(const Layer& l) {
  if (l.type == LayerType::kClamp) return fmt::format("clamp [{}, {}]", l.lo, l.hi);
  if (!l.has_requant()) return "";
  if (l.has_table()) return fmt::format("table {}", l.files.table);
  if (l.requant.lo == kInt8Min && l.requant.hi == kInt8Max) return "none";
  if (l.requant.lo == 0 && l.requant.hi == kInt8Max) return "relu";
  return fmt::format("clamp [{}, {}]", l.requant.lo, l.requant.hi);
}

// Parameter files of the network that are not in its weights directory.
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

// ---- info ------------------------------------------------------------------

struct InfoArgs {
  std::string network;
  std::string weights;
  std::string target;  // with --target: the placement the compiler chooses for it
  std::string device;  // with --target: the configuration's predicted resources on it
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
  fmt::print("{:>3}  {:<12} {:<14} {:<16} {:<16} {:<11} {:<15} {:>12} {:>10}\n", "#", "name",
             "type", "in", "out", "k/s/p", "activation", "MACs", "params(B)");
  int64_t params = 0;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& l = net.layers[i];
    fmt::print("{:>3}  {:<12} {:<14} {:<16} {:<16} {:<11} {:<15} {:>12} {:>10}\n", i, l.name,
               type_label(l), shape_str(l.in_shape), shape_str(l.out_shape), geometry_label(l),
               activation_label(l), l.macs(), l.param_bytes());
    params += l.param_bytes();
  }
  if (net.output_count() == 1) {
    fmt::print("\ntotal: {} layers, {} MACs per image, {} parameter bytes, output {}\n",
               net.layers.size(), net.macs(), params, shape_str(net.output_shape()));
  } else {
    std::vector<std::string> outs;
    for (size_t j = 0; j < net.output_count(); ++j) {
      outs.push_back(
          fmt::format("{} {} {}", j, net.output_name(j), shape_str(net.output_shape(j))));
    }
    fmt::print("\ntotal: {} layers, {} MACs per image, {} parameter bytes, {} outputs: {}\n",
               net.layers.size(), net.macs(), params, net.output_count(), fmt::join(outs, ", "));
  }
  fmt::print(
      "MACs count only taps inside the image (a padded tap is not a multiply-accumulate);\n"
      "parameter bytes = int8 weights + per channel 4 (bias) + 2 (M) + 1 (S).\n");
  if (a.target.empty()) return 0;
  // The placement depends on the shapes only: without the parameter files,
  // those `strata gen --seed 1` makes stand in.
  const HwTarget target = HwTarget::from_yaml(a.target);
  if (!missing.empty()) {
    GenOptions g;
    generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
  }
  const Program prog = compile(net, target, {});
  const std::vector<OpWork> work = op_work(prog);
  const CyclePrediction cycles = predict_cycles(prog);
  fmt::print("\non target '{}' ({}): {} instructions\n", target.name, a.target,
             prog.instructions.size());
  fmt::print("{:<24} {:<10} {:<10} {:<22} {:>12} {:>12} {:>12} {:>12}\n", "op", "input", "output",
             "runs", "load B", "store B", "beats", "done at");
  for (size_t k = 0; k < prog.ops.size(); ++k) {
    const CompiledOp& op = prog.ops[k];
    fmt::print("{:<24} {:<10} {:<10} {:<22} {:>12} {:>12} {:>12} {:>12}\n", op.name, op.input_at,
               op.output_at, op.tiling, work[k].load_bytes, work[k].store_bytes, work[k].beats,
               cycles.op_end[k]);
  }
  fmt::print(
      "predicted: {} cycles per image (the cycle model, 60-cycle read latency, one AXI "
      "beat per cycle; docs/planner.md)\n",
      cycles.cycles);
  fmt::print(
      "input / output: where the op's maps live (on chip: a bank; external: external "
      "memory);\nruns: whole, or in row bands x column strips (docs/compiler.md, Large "
      "maps);\nload B / store B: external bytes its instructions move per run;\ndone at: "
      "the predicted cycle its last instruction ends.\n");
  if (!a.device.empty()) {
    const Device d = Device::find(a.device, std::string(STRATA_SOURCE_DIR) + "/config/devices");
    CycleModelOptions board;
    board.beats_per_cycle = board_beats_per_cycle(d, target);
    const int64_t on_board = predict_cycles(prog, board).cycles;
    fmt::print(
        "\non {} ({}, {} MB/s at {} MHz: {:.2f} AXI beats per cycle): {} cycles per image "
        "predicted, {:.1f} images/s\n",
        d.name, d.board, d.ext_mbytes_s, d.fmax_mhz, board.beats_per_cycle, on_board,
        d.fmax_mhz * 1e6 / static_cast<double>(on_board));
    const ResourceEstimate r = predict_resources(target, d);
    fmt::print(
        "\nresources of '{}' on {} (predicted, docs/planner.md): {} of {} {}, {} of {} {}, "
        "{} of {} LUTs (LUT4 equivalents), {} of {} FFs\n",
        target.name, d.name, r.dsp, d.dsps, d.dsp_kind, r.bram, d.brams, d.bram_kind, r.lut, d.luts,
        r.ff, d.ffs);
    for (const MemoryUse& m : r.memories) {
      fmt::print("  {:<20} {:>3} x {:>6} words x {:>3} bits: {}\n", m.name, m.copies, m.depth,
                 m.width,
                 m.lut_ram ? std::string("LUT RAM")
                           : fmt::format("{} {} each", m.blocks_each, d.bram_kind));
    }
  }
  return 0;
}

// ---- shared ------------------------------------------------------------------

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

// ---- option checks -------------------------------------------------------------

// A seed: decimal digits only, 0..2^64-1. CLI11's own conversion wraps "-1" and
// saturates values past 2^64-1; both are usage errors here.
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

// A finite number in [lo, hi]: CLI::Range lets NaN through (every comparison with it is false).
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

// A probability or fraction: a finite number in [0, 1].
const CLI::Validator kFraction = finite_range(0.0, 1.0);

// A usage error found after parsing (a combination of option values that the
// library's needs / excludes cannot express): exit status 2, like every other.
void usage_check(bool ok, const std::string& message) {
  if (!ok) throw CLI::ValidationError(message);
}

// The hardware configuration option, spelled --target or --config on every command.
CLI::Option* add_target_option(CLI::App* cmd, std::string& target, const std::string& help) {
  return cmd->add_option("--target,--config", target, help);
}

// ---- RTL backend (run --backend rtl, bench) -----------------------------------

// Options of a run on the Verilated accelerator.
struct RtlArgs {
  explicit RtlArgs(std::string default_mode) : mode(std::move(default_mode)) {}
  std::string mode;            // run: fine | completion; bench: also both
  double stall = 0.0;          // probability of a memory-model stall per channel and cycle
  unsigned latency = 60;       // memory read latency, cycles
  uint64_t seed = 1;           // memory-model stalls, initial X values, random images
  uint64_t timeout = 0;        // cycles before a run counts as hung; 0: from the program
  std::string trace;           // FST file of the (first) run, "" = none
  bool checked_model = false;  // the checked model (assertions, random X) instead of the fast one
};

void add_rtl_options(CLI::App* cmd, RtlArgs& a, bool both) {
  cmd->add_option("--mode", a.mode,
                  both ? "Scheduling mode (CTRL.FINE_GRAIN): fine, completion or both"
                       : "Scheduling mode (CTRL.FINE_GRAIN) of --backend rtl: fine or "
                         "completion")
      ->check(both ? CLI::IsMember({"fine", "completion", "both"})
                   : CLI::IsMember({"fine", "completion"}))
      ->capture_default_str();
  cmd->add_option("--stall", a.stall,
                  "RTL: probability of a random memory stall per AXI channel and cycle")
      ->check(finite_range(0.0, 0.9))
      ->capture_default_str();
  cmd->add_option("--latency", a.latency, "RTL: memory read latency in cycles")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "RTL: seed of the memory stalls and initial X values")
      ->check(kSeedCheck)
      ->capture_default_str();
  cmd->add_option("--timeout", a.timeout,
                  "RTL: cycles before a run counts as hung (default: 20,000,000 plus 10 times "
                  "the program's roofline bound)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_flag("--checked-model", a.checked_model,
                "RTL: run the checked model (assertions on, X values randomised, as the tests "
                "do) instead of the fast one; same cycles, about half the speed");
  cmd->add_option("--trace", a.trace,
                  "RTL: write an FST waveform of the run (GTKWave layout: "
                  "tb/waves/strata_top.gtkw)");
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

// The golden model's outputs of each image, image by image and, per image,
// every network output in order (the order AccelRunner::run_program reads them).
std::vector<Tensor<int8_t>> golden_outputs(const Network& net,
                                           const std::vector<Tensor<int8_t>>& images) {
  std::vector<Tensor<int8_t>> golden;
  for (const Tensor<int8_t>& im : images) {
    for (Tensor<int8_t>& t : run_network_outputs(net, im)) golden.push_back(std::move(t));
  }
  return golden;
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

#ifdef STRATA_HAVE_RTL

namespace tbr = strata::tb;

// What one scheduling mode gave, summed over the runs (one per batch of up to P images).
struct RtlResult {
  bool fine = true;
  int64_t runs = 0;
  std::vector<Tensor<int8_t>> outputs;    // per image, each network output in order
  std::vector<std::string> output_names;  // the network's output layers
  tbr::PerfCounts counters{};             // the CSR performance counters
  std::vector<tbr::PerfCounts> per_op;    // trace port split, per program op
  std::vector<OpWork> work;               // compiler figures, per program op
  double seconds = 0.0;                   // host time of the simulation
  std::string model;                      // "fast" or "checked" (sim/CMakeLists.txt)
  int64_t mismatches = 0;                 // elements that differ from the golden model
  std::string first_mismatch;             // where the first one is
};

uint64_t perf(const tbr::PerfCounts& c, uint32_t offset) { return c[tbr::perf_index(offset)]; }

// The default RTL timeout of a program: a margin for fixed costs plus ten
// times its roofline bound (PE-array beats or external bytes per AXI beat,
// whichever is larger, per op), so that a large network is not cut short and
// a hang is still caught.
uint64_t default_timeout(const Program& prog, const HwTarget& target) {
  uint64_t bound = 0;
  for (const OpWork& w : op_work(prog)) {
    bound += static_cast<uint64_t>(
        std::max(w.beats, (w.load_bytes + w.store_bytes) / target.beat_bytes()));
  }
  return 20000000 + 10 * bound;
}

// Runs `images` (each [C][H][W]) on the accelerator model of `target`, in
// batches of up to P images, in one scheduling mode. A run that hangs, stops
// with an error or trips a bench check is a strata::Error naming what happened.
RtlResult run_rtl(const Network& net, const HwTarget& target,
                  const std::vector<Tensor<int8_t>>& images, const RtlArgs& a, bool fine,
                  bool trace) {
  std::map<int, Program> programs;
  const auto program_for = [&](int batch) -> const Program& {
    auto it = programs.find(batch);
    if (it == programs.end()) {
      CompileOptions co;
      co.batch = batch;
      it = programs.emplace(batch, compile(net, target, co)).first;
    }
    return it->second;
  };
  tbr::RunnerOptions o;
  o.seed = a.seed;
  o.read_latency = a.latency;
  o.stall = a.stall;
  o.fine_grain = fine;
  o.timeout =
      a.timeout != 0
          ? a.timeout
          : default_timeout(
                program_for(static_cast<int>(std::min<size_t>(target.pes, images.size()))), target);
  o.checked = a.checked_model;
  if (trace) {
    create_parent(a.trace);
    o.trace_path = a.trace;
  }
  tbr::AccelRunner runner(target, o);
  RtlResult res;
  res.fine = fine;
  res.model = runner.model_kind();
  for (size_t j = 0; j < net.output_count(); ++j) res.output_names.push_back(net.output_name(j));
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < images.size(); first += static_cast<size_t>(target.pes)) {
    const int batch = static_cast<int>(std::min<size_t>(target.pes, images.size() - first));
    const Program& prog = program_for(batch);
    const std::vector<Tensor<int8_t>> in(
        images.begin() + static_cast<std::ptrdiff_t>(first),
        images.begin() + static_cast<std::ptrdiff_t>(first) + batch);
    std::vector<Tensor<int8_t>> out;
    const tbr::RunReport r = runner.run_program(prog, in, out);
    const std::string what =
        fmt::format("RTL run of '{}' (images {}..{}, {} mode)", net.name, first,
                    first + static_cast<size_t>(batch) - 1, fine ? "fine-grained" : "completion");
    if (!r.finished) {
      throw Error(
          fmt::format("{} did not finish within {} cycles (timeout): the accelerator "
                      "hung or --timeout is too small",
                      what, o.timeout));
    }
    if (r.error != csr::ErrorCode::kNone) {
      throw Error(fmt::format("{} stopped with error {} at instruction {}", what,
                              csr::to_string(r.error), r.error_index));
    }
    if (!r.bench_errors.empty()) {
      throw Error(fmt::format("{}: bench check failed: {}", what, r.bench_errors.front()));
    }
    for (size_t c = 0; c < r.trace_total.size(); ++c) {
      if (r.trace_total[c] != r.counters[c]) {
        throw Error(
            fmt::format("{}: the trace port sums to {} for counter 0x{:x}, the counter "
                        "reads {}",
                        what, r.trace_total[c], csr::kPerfCounters[c], r.counters[c]));
      }
    }
    if (res.per_op.empty()) {
      res.per_op.resize(prog.ops.size());
      res.work.resize(prog.ops.size());
    }
    for (const tbr::LayerCounts& l : r.layers) {
      size_t k = 0;
      while (k < prog.ops.size() && prog.ops[k].tag != l.tag) ++k;
      if (k == prog.ops.size()) {
        throw Error(
            fmt::format("{}: COMPUTE instructions with tag {}, which is no op's", what, l.tag));
      }
      for (size_t c = 0; c < l.counts.size(); ++c) res.per_op[k][c] += l.counts[c];
    }
    const std::vector<OpWork> w = op_work(prog);
    for (size_t k = 0; k < w.size(); ++k) {
      res.work[k].beats += w[k].beats;
      res.work[k].dense_beats += w[k].dense_beats;
      res.work[k].load_bytes += w[k].load_bytes;
      res.work[k].store_bytes += w[k].store_bytes;
      res.work[k].computes += w[k].computes;
    }
    for (size_t c = 0; c < r.counters.size(); ++c) res.counters[c] += r.counters[c];
    for (Tensor<int8_t>& t : out) res.outputs.push_back(std::move(t));
    ++res.runs;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

// Compares every element of the RTL outputs with the golden model's (both per
// image, each network output in order: golden_outputs).
void check_against_golden(RtlResult& res, const std::vector<Tensor<int8_t>>& golden) {
  res.mismatches = 0;
  const size_t count = std::max<size_t>(1, res.output_names.size());
  if (res.outputs.size() != golden.size()) {
    throw Error(fmt::format("the RTL gave {} output tensors, the golden model {}",
                            res.outputs.size(), golden.size()));
  }
  for (size_t k = 0; k < golden.size(); ++k) {
    const Tensor<int8_t>& want = golden[k];
    const Tensor<int8_t>& got = res.outputs.at(k);
    const size_t i = k / count;
    const std::string which = count == 1 ? fmt::format("image {}", i)
                                         : fmt::format("image {}, output {} '{}'", i, k % count,
                                                       res.output_names[k % count]);
    if (want.shape() != got.shape()) {
      throw Error(fmt::format("RTL output of {} has shape {}, the golden model's {}", which,
                              shape_str(got.shape()), shape_str(want.shape())));
    }
    const int64_t h = want.rank() == 3 ? want.dim(1) : 1, w = want.rank() == 3 ? want.dim(2) : 1;
    for (int64_t e = 0; e < want.size(); ++e) {
      if (want[e] == got[e]) continue;
      if (res.mismatches++ == 0) {
        res.first_mismatch = fmt::format(
            "{}, output channel {}, row {}, column {} (element {}): expected {}, got {}", which,
            e / (h * w), e / w % h, e % w, e, want[e], got[e]);
      }
    }
  }
}

double utilisation(int64_t macs, const HwTarget& t, uint64_t cycles) {
  return cycles == 0 ? 0.0 : double(macs) / (double(t.macs_per_beat()) * double(cycles));
}

void print_trace_note(const std::string& trace) {
  if (trace.empty()) return;
  fmt::print("trace   {} (FST); view: gtkwave {} {}\n", trace, trace, STRATA_GTKW_LAYOUT);
}

#endif  // STRATA_HAVE_RTL

// ---- bench -----------------------------------------------------------------

// ---- cascade chains (docs/cascade.md) ---------------------------------------

// `path` with ".stage<k>" before its extension: out.bin -> out.stage0.bin.
std::string stage_path(const std::string& path, size_t k) {
  const fs::path p(path);
  return (p.parent_path() /
          fmt::format("{}.stage{}{}", p.stem().string(), k, p.extension().string()))
      .string();
}

// The partition: each stage's layers, ops, predicted cycles and transfers.
void print_chain(const ChainProgram& chain, const Network& net) {
  fmt::print(
      "cascade: {} stage{}, cuts allowed after op{} {}; balance bound {:.2f}x "
      "(one accelerator's predicted cycles / the largest stage's, docs/cascade.md)\n",
      chain.stages.size(), chain.stages.size() == 1 ? "" : "s",
      chain.cut_candidates.size() == 1 ? "" : "s",
      chain.cut_candidates.empty() ? std::string("(none)")
                                   : fmt::format("{}", fmt::join(chain.cut_candidates, ", ")),
      chain.balance_bound());
  fmt::print("  {:<5} {:<34} {:>4} {:>16} {:>10} {:>13}\n", "stage", "layers", "ops",
             "predicted cyc.", "transfers", "instructions");
  for (size_t k = 0; k < chain.stages.size(); ++k) {
    const ChainStage& st = chain.stages[k];
    const std::string layers =
        fmt::format("{} .. {}", net.layers[st.first_layer].name, net.layers[st.end_layer - 1].name);
    fmt::print("  {:<5} {:<34} {:>4} {:>16} {:>10} {:>13}\n", k, layers, st.ops.size(),
               st.predicted_cycles, st.transfers_out, st.program.instructions.size());
  }
}

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

#ifdef STRATA_HAVE_RTL

// Stall causes and busy terms: JSON key and counter.
struct Term {
  const char* key;
  uint32_t offset;
};
constexpr Term kStalls[] = {
    {"compute_dep", csr::kPerfStallComputeDep}, {"compute_out", csr::kPerfStallComputeOut},
    {"load_dep", csr::kPerfStallLoadDep},       {"load_mem", csr::kPerfStallLoadMem},
    {"store_dep", csr::kPerfStallStoreDep},     {"store_mem", csr::kPerfStallStoreMem}};
constexpr Term kBusy[] = {{"load", csr::kPerfLoadBusy},
                          {"compute", csr::kPerfComputeBusy},
                          {"store", csr::kPerfStoreBusy}};

nlohmann::ordered_json counters_json(const tbr::PerfCounts& c, const Term* terms, size_t count) {
  nlohmann::ordered_json j;
  for (size_t i = 0; i < count; ++i) j[terms[i].key] = perf(c, terms[i].offset);
  return j;
}

// Whole-run figures of one mode.
nlohmann::ordered_json mode_json(const RtlResult& r, int64_t macs, int64_t images,
                                 const HwTarget& t) {
  const uint64_t cycles = perf(r.counters, csr::kPerfCycles);
  nlohmann::ordered_json j;
  j["mode"] = r.fine ? "fine" : "completion";
  j["runs"] = r.runs;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(images);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, t, cycles);
  j["mismatches"] = r.mismatches;
  j["mac_active_cycles"] = perf(r.counters, csr::kPerfMacActive);
  j["rtl_macs"] = perf(r.counters, csr::kPerfMacs);
  j["stalls"] = counters_json(r.counters, kStalls, std::size(kStalls));
  j["busy"] = counters_json(r.counters, kBusy, std::size(kBusy));
  j["axi_bytes"] = {{"read", perf(r.counters, csr::kPerfReadBytes)},
                    {"write", perf(r.counters, csr::kPerfWriteBytes)}};
  j["instructions"] = perf(r.counters, csr::kPerfInstructions);
  j["host_seconds"] = r.seconds;
  j["model"] = r.model;
  j["sim_cycles_per_second"] = r.seconds > 0.0 ? double(cycles) / r.seconds : 0.0;
  return j;
}

// Cycles the op's external bytes need at one AXI beat per cycle: its memory
// bound. With its PE-array beats (one per cycle) the larger is the roofline
// bound on its cycles.
int64_t memory_cycles(const OpWork& w, const HwTarget& t) {
  const int64_t beat = t.beat_bytes();
  return (w.load_bytes + w.store_bytes + beat - 1) / beat;
}

nlohmann::ordered_json layer_json(const CompiledOp& op, const tbr::PerfCounts& c, const OpWork& w,
                                  int64_t images, const HwTarget& t) {
  const uint64_t cycles = perf(c, csr::kPerfCycles);
  const int64_t macs = op.macs * images;
  nlohmann::ordered_json j;
  j["name"] = op.name;
  j["kind"] = op.kind;
  j["tag"] = op.tag;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(images);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, t, cycles);
  j["mac_active_cycles"] = perf(c, csr::kPerfMacActive);
  j["rtl_macs"] = perf(c, csr::kPerfMacs);
  j["stalls"] = counters_json(c, kStalls, std::size(kStalls));
  j["busy"] = counters_json(c, kBusy, std::size(kBusy));
  j["bytes"] = {{"load", w.load_bytes}, {"store", w.store_bytes}};
  j["axi_bytes"] = {{"read", perf(c, csr::kPerfReadBytes)},
                    {"write", perf(c, csr::kPerfWriteBytes)}};
  j["beats"] = w.beats;
  j["memory_cycles"] = memory_cycles(w, t);
  j["bound_cycles"] = std::max<int64_t>(w.beats, memory_cycles(w, t));
  j["dense_beats"] = w.dense_beats;
  j["skipped_beats"] = w.dense_beats - w.beats;
  j["computes"] = w.computes;
  return j;
}

void print_layer_table(const Program& shape, const RtlResult& r, int64_t images,
                       const HwTarget& t) {
  size_t name_w = 22, kind_w = 4;  // imported networks have long layer names
  for (const CompiledOp& op : shape.ops) {
    name_w = std::max(name_w, op.name.size());
    kind_w = std::max(kind_w, op.kind.size());
  }
  fmt::print(
      "{:>2}  {:<{}} {:<{}} {:>9} {:>10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} "
      "{:>7} {:>8} {:>8} {:>9}\n",
      "#", "layer (fused op)", name_w, "kind", kind_w, "cycles", "MACs", "util%", "beats",
      "skipped", "C-dep", "C-out", "L-dep", "L-mem", "S-dep", "S-mem", "load B", "store B",
      "bound");
  tbr::PerfCounts sum{};
  OpWork wsum;
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    const tbr::PerfCounts& c = r.per_op[k];
    const OpWork& w = r.work[k];
    const uint64_t cycles = perf(c, csr::kPerfCycles);
    fmt::print(
        "{:>2}  {:<{}} {:<{}} {:>9} {:>10} {:>6.1f} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} "
        "{:>7} {:>7} {:>8} {:>8} {:>9}\n",
        k, shape.ops[k].name, name_w, shape.ops[k].kind, kind_w, cycles, shape.ops[k].macs * images,
        100.0 * utilisation(shape.ops[k].macs * images, t, cycles), w.beats,
        w.dense_beats - w.beats, perf(c, csr::kPerfStallComputeDep),
        perf(c, csr::kPerfStallComputeOut), perf(c, csr::kPerfStallLoadDep),
        perf(c, csr::kPerfStallLoadMem), perf(c, csr::kPerfStallStoreDep),
        perf(c, csr::kPerfStallStoreMem), w.load_bytes, w.store_bytes,
        std::max<int64_t>(w.beats, memory_cycles(w, t)));
    for (size_t i = 0; i < c.size(); ++i) sum[i] += c[i];
    wsum.beats += w.beats;
    wsum.dense_beats += w.dense_beats;
    wsum.load_bytes += w.load_bytes;
    wsum.store_bytes += w.store_bytes;
  }
  int64_t macs = 0;
  for (const CompiledOp& op : shape.ops) macs += op.macs * images;
  const uint64_t cycles = perf(sum, csr::kPerfCycles);
  fmt::print(
      "    {:<{}} {:<{}} {:>9} {:>10} {:>6.1f} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} "
      "{:>7} {:>8} {:>8} {:>9}\n",
      "total", name_w, "", kind_w, cycles, macs, 100.0 * utilisation(macs, t, cycles), wsum.beats,
      wsum.dense_beats - wsum.beats, perf(sum, csr::kPerfStallComputeDep),
      perf(sum, csr::kPerfStallComputeOut), perf(sum, csr::kPerfStallLoadDep),
      perf(sum, csr::kPerfStallLoadMem), perf(sum, csr::kPerfStallStoreDep),
      perf(sum, csr::kPerfStallStoreMem), wsum.load_bytes, wsum.store_bytes,
      std::max<int64_t>(wsum.beats, memory_cycles(wsum, t)));
  fmt::print(
      "bound: the roofline bound on the cycles, max(PE-array beats, (load B + store B) / "
      "{} bytes per AXI beat)\n",
      t.beat_bytes());
}

// The per-op work of running `images` images as run_rtl does (runs of up to
// P images), without running them: the compiled programs' figures, summed.
std::vector<OpWork> program_work(const Network& net, const HwTarget& target, size_t images) {
  std::vector<OpWork> sum;
  for (size_t first = 0; first < images; first += static_cast<size_t>(target.pes)) {
    CompileOptions co;
    co.batch = static_cast<int>(std::min<size_t>(target.pes, images - first));
    const std::vector<OpWork> w = op_work(compile(net, target, co));
    if (sum.empty()) sum.resize(w.size());
    for (size_t k = 0; k < w.size(); ++k) {
      sum[k].beats += w[k].beats;
      sum[k].dense_beats += w[k].dense_beats;
      sum[k].load_bytes += w[k].load_bytes;
      sum[k].store_bytes += w[k].store_bytes;
      sum[k].computes += w[k].computes;
    }
  }
  return sum;
}

// The cycle model's prediction (docs/planner.md, "Cycles") of running
// `images` images as run_rtl does (runs of up to P images, one after another).
int64_t predicted_cycles(const Network& net, const HwTarget& target, size_t images,
                         unsigned latency, bool fine) {
  int64_t cycles = 0;
  for (size_t first = 0; first < images; first += static_cast<size_t>(target.pes)) {
    CompileOptions co;
    co.batch = static_cast<int>(std::min<size_t>(target.pes, images - first));
    CycleModelOptions o;
    o.mem_latency = static_cast<int>(latency);
    o.fine_grained = fine;
    cycles += predict_cycles(compile(net, target, co), o).cycles;
  }
  return cycles;
}

// A sparse build's comparison: the dense program of the same weights (every
// CONV unpacked) on the dense build of the same hardware (sparse: false).
struct DenseTwin {
  HwTarget target;               // this configuration with sparse: false
  std::string model;             // its built model, "" when none is built
  std::vector<OpWork> work;      // the dense program's work per op, all images
  std::optional<RtlResult> run;  // its RTL run in the main mode, when built
};

DenseTwin run_dense_twin(const Network& net, const HwTarget& target, const Program& shape,
                         const std::vector<Tensor<int8_t>>& images,
                         const std::vector<Tensor<int8_t>>& golden, const RtlArgs& a, bool fine) {
  DenseTwin t;
  t.target = target;
  t.target.sparse = false;
  t.target.name = target.name + " with sparse: false";
  const Program twin_shape = compile(net, t.target, {});
  bool same_ops = twin_shape.ops.size() == shape.ops.size();
  for (size_t k = 0; same_ops && k < shape.ops.size(); ++k) {
    same_ops = twin_shape.ops[k].name == shape.ops[k].name;
  }
  if (!same_ops) {
    throw Error(
        fmt::format("the dense program of '{}' has other ops than its sparse program; "
                    "the two cannot be compared layer by layer",
                    net.name));
  }
  t.work = program_work(net, t.target, images.size());
  t.model = tbr::AccelRunner::built_model_of(t.target);
  if (!t.model.empty()) {
    RtlArgs dense_args = a;
    dense_args.trace.clear();
    t.run = run_rtl(net, t.target, images, dense_args, fine, false);
    check_against_golden(*t.run, golden);
  }
  return t;
}

int64_t total_beats(const std::vector<OpWork>& work) {
  int64_t b = 0;
  for (const OpWork& w : work) b += w.beats;
  return b;
}

double ratio(double num, double den) { return den == 0.0 ? 0.0 : num / den; }

nlohmann::ordered_json sparse_json(const Program& shape, const RtlResult& main,
                                   const DenseTwin& t) {
  int packed = 0;
  for (const CompiledOp& op : shape.ops) packed += op.packed;
  const int64_t beats = total_beats(main.work), dense = total_beats(t.work);
  nlohmann::ordered_json j;
  j["packed_ops"] = packed;
  j["beats"] = beats;
  j["dense_program_beats"] = dense;
  j["beat_speedup"] = ratio(double(dense), double(beats));
  if (t.run) {
    const uint64_t c = perf(main.counters, csr::kPerfCycles);
    const uint64_t dc = perf(t.run->counters, csr::kPerfCycles);
    j["dense_build"] = {{"model", t.model},
                        {"cycles", dc},
                        {"mac_active_cycles", perf(t.run->counters, csr::kPerfMacActive)},
                        {"mismatches", t.run->mismatches}};
    j["speedup"] = ratio(double(dc), double(c));
  } else {
    j["dense_build"] = nullptr;
    j["speedup"] = nullptr;
  }
  return j;
}

void print_sparse_table(const Program& shape, const RtlResult& main, const DenseTwin& t,
                        const HwTarget& target) {
  size_t name_w = 22;
  for (const CompiledOp& op : shape.ops) name_w = std::max(name_w, op.name.size());
  fmt::print(
      "\nsparse build: packed CONVs against the dense program of the same weights"
      "{}:\n",
      t.run ? fmt::format(" on the dense build (model '{}': this configuration with "
                          "sparse: false)",
                          t.model)
            : "");
  const std::vector<OpPacking> rows = op_packing(shape);
  fmt::print("{:>2}  {:<{}} {:>6} {:>7} {:>9} {:>11} {:>7} {:>9} {:>12} {:>8}\n", "#", "layer",
             name_w, "packed", "rows x", "beats", "dense beats", "beat x", "cycles", "dense cycles",
             "speed-up");
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    const uint64_t c = perf(main.per_op[k], csr::kPerfCycles);
    const std::string dc =
        t.run ? fmt::format("{}", perf(t.run->per_op[k], csr::kPerfCycles)) : "-";
    const std::string up =
        t.run ? fmt::format("{:.2f}x",
                            ratio(double(perf(t.run->per_op[k], csr::kPerfCycles)), double(c)))
              : "-";
    const std::string rx =
        rows[k].packed_rows > 0
            ? fmt::format("{:.2f}x", ratio(double(rows[k].dense_rows), double(rows[k].packed_rows)))
            : "-";
    fmt::print("{:>2}  {:<{}} {:>6} {:>7} {:>9} {:>11} {:>6.2f}x {:>9} {:>12} {:>8}\n", k,
               shape.ops[k].name, name_w, shape.ops[k].packed ? "yes" : "no", rx,
               main.work[k].beats, t.work[k].beats,
               ratio(double(t.work[k].beats), double(main.work[k].beats)), c, dc, up);
  }
  const int64_t beats = total_beats(main.work), dense = total_beats(t.work);
  const uint64_t c = perf(main.counters, csr::kPerfCycles);
  fmt::print("    {:<{}} {:>6} {:>7} {:>9} {:>11} {:>6.2f}x {:>9} {:>12} {:>8}\n", "total", name_w,
             "", "", beats, dense, ratio(double(dense), double(beats)), c,
             t.run ? fmt::format("{}", perf(t.run->counters, csr::kPerfCycles)) : "-",
             t.run ? fmt::format("{:.2f}x",
                                 ratio(double(perf(t.run->counters, csr::kPerfCycles)), double(c)))
                   : "-");
  fmt::print(
      "rows x: the packer's dense rows / packed rows of the op's weights, the speed-up "
      "its schedule allows before padding and start costs\n");
  if (t.run) {
    fmt::print(
        "speed-up of the sparse build: {:.2f}x the dense build's speed on the same "
        "weights; dense build mismatches: {}\n",
        ratio(double(perf(t.run->counters, csr::kPerfCycles)), double(c)), t.run->mismatches);
  } else {
    fmt::print(
        "no model of '{}' is built (P {}, N {}, sparse: false): beats only; add a "
        "configuration with this hardware and sparse: false to STRATA_RTL_CONFIGS for "
        "the cycles\n",
        t.target.name, target.pes, target.lanes);
  }
}

#endif  // STRATA_HAVE_RTL

// Exit status 3: the RTL output differs from the golden model.
struct MismatchError : Error {
  using Error::Error;
};

#ifdef STRATA_HAVE_RTL
// A cascade model of the target's configuration, with at least `instances` stages.
void require_chain_model(const HwTarget& target, int instances) {
  const int stages = tbr::ChainRunner::stages_built_for(target);
  if (stages == 0) {
    throw Error(fmt::format("--instances: {}", tbr::ChainRunner::missing_model_message(target)));
  }
  if (instances > stages) {
    throw Error(fmt::format("--instances {}: the cascade model of configuration '{}' has {} stages",
                            instances, target.name, stages));
  }
}

// The chain runner's options for `chain` streaming `images` images: the RTL
// options given, and by default a timeout of every stage's own default per
// image.
tbr::ChainRunnerOptions chain_options(const RtlArgs& a, const ChainProgram& chain,
                                      const HwTarget& target, size_t images, bool fine) {
  require_chain_model(target, static_cast<int>(chain.stages.size()));
  tbr::ChainRunnerOptions o;
  o.run.seed = a.seed;
  o.run.read_latency = a.latency;
  o.run.stall = a.stall;
  o.run.fine_grain = fine;
  uint64_t bound = 0;
  for (const ChainStage& st : chain.stages) bound += default_timeout(st.program, target);
  o.run.timeout = a.timeout != 0 ? a.timeout : bound * images;
  return o;
}

// `strata bench --instances K`: a stream of images through a chain of K
// accelerators (strata_cascade_top) and, for K > 1, through one accelerator
// (the same runner, one stage) for the speed-up; every output checked
// against the golden model.
int cmd_bench_chain(const BenchArgs& a, const Network& net, const HwTarget& target,
                    const std::vector<Tensor<int8_t>>& images,
                    const std::vector<Tensor<int8_t>>& golden, const std::string& params,
                    const std::string& source) {
  require_chain_model(target, a.instances);
  const bool fine = a.rtl.mode != "completion";  // one mode: fine unless --mode completion
  const auto n = static_cast<int64_t>(images.size());
  struct Measure {
    int instances = 0;
    ChainProgram chain;
    tbr::ChainReport report;
    int64_t mismatches = 0;
    double seconds = 0.0;
  };
  std::vector<Measure> measures;
  std::vector<int> ks{a.instances};
  if (a.instances > 1) ks.insert(ks.begin(), 1);
  for (int k : ks) {
    Measure m;
    m.instances = k;
    CycleModelOptions cm;
    cm.mem_latency = static_cast<int>(a.rtl.latency);
    cm.fine_grained = fine;
    m.chain = compile_chain(net, target, k, cm);
    const tbr::ChainRunnerOptions o = chain_options(a.rtl, m.chain, target, images.size(), fine);
    tbr::ChainRunner runner(o, target);
    std::vector<Tensor<int8_t>> outputs;
    const auto t0 = std::chrono::steady_clock::now();
    m.report = runner.run_stream(m.chain, images, outputs);
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string what =
        fmt::format("cascade run of '{}' on {} instance{}", net.name, k, k == 1 ? "" : "s");
    if (!m.report.bench_errors.empty()) {
      throw Error(fmt::format("{}: bench check failed: {}", what, m.report.bench_errors.front()));
    }
    if (m.report.failed_stage >= 0) {
      throw Error(fmt::format("{}: stage {} stopped with error {} at instruction {}", what,
                              m.report.failed_stage, csr::to_string(m.report.error),
                              m.report.error_index));
    }
    if (!m.report.finished || outputs.size() != images.size()) {
      throw Error(fmt::format("{} did not finish within {} cycles (timeout)", what, o.run.timeout));
    }
    RtlResult check;
    check.outputs = std::move(outputs);
    check_against_golden(check, golden);
    m.mismatches = check.mismatches;
    if (m.mismatches > 0) {
      throw MismatchError(
          fmt::format("{}: output differs from the golden model in {} elements; "
                      "first: {}",
                      what, m.mismatches, check.first_mismatch));
    }
    measures.push_back(std::move(m));
  }
  fmt::print(
      "network {} ({}), {} images ({}), parameters {}, target '{}' (P {}, N {}), {} "
      "scheduling, {}-cycle memory latency, stall {}\n\n",
      net.name, net.source_file, n, source, params, target.name, target.pes, target.lanes,
      fine ? "fine-grained" : "completion", a.rtl.latency, a.rtl.stall);
  print_chain(measures.back().chain, net);
  const Measure& one = measures.front();
  const auto rate = [&](const Measure& m) {
    return m.report.cycles == 0 ? 0.0 : 1e6 * double(n) / double(m.report.cycles);
  };
  fmt::print("\n  {:<9} {:>12} {:>14} {:>10} {:>14} {:>14} {:>9}\n", "instances", "cycles",
             "images/Mcycle", "speed-up", "latency img 0", "mean latency", "bound");
  for (const Measure& m : measures) {
    uint64_t lat_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      lat_sum += m.report.image_done[static_cast<size_t>(i)] -
                 m.report.image_start[static_cast<size_t>(i)];
    }
    fmt::print("  {:<9} {:>12} {:>14.1f} {:>9.2f}x {:>14} {:>14} {:>8.2f}x\n", m.instances,
               m.report.cycles, rate(m), rate(one) > 0 ? rate(m) / rate(one) : 0.0,
               m.report.image_done[0] - m.report.image_start[0], lat_sum / uint64_t(n),
               m.chain.balance_bound());
  }
  const Measure& last = measures.back();
  fmt::print("\n  {:<5} {:>12} {:>8}   (K = {}: PERF_CYCLES of each stage, summed over its runs)\n",
             "stage", "busy cycles", "busy %", last.instances);
  for (size_t k = 0; k < last.report.stages.size(); ++k) {
    const uint64_t busy = last.report.stages[k].counters[tbr::perf_index(csr::kPerfCycles)];
    fmt::print("  {:<5} {:>12} {:>7.1f}%\n", k, busy,
               last.report.cycles ? 100.0 * double(busy) / double(last.report.cycles) : 0.0);
  }
  int64_t elements = 0;
  for (const Tensor<int8_t>& g : golden) elements += g.size();
  fmt::print(
      "\ncheck   {} output elements of each run compared with the golden model: 0 "
      "mismatches\n",
      elements);
  if (a.json) {
    nlohmann::ordered_json j;
    j["network"] = net.name;
    j["images"] = n;
    j["mode"] = fine ? "fine" : "completion";
    j["target"] = target.name;
    for (const Measure& m : measures) {
      nlohmann::ordered_json r;
      r["instances"] = m.instances;
      r["cycles"] = m.report.cycles;
      r["images_per_mcycle"] = rate(m);
      r["speedup"] = rate(one) > 0 ? rate(m) / rate(one) : 0.0;
      r["latency_first"] = m.report.image_done[0] - m.report.image_start[0];
      r["balance_bound"] = m.chain.balance_bound();
      r["mismatches"] = m.mismatches;
      for (size_t k = 0; k < m.chain.stages.size(); ++k) {
        const ChainStage& st = m.chain.stages[k];
        r["stages"].push_back(
            {{"first_layer", net.layers[st.first_layer].name},
             {"last_layer", net.layers[st.end_layer - 1].name},
             {"predicted_cycles", st.predicted_cycles},
             {"transfers", st.transfers_out},
             {"busy_cycles", m.report.stages[k].counters[tbr::perf_index(csr::kPerfCycles)]}});
      }
      j["runs"].push_back(r);
    }
    if (a.json_path.empty()) {
      fmt::print("{}\n", j.dump(2));
    } else {
      write_file(a.json_path, j.dump(2) + "\n");
      fmt::print("wrote {}\n", a.json_path);
    }
  }
  return 0;
}
#endif  // STRATA_HAVE_RTL

int cmd_bench(const BenchArgs& a) {
#ifndef STRATA_HAVE_RTL
  (void)a;
  throw Error(
      "strata bench needs the RTL backend, and this strata was built without it "
      "(STRATA_BUILD_RTL=OFF)");
#else
  // Without --weights: the parameters `strata gen --seed 1` would write (cycle
  // counts do not depend on parameter values; every run is still checked
  // against the golden model with the same parameters).
  Network net;
  std::string params = a.weights;
  if (a.weights.empty()) {
    net = load_network(a.network, LoadOptions{"", false});
    GenOptions g;
    g.sparsity = a.sparsity;
    generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
    params = a.sparsity > 0.0 ? fmt::format(
                                    "generated, seed 1, sparsity {} (strata gen --seed 1 "
                                    "--sparsity {})",
                                    a.sparsity, a.sparsity)
                              : "generated, seed 1 (strata gen --seed 1)";
  } else {
    net = load_network(a.network, LoadOptions{a.weights, true});
  }
  const HwTarget target = load_target(a.target);
  std::vector<Tensor<int8_t>> images;
  std::string source;
  if (!a.input.empty()) {
    Tensor<int8_t> input;
    try {
      input = load_npy<int8_t>(a.input);
    } catch (const Error& e) {
      throw Error(fmt::format("input: {}", e.what()));
    }
    const Shape& want = net.input_shape;
    if (!(input.shape() == want ||
          (input.rank() == 4 && Shape(input.shape().begin() + 1, input.shape().end()) == want))) {
      throw Error(fmt::format("input '{}' has shape {}, network '{}' expects {} or [N, {}]",
                              a.input, shape_str(input.shape()), net.name, shape_str(want),
                              fmt::join(want, ", ")));
    }
    images = split_images(input, want);
    source = a.input;
  } else {
    const int count = a.instances > 0 && !a.batch_given ? 16 : a.batch;
    images = split_images(random_images(net.input_shape, count, a.rtl.seed), net.input_shape);
    source = fmt::format("random images, seed {}", a.rtl.seed);
  }
  const auto n = static_cast<int64_t>(images.size());
  const std::vector<Tensor<int8_t>> golden = golden_outputs(net, images);
  if (a.instances > 0) return cmd_bench_chain(a, net, target, images, golden, params, source);
  const CompileOptions co;
  const Program shape = compile(net, target, co);  // the op list (the same for every batch)

  std::vector<bool> modes;
  if (a.rtl.mode != "completion") modes.push_back(true);
  if (a.rtl.mode != "fine") modes.push_back(false);
  std::vector<RtlResult> results;
  for (size_t m = 0; m < modes.size(); ++m) {
    const bool trace = m == 0 && !a.rtl.trace.empty();
    results.push_back(run_rtl(net, target, images, a.rtl, modes[m], trace));
    check_against_golden(results.back(), golden);
  }
  const RtlResult& main = results.front();
  std::optional<DenseTwin> twin;
  if (target.sparse) {
    twin = run_dense_twin(net, target, shape, images, golden, a.rtl, main.fine);
  }
  const int64_t macs = net.macs() * n;
  const uint64_t cycles = perf(main.counters, csr::kPerfCycles);

  nlohmann::ordered_json j;
  j["network"] = net.name;
  j["source"] = net.source_file;
  j["parameters"] = params;
  j["config"] = {{"name", target.name},
                 {"pes", target.pes},
                 {"lanes", target.lanes},
                 {"sparse", target.sparse},
                 {"macs_per_cycle", target.macs_per_beat()},
                 {"memory",
                  {{"model", "AXI4 memory model (sim/axi_mem_model.hpp)"},
                   {"read_latency", a.rtl.latency},
                   {"beat_bits", target.axi_data_width},
                   {"beats_per_cycle", 1},
                   {"stall", a.rtl.stall}}},
                 {"mode", main.fine ? "fine" : "completion"},
                 {"modes", a.rtl.mode},
                 {"batch", n},
                 {"images", source},
                 {"seed", a.rtl.seed}};
  j["images"] = n;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(n);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, target, cycles);
  int64_t mismatches = 0;
  for (const RtlResult& r : results) mismatches += r.mismatches;
  if (twin && twin->run) mismatches += twin->run->mismatches;
  j["mismatches"] = mismatches;
  int64_t beats = 0, dense = 0;
  for (const OpWork& w : main.work) {
    beats += w.beats;
    dense += w.dense_beats;
  }
  j["padding"] = {{"beats", beats}, {"dense_beats", dense}, {"skipped_beats", dense - beats}};
  nlohmann::ordered_json by_mode;
  // The cycle model's prediction of each mode run (docs/planner.md, "Cycles").
  std::vector<int64_t> predicted;
  for (const RtlResult& r : results) {
    predicted.push_back(predicted_cycles(net, target, images.size(), a.rtl.latency, r.fine));
    nlohmann::ordered_json m = mode_json(r, macs, n, target);
    m["predicted_cycles"] = predicted.back();
    by_mode[r.fine ? "fine" : "completion"] = m;
  }
  j["modes"] = by_mode;
  if (results.size() == 2) {
    const double c_fine = double(perf(results[0].counters, csr::kPerfCycles));
    const double c_comp = double(perf(results[1].counters, csr::kPerfCycles));
    j["fine_speedup"] = c_comp / c_fine;
  }
  j["predicted_cycles"] = predicted.front();  // the main mode's
  if (twin) j["sparse"] = sparse_json(shape, main, *twin);
  const std::vector<OpPacking> packing = twin ? op_packing(shape) : std::vector<OpPacking>{};
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    nlohmann::ordered_json l = layer_json(shape.ops[k], main.per_op[k], main.work[k], n, target);
    if (twin) {
      l["packed"] = shape.ops[k].packed;
      l["dense_rows"] = packing[k].dense_rows;
      l["packed_rows"] = packing[k].packed_rows;
      l["dense_program_beats"] = twin->work[k].beats;
      if (twin->run) {
        l["dense_build_cycles"] = perf(twin->run->per_op[k], csr::kPerfCycles);
      }
    }
    layers.push_back(l);
  }
  j["layers"] = layers;

  const bool json_stdout = a.json && a.json_path.empty();
  if (json_stdout) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("network {} ({}), target '{}' (P {}, N {}, {} MACs/cycle)\n", net.name,
               net.source_file, target.name, target.pes, target.lanes, target.macs_per_beat());
    fmt::print("memory  {}-cycle read latency, one {}-bit beat per cycle, stall {}\n",
               a.rtl.latency, target.axi_data_width, a.rtl.stall);
    fmt::print("params  {}\n", params);
    fmt::print("images  {} ({})\n\n", n, source);
    fmt::print(
        "{} mode, per layer (cycles from the RTL's trace port; stall columns: cycles "
        "each engine waited, by cause):\n",
        main.fine ? "fine-grained (CTRL.FINE_GRAIN = 1)" : "completion-granular");
    print_layer_table(shape, main, n, target);
    fmt::print("\n{:<12} {:>10} {:>12} {:>12} {:>7} {:>11}\n", "mode", "cycles", "cycles/image",
               "MACs", "util%", "mismatches");
    for (const RtlResult& r : results) {
      const uint64_t c = perf(r.counters, csr::kPerfCycles);
      fmt::print("{:<12} {:>10} {:>12.0f} {:>12} {:>7.1f} {:>11}\n", r.fine ? "fine" : "completion",
                 c, double(c) / double(n), macs, 100.0 * utilisation(macs, target, c),
                 r.mismatches);
    }
    for (size_t m = 0; m < results.size(); ++m) {
      const RtlResult& r = results[m];
      const uint64_t c = perf(r.counters, csr::kPerfCycles);
      fmt::print(
          "cycle model ({} mode): {} cycles predicted, {:+.1f} % from the RTL "
          "(docs/planner.md)\n",
          r.fine ? "fine" : "completion", predicted[m],
          100.0 * (double(predicted[m]) - double(c)) / double(c));
    }
    if (results.size() == 2) {
      fmt::print(
          "fine-grained early start: {:.3f}x the speed of completion-granular "
          "scheduling\n",
          j["fine_speedup"].get<double>());
    }
    fmt::print(
        "{} skipped: {} of {} PE-array beats ({:.1f} %), {} cycles at one beat "
        "per cycle\n",
        target.sparse ? "padded taps and packed-away weight rows" : "padded taps", dense - beats,
        dense, dense == 0 ? 0.0 : 100.0 * double(dense - beats) / double(dense), dense - beats);
    if (twin) print_sparse_table(shape, main, *twin, target);
    for (const RtlResult& r : results) {
      const uint64_t c = perf(r.counters, csr::kPerfCycles);
      fmt::print(
          "simulation ({} mode): {} model, {} cycles in {:.2f} s of wall time, {:.0f} "
          "cycles per second\n",
          r.fine ? "fine" : "completion", r.model, c, r.seconds,
          r.seconds > 0.0 ? double(c) / r.seconds : 0.0);
    }
    print_trace_note(a.rtl.trace);
  }
  if (a.json && !a.json_path.empty()) {
    write_file(a.json_path, j.dump(2) + "\n");
    fmt::print("wrote {}\n", a.json_path);
  }
  for (const RtlResult& r : results) {
    if (r.mismatches > 0) {
      throw MismatchError(
          fmt::format("RTL output differs from the golden model in {} element{} "
                      "({} mode); first: {}",
                      r.mismatches, r.mismatches == 1 ? "" : "s", r.fine ? "fine" : "completion",
                      r.first_mismatch));
    }
  }
  if (twin && twin->run && twin->run->mismatches > 0) {
    throw MismatchError(fmt::format(
        "the dense build's output differs from the golden model in "
        "{} element{}; first: {}",
        twin->run->mismatches, twin->run->mismatches == 1 ? "" : "s", twin->run->first_mismatch));
  }
  return 0;
#endif
}

// ---- run -------------------------------------------------------------------

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

// `run --instances K`: the images through a chain, one after another (isa:
// stage after stage on the ISA simulator; rtl: streamed through
// strata_cascade_top). Outputs in image order.
std::vector<Tensor<int8_t>> run_chain_backend(const Network& net, const HwTarget& target,
                                              const std::vector<Tensor<int8_t>>& images,
                                              const RunArgs& a) {
  const ChainProgram chain = compile_chain(net, target, a.instances);
  print_chain(chain, net);
  std::vector<Tensor<int8_t>> outputs;
  if (a.backend == "isa") {
    for (size_t i = 0; i < images.size(); ++i) {
      ChainSimResult r = simulate_chain(chain, images[i]);
      if (!r.ok()) {
        const SimResult& f = r.stages.back();
        throw Error(fmt::format("image {}: stage {} stopped with {} at instruction {}: {}", i,
                                r.failed_stage, sim_error_name(f.error), f.error_index, f.message));
      }
      outputs.push_back(std::move(r.output));
    }
    fmt::print("ISA simulator, {} stage{}, {} image{}: every stage's dependencies checked\n",
               chain.stages.size(), chain.stages.size() == 1 ? "" : "s", images.size(),
               images.size() == 1 ? "" : "s");
    return outputs;
  }
#ifndef STRATA_HAVE_RTL
  throw Error("RTL backend not built: this strata was built without Verilator");
#else
  tbr::ChainRunnerOptions o =
      chain_options(a.rtl, chain, target, images.size(), a.rtl.mode != "completion");
  if (!a.rtl.trace.empty()) {
    create_parent(a.rtl.trace);
    o.run.trace_path = a.rtl.trace;
  }
  tbr::ChainRunner runner(o, target);
  const tbr::ChainReport r = runner.run_stream(chain, images, outputs);
  if (!r.bench_errors.empty())
    throw Error(fmt::format("bench check failed: {}", r.bench_errors.front()));
  if (r.failed_stage >= 0) {
    throw Error(fmt::format("stage {} stopped with error {} at instruction {}", r.failed_stage,
                            csr::to_string(r.error), r.error_index));
  }
  if (!r.finished)
    throw Error(fmt::format("the chain did not finish within {} cycles", o.run.timeout));
  fmt::print("RTL cascade (strata_cascade_top), {} stage{}, {} image{}: {} cycles\n",
             chain.stages.size(), chain.stages.size() == 1 ? "" : "s", images.size(),
             images.size() == 1 ? "" : "s", r.cycles);
  return outputs;
#endif
}

// The RTL backend of `run`: the outputs, and how they compare with the golden model.
struct RtlRunOutcome {
  std::vector<Tensor<int8_t>> outputs;
  int64_t mismatches = 0;
  std::string first_mismatch;
};

RtlRunOutcome run_rtl_backend(const Network& net, const HwTarget& target,
                              const Tensor<int8_t>& input, bool batch, const RunArgs& a) {
#ifndef STRATA_HAVE_RTL
  (void)net;
  (void)target;
  (void)input;
  (void)batch;
  (void)a;
  throw Error(
      "RTL backend not built: this strata was built without Verilator "
      "(STRATA_BUILD_RTL=OFF); use --backend golden or isa");
#else
  const std::vector<Tensor<int8_t>> images = split_images(input, net.input_shape);
  const bool fine = a.rtl.mode != "completion";
  RtlResult res = run_rtl(net, target, images, a.rtl, fine, !a.rtl.trace.empty());
  const auto n = static_cast<int64_t>(images.size());
  const uint64_t cycles = perf(res.counters, csr::kPerfCycles);
  fmt::print(
      "RTL accelerator, target '{}' (P {}, N {}), {} scheduling, {}-cycle memory "
      "latency, stall {}: {} run{}, {} cycles ({:.0f} per image), MAC utilisation "
      "{:.1f} %, {:.2f} s ({} model, {:.0f} cycles/s)\n",
      target.name, target.pes, target.lanes, fine ? "fine-grained" : "completion", a.rtl.latency,
      a.rtl.stall, res.runs, res.runs == 1 ? "" : "s", cycles, double(cycles) / double(n),
      100.0 * utilisation(net.macs() * n, target, cycles), res.seconds, res.model,
      res.seconds > 0.0 ? double(cycles) / res.seconds : 0.0);
  if (a.check) {
    const std::vector<Tensor<int8_t>> golden = golden_outputs(net, images);
    check_against_golden(res, golden);
    int64_t elements = 0;
    for (const Tensor<int8_t>& g : golden) elements += g.size();
    fmt::print("check   {} output elements compared with the golden model: {} mismatches\n",
               elements, res.mismatches);
  }
  print_trace_note(a.rtl.trace);
  return {join_per_output(res.outputs, net.output_count(), batch), res.mismatches,
          res.first_mismatch};
#endif
}

// The option combinations of `run` that depend on --backend (usage errors).
void check_run_usage(const RunArgs& a) {
  usage_check(a.backend == "golden" || a.dump_dir.empty(),
              fmt::format("--dump-dir needs --backend golden (the {} backend gives the final "
                          "output only)",
                          a.backend));
  usage_check(a.backend != "golden" || a.target.empty(),
              "--target applies to --backend isa and rtl only");
  usage_check(a.backend != "golden" || a.instances == 0,
              "--instances needs --backend isa or rtl (the golden model runs the whole network)");
  usage_check(a.backend == "rtl" || (!a.check && a.rtl.trace.empty()) || a.instances > 0,
              "--check and --trace apply to --backend rtl only");
}

int cmd_run(const RunArgs& a) {
  const HwTarget target = a.backend != "golden" ? load_target(a.target) : HwTarget{};
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  std::error_code ec;
  if (!fs::is_regular_file(a.input, ec)) {
    throw Error(fs::exists(a.input, ec) ? "input is not a regular file" : "input file not found",
                ErrorContext{a.input, 0, ""});
  }
  // One --output per network output, in the network's order.
  if (a.outputs.size() != net.output_count()) {
    std::vector<std::string> names;
    for (size_t j = 0; j < net.output_count(); ++j) names.push_back(net.output_name(j));
    throw Error(
        fmt::format("network '{}' has {} output{} ({}): give --output {}, in that "
                    "order",
                    net.name, net.output_count(), net.output_count() == 1 ? "" : "s",
                    fmt::join(names, ", "), net.output_count() == 1 ? "once" : "once per output"));
  }
  for (const std::string& o : a.outputs) {
    if (fs::is_directory(o, ec)) {
      throw Error("output is a directory, not a file name", ErrorContext{o, 0, ""});
    }
    if (std::count(a.outputs.begin(), a.outputs.end(), o) > 1) {
      throw Error(fmt::format("--output '{}' is given twice", o));
    }
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
  OutputFiles files;  // --output and the --dump-dir files: all or none

  fmt::print("network {} ({}), backend {}, input {} {}\n\n", net.name, net.source_file, a.backend,
             a.input, shape_str(input.shape()));
  std::vector<Tensor<int8_t>> outputs;  // one per network output
  RtlRunOutcome rtl;
  if (a.instances > 0) {
    const std::vector<Tensor<int8_t>> images = split_images(input, net.input_shape);
    const std::vector<Tensor<int8_t>> outs = run_chain_backend(net, target, images, a);
#ifdef STRATA_HAVE_RTL
    if (a.check) {
      RtlResult check;
      check.outputs = outs;
      check_against_golden(check, golden_outputs(net, images));
      fmt::print("check   every output element compared with the golden model: {} mismatches\n",
                 check.mismatches);
      rtl.mismatches = check.mismatches;
      rtl.first_mismatch = check.first_mismatch;
    }
#endif
    outputs = {join_outputs(outs, batch)};
  } else if (a.backend == "rtl") {
    rtl = run_rtl_backend(net, target, input, batch, a);
    outputs = rtl.outputs;
  } else if (a.backend == "isa") {
    IsaRunSummary s;
    outputs = run_isa_backend(net, target, input, &s);
    fmt::print(
        "ISA simulator, target '{}' (P {}, N {}): {} run{} of {} program{}, {} "
        "instructions, {} PE-array beats; dependencies checked in both modes\n",
        target.name, target.pes, target.lanes, s.runs, s.runs == 1 ? "" : "s", s.programs,
        s.programs == 1 ? "" : "s", s.instructions, s.beats);
  } else {
    fmt::print("{:>3}  {:<12} {:<14} {:<16} {:>12} {:>10}\n", "#", "name", "type", "out", "MACs",
               "fnv1a32");
    const auto observer = [&](size_t i, const Layer& l, const Tensor<int8_t>& out) {
      fmt::print("{:>3}  {:<12} {:<14} {:<16} {:>12} {:>10}\n", i, l.name, type_label(l),
                 shape_str(l.out_shape), l.macs() * n,
                 fmt::format("{:#010x}", fnv1a32(out.values())));
      if (!a.dump_dir.empty()) {
        files.add((fs::path(a.dump_dir) / fmt::format("{:02}_{}.npy", i, l.name)).string(),
                  npy_file(out));
      }
    };
    outputs = run_network_outputs(net, input, observer);
  }
  for (size_t j = 0; j < outputs.size(); ++j) files.add(a.outputs[j], npy_file(outputs[j]));
  files.commit();
  fmt::print("\ntotal MACs {} ({} image{})\n", net.macs() * n, n, n == 1 ? "" : "s");
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor<int8_t>& output = outputs[j];
    const std::string which =
        outputs.size() == 1 ? std::string() : fmt::format(" {} '{}'", j, net.output_name(j));
    fmt::print("output{} {} {}\n", which, a.outputs[j], shape_str(output.shape()));
    fmt::print("checksum fnv1a32 {:#010x}, sum {}\n", fnv1a32(output.values()),
               element_sum(output.values()));

    // Top-1 when each image's output is a vector [K][1][1] (first maximum wins).
    const Shape& out = net.output_shape(j);
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
  }
  if (rtl.mismatches > 0) {
    throw MismatchError(
        fmt::format("RTL output differs from the golden model in {} element{}; "
                    "first: {}",
                    rtl.mismatches, rtl.mismatches == 1 ? "" : "s", rtl.first_mismatch));
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
  std::string bundle;  // --bundle: the self-describing file the driver library loads
  CompileOptions options;
  int instances = 0;  // --instances K: one program per stage of a chain
};

int cmd_compile(const CompileArgs& a) {
  const Network net = load_network(a.network, LoadOptions{a.weights, true});
  const HwTarget target = load_target(a.target);
  if (a.instances > 0) {
    const ChainProgram chain = compile_chain(net, target, a.instances);
    print_chain(chain, net);
    OutputFiles files;  // every stage's files or none
    for (size_t k = 0; k < chain.stages.size(); ++k) {
      add_program(files, chain.stages[k].program, stage_path(a.out, k),
                  a.listing.empty() ? "" : stage_path(a.listing, k));
    }
    files.commit();
    for (size_t k = 0; k < chain.stages.size(); ++k) {
      const std::string lst = a.listing.empty() ? "" : stage_path(a.listing, k);
      fmt::print("wrote {} ({} bytes){}\n", stage_path(a.out, k),
                 chain.stages[k].program.image.size(),
                 lst.empty() ? "" : fmt::format(" and {}", lst));
    }
    return 0;
  }
  const Program prog = compile(net, target, a.options);
  OutputFiles files;  // the image, the listing and the bundle: all or none
  if (!a.out.empty()) add_program(files, prog, a.out, a.listing);
  if (!a.bundle.empty()) {
    BundleScales scales{static_cast<float>(net.input_scale), {}};
    for (size_t j = 0; j < prog.outputs.size(); ++j) {
      scales.outputs.push_back(static_cast<float>(net.output_scale(j)));
    }
    files.add(a.bundle, make_bundle(prog, scales));
  }
  files.commit();
  fmt::print("network {} -> {} instructions for target '{}' (P {}, N {}), batch {}\n", net.name,
             prog.instructions.size(), target.name, target.pes, target.lanes, prog.batch);
  for (const MemRegion& r : prog.regions) {
    fmt::print("  {:<14} 0x{:08x}  {:>9} bytes\n", r.name, r.offset, r.size);
  }
  if (!a.out.empty()) {
    fmt::print("wrote {} ({} bytes){}\n", a.out, prog.image.size(),
               a.listing.empty() ? "" : fmt::format(" and {}", a.listing));
  }
  if (!a.bundle.empty()) fmt::print("wrote bundle {}\n", a.bundle);
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

// ---- import ------------------------------------------------------------------

struct ImportArgs {
  std::string model, calibration, out, name;
  bool no_check = false;
  bool shuffle_conv = false;
  int max_kernel = 0;  // 0: the script's default
};

// Post-training import of a float ONNX model: scripts/strata_import.py, run by
// the project venv's python (onnx and onnxruntime are PyPI packages, installed
// into .venv/ by `make setup`; docs/dependencies.md). The script's exit status
// and its one-line errors are the command's.
int cmd_import(const ImportArgs& a) {
  const fs::path source = STRATA_SOURCE_DIR;
  const fs::path python = source / ".venv" / "bin" / "python";
  const fs::path script = source / "scripts" / "strata_import.py";
  std::error_code ec;
  if (!fs::exists(python, ec)) {
    throw Error(
        fmt::format("strata import needs the project venv {} with numpy, onnx and "
                    "onnxruntime: run make setup",
                    python.string()));
  }
  if (!fs::exists(script, ec)) throw Error(fmt::format("{} is missing", script.string()));
  // The agreement check runs this very binary's golden model.
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> args = {python.string(), script.string(), a.model, "--calibration",
                                   a.calibration,   "--out",         a.out};
  if (!a.name.empty()) args.insert(args.end(), {"--name", a.name});
  if (a.no_check) args.emplace_back("--no-check");
  if (a.shuffle_conv) args.emplace_back("--shuffle-conv");
  if (a.max_kernel != 0) args.insert(args.end(), {"--max-kernel", std::to_string(a.max_kernel)});
  if (!ec) args.insert(args.end(), {"--strata", self.string()});
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(argv[0], argv.data());
  throw Error(
      fmt::format("cannot run {}: {}: run make setup", python.string(), std::strerror(errno)));
}

// ---- rules -----------------------------------------------------------------

struct RulesArgs {
  std::string update, check;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read {}", path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The table of strata/target_rules.hpp; --update rewrites its section of a
// document, --check fails (exit 1) when that section differs.
int cmd_rules(const RulesArgs& a) {
  if (a.update.empty() && a.check.empty()) {
    fmt::print("{}", rules_markdown());
    return 0;
  }
  const std::string& path = a.update.empty() ? a.check : a.update;
  const std::string doc = read_text(path);
  const std::string want = with_rules_section(doc);
  if (!a.update.empty()) {
    if (want != doc) write_file(path, std::string_view(want));
    fmt::print("{}: {} target rules\n", path, target_rules().size());
    return 0;
  }
  if (want != doc) {
    throw Error(
        fmt::format("{}: the target rules section differs from the table "
                    "(sw/src/target_rules.cpp); run strata rules --update {}",
                    path, path));
  }
  fmt::print("{}: target rules in sync ({} rules)\n", path, target_rules().size());
  return 0;
}

// ---- plan ----------------------------------------------------------------------

struct PlanArgs {
  std::vector<std::string> networks;
  std::string weights;  // one directory for every network (default: each YAML's weights:)
  std::string device;   // a name under config/devices/, or a file
  std::string objective = "latency";
  std::string out;      // the winner's configuration file
  bool all = false;     // print every candidate, not the twelve fastest
  double sparsity = 0;  // zero weights of generated parameters (networks without .npy files)
};

// The planner (docs/planner.md): candidates, their predicted resources and
// cycles, the winner written with --out.
int cmd_plan(const PlanArgs& a) {
  const Device device = Device::find(a.device, std::string(STRATA_SOURCE_DIR) + "/config/devices");
  std::vector<Network> nets;
  for (const std::string& path : a.networks) {
    Network net = load_network(path, LoadOptions{a.weights, false});
    if (missing_files(net).empty()) {
      net = load_network(path, LoadOptions{a.weights, true});
    } else {  // cycles depend on the shapes and, on a sparse build, on the zero weights
      GenOptions g;
      g.sparsity = a.sparsity;
      generate_parameters(net, g, random_images(net.input_shape, g.images, g.seed));
    }
    nets.push_back(std::move(net));
  }
  PlanOptions o;
  o.objective = a.objective == "throughput" ? PlanObjective::kThroughput : PlanObjective::kLatency;
  const PlanResult r = plan(nets, device, o);

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
  const size_t shown = a.all ? order.size() : std::min<size_t>(order.size(), 12);
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
  if (r.winner < 0) {
    throw Error(fmt::format("no configuration fits {} ({} candidates weighed)", device.name,
                            r.candidates.size()));
  }
  const PlanCandidate& w = r.candidates[static_cast<size_t>(r.winner)];
  fmt::print("winner: #1, {}P = N = {}{}, {:.1f} images/s predicted\n",
             w.instances > 1 ? fmt::format("a chain of K = {} accelerators of ", w.instances) : "",
             w.target.pes, w.target.sparse ? ", sparse" : "", 1.0 / w.seconds_per_image);
  if (!a.out.empty()) {
    HwTarget t = w.target;
    t.name = fs::path(a.out).stem().string();
    std::string nets_list;
    for (const Network& n : nets) nets_list += (nets_list.empty() ? "" : ", ") + n.name;
    write_file(a.out, std::string_view(config_yaml(
                          t, fmt::format("Strata hardware configuration planned by `strata plan` "
                                         "for {} on {}\n(objective: {}; docs/planner.md).{}",
                                         nets_list, device.name, a.objective,
                                         w.instances == 1
                                             ? ""
                                             : fmt::format("\nEach of the K = {} accelerators of "
                                                           "a strata_cascade_top chain "
                                                           "(docs/cascade.md).",
                                                           w.instances)))));
    fmt::print("wrote {}\n", a.out);
  }
  return 0;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Strata: CNN inference accelerator tool flow (network info, runs on the golden model, "
      "the ISA simulator and the RTL, benchmarks, parameter generation, compilation)",
      "strata"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0");

  InfoArgs info;
  CLI::App* info_cmd = app.add_subcommand("info", "Print the per-layer table of a network");
  info_cmd->add_option("network", info.network, "Network description (YAML)")->required();
  CLI::Option* info_target =
      add_target_option(info_cmd, info.target,
                        "Hardware configuration YAML: also print where each op's maps live, "
                        "its tiling and its external bytes on it");
  info_cmd
      ->add_option("--device", info.device,
                   "With --target: the configuration's predicted resources on this device "
                   "(config/devices/ name or YAML)")
      ->needs(info_target);
  info_cmd->add_option("--weights", info.weights,
                       "Directory of the .npy parameter files (overrides the YAML's weights:)");

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "Run a network on an int8 input");
  run_cmd->add_option("network", run.network, "Network description (YAML)")->required();
  run_cmd->add_option("--input", run.input, "int8 .npy input, [C][H][W] or [N][C][H][W]")
      ->required();
  run_cmd
      ->add_option("--output", run.outputs,
                   "Output .npy file to write; a network of several outputs: once per output, "
                   "in the order of its 'outputs:'")
      ->required()
      ->allow_extra_args(false);
  run_cmd->add_option("--weights", run.weights, "Directory of the .npy parameter files");
  run_cmd
      ->add_option("--backend", run.backend,
                   "golden (C++ model), isa (compiled, run on the ISA simulator) or rtl")
      ->check(CLI::IsMember({"golden", "isa", "rtl"}))
      ->capture_default_str();
  add_target_option(run_cmd, run.target,
                    "Hardware configuration YAML for --backend isa or rtl (default: "
                    "config/default.yaml as built)");
  run_cmd->add_option("--dump-dir", run.dump_dir,
                      "Write every layer's output as <NN>_<layer>.npy into this directory");
  run_cmd
      ->add_option("--instances", run.instances,
                   "Run on a chain of K accelerators (docs/cascade.md): --backend isa runs the "
                   "stages one after another, rtl streams the images through strata_cascade_top")
      ->check(CLI::Range(1, 4));
  run_cmd->add_flag("--check", run.check,
                    "--backend rtl: compare every output element with the golden model (exit "
                    "status 3 when any differs)");
  add_rtl_options(run_cmd, run.rtl, false);
  run_cmd->parse_complete_callback([&run] { check_run_usage(run); });

  BenchArgs bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench",
      "Run a network on the RTL accelerator and report cycles, MACs, utilisation, "
      "stalls and bytes per layer (every run checked against the golden model)");
  bench_cmd->add_option("network", bench.network, "Network description (YAML)")->required();
  CLI::Option* bench_weights =
      bench_cmd->add_option("--weights", bench.weights,
                            "Directory of the .npy parameter files (default: the parameters "
                            "`strata gen --seed 1` makes)");
  bench_cmd
      ->add_option("--sparsity", bench.sparsity,
                   "Without --weights: fraction of each layer's generated weights set to zero "
                   "(as strata gen --sparsity; with --weights, prune the weights themselves)")
      ->check(kFraction)
      ->capture_default_str()
      ->excludes(bench_weights);
  CLI::Option* bench_input =
      bench_cmd->add_option("--input", bench.input,
                            "int8 .npy input, [C][H][W] or [N][C][H][W] (default: --batch random "
                            "images drawn with --seed)");
  bench_cmd
      ->add_option("--batch", bench.batch,
                   "Random images to run (P per run at most; an --input file sets the batch "
                   "itself)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str()
      ->excludes(bench_input);
  add_target_option(bench_cmd, bench.target,
                    "Hardware configuration YAML (default: config/default.yaml as built)");
  bench_cmd
      ->add_option("--instances", bench.instances,
                   "Stream the images through a chain of K accelerators (strata_cascade_top, "
                   "docs/cascade.md) and through one, and report throughput, latency and the "
                   "speed-up (default 16 images)")
      ->check(CLI::Range(1, 4));
  bench_cmd
      ->add_option("--json", bench.json_path,
                   "Write the report as JSON: to FILE, or alone on stdout without FILE")
      ->expected(0, 1);
  add_rtl_options(bench_cmd, bench.rtl, true);

  GenArgs gen;
  CLI::App* gen_cmd =
      app.add_subcommand("gen", "Generate seeded random parameters with calibrated requantisation");
  gen_cmd->add_option("network", gen.network, "Network description (YAML)")->required();
  gen_cmd->add_option("--seed", gen.options.seed, "Random seed")->required()->check(kSeedCheck);
  gen_cmd->add_option("--out", gen.out, "Directory to write the .npy files into")->required();
  gen_cmd
      ->add_option("--sparsity", gen.options.sparsity,
                   "Fraction of each layer's weights set to zero (exact count)")
      ->check(kFraction)
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
  gen_cmd->parse_complete_callback([&gen] {
    const GenOptions& o = gen.options;
    usage_check(
        o.weight_min <= o.weight_max,
        fmt::format("--weight-min {} is larger than --weight-max {}", o.weight_min, o.weight_max));
    usage_check(o.weight_min != 0 || o.weight_max != 0 || o.sparsity >= 1.0,
                "--weight-min 0 --weight-max 0 holds no non-zero weight (use --sparsity 1 for "
                "all zeros)");
  });

  CompileArgs comp;
  CLI::App* compile_cmd = app.add_subcommand(
      "compile", "Compile a network into an accelerator program (external memory image)");
  compile_cmd->add_option("network", comp.network, "Network description (YAML)")->required();
  compile_cmd->add_option("--weights", comp.weights, "Directory of the .npy parameter files");
  add_target_option(compile_cmd, comp.target,
                    "Hardware configuration YAML (default: config/default.yaml as built)");
  CLI::Option* compile_batch =
      compile_cmd->add_option("--batch", comp.options.batch, "Images per run (1..P)")
          ->check(CLI::Range(1, 64))
          ->capture_default_str();
  CLI::Option* compile_out =
      compile_cmd->add_option("--out", comp.out, "Memory image to write (instructions at byte 0)");
  CLI::Option* compile_bundle = compile_cmd->add_option(
      "--bundle", comp.bundle,
      "Bundle to write: the program, its parameters and the description the driver library "
      "strata_rt loads on any backend (docs/bundle.md)");
  compile_cmd
      ->add_option("--instances", comp.instances,
                   "Split the network into K stages of a cascade chain (docs/cascade.md) and "
                   "write one program per stage (OUT and LISTING get .stage<k> before their "
                   "extension); a chain streams images one at a time, without --batch")
      ->check(CLI::Range(1, 4))
      ->excludes(compile_batch)
      ->excludes(compile_bundle);
  compile_cmd
      ->add_option("--listing", comp.listing,
                   "Disassembly listing with the memory map and I/O placement")
      ->needs(compile_out);
  compile_cmd->parse_complete_callback([&comp] {
    usage_check(!comp.out.empty() || !comp.bundle.empty(), "compile needs --out or --bundle");
  });

  RulesArgs rules;
  CLI::App* rules_cmd = app.add_subcommand(
      "rules", "Print the target rules (docs/isa.md, Target rules) as a Markdown table");
  CLI::Option* rules_update = rules_cmd->add_option(
      "--update", rules.update, "Rewrite the generated target-rules section of this document");
  rules_cmd
      ->add_option("--check", rules.check,
                   "Fail when the target-rules section of this document differs")
      ->excludes(rules_update);

  PlanArgs plan_args;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "Choose a hardware configuration for networks on an FPGA (docs/planner.md)");
  plan_cmd->add_option("networks", plan_args.networks, "Network descriptions (YAML)")->required();
  plan_cmd->add_option("--weights", plan_args.weights,
                       "Directory of the .npy parameter files (default: generated)");
  plan_cmd
      ->add_option("--device", plan_args.device,
                   "A device of config/devices/ (ecp5-45f, xc7z020, ...) or a device YAML")
      ->required();
  plan_cmd->add_option("--objective", plan_args.objective, "What to maximise")
      ->check(CLI::IsMember({"latency", "throughput"}))
      ->capture_default_str();
  plan_cmd->add_option("--out", plan_args.out, "Write the winner as a configuration file");
  plan_cmd->add_flag("--all", plan_args.all, "List every candidate that fits");
  plan_cmd
      ->add_option("--sparsity", plan_args.sparsity,
                   "Fraction of zero weights in generated parameters (networks without .npy "
                   "files), which the sparse build's candidates run on")
      ->check(kFraction);

  ImportArgs imp;
  CLI::App* import_cmd = app.add_subcommand(
      "import",
      "Import a float ONNX model: network YAML + int8 parameters, quantised post-training "
      "on calibration images (scripts/strata_import.py, needs make setup)");
  import_cmd->add_option("model", imp.model, "Float ONNX model (.onnx)")->required();
  import_cmd
      ->add_option("--calibration", imp.calibration,
                   "float .npy calibration images, [N][C][H][W] (or one [C][H][W])")
      ->required();
  import_cmd
      ->add_option("--out", imp.out,
                   "Directory for <name>.yaml, <name>/*.npy and calibration_input.npy")
      ->required();
  import_cmd->add_option("--name", imp.name, "Network name (default: the model file's stem)");
  import_cmd->add_flag("--no-check", imp.no_check,
                       "Skip the float vs int8 agreement run on the calibration images");
  import_cmd->add_flag("--shuffle-conv", imp.shuffle_conv,
                       "Make each channel shuffle a 1x1 permutation convolution where it is, "
                       "instead of folding it into the layers that read it");
  import_cmd
      ->add_option("--max-kernel", imp.max_kernel,
                   "Largest convolution kernel to keep: a larger one at stride >= 2 becomes "
                   "a space-to-depth layer and a smaller kernel (default 7)")
      ->check(CLI::Range(1, 11));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    fmt::print(stderr, "strata: error: {}\nRun 'strata --help' for usage.\n", e.what());
    return 2;
  }

  if (info_cmd->parsed()) return cmd_info(info);
  if (run_cmd->parsed()) return cmd_run(run);
  if (bench_cmd->parsed()) {
    bench.json = bench_cmd->count("--json") > 0;
    bench.batch_given = bench_cmd->count("--batch") > 0;
    return cmd_bench(bench);
  }
  if (compile_cmd->parsed()) return cmd_compile(comp);
  if (rules_cmd->parsed()) return cmd_rules(rules);
  if (plan_cmd->parsed()) return cmd_plan(plan_args);
  if (import_cmd->parsed()) return cmd_import(imp);
  return cmd_gen(gen);
}

}  // namespace
}  // namespace strata

namespace {

// What could not be written to standard output (a full disk, an I/O error) is
// an error like any other: exit 1 unless the command already failed.
int finish_stdout(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  fmt::print(stderr, "strata: error: cannot write standard output{}\n",
             errno != 0 ? fmt::format(": {}", std::strerror(errno)) : "");
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 1;
  try {
    code = strata::run_main(argc, argv);
  } catch (const strata::MismatchError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "strata: error: {}\n", e.what());
    code = 3;
  } catch (const strata::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "strata: error: {}\n", e.what());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "strata: error: {}\n", e.what());
  }
  return finish_stdout(code);
}
