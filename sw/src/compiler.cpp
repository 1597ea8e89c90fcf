// The compiler (compiler.hpp, docs/compiler.md). Five passes:
//   1. lower()        network layers -> fused ops (conv/fc + pool + clamps, POOL ops)
//   2. plan()         on-chip allocation (PE caches, parameter RAM) and the external
//                     parameter and weight images in hardware order
//   3. emit()         jobs (loads, one compute, stores) per image, pass and tile, put
//                     in program order with one job of load prefetch
//   4. dependencies() acq/rel counts of both modes from what each instruction touches
//   5. dispatch_order() each COMPUTE moved ahead of the LOADs its first step does not need
//   6. assemble       relocation, encoding, the memory image and the I/O description
#include "strata/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <variant>

#include "strata/error.hpp"
#include "strata/file_io.hpp"
#include "strata/numerics.hpp"

namespace strata {
namespace {

using isa::ComputeDst;
using isa::ComputeInstr;
using isa::ComputeMode;
using isa::Edge;
using isa::Engine;
using isa::LoadDst;
using isa::LoadInstr;
using isa::Opcode;
using isa::PoolOp;
using isa::StoreInstr;

constexpr uint64_t kRegionAlign = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, "][")); }

// ---- 1. lowering ---------------------------------------------------------------------------

enum class OpKind { kConv, kFc, kPool };

struct Op {
  OpKind kind = OpKind::kConv;
  std::vector<size_t> layers;   // network layers this op computes
  const Layer* main = nullptr;  // the layer that started the op
  int64_t in_c = 0, in_h = 0, in_w = 0;
  // convolution
  int kernel = 1, stride = 1, pad = 0;
  bool identity = false;  // an average pool computed as a convolution with identity weights
  Tensor<int8_t> weights;  // conv [Cout][Cin][K][K], fc [Cout][F]
  std::vector<int32_t> bias;
  std::vector<uint16_t> mult;
  std::vector<uint8_t> shift;
  int64_t conv_h = 0, conv_w = 0;
  int clamp_lo = kInt8Min, clamp_hi = kInt8Max;
  // pooling (fused into a conv, or a POOL op)
  bool pool_en = false;
  bool pool_avg = false;
  bool clamp_only = false;  // a POOL op made from a standalone clamp (1x1 window)
  PoolGeometry pool;
  int post_lo = kInt8Min, post_hi = kInt8Max;
  // result: a map [out_c][out_h][out_w] (fc: out_c neurons, 1x1)
  int64_t out_c = 0, out_h = 0, out_w = 0;
  int64_t fc_in = 0;  // fc: flattened input features
  int64_t macs = 0;
  std::vector<std::string> notes;
};

// Clamp [lo, hi] applied after [lo1, hi1]: the composition is one clamp.
void compose(int& lo1, int& hi1, int lo2, int hi2) {
  lo1 = std::clamp(lo1, lo2, hi2);
  hi1 = std::clamp(hi1, lo2, hi2);
}

std::string op_name(const Op& op, const Network& net) {
  std::vector<std::string> names;
  for (size_t i : op.layers) names.push_back(net.layers[i].name);
  return names.empty() ? std::string("copy") : fmt::format("{}", fmt::join(names, "+"));
}

bool identity_pool_possible(const PoolGeometry& g, int64_t h, int64_t w, const HwTarget& t) {
  const int n = g.kernel * g.kernel;
  if (g.pad != 0 || g.kernel > t.max_kernel || !std::has_single_bit(static_cast<unsigned>(n))) {
    return false;
  }
  const int64_t ho = pool_out_size(static_cast<int>(h), g);
  const int64_t wo = pool_out_size(static_cast<int>(w), g);
  return (ho - 1) * g.stride + g.kernel <= h && (wo - 1) * g.stride + g.kernel <= w;
}

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
    const auto start = [&](OpKind kind) -> Op& {
      Op op;
      op.kind = kind;
      op.main = &l;
      op.layers.push_back(li);
      op.in_c = cur[0];
      op.in_h = cur[1];
      op.in_w = cur[2];
      op.out_c = l.out_shape[0];
      op.out_h = l.out_shape[1];
      op.out_w = l.out_shape[2];
      ops.push_back(std::move(op));
      return ops.back();
    };
    switch (l.type) {
      case LayerType::kConv: {
        if (last != nullptr && last->kind == OpKind::kFc) {
          fail("a convolution after a fully-connected layer is not supported (FC results are "
               "batch-transposed: lane = image)");
        }
        if (flat) fail("a convolution after flatten of a map larger than 1x1 is not supported");
        if (l.conv.kernel > t.max_kernel) {
          fail(fmt::format("kernel {} exceeds the target's max_kernel {}", l.conv.kernel,
                           t.max_kernel));
        }
        Op& op = start(OpKind::kConv);
        op.kernel = l.conv.kernel;
        op.stride = l.conv.stride;
        op.pad = l.conv.pad;
        op.weights = l.weights;
        op.bias.assign(l.bias.values().begin(), l.bias.values().end());
        op.mult = l.requant.multiplier;
        op.shift = l.requant.shift;
        op.clamp_lo = l.requant.lo;
        op.clamp_hi = l.requant.hi;
        op.conv_h = l.out_shape[1];
        op.conv_w = l.out_shape[2];
        op.macs = l.macs();
        break;
      }
      case LayerType::kFc: {
        Op& op = start(OpKind::kFc);
        op.fc_in = shape_elements(cur);
        op.weights = l.weights.reshaped({l.out_channels, op.fc_in});
        op.bias.assign(l.bias.values().begin(), l.bias.values().end());
        op.mult = l.requant.multiplier;
        op.shift = l.requant.shift;
        op.clamp_lo = l.requant.lo;
        op.clamp_hi = l.requant.hi;
        op.macs = l.macs();
        flat = false;
        break;
      }
      case LayerType::kMaxPool:
      case LayerType::kAvgPool: {
        const bool avg = l.type == LayerType::kAvgPool;
        if (last != nullptr && last->kind == OpKind::kFc) {
          fail("pooling after a fully-connected layer is not supported");
        }
        if (flat) fail("pooling after flatten of a map larger than 1x1 is not supported");
        const bool fits = l.pool.kernel <= t.max_pool_kernel && cur[2] <= t.max_image_width;
        if (fits && last != nullptr && last->kind == OpKind::kConv && !last->pool_en &&
            !last->identity) {
          last->pool_en = true;
          last->pool_avg = avg;
          last->pool = l.pool;
          last->out_h = l.out_shape[1];
          last->out_w = l.out_shape[2];
          last->layers.push_back(li);
        } else if (fits && !avg && last != nullptr && last->clamp_only) {
          // clamp then max = max then clamp: the clamp stays after the pool.
          last->clamp_only = false;
          last->pool = l.pool;
          last->out_h = l.out_shape[1];
          last->out_w = l.out_shape[2];
          last->layers.push_back(li);
          last->notes.push_back("the clamp before the max pool moves after it (max commutes "
                                "with a monotone clamp)");
        } else if (fits) {
          Op& op = start(OpKind::kPool);
          op.pool_en = true;
          op.pool_avg = avg;
          op.pool = l.pool;
        } else if (avg && identity_pool_possible(l.pool, cur[1], cur[2], t)) {
          const int k = l.pool.kernel;
          Op& op = start(OpKind::kConv);
          op.identity = true;
          op.kernel = k;
          op.stride = l.pool.stride;
          op.pad = 0;
          const int64_t c = cur[0];
          op.weights = Tensor<int8_t>({c, c, k, k});
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int y = 0; y < k; ++y) {
              for (int x = 0; x < k; ++x) op.weights(ch, ch, y, x) = 1;
            }
          }
          const int shift = std::countr_zero(static_cast<unsigned>(k * k));
          op.bias.assign(static_cast<size_t>(c), 0);
          op.mult.assign(static_cast<size_t>(c), 1);
          op.shift.assign(static_cast<size_t>(c), static_cast<uint8_t>(shift));
          op.conv_h = l.out_shape[1];
          op.conv_w = l.out_shape[2];
          op.notes.push_back(fmt::format(
              "average pool {}x{} (larger than max_pool_kernel {}) computed as a convolution "
              "with identity weights, M = 1, S = {}: exact, every window holds {} elements",
              k, k, t.max_pool_kernel, shift, k * k));
        } else if (l.pool.kernel > t.max_pool_kernel) {
          fail(fmt::format("pooling window {} exceeds the target's max_pool_kernel {}{}",
                           l.pool.kernel, t.max_pool_kernel,
                           avg ? " (and it is not an average over equal power-of-two windows "
                                 "that could run as a convolution)"
                               : ""));
        } else {
          fail(fmt::format("pooling input width {} exceeds the target's max_image_width {} (the "
                           "line buffer holds one row)",
                           cur[2], t.max_image_width));
        }
        break;
      }
      case LayerType::kClamp: {
        if (last == nullptr) {
          // A clamp on the input is elementwise: it runs on the input map as stored, even
          // when flattens came before it (they only rename the shape; the output placement
          // and a following FC's feature order then see the map).
          const Shape& in = net.input_shape;
          if (in[2] > t.max_image_width) {
            fail(fmt::format("a clamp on the input runs in the pooling unit, whose row holds "
                             "{} pixels (max_image_width); the input is {} wide",
                             t.max_image_width, in[2]));
          }
          Op& op = start(OpKind::kPool);
          op.in_c = op.out_c = in[0];
          op.in_h = op.out_h = in[1];
          op.in_w = op.out_w = in[2];
          op.pool_en = true;
          op.clamp_only = true;
          op.pool = PoolGeometry{1, 1, 0, false};
          op.post_lo = l.lo;
          op.post_hi = l.hi;
          break;
        }
        if (last->kind == OpKind::kPool || (last->pool_en && last->pool_avg)) {
          compose(last->post_lo, last->post_hi, l.lo, l.hi);
        } else {
          compose(last->clamp_lo, last->clamp_hi, l.lo, l.hi);
          if (last->pool_en) {
            last->notes.push_back(fmt::format("clamp '{}' moves before the max pool and merges "
                                              "with the requantisation clamp",
                                              l.name));
          }
        }
        last->layers.push_back(li);
        break;
      }
      case LayerType::kFlatten:
        if (cur[1] * cur[2] > 1) flat = true;
        if (last != nullptr) last->layers.push_back(li);
        break;
    }
    cur = l.out_shape;
  }
  if (ops.empty()) {  // nothing to compute (only flatten): copy through the pooling unit
    if (net.input_shape[2] > t.max_image_width) {
      throw Error(fmt::format("the network computes nothing, and copying its {}-wide input "
                              "through the pooling unit exceeds max_image_width {}",
                              net.input_shape[2], t.max_image_width),
                  ErrorContext{net.source_file, 0, ""});
    }
    Op op;
    op.kind = OpKind::kPool;
    op.pool_en = true;
    op.clamp_only = true;
    op.pool = PoolGeometry{1, 1, 0, false};
    op.in_c = op.out_c = net.input_shape[0];
    op.in_h = op.out_h = net.input_shape[1];
    op.in_w = op.out_w = net.input_shape[2];
    for (size_t li = 0; li < net.layers.size(); ++li) op.layers.push_back(li);
    ops.push_back(std::move(op));
  }
  return ops;
}

