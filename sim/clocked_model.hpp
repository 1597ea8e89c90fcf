// SPDX-License-Identifier: Apache-2.0
// A Verilated model in a context of its own, with an optional FST trace: what
// the runners of sim/ (accel_model.hpp, chain_runner.cpp) build their cycle
// loops on. The context draws the initial values from the seed (randReset
// 2), an RTL assertion does not abort the process (clock() reports it, the
// runner collects it), and coverage is written when the model goes away.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sim_coverage.hpp"
#include "strata/error.hpp"

namespace strata::tb {

template <class V>
class ClockedModel {
 public:
  // `coverage` names the model's coverage file (sim_coverage.hpp).
  ClockedModel(uint64_t seed, const std::string& trace_path, std::string coverage)
      : coverage_(std::move(coverage)) {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randReset(2);
    ctx_->randSeed(static_cast<int>(seed & 0x7fffffff));
    ctx_->fatalOnError(false);
    if (!trace_path.empty()) ctx_->traceEverOn(true);
    dut_ = std::make_unique<V>(ctx_.get(), "dut");
    if (!trace_path.empty()) {
      trace_ = std::make_unique<VerilatedFstC>();
      dut_->trace(trace_.get(), 99);
      trace_->open(trace_path.c_str());
      if (!trace_->isOpen()) {
        throw Error(fmt::format("cannot open the trace file '{}'", trace_path));
      }
    }
  }

  ~ClockedModel() {
    dut_->final();
    if (trace_) trace_->close();
    write_coverage(*ctx_, coverage_);
  }

  ClockedModel(const ClockedModel&) = delete;
  ClockedModel& operator=(const ClockedModel&) = delete;

  V& dut() { return *dut_; }
  uint64_t cycle() const { return cycle_; }

  // A falling and a rising edge; true when an RTL assertion failed in them.
  bool clock() {
    dut_->clk_i = 0;
    dut_->eval();
    dump();
    dut_->clk_i = 1;
    dut_->eval();
    dump();
    ++cycle_;
    if (!ctx_->gotError()) return false;
    ctx_->gotError(false);
    return true;
  }

 private:
  void dump() {
    if (trace_) trace_->dump(time_);
    ++time_;
  }

  std::string coverage_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> dut_;
  std::unique_ptr<VerilatedFstC> trace_;
  uint64_t cycle_ = 0, time_ = 0;
};

}  // namespace strata::tb
