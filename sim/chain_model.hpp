// SPDX-License-Identifier: Apache-2.0
// ChainRunner's model side (see chain_runner.hpp): ChainModelSim, the chain
// runner for one Verilated strata_cascade_top class (Stages accelerators of
// one hardware configuration, AXI addresses of AddrBits and beats of
// DataBits). A .cpp per class instantiates it and provides its factory
// (chain_model_config.cpp). The cycle loop follows the drive / settle /
// sample / tick discipline of tb/common/sim_fixture.hpp, with one memory
// model and one CSR driver per stage, each seeing its stage through a
// StageBusView (stage_bus_view.hpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "axi_mem_model.hpp"
#include "axil_driver.hpp"
#include "chain_runner.hpp"
#include "clocked_model.hpp"
#include "stage_bus_view.hpp"
#include "strata/error.hpp"

namespace strata::tb {

template <class Dut, unsigned AddrBits, unsigned DataBits, int Stages>
class ChainModelSim final : public ChainRunner::Model {
  using View = StageBusView<AddrBits, DataBits>;

 public:
  explicit ChainModelSim(const ChainRunnerOptions& o)
      : opts_(o),
        rng_(o.run.seed),
        model_(o.run.seed, o.run.trace_path, "strata_cascade_top"),
        dut_(&model_.dut()) {
    AxiMemConfig cfg;
    cfg.read_latency = o.run.read_latency;
    cfg.ar_stall = cfg.aw_stall = cfg.w_stall = cfg.r_gap = cfg.b_gap = o.run.stall;
    for (int k = 0; k < Stages; ++k) {
      stages_.push_back(std::make_unique<Stage>(k));
      Stage& s = *stages_.back();
      s.axi = std::make_unique<AxiMemModel<View>>(s.view, s.mem, rng_, cfg);
      s.csr = std::make_unique<AxilDriver<View>>(
          s.view, [this] { step(); }, rng_, 10000);
      s.axi->set_failure_handler(
          [this, k](const std::string& m) { bench_error(fmt::format("stage {}: {}", k, m)); });
      s.csr->set_failure_handler(
          [this, k](const std::string& m) { bench_error(fmt::format("stage {}: {}", k, m)); });
    }
    // The chain's ends tied off: nothing enters stage 0, the last output is taken.
    dut_->s_axis_cas_tvalid = 0;
    dut_->s_axis_cas_tlast = 0;
    dut_->s_axis_cas_tuser = 0;
    dut_->m_axis_cas_tready = 1;
    dut_->chain_stop_i = 0;
    dut_->link_hold_i = 0;
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    for (int i = 0; i < 4; ++i) clock();
    dut_->rst_ni = 1;
    dut_->eval();
  }

  int stages() const override { return Stages; }

  ChainReport run_stream(const ChainProgram& chain, const std::vector<Tensor<int8_t>>& inputs,
                         std::vector<Tensor<int8_t>>& outputs) override {
    const int used = static_cast<int>(chain.stages.size());
    if (used < 1 || used > Stages) {
      throw Error(fmt::format("a chain of {} stages; the built cascade has {}", used, Stages));
    }
    const size_t images = inputs.size();
    ChainReport r;
    r.stages.resize(static_cast<size_t>(used));
    r.image_start.assign(images, 0);
    r.image_done.assign(images, 0);
    outputs.clear();
    // Each stage's memory: its program image (instructions at byte 0).
    for (int k = 0; k < used; ++k) {
      stages_[static_cast<size_t>(k)]->mem = SparseMemory();
      stages_[static_cast<size_t>(k)]->mem.write_block(
          0, chain.stages[static_cast<size_t>(k)].program.image);
    }
    std::vector<size_t> next(static_cast<size_t>(used), 0);  // next image of each stage
    std::vector<bool> running(static_cast<size_t>(used), false);
    bool stopping = false;
    stop_seen_ = false;
    uint64_t quiet_since = 0;  // stopping: the cycle the last stage stopped on its own
    const uint64_t started = model_.cycle();
    uint64_t first_start = 0, last_done = 0;
    bool any_start = false;
    const auto all_idle = [&] {
      return std::none_of(running.begin(), running.end(), [](bool b) { return b; });
    };
    while (model_.cycle() - started < opts_.run.timeout) {
      // Start idle stages, the last first (its receiver runs before a sender starts).
      for (int k = used - 1; k >= 0 && !stopping; --k) {
        const auto ku = static_cast<size_t>(k);
        if (stop_seen_) break;  // a stage stopped (also during the CSR accesses)
        if (running[ku] || next[ku] >= images) continue;
        // A stage runs image i only once the stage before has started it or
        // starts it in this pass (stage 0: any time): a stage is never more
        // than one image ahead of its sender.
        if (k > 0 && next[ku] > next[ku - 1] + (running[ku - 1] ? 1 : 0)) continue;
        const Program& p = chain.stages[ku].program;
        if (k == 0) write_image(p, inputs[next[0]]);
        start(k, static_cast<uint32_t>(p.instructions.size()));
        running[ku] = true;
        if (k == 0) {
          r.image_start[next[0]] = model_.cycle();
          if (!any_start) first_start = model_.cycle();
          any_start = true;
        }
      }
      if (all_idle() && (stopping || next[static_cast<size_t>(used - 1)] >= images)) break;
      step();
      // A stage stops with an error: no stage starts again (the running ones
      // stop with CHAIN_STOP while it drains). stop_seen_ is set by every
      // cycle's step, the CSR accesses' included.
      if (stop_seen_ && !stopping) {
        stopping = true;
        quiet_since = model_.cycle();
      }
      if (dut_->chain_stop_o) quiet_since = model_.cycle();
      // A stage started after the stop can wait for a transfer that never
      // comes: once the chain has been quiet for a while, START aborts it
      // (BUSY_START), as a host would.
      if (stopping && model_.cycle() - quiet_since == kQuietCycles) {
        for (int k = 0; k < used; ++k) {
          if (running[static_cast<size_t>(k)]) {
            stages_[static_cast<size_t>(k)]->csr->write(csr::kCtrl, csr::kCtrlStart);
          }
        }
      }
      for (int k = 0; k < used; ++k) {
        const auto ku = static_cast<size_t>(k);
        if (!running[ku] || !stages_[ku]->view.irq_o) continue;
        Stage& s = *stages_[ku];
        const uint32_t ec = s.csr->read(csr::kErrorCode);
        StageReport& sr = r.stages[ku];
        sr.error = static_cast<csr::ErrorCode>(ec & csr::kErrorCodeCode);
        sr.error_index = static_cast<uint16_t>(ec >> csr::kErrorCodeIndexLsb);
        for (size_t c = 0; c < csr::kPerfCounters.size(); ++c) {
          sr.counters[c] += s.csr->read64(csr::kPerfCounters[c]);
        }
        s.csr->write(csr::kIrqStatus, csr::kIrqStatusDone | csr::kIrqStatusError);
        running[ku] = false;
        ++sr.runs;
        if (sr.error != csr::ErrorCode::kNone) {
          stopping = true;
          if (sr.error != csr::ErrorCode::kChainStop && r.failed_stage < 0) {
            r.failed_stage = k;
            r.error = sr.error;
            r.error_index = sr.error_index;
          }
          continue;
        }
        if (k == used - 1) {
          const Program& p = chain.stages[ku].program;
          const std::vector<uint8_t> after = s.mem.read_block(0, p.image.size());
          outputs.push_back(read_output(p, after, 0));
          r.image_done[next[ku]] = model_.cycle();
          last_done = model_.cycle();
        }
        ++next[ku];
      }
    }
    r.finished = stopping ? all_idle() : next[static_cast<size_t>(used - 1)] >= images;
    if (stopping && r.failed_stage < 0) {
      // Only CHAIN_STOP seen: the stage that failed had already reported.
      for (int k = 0; k < used; ++k) {
        const StageReport& sr = r.stages[static_cast<size_t>(k)];
        if (sr.error != csr::ErrorCode::kNone) {
          r.failed_stage = k;
          r.error = sr.error;
          r.error_index = sr.error_index;
          break;
        }
      }
    }
    r.cycles = last_done > first_start ? last_done - first_start : 0;
    r.bench_errors = std::move(errors_);
    errors_.clear();
    return r;
  }

