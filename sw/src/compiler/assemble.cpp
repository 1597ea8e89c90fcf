// SPDX-License-Identifier: Apache-2.0
// Pass 6, assemble (passes.hpp): relocation of external addresses, encoding, the
// memory image, its regions and the description of the inputs and outputs.
#include <fmt/format.h>

#include <algorithm>

#include "passes.hpp"
#include "strata/error.hpp"
#include "strata/target_rules.hpp"

namespace strata::compiler {

namespace {

std::string op_kind_name(const Op& op) {
  if (const auto* c = std::get_if<ConvOp>(&op)) {
    switch (c->kind) {
      case ConvKind::kDepthwise:
        return "depthwise";
      case ConvKind::kAdd:
        return "add";
      case ConvKind::kGlobalAvgPool:
        return "gpool";
      case ConvKind::kMul:
        return "mul";
      case ConvKind::kConv:
      case ConvKind::kGrouped:
      case ConvKind::kIdentityPool:
        return "conv";
    }
  }
  return is<FcOp>(op) ? "fc" : "pool";
}

// "1", or "1,0,1,2" (top, left, bottom, right) when the sides differ.
std::string pad_label(const Pads& p) {
  if (p.left == p.top && p.bottom == p.top && p.right == p.top) return std::to_string(p.top);
  return fmt::format("{},{},{},{}", p.top, p.left, p.bottom, p.right);
}

std::string pooling_detail(const Pooling& pool, const OpBase& op, bool clamp_only) {
  std::string s =
      clamp_only ? std::string(", elementwise")
                 : fmt::format(", {}pool {}/{}/{}{} -> [{}][{}]", pool.avg ? "avg" : "max",
                               pool.window.kernel, pool.window.stride, pad_label(pool.window.pad),
                               pool.window.ceil_mode ? " ceil" : "", op.out_h, op.out_w);
  return s + fmt::format(", post clamp [{}, {}]", pool.post_lo, pool.post_hi);
}

// The op's geometry and the decisions taken, for CompiledOp::detail.
std::string op_detail(const Op& op, const OpPlan& plan) {
  std::string s;
  if (const auto* c = std::get_if<ConvOp>(&op)) {
    const ConvPlan& q = std::get<ConvPlan>(plan);
    s = fmt::format("{} {}x{} s{} p{}: [{}][{}][{}] -> [{}][{}][{}], {} pass{} of {} words{}",
                    conv_kind_name(*c), c->kernel, c->kernel, c->stride, pad_label(c->pad), c->in_c,
                    c->in_h, c->in_w, c->out_c, c->conv_h, c->conv_w, q.passes,
                    q.passes == 1 ? "" : "es", q.per_pass,
                    q.reorder ? fmt::format(" (reordered input, run as {}x1)", c->kernel) : "");
    if (c->kind == ConvKind::kDepthwise) {
      s += c->depthwise_mode ? ", COMPUTE DEPTHWISE" : ", grouped COMPUTE CONV";
    }
    if (c->kind == ConvKind::kMul) {
      s += ", COMPUTE DEPTHWISE with the vector as weights (P selector CONVs per image)";
    }
    s += fmt::format(", clamp [{}, {}]", c->params.lo, c->params.hi);
    if (c->pool) s += pooling_detail(*c->pool, *c, false);
  } else if (const auto* f = std::get_if<FcOp>(&op)) {
    const FcPlan& q = std::get<FcPlan>(plan);
    s = fmt::format("fc {} -> {}, {} words per neuron, tiles of {}", f->features, f->out_c,
                    q.fc_words, q.tile);
    s += fmt::format(", clamp [{}, {}]", f->params.lo, f->params.hi);
  } else {
    const PoolOp& p = std::get<PoolOp>(op);
    s = fmt::format("pool [{}][{}][{}]", p.in_c, p.in_h, p.in_w);
    s += pooling_detail(p.pool, p, p.clamp_only);
  }
  const char* dst[] = {"bank", "PE caches", "transposed into the PE caches"};
  s += fmt::format(", results to {}", dst[static_cast<int>(base(plan).dst)]);
  return s;
}

// Where op k's input and output live and how it runs, for CompiledOp.
void placement(const Plan& pl, size_t k, CompiledOp& c) {
  const PlanBase& q = base(pl.ops[k]);
  const char* dst = q.dst == Dst::kBank ? "on chip" : "PE caches";
  if (const auto* fq = std::get_if<FcPlan>(&pl.ops[k])) {
    c.input_at = k == 0 ? "external" : "PE caches";
    c.output_at = q.is_final ? "external" : dst;
    c.tiling = fmt::format("tiles of {} neuron{}", fq->tile, fq->tile == 1 ? "" : "s");
    return;
  }
  const MapInput& m = *map_input(pl.ops[k]);
  const MapInput* prev = k > 0 ? map_input(pl.ops[k - 1]) : nullptr;
  c.input_at = k == 0 || (prev != nullptr && prev->out_external) ? "external" : "on chip";
  c.output_at = m.out_external ? "external" : dst;
  c.tiling = m.tiled ? fmt::format("{} band{} x {} strip{}", m.tiling.bands.size(),
                                   m.tiling.bands.size() == 1 ? "" : "s", m.tiling.strips.size(),
                                   m.tiling.strips.size() == 1 ? "" : "s")
                     : std::string("whole");
}

}  // namespace

Program assemble(const Network& net, const HwTarget& target, int batch, const std::vector<Op>& ops,
                 const Plan& pl, const std::vector<Emit>& emits, const DataLayout& data_layout,
                 const std::array<int64_t, isa::kEdges>& units) {
  const int64_t n = target.lanes;
  Program prog;
  prog.target = target;
  prog.network = net.name;
  prog.batch = batch;
  prog.units = units;
  prog.notes = pl.notes;
  for (size_t k = 0; k < ops.size(); ++k) {
    CompiledOp c;
    c.name = base(pl.ops[k]).name;
    c.kind = op_kind_name(ops[k]);
    c.detail = op_detail(ops[k], pl.ops[k]);
    c.layers = base(ops[k]).layers;
    c.tag = base(pl.ops[k]).tag;
    c.macs = base(ops[k]).macs;
    placement(pl, k, c);
    prog.ops.push_back(c);
    for (const std::string& note : base(ops[k]).notes) prog.notes.push_back(c.name + ": " + note);
  }

  // Assemble: CONFIG, the emitted instructions, END; data after them.
  const size_t count = emits.size() + 2;
  const uint64_t data = align_up(count * isa::kInstrBytes, kRegionAlign);
  isa::ConfigInstr cfg;
  cfg.version = target.version;
  cfg.pes = target.pes;
  cfg.lanes = target.lanes;
  cfg.banks = target.banks;
  cfg.bank_depth = target.bank_depth;
  cfg.pe_cache_depth = target.pe_cache_depth;
  cfg.param_depth = target.param_depth;
  cfg.sparse = target.sparse ? 1 : 0;
  cfg.act_tables = pl.table_slots;
  prog.instructions.push_back(isa::encode(cfg));
  for (const Emit& e : emits) {
    try {
      std::visit(
          [&](auto in) {
            using T = std::decay_t<decltype(in)>;
            if constexpr (!std::is_same_v<T, isa::ComputeInstr>) {
              in.ext_addr += static_cast<int64_t>(data);
            }
            // Every field fits its width (encode), and the instruction obeys the
            // target rules (plan() checked the layers' limits; this is the
            // instruction-level check the ISA simulator and the RTL decoders apply).
            const isa::Instruction encoded = isa::encode(in);
            if (auto v = first_violation(in, target)) throw Error(v->message);
            prog.instructions.push_back(encoded);
          },
          e.instr);
    } catch (const Error& err) {
      throw Error(fmt::format("op '{}': {}", e.what, err.message()),
                  ErrorContext{net.source_file, 0, ""});
    }
  }
  prog.instructions.push_back(isa::encode(isa::EndInstr{}));
  for (size_t e = 0; e + 8 <= pl.tables_ext; e += 8) {  // the entries; the tables follow
    const ParamEntry entry{static_cast<int64_t>(e / 8), pl.params[e + 6], pl.params[e + 7]};
    if (auto v = first_violation(entry, target)) {
      throw Error(fmt::format("parameter image: {}", v->message),
                  ErrorContext{net.source_file, 0, ""});
    }
  }

  const DataLayout& d = data_layout;
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
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto* cq = std::get_if<ConvPlan>(&pl.ops[k]);
    const auto* conv = std::get_if<ConvOp>(&ops[k]);
    if (cq == nullptr || conv->depthwise_mode || conv->kind == ConvKind::kGlobalAvgPool) continue;
    CompiledOp& c = prog.ops[k];
    c.weights_at = data + d.weights + cq->weights_ext;
    c.pass_words = cq->per_pass;
    c.weight_passes = cq->weight_blocks();  // split passes: every chunk's block
    if (cq->packed) {
      c.packed = true;
      c.dense_rows = cq->dense_per_pass * cq->weight_passes;
      for (int64_t pass = 0; pass < cq->weight_passes; ++pass) {
        c.packed_rows += cq->packed_rows(pass);
      }
      c.slots = cq->weight_slots;
      c.zero_slots = cq->zero_slots;
    }
  }
  prog.regions.push_back({"instructions", 0, count * isa::kInstrBytes});
  prog.regions.push_back({"params", data + d.params, pl.params.size()});
  prog.regions.push_back({"weights", data + d.weights, pl.weights.size()});
  for (int i = 0; i < batch; ++i) {
    prog.regions.push_back({fmt::format("input{}", i), data + d.inputs[i], d.input_bytes});
  }
  for (size_t i = 0; i < d.outputs.size(); ++i) {
    const std::string name = d.outputs.size() == 1 && is<FcOp>(ops.back())
                                 ? std::string("output")
                                 : fmt::format("output{}", i);
    prog.regions.push_back({name, data + d.outputs[i], d.output_bytes});
  }
  // A map kept in external memory that is a network output is that output's
  // region: output<i>:<layer> (the first of its output layers).
  const std::vector<int> out_layers = net.output_layers();
  for (size_t i = 0; i < d.maps.size(); ++i) {
    for (size_t k = 0; k < d.maps[i].size(); ++k) {
      if (d.map_bytes[k] == 0) continue;
      const std::vector<size_t>& outs = base(ops[k]).outputs;
      const std::string name =
          outs.empty()
              ? fmt::format("map{}:{}", i, base(pl.ops[k]).name)
              : fmt::format("output{}:{}", i,
                            net.layers[static_cast<size_t>(out_layers[outs.front()])].name);
      prog.regions.push_back({name, data + d.maps[i][k], d.map_bytes[k]});
    }
  }

