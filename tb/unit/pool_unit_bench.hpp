// SPDX-License-Identifier: Apache-2.0
// Runner shared by the strata_maxpool, strata_avgpool and strata_pool benches:
// all three take a window (taps, mask, sideband; strata_pool also an op) and
// return one pixel vector per window. The expected values come from the C++
// reference of the numerics contract (max of the valid taps,
// strata::avg_round of their sum and count).
#pragma once

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pool_bench_util.hpp"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"
#include "strata/numerics.hpp"

namespace strata::tb {

constexpr int kUnitLanes = hw::kLanes;
constexpr int kUnitData = hw::kDataWidth;
constexpr int kUnitKernel = hw::kMaxPoolKernel;
constexpr int kUnitTaps = kUnitKernel * kUnitKernel;

enum class Op { kMax = 0, kAvg = 1 };  // strata_pkg::pool_op_e encoding

// Documented latencies (window handshake -> result valid): one register per
// adder/comparator tree level, plus the avg unit's two multiplier stages.
constexpr uint64_t tree_levels(int taps) {
  uint64_t l = 0;
  while ((1 << l) < taps) ++l;
  return l == 0 ? 1 : l;
}
constexpr uint64_t kMaxPoolLatency = tree_levels(kUnitTaps);      // 4 for 3x3
constexpr uint64_t kAvgPoolLatency = tree_levels(kUnitTaps) + 2;  // 6 for 3x3

struct UnitWindow {
  std::vector<int8_t> taps;  // [tap][lane]
  uint32_t mask = 0;         // bit t: tap t valid
  uint32_t user = 0;
  Op op = Op::kMax;
};

// The reference result of one window (the contract, lane by lane).
inline std::vector<int8_t> reference_pool(const UnitWindow& w) {
  std::vector<int8_t> out(kUnitLanes);
  for (int l = 0; l < kUnitLanes; ++l) {
    int64_t sum = 0, n = 0;
    int best = kInt8Min - 1;
    for (int t = 0; t < kUnitTaps; ++t) {
      if (((w.mask >> t) & 1) == 0) continue;
      const int v = w.taps[size_t(t) * kUnitLanes + l];
      sum += v;
      ++n;
      best = std::max(best, v);
    }
    out[size_t(l)] =
        w.op == Op::kMax ? static_cast<int8_t>(best) : static_cast<int8_t>(avg_round(sum, n));
  }
  return out;
}

// Random window: random non-empty mask (half of them window-generator shaped
// rectangles), values over the full int8 range with extremes favoured; taps
// outside the mask hold garbage that must be ignored.
inline UnitWindow random_window(std::mt19937_64& rng, Op op, uint32_t user_mask) {
  UnitWindow w;
  w.op = op;
  w.user = static_cast<uint32_t>(rng()) & user_mask;
  std::uniform_int_distribution<int> val(kInt8Min, kInt8Max);
  std::uniform_int_distribution<int> pick(0, 9);
  w.taps.resize(size_t(kUnitTaps) * kUnitLanes);
  for (auto& v : w.taps) {
    const int r = pick(rng);
    v = static_cast<int8_t>(r == 0 ? kInt8Min : r == 1 ? kInt8Max : val(rng));
  }
  if (rng() & 1) {
    std::uniform_int_distribution<int> side(0, kUnitKernel - 1);
    int y0 = side(rng), y1 = side(rng), x0 = side(rng), x1 = side(rng);
    if (y0 > y1) std::swap(y0, y1);
    if (x0 > x1) std::swap(x0, x1);
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) w.mask |= 1u << (y * kUnitKernel + x);
    }
  } else {
    do {
      w.mask = static_cast<uint32_t>(rng()) & ((1u << kUnitTaps) - 1);
    } while (w.mask == 0);
  }
  return w;
}

struct UnitRun {
  std::vector<uint64_t> in_cycles;   // handshake cycle of each window
  std::vector<uint64_t> out_cycles;  // handshake cycle of each result
};