// ---- 2. planning ---------------------------------------------------------------------------

enum class Dst { kBank, kPeCache, kTranspose };

struct OpPlan {
  std::string name;
  int tag = 0;
  bool is_final = false;
  Dst dst = Dst::kBank;
  // map input as stored in a bank (conv / pool)
  bool reorder = false;
  int64_t g_in = 0, map_h = 0, map_w = 0;
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t per_pass = 0, passes = 1;
  int64_t out_groups = 0;
  // parameters
  int64_t param_entries = 0;
  uint64_t param_ext = 0;   // offset in the params region
  int64_t param_base = -1;  // resident channel base, -1 = loaded per use
  // weights
  uint64_t weights_ext = 0;  // offset in the weights region
  int64_t cache_base = -1;   // resident cache base (conv), -1 = streamed
  // fc
  int64_t fc_words = 0;      // N-byte words per neuron (= features per image / N, padded)
  int64_t tile = 0;          // neurons per tile
  int64_t feat_base = 0;     // PE cache address of the features
  int64_t next_feat_base = 0;
};

// Feature index (C, H, W order) held by lane `lane` of FC input word `t`, or -1.
struct FeatureOrder {
  bool from_map = false;  // the previous op wrote a map into the PE caches: ((g*H+y)*W+x)*N+lane
  int64_t c = 0, h = 0, w = 0;
  int64_t features = 0;
  // Features per word after an FC layer whose tiles are narrower than a word: each tile
  // starts a PE-cache word (the hardware writes whole words), so lanes 0..per_word-1 of
  // word t hold neurons t*per_word.. and the other lanes are zero. 0 = N per word.
  int64_t per_word = 0;
  int64_t at(int64_t t, int64_t lane, int64_t n) const {
    if (!from_map) {
      const int64_t width = per_word > 0 ? per_word : n;
      const int64_t f = t * width + lane;
      return lane < width && f < features ? f : -1;
    }
    const int64_t plane = h * w;
    const int64_t g = t / plane, y = (t % plane) / w, x = t % w;
    const int64_t ch = g * n + lane;
    return ch < c ? (ch * h + y) * w + x : -1;
  }
};

struct Plan {
  std::vector<OpPlan> ops;
  std::vector<FeatureOrder> fc_order;  // per op (fc only)
  std::vector<uint8_t> params;         // params region
  std::vector<uint8_t> weights;        // weights region
  bool params_resident = false;
  bool weights_resident = false;
  int64_t slot_words = 0;  // streamed weights: size of one slot
  int slots = 0;
  InputLayout input_layout = InputLayout::kMap;
  int64_t input_words = 0;  // words per image in external memory
  std::vector<std::string> notes;
};

// Beats a convolution needs: only taps inside the image (the padding filter).
int64_t conv_beats(int64_t in_h, int64_t in_w, int64_t groups, int kh, int kw, int sh, int sw,
                   int ph, int pw, int64_t out_h, int64_t out_w) {
  const auto valid = [](int64_t o, int64_t in, int k, int s, int p) {
    const int64_t y0 = o * s - p;
    return std::min<int64_t>(k, in - y0) - std::max<int64_t>(0, -y0);
  };
  int64_t rows = 0, cols = 0;
  for (int64_t oy = 0; oy < out_h; ++oy) rows += valid(oy, in_h, kh, sh, ph);
  for (int64_t ox = 0; ox < out_w; ++ox) cols += valid(ox, in_w, kw, sw, pw);
  return rows * cols * groups;
}

void put_le(std::vector<uint8_t>& v, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) v.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void pad_to(std::vector<uint8_t>& v, uint64_t align) { v.resize(align_up(v.size(), align), 0); }

