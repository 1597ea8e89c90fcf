// SPDX-License-Identifier: Apache-2.0
// Network description reader (docs/network-format.md): YAML structure with
// yaml-cpp, parameters from .npy files, and every check the format promises.
// Each problem becomes a strata::Error carrying the YAML file, the 1-based line
// of the offending node and the layer name.
#include "strata/network.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "strata/error.hpp"
#include "strata/npy.hpp"

namespace strata {

namespace fs = std::filesystem;

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

const char* layer_type_name(LayerType t) {
  switch (t) {
    case LayerType::kConv:
      return "conv";
    case LayerType::kFc:
      return "fc";
    case LayerType::kMaxPool:
      return "maxpool";
    case LayerType::kAvgPool:
      return "avgpool";
    case LayerType::kClamp:
      return "clamp";
    case LayerType::kFlatten:
      return "flatten";
    case LayerType::kDepthwise:
      return "depthwise";
    case LayerType::kAdd:
      return "add";
    case LayerType::kGlobalAvgPool:
      return "global_avgpool";
    case LayerType::kConcat:
      return "concat";
    case LayerType::kSlice:
      return "slice";
    case LayerType::kUpsample:
      return "upsample";
    case LayerType::kMul:
      return "mul";
  }
  return "?";
}

namespace {

// Limits of the format (docs/network-format.md). The dimension and element
// limits are sanity bounds: a typo must give an error, not a huge allocation.
constexpr int kMaxKernelSide = 11;
constexpr int kMaxStride = 8;
constexpr int kMaxConcatInputs = 64;
constexpr size_t kMaxOutputs = 16;  // network outputs (a bundle lists as many)
constexpr int kMaxUpsample = 8;
constexpr int64_t kMaxDim = 65535;
constexpr int64_t kMaxElements = int64_t{1} << 28;
constexpr int64_t kMaxMultiplier = std::numeric_limits<uint16_t>::max();

int line_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

// What a node is, for messages: "the string 'abc'", "a list", ...
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return node.Tag() == "!" ? fmt::format("the string '{}'", node.Scalar())
                               : fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

// Strict decimal integer: optional sign, digits, nothing else. (yaml-cpp's own
// conversion also takes hex and reads "010" as octal 8, which would surprise.)
std::optional<int64_t> parse_int(const std::string& text) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end) return std::nullopt;
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Reads one YAML file; knows the file name and the current layer for errors.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void set_layer(std::string layer) { layer_ = std::move(layer); }
  const std::string& layer() const { return layer_; }
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    fail_line(line_of(at), message);
  }
  [[noreturn]] void fail_line(int line, const std::string& message) const {
    throw Error(message, ErrorContext{file_, line, layer_});
  }

  // `node` must be a mapping whose keys are all in `allowed`, each once.
  void check_keys(const YAML::Node& node, std::initializer_list<std::string_view> allowed,
                  const std::string& what) const {
    if (!node.IsMap()) {
      fail(node, fmt::format("{} must be a mapping, got {}", what, describe(node)));
    }
    std::map<std::string, int> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) fail(kv.first, fmt::format("{} has a non-text key", what));
      const std::string& key = kv.first.Scalar();
      bool known = false;
      for (std::string_view a : allowed) known = known || a == key;
      if (!known) {
        fail(kv.first, fmt::format("unknown key '{}' in {} (allowed: {})", key, what,
                                   fmt::join(allowed, ", ")));
      }
      const int line = line_of(kv.first);
      if (const auto it = seen.find(key); it != seen.end()) {
        fail(kv.first,
             fmt::format("key '{}' given twice in {} (first at line {})", key, what, it->second));
      }
      seen.emplace(key, line);
    }
  }

  YAML::Node require(const YAML::Node& map, const char* key, const std::string& what) const {
    YAML::Node n = map[key];
    if (!n) fail(map, fmt::format("missing required key '{}' in {}", key, what));
    return n;
  }

  int64_t to_int(const YAML::Node& node, const std::string& key, int64_t lo, int64_t hi) const {
    std::optional<int64_t> v;
    // A quoted scalar ("3") is a string in YAML; only plain scalars are numbers.
    if (node.IsScalar() && node.Tag() != "!") v = parse_int(node.Scalar());
    if (!v) fail(node, fmt::format("'{}' must be an integer, got {}", key, describe(node)));
    if (*v < lo || *v > hi) {
      fail(node, fmt::format("'{}' is {}, must be in {}..{}", key, *v, lo, hi));
    }
    return *v;
  }

  // A finite number > 0 (a plain scalar).
  double to_positive(const YAML::Node& node, const std::string& key) const {
    double v = 0.0;
    bool ok = node.IsScalar() && node.Tag() != "!";
    if (ok) {
      const std::string& text = node.Scalar();
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, v);
      ok = ec == std::errc() && ptr == end && std::isfinite(v) && v > 0.0;
    }
    if (!ok)
      fail(node, fmt::format("'{}' must be a finite number above 0, got {}", key, describe(node)));
    return v;
  }

  int64_t get_int(const YAML::Node& map, const char* key, int64_t lo, int64_t hi,
                  std::optional<int64_t> fallback, const std::string& what) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (!fallback) fail(map, fmt::format("missing required key '{}' in {}", key, what));
      return *fallback;
    }
    return to_int(n, key, lo, hi);
  }

  bool get_bool(const YAML::Node& map, const char* key, bool fallback) const {
    const YAML::Node n = map[key];
    if (!n) return fallback;
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    fail(n, fmt::format("'{}' must be true or false, got {}", key, describe(n)));
  }

  std::string to_string(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, fmt::format("'{}' must be text, got {}", key, describe(node)));
    return node.Scalar();
  }

  // A parameter file name: relative, inside the weights directory, *.npy.
  std::string to_file(const YAML::Node& node, const std::string& key) const {
    const std::string s = to_string(node, key);
    const fs::path p(s);
    bool escapes = p.is_absolute();
    for (const auto& part : p) escapes = escapes || part == "..";
    if (escapes) {
      fail(node, fmt::format("'{}' file '{}' must be a relative path inside the weights directory",
                             key, s));
    }
    if (p.extension() != ".npy") {
      fail(node, fmt::format("'{}' must name a .npy file, got {}", key, describe(node)));
    }
    return s;
  }

 private:
  std::string file_;
  std::string layer_;
};

