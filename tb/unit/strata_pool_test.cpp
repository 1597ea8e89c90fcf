// Bench of strata_pool (dispatcher + max and avg units + selector): the
// operation changes between windows (in runs and on every window) and every
// result must be the one of its own window's operation, in window order,
// under random gaps and back-pressure; full rate and latency with one
// operation; the cost of a change of operation.
#include <gtest/gtest.h>

#include "Vstrata_pool.h"
#include "pool_unit_bench.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

constexpr unsigned kUserWidth = 16;  // bench parameter -GUserWidth=16

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
    expect_full_rate(run, w.size(), op == Op::kMax ? kMaxPoolLatency : kAvgPoolLatency);
  }
  // 100 avg windows then 100 max windows back to back: the first max window
  // enters the cycle after the last avg result left.
  std::vector<UnitWindow> w;
  for (int i = 0; i < 200; ++i) w.push_back(random_window(rng(), i < 100 ? Op::kAvg : Op::kMax, 0xffff));
  const auto run = run_unit(w, 0.0, 0.0, kUserWidth);
  ASSERT_EQ(run.in_cycles.size(), w.size());
  EXPECT_EQ(run.in_cycles[100], run.out_cycles[99] + 1);
  EXPECT_EQ(run.in_cycles[100] - run.in_cycles[99], kAvgPoolLatency + 1);
}

}  // namespace
}  // namespace strata::tb
