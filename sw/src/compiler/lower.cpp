// SPDX-License-Identifier: Apache-2.0
// Pass 1, lower (passes.hpp): network layers to fused ops (docs/compiler.md,
// "Lowering rules").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>

#include "passes.hpp"
#include "strata/error.hpp"
#include "strata/target_rules.hpp"

namespace strata::compiler {

namespace {

// Clamp [lo2, hi2] applied after [lo1, hi1]: the composition is one clamp.
void compose(int& lo1, int& hi1, int lo2, int hi2) {
  lo1 = std::clamp(lo1, lo2, hi2);
  hi1 = std::clamp(hi1, lo2, hi2);
}

bool identity_pool_possible(const PoolWindow& g, int64_t h, int64_t w, const HwTarget& t) {
  const int n = g.kernel * g.kernel;
  const bool padded = g.pad.top != 0 || g.pad.left != 0 || g.pad.bottom != 0 || g.pad.right != 0;
  if (padded || g.kernel > t.max_kernel || !std::has_single_bit(static_cast<unsigned>(n))) {
    return false;
  }
  const int64_t ho = pool_out_size(static_cast<int>(h), g.kernel, g.stride, 0, 0, g.ceil_mode);
  const int64_t wo = pool_out_size(static_cast<int>(w), g.kernel, g.stride, 0, 0, g.ceil_mode);
  return (ho - 1) * g.stride + g.kernel <= h && (wo - 1) * g.stride + g.kernel <= w;
}

// A max pool of window k larger than the pooling unit (max_pool_kernel m >= 2) as a
// chain of max pools of windows <= m: stride-1 windows whose extents add up to k
// (k - 1 = sum of (k_i - 1)), the last one carrying the stride. Along one axis of
// n elements with `before` padding, stage i's element j is the max over input rows
// [j - P_i, j - P_i + K_i - 1] inside the input (P_i, K_i - 1: the stages' pads
// before and window extents so far, each pad below its window), by induction, for
// any split of the pads whose intermediate maps are not empty: padding is ignored
// at every stage as the golden model ignores it, and a stage's last window reaches
// at least row n - 1. The last stage at stride s then takes that stride-1 max at
// j = o * s, the golden window o. The padding after the input is chosen so that
// the last stage has exactly `out` outputs (floor mode):
// Q = max(0, (out - 1) * s + k - n - before), at most k - 1 as the last window
// starts inside the input or its padding. Both pads are split over the stages
// round-robin (the intermediate maps stay near the input's size), or front first
// when that would leave an intermediate map empty (front first never does: stage
// i's map has n + P_i + Q_i - K_i + 1 >= 1 elements). Empty when m < 2.
std::vector<PoolWindow> max_pool_cascade(const PoolWindow& g, int64_t h, int64_t w, int64_t out_h,
                                         int64_t out_w, int m) {
  std::vector<PoolWindow> stages;
  if (m < 2) return stages;
  for (int left = g.kernel - 1; left > 0;) {
    const int step = std::min(m - 1, left);
    stages.push_back(PoolWindow{step + 1, 1, Pads{}, false});
    left -= step;
  }
  stages.back().stride = g.stride;
  // total <= k - 1, the sum of the stages' largest pads (kernel - 1 each).
  const auto spread = [&](int total, int Pads::*side, bool front) {
    for (PoolWindow& st : stages) st.pad.*side = 0;
    for (bool progress = true; total > 0 && progress;) {
      progress = false;
      for (PoolWindow& st : stages) {
        const int p = std::min(front ? st.kernel - 1 - st.pad.*side : 1, total);
        if (p > 0 && st.pad.*side + p < st.kernel) {
          st.pad.*side += p;
          total -= p;
          progress = true;
        }
      }
    }
  };
  // Along one axis: the pads before and after, every intermediate map not empty.
  const auto axis = [&](int64_t n, int before, int64_t out, int Pads::*lo, int Pads::*hi) {
    const int after =
        static_cast<int>(std::max<int64_t>(0, (out - 1) * g.stride + g.kernel - n - before));
    for (const bool front : {false, true}) {
      spread(before, lo, front);
      spread(after, hi, front);
      bool nonempty = true;
      int64_t len = n;
      for (const PoolWindow& st : stages) {
        len += st.pad.*lo + st.pad.*hi - st.kernel + 1;
        nonempty = nonempty && len >= 1;
      }
      if (nonempty) return;
    }
  };
  axis(h, g.pad.top, out_h, &Pads::top, &Pads::bottom);
  axis(w, g.pad.left, out_w, &Pads::left, &Pads::right);
  return stages;
}

ChannelParams channel_params_of(const Layer& l) {
  ChannelParams p;
  p.bias.assign(l.bias.values().begin(), l.bias.values().end());
  p.mult = l.requant.multiplier;
  p.shift = l.requant.shift;
  p.lo = l.requant.lo;
  p.hi = l.requant.hi;
  p.table = l.requant.table;
  return p;
}

// A clamp [lo, hi] after an op's requantisation: with a table activation the
// clamp applies to the table's values (the requantisation clamp stays the
// full range), else it narrows the requantisation clamp.
void compose_params(ChannelParams& p, int lo, int hi) {
  if (p.table.empty()) {
    compose(p.lo, p.hi, lo, hi);
    return;
  }
  for (int8_t& v : p.table) v = static_cast<int8_t>(std::clamp<int>(v, lo, hi));
}

// Why depthwise layer `l` over an input of width `in_w` cannot run in COMPUTE
// mode DEPTHWISE on `t` (docs/isa.md, COMPUTE), or "" when it can. Its kernel
// is the pooling path's window: at most max_pool_kernel (square, one stride:
// the network format's); a row wider than the line buffer runs in column
// strips, which need external column offsets on the AXI beat.
std::string depthwise_mode_refusal(const Layer& l, int64_t in_w, const HwTarget& t) {
  if (l.conv.kernel > t.max_pool_kernel) {
    return fmt::format("kernel {} exceeds max_pool_kernel {}", l.conv.kernel, t.max_pool_kernel);
  }
  if (in_w > t.max_image_width && !(t.beat_bytes() <= t.lanes && t.lanes % t.beat_bytes() == 0)) {
    return fmt::format(
        "rows of {} exceed max_image_width {} and column strips need external "
        "offsets on the {}-byte AXI beat",
        in_w, t.max_image_width, t.beat_bytes());
  }
  return "";
}

// A depthwise op as a grouped CONV: each PE's weights on its own channel's lane.
void to_grouped_conv(ConvOp& op, const Tensor<int8_t>& layer_weights, int64_t n,
                     const std::string& why) {
  const int k = op.kernel;
  op.depthwise_mode = false;
  op.weights = Tensor<int8_t>({op.out_c, n, k, k});
  for (int64_t co = 0; co < op.out_c; ++co) {
    for (int y = 0; y < k; ++y) {
      for (int x = 0; x < k; ++x) op.weights(co, co % n, y, x) = layer_weights(co, 0, y, x);
    }
  }
  op.notes.push_back(fmt::format(
      "depthwise as a grouped CONV ({}): one input group per pass, each PE's weights on its own "
      "channel's lane (1 of {} lanes useful)",
      why, n));
}

// A grouped convolution's weights [Cout][Cin / G][K][K] over every input
// channel: [Cout][Cin][K][K], zero outside each filter's group.
Tensor<int8_t> dense_group_weights(const Layer& l) {
  const Tensor<int8_t>& w = l.weights;
  const int64_t cout = w.dim(0), cin_g = w.dim(1), k = w.dim(2);
  const int64_t cout_g = cout / l.groups;
  Tensor<int8_t> out({cout, cin_g * l.groups, k, k});
  for (int64_t co = 0; co < cout; ++co) {
    const int64_t first = co / cout_g * cin_g;
    for (int64_t ci = 0; ci < cin_g; ++ci) {
      for (int64_t y = 0; y < k; ++y) {
        for (int64_t x = 0; x < k; ++x) out(co, first + ci, y, x) = w(co, ci, y, x);
      }
    }
  }
  return out;
}

// A 1x1 POOL over a whole map: an elementwise clamp, or a copy.
PoolOp elementwise(const Shape& map) {
  PoolOp op;
  op.in_c = op.out_c = map[0];
  op.in_h = op.out_h = map[1];
  op.in_w = op.out_w = map[2];
  op.pool.window = PoolWindow{1, 1, Pads{}, false};
  op.clamp_only = true;
  return op;
}

// A map as a concat, slice or upsample layer makes it: channel ranges of stored
// maps, in order, each nearest-upsampled by a factor. Nothing is computed for
// it; the ops that read it load its parts (docs/compiler.md, "Concat, slice and
// upsample").
struct ViewPart {
  int src = kInputSrc;  // the op whose result it is (kInputSrc: the network input)
  int64_t src_c = 0;    // that map's channels
  int64_t begin = 0;    // its first channel in that map
  int64_t channels = 0;
  int factor = 1;
};
using View = std::vector<ViewPart>;

// The input parts an op loads for `view` on a target of N lanes.
std::vector<InputPart> input_parts(const View& view, int64_t n) {
  std::vector<InputPart> parts;
  for (const ViewPart& v : view) {
    InputPart p;
    p.src_groups = ceil_div(v.src_c, n);
    p.first_group = v.begin / n;
    p.lane = v.begin % n;
    p.groups = ceil_div(p.lane + v.channels, n);
    p.channels = v.channels;
    p.factor = v.factor;
    parts.push_back(p);
  }
  return parts;
}

// Where logical channel c of the parts sits in the op's input: group * N + lane.
int64_t part_channel(const std::vector<InputPart>& parts, int64_t c, int64_t n) {
  int64_t group = 0;
  for (const InputPart& p : parts) {
    if (c < p.channels) return group * n + p.lane + c;
    c -= p.channels;
    group += p.groups;
  }
  throw Error("internal: a channel beyond the parts of an input");
}

int64_t part_groups(const std::vector<InputPart>& parts) {
  int64_t g = 0;
  for (const InputPart& p : parts) g += p.groups;
  return g;
}

// The parts hold the map as one stored map would: channel c in group c / N,
// lane c mod N. Ops that work lane by lane (pools, clamps) can read them so.
bool dense_parts(const std::vector<InputPart>& parts, int64_t n) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].lane != 0) return false;
    if (i + 1 < parts.size() && parts[i].channels % n != 0) return false;
  }
  return true;
}