// YAML lines of a weighted layer's parameter sources (for file errors).
struct ParamLines {
  int weights = 0;
  int bias = 0;
  int multiplier = 0;
  int shift = 0;
  int multiplier_b = 0;
  int table = 0;
};

// Activation of conv / depthwise / fc / add: none, relu, {clamp: [lo, hi]} or
// {table: file.npy} (a lookup table after the full-range clamp).
void parse_activation(const Reader& r, const YAML::Node& layer, Layer& l, ParamLines& lines) {
  Requant& rq = l.requant;
  const YAML::Node a = layer["activation"];
  rq.lo = kInt8Min;
  rq.hi = kInt8Max;
  if (!a) return;
  if (a.IsScalar() && a.Scalar() == "none") return;
  if (a.IsScalar() && a.Scalar() == "relu") {
    rq.lo = 0;
    return;
  }
  if (a.IsMap() && a["table"]) {
    r.check_keys(a, {"table"}, "activation");
    l.files.table = r.to_file(a["table"], "table");
    lines.table = line_of(a["table"]);
    return;
  }
  if (a.IsMap()) {
    r.check_keys(a, {"clamp"}, "activation");
    const YAML::Node c = r.require(a, "clamp", "activation");
    if (!c.IsSequence() || c.size() != 2) {
      r.fail(c, fmt::format("activation clamp must be a list [lo, hi], got {}", describe(c)));
    }
    rq.lo = static_cast<int>(r.to_int(c[0], "clamp lo", kInt8Min, kInt8Max));
    rq.hi = static_cast<int>(r.to_int(c[1], "clamp hi", kInt8Min, kInt8Max));
    if (rq.lo > rq.hi) {
      r.fail(c, fmt::format("activation clamp [{}, {}] has lo > hi", rq.lo, rq.hi));
    }
    return;
  }
  r.fail(a, fmt::format("unknown activation {} (expected none, relu, {{clamp: [lo, hi]}} or "
                        "{{table: file.npy}})",
                        describe(a)));
}

// One requantisation value set: an integer for every channel, one integer per
// channel, or a .npy file name. Returns the file name ("" when inline).
template <typename T>
std::string parse_requant_values(const Reader& r, const YAML::Node& n, const char* key, int64_t max,
                                 int channels, std::vector<T>& out) {
  if (n.IsScalar() && n.Tag() != "!" && parse_int(n.Scalar())) {
    out.assign(static_cast<size_t>(channels), static_cast<T>(r.to_int(n, key, 0, max)));
    return {};
  }
  if (n.IsSequence()) {
    if (static_cast<int>(n.size()) != channels) {
      r.fail(n, fmt::format("'{}' lists {} values, the layer has {} output channels", key, n.size(),
                            channels));
    }
    out.clear();
    for (const auto& v : n) out.push_back(static_cast<T>(r.to_int(v, key, 0, max)));
    return {};
  }
  if (n.IsScalar() && fs::path(n.Scalar()).extension() == ".npy") return r.to_file(n, key);
  r.fail(n, fmt::format("'{}' must be an integer 0..{}, a list of {} integers or a .npy file "
                        "name, got {}",
                        key, max, channels, describe(n)));
}

void parse_requant(const Reader& r, const YAML::Node& layer, Layer& l, ParamLines& lines) {
  const YAML::Node q = layer["requant"];
  if (l.type == LayerType::kAdd) {
    // y = clamp(rshift_round(a * Ma + b * Mb, S), lo, hi): two multipliers.
    if (!q) {
      l.files.multiplier = l.name + "_mult_a.npy";
      l.files.multiplier_b = l.name + "_mult_b.npy";
      l.files.shift = l.name + "_shift.npy";
      lines.multiplier = lines.multiplier_b = lines.shift = l.line;
      return;
    }
    r.check_keys(q, {"multiplier_a", "multiplier_b", "shift"}, "add requant");
    const YAML::Node ma = r.require(q, "multiplier_a", "add requant");
    const YAML::Node mb = r.require(q, "multiplier_b", "add requant");
    const YAML::Node s = r.require(q, "shift", "add requant");
    l.files.multiplier = parse_requant_values(r, ma, "multiplier_a", kMaxMultiplier, l.out_channels,
                                              l.requant.multiplier);
    l.files.multiplier_b =
        parse_requant_values(r, mb, "multiplier_b", kMaxMultiplier, l.out_channels, l.multiplier_b);
    l.files.shift = parse_requant_values(r, s, "shift", kMaxShift, l.out_channels, l.requant.shift);
    lines.multiplier = line_of(ma);
    lines.multiplier_b = line_of(mb);
    lines.shift = line_of(s);
    return;
  }
  if (!q) {
    l.files.multiplier = l.name + "_mult.npy";
    l.files.shift = l.name + "_shift.npy";
    lines.multiplier = lines.shift = l.line;
    return;
  }
  r.check_keys(q, {"multiplier", "shift"}, "requant");
  const YAML::Node m = r.require(q, "multiplier", "requant");
  const YAML::Node s = r.require(q, "shift", "requant");
  l.files.multiplier = parse_requant_values(r, m, "multiplier", kMaxMultiplier, l.out_channels,
                                            l.requant.multiplier);
  l.files.shift = parse_requant_values(r, s, "shift", kMaxShift, l.out_channels, l.requant.shift);
  lines.multiplier = line_of(m);
  lines.shift = line_of(s);
}

