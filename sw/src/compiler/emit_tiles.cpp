// SPDX-License-Identifier: Apache-2.0
// Pass 3, emit (passes.hpp), for the ops that run in tiles (docs/compiler.md,
// "Large maps"): per tile and weight pass a job of loads (parameters, weights,
// the tile's input rows), one COMPUTE and the STOREs of its results; and the
// COMPUTE of a tile, shared with the ops that run whole.
#include <fmt/format.h>

#include <algorithm>

#include "emit_context.hpp"
#include "strata/error.hpp"

namespace strata::compiler {

using isa::ComputeDst;
using isa::ComputeInstr;
using isa::ComputeMode;
using isa::LoadDst;
using isa::LoadInstr;
using isa::StoreInstr;

ComputeInstr tile_compute(const Op& op, const OpPlan& plan, const AxisTile& band,
                          const AxisTile& strip, int64_t first_group, int64_t in_bank,
                          int64_t in_base, int64_t param_base, int64_t cache_base) {
  const PlanBase& q = base(plan);
  const MapInput& m = *map_input(plan);
  ComputeInstr c;
  c.hdr.tag = q.tag;
  c.in_id = in_bank;
  c.in_base = in_base;
  c.in_h = band.in_end - band.in_begin;
  c.in_w = strip.in_end - strip.in_begin;
  c.in_groups = m.g_in;
  if (const Pooling* pool = pooling(op)) {
    c.pool_en = true;
    c.pool_op = pool->avg ? isa::PoolOp::kAvg : isa::PoolOp::kMax;
    c.pool_ceil = band.pool_ceil;
    c.pool_k = pool->window.kernel;
    c.pool_s = pool->window.stride;
    c.pool_pad_top = band.pool_pad_before;
    c.pool_pad_bottom = band.pool_pad_after;
    c.pool_pad_left = strip.pool_pad_before;
    c.pool_pad_right = strip.pool_pad_after;
    c.pool_out_h = band.out_end - band.out_begin;
    c.pool_out_w = strip.out_end - strip.out_begin;
    c.post_lo = pool->post_lo;
    c.post_hi = pool->post_hi;
  }
  if (const auto* conv = std::get_if<ConvOp>(&op)) {
    const ConvPlan& cq = std::get<ConvPlan>(plan);
    c.mode = ComputeMode::kConv;
    c.kernel_h = cq.kh;
    c.kernel_w = cq.kw;
    c.stride_h = cq.sh;
    c.stride_w = cq.sw;
    c.pad_top = band.pad_before;
    c.pad_bottom = band.pad_after;
    c.pad_left = strip.pad_before;
    c.pad_right = strip.pad_after;
    c.out_h = band.conv_end - band.conv_begin;
    c.out_w = strip.conv_end - strip.conv_begin;
    c.param_base = param_base;
    c.cache_base = cache_base;
    if (conv->pass_groups > 0) {  // a grouped op's pass reads its own groups
      c.in_groups = cq.g_pass;
      c.in_base = in_base + first_group * c.in_h * c.in_w;
    }
    if (conv->kind == ConvKind::kGlobalAvgPool) {
      // The whole map as a 1 x 1 image of H * W groups: group g's words in
      // [group][row][col] order are consecutive, so any map size is one window
      // of 1 x 1 taps (the kernel side stays within max_kernel).
      if (c.out_h != 1 || c.out_w != 1) {
        throw Error(fmt::format("internal: {}: a global pool tile of {}x{} outputs", q.name,
                                c.out_h, c.out_w));
      }
      c.in_groups = c.in_h * c.in_w;
      c.in_h = c.in_w = 1;
      c.kernel_h = c.kernel_w = 1;
      c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 0;
    }
    c.clamp_lo = conv->params.lo;
    c.clamp_hi = conv->params.hi;
    if (conv->depthwise_mode) {
      // The pass's group through the window generator: the convolution's window
      // in the pooling fields, floor mode (docs/isa.md, DEPTHWISE).
      c.mode = ComputeMode::kDepthwise;
      c.kernel_h = c.kernel_w = c.stride_h = c.stride_w = 0;
      c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 0;
      c.out_h = c.in_h;
      c.out_w = c.in_w;
      c.pool_en = true;
      c.pool_op = isa::PoolOp::kMax;
      c.pool_ceil = false;
      c.pool_k = cq.kh;
      c.pool_s = cq.sh;
      c.pool_pad_top = band.pad_before;
      c.pool_pad_bottom = band.pad_after;
      c.pool_pad_left = strip.pad_before;
      c.pool_pad_right = strip.pad_after;
      c.pool_out_h = band.conv_end - band.conv_begin;
      c.pool_out_w = strip.conv_end - strip.conv_begin;
    }
  } else {
    c.mode = ComputeMode::kPool;
    c.out_h = c.in_h;
    c.out_w = c.in_w;
  }
  return c;
}

void split_chunk(ComputeInstr& c, const ConvPlan& q, int64_t chunk, int64_t spill_bank,
                 int64_t spill_base, bool whole_input) {
  // The chunk's groups, [group][row][col] after the pass's first (a global pool's
  // 1 x 1 image: one word each).
  if (whole_input) c.in_base += chunk * q.chunk_groups * c.in_h * c.in_w;
  c.in_groups = q.chunk_size(chunk);
  if (chunk > 0) {
    c.acc_in = true;
    c.acc_id = spill_bank;
    c.acc_base = spill_base;
  }
  if (chunk + 1 < q.chunks) {
    const ComputeInstr plain;
    c.acc_out = true;
    c.pool_en = false;
    c.pool_op = plain.pool_op;
    c.pool_ceil = plain.pool_ceil;
    c.pool_k = plain.pool_k;
    c.pool_s = plain.pool_s;
    c.pool_pad_top = plain.pool_pad_top;
    c.pool_pad_bottom = plain.pool_pad_bottom;
    c.pool_pad_left = plain.pool_pad_left;
    c.pool_pad_right = plain.pool_pad_right;
    c.pool_out_h = plain.pool_out_h;
    c.pool_out_w = plain.pool_out_w;
    c.post_lo = plain.post_lo;
    c.post_hi = plain.post_hi;
    c.act_table_en = false;
    c.act_table = plain.act_table;
    c.dst_kind = ComputeDst::kBank;
    c.dst_id = spill_bank;
    c.dst_base = spill_base;
    c.dst_row_stride = 4 * c.out_w;  // in place: the layout acc_in reads
    c.dst_group_stride = plain.dst_group_stride;
  }
}

void emit_mul_vector(EmitContext& cx, const ConvOp& op, const ConvPlan& q, int img,
                     int64_t op_params, int64_t busy, std::vector<Emit>& pending,
                     std::vector<Job>& jobs) {
  const int64_t n = cx.t.lanes, p = cx.t.pes;
  const int64_t groups = ceil_div(op.out_c, n);
  const int64_t bank = cx.take_bank({busy});
  Job first;
  first.loads = std::move(pending);
  pending.clear();
  // The identity channels after the op's own, and the selector words.
  const int64_t param_base =
      q.params_per_pass ? cx.param_load(q, q.passes * p, p, first.loads) : op_params + q.passes * p;
  const int64_t selector =
      cx.pl.weights_resident ? q.cache_base : cx.weight_load(q, 0, first.loads);
  // The stored vector: one row of `groups` words ([row][group][col], a 1 x 1 map).
  LoadInstr l;
  l.hdr.tag = q.tag;
  l.ext_addr =
      static_cast<int64_t>(cx.d.maps[static_cast<size_t>(img)][static_cast<size_t>(op.vector_src)]);
  l.ext_row_stride =
      static_cast<int64_t>(align_up(static_cast<uint64_t>(groups * n), cx.t.beat_bytes()));
  l.rows = 1;
  l.row_words = groups;
  l.dst_kind = LoadDst::kBank;
  l.dst_id = bank;
  l.dst_addr = 0;
  l.dst_row_stride = groups;
  first.loads.push_back(cx.em.load(l, q.name));
  // PE q's words mul_base + g, lane 0: channel g * N + q of the vector. The CONV reads
  // the vector as a 1 x `groups` image of one group (pixel g = group g's word); PE 0
  // multiplies it by its selector word q (1 in lane q), the other PEs by zeros.
  for (int64_t pe = 0; pe < p; ++pe) {
    Job job;
    if (pe == 0) job = std::move(first);
    ComputeInstr c;
    c.hdr.tag = q.tag;
    c.mode = ComputeMode::kConv;
    c.in_id = bank;
    c.in_base = 0;
    c.in_h = 1;
    c.in_w = groups;
    c.in_groups = 1;
    c.kernel_h = c.kernel_w = 1;
    c.stride_h = c.stride_w = 1;
    c.out_h = 1;
    c.out_w = groups;
    c.cache_base = selector + pe;
    c.param_base = param_base;
    c.clamp_lo = kInt8Min;
    c.clamp_hi = kInt8Max;
    c.dst_kind = ComputeDst::kPeCache;
    c.dst_id = pe;
    c.dst_base = cx.pl.mul_base;
    c.dst_row_stride = groups;
    job.compute = cx.em.compute(c, q.name);
    jobs.push_back(std::move(job));
  }
}

namespace {

int64_t strip_width(const AxisTile& strip) { return strip.in_end - strip.in_begin; }

struct Buffer {
  int64_t bank = -1;
  int64_t base = 0;
};

// The LOADs of one tile's input into buffer `b` (TiledOpIo, TiledSource):
// [row][group][col] external words, one LOAD per input row (every group of
// it), or one for the tile when a row is one group, so the compute can start
// once its first rows are in. `first` >= 0: a grouped op's pass, which loads
// groups [first, first + count) of each source. An upsampled source loads single words:
// per tile row, per phase j of the factor f, the source words whose copies
// land on columns x = u * f + j, in one LOAD per group (or one per source
// column with every group, when that needs fewer).
void load_tile_input(EmitContext& cx, const PlanBase& q, const TiledOpIo& io, const AxisTile& band,
                     const AxisTile& strip, int64_t pass_first, int64_t pass_count, const Buffer& b,
                     std::vector<Emit>& loads) {
  const int64_t n = cx.t.lanes;
  const int64_t rows = band.in_end - band.in_begin, cols = strip.in_end - strip.in_begin;
  const auto load = [&](int64_t ext, int64_t ext_stride, int64_t count, int64_t words, int64_t dst,
                        int64_t dst_stride) {
    LoadInstr l;
    l.hdr.tag = q.tag;
    l.ext_addr = ext;
    l.ext_row_stride = ext_stride;
    l.rows = count;
    l.row_words = words;
    l.dst_kind = LoadDst::kBank;
    l.dst_id = b.bank;
    l.dst_addr = dst;
    l.dst_row_stride = dst_stride;
    loads.push_back(cx.em.load(l, q.name));
  };
  for (const TiledSource& from : io.srcs) {
    const int f = from.factor;
    const int64_t width = io.in_width / f;  // words per group row of the source
    const int64_t ext_row = from.groups * width * n;
    const int64_t first = pass_first >= 0 ? pass_first : from.first;
    const int64_t groups =
        pass_first >= 0 ? pass_count : (from.count > 0 ? from.count : from.groups);
    const int64_t group_stride = from.step * rows * cols;  // between its groups in the tile
    const int64_t dst0 = b.base + from.tile_group * rows * cols;
    if (f == 1) {
      const uint64_t x0 = static_cast<uint64_t>((first * width + strip.in_begin) * n);
      const int64_t per_load = groups == 1 ? rows : 1;
      for (int64_t y = 0; y < rows; y += per_load) {
        load(static_cast<int64_t>(from.ext + (band.in_begin + y) * ext_row + x0),
             groups == 1 ? ext_row : width * n, groups == 1 ? rows : groups, cols, dst0 + y * cols,
             groups == 1 ? cols : group_stride);
      }
      continue;
    }
    for (int64_t y = 0; y < rows; ++y) {
      const int64_t sy = (band.in_begin + y) / f;
      const uint64_t row_ext = from.ext + static_cast<uint64_t>(sy * ext_row);
      for (int64_t j = 0; j < f; ++j) {
        // Source columns u with strip.in_begin <= u * f + j < strip.in_end.
        const int64_t u0 = ceil_div(std::max<int64_t>(strip.in_begin - j, 0), f);
        const int64_t u1 = (strip.in_end - 1 - j) / f;  // strip.in_end - 1 - j >= 0 unless empty
        if (strip.in_end - 1 - j < 0 || u1 < u0) continue;
        const int64_t us = u1 - u0 + 1;
        const int64_t col0 = u0 * f + j - strip.in_begin;
        if (us <= groups) {
          for (int64_t g = 0; g < groups; ++g) {
            load(static_cast<int64_t>(row_ext +
                                      static_cast<uint64_t>(((first + g) * width + u0) * n)),
                 n, us, 1, dst0 + g * group_stride + y * cols + col0, f);
          }
        } else {
          for (int64_t u = u0; u <= u1; ++u) {
            load(static_cast<int64_t>(row_ext + static_cast<uint64_t>((first * width + u) * n)),
                 width * n, groups, 1, dst0 + y * cols + col0 + (u - u0) * f, group_stride);
          }
        }
      }
    }
  }
}

}  // namespace

void emit_tiled_op(EmitContext& cx, const Op& op, const OpPlan& plan, int img, const TiledOpIo& io,
                   std::vector<Job>& jobs) {
  const int64_t n = cx.t.lanes, p = cx.t.pes;
  const OpBase& ob = base(op);
  const PlanBase& q = base(plan);
  const MapInput& m = *map_input(plan);
  const ConvPlan* cq = std::get_if<ConvPlan>(&plan);
  const TilingChoice& tc = m.tiling;
  const TileBuffers& buf = m.buffers;

  // Two input buffers; two output buffers when the results leave the chip.
  Buffer in[2], out[2];
  in[0] = {cx.take_bank({io.out_bank}), 0};
  in[1] = buf.in_shared ? Buffer{in[0].bank, buf.in_words}
                        : Buffer{cx.take_bank({io.out_bank, in[0].bank}), 0};
  if (buf.out_words > 0) {
    out[0] = {cx.take_bank({in[0].bank, in[1].bank}), 0};
    out[1] = buf.out_shared ? Buffer{out[0].bank, buf.out_words}
                            : Buffer{cx.take_bank({in[0].bank, in[1].bank, out[0].bank}), 0};
  }

  const int64_t passes = cq != nullptr ? cq->passes : 1;
  const bool streamed = cq != nullptr && !cx.pl.weights_resident;
  const auto* conv = std::get_if<ConvOp>(&op);
  const bool grouped = conv != nullptr && conv->pass_groups > 0;  // its tiles: the pass's groups
  const int64_t strips = static_cast<int64_t>(tc.strips.size());
  const int64_t tiles = static_cast<int64_t>(tc.bands.size()) * strips;
  const int64_t plane = ob.out_h * ob.out_w;
  std::vector<Emit> pending;
  const int64_t op_params = q.params_per_pass ? 0 : cx.param_load(q, 0, q.param_entries, pending);
  const int64_t op_table = cx.table_load(q, pending);
  const bool mul = conv != nullptr && conv->kind == ConvKind::kMul;
  if (mul) emit_mul_vector(cx, *conv, *cq, img, op_params, io.out_bank, pending, jobs);
  // Split passes (docs/compiler.md, "Split passes"): each (tile, pass) runs as chunks
  // of its input groups, the partial sums after the results in the output buffer the
  // last chunk writes, or in a bank of their own.
  const int64_t chunks = cq != nullptr ? cq->chunks : 1;
  const int64_t spill_bank = chunks > 1 && !cq->spill_in_out_buffer
                                 ? cx.take_bank({io.out_bank, in[0].bank, in[1].bank})
                                 : -1;
  int in_turn = -1, out_turn = 0;
  int64_t cache_base = 0;
  for (int64_t i = 0; i < tiles * passes; ++i) {
    const int64_t tile = tc.pass_outer ? i % tiles : i / passes;
    const int64_t pass = tc.pass_outer ? i / tiles : i % passes;
    const AxisTile& band = tc.bands[static_cast<size_t>(tile / strips)];
    const AxisTile& strip = tc.strips[static_cast<size_t>(tile % strips)];
    const int64_t out_rows = band.out_end - band.out_begin;
    const int64_t out_cols = strip.out_end - strip.out_begin;
    const Buffer& res = out[buf.out_words > 0 ? out_turn++ % 2 : 0];  // results stored
    int64_t param_base = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      Job job;
      job.loads = std::move(pending);
      pending.clear();
      // Loads in the order a compute needs them last: parameters, weights, input.
      if (chunk == 0) {
        param_base =
            q.params_per_pass ? cx.param_load(q, pass * p, p, job.loads) : op_params + pass * p;
      }
      if (mul) {
        cache_base = cx.pl.mul_base + pass;  // the vector's group `pass`, as weights
      } else if (cq != nullptr) {
        // Weights shared by every pass (weight_passes = 1) are loaded once; a split
        // pass's chunks in turn, for every tile.
        const bool shared = cq->weight_passes < cq->passes;
        if (chunks > 1 && !cq->chunks_share_weights) {
          const int64_t unit = (shared ? 0 : pass) * chunks + chunk;
          cache_base = streamed ? cx.weight_load(*cq, unit, job.loads)
                                : cq->cache_base + unit * cq->per_pass;
        } else if (!streamed) {
          cache_base = cq->cache_base + (shared ? 0 : pass) * cq->per_pass;
        } else if (chunk == 0 && (shared ? i == 0 : (!tc.pass_outer || tile == 0))) {
          cache_base = cx.weight_load(*cq, shared ? 0 : pass, job.loads);
        }
      }
      const bool chunk_input = cq != nullptr && cq->chunk_input;
      if (chunk_input || (chunk == 0 && (tc.pass_outer || pass == 0))) {
        ++in_turn;
        const Buffer& b = in[in_turn % 2];
        // A grouped op's pass: the input groups of its channel group, from each source.
        const int64_t per_source =
            grouped ? conv->pass_groups / static_cast<int64_t>(io.srcs.size()) : 0;
        int64_t first = grouped ? pass / conv->passes_per_group * per_source : -1;
        int64_t count = per_source;
        // Split passes that load their chunks: a global pool's map in chunks of whole
        // rows, the chunk's rows only; a dense convolution's chunk of input groups.
        AxisTile rows = band;
        if (chunk_input && grouped) {
          rows.in_begin = band.in_begin + chunk * cq->chunk_groups / strip_width(strip);
          rows.in_end = rows.in_begin + cq->chunk_size(chunk) / strip_width(strip);
        } else if (chunk_input) {
          first = chunk * cq->chunk_groups;
          count = cq->chunk_size(chunk);
        }
        load_tile_input(cx, q, io, rows, strip, first, count, b, job.loads);
      }
      const Buffer& src = in[in_turn % 2];
      ComputeInstr c =
          tile_compute(op, plan, band, strip, 0, src.bank, src.base, param_base, cache_base);
      if (cq != nullptr) c.packed_rows = cq->packed_rows(pass);
      set_table(c, op_table);
      const int64_t group_base = cq != nullptr ? pass * plane : 0;
      if (buf.out_words == 0) {
        // Into the whole output map: a bank, or the PE caches of image `img`.
        const int64_t at = group_base + band.out_begin * ob.out_w + strip.out_begin;
        c.dst_row_stride = ob.out_w;
        c.dst_group_stride = plane;
        if (io.out_bank >= 0) {
          c.dst_kind = ComputeDst::kBank;
          c.dst_id = io.out_bank;
          c.dst_base = at;
        } else {
          c.dst_kind = ComputeDst::kPeCache;
          c.dst_id = img;
          c.dst_base = q.next_feat_base + at;
        }
      } else {
        c.dst_kind = ComputeDst::kBank;
        c.dst_id = res.bank;
        c.dst_base = res.base;
        c.dst_row_stride = out_cols;
        c.dst_group_stride = out_rows * out_cols;
      }
      if (chunks > 1) {
        if (spill_bank >= 0) {
          split_chunk(c, *cq, chunk, spill_bank, 0, !chunk_input);
        } else {
          split_chunk(c, *cq, chunk, res.bank, res.base + out_rows * out_cols, !chunk_input);
        }
      }
      job.compute = cx.em.compute(c, q.name);
      if (buf.out_words > 0 && chunk + 1 == chunks) {
        // CONV: the pass's group; POOL: every group.
        const int64_t first = cq != nullptr ? pass : 0;
        const int64_t count = cq != nullptr ? 1 : m.out_groups;
        for (int64_t g = first; g < first + count; ++g) {
          StoreInstr s;
          s.hdr.tag = q.tag;
          s.src_id = res.bank;
          s.src_addr = res.base + (g - first) * out_rows * out_cols;
          s.src_row_stride = out_cols;
          s.rows = out_rows;
          s.row_words = out_cols;
          if (io.out_is_output) {  // [group][row][col]
            s.ext_addr = static_cast<int64_t>(
                io.out_ext + ((g * ob.out_h + band.out_begin) * ob.out_w + strip.out_begin) * n);
            s.ext_row_stride = ob.out_w * n;
          } else {  // [row][group][col]
            s.ext_addr = static_cast<int64_t>(
                io.out_ext +
                ((band.out_begin * m.out_groups + g) * ob.out_w + strip.out_begin) * n);
            s.ext_row_stride = m.out_groups * ob.out_w * n;
          }
          job.stores.push_back(cx.em.store(s, q.name));
        }
      }
      jobs.push_back(std::move(job));
    }
  }
}

}  // namespace strata::compiler
