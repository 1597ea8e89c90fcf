/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt: bundle checks, loading, runs and errors (strata_rt.h). No
 * allocation and no C library: the text of an error is put together by the
 * small writers at the top of this file. */
#include "strata_rt.h"

#include "strata_rt_internal.h"

/* ---- error text ------------------------------------------------------------------------- */

void strata_text_begin(strata_text* t, strata_error* e) {
  t->buf = e->text;
  t->len = 0;
  t->buf[0] = '\0';
}

void strata_text_str(strata_text* t, const char* s) {
  if (s == 0) s = "(null)";
  while (*s != '\0' && t->len + 1 < STRATA_ERROR_TEXT_BYTES) t->buf[t->len++] = *s++;
  t->buf[t->len] = '\0';
}

void strata_text_u64(strata_text* t, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0u);
  char out[24];
  for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  out[n] = '\0';
  strata_text_str(t, out);
}

void strata_text_hex(strata_text* t, uint64_t v) {
  static const char kHex[] = "0123456789abcdef";
  char out[20];
  int n = 0;
  out[n++] = '0';
  out[n++] = 'x';
  int shift = 60;
  while (shift > 0 && ((v >> shift) & 0xFu) == 0u) shift -= 4;
  for (; shift >= 0; shift -= 4) out[n++] = kHex[(v >> shift) & 0xFu];
  out[n] = '\0';
  strata_text_str(t, out);
}

strata_status strata_fail(strata_error* e, strata_status status, const char* what) {
  strata_text t;
  e->status = status;
  e->hw_code = 0;
  e->hw_index = 0;
  strata_text_begin(&t, e);
  strata_text_str(&t, what);
  return status;
}

/* "<what> <value><unit>" */
strata_status strata_fail_u64(strata_error* e, strata_status status, const char* what,
                              uint64_t value, const char* after) {
  strata_text t;
  strata_fail(e, status, what);
  t.buf = e->text;
  t.len = strata_strlen(e->text);
  strata_text_u64(&t, value);
  strata_text_str(&t, after);
  return status;
}

static void clear_error(strata_error* e) {
  e->status = STRATA_OK;
  e->hw_code = 0;
  e->hw_index = 0;
  e->text[0] = '\0';
}

