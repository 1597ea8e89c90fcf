// SPDX-License-Identifier: Apache-2.0
// Pass 2, plan (passes.hpp): input layout, on-chip allocation, the parameter and
// weight images in hardware order; every target limit (docs/compiler.md,
// "On-chip allocation", "Limits and their errors").
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "passes.hpp"
#include "strata/error.hpp"
#include "strata/target_rules.hpp"

namespace strata::compiler {

namespace {

// Streamed weights: at most this many slots per convolution. Two hide a
// pass's LOAD behind the pass before it; the others absorb passes shorter
// than their LOAD (small maps) without holding the load engine.
constexpr int64_t kMaxWeightSlots = 4;

// "conv1+pool1+relu1": the names of the op's layers ("copy" for none).
std::string op_name(const OpBase& op, const Network& net) {
  std::vector<std::string> names;
  for (size_t i : op.layers) {
    names.push_back(i == op.part_layer ? net.layers[i].name + "[" + op.part + "]"
                                       : net.layers[i].name);
  }
  return names.empty() ? std::string("copy") : fmt::format("{}", fmt::join(names, "+"));
}

// Beats a convolution needs: only taps inside the image (the padding filter).
int64_t conv_beats(int64_t in_h, int64_t in_w, int64_t groups, int kh, int kw, int sh, int sw,
                   const Pads& pad, int64_t out_h, int64_t out_w) {
  const auto valid = [](int64_t o, int64_t in, int k, int s, int p) {
    const int64_t y0 = o * s - p;
    return std::min<int64_t>(k, in - y0) - std::max<int64_t>(0, -y0);
  };
  int64_t rows = 0, cols = 0;
  for (int64_t oy = 0; oy < out_h; ++oy) rows += valid(oy, in_h, kh, sh, pad.top);
  for (int64_t ox = 0; ox < out_w; ++ox) cols += valid(ox, in_w, kw, sw, pad.left);
  return rows * cols * groups;
}

void put_le(std::vector<uint8_t>& v, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) v.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void pad_to(std::vector<uint8_t>& v, uint64_t align) { v.resize(align_up(v.size(), align), 0); }

// Lane `lane` of word `wi` of PE `pe`'s weights in weight pass `pass` of a CONV
// op, in the order its dense schedule reads them (docs/isa.md, COMPUTE).
int8_t cache_weight(const ConvOp& op, const ConvPlan& q, const HwTarget& t, int64_t pass,
                    int64_t pe, int64_t wi, int64_t lane) {
  const int64_t n = t.lanes, co = pass * t.pes + pe;
  const int64_t cout = op.out_c, cin = op.in_c, k_side = op.kernel;
  int8_t v = 0;
  if (op.kind == ConvKind::kMul) {
    // The selector words (ir.hpp, ConvOp::vector_src): PE 0's word wi holds 1 in lane wi.
    return static_cast<int8_t>(pe == 0 && lane == wi ? 1 : 0);
  }
  if (co < cout) {
    if (q.reorder) {
      const int64_t ky = wi / q.g_in, idx = (wi % q.g_in) * n + lane;
      if (idx < k_side * cin) v = op.weights(co, idx % cin, ky, idx / cin);
    } else if (op.depthwise_mode) {
      // DEPTHWISE: byte `lane` of word wi is tap t = wi * N + lane =
      // ky * max_pool_kernel + kx (docs/isa.md); taps outside the kernel 0.
      const int64_t tap = wi * n + lane, kmax = t.max_pool_kernel;
      const int64_t ky = tap / kmax, kx = tap % kmax;
      if (ky < k_side && kx < k_side) v = op.weights(co, 0, ky, kx);
    } else {
      // Grouped ops: the weights' second index is the lane within the
      // pass's groups (ir.hpp, ConvOp).
      const int64_t ky = wi / (k_side * q.g_pass), kx = (wi / q.g_pass) % k_side;
      const int64_t c = (wi % q.g_pass) * n + lane;
      if (op.kind == ConvKind::kGlobalAvgPool) {
        v = op.weights(co, lane, 0, 0);  // the same weight at every position
      } else if (c < op.weights.shape()[1]) {
        v = op.weights(co, c, ky, kx);
      }
    }
  }
  return v;
}

// Sparse targets: packs every weight pass of a CONV op (intra-tile moves and
// inter-tile moves to a neighbouring PE, proven exact by check_packed) and
// keeps the packing when its beats, packed_rows per output pixel, are fewer
// than the dense schedule's, which skips the taps in the padding.
void pack_conv(const ConvOp& op, ConvPlan& q, const HwTarget& t, int64_t in_h, int64_t in_w) {
  const int p = t.pes, n = t.lanes;
  const int words = static_cast<int>(q.per_pass);
  std::vector<PackedSchedule> packing;
  int64_t longest = 1, zeros = 0;
  for (int64_t pass = 0; pass < q.weight_passes; ++pass) {
    DenseSchedule dense(p, words, n);
    for (int pe = 0; pe < p; ++pe) {
      for (int wi = 0; wi < words; ++wi) {
        for (int lane = 0; lane < n; ++lane) {
          dense.at(pe, wi, lane) = cache_weight(op, q, t, pass, pe, wi, lane);
          zeros += dense.at(pe, wi, lane) == 0;
        }
      }
    }
    packing.push_back(pack_sparse(dense));
    check_packed(dense, packing.back());
    longest = std::max<int64_t>(longest, packing.back().packed_cycles());
  }
  const int64_t out_h = (in_h + q.pad.top + q.pad.bottom - q.kh) / q.sh + 1;
  const int64_t out_w = (in_w + q.pad.left + q.pad.right - q.kw) / q.sw + 1;
  const int64_t dense_beats = q.weight_passes * conv_beats(in_h, in_w, q.g_pass, q.kh, q.kw, q.sh,
                                                           q.sw, q.pad, out_h, out_w);
  PackedConvWalk walk;
  walk.in_h = in_h;
  walk.in_w = in_w;
  walk.out_h = out_h;
  walk.out_w = out_w;
  walk.groups = q.g_pass;
  walk.kernel_h = q.kh;
  walk.kernel_w = q.kw;
  walk.stride_h = q.sh;
  walk.stride_w = q.sw;
  walk.pad_top = q.pad.top;
  walk.pad_left = q.pad.left;
  // The packed walk's cost: its beats and, per pass (at least one COMPUTE
  // each), the schedule scan and pipeline fill before the first beat.
  int64_t packed_cost = 0;
  for (const PackedSchedule& ps : packing) {
    std::vector<int64_t> bases;
    for (const PackedCycle& c : ps.cycles) bases.push_back(c.base);
    if (bases.empty()) bases.push_back(0);  // the framing row of an all-zero pass
    packed_cost +=
        packed_conv_beats(walk, bases) + static_cast<int64_t>(bases.size()) + kPackedStartCycles;
  }
  if (packed_cost >= dense_beats) return;
  q.packed = true;
  q.dense_per_pass = q.per_pass;
  q.weight_slots = q.weight_passes * p * words * n;
  q.zero_slots = zeros;
  q.per_pass = longest;
  q.packing = std::move(packing);
}

// Lane `lane` of packed row `k` of PE `pe` in weight pass `pass`; rows past the
// pass's own are zero.
int8_t packed_weight(const ConvPlan& q, int64_t pass, int64_t pe, int64_t k, int64_t lane) {
  const PackedSchedule& s = q.packing[static_cast<size_t>(pass)];
  if (k >= s.packed_cycles()) return 0;
  return s.cycles[static_cast<size_t>(k)].value[static_cast<size_t>(pe * s.lanes + lane)];
}

// Split passes (docs/compiler.md, "Split passes"): a pass whose `per_pass` weight
// words exceed the `cap` free PE-cache words runs as chunks of its input groups as the
// COMPUTE counts them (a global pool's: the words of its map), each chunk's weights in
// the PE caches in turn. Chunks of at most half the free words when a group's taps fit
// there, so that the next chunk's weights load while one computes. A packed pass is
// unpacked first (partial sums are not allowed on a packed CONV). False when one
// group's weights do not fit.
void unpack(ConvPlan& q) {
  q.packed = false;
  q.per_pass = q.dense_per_pass;
  q.dense_per_pass = 0;
  q.weight_slots = q.zero_slots = 0;
  q.packing.clear();
}

bool split_conv(const ConvOp& op, ConvPlan& q, int64_t cap) {
  if (op.depthwise_mode || op.kind == ConvKind::kMul) return false;
  if (q.packed) {
    unpack(q);
    if (q.per_pass <= cap) return true;
  }
  const bool global = op.kind == ConvKind::kGlobalAvgPool;
  q.taps = global ? 1 : int64_t{q.kh} * q.kw;
  q.run_groups = global ? int64_t{q.kh} * q.kw * q.g_pass : q.g_pass;
  q.chunks_share_weights = global;  // loaded once: no second slot to fill meanwhile
  if (q.taps > cap) return false;
  const int64_t most = q.taps <= cap / 2 && !global ? cap / 2 / q.taps : cap / q.taps;
  q.chunks = ceil_div(q.run_groups, most);
  q.chunk_groups = ceil_div(q.run_groups, q.chunks);
  q.per_pass = q.taps * q.chunk_groups;
  return true;
}

// Split neurons (docs/compiler.md, "Split passes"): chunks of at most `most` words of
// each neuron's weights, so that a bank holds a tile of up to max(N, bank_depth / 32)
// neurons (the partial sums cost 4 beats per neuron and chunk; bank_depth / 32 keeps
// them below an eighth of the weights' beats).
void split_fc(FcPlan& q, int64_t out_c, int64_t most, const HwTarget& t) {
  const int64_t n = t.lanes;
  int64_t neurons =
      std::min<int64_t>({out_c, t.param_depth, std::max<int64_t>(n, t.bank_depth / 32)});
  if (neurons < out_c && neurons >= n) neurons -= neurons % n;
  const int64_t words = std::min(most, t.bank_depth / neurons);
  q.chunk_words = words;
  if (words < 1) return;
  q.chunks = ceil_div(q.fc_words, words);
  q.chunk_words = ceil_div(q.fc_words, q.chunks);
}

// The word of the unsplit pass that word `wi` of chunk `chunk` holds ((tap * G + g) for
// group g of G), or -1 past the chunk's words.
int64_t unsplit_word(const ConvPlan& q, int64_t chunk, int64_t wi) {
  const int64_t groups = q.chunk_size(chunk);
  if (wi >= q.taps * groups) return -1;
  return wi / groups * q.run_groups + chunk * q.chunk_groups + wi % groups;
}

// A packed op's control words and schedules (docs/isa.md, LOAD CONTROL; the
// word formats in strata/isa.hpp): per pass, P x per_pass control words; then
// per pass, per_pass schedule words. Rows past a pass's own are zero.
void put_controls(ConvPlan& q, const HwTarget& t, std::vector<uint8_t>& image) {
  const int64_t p = t.pes, n = t.lanes;
  q.controls_ext = image.size();
  for (int64_t pass = 0; pass < q.weight_passes; ++pass) {
    const PackedSchedule& s = q.packing[static_cast<size_t>(pass)];
    for (int64_t pe = 0; pe < p; ++pe) {
      for (int64_t k = 0; k < q.per_pass; ++k) {
        std::vector<uint8_t> word(static_cast<size_t>(n), 0);
        if (k < s.packed_cycles()) {
          const PackedCycle& c = s.cycles[static_cast<size_t>(k)];
          for (int64_t m = 0; m < n; ++m) {
            word[static_cast<size_t>(m)] =
                static_cast<uint8_t>(c.sel[static_cast<size_t>(pe * n + m)]);
          }
          const int64_t dest = c.dest[static_cast<size_t>(pe)];
          isa::set_control_dest(word.data(), dest == pe                 ? isa::kDestOwn
                                             : dest == (pe + p - 1) % p ? isa::kDestPrev
                                                                        : isa::kDestNext);
        }
        image.insert(image.end(), word.begin(), word.end());
      }
    }
  }
  for (int64_t pass = 0; pass < q.weight_passes; ++pass) {
    const PackedSchedule& s = q.packing[static_cast<size_t>(pass)];
    for (int64_t k = 0; k < q.per_pass; ++k) {
      std::vector<uint8_t> word(static_cast<size_t>(n), 0);
      if (k < s.packed_cycles()) {
        const int64_t b = s.cycles[static_cast<size_t>(k)].base;
        isa::set_schedule_entry(word.data(),
                                {b / (q.g_pass * q.kw), (b / q.g_pass) % q.kw, b % q.g_pass});
      }
      image.insert(image.end(), word.begin(), word.end());
    }
  }
}

// Convolution weights in the PE caches (docs/compiler.md, "On-chip allocation"):
// every op's weight blocks resident when they fit the `cap` free words, else each
// pass (or chunk) streamed through slots of its size.
void place_weights(Plan& pl, int64_t cap) {
  int64_t total = 0, largest = 0;
  for (const OpPlan& q : pl.ops) {
    const auto* cq = std::get_if<ConvPlan>(&q);
    if (cq == nullptr) continue;
    total += cq->weight_blocks() * cq->per_pass;
    largest = std::max(largest, cq->per_pass);
  }
  pl.weights_resident = total <= cap;
  if (pl.weights_resident) {
    int64_t next = 0;
    for (OpPlan& q : pl.ops) {
      auto* cq = std::get_if<ConvPlan>(&q);
      if (cq == nullptr) continue;
      cq->cache_base = next;
      next += cq->weight_blocks() * cq->per_pass;
    }
    if (total > 0) {
      pl.notes.push_back(
          fmt::format("convolution weights: {} words per PE, resident (loaded "
                      "once; {} free)",
                      total, cap));
    }
  } else {
    int64_t most = 0;
    for (OpPlan& q : pl.ops) {
      auto* cq = std::get_if<ConvPlan>(&q);
      if (cq == nullptr) continue;
      cq->cache_base = -1;
      cq->slots = std::clamp<int64_t>(cap / cq->per_pass, 2, kMaxWeightSlots);
      cq->slots_overlap = 2 * cq->per_pass > cap;
      most = std::max(most, cq->slots);
    }
    pl.notes.push_back(fmt::format(
        "convolution weights: {} words per PE > {} free: streamed per pass through up to {} "
        "slots of the pass's size{}",
        total, cap, most,
        2 * largest > cap
            ? fmt::format(" (passes of more than {} words: two overlapping slots)", cap / 2)
            : ""));
  }
}

PlanBase& base_of(OpPlan& q) {
  return std::visit([](auto& p) -> PlanBase& { return p; }, q);
}
MapInput* map_input_of(OpPlan& q) {
  if (auto* c = std::get_if<ConvPlan>(&q)) return c;
  if (auto* p = std::get_if<PoolPlan>(&q)) return p;
  return nullptr;
}

// Maps in external memory and the tiles of every op that does not run whole
// (docs/compiler.md, "Large maps"). A map stays on chip when the op that reads
// it runs whole; a tiled op reads its input from external memory, tile by tile,
// through two alternating buffers, and writes its results into the whole
// output map on chip, or through two alternating buffers to external memory.
// A result is stored to external memory for its readers (`shared`) unless its
// one reader is the op right after it.
//
// A dense convolution none of whose tiles fits the buffers (too many input groups
// per pixel) runs split over chunks of its input groups, each (tile, pass, chunk)
// loading only its chunk's groups (docs/compiler.md, "Split passes"): the largest
// chunk whose tiles fit. Returns whether that changed an op's weights.
template <class Fail>
bool plan_tiles(const std::vector<Op>& ops, const std::vector<bool>& shared, const HwTarget& t,
                Plan& pl, const Fail& fail) {
  bool weights_changed = false;
  const int64_t n = t.lanes;
  for (size_t k = 0; k < ops.size(); ++k) {
    MapInput* m = map_input_of(pl.ops[k]);
    if (m == nullptr) continue;
    const PlanBase& b = base(pl.ops[k]);
    const MapInput* next = k + 1 < ops.size() ? map_input(pl.ops[k + 1]) : nullptr;
    m->out_external = b.is_final || (next != nullptr && next->tiled) || shared[k];
    if (!m->tiled) continue;
    const OpBase& op = base(ops[k]);
    const bool map_out = !m->out_external && b.dst == Dst::kBank;
    const int need = 2 + (m->out_external ? 2 : map_out ? 1 : 0);
    const int64_t half = t.bank_depth / 2;
    TileBuffers& buf = m->buffers;
    buf.in_words = t.bank_depth;
    buf.out_words = m->out_external ? t.bank_depth : 0;
    if (t.banks < need) {
      const int spare = t.banks - (m->out_external ? 0 : map_out ? 1 : 0);
      if (spare < 1 || (m->out_external && t.banks < 2)) {
        fail(
            op, "compute.dst_bank_overlap",
            fmt::format("running it in tiles needs two banks, the target has {} (banks)", t.banks));
      }
      if (m->out_external) {
        buf.out_shared = true;
        buf.out_words = half;
        buf.in_shared = t.banks < 3;
      } else {
        buf.in_shared = spare < 2;
      }
      if (buf.in_shared) buf.in_words = half;
    }
    TilingProblem tp;
    tp.rows = m->rows;
    tp.cols = m->cols;
    tp.in_groups = m->g_in;
    tp.out_groups = m->out_groups;
    const auto* cq = std::get_if<ConvPlan>(&pl.ops[k]);
    tp.pass_groups = cq != nullptr ? cq->g_pass : m->g_in;
    const auto* conv = std::get_if<ConvOp>(&ops[k]);
    tp.grouped = conv != nullptr && conv->pass_groups > 0;
    if (tp.grouped) tp.in_groups = cq->g_pass;
    tp.passes = cq != nullptr ? cq->passes : 1;
    tp.pool_op = cq == nullptr;
    tp.window_beats = conv != nullptr && conv->depthwise_mode ? t.depthwise_weight_words() : 0;
    tp.in_buf_words = buf.in_words;
    tp.out_buf_words = buf.out_words;
    tp.line_buffer = t.max_image_width;
    tp.strips_allowed = t.beat_bytes() <= n && n % t.beat_bytes() == 0;
    if (conv != nullptr && conv->kind == ConvKind::kGlobalAvgPool &&
        m->map_h * m->map_w * cq->g_pass > buf.in_words) {
      // A global pool whose map (one group) exceeds an input buffer: chunks of whole
      // rows that fit a buffer and the weights (split or not: every chunk reads the
      // first words of the pass's), each loaded on its own (docs/compiler.md, "Split
      // passes").
      ConvPlan& gq = std::get<ConvPlan>(pl.ops[k]);
      const int64_t words = std::min(buf.in_words, gq.chunks > 1 ? gq.chunk_groups : gq.per_pass);
      const int64_t rows = words / m->map_w;
      if (rows < 1 || gq.g_pass != 1) {
        fail(op, "compute.in_range",
             fmt::format("a global pool's map rows of {} words exceed an input buffer of {} "
                         "words (bank_depth) or the free PE-cache words",
                         m->map_w, buf.in_words));
      }
      gq.chunk_input = true;
      gq.chunks_share_weights = true;
      gq.taps = 1;
      gq.run_groups = m->map_h * m->map_w;
      gq.chunk_groups = rows * m->map_w;
      gq.chunks = ceil_div(gq.run_groups, gq.chunk_groups);
      pl.notes.push_back(fmt::format(
          "{}: a map of {} words exceeds an input buffer of {}: loaded in {} chunks of {} rows "
          "({} words), the partial sums through a spill buffer",
          b.name, gq.run_groups, buf.in_words, gq.chunks, rows, gq.chunk_groups));
    }
    tp.weight_words = cq != nullptr && !pl.weights_resident
                          ? cq->per_pass * cq->weight_blocks() / cq->weight_passes
                          : 0;
    if (cq != nullptr && cq->chunk_input) {
      tp.in_buf_words = std::max(tp.in_buf_words, m->map_h * m->map_w * tp.in_groups);
    }
    if (cq != nullptr && cq->chunks > 1) {
      // Split passes: the partial sums after the results in each output buffer when
      // the results are stored, else in a bank of their own.
      ConvPlan& sq = std::get<ConvPlan>(pl.ops[k]);
      tp.chunks = cq->chunks;
      tp.spill_words = 4;
      sq.spill_in_out_buffer = m->out_external;
      if (!m->out_external) {
        const int64_t used = (buf.in_shared ? 1 : 2) + (map_out ? 1 : 0);
        if (t.banks <= used) {
          fail(op, "compute.dst_bank_overlap",
               fmt::format("its split passes need a bank for their partial sums beside {} for "
                           "its tiles, the target has {} (banks)",
                           used, t.banks));
        }
        tp.spill_buf_words = t.bank_depth;
      }
    }
    tp.pes = t.pes;
    tp.words_per_beat_inv = std::max<int64_t>(1, ceil_div(n, t.beat_bytes()));
    std::string why;
    m->tiling = choose_tiling(tp, &why);
    if (m->tiling.bands.empty() && conv != nullptr && conv->pass_groups == 0 &&
        conv->kind != ConvKind::kMul && op.srcs.size() == 1 && op.parts.empty()) {
      ConvPlan& sq = std::get<ConvPlan>(pl.ops[k]);
      const int64_t taps = int64_t{sq.kh} * sq.kw, groups = sq.g_pass;
      int64_t most = std::min(groups - 1, pl.weight_words / taps);
      if (sq.chunks > 1) most = std::min(most, sq.chunk_groups);
      const int64_t used = (buf.in_shared ? 1 : 2) + (map_out ? 1 : 0);
      for (int64_t cg = most; cg >= 1 && (m->out_external || t.banks > used); --cg) {
        TilingProblem chunked = tp;
        chunked.chunks = ceil_div(groups, cg);
        const int64_t size = ceil_div(groups, chunked.chunks);
        chunked.in_groups = chunked.pass_groups = size;
        chunked.grouped = true;  // every (tile, pass, chunk) loads its own groups
        chunked.spill_words = 4;
        chunked.spill_buf_words = m->out_external ? 0 : t.bank_depth;
        chunked.weight_words = taps * size * chunked.chunks;
        std::string chunk_why;
        TilingChoice c = choose_tiling(chunked, &chunk_why);
        if (c.bands.empty()) continue;
        if (sq.packed) unpack(sq);
        sq.taps = taps;
        sq.run_groups = groups;
        sq.chunks = chunked.chunks;
        sq.chunk_groups = size;
        sq.per_pass = taps * size;
        sq.chunks_share_weights = false;
        sq.chunk_input = true;
        sq.spill_in_out_buffer = m->out_external;
        m->tiling = std::move(c);
        weights_changed = true;
        pl.notes.push_back(fmt::format(
            "{}: no tile of its {} input groups fits the buffers: split into {} chunks of {} "
            "input group{} ({} words), each tile loading one chunk's groups at a time, the "
            "partial sums through a spill buffer",
            b.name, groups, sq.chunks, size, size == 1 ? "" : "s", sq.per_pass));
        break;
      }
    }
    if (m->tiling.bands.empty()) {
      fail(op, "compute.in_range",
           fmt::format("input feature map [{}][{}][{}] ({} word{} per pixel) cannot be split "
                       "into tiles that fit: {}; a buffer holds {} words (bank_depth), a pooled "
                       "row {} pixels (max_image_width)",
                       op.in_c, op.in_h, op.in_w, m->g_in, m->g_in == 1 ? "" : "s", why,
                       buf.in_words, t.max_image_width));
    }
    const TilingChoice& c = m->tiling;
    pl.notes.push_back(fmt::format(
        "{}: {} band{} x {} strip{} ({}; input {} words per buffer{}, results {}), {} beats, "
        "{} external words, {} cycles predicted",
        b.name, c.bands.size(), c.bands.size() == 1 ? "" : "s", c.strips.size(),
        c.strips.size() == 1 ? "" : "s",
        c.pass_outer ? "every tile per weight pass" : "every weight pass per tile", buf.in_words,
        buf.in_shared ? ", two in one bank" : "",
        m->out_external
            ? "stored to external memory"
            : (b.dst == Dst::kBank ? "into the whole map in a bank" : "into the PE caches"),
        c.compute_beats, c.ext_words, c.predicted_cycles));
  }
  return weights_changed;
}

}  // namespace

Plan plan(const Network& net, const std::vector<Op>& ops, const HwTarget& t,
          const CompileOptions& o) {
  Plan pl;
  const int64_t n = t.lanes, p = t.pes;
  // A limit of the target: the message of the target rule (strata/target_rules.hpp)
  // that the op's instructions would break, naming the layer.
  const auto fail = [&](const OpBase& op, std::string_view rule, const std::string& msg) {
    const Layer* l = op.main;
    throw Error(violation_message(target_rule(rule), msg),
                ErrorContext{net.source_file, l != nullptr ? l->line : 0,
                             l != nullptr ? l->name : std::string()});
  };

  // Graphs (docs/compiler.md, "Graphs"): an op's result that is read by
  // another op than the next one, or by two, is shared: stored to external
  // memory, where every reader loads it from, tile by tile.
  std::vector<std::vector<int>> readers(ops.size());
  bool input_shared = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int s : base(ops[k]).srcs) {
      if (s == kInputSrc) {
        input_shared = input_shared || k != 0;
      } else {
        readers[static_cast<size_t>(s)].push_back(static_cast<int>(k));
      }
    }
  }
  std::vector<bool> shared(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    shared[k] = !readers[k].empty() && readers[k] != std::vector<int>{static_cast<int>(k) + 1};
  }
  // A mul reads its vector from external memory (emit_mul_vector).
  for (const Op& op : ops) {
    const auto* conv = std::get_if<ConvOp>(&op);
    if (conv != nullptr && conv->kind == ConvKind::kMul) {
      shared[static_cast<size_t>(conv->vector_src)] = true;
    }
  }
  // A network output other than the last op's result is stored to external
  // memory like a shared map (docs/compiler.md, "Several outputs").
  for (size_t k = 0; k + 1 < ops.size(); ++k) {
    if (!base(ops[k]).outputs.empty()) shared[k] = true;
  }
  // An op that loads its input in parts (concat, slice, upsample) reads every
  // source from external memory.
  for (const Op& op : ops) {
    if (base(op).parts.empty()) continue;
    for (int s : base(op).srcs) {
      if (s >= 0) shared[static_cast<size_t>(s)] = true;
    }
  }

  // Destinations and FC feature orders: a plan of the op's kind each.
  pl.ops.reserve(ops.size());
  std::vector<int> tags;
  int extra_tags = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpBase& b = base(ops[k]);
    PlanBase common;
    common.name = op_name(b, net);
    common.tag = b.layers.empty() ? 0 : static_cast<int>(b.layers.front());
    // The parts of a layer that several ops compute share its first layer: each
    // part after the first takes the next number after the network's layers, so
    // every op has its own tag (the performance counters and op_work key on it).
    if (std::find(tags.begin(), tags.end(), common.tag) != tags.end()) {
      common.tag = static_cast<int>(net.layers.size()) + extra_tags++;
    }
    tags.push_back(common.tag);
    common.is_final = k + 1 == ops.size();
    const bool next_fc = !common.is_final && is<FcOp>(ops[k + 1]);
    if (const auto* fc = std::get_if<FcOp>(&ops[k])) {
      const FcOp& op = *fc;
      FcPlan q;
      static_cast<PlanBase&>(q) = common;
      q.dst = next_fc ? Dst::kTranspose : Dst::kBank;
      FeatureOrder& f = q.order;
      f.features = op.features;
      const FcPlan* prev_fc = k > 0 ? std::get_if<FcPlan>(&pl.ops[k - 1]) : nullptr;
      if (k > 0 && prev_fc == nullptr) {
        const OpBase& prev = base(ops[k - 1]);
        f.from_map = true;
        f.c = prev.out_c;
        f.h = prev.out_h;
        f.w = prev.out_w;
        q.fc_words = ceil_div(f.c, n) * f.h * f.w;
      } else if (prev_fc != nullptr && prev_fc->tile < n &&
                 prev_fc->tile < base(ops[k - 1]).out_c) {
        f.per_word = prev_fc->tile;
        q.fc_words = ceil_div(op.features, f.per_word);
      } else {
        q.fc_words = ceil_div(op.features, n);
      }
      // Split neurons (docs/compiler.md, "Split passes"): a neuron's weights longer than
      // a bank, or features longer than a PE cache, loaded chunk by chunk (half the cache,
      // the other half for the next layer's features) from the network input, or from the
      // previous op's map, which then stores it ([row][group][col]) instead of writing
      // the PE caches.
      q.features_streamed = (k == 0 || f.from_map) && q.fc_words > t.pe_cache_depth;
      if (q.features_streamed && f.from_map) {
        f.row_major = true;
        base_of(pl.ops[k - 1]).dst = Dst::kBank;
        shared[k - 1] = true;
      }
      if (q.fc_words > t.bank_depth || q.features_streamed) {
        split_fc(q, op.out_c, q.features_streamed ? t.pe_cache_depth / 2 : t.bank_depth, t);
        const int64_t banks = (q.dst == Dst::kBank ? 1 : 0) + 2;
        if (q.chunk_words < 1 || t.banks < banks) {
          fail(op, "compute.in_range",
               fmt::format("one neuron's weights need {} words ({} features), a bank holds {} "
                           "(bank_depth); split, they need {} banks, the target has {} (banks)",
                           q.fc_words, op.features, t.bank_depth, banks, t.banks));
        }
        pl.notes.push_back(fmt::format(
            "{}: one neuron's weights need {} words{}: split into {} chunks of {} words, the "
            "partial sums through a spill bank{}",
            q.name, q.fc_words,
            q.fc_words > t.bank_depth ? fmt::format(", a bank holds {}", t.bank_depth) : "",
            q.chunks, q.chunk_words,
            q.features_streamed
                ? fmt::format(", each chunk's features loaded into the PE caches (the "
                              "features need {} words, a PE cache holds {})",
                              q.fc_words, t.pe_cache_depth)
                : ""));
      }
      // Neurons per tile (one bank of weights). Tiles of whole N-neuron words, so that each
      // tile's transposed results start at lane 0 of a PE-cache word; a tile narrower than
      // a word starts a word of its own (the next layer's FeatureOrder::per_word).
      // More neurons than the parameter RAM holds: each tile loads its own. Split: at
      // most a bank of partial sums (4 words per neuron).
      q.tile = std::min<int64_t>({op.out_c, t.bank_depth / q.chunk_size(0), t.param_depth});
      if (q.chunks > 1) q.tile = std::min<int64_t>(q.tile, t.bank_depth / 4);
      if (q.tile < op.out_c && q.tile >= n) q.tile -= q.tile % n;
      q.params_per_pass = op.out_c > t.param_depth;
      pl.ops.emplace_back(std::move(q));
    } else if (is<ConvOp>(ops[k])) {
      ConvPlan q;
      static_cast<PlanBase&>(q) = common;
      q.dst = next_fc ? Dst::kPeCache : Dst::kBank;
      pl.ops.emplace_back(std::move(q));
    } else {
      PoolPlan q;
      static_cast<PlanBase&>(q) = common;
      q.dst = next_fc ? Dst::kPeCache : Dst::kBank;
      pl.ops.emplace_back(std::move(q));
    }
  }

  // Input layout: reorder the first convolution's input when it saves beats.
  if (const auto* fq = std::get_if<FcPlan>(&pl.ops.front())) {
    pl.input_layout = InputLayout::kFeatures;
    pl.input_words = fq->fc_words;
  } else {
    pl.input_layout = InputLayout::kMap;
    const auto* conv = std::get_if<ConvOp>(&ops.front());
    if (conv != nullptr && conv->kind == ConvKind::kConv && conv->in_c < n && !input_shared &&
        conv->parts.empty()) {
      ConvPlan& fq = std::get<ConvPlan>(pl.ops.front());
      const ConvOp& first = *conv;
      const int64_t g = ceil_div(first.in_c, n);
      const int k = first.kernel;
      const int64_t g2 = ceil_div(int64_t{k} * first.in_c, n);
      const int64_t plain = conv_beats(first.in_h, first.in_w, g, k, k, first.stride, first.stride,
                                       first.pad, first.conv_h, first.conv_w);
      const int64_t reordered =
          conv_beats(first.in_h, first.conv_w, g2, k, 1, first.stride, 1,
                     Pads{first.pad.top, 0, first.pad.bottom, 0}, first.conv_h, first.conv_w);
      const bool want =
          o.reorder == Reorder::kAlways || (o.reorder == Reorder::kAuto && reordered < plain);
      if (want) {
        fq.reorder = true;
        pl.input_layout = InputLayout::kReordered;
        pl.notes.push_back(fmt::format(
            "{}: input reordered on the host ({} taps x {} channels per word, {} word{} per "
            "pixel): {} beats per image instead of {}",
            fq.name, k, first.in_c, g2, g2 == 1 ? "" : "s", reordered, plain));
      } else if (o.reorder != Reorder::kNever) {
        pl.notes.push_back(
            fmt::format("{}: plain input layout ({} beats per image; reordered "
                        "would need {})",
                        fq.name, plain, reordered));
      }
    }
  }

  // Geometry, sizes and the limits of every op.
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpBase& op = base(ops[k]);
    if (auto* fq = std::get_if<FcPlan>(&pl.ops[k])) {
      fq->param_entries = op.out_c;
      // More results than a bank holds (the last layer's, stored tile by tile): each
      // tile's into one of two halves of the output bank in turn (FcPlan::result_slots).
      if (fq->dst == Dst::kBank && op.out_c > t.bank_depth) {
        fq->result_slots = 2 * fq->tile <= t.bank_depth ? 2 : 1;
        pl.notes.push_back(fmt::format(
            "{}: {} results exceed a bank of {} words: each tile's stored from {} in turn",
            fq->name, op.out_c, t.bank_depth,
            fq->result_slots == 2 ? "two slots of the bank" : "the start of the bank"));
      }
      continue;
    }
    MapInput& m = *map_input_of(pl.ops[k]);
    const PlanBase& b = base(pl.ops[k]);
    m.g_in = ceil_div(op.in_c, n) * static_cast<int64_t>(op.srcs.size());
    if (!op.parts.empty()) {
      m.g_in = 0;
      for (const InputPart& part : op.parts) m.g_in += part.groups;
    }
    m.map_h = op.in_h;
    m.map_w = op.in_w;
    m.out_groups = ceil_div(op.out_c, n);
    if (const auto* conv = std::get_if<ConvOp>(&ops[k])) {
      ConvPlan& q = std::get<ConvPlan>(pl.ops[k]);
      q.kh = q.kw = conv->kernel;
      if (conv->kind == ConvKind::kGlobalAvgPool) {  // one window over the whole map
        q.kh = static_cast<int>(op.in_h);
        q.kw = static_cast<int>(op.in_w);
      }
      q.sh = q.sw = conv->stride;
      q.pad = conv->pad;
      if (q.reorder) {
        q.g_in = ceil_div(int64_t{conv->kernel} * op.in_c, n);
        q.map_w = conv->conv_w;
        q.kw = 1;
        q.sw = 1;
        q.pad.left = q.pad.right = 0;
      }
      q.g_pass = conv->pass_groups > 0 ? conv->pass_groups : q.g_in;
      q.per_pass = int64_t{q.kh} * q.kw * q.g_pass;
      if (conv->depthwise_mode) {
        q.per_pass = t.depthwise_weight_words();
        if (q.dst != Dst::kBank) {
          throw Error(
              fmt::format("internal: {} runs in DEPTHWISE mode into the PE caches", q.name));
        }
      }
      q.passes = ceil_div(op.out_c, p);
      q.weight_passes = conv->kind == ConvKind::kGlobalAvgPool ? 1 : q.passes;
      q.param_entries = q.passes * p;
      if (conv->kind == ConvKind::kMul) {
        // Its weights are the N selector words; the passes' come from the vector.
        q.per_pass = n;
        q.weight_passes = 1;
        q.param_entries += p;  // the selector CONVs' identity channels
      }
      if (t.sparse && !conv->depthwise_mode && conv->kind != ConvKind::kGlobalAvgPool) {
        pack_conv(*conv, q, t, m.map_h, m.map_w);
      }
    }
    // The op's windows along each axis, as run: a POOL op is a 1 x 1 window
    // followed by its pool.
    const Pooling* pool = pooling(ops[k]);
    // `row`: the rows axis (top / bottom padding), else the columns (left / right).
    const auto axis = [&](bool row, int64_t in, int64_t conv_out, int kernel, int stride,
                          const Pads& pad) {
      AxisGeometry a;
      a.in = in;
      a.kernel = kernel;
      a.stride = stride;
      a.pad_before = row ? pad.top : pad.left;
      a.pad_after = row ? pad.bottom : pad.right;
      a.conv_out = conv_out;
      a.out = conv_out;
      if (pool != nullptr) {
        a.pooled = true;
        a.pool_kernel = pool->window.kernel;
        a.pool_stride = pool->window.stride;
        a.pool_pad_before = row ? pool->window.pad.top : pool->window.pad.left;
        a.pool_pad_after = row ? pool->window.pad.bottom : pool->window.pad.right;
        a.pool_ceil = pool->window.ceil_mode;
        a.out = window_count(conv_out, a.pool_kernel, a.pool_stride, a.pool_pad_before,
                             a.pool_pad_after, a.pool_ceil);
      }
      return a;
    };
    if (const auto* cq = std::get_if<ConvPlan>(&pl.ops[k])) {
      const ConvOp& conv = std::get<ConvOp>(ops[k]);
      m.rows = axis(true, m.map_h, conv.conv_h, cq->kh, cq->sh, cq->pad);
      m.cols = axis(false, m.map_w, conv.conv_w, cq->kw, cq->sw, cq->pad);
    } else {
      m.rows = axis(true, m.map_h, m.map_h, 1, 1, Pads{});
      m.cols = axis(false, m.map_w, m.map_w, 1, 1, Pads{});
    }
    if (m.rows.out != op.out_h || m.cols.out != op.out_w) {
      throw Error(fmt::format("internal: {} computes [{}][{}], its layers [{}][{}]", b.name,
                              m.rows.out, m.cols.out, op.out_h, op.out_w));
    }
    // Whole when its input and output maps fit a bank and a pooled row fits the
    // line buffer; otherwise in tiles.
    const int64_t in_words = m.g_in * m.map_h * m.map_w;
    const int64_t out_words = m.out_groups * op.out_h * op.out_w;
    // DEPTHWISE: its input rows pass through the line buffer.
    const auto* dw = std::get_if<ConvOp>(&ops[k]);
    m.tiled = in_words > t.bank_depth || (b.dst == Dst::kBank && out_words > t.bank_depth) ||
              (pool != nullptr && m.cols.conv_out > t.max_image_width) ||
              (dw != nullptr && dw->depthwise_mode && m.map_w > t.max_image_width);
    // An input that is not the previous op's result left on chip is read from
    // external memory, which is what a tiled op does; so are an add's two
    // operands (the tiled loads interleave them), the network input's too.
    const std::vector<int> chain{static_cast<int>(k) - 1};
    if (op.srcs.size() > 1 || !op.parts.empty() || (k > 0 && (op.srcs != chain || shared[k - 1]))) {
      m.tiled = true;
    }
  }

  if (pl.input_layout != InputLayout::kFeatures) {
    const MapInput& m = *map_input(pl.ops.front());
    pl.input_words =
        base(ops.front()).parts.empty()
            ? m.g_in / static_cast<int64_t>(base(ops.front()).srcs.size()) * m.map_h * m.map_w
            : ceil_div(net.input_shape[0], n) * net.input_shape[1] * net.input_shape[2];
  }

  // Parameter RAM: resident when every op's channels fit, else loaded per use;
  // a convolution with more channels than the RAM loads each pass's P, an FC
  // layer each tile's neurons.
  int64_t entries = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    PlanBase& q = base_of(pl.ops[k]);
    if (q.param_entries > t.param_depth) {
      if (is<PoolOp>(ops[k]) || (is<ConvOp>(ops[k]) && p > t.param_depth)) {
        fail(base(ops[k]), "compute.param_range",
             fmt::format("{} output channels need {} parameter entries, the parameter RAM "
                         "holds {} (param_depth)",
                         base(ops[k]).out_c, q.param_entries, t.param_depth));
      }
      q.params_per_pass = true;
    }
    entries += q.param_entries;
  }
  pl.params_resident = entries <= t.param_depth;
  if (pl.params_resident) {
    int64_t next = 0;
    for (OpPlan& q : pl.ops) {
      PlanBase& b = base_of(q);
      b.param_base = next;
      next += b.param_entries;
    }
  }
  pl.notes.push_back(
      pl.params_resident
          ? fmt::format("parameters: {} of {} channels, loaded once", entries, t.param_depth)
          : fmt::format("parameters: {} channels > {}: loaded before each use", entries,
                        t.param_depth));

  // Activation tables: the distinct tables of the ops, resident in slots of
  // their own when they fit act_tables, else loaded before each use into the
  // slots in turn (emit.cpp; the dependencies order the reuse).
  {
    std::vector<const std::vector<int8_t>*> distinct;
    for (size_t k = 0; k < ops.size(); ++k) {
      const ChannelParams* cp = channel_params(ops[k]);
      if (cp == nullptr || cp->table.empty()) continue;
      size_t i = 0;
      while (i < distinct.size() && *distinct[i] != cp->table) ++i;
      if (i == distinct.size()) distinct.push_back(&cp->table);
      base_of(pl.ops[k]).table = static_cast<int>(i);
    }
    pl.tables = static_cast<int>(distinct.size());
    pl.tables_resident = pl.tables <= t.act_tables;
    pl.table_slots = pl.tables_resident ? pl.tables : t.act_tables;
    for (OpPlan& q : pl.ops) {
      PlanBase& b = base_of(q);
      if (b.table >= 0 && pl.tables_resident) b.table_slot = b.table;
    }
    if (pl.tables > 0) {
      pl.notes.push_back(
          pl.tables_resident
              ? fmt::format("activation tables: {} of {}, loaded once", pl.tables, t.act_tables)
              : fmt::format("activation tables: {} > {}: loaded before each use, the slots "
                            "taken in turn",
                            pl.tables, t.act_tables));
    }
  }

  // PE caches: FC feature regions (ping-pong between FC layers) at the top,
  // convolution weights below (resident, or streamed through one or two slots).
  int64_t region[2] = {0, 0};
  int fc_index = 0;
  std::vector<int> fc_slot(ops.size(), -1);
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto* fq = std::get_if<FcPlan>(&pl.ops[k]);
    if (fq == nullptr) continue;
    fc_slot[k] = fc_index % 2;
    region[fc_index % 2] = std::max(region[fc_index % 2], fq->feature_words());
    ++fc_index;
  }
  const int64_t region_base[2] = {t.pe_cache_depth - region[0],
                                  t.pe_cache_depth - region[0] - region[1]};
  for (size_t k = 0; k < ops.size(); ++k) {
    if (fc_slot[k] < 0) continue;
    if (region_base[1] < 0) {
      fail(base(ops[k]), "compute.cache_range",
           fmt::format("the features of the fully-connected layers need {} + {} words in "
                       "every PE cache, it holds {} (pe_cache_depth)",
                       region[0], region[1], t.pe_cache_depth));
    }
    FcPlan& fq = std::get<FcPlan>(pl.ops[k]);
    fq.feat_base = region_base[fc_slot[k]];
    if (k > 0) {
      PlanBase& prev = base_of(pl.ops[k - 1]);
      if (prev.dst == Dst::kTranspose || prev.dst == Dst::kPeCache) {
        prev.next_feat_base = fq.feat_base;
      }
    }
  }
  // The mul ops' vectors as DEPTHWISE weights: one word per channel group (and the
  // B - 1 words the last group's DEPTHWISE reads past it) below the FC features,
  // shared by every mul op (each writes them before its passes).
  int64_t mul_words = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto* conv = std::get_if<ConvOp>(&ops[k]);
    if (conv == nullptr || conv->kind != ConvKind::kMul) continue;
    mul_words = std::max(mul_words, ceil_div(conv->out_c, n) + t.depthwise_weight_words() - 1);
    if (std::max<int64_t>(0, region_base[1]) < mul_words + n) {
      fail(*conv, "compute.cache_range",
           fmt::format("the mul's vector needs {} words in every PE cache and its selector {}, "
                       "{} are free (pe_cache_depth {} minus the FC features)",
                       mul_words, n, std::max<int64_t>(0, region_base[1]), t.pe_cache_depth));
    }
  }
  // Every FC runs after every map op. When the first one loads its features from
  // external memory, no map op writes the PE caches, so the FC regions may take the
  // convolution weights' words (the dependencies order the reuse).
  bool fc_after_maps = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (const auto* fq = std::get_if<FcPlan>(&pl.ops[k])) {
      fc_after_maps = k > 0 && fq->features_streamed;
      break;
    }
  }
  const int64_t cap =
      std::max<int64_t>(0, (fc_after_maps ? t.pe_cache_depth : region_base[1]) - mul_words);
  pl.mul_base = cap;
  if (mul_words > 0) {
    pl.notes.push_back(
        fmt::format("mul vectors: PE-cache words {}..{} of every PE", cap, cap + mul_words - 1));
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto* cq = std::get_if<ConvPlan>(&pl.ops[k]);
    if (cq == nullptr) continue;
    if (cq->per_pass > cap) {
      ConvPlan& q = std::get<ConvPlan>(pl.ops[k]);
      const int64_t whole_words = q.per_pass;
      if (!split_conv(std::get<ConvOp>(ops[k]), q, cap)) {
        fail(base(ops[k]), "compute.cache_range",
             fmt::format("the weights of one pass need {} words in every PE cache, {} are free "
                         "(pe_cache_depth {} minus {} for FC features)",
                         whole_words, cap, t.pe_cache_depth, t.pe_cache_depth - cap));
      }
      if (q.chunks > 1) {
        // The partial sums of a whole op in a bank of their own, else in tiles.
        MapInput& m = q;
        const int64_t spill = 4 * m.rows.conv_out * m.cols.conv_out;
        const int64_t banks = 2 + (q.dst == Dst::kBank ? 1 : 0);
        if (!m.tiled && (spill > t.bank_depth || t.banks < banks)) m.tiled = true;
        pl.notes.push_back(fmt::format(
            "{}: the weights of one pass need {} words in every PE cache, {} are free: split "
            "into {} chunks of {}, the partial sums through a spill buffer{}",
            q.name, whole_words, cap, q.chunks,
            q.chunks_share_weights
                ? fmt::format("{} words of its map (the same weights)", q.chunk_groups)
                : fmt::format("{} input group{} ({} words)", q.chunk_groups,
                              q.chunk_groups == 1 ? "" : "s", q.per_pass),
            m.tiled ? "" : fmt::format(" of {} words in a bank of their own", spill)));
      }
    }
  }
  place_weights(pl, cap);
  pl.weight_words = cap;

  // Maps in external memory and the tiles of the ops that do not run whole; the weights
  // placed again when an op's passes were split for its tiles.
  if (plan_tiles(ops, shared, t, pl, fail)) {
    pl.notes.erase(std::remove_if(pl.notes.begin(), pl.notes.end(),
                                  [](const std::string& note) {
                                    return note.rfind("convolution weights: ", 0) == 0;
                                  }),
                   pl.notes.end());
    place_weights(pl, cap);
  }

  // External images of the parameters and weights, in hardware order.
  for (size_t k = 0; k < ops.size(); ++k) {
    PlanBase& b = base_of(pl.ops[k]);
    b.param_ext = pl.params.size();
    const ChannelParams* cp = channel_params(ops[k]);
    for (int64_t ch = 0; ch < b.param_entries; ++ch) {
      const bool real = cp != nullptr && ch < static_cast<int64_t>(cp->bias.size());
      put_le(pl.params, real ? static_cast<uint32_t>(cp->bias[ch]) : 0, 4);
      put_le(pl.params, real ? cp->mult[ch] : 0, 2);
      put_le(pl.params, real ? cp->shift[ch] : 0, 1);
      put_le(pl.params, 0, 1);
    }
    pad_to(pl.params, kRegionAlign);
    if (auto* cq = std::get_if<ConvPlan>(&pl.ops[k])) {
      ConvPlan& q = *cq;
      const ConvOp& op = std::get<ConvOp>(ops[k]);
      q.weights_ext = pl.weights.size();
      // Per weight pass, per chunk (split passes; else one), P rows of per_pass words.
      for (int64_t pass = 0; pass < q.weight_passes; ++pass) {
        for (int64_t chunk = 0; chunk < q.weight_blocks() / q.weight_passes; ++chunk) {
          for (int64_t pe = 0; pe < p; ++pe) {
            for (int64_t wi = 0; wi < q.per_pass; ++wi) {
              const int64_t word =
                  q.chunks == 1 || q.chunks_share_weights ? wi : unsplit_word(q, chunk, wi);
              for (int64_t lane = 0; lane < n; ++lane) {
                const int8_t v = q.packed   ? packed_weight(q, pass, pe, wi, lane)
                                 : word < 0 ? int8_t{0}
                                            : cache_weight(op, q, t, pass, pe, word, lane);
                pl.weights.push_back(static_cast<uint8_t>(v));
              }
            }
          }
        }
      }
      if (q.packed) put_controls(q, t, pl.weights);
      pad_to(pl.weights, kRegionAlign);
    } else if (auto* fq = std::get_if<FcPlan>(&pl.ops[k])) {
      FcPlan& q = *fq;
      const FcOp& op = std::get<FcOp>(ops[k]);
      q.weights_ext = pl.weights.size();
      const FeatureOrder& f = q.order;
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
          "{}: weights in tiles of {} neuron{} ({} words each{}){}", q.name, q.tile,
          q.tile == 1 ? "" : "s", q.fc_words,
          q.chunks > 1 ? fmt::format(", in {} chunks of {}", q.chunks, q.chunk_words) : "",
          f.row_major  ? fmt::format(", columns permuted to the stored map's order "
                                      "((y*{}+g)*{}+x)*{}+lane",
                                     ceil_div(f.c, n), f.w, n)
          : f.from_map ? fmt::format(", columns permuted to the hardware feature order "
                                     "((g*{}+y)*{}+x)*{}+lane",
                                     f.h, f.w, n)
          : f.per_word > 0
              ? fmt::format(", {} features per word (the previous layer's tiles of {} neurons "
                            "each start a word)",
                            f.per_word, f.per_word)
              : ""));
      pad_to(pl.weights, kRegionAlign);
    }
  }
  // The tables after the parameter entries, 256 bytes each (whole beats and words).
  pl.tables_ext = pl.params.size();
  std::vector<bool> placed(static_cast<size_t>(pl.tables), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    PlanBase& b = base_of(pl.ops[k]);
    if (b.table < 0) continue;
    b.table_ext = pl.tables_ext + static_cast<uint64_t>(b.table) * 256;
    if (placed[static_cast<size_t>(b.table)]) continue;
    placed[static_cast<size_t>(b.table)] = true;
    const std::vector<int8_t>& tab = channel_params(ops[k])->table;
    pl.params.resize(std::max<size_t>(pl.params.size(), b.table_ext + 256), 0);
    std::copy(tab.begin(), tab.end(), pl.params.begin() + static_cast<std::ptrdiff_t>(b.table_ext));
  }
  pad_to(pl.params, kRegionAlign);
  return pl;
}

}  // namespace strata::compiler
