// SPDX-License-Identifier: Apache-2.0
// `strata gen`: seeded random parameters for a network structure, with the
// requantisation calibrated so that every layer's activations use the int8
// range (neither saturated nor all zero). Same seed and options => the same
// bytes in every file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

struct GenOptions {
  uint64_t seed = 1;
  double sparsity = 0.0;  // fraction of each layer's weights set to zero: exactly
                          // round(sparsity * count) of them, 0..1
  int weight_min = -128;  // the other weights are uniform over [weight_min,
  int weight_max = 127;   // weight_max] without 0
  int images = 4;         // random calibration images, >= 1; the first is input.npy
  int target = 100;       // each channel's largest |acc| on them maps to about this
};

// Calibration outcome of one layer, over all calibration images.
struct LayerCalibration {
  std::string layer;
  std::vector<int64_t> acc_max_abs;  // conv / fc: largest |acc| per output channel
  int out_min = 0;                   // range of the layer's int8 outputs
  int out_max = 0;
  double zero_fraction = 0.0;   // outputs equal to 0
  double limit_fraction = 0.0;  // outputs at -128 or 127
};

struct GenResult {
  Network network;                       // reloaded from the written files, validated
  Tensor<int8_t> images;                 // [N][C][H][W] calibration images
  std::vector<LayerCalibration> layers;  // one per layer, in order
  std::vector<std::string> files;        // files written, relative to the output directory
};

// `count` random int8 images [N][C][H][W] (uniform over -128..127). They come
// from their own generator, so the number of images never changes the weights.
Tensor<int8_t> random_images(const Shape& input_shape, int count, uint64_t seed);

// Fills the parameters of `net` (read with load_weights = false): random
// weights and biases, then, layer by layer on `images` [N][C][H][W], every
// multiplier and shift that comes from a file (inline YAML values are kept).
std::vector<LayerCalibration> generate_parameters(Network& net, const GenOptions& options,
                                                  const Tensor<int8_t>& images);

// The whole `strata gen`: reads the structure of `yaml_path`, generates and
// calibrates, writes every parameter file the YAML names plus input.npy
// ([C][H][W], the first image) and images.npy ([N][C][H][W]) into `out_dir`,
// then reloads the network from there and validates it.
GenResult generate_network(const std::string& yaml_path, const std::string& out_dir,
                           const GenOptions& options);

}  // namespace strata
