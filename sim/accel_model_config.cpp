// SPDX-License-Identifier: Apache-2.0
// The model of one configuration (sim/CMakeLists.txt: the checked and the fast
// model of the default configuration, and the checked model of each further
// configuration of the CMake option STRATA_RTL_CONFIGS): compiled once per
// model with STRATA_RTL_MODEL (the Verilated class, Vstrata_top,
// Vstrata_top_fast or Vstrata_top_<name>), STRATA_RTL_MODEL_HEADER (its
// header) and STRATA_RTL_MAKE (its factory, make_model_<name>, which the
// executable's model table lists).
#include STRATA_RTL_MODEL_HEADER

#include "accel_model.hpp"

namespace strata::tb {

std::unique_ptr<AccelRunner::Model> STRATA_RTL_MAKE(const RunnerOptions& options,
                                                    const HwTarget& target) {
  return std::make_unique<ModelSim<STRATA_RTL_MODEL>>(options, target);
}

}  // namespace strata::tb
