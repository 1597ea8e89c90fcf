// Bench of strata_maxpool: every lane of every result against the maximum of
// the window's valid taps, with random masks (rectangles as the window
// generator makes them and arbitrary ones), garbage in masked taps, edge
// values, random input gaps and back-pressure, and the exact latency at full
// rate.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "Vstrata_maxpool.h"
#include "pool_unit_bench.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

constexpr unsigned kUserWidth = 16;  // bench parameter -GUserWidth=16

class StrataMaxpool : public PoolUnitBench<Vstrata_maxpool> {
 protected:
  std::vector<UnitWindow> random_windows(size_t n) {
    std::vector<UnitWindow> w;
    for (size_t i = 0; i < n; ++i) w.push_back(random_window(rng(), Op::kMax, 0xffff));
    return w;
  }
  void random_run(double in_gap, double out_stall) {
    reset();
    const auto w = random_windows(2000);
    const auto run = run_unit(w, in_gap, out_stall, kUserWidth);
    EXPECT_EQ(run.out_cycles.size(), w.size());
  }
  // A window with no valid tap breaks the window generator's guarantee: the
  // unit flags it (RTL assertion), still returns a defined value (-128 in
  // every lane) instead of hanging, and then pools correctly again.
  void empty_window_is_flagged() {
    reset();
    auto& d = dut();
    randomize(d.in_taps_i, kUnitTaps * kUnitLanes * kUnitData, rng());
    d.in_mask_i = 0;
    d.in_user_i = 0x1234;
    d.in_valid_i = 1;
    d.out_ready_i = 1;
    settle();
    ASSERT_TRUE(d.in_ready_o);
    EXPECT_NONFATAL_FAILURE(tick(), "RTL assertion failed");
    d.in_valid_i = 0;
    int waited = 0;
    for (settle(); !d.out_valid_o && waited < 20; ++waited) {
      tick();
      settle();
    }
    ASSERT_TRUE(d.out_valid_o) << "no result for the empty window";
    for (int l = 0; l < kUnitLanes; ++l) {
      EXPECT_EQ(get_i8(get_field(d.out_data_o, unsigned(l * kUnitData), kUnitData)), kInt8Min)
          << "lane " << l;
    }
    EXPECT_EQ(d.out_user_o, 0x1234);
    tick();
    const auto w = random_windows(200);
    const auto run = run_unit(w, 0.2, 0.2, kUserWidth);
    EXPECT_EQ(run.out_cycles.size(), w.size());
  }
};

TEST_F(StrataMaxpool, RandomFullRate) { random_run(0.0, 0.0); }
TEST_F(StrataMaxpool, RandomInputGaps) { random_run(0.4, 0.0); }
TEST_F(StrataMaxpool, RandomBackPressure) { random_run(0.0, 0.5); }
TEST_F(StrataMaxpool, RandomGapsAndBackPressure) { random_run(0.3, 0.3); }

// One valid tap at each position holding the smallest value while every
// masked tap holds the largest; full windows of one value; the maximum at
// each tap position in turn.
TEST_F(StrataMaxpool, EdgeCases) {
  reset();
  std::vector<UnitWindow> ws;
  for (int t = 0; t < kUnitTaps; ++t) {
    UnitWindow w;
    w.taps.assign(size_t(kUnitTaps) * kUnitLanes, kInt8Max);
    for (int l = 0; l < kUnitLanes; ++l) w.taps[size_t(t) * kUnitLanes + l] = int8_t(kInt8Min + l);
    w.mask = 1u << t;
    w.user = uint32_t(t);
    ws.push_back(w);
  }
  for (int v : {kInt8Min, -1, 0, 1, kInt8Max}) {
    UnitWindow w;
    w.taps.assign(size_t(kUnitTaps) * kUnitLanes, int8_t(v));
    w.mask = (1u << kUnitTaps) - 1;
    w.user = 0xffff;
    ws.push_back(w);
  }
  for (int t = 0; t < kUnitTaps; ++t) {
    UnitWindow w;
    w.taps.assign(size_t(kUnitTaps) * kUnitLanes, kInt8Min);
    for (int l = 0; l < kUnitLanes; ++l) {
      w.taps[size_t(t) * kUnitLanes + l] = int8_t(kInt8Max - l);
      w.taps[size_t((t + 1) % kUnitTaps) * kUnitLanes + l] = int8_t(kInt8Max - l - 1);
    }
    w.mask = (1u << kUnitTaps) - 1;
    ws.push_back(w);
  }
  const auto run = run_unit(ws, 0.2, 0.2, kUserWidth);
  EXPECT_EQ(run.out_cycles.size(), ws.size());
}

TEST_F(StrataMaxpool, LatencyAndThroughput) {
  reset();
  const auto w = random_windows(1000);
  const auto run = run_unit(w, 0.0, 0.0, kUserWidth);
  expect_full_rate(run, w.size(), kMaxPoolLatency);
}

TEST_F(StrataMaxpool, EmptyWindowIsFlagged) { empty_window_is_flagged(); }

}  // namespace
}  // namespace strata::tb