void parse_param_files(const Reader& r, const YAML::Node& layer, Layer& l, ParamLines& lines) {
  lines.weights = lines.bias = l.line;
  l.files.weights = l.name + "_weight.npy";
  l.files.bias = l.name + "_bias.npy";
  if (const YAML::Node w = layer["weights"]) {
    l.files.weights = r.to_file(w, "weights");
    lines.weights = line_of(w);
  }
  if (const YAML::Node b = layer["bias"]) {
    l.files.bias = r.to_file(b, "bias");
    lines.bias = line_of(b);
  }
}

// Tensor sizes: every dimension was range-checked where it was read; this
// bounds the product (without overflowing int64 on the way).
void check_elements(const Reader& r, const YAML::Node& at, const Shape& s, const char* what) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > 0 && n > kMaxElements / d) {
      r.fail(at, fmt::format("{} {} is too large (limit: {} elements)", what, shape_str(s),
                             kMaxElements));
    }
    n *= d;
  }
}

// `pad`: one integer for every side, or [top, left, bottom, right] (ONNX's
// order), each 0..kernel-1. Absent: 0.
Pads parse_pads(const Reader& r, const YAML::Node& layer, int kernel) {
  const YAML::Node n = layer["pad"];
  if (!n) return {};
  if (n.IsSequence()) {
    if (n.size() != 4) {
      r.fail(n, fmt::format("'pad' must be an integer or a list [top, left, bottom, right], "
                            "got a list of {}",
                            n.size()));
    }
    int v[4];
    for (size_t i = 0; i < 4; ++i) v[i] = static_cast<int>(r.to_int(n[i], "pad", 0, kernel - 1));
    return Pads{v[0], v[1], v[2], v[3]};
  }
  const int p = static_cast<int>(r.to_int(n, "pad", 0, kernel - 1));
  return Pads{p, p, p, p};
}

// The layers a layer reads: `inputs` names earlier layers or `input` (the
// network input); default: the layer before it.
struct LayerInputs {
  std::vector<int> index;
  std::vector<Shape> shapes;
};

LayerInputs parse_inputs(const Reader& r, const YAML::Node& node, size_t position,
                         const std::map<std::string, int>& index_of,
                         const std::vector<Layer>& earlier, const Shape& network_input,
                         const std::string& type) {
  LayerInputs in;
  const auto add = [&](int i) {
    in.index.push_back(i);
    in.shapes.push_back(i == kNetworkInput ? network_input
                                           : earlier[static_cast<size_t>(i)].out_shape);
  };
  const YAML::Node n = node["inputs"];
  if (!n) {
    add(position == 0 ? kNetworkInput : static_cast<int>(position) - 1);
    return in;
  }
  std::vector<YAML::Node> names;
  if (n.IsSequence()) {
    for (const auto& e : n) names.push_back(e);
  } else {
    names.push_back(n);
  }
  if (type == "concat") {
    if (names.size() < 2 || names.size() > static_cast<size_t>(kMaxConcatInputs)) {
      r.fail(n, n.IsSequence()
                    ? fmt::format("a concat layer's 'inputs' must name 2 to {} layers, got a "
                                  "list of {}",
                                  kMaxConcatInputs, names.size())
                    : fmt::format("a concat layer's 'inputs' must be a list of 2 to {} layers, "
                                  "got {}",
                                  kMaxConcatInputs, describe(n)));
    }
  } else if (names.empty() || names.size() > 2) {
    r.fail(n,
           n.IsSequence()
               ? fmt::format("'inputs' must name one or two layers, got a list of {}", names.size())
               : fmt::format("'inputs' must name one or two layers, got {}", describe(n)));
  }
  for (const YAML::Node& e : names) {
    const std::string name = r.to_string(e, "inputs");
    if (name == "input") {
      add(kNetworkInput);
      continue;
    }
    const auto it = index_of.find(name);
    if (it == index_of.end()) {
      r.fail(e, fmt::format("'inputs' names '{}', which is not an earlier layer (a layer may "
                            "read only layers above it, or 'input')",
                            name));
    }
    add(it->second);
  }
  return in;
}

