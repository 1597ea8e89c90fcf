/* SPDX-License-Identifier: Apache-2.0 */
/* The bundle format: one file per compiled network (docs/bundle.md), written
 * by `strata compile --bundle` (sw/src/bundle.cpp) and read by the driver
 * library strata_rt. This header is the one place its layout is written down
 * in code: byte offsets and sizes, every number little-endian, no padding
 * the compiler chooses. Fields are read and written byte by byte
 * (strata_le32 ...), so the format is the same on every host.
 *
 * A bundle is
 *   header (STRATA_BUNDLE_HEADER_BYTES)
 *   region table    (region_count entries of STRATA_BUNDLE_REGION_BYTES)
 *   relocation table (reloc_count entries of STRATA_BUNDLE_RELOC_BYTES)
 *   tensor table    (tensor_count entries of STRATA_BUNDLE_TENSOR_BYTES)
 *   contents        (each region that has contents, 64-byte aligned in the file)
 * The regions lie in one block of device memory of block_bytes bytes, which
 * the runtime places at any device address that is a multiple of
 * block_align; relocation entries name the instruction fields that hold a
 * block offset, to which the runtime adds the block's address.
 */
#ifndef STRATA_BUNDLE_H
#define STRATA_BUNDLE_H

#include <stdint.h>

#define STRATA_BUNDLE_MAGIC 0x42525453u /* the bytes "STRB" */
#define STRATA_BUNDLE_VERSION 2u        /* several outputs; written only when a network has them */
#define STRATA_BUNDLE_VERSION_ONE_OUTPUT 1u /* one output: what version 1 readers take */
#define STRATA_BUNDLE_MAX_OUTPUTS 16u       /* network outputs a bundle may list */
#define STRATA_BUNDLE_NAME_BYTES 32u
#define STRATA_BUNDLE_MAX_IMAGES 64u /* batch <= P <= 64 */
#define STRATA_MAX_LANES 64u         /* N: bytes of a word */
#define STRATA_BUNDLE_CONTENT_ALIGN 64u

/* Header: byte offsets. */
#define STRATA_BUNDLE_HEADER_BYTES 256u
#define STRATA_BH_MAGIC 0u        /* u32 STRATA_BUNDLE_MAGIC */
#define STRATA_BH_VERSION 4u      /* u16 format version */
#define STRATA_BH_HEADER_BYTES 6u /* u16 STRATA_BUNDLE_HEADER_BYTES */
#define STRATA_BH_FILE_BYTES 8u   /* u64 size of the whole bundle */
#define STRATA_BH_BLOCK_BYTES 16u /* u64 device memory the regions need */
#define STRATA_BH_BLOCK_ALIGN 24u /* u32 the block's address is a multiple of this */
#define STRATA_BH_CRC32 28u       /* u32 CRC-32 (IEEE) of the file, this field read as 0 */
#define STRATA_BH_NETWORK 32u     /* char[32] network name, NUL-padded */
#define STRATA_BH_CONFIG 64u      /* char[32] hardware configuration name, NUL-padded */
/* The hardware the program was compiled for (the CFG_* registers). */
#define STRATA_BH_HW_VERSION 96u       /* u16 VERSION */
#define STRATA_BH_PES 98u              /* u8  CFG_PES */
#define STRATA_BH_LANES 99u            /* u8  CFG_LANES */
#define STRATA_BH_BANKS 100u           /* u8  banks the program uses (<= CFG_BANKS) */
#define STRATA_BH_SPARSE 101u          /* u8  1: a sparse build (CFG_FEATURES.SPARSE) */
#define STRATA_BH_AXI_DATA_WIDTH 102u  /* u16 CFG_AXI_DATA_WIDTH */
#define STRATA_BH_BANK_DEPTH 104u      /* u32 words per bank used (<= CFG_BANK_DEPTH) */
#define STRATA_BH_CACHE_DEPTH 108u     /* u32 words per PE cache used (<= CFG_CACHE_DEPTH) */
#define STRATA_BH_PARAM_DEPTH 112u     /* u32 parameter channels used (<= CFG_PARAM_DEPTH) */
#define STRATA_BH_MAX_KERNEL 116u      /* u8  CFG_LIMITS.MAX_KERNEL the program needs (<=) */
#define STRATA_BH_MAX_POOL_KERNEL 117u /* u8 CFG_LIMITS.MAX_POOL_KERNEL needed (<=) */
#define STRATA_BH_MAX_IMAGE_WIDTH 118u /* u16 CFG_LIMITS.MAX_IMAGE_WIDTH needed (<=) */
#define STRATA_BH_ACT_TABLES \
  120u /* u16 activation tables the program uses (<= CFG_FEATURES.ACT_TABLES) */
/* The program. */
#define STRATA_BH_INSTRUCTIONS 128u /* u32 instructions (CONFIG first, END last) */
#define STRATA_BH_BATCH 132u        /* u32 images per run */
#define STRATA_BH_REGION_COUNT 136u /* u32 */
#define STRATA_BH_REGION_TABLE 140u /* u32 file offset of the region table */
#define STRATA_BH_RELOC_COUNT 144u  /* u32 */
#define STRATA_BH_RELOC_TABLE 148u  /* u32 file offset of the relocation table */
#define STRATA_BH_TENSOR_COUNT                                                         \
  152u                              /* u32 the input, then each output: 2 (version 1), \
                                       2 .. 1 + STRATA_BUNDLE_MAX_OUTPUTS (version 2) */