uint32_t strata_strlen(const char* s) {
  uint32_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

const char* strata_status_name(strata_status status) {
  switch (status) {
    case STRATA_OK:
      return "STRATA_OK";
    case STRATA_E_ARGUMENT:
      return "STRATA_E_ARGUMENT";
    case STRATA_E_BUNDLE:
      return "STRATA_E_BUNDLE";
    case STRATA_E_NO_DEVICE:
      return "STRATA_E_NO_DEVICE";
    case STRATA_E_CONFIG:
      return "STRATA_E_CONFIG";
    case STRATA_E_PLACEMENT:
      return "STRATA_E_PLACEMENT";
    case STRATA_E_HAL:
      return "STRATA_E_HAL";
    case STRATA_E_HARDWARE:
      return "STRATA_E_HARDWARE";
    case STRATA_E_TIMEOUT:
      return "STRATA_E_TIMEOUT";
    case STRATA_E_NOT_LOADED:
      return "STRATA_E_NOT_LOADED";
  }
  return "(not a status)";
}

/* ---- the device ------------------------------------------------------------------------- */

static uint32_t rd(strata_device* dev, uint32_t offset) {
  return dev->hal.read32(dev->hal.ctx, offset);
}

static void wr(strata_device* dev, uint32_t offset, uint32_t value) {
  dev->hal.write32(dev->hal.ctx, offset, value);
}

strata_status strata_open(strata_device* dev, const strata_hal* hal) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  clear_error(&dev->error);
  if (hal == 0 || hal->read32 == 0 || hal->write32 == 0 || hal->mem_write == 0 ||
      hal->mem_read == 0) {
    return strata_fail(&dev->error, STRATA_E_ARGUMENT,
                       "strata_open: the HAL needs read32, write32, mem_write and mem_read");
  }
  dev->hal = *hal;
  dev->fine_grain = 1u;
  dev->timeout = (uint64_t)1u << 32;
  const uint32_t id = rd(dev, STRATA_REG_ID);
  if (id != STRATA_ID_RESET) {
    strata_text t;
    strata_fail(&dev->error, STRATA_E_NO_DEVICE, "no Strata accelerator: the ID register reads ");
    t.buf = dev->error.text;
    t.len = strata_strlen(t.buf);
    strata_text_hex(&t, id);
    strata_text_str(&t, ", not 0x53545241 ('STRA')");
    return STRATA_E_NO_DEVICE;
  }
  strata_hw_info* h = &dev->hw;
  h->version = rd(dev, STRATA_REG_VERSION);
  h->pes = rd(dev, STRATA_REG_CFG_PES);
  h->lanes = rd(dev, STRATA_REG_CFG_LANES);
  h->banks = rd(dev, STRATA_REG_CFG_BANKS);
  h->bank_depth = rd(dev, STRATA_REG_CFG_BANK_DEPTH);
  h->cache_depth = rd(dev, STRATA_REG_CFG_CACHE_DEPTH);
  h->param_depth = rd(dev, STRATA_REG_CFG_PARAM_DEPTH);
  h->axi_data_width = rd(dev, STRATA_REG_CFG_AXI_DATA_WIDTH);
  const uint32_t limits = rd(dev, STRATA_REG_CFG_LIMITS);
  h->max_kernel = (limits & STRATA_CFG_LIMITS_MAX_KERNEL) >> STRATA_CFG_LIMITS_MAX_KERNEL_LSB;
  h->max_pool_kernel =
      (limits & STRATA_CFG_LIMITS_MAX_POOL_KERNEL) >> STRATA_CFG_LIMITS_MAX_POOL_KERNEL_LSB;
  h->max_image_width =
      (limits & STRATA_CFG_LIMITS_MAX_IMAGE_WIDTH) >> STRATA_CFG_LIMITS_MAX_IMAGE_WIDTH_LSB;
  const uint32_t features = rd(dev, STRATA_REG_CFG_FEATURES);
  h->sparse = (features & STRATA_CFG_FEATURES_SPARSE) != 0u;
  h->act_tables = (features & STRATA_CFG_FEATURES_ACT_TABLES) >> STRATA_CFG_FEATURES_ACT_TABLES_LSB;
  /* No run of an earlier owner is left pending. */
  return strata_recover(dev);
}

/* One configuration field: equal, or (at_most) no larger than the device's. */
static int config_field(strata_device* dev, const char* name, uint32_t want, uint32_t have,
                        int at_most) {
  if (at_most ? want <= have : want == have) return 1;
  strata_text t;
  strata_fail(&dev->error, STRATA_E_CONFIG, "the bundle was compiled for ");
  t.buf = dev->error.text;
  t.len = strata_strlen(t.buf);
  strata_text_str(&t, name);
  strata_text_str(&t, at_most ? " <= " : " = ");
  strata_text_u64(&t, want);
  strata_text_str(&t, ", the device has ");
  strata_text_u64(&t, have);
  return 0;
}