// Parses one layer given the layers before it; fills inputs, shapes and geometry.
Layer parse_layer(Reader& r, const YAML::Node& node, size_t index,
                  const std::map<std::string, int>& index_of, const std::vector<Layer>& earlier,
                  const Shape& network_input, ParamLines& lines) {
  Layer l;
  l.line = line_of(node);
  const std::string what = fmt::format("layer #{}", index + 1);
  r.set_layer({});
  if (!node.IsMap()) {
    r.fail(node, fmt::format("{} must be a mapping, got {}", what, describe(node)));
  }
  const YAML::Node name = r.require(node, "name", what);
  l.name = r.to_string(name, "name");
  if (!valid_name(l.name) || l.name == "input") {
    r.fail(name, fmt::format("layer name '{}' must match [A-Za-z0-9_-]+ and not be 'input' (the "
                             "network input's name)",
                             l.name));
  }
  r.set_layer(l.name);
  const std::string type = r.to_string(r.require(node, "type", "layer"), "type");
  const LayerInputs ins = parse_inputs(r, node, index, index_of, earlier, network_input, type);
  l.inputs = ins.index;
  const Shape& in = ins.shapes[0];
  l.in_shape = in;
  const int64_t c = in[0], h = in[1], w = in[2];
  if (type != "add" && type != "mul" && type != "concat" && ins.index.size() != 1) {
    r.fail(node["inputs"],
           fmt::format("a {} layer reads one input, 'inputs' names {}", type, ins.index.size()));
  }
  // A convolution window's output size along both axes, or a clear error.
  const auto conv_shape = [&](int kernel, int stride) {
    int ho = 0, wo = 0;
    try {
      ho = conv_out_size(static_cast<int>(h), kernel, stride, l.pads.top, l.pads.bottom);
      wo = conv_out_size(static_cast<int>(w), kernel, stride, l.pads.left, l.pads.right);
    } catch (const Error& e) {
      r.fail(node, fmt::format("impossible shape for input {}: {}", shape_str(in), e.message()));
    }
    return std::pair{ho, wo};
  };

  if (type == "conv" || type == "depthwise") {
    const bool dw = type == "depthwise";
    l.type = dw ? LayerType::kDepthwise : LayerType::kConv;
    const std::string what_conv = type + " layer";
    if (dw) {
      r.check_keys(node,
                   {"name", "type", "inputs", "kernel", "stride", "pad", "activation", "requant",
                    "weights", "bias"},
                   what_conv);
      l.out_channels = static_cast<int>(c);
    } else {
      r.check_keys(node,
                   {"name", "type", "inputs", "out_channels", "kernel", "stride", "pad", "groups",
                    "activation", "requant", "weights", "bias"},
                   what_conv);
      l.out_channels = static_cast<int>(r.get_int(node, "out_channels", 1, kMaxDim, {}, what_conv));
      l.groups = static_cast<int>(r.get_int(node, "groups", 1, kMaxDim, 1, what_conv));
      if (c % l.groups != 0 || l.out_channels % l.groups != 0) {
        r.fail(node["groups"], fmt::format("groups {} must divide the {} input channels and the "
                                           "{} output channels",
                                           l.groups, c, l.out_channels));
      }
    }
    l.conv.kernel = static_cast<int>(r.get_int(node, "kernel", 1, kMaxKernelSide, {}, what_conv));
    l.conv.stride = static_cast<int>(r.get_int(node, "stride", 1, kMaxStride, 1, what_conv));
    l.pads = parse_pads(r, node, l.conv.kernel);
    l.conv.pad = l.pads.top;
    const auto [ho, wo] = conv_shape(l.conv.kernel, l.conv.stride);
    l.out_shape = {l.out_channels, ho, wo};
    check_elements(r, node, {l.out_channels, dw ? 1 : c / l.groups, l.conv.kernel, l.conv.kernel},
                   "weight tensor");
  } else if (type == "fc") {
    l.type = LayerType::kFc;
    r.check_keys(
        node,
        {"name", "type", "inputs", "out_features", "activation", "requant", "weights", "bias"},
        "fc layer");
    l.out_channels = static_cast<int>(r.get_int(node, "out_features", 1, kMaxDim, {}, "fc layer"));
    // The fc layer as a convolution covering the whole input (square inputs;
    // a non-square input is only ever used flattened, so kernel stays 1).
    l.conv = ConvGeometry{h == w ? static_cast<int>(h) : 1, 1, 0};
    l.out_shape = {l.out_channels, 1, 1};
    check_elements(r, node, {l.out_channels, c * h * w}, "weight tensor");
  } else if (type == "maxpool" || type == "avgpool") {
    l.type = type == "maxpool" ? LayerType::kMaxPool : LayerType::kAvgPool;
    const std::string what_pool = type + " layer";
    r.check_keys(node, {"name", "type", "inputs", "kernel", "stride", "pad", "ceil_mode"},
                 what_pool);
    l.pool.kernel = static_cast<int>(r.get_int(node, "kernel", 1, kMaxKernelSide, {}, what_pool));
    l.pool.stride =
        static_cast<int>(r.get_int(node, "stride", 1, kMaxStride, l.pool.kernel, what_pool));
    l.pads = parse_pads(r, node, l.pool.kernel);
    l.pool.pad = l.pads.top;
    l.pool.ceil_mode = r.get_bool(node, "ceil_mode", false);
    int ho = 0, wo = 0;
    try {
      ho = pool_out_size(static_cast<int>(h), l.pool.kernel, l.pool.stride, l.pads.top,
                         l.pads.bottom, l.pool.ceil_mode);
      wo = pool_out_size(static_cast<int>(w), l.pool.kernel, l.pool.stride, l.pads.left,
                         l.pads.right, l.pool.ceil_mode);
    } catch (const Error& e) {
      r.fail(node, fmt::format("impossible shape for input {}: {}", shape_str(in), e.message()));
    }
    l.out_shape = {c, ho, wo};
  } else if (type == "global_avgpool") {
    l.type = LayerType::kGlobalAvgPool;
    r.check_keys(node, {"name", "type", "inputs"}, "global_avgpool layer");
    l.out_shape = {c, 1, 1};
  } else if (type == "add") {
    l.type = LayerType::kAdd;
    r.check_keys(node, {"name", "type", "inputs", "activation", "requant"}, "add layer");
    if (ins.index.size() != 2) {
      r.fail(node, "an add layer needs 'inputs' naming its two operands");
    }
    if (ins.shapes[0] != ins.shapes[1]) {
      r.fail(node["inputs"], fmt::format("add operands differ in shape: {} and {}",
                                         shape_str(ins.shapes[0]), shape_str(ins.shapes[1])));
    }
    l.out_channels = static_cast<int>(c);
    l.out_shape = in;
  } else if (type == "mul") {
    l.type = LayerType::kMul;
    r.check_keys(node, {"name", "type", "inputs", "activation", "requant"}, "mul layer");
    if (ins.index.size() != 2) {
      r.fail(node, fmt::format("a mul layer needs 'inputs' naming its map and its [C, 1, 1] "
                               "vector, got {} input{}",
                               ins.index.size(), ins.index.size() == 1 ? "" : "s"));
    }
    const Shape& v = ins.shapes[1];
    if (v[1] != 1 || v[2] != 1) {
      r.fail(node["inputs"], fmt::format("the mul vector (second input) has shape {}, expected "
                                         "[C, 1, 1] (one value per channel)",
                                         shape_str(v)));
    }
    if (v[0] != c) {
      r.fail(node["inputs"], fmt::format("the mul vector has {} channels, the map {} has {}", v[0],
                                         shape_str(in), c));
    }
    l.out_channels = static_cast<int>(c);
    l.out_shape = in;
  } else if (type == "concat") {
    l.type = LayerType::kConcat;
    r.check_keys(node, {"name", "type", "inputs"}, "concat layer");
    int64_t channels = 0;
    for (const Shape& s : ins.shapes) {
      if (s[1] != h || s[2] != w) {
        r.fail(node["inputs"],
               fmt::format("concat inputs differ in height or width: {} and {} (a concat stacks "
                           "maps of one size along the channels)",
                           shape_str(in), shape_str(s)));
      }
      channels += s[0];
    }
    if (channels > kMaxDim) {
      r.fail(node["inputs"], fmt::format("concat of {} channels, more than {}", channels, kMaxDim));
    }
    l.out_shape = {channels, h, w};
  } else if (type == "slice") {
    l.type = LayerType::kSlice;
    r.check_keys(node, {"name", "type", "inputs", "begin", "end"}, "slice layer");
    l.slice_begin = static_cast<int>(r.get_int(node, "begin", 0, c - 1, {}, "slice layer"));
    l.slice_end = static_cast<int>(r.get_int(node, "end", 1, c, {}, "slice layer"));
    if (l.slice_end <= l.slice_begin) {
      r.fail(node,
             fmt::format("slice end {} must be greater than begin {}", l.slice_end, l.slice_begin));
    }
    l.out_shape = {l.slice_end - l.slice_begin, h, w};
  } else if (type == "upsample") {
    l.type = LayerType::kUpsample;
    r.check_keys(node, {"name", "type", "inputs", "scale", "mode"}, "upsample layer");
    l.scale = static_cast<int>(r.get_int(node, "scale", 2, kMaxUpsample, {}, "upsample layer"));
    if (const YAML::Node mode = node["mode"]; mode) {
      const std::string m = r.to_string(mode, "mode");
      if (m != "nearest") {
        r.fail(mode, fmt::format("upsample mode '{}' is not supported (nearest only)", m));
      }
    }
    if (h * l.scale > kMaxDim || w * l.scale > kMaxDim) {
      r.fail(node, fmt::format("upsampling {} by {} gives more than {} rows or columns",
                               shape_str(in), l.scale, kMaxDim));
    }
    l.out_shape = {c, h * l.scale, w * l.scale};
    check_elements(r, node, l.out_shape, "upsampled map");
  } else if (type == "relu") {
    l.type = LayerType::kClamp;
    r.check_keys(node, {"name", "type", "inputs"}, "relu layer");
    l.lo = 0;
    l.hi = kInt8Max;
    l.out_shape = in;
  } else if (type == "clamp") {
    l.type = LayerType::kClamp;
    r.check_keys(node, {"name", "type", "inputs", "lo", "hi"}, "clamp layer");
    l.lo = static_cast<int>(r.get_int(node, "lo", kInt8Min, kInt8Max, {}, "clamp layer"));
    l.hi = static_cast<int>(r.get_int(node, "hi", kInt8Min, kInt8Max, {}, "clamp layer"));
    if (l.lo > l.hi) r.fail(node, fmt::format("clamp lo {} is greater than hi {}", l.lo, l.hi));
    l.out_shape = in;
  } else if (type == "flatten") {
    l.type = LayerType::kFlatten;
    r.check_keys(node, {"name", "type", "inputs"}, "flatten layer");
    l.out_shape = {c * h * w, 1, 1};
  } else {
    r.fail(node["type"], fmt::format("unknown layer type '{}' (expected conv, depthwise, fc, "
                                     "maxpool, avgpool, global_avgpool, add, mul, concat, "
                                     "slice, upsample, relu, clamp or flatten)",
                                     type));
  }

  if (l.has_requant()) {
    parse_activation(r, node, l, lines);
    parse_requant(r, node, l, lines);
  }
  if (l.has_weights()) parse_param_files(r, node, l, lines);
  return l;
}

