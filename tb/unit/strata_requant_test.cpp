// SPDX-License-Identifier: Apache-2.0
// strata_requant bench: every output compared with strata::requantize (the
// numerics contract) channel by channel, on random and edge-case operands,
// under random input gaps and output back-pressure; exact latency and one
// beat per cycle; parameter errors reported on err_o; with activation tables
// (act_tables > 0): tables written through the word port, then every looked-up
// output compared with T[requantize(...) + 128].
#include <Vstrata_requant.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <vector>

#include "port_fields.hpp"
#include "sim_fixture.hpp"
#include "strata/hw_config.hpp"
#include "strata/numerics.hpp"

#ifndef STRATA_BENCH_CHANNELS
#error "STRATA_BENCH_CHANNELS (channels per beat) must be defined"
#endif

namespace strata::tb {
namespace {

constexpr int C = STRATA_BENCH_CHANNELS;
constexpr int kTables = hw::kActTables;             // activation tables of the build
constexpr int kLatency = kTables > 0 ? 9 : 8;       // documented: accepting edge -> out_valid_o
constexpr int kResultDepth = kTables > 0 ? 10 : 9;  // documented: result FIFO slots
constexpr int kWordBytes = hw::kLanes;              // bytes per table write word

// The contents the bench wrote into the tables (table t's entry i at t * 256 + i).
std::vector<int8_t>& bench_tables() {
  static std::vector<int8_t> t(static_cast<size_t>(kTables) * 256, 0);
  return t;
}

struct RqBeat {
  std::vector<int32_t> acc = std::vector<int32_t>(C, 0);
  std::vector<uint16_t> mult = std::vector<uint16_t>(C, 0);
  std::vector<uint8_t> shift = std::vector<uint8_t>(C, 0);
  int lo = -128;
  int hi = 127;
  int table = -1;  // the activation table looked up, -1: none
};

// What the RTL must produce, including its documented answer to bad
// parameters (shift > 47 saturates to 47; lo > hi gives hi above hi, else lo).
int expected_clamped(const RqBeat& b, int c) {
  const int s = std::min<int>(b.shift[c], kMaxShift);
  if (b.lo > b.hi) {
    const int64_t v = rshift_round(int64_t{b.acc[c]} * b.mult[c], s);
    return v > b.hi ? b.hi : b.lo;
  }
  return requantize(b.acc[c], b.mult[c], s, b.lo, b.hi);
}
int expected(const RqBeat& b, int c) {
  const int v = expected_clamped(b, c);
  return b.table < 0 ? v : bench_tables()[static_cast<size_t>(b.table * 256 + v + 128)];
}

struct RqStats {
  std::vector<uint64_t> accept_cycles, result_cycles;
  uint64_t cycles = 0;
  uint64_t max_in_flight = 0;
};

class StrataRequant : public SimFixture<Vstrata_requant> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    dut().in_valid_i = 0;
    dut().out_ready_i = 0;
    randomise_payload();
    reset();
  }

  void drive(const RqBeat& b) {
    for (int c = 0; c < C; ++c) {
      set_field(dut().in_acc_i, c * 32, 32, static_cast<uint32_t>(b.acc[c]));
      set_field(dut().in_mult_i, c * 16, 16, b.mult[c]);
      set_field(dut().in_shift_i, c * 6, 6, b.shift[c]);
    }
    dut().in_lo_i = static_cast<uint8_t>(b.lo);
    dut().in_hi_i = static_cast<uint8_t>(b.hi);
    dut().in_tab_en_i = b.table >= 0;
    dut().in_tab_i = static_cast<uint8_t>(std::max(b.table, 0));
  }

  // Writes random contents into every table through the word port: each
  // word is acknowledged (tab_ready_o) in the cycle of its last byte.
  void write_tables() {
    std::vector<int8_t>& t = bench_tables();
    for (int8_t& v : t) v = static_cast<int8_t>(rand_int(-128, 127));
    const int words = kTables * 256 / kWordBytes;
    for (int w = 0; w < words; ++w) {
      dut().tab_valid_i = 1;
      dut().tab_addr_i = static_cast<uint32_t>(w);
      for (int j = 0; j < kWordBytes; ++j) {
        set_field(dut().tab_data_i, 8 * j, 8,
                  static_cast<uint8_t>(t[static_cast<size_t>(w * kWordBytes + j)]));
      }
      for (int j = 0; j < kWordBytes; ++j) {
        settle();
        ASSERT_EQ(static_cast<bool>(dut().tab_ready_o), j == kWordBytes - 1)
            << "word " << w << " byte " << j;
        tick();
      }
    }
    dut().tab_valid_i = 0;
  }