Plan plan(const Network& net, std::vector<Op>& ops, const HwTarget& t, const CompileOptions& o) {
  Plan pl;
  const int64_t n = t.lanes, p = t.pes;
  pl.ops.resize(ops.size());
  pl.fc_order.resize(ops.size());
  const auto fail = [&](const Op& op, const std::string& msg) {
    const Layer* l = op.main;
    throw Error(msg, ErrorContext{net.source_file, l != nullptr ? l->line : 0,
                                  l != nullptr ? l->name : std::string()});
  };

  // Destinations and FC feature orders.
  for (size_t k = 0; k < ops.size(); ++k) {
    const Op& op = ops[k];
    OpPlan& q = pl.ops[k];
    q.name = op_name(op, net);
    q.tag = op.layers.empty() ? 0 : static_cast<int>(op.layers.front());
    q.is_final = k + 1 == ops.size();
    const bool next_fc = !q.is_final && ops[k + 1].kind == OpKind::kFc;
    if (op.kind == OpKind::kFc) {
      q.dst = next_fc ? Dst::kTranspose : Dst::kBank;
    } else {
      q.dst = next_fc ? Dst::kPeCache : Dst::kBank;
    }
    if (op.kind == OpKind::kFc) {
      FeatureOrder& f = pl.fc_order[k];
      f.features = op.fc_in;
      if (k > 0 && ops[k - 1].kind != OpKind::kFc) {
        const Op& prev = ops[k - 1];
        f.from_map = true;
        f.c = prev.out_c;
        f.h = prev.out_h;
        f.w = prev.out_w;
        q.fc_words = ceil_div(f.c, n) * f.h * f.w;
      } else if (k > 0 && pl.ops[k - 1].tile < n && pl.ops[k - 1].tile < ops[k - 1].out_c) {
        f.per_word = pl.ops[k - 1].tile;
        q.fc_words = ceil_div(op.fc_in, f.per_word);
      } else {
        q.fc_words = ceil_div(op.fc_in, n);
      }
      if (q.fc_words > t.bank_depth) {
        fail(op, fmt::format("one neuron's weights need {} words ({} features), a bank holds {} "
                             "(bank_depth)",
                             q.fc_words, op.fc_in, t.bank_depth));
      }
      // Neurons per tile (one bank of weights). Tiles of whole N-neuron words, so that each
      // tile's transposed results start at lane 0 of a PE-cache word; a tile narrower than
      // a word starts a word of its own (the next layer's FeatureOrder::per_word).
      q.tile = std::min<int64_t>(op.out_c, t.bank_depth / q.fc_words);
      if (q.tile < op.out_c && q.tile >= n) q.tile -= q.tile % n;
    }
  }

  // Input layout: reorder the first convolution's input when it saves beats.
  const Op& first = ops.front();
  OpPlan& fq = pl.ops.front();
  if (first.kind == OpKind::kFc) {
    pl.input_layout = InputLayout::kFeatures;
    pl.input_words = fq.fc_words;
  } else {
    pl.input_layout = InputLayout::kMap;
    const int64_t g = ceil_div(first.in_c, n);
    if (first.kind == OpKind::kConv && first.in_c < n) {
      const int k = first.kernel;
      const int64_t g2 = ceil_div(int64_t{k} * first.in_c, n);
      const int64_t plain = conv_beats(first.in_h, first.in_w, g, k, k, first.stride,
                                       first.stride, first.pad, first.pad, first.conv_h,
                                       first.conv_w);
      const int64_t reordered = conv_beats(first.in_h, first.conv_w, g2, k, 1, first.stride, 1,
                                           first.pad, 0, first.conv_h, first.conv_w);
      const bool fits = first.in_h * first.conv_w * g2 <= t.bank_depth;
      const bool want = o.reorder == Reorder::kAlways ||
                        (o.reorder == Reorder::kAuto && reordered < plain);
      if (want && fits) {
        fq.reorder = true;
        pl.input_layout = InputLayout::kReordered;
        pl.notes.push_back(fmt::format(
            "{}: input reordered on the host ({} taps x {} channels per word, {} word{} per "
            "pixel): {} beats per image instead of {}",
            fq.name, k, first.in_c, g2, g2 == 1 ? "" : "s", reordered, plain));
      } else if (o.reorder != Reorder::kNever) {
        pl.notes.push_back(fmt::format("{}: plain input layout ({} beats per image; reordered "
                                       "would need {}{})",
                                       fq.name, plain, reordered,
                                       fits ? "" : " and does not fit a bank"));
      }
    }
  }

  // Geometry, sizes and the limits of every op.
  for (size_t k = 0; k < ops.size(); ++k) {
    Op& op = ops[k];
    OpPlan& q = pl.ops[k];
    if (op.kind == OpKind::kFc) {
      q.param_entries = op.out_c;
      if (q.dst == Dst::kBank && op.out_c > t.bank_depth) {
        fail(op, fmt::format("{} outputs do not fit a bank of {} words", op.out_c, t.bank_depth));
      }
      continue;
    }
    q.g_in = ceil_div(op.in_c, n);
    q.map_h = op.in_h;
    q.map_w = op.in_w;
    q.out_groups = ceil_div(op.out_c, n);
    if (op.kind == OpKind::kConv) {
      q.kh = q.kw = op.kernel;
      q.sh = q.sw = op.stride;
      q.ph = q.pw = op.pad;
      if (q.reorder) {
        q.g_in = ceil_div(int64_t{op.kernel} * op.in_c, n);
        q.map_w = op.conv_w;
        q.kw = 1;
        q.sw = 1;
        q.pw = 0;
      }
      q.per_pass = int64_t{q.kh} * q.kw * q.g_in;
      q.passes = ceil_div(op.out_c, p);
      q.param_entries = q.passes * p;
    }
    const int64_t in_words = q.g_in * q.map_h * q.map_w;
    if (in_words > t.bank_depth) {
      fail(op, fmt::format("input feature map [{}][{}][{}] needs {} words ({} group{} x {} x "
                           "{}), a bank holds {} (bank_depth)",
                           op.in_c, op.in_h, op.in_w, in_words, q.g_in, q.g_in == 1 ? "" : "s",
                           q.map_h, q.map_w, t.bank_depth));
    }
    const int64_t out_words = q.out_groups * op.out_h * op.out_w;
    if (q.dst == Dst::kBank && out_words > t.bank_depth) {
      fail(op, fmt::format("output feature map [{}][{}][{}] needs {} words, a bank holds {} "
                           "(bank_depth)",
                           op.out_c, op.out_h, op.out_w, out_words, t.bank_depth));
    }
  }

  if (pl.input_layout != InputLayout::kFeatures) {
    pl.input_words = pl.ops.front().g_in * pl.ops.front().map_h * pl.ops.front().map_w;
  }

  // Parameter RAM: resident when every op's channels fit, else loaded per use.
  int64_t entries = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpPlan& q = pl.ops[k];
    if (q.param_entries > t.param_depth) {
      fail(ops[k], fmt::format("{} output channels need {} parameter entries, the parameter RAM "
                               "holds {} (param_depth)",
                               ops[k].out_c, q.param_entries, t.param_depth));
    }
    entries += q.param_entries;
  }
  pl.params_resident = entries <= t.param_depth;
  if (pl.params_resident) {
    int64_t base = 0;
    for (OpPlan& q : pl.ops) {
      q.param_base = base;
      base += q.param_entries;
    }
  }
  pl.notes.push_back(pl.params_resident
                         ? fmt::format("parameters: {} of {} channels, loaded once", entries,
                                       t.param_depth)
                         : fmt::format("parameters: {} channels > {}: loaded before each use",
                                       entries, t.param_depth));

  // PE caches: FC feature regions (ping-pong between FC layers) at the top,
  // convolution weights below (resident, or streamed through one or two slots).
  int64_t region[2] = {0, 0};
  int fc_index = 0;
  std::vector<int> fc_slot(ops.size(), -1);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].kind != OpKind::kFc) continue;
    fc_slot[k] = fc_index % 2;
    region[fc_index % 2] = std::max(region[fc_index % 2], pl.ops[k].fc_words);
    ++fc_index;
  }
  const int64_t region_base[2] = {t.pe_cache_depth - region[0],
                                  t.pe_cache_depth - region[0] - region[1]};
  for (size_t k = 0; k < ops.size(); ++k) {
    if (fc_slot[k] < 0) continue;
    if (region_base[1] < 0) {
      fail(ops[k], fmt::format("the features of the fully-connected layers need {} + {} words in "
                               "every PE cache, it holds {} (pe_cache_depth)",
                               region[0], region[1], t.pe_cache_depth));
    }
    pl.ops[k].feat_base = region_base[fc_slot[k]];
    if (k > 0 && pl.ops[k - 1].dst == Dst::kTranspose) {
      pl.ops[k - 1].next_feat_base = pl.ops[k].feat_base;
    }
    if (k > 0 && pl.ops[k - 1].dst == Dst::kPeCache) {
      pl.ops[k - 1].next_feat_base = pl.ops[k].feat_base;
    }
  }
  const int64_t cap = std::max<int64_t>(0, region_base[1]);
  int64_t total = 0, largest = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpPlan& q = pl.ops[k];
    if (ops[k].kind != OpKind::kConv) continue;
    if (q.per_pass > cap) {
      fail(ops[k], fmt::format("the weights of one pass need {} words in every PE cache, {} are "
                               "free (pe_cache_depth {} minus {} for FC features)",
                               q.per_pass, cap, t.pe_cache_depth, t.pe_cache_depth - cap));
    }
    total += q.passes * q.per_pass;
    largest = std::max(largest, q.per_pass);
  }
  pl.weights_resident = total <= cap;
  if (pl.weights_resident) {
    int64_t base = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].kind != OpKind::kConv) continue;
      pl.ops[k].cache_base = base;
      base += pl.ops[k].passes * pl.ops[k].per_pass;
    }
    if (total > 0) {
      pl.notes.push_back(fmt::format("convolution weights: {} words per PE, resident (loaded "
                                     "once; {} free)",
                                     total, cap));
    }
  } else {
    pl.slot_words = largest;
    pl.slots = 2 * largest <= cap ? 2 : 1;
    pl.notes.push_back(fmt::format("convolution weights: {} words per PE > {} free: streamed per "
                                   "pass through {} slot{} of {} words",
                                   total, cap, pl.slots, pl.slots == 1 ? "" : "s", largest));
  }

  // External images of the parameters and weights, in hardware order.
  for (size_t k = 0; k < ops.size(); ++k) {
    const Op& op = ops[k];
    OpPlan& q = pl.ops[k];
    q.param_ext = pl.params.size();
    for (int64_t ch = 0; ch < q.param_entries; ++ch) {
      const bool real = ch < static_cast<int64_t>(op.bias.size());
      put_le(pl.params, real ? static_cast<uint32_t>(op.bias[ch]) : 0, 4);
      put_le(pl.params, real ? op.mult[ch] : 0, 2);
      put_le(pl.params, real ? op.shift[ch] : 0, 1);
      put_le(pl.params, 0, 1);
    }
    pad_to(pl.params, kRegionAlign);
    if (op.kind == OpKind::kPool) continue;
    q.weights_ext = pl.weights.size();
    if (op.kind == OpKind::kConv) {
      const int64_t cout = op.out_c, cin = op.in_c, k_side = op.kernel;
      for (int64_t pass = 0; pass < q.passes; ++pass) {
        for (int64_t pe = 0; pe < p; ++pe) {
          const int64_t co = pass * p + pe;
          for (int64_t wi = 0; wi < q.per_pass; ++wi) {
            for (int64_t lane = 0; lane < n; ++lane) {
              int8_t v = 0;
              if (co < cout) {
                if (q.reorder) {
                  const int64_t ky = wi / q.g_in, idx = (wi % q.g_in) * n + lane;
                  if (idx < k_side * cin) v = op.weights(co, idx % cin, ky, idx / cin);
                } else {
                  const int64_t ky = wi / (k_side * q.g_in), kx = (wi / q.g_in) % k_side;
                  const int64_t c = (wi % q.g_in) * n + lane;
                  if (c < cin) v = op.weights(co, c, ky, kx);
                }
              }
              pl.weights.push_back(static_cast<uint8_t>(v));
            }
          }
        }
      }
    } else {
      const FeatureOrder& f = pl.fc_order[k];
      for (int64_t neuron = 0; neuron < op.out_c; ++neuron) {
        for (int64_t word = 0; word < q.fc_words; ++word) {
          for (int64_t lane = 0; lane < n; ++lane) {
            const int64_t feature = f.at(word, lane, n);
            pl.weights.push_back(
                static_cast<uint8_t>(feature >= 0 ? op.weights(neuron, feature) : int8_t{0}));
          }
        }
      }
      pl.notes.push_back(fmt::format(
          "{}: weights in tiles of {} neuron{} ({} words each){}", q.name, q.tile,
          q.tile == 1 ? "" : "s", q.fc_words,
          f.from_map ? fmt::format(", columns permuted to the hardware feature order "
                                   "((g*{}+y)*{}+x)*{}+lane",
                                   f.h, f.w, n)
          : f.per_word > 0
              ? fmt::format(", {} features per word (the previous layer's tiles of {} neurons "
                            "each start a word)",
                            f.per_word, f.per_word)
              : ""));
    }
    pad_to(pl.weights, kRegionAlign);
  }
  return pl;
}

