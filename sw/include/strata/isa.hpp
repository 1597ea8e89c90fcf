// SPDX-License-Identifier: Apache-2.0
// The Strata instruction set in C++ (docs/isa.md): a 512-bit instruction with
// typed, range-checked access to the fields of strata/isa_fields.hpp, the
// dependency edges of each opcode, a one-line disassembler, and (at the end,
// strata/isa_codec.hpp) one struct per opcode with encode / decode. Both
// included headers are generated from config/isa.yaml by scripts/gen_isa.py.
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
  // Throws strata::Error naming both opcodes unless the opcode is `op` (the
  // decoders' check).
  void expect_opcode(Opcode op) const;
  // True when the opcode is known and every bit it does not use is 0.
  bool reserved_bits_clear() const;

  // 64 bytes, little endian (word 0 first): the external-memory form.
  void to_bytes(uint8_t* out) const;
  static Instruction from_bytes(const uint8_t* in);

  bool operator==(const Instruction&) const = default;
};

// One readable line, e.g.
//   COMPUTE CONV in b0[0] 32x32 g2 k5x1 s1,1 p2,0 -> 32x32 w[0] p[0] clamp[-128,127]
//           maxpool k3 s2 p0 ceil -> 16x16 post[0,127] -> b1[0] row 16 | L2C 21 ... tag 0
// (on one line). Unknown opcodes and enum values are shown as numbers.
std::string disassemble(const Instruction& instr);

// The N-byte words LOAD CONTROL writes on sparse builds (docs/isa.md, LOAD).
// A control word: byte m bits 1:0, lane m's select code; byte 0 bits 3:2, the
// row's destination (kDestOwn, kDestPrev: PE p - 1, kDestNext: PE p + 1).
// A schedule word: the input group of the row's first dense row in bytes 0..1
// (little-endian), its tap in byte 2 (ky bits 3:0, kx bits 7:4).
inline constexpr int kDestOwn = 0, kDestPrev = 1, kDestNext = 2;
struct ScheduleEntry {
  int64_t ky = 0, kx = 0, g = 0;
};
inline int control_select(const uint8_t* word, int64_t lane) { return word[lane] & 3; }
inline int control_dest(const uint8_t* word) { return (word[0] >> 2) & 3; }
inline void set_control_dest(uint8_t* word, int dest) {
  word[0] = static_cast<uint8_t>((word[0] & ~0x0C) | dest << 2);
}
inline ScheduleEntry schedule_entry(const uint8_t* word) {
  return {word[2] & 0x0F, word[2] >> 4, word[0] | word[1] << 8};
}
inline void set_schedule_entry(uint8_t* word, const ScheduleEntry& e) {
  word[0] = static_cast<uint8_t>(e.g);
  word[1] = static_cast<uint8_t>(e.g >> 8);
  word[2] = static_cast<uint8_t>(e.ky | e.kx << 4);
}
// Byte b of an N-byte word whose bits outside the format are set, or -1;
// a control word's destination 3 counts as such a bit of byte 0.
int control_word_bad_byte(const uint8_t* word, int64_t n);
int schedule_word_bad_byte(const uint8_t* word, int64_t n);

}  // namespace strata::isa

// Header, LoadInstr, StoreInstr, ComputeInstr, EndInstr, ConfigInstr and their
// encode() / decode_<op>() (generated): last, because they use Instruction.
#include "strata/isa_codec.hpp"  // IWYU pragma: export
