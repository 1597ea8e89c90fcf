// SPDX-License-Identifier: Apache-2.0
// strata_csr bench: the register block alone, driven over AXI4-Lite
// (sim/axil_driver.hpp) and checked against a C++ model built from the
// generated register table (strata/csr_map.hpp): reset values, configuration
// readback, RW / RO / W1S / W1C semantics with byte strobes, SLVERR on
// unmapped addresses, every AW/W ordering, response back-pressure, the
// interrupt, the counter LO/HI snapshot and the handshake timing.
#include <Vstrata_csr_tb_top.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "axil_driver.hpp"
#include "sim_fixture.hpp"
#include "strata/csr_map.hpp"
#include "strata/hw_config.hpp"

namespace strata::tb {
namespace {

using csr::Access;
using csr::kRegisters;

constexpr int kCounters = static_cast<int>(csr::kPerfCounters.size());

class StrataCsr : public SimFixture<Vstrata_csr_tb_top> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    bus_ = std::make_unique<AxilDriver<Vstrata_csr_tb_top>>(
        dut(), [this] { step(); }, rng());
    for (auto& c : counters_) c = 0;
    reset();
  }

  // One cycle: drive the status inputs and the bus, settle, sample, tick.
  void step() {
    auto& d = dut();
    d.busy_i = busy_;
    d.done_i = done_;
    d.error_i = error_;
    d.err_code_i = err_code_;
    d.err_index_i = err_index_;
    d.done_set_i = done_pulse_;
    d.error_set_i = error_pulse_;
    for (int c = 0; c < kCounters; ++c) {
      d.counters_i[2 * c] = static_cast<uint32_t>(counters_[c]);
      d.counters_i[2 * c + 1] = static_cast<uint32_t>(counters_[c] >> 32);
    }
    bus_->drive();
    settle();
    bus_->sample();
    starts_ += d.start_o;
    // The IRQ_STATUS model follows the hardware: pulses set at this edge.
    if (done_pulse_) irq_status_ |= csr::kIrqStatusDone;
    if (error_pulse_) irq_status_ |= csr::kIrqStatusError;
    done_pulse_ = error_pulse_ = false;
    tick();
  }

  static const csr::Register* find(uint32_t addr) {
    for (const auto& r : kRegisters) {
      if (r.offset == addr || (r.wide && r.offset + 4 == addr)) return &r;
    }
    return nullptr;
  }

  // Expected value of a read, from the model.
  uint32_t expect_read(uint32_t addr) {
    if (addr == csr::kId) return 0x53545241;
    if (addr == csr::kVersion) return hw::kVersion;
    if (addr == csr::kCtrl) return ctrl_;
    if (addr == csr::kStatus) {
      return (busy_ ? csr::kStatusBusy : 0) | (done_ ? csr::kStatusDone : 0) |
             (error_ ? csr::kStatusError : 0);
    }
    if (addr == csr::kErrorCode) return err_code_ | (uint32_t{err_index_} << 16);
    if (addr == csr::kIrqEnable) return irq_enable_;
    if (addr == csr::kIrqStatus) return irq_status_;
    if (addr == csr::kInstrBaseLo) return base_lo_;
    if (addr == csr::kInstrBaseHi) return base_hi_;
    if (addr == csr::kInstrLimit) return limit_;
    if (addr == csr::kCfgPes) return hw::kPes;
    if (addr == csr::kCfgLanes) return hw::kLanes;
    if (addr == csr::kCfgBanks) return hw::kBanks;
    if (addr == csr::kCfgBankDepth) return hw::kBankDepth;
    if (addr == csr::kCfgCacheDepth) return hw::kPeCacheDepth;
    if (addr == csr::kCfgParamDepth) return hw::kParamDepth;
    if (addr == csr::kCfgAxiDataWidth) return hw::kAxiDataWidth;
    if (addr == csr::kCfgLimits) {
      return hw::kMaxKernel << csr::kCfgLimitsMaxKernelLsb |
             hw::kMaxPoolKernel << csr::kCfgLimitsMaxPoolKernelLsb |
             hw::kMaxImageWidth << csr::kCfgLimitsMaxImageWidthLsb;
    }
    if (addr == csr::kCfgFeatures) {
      return (hw::kSparse ? csr::kCfgFeaturesSparse : 0u) |
             (static_cast<uint32_t>(hw::kActTables) << csr::kCfgFeaturesActTablesLsb);
    }
    if (addr == csr::kCfgAxiAddrWidth) return hw::kAxiAddrWidth;
    for (int c = 0; c < kCounters; ++c) {
      if (addr == csr::kPerfCounters[c]) {
        snapshot_ = static_cast<uint32_t>(counters_[c] >> 32);
        return static_cast<uint32_t>(counters_[c]);
      }
      if (addr == csr::kPerfCounters[c] + 4) return snapshot_;
    }
    ADD_FAILURE() << "no model for 0x" << std::hex << addr;
    return 0;
  }

