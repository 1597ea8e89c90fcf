// The Strata instruction set in C++ (docs/isa.md): a 512-bit instruction with
// typed, range-checked access to the fields of strata/isa_fields.hpp (generated
// from config/isa.yaml), one struct per opcode with encode / decode, the
// dependency edges of each opcode, and a one-line disassembler.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "strata/isa_fields.hpp"

namespace strata::isa {

// The three engines and the five dependency edges (docs/isa.md, Dependencies).
enum class Engine : uint8_t { kLoad = 0, kCompute = 1, kStore = 2 };
inline constexpr int kEngines = 3;
enum class Edge : uint8_t { kL2C = 0, kC2S = 1, kC2L = 2, kS2C = 3, kS2L = 4 };
inline constexpr int kEdges = 5;

const char* engine_name(Engine e);  // "load", "compute", "store"
const char* edge_name(Edge e);      // "L2C", ...
Engine edge_producer(Edge e);
Engine edge_consumer(Edge e);

// The header's dependency slots of one opcode; nullopt = the field must be 0.
struct EdgeSlots {
  std::optional<Edge> acq0, acq1, rel0, rel1;
};
EdgeSlots edge_slots(Opcode op);             // END, CONFIG, ILLEGAL: all nullopt
std::optional<Engine> engine_of(Opcode op);  // nullopt for END, CONFIG, ILLEGAL

// One instruction: eight little-endian 64-bit words, bit b in word b / 64.
struct Instruction {
  std::array<uint64_t, kInstrWords> words{};

  // Raw bits of a field (zero-extended).
  uint64_t raw(const Field& f) const;
  // The field's value: sign-extended for signed fields.
  int64_t get(const Field& f) const;
  // Writes a field; throws strata::Error naming the field when `value` does
  // not fit (unsigned: 0 .. 2^w - 1, signed: -2^(w-1) .. 2^(w-1) - 1).
  void set(const Field& f, int64_t value);

  uint64_t opcode_value() const { return raw(hdr::kOpcode); }
  // True when the opcode is known and every bit it does not use is 0.
  bool reserved_bits_clear() const;

  // 64 bytes, little endian (word 0 first): the external-memory form.
  void to_bytes(uint8_t* out) const;
  static Instruction from_bytes(const uint8_t* in);

  bool operator==(const Instruction&) const = default;
};

// Header fields shared by every opcode.
struct Header {
  int64_t acq0 = 0;
  int64_t acq1 = 0;
  int64_t rel0 = 0;
  int64_t rel1 = 0;
  int64_t acq0_first = 0;
  int64_t acq0_step = 0;
  int64_t tag = 0;
  bool operator==(const Header&) const = default;
};

// Per-opcode views. Values are plain integers so that encode() can reject the
// ones that do not fit their field (strata::Error naming the field).
struct LoadInstr {
  Header hdr;
  int64_t ext_addr = 0;
  int64_t ext_row_stride = 0;
  int64_t rows = 0;
  int64_t row_words = 0;
  LoadDst dst_kind = LoadDst::kBank;
  int64_t dst_id = 0;
  bool dst_pe_step = false;
  int64_t dst_addr = 0;
  int64_t dst_row_stride = 0;
  bool operator==(const LoadInstr&) const = default;
};

struct StoreInstr {
  Header hdr;
  int64_t ext_addr = 0;
  int64_t ext_row_stride = 0;
  int64_t rows = 0;
  int64_t row_words = 0;
  int64_t src_id = 0;
  int64_t src_addr = 0;
  int64_t src_row_stride = 0;
  bool operator==(const StoreInstr&) const = default;
};

struct ComputeInstr {
  Header hdr;
  ComputeMode mode = ComputeMode::kConv;
  int64_t in_id = 0;
  int64_t in_base = 0;
  int64_t in_h = 0;
  int64_t in_w = 0;
  int64_t in_groups = 0;
  int64_t kernel_h = 0;
  int64_t kernel_w = 0;
  int64_t stride_h = 0;
  int64_t stride_w = 0;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  int64_t out_h = 0;
  int64_t out_w = 0;
  int64_t cache_base = 0;
  int64_t param_base = 0;
  int64_t clamp_lo = -128;
  int64_t clamp_hi = 127;
  bool pool_en = false;
  PoolOp pool_op = PoolOp::kMax;
  bool pool_ceil = false;
  int64_t pool_k = 0;
  int64_t pool_s = 0;
  int64_t pool_pad = 0;
  int64_t pool_out_h = 0;
  int64_t pool_out_w = 0;
  ComputeDst dst_kind = ComputeDst::kBank;
  int64_t dst_id = 0;
  int64_t dst_base = 0;
  int64_t dst_row_stride = 0;
  int64_t dst_group_stride = 0;
  int64_t post_lo = -128;
  int64_t post_hi = 127;
  int64_t dst_lane = 0;
  bool operator==(const ComputeInstr&) const = default;
};

struct EndInstr {
  Header hdr;
  bool operator==(const EndInstr&) const = default;
};

struct ConfigInstr {
  Header hdr;
  int64_t version = 0;
  int64_t pes = 0;
  int64_t lanes = 0;
  int64_t banks = 0;
  int64_t bank_depth = 0;
  int64_t pe_cache_depth = 0;
  int64_t param_depth = 0;
  bool operator==(const ConfigInstr&) const = default;
};

Instruction encode(const LoadInstr& in);
Instruction encode(const StoreInstr& in);
Instruction encode(const ComputeInstr& in);
Instruction encode(const EndInstr& in);
Instruction encode(const ConfigInstr& in);

// Decoders throw strata::Error when the opcode is not the expected one. Enum
// fields are cast without checking (the simulator checks them).
Header decode_header(const Instruction& instr);
void encode_header(Instruction& instr, const Header& hdr);
LoadInstr decode_load(const Instruction& instr);
StoreInstr decode_store(const Instruction& instr);
ComputeInstr decode_compute(const Instruction& instr);
EndInstr decode_end(const Instruction& instr);
ConfigInstr decode_config(const Instruction& instr);

// One readable line, e.g.
//   COMPUTE CONV in b0[0] 32x32 g2 k5x1 s1,1 p2,0 -> 32x32 w[0] p[0] clamp[-128,127]
//           maxpool k3 s2 p0 ceil -> 16x16 post[0,127] -> b1[0] row 16 | L2C 21 ... tag 0
// (on one line). Unknown opcodes and enum values are shown as numbers.
std::string disassemble(const Instruction& instr);

}  // namespace strata::isa