// Drives the windows through a unit under random input gaps and output
// back-pressure; checks every lane and the sideband of every result.
template <class Model>
class PoolUnitBench : public SimFixture<Model> {
 protected:
  UnitRun run_unit(const std::vector<UnitWindow>& windows, double in_gap, double out_stall,
                   unsigned user_width) {
    auto& fx = *this;
    auto& d = fx.dut();
    StreamSource<size_t> src(in_gap);
    StreamSink sink(out_stall);
    for (size_t i = 0; i < windows.size(); ++i) src.push(i);
    UnitRun run;
    size_t next_out = 0;
    int failures = 0;
    const uint64_t budget = 40 * windows.size() + 1000, start = fx.cycle();
    while (next_out < windows.size()) {
      const bool v = src.drive(fx.rng());
      if (v) {
        const UnitWindow& w = windows[src.front()];
        for (int t = 0; t < kUnitTaps; ++t) {
          for (int l = 0; l < kUnitLanes; ++l) {
            set_field(d.in_taps_i, unsigned((t * kUnitLanes + l) * kUnitData), kUnitData,
                      static_cast<uint8_t>(w.taps[size_t(t) * kUnitLanes + l]));
          }
        }
        d.in_mask_i = w.mask;
        d.in_user_i = w.user;
        if constexpr (requires { d.in_op_i; }) d.in_op_i = static_cast<uint8_t>(w.op);
      } else {
        randomize(d.in_taps_i, kUnitTaps * kUnitLanes * kUnitData, fx.rng());
        d.in_mask_i = static_cast<uint32_t>(fx.rng()()) & ((1u << kUnitTaps) - 1);
        if constexpr (requires { d.in_op_i; }) d.in_op_i = fx.rng()() & 1;
      }
      d.in_valid_i = v;
      d.out_ready_i = sink.ready(fx.rng());
      fx.settle();

      const bool in_fire = v && d.in_ready_o;
      if (in_fire) run.in_cycles.push_back(fx.cycle());
      if (d.out_valid_o && d.out_ready_i) {
        const UnitWindow& w = windows[next_out];
        const auto exp = reference_pool(w);
        const uint64_t user = get_field(d.out_user_o, 0, user_width);
        std::string err;
        if (user != w.user) {
          err = fmt::format("sideband expected {:#x}, got {:#x}", w.user, user);
        }
        for (int l = 0; l < kUnitLanes && err.empty(); ++l) {
          const int8_t got = get_i8(get_field(d.out_data_o, unsigned(l * kUnitData), kUnitData));
          if (got != exp[size_t(l)]) {
            int64_t sum = 0;
            int n = 0;
            for (int t = 0; t < kUnitTaps; ++t) {
              if ((w.mask >> t) & 1) {
                sum += w.taps[size_t(t) * kUnitLanes + l];
                ++n;
              }
            }
            err =
                fmt::format("lane {} expected {}, got {} ({}; mask {:#05x}, n {}, sum {})", l,
                            exp[size_t(l)], got, w.op == Op::kMax ? "max" : "avg", w.mask, n, sum);
          }
        }
        if (!err.empty()) {
          ADD_FAILURE() << "window " << next_out << ": " << err << ", STRATA_SEED=" << fx.seed();
          if (++failures >= 5) return run;
        }
        run.out_cycles.push_back(fx.cycle());
        ++next_out;
      }
      fx.tick();
      src.handshake(in_fire);
      if (fx.cycle() - start > budget) {
        ADD_FAILURE() << "timeout: " << next_out << " of " << windows.size() << " results after "
                      << budget << " cycles, STRATA_SEED=" << fx.seed();
        return run;
      }
    }
    // Nothing extra comes out.
    d.in_valid_i = 0;
    d.out_ready_i = 1;
    for (int i = 0; i < 10; ++i) {
      fx.settle();
      EXPECT_FALSE(d.out_valid_o) << "extra result after the last window, STRATA_SEED="
                                  << fx.seed();
      fx.tick();
    }
    return run;
  }
};

// With no gaps and no back-pressure: one window per cycle in, and each result
// exactly `latency` cycles after its window.
inline void expect_full_rate(const UnitRun& run, size_t windows, uint64_t latency) {
  ASSERT_EQ(run.in_cycles.size(), windows);
  ASSERT_EQ(run.out_cycles.size(), windows);
  for (size_t i = 0; i < windows; ++i) {
    if (i > 0) ASSERT_EQ(run.in_cycles[i], run.in_cycles[i - 1] + 1) << "input stalled at " << i;
    ASSERT_EQ(run.out_cycles[i], run.in_cycles[i] + latency) << "latency of window " << i;
  }
}

// Bench of a unit that pools with one op (strata_maxpool, strata_avgpool, built
// with -GUserWidth=16): random windows of that op under gaps and back-pressure,
// the latency at full rate, and the empty window.
template <class Model, Op kOp>
class SingleOpUnitBench : public PoolUnitBench<Model> {
 protected:
  static constexpr unsigned kUserWidth = 16;  // bench parameter -GUserWidth=16

  std::vector<UnitWindow> random_windows(size_t n) {
    std::vector<UnitWindow> w;
    for (size_t i = 0; i < n; ++i) w.push_back(random_window(this->rng(), kOp, 0xffff));
    return w;
  }
  void random_run(double in_gap, double out_stall) {
    this->reset();
    const auto w = random_windows(2000);
    const auto run = this->run_unit(w, in_gap, out_stall, kUserWidth);
    EXPECT_EQ(run.out_cycles.size(), w.size());
  }
  void latency_and_throughput(uint64_t latency) {
    this->reset();
    const auto w = random_windows(1000);
    const auto run = this->run_unit(w, 0.0, 0.0, kUserWidth);
    expect_full_rate(run, w.size(), latency);
  }
  // A window with no valid tap breaks the window generator's guarantee: the
  // unit flags it (RTL assertion), still returns a defined value (-128 in
  // every lane) instead of hanging, and then pools correctly again.
  void empty_window_is_flagged() {
    this->reset();
    auto& d = this->dut();
    randomize(d.in_taps_i, kUnitTaps * kUnitLanes * kUnitData, this->rng());
    d.in_mask_i = 0;
    d.in_user_i = 0x1234;
    d.in_valid_i = 1;
    d.out_ready_i = 1;
    this->settle();
    ASSERT_TRUE(d.in_ready_o);
    EXPECT_NONFATAL_FAILURE(this->tick(), "RTL assertion failed");
    d.in_valid_i = 0;
    int waited = 0;
    for (this->settle(); !d.out_valid_o && waited < 20; ++waited) {
      this->tick();
      this->settle();
    }
    ASSERT_TRUE(d.out_valid_o) << "no result for the empty window";
    for (int l = 0; l < kUnitLanes; ++l) {
      EXPECT_EQ(get_i8(get_field(d.out_data_o, unsigned(l * kUnitData), kUnitData)), kInt8Min)
          << "lane " << l;
    }
    EXPECT_EQ(d.out_user_o, 0x1234);
    this->tick();
    const auto w = random_windows(200);
    const auto run = this->run_unit(w, 0.2, 0.2, kUserWidth);
    EXPECT_EQ(run.out_cycles.size(), w.size());
  }
};

}  // namespace strata::tb
