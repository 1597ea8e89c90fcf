// SPDX-License-Identifier: Apache-2.0
// The golden model: each layer is one or two numerics.hpp functions
// (accumulate, then requantise with the layer's per-channel M, S and clamp).
#include "strata/golden.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strata/error.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

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
  if (layer.type == LayerType::kFc) return fc_acc(input, layer.weights, layer.bias);
  return conv2d_acc(input, layer.weights, layer.bias, layer.conv_window());
}

Tensor<int8_t> run_layer(const Layer& layer, const Tensor<int8_t>& input) {
  check_input(layer, input);
  const PoolWindow window{layer.pool.kernel, layer.pool.stride, layer.pads, layer.pool.ceil_mode};
  switch (layer.type) {
    case LayerType::kConv:
    case LayerType::kDepthwise:
    case LayerType::kFc:
      return requantize(layer_accumulators(layer, input), layer.requant);
    case LayerType::kMaxPool:
      return maxpool(input, window);
    case LayerType::kAvgPool:
      return avgpool(input, window);
    case LayerType::kGlobalAvgPool:
      return global_avgpool(input);
    case LayerType::kClamp:
      return clamp(input, layer.lo, layer.hi);
    case LayerType::kFlatten:
      return input.reshaped(layer.out_shape);
    case LayerType::kSlice:
      return slice_channels(input, layer.slice_begin, layer.slice_end);
    case LayerType::kUpsample:
      return upsample_nearest(input, layer.scale);
    case LayerType::kAdd:
      throw Error("an add layer needs its two operands", ErrorContext{"", 0, layer.name});
    case LayerType::kConcat:
      throw Error("a concat layer needs all its inputs", ErrorContext{"", 0, layer.name});
    case LayerType::kMul:
      throw Error("a mul layer needs its map and its vector", ErrorContext{"", 0, layer.name});
  }
  throw Error("unknown layer type", ErrorContext{"", 0, layer.name});
}

Tensor<int8_t> run_layer(const Layer& layer, const std::vector<Tensor<int8_t>>& inputs) {
  if (inputs.size() != layer.inputs.size() || inputs.empty()) {
    throw Error(
        fmt::format("{} inputs given, the layer reads {}", inputs.size(), layer.inputs.size()),
        ErrorContext{"", 0, layer.name});
  }
  if (layer.type == LayerType::kConcat) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].rank() != 3 || inputs[i].dim(1) != layer.out_shape[1] ||
          inputs[i].dim(2) != layer.out_shape[2]) {
        throw Error(
            fmt::format("concat input {} has shape {}, expected [C, {}, {}]", i,
                        shape_str(inputs[i].shape()), layer.out_shape[1], layer.out_shape[2]),
            ErrorContext{"", 0, layer.name});
      }
    }
    Tensor<int8_t> out = concat_channels(inputs);
    if (out.shape() != layer.out_shape) {
      throw Error(fmt::format("concat of shape {}, the layer makes {}", shape_str(out.shape()),
                              shape_str(layer.out_shape)),
                  ErrorContext{"", 0, layer.name});
    }
    return out;
  }
  if (layer.type == LayerType::kMul) {
    check_input(layer, inputs[0]);
    const Shape vector{layer.in_shape[0], 1, 1};
    if (inputs[1].shape() != vector) {
      throw Error(fmt::format("mul vector has shape {}, the layer expects {}",
                              shape_str(inputs[1].shape()), shape_str(vector)),
                  ErrorContext{"", 0, layer.name});
    }
    return requantize(channel_mul_acc(inputs[0], inputs[1]), layer.requant);
  }
  if (layer.type != LayerType::kAdd) return run_layer(layer, inputs[0]);
  check_input(layer, inputs[0]);
  check_input(layer, inputs[1]);
  const AddRequant rq{layer.requant.multiplier, layer.multiplier_b, layer.requant.shift,
                      layer.requant.lo,         layer.requant.hi,   layer.requant.table};
  return residual_add(inputs[0], inputs[1], rq);
}

std::vector<Tensor<int8_t>> run_network_outputs(const Network& net, const Tensor<int8_t>& input,
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
  // Each layer's output, kept while a later layer still reads it or until the
  // end when it is a network output.
  const std::vector<int> out_layers = net.output_layers();
  const auto run_image = [&](const Tensor<int8_t>& image, const auto& on_layer) {
    std::vector<Tensor<int8_t>> outs(net.layers.size());
    std::vector<int> last_reader(net.layers.size(), -1);
    for (size_t i = 0; i < net.layers.size(); ++i) {
      for (int k : net.layers[i].inputs) {
        if (k != kNetworkInput) last_reader[static_cast<size_t>(k)] = static_cast<int>(i);
      }
    }
    for (int k : out_layers)
      last_reader[static_cast<size_t>(k)] = static_cast<int>(net.layers.size());
    for (size_t i = 0; i < net.layers.size(); ++i) {
      std::vector<Tensor<int8_t>> ins;
      for (int k : net.layers[i].inputs) {
        ins.push_back(k == kNetworkInput ? image : outs[static_cast<size_t>(k)]);
      }
      outs[i] = run_layer(net.layers[i], ins);
      on_layer(i, outs[i]);
      for (int k : net.layers[i].inputs) {
        if (k != kNetworkInput && last_reader[static_cast<size_t>(k)] == static_cast<int>(i)) {
          outs[static_cast<size_t>(k)] = Tensor<int8_t>();
        }
      }
    }
    std::vector<Tensor<int8_t>> result;
    for (int k : out_layers) result.push_back(outs[static_cast<size_t>(k)]);
    return result;
  };
  if (!batch) {
    return run_image(input, [&](size_t i, const Tensor<int8_t>& out) {
      if (observer) observer(i, net.layers[i], out);
    });
  }

  // Batch: image by image; the observer sees each layer's [N][C][H][W].
  const int64_t n = input.dim(0);
  const int64_t image_size = shape_elements(in_shape);
  std::vector<Tensor<int8_t>> stacked(observer ? net.layers.size() : 0);
  for (size_t li = 0; li < stacked.size(); ++li) {
    Shape shape{n};
    shape.insert(shape.end(), net.layers[li].out_shape.begin(), net.layers[li].out_shape.end());
    stacked[li] = Tensor<int8_t>(shape);
  }
  std::vector<Tensor<int8_t>> result;
  for (size_t j = 0; j < out_layers.size(); ++j) {
    Shape out_shape{n};
    out_shape.insert(out_shape.end(), net.output_shape(j).begin(), net.output_shape(j).end());
    result.emplace_back(out_shape);
  }
  for (int64_t i = 0; i < n; ++i) {
    const auto first = input.values().begin() + i * image_size;
    const Tensor<int8_t> image(in_shape, std::vector<int8_t>(first, first + image_size));
    const std::vector<Tensor<int8_t>> ys =
        run_image(image, [&](size_t li, const Tensor<int8_t>& out) {
          if (!observer) return;
          std::copy(out.values().begin(), out.values().end(),
                    stacked[li].values().begin() + i * out.size());
        });
    for (size_t j = 0; j < ys.size(); ++j) {
      std::copy(ys[j].values().begin(), ys[j].values().end(),
                result[j].values().begin() + i * ys[j].size());
    }
  }
  for (size_t li = 0; li < stacked.size(); ++li) observer(li, net.layers[li], stacked[li]);
  return result;
}

Tensor<int8_t> run_network(const Network& net, const Tensor<int8_t>& input,
                           const LayerObserver& observer) {
  return run_network_outputs(net, input, observer).front();
}

}  // namespace strata
