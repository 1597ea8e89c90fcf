// AccelRunner: see accel_runner.hpp. The cycle loop follows the drive /
// settle / sample / tick discipline of tb/common/sim_fixture.hpp.
#include "accel_runner.hpp"

#include <Vstrata_top.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <fmt/format.h>

#include <stdexcept>

#include "axi_mem_model.hpp"
#include "axil_driver.hpp"
#include "strata/error.hpp"

namespace strata::tb {

uint64_t RunReport::counter(uint32_t offset) const {
  for (size_t i = 0; i < csr::kPerfCounters.size(); ++i) {
    if (csr::kPerfCounters[i] == offset && i < counters.size()) return counters[i];
  }
  throw Error(fmt::format("no performance counter at 0x{:x}", offset));
}

struct AccelRunner::Impl {
  explicit Impl(const RunnerOptions& o) : opts(o), rng(o.seed) {
    ctx = std::make_unique<VerilatedContext>();
    ctx->randReset(2);
    ctx->randSeed(static_cast<int>(o.seed & 0x7fffffff));
    ctx->fatalOnError(false);
    if (!o.trace_path.empty()) ctx->traceEverOn(true);
    dut = std::make_unique<Vstrata_top>(ctx.get(), "dut");
    if (!o.trace_path.empty()) {
      trace = std::make_unique<VerilatedFstC>();
      dut->trace(trace.get(), 99);
      trace->open(o.trace_path.c_str());
    }
    AxiMemConfig cfg;
    cfg.read_latency = o.read_latency;
    cfg.ar_stall = cfg.aw_stall = cfg.w_stall = cfg.r_gap = cfg.b_gap = o.stall;
    axi = std::make_unique<AxiMemModel<Vstrata_top>>(*dut, mem, rng, cfg);
    csr = std::make_unique<AxilDriver<Vstrata_top>>(*dut, [this] { step(); }, rng, 10000);
    // Reset with the agents idle: the bus outputs are undefined until then.
    dut->clk_i = 0;
    dut->rst_ni = 0;
    for (int i = 0; i < 4; ++i) clock();
    dut->rst_ni = 1;
    dut->eval();
  }
  ~Impl() {
    dut->final();
    if (trace) trace->close();
  }

  void dump() {
    if (trace) trace->dump(time);
    ++time;
  }

  void step() {
    axi->drive();
    csr->drive();
    dut->eval();
    axi->sample();
    csr->sample();
    clock();
  }

  // Falling edge, rising edge.
  void clock() {
    dut->clk_i = 0;
    dut->eval();
    dump();
    dut->clk_i = 1;
    dut->eval();
    dump();
    ++cycle;
    if (ctx->gotError()) {
      ctx->gotError(false);
      ++assertion_failures;
    }
  }

  void load(const std::vector<uint8_t>& memory) { mem.write_block(0, memory); }

  void start(uint32_t instr_count) {
    csr->write(csr::kInstrBaseLo, 0);
    csr->write(csr::kInstrBaseHi, 0);
    csr->write(csr::kInstrLimit, instr_count);
    csr->write(csr::kIrqEnable, csr::kIrqEnableDone | csr::kIrqEnableError);
    csr->write(csr::kCtrl, csr::kCtrlStart | (opts.fine_grain ? csr::kCtrlFineGrain : 0));
  }

  RunReport wait(uint64_t started) {
    RunReport r;
    while (!dut->irq_o && cycle - started < opts.timeout) step();
    r.finished = dut->irq_o;
    r.cycles = cycle - started;
    if (!r.finished) return r;
    r.status = csr->read(csr::kStatus);
    const uint32_t ec = csr->read(csr::kErrorCode);
    r.error = static_cast<csr::ErrorCode>(ec & csr::kErrorCodeCode);
    r.error_index = static_cast<uint16_t>(ec >> csr::kErrorCodeIndexLsb);
    for (uint32_t off : csr::kPerfCounters) r.counters.push_back(csr->read64(off));
    csr->write(csr::kIrqStatus, csr::kIrqStatusDone | csr::kIrqStatusError);
    return r;
  }

  RunnerOptions opts;
  std::mt19937_64 rng;
  std::unique_ptr<VerilatedContext> ctx;
  std::unique_ptr<Vstrata_top> dut;
  std::unique_ptr<VerilatedFstC> trace;
  SparseMemory mem;
  std::unique_ptr<AxiMemModel<Vstrata_top>> axi;
  std::unique_ptr<AxilDriver<Vstrata_top>> csr;
  uint64_t cycle = 0, time = 0;
  int assertion_failures = 0;
};

AccelRunner::AccelRunner(const RunnerOptions& options) : impl_(std::make_unique<Impl>(options)) {}
AccelRunner::~AccelRunner() = default;

RunReport AccelRunner::run(const std::vector<uint8_t>& memory, uint32_t instr_count) {
  impl_->load(memory);
  impl_->start(instr_count);
  return impl_->wait(impl_->cycle);
}

RunReport AccelRunner::run_with_second_start(const std::vector<uint8_t>& memory,
                                             uint32_t instr_count, uint64_t after) {
  impl_->load(memory);
  const uint64_t started = impl_->cycle;
  impl_->start(instr_count);
  for (uint64_t i = 0; i < after && !impl_->dut->irq_o; ++i) impl_->step();
  impl_->csr->write(csr::kCtrl, csr::kCtrlStart);
  return impl_->wait(started);
}

RunReport AccelRunner::run_program(const Program& program, const std::vector<Tensor<int8_t>>& inputs,
                                   std::vector<Tensor<int8_t>>& outputs) {
  if (static_cast<int>(inputs.size()) != program.batch) {
    throw Error(fmt::format("the program was compiled for batch {}, got {} inputs", program.batch,
                            inputs.size()));
  }
  std::vector<uint8_t> memory = program.image;
  for (size_t i = 0; i < inputs.size(); ++i) write_input(program, memory, static_cast<int>(i), inputs[i]);
  RunReport report = run(memory, static_cast<uint32_t>(program.instructions.size()));
  outputs.clear();
  if (report.finished && report.error == csr::ErrorCode::kNone) {
    const std::vector<uint8_t> after = this->memory(program.image.size());
    for (int i = 0; i < program.batch; ++i) outputs.push_back(read_output(program, after, i));
  }
  return report;
}

std::vector<uint8_t> AccelRunner::memory(uint64_t size) const {
  return impl_->mem.read_block(0, static_cast<size_t>(size));
}

void AccelRunner::add_read_error(uint64_t begin, uint64_t end) {
  impl_->axi->add_error_region({begin, end, AxiResp::kSlvErr, true, false});
}
void AccelRunner::add_write_error(uint64_t begin, uint64_t end) {
  impl_->axi->add_error_region({begin, end, AxiResp::kSlvErr, false, true});
}
void AccelRunner::clear_errors() { impl_->axi->clear_error_regions(); }
int AccelRunner::protocol_errors() const { return impl_->axi->protocol_errors(); }
uint32_t AccelRunner::read_csr(uint32_t offset) { return impl_->csr->read(offset); }

}  // namespace strata::tb