  void randomise_payload() {
    RqBeat junk;
    for (int c = 0; c < C; ++c) {
      junk.acc[c] = static_cast<int32_t>(rand_int(INT32_MIN, INT32_MAX));
      junk.mult[c] = static_cast<uint16_t>(rand_int(0, 65535));
      junk.shift[c] = static_cast<uint8_t>(rand_int(0, 63));
    }
    junk.lo = static_cast<int>(rand_int(-128, 127));
    junk.hi = static_cast<int>(rand_int(-128, 127));
    junk.table = kTables > 0 ? static_cast<int>(rand_int(-1, kTables - 1)) : -1;
    drive(junk);
  }

  // Streams the beats, returns the outputs ([beat][channel]); checks that no
  // extra output follows. Fails on a timeout instead of hanging.
  std::vector<std::vector<int>> run(const std::vector<RqBeat>& beats, double gap, double stall,
                                    RqStats* stats = nullptr,
                                    const std::function<bool(uint64_t)>& ready_pattern = {}) {
    Throttle gaps(gap), stalls(stall);
    RqStats local;
    RqStats& st = stats != nullptr ? *stats : local;
    st = RqStats{};
    std::vector<std::vector<int>> out;
    const uint64_t start = cycle();
    size_t next = 0;
    bool valid = false;
    uint64_t in_flight = 0;
    while (out.size() < beats.size()) {
      const uint64_t t = cycle() - start;
      if (t > 20 * beats.size() + 1000) {
        ADD_FAILURE() << fmt::format(
            "timeout after {} cycles: {}/{} accepted, {} out (STRATA_SEED={})", t, next,
            beats.size(), out.size(), seed());
        break;
      }
      if (!valid) {
        if (next < beats.size() && !gaps.stall(rng())) {
          drive(beats[next]);
          valid = true;
        } else {
          randomise_payload();
        }
      }
      dut().in_valid_i = valid;
      dut().out_ready_i = ready_pattern ? ready_pattern(t) : !stalls.stall(rng());
      settle();
      const bool in_fire = valid && dut().in_ready_o;
      if (dut().out_valid_o && dut().out_ready_i) {
        std::vector<int> y(C);
        for (int c = 0; c < C; ++c) y[c] = static_cast<int>(get_signed(dut().out_data_o, c * 8, 8));
        out.push_back(y);
        st.result_cycles.push_back(cycle());
        --in_flight;
      }
      if (in_fire) {
        st.accept_cycles.push_back(cycle());
        st.max_in_flight = std::max(st.max_in_flight, ++in_flight);
      }
      tick();
      if (in_fire) {
        valid = false;
        ++next;
      }
    }
    st.cycles = cycle() - start;
    dut().in_valid_i = 0;
    dut().out_ready_i = 1;
    for (int i = 0; i < 2 * kLatency; ++i) {
      settle();
      EXPECT_FALSE(dut().out_valid_o) << "unexpected extra output (STRATA_SEED=" << seed() << ")";
      if (dut().out_valid_o) break;
      tick();
    }
    return out;
  }

  void check(const std::vector<RqBeat>& beats, const std::vector<std::vector<int>>& got) {
    ASSERT_EQ(got.size(), beats.size()) << "output count (STRATA_SEED=" << seed() << ")";
    int mismatches = 0;
    for (size_t i = 0; i < beats.size() && mismatches < 10; ++i) {
      for (int c = 0; c < C; ++c) {
        const int want = expected(beats[i], c);
        if (got[i][c] != want) {
          ++mismatches;
          ADD_FAILURE() << fmt::format(
              "beat {}, channel {}: acc={} M={} S={} clamp [{}, {}] table {}: expected {}, got "
              "{} (STRATA_SEED={})",
              i, c, beats[i].acc[c], beats[i].mult[c], beats[i].shift[c], beats[i].lo, beats[i].hi,
              beats[i].table, want, got[i][c], seed());
        }
      }
    }
  }

