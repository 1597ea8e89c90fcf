// SPDX-License-Identifier: Apache-2.0
// IsaDevice: see strata/isa_device.hpp.
#include "strata/isa_device.hpp"

#include <cstring>

#include "strata/isa_sim.hpp"

namespace strata {

IsaDevice::IsaDevice(const HwTarget& target, uint64_t memory_bytes)
    : target_(target), memory_(memory_bytes, 0) {}

uint32_t IsaDevice::read32(uint32_t offset) const {
  using namespace csr;
  switch (offset) {
    case kId:
      return 0x53545241u;
    case kVersion:
      return static_cast<uint32_t>(target_.version);
    case kCtrl:
      return ctrl_ & kCtrlFineGrain;
    case kStatus:
      return status_;
    case kErrorCode:
      return error_code_;
    case kIrqEnable:
      return irq_enable_;
    case kIrqStatus:
      return irq_status_;
    case kInstrBaseLo:
      return base_lo_ & ~63u;
    case kInstrBaseHi:
      return base_hi_;
    case kInstrLimit:
      return limit_;
    case kCfgPes:
      return static_cast<uint32_t>(target_.pes);
    case kCfgLanes:
      return static_cast<uint32_t>(target_.lanes);
    case kCfgBanks:
      return static_cast<uint32_t>(target_.banks);
    case kCfgBankDepth:
      return static_cast<uint32_t>(target_.bank_depth);
    case kCfgCacheDepth:
      return static_cast<uint32_t>(target_.pe_cache_depth);
    case kCfgParamDepth:
      return static_cast<uint32_t>(target_.param_depth);
    case kCfgAxiDataWidth:
      return static_cast<uint32_t>(target_.axi_data_width);
    case kCfgLimits:
      return static_cast<uint32_t>(target_.max_kernel) << kCfgLimitsMaxKernelLsb |
             static_cast<uint32_t>(target_.max_pool_kernel) << kCfgLimitsMaxPoolKernelLsb |
             static_cast<uint32_t>(target_.max_image_width) << kCfgLimitsMaxImageWidthLsb;
    case kCfgFeatures:
      return (target_.sparse ? kCfgFeaturesSparse : 0u) |
             (static_cast<uint32_t>(target_.act_tables) << kCfgFeaturesActTablesLsb);
    case kCfgAxiAddrWidth:
      return static_cast<uint32_t>(target_.axi_addr_width);
    default:
      break;
  }
  for (size_t i = 0; i < kPerfCounters.size(); ++i) {
    if (offset == kPerfCounters[i]) return static_cast<uint32_t>(counters_[i]);
    if (offset == kPerfCounters[i] + 4) return static_cast<uint32_t>(counters_[i] >> 32);
  }
  return 0;
}

void IsaDevice::write32(uint32_t offset, uint32_t value) {
  using namespace csr;
  switch (offset) {
    case kCtrl:
      if ((value & kCtrlStart) != 0) {
        ctrl_ = value & kCtrlFineGrain;
        run();
      } else {
        ctrl_ = value & kCtrlFineGrain;
      }
      break;
    case kIrqEnable:
      irq_enable_ = value & (kIrqEnableDone | kIrqEnableError);
      break;
    case kIrqStatus:
      irq_status_ &= ~value;
      break;
    case kInstrBaseLo:
      base_lo_ = value & ~63u;
      break;
    case kInstrBaseHi:
      base_hi_ = value;
      break;
    case kInstrLimit:
      limit_ = value;
      break;
    default:
      break;
  }
}

void IsaDevice::run() {
  using namespace csr;
  ++runs_;
  counters_ = {};
  SimOptions o;
  o.instr_base = uint64_t{base_hi_} << 32 | base_lo_;
  o.instr_limit = limit_;
  o.fine_grain = (ctrl_ & kCtrlFineGrain) != 0;
  const SimResult r = IsaSim(target_).run(memory_, o);
  problems_ = r.error == SimError::kDeadlock ? "" : describe_problems(r);
  for (size_t i = 0; i < kPerfCounters.size(); ++i) {
    if (kPerfCounters[i] == kPerfInstructions) counters_[i] = static_cast<uint64_t>(r.instructions);
  }
  if (r.ok()) {
    status_ = kStatusDone;
    error_code_ = 0;
    irq_status_ |= kIrqStatusDone;
  } else {
    status_ = kStatusError;
    const uint64_t index = r.error_index < 0 ? 0xFFFFu : static_cast<uint64_t>(r.error_index);
    error_code_ = static_cast<uint32_t>(r.error) | static_cast<uint32_t>(index & 0xFFFFu)
                                                       << kErrorCodeIndexLsb;
    irq_status_ |= kIrqStatusError;
  }
}

strata_hal IsaDevice::hal() {
  strata_hal h{};
  h.ctx = this;
  h.read32 = [](void* ctx, uint32_t offset) {
    return static_cast<IsaDevice*>(ctx)->read32(offset);
  };
  h.write32 = [](void* ctx, uint32_t offset, uint32_t value) {
    static_cast<IsaDevice*>(ctx)->write32(offset, value);
  };
  h.mem_write = [](void* ctx, uint64_t addr, const void* src, size_t bytes) {
    std::vector<uint8_t>& m = static_cast<IsaDevice*>(ctx)->memory_;
    if (addr > m.size() || bytes > m.size() - addr) return -1;
    if (bytes != 0) std::memcpy(m.data() + addr, src, bytes);
    return 0;
  };
  h.mem_read = [](void* ctx, uint64_t addr, void* dst, size_t bytes) {
    const std::vector<uint8_t>& m = static_cast<IsaDevice*>(ctx)->memory_;
    if (addr > m.size() || bytes > m.size() - addr) return -1;
    if (bytes != 0) std::memcpy(dst, m.data() + addr, bytes);
    return 0;
  };
  h.wait_irq = [](void* ctx, uint64_t) { return static_cast<IsaDevice*>(ctx)->irq() ? 1 : 0; };
  return h;
}

}  // namespace strata