// A convolution's weights [Cout][C][K][K] over the parts' layout: input
// channel c at part_channel(c), zero for the lanes no channel takes.
Tensor<int8_t> weights_over_parts(const Tensor<int8_t>& w, const std::vector<InputPart>& parts,
                                  int64_t n) {
  const int64_t cout = w.dim(0), c = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  Tensor<int8_t> out({cout, part_groups(parts) * n, kh, kw});
  for (int64_t ci = 0; ci < c; ++ci) {
    const int64_t at = part_channel(parts, ci, n);
    for (int64_t co = 0; co < cout; ++co) {
      for (int64_t y = 0; y < kh; ++y) {
        for (int64_t x = 0; x < kw; ++x) out(co, at, y, x) = w(co, ci, y, x);
      }
    }
  }
  return out;
}

std::string describe_parts(const std::vector<InputPart>& parts) {
  std::vector<std::string> s;
  for (const InputPart& p : parts) {
    s.push_back(fmt::format("{} channel{} from group {}{}{}", p.channels,
                            p.channels == 1 ? "" : "s", p.first_group,
                            p.lane != 0 ? fmt::format(" lane {}", p.lane) : "",
                            p.factor > 1 ? fmt::format(" upsampled x{}", p.factor) : ""));
  }
  return fmt::format("{}", fmt::join(s, "; "));
}

}  // namespace

