// SPDX-License-Identifier: Apache-2.0
// The model of one further hardware configuration (CMake option
// STRATA_RTL_CONFIGS, tb/network/network.cmake): compiled once per
// configuration with STRATA_RTL_MODEL (the Verilated class,
// Vstrata_top_<name>), STRATA_RTL_MODEL_HEADER (its header) and
// STRATA_RTL_MAKE (the factory AccelRunner calls, make_model_<name>).
#include STRATA_RTL_MODEL_HEADER

#include "accel_model.hpp"

namespace strata::tb {

std::unique_ptr<AccelRunner::Model> STRATA_RTL_MAKE(const RunnerOptions& options,
                                                    const HwTarget& target) {
  return std::make_unique<ModelSim<STRATA_RTL_MODEL>>(options, target);
}

}  // namespace strata::tb
