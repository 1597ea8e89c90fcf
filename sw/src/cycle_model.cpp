// SPDX-License-Identifier: Apache-2.0
// The instruction-level timing model (strata/cycle_model.hpp).
#include "strata/cycle_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "strata/error.hpp"
#include "strata/isa.hpp"

namespace strata {
namespace {

using isa::Edge;
using isa::Engine;

// strata_fetch: instructions in flight or buffered, entries per engine queue,
// cycles per instruction beyond its beats (decode and dispatch).
constexpr int kPrefetch = 4;
constexpr int kQueueDepth = 2;
constexpr int kFetchExtra = 3;
// Fixed cycles per instruction, by engine (calibrated, docs/planner.md).
constexpr int64_t kComputeFixed = 40;  // decode slot to first beat, and the drain after the last
constexpr int64_t kLoadFixed = 8;      // beyond the read latency
constexpr int64_t kStoreFixed = 8;     // bank read pipeline

// The part of kComputeFixed before the first result row (the rest drains
// after the last).
constexpr int64_t kComputeLead = kComputeFixed / 2;

struct Instr {
  Engine engine;
  std::array<int64_t, 2> acq{};                // units on incoming edges 0, 1
  std::array<int64_t, 2> rel{};                // units on outgoing edges 0, 1
  std::array<std::optional<Edge>, 2> in, out;  // the edges of those slots
  int64_t acq0_first = 0, acq0_step = 0;       // fine-grained acquisitions on edge 0
  int64_t duration = 0;
  // Fine-grained timing: `lead` cycles before the first step's work ends
  // (a LOAD's read latency), then `work` cycles over the steps, then `tail`.
  int64_t lead = 0, tail = 0;
  int64_t work = 0;
  bool ext_reads = false;  // a LOAD from memory: a later row it
                           // waited for arrives a latency later
  const std::vector<int32_t>* step_releases = nullptr;
  bool s2l_after_responses = false;  // a STORE: rel1 (S2L) waits for the responses
  int tag = 0;
};

}  // namespace

CyclePrediction predict_cycles(const Program& program, const SimResult& sim,
                               const CycleModelOptions& options) {
  const HwTarget& t = program.target;
  const int64_t beat_bytes = t.beat_bytes();
  const int64_t fetch_beats = isa::kInstrBytes / beat_bytes;
  const int64_t latency = options.mem_latency;

  std::map<int64_t, const InstrStats*> stats;
  for (const InstrStats& s : sim.stats) stats[s.index] = &s;

  // The instructions the fetcher dispatches to an engine, in fetch order.
  std::vector<Instr> instrs;
  std::vector<int64_t> fetch_index;
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const isa::Instruction& in = program.instructions[i];
    const auto op = static_cast<isa::Opcode>(in.opcode_value());
    const auto engine = isa::engine_of(op);
    if (!engine) continue;  // CONFIG, END: decoded only
    const isa::EdgeSlots slots = isa::edge_slots(op);
    Instr x;
    x.engine = *engine;
    x.in = {slots.acq0, slots.acq1};
    x.out = {slots.rel0, slots.rel1};
    x.acq = {static_cast<int64_t>(in.raw(isa::hdr::kAcq0)),
             static_cast<int64_t>(in.raw(isa::hdr::kAcq1))};
    x.rel = {static_cast<int64_t>(in.raw(isa::hdr::kRel0)),
             static_cast<int64_t>(in.raw(isa::hdr::kRel1))};
    x.acq0_first = static_cast<int64_t>(in.raw(isa::hdr::kAcq0First));
    x.acq0_step = static_cast<int64_t>(in.raw(isa::hdr::kAcq0Step));
    x.tag = static_cast<int>(in.raw(isa::hdr::kTag));
    const auto it = stats.find(static_cast<int64_t>(i));
    static const InstrStats kNoWork{};
    const InstrStats& s = it == stats.end() ? kNoWork : *it->second;
    x.step_releases = &s.step_releases;
    // External beats at the memory's bandwidth.
    const auto ext_beats = static_cast<int64_t>(
        std::ceil(double((s.ext_bytes + beat_bytes - 1) / beat_bytes) / options.beats_per_cycle));
    switch (x.engine) {
      case Engine::kLoad:
        x.ext_reads = ext_beats > 0;
        x.lead = (x.ext_reads ? latency : 0) + kLoadFixed;
        x.work = x.ext_reads ? ext_beats : s.words;
        break;
      case Engine::kCompute:
        x.lead = kComputeLead;
        x.tail = kComputeFixed - kComputeLead;
        // Partial sums: acc_in's word reads and acc_out's result words (isa_sim.hpp).
        x.work = std::max(s.beats + s.acc_cycles, s.pool_words);
        break;
      case Engine::kStore:
        x.lead = kStoreFixed;
        x.work = std::max(ext_beats, s.words);
        x.s2l_after_responses = ext_beats > 0;
        break;
    }
    x.duration = x.lead + x.work + x.tail;
    instrs.push_back(x);
    fetch_index.push_back(static_cast<int64_t>(i));
  }

