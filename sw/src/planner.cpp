// SPDX-License-Identifier: Apache-2.0
// The design planner (strata/planner.hpp).
#include "strata/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "strata/cascade.hpp"
#include "strata/compiler.hpp"
#include "strata/cycle_model.hpp"
#include "strata/error.hpp"
#include "strata/hw_config.hpp"

namespace strata {
namespace {

// The candidate configurations before the budget: the default configuration
// with P = N, the memories, the sparse build and the fabric lanes varied,
// each as one accelerator and, for the throughput objective, as chains.
struct Candidate {
  HwTarget target;
  int instances = 1;
};

std::vector<Candidate> candidate_shapes(const Device& d, PlanObjective objective) {
  std::vector<Candidate> out;
  const HwTarget base = HwTarget::defaults();
  const std::vector<int> chains =
      objective == PlanObjective::kThroughput ? std::vector<int>{1, 2, 4} : std::vector<int>{1};
  for (int k : chains) {
    for (int pn : {8, 16, 32}) {
      for (bool sparse : {false, true}) {
        for (int banks : {4, 8}) {
          for (int bank_depth : {512, 1024, 2048, 4096, 8192}) {
            for (int cache_depth : {512, 1024, 2048}) {
              for (int image_width : {32, 64, 128}) {
                HwTarget t = base;
                t.pes = t.lanes = pn;
                t.sparse = sparse;
                t.banks = banks;
                t.bank_depth = bank_depth;
                t.pe_cache_depth = cache_depth;
                t.max_image_width = image_width;
                // The fewest fabric lanes that fit the DSP blocks, at most N / 2
                // (with N / 2 still over the budget, the candidate is rejected).
                for (int f = 0; f <= pn / 2; ++f) {
                  t.pe_fabric_lanes = f;
                  if (k * predict_resources(t, d).dsp <= d.dsps) break;
                }
                t.name = fmt::format("p{}n{}", pn, pn);
                out.push_back({t, k});
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// The resources of K accelerators (strata_cascade_top: K strata_tops and
// their links, which are registers and wires).
ResourceEstimate times(ResourceEstimate r, int k) {
  r.dsp *= k;
  r.dsp_pe *= k;
  r.bram *= k;
  r.lut *= k;
  r.ff *= k;
  return r;
}

std::string budget_problem(const ResourceEstimate& r, const Device& d, double max_fill) {
  if (r.dsp > d.dsps) return fmt::format("DSP {} > {}", r.dsp, d.dsps);
  if (r.bram > d.brams) return fmt::format("BRAM {} > {}", r.bram, d.brams);
  if (r.lut > max_fill * d.luts) {
    return fmt::format("LUT {} > {:.0f} % of {}", r.lut, 100 * max_fill, d.luts);
  }
  if (r.ff > max_fill * d.ffs)
    return fmt::format("FF {} > {:.0f} % of {}", r.ff, 100 * max_fill, d.ffs);
  return "";
}

// Predicted cycles per image of `net` on `t` (PlanCandidate::cycles).
int64_t cycles_per_image(const Network& net, const HwTarget& t, int instances, const PlanOptions& o,
                         double beats_per_cycle) {
  CycleModelOptions cm;
  cm.mem_latency = o.mem_latency;
  cm.beats_per_cycle = beats_per_cycle;
  if (instances > 1) {  // a chain streams images one at a time: its largest stage
    int64_t largest = 0;
    for (const ChainStage& st : compile_chain(net, t, instances, cm).stages) {
      largest = std::max(largest, st.predicted_cycles);
    }
    return largest;
  }
  CompileOptions co;
  co.batch = o.objective == PlanObjective::kThroughput ? t.pes : 1;
  return (predict_cycles(compile(net, t, co), cm).cycles + co.batch - 1) / co.batch;
}

}  // namespace

bool faster(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.seconds_per_image != b.seconds_per_image) return a.seconds_per_image < b.seconds_per_image;
  // A tie: the smaller build (fewer accelerators, block RAMs, then LUTs).
  if (a.instances != b.instances) return a.instances < b.instances;
  if (a.resources.bram != b.resources.bram) return a.resources.bram < b.resources.bram;
  return a.resources.lut < b.resources.lut;
}

namespace {

// The board's memory in AXI beats of `target` per accelerator cycle, all ports together.
double board_beats(const Device& device, const HwTarget& target) {
  return device.ext_mbytes_s / (target.beat_bytes() * device.fmax_mhz);
}

}  // namespace

double board_beats_per_cycle(const Device& device, const HwTarget& target) {
  return std::min(1.0, board_beats(device, target));
}

PlanResult plan(const std::vector<Network>& networks, const Device& device,
                const PlanOptions& options) {
  PlanResult r;
  // The board's memory in AXI beats per accelerator cycle (at most one per
  // port); the K ports of a chain share it.
  const double all_ports = board_beats(device, HwTarget::defaults());
  r.beats_per_cycle = board_beats_per_cycle(device, HwTarget::defaults());
  for (const Candidate& shape : candidate_shapes(device, options.objective)) {
    const HwTarget& t = shape.target;
    PlanCandidate c;
    c.target = t;
    c.instances = shape.instances;
    c.resources = times(predict_resources(t, device), shape.instances);
    c.why_not = budget_problem(c.resources, device, options.max_fill);
    c.fits = c.why_not.empty();
    if (c.fits) {
      try {
        for (const Network& net : networks) {
          c.cycles.push_back(cycles_per_image(net, t, c.instances, options,
                                              std::min(1.0, all_ports / c.instances)));
          c.seconds_per_image += double(c.cycles.back()) / (device.fmax_mhz * 1e6);
        }
      } catch (const Error& e) {  // a network this candidate cannot run: not a plan
        c.fits = false;
        c.why_not = fmt::format("compile {}", e.what());
        c.cycles.clear();
        c.seconds_per_image = 0;
      }
    }
    if (c.fits) {
      if (r.winner < 0 || faster(c, r.candidates[static_cast<size_t>(r.winner)])) {
        r.winner = static_cast<int>(r.candidates.size());
      }
    }
    r.candidates.push_back(std::move(c));
  }
  return r;
}

std::string config_yaml(const HwTarget& t, const std::string& header) {
  std::ostringstream s;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) s << "# " << line << "\n";
  s << fmt::format("name: {}\n", t.name);
  s << fmt::format("version: {}                # configuration format / hardware version\n",
                   t.version);
  const auto line = [&](const char* key, int64_t v, const std::string& what) {
    s << fmt::format("{:<26}# {}\n", fmt::format("{}: {}", key, v), what);
  };
  // The number format is fixed (hw_target.cpp's kFixedKeys): the build's values.
  line("data_width", hw::kDataWidth, "activations and weights: signed int8");
  line("acc_width", hw::kAccWidth, "accumulators: int32");
  line("mult_width", hw::kMultWidth, "requantisation multiplier M: unsigned 16 bit");
  line("shift_width", hw::kShiftWidth, fmt::format("requantisation shift S: 0..{}", hw::kMaxShift));
  s << fmt::format("max_shift: {}\n", hw::kMaxShift);
  line("lanes", t.lanes, "N: dot-product width of each PE (MACs per PE per cycle)");
  line("pes", t.pes, "P: processing elements in the array");
  line("pe_fabric_lanes", t.pe_fabric_lanes, "lanes of each PE whose int8 product is in LUTs");
  line("pe_cache_depth", t.pe_cache_depth, "entries (each N x int8) in each PE's operand cache");
  line("max_pool_kernel", t.max_pool_kernel, "largest pooling window side");
  line("max_kernel", t.max_kernel, "largest conv / window-generator kernel side");
  line("max_image_width", t.max_image_width, "line-buffer row length (pixels)");
  line("banks", t.banks, "on-chip banks (one read + one write port each)");
  line("bank_depth", t.bank_depth, "words (each N x int8) per bank");
  line("param_depth", t.param_depth, "output channels held in the parameter RAM");
  line("act_tables", t.act_tables, "activation tables of 256 int8 entries (0: no table unit)");
  line("axi_data_width", t.axi_data_width, "AXI4 master data width (bits)");
  line("axi_addr_width", t.axi_addr_width, "AXI4 master address width (bits)");
  if (t.sparse) s << "sparse: true\n";
  return s.str();
}

}  // namespace strata
