// SPDX-License-Identifier: Apache-2.0
// strata/bench_report.hpp: `strata bench`'s tables on one accelerator.
#include "bench_report_detail.hpp"

namespace strata {
namespace {

using namespace bench_detail;

void append_layer_row(std::string& out, const std::string& index, const std::string& name,
                      size_t name_w, const std::string& kind, size_t kind_w, const PerfCounts& c,
                      const OpWork& w, int64_t macs, const HwTarget& t) {
  const uint64_t cycles = cycles_of(c);
  append(out,
         "{:>2}  {:<{}} {:<{}} {:>9} {:>10} {:>6.1f} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} "
         "{:>7} {:>8} {:>8} {:>9}\n",
         index, name, name_w, kind, kind_w, cycles, macs, 100.0 * utilisation(macs, t, cycles),
         w.beats, w.dense_beats - w.beats, perf(c, csr::kPerfStallComputeDep),
         perf(c, csr::kPerfStallComputeOut), perf(c, csr::kPerfStallLoadDep),
         perf(c, csr::kPerfStallLoadMem), perf(c, csr::kPerfStallStoreDep),
         perf(c, csr::kPerfStallStoreMem), w.load_bytes, w.store_bytes, bound_cycles(w, t));
}

// Per layer of the main mode's run, and the total.
void append_layer_table(std::string& out, const BenchReport& r) {
  const Program& shape = r.shape;
  const RtlResult& main = r.results.front();
  size_t name_w = 22, kind_w = 4;  // imported networks have long layer names
  for (const CompiledOp& op : shape.ops) {
    name_w = std::max(name_w, op.name.size());
    kind_w = std::max(kind_w, op.kind.size());
  }
  append(out,
         "{:>2}  {:<{}} {:<{}} {:>9} {:>10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} "
         "{:>7} {:>8} {:>8} {:>9}\n",
         "#", "layer (fused op)", name_w, "kind", kind_w, "cycles", "MACs", "util%", "beats",
         "skipped", "C-dep", "C-out", "L-dep", "L-mem", "S-dep", "S-mem", "load B", "store B",
         "bound");
  PerfCounts sum{};
  OpWork wsum;
  int64_t macs = 0;
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    const PerfCounts& c = main.per_op[k];
    append_layer_row(out, fmt::format("{}", k), shape.ops[k].name, name_w, shape.ops[k].kind,
                     kind_w, c, main.work[k], shape.ops[k].macs * r.images, r.target);
    for (size_t i = 0; i < c.size(); ++i) sum[i] += c[i];
    add_work(wsum, main.work[k]);
    macs += shape.ops[k].macs * r.images;
  }
  append_layer_row(out, "", "total", name_w, "", kind_w, sum, wsum, macs, r.target);
  append(out,
         "bound: the roofline bound on the cycles, max(PE-array beats, (load B + store B) / "
         "{} bytes per AXI beat)\n",
         r.target.beat_bytes());
}

void append_sparse_table(std::string& out, const Program& shape, const RtlResult& main,
                         const DenseTwin& t) {
  size_t name_w = 22;
  for (const CompiledOp& op : shape.ops) name_w = std::max(name_w, op.name.size());
  append(out, "\nsparse build: packed CONVs against the dense program of the same weights{}:\n",
         t.run ? fmt::format(" on the dense build (model '{}': this configuration with "
                             "sparse: false)",
                             t.model)
               : "");
  const std::vector<OpPacking> rows = op_packing(shape);
  append(out, "{:>2}  {:<{}} {:>6} {:>7} {:>9} {:>11} {:>7} {:>9} {:>12} {:>8}\n", "#", "layer",
         name_w, "packed", "rows x", "beats", "dense beats", "beat x", "cycles", "dense cycles",
         "speed-up");
  // The dense build's cycles and speed-up columns, "-" without its run.
  const auto dense_cols = [&](const PerfCounts& sparse, const PerfCounts* dense) {
    if (dense == nullptr) return std::pair<std::string, std::string>{"-", "-"};
    return std::pair{
        fmt::format("{}", cycles_of(*dense)),
        fmt::format("{:.2f}x", ratio(double(cycles_of(*dense)), double(cycles_of(sparse))))};
  };
  for (size_t k = 0; k < shape.ops.size(); ++k) {
    const auto [dc, up] = dense_cols(main.per_op[k], t.run ? &t.run->per_op[k] : nullptr);
    const std::string rx =
        rows[k].packed_rows > 0
            ? fmt::format("{:.2f}x", ratio(double(rows[k].dense_rows), double(rows[k].packed_rows)))
            : "-";
    append(out, "{:>2}  {:<{}} {:>6} {:>7} {:>9} {:>11} {:>6.2f}x {:>9} {:>12} {:>8}\n", k,
           shape.ops[k].name, name_w, shape.ops[k].packed ? "yes" : "no", rx, main.work[k].beats,
           t.work[k].beats, ratio(double(t.work[k].beats), double(main.work[k].beats)),
           cycles_of(main.per_op[k]), dc, up);
  }
  const int64_t beats = total_beats(main.work), dense = total_beats(t.work);
  const auto [dc, up] = dense_cols(main.counters, t.run ? &t.run->counters : nullptr);
  append(out, "    {:<{}} {:>6} {:>7} {:>9} {:>11} {:>6.2f}x {:>9} {:>12} {:>8}\n", "total", name_w,
         "", "", beats, dense, ratio(double(dense), double(beats)), cycles_of(main.counters), dc,
         up);
  append(out,
         "rows x: the packer's dense rows / packed rows of the op's weights, the speed-up its "
         "schedule allows before padding and start costs\n");
}

void append_sparse_summary(std::string& out, const RtlResult& main, const DenseTwin& t,
                           const HwTarget& target) {
  if (t.run) {
    append(out,
           "speed-up of the sparse build: {:.2f}x the dense build's speed on the same weights; "
           "dense build mismatches: {}\n",
           ratio(double(cycles_of(t.run->counters)), double(cycles_of(main.counters))),
           t.run->mismatches);
  } else {
    append(out,
           "no model of '{}' is built (P {}, N {}, sparse: false): beats only; add a "
           "configuration with this hardware and sparse: false to STRATA_RTL_CONFIGS for the "
           "cycles\n",
           t.target.name, target.pes, target.lanes);
  }
}

void append_header(std::string& out, const BenchReport& r) {
  const HwTarget& t = r.target;
  append(out, "network {} ({}), target '{}' (P {}, N {}, {} MACs/cycle)\n", r.net.name,
         r.net.source_file, t.name, t.pes, t.lanes, t.macs_per_beat());
  append(out, "memory  {}-cycle read latency, one {}-bit beat per cycle, stall {}\n",
         r.setup.latency, t.axi_data_width, r.setup.stall);
  append(out, "params  {}\n", r.setup.parameters);
  append(out, "images  {} ({})\n\n", r.images, r.setup.images);
  append(out,
         "{} mode, per layer (cycles from the RTL's trace port; stall columns: cycles each engine "
         "waited, by cause):\n",
         r.results.front().fine ? "fine-grained (CTRL.FINE_GRAIN = 1)" : "completion-granular");
}

// Per mode: cycles, utilisation, mismatches and the cycle model's error.
void append_modes(std::string& out, const BenchReport& r) {
  const int64_t macs = r.net.macs() * r.images;
  append(out, "\n{:<12} {:>10} {:>12} {:>12} {:>7} {:>11}\n", "mode", "cycles", "cycles/image",
         "MACs", "util%", "mismatches");
  for (const RtlResult& m : r.results) {
    const uint64_t c = cycles_of(m.counters);
    append(out, "{:<12} {:>10} {:>12.0f} {:>12} {:>7.1f} {:>11}\n", mode_name(m.fine), c,
           double(c) / double(r.images), macs, 100.0 * utilisation(macs, r.target, c),
           m.mismatches);
  }
  for (size_t m = 0; m < r.results.size(); ++m) {
    const double c = double(cycles_of(r.results[m].counters));
    append(out,
           "cycle model ({} mode): {} cycles predicted, {:+.1f} % from the RTL "
           "(docs/planner.md)\n",
           mode_name(r.results[m].fine), r.predicted[m], 100.0 * (double(r.predicted[m]) - c) / c);
  }
  if (const std::optional<double> up = fine_speedup(r)) {
    append(out, "fine-grained early start: {:.3f}x the speed of completion-granular scheduling\n",
           *up);
  }
}

void append_padding(std::string& out, const BenchReport& r) {
  const std::vector<OpWork>& work = r.results.front().work;
  int64_t dense = 0;
  for (const OpWork& w : work) dense += w.dense_beats;
  const int64_t skipped = dense - total_beats(work);
  append(out, "{} skipped: {} of {} PE-array beats ({:.1f} %), {} cycles at one beat per cycle\n",
         r.target.sparse ? "padded taps and packed-away weight rows" : "padded taps", skipped,
         dense, dense == 0 ? 0.0 : 100.0 * double(skipped) / double(dense), skipped);
}

}  // namespace

std::string bench_table(const BenchReport& r) {
  std::string out;
  append_header(out, r);
  append_layer_table(out, r);
  append_modes(out, r);
  append_padding(out, r);
  if (r.twin) {
    append_sparse_table(out, r.shape, r.results.front(), *r.twin);
    append_sparse_summary(out, r.results.front(), *r.twin, r.target);
  }
  for (const RtlResult& m : r.results) {
    const uint64_t c = cycles_of(m.counters);
    append(out,
           "simulation ({} mode): {} model, {} cycles in {:.2f} s of wall time, {:.0f} cycles "
           "per second\n",
           mode_name(m.fine), m.model, c, m.seconds, m.seconds > 0.0 ? double(c) / m.seconds : 0.0);
  }
  return out;
}

}  // namespace strata
