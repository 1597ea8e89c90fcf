// SPDX-License-Identifier: Apache-2.0
// The passes of the compiler (docs/compiler.md, "Passes"), one file each under
// sw/src/compiler/; strata::compile (sw/src/compiler.cpp) runs them in this
// order. Each takes what the earlier ones returned and returns new data: none
// changes its inputs (dependencies and dispatch_order take their instructions by
// value, so the pipeline moves them in). The types are those of ir.hpp.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "ir.hpp"

namespace strata::compiler {

// 1. lower.cpp. Takes a validated network with its parameters and returns its
// layers as fused ops: conv/fc + a following pool + clamps, POOL ops, depthwise
// layers in DEPTHWISE mode (or as grouped CONVs), a clamp first as a 1x1 POOL over
// the input map, a large average pool as an identity
// convolution, a copy for a network that computes nothing. Throws strata::Error
// naming the layer for what no op can compute.
std::vector<Op> lower(const Network& net, const HwTarget& t);

// The integer mean of n int8 values as the PE array computes it: acc = weight *
// sum + bias, then requantised with M, S; equal to avg_round(sum, n) for every
// sum of n int8 values (checked exhaustively), or nullopt (lower.cpp).
struct MeanParams {
  int weight = 1;
  int32_t bias = 0;
  uint16_t mult = 1;
  uint8_t shift = 0;
};
std::optional<MeanParams> exact_mean_params(int64_t n);

// 2. plan.cpp. Takes the ops and returns, per op, its destination, input layout
// and geometry as run, parameter and weight placement (resident, or per use /
// streamed), FC tiles and feature orders; and the external parameter and weight
// images in hardware order. Every target limit is checked here (strata::Error
// naming the layer).
Plan plan(const Network& net, const std::vector<Op>& ops, const HwTarget& t,
          const CompileOptions& o);

// 3. emit.cpp. Takes the ops and their plan and returns the LOAD, COMPUTE and
// STORE instructions of `batch` images, each with what it touches, in program
// order (jobs with one job of load prefetch), without dependency fields; and
// where the data sits in external memory, relative to the parameters region.
Emission emit(const std::vector<Op>& ops, const Plan& pl, const HwTarget& t, int batch);

// 4. dependencies.cpp. Takes the instructions in program order and returns them
// with the acq/rel fields of both modes set from what each one touches, and the
// units per edge (released = acquired, checked: an internal error otherwise).
struct Dependencies {
  std::vector<Emit> emits;
  std::array<int64_t, isa::kEdges> units{};
};
Dependencies dependencies(std::vector<Emit> emits);

// 5. dispatch_order.cpp. Takes the instructions with their dependency fields and
// returns them with each COMPUTE moved ahead of the LOADs before it (carried across
// COMPUTEs until one needs them) that its first step does not need. Per-engine order
// is unchanged, so the fields stay exact.
std::vector<Emit> dispatch_order(std::vector<Emit> emits);

// 6. assemble.cpp. Takes everything above and returns the program: CONFIG, the
// instructions with their external addresses relocated past the instructions,
// END, encoded (a value that does not fit its field is a strata::Error naming
// the field and the op); the memory image and its regions; the input and output
// placement; the op descriptions and notes; the dependency units.
Program assemble(const Network& net, const HwTarget& target, int batch, const std::vector<Op>& ops,
                 const Plan& pl, const std::vector<Emit>& emits, const DataLayout& data,
                 const std::array<int64_t, isa::kEdges>& units);

}  // namespace strata::compiler