std::optional<MeanParams> exact_mean_params(int64_t n) {
  if (n < 1) return std::nullopt;
  // acc = weight * sum + bias over sum in [-128 n, 127 n]; M / 2^S ~ 1 / (weight n),
  // the largest S whose M fits. Kept only when every sum gives avg_round(sum, n).
  // The bias centres the rounding steps: 0 for odd n, half a weight for even n.
  // The sums are checked from both ends inwards, where a wrong M shows first.
  const auto exact = [n](int weight, int32_t bias, uint16_t mult, int s) {
    for (int64_t d = 0; d <= 255 * n / 2 + 1; ++d) {
      for (const int64_t sum : {-128 * n + d, 127 * n - d}) {
        if (sum < -128 * n || sum > 127 * n) continue;
        const auto acc = static_cast<int32_t>(weight * sum + bias);
        if (requantize(acc, mult, s, kInt8Min, kInt8Max) != avg_round(sum, n)) return false;
      }
    }
    return true;
  };
  for (int weight = 1; weight <= kInt8Max; ++weight) {
    if (int64_t{weight} * 128 * n + weight > (int64_t{1} << 31) - 1) break;
    std::vector<int32_t> biases{0, weight / 2, (weight + 1) / 2};
    biases.erase(std::unique(biases.begin(), biases.end()), biases.end());
    for (const int32_t bias : biases) {
      for (int s = kMaxShift; s >= 0; --s) {
        const int64_t mult = std::llround(std::ldexp(1.0, s) / static_cast<double>(weight * n));
        if (mult > 65535) continue;
        if (mult >= 1 && exact(weight, bias, static_cast<uint16_t>(mult), s)) {
          return MeanParams{weight, bias, static_cast<uint16_t>(mult), static_cast<uint8_t>(s)};
        }
        break;  // only the most precise M for this weight and bias
      }
    }
  }
  return std::nullopt;
}

