// SPDX-License-Identifier: Apache-2.0
// Instruction fields, dependency edges and the disassembler (isa.hpp). The
// per-opcode encode / decode is generated (strata/isa_codec.hpp).
#include "strata/isa.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "strata/error.hpp"

namespace strata::isa {
namespace {

constexpr int kWordBits = 64;

uint64_t low_mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

std::string enum_text(const char* name, uint64_t value) {
  return name != nullptr ? std::string(name) : fmt::format("?{}", value);
}

// " | L2C 12 (first 4, step 2), S2C 1 -> C2S 16, C2L 1 | tag 3": the non-zero
// dependency counts named by their edges.
std::string deps_text(const Instruction& instr) {
  const auto op = static_cast<Opcode>(instr.opcode_value());
  const EdgeSlots slots = edge_slots(op);
  const Header h = decode_header(instr);
  std::vector<std::string> acq, rel;
  const auto name = [](const std::optional<Edge>& e, const char* fallback) {
    return e ? std::string(edge_name(*e)) : std::string(fallback);
  };
  if (h.acq0 != 0 || h.acq0_first != 0 || h.acq0_step != 0) {
    std::string s = fmt::format("{} {}", name(slots.acq0, "acq0"), h.acq0);
    if (h.acq0_first != h.acq0 || h.acq0_step != 0) {
      s += fmt::format(" (first {}, step {})", h.acq0_first, h.acq0_step);
    }
    acq.push_back(s);
  }
  if (h.acq1 != 0) acq.push_back(fmt::format("{} {}", name(slots.acq1, "acq1"), h.acq1));
  if (h.rel0 != 0) rel.push_back(fmt::format("{} {}", name(slots.rel0, "rel0"), h.rel0));
  if (h.rel1 != 0) rel.push_back(fmt::format("{} {}", name(slots.rel1, "rel1"), h.rel1));
  std::string out;
  if (!acq.empty() || !rel.empty()) {
    out += " | wait ";
    out += acq.empty() ? "-" : fmt::format("{}", fmt::join(acq, ", "));
    out += " -> signal ";
    out += rel.empty() ? "-" : fmt::format("{}", fmt::join(rel, ", "));
  }
  if (h.tag != 0) out += fmt::format(" | tag {}", h.tag);
  return out;
}

std::string load_text(const Instruction& instr) {
  const LoadInstr l = decode_load(instr);
  const uint64_t kind = instr.raw(load::kDstKind);
  std::string dst;
  switch (kind) {
    case static_cast<uint64_t>(LoadDst::kBank):
      dst = fmt::format("b{}[{}]", l.dst_id, l.dst_addr);
      break;
    case static_cast<uint64_t>(LoadDst::kPeCache):
      dst = l.dst_pe_step ? fmt::format("pe{}+r[{}]", l.dst_id, l.dst_addr)
                          : fmt::format("pe{}[{}]", l.dst_id, l.dst_addr);
      break;
    case static_cast<uint64_t>(LoadDst::kParam):
      dst = fmt::format("param[{}]", l.dst_addr);
      break;
    case static_cast<uint64_t>(LoadDst::kControl):  // PE control planes, or the schedule
      dst = l.dst_pe_step ? fmt::format("ctl{}+r[{}]", l.dst_id, l.dst_addr)
                          : fmt::format("ctl{}[{}]", l.dst_id, l.dst_addr);
      break;
    default:
      dst = enum_text(load_dst_name(kind), kind);
  }
  if (l.src_kind == LoadSrc::kCascade) {
    return fmt::format("LOAD    {} <- cascade #{} {}x{}w (dst row {})", dst, l.link_id, l.rows,
                       l.row_words, l.dst_row_stride);
  }
  if (instr.raw(load::kSrcKind) != 0) {
    return fmt::format("LOAD    {} <- {}", dst, enum_text(nullptr, instr.raw(load::kSrcKind)));
  }
  return fmt::format("LOAD    {} <- ext 0x{:x} {}x{}w (ext row {} B, dst row {})", dst, l.ext_addr,
                     l.rows, l.row_words, l.ext_row_stride, l.dst_row_stride);
}

std::string store_text(const Instruction& instr) {
  const StoreInstr s = decode_store(instr);
  if (s.dst_kind == StoreDst::kCascade) {
    return fmt::format("STORE   b{}[{}] {}x{}w (src row {}) -> cascade #{}", s.src_id, s.src_addr,
                       s.rows, s.row_words, s.src_row_stride, s.link_id);
  }
  return fmt::format("STORE   b{}[{}] {}x{}w (src row {}) -> ext 0x{:x} (ext row {} B)", s.src_id,
                     s.src_addr, s.rows, s.row_words, s.src_row_stride, s.ext_addr,
                     s.ext_row_stride);
}

std::string pool_text(const Instruction& instr, const ComputeInstr& c) {
  const uint64_t op = instr.raw(compute::kPoolOp);
  // Padding in ONNX order: top, left, bottom, right.
  return fmt::format("{}pool k{} s{} p{},{},{},{}{} -> {}x{} post[{},{}]",
                     op == static_cast<uint64_t>(PoolOp::kAvg) ? "avg" : "max", c.pool_k, c.pool_s,
                     c.pool_pad_top, c.pool_pad_left, c.pool_pad_bottom, c.pool_pad_right,
                     c.pool_ceil ? " ceil" : "", c.pool_out_h, c.pool_out_w, c.post_lo, c.post_hi);
}

std::string compute_dst_text(const Instruction& instr, const ComputeInstr& c, bool groups) {
  const uint64_t kind = instr.raw(compute::kDstKind);
  std::string s;
  switch (kind) {
    case static_cast<uint64_t>(ComputeDst::kBank):
      s = fmt::format("b{}[{}]", c.dst_id, c.dst_base);
      break;
    case static_cast<uint64_t>(ComputeDst::kPeCache):
      s = fmt::format("pe{}[{}]", c.dst_id, c.dst_base);
      break;
    case static_cast<uint64_t>(ComputeDst::kPeTranspose):
      return fmt::format("transpose pe*[{}].{}", c.dst_base, c.dst_lane);
    default:
      return fmt::format("{}[{}]", enum_text(compute_dst_name(kind), kind), c.dst_base);
  }
  if (c.mode != ComputeMode::kFc) s += fmt::format(" row {}", c.dst_row_stride);
  if (groups) s += fmt::format(" group {}", c.dst_group_stride);
  return s;
}

std::string compute_text(const Instruction& instr) {
  const ComputeInstr c = decode_compute(instr);
  const uint64_t mode = instr.raw(compute::kMode);
  switch (mode) {
    case static_cast<uint64_t>(ComputeMode::kConv): {
      // Padding in ONNX order: top, left, bottom, right.
      std::string s = fmt::format(
          "COMPUTE CONV b{}[{}] {}x{} g{} k{}x{} s{},{} p{},{},{},{} -> {}x{} w[{}] prm[{}] "
          "clamp[{},{}]",
          c.in_id, c.in_base, c.in_h, c.in_w, c.in_groups, c.kernel_h, c.kernel_w, c.stride_h,
          c.stride_w, c.pad_top, c.pad_left, c.pad_bottom, c.pad_right, c.out_h, c.out_w,
          c.cache_base, c.param_base, c.clamp_lo, c.clamp_hi);
      if (c.packed_rows != 0) s += fmt::format(" packed {}", c.packed_rows);
      if (c.pool_en) s += fmt::format(" {}", pool_text(instr, c));
      return fmt::format("{} -> {}", s, compute_dst_text(instr, c, false));
    }
    case static_cast<uint64_t>(ComputeMode::kFc):
      return fmt::format("COMPUTE FC   b{}[{}] g{} x {} neurons x[{}] prm[{}] clamp[{},{}] -> {}",
                         c.in_id, c.in_base, c.in_groups, c.out_h, c.cache_base, c.param_base,
                         c.clamp_lo, c.clamp_hi, compute_dst_text(instr, c, false));
    case static_cast<uint64_t>(ComputeMode::kPool):
      return fmt::format("COMPUTE POOL b{}[{}] {}x{} g{} {} -> {}", c.in_id, c.in_base, c.in_h,
                         c.in_w, c.in_groups, pool_text(instr, c),
                         compute_dst_text(instr, c, true));
    case static_cast<uint64_t>(ComputeMode::kDepthwise):
      // Padding in ONNX order: top, left, bottom, right.
      return fmt::format(
          "COMPUTE DEPTHWISE b{}[{}] {}x{} g{} k{} s{} p{},{},{},{}{} -> {}x{} w[{}] prm[{}] "
          "clamp[{},{}] -> {}",
          c.in_id, c.in_base, c.in_h, c.in_w, c.in_groups, c.pool_k, c.pool_s, c.pool_pad_top,
          c.pool_pad_left, c.pool_pad_bottom, c.pool_pad_right, c.pool_ceil ? " ceil" : "",
          c.pool_out_h, c.pool_out_w, c.cache_base, c.param_base, c.clamp_lo, c.clamp_hi,
          compute_dst_text(instr, c, false));
    default:
      return fmt::format("COMPUTE {}", enum_text(compute_mode_name(mode), mode));
  }
}

}  // namespace

const char* engine_name(Engine e) {
  switch (e) {
    case Engine::kLoad:
      return "load";
    case Engine::kCompute:
      return "compute";
    case Engine::kStore:
      return "store";
  }
  return "?";
}

const char* edge_name(Edge e) {
  switch (e) {
    case Edge::kL2C:
      return "L2C";
    case Edge::kC2S:
      return "C2S";
    case Edge::kC2L:
      return "C2L";
    case Edge::kS2C:
      return "S2C";
    case Edge::kS2L:
      return "S2L";
  }
  return "?";
}

Engine edge_producer(Edge e) {
  switch (e) {
    case Edge::kL2C:
      return Engine::kLoad;
    case Edge::kC2S:
    case Edge::kC2L:
      return Engine::kCompute;
    case Edge::kS2C:
    case Edge::kS2L:
      return Engine::kStore;
  }
  return Engine::kLoad;
}

Engine edge_consumer(Edge e) {
  switch (e) {
    case Edge::kL2C:
    case Edge::kS2C:
      return Engine::kCompute;
    case Edge::kC2S:
      return Engine::kStore;
    case Edge::kC2L:
    case Edge::kS2L:
      return Engine::kLoad;
  }
  return Engine::kLoad;
}

EdgeSlots edge_slots(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
      return {Edge::kC2L, Edge::kS2L, Edge::kL2C, std::nullopt};
    case Opcode::kCompute:
      return {Edge::kL2C, Edge::kS2C, Edge::kC2S, Edge::kC2L};
    case Opcode::kStore:
      return {Edge::kC2S, std::nullopt, Edge::kS2C, Edge::kS2L};
    default:
      return {};
  }
}