  // Input and output placement.
  InputPlacement& in = prog.input;
  in.layout = pl.input_layout;
  in.shape = net.input_shape;
  for (uint64_t a : d.inputs) in.image_addr.push_back(data + a);
  if (in.layout == InputLayout::kFeatures) {
    in.groups = std::get<FcPlan>(pl.ops.front()).fc_words;
  } else {
    const MapInput& fq = *map_input(pl.ops.front());
    // An add of the input with itself reads it as both of its operands.
    in.groups = fq.g_in / static_cast<int64_t>(base(ops.front()).srcs.size());
    in.rows = fq.map_h;
    in.cols = fq.map_w;
    if (!base(ops.front()).parts.empty()) {  // the input as stored, read in parts
      in.groups = ceil_div(net.input_shape[0], n);
      in.rows = net.input_shape[1];
      in.cols = net.input_shape[2];
    }
    const auto* conv = std::get_if<ConvOp>(&ops.front());
    in.kernel = conv != nullptr ? conv->kernel : 1;
    in.stride = conv != nullptr ? conv->stride : 1;
    in.pad = conv != nullptr ? conv->pad.left : 0;
  }
  // The outputs, in the network's order: the last op's result in the output
  // regions, any other a map it keeps in external memory ([row][group][col]).
  const OpBase& last = base(ops.back());
  OutputPlacement final_out;
  for (uint64_t a : d.outputs) final_out.image_addr.push_back(data + a);
  if (is<FcOp>(ops.back())) {
    final_out.layout = OutputLayout::kNeurons;
    final_out.map_shape = {last.out_c, 1, 1};
  } else {
    final_out.layout = OutputLayout::kMap;
    final_out.map_shape = {last.out_c, last.out_h, last.out_w};
    final_out.groups = ceil_div(last.out_c, n);
  }
  prog.outputs.resize(out_layers.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    for (size_t j : base(ops[k]).outputs) {
      OutputPlacement& out = prog.outputs.at(j);
      if (k + 1 == ops.size()) {
        out = final_out;
      } else {
        const OpBase& op = base(ops[k]);
        out.layout = OutputLayout::kRowMap;
        out.map_shape = {op.out_c, op.out_h, op.out_w};
        out.groups = map_input(pl.ops[k])->out_groups;
        for (int i = 0; i < batch; ++i) {
          out.image_addr.push_back(data + d.maps[static_cast<size_t>(i)][k]);
        }
      }
      out.layer = net.layers[static_cast<size_t>(out_layers[j])].name;
      out.shape = net.output_shape(j);
    }
  }
  for (size_t j = 0; j < prog.outputs.size(); ++j) {
    if (prog.outputs[j].image_addr.empty()) {
      throw Error(fmt::format("internal: network output {} is no op's result", j));
    }
  }
  return prog;
}

}  // namespace strata::compiler
