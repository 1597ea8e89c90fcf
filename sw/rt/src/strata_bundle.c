/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt: reading and checking a bundle (strata_bundle.h, docs/bundle.md).
 * Every offset and size is checked before it is used, with sums that cannot
 * overflow, so a malformed or truncated file is STRATA_E_BUNDLE naming the
 * field, never a read outside the caller's bytes. */
#include "strata_isa.h"
#include "strata_rt_internal.h"

uint32_t strata_crc32(uint32_t crc, const uint8_t* bytes, uint64_t size) {
  /* Four bits at a time: a 64-byte table, small enough for any firmware. */
  static const uint32_t kNibble[16] = {0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
                                       0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
                                       0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                                       0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
  crc = ~crc;
  for (uint64_t i = 0; i < size; ++i) {
    crc ^= bytes[i];
    crc = (crc >> 4) ^ kNibble[crc & 0xFu];
    crc = (crc >> 4) ^ kNibble[crc & 0xFu];
  }
  return ~crc;
}

/* [offset, offset + size) lies inside [0, limit). */
static int inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

static strata_status bad(strata_error* e, const char* what) {
  strata_text t;
  strata_fail(e, STRATA_E_BUNDLE, "malformed bundle: ");
  t.buf = e->text;
  t.len = strata_strlen(t.buf);
  strata_text_str(&t, what);
  return STRATA_E_BUNDLE;
}

/* "malformed bundle: <what> <index>: <why>" */
static strata_status bad_entry(strata_error* e, const char* what, uint64_t index, const char* why) {
  strata_text t;
  bad(e, what);
  t.buf = e->text;
  t.len = strata_strlen(t.buf);
  strata_text_str(&t, " ");
  strata_text_u64(&t, index);
  strata_text_str(&t, ": ");
  strata_text_str(&t, why);
  return STRATA_E_BUNDLE;
}

static void copy_name(char* dst, const uint8_t* src) {
  uint32_t i = 0;
  for (; i < STRATA_BUNDLE_NAME_BYTES && src[i] != 0u; ++i) dst[i] = (char)src[i];
  dst[i] = '\0';
}

const uint8_t* strata_bundle_instruction(const strata_bundle* b, uint32_t index) {
  /* The program region is checked to start at block offset 0 with contents. */
  const uint8_t* regions = b->data + strata_le32(b->data + STRATA_BH_REGION_TABLE);
  for (uint32_t r = 0; r < b->region_count; ++r) {
    const uint8_t* e = regions + (uint64_t)r * STRATA_BUNDLE_REGION_BYTES;
    if (strata_le32(e + STRATA_BR_KIND) == STRATA_REGION_PROGRAM) {
      return b->data + strata_le64(e + STRATA_BR_CONTENT) + (uint64_t)index * 64u;
    }
  }
  return b->data; /* not reached for a parsed bundle */
}

/* Bytes one image of a tensor occupies from its address, by layout. */
static uint64_t tensor_bytes(const strata_tensor_info* t, uint32_t kind, uint32_t lanes) {
  if (kind == STRATA_TENSOR_INPUT) {
    if (t->layout == STRATA_INPUT_FEATURES) return (uint64_t)t->groups * lanes;
    return (uint64_t)t->rows * t->groups * t->cols * lanes;
  }
  if (t->layout == STRATA_OUTPUT_NEURONS) return (uint64_t)t->map_c * lanes;
  return (uint64_t)t->groups * t->map_h * t->map_w * lanes; /* map and rows alike */
}

/* The layout's own rules: every byte the runtime reads or writes for an image
 * lies in the tensor's extent, and every element of the shape has a place. */
static const char* tensor_shape_problem(const strata_tensor_info* t, uint32_t kind, uint32_t lanes,
                                        uint32_t batch, uint32_t version) {
  const uint64_t elements = (uint64_t)t->c * t->h * t->w;
  if (elements == 0u) return "a dimension is 0";
  if (elements > (1u << 28)) return "more elements than the network format allows (2^28)";
  if (kind == STRATA_TENSOR_INPUT) {
    if (t->map_c != t->c || t->map_h != t->h || t->map_w != t->w) {
      return "an input's map shape differs from its shape";
    }
    if (t->images != batch) return "an input needs one address per image of the batch";
    switch (t->layout) {
      case STRATA_INPUT_FEATURES:
        if (t->rows != 0u || t->cols != 0u || t->kernel != 0u || t->stride != 0u || t->pad != 0u) {
          return "a features input with map fields";
        }
        return elements <= (uint64_t)t->groups * lanes ? 0 : "the features do not fit their words";
      case STRATA_INPUT_MAP:
        if (t->rows != t->h || t->cols != t->w) return "a map input's rows and columns differ";
        if (t->kernel != 0u || t->stride != 0u || t->pad != 0u) {
          return "a map input with window fields";
        }
        return (uint64_t)t->c <= (uint64_t)t->groups * lanes ? 0
                                                             : "the channels do not fit the groups";
      case STRATA_INPUT_REORDERED:
        if (t->rows != t->h || t->kernel == 0u || t->stride == 0u || t->pad >= t->kernel) {
          return "a reordered input's rows, kernel, stride or pad are wrong";
        }
        return (uint64_t)t->kernel * t->c <= (uint64_t)t->groups * lanes
                   ? 0
                   : "the taps do not fit the groups";
      default:
        return "an input layout that is not one";
    }
  }
  if ((uint64_t)t->map_c * t->map_h * t->map_w != elements) {
    return "an output's shape and map shape hold different numbers of elements";
  }
  switch (t->layout) {
    case STRATA_OUTPUT_NEURONS:
      if (t->map_h != 1u || t->map_w != 1u || t->images != 1u || batch > lanes) {
        return "a neurons output must be [C][1][1] with one address, the batch within N";
      }
      return 0;
    case STRATA_OUTPUT_ROWS:
      if (version < 2u) return "a rows output in a version 1 bundle";
      /* fall through: the same rules as a map */
    case STRATA_OUTPUT_MAP:
      if (t->images != batch) return "a map output needs one address per image of the batch";
      return (uint64_t)t->map_c <= (uint64_t)t->groups * lanes
                 ? 0
                 : "the channels do not fit the groups";
    default:
      return "an output layout that is not one";
  }
}

/* A tensor table entry's fields, unchecked (parse_tensor checks them). */
static void read_tensor(const uint8_t* e, strata_tensor_info* t) {
  t->layout = strata_le32(e + STRATA_BT_LAYOUT);
  t->c = strata_le32(e + STRATA_BT_C);
  t->h = strata_le32(e + STRATA_BT_H);
  t->w = strata_le32(e + STRATA_BT_W);
  t->map_c = strata_le32(e + STRATA_BT_MAP_C);
  t->map_h = strata_le32(e + STRATA_BT_MAP_H);
  t->map_w = strata_le32(e + STRATA_BT_MAP_W);
  t->groups = strata_le32(e + STRATA_BT_GROUPS);
  t->rows = strata_le32(e + STRATA_BT_ROWS);
  t->cols = strata_le32(e + STRATA_BT_COLS);
  t->kernel = strata_le32(e + STRATA_BT_KERNEL);
  t->stride = strata_le32(e + STRATA_BT_STRIDE);
  t->pad = strata_le32(e + STRATA_BT_PAD);
  const uint32_t scale_bits = strata_le32(e + STRATA_BT_SCALE);
  union {
    uint32_t u;
    float f;
  } scale;
  scale.u = scale_bits;
  t->scale = scale.f;
  t->images = strata_le32(e + STRATA_BT_IMAGES);
  for (uint32_t i = 0; i < STRATA_BUNDLE_MAX_IMAGES; ++i) {
    t->addr[i] = i < t->images ? strata_le64(e + STRATA_BT_ADDR + 8u * i) : 0u;
  }
}

static strata_status parse_tensor(strata_bundle* b, const uint8_t* e, uint32_t kind, uint32_t index,
                                  uint32_t version, strata_tensor_info* t, strata_error* err) {
  if (strata_le32(e + STRATA_BT_KIND) != kind) {
    return bad_entry(err, "tensor", index,
                     index == 0u ? "the first must be the input"
                                 : "the entries after the first "
                                   "must be outputs");
  }
  read_tensor(e, t);
  if (t->images < 1u || t->images > STRATA_BUNDLE_MAX_IMAGES) {
    return bad_entry(err, "tensor", index, "image count outside 1..64");
  }
  for (uint32_t i = t->images; i < STRATA_BUNDLE_MAX_IMAGES; ++i) {
    if (strata_le64(e + STRATA_BT_ADDR + 8u * i) != 0u) {
      return bad_entry(err, "tensor", index, "an address slot past its image count is not 0");
    }
  }
  /* The network format's limits (a map's C, H, W each at most 65535; a
   * flattened output's C up to 2^28 elements) and the ISA's 4-bit window
   * fields; words per pixel or image within 2^24. */
  if (t->c > (1u << 28) || t->h > 65535u || t->w > 65535u || t->map_c > 65535u ||
      t->map_h > 65535u || t->map_w > 65535u || t->groups > (1u << 24) || t->rows > 65535u ||
      t->cols > 65535u || t->kernel > 15u || t->stride > 15u || t->pad > 15u) {
    return bad_entry(err, "tensor", index, "a dimension beyond the network format's limits");
  }
  const char* problem = tensor_shape_problem(t, kind, b->hw.lanes, b->batch, version);
  if (problem != 0) return bad_entry(err, "tensor", index, problem);
  const uint64_t bytes = tensor_bytes(t, kind, b->hw.lanes);
  const uint8_t* regions = b->data + strata_le32(b->data + STRATA_BH_REGION_TABLE);
  const uint32_t want = kind == STRATA_TENSOR_INPUT ? STRATA_REGION_INPUT : STRATA_REGION_OUTPUT;
  for (uint32_t i = 0; i < t->images; ++i) {
    int placed = 0;
    for (uint32_t r = 0; r < b->region_count && !placed; ++r) {
      const uint8_t* re = regions + (uint64_t)r * STRATA_BUNDLE_REGION_BYTES;
      const uint64_t off = strata_le64(re + STRATA_BR_OFFSET),
                     size = strata_le64(re + STRATA_BR_SIZE);
      placed = strata_le32(re + STRATA_BR_KIND) == want && t->addr[i] >= off &&
               inside(t->addr[i] - off, bytes, size);
    }
    if (!placed) {
      return bad_entry(err, kind == STRATA_TENSOR_INPUT ? "input image" : "output image", i,
                       "its bytes do not lie inside one region of its kind");
    }
  }
  return STRATA_OK;
}

static strata_status parse_regions(strata_bundle* b, strata_error* err) {
  const uint64_t table = strata_le32(b->data + STRATA_BH_REGION_TABLE);
  if (b->region_count < 1u || b->region_count > 4096u ||
      !inside(table, (uint64_t)b->region_count * STRATA_BUNDLE_REGION_BYTES, b->size)) {
    return bad(err, "the region table is empty or outside the file");
  }
  int program = 0;
  for (uint32_t r = 0; r < b->region_count; ++r) {
    const uint8_t* e = b->data + table + (uint64_t)r * STRATA_BUNDLE_REGION_BYTES;
    const uint32_t kind = strata_le32(e + STRATA_BR_KIND), flags = strata_le32(e + STRATA_BR_FLAGS);
    const uint64_t off = strata_le64(e + STRATA_BR_OFFSET), size = strata_le64(e + STRATA_BR_SIZE);
    const uint64_t content = strata_le64(e + STRATA_BR_CONTENT);
    if (kind > STRATA_REGION_SCRATCH) return bad_entry(err, "region", r, "a kind that is not one");
    if ((flags & ~(STRATA_REGION_CONTENTS | STRATA_REGION_ZERO)) != 0u ||
        flags == (STRATA_REGION_CONTENTS | STRATA_REGION_ZERO)) {
      return bad_entry(err, "region", r, "flags that are not one of contents or zero");
    }
    if (off % 64u != 0u || !inside(off, size, b->block_bytes)) {
      return bad_entry(err, "region", r, "not 64-byte aligned, or beyond the block");
    }
    if ((flags & STRATA_REGION_CONTENTS) != 0u &&
        (content % STRATA_BUNDLE_CONTENT_ALIGN != 0u || !inside(content, size, b->size))) {
      return bad_entry(err, "region", r, "its contents are misaligned or outside the file");
    }
    for (uint32_t q = 0; q < r && size != 0u; ++q) {
      const uint8_t* o = b->data + table + (uint64_t)q * STRATA_BUNDLE_REGION_BYTES;
      const uint64_t qo = strata_le64(o + STRATA_BR_OFFSET), qs = strata_le64(o + STRATA_BR_SIZE);
      if (qs != 0u && off < qo + qs && qo < off + size) {
        return bad_entry(err, "region", r, "overlaps an earlier region");
      }
    }
    if (kind == STRATA_REGION_PROGRAM) {
      if (program++ != 0 || off != 0u || (flags & STRATA_REGION_CONTENTS) == 0u ||
          size != (uint64_t)b->instructions * 64u) {
        return bad_entry(err, "region", r,
                         "the program must be one region at block offset 0, with contents, "
                         "of 64 bytes per instruction");
      }
    }
  }
  if (program == 0) return bad(err, "no program region");
  return STRATA_OK;
}

uint64_t strata_field_get(const uint8_t* instr, uint32_t lsb, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < width; ++i) {
    const uint32_t b = lsb + i;
    v |= (uint64_t)((instr[b / 8u] >> (b % 8u)) & 1u) << i;
  }
  return v;
}

