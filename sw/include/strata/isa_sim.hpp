// SPDX-License-Identifier: Apache-2.0
// Functional simulator of the Strata ISA (docs/isa.md): the reference the RTL
// accelerator is compared with, instruction by instruction.
//
// IsaSim executes a program from a byte image of external memory with models
// of the banks, PE caches and parameter RAM, using the numerics.hpp rules
// (bias, requantisation, clamp, pooling with the valid-element rules; int32
// partial sums across passes with acc_in / acc_out, docs/isa.md). It
// executes in program order, then checks the dependency bookkeeping on a
// model of the three engines' queues and the five semaphores, in both modes:
//   - deadlock: every engine waiting for units that can never arrive;
//   - races: every pair of accesses to the same word by two engines, one of
//     them a write, must be ordered by the semaphores (happens-before through
//     the acquired units), step by step in fine-grained mode. A STORE's
//     external writes are done only when its S2L units are released (its S2C
//     units and its finish come earlier), so a LOAD of stored bytes is
//     ordered only through S2L (docs/isa.md, Dependencies).
// Decode and range errors stop the run with the error codes of
// config/registers.yaml and the index of the failing instruction.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "strata/compiler.hpp"
#include "strata/hw_target.hpp"
#include "strata/isa.hpp"
#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

// ERROR_CODE.CODE values (config/registers.yaml, error_codes).
enum class SimError : uint8_t {
  kNone = 0,
  kIllegalInstr = 1,
  kUnsupported = 2,
  kAxiRead = 3,
  kAxiWrite = 4,
  kBusyStart = 5,
  kNoEnd = 6,
  kDeadlock = 7,
  kCascade = 8,
  kChainStop = 9,
};
const char* sim_error_name(SimError e);  // "ILLEGAL_INSTR", ... as in registers.yaml

// One transfer on a cascade link (docs/cascade.md): the bytes of one STORE
// CASCADE, with its link id.
struct CascadeTransfer {
  uint16_t link_id = 0;
  std::vector<uint8_t> bytes;
};

struct SimOptions {
  uint64_t instr_base = 0;             // INSTR_BASE (64-byte aligned)
  uint32_t instr_limit = 0xFFFFFFFFu;  // INSTR_LIMIT: most instructions fetched without END
  bool fine_grain = false;             // CTRL.FINE_GRAIN: the mode whose deadlock is an error
  bool check_dependencies = true;      // run the engine/semaphore model (both modes) and execute
                                       // in an order the semaphores allow (false: program order)
  int queue_depth = 4;                 // instructions each engine's queue holds (>= 1)
  uint64_t onchip_seed = 0;            // initial banks/caches/params: 0 = zeros, else seeded noise
  // Cascade link (a chain runs its stages one after the other, each stage's
  // output the next one's input): a LOAD CASCADE takes the front transfer of
  // cascade_in (none there, or none connected: error CASCADE, where the
  // hardware would wait); a STORE CASCADE appends to cascade_out (none
  // connected: the bytes are dropped, as by a tied-off output port).
  std::deque<CascadeTransfer>* cascade_in = nullptr;
  std::vector<CascadeTransfer>* cascade_out = nullptr;
};

// Two accesses to the same word by different engines, at least one a write,
// that the semaphores do not order.
struct Race {
  std::string kind;      // "RAW", "WAR" or "WAW"
  std::string memory;    // "bank 2", "pe 5 cache", "param", "external"
  uint64_t address = 0;  // word (bank, cache), channel (param) or byte (external)
  int64_t first = 0;     // instruction index of the earlier access (program order)
  int64_t second = 0;    // instruction index of the later access
};

