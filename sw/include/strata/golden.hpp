// SPDX-License-Identifier: Apache-2.0
// The golden model: runs a whole network on one image (or a batch) with the numerics
// contract (numerics.hpp). The reference every other backend must match.
#pragma once

#include <functional>
#include <vector>

#include "strata/network.hpp"
#include "strata/tensor.hpp"

namespace strata {

// Called after each layer with that layer's output: [C][H][W] for one image,
// [N][C][H][W] when run_network was given a batch.
using LayerObserver = std::function<void(size_t index, const Layer&, const Tensor<int8_t>&)>;

// Output of one layer for input [C][H][W] (shape-checked against layer.in_shape).
// An add layer takes its two operands in `inputs` (the one-input form throws).
Tensor<int8_t> run_layer(const Layer& layer, const Tensor<int8_t>& input);
Tensor<int8_t> run_layer(const Layer& layer, const std::vector<Tensor<int8_t>>& inputs);

// int32 accumulators [Cout][Ho][Wo] of a conv, depthwise or fc layer before
// requantisation (bias included); throws for other layer types.
Tensor<int32_t> layer_accumulators(const Layer& layer, const Tensor<int8_t>& input);

// Runs every layer in order, each on the outputs of the layers it names
// (Layer::inputs); returns every network output (Network::outputs, in order).
// The input is one image [C][H][W] (each output [C][H][W]) or a batch
// [N][C][H][W] (each output [N][C][H][W], the observer then sees each layer's
// batched output).
std::vector<Tensor<int8_t>> run_network_outputs(const Network& net, const Tensor<int8_t>& input,
                                                const LayerObserver& observer = {});
// The same, output 0 only (for a network of one output: its output).
Tensor<int8_t> run_network(const Network& net, const Tensor<int8_t>& input,
                           const LayerObserver& observer = {});

}  // namespace strata
