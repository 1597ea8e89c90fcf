// SPDX-License-Identifier: Apache-2.0
// `strata info NET.yaml [--weights DIR] [--target CFG [--device D]]`: the
// per-layer table and totals; with a configuration, where each op's maps live
// and its predicted cycles; with a device, the predicted resources on it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "strata/compiler.hpp"
#include "strata/cycle_model.hpp"
#include "strata/device.hpp"
#include "strata/planner.hpp"
#include "strata/resource_model.hpp"

namespace strata::cli {
namespace {

struct InfoArgs {
  std::string network;
  std::string weights;
  std::string target;  // with --target: the placement the compiler chooses for it
  std::string device;  // with --target: the configuration's predicted resources on it
};

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

void print_layers(const Network& net) {
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
}

void print_placement(const Program& prog, const HwTarget& target, const std::string& file) {
  const std::vector<OpWork> work = op_work(prog);
  const CyclePrediction cycles = predict_cycles(prog);
  fmt::print("\non target '{}' ({}): {} instructions\n", target.name, file,
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
}

void print_device(const Program& prog, const HwTarget& target, const std::string& device) {
  const Device d = Device::find(device, std::string(STRATA_SOURCE_DIR) + "/config/devices");
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
    fmt::print(
        "  {:<20} {:>3} x {:>6} words x {:>3} bits: {}\n", m.name, m.copies, m.depth, m.width,
        m.lut_ram ? std::string("LUT RAM") : fmt::format("{} {} each", m.blocks_each, d.bram_kind));
  }
}

void run_info(const InfoArgs& a) {
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
  print_layers(net);
  if (a.target.empty()) return;
  // The placement depends on the shapes only: without the parameter files,
  // those `strata gen --seed 1` makes stand in.
  const HwTarget target = HwTarget::from_yaml(a.target);
  if (!missing.empty()) generate_seed_one(net, 0.0);
  const Program prog = compile(net, target, {});
  print_placement(prog, target, a.target);
  if (!a.device.empty()) print_device(prog, target, a.device);
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Print the per-layer table of a network");
  add_network_argument(cmd, a->network);
  CLI::Option* target =
      add_target_option(cmd, a->target,
                        "Hardware configuration YAML: also print where each op's maps live, "
                        "its tiling and its external bytes on it");
  cmd->add_option("--device", a->device,
                  "With --target: the configuration's predicted resources on this device "
                  "(config/devices/ name or YAML)")
      ->needs(target);
  cmd->add_option("--weights", a->weights,
                  "Directory of the .npy parameter files (overrides the YAML's weights:)");
  cmd->callback([a] { run_info(*a); });
}

}  // namespace strata::cli
