// SPDX-License-Identifier: Apache-2.0
// Pass 3, emit (passes.hpp): jobs (loads, one compute, stores) per image, pass
// and tile, with what every instruction touches, in program order with one job
// of load prefetch (docs/compiler.md, "Program order").
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "emit_context.hpp"
#include "passes.hpp"
#include "strata/error.hpp"

namespace strata::compiler {

using isa::ComputeDst;
using isa::ComputeInstr;
using isa::ComputeMode;
using isa::Engine;
using isa::LoadDst;
using isa::LoadInstr;
using isa::StoreInstr;

namespace {

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

bool jobs_conflict(const std::vector<Emit>& loads, const Job& job) {
  for (const Emit& l : loads) {
    if (job.compute && conflict(l, *job.compute)) return true;
    for (const Emit& s : job.stores) {
      if (conflict(l, s)) return true;
    }
  }
  return false;
}

}  // namespace

bool conflict(const Emit& a, const Emit& b) {
  for (const Touch& x : a.bounds) {
    for (const Touch& y : b.bounds) {
      if ((x.write || y.write) && overlap(x.span, y.span)) return true;
    }
  }
  return false;
}

Emit Emitter::load(const LoadInstr& l, const std::string& what) const {
  Emit e;
  e.instr = l;
  e.engine = Engine::kLoad;
  e.what = what;
  const int64_t entry = l.dst_kind == LoadDst::kParam ? 8 : n_;
  for (int64_t r = 0; r < l.rows; ++r) {
    Span dst{Space::kBank, l.dst_id, 0, 0};
    int64_t addr = l.dst_addr + r * l.dst_row_stride;
    if (l.dst_kind == LoadDst::kParam || l.dst_kind == LoadDst::kTable) {
      dst.space = l.dst_kind == LoadDst::kParam ? Space::kParam : Space::kTable;
      dst.id = 0;
    } else if (l.dst_kind == LoadDst::kPeCache || l.dst_kind == LoadDst::kControl) {
      // CONTROL: PE p's control plane orders like its cache; id P, the schedule.
      dst.space = Space::kCache;
      if (l.dst_pe_step) {
        dst.id = (l.dst_id + r) % p_;
        addr = l.dst_addr + (r / p_) * l.dst_row_stride;
      }
    }
    dst.begin = addr;
    dst.end = addr + l.row_words;
    const int64_t src = l.ext_addr + r * l.ext_row_stride;
    e.steps.push_back(
        {Touch{dst, true}, Touch{{Space::kExt, 0, src, src + l.row_words * entry}, false}});
    e.units.push_back({dst});
  }
  finish(e);
  return e;
}

Emit Emitter::store(const StoreInstr& s, const std::string& what) const {
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

Emit Emitter::compute(const ComputeInstr& c, const std::string& what) const {
  Emit e;
  e.instr = c;
  e.engine = Engine::kCompute;
  e.what = what;
  const auto dst_span = [&](int64_t addr, int64_t words) {
    return Span{c.dst_kind == ComputeDst::kBank ? Space::kBank : Space::kCache, c.dst_id, addr,
                addr + words};
  };
  const auto operands = [&](std::vector<Touch>& step, int64_t cache_words, int64_t params) {
    // A packed CONV reads its rows' control words too, and the schedule (id P).
    const int64_t last = c.packed_rows != 0 ? p_ : p_ - 1;
    for (int64_t pe = 0; pe <= last; ++pe) {
      step.push_back({{Space::kCache, pe, c.cache_base, c.cache_base + cache_words}, false});
    }
    step.push_back({{Space::kParam, 0, c.param_base, c.param_base + params}, false});
    if (c.act_table_en) {  // the table's words, read throughout
      step.push_back(
          {{Space::kTable, 0, c.act_table * 256 / n_, (c.act_table + 1) * 256 / n_}, false});
    }
  };
  // Partial sums (docs/isa.md): acc_in reads 4 words per output pixel (FC: neuron),
  // acc_out writes 4 in their place.
  const int64_t acc_words = c.acc_out ? 4 : 1;
  const auto partial_sums = [&](std::vector<Touch>& step, int64_t first, int64_t count) {
    if (!c.acc_in) return;
    const int64_t a = c.acc_base + 4 * first;
    step.push_back({{Space::kBank, c.acc_id, a, a + 4 * count}, false});
  };
  if (c.mode == ComputeMode::kFc) {
    for (int64_t o = 0; o < c.out_h; ++o) {
      std::vector<Touch> step;
      const int64_t w = c.in_base + o * c.in_groups;
      step.push_back({{Space::kBank, c.in_id, w, w + c.in_groups}, false});
      if (o == 0 || o == c.out_h - 1) operands(step, c.in_groups, 0);
      step.push_back({{Space::kParam, 0, c.param_base + o, c.param_base + o + 1}, false});
      partial_sums(step, o, 1);
      std::vector<Span> unit;
      if (c.dst_kind == ComputeDst::kBank) {
        const int64_t a = c.dst_base + o * acc_words;
        unit.push_back({Space::kBank, c.dst_id, a, a + acc_words});
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
  if (c.mode == ComputeMode::kDepthwise) {
    // Steps are input rows; result row r is written once input row
    // min(in_h - 1, r * pool_s - pool_pad_top + pool_k - 1) is in.
    e.steps.resize(static_cast<size_t>(c.in_h));
    for (int64_t y = 0; y < c.in_h; ++y) {
      std::vector<Touch>& step = e.steps[static_cast<size_t>(y)];
      const int64_t a = c.in_base + y * c.in_w;
      step.push_back({{Space::kBank, c.in_id, a, a + c.in_w}, false});
      if (y == 0 || y == c.in_h - 1) operands(step, dw_words_, p_);
    }
    for (int64_t r = 0; r < c.pool_out_h; ++r) {
      const int64_t last_in = std::min(c.in_h - 1, r * c.pool_s - c.pool_pad_top + c.pool_k - 1);
      const Span s = dst_span(c.dst_base + r * c.dst_row_stride, c.pool_out_w);
      e.steps[static_cast<size_t>(last_in)].push_back({s, true});
      e.units.push_back({s});
    }
    finish(e);
    return e;
  }
  // CONV and POOL: steps are input rows (POOL) or convolution output rows.
  const bool pool_only = c.mode == ComputeMode::kPool;
  const int64_t groups = pool_only ? c.in_groups : 1;
  const int64_t rows_in = pool_only ? c.in_h : c.out_h;  // steps per group
  const int64_t res_rows = c.pool_en ? c.pool_out_h : c.out_h;
  const int64_t res_cols = c.pool_en ? c.pool_out_w : c.out_w * acc_words;
  e.steps.resize(static_cast<size_t>(groups * rows_in));
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t y = 0; y < rows_in; ++y) {
      std::vector<Touch>& step = e.steps[static_cast<size_t>(g * rows_in + y)];
      if (pool_only) {
        const int64_t a = c.in_base + (g * c.in_h + y) * c.in_w;
        step.push_back({{Space::kBank, c.in_id, a, a + c.in_w}, false});
      } else {
        const int64_t y0 = y * c.stride_h - c.pad_top;
        const int64_t r0 = std::max<int64_t>(0, y0), r1 = std::min(c.in_h, y0 + c.kernel_h);
        for (int64_t gi = 0; gi < c.in_groups; ++gi) {
          const int64_t a = c.in_base + (gi * c.in_h + r0) * c.in_w;
          step.push_back({{Space::kBank, c.in_id, a, a + (r1 - r0) * c.in_w}, false});
        }
        if (y == 0 || y == rows_in - 1) {
          operands(step, c.packed_rows != 0 ? c.packed_rows : c.kernel_h * c.kernel_w * c.in_groups,
                   p_);
        }
        partial_sums(step, y * c.out_w, c.out_w);
      }
    }
    for (int64_t r = 0; r < res_rows; ++r) {
      const int64_t last_in =
          pool_only || c.pool_en
              ? std::min(rows_in - 1, r * c.pool_s - c.pool_pad_top + c.pool_k - 1)
              : r;
      const Span s = dst_span(c.dst_base + g * c.dst_group_stride + r * c.dst_row_stride, res_cols);
      e.steps[static_cast<size_t>(g * rows_in + last_in)].push_back({s, true});
      e.units.push_back({s});
    }
  }
  finish(e);
  return e;
}

int64_t EmitContext::take_bank(std::initializer_list<int64_t> exclude) {
  for (int tries = 0; tries < t.banks; ++tries) {
    const int b = next_bank_;
    next_bank_ = (next_bank_ + 1) % t.banks;
    if (std::find(exclude.begin(), exclude.end(), b) == exclude.end()) return int64_t{b};
  }
  throw Error("internal: no free bank");
}

int64_t EmitContext::param_load(const PlanBase& q, int64_t first, int64_t count,
                                std::vector<Emit>& loads) {
  if (pl.params_resident) return q.param_base + first;
  if (count == 0) return 0;  // a POOL op: no parameters, and a LOAD of none is illegal
  if (ring_ + count > t.param_depth) ring_ = 0;
  const int64_t at = ring_;
  ring_ += count;
  LoadInstr l;
  l.hdr.tag = q.tag;
  l.ext_addr = static_cast<int64_t>(d.params + q.param_ext + first * 8);
  l.ext_row_stride = static_cast<int64_t>(align_up(count * 8, t.beat_bytes()));
  l.rows = 1;
  l.row_words = count;
  l.dst_kind = LoadDst::kParam;
  l.dst_addr = at;
  l.dst_row_stride = count;
  loads.push_back(em.load(l, q.name));
  return at;
}

int64_t EmitContext::table_load(const PlanBase& q, std::vector<Emit>& loads) {
  if (q.table < 0) return -1;
  if (pl.tables_resident) return q.table_slot;
  const int64_t slot = table_turn_++ % t.act_tables;
  LoadInstr l;
  l.hdr.tag = q.tag;
  l.ext_addr = static_cast<int64_t>(d.params + q.table_ext);
  l.ext_row_stride = 256;
  l.rows = 1;
  l.row_words = 256 / t.lanes;
  l.dst_kind = LoadDst::kTable;
  l.dst_addr = slot * 256 / t.lanes;
  l.dst_row_stride = 256 / t.lanes;
  loads.push_back(em.load(l, q.name));
  return slot;
}

void set_table(ComputeInstr& c, int64_t slot) {
  if (slot < 0) return;
  c.act_table_en = true;
  c.act_table = slot;
}

void EmitContext::control_loads(const ConvPlan& q, int64_t first_pass, int64_t lo, int64_t hi,
                                int64_t at, std::vector<Emit>& loads) const {
  const int64_t n = t.lanes, p = t.pes, w = q.per_pass;
  const int64_t passes = lo < 0 ? q.weight_passes : 1;  // lo < 0: every pass, resident
  if (lo < 0) {
    lo = 0;
    hi = w;
  }
  const uint64_t controls = d.weights + q.controls_ext;
  const uint64_t schedules = controls + static_cast<uint64_t>(q.weight_passes * p * w * n);
  LoadInstr l;
  l.hdr.tag = q.tag;
  l.ext_addr = static_cast<int64_t>(controls + (first_pass * p * w + lo) * n);
  l.ext_row_stride = w * n;
  l.rows = passes * p;
  l.row_words = hi - lo;
  l.dst_kind = LoadDst::kControl;
  l.dst_pe_step = true;
  l.dst_addr = at;
  l.dst_row_stride = w;
  loads.push_back(em.load(l, q.name));
  l.ext_addr = static_cast<int64_t>(schedules + (first_pass * w + lo) * n);
  l.rows = passes;
  l.dst_id = p;
  l.dst_pe_step = false;
  loads.push_back(em.load(l, q.name));
}

int64_t EmitContext::weight_load(const ConvPlan& q, int64_t pass, std::vector<Emit>& loads) {
  const int64_t n = t.lanes, p = t.pes, w = q.per_pass;
  // Slot i of side-by-side slots starts at i * w; of two overlapping ones, at
  // the bottom or the top of the weight region. A new op starts in the slot
  // that overlaps the previous op's last one the least.
  const auto slot_base = [&](int64_t i) {
    return q.slots_overlap ? (i % 2 == 0 ? 0 : pl.weight_words - w) : (i % q.slots) * w;
  };
  if (q.tag != slot_op_) {
    slot_op_ = q.tag;
    int64_t best = -1;
    for (int64_t i = 0; i < q.slots; ++i) {
      const int64_t b = slot_base(i);
      const int64_t shared =
          std::max<int64_t>(0, std::min(b + w, last_slot_.second) - std::max(b, last_slot_.first));
      if (best < 0 || shared < best) {
        best = shared;
        slot_turn_ = i;
      }
    }
  }
  const int64_t at = slot_base(slot_turn_++);
  last_slot_ = {at, at + w};
  // Words [0, w) of every PE's pass; with overlapping slots, first those
  // outside the other slot (free while the pass before runs), then the shared
  // ones (they wait for it).
  int64_t shared_lo = 0, shared_hi = 0;
  if (q.slots_overlap) {
    const int64_t other = slot_base(slot_turn_);
    shared_lo = std::max(at, other) - at;
    shared_hi = std::min(at, other) + w - at;
  }
  const auto load = [&](int64_t lo, int64_t hi) {
    if (hi <= lo) return;
    LoadInstr l;
    l.hdr.tag = q.tag;
    l.ext_addr = static_cast<int64_t>(d.weights + q.weights_ext + (pass * p * w + lo) * n);
    l.ext_row_stride = w * n;
    l.rows = p;
    l.row_words = hi - lo;
    l.dst_kind = LoadDst::kPeCache;
    l.dst_pe_step = true;
    l.dst_addr = at + lo;
    l.dst_row_stride = w;
    loads.push_back(em.load(l, q.name));
    if (q.packed) control_loads(q, pass, lo, hi, at + lo, loads);
  };
  if (shared_lo == 0) {
    load(shared_hi, w);
  } else {
    load(0, shared_lo);
  }
  load(shared_lo, shared_hi);
  return at;
}

namespace {

// Where the data sits in external memory, relative to the parameters region:
// parameters, weights, the inputs, the outputs, then the maps kept in external
// memory between two ops (per image).
DataLayout data_layout(const std::vector<Op>& ops, const Plan& pl, const HwTarget& t, int batch) {
  const int64_t n = t.lanes;
  DataLayout d;
  d.params = 0;
  d.weights = align_up(pl.params.size(), kRegionAlign);
  uint64_t cursor = align_up(d.weights + pl.weights.size(), kRegionAlign);
  d.input_bytes = static_cast<uint64_t>(pl.input_words * n);
  const uint64_t in_stride = align_up(d.input_bytes, kRegionAlign);
  for (int i = 0; i < batch; ++i) {
    d.inputs.push_back(cursor);
    cursor += in_stride;
  }
  const OpBase& last = base(ops.back());
  if (is<FcOp>(ops.back())) {
    d.output_bytes = static_cast<uint64_t>(last.out_c * n);
    d.outputs.push_back(cursor);
    cursor += align_up(d.output_bytes, kRegionAlign);
  } else {
    d.output_bytes =
        static_cast<uint64_t>(map_input(pl.ops.back())->out_groups * last.out_h * last.out_w * n);
    for (int i = 0; i < batch; ++i) {
      d.outputs.push_back(cursor);
      cursor += align_up(d.output_bytes, kRegionAlign);
    }
  }
  d.map_bytes.assign(ops.size(), 0);
  for (size_t k = 0; k < ops.size(); ++k) {
    const MapInput* m = map_input(pl.ops[k]);
    if (m != nullptr && m->out_external && !base(pl.ops[k]).is_final) {
      const OpBase& op = base(ops[k]);
      d.map_bytes[k] = static_cast<uint64_t>(m->out_groups * op.out_h * op.out_w * n);
    }
  }
  d.maps.assign(static_cast<size_t>(batch), std::vector<uint64_t>(ops.size(), 0));
  for (int i = 0; i < batch; ++i) {
    for (size_t k = 0; k < ops.size(); ++k) {
      if (d.map_bytes[k] == 0) continue;
      d.maps[i][k] = cursor;
      cursor += align_up(d.map_bytes[k], kRegionAlign);
    }
  }
  d.end = cursor;
  return d;
}

// The jobs of map op `k` that runs whole for image `img`: its input in bank
// `in_bank` (loaded here for the first op), its results into `out_bank`, the PE
// caches, and stored when they are the output or a map kept in external memory.
void emit_whole_op(EmitContext& cx, const std::vector<Op>& ops, size_t k, int img, int64_t in_bank,
                   int64_t out_bank, std::vector<Job>& jobs) {
  const int64_t n = cx.t.lanes, p = cx.t.pes;
  const DataLayout& d = cx.d;
  const OpBase& op = base(ops[k]);
  const OpPlan& plan = cx.pl.ops[k];
  const PlanBase& q = base(plan);
  const MapInput& m = *map_input(plan);
  const ConvPlan* cq = std::get_if<ConvPlan>(&plan);  // else a PoolPlan
  const auto* conv = std::get_if<ConvOp>(&ops[k]);
  const int64_t passes = cq != nullptr ? cq->passes : 1;
  std::vector<Emit> pending;
  const int64_t op_params = q.params_per_pass ? 0 : cx.param_load(q, 0, q.param_entries, pending);
  const int64_t op_table = cx.table_load(q, pending);
  // The input, external layout [row][group][col]: image row y holds the words
  // of every group, so a compute can start once its first rows are in (one
  // load per row when there are several groups, bank layout [group][row][col]).
  std::vector<Emit> input_loads;
  if (k == 0) {
    const int64_t per_load = m.g_in == 1 ? m.map_h : 1;
    for (int64_t y = 0; y < m.map_h; y += per_load) {
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.inputs[img]) + y * m.g_in * m.map_w * n;
      l.ext_row_stride = m.map_w * n;
      l.rows = m.g_in == 1 ? m.map_h : m.g_in;
      l.row_words = m.map_w;
      l.dst_kind = LoadDst::kBank;
      l.dst_id = in_bank;
      l.dst_addr = y * m.map_w;
      l.dst_row_stride = m.g_in == 1 ? m.map_w : m.map_h * m.map_w;
      input_loads.push_back(cx.em.load(l, q.name));
    }
  }
  const AxisTile rows = whole_axis(m.rows);
  const AxisTile cols = whole_axis(m.cols);
  const int64_t plane = op.out_h * op.out_w;
  const bool mul = conv != nullptr && conv->kind == ConvKind::kMul;
  if (mul) emit_mul_vector(cx, *conv, *cq, img, op_params, in_bank, pending, jobs);
  // Split passes: chunks of each pass's input groups, the partial sums in a bank of
  // their own (docs/compiler.md, "Split passes").
  const int64_t chunks = cq != nullptr ? cq->chunks : 1;
  const int64_t spill_bank = chunks > 1 ? cx.take_bank({in_bank, out_bank}) : -1;
  int64_t cache_base = 0;
  int64_t param_base = 0;
  for (int64_t step = 0; step < passes * chunks; ++step) {
    const int64_t pass = step / chunks, chunk = step % chunks;
    Job job;
    job.loads = std::move(pending);
    pending.clear();
    if (chunk == 0) {
      param_base =
          q.params_per_pass ? cx.param_load(q, pass * p, p, job.loads) : op_params + pass * p;
    }
    if (mul) {
      cache_base = cx.pl.mul_base + pass;  // the vector's group `pass`, as weights
    } else if (chunks > 1 && !cq->chunks_share_weights) {
      // Every chunk's weights in turn (streamed: they never fit at once).
      cache_base =
          cx.weight_load(*cq, (pass < cq->weight_passes ? pass : 0) * chunks + chunk, job.loads);
    } else if (cq != nullptr && pass < cq->weight_passes && chunk == 0) {
      // Later passes: pass 0's weights (a global pool's chunks: the pass's first words).
      cache_base = cx.pl.weights_resident ? cq->cache_base + pass * cq->per_pass
                                          : cx.weight_load(*cq, pass, job.loads);
    }
    // grouped ops only: the pass's channel group's input groups
    const int64_t first_group =
        cq != nullptr && conv != nullptr ? pass / conv->passes_per_group * cq->g_pass : 0;
    ComputeInstr c =
        tile_compute(ops[k], plan, rows, cols, first_group, in_bank, 0, param_base, cache_base);
    if (cq != nullptr) c.packed_rows = cq->packed_rows(pass);
    set_table(c, op_table);
    const int64_t group_base = cq != nullptr ? pass * plane : 0;
    c.dst_row_stride = op.out_w;
    c.dst_group_stride = plane;
    if (q.dst == Dst::kBank) {
      c.dst_kind = ComputeDst::kBank;
      c.dst_id = out_bank;
      c.dst_base = group_base;
    } else {
      c.dst_kind = ComputeDst::kPeCache;
      c.dst_id = img;
      c.dst_base = q.next_feat_base + group_base;
    }
    if (chunks > 1) split_chunk(c, *cq, chunk, spill_bank, 0, true);
    for (Emit& e : input_loads) job.loads.push_back(std::move(e));
    input_loads.clear();
    job.compute = cx.em.compute(c, q.name);
    if (m.out_external && chunk + 1 == chunks) {
      // The output: [group][row][col], a pass's group (a POOL: all) in one
      // STORE. A map kept in external memory: [row][group][col], one STORE per
      // group.
      const int64_t first = cq != nullptr ? pass : 0;
      const int64_t count = cq != nullptr ? 1 : m.out_groups;
      const auto store = [&](int64_t g, int64_t groups) {
        StoreInstr s;
        s.hdr.tag = q.tag;
        s.src_id = out_bank;
        s.src_addr = g * plane;
        s.src_row_stride = op.out_w;
        s.rows = groups * op.out_h;
        s.row_words = op.out_w;
        if (q.is_final) {
          s.ext_addr = static_cast<int64_t>(d.outputs[img] + g * plane * n);
          s.ext_row_stride = op.out_w * n;
        } else {
          s.ext_addr = static_cast<int64_t>(d.maps[img][k] + g * op.out_w * n);
          s.ext_row_stride = m.out_groups * op.out_w * n;
        }
        job.stores.push_back(cx.em.store(s, q.name));
      };
      if (q.is_final) {
        store(first, count);
      } else {
        for (int64_t g = first; g < first + count; ++g) store(g, 1);
      }
    }
    jobs.push_back(std::move(job));
  }
}

}  // namespace

Emission emit(const std::vector<Op>& ops, const Plan& pl, const HwTarget& t, int batch) {
  const int64_t n = t.lanes, p = t.pes;
  Emission out;
  out.data = data_layout(ops, pl, t, batch);
  const DataLayout& d = out.data;
  EmitContext cx(t, pl, d);
  const Emitter& em = cx.em;

  std::vector<Job> jobs;
  // Resident parameters and weights: those of the first op lead the program;
  // the later ops' (`late`) follow the first job's loads (the input), so the
  // first layer does not wait for every layer's weights to stream in.
  Job preamble, late;
  if (pl.params_resident) {
    for (size_t k = 0; k < pl.ops.size(); ++k) {
      const PlanBase& q = base(pl.ops[k]);
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
  if (pl.tables_resident && pl.tables > 0) {  // every table into its own slot, at once
    LoadInstr l;
    l.ext_addr = static_cast<int64_t>(d.params + pl.tables_ext);
    l.ext_row_stride = 256;
    l.rows = pl.tables;
    l.row_words = 256 / n;
    l.dst_kind = LoadDst::kTable;
    l.dst_row_stride = 256 / n;
    preamble.loads.push_back(em.load(l, "activation tables"));
  }
  if (pl.weights_resident) {
    for (size_t k = 0; k < ops.size(); ++k) {
      const auto* cq = std::get_if<ConvPlan>(&pl.ops[k]);
      if (cq == nullptr) continue;
      const ConvPlan& q = *cq;
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(d.weights + q.weights_ext);
      l.ext_row_stride = q.per_pass * n;
      l.rows = q.weight_blocks() * p;
      l.row_words = q.per_pass;
      l.dst_kind = LoadDst::kPeCache;
      l.dst_id = 0;
      l.dst_pe_step = true;
      l.dst_addr = q.cache_base;
      l.dst_row_stride = q.per_pass;
      Job& job = k == 0 ? preamble : late;
      job.loads.push_back(em.load(l, q.name));
      if (q.packed) cx.control_loads(q, 0, -1, -1, q.cache_base, job.loads);
    }
  }
  jobs.push_back(std::move(preamble));

  // Maps: every image through the convolution / pooling ops, each op whole or
  // in tiles; a map stays in a bank between two ops unless the second is tiled.
  size_t first_fc = ops.size();
  for (size_t k = 0; k < ops.size(); ++k) {
    if (is<FcOp>(ops[k])) {
      first_fc = k;
      break;
    }
  }
  for (int img = 0; img < batch; ++img) {
    int64_t cur_bank = -1;
    for (size_t k = 0; k < first_fc; ++k) {
      const PlanBase& q = base(pl.ops[k]);
      const MapInput& m = *map_input(pl.ops[k]);
      if (m.tiled) {
        TiledOpIo io;
        const OpBase& ob = base(ops[k]);
        int64_t tile_group = 0;
        for (size_t si = 0; si < ob.srcs.size(); ++si) {
          const int s = ob.srcs[si];
          TiledSource from;
          from.ext = s == kInputSrc ? d.inputs[img] : d.maps[img][static_cast<size_t>(s)];
          if (ob.parts.empty()) {  // one map, or an add's operands interleaved by group
            from.groups = m.g_in / static_cast<int64_t>(ob.srcs.size());
            from.tile_group = static_cast<int64_t>(si);
            from.step = static_cast<int64_t>(ob.srcs.size());
          } else {
            const InputPart& part = ob.parts[si];
            from.groups = part.src_groups;
            from.first = part.first_group;
            from.count = part.groups;
            from.tile_group = tile_group;
            from.factor = part.factor;
            tile_group += part.groups;
          }
          io.srcs.push_back(from);
        }
        io.in_width = m.map_w;
        io.out_bank = q.dst == Dst::kBank && !m.out_external ? cx.take_bank({}) : -1;
        io.out_ext = q.is_final ? d.outputs[img] : d.maps[img][k];
        io.out_is_output = q.is_final;
        emit_tiled_op(cx, ops[k], pl.ops[k], img, io, jobs);
        cur_bank = io.out_bank;
        continue;
      }
      const int64_t in_bank = k == 0 ? cx.take_bank({}) : cur_bank;
      const int64_t out_bank = q.dst == Dst::kBank ? cx.take_bank({in_bank}) : -1;
      emit_whole_op(cx, ops, k, img, in_bank, out_bank, jobs);
      cur_bank = out_bank;
    }
  }

  // Fully-connected layers, batch mode: tiles of neurons double-buffered in two banks.
  for (size_t k = first_fc; k < ops.size(); ++k) {
    const FcOp& op = std::get<FcOp>(ops[k]);  // lower() puts no conv or pool after an FC
    const FcPlan& q = std::get<FcPlan>(pl.ops[k]);
    std::vector<Emit> pending;
    // Features straight from external memory, image i into PE i: words [first, first +
    // words) of each image's (all of them, or one chunk's when they are streamed), from
    // the network input or the previous op's stored map.
    std::vector<uint64_t> images;
    for (int img = 0; img < batch; ++img) {
      images.push_back(k == 0 ? d.inputs[img] : d.maps[img][k - 1]);
    }
    const auto feature_load = [&](int64_t first, int64_t words, std::vector<Emit>& loads) {
      LoadInstr l;
      l.hdr.tag = q.tag;
      l.ext_addr = static_cast<int64_t>(images[0]) + first * n;
      l.ext_row_stride = batch > 1 ? static_cast<int64_t>(images[1] - images[0]) : 0;
      l.rows = batch;
      l.row_words = words;
      l.dst_kind = LoadDst::kPeCache;
      l.dst_id = 0;
      l.dst_pe_step = true;
      l.dst_addr = q.feat_base;
      l.dst_row_stride = q.features_streamed ? q.chunk_words : q.fc_words;
      loads.push_back(em.load(l, q.name));
    };
    if (k == 0 && !q.features_streamed) feature_load(0, q.fc_words, pending);
    // Split neurons (docs/compiler.md, "Split passes"): the partial sums in a bank of
    // their own, the tiles of weights in one or two others.
    const bool split = q.chunks > 1;
    const int64_t out_bank = q.dst == Dst::kBank ? cx.take_bank({}) : -1;
    const int64_t tile_bank0 = cx.take_bank({out_bank});
    const bool two =
        split ? t.banks - (out_bank >= 0 ? 1 : 0) - 1 >= 2 : t.banks >= 3 || q.dst != Dst::kBank;
    const int64_t tile_bank1 = two ? cx.take_bank({out_bank, tile_bank0}) : tile_bank0;
    const int64_t spill_bank = split ? cx.take_bank({out_bank, tile_bank0, tile_bank1}) : -1;
    const int64_t op_params = q.params_per_pass ? 0 : cx.param_load(q, 0, q.param_entries, pending);
    const int64_t op_table = cx.table_load(q, pending);
    int turn = 0;
    for (int64_t o0 = 0; o0 < op.out_c; o0 += q.tile) {
      const int64_t count = std::min(q.tile, op.out_c - o0);
      int64_t param_base = 0;
      for (int64_t chunk = 0; chunk < q.chunks; ++chunk) {
        const int64_t first = chunk * q.chunk_words, words = q.chunk_size(chunk);
        const int64_t bank = turn++ % 2 == 0 ? tile_bank0 : tile_bank1;
        Job job;
        job.loads = std::move(pending);
        pending.clear();
        if (chunk == 0) {
          param_base = q.params_per_pass ? cx.param_load(q, o0, count, job.loads) - o0 : op_params;
        }
        if (q.features_streamed) feature_load(first, words, job.loads);
        LoadInstr l;
        l.hdr.tag = q.tag;
        l.ext_addr =
            static_cast<int64_t>(d.weights + q.weights_ext + (o0 * q.fc_words + first) * n);
        l.ext_row_stride = q.fc_words * n;
        l.rows = count;
        l.row_words = words;
        l.dst_kind = LoadDst::kBank;
        l.dst_id = bank;
        l.dst_addr = 0;
        l.dst_row_stride = words;
        job.loads.push_back(em.load(l, q.name));
        ComputeInstr c;
        c.hdr.tag = q.tag;
        c.mode = ComputeMode::kFc;
        c.in_id = bank;
        c.in_base = 0;
        c.in_groups = words;
        c.out_h = count;
        c.out_w = 1;
        c.cache_base = q.feat_base + (q.features_streamed ? 0 : first);
        c.param_base = param_base + o0;
        c.clamp_lo = op.params.lo;
        c.clamp_hi = op.params.hi;
        if (chunk > 0) {
          c.acc_in = true;
          c.acc_id = spill_bank;
          c.acc_base = 0;
        }
        if (chunk + 1 < q.chunks) {  // the raw partial sums, in place
          c.acc_out = true;
          c.dst_kind = ComputeDst::kBank;
          c.dst_id = spill_bank;
          c.dst_base = 0;
          job.compute = em.compute(c, q.name);
          jobs.push_back(std::move(job));
          continue;
        }
        set_table(c, op_table);
        if (q.dst == Dst::kBank) {
          c.dst_kind = ComputeDst::kBank;
          c.dst_id = out_bank;
          c.dst_base = q.result_base(o0);
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
          s.src_addr = q.result_base(o0);
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

}  // namespace strata::compiler
