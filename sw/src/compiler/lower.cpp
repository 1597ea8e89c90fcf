// Pass 1, lower (passes.hpp): network layers to fused ops (docs/compiler.md,
// "Lowering rules").
#include <fmt/format.h>

#include <algorithm>
#include <bit>

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

ChannelParams channel_params_of(const Layer& l) {
  ChannelParams p;
  p.bias.assign(l.bias.values().begin(), l.bias.values().end());
  p.mult = l.requant.multiplier;
  p.shift = l.requant.shift;
  p.lo = l.requant.lo;
  p.hi = l.requant.hi;
  return p;
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

}  // namespace

std::vector<Op> lower(const Network& net, const HwTarget& t) {
  std::vector<Op> ops;
  Shape cur = net.input_shape;
  bool flat = false;  // a flatten turned a map larger than 1x1 into a vector
  for (size_t li = 0; li < net.layers.size(); ++li) {
    const Layer& l = net.layers[li];
    const auto fail = [&](const std::string& msg) {
      throw Error(msg, ErrorContext{net.source_file, l.line, l.name});
    };
    Op* last = ops.empty() ? nullptr : &ops.back();
    const bool after_fc = last != nullptr && is<FcOp>(*last);
    // A new op of type T started by this layer, on the current map.
    const auto start = [&]<class T>(T op) -> T& {
      op.main = &l;
      op.layers.push_back(li);
      op.in_c = cur[0];
      op.in_h = cur[1];
      op.in_w = cur[2];
      op.out_c = l.out_shape[0];
      op.out_h = l.out_shape[1];
      op.out_w = l.out_shape[2];
      ops.push_back(std::move(op));
      return std::get<T>(ops.back());
    };
    // What the golden model runs and the accelerator does not yet: a clear
    // refusal naming the layer.
    if (l.inputs != std::vector<int>{static_cast<int>(li) - 1}) {
      fail("a layer that reads another layer than the one before it (a shortcut) is not "
           "supported by the compiler yet; the golden model (strata run) runs it");
    }
    const PoolWindow window{l.pool.kernel, l.pool.stride, l.pads, l.pool.ceil_mode};
    switch (l.type) {
      case LayerType::kDepthwise:
      case LayerType::kAdd:
      case LayerType::kGlobalAvgPool:
        fail(fmt::format("layer type '{}' is not supported by the compiler yet; the golden model "
                         "(strata run) runs it",
                         layer_type_name(l.type)));
        break;
      case LayerType::kConv: {
        if (after_fc) {
          fail("a convolution after a fully-connected layer is not supported (FC results are "
               "batch-transposed: lane = image)");
        }
        if (flat) fail("a convolution after flatten of a map larger than 1x1 is not supported");
        if (l.conv.kernel > t.max_kernel) {
          fail(violation_message(target_rule("conv.kernel"),
                                 fmt::format("kernel {} exceeds the target's max_kernel {}",
                                             l.conv.kernel, t.max_kernel)));
        }
        ConvOp& op = start(ConvOp{});
        op.kernel = l.conv.kernel;
        op.stride = l.conv.stride;
        op.pad = l.pads;
        op.weights = l.weights;
        op.params = channel_params_of(l);
        op.conv_h = l.out_shape[1];
        op.conv_w = l.out_shape[2];
        op.macs = l.macs();
        break;
      }
      case LayerType::kFc: {
        FcOp& op = start(FcOp{});
        op.features = shape_elements(cur);
        op.weights = l.weights.reshaped({l.out_channels, op.features});
        op.params = channel_params_of(l);
        op.macs = l.macs();
        flat = false;
        break;
      }
      case LayerType::kMaxPool:
      case LayerType::kAvgPool: {
        const bool avg = l.type == LayerType::kAvgPool;
        if (after_fc) fail("pooling after a fully-connected layer is not supported");
        if (flat) fail("pooling after flatten of a map larger than 1x1 is not supported");
        // A row wider than the line buffer runs in column strips (plan.cpp).
        const bool fits = l.pool.kernel <= t.max_pool_kernel;
        ConvOp* conv = last != nullptr ? std::get_if<ConvOp>(last) : nullptr;
        PoolOp* clamp = last != nullptr ? std::get_if<PoolOp>(last) : nullptr;
        if (clamp != nullptr && !clamp->clamp_only) clamp = nullptr;
        if (fits && conv != nullptr && !conv->pool && !conv->identity) {
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
          clamp->notes.push_back("the clamp before the max pool moves after it (max commutes "
                                 "with a monotone clamp)");
        } else if (fits) {
          PoolOp& op = start(PoolOp{});
          op.pool = Pooling{window, avg};
        } else if (avg && identity_pool_possible(window, cur[1], cur[2], t)) {
          const int k = l.pool.kernel;
          ConvOp& op = start(ConvOp{});
          op.identity = true;
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
          // A clamp on the input is elementwise: it runs on the input map as stored, even
          // when flattens came before it (they only rename the shape; the output placement
          // and a following FC's feature order then see the map).
          const Shape& in = net.input_shape;
          PoolOp op = elementwise(in);
          op.main = &l;
          op.layers.push_back(li);
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
                  compose(op.params.lo, op.params.hi, l.lo, l.hi);
                  if (op.pool) {
                    op.notes.push_back(fmt::format("clamp '{}' moves before the max pool and "
                                                   "merges with the requantisation clamp",
                                                   l.name));
                  }
                }
              } else {
                compose(op.params.lo, op.params.hi, l.lo, l.hi);
              }
              op.layers.push_back(li);
            },
            *last);
        break;
      }
      case LayerType::kFlatten:
        if (cur[1] * cur[2] > 1) flat = true;
        if (last != nullptr) base(*last).layers.push_back(li);
        break;
    }
    cur = l.out_shape;
  }
  if (ops.empty()) {  // nothing to compute (only flatten): copy through the pooling unit
    PoolOp op = elementwise(net.input_shape);
    for (size_t li = 0; li < net.layers.size(); ++li) op.layers.push_back(li);
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace strata::compiler
