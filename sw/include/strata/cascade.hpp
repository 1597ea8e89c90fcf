// SPDX-License-Identifier: Apache-2.0
// Cascade partitioning (docs/cascade.md): a network split into K runs of
// consecutive layers, one per accelerator of a strata_cascade_top chain, each
// compiled into a program of its own; the feature map at each cut crosses the
// cascade link (STORE CASCADE in the stage before, LOAD CASCADE in the stage
// after) instead of external memory.
//
// Cuts lie between fused ops (compiler.hpp, CompiledOp) where exactly one map
// crosses (no shortcut of a residual net spans the cut), the map is written
// to external memory as a [group][row][col] map by the stage before it and
// read whole into a bank by the stage after it (not through the PE caches of
// a fully-connected layer, not in bands). Among the allowed cuts the
// partition minimises the largest stage's predicted cycles (the cycle model,
// strata/cycle_model.hpp, of the stage's layers compiled on their own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/cycle_model.hpp"
#include "strata/isa_sim.hpp"
#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

// A stage of a chain: its layers and its program.
struct ChainStage {
  size_t first_layer = 0, end_layer = 0;  // Network::layers [first, end)
  std::vector<size_t> ops;                // indices into the whole-network program's ops
  int64_t predicted_cycles = 0;           // the cycle model's, per image (see the header)
  Program program;                        // stage 0 reads the images, the last writes outputs
  int transfers_out = 0;                  // STORE CASCADEs per image (0 for the last stage)
};

struct ChainProgram {
  std::string network;
  std::vector<ChainStage> stages;
  std::vector<size_t> cut_candidates;  // op indices o: a cut allowed after op o
  int64_t predicted_total = 0;         // one accelerator, the whole network
  // Throughput bound of the partition: predicted_total / the largest stage.
  double balance_bound() const;
};

// The network [first, end) of `net` as a network of its own (the cut map its
// input). Throws strata::Error when a layer inside reads a layer before
// `first` other than first - 1 (a shortcut across the cut), or one after
// reads a layer before end - 1.
Network slice_network(const Network& net, size_t first, size_t end);

// Splits `net` into `instances` stages (1..4) and compiles each for `target`
// (batch 1: the chain streams images one at a time); `cycles` is the cycle
// model's memory (the predictions the cuts are chosen by). Throws
// strata::Error naming the network when it has fewer allowed cuts than
// instances - 1.
ChainProgram compile_chain(const Network& net, const HwTarget& target, int instances,
                           const CycleModelOptions& cycles = {});

// Runs one image through the chain on the ISA simulator, stage after stage,
// each stage's cascade output the next one's input. The result of the first
// stage that fails is returned with its index in `failed_stage`; the output
// is read from the last stage's memory.
struct ChainSimResult {
  std::vector<SimResult> stages;
  int failed_stage = -1;
  Tensor<int8_t> output;
  bool ok() const { return failed_stage < 0; }
};
ChainSimResult simulate_chain(const ChainProgram& chain, const Tensor<int8_t>& input);

}  // namespace strata
