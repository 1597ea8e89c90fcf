// SPDX-License-Identifier: Apache-2.0
// Bench of strata_avgpool: the reciprocal-multiply divider is exact for EVERY
// reachable (sum, n) pair (n = 1 .. MaxPoolKernel^2, sum = -128 n .. 127 n)
// against strata::avg_round, and random windows (random masks, garbage in
// masked taps) under random input gaps and back-pressure; exact latency at
// full rate.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "Vstrata_avgpool.h"
#include "pool_unit_bench.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

class StrataAvgpool : public SingleOpUnitBench<Vstrata_avgpool, Op::kAvg> {
 protected:
  // n int8 values (random order and spread) summing to `sum`.
  std::vector<int8_t> values_with_sum(int n, int sum) {
    std::vector<int> v(size_t(n), 0);
    const int base = int(std::floor(double(sum) / n));
    int rest = sum - base * n;  // 0 <= rest < n
    for (int i = 0; i < n; ++i) v[size_t(i)] = base + (i < rest ? 1 : 0);
    // Move amounts between random pairs without leaving int8 or changing the sum.
    for (int k = 0; k < 2 * n; ++k) {
      const size_t a = size_t(rand_int(0, n - 1)), b = size_t(rand_int(0, n - 1));
      const int room = std::min(kInt8Max - v[a], v[b] - kInt8Min);
      if (a == b || room <= 0) continue;
      const int delta = int(rand_int(0, room));
      v[a] += delta;
      v[b] -= delta;
    }
    std::vector<int8_t> out(v.begin(), v.end());
    return out;
  }
};

// Every reachable (sum, n): one lane each, eight pairs per window; n taps at
// random positions, the other taps garbage.
TEST_F(StrataAvgpool, ExhaustiveSumAndCount) {
  reset();
  std::vector<UnitWindow> ws;
  size_t pairs = 0;
  for (int n = 1; n <= kUnitTaps; ++n) {
    const int lo = kInt8Min * n, hi = kInt8Max * n;
    pairs += size_t(hi - lo + 1);
    // All lanes of a window share its mask: eight sums of one n per window
    // (the last window of an n repeats its last sum in the spare lanes).
    for (int first = lo; first <= hi; first += kUnitLanes) {
      UnitWindow w;
      w.op = Op::kAvg;
      w.user = uint32_t(ws.size()) & 0xffff;
      w.taps.resize(size_t(kUnitTaps) * kUnitLanes);
      for (auto& v : w.taps) v = static_cast<int8_t>(rand_int(kInt8Min, kInt8Max));
      std::vector<int> pos(kUnitTaps);
      std::iota(pos.begin(), pos.end(), 0);
      std::shuffle(pos.begin(), pos.end(), rng());
      for (int j = 0; j < n; ++j) w.mask |= 1u << pos[size_t(j)];
      for (int l = 0; l < kUnitLanes; ++l) {
        const auto vals = values_with_sum(n, std::min(first + l, hi));
        for (int j = 0; j < n; ++j) {
          w.taps[size_t(pos[size_t(j)]) * kUnitLanes + l] = vals[size_t(j)];
        }
      }
      ws.push_back(w);
    }
  }
  // Count the (sum, n) pairs actually presented, from the windows themselves.
  std::vector<std::vector<bool>> seen(size_t(kUnitTaps) + 1);
  for (int n = 1; n <= kUnitTaps; ++n) seen[size_t(n)].assign(size_t(255 * n + 1), false);
  for (const auto& w : ws) {
    const int n = std::popcount(w.mask);
    for (int l = 0; l < kUnitLanes; ++l) {
      int sum = 0;
      for (int t = 0; t < kUnitTaps; ++t) {
        if ((w.mask >> t) & 1) sum += w.taps[size_t(t) * kUnitLanes + l];
      }
      seen[size_t(n)][size_t(sum - kInt8Min * n)] = true;
    }
  }
  for (int n = 1; n <= kUnitTaps; ++n) {
    const auto missing = std::count(seen[size_t(n)].begin(), seen[size_t(n)].end(), false);
    ASSERT_EQ(missing, 0) << "sums not covered for n = " << n;
  }
  std::cout << "[ INFO     ] " << pairs << " (sum, n) pairs in " << ws.size() << " windows"
            << std::endl;
  const auto run = run_unit(ws, 0.25, 0.25, kUserWidth);
  EXPECT_EQ(run.out_cycles.size(), ws.size());
}

TEST_F(StrataAvgpool, RandomFullRate) { random_run(0.0, 0.0); }
TEST_F(StrataAvgpool, RandomInputGaps) { random_run(0.4, 0.0); }
TEST_F(StrataAvgpool, RandomBackPressure) { random_run(0.0, 0.5); }
TEST_F(StrataAvgpool, RandomGapsAndBackPressure) { random_run(0.3, 0.3); }

// Rounding edges: halves round up (toward +infinity), extremes of each n.
TEST_F(StrataAvgpool, RoundingEdges) {
  reset();
  std::vector<UnitWindow> ws;
  for (int n = 1; n <= kUnitTaps; ++n) {
    for (int v : {kInt8Min, kInt8Max, -1, 0, 1}) {
      UnitWindow w;
      w.op = Op::kAvg;
      w.taps.assign(size_t(kUnitTaps) * kUnitLanes, int8_t(v));
      w.mask = (1u << n) - 1;
      for (int l = 0; l < kUnitLanes; ++l) {
        // Lane l: one tap moved by -(l+1)/+(l+1) to land near .5 boundaries.
        const int moved = std::clamp(v + ((l & 1) ? (l + 1) : -(l + 1)), kInt8Min, kInt8Max);
        w.taps[size_t(l % n) * kUnitLanes + l] = int8_t(moved);
      }
      ws.push_back(w);
    }
  }
  // -1/2 -> 0, -3/2 -> -1, 1/2 -> 1: n = 2 with sums -1, -3, 1.
  for (auto [a, b] :
       {std::pair{0, -1}, std::pair{-1, -2}, std::pair{0, 1}, std::pair{-128, -127}}) {
    UnitWindow w;
    w.op = Op::kAvg;
    w.taps.assign(size_t(kUnitTaps) * kUnitLanes, int8_t(99));
    for (int l = 0; l < kUnitLanes; ++l) {
      w.taps[size_t(0) * kUnitLanes + l] = int8_t(a);
      w.taps[size_t(kUnitTaps - 1) * kUnitLanes + l] = int8_t(b);
    }
    w.mask = 1u | (1u << (kUnitTaps - 1));
    ws.push_back(w);
  }
  const auto run = run_unit(ws, 0.2, 0.2, kUserWidth);
  EXPECT_EQ(run.out_cycles.size(), ws.size());
}

TEST_F(StrataAvgpool, LatencyAndThroughput) { latency_and_throughput(kAvgPoolLatency); }

TEST_F(StrataAvgpool, EmptyWindowIsFlagged) { empty_window_is_flagged(); }

}  // namespace
}  // namespace strata::tb
