// SPDX-License-Identifier: Apache-2.0
// The bundle: one self-describing file per compiled network (docs/bundle.md,
// the layout in sw/rt/include/strata_bundle.h), written by `strata compile
// --bundle` and read by the driver library strata_rt on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/compiler.hpp"

namespace strata {

// Quantisation scales of the network's input and outputs: the real value of
// one int8 step (0: not known); `outputs` one per Program::outputs (missing: 0).
struct BundleScales {
  float input = 0.0f;
  std::vector<float> outputs;
};

// Alignment of the block the bundle's regions lie in (a page, so that a DMA
// buffer's start suits it).
inline constexpr uint32_t kBundleBlockAlign = 4096;

// The bundle of `program`: header, region, relocation and tensor tables,
// then the contents of the instructions, parameters and weights. Every LOAD
// and STORE address of external memory becomes a relocation.
std::vector<uint8_t> make_bundle(const Program& program, const BundleScales& scales = {});

}  // namespace strata
