// SPDX-License-Identifier: Apache-2.0
// strata/rtl_backend.hpp in a build without the RTL models (STRATA_BUILD_RTL=OFF):
// built() is false, and every run is an error that says so.
#include "strata/error.hpp"
#include "strata/rtl_backend.hpp"

namespace strata::rtl {
namespace {

[[noreturn]] void no_models() {
  throw Error("this build has no RTL models (STRATA_BUILD_RTL=OFF)");
}

}  // namespace

bool built() { return false; }

RtlResult run(const Network&, const HwTarget&, const std::vector<Tensor<int8_t>>&, const Options&,
              bool, bool) {
  no_models();
}

DenseTwin dense_twin(const Network&, const HwTarget&, const Program&,
                     const std::vector<Tensor<int8_t>>&, const std::vector<Tensor<int8_t>>&,
                     const Options&, bool) {
  no_models();
}

void require_chain_model(const HwTarget&, int) { no_models(); }

ChainStream stream_chain(const ChainProgram&, const HwTarget&, const std::vector<Tensor<int8_t>>&,
                         const Options&, bool) {
  no_models();
}

ChainMeasure measure_chain(const Network&, const HwTarget&, int, const std::vector<Tensor<int8_t>>&,
                           const std::vector<Tensor<int8_t>>&, const Options&, bool) {
  no_models();
}

std::string trace_note(const std::string&) { return ""; }

}  // namespace strata::rtl
