// SPDX-License-Identifier: Apache-2.0
// Seeded random network descriptions, for the "compiled => runs" tests: any
// network the compiler accepts must run on the ISA simulator and on the RTL
// with outputs equal to the golden model, and any it cannot run must be
// refused by the reader or the compiler, never fail at run time.
//
// random_network_yaml() draws the YAML text of a network (docs/network-format.md)
// over every layer type and order the format allows: conv, depthwise, fc,
// maxpool, avgpool, global_avgpool, relu, clamp and flatten, including
// flatten and clamps first, pools first, ceil mode and padding (per side too),
// strides and kernels up to the format's limits, FC chains, FC after a flatten
// of a map, layers after an FC, inline requantisation (at times M and S at
// their field limits), small, odd and non-square inputs; and graphs: residual
// blocks (conv / depthwise layers whose result is added to the block's input,
// through a strided 1x1 projection conv when the shapes differ), shortcut adds
// of the last map with any earlier one or the network input, adds with and
// without an activation (their multipliers are `strata gen`'s, Ma = Mb).
// Every layer but the last is read by a later one or is a network output
// (docs/network-format.md): three networks in ten get one or two more outputs
// (`outputs:`), an earlier map as it is or a side branch (a 1x1 conv or a max
// pool) ending in one, drawn from a generator of their own so that the layers
// are the same as without them.
// Shapes are valid by construction, so the reader accepts
// every network; some exceed what a target can run (kernels beyond
// max_kernel, maps beyond a bank, ...), and the compiler must refuse those
// with a strata::Error.
//
// Reproducibility: only std::mt19937_64 (its sequence is fixed by the C++
// standard) with range mappings written out here, so a seed draws the same
// network with every standard library. The parameters are `strata gen`'s
// (load_generated), so a failing seed replays on the command line:
//   strata gen NET.yaml --seed S --out DIR
//   strata run NET.yaml --weights DIR --input DIR/input.npy --output y.npy
//              --backend rtl --check      (one command line)
#pragma once

#include <cstdint>
#include <string>

#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

struct RandomNetworkOptions {
  std::string name = "random";  // network name prefix: "<name>_<seed>"
  int max_layers = 6;           // 1..max_layers draws (flatten and clamps count), at most
                                // 2 * max_layers layers (a residual block is several)
  int max_side = 40;            // input height and width: 1..max_side
  int max_channels = 40;        // input channels and conv out_channels: 1..max_channels
  int max_features = 64;        // fc out_features: 1..max_features
  // Rough cost budget of the whole network in 8-lane words (PE-array beats of
  // every conv and fc, weights loaded, words through the pooling unit, the
  // input); a layer that would exceed it is drawn again smaller, or the
  // network ends. Keeps the default networks to well under a second of RTL
  // simulation.
  int64_t max_work = 60000;

  // Bigger networks for nightly regressions: inputs up to 96 wide (past the
  // pooling unit's line buffer), up to 80 channels, 10 layers, 30x the work.
  static RandomNetworkOptions large();
  // Any size: inputs up to 300 x 300 (non-square), up to 300 channels, 8
  // layers, 10x the default work: maps far beyond a bank and the line buffer,
  // so every layer runs in bands and strips.
  static RandomNetworkOptions any_size();
};

// The YAML text of random network number `seed`. Same seed and options =>
// the same text. The text starts with a comment naming the seed.
std::string random_network_yaml(uint64_t seed, const RandomNetworkOptions& options = {});

// A network read from a description, with the parameters `strata gen --seed
// <seed>` would write (generate_parameters, default GenOptions with that seed),
// and gen's calibration images.
struct GeneratedNetwork {
  Network network;
  Tensor<int8_t> images;  // [4][C][H][W]: image 0 is gen's input.npy, all are images.npy
};

// Reads `yaml_path` (structure only) and generates its parameters, `sparsity`
// of each layer's weights zero (strata gen --sparsity). Throws the reader's or
// the generator's strata::Error.
GeneratedNetwork load_generated(const std::string& yaml_path, uint64_t seed, double sparsity = 0.0);

}  // namespace strata
