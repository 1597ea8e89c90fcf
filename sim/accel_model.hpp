// SPDX-License-Identifier: Apache-2.0
// AccelRunner's model side (see accel_runner.hpp): ModelSim<V>, the
// implementation of AccelRunner::Model (accel_model_iface.hpp) for one
// Verilated strata_top class V. Each model is Verilated into its own class
// (Vstrata_top and Vstrata_top_fast for the build's default configuration,
// Vstrata_top_<name> for the others, sim/CMakeLists.txt);
// accel_model_config.cpp, compiled once per class, instantiates ModelSim and
// provides its factory. Built without GoogleTest
// (STRATA_TB_NO_GTEST): failed bench checks are collected into the report.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "accel_model_iface.hpp"
#include "accel_runner.hpp"
#include "axi_mem_model.hpp"
#include "axil_driver.hpp"
#include "clocked_model.hpp"
#include "strata/error.hpp"
#include "strata/isa.hpp"

namespace strata::tb {

// Bits of strata_top's trace_state_o (rtl/strata_top.sv, docs/architecture.md).
namespace trace_bit {
inline constexpr unsigned kLoadBusy = 0, kLoadDep = 1, kLoadMem = 2, kComputeBusy = 3,
                          kComputeDep = 4, kComputeOut = 5, kMacActive = 6, kStoreBusy = 7,
                          kStoreDep = 8, kStoreMem = 9;
}  // namespace trace_bit

// Retire pulse bits of trace_retire_o, and the 16-bit fields of trace_index_o.
inline constexpr unsigned kRetireLoad = 0, kRetireCompute = 1, kRetireStore = 2, kRetireFetch = 3;

template <class T>
requires std::is_integral_v<T>
bool port_any(const T& port) { return port != 0; }
template <std::size_t W>
bool port_any(const VlWide<W>& port) {
  for (std::size_t w = 0; w < W; ++w) {
    if (port[w] != 0) return true;
  }
  return false;
}

template <class V>
class ModelSim final : public AccelRunner::Model {
 public:
  ModelSim(const RunnerOptions& o, const HwTarget& target)
      : beat_bytes_(static_cast<uint64_t>(target.beat_bytes())),
        rng_(o.seed),
        model_(o.seed, o.trace_path, "strata_top"),
        dut_(&model_.dut()) {
    AxiMemConfig cfg;
    cfg.read_latency = o.read_latency;
    cfg.ar_stall = cfg.aw_stall = cfg.w_stall = cfg.r_gap = cfg.b_gap = o.stall;
    axi_ = std::make_unique<AxiMemModel<V>>(*dut_, mem_, rng_, cfg);
    csr_ = std::make_unique<AxilDriver<V>>(
        *dut_, [this] { step(); }, rng_, 10000);
    axi_->set_failure_handler([this](const std::string& m) { bench_error(m); });
    csr_->set_failure_handler([this](const std::string& m) { bench_error(m); });
    // A single accelerator: nothing on the cascade input, the output always
    // taken, no other stage to stop it (rtl/strata_top.sv).
    dut_->s_axis_cas_tvalid = 0;
    dut_->s_axis_cas_tlast = 0;
    dut_->s_axis_cas_tuser = 0;
    dut_->m_axis_cas_tready = 1;
    dut_->chain_stop_i = 0;
    // Reset with the agents idle: the bus outputs are undefined until then.
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    for (int i = 0; i < 4; ++i) clock();
    dut_->rst_ni = 1;
    dut_->eval();
  }

  ~ModelSim() override = default;

  uint32_t read32(uint32_t offset) override { return csr_->read(offset); }

  void write32(uint32_t offset, uint32_t value) override {
    csr_->write(offset, value);
    if (offset == csr::kCtrl && (value & csr::kCtrlStart) != 0) start_cycle_ = model_.cycle();
  }

  void mem_write(uint64_t addr, const uint8_t* src, size_t bytes) override {
    for (size_t i = 0; i < bytes; ++i) mem_.write(addr + i, src[i]);
  }

  void mem_read(uint64_t addr, uint8_t* dst, size_t bytes) const override {
    for (size_t i = 0; i < bytes; ++i) dst[i] = mem_.read(addr + i);
  }

  bool wait_irq(uint64_t cycles) override {
    for (uint64_t i = 0; i < cycles && !dut_->irq_o; ++i) step();
    return dut_->irq_o;
  }

  void begin_run(const uint8_t* program, uint64_t bytes, uint32_t instr_count) override {
    begin_layers(program, bytes, instr_count);
    start_cycle_ = model_.cycle();
  }

  void end_run(RunReport& r) override {
    r.cycles = model_.cycle() - start_cycle_;
    r.layers = layers_;
    for (const LayerCounts& l : layers_) {
      for (size_t c = 0; c < r.trace_total.size(); ++c) r.trace_total[c] += l.counts[c];
    }
    r.bench_errors = std::move(errors_);
    errors_.clear();
  }

  std::vector<uint8_t> memory(uint64_t size) const override {
    return mem_.read_block(0, static_cast<size_t>(size));
  }
  void add_error_region(uint64_t begin, uint64_t end, bool reads, bool writes) override {
    axi_->add_error_region({begin, end, AxiResp::kSlvErr, reads, writes});
  }
  void clear_errors() override { axi_->clear_error_regions(); }
  int protocol_errors() const override { return axi_->protocol_errors(); }

 private:
  static constexpr size_t kMaxErrorsKept = 10;