// Outcome of the engine/semaphore model in one mode.
struct DependencyCheck {
  bool ran = false;
  bool deadlock = false;
  int64_t deadlock_index = -1;  // earliest instruction still waiting
  std::string deadlock_detail;
  int64_t race_count = 0;
  std::vector<Race> races;  // the first few (kMaxRacesKept)
  std::array<int64_t, isa::kEdges> released{};
  std::array<int64_t, isa::kEdges> acquired{};
  std::array<int64_t, isa::kEdges> max_outstanding{};
  bool balanced() const { return released == acquired; }
  bool clean() const { return ran && !deadlock && race_count == 0; }
};

// Work of one executed instruction (for reports and RTL comparisons).
struct InstrStats {
  int64_t index = 0;
  isa::Opcode opcode = isa::Opcode::kIllegal;
  int64_t tag = 0;
  int64_t beats = 0;       // COMPUTE: words broadcast into the PE array (P x N MACs each)
  int64_t pool_words = 0;  // COMPUTE POOL: words streamed through the pooling unit
  // COMPUTE with partial sums (docs/isa.md, "Partial sums"): cycles the PE array
  // spends beyond `beats`: acc_in's 4 bank words per output pixel (FC: neuron),
  // read one a cycle before its first tap, and with acc_out the wait of a pixel
  // shorter than 4 cycles for its 4 result words (one a cycle).
  int64_t acc_cycles = 0;
  int64_t words = 0;      // words written (LOAD/COMPUTE) or read (STORE)
  int64_t ext_bytes = 0;  // LOAD/STORE: external bytes transferred
  // Fine-grained steps (docs/isa.md): the rel0 units each step releases, in
  // order (LOAD/STORE rows, COMPUTE output rows or neurons).
  std::vector<int32_t> step_releases;
};

struct SimResult {
  SimError error = SimError::kNone;
  int64_t error_index = -1;  // instruction index (fetch order) of the error
  std::string message;       // what was wrong, for people
  int64_t instructions = 0;  // instructions executed (END included)
  std::vector<InstrStats> stats;
  int64_t beats = 0;                // sum of InstrStats::beats
  int64_t acc_wraps = 0;            // accumulations that left int32 (the hardware wraps)
  int64_t uninitialized_reads = 0;  // on-chip words read before anything wrote them
  DependencyCheck completion;       // CTRL.FINE_GRAIN = 0
  DependencyCheck fine;             // CTRL.FINE_GRAIN = 1
  bool ok() const { return error == SimError::kNone; }
};

inline constexpr size_t kMaxRacesKept = 16;

class IsaSim {
 public:
  explicit IsaSim(HwTarget target);  // validates the target
  const HwTarget& target() const { return target_; }

  // Runs the program at options.instr_base over `memory` (external memory,
  // byte 0 = address 0; STOREs write into it). Errors of the program are
  // reported in the result; only a misuse of the API (a misaligned
  // instr_base, queue_depth < 1) throws strata::Error.
  SimResult run(std::vector<uint8_t>& memory, const SimOptions& options = {}) const;

 private:
  HwTarget target_;
};

// One line per problem of a result that is not clean: the error, a deadlock or
// races in either mode, unbalanced edges. Empty when everything is fine.
std::string describe_problems(const SimResult& r);

// The ISA backend of `strata run`: compiles `net` for `target` (batches of up
// to P images), runs each batch on the simulator and reads the outputs back.
// `input` is one image [C][H][W] (each output [...]) or a batch [N][C][H][W]
// (each output [N][...]); one tensor per network output, in Network::outputs
// order. A simulator error, deadlock, race or unbalanced edge is a
// strata::Error (the result could not be trusted on the hardware).
struct IsaRunSummary {
  int64_t programs = 0;      // distinct batch sizes compiled
  int64_t runs = 0;          // simulator runs
  int64_t instructions = 0;  // instructions executed, all runs
  int64_t beats = 0;         // PE-array beats, all runs
  int64_t image_bytes = 0;   // memory image of the largest program
};
std::vector<Tensor<int8_t>> run_isa_backend(const Network& net, const HwTarget& target,
                                            const Tensor<int8_t>& input,
                                            IsaRunSummary* summary = nullptr);

}  // namespace strata
