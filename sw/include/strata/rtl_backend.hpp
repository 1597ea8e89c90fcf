// SPDX-License-Identifier: Apache-2.0
// The RTL backend of the command line (`strata run --backend rtl`, `strata
// bench`): networks and cascade chains run on the Verilated accelerator,
// their performance counters gathered and their outputs checked against the
// golden model. Two libraries implement it: strata_rtl_backend (sim/,
// rtl_backend.cpp) with the Verilated models, and strata_rtl_backend_stub
// (sw/src/rtl_backend_stub.cpp) for a build without them (STRATA_BUILD_RTL=OFF),
// whose built() is false and whose runs are a strata::Error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/bench_report.hpp"
#include "strata/cascade.hpp"
#include "strata/compiler.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata::rtl {

// Options of a run on the Verilated accelerator.
struct Options {
  double stall = 0.0;          // probability of a memory-model stall per channel and cycle
  unsigned latency = 60;       // memory read latency, cycles
  uint64_t seed = 1;           // memory-model stalls, initial X values
  uint64_t timeout = 0;        // cycles before a run counts as hung; 0: from the program
  std::string trace;           // FST file of the (first) run, "" = none
  bool checked_model = false;  // the checked model (assertions, random X) instead of the fast one
};

// Whether this build has the RTL models.
bool built();

// Runs `images` (each [C][H][W]) on the accelerator model of `target`, in
// batches of up to P images, in one scheduling mode (`trace`: write
// options.trace). A run that hangs, stops with an error or trips a bench
// check is a strata::Error naming what happened; the outputs are not checked.
RtlResult run(const Network& net, const HwTarget& target, const std::vector<Tensor<int8_t>>& images,
              const Options& options, bool fine, bool trace);

// A sparse build's dense twin (strata/bench_report.hpp): the dense program's
// work and, when a model of the dense build is built, its run of the same
// images checked against `golden`.
DenseTwin dense_twin(const Network& net, const HwTarget& target, const Program& shape,
                     const std::vector<Tensor<int8_t>>& images,
                     const std::vector<Tensor<int8_t>>& golden, const Options& options, bool fine);

// A strata::Error unless a cascade model of the target's configuration with at
// least `instances` stages is built.
void require_chain_model(const HwTarget& target, int instances);

// The images streamed through `chain` on the cascade model (`strata run
// --instances K --backend rtl`, options.trace honoured): the outputs in image
// order and the cycles. A failed run is a strata::Error.
struct ChainStream {
  std::vector<Tensor<int8_t>> outputs;
  uint64_t cycles = 0;
};
ChainStream stream_chain(const ChainProgram& chain, const HwTarget& target,
                         const std::vector<Tensor<int8_t>>& images, const Options& options,
                         bool fine);

// `strata bench --instances K`: the network split into `instances` stages and
// the images streamed through them, every output checked against `golden`
// (a difference is a MismatchError, a failed run a strata::Error).
ChainMeasure measure_chain(const Network& net, const HwTarget& target, int instances,
                           const std::vector<Tensor<int8_t>>& images,
                           const std::vector<Tensor<int8_t>>& golden, const Options& options,
                           bool fine);

// The line naming the FST file written and how to view it, "" without one.
std::string trace_note(const std::string& trace);

}  // namespace strata::rtl
