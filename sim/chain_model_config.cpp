// SPDX-License-Identifier: Apache-2.0
// The cascade model of one configuration (sim/CMakeLists.txt: the default
// one's, and each of the CMake option STRATA_CHAIN_CONFIGS): compiled once per
// configuration with STRATA_CHAIN_MODEL (the Verilated class,
// Vstrata_cascade_top or Vstrata_cascade_top_<name>), STRATA_CHAIN_MODEL_HEADER
// (its header), STRATA_CHAIN_MAKE (its factory, make_chain_<name>, which the
// executable's model table lists), STRATA_CHAIN_STAGES (its K) and the
// configuration's AXI widths, STRATA_CHAIN_ADDR_BITS and STRATA_CHAIN_DATA_BITS.
#include STRATA_CHAIN_MODEL_HEADER

#include "chain_model.hpp"

namespace strata::tb {

std::unique_ptr<ChainRunner::Model> STRATA_CHAIN_MAKE(const ChainRunnerOptions& options) {
  return std::make_unique<ChainModelSim<STRATA_CHAIN_MODEL, STRATA_CHAIN_ADDR_BITS,
                                        STRATA_CHAIN_DATA_BITS, STRATA_CHAIN_STAGES>>(options);
}

}  // namespace strata::tb