  // A random valid clamp: none, ReLU, ReLU6-style or any sub-range.
  void random_clamp(RqBeat& b) {
    switch (rand_int(0, 3)) {
      case 0:
        b.lo = -128, b.hi = 127;
        break;
      case 1:
        b.lo = 0, b.hi = 127;
        break;
      case 2:
        b.lo = 0, b.hi = static_cast<int>(rand_int(0, 127));
        break;
      default: {
        const int a = static_cast<int>(rand_int(-128, 127)),
                  z = static_cast<int>(rand_int(-128, 127));
        b.lo = std::min(a, z), b.hi = std::max(a, z);
      }
    }
  }

  // Random operands from three families: anything; realistic (the shift puts
  // the result near the int8 range); exact ties at .5 of either sign.
  RqBeat random_beat() {
    RqBeat b;
    for (int c = 0; c < C; ++c) {
      switch (rand_int(0, 2)) {
        case 0:
          b.acc[c] = static_cast<int32_t>(rand_int(INT32_MIN, INT32_MAX));
          b.mult[c] = static_cast<uint16_t>(rand_int(0, 65535));
          b.shift[c] = static_cast<uint8_t>(rand_int(0, kMaxShift));
          break;
        case 1: {
          b.acc[c] = static_cast<int32_t>(rand_int(-(1 << 20), 1 << 20));
          b.mult[c] = static_cast<uint16_t>(rand_int(1, 65535));
          const int64_t mag = std::abs(int64_t{b.acc[c]} * b.mult[c]);
          int bits = 0;
          while ((int64_t{1} << bits) <= mag) ++bits;
          b.shift[c] =
              static_cast<uint8_t>(std::clamp<int64_t>(bits - rand_int(5, 9), 0, kMaxShift));
          break;
        }
        default: {
          const int s = static_cast<int>(rand_int(1, 24));
          const int64_t odd = 2 * rand_int(-300, 300) + 1;  // acc * M = odd * 2^(s-1)
          b.mult[c] = 1;
          b.acc[c] = static_cast<int32_t>(odd * (int64_t{1} << (s - 1)));
          b.shift[c] = static_cast<uint8_t>(s);
        }
      }
    }
    random_clamp(b);
    return b;
  }

  void random_test(int count, double gap, double stall) {
    std::vector<RqBeat> beats;
    for (int i = 0; i < count; ++i) beats.push_back(random_beat());
    check(beats, run(beats, gap, stall));
    EXPECT_FALSE(dut().err_o) << "err_o raised by valid parameters";
  }
};

// --- Random operands (count x C values each). -------------------------------

TEST_F(StrataRequant, RandomFullThroughput) {
  std::vector<RqBeat> beats;
  for (int i = 0; i < 1000; ++i) beats.push_back(random_beat());
  RqStats st;
  const auto got = run(beats, 0.0, 0.0, &st);
  check(beats, got);
  ASSERT_EQ(st.accept_cycles.size(), beats.size());
  ASSERT_EQ(st.result_cycles.size(), beats.size());
  for (size_t i = 0; i < beats.size(); ++i) {
    ASSERT_EQ(st.accept_cycles[i], st.accept_cycles[0] + i) << "beat " << i << " not back to back";
    ASSERT_EQ(st.result_cycles[i], st.accept_cycles[i] + kLatency) << "latency of beat " << i;
  }
}

TEST_F(StrataRequant, RandomGapsAndStalls) { random_test(1000, 0.3, 0.3); }

// Activation tables: random contents written word by word, then beats that
// look up a random table (or none) under gaps and stalls, and back to back
// with the documented latency; every output is T[clamped value + 128].
TEST_F(StrataRequant, TablesLookUpTheClampedValue) {
  if (kTables == 0) GTEST_SKIP() << "a build without activation tables (act_tables: 0)";
  write_tables();
  for (const auto& [gap, stall] : {std::pair{0.0, 0.0}, std::pair{0.3, 0.3}, std::pair{0.1, 0.8}}) {
    std::vector<RqBeat> beats;
    for (int i = 0; i < 1000; ++i) {
      RqBeat b = random_beat();
      b.table = static_cast<int>(rand_int(-1, kTables - 1));
      beats.push_back(b);
    }
    RqStats st;
    const auto got = run(beats, gap, stall, &st);
    check(beats, got);
    if (gap == 0.0 && stall == 0.0) {
      for (size_t i = 0; i < beats.size(); ++i) {
        ASSERT_EQ(st.result_cycles[i], st.accept_cycles[i] + kLatency) << "latency of beat " << i;
      }
    }
  }
  // Every entry of every table reached: value v of table t for all t, v.
  std::vector<RqBeat> every;
  for (int t = 0; t < kTables; ++t) {
    for (int v = -128; v <= 127; v += C) {
      RqBeat b;
      for (int c = 0; c < C; ++c) {
        b.acc[c] = std::min(127, v + c);
        b.mult[c] = 1;
        b.shift[c] = 0;
      }
      b.table = t;
      every.push_back(b);
    }
  }
  check(every, run(every, 0.2, 0.2));
  EXPECT_FALSE(dut().err_o);
}