  const size_t n = instrs.size();
  std::vector<int64_t> arrival(n, -1), dispatch(n, -1), start(n, -1), end(n, -1);
  // Per engine: its instructions (positions in instrs) in order.
  std::array<std::vector<size_t>, isa::kEngines> queue;
  std::vector<size_t> pos_in_engine(n);
  for (size_t k = 0; k < n; ++k) {
    auto& q = queue[static_cast<int>(instrs[k].engine)];
    pos_in_engine[k] = q.size();
    q.push_back(k);
  }
  // Per edge: release events (cumulative units, time), in the producer's order.
  std::array<std::vector<std::pair<int64_t, int64_t>>, isa::kEdges> released;
  std::array<int64_t, isa::kEdges> acquired{};
  // The time the edge's cumulative releases reached `units` (-1: not yet).
  const auto available = [&](Edge e, int64_t units) -> int64_t {
    if (units <= 0) return 0;
    const auto& r = released[static_cast<int>(e)];
    const auto it = std::lower_bound(
        r.begin(), r.end(), units,
        [](const std::pair<int64_t, int64_t>& ev, int64_t u) { return ev.first < u; });
    return it == r.end() ? -1 : it->second;
  };
  const auto release = [&](Edge e, int64_t units, int64_t time) {
    if (units <= 0) return;
    auto& r = released[static_cast<int>(e)];
    const int64_t cum = (r.empty() ? 0 : r.back().first) + units;
    r.push_back({cum, r.empty() ? time : std::max(time, r.back().second)});
  };

  // Fine-grained mode (docs/isa.md): the instruction starts once it is
  // dispatched, its engine is free and acq1 and acq0_first are released;
  // step i (its share of the work) needs acq0_step more edge-0 units and
  // releases its rel0 units when done; the rest of acq0 before the end, the
  // rest of rel0 at the end. Scheduled once all its units are released, so
  // the order of the engines' instructions is the completion model's.
  const auto schedule_fine = [&](size_t k, int64_t prev_end,
                                 const std::array<int64_t, isa::kEdges>& before) {
    const Instr& x = instrs[k];
    const auto units_at = [&](int slot, int64_t units) -> int64_t {
      if (!x.in[slot] || units <= 0) return 0;
      return available(*x.in[slot], before[static_cast<int>(*x.in[slot])] + units);
    };
    const int64_t first0 = std::min(x.acq0_first, x.acq[0]);
    start[k] = std::max({dispatch[k], prev_end, units_at(1, x.acq[1]), units_at(0, first0)});
    const std::vector<int32_t>& steps = *x.step_releases;
    const size_t n_steps = std::max<size_t>(1, steps.size());
    // Step i ends at base + work * (i + 1 - first) / n_steps (rounded up),
    // `base` and `first` moving to a step that had to wait: computed, not
    // summed, so that no rounding error adds up along the steps.
    const auto steps_n = static_cast<int64_t>(n_steps);
    const auto work_of = [&](size_t steps_done) {
      return (x.work * static_cast<int64_t>(steps_done) + steps_n - 1) / steps_n;
    };
    int64_t base = start[k] + x.lead, t = base;
    size_t first = 0;
    int64_t taken = first0, given = 0;
    for (size_t i = 0; i < n_steps; ++i) {
      if (i > 0 && x.acq0_step > 0 && taken < x.acq[0]) {
        taken += std::min(x.acq0_step, x.acq[0] - taken);
        // A LOAD issues the row's read once its units are in; the data
        // comes a read latency later.
        const int64_t at = units_at(0, taken) + (x.ext_reads ? latency : 0);
        if (at > t) {
          base = at;
          first = i;
        }
      }
      t = base + work_of(i + 1 - first);
      if (i < steps.size() && x.out[0]) {
        const int64_t n = std::min<int64_t>(steps[i], x.rel[0] - given);
        release(*x.out[0], n, t);
        given += n;
      }
    }
    end[k] = std::max(t + x.tail, units_at(0, x.acq[0]));
    if (x.out[0]) release(*x.out[0], x.rel[0] - given, end[k]);
  };

