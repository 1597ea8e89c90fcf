// SPDX-License-Identifier: Apache-2.0
// strata_dep_sems bench (built with SemWidth = 20 so overflow is reachable):
// random acquire / release traffic on all five semaphores against a C++
// model (a waiting request is granted the cycle after the registered count
// held its amount; a release is registered on arrival and reaches the count
// a cycle later), the acquire
// stream rules under random gaps, clear (drops a release of its cycle), and
// overflow (counter wraps, overflow_o the cycle after and sticky until clear,
// assertion fires).
#include <Vstrata_dep_sems.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "port_fields.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

constexpr int kSemWidth = 20;  // tb/unit/memsys.cmake: -GSemWidth=20
constexpr uint64_t kSemMax = (uint64_t{1} << kSemWidth) - 1;
enum Sem { kL2C, kC2S, kC2L, kS2C, kS2L, kSems };
const char* const kNames[kSems] = {"L2C", "C2S", "C2L", "S2C", "S2L"};

// Port slot of each semaphore: (engine, edge) of its consumer and producer.
enum Engine { kLoad, kCompute, kStore };
struct Slot {
  Engine engine;
  int edge;
};
constexpr Slot kAcquirer[kSems] = {
    {kCompute, 0}, {kStore, 0}, {kLoad, 0}, {kCompute, 1}, {kLoad, 1}};
constexpr Slot kReleaser[kSems] = {
    {kLoad, 0}, {kCompute, 0}, {kCompute, 1}, {kStore, 0}, {kStore, 1}};

class StrataDepSems : public SimFixture<Vstrata_dep_sems> {
 protected:
  struct Req {
    bool valid = false;
    uint16_t amount = 0;
  };

  void SetUp() override {
    SimFixture::SetUp();
    reset();
  }

  static void set_pair(uint32_t& port, int edge, uint16_t v) {
    port = (port & ~(0xFFFFu << (16 * edge))) | (uint32_t{v} << (16 * edge));
  }

  // Drives the requests and releases, checks grants and counts against the model.
  void step(const std::array<Req, kSems>& acq, const std::array<uint16_t, kSems>& rel,
            bool clear = false) {
    auto& d = dut();
    d.ld_acq_req_i = d.cp_acq_req_i = d.st_acq_req_i = 0;
    d.ld_rel_valid_i = d.cp_rel_valid_i = d.st_rel_valid_i = 0;
    d.ld_acq_amount_i = d.cp_acq_amount_i = d.st_acq_amount_i = 0;
    d.ld_rel_amount_i = d.cp_rel_amount_i = d.st_rel_amount_i = 0;
    auto req_port = [&](Engine e) -> CData& {
      return e == kLoad ? d.ld_acq_req_i : e == kCompute ? d.cp_acq_req_i : d.st_acq_req_i;
    };
    auto amt_port = [&](Engine e) -> IData& {
      return e == kLoad ? d.ld_acq_amount_i : e == kCompute ? d.cp_acq_amount_i : d.st_acq_amount_i;
    };
    auto rel_port = [&](Engine e) -> CData& {
      return e == kLoad ? d.ld_rel_valid_i : e == kCompute ? d.cp_rel_valid_i : d.st_rel_valid_i;
    };
    auto rel_amt = [&](Engine e) -> IData& {
      return e == kLoad ? d.ld_rel_amount_i : e == kCompute ? d.cp_rel_amount_i : d.st_rel_amount_i;
    };
    for (int s = 0; s < kSems; ++s) {
      const Slot a = kAcquirer[s], r = kReleaser[s];
      if (acq[s].valid) {
        req_port(a.engine) |= 1 << a.edge;
        set_pair(amt_port(a.engine), a.edge, acq[s].amount);
      }
      if (rel[s] != 0) {
        rel_port(r.engine) |= 1 << r.edge;
        set_pair(rel_amt(r.engine), r.edge, rel[s]);
      }
    }
    d.clear_i = clear;
    d.abort_i = 0;
    settle();
    auto grant_port = [&](Engine e) -> CData {
      return e == kLoad ? d.ld_acq_grant_o : e == kCompute ? d.cp_acq_grant_o : d.st_acq_grant_o;
    };
    bool over_now = false;
    for (int s = 0; s < kSems; ++s) {
      const Slot a = kAcquirer[s];
      const bool got = (grant_port(a.engine) >> a.edge) & 1;
      const bool want = ready_[s];
      ASSERT_TRUE(!want || acq[s].valid) << "a request waits until granted";
      EXPECT_EQ(got, want) << kNames[s] << " grant at cycle " << cycle() << ": count " << model_[s]
                           << " amount " << acq[s].amount << " (STRATA_SEED=" << seed() << ")";
      granted_[s] = got;
      ready_[s] = acq[s].valid && !want && !clear && model_[s] >= acq[s].amount;
      uint64_t next = model_[s] + pending_[s] - (want ? acq[s].amount : 0);
      if (next > kSemMax) over_now = true;
      model_[s] = clear ? 0 : (next & kSemMax);  // an overflowing count wraps
      pending_[s] = clear ? 0 : rel[s];          // a release in the cycle of a clear is dropped
    }
    // overflow_o: one cycle after the count that overflowed (through the
    // per-counter flag), sticky until clear.
    overflow_ = !clear && (overflow_ || over_flag_);
    over_flag_ = !clear && over_now;
    tick();
    for (int s = 0; s < kSems; ++s) {
      EXPECT_EQ(count(s), model_[s]) << kNames[s] << " count after cycle " << cycle();
    }
    EXPECT_EQ(d.overflow_o, overflow_) << "overflow_o after cycle " << cycle();
  }