// Loads one parameter tensor, checking existence, dtype and shape.
template <typename T>
Tensor<T> load_param(const Network& net, const Layer& l, int line, const std::string& rel,
                     const char* what, const Shape& expected) {
  const ErrorContext where{net.source_file, line, l.name};
  const std::string path = (fs::path(net.weights_dir) / rel).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error(
        fmt::format("{} file '{}' not found (weights directory '{}')", what, path, net.weights_dir),
        where);
  }
  Tensor<T> t;
  try {
    t = load_npy<T>(path);  // checks the dtype: "expected int8, file has int32"
  } catch (const Error& e) {
    throw Error(fmt::format("{} file: {}", what, e.what()), where);
  }
  if (t.shape() != expected) {
    throw Error(fmt::format("{} file '{}' has shape {}, expected {}", what, path,
                            shape_str(t.shape()), shape_str(expected)),
                where);
  }
  return t;
}

Shape weight_shape(const Layer& l) {
  if (l.type == LayerType::kConv) {
    return {l.out_channels, l.in_shape[0] / l.groups, l.conv.kernel, l.conv.kernel};
  }
  if (l.type == LayerType::kDepthwise) return {l.out_channels, 1, l.conv.kernel, l.conv.kernel};
  return {l.out_channels, shape_elements(l.in_shape)};
}

