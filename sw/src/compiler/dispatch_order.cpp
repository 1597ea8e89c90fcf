// Pass 5, dispatch order (passes.hpp): each COMPUTE moved ahead of the LOADs its
// first step does not need (docs/compiler.md, "Program order").
#include "passes.hpp"

namespace strata::compiler {

using isa::Engine;

// The fetcher dispatches in program order into short per-engine queues, so a
// COMPUTE behind a long run of LOADs (a layer's input rows, the next job's
// prefetch) reaches its engine only when most of those loads have been
// taken. Each COMPUTE is moved ahead of the LOADs immediately before it that
// its first step does not need: the L2C units released by the LOADs left in
// front of it cover every earlier COMPUTE's acquisitions plus its own
// `acq0_first`. The moved-over LOADs follow it at once. Acquisitions and
// releases count units per engine in per-engine order, which this does not
// change, so the headers computed in program order stay exact; none of the
// moved-over LOADs waits for the COMPUTE (a producer always precedes its
// consumer), so no queue can block the fetcher in front of a LOAD a waiting
// instruction needs.
std::vector<Emit> dispatch_order(std::vector<Emit> emits) {
  std::vector<Emit> out;
  out.reserve(emits.size());
  std::vector<Emit> run;  // LOADs not yet placed, in program order
  int64_t released = 0;   // L2C units of the LOADs placed
  int64_t acquired = 0;   // L2C units of the COMPUTEs placed
  auto place_load = [&](Emit& e) {
    released += header_of(e.instr).rel0;  // LOAD rel0 = L2C
    out.push_back(std::move(e));
  };
  for (Emit& e : emits) {
    if (e.engine == Engine::kLoad) {
      run.push_back(std::move(e));
      continue;
    }
    size_t k = 0;
    if (e.engine == Engine::kCompute) {
      const isa::Header& h = header_of(e.instr);  // COMPUTE acq0 = L2C
      while (k < run.size() && released < acquired + h.acq0_first) place_load(run[k++]);
      acquired += h.acq0;
    }
    out.push_back(std::move(e));
    for (; k < run.size(); ++k) place_load(run[k]);
    run.clear();
  }
  for (Emit& e : run) place_load(e);
  return out;
}

}  // namespace strata::compiler
