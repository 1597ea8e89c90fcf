// SPDX-License-Identifier: Apache-2.0
// strata_fifo bench: every (Depth, OutReg, WeCopies) variant of
// strata_fifo_tb_top against a C++ queue model under random push and pop
// traffic. Each cycle checks, per variant: in_ready (fewer than Depth words),
// out_valid (not empty), count, and the oldest word; the words popped come
// out in order. The input carries a random word while not valid (the storage
// is written whenever the FIFO is not full, push or not), and that word must
// never reach the output.
// With OutReg = 1 the head is a register; the flags, capacity and latency
// must be exactly those of the plain FIFO (a word pushed is visible the cycle
// after), which the same model checks for both.
#include <Vstrata_fifo_tb_top.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>

#include "port_fields.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

constexpr int kVariants = 11;
constexpr int kWidth = 16;
constexpr int kCountWidth = 4;
// Must match strata_fifo_tb_top's KDepth / KOutReg / KWeCopies.
constexpr std::array<int, kVariants> kDepth = {1, 1, 2, 2, 3, 3, 4, 5, 8, 2, 3};
constexpr std::array<int, kVariants> kOutReg = {0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0};
constexpr std::array<int, kVariants> kWeCopies = {1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 5};

class StrataFifo : public SimFixture<Vstrata_fifo_tb_top> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    reset();
  }

  static uint32_t field(uint32_t word, int v) { return (word >> v) & 1u; }

  static uint32_t slice(const VlWide<6>& w, int v, int bits) {
    return static_cast<uint32_t>(get_field(w, unsigned(v * bits), unsigned(bits)));
  }

  static void set_slice(VlWide<6>& w, int v, int bits, uint32_t value) {
    set_field(w, unsigned(v * bits), unsigned(bits), value);
  }

  // Runs `cycles` of random traffic: each variant offers a word with
  // probability push_pct (held until taken) and is ready with pop_pct;
  // checks every output against the models.
  void run(int cycles, int push_pct, int pop_pct) {
    auto& d = dut();
    for (int c = 0; c < cycles; ++c) {
      uint32_t in_valid = 0, out_ready = 0;
      for (int v = 0; v < kVariants; ++v) {
        // A word offered stays offered (and unchanged) until it is taken.
        const bool want_push = offered_[v] || rand_int(0, 99) < push_pct;
        const bool want_pop = rand_int(0, 99) < pop_pct;
        in_valid |= uint32_t{want_push} << v;
        out_ready |= uint32_t{want_pop} << v;
        const uint32_t word =
            want_push ? next_word_[v] : static_cast<uint32_t>(rand_int(0, 0xFFFF));
        set_slice(d.in_data_i, v, kWidth, word);
      }
      d.in_valid_i = in_valid;
      d.out_ready_i = out_ready;
      settle();
      for (int v = 0; v < kVariants; ++v) {
        auto& q = model_[v];
        const auto where = fmt::format("variant {} (Depth {}, OutReg {}, WeCopies {}) cycle {}", v,
                                       kDepth[v], kOutReg[v], kWeCopies[v], cycle());
        ASSERT_EQ(field(d.in_ready_o, v), q.size() < static_cast<size_t>(kDepth[v]) ? 1u : 0u)
            << where;
        ASSERT_EQ(field(d.out_valid_o, v), q.empty() ? 0u : 1u) << where;
        ASSERT_EQ((d.count_o >> (v * kCountWidth)) & 0xFu, q.size()) << where;
        if (!q.empty()) ASSERT_EQ(slice(d.out_data_o, v, kWidth), q.front()) << where;
        const bool push = field(in_valid, v) && field(d.in_ready_o, v);
        const bool pop = field(out_ready, v) && field(d.out_valid_o, v);
        if (pop) {
          q.pop_front();
          ++popped_[v];
        }
        offered_[v] = field(in_valid, v) && !push;
        if (push) {
          q.push_back(next_word_[v]);
          next_word_[v] = static_cast<uint16_t>(rand_int(0, 0xFFFF));
        }
      }
      tick();
    }
  }

  std::array<std::deque<uint16_t>, kVariants> model_;
  std::array<uint16_t, kVariants> next_word_{};
  std::array<int, kVariants> popped_{};
  std::array<bool, kVariants> offered_{};
};

// Mixed rates: the FIFOs fill, drain and sit at every level in between.
TEST_F(StrataFifo, RandomTrafficMatchesQueueModel) {
  run(3000, 60, 60);
  run(2000, 90, 30);    // mostly full
  run(2000, 30, 90);    // mostly empty: the head's bypass path
  run(2000, 100, 100);  // full rate: one push and one pop per cycle
  for (int v = 0; v < kVariants; ++v) {
    EXPECT_GT(popped_[v], 2000) << "variant " << v << " moved too few words to mean anything";
  }
}

// Full rate from empty: a word pushed each cycle is at the output the cycle
// after, and a FIFO of any depth (1 excepted: it alternates) passes one word
// per cycle.
TEST_F(StrataFifo, FullRateAndLatency) {
  run(200, 100, 100);
  for (int v = 0; v < kVariants; ++v) {
    const int expected = kDepth[v] == 1 ? 99 : 198;
    EXPECT_GE(popped_[v], expected) << "variant " << v << " (Depth " << kDepth[v] << ")";
  }
}

}  // namespace
}  // namespace strata::tb
