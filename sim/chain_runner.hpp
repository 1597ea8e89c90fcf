// SPDX-License-Identifier: Apache-2.0
// Runs a cascade chain (strata/cascade.hpp, docs/cascade.md) on a Verilated
// strata_cascade_top: four stages of the build's default configuration, or
// of a configuration of the CMake option STRATA_CHAIN_CONFIGS (e.g.
// config/p4n4.yaml, whose two-stage cascade is placed and routed on the
// LFE5U-85F), each stage with its own C++ AXI4 memory model
// (axi_mem_model.hpp) and AXI4-Lite CSR driver (axil_driver.hpp), the links
// between them inside the RTL. A chain of K < 4 stages uses stages
// 0 .. K-1; the others stay idle.
//
// A stream of images goes through the chain the way a host would drive it:
// each stage runs its program once per image and is started again as soon
// as it has finished (its interrupt), the stages from the last to the first
// when several are idle, stage 0 with the next image written into its input
// region; the last stage's output is read after each of its runs. The
// transfers of image i + 1 wait in the links (back-pressure) until the next
// stage is started for it. When a stage stops with an error (chain_stop_o,
// seen in every cycle), no stage is started again; the others stop with
// CHAIN_STOP (or finish their run), a stage still waiting once the chain has
// been quiet for 20,000 cycles is aborted with START (BUSY_START), and the
// report names the stage whose own error stopped the chain. A stream ends
// with every stage idle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accel_runner.hpp"
#include "strata/cascade.hpp"
#include "strata/csr_map.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {

struct ChainRunnerOptions {
  RunnerOptions run;        // seed, read latency, memory stalls, mode, timeout, trace
  double link_stall = 0.0;  // probability per link and cycle that the link holds (link_hold_i)
};

// One stage's share of a stream.
struct StageReport {
  int runs = 0;                                  // runs finished (interrupts)
  csr::ErrorCode error = csr::ErrorCode::kNone;  // of its last run
  uint16_t error_index = 0;
  PerfCounts counters{};  // summed over its runs (read over AXI4-Lite)
};

struct ChainReport {
  bool finished = false;                          // every stage done or stopped before the timeout
  uint64_t cycles = 0;                            // first START to the last stage's last interrupt
  std::vector<uint64_t> image_start, image_done;  // per image: stage 0 START, last stage done
  std::vector<StageReport> stages;
  int failed_stage = -1;  // the stage whose own error stopped the chain, or -1
  csr::ErrorCode error = csr::ErrorCode::kNone;  // its error
  uint16_t error_index = 0;
  std::vector<std::string> bench_errors;  // AXI protocol, CSR responses, RTL assertions
  bool ok() const { return finished && failed_stage < 0 && bench_errors.empty(); }
};

class ChainRunner {
 public:
  static constexpr int kStages = 4;  // strata_cascade_top's K in every cascade model

  // The model of `target`'s configuration; throws strata::Error
  // (missing_model_message) when there is none.
  explicit ChainRunner(const ChainRunnerOptions& options = {},
                       const HwTarget& target = HwTarget::defaults());
  ~ChainRunner();
  ChainRunner(const ChainRunner&) = delete;
  ChainRunner& operator=(const ChainRunner&) = delete;

  // Whether a cascade model of `target`'s hardware is built, and its stages
  // (0 when none is).
  static bool built_for(const HwTarget& target);
  static int stages_built_for(const HwTarget& target);
  // "name (K stages)" of each built cascade model, the default first.
  static std::vector<std::string> built_configurations();
  // Why there is no cascade model of `target`: a configuration of the build
  // whose model this executable does not link is named by its file, with how
  // to build it; another one, with the CMake option that adds it.
  static std::string missing_model_message(const HwTarget& target);
  int stages() const;  // this model's K

  // Streams `inputs` through `chain` (see the header); outputs, one per image
  // that left the last stage, go to `outputs`.
  ChainReport run_stream(const ChainProgram& chain, const std::vector<Tensor<int8_t>>& inputs,
                         std::vector<Tensor<int8_t>>& outputs);

  // Failure injection: bytes [begin, end) of stage `stage`'s memory answer SLVERR.
  void add_read_error(int stage, uint64_t begin, uint64_t end);
  void clear_errors();

  // A Verilated cascade and its agents (chain_model.hpp).
  class Model {
   public:
    virtual ~Model() = default;
    virtual int stages() const = 0;
    virtual ChainReport run_stream(const ChainProgram& chain,
                                   const std::vector<Tensor<int8_t>>& inputs,
                                   std::vector<Tensor<int8_t>>& outputs) = 0;
    virtual void add_read_error(int stage, uint64_t begin, uint64_t end) = 0;
    virtual void clear_errors() = 0;
  };

 private:
  std::unique_ptr<Model> impl_;
  HwTarget target_;  // the model's configuration
};

}  // namespace strata::tb