void load_parameters(const Network& net, Layer& l, const ParamLines& lines) {
  const int64_t cout = l.out_channels;
  if (l.has_weights()) {
    l.weights =
        load_param<int8_t>(net, l, lines.weights, l.files.weights, "weights", weight_shape(l));
    l.bias = load_param<int32_t>(net, l, lines.bias, l.files.bias, "bias", {cout});
  }
  if (!l.files.multiplier_b.empty()) {
    const auto m = load_param<uint16_t>(net, l, lines.multiplier_b, l.files.multiplier_b,
                                        "multiplier_b", {cout});
    l.multiplier_b.assign(m.values().begin(), m.values().end());
  }
  if (!l.files.multiplier.empty()) {
    const auto m =
        load_param<uint16_t>(net, l, lines.multiplier, l.files.multiplier,
                             l.type == LayerType::kAdd ? "multiplier_a" : "multiplier", {cout});
    l.requant.multiplier.assign(m.values().begin(), m.values().end());
  }
  if (!l.files.shift.empty()) {
    const auto s = load_param<uint8_t>(net, l, lines.shift, l.files.shift, "shift", {cout});
    for (int64_t ch = 0; ch < cout; ++ch) {
      if (s[ch] > kMaxShift) {
        throw Error(
            fmt::format("shift file '{}': output channel {} has shift {}, must be in "
                        "0..{}",
                        (fs::path(net.weights_dir) / l.files.shift).string(), ch, s[ch], kMaxShift),
            ErrorContext{net.source_file, lines.shift, l.name});
      }
    }
    l.requant.shift.assign(s.values().begin(), s.values().end());
  }
  if (!l.files.table.empty()) {
    const auto t =
        load_param<int8_t>(net, l, lines.table, l.files.table, "activation table", {kActTableSize});
    l.requant.table.assign(t.values().begin(), t.values().end());
  }
}

}  // namespace

int64_t Layer::macs() const {
  if (in_shape.size() != 3 || out_shape.size() != 3) return 0;
  if (type == LayerType::kFc) return int64_t{out_channels} * shape_elements(in_shape);
  if (type != LayerType::kConv && type != LayerType::kDepthwise) return 0;
  // Only taps that land inside the image are multiply-accumulates; a padded
  // tap multiplies by zero and the hardware skips it.
  const auto taps = [this](int64_t in, int64_t out, int before) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; ++o) {
      for (int k = 0; k < conv.kernel; ++k) {
        const int64_t i = o * conv.stride - before + k;
        n += (i >= 0 && i < in) ? 1 : 0;
      }
    }
    return n;
  };
  const int64_t per_output = type == LayerType::kDepthwise ? 1 : in_shape[0] / groups;
  return int64_t{out_channels} * per_output * taps(in_shape[1], out_shape[1], pads.top) *
         taps(in_shape[2], out_shape[2], pads.left);
}

int64_t Layer::param_bytes() const {
  if (!has_requant() || in_shape.size() != 3) return 0;
  // add: two uint16 multipliers and a uint8 shift per channel; mul: one of each.
  if (type == LayerType::kAdd) return int64_t{out_channels} * (2 + 2 + 1);
  if (type == LayerType::kMul) return int64_t{out_channels} * (2 + 1);
  const int64_t fan_in = type == LayerType::kConv ? in_shape[0] / groups * conv.kernel * conv.kernel
                         : type == LayerType::kDepthwise ? int64_t{conv.kernel} * conv.kernel
                                                         : shape_elements(in_shape);
  // int8 weights, int32 bias, uint16 multiplier, uint8 shift per output channel.
  return int64_t{out_channels} * (fan_in + 4 + 2 + 1);
}

ConvWindow Layer::conv_window() const {
  return ConvWindow{conv.kernel, conv.stride, pads,
                    type == LayerType::kDepthwise ? out_channels : groups};
}

bool Network::is_chain() const {
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].inputs != std::vector<int>{static_cast<int>(i) - 1}) return false;
  }
  return true;
}

const Shape& Network::output_shape(size_t i) const {
  if (layers.empty()) return input_shape;
  if (outputs.empty()) return layers.back().out_shape;
  return layers.at(static_cast<size_t>(outputs.at(i))).out_shape;
}

const std::string& Network::output_name(size_t i) const {
  static const std::string input_name = "input";
  if (layers.empty()) return input_name;
  if (outputs.empty()) return layers.back().name;
  return layers.at(static_cast<size_t>(outputs.at(i))).name;
}

double Network::output_scale(size_t i) const {
  return i < output_scales.size() ? output_scales[i] : 0.0;
}

std::vector<int> Network::output_layers() const {
  if (!outputs.empty()) return outputs;
  return {static_cast<int>(layers.size()) - 1};
}

int Network::output_index(size_t layer) const {
  if (outputs.empty()) return layer + 1 == layers.size() ? 0 : -1;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (outputs[j] == static_cast<int>(layer)) return static_cast<int>(j);
  }
  return -1;
}

int64_t Network::macs() const {
  int64_t n = 0;
  for (const Layer& l : layers) n += l.macs();
  return n;
}

