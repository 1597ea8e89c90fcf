// SPDX-License-Identifier: Apache-2.0
// Shared GoogleTest fixture for Verilated block and network benches.
//
// Per test: a fresh VerilatedContext and model, reset, optional FST trace,
// a seeded RNG, and final() in teardown. The seed is printed on every run and
// can be set with STRATA_SEED=<n>; STRATA_TRACE=1 writes
// build/waves/<Suite>_<Test>.fst (directory overridable with STRATA_WAVE_DIR).
//
// Cycle discipline (the same in every bench):
//   1. drive point: after the previous rising edge, the test sets inputs;
//   2. settle():    combinational outputs settle for those inputs;
//   3. sample point: the test reads outputs and records handshakes
//                    (valid && ready) that will fire at the next edge;
//   4. tick():      falling edge, then rising edge (registers update).
// The DUT's clock port must be clk_i and its reset rst_ni (active low).
//
// Coverage builds (cmake -DSTRATA_COVERAGE=ON) write each test's line and
// toggle counts in teardown (write_coverage, sim_coverage.hpp).
#pragma once

#include <gtest/gtest.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>

#include "sim_coverage.hpp"
#include "throttle.hpp"

namespace strata::tb {

// Seed for this test: STRATA_SEED if set, otherwise drawn from the OS.
inline uint64_t test_seed() {
  if (const char* s = std::getenv("STRATA_SEED"); s != nullptr && *s != '\0') {
    return std::strtoull(s, nullptr, 0);
  }
  return std::random_device{}();
}

inline bool trace_requested() {
  const char* s = std::getenv("STRATA_TRACE");
  return s != nullptr && *s != '\0' && std::string(s) != "0";
}

template <class Model>
class SimFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = test_seed();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    test_name_ = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : test_name_) {
      if (c == '/') c = '_';
    }
    std::cout << "[ SEED     ] " << test_name_ << " STRATA_SEED=" << seed_ << std::endl;
    RecordProperty("seed", std::to_string(seed_));
    rng_.seed(seed_);

    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(2);  // --x-initial unique: randomise initial state from the seed
    ctx_->randSeed(static_cast<int>(seed_ & 0x7fffffff));
    ctx_->fatalOnError(false);  // assertion failures fail the test, not the process
    if (trace_requested()) ctx_->traceEverOn(true);
    dut_ = std::make_unique<Model>(ctx_.get(), "dut");
    if (trace_requested()) open_trace();
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    dut_->eval();
  }

  void TearDown() override {
    if (dut_) dut_->final();
    if (ctx_) write_coverage(*ctx_, test_name_);
    if (trace_) trace_->close();
    trace_.reset();
    dut_.reset();
    ctx_.reset();
  }

  // Holds reset low for `cycles` rising edges, then releases it.
  void reset(int cycles = 4) {
    dut_->rst_ni = 0;
    for (int i = 0; i < cycles; ++i) tick();
    dut_->rst_ni = 1;
    settle();
  }

  // Re-evaluates combinational logic after inputs changed (no clock edge).
  void settle() { dut_->eval(); }

  // One clock cycle: falling edge, then rising edge.
  void tick() {
    dut_->clk_i = 0;
    dut_->eval();
    dump();
    dut_->clk_i = 1;
    dut_->eval();
    dump();
    ++cycle_;
    check_assertions();
  }

  // Fails the test if a SystemVerilog assertion or $error fired.
  void check_assertions() {
    if (ctx_->gotError()) {
      ctx_->gotError(false);
      if (expect_rtl_errors_) {
        ++rtl_errors_;
      } else {
        ADD_FAILURE() << "RTL assertion failed at cycle " << cycle_ << " (STRATA_SEED=" << seed_
                      << ")";
      }
    }
  }

  // A test that provokes an RTL assertion on purpose (a condition the RTL
  // must both assert on and report, e.g. a counter overflow) counts the
  // cycles with a failed assertion instead of failing; check rtl_errors().
  void expect_rtl_errors(bool on) { expect_rtl_errors_ = on; }
  int rtl_errors() const { return rtl_errors_; }

  Model& dut() { return *dut_; }
  std::mt19937_64& rng() { return rng_; }
  uint64_t seed() const { return seed_; }
  uint64_t cycle() const { return cycle_; }
  const std::string& test_name() const { return test_name_; }

  // Uniform integer in [lo, hi].
  int64_t rand_int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  void open_trace() {
    const char* dir_env = std::getenv("STRATA_WAVE_DIR");
    std::filesystem::path dir = dir_env != nullptr ? dir_env : STRATA_WAVE_DIR_DEFAULT;
    std::filesystem::create_directories(dir);
    const auto path = (dir / (test_name_ + ".fst")).string();
    trace_ = std::make_unique<VerilatedFstC>();
    dut_->trace(trace_.get(), 99);
    trace_->open(path.c_str());
    std::cout << "[ TRACE    ] " << path << std::endl;
  }

  void dump() {
    if (trace_) trace_->dump(time_);
    ++time_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> dut_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::mt19937_64 rng_;
  uint64_t seed_ = 0;
  uint64_t cycle_ = 0;
  uint64_t time_ = 0;
  std::string test_name_;
  bool expect_rtl_errors_ = false;
  int rtl_errors_ = 0;
};

}  // namespace strata::tb
