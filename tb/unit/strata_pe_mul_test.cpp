// SPDX-License-Identifier: Apache-2.0
// strata_pe_mul bench (through tb/unit/strata_pe_mul_tb_top.sv): every int8 x
// int8 pair against products from the golden model (strata::fc_acc of one
// element), the latency (product exactly two cycles after the pair) and one
// product per cycle; random pairs with random input gaps.
#include <Vstrata_pe_mul_tb_top.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim_fixture.hpp"
#include "strata/numerics.hpp"
#include "strata/tensor.hpp"
#include "throttle.hpp"

namespace strata::tb {
namespace {

constexpr int kLatency = 2;  // pair -> p_o

struct Pair {
  int8_t a;
  int8_t b;
};

// Golden products, table[a + 128][b + 128], from strata::fc_acc: for each a,
// one input element times 256 one-element weight rows (every b), bias 0.
std::vector<std::array<int32_t, 256>> golden_products() {
  std::vector<std::array<int32_t, 256>> table(256);
  Tensor<int8_t> w({256, 1});
  for (int b = -128; b <= 127; ++b) w[b + 128] = static_cast<int8_t>(b);
  const Tensor<int32_t> bias({256}, std::vector<int32_t>(256, 0));
  for (int a = -128; a <= 127; ++a) {
    const Tensor<int8_t> in({1}, {static_cast<int8_t>(a)});
    const Tensor<int32_t> out = fc_acc(in, w, bias);
    for (int b = 0; b < 256; ++b) table[a + 128][b] = out[b];
  }
  return table;
}

class PeMulBench : public SimFixture<Vstrata_pe_mul_tb_top> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    reset();
  }

  // Drives `pairs` (a pair per cycle unless `gaps` idles the input), checks
  // every product on valid_o against the golden table in order, and returns
  // the cycles from the first pair to the last product.
  uint64_t run(const std::vector<Pair>& pairs, Throttle gaps) {
    static const auto table = golden_products();
    std::deque<Pair> expected;
    size_t sent = 0, checked = 0;
    const uint64_t start = cycle();
    const uint64_t limit = start + 4 * pairs.size() + 100;  // no pair can take longer
    while (checked < pairs.size()) {
      if (cycle() > limit) {
        ADD_FAILURE() << fmt::format("timeout: {} of {} products after {} cycles (STRATA_SEED={})",
                                     checked, pairs.size(), cycle() - start, seed());
        break;
      }
      const bool drive = sent < pairs.size() && !gaps.stall(rng());
      const Pair p = drive ? pairs[sent]
                           : Pair{static_cast<int8_t>(rand_int(-128, 127)),
                                  static_cast<int8_t>(rand_int(-128, 127))};
      dut().valid_i = drive;
      dut().b_i = static_cast<uint8_t>(p.b);
      dut().a_i = static_cast<uint8_t>(p.a);
      if (drive) {
        expected.push_back(p);
        ++sent;
      }
      tick();
      if (dut().valid_o) {
        if (expected.empty()) {
          ADD_FAILURE() << fmt::format("cycle {}: product without a pair (STRATA_SEED={})", cycle(),
                                       seed());
          break;
        }
        const Pair e = expected.front();
        expected.pop_front();
        const int32_t want = table[e.a + 128][e.b + 128];
        const auto got = static_cast<int16_t>(dut().p_o);
        if (got != want) {
          ADD_FAILURE() << fmt::format("product {}: {} x {} expected {}, got {} (STRATA_SEED={})",
                                       checked, e.a, e.b, want, got, seed());
          return 0;
        }
        ++checked;
      }
    }
    return cycle() - start;
  }
};

// strata_pe_mul_test builds the DSP multiplier, strata_pe_mul_fabric_test
// (Fabric = 1) the LUT one: the same checks, suites named apart.
#ifndef STRATA_PE_MUL_SUITE
#define STRATA_PE_MUL_SUITE StrataPeMul
#endif
using STRATA_PE_MUL_SUITE = PeMulBench;

// Every int8 x int8 pair (edge cases included: -128 x -128 = 16384, -128 x 127,
// 0, +-1), back to back: one product per cycle, the last exactly kLatency
// cycles after the last pair.
TEST_F(STRATA_PE_MUL_SUITE, AllPairsFullThroughput) {
  std::vector<Pair> pairs;
  for (int a = -128; a <= 127; ++a) {
    for (int b = -128; b <= 127; ++b) {
      pairs.push_back({static_cast<int8_t>(a), static_cast<int8_t>(b)});
    }
  }
  const uint64_t cycles = run(pairs, Throttle(0.0));
  EXPECT_EQ(cycles, pairs.size() + kLatency - 1) << "STRATA_SEED=" << seed();
}

// Random pairs with random input gaps: the registers always load, so the
// products of the marked pairs must come out unchanged by the idle cycles
// between them (whose operands are random too).
TEST_F(STRATA_PE_MUL_SUITE, RandomPairsWithGaps) {
  for (double gap : {0.2, 0.6}) {
    std::vector<Pair> pairs(2000);
    for (auto& p : pairs) {
      p = {static_cast<int8_t>(rand_int(-128, 127)), static_cast<int8_t>(rand_int(-128, 127))};
    }
    run(pairs, Throttle(gap));
  }
}

// Latency, one isolated pair at a time: valid_o exactly kLatency cycles later.
TEST_F(STRATA_PE_MUL_SUITE, LatencyIsTwoCycles) {
  for (int i = 0; i < 50; ++i) {
    const Pair p{static_cast<int8_t>(rand_int(-128, 127)),
                 static_cast<int8_t>(rand_int(-128, 127))};
    const uint64_t cycles = run({p}, Throttle(0.0));
    EXPECT_EQ(cycles, static_cast<uint64_t>(kLatency)) << "STRATA_SEED=" << seed();
    for (int k = 0; k < 3; ++k) tick();  // idle between pairs
  }
}

}  // namespace
}  // namespace strata::tb
