// SPDX-License-Identifier: Apache-2.0
// strata/rtl_backend.hpp on the Verilated models: AccelRunner for one
// accelerator, ChainRunner for cascade chains (the models the executable
// links, model_table.hpp).
#include "strata/rtl_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "accel_runner.hpp"
#include "chain_runner.hpp"
#include "strata/cycle_model.hpp"
#include "strata/error.hpp"

namespace strata::rtl {
namespace {

namespace fs = std::filesystem;
namespace tbr = strata::tb;

void create_parent(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    throw Error(fmt::format("cannot create directory '{}': {}", parent.string(), ec.message()));
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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

// The programs of a network for each batch size, compiled once.
class Programs {
 public:
  Programs(const Network& net, const HwTarget& target) : net_(net), target_(target) {}
  const Program& operator()(int batch) {
    auto it = programs_.find(batch);
    if (it == programs_.end()) {
      CompileOptions co;
      co.batch = batch;
      it = programs_.emplace(batch, compile(net_, target_, co)).first;
    }
    return it->second;
  }

 private:
  const Network& net_;
  const HwTarget& target_;
  std::map<int, Program> programs_;
};

tbr::RunnerOptions runner_options(const Options& a, bool fine, bool trace, uint64_t timeout) {
  tbr::RunnerOptions o;
  o.seed = a.seed;
  o.read_latency = a.latency;
  o.stall = a.stall;
  o.fine_grain = fine;
  o.timeout = a.timeout != 0 ? a.timeout : timeout;
  o.checked = a.checked_model;
  if (trace) {
    create_parent(a.trace);
    o.trace_path = a.trace;
  }
  return o;
}

// A run that did not finish, stopped with an error, tripped a bench check or
// whose trace port disagrees with its counters: a strata::Error.
void require_clean(const tbr::RunReport& r, const std::string& what, uint64_t timeout) {
  if (!r.finished) {
    throw Error(
        fmt::format("{} did not finish within {} cycles (timeout): the accelerator "
                    "hung or --timeout is too small",
                    what, timeout));
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
}

// Adds one run of `prog` to `res`: its per-op counters, work and counters.
void accumulate(RtlResult& res, const Program& prog, const tbr::RunReport& r,
                const std::string& what) {
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
  for (size_t k = 0; k < w.size(); ++k) add_work(res.work[k], w[k]);
  for (size_t c = 0; c < r.counters.size(); ++c) res.counters[c] += r.counters[c];
  ++res.runs;
}

// The chain runner's options for `chain` streaming `images` images: the RTL
// options given, and by default a timeout of every stage's own default per
// image.
tbr::ChainRunnerOptions chain_options(const Options& a, const ChainProgram& chain,
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

}  // namespace

bool built() { return true; }

RtlResult run(const Network& net, const HwTarget& target, const std::vector<Tensor<int8_t>>& images,
              const Options& options, bool fine, bool trace) {
  Programs programs(net, target);
  const int first_batch = static_cast<int>(std::min<size_t>(target.pes, images.size()));
  const tbr::RunnerOptions o =
      runner_options(options, fine, trace, default_timeout(programs(first_batch), target));
  tbr::AccelRunner runner(target, o);
  RtlResult res;
  res.fine = fine;
  res.model = runner.model_kind();
  for (size_t j = 0; j < net.output_count(); ++j) res.output_names.push_back(net.output_name(j));
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t first = 0; first < images.size(); first += static_cast<size_t>(target.pes)) {
    const int batch = static_cast<int>(std::min<size_t>(target.pes, images.size() - first));
    const Program& prog = programs(batch);
    const auto begin = images.begin() + static_cast<std::ptrdiff_t>(first);
    const std::vector<Tensor<int8_t>> in(begin, begin + batch);
    std::vector<Tensor<int8_t>> out;
    const tbr::RunReport r = runner.run_program(prog, in, out);
    const std::string what =
        fmt::format("RTL run of '{}' (images {}..{}, {} mode)", net.name, first,
                    first + static_cast<size_t>(batch) - 1, fine ? "fine-grained" : "completion");
    require_clean(r, what, o.timeout);
    accumulate(res, prog, r, what);
    for (Tensor<int8_t>& t : out) res.outputs.push_back(std::move(t));
  }
  res.seconds = seconds_since(t0);
  return res;
}

DenseTwin dense_twin(const Network& net, const HwTarget& target, const Program& shape,
                     const std::vector<Tensor<int8_t>>& images,
                     const std::vector<Tensor<int8_t>>& golden, const Options& options, bool fine) {
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
    Options dense = options;
    dense.trace.clear();
    t.run = run(net, t.target, images, dense, fine, false);
    check_against_golden(*t.run, golden);
  }
  return t;
}

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

ChainStream stream_chain(const ChainProgram& chain, const HwTarget& target,
                         const std::vector<Tensor<int8_t>>& images, const Options& options,
                         bool fine) {
  tbr::ChainRunnerOptions o = chain_options(options, chain, target, images.size(), fine);
  if (!options.trace.empty()) {
    create_parent(options.trace);
    o.run.trace_path = options.trace;
  }
  tbr::ChainRunner runner(o, target);
  ChainStream s;
  const tbr::ChainReport r = runner.run_stream(chain, images, s.outputs);
  if (!r.bench_errors.empty()) {
    throw Error(fmt::format("bench check failed: {}", r.bench_errors.front()));
  }
  if (r.failed_stage >= 0) {
    throw Error(fmt::format("stage {} stopped with error {} at instruction {}", r.failed_stage,
                            csr::to_string(r.error), r.error_index));
  }
  if (!r.finished) {
    throw Error(fmt::format("the chain did not finish within {} cycles", o.run.timeout));
  }
  s.cycles = r.cycles;
  return s;
}

ChainMeasure measure_chain(const Network& net, const HwTarget& target, int instances,
                           const std::vector<Tensor<int8_t>>& images,
                           const std::vector<Tensor<int8_t>>& golden, const Options& options,
                           bool fine) {
  ChainMeasure m;
  m.instances = instances;
  CycleModelOptions cm;
  cm.mem_latency = static_cast<int>(options.latency);
  cm.fine_grained = fine;
  m.chain = compile_chain(net, target, instances, cm);
  const tbr::ChainRunnerOptions o = chain_options(options, m.chain, target, images.size(), fine);
  tbr::ChainRunner runner(o, target);
  RtlResult check;
  const auto t0 = std::chrono::steady_clock::now();
  const tbr::ChainReport r = runner.run_stream(m.chain, images, check.outputs);
  m.seconds = seconds_since(t0);
  const std::string what = fmt::format("cascade run of '{}' on {} instance{}", net.name, instances,
                                       instances == 1 ? "" : "s");
  if (!r.bench_errors.empty()) {
    throw Error(fmt::format("{}: bench check failed: {}", what, r.bench_errors.front()));
  }
  if (r.failed_stage >= 0) {
    throw Error(fmt::format("{}: stage {} stopped with error {} at instruction {}", what,
                            r.failed_stage, csr::to_string(r.error), r.error_index));
  }
  if (!r.finished || check.outputs.size() != images.size()) {
    throw Error(fmt::format("{} did not finish within {} cycles (timeout)", what, o.run.timeout));
  }
  check_against_golden(check, golden);
  m.mismatches = check.mismatches;
  if (m.mismatches > 0) {
    throw MismatchError(
        fmt::format("{}: output differs from the golden model in {} elements; "
                    "first: {}",
                    what, m.mismatches, check.first_mismatch));
  }
  m.cycles = r.cycles;
  m.image_start = r.image_start;
  m.image_done = r.image_done;
  for (const tbr::StageReport& st : r.stages)
    m.stage_busy.push_back(perf(st.counters, csr::kPerfCycles));
  return m;
}

std::string trace_note(const std::string& trace) {
  if (trace.empty()) return "";
  return fmt::format("trace   {} (FST); view: gtkwave {} {}\n", trace, trace, STRATA_GTKW_LAYOUT);
}

}  // namespace strata::rtl
