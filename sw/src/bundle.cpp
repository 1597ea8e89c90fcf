// SPDX-License-Identifier: Apache-2.0
// Writes the bundle of a compiled program (strata/bundle.hpp; the byte layout
// is sw/rt/include/strata_bundle.h, documented in docs/bundle.md).
#include "strata/bundle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "strata/error.hpp"
#include "strata/isa.hpp"
#include "strata/isa_fields.hpp"
#include "strata_bundle.h"

namespace strata {
namespace {

void put16(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}
void put32(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_name(std::vector<uint8_t>& b, size_t at, const std::string& name, size_t bytes) {
  std::copy_n(name.begin(), std::min(name.size(), bytes), b.begin() + static_cast<long>(at));
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The kind of a compiler region (compiler.hpp, MemRegion::name).
uint32_t region_kind(const std::string& name) {
  if (name == "instructions") return STRATA_REGION_PROGRAM;
  if (name == "params" || name == "weights") return STRATA_REGION_PARAMETERS;
  if (name.rfind("input", 0) == 0) return STRATA_REGION_INPUT;
  if (name.rfind("output", 0) == 0) return STRATA_REGION_OUTPUT;
  return STRATA_REGION_SCRATCH;
}

struct Reloc {
  uint32_t index;
  uint16_t lsb, width;
};

// Every LOAD and STORE that reaches external memory: its ext_addr is a block offset.
std::vector<Reloc> relocations(const Program& p) {
  std::vector<Reloc> out;
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const isa::Instruction& in = p.instructions[i];
    const uint64_t op = in.opcode_value();
    const bool load = op == static_cast<uint64_t>(isa::Opcode::kLoad) &&
                      in.raw(isa::load::kSrcKind) == static_cast<uint64_t>(isa::LoadSrc::kExt);
    const bool store = op == static_cast<uint64_t>(isa::Opcode::kStore) &&
                       in.raw(isa::store::kDstKind) == static_cast<uint64_t>(isa::StoreDst::kExt);
    if (!load && !store) continue;
    const isa::Field& f = load ? isa::load::kExtAddr : isa::store::kExtAddr;
    out.push_back(
        {static_cast<uint32_t>(i), static_cast<uint16_t>(f.lsb), static_cast<uint16_t>(f.width)});
  }
  return out;
}

void put_tensor(std::vector<uint8_t>& b, size_t at, uint32_t kind, uint32_t layout,
                const Shape& shape, const Shape& map, int64_t groups, int64_t rows, int64_t cols,
                int kernel, int stride, int pad, float scale, const std::vector<uint64_t>& addr) {
  put32(b, at + STRATA_BT_KIND, kind);
  put32(b, at + STRATA_BT_LAYOUT, layout);
  // A flattened output's shape may be [K] or [K][1][1]: written as [C][H][W].
  Shape s = shape;
  while (s.size() < 3) s.push_back(1);
  put32(b, at + STRATA_BT_C, static_cast<uint64_t>(s[0]));
  put32(b, at + STRATA_BT_H, static_cast<uint64_t>(s[1]));
  put32(b, at + STRATA_BT_W, static_cast<uint64_t>(s[2]));
  put32(b, at + STRATA_BT_MAP_C, static_cast<uint64_t>(map[0]));
  put32(b, at + STRATA_BT_MAP_H, static_cast<uint64_t>(map[1]));
  put32(b, at + STRATA_BT_MAP_W, static_cast<uint64_t>(map[2]));
  put32(b, at + STRATA_BT_GROUPS, static_cast<uint64_t>(groups));
  put32(b, at + STRATA_BT_ROWS, static_cast<uint64_t>(rows));
  put32(b, at + STRATA_BT_COLS, static_cast<uint64_t>(cols));
  put32(b, at + STRATA_BT_KERNEL, static_cast<uint64_t>(kernel));
  put32(b, at + STRATA_BT_STRIDE, static_cast<uint64_t>(stride));
  put32(b, at + STRATA_BT_PAD, static_cast<uint64_t>(pad));
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  put32(b, at + STRATA_BT_SCALE, bits);
  put32(b, at + STRATA_BT_IMAGES, addr.size());
  for (size_t i = 0; i < addr.size(); ++i) put64(b, at + STRATA_BT_ADDR + 8 * i, addr[i]);
}

static_assert(static_cast<uint32_t>(InputLayout::kMap) == STRATA_INPUT_MAP &&
                  static_cast<uint32_t>(InputLayout::kReordered) == STRATA_INPUT_REORDERED &&
                  static_cast<uint32_t>(InputLayout::kFeatures) == STRATA_INPUT_FEATURES &&
                  static_cast<uint32_t>(OutputLayout::kMap) == STRATA_OUTPUT_MAP &&
                  static_cast<uint32_t>(OutputLayout::kNeurons) == STRATA_OUTPUT_NEURONS &&
                  static_cast<uint32_t>(OutputLayout::kRowMap) == STRATA_OUTPUT_ROWS,
              "the compiler's layouts are the bundle's");

}  // namespace

std::vector<uint8_t> make_bundle(const Program& p, const BundleScales& scales) {
  const HwTarget& t = p.target;
  std::vector<MemRegion> regions;
  for (const MemRegion& r : p.regions) {
    if (r.size > 0) regions.push_back(r);
  }
  const std::vector<Reloc> relocs = relocations(p);
  const size_t region_table = STRATA_BUNDLE_HEADER_BYTES;
  const size_t reloc_table = region_table + regions.size() * STRATA_BUNDLE_REGION_BYTES;
  const size_t tensor_table = reloc_table + relocs.size() * STRATA_BUNDLE_RELOC_BYTES;
  // Version 1 (one output) unless the network has several outputs.
  const size_t outputs = p.outputs.size();
  if (outputs < 1 || outputs > STRATA_BUNDLE_MAX_OUTPUTS) {
    throw Error(fmt::format("a bundle lists 1 to {} outputs, the program has {}",
                            STRATA_BUNDLE_MAX_OUTPUTS, outputs));
  }
  const size_t tensors = 1 + outputs;
  size_t end = tensor_table + tensors * STRATA_BUNDLE_TENSOR_BYTES;
  std::vector<size_t> content(regions.size(), 0);
  for (size_t i = 0; i < regions.size(); ++i) {
    const uint32_t kind = region_kind(regions[i].name);
    if (kind != STRATA_REGION_PROGRAM && kind != STRATA_REGION_PARAMETERS) continue;
    content[i] = align_up(end, STRATA_BUNDLE_CONTENT_ALIGN);
    end = content[i] + regions[i].size;
  }
  std::vector<uint8_t> b(end, 0);
  put32(b, STRATA_BH_MAGIC, STRATA_BUNDLE_MAGIC);
  put16(b, STRATA_BH_VERSION,
        outputs == 1 ? STRATA_BUNDLE_VERSION_ONE_OUTPUT : STRATA_BUNDLE_VERSION);
  put16(b, STRATA_BH_HEADER_BYTES, STRATA_BUNDLE_HEADER_BYTES);
  put64(b, STRATA_BH_FILE_BYTES, end);
  put64(b, STRATA_BH_BLOCK_BYTES, p.image.size());
  put32(b, STRATA_BH_BLOCK_ALIGN, kBundleBlockAlign);
  put_name(b, STRATA_BH_NETWORK, p.network, STRATA_BUNDLE_NAME_BYTES);
  put_name(b, STRATA_BH_CONFIG, t.name, STRATA_BUNDLE_NAME_BYTES);
  put16(b, STRATA_BH_HW_VERSION, static_cast<uint64_t>(t.version));
  b[STRATA_BH_PES] = static_cast<uint8_t>(t.pes);
  b[STRATA_BH_LANES] = static_cast<uint8_t>(t.lanes);
  b[STRATA_BH_BANKS] = static_cast<uint8_t>(t.banks);
  b[STRATA_BH_SPARSE] = t.sparse ? 1 : 0;
  put16(b, STRATA_BH_AXI_DATA_WIDTH, static_cast<uint64_t>(t.axi_data_width));
  put32(b, STRATA_BH_BANK_DEPTH, static_cast<uint64_t>(t.bank_depth));
  put32(b, STRATA_BH_CACHE_DEPTH, static_cast<uint64_t>(t.pe_cache_depth));
  put32(b, STRATA_BH_PARAM_DEPTH, static_cast<uint64_t>(t.param_depth));
  b[STRATA_BH_MAX_KERNEL] = static_cast<uint8_t>(t.max_kernel);
  b[STRATA_BH_MAX_POOL_KERNEL] = static_cast<uint8_t>(t.max_pool_kernel);
  put16(b, STRATA_BH_MAX_IMAGE_WIDTH, static_cast<uint64_t>(t.max_image_width));
  // The tables the program uses (its CONFIG's act_tables), not the target's:
  // a program without tables runs on a build without the table unit.
  put16(b, STRATA_BH_ACT_TABLES,
        p.instructions.empty()
            ? 0
            : static_cast<uint64_t>(isa::decode_config(p.instructions.front()).act_tables));
  put32(b, STRATA_BH_INSTRUCTIONS, p.instructions.size());
  put32(b, STRATA_BH_BATCH, static_cast<uint64_t>(p.batch));
  put32(b, STRATA_BH_REGION_COUNT, regions.size());
  put32(b, STRATA_BH_REGION_TABLE, region_table);
  put32(b, STRATA_BH_RELOC_COUNT, relocs.size());
  put32(b, STRATA_BH_RELOC_TABLE, reloc_table);
  put32(b, STRATA_BH_TENSOR_COUNT, tensors);
  put32(b, STRATA_BH_TENSOR_TABLE, tensor_table);
  for (size_t i = 0; i < regions.size(); ++i) {
    const MemRegion& r = regions[i];
    const size_t at = region_table + i * STRATA_BUNDLE_REGION_BYTES;
    const uint32_t kind = region_kind(r.name);
    put_name(b, at + STRATA_BR_NAME, r.name, STRATA_BUNDLE_REGION_NAME_BYTES);
    put32(b, at + STRATA_BR_KIND, kind);
    put32(b, at + STRATA_BR_FLAGS,
          content[i] != 0                 ? STRATA_REGION_CONTENTS
          : kind == STRATA_REGION_SCRATCH ? STRATA_REGION_ZERO
                                          : 0u);
    put64(b, at + STRATA_BR_OFFSET, r.offset);
    put64(b, at + STRATA_BR_SIZE, r.size);
    put64(b, at + STRATA_BR_CONTENT, content[i]);
    if (content[i] != 0) {
      std::copy_n(p.image.begin() + static_cast<long>(r.offset), r.size,
                  b.begin() + static_cast<long>(content[i]));
    }
  }
  for (size_t i = 0; i < relocs.size(); ++i) {
    const size_t at = reloc_table + i * STRATA_BUNDLE_RELOC_BYTES;
    put32(b, at + STRATA_BL_INDEX, relocs[i].index);
    put16(b, at + STRATA_BL_LSB, relocs[i].lsb);
    put16(b, at + STRATA_BL_WIDTH, relocs[i].width);
  }
  const InputPlacement& in = p.input;
  const bool map = in.layout != InputLayout::kFeatures;
  const bool reordered = in.layout == InputLayout::kReordered;  // the only one with a window
  put_tensor(b, tensor_table, STRATA_TENSOR_INPUT, static_cast<uint32_t>(in.layout), in.shape,
             in.shape, in.groups, map ? in.rows : 0, map ? in.cols : 0, reordered ? in.kernel : 0,
             reordered ? in.stride : 0, reordered ? in.pad : 0, scales.input, in.image_addr);
  for (size_t j = 0; j < outputs; ++j) {
    const OutputPlacement& out = p.outputs[j];
    const float scale = j < scales.outputs.size() ? scales.outputs[j] : 0.0f;
    put_tensor(b, tensor_table + (1 + j) * STRATA_BUNDLE_TENSOR_BYTES, STRATA_TENSOR_OUTPUT,
               static_cast<uint32_t>(out.layout), out.shape, out.map_shape, out.groups, 0, 0, 0, 0,
               0, scale, out.image_addr);
  }
  put32(b, STRATA_BH_CRC32, strata_crc32(0, b.data(), b.size()));
  return b;
}

}  // namespace strata