  // Model of a write with byte strobes.
  void model_write(uint32_t addr, uint32_t data, uint8_t strb) {
    const csr::Register* r = find(addr);
    if (r == nullptr || r->wide) return;
    uint32_t bytes = 0;
    for (int b = 0; b < 4; ++b) {
      if ((strb >> b) & 1) bytes |= 0xFFu << (8 * b);
    }
    auto rw = [&](uint32_t old) {
      return (old & ~(bytes & r->rw_mask)) | (data & bytes & r->rw_mask);
    };
    if (addr == csr::kCtrl) {
      ctrl_ = rw(ctrl_);
      if (data & bytes & r->w1s_mask) ++want_starts_;
    } else if (addr == csr::kIrqEnable) {
      irq_enable_ = rw(irq_enable_);
    } else if (addr == csr::kIrqStatus) {
      irq_status_ &= ~(data & bytes & r->w1c_mask);
    } else if (addr == csr::kInstrBaseLo) {
      base_lo_ = rw(base_lo_);
    } else if (addr == csr::kInstrBaseHi) {
      base_hi_ = rw(base_hi_);
    } else if (addr == csr::kInstrLimit) {
      limit_ = rw(limit_);
    }
  }

  void check_read(uint32_t addr, const std::string& ctx) {
    const AxilRead r = bus_->read_resp(addr);
    const uint32_t want = expect_read(addr);
    EXPECT_EQ(r.resp, 0) << ctx << ": read of 0x" << std::hex << addr;
    EXPECT_EQ(r.data, want) << ctx << ": register 0x" << std::hex << addr << " expected 0x" << want
                            << " got 0x" << r.data << std::dec << " (STRATA_SEED=" << seed() << ")";
  }

  // irq_o against the model (between transactions: the model is updated
  // when a transaction completes).
  void check_irq(const std::string& ctx) {
    const bool want = (irq_status_ & irq_enable_) != 0;
    EXPECT_EQ(dut().irq_o, want) << ctx << ": irq_o with IRQ_STATUS 0x" << std::hex << irq_status_
                                 << " IRQ_ENABLE 0x" << irq_enable_ << std::dec
                                 << " (STRATA_SEED=" << seed() << ")";
  }

  void check_all(const std::string& ctx) {
    for (const auto& r : kRegisters) {
      check_read(r.offset, ctx);
      if (r.wide) check_read(r.offset + 4, ctx);
    }
  }

  // Addresses that name no register (gaps, beyond the map, unaligned).
  std::vector<uint32_t> unmapped() const {
    std::vector<uint32_t> out;
    for (uint32_t a = 0; a < 0x200; a += 4) {
      if (find(a) == nullptr) out.push_back(a);
    }
    out.insert(out.end(), {0x001, 0x00A, 0x103, 0x800, 0xFFC});
    return out;
  }

  std::unique_ptr<AxilDriver<Vstrata_csr_tb_top>> bus_;
  bool busy_ = false, done_ = false, error_ = false;
  uint8_t err_code_ = 0;
  uint16_t err_index_ = 0;
  bool done_pulse_ = false, error_pulse_ = false;
  uint64_t counters_[kCounters];
  // Model state.
  uint32_t ctrl_ = 0, irq_enable_ = 0, irq_status_ = 0, base_lo_ = 0, base_hi_ = 0, limit_ = 0;
  uint32_t snapshot_ = 0;
  int starts_ = 0, want_starts_ = 0;
};