// ---- 3. emission ---------------------------------------------------------------------------

enum class Space : uint8_t { kBank, kCache, kParam, kExt };

struct Span {
  Space space;
  int64_t id;
  int64_t begin, end;
};

struct Touch {
  Span span;
  bool write;
};

bool overlap(const Span& a, const Span& b) {
  return a.space == b.space && a.id == b.id && a.begin < b.end && b.begin < a.end;
}

using AnyInstr = std::variant<LoadInstr, ComputeInstr, StoreInstr>;

// One instruction with what it touches: per acquisition step (consumer view),
// per release unit (producer view: spans written, or read for a STORE), and
// the per-memory bounding spans used to find conflicts.
struct Emit {
  AnyInstr instr;
  Engine engine = Engine::kLoad;
  std::string what;  // op name, for errors
  std::vector<std::vector<Touch>> steps;
  std::vector<std::vector<Span>> units;
  std::vector<Touch> bounds;
};

void add_bound(std::vector<Touch>& bounds, const Touch& t) {
  for (Touch& b : bounds) {
    if (b.write == t.write && b.span.space == t.span.space && b.span.id == t.span.id) {
      b.span.begin = std::min(b.span.begin, t.span.begin);
      b.span.end = std::max(b.span.end, t.span.end);
      return;
    }
  }
  bounds.push_back(t);
}

void finish(Emit& e) {
  for (const auto& step : e.steps) {
    for (const Touch& t : step) add_bound(e.bounds, t);
  }
}

bool conflict(const Emit& a, const Emit& b) {
  for (const Touch& x : a.bounds) {
    for (const Touch& y : b.bounds) {
      if ((x.write || y.write) && overlap(x.span, y.span)) return true;
    }
  }
  return false;
}

class Emitter {
 public:
  Emitter(const HwTarget& t) : t_(t), n_(t.lanes), p_(t.pes) {}

  Emit load(const LoadInstr& l, const std::string& what) const {
    Emit e;
    e.instr = l;
    e.engine = Engine::kLoad;
    e.what = what;
    const int64_t entry = l.dst_kind == LoadDst::kParam ? 8 : n_;
    for (int64_t r = 0; r < l.rows; ++r) {
      Span dst{Space::kBank, l.dst_id, 0, 0};
      int64_t addr = l.dst_addr + r * l.dst_row_stride;
      if (l.dst_kind == LoadDst::kParam) {
        dst.space = Space::kParam;
        dst.id = 0;
      } else if (l.dst_kind == LoadDst::kPeCache) {
        dst.space = Space::kCache;
        if (l.dst_pe_step) {
          dst.id = (l.dst_id + r) % p_;
          addr = l.dst_addr + (r / p_) * l.dst_row_stride;
        }
      }
      dst.begin = addr;
      dst.end = addr + l.row_words;
      const int64_t src = l.ext_addr + r * l.ext_row_stride;
      e.steps.push_back({Touch{dst, true}, Touch{{Space::kExt, 0, src, src + l.row_words * entry},
                                                 false}});
      e.units.push_back({dst});
    }
    finish(e);
    return e;
  }

  Emit store(const StoreInstr& s, const std::string& what) const {
    Emit e;
    e.instr = s;
    e.engine = Engine::kStore;
    e.what = what;
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t a = s.src_addr + r * s.src_row_stride;
      const Span src{Space::kBank, s.src_id, a, a + s.row_words};
      const int64_t x = s.ext_addr + r * s.ext_row_stride;
      e.steps.push_back({Touch{src, false}, Touch{{Space::kExt, 0, x, x + s.row_words * n_}, true}});
      e.units.push_back({src});
    }
    finish(e);
    return e;
  }

  Emit compute(const ComputeInstr& c, const std::string& what) const {
    Emit e;
    e.instr = c;
    e.engine = Engine::kCompute;
    e.what = what;
    const auto dst_span = [&](int64_t addr, int64_t words) {
      return Span{c.dst_kind == ComputeDst::kBank ? Space::kBank : Space::kCache, c.dst_id, addr,
                  addr + words};
    };
    const auto operands = [&](std::vector<Touch>& step, int64_t cache_words, int64_t params) {
      for (int64_t pe = 0; pe < p_; ++pe) {
        step.push_back({{Space::kCache, pe, c.cache_base, c.cache_base + cache_words}, false});
      }
      step.push_back({{Space::kParam, 0, c.param_base, c.param_base + params}, false});
    };
    if (c.mode == ComputeMode::kFc) {
      for (int64_t o = 0; o < c.out_h; ++o) {
        std::vector<Touch> step;
        const int64_t w = c.in_base + o * c.in_groups;
        step.push_back({{Space::kBank, c.in_id, w, w + c.in_groups}, false});
        if (o == 0 || o == c.out_h - 1) operands(step, c.in_groups, 0);
        step.push_back({{Space::kParam, 0, c.param_base + o, c.param_base + o + 1}, false});
        std::vector<Span> unit;
        if (c.dst_kind == ComputeDst::kBank) {
          unit.push_back({Space::kBank, c.dst_id, c.dst_base + o, c.dst_base + o + 1});
        } else {
          const int64_t word = c.dst_base + (c.dst_lane + o) / n_;
          for (int64_t pe = 0; pe < p_; ++pe) unit.push_back({Space::kCache, pe, word, word + 1});
        }
        for (const Span& s : unit) step.push_back({s, true});
        e.steps.push_back(std::move(step));
        e.units.push_back(std::move(unit));
      }
      finish(e);
      return e;
    }
    // CONV and POOL: steps are input rows (POOL) or convolution output rows.
    const bool pool_only = c.mode == ComputeMode::kPool;
    const int64_t groups = pool_only ? c.in_groups : 1;
    const int64_t rows_in = pool_only ? c.in_h : c.out_h;  // steps per group
    const int64_t res_rows = c.pool_en ? c.pool_out_h : c.out_h;
    const int64_t res_cols = c.pool_en ? c.pool_out_w : c.out_w;
    e.steps.resize(static_cast<size_t>(groups * rows_in));
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t y = 0; y < rows_in; ++y) {
        std::vector<Touch>& step = e.steps[static_cast<size_t>(g * rows_in + y)];
        if (pool_only) {
          const int64_t a = c.in_base + (g * c.in_h + y) * c.in_w;
          step.push_back({{Space::kBank, c.in_id, a, a + c.in_w}, false});
        } else {
          const int64_t y0 = y * c.stride_h - c.pad_h;
          const int64_t r0 = std::max<int64_t>(0, y0), r1 = std::min(c.in_h, y0 + c.kernel_h);
          for (int64_t gi = 0; gi < c.in_groups; ++gi) {
            const int64_t a = c.in_base + (gi * c.in_h + r0) * c.in_w;
            step.push_back({{Space::kBank, c.in_id, a, a + (r1 - r0) * c.in_w}, false});
          }
          if (y == 0 || y == rows_in - 1) {
            operands(step, c.kernel_h * c.kernel_w * c.in_groups, p_);
          }
        }
      }
      for (int64_t r = 0; r < res_rows; ++r) {
        const int64_t last_in = pool_only || c.pool_en
                                    ? std::min(rows_in - 1, r * c.pool_s - c.pool_pad + c.pool_k - 1)
                                    : r;
        const Span s = dst_span(c.dst_base + g * c.dst_group_stride + r * c.dst_row_stride,
                                res_cols);
        e.steps[static_cast<size_t>(g * rows_in + last_in)].push_back({s, true});
        e.units.push_back({s});
      }
    }
    finish(e);
    return e;
  }

 private:
  const HwTarget& t_;
  const int64_t n_;
  const int64_t p_;
};

struct Job {
  std::vector<Emit> loads;
  std::optional<Emit> compute;
  std::vector<Emit> stores;
};

bool jobs_conflict(const std::vector<Emit>& loads, const Job& job) {
  for (const Emit& l : loads) {
    if (job.compute && conflict(l, *job.compute)) return true;
    for (const Emit& s : job.stores) {
      if (conflict(l, s)) return true;
    }
  }
  return false;
}

// External addresses below are relative to the start of the data (params region).
struct DataLayout {
  uint64_t params = 0;
  uint64_t weights = 0;
  std::vector<uint64_t> inputs;
  std::vector<uint64_t> outputs;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  uint64_t end = 0;
};

