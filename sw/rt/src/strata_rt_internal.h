/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of strata_rt share and a user does not need: the error-text
 * writers (no printf in a freestanding build) and bundle field access. */
#ifndef STRATA_RT_INTERNAL_H
#define STRATA_RT_INTERNAL_H

#include "strata_rt.h"

/* Appends to an error's text, truncating at STRATA_ERROR_TEXT_BYTES. */
typedef struct strata_text {
  char* buf;
  uint32_t len;
} strata_text;

void strata_text_begin(strata_text* t, strata_error* e);
void strata_text_str(strata_text* t, const char* s);
void strata_text_u64(strata_text* t, uint64_t v);
void strata_text_hex(strata_text* t, uint64_t v);
uint32_t strata_strlen(const char* s);

/* Sets the error to `status` and `what`; returns `status`. */
strata_status strata_fail(strata_error* e, strata_status status, const char* what);
/* The same with a number and a tail: "<what><value><after>". */
strata_status strata_fail_u64(strata_error* e, strata_status status, const char* what,
                              uint64_t value, const char* after);

/* Bits [lsb, lsb + width) of an instruction (bit b is bit b % 8 of byte b / 8). */
uint64_t strata_field_get(const uint8_t* instr, uint32_t lsb, uint32_t width);

/* The 64 bytes of instruction `index` in the bundle's program contents. */
const uint8_t* strata_bundle_instruction(const strata_bundle* b, uint32_t index);

#endif /* STRATA_RT_INTERNAL_H */
