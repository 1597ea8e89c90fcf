// SPDX-License-Identifier: Apache-2.0
// Pass 4, dependencies (passes.hpp): the acq/rel fields of both modes from what
// each instruction touches (docs/compiler.md, "Dependency emission").
#include <fmt/format.h>

#include <algorithm>

#include "passes.hpp"
#include "strata/error.hpp"

namespace strata::compiler {

using isa::Edge;
using isa::Engine;

namespace {

bool releases_per_step(Edge e) { return e == Edge::kL2C || e == Edge::kC2S || e == Edge::kS2C; }

}  // namespace

// For every instruction and each of its incoming edges: the earlier
// instructions of the producing engine that conflict with it (touch a word it
// touches, one of the two writing), after the last one an earlier consumer
// already waited for. Each of them releases its units on the edge (rel0 edges:
// one per row; rel1 edges: one) and this instruction acquires them all.
// Fine-grained: the units the consumer's first step needs, then the most any
// later step needs per step.
Dependencies dependencies(std::vector<Emit> emits) {
  std::array<int64_t, isa::kEdges> covered;
  covered.fill(-1);
  std::array<int64_t, isa::kEdges> units{};
  for (size_t i = 0; i < emits.size(); ++i) {
    Emit& consumer = emits[i];
    const isa::EdgeSlots slots = isa::edge_slots(opcode_of(consumer.instr));
    for (int which = 0; which < 2; ++which) {
      const std::optional<Edge> slot = which == 0 ? slots.acq0 : slots.acq1;
      if (!slot) continue;
      const int e = static_cast<int>(*slot);
      const Engine producer = isa::edge_producer(*slot);
      int64_t jmax = -1;
      for (int64_t j = static_cast<int64_t>(i) - 1; j > covered[e]; --j) {
        if (emits[j].engine == producer && conflict(emits[j], consumer)) {
          jmax = j;
          break;
        }
      }
      if (jmax < 0) continue;
      // Every producer in (covered, jmax] that conflicts releases its units;
      // the consumer acquires all of them.
      isa::Header& h = header_of(consumer.instr);
      std::vector<int64_t> need(consumer.steps.size(), 0);
      int64_t count = 0;
      for (int64_t j = covered[e] + 1; j <= jmax; ++j) {
        Emit& prod = emits[j];
        if (prod.engine != producer || !conflict(prod, consumer)) continue;
        const int64_t n_units =
            releases_per_step(*slot) ? static_cast<int64_t>(prod.units.size()) : 1;
        const isa::EdgeSlots pslots = isa::edge_slots(opcode_of(prod.instr));
        isa::Header& ph = header_of(prod.instr);
        (pslots.rel0 == slot ? ph.rel0 : ph.rel1) = n_units;
        // Fine-grained: the first consumer step that touches the data of
        // each producer unit needs the units up to that one.
        if (which == 0 && consumer.engine != Engine::kLoad && releases_per_step(*slot)) {
          for (size_t u = 0; u < prod.units.size(); ++u) {
            for (size_t s = 0; s < consumer.steps.size(); ++s) {
              bool hit = false;
              for (const Touch& t : consumer.steps[s]) {
                for (const Span& w : prod.units[u]) hit = hit || overlap(t.span, w);
              }
              if (hit) {
                need[s] = std::max(need[s], count + static_cast<int64_t>(u) + 1);
                break;
              }
            }
          }
        }
        count += n_units;
      }
      if (which == 1) {
        h.acq1 = count;
      } else {
        h.acq0 = count;
        h.acq0_first = count;
        h.acq0_step = 0;
        if (consumer.engine != Engine::kLoad && !need.empty()) {
          for (size_t s = 1; s < need.size(); ++s) need[s] = std::max(need[s], need[s - 1]);
          const int64_t first = need[0];
          int64_t step = 0;
          for (size_t s = 1; s < need.size(); ++s) {
            step = std::max<int64_t>(step, ceil_div(need[s] - first, static_cast<int64_t>(s)));
          }
          h.acq0_first = first;
          h.acq0_step = std::min(step, count);
        }
      }
      covered[e] = jmax;
      units[e] += count;
    }
  }
  // Every unit released is acquired, edge by edge (checked from the headers).
  std::array<int64_t, isa::kEdges> released{}, acquired{};
  for (Emit& em : emits) {
    const isa::EdgeSlots s = isa::edge_slots(opcode_of(em.instr));
    const isa::Header& h = header_of(em.instr);
    if (s.acq0) acquired[static_cast<int>(*s.acq0)] += h.acq0;
    if (s.acq1) acquired[static_cast<int>(*s.acq1)] += h.acq1;
    if (s.rel0) released[static_cast<int>(*s.rel0)] += h.rel0;
    if (s.rel1) released[static_cast<int>(*s.rel1)] += h.rel1;
  }
  for (int e = 0; e < isa::kEdges; ++e) {
    if (released[e] != acquired[e] || released[e] != units[e]) {
      throw Error(fmt::format("internal: dependency edge {} releases {} units but acquires {}",
                              isa::edge_name(Edge(e)), released[e], acquired[e]));
    }
  }
  return {std::move(emits), units};
}

}  // namespace strata::compiler