  void add_read_error(int stage, uint64_t begin, uint64_t end) override {
    stages_.at(static_cast<size_t>(stage))
        ->axi->add_error_region({begin, end, AxiResp::kSlvErr, true, false});
  }
  void clear_errors() override {
    for (auto& s : stages_) s->axi->clear_error_regions();
  }

 private:
  struct Stage {
    explicit Stage(int k) : view(static_cast<unsigned>(k)) {}
    View view;
    SparseMemory mem;
    std::unique_ptr<AxiMemModel<View>> axi;
    std::unique_ptr<AxilDriver<View>> csr;
  };

  void bench_error(const std::string& what) {
    if (errors_.size() < 10) errors_.push_back(what);
  }

  // The image's input bytes into stage 0's input region.
  void write_image(const Program& p, const Tensor<int8_t>& input) {
    std::vector<uint8_t> scratch = p.image;
    write_input(p, scratch, 0, input);
    const MemRegion& in = p.region("input0");
    stages_[0]->mem.write_block(
        in.offset,
        std::vector<uint8_t>(scratch.begin() + static_cast<std::ptrdiff_t>(in.offset),
                             scratch.begin() + static_cast<std::ptrdiff_t>(in.offset + in.size)));
  }

  void start(int k, uint32_t instructions) {
    AxilDriver<View>& c = *stages_[static_cast<size_t>(k)]->csr;
    c.write(csr::kInstrBaseLo, 0);
    c.write(csr::kInstrBaseHi, 0);
    c.write(csr::kInstrLimit, instructions);
    c.write(csr::kIrqEnable, csr::kIrqEnableDone | csr::kIrqEnableError);
    c.write(csr::kCtrl, csr::kCtrlStart | (opts_.run.fine_grain ? csr::kCtrlFineGrain : 0));
  }

  void step() {
    for (auto& s : stages_) {
      s->axi->drive();
      s->csr->drive();
      s->view.to_dut(*dut_);
    }
    uint32_t hold = 0;
    if (opts_.link_stall > 0) {
      for (int l = 0; l + 1 < Stages; ++l) {
        if (std::bernoulli_distribution(opts_.link_stall)(rng_)) hold |= 1u << l;
      }
    }
    dut_->link_hold_i = hold;
    dut_->eval();
    if (dut_->chain_stop_o) stop_seen_ = true;
    for (auto& s : stages_) {
      s->view.from_dut(*dut_);
      s->axi->sample();
      s->csr->sample();
    }
    clock();
  }

  void clock() {
    if (model_.clock())
      bench_error(fmt::format("RTL assertion failed at cycle {}", model_.cycle()));
  }

  ChainRunnerOptions opts_;
  std::mt19937_64 rng_;
  ClockedModel<Dut> model_;
  Dut* dut_;  // model_'s
  std::vector<std::unique_ptr<Stage>> stages_;
  bool stop_seen_ = false;  // chain_stop_o seen since run_stream began
  static constexpr uint64_t kQuietCycles = 20000;
  std::vector<std::string> errors_;
};

}  // namespace strata::tb