TEST_F(StrataRequant, RandomHeavyBackPressure) { random_test(1000, 0.1, 0.8); }

// --- Edge cases. ------------------------------------------------------------

// Shift 0 and 47, multiplier 0 and 65535, acc INT32_MIN / INT32_MAX / 0 / +-1,
// every combination, under each clamp (none, ReLU, [0, 6], negative-only).
TEST_F(StrataRequant, ExtremeOperandsUnderEveryClamp) {
  const int32_t accs[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX};
  const uint16_t mults[] = {0, 1, 32768, 65535};
  const uint8_t shifts[] = {0, 1, 16, 31, 32, kMaxShift - 1, kMaxShift};
  const int clamps[][2] = {{-128, 127}, {0, 127}, {0, 6}, {-100, -20}, {5, 5}};
  std::vector<RqBeat> beats;
  RqBeat b;
  int c = 0;
  for (const auto& cl : clamps) {
    for (int32_t a : accs) {
      for (uint16_t m : mults) {
        for (uint8_t s : shifts) {
          b.acc[c] = a;
          b.mult[c] = m;
          b.shift[c] = s;
          b.lo = cl[0];
          b.hi = cl[1];
          if (++c == C) {
            beats.push_back(b);
            c = 0;
          }
        }
      }
    }
    if (c != 0) {  // flush the partial beat before the clamp changes
      beats.push_back(b);
      c = 0;
    }
  }
  check(beats, run(beats, 0.2, 0.2));
  EXPECT_FALSE(dut().err_o);
}

// Ties at exactly .5 round toward +infinity for both signs; the values are
// also written out literally, so the contract itself is under test here.
TEST_F(StrataRequant, TiesRoundHalfUp) {
  struct Tie {
    int32_t acc;
    uint16_t mult;
    uint8_t shift;
    int want;
  };
  const Tie ties[] = {
      {5, 1, 1, 3},
      {-5, 1, 1, -2},
      {1, 1, 1, 1},
      {-1, 1, 1, 0},
      {3, 1, 1, 2},
      {-3, 1, 1, -1},
      {6, 1, 2, 2},
      {-6, 1, 2, -1},
      {3, 2, 2, 2},
      {-3, 2, 2, -1},
      {96, 1, 6, 2},
      {-96, 1, 6, -1},
      {2, 3, 2, 2},
      {-2, 3, 2, -1},
      {1 << 30, 1, 31, 1},
      {-(1 << 30), 1, 31, 0},
      {INT32_MIN, 65535, 47, -1},
      {INT32_MAX, 65535, 47, 1},
      {127 * 2 + 1, 1, 1, 127},
      {-128 * 2 - 1, 1, 1, -128},
  };
  std::vector<RqBeat> beats;
  for (size_t i = 0; i < std::size(ties); i += C) {
    RqBeat b;
    for (int c = 0; c < C; ++c) {
      const Tie& t = ties[std::min(i + c, std::size(ties) - 1)];
      b.acc[c] = t.acc;
      b.mult[c] = t.mult;
      b.shift[c] = t.shift;
      ASSERT_EQ(requantize(t.acc, t.mult, t.shift, -128, 127), t.want)
          << "golden model disagrees with the contract for acc=" << t.acc;
    }
    beats.push_back(b);
  }
  const auto got = run(beats, 0.0, 0.0);
  check(beats, got);
}

