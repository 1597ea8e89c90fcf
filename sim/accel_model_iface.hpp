// SPDX-License-Identifier: Apache-2.0
// AccelRunner::Model, the interface between AccelRunner and one Verilated
// strata_top (ModelSim<V> in accel_model.hpp implements it). Without
// Verilator's headers: the runner library (accel_runner.cpp) holds no model;
// each executable links the models it runs (model_table.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "accel_runner.hpp"

namespace strata::tb {

class AccelRunner::Model {
 public:
  virtual ~Model() = default;
  // The hardware access of the driver library (accel_runner.cpp makes a
  // strata_hal of them): registers over the AXI4-Lite driver, which steps the
  // clock until each access completes; device memory in the AXI memory
  // model; the wait steps the clock until irq_o or `cycles` have passed.
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;
  virtual void mem_write(uint64_t addr, const uint8_t* src, size_t bytes) = 0;
  virtual void mem_read(uint64_t addr, uint8_t* dst, size_t bytes) const = 0;
  virtual bool wait_irq(uint64_t cycles) = 0;
  // A run's bench side: begin_run splits the trace port's cycles by layer for
  // the `instr_count` instructions at `program`; end_run fills the report's
  // cycles (from the last CTRL.START write to now), layers and bench errors.
  virtual void begin_run(const uint8_t* program, uint64_t bytes, uint32_t instr_count) = 0;
  virtual void end_run(RunReport& r) = 0;
  virtual std::vector<uint8_t> memory(uint64_t size) const = 0;
  virtual void add_error_region(uint64_t begin, uint64_t end, bool reads, bool writes) = 0;
  virtual void clear_errors() = 0;
  virtual int protocol_errors() const = 0;
};

}  // namespace strata::tb
