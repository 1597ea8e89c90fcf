// SPDX-License-Identifier: Apache-2.0
// strata_fabric_mul bench (through tb/unit/strata_fabric_mul_tb_top.sv): seven
// operand shapes (signed and unsigned, odd and even widths, one-bit operands)
// under random operands and random enables, every cycle against a C++ model
// of strata_dsp_mul's registers: the operands load on ce_in, the product of
// the loaded operands on ce_out, p = a * b two cycles after a pair with both
// enables high. The int8 x int8 shape of the PEs is also checked pair by pair
// in strata_pe_mul_fabric_test (every pair, latency, throughput).
#include <Vstrata_fabric_mul_tb_top.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "port_fields.hpp"
#include "sim_fixture.hpp"

namespace strata::tb {
namespace {

struct Shape {
  unsigned a_width, b_width;
  bool a_signed, b_signed;
};

// Must match strata_fabric_mul_tb_top's KAWidth / KBWidth / KASigned / KBSigned.
constexpr int kVariants = 7;
constexpr unsigned kSlice = 32;
constexpr std::array<Shape, kVariants> kShapes = {{{8, 8, true, true},
                                                   {7, 9, false, true},
                                                   {16, 12, false, false},
                                                   {9, 5, true, false},
                                                   {5, 16, true, true},
                                                   {1, 1, true, true},
                                                   {3, 1, false, true}}};

int64_t operand(uint64_t bits, unsigned width, bool is_signed) {
  const uint64_t v = bits & ((uint64_t{1} << width) - 1);
  return is_signed && (v >> (width - 1)) != 0 ? static_cast<int64_t>(v) - (int64_t{1} << width)
                                              : static_cast<int64_t>(v);
}

// The product's AWidth + BWidth bits (two's complement when negative).
uint64_t product(const Shape& s, uint64_t a, uint64_t b) {
  const int64_t p = operand(a, s.a_width, s.a_signed) * operand(b, s.b_width, s.b_signed);
  return static_cast<uint64_t>(p) & ((uint64_t{1} << (s.a_width + s.b_width)) - 1);
}

class StrataFabricMul : public SimFixture<Vstrata_fabric_mul_tb_top> {
 protected:
  void SetUp() override {
    SimFixture::SetUp();
    reset();
  }

  // `cycles` random cycles; each enable is high with probability `ce_rate`.
  // The first two cycles load both register stages so the model starts known.
  void run(int cycles, double ce_rate) {
    uint64_t a_q = 0, b_q = 0;  // the model's operand registers (every shape slices them)
    std::array<uint64_t, kVariants> p_q{};
    std::bernoulli_distribution ce(ce_rate);
    for (int c = 0; c < cycles; ++c) {
      const uint64_t a = static_cast<uint64_t>(rand_int(0, 0xFFFF));
      const uint64_t b = static_cast<uint64_t>(rand_int(0, 0xFFFF));
      const bool ce_in = c < 2 || ce(rng());
      const bool ce_out = c < 2 || ce(rng());
      dut().a_i = static_cast<uint16_t>(a);
      dut().b_i = static_cast<uint16_t>(b);
      dut().ce_in_i = ce_in;
      dut().ce_out_i = ce_out;
      tick();
      if (ce_out) {
        for (int v = 0; v < kVariants; ++v) p_q[v] = product(kShapes[v], a_q, b_q);
      }
      if (ce_in) {
        a_q = a;
        b_q = b;
      }
      if (c < 2) continue;
      for (int v = 0; v < kVariants; ++v) {
        const uint64_t got = get_field(dut().p_o, v * kSlice, kSlice);
        if (got != p_q[v]) {
          const Shape& s = kShapes[v];
          ADD_FAILURE() << fmt::format(
              "cycle {}: {}{} x {}{}: expected 0x{:x}, got 0x{:x} (STRATA_SEED={})", c,
              s.a_signed ? "s" : "u", s.a_width, s.b_signed ? "s" : "u", s.b_width, p_q[v], got,
              seed());
          return;
        }
      }
    }
  }
};

// Both enables always high: a product per cycle, two cycles after its pair.
TEST_F(StrataFabricMul, FullThroughputMatchesTheModel) { run(20000, 1.0); }

// Random enables: a held pair register keeps its operands' partial sums and a
// held output register its product, exactly as strata_dsp_mul's registers.
TEST_F(StrataFabricMul, EnablesHoldLikeDspRegisters) {
  run(20000, 0.5);
  run(20000, 0.2);
}

}  // namespace
}  // namespace strata::tb
