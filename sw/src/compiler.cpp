// SPDX-License-Identifier: Apache-2.0
// The compiler (compiler.hpp, docs/compiler.md): the pipeline of the passes of
// compiler/passes.hpp, one file each under compiler/:
//   1. lower()          network layers -> fused ops (conv/fc + pool + clamps, POOL ops)
//   2. plan()           on-chip allocation (PE caches, parameter RAM) and the external
//                       parameter and weight images in hardware order
//   3. emit()           jobs (loads, one compute, stores) per image, pass and tile, put
//                       in program order with one job of load prefetch
//   4. dependencies()   acq/rel counts of both modes from what each instruction touches
//   5. dispatch_order() each COMPUTE moved ahead of the LOADs its first step does not need
//   6. assemble()       relocation, encoding, the memory image and the I/O description
// The program's I/O and reports (write_input, read_output, listing, ...) are in
// compiler/program_io.cpp.
#include "strata/compiler.hpp"

#include <fmt/format.h>

#include "compiler/passes.hpp"
#include "strata/error.hpp"

namespace strata {

const MemRegion& Program::region(const std::string& name) const {
  for (const MemRegion& r : regions) {
    if (r.name == name) return r;
  }
  throw Error(fmt::format("the program has no memory region '{}'", name));
}

Program compile(const Network& net, const HwTarget& target, const CompileOptions& options) {
  target.validate();
  if (options.batch < 1 || options.batch > target.pes) {
    throw Error(fmt::format("batch {} is outside 1..{} (P: fully-connected layers run one image "
                            "per PE)",
                            options.batch, target.pes),
                ErrorContext{net.source_file, 0, ""});
  }
  for (const Layer& l : net.layers) {
    if (l.has_weights() && (l.weights.empty() || l.bias.empty())) {
      throw Error("parameters not loaded (network read with load_weights = false)",
                  ErrorContext{net.source_file, l.line, l.name});
    }
  }
  const std::vector<compiler::Op> ops = compiler::lower(net, target);
  const compiler::Plan plan = compiler::plan(net, ops, target, options);
  compiler::Emission emission = compiler::emit(ops, plan, target, options.batch);
  compiler::Dependencies deps = compiler::dependencies(std::move(emission.emits));
  const std::vector<compiler::Emit> emits = compiler::dispatch_order(std::move(deps.emits));
  return compiler::assemble(net, target, options.batch, ops, plan, emits, emission.data,
                            deps.units);
}

}  // namespace strata