namespace {

// Every channel's shift in 0..47 and the activation clamp inside int8.
void check_requant_ranges(const Layer& l, const ErrorContext& where) {
  for (size_t ch = 0; ch < l.requant.shift.size(); ++ch) {
    if (l.requant.shift[ch] > kMaxShift) {
      throw Error(fmt::format("output channel {} has shift {}, must be in 0..{}", ch,
                              l.requant.shift[ch], kMaxShift),
                  where);
    }
  }
  if (l.requant.lo < kInt8Min || l.requant.hi > kInt8Max || l.requant.lo > l.requant.hi) {
    throw Error(fmt::format("activation clamp [{}, {}] is not inside [-128, 127]", l.requant.lo,
                            l.requant.hi),
                where);
  }
  if (!l.requant.table.empty() && l.requant.table.size() != kActTableSize) {
    throw Error(fmt::format("activation table has {} entries, expected {}", l.requant.table.size(),
                            kActTableSize),
                where);
  }
  if (!l.files.table.empty() && l.requant.table.empty()) {
    throw Error("activation table not loaded", where);
  }
}

}  // namespace

void validate_parameters(const Network& net) {
  for (const Layer& l : net.layers) {
    if (!l.has_requant()) continue;
    const ErrorContext where{net.source_file, l.line, l.name};
    if (l.type == LayerType::kAdd) {
      // Each term is below 2^23 in magnitude: the sum cannot overflow.
      const auto n = static_cast<size_t>(l.out_channels);
      if (l.requant.multiplier.size() != n || l.multiplier_b.size() != n ||
          l.requant.shift.size() != n) {
        throw Error(fmt::format("requantisation has {} + {} multipliers and {} shifts for {} "
                                "channels",
                                l.requant.multiplier.size(), l.multiplier_b.size(),
                                l.requant.shift.size(), n),
                    where);
      }
      check_requant_ranges(l, where);
      continue;
    }
    if (l.type == LayerType::kMul) {
      // |x * s| <= 2^14: no accumulator to check.
      const auto n = static_cast<size_t>(l.out_channels);
      if (l.requant.multiplier.size() != n || l.requant.shift.size() != n) {
        throw Error(fmt::format("requantisation has {} multipliers and {} shifts for {} channels",
                                l.requant.multiplier.size(), l.requant.shift.size(), n),
                    where);
      }
      check_requant_ranges(l, where);
      continue;
    }
    const Shape expected = weight_shape(l);
    if (l.weights.shape() != expected) {
      throw Error(fmt::format("weights have shape {}, expected {}", shape_str(l.weights.shape()),
                              shape_str(expected)),
                  where);
    }
    const int64_t cout = l.out_channels;
    if (l.bias.shape() != Shape{cout}) {
      throw Error(fmt::format("bias has shape {}, expected [{}]", shape_str(l.bias.shape()), cout),
                  where);
    }
    if (static_cast<int64_t>(l.requant.multiplier.size()) != cout ||
        static_cast<int64_t>(l.requant.shift.size()) != cout) {
      throw Error(fmt::format("requantisation has {} multipliers and {} shifts for {} output "
                              "channels",
                              l.requant.multiplier.size(), l.requant.shift.size(), cout),
                  where);
    }
    check_requant_ranges(l, where);
    const int64_t fan_in = l.weights.size() / cout;
    for (int64_t ch = 0; ch < cout; ++ch) {
      const AccRange r = worst_case_acc(l.weights.data() + ch * fan_in, fan_in, l.bias[ch]);
      if (r.min < std::numeric_limits<int32_t>::min() ||
          r.max > std::numeric_limits<int32_t>::max()) {
        throw Error(fmt::format("accumulator overflow: output channel {} can reach [{}, {}] for "
                                "int8 inputs, outside the int32 range [{}, {}]",
                                ch, r.min, r.max, std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max()),
                    where);
      }
    }
  }
}

namespace {

// `outputs:` (docs/network-format.md, "Outputs"): the names of the layers
// whose maps are the network's outputs, in order; default: the last layer.
void parse_outputs(const Reader& r, const YAML::Node& node,
                   const std::map<std::string, int>& index_of, Network& net) {
  if (!node) {
    net.outputs = {static_cast<int>(net.layers.size()) - 1};
    return;
  }
  std::vector<YAML::Node> names;
  if (node.IsSequence()) {
    for (const auto& e : node) names.push_back(e);
  } else if (node.IsScalar()) {
    names.push_back(node);
  }
  if (names.empty() || names.size() > kMaxOutputs) {
    r.fail(node, fmt::format("'outputs' must be a layer name or a list of 1 to {} layer names, "
                             "got {}",
                             kMaxOutputs, describe(node)));
  }
  for (const YAML::Node& n : names) {
    const std::string name = r.to_string(n, "outputs");
    if (name == "input") {
      r.fail(n,
             "'outputs' names 'input': the network input is not an output (copy it "
             "through a layer)");
    }
    const auto it = index_of.find(name);
    if (it == index_of.end()) {
      r.fail(n, fmt::format("'outputs' names '{}', which is not a layer", name));
    }
    if (std::find(net.outputs.begin(), net.outputs.end(), it->second) != net.outputs.end()) {
      r.fail(n, fmt::format("'outputs' names '{}' twice", name));
    }
    net.outputs.push_back(it->second);
  }
}

// `scales: {output: ...}`: one scale per output, a number for a network of one
// output or a list in `outputs` order.
void parse_output_scales(const Reader& r, const YAML::Node& node, Network& net) {
  if (!node) return;
  if (node.IsSequence()) {
    if (node.size() != net.outputs.size()) {
      r.fail(node,
             fmt::format("'scales: output' lists {} scales, the network has {} output{}",
                         node.size(), net.outputs.size(), net.outputs.size() == 1 ? "" : "s"));
    }
    for (const auto& v : node) net.output_scales.push_back(r.to_positive(v, "output"));
    return;
  }
  if (net.outputs.size() != 1) {
    r.fail(node, fmt::format("'scales: output' must be a list of {} scales, one per output in "
                             "'outputs' order, got {}",
                             net.outputs.size(), describe(node)));
  }
  net.output_scales.push_back(r.to_positive(node, "output"));
}

}  // namespace