  uint64_t count(int s) { return get_field(dut().count_o, unsigned(s) * kSemWidth, kSemWidth); }

  // Random traffic: each consumer holds a request until granted (stream
  // rule), with random gaps; producers release random amounts.
  void random_traffic(int cycles, double gap, int max_amount) {
    std::array<Req, kSems> acq{};
    int grants = 0;
    for (int c = 0; c < cycles; ++c) {
      std::array<uint16_t, kSems> rel{};
      for (int s = 0; s < kSems; ++s) {
        if (granted_[s]) acq[s].valid = false;
        if (!acq[s].valid && !Throttle(gap).stall(rng())) {
          acq[s] = {true, static_cast<uint16_t>(rand_int(0, max_amount))};
        }
        if (rand_int(0, 2) == 0) rel[s] = static_cast<uint16_t>(rand_int(0, max_amount));
      }
      step(acq, rel);
      for (int s = 0; s < kSems; ++s) grants += granted_[s];
    }
    EXPECT_GT(grants, cycles / 4) << "traffic made progress";
  }

  std::array<uint64_t, kSems> model_{};
  std::array<uint16_t, kSems> pending_{};  // releases in the input register
  std::array<bool, kSems> granted_{};
  std::array<bool, kSems> ready_{};  // the count held the waiting request's amount (RTL grant_q)
  bool overflow_ = false;
  bool over_flag_ = false;  // a count overflowed in the last cycle (RTL over_q)
};

TEST_F(StrataDepSems, RandomTrafficFullRate) { random_traffic(3000, 0.0, 7); }
TEST_F(StrataDepSems, RandomTrafficWithGaps) { random_traffic(3000, 0.5, 20); }

TEST_F(StrataDepSems, LargeAmountsAndClear) {
  std::array<Req, kSems> none{};
  std::array<uint16_t, kSems> rel{};
  rel.fill(0xFFFF);
  for (int i = 0; i < 10; ++i) step(none, rel);
  // A request for exactly the count is granted, a cycle after it is seen.
  std::array<Req, kSems> acq{};
  for (int s = 0; s < kSems; ++s) acq[s] = {true, 0xFFFF};
  rel.fill(0);
  step(acq, rel);
  for (int s = 0; s < kSems; ++s) EXPECT_FALSE(granted_[s]) << "not in the request's cycle";
  step(acq, rel);
  for (int s = 0; s < kSems; ++s) EXPECT_TRUE(granted_[s]);
  for (int s = 0; s < kSems; ++s) EXPECT_EQ(model_[s], 9u * 0xFFFF);
  rel.fill(5);
  step(none, rel, /*clear=*/true);  // releases in the cycle of a clear are dropped
  for (int s = 0; s < kSems; ++s) EXPECT_EQ(count(s), 0u);
  rel.fill(0);
  acq[kL2C] = {true, 1};
  step(acq, rel);
  step(acq, rel);
  EXPECT_FALSE(granted_[kL2C]) << "nothing to acquire after clear";
}

TEST_F(StrataDepSems, OverflowWrapsAndIsSticky) {
  expect_rtl_errors(true);  // the no_overflow assertion fires by design
  std::array<Req, kSems> none{};
  std::array<uint16_t, kSems> rel{};
  rel[kS2C] = 0xFFFF;
  const int to_fill = static_cast<int>(kSemMax / 0xFFFF);  // releases that still fit
  for (int i = 0; i < to_fill; ++i) step(none, rel);
  step(none, rel);  // the last release that fits is added, one that does not is registered
  EXPECT_FALSE(dut().overflow_o);
  EXPECT_EQ(rtl_errors(), 0);
  rel.fill(0);
  step(none, rel);  // it reaches the counter, which wraps
  EXPECT_FALSE(dut().overflow_o) << "overflow_o follows a cycle later";
  EXPECT_EQ(count(kS2C), (uint64_t(to_fill + 1) * 0xFFFF) & kSemMax) << "the counter wraps";
  EXPECT_GE(rtl_errors(), 1) << "the overflow assertion fired";
  step(none, rel);
  EXPECT_TRUE(dut().overflow_o);
  for (int i = 0; i < 3; ++i) step(none, rel);
  EXPECT_TRUE(dut().overflow_o) << "sticky";
  step(none, rel, /*clear=*/true);
  EXPECT_FALSE(dut().overflow_o);
}

}  // namespace
}  // namespace strata::tb
