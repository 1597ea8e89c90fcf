// The golden model: each layer is one or two numerics.hpp functions
// (accumulate, then requantise with the layer's per-channel M, S and clamp).
#include "strata/golden.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strata/error.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

void check_input(const Layer& layer, const Tensor<int8_t>& input) {
  if (input.shape() != layer.in_shape) {
    throw Error(fmt::format("input has shape {}, the layer expects {}", shape_str(input.shape()),
                            shape_str(layer.in_shape)),
                ErrorContext{"", 0, layer.name});
  }
}

}  // namespace

Tensor<int32_t> layer_accumulators(const Layer& layer, const Tensor<int8_t>& input) {
  if (!layer.has_weights()) {
    throw Error(fmt::format("a {} layer has no accumulators", layer_type_name(layer.type)),
                ErrorContext{"", 0, layer.name});
  }
  check_input(layer, input);
  if (layer.weights.empty() || layer.bias.empty()) {
    throw Error("parameters not loaded (network read with load_weights = false)",
                ErrorContext{"", 0, layer.name});
  }
  if (layer.type == LayerType::kConv) {
    return conv2d_acc(input, layer.weights, layer.bias, layer.conv);
  }
  return fc_acc(input, layer.weights, layer.bias);
}

Tensor<int8_t> run_layer(const Layer& layer, const Tensor<int8_t>& input) {
  check_input(layer, input);
  switch (layer.type) {
    case LayerType::kConv:
    case LayerType::kFc: return requantize(layer_accumulators(layer, input), layer.requant);
    case LayerType::kMaxPool: return maxpool(input, layer.pool);
    case LayerType::kAvgPool: return avgpool(input, layer.pool);
    case LayerType::kClamp: return clamp(input, layer.lo, layer.hi);
    case LayerType::kFlatten: return input.reshaped(layer.out_shape);
  }
  throw Error("unknown layer type", ErrorContext{"", 0, layer.name});
}

Tensor<int8_t> run_network(const Network& net, const Tensor<int8_t>& input,
                           const LayerObserver& observer) {
  const bool batch = input.rank() == 4;
  const Shape& in_shape = net.input_shape;
  const bool image_ok = input.shape() == in_shape;
  const bool batch_ok = batch && input.dim(0) >= 1 &&
                        Shape(input.shape().begin() + 1, input.shape().end()) == in_shape;
  if (!image_ok && !batch_ok) {
    throw Error(fmt::format("input has shape {}, network '{}' expects {} or [N, {}]",
                            shape_str(input.shape()), net.name, shape_str(in_shape),
                            fmt::join(in_shape, ", ")),
                ErrorContext{net.source_file, 0, ""});
  }
  if (!batch) {
    Tensor<int8_t> x = input;
    for (size_t i = 0; i < net.layers.size(); ++i) {
      x = run_layer(net.layers[i], x);
      if (observer) observer(i, net.layers[i], x);
    }
    return x;
  }

  // Batch: every layer over all images, so the observer sees [N][C][H][W].
  const int64_t n = input.dim(0);
  std::vector<Tensor<int8_t>> images;
  const int64_t image_size = shape_elements(in_shape);
  for (int64_t i = 0; i < n; ++i) {
    const auto first = input.values().begin() + i * image_size;
    images.emplace_back(in_shape, std::vector<int8_t>(first, first + image_size));
  }
  Tensor<int8_t> stacked;
  for (size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& layer = net.layers[li];
    Shape shape{n};
    shape.insert(shape.end(), layer.out_shape.begin(), layer.out_shape.end());
    stacked = Tensor<int8_t>(shape);
    const int64_t out_size = shape_elements(layer.out_shape);
    for (int64_t i = 0; i < n; ++i) {
      images[i] = run_layer(layer, images[i]);
      std::copy(images[i].values().begin(), images[i].values().end(),
                stacked.values().begin() + i * out_size);
    }
    if (observer) observer(li, layer, stacked);
  }
  return stacked;
}

}  // namespace strata
