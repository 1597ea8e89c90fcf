/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware's payload (docs/board.md): the bundles and images it runs and
 * the faults it tries, made by scripts/soc_payload.py, placed by the
 * simulation in the ROM after the firmware and on the board in main RAM by
 * the serial loader. Little-endian; the firmware reads it in place.
 *
 *   header  u32 magic 'SPAY', u32 version (1), u32 entry count, u32 reserved
 *   entries count x 48 bytes: char name[32], u32 kind, u32 offset (from the
 *           payload's first byte), u32 size, u32 arg
 *   data    each entry's bytes at its offset (64-byte aligned)
 *
 * The firmware acts on the entries in order:
 *   BUNDLE      parse, check against the hardware, load; the network runs next
 *   IMAGES      arg images [N][C][H][W] int8 of the loaded network's input:
 *               run each, print class, checksum, cycles and the output bytes
 *   FAULT_READ  arm the DRAM-path fault injector over the loaded block's
 *               parameter regions, run the first image of the last IMAGES
 *               (expected: the error AXI_READ), disarm, run it again
 *   BAD_BUNDLE  parse and compare with the hardware (no memory is written);
 *               expected: refused, the message printed
 */
#ifndef STRATA_PAYLOAD_H
#define STRATA_PAYLOAD_H

#include <stdint.h>

#define STRATA_PAYLOAD_MAGIC 0x59415053u /* "SPAY" */
#define STRATA_PAYLOAD_VERSION 1u
#define STRATA_PAYLOAD_HEADER_BYTES 16u
#define STRATA_PAYLOAD_ENTRY_BYTES 48u
#define STRATA_PAYLOAD_NAME_BYTES 32u

enum strata_payload_kind {
  STRATA_PAYLOAD_BUNDLE = 1,
  STRATA_PAYLOAD_IMAGES = 2,
  STRATA_PAYLOAD_FAULT_READ = 3,
  STRATA_PAYLOAD_BAD_BUNDLE = 4
};

#endif /* STRATA_PAYLOAD_H */
