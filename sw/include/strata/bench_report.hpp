// SPDX-License-Identifier: Apache-2.0
// What `strata bench` and `strata run --backend rtl` report about runs on the
// accelerator: the results of the runs (filled by the RTL backend,
// strata/rtl_backend.hpp), their comparison with the golden model, and the
// tables and JSON rendered from them (docs/cli.md, strata bench). No
// Verilator: the renderers take the figures, whoever measured them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/cascade.hpp"
#include "strata/compiler.hpp"
#include "strata/error.hpp"
#include "strata/hw_target.hpp"
#include "strata/network.hpp"
#include "strata/perf_counts.hpp"
#include "strata/tensor.hpp"

namespace strata {

// An output that differs from the golden model's (the command's exit status 3).
struct MismatchError : Error {
  using Error::Error;
};

// What one scheduling mode gave, summed over the runs (one per batch of up to P images).
struct RtlResult {
  bool fine = true;
  int64_t runs = 0;
  std::vector<Tensor<int8_t>> outputs;    // per image, each network output in order
  std::vector<std::string> output_names;  // the network's output layers
  PerfCounts counters{};                  // the CSR performance counters
  std::vector<PerfCounts> per_op;         // trace port split, per program op
  std::vector<OpWork> work;               // compiler figures, per program op
  double seconds = 0.0;                   // host time of the simulation
  std::string model;                      // "fast" or "checked" (sim/CMakeLists.txt)
  int64_t mismatches = 0;                 // elements that differ from the golden model
  std::string first_mismatch;             // where the first one is
};

// The golden model's outputs of each image, image by image and, per image,
// every network output in order (the order the RTL runs give them).
std::vector<Tensor<int8_t>> golden_outputs(const Network& net,
                                           const std::vector<Tensor<int8_t>>& images);

// Compares every element of res.outputs with `golden` (both as golden_outputs
// orders them) and sets res.mismatches and res.first_mismatch; outputs of
// another count or shape are a strata::Error.
void check_against_golden(RtlResult& res, const std::vector<Tensor<int8_t>>& golden);

// sum += w, field by field.
void add_work(OpWork& sum, const OpWork& w);

// Elements of all the tensors.
int64_t element_count(const std::vector<Tensor<int8_t>>& tensors);

// Useful MACs / (P * N * cycles); 0 for no cycles.
double utilisation(int64_t macs, const HwTarget& t, uint64_t cycles);

// The per-op work of running `images` images in runs of up to P images, as the
// RTL backend runs them: the compiled programs' figures, summed.
std::vector<OpWork> program_work(const Network& net, const HwTarget& target, size_t images);

// The cycle model's prediction (docs/planner.md, "Cycles") of running `images`
// images in runs of up to P images, one after another.
int64_t predicted_cycles(const Network& net, const HwTarget& target, size_t images,
                         unsigned latency, bool fine);

// A sparse build's comparison: the dense program of the same weights (every
// CONV unpacked) on the dense build of the same hardware (sparse: false).
struct DenseTwin {
  HwTarget target;               // this configuration with sparse: false
  std::string model;             // its built model, "" when none is built
  std::vector<OpWork> work;      // the dense program's work per op, all images
  std::optional<RtlResult> run;  // its RTL run in the main mode, when built
};

// The memory model and scheduling a bench ran with.
struct BenchSetup {
  std::string parameters;  // where the parameters came from
  std::string images;      // where the images came from
  std::string modes;       // as requested: fine, completion or both
  unsigned latency = 60;   // memory read latency, cycles
  double stall = 0.0;      // memory stall probability per channel and cycle
  uint64_t seed = 1;
};

// `strata bench` on one accelerator: every mode's run of the same images.
struct BenchReport {
  const Network& net;
  const HwTarget& target;
  const Program& shape;  // the op list (the same for every batch)
  BenchSetup setup;
  int64_t images = 0;
  std::vector<RtlResult> results;  // per mode run, the main mode first
  std::vector<int64_t> predicted;  // the cycle model's cycles of each result
  std::optional<DenseTwin> twin;   // sparse builds
};

nlohmann::ordered_json bench_json(const BenchReport& r);
// The tables (docs/cli.md, strata bench), without the trace note.
std::string bench_table(const BenchReport& r);
// The first mismatch of the runs as an error message, "" when every output matched.
std::string bench_mismatch(const BenchReport& r);

// The one-line summary of `strata run --backend rtl`.
std::string rtl_run_summary(const Network& net, const HwTarget& target, const RtlResult& res,
                            int64_t images, unsigned latency, double stall);

// ---- cascade chains (docs/cascade.md) ------------------------------------------

// The partition: each stage's layers, ops, predicted cycles and transfers.
std::string chain_partition(const ChainProgram& chain, const Network& net);

// One stream of the images through a chain of `instances` accelerators.
struct ChainMeasure {
  int instances = 0;
  ChainProgram chain;
  uint64_t cycles = 0;                            // first START to the last output
  std::vector<uint64_t> image_start, image_done;  // per image
  std::vector<uint64_t> stage_busy;               // per stage: its PERF_CYCLES, summed
  int64_t mismatches = 0;
  double seconds = 0.0;
};

// `strata bench --instances K`: one accelerator and, for K > 1, the chain.
struct ChainBenchReport {
  const Network& net;
  const HwTarget& target;
  BenchSetup setup;
  bool fine = true;
  int64_t images = 0;
  int64_t checked_elements = 0;        // output elements of each run compared
  std::vector<ChainMeasure> measures;  // K = 1 first
};

nlohmann::ordered_json chain_bench_json(const ChainBenchReport& r);
std::string chain_bench_table(const ChainBenchReport& r);

}  // namespace strata