std::optional<Engine> engine_of(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
      return Engine::kLoad;
    case Opcode::kCompute:
      return Engine::kCompute;
    case Opcode::kStore:
      return Engine::kStore;
    default:
      return std::nullopt;
  }
}

uint64_t Instruction::raw(const Field& f) const {
  const int word = f.lsb / kWordBits;
  const int bit = f.lsb % kWordBits;
  uint64_t v = words[word] >> bit;
  if (bit + f.width > kWordBits) v |= words[word + 1] << (kWordBits - bit);
  return v & low_mask(f.width);
}

int64_t Instruction::get(const Field& f) const {
  const uint64_t v = raw(f);
  if (f.is_signed && f.width < 64 && ((v >> (f.width - 1)) & 1) != 0) {
    return static_cast<int64_t>(v | ~low_mask(f.width));
  }
  return static_cast<int64_t>(v);
}

void Instruction::set(const Field& f, int64_t value) {
  const int64_t lo = f.is_signed ? -(int64_t{1} << (f.width - 1)) : 0;
  const int64_t hi = f.is_signed ? (int64_t{1} << (f.width - 1)) - 1
                                 : static_cast<int64_t>(low_mask(std::min(f.width, 63)));
  if (value < lo || value > hi) {
    throw Error(fmt::format("field '{}' ({} bits, {}) cannot hold {} (range {}..{})", f.name,
                            f.width, f.is_signed ? "signed" : "unsigned", value, lo, hi));
  }
  const uint64_t bits = static_cast<uint64_t>(value) & low_mask(f.width);
  const int word = f.lsb / kWordBits;
  const int bit = f.lsb % kWordBits;
  const uint64_t mask = low_mask(f.width);
  words[word] = (words[word] & ~(mask << bit)) | (bits << bit);
  if (bit + f.width > kWordBits) {
    const int shift = kWordBits - bit;
    words[word + 1] = (words[word + 1] & ~(mask >> shift)) | (bits >> shift);
  }
}