TEST_F(StrataCsr, ResetValuesAndConfiguration) {
  for (const auto& r : kRegisters) {
    if (r.has_reset) {
      EXPECT_EQ(bus_->read(r.offset), r.reset) << r.name;
    }
  }
  // The configuration the RTL was built with equals hw_config.hpp.
  EXPECT_EQ(bus_->read(csr::kCfgPes), uint32_t{hw::kPes});
  EXPECT_EQ(bus_->read(csr::kCfgLanes), uint32_t{hw::kLanes});
  EXPECT_EQ(bus_->read(csr::kCfgBanks), uint32_t{hw::kBanks});
  EXPECT_EQ(bus_->read(csr::kCfgBankDepth), uint32_t{hw::kBankDepth});
  EXPECT_EQ(bus_->read(csr::kCfgCacheDepth), uint32_t{hw::kPeCacheDepth});
  EXPECT_EQ(bus_->read(csr::kCfgParamDepth), uint32_t{hw::kParamDepth});
  EXPECT_EQ(bus_->read(csr::kCfgAxiDataWidth), uint32_t{hw::kAxiDataWidth});
  EXPECT_EQ(bus_->read(csr::kCfgLimits),
            uint32_t(hw::kMaxKernel | hw::kMaxPoolKernel << 8 | hw::kMaxImageWidth << 16));
  EXPECT_EQ(bus_->read(csr::kVersion), uint32_t{hw::kVersion});
  // Every register (both halves of the counters) equals the reset model.
  check_all("after reset");
  EXPECT_EQ(dut().irq_o, 0);
  EXPECT_EQ(starts_, 0);
}

// >= 1000 random accesses: writes with random data, strobes and channel
// order, reads of random registers, status inputs and counters changing.
TEST_F(StrataCsr, RandomAccessesMatchModel) {
  std::vector<uint32_t> addrs;
  for (const auto& r : kRegisters) {
    addrs.push_back(r.offset);
    if (r.wide) addrs.push_back(r.offset + 4);
  }
  bus_->set_ready_throttle(0.3);
  for (int i = 0; i < 1500; ++i) {
    const uint32_t addr = addrs[rand_int(0, static_cast<int64_t>(addrs.size()) - 1)];
    const auto ctx = fmt::format("access {}", i);
    // Status, counters and IRQ events change under the bus.
    busy_ = rand_int(0, 1);
    done_ = rand_int(0, 1);
    error_ = rand_int(0, 1);
    err_code_ = static_cast<uint8_t>(rand_int(0, 7));
    err_index_ = static_cast<uint16_t>(rand_int(0, 0xFFFF));
    for (auto& c : counters_)
      c = (uint64_t(rand_int(0, 0xFFFFFFFF)) << 32) | rand_int(0, 0xFFFFFFFF);
    // IRQ events in a cycle of their own (an event in the cycle a read is
    // decoded is seen by the next read only; InterruptEventWinsOverClear
    // covers the cycle-exact cases).
    if (rand_int(0, 9) == 0) done_pulse_ = true;
    if (rand_int(0, 9) == 0) error_pulse_ = true;
    step();
    if (rand_int(0, 1)) {
      const auto data = static_cast<uint32_t>(rand_int(0, 0xFFFFFFFF));
      const auto strb = static_cast<uint8_t>(rand_int(0, 15));
      const auto order = static_cast<AxilOrder>(rand_int(0, 2));
      const int gap = static_cast<int>(rand_int(0, 2));
      const uint8_t resp = bus_->write_resp(addr, data, strb, order, gap);
      EXPECT_EQ(resp, 0) << ctx << ": write to 0x" << std::hex << addr;
      model_write(addr, data, strb);
    } else {
      // A HI read returns the snapshot of the last LO read.
      check_read(addr, ctx);
    }
    check_irq(ctx);
  }
  // At least one START among them.
  bus_->write(csr::kCtrl, csr::kCtrlStart);
  model_write(csr::kCtrl, csr::kCtrlStart, 0xF);
  EXPECT_EQ(starts_, want_starts_) << "start_o pulses";
}