Network load_network(const std::string& yaml_path, const LoadOptions& options) {
  Network net;
  net.source_file = yaml_path;
  Reader r(yaml_path);
  std::error_code ec;
  if (!fs::is_regular_file(yaml_path, ec)) {
    throw Error(fs::exists(yaml_path, ec) ? "network description is not a regular file"
                                          : "cannot open network description (no such file)",
                ErrorContext{yaml_path, 0, ""});
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(yaml_path);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    throw Error(fmt::format("YAML nesting deeper than {} levels", e.depth()),
                ErrorContext{yaml_path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  } catch (const YAML::ParserException& e) {
    throw Error(fmt::format("YAML syntax error: {}", e.msg),
                ErrorContext{yaml_path, e.mark.is_null() ? 0 : e.mark.line + 1, ""});
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("cannot read network description: {}", e.msg),
                ErrorContext{yaml_path, 0, ""});
  }

  std::vector<ParamLines> lines;
  try {
    if (!root.IsMap()) {
      r.fail(root,
             fmt::format("the top level must be a mapping with name, input and layers, got {}",
                         describe(root)));
    }
    r.check_keys(root, {"name", "input", "weights", "layers", "outputs", "scales"}, "the network");
    const YAML::Node name = r.require(root, "name", "the network");
    net.name = r.to_string(name, "name");
    if (!valid_name(net.name)) {
      r.fail(name, fmt::format("network name '{}' must match [A-Za-z0-9_-]+", net.name));
    }

    const YAML::Node input = r.require(root, "input", "the network");
    if (!input.IsSequence() || input.size() != 3) {
      r.fail(input, fmt::format("'input' must be a list [C, H, W], got {}", describe(input)));
    }
    for (const auto& d : input) net.input_shape.push_back(r.to_int(d, "input", 1, kMaxDim));
    check_elements(r, input, net.input_shape, "input");

    const YAML::Node scales = root["scales"];
    if (scales) {
      if (!scales.IsMap()) {
        r.fail(scales, fmt::format("'scales' must be a mapping {{input: S, output: S}}, got {}",
                                   describe(scales)));
      }
      r.check_keys(scales, {"input", "output"}, "scales");
      if (const YAML::Node v = scales["input"]) net.input_scale = r.to_positive(v, "input");
    }

    const fs::path yaml_dir = fs::path(yaml_path).parent_path();
    if (!options.weights_dir.empty()) {
      net.weights_dir = options.weights_dir;
    } else if (const YAML::Node w = root["weights"]) {
      const fs::path dir(r.to_string(w, "weights"));
      net.weights_dir = (dir.is_absolute() ? dir : yaml_dir / dir).string();
    } else {
      net.weights_dir = yaml_dir.empty() ? std::string(".") : yaml_dir.string();
    }

    const YAML::Node layers = r.require(root, "layers", "the network");
    if (!layers.IsSequence() || layers.size() == 0) {
      r.fail(layers, fmt::format("'layers' must be a non-empty list, got {}", describe(layers)));
    }
    std::map<std::string, int> index_of;
    for (size_t i = 0; i < layers.size(); ++i) {
      ParamLines pl;
      Layer l = parse_layer(r, layers[i], i, index_of, net.layers, net.input_shape, pl);
      if (const auto it = index_of.find(l.name); it != index_of.end()) {
        r.fail_line(l.line, fmt::format("duplicate layer name '{}' (first defined at line {})",
                                        l.name, net.layers[it->second].line));
      }
      index_of.emplace(l.name, static_cast<int>(i));
      check_elements(r, layers[i], l.out_shape, "output");
      net.layers.push_back(std::move(l));
      lines.push_back(pl);
    }
    r.set_layer({});  // the errors below name the file and the line of the key
    parse_outputs(r, root["outputs"], index_of, net);
    if (scales) parse_output_scales(r, scales["output"], net);
    // Every layer's output feeds a later layer or is a network output.
    std::vector<int> readers(net.layers.size(), 0);
    for (const Layer& l : net.layers) {
      for (int i : l.inputs) {
        if (i != kNetworkInput) ++readers[static_cast<size_t>(i)];
      }
    }
    for (size_t i = 0; i < net.layers.size(); ++i) {
      if (readers[i] == 0 && net.output_index(i) < 0) {
        r.set_layer(net.layers[i].name);
        r.fail_line(net.layers[i].line,
                    i + 1 == net.layers.size()
                        ? "the last layer's output is never read: it must be one of the "
                          "network's 'outputs'"
                        : "the layer's output is never read (name it in a later layer's "
                          "'inputs', or in the network's 'outputs')");
      }
    }
    r.set_layer({});
  } catch (const YAML::Exception& e) {
    // Any conversion the checks above did not anticipate still names the place.
    throw Error(fmt::format("invalid value: {}", e.msg),
                ErrorContext{yaml_path, e.mark.is_null() ? 0 : e.mark.line + 1, r.layer()});
  }

  if (options.load_weights) {
    for (size_t i = 0; i < net.layers.size(); ++i) {
      if (net.layers[i].has_requant()) load_parameters(net, net.layers[i], lines[i]);
    }
    validate_parameters(net);
  }
  return net;
}

}  // namespace strata
