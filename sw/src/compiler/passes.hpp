// The passes of the compiler (docs/compiler.md, "Passes"), one file each;
// strata::compile (compiler.cpp) runs them in this order. The types are those
// of ir.hpp.
#pragma once

#include <array>
#include <vector>

#include "ir.hpp"

namespace strata::compiler {

// 1. lower.cpp: the network's layers as fused ops (conv/fc + pool + clamps, POOL
// ops, clamps first as 1x1 POOLs, identity-weight convolutions for large average
// pools). Throws strata::Error naming the layer for what no op can compute.
std::vector<Op> lower(const Network& net, const HwTarget& t);

// 2. plan.cpp: per op its destination, input layout, geometry as run, parameter
// and weight placement (resident or per use / streamed), FC tiles and feature
// orders; the external parameter and weight images. Every target limit is
// checked here (strata::Error naming the layer).
Plan plan(const Network& net, std::vector<Op>& ops, const HwTarget& t, const CompileOptions& o);

// 3. emit.cpp: the instructions (with what each touches) of `batch` images in
// program order, one job of load prefetch, and where the data sits in external
// memory (relative to the parameters region).
Emission emit(const std::vector<Op>& ops, const Plan& pl, const HwTarget& t, int batch);

// 4. dependencies.cpp: the acq/rel fields of both modes of every instruction;
// returns the units per edge (released = acquired).
std::array<int64_t, isa::kEdges> dependencies(std::vector<Emit>& emits);

// 5. dispatch_order.cpp: each COMPUTE moved ahead of the LOADs before it that its
// first step does not need.
void dispatch_order(std::vector<Emit>& emits);

// 6. assemble.cpp: CONFIG, the instructions with their external addresses
// relocated past the instructions, END, encoded (a value that does not fit its
// field is a strata::Error naming the field and the op); the memory image, its
// regions, the input and output placement, the op descriptions and notes.
Program assemble(const Network& net, const HwTarget& target, int batch,
                 const std::vector<Op>& ops, const Plan& pl, const std::vector<Emit>& emits,
                 const DataLayout& data, const std::array<int64_t, isa::kEdges>& units);

}  // namespace strata::compiler