strata_status strata_check_config(strata_device* dev, const strata_bundle* b) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  if (b == 0) return strata_fail(&dev->error, STRATA_E_ARGUMENT, "strata_check_config: no bundle");
  const strata_hw_info *w = &b->hw, *h = &dev->hw;
  if (config_field(dev, "VERSION", w->version, h->version, 0) &&
      config_field(dev, "P (CFG_PES)", w->pes, h->pes, 0) &&
      config_field(dev, "N (CFG_LANES)", w->lanes, h->lanes, 0) &&
      config_field(dev, "the AXI data width (CFG_AXI_DATA_WIDTH)", w->axi_data_width,
                   h->axi_data_width, 0) &&
      config_field(dev, "a sparse build (CFG_FEATURES.SPARSE)", w->sparse, h->sparse, 0) &&
      config_field(dev, "banks (CFG_BANKS)", w->banks, h->banks, 1) &&
      config_field(dev, "bank words (CFG_BANK_DEPTH)", w->bank_depth, h->bank_depth, 1) &&
      config_field(dev, "PE cache words (CFG_CACHE_DEPTH)", w->cache_depth, h->cache_depth, 1) &&
      config_field(dev, "parameter channels (CFG_PARAM_DEPTH)", w->param_depth, h->param_depth,
                   1) &&
      config_field(dev, "kernel side (CFG_LIMITS.MAX_KERNEL)", w->max_kernel, h->max_kernel, 1) &&
      config_field(dev, "pooling side (CFG_LIMITS.MAX_POOL_KERNEL)", w->max_pool_kernel,
                   h->max_pool_kernel, 1) &&
      config_field(dev, "image width (CFG_LIMITS.MAX_IMAGE_WIDTH)", w->max_image_width,
                   h->max_image_width, 1) &&
      config_field(dev, "activation tables (CFG_FEATURES.ACT_TABLES)", w->act_tables, h->act_tables,
                   1)) {
    clear_error(&dev->error);
    return STRATA_OK;
  }
  return STRATA_E_CONFIG;
}

/* ---- runs ------------------------------------------------------------------------------- */

strata_status strata_start(strata_device* dev, uint64_t instr_base, uint32_t instr_limit) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  clear_error(&dev->error);
  if ((instr_base & 63u) != 0u) {
    return strata_fail(&dev->error, STRATA_E_ARGUMENT,
                       "strata_start: the program address is not 64-byte aligned");
  }
  if ((rd(dev, STRATA_REG_STATUS) & STRATA_STATUS_BUSY) != 0u) {
    return strata_fail(&dev->error, STRATA_E_ARGUMENT,
                       "strata_start: a run is in progress (strata_wait or strata_recover first)");
  }
  if (dev->hal.sync != 0) dev->hal.sync(dev->hal.ctx, 1);
  wr(dev, STRATA_REG_IRQ_STATUS, STRATA_IRQ_STATUS_DONE | STRATA_IRQ_STATUS_ERROR);
  wr(dev, STRATA_REG_INSTR_BASE_LO, (uint32_t)instr_base);
  wr(dev, STRATA_REG_INSTR_BASE_HI, (uint32_t)(instr_base >> 32));
  wr(dev, STRATA_REG_INSTR_LIMIT, instr_limit);
  wr(dev, STRATA_REG_IRQ_ENABLE, STRATA_IRQ_ENABLE_DONE | STRATA_IRQ_ENABLE_ERROR);
  wr(dev, STRATA_REG_CTRL, STRATA_CTRL_START | (dev->fine_grain ? STRATA_CTRL_FINE_GRAIN : 0u));
  return STRATA_OK;
}

/* The opcode names of docs/isa.md, for error messages. */
static const char* opcode_name(uint32_t op) {
  switch (op) {
    case 1u:
      return "LOAD";
    case 2u:
      return "COMPUTE";
    case 3u:
      return "STORE";
    case 4u:
      return "END";
    case 5u:
      return "CONFIG";
    default:
      return "an instruction that is not one";
  }
}

/* dev->error for the accelerator's error code `ec` (the ERROR_CODE register). */
static strata_status hardware_error(strata_device* dev, uint32_t ec, const strata_bundle* b) {
  const uint32_t code = (ec & STRATA_ERROR_CODE_CODE) >> STRATA_ERROR_CODE_CODE_LSB;
  const uint32_t index = (ec & STRATA_ERROR_CODE_INDEX) >> STRATA_ERROR_CODE_INDEX_LSB;
  strata_text t;
  strata_fail(&dev->error, STRATA_E_HARDWARE, "the accelerator stopped with error ");
  dev->error.hw_code = code;
  dev->error.hw_index = index;
  t.buf = dev->error.text;
  t.len = strata_strlen(t.buf);
  const char* name = strata_hw_error_name(code);
  if (name != 0) {
    strata_text_str(&t, name);
  } else {
    strata_text_u64(&t, code);
  }
  if (index != 0xFFFFu) {
    strata_text_str(&t, " at instruction ");
    strata_text_u64(&t, index);
    if (b != 0 && index < b->instructions) {
      const uint8_t* instr = strata_bundle_instruction(b, index);
      strata_text_str(&t, " (");
      strata_text_str(&t, opcode_name(instr[0] & 0xFu));
      strata_text_str(&t, " of layer ");
      strata_text_u64(&t, strata_le16(instr + 14)); /* header tag, bits 112..127 */
      strata_text_str(&t, ")");
    }
  }
  strata_text_str(&t, ": ");
  const char* text = strata_hw_error_text(code);
  strata_text_str(&t, text != 0 ? text : "not an error code of this driver's register map");
  return STRATA_E_HARDWARE;
}