_Static_assert(STRATA_LOAD_EXT_ADDR_LSB == STRATA_STORE_EXT_ADDR_LSB &&
                   STRATA_LOAD_EXT_ADDR_WIDTH == STRATA_STORE_EXT_ADDR_WIDTH &&
                   STRATA_LOAD_EXT_ROW_STRIDE_LSB == STRATA_STORE_EXT_ROW_STRIDE_LSB &&
                   STRATA_LOAD_ROWS_LSB == STRATA_STORE_ROWS_LSB &&
                   STRATA_LOAD_ROW_WORDS_LSB == STRATA_STORE_ROW_WORDS_LSB,
               "LOAD and STORE keep their external transfer fields at the same bits");

/* "malformed bundle: instruction <index> (<op>): <why>" */
static strata_status bad_instruction(strata_error* e, uint32_t index, uint32_t opcode,
                                     const char* why) {
  strata_text t;
  bad(e, "instruction ");
  t.buf = e->text;
  t.len = strata_strlen(t.buf);
  strata_text_u64(&t, index);
  strata_text_str(&t, opcode == STRATA_OP_LOAD ? " (LOAD): " : " (STORE): ");
  strata_text_str(&t, why);
  return STRATA_E_BUNDLE;
}

/* Every LOAD and STORE of external memory has exactly one relocation, of its
 * ext_addr, and every byte it moves lies inside the block; no other field is
 * relocated. A loaded bundle can then make the accelerator touch no memory
 * outside its block. */