TEST_F(StrataCsr, UnmappedAddressesAnswerSlverrAndChangeNothing) {
  bus_->write(csr::kInstrLimit, 0x1234);
  bus_->write(csr::kIrqEnable, 3);
  limit_ = 0x1234;
  irq_enable_ = 3;
  for (uint32_t a : unmapped()) {
    EXPECT_EQ(bus_->write_resp(a, 0xFFFFFFFF), 2) << "write to 0x" << std::hex << a;
    const AxilRead r = bus_->read_resp(a);
    EXPECT_EQ(r.resp, 2) << "read of 0x" << std::hex << a;
    EXPECT_EQ(r.data, 0u) << "read of 0x" << std::hex << a;
  }
  check_all("after unmapped accesses");
  EXPECT_EQ(starts_, 0);
}

TEST_F(StrataCsr, ReadOnlyRegistersIgnoreWrites) {
  busy_ = done_ = true;
  err_code_ = 5;
  err_index_ = 77;
  for (const auto& r : kRegisters) {
    if (r.access != Access::kRo) continue;
    EXPECT_EQ(bus_->write_resp(r.offset, 0xFFFFFFFF), 0) << r.name << ": legal access is OKAY";
  }
  check_all("after writes to read-only registers");
}

TEST_F(StrataCsr, WriteChannelOrders) {
  // Every order and gap: the value lands and the response is OKAY.
  uint32_t v = 0x40;
  for (auto order : {AxilOrder::kTogether, AxilOrder::kAwFirst, AxilOrder::kWFirst}) {
    for (int gap = 0; gap < 4; ++gap) {
      v += 0x40;
      EXPECT_EQ(bus_->write_resp(csr::kInstrBaseLo, v, 0xF, order, gap), 0);
      EXPECT_EQ(bus_->read(csr::kInstrBaseLo), v)
          << "order " << static_cast<int>(order) << " gap " << gap;
      EXPECT_EQ(dut().instr_base_o, uint64_t{v} >> 6);
    }
  }
}

// Handshake timing with AW and W together and BREADY / RREADY high: the
// write is applied the cycle after the handshake and BVALID follows; a read
// returns RVALID three cycles after the AR handshake (select, RDATA, RVALID).
TEST_F(StrataCsr, ResponseLatency) {
  const uint64_t c0 = cycle();
  bus_->write(csr::kInstrLimit, 99);
  EXPECT_EQ(cycle() - c0, 3u) << "write: handshake, apply, BVALID";
  const uint64_t c1 = cycle();
  EXPECT_EQ(bus_->read(csr::kInstrLimit), 99u);
  EXPECT_EQ(cycle() - c1, 4u) << "read: AR handshake, select, RDATA, RVALID";
  EXPECT_EQ(dut().instr_limit_o, 99u);
}

TEST_F(StrataCsr, StartIsOnePulsePerWriteAndReadsZero) {
  bus_->write(csr::kCtrl, csr::kCtrlFineGrain);
  EXPECT_EQ(starts_, 0);
  EXPECT_EQ(dut().fine_grain_o, 1);
  bus_->write(csr::kCtrl, csr::kCtrlStart | csr::kCtrlFineGrain);
  EXPECT_EQ(starts_, 1);
  EXPECT_EQ(bus_->read(csr::kCtrl), csr::kCtrlFineGrain) << "START reads 0";
  // A strobe without byte 0 does not start.
  EXPECT_EQ(bus_->write_resp(csr::kCtrl, csr::kCtrlStart, 0xE), 0);
  EXPECT_EQ(starts_, 1);
  bus_->write(csr::kCtrl, csr::kCtrlStart);
  EXPECT_EQ(starts_, 2);
  EXPECT_EQ(dut().fine_grain_o, 0);
}

