// SPDX-License-Identifier: Apache-2.0
// Bench of strata_pool (dispatcher + max and avg units + selector): the
// operation changes between windows (in runs and on every window) and every
// result must be the one of its own window's operation, in window order,
// under random gaps and back-pressure; full rate and latency with one
// operation; the cost of a change of operation; credit-based back-pressure
// (a stalled output lets exactly the output buffer's windows in).
#include <gtest/gtest.h>

#include "Vstrata_pool.h"
#include "pool_unit_bench.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

constexpr unsigned kUserWidth = 16;  // bench parameter -GUserWidth=16
// strata_pool: the unit's latency, one cycle in the select stage and one in
// the output buffer, which has tree levels + 5 slots (the avg unit's
// latency + 3).
constexpr uint64_t kSelectLatency = 1;
constexpr uint64_t kBufferLatency = 1;
constexpr size_t kOutSlots = size_t(kAvgPoolLatency) + 3;

class StrataPool : public PoolUnitBench<Vstrata_pool> {
 protected:
  // Windows in runs of one operation, run lengths 1 .. max_run.
  std::vector<UnitWindow> mixed(size_t n, int max_run) {
    std::vector<UnitWindow> w;
    Op op = Op::kMax;
    while (w.size() < n) {
      const int len = int(rand_int(1, max_run));
      for (int i = 0; i < len && w.size() < n; ++i) {
        w.push_back(random_window(rng(), op, 0xffff));
      }
      op = op == Op::kMax ? Op::kAvg : Op::kMax;
    }
    return w;
  }
  void mixed_run(int max_run, double in_gap, double out_stall) {
    reset();
    const auto w = mixed(2000, max_run);
    const auto run = run_unit(w, in_gap, out_stall, kUserWidth);
    EXPECT_EQ(run.out_cycles.size(), w.size());
  }
};

TEST_F(StrataPool, RunsOfOneOpFullRate) { mixed_run(40, 0.0, 0.0); }
TEST_F(StrataPool, RunsOfOneOpGapsAndBackPressure) { mixed_run(40, 0.3, 0.3); }
TEST_F(StrataPool, OpChangesEveryWindow) { mixed_run(1, 0.0, 0.0); }
TEST_F(StrataPool, OpChangesOftenWithBackPressure) { mixed_run(3, 0.2, 0.5); }

// One operation: one window per cycle and the unit's latency; a change of
// operation waits until the windows of the other unit have left.
TEST_F(StrataPool, LatencyThroughputAndSwitchCost) {
  reset();
  for (Op op : {Op::kMax, Op::kAvg}) {
    std::vector<UnitWindow> w;
    for (int i = 0; i < 500; ++i) w.push_back(random_window(rng(), op, 0xffff));
    const auto run = run_unit(w, 0.0, 0.0, kUserWidth);
    expect_full_rate(
        run, w.size(),
        (op == Op::kMax ? kMaxPoolLatency : kAvgPoolLatency) + kSelectLatency + kBufferLatency);
  }
  // 100 avg windows then 100 max windows back to back: the first max window
  // enters once the last avg result has left the avg unit, i.e. in the cycle
  // that result is in the select stage, one cycle before it is offered at
  // the output.
  std::vector<UnitWindow> w;
  for (int i = 0; i < 200; ++i)
    w.push_back(random_window(rng(), i < 100 ? Op::kAvg : Op::kMax, 0xffff));
  const auto run = run_unit(w, 0.0, 0.0, kUserWidth);
  ASSERT_EQ(run.in_cycles.size(), w.size());
  EXPECT_EQ(run.in_cycles[100] + kBufferLatency, run.out_cycles[99]);
  EXPECT_EQ(run.in_cycles[100] - run.in_cycles[99], kAvgPoolLatency + 1);
}

// Output stalled for good: the pool takes exactly one window per output slot
// (in_ready_o follows the reserved slots, not out_ready_i); once the output
// is drained every result comes out in order, the stored ones first.
TEST_F(StrataPool, StalledOutputTakesOneWindowPerSlot) {
  reset();
  auto& d = dut();
  std::vector<UnitWindow> w;
  for (size_t i = 0; i < kOutSlots + 4; ++i) w.push_back(random_window(rng(), Op::kAvg, 0xffff));
  size_t taken = 0, next = 0;
  bool stalled_checked = false;
  for (int c = 0; c < 200 && next < w.size(); ++c) {
    if (c == 60) {
      EXPECT_EQ(taken, kOutSlots) << "windows taken with the output stalled, STRATA_SEED="
                                  << seed();
      stalled_checked = true;
    }
    d.in_valid_i = taken < w.size();
    if (taken < w.size()) {
      const UnitWindow& x = w[taken];
      for (int t = 0; t < kUnitTaps; ++t) {
        for (int l = 0; l < kUnitLanes; ++l) {
          set_field(d.in_taps_i, unsigned((t * kUnitLanes + l) * kUnitData), kUnitData,
                    static_cast<uint8_t>(x.taps[size_t(t) * kUnitLanes + l]));
        }
      }
      d.in_mask_i = x.mask;
      d.in_user_i = x.user;
      d.in_op_i = static_cast<uint8_t>(x.op);
    }
    d.out_ready_i = c >= 60;
    settle();
    if (d.in_valid_i && d.in_ready_o) ++taken;
    if (d.out_valid_o && d.out_ready_i) {
      const auto exp = reference_pool(w[next]);
      for (int l = 0; l < kUnitLanes; ++l) {
        const int8_t got = get_i8(get_field(d.out_data_o, unsigned(l * kUnitData), kUnitData));
        EXPECT_EQ(got, exp[size_t(l)])
            << "window " << next << " lane " << l << ", STRATA_SEED=" << seed();
      }
      EXPECT_EQ(get_field(d.out_user_o, 0, kUserWidth), w[next].user) << "window " << next;
      ++next;
    }
    tick();
  }
  EXPECT_TRUE(stalled_checked);
  EXPECT_EQ(next, w.size()) << "results after the drain, STRATA_SEED=" << seed();
}

}  // namespace
}  // namespace strata::tb
