// SPDX-License-Identifier: Apache-2.0
// An example network of examples/ with generated parameters (seeded), as
// `strata gen` makes them: the whole-network benches' common input.
#pragma once

#include <string>

#include "strata/gen.hpp"
#include "strata/network.hpp"

namespace strata::tb {

inline Network example_network(const std::string& name, uint64_t seed) {
  LoadOptions lo;
  lo.load_weights = false;
  Network net = load_network(std::string(STRATA_SOURCE_DIR) + "/examples/" + name + ".yaml", lo);
  GenOptions go;
  go.seed = seed;
  generate_parameters(net, go, random_images(net.input_shape, go.images, seed));
  return net;
}

}  // namespace strata::tb
