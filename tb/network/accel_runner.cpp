// AccelRunner: see accel_runner.hpp. The cycle loop (accel_model.hpp) follows
// the drive / settle / sample / tick discipline of tb/common/sim_fixture.hpp.
// This file instantiates the model of the build's default configuration
// (class Vstrata_top); further configurations add their own factory
// (accel_model_<name>.cpp, enabled by STRATA_RTL_CONFIG_<NAME>).
#include "accel_runner.hpp"

#include <Vstrata_top.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>

#include "accel_model.hpp"
#include "strata/error.hpp"

namespace strata::tb {

#ifdef STRATA_RTL_CONFIG_P16N16
std::unique_ptr<AccelRunner::Model> make_model_p16n16(const RunnerOptions& options,
                                                      const HwTarget& target);
#endif

namespace {

struct BuiltModel {
  std::string name;
  std::function<HwTarget()> target;
  std::function<std::unique_ptr<AccelRunner::Model>(const RunnerOptions&, const HwTarget&)> make;
};

std::vector<BuiltModel> built_models() {
  std::vector<BuiltModel> v;
  v.push_back({"default", [] { return HwTarget::defaults(); },
               [](const RunnerOptions& o, const HwTarget& t) -> std::unique_ptr<AccelRunner::Model> {
                 return std::make_unique<ModelSim<Vstrata_top>>(o, t);
               }});
#ifdef STRATA_RTL_CONFIG_P16N16
  v.push_back({"p16n16", [] { return HwTarget::from_yaml(STRATA_RTL_CONFIG_P16N16); },
               make_model_p16n16});
#endif
  return v;
}

// Same hardware: every parameter the RTL is elaborated with (the name aside).
bool same_hardware(const HwTarget& a, const HwTarget& b) {
  HwTarget x = a, y = b;
  x.name = y.name;
  return x == y;
}

}  // namespace

size_t perf_index(uint32_t offset) {
  const size_t i = perf_slot(offset);
  if (i >= csr::kPerfCounters.size()) {
    throw Error(fmt::format("no performance counter at 0x{:x}", offset));
  }
  return i;
}

uint64_t RunReport::counter(uint32_t offset) const {
  const size_t i = perf_index(offset);
  if (i >= counters.size()) {
    throw Error(fmt::format("counter 0x{:x} was not read (the run did not finish)", offset));
  }
  return counters[i];
}

AccelRunner::AccelRunner(const RunnerOptions& options)
    : AccelRunner(HwTarget::defaults(), options) {}

AccelRunner::AccelRunner(const HwTarget& target, const RunnerOptions& options) {
  std::vector<std::string> names;
  for (const BuiltModel& m : built_models()) {
    if (same_hardware(m.target(), target)) {
      impl_ = m.make(options, target);
      return;
    }
    names.push_back(m.name);
  }
  throw Error(fmt::format(
      "no RTL model is built for configuration '{}' (P {}, N {}); built: {} (add it to the "
      "CMake option STRATA_RTL_CONFIGS)",
      target.name, target.pes, target.lanes, fmt::join(names, ", ")));
}

AccelRunner::~AccelRunner() = default;

std::vector<std::string> AccelRunner::built_configurations() {
  std::vector<std::string> names;
  for (const BuiltModel& m : built_models()) names.push_back(m.name);
  return names;
}

RunReport AccelRunner::run(const std::vector<uint8_t>& memory, uint32_t instr_count) {
  return impl_->run(memory, instr_count, std::nullopt);
}

RunReport AccelRunner::run_with_second_start(const std::vector<uint8_t>& memory,
                                             uint32_t instr_count, uint64_t after) {
  return impl_->run(memory, instr_count, after);
}

RunReport AccelRunner::run_program(const Program& program,
                                   const std::vector<Tensor<int8_t>>& inputs,
                                   std::vector<Tensor<int8_t>>& outputs) {
  if (static_cast<int>(inputs.size()) != program.batch) {
    throw Error(fmt::format("the program was compiled for batch {}, got {} inputs", program.batch,
                            inputs.size()));
  }
  std::vector<uint8_t> memory = program.image;
  for (size_t i = 0; i < inputs.size(); ++i) {
    write_input(program, memory, static_cast<int>(i), inputs[i]);
  }
  RunReport report = run(memory, static_cast<uint32_t>(program.instructions.size()));
  outputs.clear();
  if (report.finished && report.error == csr::ErrorCode::kNone) {
    const std::vector<uint8_t> after = this->memory(program.image.size());
    for (int i = 0; i < program.batch; ++i) outputs.push_back(read_output(program, after, i));
  }
  return report;
}

std::vector<uint8_t> AccelRunner::memory(uint64_t size) const { return impl_->memory(size); }

void AccelRunner::add_read_error(uint64_t begin, uint64_t end) {
  impl_->add_error_region(begin, end, true, false);
}
void AccelRunner::add_write_error(uint64_t begin, uint64_t end) {
  impl_->add_error_region(begin, end, false, true);
}
void AccelRunner::clear_errors() { impl_->clear_errors(); }
int AccelRunner::protocol_errors() const { return impl_->protocol_errors(); }
uint32_t AccelRunner::read_csr(uint32_t offset) { return impl_->read_csr(offset); }

}  // namespace strata::tb