TEST_F(StrataCsr, InterruptSetEnableClear) {
  for (int i = 0; i < 5; ++i) step();
  done_pulse_ = true;
  step();
  step();
  EXPECT_EQ(bus_->read(csr::kIrqStatus), csr::kIrqStatusDone);
  EXPECT_EQ(dut().irq_o, 0) << "not enabled";
  bus_->write(csr::kIrqEnable, csr::kIrqEnableDone);
  irq_enable_ = csr::kIrqEnableDone;
  step();
  EXPECT_EQ(dut().irq_o, 1);
  error_pulse_ = true;
  step();
  EXPECT_EQ(bus_->read(csr::kIrqStatus), csr::kIrqStatusDone | csr::kIrqStatusError);
  // W1C: clearing DONE leaves ERROR, which is not enabled.
  bus_->write(csr::kIrqStatus, csr::kIrqStatusDone);
  irq_status_ = csr::kIrqStatusError;
  step();
  EXPECT_EQ(dut().irq_o, 0);
  bus_->write(csr::kIrqEnable, csr::kIrqEnableError);
  irq_enable_ = csr::kIrqEnableError;
  step();
  EXPECT_EQ(dut().irq_o, 1);
  bus_->write(csr::kIrqStatus, 0xFFFFFFFF);
  irq_status_ = 0;
  step();
  EXPECT_EQ(dut().irq_o, 0);
  EXPECT_EQ(bus_->read(csr::kIrqStatus), 0u);
}

// A hardware event in the cycle a W1C write clears it is not lost. With AW
// and W together the write is applied one cycle after the handshake
// (ResponseLatency), so an event `offset` cycles after the handshake cycle is
// cleared for offset 0 and survives for offsets 1 (same cycle as the clear)
// and later.
TEST_F(StrataCsr, InterruptEventWinsOverClear) {
  auto& d = dut();
  for (int offset = 0; offset < 4; ++offset) {
    done_pulse_ = true;
    step();
    // Drive the clearing write by hand so the event can be placed in it.
    bool aw_done = false, w_done = false, b_done = false;
    for (int c = 0; c < 20 && (!b_done || c <= offset); ++c) {
      d.s_axil_awvalid = !aw_done;
      d.s_axil_awaddr = csr::kIrqStatus;
      d.s_axil_wvalid = !w_done;
      d.s_axil_wdata = csr::kIrqStatusDone;
      d.s_axil_wstrb = 0xF;
      d.s_axil_bready = 1;
      d.s_axil_arvalid = 0;
      d.s_axil_rready = 1;
      d.done_set_i = c == offset;
      settle();
      aw_done = aw_done || d.s_axil_awready;
      w_done = w_done || d.s_axil_wready;
      b_done = b_done || d.s_axil_bvalid;
      tick();
    }
    ASSERT_TRUE(b_done) << "no write response";
    const uint32_t st = bus_->read(csr::kIrqStatus) & csr::kIrqStatusDone;
    EXPECT_EQ(st, offset == 0 ? 0u : csr::kIrqStatusDone) << "event at offset " << offset;
    bus_->write(csr::kIrqStatus, 0xFFFFFFFF);
  }
}

TEST_F(StrataCsr, CounterSnapshot) {
  counters_[0] = 0x0000000500000007ull;
  counters_[1] = 0x0000000900000003ull;
  step();
  EXPECT_EQ(bus_->read(csr::kPerfCycles), 7u);
  counters_[0] = 0x0000006600000008ull;  // HI changes after the LO read
  step();
  EXPECT_EQ(bus_->read(csr::kPerfCycles + 4), 5u) << "HI returns the snapshot";
  EXPECT_EQ(bus_->read64(csr::kPerfCycles), 0x0000006600000008ull);
  // A LO read of another counter replaces the snapshot.
  EXPECT_EQ(bus_->read(csr::kPerfCycles), 8u);
  EXPECT_EQ(bus_->read(csr::kPerfLoadBusy), 3u);
  EXPECT_EQ(bus_->read(csr::kPerfCycles + 4), 9u);
  // Every counter at its own offset.
  for (int c = 0; c < kCounters; ++c) counters_[c] = (uint64_t(c + 100) << 32) | (c + 1);
  step();
  for (int c = 0; c < kCounters; ++c) {
    EXPECT_EQ(bus_->read64(csr::kPerfCounters[c]), (uint64_t(c + 100) << 32) | (c + 1))
        << "counter " << c;
  }
}

}  // namespace
}  // namespace strata::tb