  // The first instruction arrives after the fetch latency; then one per
  // fetch_beats + kFetchExtra cycles while the prefetch buffer is not full.
  const int64_t per_fetch = fetch_beats + kFetchExtra;
  size_t next_dispatch = 0;
  std::array<size_t, isa::kEngines> next_start{};
  size_t done = 0;
  while (done < n) {
    bool progress = false;
    // Dispatch in fetch order while the engine's queue has room: the
    // instruction kQueueDepth places ahead in the same engine has started.
    while (next_dispatch < n) {
      const size_t k = next_dispatch;
      const size_t p = pos_in_engine[k];
      int64_t room = 0;
      if (p >= kQueueDepth) {
        const size_t ahead = queue[static_cast<int>(instrs[k].engine)][p - kQueueDepth];
        if (start[ahead] < 0) break;
        room = start[ahead] + 1;
      }
      // Fetch k can issue once the buffer has a free place: instruction
      // k - kPrefetch dispatched.
      arrival[k] = k == 0 ? latency + per_fetch * (fetch_index[0] + 1)
                          : arrival[k - 1] + per_fetch * (fetch_index[k] - fetch_index[k - 1]);
      if (k >= kPrefetch)
        arrival[k] = std::max(arrival[k], dispatch[k - kPrefetch] + latency + per_fetch);
      dispatch[k] = std::max({arrival[k], room, k > 0 ? dispatch[k - 1] + 1 : int64_t{0}});
      ++next_dispatch;
      progress = true;
    }
    // Start each engine's next instruction once it is dispatched and its
    // acquisitions are met.
    for (int e = 0; e < isa::kEngines; ++e) {
      while (next_start[e] < queue[e].size()) {
        const size_t k = queue[e][next_start[e]];
        if (dispatch[k] < 0) break;
        const Instr& x = instrs[k];
        int64_t ready = dispatch[k];
        bool met = true;
        for (int s = 0; s < 2 && met; ++s) {
          if (!x.in[s] || x.acq[s] == 0) continue;
          const int64_t at = available(*x.in[s], acquired[static_cast<int>(*x.in[s])] + x.acq[s]);
          if (at < 0)
            met = false;
          else
            ready = std::max(ready, at);
        }
        if (!met) break;
        // (Fine-grained: `ready` is when all of them are released; the
        // steps then take them as they come, schedule_fine below.)
        const std::array<int64_t, isa::kEdges> acquired_before = acquired;
        for (int s = 0; s < 2; ++s) {
          if (x.in[s]) acquired[static_cast<int>(*x.in[s])] += x.acq[s];
        }
        const int64_t prev_end = next_start[e] > 0 ? end[queue[e][next_start[e] - 1]] : 0;
        if (options.fine_grained) {
          schedule_fine(k, prev_end, acquired_before);
        } else {
          start[k] = std::max(ready, prev_end);
          end[k] = start[k] + x.duration;
          if (x.out[0]) release(*x.out[0], x.rel[0], end[k]);
        }
        if (x.out[1]) release(*x.out[1], x.rel[1], end[k] + (x.s2l_after_responses ? latency : 0));
        ++next_start[e];
        ++done;
        progress = true;
      }
    }
    if (!progress) {
      throw Error(
          fmt::format("cycle model: {} of {} instructions can never start (their "
                      "dependency units are never released)",
                      n - done, n));
    }
  }

  CyclePrediction r;
  r.start.assign(program.instructions.size(), 0);
  r.end.assign(program.instructions.size(), 0);
  std::map<int, int64_t> end_of_tag;
  for (size_t k = 0; k < n; ++k) {
    r.start[fetch_index[k]] = start[k];
    r.end[fetch_index[k]] = end[k];
    r.cycles = std::max(r.cycles, end[k]);
    int64_t& e = end_of_tag[instrs[k].tag];
    e = std::max(e, end[k]);
  }
  for (const CompiledOp& op : program.ops) {
    const auto it = end_of_tag.find(op.tag);
    r.op_end.push_back(it == end_of_tag.end() ? 0 : it->second);
  }
  return r;
}

CyclePrediction predict_cycles(const Program& program, const CycleModelOptions& options) {
  std::vector<uint8_t> memory = program.image;
  SimOptions so;
  so.check_dependencies = false;  // the work counts only (programs are checked elsewhere)
  const SimResult sim = IsaSim(program.target).run(memory, so);
  if (!sim.ok()) throw Error(fmt::format("cycle model: the ISA simulator failed: {}", sim.message));
  return predict_cycles(program, sim, options);
}

}  // namespace strata