struct Emission {
  std::vector<Emit> emits;
  DataLayout data;
};

Emission emit(const std::vector<Op>& ops, const Plan& pl, const HwTarget& t, int batch) {
  const int64_t n = t.lanes, p = t.pes;
  Emitter em(t);
  Emission out;
  DataLayout& d = out.data;
  d.params = 0;
  d.weights = align_up(pl.params.size(), kRegionAlign);
  uint64_t cursor = align_up(d.weights + pl.weights.size(), kRegionAlign);
  d.input_bytes = static_cast<uint64_t>(pl.input_words * n);
  const uint64_t in_stride = align_up(d.input_bytes, kRegionAlign);
  for (int i = 0; i < batch; ++i) {
    d.inputs.push_back(cursor);
    cursor += in_stride;
  }
  const Op& last = ops.back();
  const OpPlan& lq = pl.ops.back();
  if (last.kind == OpKind::kFc) {
    d.output_bytes = static_cast<uint64_t>(last.out_c * n);
    d.outputs.push_back(cursor);
    cursor += align_up(d.output_bytes, kRegionAlign);
  } else {
    d.output_bytes = static_cast<uint64_t>(lq.out_groups * last.out_h * last.out_w * n);
    for (int i = 0; i < batch; ++i) {
      d.outputs.push_back(cursor);
      cursor += align_up(d.output_bytes, kRegionAlign);
    }
  }
  d.end = cursor;

  int next_bank = 0;
  const auto take_bank = [&](std::initializer_list<int64_t> exclude) {
    for (int tries = 0; tries < t.banks; ++tries) {
      const int b = next_bank;
      next_bank = (next_bank + 1) % t.banks;
      if (std::find(exclude.begin(), exclude.end(), b) == exclude.end()) return int64_t{b};
    }
    throw Error("internal: no free bank");
  };
  int64_t ring = 0;  // parameter RAM ring pointer (params loaded per use)
  const auto param_load = [&](const OpPlan& q, std::vector<Emit>& loads) -> int64_t {
    if (pl.params_resident) return q.param_base;
    if (q.param_entries == 0) return 0;  // a POOL op: no parameters, and a LOAD of none is illegal
    if (ring + q.param_entries > t.param_depth) ring = 0;
    const int64_t base = ring;
    ring += q.param_entries;
    LoadInstr l;
    l.hdr.tag = q.tag;
    l.ext_addr = static_cast<int64_t>(d.params + q.param_ext);
    l.ext_row_stride = static_cast<int64_t>(align_up(q.param_entries * 8, t.beat_bytes()));
    l.rows = 1;
    l.row_words = q.param_entries;
    l.dst_kind = LoadDst::kParam;
    l.dst_addr = base;
    l.dst_row_stride = q.param_entries;
    loads.push_back(em.load(l, q.name));
    return base;
  };
  int slot_turn = 0;

  std::vector<Job> jobs;
  // Resident parameters and weights: those of the first op lead the program;
  // the later ops' (`late`) follow the first job's loads (the input), so the
  // first layer does not wait for every layer's weights to stream in.
  Job preamble, late;
  if (pl.params_resident) {
    for (size_t k = 0; k < pl.ops.size(); ++k) {
      const OpPlan& q = pl.ops[k];
      if (q.param_entries == 0) continue;
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.params + q.param_ext);
      l.ext_row_stride = static_cast<int64_t>(align_up(q.param_entries * 8, t.beat_bytes()));
      l.rows = 1;
      l.row_words = q.param_entries;
      l.dst_kind = LoadDst::kParam;
      l.dst_addr = q.param_base;
      l.dst_row_stride = q.param_entries;
      (k == 0 ? preamble : late).loads.push_back(em.load(l, q.name));
    }
  }
  if (pl.weights_resident) {
    for (size_t k = 0; k < ops.size(); ++k) {
      const OpPlan& q = pl.ops[k];
      if (ops[k].kind != OpKind::kConv) continue;
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.weights + q.weights_ext);
      l.ext_row_stride = q.per_pass * n;
      l.rows = q.passes * p;
      l.row_words = q.per_pass;
      l.dst_kind = LoadDst::kPeCache;
      l.dst_id = 0;
      l.dst_pe_step = true;
      l.dst_addr = q.cache_base;
      l.dst_row_stride = q.per_pass;
      (k == 0 ? preamble : late).loads.push_back(em.load(l, q.name));
    }
  }
  jobs.push_back(std::move(preamble));

  // Maps: every image through the convolution / pooling ops.
  size_t first_fc = ops.size();
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].kind == OpKind::kFc) {
      first_fc = k;
      break;
    }
  }
  for (int img = 0; img < batch; ++img) {
    int64_t cur_bank = -1;
    for (size_t k = 0; k < first_fc; ++k) {
      const Op& op = ops[k];
      const OpPlan& q = pl.ops[k];
      std::vector<Emit> pending;
      const int64_t in_bank = k == 0 ? take_bank({}) : cur_bank;
      const int64_t out_bank = q.dst == Dst::kBank ? take_bank({in_bank}) : -1;
      const int64_t param_base = param_load(q, pending);
      // The input, external layout [row][group][col]: image row y holds the
      // words of every group, so a compute can start once its first rows are in
      // (one load per row when there are several groups, bank layout
      // [group][row][col]).
      std::vector<Emit> input_loads;
      if (k == 0) {
        const int64_t per_load = q.g_in == 1 ? q.map_h : 1;
        for (int64_t y = 0; y < q.map_h; y += per_load) {
          LoadInstr l;
          l.hdr.tag = q.tag;
          l.ext_addr = static_cast<int64_t>(d.inputs[img]) + y * q.g_in * q.map_w * n;
          l.ext_row_stride = q.map_w * n;
          l.rows = q.g_in == 1 ? q.map_h : q.g_in;
          l.row_words = q.map_w;
          l.dst_kind = LoadDst::kBank;
          l.dst_id = in_bank;
          l.dst_addr = y * q.map_w;
          l.dst_row_stride = q.g_in == 1 ? q.map_w : q.map_h * q.map_w;
          input_loads.push_back(em.load(l, q.name));
        }
      }
      const int64_t plane = op.out_h * op.out_w;
      for (int64_t pass = 0; pass < q.passes; ++pass) {
        Job job;
        job.loads = std::move(pending);
        pending.clear();
        ComputeInstr c;
        c.hdr.tag = q.tag;
        c.in_id = in_bank;
        c.in_base = 0;
        c.in_h = q.map_h;
        c.in_w = q.map_w;
        c.in_groups = q.g_in;
        c.pool_en = op.pool_en;
        c.pool_op = op.pool_avg ? PoolOp::kAvg : PoolOp::kMax;
        c.pool_ceil = op.pool_en && op.pool.ceil_mode;
        if (op.pool_en) {
          c.pool_k = op.pool.kernel;
          c.pool_s = op.pool.stride;
          c.pool_pad = op.pool.pad;
          c.pool_out_h = op.out_h;
          c.pool_out_w = op.out_w;
          c.post_lo = op.post_lo;
          c.post_hi = op.post_hi;
        }
        if (op.kind == OpKind::kConv) {
          c.mode = ComputeMode::kConv;
          c.kernel_h = q.kh;
          c.kernel_w = q.kw;
          c.stride_h = q.sh;
          c.stride_w = q.sw;
          c.pad_h = q.ph;
          c.pad_w = q.pw;
          c.out_h = op.conv_h;
          c.out_w = op.conv_w;
          c.param_base = param_base + pass * p;
          c.clamp_lo = op.clamp_lo;
          c.clamp_hi = op.clamp_hi;
          if (pl.weights_resident) {
            c.cache_base = q.cache_base + pass * q.per_pass;
          } else {
            c.cache_base = (slot_turn++ % pl.slots) * pl.slot_words;
            LoadInstr l;
            l.hdr.tag = q.tag;
            l.ext_addr = static_cast<int64_t>(d.weights + q.weights_ext + pass * p * q.per_pass * n);
            l.ext_row_stride = q.per_pass * n;
            l.rows = p;
            l.row_words = q.per_pass;
            l.dst_kind = LoadDst::kPeCache;
            l.dst_pe_step = true;
            l.dst_addr = c.cache_base;
            l.dst_row_stride = q.per_pass;
            job.loads.push_back(em.load(l, q.name));
          }
        } else {
          c.mode = ComputeMode::kPool;
          c.out_h = q.map_h;
          c.out_w = q.map_w;
          c.dst_group_stride = plane;
        }
        const int64_t group_base = op.kind == OpKind::kConv ? pass * plane : 0;
        c.dst_row_stride = op.out_w;
        if (q.dst == Dst::kBank) {
          c.dst_kind = ComputeDst::kBank;
          c.dst_id = out_bank;
          c.dst_base = group_base;
        } else {
          c.dst_kind = ComputeDst::kPeCache;
          c.dst_id = img;
          c.dst_base = q.next_feat_base + group_base;
        }
        for (Emit& e : input_loads) job.loads.push_back(std::move(e));
        input_loads.clear();
        job.compute = em.compute(c, q.name);
        if (q.is_final) {
          const int64_t groups = op.kind == OpKind::kConv ? 1 : q.out_groups;
          StoreInstr s;
          s.hdr.tag = q.tag;
          s.src_id = out_bank;
          s.src_addr = group_base;
          s.src_row_stride = op.out_w;
          s.rows = groups * op.out_h;
          s.row_words = op.out_w;
          s.ext_addr = static_cast<int64_t>(d.outputs[img] + group_base * n);
          s.ext_row_stride = op.out_w * n;
          job.stores.push_back(em.store(s, q.name));
        }
        jobs.push_back(std::move(job));
      }
      cur_bank = out_bank;
    }
  }

  // Fully-connected layers, batch mode: tiles of neurons double-buffered in two banks.
  for (size_t k = first_fc; k < ops.size(); ++k) {
    const Op& op = ops[k];
    const OpPlan& q = pl.ops[k];
    std::vector<Emit> pending;
    if (k == 0) {  // features straight from external memory, image i into PE i
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.inputs[0]);
      l.ext_row_stride = batch > 1 ? static_cast<int64_t>(d.inputs[1] - d.inputs[0]) : 0;
      l.rows = batch;
      l.row_words = q.fc_words;
      l.dst_kind = LoadDst::kPeCache;
      l.dst_id = 0;
      l.dst_pe_step = true;
      l.dst_addr = q.feat_base;
      l.dst_row_stride = q.fc_words;
      pending.push_back(em.load(l, q.name));
    }
    const int64_t out_bank = q.dst == Dst::kBank ? take_bank({}) : -1;
    const int64_t tile_bank0 = take_bank({out_bank});
    const int64_t tile_bank1 =
        t.banks >= 3 || q.dst != Dst::kBank ? take_bank({out_bank, tile_bank0}) : tile_bank0;
    const int64_t param_base = param_load(q, pending);
    int turn = 0;
    for (int64_t o0 = 0; o0 < op.out_c; o0 += q.tile) {
      const int64_t count = std::min(q.tile, op.out_c - o0);
      const int64_t bank = turn++ % 2 == 0 ? tile_bank0 : tile_bank1;
      Job job;
      job.loads = std::move(pending);
      pending.clear();
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.weights + q.weights_ext + o0 * q.fc_words * n);
      l.ext_row_stride = q.fc_words * n;
      l.rows = count;
      l.row_words = q.fc_words;
      l.dst_kind = LoadDst::kBank;
      l.dst_id = bank;
      l.dst_addr = 0;
      l.dst_row_stride = q.fc_words;
      job.loads.push_back(em.load(l, q.name));
      ComputeInstr c;
      c.hdr.tag = q.tag;
      c.mode = ComputeMode::kFc;
      c.in_id = bank;
      c.in_base = 0;
      c.in_groups = q.fc_words;
      c.out_h = count;
      c.out_w = 1;
      c.cache_base = q.feat_base;
      c.param_base = param_base + o0;
      c.clamp_lo = op.clamp_lo;
      c.clamp_hi = op.clamp_hi;
      if (q.dst == Dst::kBank) {
        c.dst_kind = ComputeDst::kBank;
        c.dst_id = out_bank;
        c.dst_base = o0;
      } else {
        c.dst_kind = ComputeDst::kPeTranspose;
        // Every tile starts a word (whole-word PE-cache writes, dst_lane = 0): tiles of
        // whole words continue each other, a tile narrower than a word has its own.
        c.dst_base = q.next_feat_base + o0 / q.tile * ceil_div(q.tile, n);
        c.dst_lane = 0;
      }
      job.compute = em.compute(c, q.name);
      if (q.is_final) {
        StoreInstr s;
        s.hdr.tag = q.tag;
        s.src_id = out_bank;
        s.src_addr = o0;
        s.src_row_stride = 1;
        s.rows = count;
        s.row_words = 1;
        s.ext_addr = static_cast<int64_t>(d.outputs[0] + o0 * n);
        s.ext_row_stride = n;
        job.stores.push_back(em.store(s, q.name));
      }
      jobs.push_back(std::move(job));
    }
  }

  if (!late.loads.empty()) {
    jobs.insert(jobs.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(2, jobs.size())),
                std::move(late));
  }

  // Program order: the loads of job j + 1 go before the compute of job j (one
  // job of prefetch), unless they touch what that job touches.
  std::vector<Emit>& seq = out.emits;
  for (Emit& e : jobs.front().loads) seq.push_back(std::move(e));
  for (size_t j = 0; j < jobs.size(); ++j) {
    Job& job = jobs[j];
    const bool next = j + 1 < jobs.size();
    const bool early = next && !jobs_conflict(jobs[j + 1].loads, job);
    if (early) {
      for (Emit& e : jobs[j + 1].loads) seq.push_back(std::move(e));
    }
    if (job.compute) seq.push_back(std::move(*job.compute));
    for (Emit& e : job.stores) seq.push_back(std::move(e));
    if (next && !early) {
      for (Emit& e : jobs[j + 1].loads) seq.push_back(std::move(e));
    }
  }
  return out;
}