  void bench_error(const std::string& what) {
    if (errors_.size() < kMaxErrorsKept) errors_.push_back(what);
  }

  // The program's COMPUTE instructions in order (index, tag) and one layer
  // per tag, in order of each tag's first COMPUTE.
  void begin_layers(const uint8_t* program, uint64_t bytes, uint32_t instr_count) {
    computes_.clear();
    layers_.clear();
    next_compute_ = 0;
    for (uint64_t i = 0; i < instr_count; ++i) {
      if ((i + 1) * isa::kInstrBytes > bytes) break;
      const isa::Instruction in = isa::Instruction::from_bytes(&program[i * isa::kInstrBytes]);
      if (in.opcode_value() != static_cast<uint64_t>(isa::Opcode::kCompute)) continue;
      const int tag = static_cast<int>(isa::decode_header(in).tag);
      size_t slot = 0;
      while (slot < layers_.size() && layers_[slot].tag != tag) ++slot;
      if (slot == layers_.size()) layers_.push_back(LayerCounts{tag, {}, 0});
      computes_.push_back({i, slot});
    }
    if (layers_.empty()) layers_.push_back(LayerCounts{});  // a program without COMPUTE
  }

  // The layer the current cycle belongs to (see accel_runner.hpp).
  size_t current_layer() const {
    if (computes_.empty()) return 0;
    return computes_[std::min(next_compute_, computes_.size() - 1)].slot;
  }

  // Sample point: add this cycle's counter terms to its layer.
  void observe() {
    if (!dut_->trace_count_o) return;
    const size_t slot = current_layer();
    LayerCounts& l = layers_[slot];
    const auto state = static_cast<uint32_t>(dut_->trace_state_o);
    const auto bit = [&](unsigned b) -> uint64_t { return (state >> b) & 1u; };
    const auto retire = static_cast<uint32_t>(dut_->trace_retire_o);
    auto& c = l.counts;
    c[perf_slot(csr::kPerfCycles)] += 1;
    c[perf_slot(csr::kPerfLoadBusy)] += bit(trace_bit::kLoadBusy);
    c[perf_slot(csr::kPerfComputeBusy)] += bit(trace_bit::kComputeBusy);
    c[perf_slot(csr::kPerfStoreBusy)] += bit(trace_bit::kStoreBusy);
    c[perf_slot(csr::kPerfMacActive)] += bit(trace_bit::kMacActive);
    c[perf_slot(csr::kPerfMacs)] += static_cast<uint64_t>(dut_->trace_macs_o);
    c[perf_slot(csr::kPerfStallComputeDep)] += bit(trace_bit::kComputeDep);
    c[perf_slot(csr::kPerfStallComputeOut)] += bit(trace_bit::kComputeOut);
    c[perf_slot(csr::kPerfStallLoadDep)] += bit(trace_bit::kLoadDep);
    c[perf_slot(csr::kPerfStallLoadMem)] += bit(trace_bit::kLoadMem);
    c[perf_slot(csr::kPerfStallStoreDep)] += bit(trace_bit::kStoreDep);
    c[perf_slot(csr::kPerfStallStoreMem)] += bit(trace_bit::kStoreMem);
    c[perf_slot(csr::kPerfInstructions)] += static_cast<uint64_t>(std::popcount(retire & 0xFu));
    if (dut_->m_axi_rvalid && dut_->m_axi_rready) {
      c[perf_slot(csr::kPerfReadBytes)] += beat_bytes_;
    }
    if (dut_->m_axi_wvalid && dut_->m_axi_wready && port_any(dut_->m_axi_wstrb)) {
      c[perf_slot(csr::kPerfWriteBytes)] += beat_bytes_;
    }
    if ((retire >> kRetireCompute) & 1u) {
      const auto index = static_cast<uint64_t>((dut_->trace_index_o >> 16) & 0xFFFFu);
      if (next_compute_ >= computes_.size()) {
        bench_error(
            fmt::format("trace port: COMPUTE {} retired after the program's last "
                        "COMPUTE (cycle {})",
                        index, model_.cycle()));
      } else if (index != (computes_[next_compute_].index & 0xFFFFu)) {
        bench_error(
            fmt::format("trace port: COMPUTE {} retired, program order expects {} "
                        "(cycle {})",
                        index, computes_[next_compute_].index, model_.cycle()));
      }
      ++l.computes;
      ++next_compute_;
    }
  }

  void step() {
    axi_->drive();
    csr_->drive();
    dut_->eval();
    axi_->sample();
    csr_->sample();
    observe();
    clock();
  }

  // Falling edge, rising edge.
  void clock() {
    if (model_.clock())
      bench_error(fmt::format("RTL assertion failed at cycle {}", model_.cycle()));
  }

  struct ComputeRef {
    uint64_t index = 0;  // instruction index (fetch order)
    size_t slot = 0;     // its layer in layers_
  };

  uint64_t start_cycle_ = 0;  // of the last CTRL.START write
  uint64_t beat_bytes_;
  std::mt19937_64 rng_;
  ClockedModel<V> model_;
  V* dut_;  // model_'s
  SparseMemory mem_;
  std::unique_ptr<AxiMemModel<V>> axi_;
  std::unique_ptr<AxilDriver<V>> csr_;
  std::vector<ComputeRef> computes_;
  size_t next_compute_ = 0;
  std::vector<LayerCounts> layers_;
  std::vector<std::string> errors_;
};

}  // namespace strata::tb
