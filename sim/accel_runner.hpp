// SPDX-License-Identifier: Apache-2.0
// Runs compiled Strata programs on the Verilated accelerator (strata_top)
// through the driver library strata_rt (sw/rt, docs/board.md): the model is
// a hardware-access layer (strata_hal) whose registers are reached over the
// AXI4-Lite driver (sim/axil_driver.hpp), whose device memory is the C++
// AXI4 memory model (sim/axi_mem_model.hpp, default 60-cycle read latency,
// one beat per cycle), and whose wait for the interrupt steps the clock. A
// program runs from its bundle (strata/bundle.hpp), placed at
// RunnerOptions::load_address, exactly as firmware on a board runs it. Used
// by the whole-network benches (tb/network/) and by `strata run --backend
// rtl` / `strata bench`; it needs no test framework (failed bench checks land
// in RunReport).
//
// Every cycle the runner samples strata_top's debug trace port and splits
// what the performance counters count by layer (instruction tag): a cycle
// belongs to the layer of the COMPUTE instruction that retires next in
// program order (after the last COMPUTE: to that COMPUTE's layer, so the final
// STOREs and END belong to the last layer). The per-layer sums therefore add
// up to the counters exactly; RunReport::trace_total is that sum.
//
// One AccelRunner owns one VerilatedContext and one model for its lifetime;
// runs may follow each other (the accelerator is left ready for the next
// start, which the robustness tests rely on).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/csr_map.hpp"
#include "strata/hw_target.hpp"
#include "strata/perf_counts.hpp"
#include "strata/tensor.hpp"
#include "strata_rt.h"

namespace strata::tb {

struct RunnerOptions {
  uint64_t seed = 1;            // memory-model stalls, initial X values
  unsigned read_latency = 60;   // AXI read latency (cycles)
  double stall = 0.0;           // probability of random AR/AW/W/R/B stalls per cycle
  bool fine_grain = false;      // CTRL.FINE_GRAIN
  uint64_t timeout = 20000000;  // cycles before a run is declared hung
  std::string trace_path;       // FST file ("" = no trace)
  bool checked = true;          // the checked model (assertions, random X values); false:
                                // the fast one where the configuration has it (sim/CMakeLists.txt)
  uint64_t load_address = uint64_t{1} << 28;  // where run_program places a program's block
};

// The counters' value type and index (strata/perf_counts.hpp).
using strata::perf_index;
using strata::perf_slot;
using strata::PerfCounts;

// What the trace port showed for one layer (instruction tag) of a run.
struct LayerCounts {
  int tag = 0;            // header tag of its COMPUTE instructions
  PerfCounts counts{};    // the counters' per-cycle terms summed over the layer's cycles
  uint64_t computes = 0;  // COMPUTE instructions of the layer that retired
  uint64_t get(uint32_t offset) const { return counts[perf_index(offset)]; }
};

// What a run reports: completion, error status and the performance counters.
struct RunReport {
  bool finished = false;  // the interrupt arrived before the timeout
  uint32_t status = 0;    // STATUS register
  csr::ErrorCode error = csr::ErrorCode::kNone;
  uint16_t error_index = 0;               // instruction that failed
  uint64_t cycles = 0;                    // bench cycles from START to the interrupt
  std::vector<uint64_t> counters;         // csr::kPerfCounters order, read over AXI4-Lite
  std::vector<LayerCounts> layers;        // per tag, in order of the first COMPUTE of each
  PerfCounts trace_total{};               // sum of `layers` (all counted cycles)
  std::vector<std::string> bench_errors;  // AXI protocol, CSR responses, RTL assertions,
                                          // trace port out of order (empty when clean)
  uint64_t counter(uint32_t offset) const;
};

class AccelRunner {
 public:
  // The model of the configuration the build's RTL package describes
  // (config/default.yaml), or of `target` when a model was built for it;
  // a target without a built model is a strata::Error (missing_model_message).
  explicit AccelRunner(const RunnerOptions& options = {});
  AccelRunner(const HwTarget& target, const RunnerOptions& options);
  ~AccelRunner();
  AccelRunner(const AccelRunner&) = delete;
  AccelRunner& operator=(const AccelRunner&) = delete;

  // Names of the hardware configurations with a built model ("default", ...).
  static std::vector<std::string> built_configurations();
  // The name of a built model of `target`'s hardware (any name), "" if none.
  static std::string built_model_of(const HwTarget& target);
  // Why there is no model of `target` (of the checked kind if `checked`) to
  // run: a configuration of the build whose model this executable does not
  // link (as in a build configured for `make demo`) is named by its file,
  // with how to build it; another one, with the CMake option that adds it.
  static std::string missing_model_message(const HwTarget& target, bool checked);

  // Which model runs: "checked" or "fast" (sim/CMakeLists.txt).
  const std::string& model_kind() const { return model_kind_; }

  // Loads `memory` (a program image, instructions at byte 0) into the memory
  // model at address 0, starts it (strata_start), waits for the interrupt or
  // the timeout (strata_wait, which aborts a run that times out) and returns
  // the report; the memory model then holds the results.
  RunReport run(const std::vector<uint8_t>& memory, uint32_t instr_count);

  // Runs the program from its bundle: strata_load at options.load_address,
  // then the inputs written, the run, the outputs read by the driver library:
  // per input image, each network output in order (image i's output j at
  // i * program.outputs.size() + j).
  RunReport run_program(const Program& program, const std::vector<Tensor<int8_t>>& inputs,
                        std::vector<Tensor<int8_t>>& outputs);

  // External memory after the last run (`size` bytes from address 0).
  std::vector<uint8_t> memory(uint64_t size) const;

  // Failure injection for robustness tests: bytes [begin, end) answer SLVERR.
  void add_read_error(uint64_t begin, uint64_t end);
  void add_write_error(uint64_t begin, uint64_t end);
  void clear_errors();

  // Starts a program and writes CTRL.START again `after` cycles later (while busy).
  RunReport run_with_second_start(const std::vector<uint8_t>& memory, uint32_t instr_count,
                                  uint64_t after);

  // AXI protocol violations the memory model detected so far.
  int protocol_errors() const;
  // Configuration registers as read over AXI4-Lite.
  uint32_t read_csr(uint32_t offset);

  // The model's interface, one implementation per built configuration
  // (accel_model.hpp).
  class Model;

 private:
  // Starts the program at `base` through the driver and waits for its end;
  // `second_start`: write CTRL.START again that many cycles after the start.
  RunReport execute(uint64_t base, uint32_t instr_count, const uint8_t* program,
                    std::optional<uint64_t> second_start);

  RunnerOptions opts_;
  std::unique_ptr<Model> impl_;
  std::string model_kind_;
  std::unique_ptr<strata_device> dev_;  // the driver's view of the model
};

}  // namespace strata::tb