// ---- 4. dependencies -----------------------------------------------------------------------

isa::Header& header_of(AnyInstr& v) {
  return std::visit([](auto& i) -> isa::Header& { return i.hdr; }, v);
}

Opcode opcode_of(const AnyInstr& v) {
  if (std::holds_alternative<LoadInstr>(v)) return Opcode::kLoad;
  if (std::holds_alternative<StoreInstr>(v)) return Opcode::kStore;
  return Opcode::kCompute;
}

bool releases_per_step(Edge e) { return e == Edge::kL2C || e == Edge::kC2S || e == Edge::kS2C; }

// For every instruction and each of its incoming edges: the earlier
// instructions of the producing engine that conflict with it (touch a word it
// touches, one of the two writing), after the last one an earlier consumer
// already waited for. Each of them releases its units on the edge (rel0 edges:
// one per row; rel1 edges: one) and this instruction acquires them all.
// Fine-grained: the units the consumer's first step needs, then the most any
// later step needs per step.
std::array<int64_t, isa::kEdges> dependencies(std::vector<Emit>& emits) {
  std::array<int64_t, isa::kEdges> covered;
  covered.fill(-1);
  std::array<int64_t, isa::kEdges> units{};
  for (size_t i = 0; i < emits.size(); ++i) {
    Emit& consumer = emits[i];
    const isa::EdgeSlots slots = isa::edge_slots(opcode_of(consumer.instr));
    for (int which = 0; which < 2; ++which) {
      const std::optional<Edge> slot = which == 0 ? slots.acq0 : slots.acq1;
      if (!slot) continue;
      const int e = static_cast<int>(*slot);
      const Engine producer = isa::edge_producer(*slot);
      int64_t jmax = -1;
      for (int64_t j = static_cast<int64_t>(i) - 1; j > covered[e]; --j) {
        if (emits[j].engine == producer && conflict(emits[j], consumer)) {
          jmax = j;
          break;
        }
      }
      if (jmax < 0) continue;
      // Every producer in (covered, jmax] that conflicts releases its units;
      // the consumer acquires all of them.
      isa::Header& h = header_of(consumer.instr);
      std::vector<int64_t> need(consumer.steps.size(), 0);
      int64_t count = 0;
      for (int64_t j = covered[e] + 1; j <= jmax; ++j) {
        Emit& prod = emits[j];
        if (prod.engine != producer || !conflict(prod, consumer)) continue;
        const int64_t n_units =
            releases_per_step(*slot) ? static_cast<int64_t>(prod.units.size()) : 1;
        const isa::EdgeSlots pslots = isa::edge_slots(opcode_of(prod.instr));
        isa::Header& ph = header_of(prod.instr);
        (pslots.rel0 == slot ? ph.rel0 : ph.rel1) = n_units;
        // Fine-grained: the first consumer step that touches the data of
        // each producer unit needs the units up to that one.
        if (which == 0 && consumer.engine != Engine::kLoad && releases_per_step(*slot)) {
          for (size_t u = 0; u < prod.units.size(); ++u) {
            for (size_t s = 0; s < consumer.steps.size(); ++s) {
              bool hit = false;
              for (const Touch& t : consumer.steps[s]) {
                for (const Span& w : prod.units[u]) hit = hit || overlap(t.span, w);
              }
              if (hit) {
                need[s] = std::max(need[s], count + static_cast<int64_t>(u) + 1);
                break;
              }
            }
          }
        }
        count += n_units;
      }
      if (which == 1) {
        h.acq1 = count;
      } else {
        h.acq0 = count;
        h.acq0_first = count;
        h.acq0_step = 0;
        if (consumer.engine != Engine::kLoad && !need.empty()) {
          for (size_t s = 1; s < need.size(); ++s) need[s] = std::max(need[s], need[s - 1]);
          const int64_t first = need[0];
          int64_t step = 0;
          for (size_t s = 1; s < need.size(); ++s) {
            step = std::max<int64_t>(step, ceil_div(need[s] - first, static_cast<int64_t>(s)));
          }
          h.acq0_first = first;
          h.acq0_step = std::min(step, count);
        }
      }
      covered[e] = jmax;
      units[e] += count;
    }
  }
  // Every unit released is acquired, edge by edge (checked from the headers).
  std::array<int64_t, isa::kEdges> released{}, acquired{};
  for (Emit& em : emits) {
    const isa::EdgeSlots s = isa::edge_slots(opcode_of(em.instr));
    const isa::Header& h = header_of(em.instr);
    if (s.acq0) acquired[static_cast<int>(*s.acq0)] += h.acq0;
    if (s.acq1) acquired[static_cast<int>(*s.acq1)] += h.acq1;
    if (s.rel0) released[static_cast<int>(*s.rel0)] += h.rel0;
    if (s.rel1) released[static_cast<int>(*s.rel1)] += h.rel1;
  }
  for (int e = 0; e < isa::kEdges; ++e) {
    if (released[e] != acquired[e] || released[e] != units[e]) {
      throw Error(fmt::format("internal: dependency edge {} releases {} units but acquires {}",
                              isa::edge_name(Edge(e)), released[e], acquired[e]));
    }
  }
  return units;
}

