// SPDX-License-Identifier: Apache-2.0
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

using StrataMaxpool = SingleOpUnitBench<Vstrata_maxpool, Op::kMax>;

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

TEST_F(StrataMaxpool, LatencyAndThroughput) { latency_and_throughput(kMaxPoolLatency); }

TEST_F(StrataMaxpool, EmptyWindowIsFlagged) { empty_window_is_flagged(); }

}  // namespace
}  // namespace strata::tb
