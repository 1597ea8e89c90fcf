// Runs compiled Strata programs on the Verilated accelerator (strata_top):
// the external memory is the C++ AXI4 memory model (tb/common/axi_mem_model.hpp,
// default 60-cycle read latency, one beat per cycle), the CPU side is the
// AXI4-Lite driver (tb/common/axil_driver.hpp). Used by the whole-network
// benches (tb/network/) and by `strata run --backend rtl`.
//
// One AccelRunner owns one VerilatedContext and one model for its lifetime;
// runs may follow each other (the accelerator is left ready for the next
// start, which the robustness tests rely on).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/csr_map.hpp"
#include "strata/tensor.hpp"

namespace strata::tb {

struct RunnerOptions {
  uint64_t seed = 1;              // memory-model stalls, initial X values
  unsigned read_latency = 60;     // AXI read latency (cycles)
  double stall = 0.0;             // probability of random AR/AW/W/R/B stalls per cycle
  bool fine_grain = false;        // CTRL.FINE_GRAIN
  uint64_t timeout = 20000000;    // cycles before a run is declared hung
  std::string trace_path;         // FST file ("" = no trace)
};

// What a run reports: completion, error status and the performance counters.
struct RunReport {
  bool finished = false;          // the interrupt arrived before the timeout
  uint32_t status = 0;            // STATUS register
  csr::ErrorCode error = csr::ErrorCode::kNone;
  uint16_t error_index = 0;       // instruction that failed
  uint64_t cycles = 0;            // bench cycles from START to the interrupt
  std::vector<uint64_t> counters; // csr::kPerfCounters order
  uint64_t counter(uint32_t offset) const;
};

class AccelRunner {
 public:
  explicit AccelRunner(const RunnerOptions& options = {});
  ~AccelRunner();
  AccelRunner(const AccelRunner&) = delete;
  AccelRunner& operator=(const AccelRunner&) = delete;

  // Loads `memory` (program image; instructions at byte 0) into the memory
  // model, starts the program, waits for the interrupt (or the timeout) and
  // returns the report; the memory model then holds the results.
  RunReport run(const std::vector<uint8_t>& memory, uint32_t instr_count);

  // Writes the inputs, runs, reads the outputs (one per input image).
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::tb