// ---- 5. dispatch order ----------------------------------------------------------------------

// The fetcher dispatches in program order into short per-engine queues, so a
// COMPUTE behind a long run of LOADs (a layer's input rows, the next job's
// prefetch) reaches its engine only when most of those loads have been
// taken. Each COMPUTE is moved ahead of the LOADs immediately before it that
// its first step does not need: the L2C units released by the LOADs left in
// front of it cover every earlier COMPUTE's acquisitions plus its own
// `acq0_first`. The moved-over LOADs follow it at once. Acquisitions and
// releases count units per engine in per-engine order, which this does not
// change, so the headers computed in program order stay exact; none of the
// moved-over LOADs waits for the COMPUTE (a producer always precedes its
// consumer), so no queue can block the fetcher in front of a LOAD a waiting
// instruction needs.
void dispatch_order(std::vector<Emit>& emits) {
  std::vector<Emit> out;
  out.reserve(emits.size());
  std::vector<Emit> run;  // LOADs not yet placed, in program order
  int64_t released = 0;   // L2C units of the LOADs placed
  int64_t acquired = 0;   // L2C units of the COMPUTEs placed
  auto place_load = [&](Emit& e) {
    released += header_of(e.instr).rel0;  // LOAD rel0 = L2C
    out.push_back(std::move(e));
  };
  for (Emit& e : emits) {
    if (e.engine == Engine::kLoad) {
      run.push_back(std::move(e));
      continue;
    }
    size_t k = 0;
    if (e.engine == Engine::kCompute) {
      const isa::Header& h = header_of(e.instr);  // COMPUTE acq0 = L2C
      while (k < run.size() && released < acquired + h.acq0_first) place_load(run[k++]);
      acquired += h.acq0;
    }
    out.push_back(std::move(e));
    for (; k < run.size(); ++k) place_load(run[k]);
    run.clear();
  }
  for (Emit& e : run) place_load(e);
  emits = std::move(out);
}

std::string op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kConv: return "conv";
    case OpKind::kFc: return "fc";
    case OpKind::kPool: return "pool";
  }
  return "?";
}

std::string op_detail(const Op& op, const OpPlan& q) {
  std::string s;
  switch (op.kind) {
    case OpKind::kConv:
      s = fmt::format("{} {}x{} s{} p{}: [{}][{}][{}] -> [{}][{}][{}], {} pass{} of {} words{}",
                      op.identity ? "identity conv" : "conv", op.kernel, op.kernel, op.stride,
                      op.pad, op.in_c, op.in_h, op.in_w, op.out_c, op.conv_h, op.conv_w, q.passes,
                      q.passes == 1 ? "" : "es", q.per_pass,
                      q.reorder ? fmt::format(" (reordered input, run as {}x1)", op.kernel) : "");
      break;
    case OpKind::kFc:
      s = fmt::format("fc {} -> {}, {} words per neuron, tiles of {}", op.fc_in, op.out_c,
                      q.fc_words, q.tile);
      break;
    case OpKind::kPool:
      s = fmt::format("pool [{}][{}][{}]", op.in_c, op.in_h, op.in_w);
      break;
  }
  if (op.kind != OpKind::kPool) s += fmt::format(", clamp [{}, {}]", op.clamp_lo, op.clamp_hi);
  if (op.pool_en) {
    s += op.clamp_only ? std::string(", elementwise")
                       : fmt::format(", {}pool {}/{}/{}{} -> [{}][{}]", op.pool_avg ? "avg" : "max",
                                     op.pool.kernel, op.pool.stride, op.pool.pad,
                                     op.pool.ceil_mode ? " ceil" : "", op.out_h, op.out_w);
    s += fmt::format(", post clamp [{}, {}]", op.post_lo, op.post_hi);
  }
  const char* dst[] = {"bank", "PE caches", "transposed into the PE caches"};
  s += fmt::format(", results to {}", dst[static_cast<int>(q.dst)]);
  return s;
}

void check_image(const Program& prog, int image, size_t memory_size) {
  if (image < 0 || image >= prog.batch) {
    throw Error(fmt::format("image {} outside the program's batch 0..{}", image, prog.batch - 1));
  }
  if (memory_size < prog.image.size()) {
    throw Error(fmt::format("memory of {} bytes is smaller than the program's image ({} bytes)",
                            memory_size, prog.image.size()));
  }
}

}  // namespace

const MemRegion& Program::region(const std::string& name) const {
  for (const MemRegion& r : regions) {
    if (r.name == name) return r;
  }
  throw Error(fmt::format("the program has no memory region '{}'", name));
}

Program compile(const Network& net, const HwTarget& target, const CompileOptions& options) {
  target.validate();
  if (options.batch < 1 || options.batch > target.pes) {
    throw Error(fmt::format("batch {} is outside 1..{} (P: fully-connected layers run one image "
                            "per PE)",
                            options.batch, target.pes),
                ErrorContext{net.source_file, 0, ""});
  }
  for (const Layer& l : net.layers) {
    if (l.has_weights() && (l.weights.empty() || l.bias.empty())) {
      throw Error("parameters not loaded (network read with load_weights = false)",
                  ErrorContext{net.source_file, l.line, l.name});
    }
  }
  const int64_t n = target.lanes;
  std::vector<Op> ops = lower(net, target);
  const Plan pl = plan(net, ops, target, options);
  Emission em = emit(ops, pl, target, options.batch);
  Program prog;
  prog.target = target;
  prog.network = net.name;
  prog.batch = options.batch;
  prog.units = dependencies(em.emits);
  dispatch_order(em.emits);
  prog.notes = pl.notes;
  for (size_t k = 0; k < ops.size(); ++k) {
    CompiledOp c;
    c.name = pl.ops[k].name;
    c.kind = op_kind_name(ops[k].kind);
    c.detail = op_detail(ops[k], pl.ops[k]);
    c.layers = ops[k].layers;
    c.tag = pl.ops[k].tag;
    c.macs = ops[k].macs;
    prog.ops.push_back(c);
    for (const std::string& note : ops[k].notes) prog.notes.push_back(c.name + ": " + note);
  }

  // Assemble: CONFIG, the emitted instructions, END; data after them.
  const size_t count = em.emits.size() + 2;
  const uint64_t data = align_up(count * isa::kInstrBytes, kRegionAlign);
  isa::ConfigInstr cfg;
  cfg.version = target.version;
  cfg.pes = target.pes;
  cfg.lanes = target.lanes;
  cfg.banks = target.banks;
  cfg.bank_depth = target.bank_depth;
  cfg.pe_cache_depth = target.pe_cache_depth;
  cfg.param_depth = target.param_depth;
  prog.instructions.push_back(isa::encode(cfg));
  for (Emit& e : em.emits) {
    try {
      std::visit(
          [&](auto& in) {
            using T = std::decay_t<decltype(in)>;
            if constexpr (!std::is_same_v<T, ComputeInstr>) in.ext_addr += static_cast<int64_t>(data);
            prog.instructions.push_back(isa::encode(in));
          },
          e.instr);
    } catch (const Error& err) {
      throw Error(fmt::format("op '{}': {}", e.what, err.message()),
                  ErrorContext{net.source_file, 0, ""});
    }
  }
  prog.instructions.push_back(isa::encode(isa::EndInstr{}));

  const DataLayout& d = em.data;
  prog.image.assign(data + d.end, 0);
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    prog.instructions[i].to_bytes(&prog.image[i * isa::kInstrBytes]);
  }
  std::copy(pl.params.begin(), pl.params.end(), prog.image.begin() + data + d.params);
  std::copy(pl.weights.begin(), pl.weights.end(), prog.image.begin() + data + d.weights);
  if (data + d.end > (uint64_t{1} << target.axi_addr_width)) {
    throw Error(fmt::format("the memory image needs {} bytes, beyond the {}-bit address space",
                            data + d.end, target.axi_addr_width));
  }
  prog.regions.push_back({"instructions", 0, count * isa::kInstrBytes});
  prog.regions.push_back({"params", data + d.params, pl.params.size()});
  prog.regions.push_back({"weights", data + d.weights, pl.weights.size()});
  for (int i = 0; i < options.batch; ++i) {
    prog.regions.push_back({fmt::format("input{}", i), data + d.inputs[i], d.input_bytes});
  }
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    const std::string name = d.outputs.size() == 1 && ops.back().kind == OpKind::kFc
                                 ? std::string("output")
                                 : fmt::format("output{}", i);
    prog.regions.push_back({name, data + d.outputs[i], d.output_bytes});
  }

  // Input and output placement.
  const Op& first = ops.front();
  const OpPlan& fq = pl.ops.front();
  InputPlacement& in = prog.input;
  in.layout = pl.input_layout;
  in.shape = net.input_shape;
  for (uint64_t a : d.inputs) in.image_addr.push_back(data + a);
  if (in.layout == InputLayout::kFeatures) {
    in.groups = fq.fc_words;
  } else {
    in.groups = fq.g_in;
    in.rows = fq.map_h;
    in.cols = fq.map_w;
    in.kernel = first.kernel;
    in.stride = first.stride;
    in.pad = first.pad;
  }
  OutputPlacement& out = prog.output;
  const Op& last = ops.back();
  out.shape = net.output_shape();
  for (uint64_t a : d.outputs) out.image_addr.push_back(data + a);
  if (last.kind == OpKind::kFc) {
    out.layout = OutputLayout::kNeurons;
    out.map_shape = {last.out_c, 1, 1};
  } else {
    out.layout = OutputLayout::kMap;
    out.map_shape = {last.out_c, last.out_h, last.out_w};
    out.groups = ceil_div(last.out_c, n);
  }
  return prog;
}