#define STRATA_BH_TENSOR_TABLE 156u /* u32 file offset of the tensor table */
/* Bytes 160..255 are reserved and 0. */

/* Region table entry. */
#define STRATA_BUNDLE_REGION_BYTES 48u
#define STRATA_BR_NAME 0u     /* char[16] "instructions", "params", "input0", ... NUL-padded */
#define STRATA_BR_KIND 16u    /* u32 strata_region_kind */
#define STRATA_BR_FLAGS 20u   /* u32 STRATA_REGION_* flags */
#define STRATA_BR_OFFSET 24u  /* u64 byte offset in the block (64-byte aligned) */
#define STRATA_BR_SIZE 32u    /* u64 bytes */
#define STRATA_BR_CONTENT 40u /* u64 file offset of the contents (STRATA_REGION_CONTENTS) */
#define STRATA_BUNDLE_REGION_NAME_BYTES 16u

enum strata_region_kind {
  STRATA_REGION_PROGRAM = 0,    /* instructions (at block offset 0) */
  STRATA_REGION_PARAMETERS = 1, /* parameter entries, weights, control planes */
  STRATA_REGION_INPUT = 2,      /* one image's input, written by the runtime per run */
  STRATA_REGION_OUTPUT = 3,     /* outputs, read by the runtime after a run */
  STRATA_REGION_SCRATCH = 4     /* maps between layers that live in external memory */
};
#define STRATA_REGION_CONTENTS 1u /* flag: copied from the file at load time */
#define STRATA_REGION_ZERO 2u     /* flag: zeroed at load time */

/* Relocation entry: the field [lsb, lsb + width) of instruction `index` holds
 * a block offset; the loaded instruction holds block address + offset. */
#define STRATA_BUNDLE_RELOC_BYTES 8u
#define STRATA_BL_INDEX 0u /* u32 instruction index */
#define STRATA_BL_LSB 4u   /* u16 first bit of the field (of the 512-bit instruction) */
#define STRATA_BL_WIDTH 6u /* u16 bits */

/* Tensor table entry: how one image's input or output lies in the block. */
#define STRATA_BUNDLE_TENSOR_BYTES 576u
#define STRATA_BT_KIND 0u   /* u32 0 input, 1 output */
#define STRATA_BT_LAYOUT 4u /* u32 strata_input_layout / strata_output_layout */
#define STRATA_BT_C 8u      /* u32 the tensor's shape [C][H][W] (an output: after flatten) */
#define STRATA_BT_H 12u
#define STRATA_BT_W 16u
#define STRATA_BT_MAP_C 20u /* u32 the map as computed, [C][H][W] (an output before flatten) */
#define STRATA_BT_MAP_H 24u
#define STRATA_BT_MAP_W 28u
#define STRATA_BT_GROUPS 32u /* u32 words per pixel (input features: words per image) */
#define STRATA_BT_ROWS 36u   /* u32 input map: rows */
#define STRATA_BT_COLS 40u   /* u32 input map: W; reordered: the first layer's output width */
#define STRATA_BT_KERNEL 44u /* u32 reordered: the first layer's kernel, stride, left pad */
#define STRATA_BT_STRIDE 48u
#define STRATA_BT_PAD 52u
#define STRATA_BT_SCALE 56u  /* f32 real value of one int8 step (0: not known) */
#define STRATA_BT_IMAGES 60u /* u32 image addresses that follow (batch; neurons output: 1) */
#define STRATA_BT_ADDR 64u   /* u64[64] block offset of each image's bytes */

enum strata_tensor_kind { STRATA_TENSOR_INPUT = 0, STRATA_TENSOR_OUTPUT = 1 };

enum strata_input_layout {
  STRATA_INPUT_MAP = 0,       /* [row][group][col] words of N bytes, lane = channel % N */
  STRATA_INPUT_REORDERED = 1, /* [row][group][out col]: lane l of group g holds channel c of
                                 column x * stride - pad + kx, g * N + l = kx * C + c */
  STRATA_INPUT_FEATURES = 2   /* the C * H * W values in order, zero to groups * N bytes */
};

enum strata_output_layout {
  STRATA_OUTPUT_MAP = 0,     /* per image [group][row][col] words, lane = channel % N */
  STRATA_OUTPUT_NEURONS = 1, /* one region for the batch: neuron o of image i at o * N + i */
  STRATA_OUTPUT_ROWS = 2     /* version 2: per image [row][group][col] words (an output
                                other than the last layer's, a map kept in memory) */
};

/* Little-endian field access, the same on every host. */
static inline uint16_t strata_le16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t strata_le32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t strata_le64(const uint8_t* p) {
  return (uint64_t)strata_le32(p) | ((uint64_t)strata_le32(p + 4) << 32);
}

#ifdef __cplusplus
extern "C" {
#endif
/* CRC-32 (IEEE 802.3, reflected; zlib's crc32) of `bytes`, continuing `crc`
 * (0 to start): the checksum of STRATA_BH_CRC32. */
uint32_t strata_crc32(uint32_t crc, const uint8_t* bytes, uint64_t size);
#ifdef __cplusplus
}
#endif

#endif /* STRATA_BUNDLE_H */
