// SPDX-License-Identifier: Apache-2.0
// A network description (docs/network-format.md): YAML structure + .npy
// weights, validated into shapes that the golden model and the compiler use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/numerics.hpp"
#include "strata/tensor.hpp"

namespace strata {

enum class LayerType {
  kConv,
  kFc,
  kMaxPool,
  kAvgPool,
  kClamp,
  kFlatten,
  kDepthwise,      // one K x K filter per channel
  kAdd,            // residual addition of two maps of one shape
  kGlobalAvgPool,  // [C][H][W] -> [C][1][1]
  kConcat,         // maps of one H x W stacked along the channels, in `inputs` order
  kSlice,          // channels [slice_begin, slice_end) of a map
  kUpsample,       // nearest-neighbour upsampling by an integer factor (`scale`)
  kMul,            // a [C][H][W] map times a [C][1][1] vector, channel by channel
};

const char* layer_type_name(LayerType t);  // YAML spelling: "conv", "fc", ...

// The network input as a layer's input (Layer::inputs).
inline constexpr int kNetworkInput = -1;

// Where a layer's parameter tensors live, relative to the weights directory.
struct LayerFiles {
  std::string weights;       // int8  conv [Cout][Cin][K][K], fc [Cout][Cin_flat]
  std::string bias;          // int32 [Cout]
  std::string multiplier;    // uint16 [Cout]; empty when given inline in YAML (add: Ma)
  std::string shift;         // uint8 [Cout];  empty when given inline in YAML
  std::string multiplier_b;  // add only: uint16 [C], Mb; empty when given inline
  std::string table;         // int8 [256], the lookup-table activation; empty for none
};

struct Layer {
  std::string name;
  LayerType type = LayerType::kConv;
  int line = 0;  // line of the layer in the YAML file (1-based)
  // The layers whose outputs it reads (index into Network::layers, or
  // kNetworkInput), each earlier in the list: one, two for an add and a mul (the
  // map, then the vector), two or more for a concat.
  std::vector<int> inputs;

  // conv, depthwise and fc
  int out_channels = 0;    // conv out_channels / fc out_features / depthwise channels
  int groups = 1;          // conv: channel groups (weights [Cout][Cin / groups][K][K])
  ConvGeometry conv;       // conv and depthwise (fc: kernel = input size, no stride/pad);
                           // conv.pad = pads.top (see pads)
  Pads pads;               // conv, depthwise, maxpool, avgpool: zero padding per side
  Tensor<int8_t> weights;  // empty until loaded; depthwise [C][1][K][K]
  Tensor<int32_t> bias;
  Requant requant;                     // per-channel M, S, the fused clamp [lo, hi] and the
                                       // table activation (requant.table); add: Ma, S
  std::vector<uint16_t> multiplier_b;  // add: Mb per channel
  LayerFiles files;

  PoolGeometry pool;  // maxpool and avgpool (pool.pad = pads.top)
  int lo = kInt8Min;  // standalone clamp (relu is [0, 127])
  int hi = kInt8Max;
  int slice_begin = 0;  // slice: the channels [slice_begin, slice_end) of its input
  int slice_end = 0;
  int scale = 1;  // upsample: output row y, column x is input (y / scale, x / scale)

  Shape in_shape;   // [C][H][W], filled by validation
  Shape out_shape;  // [C][H][W]

  bool has_weights() const {
    return type == LayerType::kConv || type == LayerType::kFc || type == LayerType::kDepthwise;
  }
  // Layers with per-channel requantisation values: the weighted ones, add and mul.
  bool has_requant() const {
    return has_weights() || type == LayerType::kAdd || type == LayerType::kMul;
  }
  // A lookup-table activation (`activation: {table: f.npy}`), loaded or not.
  bool has_table() const { return !files.table.empty() || !requant.table.empty(); }
  // The same padding on every side (ConvGeometry / PoolGeometry say it all).
  bool symmetric_pads() const {
    return pads.left == pads.top && pads.bottom == pads.top && pads.right == pads.top;
  }
  // The convolution window of a conv or depthwise layer (pads, groups).
  ConvWindow conv_window() const;
  int64_t macs() const;         // multiply-accumulates for one image (incl. padded taps: 0)
  int64_t param_bytes() const;  // weights + bias + multiplier + shift bytes
};

struct Network {
  std::string name;
  std::string source_file;    // the YAML path as given
  std::string weights_dir;    // resolved directory of the .npy files
  Shape input_shape;          // [C][H][W]
  std::vector<Layer> layers;  // in an order where every layer follows its inputs
  // The network's outputs (`outputs:`, docs/network-format.md): the layers whose
  // maps it returns, in order; the last layer is always one of them (default:
  // only it). An output layer may also be read by later layers.
  std::vector<int> outputs;
  // Quantisation scales (`scales:`, written by `strata import`): the real value
  // of one int8 step of the input and of each output (one per `outputs`, in
  // order); 0 when not given.
  double input_scale = 0.0;
  std::vector<double> output_scales;

  // Every layer reads the layer before it (no shortcuts).
  bool is_chain() const;

  // Output `i`'s shape (index into `outputs`; the input's shape for a network
  // without layers).
  const Shape& output_shape(size_t i = 0) const;
  // Output i's layer name; the scale of output i (0 when not known).
  const std::string& output_name(size_t i) const;
  double output_scale(size_t i = 0) const;
  // The position of layer `layer` among the outputs, -1 when it is not one.
  int output_index(size_t layer) const;
  // The output layers in order: `outputs`, or the last layer when it is empty
  // (a network built in code).
  std::vector<int> output_layers() const;
  size_t output_count() const { return outputs.empty() ? 1 : outputs.size(); }
  int64_t macs() const;
};

struct LoadOptions {
  std::string weights_dir;   // overrides the YAML's `weights:`; "" = use the YAML's
  bool load_weights = true;  // false: structure and shapes only (e.g. for `strata gen`)
};

// A shape as messages and tables print it: "[3, 32, 32]".
std::string shape_str(const Shape& s);

// Parses and validates a network description. Throws strata::Error naming the
// file, line and layer on any problem: YAML syntax, unknown keys or types,
// impossible shapes, missing/mis-shaped/mis-typed weight files, requantisation
// values out of range, or an accumulator whose worst case leaves int32.
Network load_network(const std::string& yaml_path, const LoadOptions& options = {});

// Checks that loaded parameters match the layer shapes and that no
// accumulator can overflow int32 (also used after `strata gen` fills weights).
void validate_parameters(const Network& net);

}  // namespace strata