void write_input(const Program& prog, std::vector<uint8_t>& memory, int image,
                 const Tensor<int8_t>& input) {
  check_image(prog, image, memory.size());
  const InputPlacement& in = prog.input;
  if (input.shape() != in.shape) {
    throw Error(fmt::format("input has shape {}, the program expects {}", shape_text(input.shape()),
                            shape_text(in.shape)));
  }
  const int64_t n = prog.target.lanes;
  const int64_t c_count = in.shape[0], h = in.shape[1], w = in.shape[2];
  uint8_t* base = &memory[in.image_addr[static_cast<size_t>(image)]];
  switch (in.layout) {
    case InputLayout::kFeatures:
      std::fill_n(base, in.groups * n, uint8_t{0});
      for (int64_t f = 0; f < input.size(); ++f) base[f] = static_cast<uint8_t>(input[f]);
      return;
    case InputLayout::kMap:
      for (int64_t g = 0; g < in.groups; ++g) {
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) {
            uint8_t* word = base + ((y * in.groups + g) * w + x) * n;
            for (int64_t lane = 0; lane < n; ++lane) {
              const int64_t c = g * n + lane;
              word[lane] = c < c_count ? static_cast<uint8_t>(input(c, y, x)) : 0;
            }
          }
        }
      }
      return;
    case InputLayout::kReordered:
      for (int64_t g = 0; g < in.groups; ++g) {
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < in.cols; ++x) {
            uint8_t* word = base + ((y * in.groups + g) * in.cols + x) * n;
            for (int64_t lane = 0; lane < n; ++lane) {
              const int64_t idx = g * n + lane;
              const int64_t kx = idx / c_count, c = idx % c_count;
              const int64_t ix = x * in.stride - in.pad + kx;
              const bool inside = kx < in.kernel && ix >= 0 && ix < w;
              word[lane] = inside ? static_cast<uint8_t>(input(c, y, ix)) : 0;
            }
          }
        }
      }
      return;
  }
}

Tensor<int8_t> read_output(const Program& prog, const std::vector<uint8_t>& memory, int image) {
  check_image(prog, image, memory.size());
  const OutputPlacement& out = prog.output;
  const int64_t n = prog.target.lanes;
  const int64_t c_count = out.map_shape[0], h = out.map_shape[1], w = out.map_shape[2];
  Tensor<int8_t> map({c_count, h, w});
  if (out.layout == OutputLayout::kNeurons) {
    const uint8_t* base = &memory[out.image_addr[0]];
    for (int64_t o = 0; o < c_count; ++o) map[o] = static_cast<int8_t>(base[o * n + image]);
  } else {
    const uint8_t* base = &memory[out.image_addr[static_cast<size_t>(image)]];
    for (int64_t c = 0; c < c_count; ++c) {
      const int64_t g = c / n, lane = c % n;
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          map(c, y, x) = static_cast<int8_t>(base[((g * h + y) * w + x) * n + lane]);
        }
      }
    }
  }
  return map.reshaped(out.shape);
}

void save_program(const Program& prog, const std::string& image_path,
                  const std::string& listing_path) {
  write_file(image_path, prog.image);
  if (!listing_path.empty()) write_file(listing_path, listing(prog));
}

std::vector<OpWork> op_work(const Program& prog) {
  std::vector<OpWork> work(prog.ops.size());
  const int64_t n = prog.target.lanes;
  const auto op_of = [&](int64_t tag) -> OpWork* {
    for (size_t k = 0; k < prog.ops.size(); ++k) {
      if (prog.ops[k].tag == tag) return &work[k];
    }
    return nullptr;
  };
  // Taps of a window row (or column) inside the input: what the walker visits.
  const auto inside = [](int64_t o, int64_t in, int64_t k, int64_t s, int64_t p) {
    const int64_t y0 = o * s - p;
    return std::max<int64_t>(0, std::min(k, in - y0) - std::max<int64_t>(0, -y0));
  };
  for (const isa::Instruction& in : prog.instructions) {
    const auto op = static_cast<isa::Opcode>(in.opcode_value());
    OpWork* w = op_of(isa::decode_header(in).tag);
    if (w == nullptr) continue;
    if (op == isa::Opcode::kLoad) {
      const isa::LoadInstr l = isa::decode_load(in);
      w->load_bytes += l.rows * l.row_words * n;
    } else if (op == isa::Opcode::kStore) {
      const isa::StoreInstr st = isa::decode_store(in);
      w->store_bytes += st.rows * st.row_words * n;
    } else if (op == isa::Opcode::kCompute) {
      const isa::ComputeInstr c = isa::decode_compute(in);
      ++w->computes;
      if (c.mode == isa::ComputeMode::kConv) {
        int64_t rows = 0, cols = 0;
        for (int64_t oy = 0; oy < c.out_h; ++oy) {
          rows += inside(oy, c.in_h, c.kernel_h, c.stride_h, c.pad_h);
        }
        for (int64_t ox = 0; ox < c.out_w; ++ox) {
          cols += inside(ox, c.in_w, c.kernel_w, c.stride_w, c.pad_w);
        }
        w->beats += rows * cols * c.in_groups;
        w->dense_beats += c.out_h * c.out_w * c.kernel_h * c.kernel_w * c.in_groups;
      } else if (c.mode == isa::ComputeMode::kFc) {
        w->beats += c.out_h * c.in_groups;
        w->dense_beats += c.out_h * c.in_groups;
      }
    }
  }
  return work;
}

std::string listing(const Program& prog) {
  const HwTarget& t = prog.target;
  std::string s;
  s += fmt::format("# Strata program for network '{}', batch {}\n", prog.network, prog.batch);
  s += fmt::format("# target '{}': P {} N {}, {} banks x {} words, PE cache {} words, {} "
                   "parameter channels, AXI {} bits\n",
                   t.name, t.pes, t.lanes, t.banks, t.bank_depth, t.pe_cache_depth, t.param_depth,
                   t.axi_data_width);
  s += "#\n# memory image regions:\n";
  for (const MemRegion& r : prog.regions) {
    s += fmt::format("#   {:<14} 0x{:08x}  {:>9} bytes\n", r.name, r.offset, r.size);
  }
  const char* layouts[] = {"map [row][group][col]", "reordered [row][group][out col]",
                           "flattened features"};
  s += fmt::format("# input {}: {}, {} word{} per pixel\n", shape_text(prog.input.shape),
                   layouts[static_cast<int>(prog.input.layout)], prog.input.groups,
                   prog.input.groups == 1 ? "" : "s");
  s += fmt::format("# output {}: {}\n", shape_text(prog.output.shape),
                   prog.output.layout == OutputLayout::kMap
                       ? "map [group][row][col] per image"
                       : "neuron o of image i at byte o*N + i");
  s += "#\n# ops (tag = first layer index):\n";
  for (const CompiledOp& op : prog.ops) {
    s += fmt::format("#   tag {:>3}  {:<24} {}\n", op.tag, op.name, op.detail);
  }
  if (!prog.notes.empty()) {
    s += "#\n# notes:\n";
    for (const std::string& note : prog.notes) s += "#   " + note + "\n";
  }
  s += fmt::format("#\n# dependency units: L2C {}, C2S {}, C2L {}, S2C {}, S2L {}\n#\n",
                   prog.units[0], prog.units[1], prog.units[2], prog.units[3], prog.units[4]);
  for (size_t i = 0; i < prog.instructions.size(); ++i) {
    s += fmt::format("{:>5}  0x{:06x}  {}\n", i, i * isa::kInstrBytes,
                     isa::disassemble(prog.instructions[i]));
  }
  return s;
}

}  // namespace strata
