// SPDX-License-Identifier: Apache-2.0
// Predicted cycles of a program (docs/planner.md, "Cycles"): a timing model
// of the accelerator at instruction level. The fetcher dispatches the
// instructions in order into the three engines' queues (QueueDepth entries
// each); each engine runs its own in order; the five semaphores hold an
// instruction until its units are released, by the rules of the scheduling
// mode (CycleModelOptions::fine_grained; completion-granular: acquire
// before the start, release at the end, a STORE's S2L units once its write
// responses are in; fine-grained: step by step, docs/isa.md). An
// instruction's duration comes from its work as
// the ISA simulator counts it (PE-array beats, pooled words, external bytes)
// plus fixed costs per instruction and per transfer, calibrated against the
// RTL (docs/planner.md gives the constants and the accuracy).
#pragma once

#include <cstdint>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/isa_sim.hpp"

namespace strata {

struct CycleModelOptions {
  int mem_latency = 60;          // external read latency (cycles), the bench's memory model
  double beats_per_cycle = 1.0;  // external bandwidth in AXI beats per cycle (the bench: 1)
  // CTRL.FINE_GRAIN: fine-grained scheduling (consumers start on the first
  // rows they need), as strata_top runs by default; false: completion-granular.
  bool fine_grained = true;
};

struct CyclePrediction {
  int64_t cycles = 0;               // START to the run's end
  std::vector<int64_t> start, end;  // per instruction (fetch order): when it ran
  std::vector<int64_t> op_end;      // per program op: when its last instruction ends
};

// `sim`: a run of `program` on the ISA simulator (its per-instruction work).
// Throws strata::Error when the dependencies cannot all be met (a program
// that would hang).
CyclePrediction predict_cycles(const Program& program, const SimResult& sim,
                               const CycleModelOptions& options = {});

// The same, running `program` on the ISA simulator first for its work (on a
// copy of its image). Throws strata::Error when the simulator reports an error.
CyclePrediction predict_cycles(const Program& program, const CycleModelOptions& options = {});

}  // namespace strata