// Every shift 0..47 against products at powers of two +-1 (each step of the
// shifter's overflow decision) and at the int8 limits of the rounded result
// (127.5 and -128.5 times 2^S, and one below / above).
TEST_F(StrataRequant, EveryShiftAtPowerOfTwoAndSaturationBoundaries) {
  struct Op {
    int32_t acc;
    uint16_t mult;
  };
  std::vector<Op> ops;
  // acc * M = +-2^j + d * 2^(j - a) with acc = +-2^a + d, M = 2^(j - a).
  for (int j = 0; j <= 45; ++j) {
    const int a = std::min(j, 29);
    const auto mult = static_cast<uint16_t>(1u << (j - a));
    for (int sign : {1, -1}) {
      for (int d : {-1, 0, 1}) {
        ops.push_back({static_cast<int32_t>(sign * (int64_t{1} << a) + d), mult});
      }
    }
  }
  std::vector<RqBeat> beats;
  RqBeat b;
  int c = 0;
  auto add = [&](int32_t acc, uint16_t mult, int s) {
    b.acc[c] = acc;
    b.mult[c] = mult;
    b.shift[c] = static_cast<uint8_t>(s);
    if (++c == C) {
      beats.push_back(b);
      c = 0;
    }
  };
  for (int s = 0; s <= kMaxShift; ++s) {
    for (const Op& op : ops) add(op.acc, op.mult, s);
    // 255 * 2^(s-1) is exactly 127.5 * 2^s (rounds to 128, saturates); -257 *
    // 2^(s-1) is -128.5 * 2^s (rounds to -128); one less is the last value
    // below each edge (M = 1 keeps the +-1 exact while acc fits int32).
    if (s >= 1) {
      const int a = std::min(s - 1, 22);
      const auto mult = static_cast<uint16_t>(1u << (s - 1 - a));
      if (s - 1 - a <= 15) {
        add(static_cast<int32_t>(int64_t{255} << a), mult, s);
        add(static_cast<int32_t>(int64_t{-257} << a), mult, s);
      }
      if (s - 1 <= 22) {
        add(static_cast<int32_t>((int64_t{255} << (s - 1)) - 1), 1, s);
        add(static_cast<int32_t>((int64_t{-257} << (s - 1)) + 1), 1, s);
      }
    }
  }
  if (c != 0) beats.push_back(b);
  check(beats, run(beats, 0.1, 0.1));
  EXPECT_FALSE(dut().err_o);
}

// --- Throughput and back-pressure. -----------------------------------------

TEST_F(StrataRequant, BlockedOutputLosesNothing) {
  std::vector<RqBeat> beats;
  for (int i = 0; i < 300; ++i) beats.push_back(random_beat());
  RqStats st;
  const auto got = run(beats, 0.0, 0.0, &st, [](uint64_t t) { return t >= 100 && t % 3 != 0; });
  check(beats, got);
  EXPECT_EQ(st.max_in_flight, static_cast<uint64_t>(kResultDepth))
      << "beats accepted while the output was blocked";
}

// --- Bad parameters: reported, with the documented results, no hang. -------

TEST_F(StrataRequant, BadShiftIsReportedAndSaturates) {
  std::vector<RqBeat> beats;
  for (int i = 0; i < 50; ++i) beats.push_back(random_beat());
  check(beats, run(beats, 0.0, 0.0));
  EXPECT_FALSE(dut().err_o);
  // Every shift 48..63 on INT32_MAX * 65535: 1 at the saturated shift 47,
  // 0 at any larger one, so an unsaturated shift shows.
  beats.clear();
  for (int s = kMaxShift + 1; s < 64; s += C) {
    RqBeat bad = random_beat();
    for (int c = 0; c < C; ++c) {
      bad.acc[c] = INT32_MAX;
      bad.mult[c] = 65535;
      bad.shift[c] = static_cast<uint8_t>(std::min(s + c, 63));
    }
    bad.lo = -128;
    bad.hi = 127;
    beats.push_back(bad);
  }
  beats.push_back(random_beat());
  ASSERT_EQ(expected(beats[0], 0), 1);
  check(beats, run(beats, 0.0, 0.0));
  EXPECT_TRUE(dut().err_o) << "shift > " << kMaxShift << " not reported";
  reset();
  EXPECT_FALSE(dut().err_o) << "reset clears err_o";
}

TEST_F(StrataRequant, InvertedClampIsReported) {
  RqBeat bad = random_beat();
  bad.lo = 10;
  bad.hi = -10;
  const std::vector<RqBeat> beats = {bad};
  check(beats, run(beats, 0.0, 0.0));
  EXPECT_TRUE(dut().err_o) << "lo > hi not reported";
}

}  // namespace
}  // namespace strata::tb
