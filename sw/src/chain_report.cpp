// SPDX-License-Identifier: Apache-2.0
// strata/bench_report.hpp: cascade chains, their partition and `strata bench
// --instances K`'s table and JSON.
#include "bench_report_detail.hpp"

namespace strata {
namespace {

using namespace bench_detail;
using Json = nlohmann::ordered_json;

// Images per million cycles.
double rate(const ChainMeasure& m, int64_t images) {
  return m.cycles == 0 ? 0.0 : 1e6 * double(images) / double(m.cycles);
}

double speedup(const ChainMeasure& m, const ChainMeasure& one, int64_t images) {
  return rate(one, images) > 0 ? rate(m, images) / rate(one, images) : 0.0;
}

void append_measures(std::string& out, const ChainBenchReport& r) {
  const ChainMeasure& one = r.measures.front();
  append(out, "\n  {:<9} {:>12} {:>14} {:>10} {:>14} {:>14} {:>9}\n", "instances", "cycles",
         "images/Mcycle", "speed-up", "latency img 0", "mean latency", "bound");
  for (const ChainMeasure& m : r.measures) {
    uint64_t lat_sum = 0;
    for (int64_t i = 0; i < r.images; ++i) {
      lat_sum += m.image_done[static_cast<size_t>(i)] - m.image_start[static_cast<size_t>(i)];
    }
    append(out, "  {:<9} {:>12} {:>14.1f} {:>9.2f}x {:>14} {:>14} {:>8.2f}x\n", m.instances,
           m.cycles, rate(m, r.images), speedup(m, one, r.images),
           m.image_done[0] - m.image_start[0], lat_sum / uint64_t(r.images),
           m.chain.balance_bound());
  }
}

}  // namespace

std::string chain_partition(const ChainProgram& chain, const Network& net) {
  std::string out;
  append(out,
         "cascade: {} stage{}, cuts allowed after op{} {}; balance bound {:.2f}x (one "
         "accelerator's predicted cycles / the largest stage's, docs/cascade.md)\n",
         chain.stages.size(), chain.stages.size() == 1 ? "" : "s",
         chain.cut_candidates.size() == 1 ? "" : "s",
         chain.cut_candidates.empty() ? std::string("(none)")
                                      : fmt::format("{}", fmt::join(chain.cut_candidates, ", ")),
         chain.balance_bound());
  append(out, "  {:<5} {:<34} {:>4} {:>16} {:>10} {:>13}\n", "stage", "layers", "ops",
         "predicted cyc.", "transfers", "instructions");
  for (size_t k = 0; k < chain.stages.size(); ++k) {
    const ChainStage& st = chain.stages[k];
    const std::string layers =
        fmt::format("{} .. {}", net.layers[st.first_layer].name, net.layers[st.end_layer - 1].name);
    append(out, "  {:<5} {:<34} {:>4} {:>16} {:>10} {:>13}\n", k, layers, st.ops.size(),
           st.predicted_cycles, st.transfers_out, st.program.instructions.size());
  }
  return out;
}

std::string chain_bench_table(const ChainBenchReport& r) {
  std::string out;
  append(out,
         "network {} ({}), {} images ({}), parameters {}, target '{}' (P {}, N {}), {} "
         "scheduling, {}-cycle memory latency, stall {}\n\n",
         r.net.name, r.net.source_file, r.images, r.setup.images, r.setup.parameters, r.target.name,
         r.target.pes, r.target.lanes, r.fine ? "fine-grained" : "completion", r.setup.latency,
         r.setup.stall);
  const ChainMeasure& last = r.measures.back();
  out += chain_partition(last.chain, r.net);
  append_measures(out, r);
  append(out,
         "\n  {:<5} {:>12} {:>8}   (K = {}: PERF_CYCLES of each stage, summed over its runs)\n",
         "stage", "busy cycles", "busy %", last.instances);
  for (size_t k = 0; k < last.stage_busy.size(); ++k) {
    const uint64_t busy = last.stage_busy[k];
    append(out, "  {:<5} {:>12} {:>7.1f}%\n", k, busy,
           last.cycles ? 100.0 * double(busy) / double(last.cycles) : 0.0);
  }
  append(out,
         "\ncheck   {} output elements of each run compared with the golden model: 0 "
         "mismatches\n",
         r.checked_elements);
  return out;
}

Json chain_bench_json(const ChainBenchReport& r) {
  const ChainMeasure& one = r.measures.front();
  Json j;
  j["network"] = r.net.name;
  j["images"] = r.images;
  j["mode"] = mode_name(r.fine);
  j["target"] = r.target.name;
  for (const ChainMeasure& m : r.measures) {
    Json run;
    run["instances"] = m.instances;
    run["cycles"] = m.cycles;
    run["images_per_mcycle"] = rate(m, r.images);
    run["speedup"] = speedup(m, one, r.images);
    run["latency_first"] = m.image_done[0] - m.image_start[0];
    run["balance_bound"] = m.chain.balance_bound();
    run["mismatches"] = m.mismatches;
    for (size_t k = 0; k < m.chain.stages.size(); ++k) {
      const ChainStage& st = m.chain.stages[k];
      run["stages"].push_back({{"first_layer", r.net.layers[st.first_layer].name},
                               {"last_layer", r.net.layers[st.end_layer - 1].name},
                               {"predicted_cycles", st.predicted_cycles},
                               {"transfers", st.transfers_out},
                               {"busy_cycles", m.stage_busy[k]}});
    }
    j["runs"].push_back(run);
  }
  return j;
}

}  // namespace strata
