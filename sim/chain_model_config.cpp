// SPDX-License-Identifier: Apache-2.0
// The cascade model of one further hardware configuration (CMake option
// STRATA_CHAIN_CONFIGS, sim/CMakeLists.txt): compiled once per configuration
// with STRATA_CHAIN_MODEL (the Verilated class, Vstrata_cascade_top_<name>),
// STRATA_CHAIN_MODEL_HEADER (its header), STRATA_CHAIN_MAKE (the factory
// ChainRunner calls, make_chain_<name>), STRATA_CHAIN_STAGES (its K) and the
// configuration's AXI widths, STRATA_CHAIN_ADDR_BITS and STRATA_CHAIN_DATA_BITS.
#include STRATA_CHAIN_MODEL_HEADER

#include "chain_model.hpp"

namespace strata::tb {

std::unique_ptr<ChainRunner::Model> STRATA_CHAIN_MAKE(const ChainRunnerOptions& options) {
  return std::make_unique<ChainModelSim<STRATA_CHAIN_MODEL, STRATA_CHAIN_ADDR_BITS,
                                        STRATA_CHAIN_DATA_BITS, STRATA_CHAIN_STAGES>>(options);
}

}  // namespace strata::tb