static strata_status parse_relocations(strata_bundle* b, strata_error* err) {
  const uint64_t table = strata_le32(b->data + STRATA_BH_RELOC_TABLE);
  if (!inside(table, (uint64_t)b->reloc_count * STRATA_BUNDLE_RELOC_BYTES, b->size)) {
    return bad(err, "the relocation table is outside the file");
  }
  uint32_t next = 0;
  for (uint32_t i = 0; i < b->instructions; ++i) {
    const uint8_t* in = strata_bundle_instruction(b, i);
    const uint32_t op =
        (uint32_t)strata_field_get(in, STRATA_HDR_OPCODE_LSB, STRATA_HDR_OPCODE_WIDTH);
    int external = 0;
    uint64_t entry = b->hw.lanes;
    if (op == STRATA_OP_LOAD) {
      external = strata_field_get(in, STRATA_LOAD_SRC_KIND_LSB, STRATA_LOAD_SRC_KIND_WIDTH) ==
                 STRATA_LOAD_SRC_EXT;
      if (strata_field_get(in, STRATA_LOAD_DST_KIND_LSB, STRATA_LOAD_DST_KIND_WIDTH) ==
          STRATA_LOAD_DST_PARAM) {
        entry = 8u; /* parameter entries */
      }
    } else if (op == STRATA_OP_STORE) {
      external = strata_field_get(in, STRATA_STORE_DST_KIND_LSB, STRATA_STORE_DST_KIND_WIDTH) ==
                 STRATA_STORE_DST_EXT;
    }
    const int named = next < b->reloc_count &&
                      strata_le32(b->data + table + (uint64_t)next * STRATA_BUNDLE_RELOC_BYTES +
                                  STRATA_BL_INDEX) == i;
    if (!external) {
      if (named) {
        return bad_entry(err, "relocation", next,
                         "its instruction is not a LOAD or STORE of external memory");
      }
      continue;
    }
    if (!named) return bad_instruction(err, i, op, "external memory without a relocation");
    const uint8_t* e = b->data + table + (uint64_t)next * STRATA_BUNDLE_RELOC_BYTES;
    /* LOAD and STORE keep ext_addr, ext_row_stride, rows and row_words at the same bits. */
    if (strata_le16(e + STRATA_BL_LSB) != STRATA_LOAD_EXT_ADDR_LSB ||
        strata_le16(e + STRATA_BL_WIDTH) != STRATA_LOAD_EXT_ADDR_WIDTH) {
      return bad_entry(err, "relocation", next, "it names another field than ext_addr");
    }
    ++next;
    if (next < b->reloc_count &&
        strata_le32(b->data + table + (uint64_t)next * STRATA_BUNDLE_RELOC_BYTES +
                    STRATA_BL_INDEX) <= i) {
      return bad_entry(err, "relocation", next, "out of order, or a second one of its field");
    }
    const uint64_t addr =
        strata_field_get(in, STRATA_LOAD_EXT_ADDR_LSB, STRATA_LOAD_EXT_ADDR_WIDTH);
    const uint64_t stride =
        strata_field_get(in, STRATA_LOAD_EXT_ROW_STRIDE_LSB, STRATA_LOAD_EXT_ROW_STRIDE_WIDTH);
    const uint64_t rows = strata_field_get(in, STRATA_LOAD_ROWS_LSB, STRATA_LOAD_ROWS_WIDTH);
    const uint64_t words =
        strata_field_get(in, STRATA_LOAD_ROW_WORDS_LSB, STRATA_LOAD_ROW_WORDS_WIDTH);
    if (rows == 0u || words == 0u) continue; /* the hardware refuses it (ILLEGAL_INSTR) */
    const uint64_t span = (rows - 1u) * stride + words * entry; /* < 2^57: no overflow */
    if (!inside(addr, span, b->block_bytes)) {
      return bad_instruction(err, i, op, "its rows reach beyond the block");
    }
  }
  if (next != b->reloc_count) {
    return bad_entry(err, "relocation", next,
                     "an instruction outside the program, or out of order");
  }
  return STRATA_OK;
}

