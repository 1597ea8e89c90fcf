// SPDX-License-Identifier: Apache-2.0
// A Strata device at the level of its registers whose runs execute on the ISA
// simulator: the register map of config/registers.yaml (docs/registers.md)
// over a byte array of device memory, for the driver library's tests and its
// simulated Linux device, where no RTL model or board is needed.
//
// Writing CTRL.START runs the program at INSTR_BASE to its end at once
// (IsaSim, both dependency modes checked, CTRL.FINE_GRAIN choosing the one
// whose deadlock is an error); STATUS, ERROR_CODE and IRQ_STATUS then read as
// the hardware's would after the run, and the interrupt line is
// |(IRQ_STATUS & IRQ_ENABLE). An access beyond the memory is the error
// AXI_READ or AXI_WRITE. Of the counters only PERF_INSTRUCTIONS counts (the
// simulator has no cycles). A dependency problem the simulator finds (a
// race, unbalanced semaphores) is kept in problems().
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/csr_map.hpp"
#include "strata/hw_target.hpp"
#include "strata_rt.h"

namespace strata {

class IsaDevice {
 public:
  IsaDevice(const HwTarget& target, uint64_t memory_bytes);

  uint32_t read32(uint32_t offset) const;
  void write32(uint32_t offset, uint32_t value);
  bool irq() const { return (irq_status_ & irq_enable_) != 0; }

  std::vector<uint8_t>& memory() { return memory_; }
  const std::string& problems() const { return problems_; }
  uint64_t runs() const { return runs_; }

  // A hardware-access layer over this device (strata_rt.h): wait_irq returns
  // the interrupt line at once (a run ends within the START write).
  strata_hal hal();

 private:
  void run();

  HwTarget target_;
  std::vector<uint8_t> memory_;
  uint32_t ctrl_ = 0, status_ = 0, error_code_ = 0, irq_enable_ = 0, irq_status_ = 0;
  uint32_t base_lo_ = 0, base_hi_ = 0, limit_ = 0;
  std::array<uint64_t, csr::kPerfCounters.size()> counters_{};
  std::string problems_;
  uint64_t runs_ = 0;
};

}  // namespace strata
