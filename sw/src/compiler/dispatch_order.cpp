// SPDX-License-Identifier: Apache-2.0
// Pass 5, dispatch order (passes.hpp): each COMPUTE moved ahead of the LOADs its
// first step does not need (docs/compiler.md, "Program order").
#include "passes.hpp"

namespace strata::compiler {

using isa::Engine;

// The fetcher dispatches in program order into short per-engine queues, so a
// COMPUTE behind a long run of LOADs (a layer's input rows, the next job's
// prefetch) reaches its engine only when most of those loads have been
// taken. Each COMPUTE is moved ahead of the LOADs before it that its first
// step does not need: the L2C units released by the LOADs left in front of it
// cover every earlier COMPUTE's acquisitions plus its own `acq0_first`. The
// LOADs moved over stay in the run for the COMPUTEs that follow (a layer's
// later weight passes, which need no new unit, go ahead of the next layer's
// prefetch too) and are placed where a COMPUTE needs them or before the next
// instruction of another engine. Acquisitions and releases count units per
// engine in per-engine order, which this does not change, so the headers
// computed in program order stay exact. No queue can block the fetcher in
// front of a LOAD a waiting instruction needs: every unit a placed COMPUTE
// acquires (all its steps) is released by LOADs placed before the next
// COMPUTE, and none of the moved-over LOADs waits for a COMPUTE placed after
// it (a producer always precedes its consumer, and COMPUTEs only move
// earlier).
std::vector<Emit> dispatch_order(std::vector<Emit> emits) {
  std::vector<Emit> out;
  out.reserve(emits.size());
  std::vector<Emit> run;  // LOADs not yet placed, in program order
  size_t next = 0;        // the first of them
  int64_t released = 0;   // L2C units of the LOADs placed
  int64_t acquired = 0;   // L2C units of the COMPUTEs placed
  auto place_load = [&]() {
    released += header_of(run[next].instr).rel0;  // LOAD rel0 = L2C
    out.push_back(std::move(run[next++]));
  };
  auto place_run = [&]() {
    while (next < run.size()) place_load();
    run.clear();
    next = 0;
  };
  for (Emit& e : emits) {
    if (e.engine == Engine::kLoad) {
      run.push_back(std::move(e));
      continue;
    }
    if (e.engine == Engine::kCompute) {
      const isa::Header& h = header_of(e.instr);  // COMPUTE acq0 = L2C
      while (next < run.size() && released < acquired + h.acq0_first) place_load();
      acquired += h.acq0;
      out.push_back(std::move(e));
      continue;
    }
    place_run();
    out.push_back(std::move(e));
  }
  place_run();
  return out;
}

}  // namespace strata::compiler