strata_status strata_wait(strata_device* dev, const strata_bundle* bundle) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  uint32_t status = 0;
  if (dev->hal.wait_irq != 0) {
    const int r = dev->hal.wait_irq(dev->hal.ctx, dev->timeout);
    if (r < 0) return strata_fail(&dev->error, STRATA_E_HAL, "waiting for the interrupt failed");
    status = rd(dev, STRATA_REG_STATUS);
  } else {
    for (uint64_t i = 0; i < dev->timeout; ++i) {
      status = rd(dev, STRATA_REG_STATUS);
      if ((status & STRATA_STATUS_BUSY) == 0u) break;
    }
  }
  if ((status & STRATA_STATUS_BUSY) != 0u) {
    strata_recover(dev);
    return strata_fail_u64(&dev->error, STRATA_E_TIMEOUT,
                           "no end of the run within the timeout of ", dev->timeout,
                           " (the run was aborted)");
  }
  wr(dev, STRATA_REG_IRQ_STATUS, STRATA_IRQ_STATUS_DONE | STRATA_IRQ_STATUS_ERROR);
  if (dev->hal.sync != 0) dev->hal.sync(dev->hal.ctx, 0);
  if ((status & STRATA_STATUS_ERROR) != 0u) {
    return hardware_error(dev, rd(dev, STRATA_REG_ERROR_CODE), bundle);
  }
  if ((status & STRATA_STATUS_DONE) == 0u) {
    return strata_fail(&dev->error, STRATA_E_HARDWARE,
                       "the accelerator is idle but reports neither DONE nor ERROR");
  }
  clear_error(&dev->error);
  return STRATA_OK;
}

strata_status strata_recover(strata_device* dev) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  if ((rd(dev, STRATA_REG_STATUS) & STRATA_STATUS_BUSY) != 0u) {
    /* START while busy aborts the run with BUSY_START (docs/registers.md). */
    wr(dev, STRATA_REG_CTRL, STRATA_CTRL_START);
    for (uint32_t i = 0; i < 1000000u; ++i) {
      if ((rd(dev, STRATA_REG_STATUS) & STRATA_STATUS_BUSY) == 0u) break;
    }
  }
  wr(dev, STRATA_REG_IRQ_STATUS, STRATA_IRQ_STATUS_DONE | STRATA_IRQ_STATUS_ERROR);
  if ((rd(dev, STRATA_REG_STATUS) & STRATA_STATUS_BUSY) != 0u) {
    return strata_fail(&dev->error, STRATA_E_TIMEOUT,
                       "the accelerator stays busy after an abort: it needs a reset");
  }
  return STRATA_OK;
}

strata_status strata_read_counters(strata_device* dev, uint64_t counters[STRATA_PERF_COUNTERS]) {
  if (dev == 0 || counters == 0) return STRATA_E_ARGUMENT;
  for (uint32_t i = 0; i < STRATA_PERF_COUNTERS; ++i) {
    const uint32_t offset = STRATA_REG_PERF_CYCLES + 8u * i;
    const uint32_t lo = rd(dev, offset); /* reading LO snapshots HI */
    const uint32_t hi = rd(dev, offset + 4u);
    counters[i] = ((uint64_t)hi << 32) | lo;
  }
  return STRATA_OK;
}