strata_status strata_bundle_parse(strata_bundle* b, const void* data, uint64_t size,
                                  strata_error* err) {
  if (b == 0 || err == 0) return STRATA_E_ARGUMENT;
  if (data == 0) return strata_fail(err, STRATA_E_ARGUMENT, "strata_bundle_parse: no data");
  const uint8_t* d = (const uint8_t*)data;
  b->data = d;
  b->size = size;
  if (size < STRATA_BUNDLE_HEADER_BYTES) {
    return strata_fail_u64(err, STRATA_E_BUNDLE, "not a bundle: ", size,
                           " bytes, shorter than the 256-byte header");
  }
  if (strata_le32(d + STRATA_BH_MAGIC) != STRATA_BUNDLE_MAGIC) {
    return strata_fail(err, STRATA_E_BUNDLE, "not a bundle: the file does not start with 'STRB'");
  }
  const uint32_t version = strata_le16(d + STRATA_BH_VERSION);
  if (version != STRATA_BUNDLE_VERSION_ONE_OUTPUT && version != STRATA_BUNDLE_VERSION) {
    return strata_fail_u64(err, STRATA_E_BUNDLE, "bundle format version ", version,
                           ", this driver reads versions 1 and 2");
  }
  if (strata_le16(d + STRATA_BH_HEADER_BYTES) != STRATA_BUNDLE_HEADER_BYTES) {
    return bad(err, "the header size is not 256");
  }
  if (strata_le64(d + STRATA_BH_FILE_BYTES) != size) {
    return strata_fail_u64(err, STRATA_E_BUNDLE, "truncated or padded bundle: the header says ",
                           strata_le64(d + STRATA_BH_FILE_BYTES), " bytes");
  }
  static const uint8_t kZero[4] = {0, 0, 0, 0};
  uint32_t crc = strata_crc32(0u, d, STRATA_BH_CRC32);
  crc = strata_crc32(crc, kZero, 4u);
  crc = strata_crc32(crc, d + STRATA_BH_CRC32 + 4u, size - STRATA_BH_CRC32 - 4u);
  if (crc != strata_le32(d + STRATA_BH_CRC32)) {
    return strata_fail(err, STRATA_E_BUNDLE, "corrupt bundle: the CRC-32 does not match");
  }
  for (uint32_t i = 160u; i < STRATA_BUNDLE_HEADER_BYTES; ++i) {
    if (d[i] != 0u) return bad(err, "reserved header bytes are not 0");
  }
  copy_name(b->network, d + STRATA_BH_NETWORK);
  copy_name(b->config, d + STRATA_BH_CONFIG);
  strata_hw_info* h = &b->hw;
  h->version = strata_le16(d + STRATA_BH_HW_VERSION);
  h->pes = d[STRATA_BH_PES];
  h->lanes = d[STRATA_BH_LANES];
  h->banks = d[STRATA_BH_BANKS];
  h->sparse = d[STRATA_BH_SPARSE];
  h->axi_data_width = strata_le16(d + STRATA_BH_AXI_DATA_WIDTH);
  h->bank_depth = strata_le32(d + STRATA_BH_BANK_DEPTH);
  h->cache_depth = strata_le32(d + STRATA_BH_CACHE_DEPTH);
  h->param_depth = strata_le32(d + STRATA_BH_PARAM_DEPTH);
  h->max_kernel = d[STRATA_BH_MAX_KERNEL];
  h->max_pool_kernel = d[STRATA_BH_MAX_POOL_KERNEL];
  h->max_image_width = strata_le16(d + STRATA_BH_MAX_IMAGE_WIDTH);
  h->act_tables = strata_le16(d + STRATA_BH_ACT_TABLES);
  if (h->pes < 1u || h->pes > 64u || h->lanes < 1u || h->lanes > STRATA_MAX_LANES ||
      h->sparse > 1u) {
    return bad(err, "P, N or the sparse flag out of range");
  }
  b->block_bytes = strata_le64(d + STRATA_BH_BLOCK_BYTES);
  b->block_align = strata_le32(d + STRATA_BH_BLOCK_ALIGN);
  if (b->block_align < 64u || (b->block_align & (b->block_align - 1u)) != 0u) {
    return bad(err, "the block alignment is not a power of two of at least 64");
  }
  b->instructions = strata_le32(d + STRATA_BH_INSTRUCTIONS);
  b->batch = strata_le32(d + STRATA_BH_BATCH);
  if (b->instructions < 2u || b->instructions > (1u << 24)) {
    return bad(err, "instruction count outside 2..2^24");
  }
  if (b->batch < 1u || b->batch > h->pes) return bad(err, "batch outside 1..P");
  b->region_count = strata_le32(d + STRATA_BH_REGION_COUNT);
  b->reloc_count = strata_le32(d + STRATA_BH_RELOC_COUNT);
  strata_status s = parse_regions(b, err);
  if (s != STRATA_OK) return s;
  s = parse_relocations(b, err);
  if (s != STRATA_OK) return s;
  /* The input, then the outputs: one in version 1, 1 .. STRATA_BUNDLE_MAX_OUTPUTS
   * in version 2. */
  const uint64_t tensors = strata_le32(d + STRATA_BH_TENSOR_TABLE);
  const uint32_t tensor_count = strata_le32(d + STRATA_BH_TENSOR_COUNT);
  const int count_ok = version == STRATA_BUNDLE_VERSION_ONE_OUTPUT
                           ? tensor_count == 2u
                           : tensor_count >= 2u && tensor_count <= 1u + STRATA_BUNDLE_MAX_OUTPUTS;
  if (!count_ok || !inside(tensors, (uint64_t)tensor_count * STRATA_BUNDLE_TENSOR_BYTES, size)) {
    return bad(err, version == STRATA_BUNDLE_VERSION_ONE_OUTPUT
                        ? "the tensor table must hold the input and the output, inside the file"
                        : "the tensor table must hold the input and 1 to 16 outputs, inside "
                          "the file");
  }
  s = parse_tensor(b, d + tensors, STRATA_TENSOR_INPUT, 0u, version, &b->input, err);
  if (s != STRATA_OK) return s;
  b->output_count = tensor_count - 1u;
  s = parse_tensor(b, d + tensors + STRATA_BUNDLE_TENSOR_BYTES, STRATA_TENSOR_OUTPUT, 1u, version,
                   &b->output, err);
  if (s != STRATA_OK) return s;
  for (uint32_t j = 1; j < b->output_count; ++j) {
    strata_tensor_info t;
    s = parse_tensor(b, d + tensors + (uint64_t)(1u + j) * STRATA_BUNDLE_TENSOR_BYTES,
                     STRATA_TENSOR_OUTPUT, 1u + j, version, &t, err);
    if (s != STRATA_OK) return s;
  }
  const uint8_t* first = strata_bundle_instruction(b, 0u);
  const uint8_t* end = strata_bundle_instruction(b, b->instructions - 1u);
  if ((first[0] & 0xFu) != 5u || (end[0] & 0xFu) != 4u) {
    return bad(err, "the program does not start with CONFIG and end with END");
  }
  err->status = STRATA_OK;
  err->text[0] = '\0';
  return STRATA_OK;
}

uint64_t strata_input_elements(const strata_bundle* b) {
  return (uint64_t)b->input.c * b->input.h * b->input.w;
}

uint64_t strata_output_elements(const strata_bundle* b) {
  return (uint64_t)b->output.c * b->output.h * b->output.w;
}

uint64_t strata_output_elements_at(const strata_bundle* b, uint32_t output) {
  strata_tensor_info t;
  if (strata_bundle_output(b, output, &t) != STRATA_OK) return 0u;
  return (uint64_t)t.c * t.h * t.w;
}

strata_status strata_bundle_output(const strata_bundle* b, uint32_t output, strata_tensor_info* t) {
  if (b == 0 || t == 0 || output >= b->output_count) return STRATA_E_ARGUMENT;
  const uint8_t* table = b->data + strata_le32(b->data + STRATA_BH_TENSOR_TABLE);
  read_tensor(table + (uint64_t)(1u + output) * STRATA_BUNDLE_TENSOR_BYTES, t);
  return STRATA_OK;
}