std::vector<Op> lower(const Network& net, const HwTarget& t) {
  const size_t count = net.layers.size();
  // How many later layers read each layer's output; which op's result it is
  // (kInputSrc: the network input, a flatten of it included); whether it is a
  // map larger than 1x1 flattened into a vector (a clamp of such a vector is
  // one too: the op keeps the map as stored).
  std::vector<int> readers(count, 0);
  for (const Layer& l : net.layers) {
    for (int i : l.inputs) {
      if (i != kNetworkInput) ++readers[static_cast<size_t>(i)];
    }
  }
  // A network output other than the last layer counts as one more reader: no
  // later layer fuses into its op, whose result is then exactly its map.
  const std::vector<int> out_layers = count > 0 ? net.output_layers() : std::vector<int>{};
  const auto extra_output = [&](size_t li) {
    return li + 1 != count && std::find(out_layers.begin(), out_layers.end(),
                                        static_cast<int>(li)) != out_layers.end();
  };
  // Such an output's map, also as a flatten sees it (a flatten is free: the
  // layer after it would otherwise fuse into the output's op).
  std::vector<bool> pinned(count, false);
  for (size_t li = 0; li < count; ++li) {
    if (extra_output(li)) {
      ++readers[li];
      pinned[li] = true;
    }
  }
  std::vector<int> op_of(count, kInputSrc);
  std::vector<bool> flat_of(count, false);
  // Concat, slice and upsample layers: the parts of their maps (empty for the others).
  std::vector<View> view_of(count);
  std::vector<Op> ops;
  const int64_t n = t.lanes;
  const auto view_layer = [&](int layer) {
    return layer != kNetworkInput && !view_of[static_cast<size_t>(layer)].empty();
  };
  // The map of layer `layer` as one stored map: the op that computes it, made
  // here for a view (a copy through the pooling unit when its parts hold it as a
  // stored map would, else a 1x1 identity convolution that gathers the channels).
  const auto materialise = [&](int layer) {
    const auto li = static_cast<size_t>(layer);
    const Layer& v = net.layers[li];
    const std::vector<InputPart> parts = input_parts(view_of[li], n);
    std::vector<int> srcs;
    for (const ViewPart& p : view_of[li]) srcs.push_back(p.src);
    const int64_t c = v.out_shape[0];
    if (dense_parts(parts, n)) {
      PoolOp op = elementwise(v.out_shape);
      op.main = &v;
      op.layers.push_back(li);
      op.srcs = std::move(srcs);
      op.parts = parts;
      op.notes.push_back(fmt::format("{} '{}' copied into one map through the pooling unit ({})",
                                     layer_type_name(v.type), v.name, describe_parts(parts)));
      ops.push_back(std::move(op));
    } else {
      ConvOp op;
      op.main = &v;
      op.layers.push_back(li);
      op.srcs = std::move(srcs);
      op.parts = parts;
      op.in_c = part_groups(parts) * n;
      op.in_h = op.out_h = op.conv_h = v.out_shape[1];
      op.in_w = op.out_w = op.conv_w = v.out_shape[2];
      op.out_c = c;
      Tensor<int8_t> identity({c, c, 1, 1});
      for (int64_t ch = 0; ch < c; ++ch) identity(ch, ch, 0, 0) = 1;
      op.weights = weights_over_parts(identity, parts, n);
      op.params.bias.assign(static_cast<size_t>(c), 0);
      op.params.mult.assign(static_cast<size_t>(c), 1);
      op.params.shift.assign(static_cast<size_t>(c), 0);
      op.notes.push_back(fmt::format(
          "{} '{}' gathered into one map by a 1x1 identity convolution (M = 1, S = 0: exact; its "
          "parts do not start on a group: {})",
          layer_type_name(v.type), v.name, describe_parts(parts)));
      ops.push_back(std::move(op));
    }
    view_of[li].clear();
    op_of[li] = static_cast<int>(ops.size()) - 1;
  };
  for (size_t li = 0; li < count; ++li) {
    const Layer& l = net.layers[li];
    const auto fail = [&](const std::string& msg) {
      throw Error(msg, ErrorContext{net.source_file, l.line, l.name});
    };
    const auto src_of = [&](int layer) {
      return layer == kNetworkInput ? kInputSrc : op_of[static_cast<size_t>(layer)];
    };
    if (l.has_table() && t.act_tables == 0) {
      fail(violation_message(target_rule("compute.act_table"),
                             fmt::format("a table activation needs the activation-table unit: "
                                         "target '{}' has act_tables = 0",
                                         t.name)));
    }
    if (l.has_table() && 256 % t.lanes != 0) {
      fail(fmt::format("a table activation needs N dividing 256 (whole table words), N = {}",
                       t.lanes));
    }
    const auto shape_of = [&](int layer) -> const Shape& {
      return layer == kNetworkInput ? net.input_shape
                                    : net.layers[static_cast<size_t>(layer)].out_shape;
    };
    // A convolution layer's op: geometry, parameters, MACs (not the weights).
    const auto conv_op_of = [&](const Layer& c) {
      if (c.conv.kernel > t.max_kernel) {
        fail(violation_message(target_rule("conv.kernel"),
                               fmt::format("kernel {} exceeds the target's max_kernel {}",
                                           c.conv.kernel, t.max_kernel)));
      }
      ConvOp op;
      op.kernel = c.conv.kernel;
      op.stride = c.conv.stride;
      op.pad = c.pads;
      op.params = channel_params_of(c);
      op.conv_h = c.out_shape[1];
      op.conv_w = c.out_shape[2];
      op.macs = c.macs();
      return op;
    };
    if (l.type == LayerType::kConcat || l.type == LayerType::kSlice ||
        l.type == LayerType::kUpsample) {
      // A view: no op of its own. Its readers load its parts.
      View view;
      for (int i : l.inputs) {
        const int s = src_of(i);
        if ((i != kNetworkInput && flat_of[static_cast<size_t>(i)]) ||
            (s >= 0 && is<FcOp>(ops[static_cast<size_t>(s)]))) {
          fail(fmt::format("a {} after a fully-connected layer or a flatten is not supported",
                           layer_type_name(l.type)));
        }
        if (view_layer(i)) {
          const View& v = view_of[static_cast<size_t>(i)];
          view.insert(view.end(), v.begin(), v.end());
        } else {
          const int64_t c = shape_of(i)[0];
          view.push_back(ViewPart{s, c, 0, c, 1});
        }
      }
      if (l.type == LayerType::kUpsample) {
        if (t.beat_bytes() > n || n % t.beat_bytes() != 0) {
          fail(
              fmt::format("upsampling loads single {}-byte words, which the {}-byte AXI beat "
                          "cannot address",
                          n, t.beat_bytes()));
        }
        for (ViewPart& p : view) p.factor *= l.scale;
      } else if (l.type == LayerType::kSlice) {
        View kept;
        int64_t at = 0;  // channel of the view where the part starts
        for (const ViewPart& p : view) {
          const int64_t b = std::max<int64_t>(at, l.slice_begin);
          const int64_t e = std::min<int64_t>(at + p.channels, l.slice_end);
          if (b < e) kept.push_back(ViewPart{p.src, p.src_c, p.begin + b - at, e - b, p.factor});
          at += p.channels;
        }
        view = std::move(kept);
      }
      view_of[li] = std::move(view);
      op_of[li] = kInputSrc;  // not read through op_of: view_layer() is true
      // A network output is one map, stored (its readers then load that map).
      if (extra_output(li)) materialise(static_cast<int>(li));
      continue;
    }
    // A view read by a layer that cannot load its parts becomes a map first. A
    // convolution loads any parts (its weights follow their channels); a pool or
    // a clamp (lane by lane) parts that hold the map as stored; nothing else.
    for (int i : l.inputs) {
      if (!view_layer(i)) continue;
      const std::vector<InputPart> parts = input_parts(view_of[static_cast<size_t>(i)], n);
      const bool lanewise = (l.type == LayerType::kClamp ||
                             ((l.type == LayerType::kMaxPool || l.type == LayerType::kAvgPool) &&
                              l.pool.kernel <= t.max_pool_kernel)) &&
                            dense_parts(parts, n);
      const bool direct = l.inputs.size() == 1 && (l.type == LayerType::kConv || lanewise);
      if (!direct) materialise(i);
    }
    const int in0 = l.inputs.front();
    if (view_layer(in0)) {
      const View& view = view_of[static_cast<size_t>(in0)];
      const Layer& v = net.layers[static_cast<size_t>(in0)];
      const Shape& cur = v.out_shape;
      std::vector<int> srcs;
      for (const ViewPart& p : view) srcs.push_back(p.src);
      const std::vector<InputPart> parts = input_parts(view, n);
      const std::string note = fmt::format("reads {} '{}' from its parts, no pass of its own: {}",
                                           layer_type_name(v.type), v.name, describe_parts(parts));
      if (l.type == LayerType::kConv) {
        ConvOp op = conv_op_of(l);
        op.weights =
            weights_over_parts(l.groups > 1 ? dense_group_weights(l) : l.weights, parts, n);
        op.in_c = part_groups(parts) * n;
        op.notes.push_back(note);
        ops.push_back(std::move(op));
      } else if (l.type == LayerType::kClamp) {
        PoolOp op = elementwise(cur);
        op.pool.post_lo = l.lo;
        op.pool.post_hi = l.hi;
        op.notes.push_back(note);
        ops.push_back(std::move(op));
      } else {
        PoolOp op;
        op.pool = Pooling{PoolWindow{l.pool.kernel, l.pool.stride, l.pads, l.pool.ceil_mode},
                          l.type == LayerType::kAvgPool};
        op.in_c = cur[0];
        op.notes.push_back(note);
        ops.push_back(std::move(op));
      }
      OpBase& b = base(ops.back());
      b.main = &l;
      b.layers.push_back(li);
      b.srcs = std::move(srcs);
      b.parts = parts;
      if (b.in_c == 0) b.in_c = cur[0];
      b.in_h = cur[1];
      b.in_w = cur[2];
      b.out_c = l.out_shape[0];
      b.out_h = l.out_shape[1];
      b.out_w = l.out_shape[2];
      op_of[li] = static_cast<int>(ops.size()) - 1;
      continue;
    }
    const int src = src_of(in0);
    const Shape cur =
        in0 == kNetworkInput ? net.input_shape : net.layers[static_cast<size_t>(in0)].out_shape;
    // Whether any input (an add reads two) is a flattened map, or an FC layer's result.
    bool flat = false, after_fc = false;
    for (int i : l.inputs) {
      const int s = src_of(i);
      flat = flat || (i != kNetworkInput && flat_of[static_cast<size_t>(i)]);
      after_fc = after_fc || (s >= 0 && is<FcOp>(ops[static_cast<size_t>(s)]));
    }
    // The op this layer may fuse into: the last one, when it ends with the layer
    // this one reads and nothing else reads that layer.
    Op* last = nullptr;
    if (l.inputs.size() == 1 && in0 != kNetworkInput && readers[static_cast<size_t>(in0)] == 1 &&
        !pinned[static_cast<size_t>(in0)] && !ops.empty() &&
        src == static_cast<int>(ops.size()) - 1) {
      last = &ops.back();
    }
    // A new op of type T started by this layer, reading `srcs`.
    const auto start = [&]<class T>(T op, std::vector<int> srcs) -> T& {
      op.main = &l;
      op.layers.push_back(li);
      op.srcs = std::move(srcs);
      op.in_c = cur[0];
      op.in_h = cur[1];
      op.in_w = cur[2];
      op.out_c = l.out_shape[0];
      op.out_h = l.out_shape[1];
      op.out_w = l.out_shape[2];
      ops.push_back(std::move(op));
      return std::get<T>(ops.back());
    };
    const auto map_layer_checks = [&](const char* what) {
      if (after_fc) {
        fail(
            fmt::format("{} after a fully-connected layer is not supported (FC results are "
                        "batch-transposed: lane = image)",
                        what));
      }
      if (flat)
        fail(fmt::format("{} after flatten of a map larger than 1x1 is not supported", what));
    };
    const PoolWindow window{l.pool.kernel, l.pool.stride, l.pads, l.pool.ceil_mode};
    switch (l.type) {
      case LayerType::kConv:
      case LayerType::kDepthwise: {
        // A convolution with one group per channel is a depthwise one.
        const bool depthwise = l.type == LayerType::kDepthwise ||
                               (l.groups > 1 && l.groups == cur[0] && l.out_channels == cur[0]);
        map_layer_checks(depthwise ? "a depthwise convolution" : "a convolution");
        ConvOp& op = start(conv_op_of(l), {src});
        if (!depthwise && l.groups == 1) {
          op.weights = l.weights;
          break;
        }
        if (!depthwise) {
          // Channel groups: a pass of P filters inside one group reads only that
          // group's input groups when the groups line up with the lanes and the
          // PEs; otherwise the filters run over every input channel, with zero
          // weights outside their group.
          const int64_t cin_g = cur[0] / l.groups, cout_g = l.out_channels / l.groups;
          if (cin_g % n == 0 && cout_g % t.pes == 0) {
            op.kind = ConvKind::kGrouped;
            op.pass_groups = cin_g / n;
            op.passes_per_group = cout_g / t.pes;
            op.weights = l.weights;
            op.notes.push_back(fmt::format(
                "{} channel groups of {} inputs and {} filters: each pass reads its group's {} "
                "input group{}",
                l.groups, cin_g, cout_g, op.pass_groups, op.pass_groups == 1 ? "" : "s"));
          } else {
            op.weights = dense_group_weights(l);
            op.notes.push_back(fmt::format(
                "{} channel groups of {} inputs and {} filters, not whole lane groups ({} lanes) "
                "and passes ({} PEs): run over every input channel, zero weights outside each "
                "filter's group",
                l.groups, cin_g, cout_g, n, t.pes));
          }
          break;
        }
        op.kind = ConvKind::kDepthwise;
        op.pass_groups = 1;
        const std::string why = depthwise_mode_refusal(l, cur[2], t);
        if (!why.empty()) {
          to_grouped_conv(op, l.weights, n, why);
          break;
        }
        op.depthwise_mode = true;
        op.weights = l.weights;
        const int64_t words = t.depthwise_weight_words();
        op.notes.push_back(fmt::format(
            "depthwise in COMPUTE mode DEPTHWISE: PE p = channel p of a group, the {}x{} "
            "window's taps in {} word{} per PE ({} beat{} per window)",
            l.conv.kernel, l.conv.kernel, words, words == 1 ? "" : "s", words,
            words == 1 ? "" : "s"));
        break;
      }
      case LayerType::kAdd: {
        map_layer_checks("an add");
        ConvOp& op = start(ConvOp{}, {src, src_of(l.inputs[1])});
        op.kind = ConvKind::kAdd;
        op.pass_groups = 2;
        op.conv_h = op.out_h;
        op.conv_w = op.out_w;
        op.weights = Tensor<int8_t>({op.out_c, 2 * n, 1, 1});
        op.params.lo = l.requant.lo;
        op.params.hi = l.requant.hi;
        op.params.table = l.requant.table;
        // a * Ma + b * Mb = (a * wa + b * wb) * M with M = gcd(Ma, Mb): the
        // requantisation of the two-tap sum is then the add's own.
        for (int64_t c = 0; c < op.out_c; ++c) {
          const int64_t ma = l.requant.multiplier[static_cast<size_t>(c)];
          const int64_t mb = l.multiplier_b[static_cast<size_t>(c)];
          const int64_t g = std::max<int64_t>(1, std::gcd(ma, mb));
          if (ma / g > kInt8Max || mb / g > kInt8Max) {
            fail(fmt::format(
                "channel {}: multipliers Ma = {}, Mb = {} are not wa * M, wb * M with int8 "
                "weights wa, wb <= 127 (Ma / Mb = {} / {} in lowest terms): the accelerator "
                "runs an add as a two-tap weighted sum on the PE array (docs/compiler.md, "
                "Graphs); strata import and strata gen quantise adds in that form",
                c, ma, mb, ma / g, mb / g));
          }
          op.weights(c, c % n, 0, 0) = static_cast<int8_t>(ma / g);
          op.weights(c, n + c % n, 0, 0) = static_cast<int8_t>(mb / g);
          op.params.bias.push_back(0);
          op.params.mult.push_back(static_cast<uint16_t>(g));
          op.params.shift.push_back(l.requant.shift[static_cast<size_t>(c)]);
        }
        op.notes.push_back(fmt::format(
            "add: both operands' group g in one pass, weights wa, wb on the channel's lane, "
            "M = gcd(Ma, Mb): exact"));
        break;
      }
      case LayerType::kGlobalAvgPool: {
        map_layer_checks("a global average pool");
        const int64_t h = cur[1], w = cur[2];
        const std::optional<MeanParams> mp = exact_mean_params(h * w);
        if (!mp) {
          fail(
              fmt::format("no weight, bias, M and S give the exact mean of {} int8 values as "
                          "a weighted sum and one requantisation",
                          h * w));
        }
        // One window over the whole map (plan.cpp: kh = H, kw = W); each pass runs it as
        // a 1 x 1 image of H * W groups, the map's words in order (emit_tiles.cpp).
        ConvOp& op = start(ConvOp{}, {src});
        op.kind = ConvKind::kGlobalAvgPool;
        op.kernel = static_cast<int>(std::max(h, w));
        op.pass_groups = 1;
        op.conv_h = op.conv_w = 1;
        op.weights = Tensor<int8_t>({op.out_c, n, 1, 1});
        for (int64_t co = 0; co < op.out_c; ++co) {
          op.weights(co, co % n, 0, 0) = static_cast<int8_t>(mp->weight);
        }
        op.params.bias.assign(static_cast<size_t>(op.out_c), mp->bias);
        op.params.mult.assign(static_cast<size_t>(op.out_c), mp->mult);
        op.params.shift.assign(static_cast<size_t>(op.out_c), mp->shift);
        op.notes.push_back(fmt::format(
            "global average pool over {}x{}: each channel's {} words summed with weight {}, "
            "bias {}, M = {}, S = {}: equal to the average rule for every sum (checked)",
            h, w, h * w, mp->weight, mp->bias, mp->mult, mp->shift));
        break;
      }
      case LayerType::kFc: {
        if (src != static_cast<int>(ops.size()) - 1 ||
            (in0 != kNetworkInput && readers[static_cast<size_t>(in0)] != 1)) {
          fail(
              "a fully-connected layer must read the op right before it, as its only reader "
              "(its input goes through the PE caches)");
        }
        int fc_src = src;
        const ConvOp* m = ops.empty() ? nullptr : std::get_if<ConvOp>(&ops.back());
        if (m != nullptr && m->kind == ConvKind::kMul) {
          // A mul writes a bank (DEPTHWISE), the FC reads the PE caches: a 1x1 POOL copy
          // of the mul's map between them.
          const Shape map{m->out_c, m->out_h, m->out_w};
          PoolOp copy = elementwise(map);
          copy.main = &l;
          copy.srcs = {src};
          copy.notes.push_back(
              fmt::format("copy of mul '{}' into the PE caches for '{}' (a mul "
                          "writes a bank)",
                          m->main->name, l.name));
          ops.push_back(std::move(copy));
          fc_src = static_cast<int>(ops.size()) - 1;
        }
        FcOp& op = start(FcOp{}, {fc_src});
        op.features = shape_elements(cur);
        op.weights = l.weights.reshaped({l.out_channels, op.features});
        op.params = channel_params_of(l);
        op.macs = l.macs();
        break;
      }
      case LayerType::kMaxPool:
      case LayerType::kAvgPool: {
        const bool avg = l.type == LayerType::kAvgPool;
        map_layer_checks("pooling");
        // A row wider than the line buffer runs in column strips (plan.cpp).
        const bool fits = l.pool.kernel <= t.max_pool_kernel;
        ConvOp* conv = last != nullptr ? std::get_if<ConvOp>(last) : nullptr;
        PoolOp* clamp = last != nullptr ? std::get_if<PoolOp>(last) : nullptr;
        if (clamp != nullptr && !clamp->clamp_only) clamp = nullptr;
        // DEPTHWISE mode uses the window generator for its own taps: a pool after it is
        // an op of its own.
        if (fits && conv != nullptr && !conv->pool && conv->kind != ConvKind::kIdentityPool &&
            !conv->depthwise_mode) {
          conv->pool = Pooling{window, avg};
          conv->out_h = l.out_shape[1];
          conv->out_w = l.out_shape[2];
          conv->layers.push_back(li);
        } else if (fits && !avg && clamp != nullptr) {
          // clamp then max = max then clamp: the clamp stays after the pool.
          clamp->clamp_only = false;
          clamp->pool.window = window;
          clamp->out_h = l.out_shape[1];
          clamp->out_w = l.out_shape[2];
          clamp->layers.push_back(li);
          clamp->notes.push_back(
              "the clamp before the max pool moves after it (max commutes "
              "with a monotone clamp)");
        } else if (fits) {
          PoolOp& op = start(PoolOp{}, {src});
          op.pool = Pooling{window, avg};
        } else if (!avg && t.max_pool_kernel >= 2) {
          // Larger than the pooling unit: a cascade of smaller max windows
          // (max_pool_cascade), the first fused as a pool that fits would be.
          const std::vector<PoolWindow> stages = max_pool_cascade(
              window, cur[1], cur[2], l.out_shape[1], l.out_shape[2], t.max_pool_kernel);
          int64_t h = cur[1], w = cur[2];
          std::vector<std::string> shown;
          for (size_t i = 0; i < stages.size(); ++i) {
            const PoolWindow& st = stages[i];
            const int64_t oh = pool_out_size(static_cast<int>(h), st.kernel, st.stride, st.pad.top,
                                             st.pad.bottom, false);
            const int64_t ow = pool_out_size(static_cast<int>(w), st.kernel, st.stride, st.pad.left,
                                             st.pad.right, false);
            OpBase* part = nullptr;
            if (i == 0 && conv != nullptr && !conv->pool && conv->kind != ConvKind::kIdentityPool &&
                !conv->depthwise_mode) {
              conv->pool = Pooling{st, false};
              conv->out_h = oh;
              conv->out_w = ow;
              conv->layers.push_back(li);
              part = conv;
            } else if (i == 0 && clamp != nullptr) {
              clamp->clamp_only = false;
              clamp->pool.window = st;
              clamp->out_h = oh;
              clamp->out_w = ow;
              clamp->layers.push_back(li);
              clamp->notes.push_back(
                  "the clamp before the max pool moves after it (max commutes with a monotone "
                  "clamp)");
              part = clamp;
            } else {
              PoolOp& op = start(PoolOp{}, {i == 0 ? src : static_cast<int>(ops.size()) - 1});
              op.pool = Pooling{st, false};
              op.in_h = h;
              op.in_w = w;
              op.out_h = oh;
              op.out_w = ow;
              part = &op;
            }
            part->part_layer = li;
            part->part = fmt::format("{}/{}", i + 1, stages.size());
            shown.push_back(fmt::format("{}x{} stride {} pad [{}, {}, {}, {}]", st.kernel,
                                        st.kernel, st.stride, st.pad.top, st.pad.left,
                                        st.pad.bottom, st.pad.right));
            h = oh;
            w = ow;
          }
          if (h != l.out_shape[1] || w != l.out_shape[2]) {
            throw Error(
                fmt::format("internal: the max-pool cascade of '{}' computes {}x{}, the "
                            "layer {}x{}",
                            l.name, h, w, l.out_shape[1], l.out_shape[2]));
          }
          base(ops.back())
              .notes.push_back(fmt::format(
                  "max pool {}x{} stride {} pad [{}, {}, {}, {}]{} (larger than "
                  "max_pool_kernel {}) as a cascade of {} max pools, {}: stride-1 windows "
                  "whose extents add up to {}, "
                  "the last with the stride, the padding after the input chosen for the output "
                  "size; padded taps are ignored at every stage: exact",
                  l.pool.kernel, l.pool.kernel, l.pool.stride, l.pads.top, l.pads.left,
                  l.pads.bottom, l.pads.right, l.pool.ceil_mode ? " ceil mode" : "",
                  t.max_pool_kernel, stages.size(), fmt::join(shown, ", "), l.pool.kernel));
        } else if (avg && identity_pool_possible(window, cur[1], cur[2], t)) {
          const int k = l.pool.kernel;
          ConvOp& op = start(ConvOp{}, {src});
          op.kind = ConvKind::kIdentityPool;
          op.kernel = k;
          op.stride = l.pool.stride;
          op.pad = Pads{};
          const int64_t c = cur[0];
          op.weights = Tensor<int8_t>({c, c, k, k});
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int y = 0; y < k; ++y) {
              for (int x = 0; x < k; ++x) op.weights(ch, ch, y, x) = 1;
            }
          }
          const int shift = std::countr_zero(static_cast<unsigned>(k * k));
          op.params.bias.assign(static_cast<size_t>(c), 0);
          op.params.mult.assign(static_cast<size_t>(c), 1);
          op.params.shift.assign(static_cast<size_t>(c), static_cast<uint8_t>(shift));
          op.conv_h = l.out_shape[1];
          op.conv_w = l.out_shape[2];
          op.notes.push_back(fmt::format(
              "average pool {}x{} (larger than max_pool_kernel {}) computed as a convolution "
              "with identity weights, M = 1, S = {}: exact, every window holds {} elements",
              k, k, t.max_pool_kernel, shift, k * k));
        } else {
          fail(violation_message(
              target_rule("pool.kernel"),
              fmt::format("pooling window {} exceeds the target's max_pool_kernel {}{}",
                          l.pool.kernel, t.max_pool_kernel,
                          avg ? " (and it is not an average over equal power-of-two windows "
                                "that could run as a convolution)"
                              : "")));
        }
        break;
      }
      case LayerType::kClamp: {
        if (last == nullptr) {
          // A clamp that cannot merge into the op before it is elementwise over its
          // input map; on the network input, the map as stored, even when flattens
          // came before it (they only rename the shape; the output placement and a
          // following FC's feature order then see the map).
          if (after_fc)
            fail("a clamp after a fully-connected layer read elsewhere is not supported");
          // A flattened map read from an op (an output's, which nothing fuses into):
          // that op's map as it stored it.
          Shape map = src == kInputSrc ? net.input_shape : cur;
          if (src != kInputSrc && flat) {
            const OpBase& b = base(ops[static_cast<size_t>(src)]);
            map = {b.out_c, b.out_h, b.out_w};
          }
          PoolOp op = elementwise(map);
          op.main = &l;
          op.layers.push_back(li);
          op.srcs = {src};
          op.pool.post_lo = l.lo;
          op.pool.post_hi = l.hi;
          ops.push_back(std::move(op));
          break;
        }
        // After a pool (a POOL op's or a fused average pool) the clamp composes into the
        // post clamp; otherwise into the requantisation clamp, also when a fused max pool
        // follows it (clamp then max = max then clamp).
        std::visit(
            [&]<class T>(T& op) {
              if constexpr (std::is_same_v<T, PoolOp>) {
                compose(op.pool.post_lo, op.pool.post_hi, l.lo, l.hi);
              } else if constexpr (std::is_same_v<T, ConvOp>) {
                if (op.pool && op.pool->avg) {
                  compose(op.pool->post_lo, op.pool->post_hi, l.lo, l.hi);
                } else {
                  compose_params(op.params, l.lo, l.hi);
                  if (op.pool) {
                    op.notes.push_back(
                        fmt::format("clamp '{}' moves before the max pool and "
                                    "merges with the requantisation clamp",
                                    l.name));
                  }
                }
              } else {
                compose_params(op.params, l.lo, l.hi);
              }
              op.layers.push_back(li);
            },
            *last);
        break;
      }
      case LayerType::kFlatten:
        flat_of[li] = flat || cur[1] * cur[2] > 1;
        op_of[li] = src;
        if (in0 != kNetworkInput && pinned[static_cast<size_t>(in0)]) pinned[li] = true;
        if (last != nullptr) base(*last).layers.push_back(li);
        continue;
      case LayerType::kMul: {
        // x * s[c] is a 1x1 depthwise convolution of x whose weights are s, bias 0,
        // then the layer's M, S: DEPTHWISE with the vector turned into its weights
        // on chip before its passes (emit_mul_vector).
        map_layer_checks("a mul");
        const int vsrc = src_of(l.inputs[1]);
        if (vsrc == kInputSrc) {
          fail(
              "a mul whose vector is the network input is not supported (the vector must be "
              "a layer's result, which the compiler stores and loads back)");
        }
        const std::string why = depthwise_mode_refusal(l, cur[2], t);
        if (!why.empty()) {
          fail(
              fmt::format("a mul runs in COMPUTE mode DEPTHWISE, which cannot take this map: "
                          "{}",
                          why));
        }
        ConvOp& op = start(ConvOp{}, {src});
        op.kind = ConvKind::kMul;
        op.kernel = 1;
        op.pass_groups = 1;
        op.depthwise_mode = true;
        op.vector_src = vsrc;
        op.conv_h = op.out_h;
        op.conv_w = op.out_w;
        op.weights = Tensor<int8_t>({t.pes, n, 1, 1});
        for (int64_t w = 0; w < n; ++w) op.weights(0, w, 0, 0) = 1;
        const int64_t channels = ceil_div(op.out_c, t.pes) * t.pes;
        op.params.bias.assign(static_cast<size_t>(channels + t.pes), 0);
        op.params.mult.assign(static_cast<size_t>(channels), 0);
        op.params.shift.assign(static_cast<size_t>(channels), 0);
        std::copy(l.requant.multiplier.begin(), l.requant.multiplier.end(), op.params.mult.begin());
        std::copy(l.requant.shift.begin(), l.requant.shift.end(), op.params.shift.begin());
        op.params.mult.resize(static_cast<size_t>(channels + t.pes), 1);
        op.params.shift.resize(static_cast<size_t>(channels + t.pes), 0);
        op.params.lo = l.requant.lo;
        op.params.hi = l.requant.hi;
        op.params.table = l.requant.table;
        op.notes.push_back(fmt::format(
            "mul by the vector of '{}': stored, loaded back into a bank and selected lane by "
            "lane into each PE's cache by {} 1x1 CONVs (PE 0's selector word q, into PE q), "
            "then a 1x1 DEPTHWISE per channel group with those words as weights, bias 0 and "
            "the layer's M, S: exact",
            net.layers[static_cast<size_t>(l.inputs[1])].name, t.pes));
        break;
      }
      case LayerType::kConcat:
      case LayerType::kSlice:
      case LayerType::kUpsample:
        throw Error("internal: a view layer reached the op switch");
    }
    op_of[li] = static_cast<int>(ops.size()) - 1;
    if (l.type == LayerType::kClamp) flat_of[li] = flat;
  }
  // The network's output is one map in the output region.
  if (count > 0 && view_layer(static_cast<int>(count) - 1))
    materialise(static_cast<int>(count) - 1);
  if (ops.empty()) {  // nothing to compute (only flatten): copy through the pooling unit
    PoolOp op = elementwise(net.input_shape);
    op.srcs = {kInputSrc};
    for (size_t li = 0; li < count; ++li) op.layers.push_back(li);
    ops.push_back(std::move(op));
  } else if (op_of[count - 1] != static_cast<int>(ops.size()) - 1) {
    throw Error("internal: the network's output is not the last op's result");
  }
  // Each network output is an op's result (docs/compiler.md, "Several outputs"):
  // the last layer's the last op's, any other a map the compiler stores.
  for (size_t j = 0; j < out_layers.size(); ++j) {
    const auto li = static_cast<size_t>(out_layers[j]);
    if (li + 1 == count) {
      base(ops.back()).outputs.push_back(j);
      continue;
    }
    const Layer& l = net.layers[li];
    const auto fail = [&](const std::string& msg) {
      throw Error(msg, ErrorContext{net.source_file, l.line, l.name});
    };
    const int k = op_of[li];
    if (k == kInputSrc) {
      fail(
          "a network output that is the network input unchanged (no op computes it) is not "
          "supported");
    }
    if (is<FcOp>(ops[static_cast<size_t>(k)])) {
      fail(
          "only the last layer may be a network output that a fully-connected layer computes "
          "(FC results are batch-transposed in the PE caches; other outputs are stored maps)");
    }
    base(ops[static_cast<size_t>(k)]).outputs.push_back(j);
    // An FC after it takes its input from the PE caches (through a flatten or a
    // clamp too), where the op wrote it instead of storing it.
    if (static_cast<size_t>(k) + 1 < ops.size() && is<FcOp>(ops[static_cast<size_t>(k) + 1])) {
      const Layer& fc = *base(ops[static_cast<size_t>(k) + 1]).main;
      throw Error(fmt::format("a fully-connected layer reads '{}', a network output: not "
                              "supported (its input goes through the PE caches, an output to "
                              "external memory)",
                              l.name),
                  ErrorContext{net.source_file, fc.line, fc.name});
    }
  }
  // DEPTHWISE writes a bank only: one right before an FC (which reads its input
  // from the PE caches) runs as a grouped CONV; a mul cannot.
  for (size_t k = 0; k + 1 < ops.size(); ++k) {
    auto* conv = std::get_if<ConvOp>(&ops[k]);
    if (conv != nullptr && conv->kind == ConvKind::kMul && is<FcOp>(ops[k + 1])) {
      throw Error(
          fmt::format("internal: mul '{}' right before a fully-connected layer", conv->main->name));
    }
    if (conv != nullptr && conv->depthwise_mode && is<FcOp>(ops[k + 1])) {
      conv->notes.clear();
      to_grouped_conv(*conv, Tensor<int8_t>(conv->weights), t.lanes,
                      "a fully-connected layer follows: its input goes to the PE caches, "
                      "DEPTHWISE writes a bank");
    }
  }
  // An FC reads its input from the PE caches, where the op before it wrote it:
  // no other op may read that result.
  for (size_t k = 0; k < ops.size(); ++k) {
    std::vector<int> reads = base(ops[k]).srcs;
    if (const auto* conv = std::get_if<ConvOp>(&ops[k]); conv && conv->kind == ConvKind::kMul) {
      reads.push_back(conv->vector_src);
    }
    for (int s : reads) {
      const bool fc_src = s >= 0 && static_cast<size_t>(s) + 1 < ops.size() &&
                          is<FcOp>(ops[static_cast<size_t>(s) + 1]) &&
                          static_cast<size_t>(s) + 1 != k;
      if (fc_src) {
        const Layer& l = *base(ops[k]).main;
        throw Error(
            "this layer reads the result that a fully-connected layer after it takes "
            "from the PE caches: not supported",
            ErrorContext{net.source_file, l.line, l.name});
      }
    }
  }
  return ops;
}

}  // namespace strata::compiler