void Instruction::expect_opcode(Opcode op) const {
  const uint64_t got = opcode_value();
  if (got != static_cast<uint64_t>(op)) {
    const char* name = opcode_name(got);
    throw Error(fmt::format("instruction has opcode {} ({}), expected {}", got,
                            name != nullptr ? name : "unknown",
                            opcode_name(static_cast<uint64_t>(op))));
  }
}

bool Instruction::reserved_bits_clear() const {
  const std::array<uint64_t, kInstrWords>* used = nullptr;
  switch (opcode_value()) {
    case static_cast<uint64_t>(Opcode::kLoad):
      used = &load::kUsedMask;
      break;
    case static_cast<uint64_t>(Opcode::kCompute):
      used = &compute::kUsedMask;
      break;
    case static_cast<uint64_t>(Opcode::kStore):
      used = &store::kUsedMask;
      break;
    case static_cast<uint64_t>(Opcode::kEnd):
      used = &end::kUsedMask;
      break;
    case static_cast<uint64_t>(Opcode::kConfig):
      used = &config::kUsedMask;
      break;
    default:
      return false;
  }
  for (int i = 0; i < kInstrWords; ++i) {
    if ((words[i] & ~(*used)[i]) != 0) return false;
  }
  return true;
}

void Instruction::to_bytes(uint8_t* out) const {
  for (int w = 0; w < kInstrWords; ++w) {
    for (int b = 0; b < 8; ++b) out[w * 8 + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  }
}

Instruction Instruction::from_bytes(const uint8_t* in) {
  Instruction instr;
  for (int w = 0; w < kInstrWords; ++w) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | in[w * 8 + b];
    instr.words[w] = v;
  }
  return instr;
}

