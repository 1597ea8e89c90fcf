// SPDX-License-Identifier: Apache-2.0
// AXI4-Lite master for the CSR port of a Verilated model (ports s_axil_*),
// with the register names of strata/csr_map.hpp.
//
// The driver is an agent of the bench's cycle loop: drive() at the drive
// point, sample() at the sample point (sim_fixture.hpp). The blocking calls
// (write, read, ...) advance the simulation with the bench's `step` function
// (one whole cycle: every agent's drive, settle, every agent's sample, tick)
// until the transaction completes, and throw std::runtime_error after
// `timeout` cycles so a bug can never hang a test.
// Write channel order is selectable (AW and W together, AW first or W first,
// with a gap of `gap` cycles before the second one), and BREADY / RREADY can
// be throttled randomly to test the slave's response back-pressure.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

#include "bench_check.hpp"
#include "strata/csr_map.hpp"
#include "throttle.hpp"

namespace strata::tb {

enum class AxilOrder { kTogether, kAwFirst, kWFirst };

struct AxilRead {
  uint32_t data = 0;
  uint8_t resp = 0;  // 0 OKAY, 2 SLVERR
};

template <class Model>
class AxilDriver {
 public:
  AxilDriver(Model& dut, std::function<void()> step, std::mt19937_64& rng, uint64_t timeout = 1000)
      : dut_(dut), step_(std::move(step)), rng_(rng), timeout_(timeout) {}

  // Where a non-OKAY response of write() / read() is reported (bench_check.hpp).
  void set_failure_handler(FailureHandler handler) { on_failure_ = std::move(handler); }

  // Probability of BREADY / RREADY low in a cycle.
  void set_ready_throttle(double p) { ready_throttle_ = Throttle(p); }

  void drive() {
    auto& d = dut_;
    d.s_axil_awvalid = aw_pending_ && aw_wait_ == 0;
    d.s_axil_awaddr = addr_;
    d.s_axil_wvalid = w_pending_ && w_wait_ == 0;
    d.s_axil_wdata = wdata_;
    d.s_axil_wstrb = wstrb_;
    d.s_axil_bready = !ready_throttle_.stall(rng_);
    d.s_axil_arvalid = ar_pending_;
    d.s_axil_araddr = addr_;
    d.s_axil_rready = !ready_throttle_.stall(rng_);
  }

  void sample() {
    auto& d = dut_;
    // Countdown of a channel that waits (0 = valid now, < 0 = waiting for
    // the other channel's handshake, then `gap` more cycles).
    if (aw_wait_ > 0) --aw_wait_;
    if (w_wait_ > 0) --w_wait_;
    if (d.s_axil_awvalid && d.s_axil_awready) {
      aw_pending_ = false;
      if (w_wait_ < 0) w_wait_ = gap_;
    }
    if (d.s_axil_wvalid && d.s_axil_wready) {
      w_pending_ = false;
      if (aw_wait_ < 0) aw_wait_ = gap_;
    }
    if (d.s_axil_bvalid && d.s_axil_bready) {
      b_done_ = true;
      bresp_ = d.s_axil_bresp;
    }
    if (d.s_axil_arvalid && d.s_axil_arready) ar_pending_ = false;
    if (d.s_axil_rvalid && d.s_axil_rready) {
      r_done_ = true;
      rdata_ = d.s_axil_rdata;
      rresp_ = d.s_axil_rresp;
    }
  }

  // One write; returns BRESP.
  uint8_t write_resp(uint32_t addr, uint32_t data, uint8_t strb = 0xF,
                     AxilOrder order = AxilOrder::kTogether, int gap = 0) {
    addr_ = addr;
    wdata_ = data;
    wstrb_ = strb;
    gap_ = gap;
    aw_pending_ = w_pending_ = true;
    aw_wait_ = order == AxilOrder::kWFirst ? -1 : 0;
    w_wait_ = order == AxilOrder::kAwFirst ? -1 : 0;
    b_done_ = false;
    wait_for([&] { return b_done_; }, "write", addr);
    return bresp_;
  }

  // One read.
  AxilRead read_resp(uint32_t addr) {
    addr_ = addr;
    ar_pending_ = true;
    r_done_ = false;
    wait_for([&] { return r_done_; }, "read", addr);
    return {rdata_, rresp_};
  }

  // Register access that must succeed (OKAY).
  void write(uint32_t addr, uint32_t data) {
    const uint8_t resp = write_resp(addr, data);
    if (resp != 0) {
      report_failure(on_failure_,
                     "CSR write to 0x" + to_hex(addr) + " answered " + std::to_string(int{resp}));
    }
  }
  uint32_t read(uint32_t addr) {
    const AxilRead r = read_resp(addr);
    if (r.resp != 0) {
      report_failure(on_failure_,
                     "CSR read of 0x" + to_hex(addr) + " answered " + std::to_string(int{r.resp}));
    }
    return r.data;
  }
  // A 64-bit counter: LO, then HI (the HI snapshot taken by the LO read).
  uint64_t read64(uint32_t lo_addr) {
    const uint64_t lo = read(lo_addr);
    const uint64_t hi = read(lo_addr + 4);
    return (hi << 32) | lo;
  }

 private:
  template <class Done>
  void wait_for(Done done, const char* what, uint32_t addr) {
    for (uint64_t i = 0; i < timeout_; ++i) {
      step_();
      if (done() && !aw_pending_ && !w_pending_ && !ar_pending_) return;
    }
    aw_pending_ = w_pending_ = ar_pending_ = false;
    throw std::runtime_error("AXI4-Lite " + std::string(what) + " of 0x" + to_hex(addr) +
                             " timed out after " + std::to_string(timeout_) + " cycles");
  }

  static std::string to_hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%x", v);
    return buf;
  }

  Model& dut_;
  std::function<void()> step_;
  std::mt19937_64& rng_;
  uint64_t timeout_;
  Throttle ready_throttle_;
  FailureHandler on_failure_;
  uint32_t addr_ = 0, wdata_ = 0;
  uint8_t wstrb_ = 0xF;
  int gap_ = 0;
  bool aw_pending_ = false, w_pending_ = false, ar_pending_ = false;
  int aw_wait_ = 0, w_wait_ = 0;
  bool b_done_ = false, r_done_ = false;
  uint8_t bresp_ = 0, rresp_ = 0;
  uint32_t rdata_ = 0;
};

}  // namespace strata::tb
