// SPDX-License-Identifier: Apache-2.0
// strata/bench_report.hpp: the results of RTL runs against the golden model,
// and `strata bench`'s tables and JSON on one accelerator.
#include "strata/bench_report.hpp"

#include "bench_report_detail.hpp"
#include "strata/cycle_model.hpp"
#include "strata/golden.hpp"

namespace strata {
namespace {

using namespace bench_detail;
using Json = nlohmann::ordered_json;

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

template <size_t N>
Json counters_json(const PerfCounts& c, const Term (&terms)[N]) {
  Json j;
  for (const Term& t : terms) j[t.key] = perf(c, t.offset);
  return j;
}

// Whole-run figures of one mode.
Json mode_json(const RtlResult& r, int64_t macs, int64_t images, const HwTarget& t) {
  const uint64_t cycles = cycles_of(r.counters);
  Json j;
  j["mode"] = mode_name(r.fine);
  j["runs"] = r.runs;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(images);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, t, cycles);
  j["mismatches"] = r.mismatches;
  j["mac_active_cycles"] = perf(r.counters, csr::kPerfMacActive);
  j["rtl_macs"] = perf(r.counters, csr::kPerfMacs);
  j["stalls"] = counters_json(r.counters, kStalls);
  j["busy"] = counters_json(r.counters, kBusy);
  j["axi_bytes"] = {{"read", perf(r.counters, csr::kPerfReadBytes)},
                    {"write", perf(r.counters, csr::kPerfWriteBytes)}};
  j["instructions"] = perf(r.counters, csr::kPerfInstructions);
  j["host_seconds"] = r.seconds;
  j["model"] = r.model;
  j["sim_cycles_per_second"] = r.seconds > 0.0 ? double(cycles) / r.seconds : 0.0;
  return j;
}

Json layer_json(const CompiledOp& op, const PerfCounts& c, const OpWork& w, int64_t images,
                const HwTarget& t) {
  const uint64_t cycles = cycles_of(c);
  const int64_t macs = op.macs * images;
  Json j;
  j["name"] = op.name;
  j["kind"] = op.kind;
  j["tag"] = op.tag;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(images);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, t, cycles);
  j["mac_active_cycles"] = perf(c, csr::kPerfMacActive);
  j["rtl_macs"] = perf(c, csr::kPerfMacs);
  j["stalls"] = counters_json(c, kStalls);
  j["busy"] = counters_json(c, kBusy);
  j["bytes"] = {{"load", w.load_bytes}, {"store", w.store_bytes}};
  j["axi_bytes"] = {{"read", perf(c, csr::kPerfReadBytes)},
                    {"write", perf(c, csr::kPerfWriteBytes)}};
  j["beats"] = w.beats;
  j["memory_cycles"] = memory_cycles(w, t);
  j["bound_cycles"] = bound_cycles(w, t);
  j["dense_beats"] = w.dense_beats;
  j["skipped_beats"] = w.dense_beats - w.beats;
  j["computes"] = w.computes;
  return j;
}