std::string disassemble(const Instruction& instr) {
  const uint64_t op = instr.opcode_value();
  std::string text;
  switch (op) {
    case static_cast<uint64_t>(Opcode::kLoad):
      text = load_text(instr);
      break;
    case static_cast<uint64_t>(Opcode::kCompute): {
      text = compute_text(instr);
      const ComputeInstr c = decode_compute(instr);
      if (c.act_table_en) text += fmt::format(" table {}", c.act_table);
      if (c.acc_in) text += fmt::format(" acc_in b{}[{}]", c.acc_id, c.acc_base);
      if (c.acc_out) text += " acc_out";
      break;
    }
    case static_cast<uint64_t>(Opcode::kStore):
      text = store_text(instr);
      break;
    case static_cast<uint64_t>(Opcode::kEnd):
      text = "END";
      break;
    case static_cast<uint64_t>(Opcode::kConfig): {
      const ConfigInstr c = decode_config(instr);
      text = fmt::format("CONFIG  version {} P {} N {} banks {} x {} cache {} params {}", c.version,
                         c.pes, c.lanes, c.banks, c.bank_depth, c.pe_cache_depth, c.param_depth);
      if (c.sparse != 0) text += " sparse";
      if (c.act_tables != 0) text += fmt::format(" tables {}", c.act_tables);
      break;
    }
    default:
      return fmt::format("ILLEGAL opcode {} (words {:016x} ...)", op, instr.words[0]);
  }
  text += deps_text(instr);
  if (!instr.reserved_bits_clear()) text += " | RESERVED BITS SET";
  return text;
}

int control_word_bad_byte(const uint8_t* word, int64_t n) {
  if ((word[0] & ~0x0F) != 0 || control_dest(word) == 3) return 0;
  for (int64_t b = 1; b < n; ++b) {
    if ((word[b] & ~0x03) != 0) return static_cast<int>(b);
  }
  return -1;
}

int schedule_word_bad_byte(const uint8_t* word, int64_t n) {
  for (int64_t b = 3; b < n; ++b) {
    if (word[b] != 0) return static_cast<int>(b);
  }
  return -1;
}

}  // namespace strata::isa