Json sparse_json(const Program& shape, const RtlResult& main, const DenseTwin& t) {
  int packed = 0;
  for (const CompiledOp& op : shape.ops) packed += op.packed;
  const int64_t beats = total_beats(main.work), dense = total_beats(t.work);
  Json j;
  j["packed_ops"] = packed;
  j["beats"] = beats;
  j["dense_program_beats"] = dense;
  j["beat_speedup"] = ratio(double(dense), double(beats));
  if (t.run) {
    const uint64_t c = cycles_of(main.counters);
    const uint64_t dc = cycles_of(t.run->counters);
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

Json config_json(const BenchReport& r) {
  const HwTarget& t = r.target;
  return {{"name", t.name},
          {"pes", t.pes},
          {"lanes", t.lanes},
          {"sparse", t.sparse},
          {"macs_per_cycle", t.macs_per_beat()},
          {"memory",
           {{"model", "AXI4 memory model (sim/axi_mem_model.hpp)"},
            {"read_latency", r.setup.latency},
            {"beat_bits", t.axi_data_width},
            {"beats_per_cycle", 1},
            {"stall", r.setup.stall}}},
          {"mode", mode_name(r.results.front().fine)},
          {"modes", r.setup.modes},
          {"batch", r.images},
          {"images", r.setup.images},
          {"seed", r.setup.seed}};
}

Json layers_json(const BenchReport& r) {
  const RtlResult& main = r.results.front();
  const std::vector<OpPacking> packing = r.twin ? op_packing(r.shape) : std::vector<OpPacking>{};
  Json layers = Json::array();
  for (size_t k = 0; k < r.shape.ops.size(); ++k) {
    Json l = layer_json(r.shape.ops[k], main.per_op[k], main.work[k], r.images, r.target);
    if (r.twin) {
      l["packed"] = r.shape.ops[k].packed;
      l["dense_rows"] = packing[k].dense_rows;
      l["packed_rows"] = packing[k].packed_rows;
      l["dense_program_beats"] = r.twin->work[k].beats;
      if (r.twin->run) l["dense_build_cycles"] = cycles_of(r.twin->run->per_op[k]);
    }
    layers.push_back(l);
  }
  return layers;
}

}  // namespace

std::vector<Tensor<int8_t>> golden_outputs(const Network& net,
                                           const std::vector<Tensor<int8_t>>& images) {
  std::vector<Tensor<int8_t>> golden;
  for (const Tensor<int8_t>& im : images) {
    for (Tensor<int8_t>& t : run_network_outputs(net, im)) golden.push_back(std::move(t));
  }
  return golden;
}

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

void add_work(OpWork& sum, const OpWork& w) {
  sum.beats += w.beats;
  sum.dense_beats += w.dense_beats;
  sum.load_bytes += w.load_bytes;
  sum.store_bytes += w.store_bytes;
  sum.computes += w.computes;
}

int64_t element_count(const std::vector<Tensor<int8_t>>& tensors) {
  int64_t elements = 0;
  for (const Tensor<int8_t>& t : tensors) elements += t.size();
  return elements;
}

double utilisation(int64_t macs, const HwTarget& t, uint64_t cycles) {
  return cycles == 0 ? 0.0 : double(macs) / (double(t.macs_per_beat()) * double(cycles));
}

std::vector<OpWork> program_work(const Network& net, const HwTarget& target, size_t images) {
  std::vector<OpWork> sum;
  for (size_t first = 0; first < images; first += static_cast<size_t>(target.pes)) {
    CompileOptions co;
    co.batch = static_cast<int>(std::min<size_t>(target.pes, images - first));
    const std::vector<OpWork> w = op_work(compile(net, target, co));
    if (sum.empty()) sum.resize(w.size());
    for (size_t k = 0; k < w.size(); ++k) add_work(sum[k], w[k]);
  }
  return sum;
}

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

Json bench_json(const BenchReport& r) {
  const RtlResult& main = r.results.front();
  const int64_t macs = r.net.macs() * r.images;
  const uint64_t cycles = cycles_of(main.counters);
  Json j;
  j["network"] = r.net.name;
  j["source"] = r.net.source_file;
  j["parameters"] = r.setup.parameters;
  j["config"] = config_json(r);
  j["images"] = r.images;
  j["cycles"] = cycles;
  j["cycles_per_image"] = double(cycles) / double(r.images);
  j["macs"] = macs;
  j["utilization"] = utilisation(macs, r.target, cycles);
  int64_t mismatches = 0;
  for (const RtlResult& m : r.results) mismatches += m.mismatches;
  if (r.twin && r.twin->run) mismatches += r.twin->run->mismatches;
  j["mismatches"] = mismatches;
  int64_t dense = 0;
  for (const OpWork& w : main.work) dense += w.dense_beats;
  const int64_t beats = total_beats(main.work);
  j["padding"] = {{"beats", beats}, {"dense_beats", dense}, {"skipped_beats", dense - beats}};
  Json by_mode;
  for (size_t m = 0; m < r.results.size(); ++m) {
    Json mj = mode_json(r.results[m], macs, r.images, r.target);
    mj["predicted_cycles"] = r.predicted[m];
    by_mode[mode_name(r.results[m].fine)] = mj;
  }
  j["modes"] = by_mode;
  if (const std::optional<double> up = fine_speedup(r)) j["fine_speedup"] = *up;
  j["predicted_cycles"] = r.predicted.front();  // the main mode's
  if (r.twin) j["sparse"] = sparse_json(r.shape, main, *r.twin);
  j["layers"] = layers_json(r);
  return j;
}

std::string bench_mismatch(const BenchReport& r) {
  for (const RtlResult& m : r.results) {
    if (m.mismatches > 0) {
      return fmt::format(
          "RTL output differs from the golden model in {} element{} ({} mode); "
          "first: {}",
          m.mismatches, m.mismatches == 1 ? "" : "s", mode_name(m.fine), m.first_mismatch);
    }
  }
  if (r.twin && r.twin->run && r.twin->run->mismatches > 0) {
    const RtlResult& d = *r.twin->run;
    return fmt::format(
        "the dense build's output differs from the golden model in {} element{}; "
        "first: {}",
        d.mismatches, d.mismatches == 1 ? "" : "s", d.first_mismatch);
  }
  return "";
}

std::string rtl_run_summary(const Network& net, const HwTarget& target, const RtlResult& res,
                            int64_t images, unsigned latency, double stall) {
  const uint64_t cycles = cycles_of(res.counters);
  return fmt::format(
      "RTL accelerator, target '{}' (P {}, N {}), {} scheduling, {}-cycle memory latency, stall "
      "{}: {} run{}, {} cycles ({:.0f} per image), MAC utilisation {:.1f} %, {:.2f} s ({} model, "
      "{:.0f} cycles/s)\n",
      target.name, target.pes, target.lanes, res.fine ? "fine-grained" : "completion", latency,
      stall, res.runs, res.runs == 1 ? "" : "s", cycles, double(cycles) / double(images),
      100.0 * utilisation(net.macs() * images, target, cycles), res.seconds, res.model,
      res.seconds > 0.0 ? double(cycles) / res.seconds : 0.0);
}

}  // namespace strata
