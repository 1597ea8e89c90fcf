/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt: placing a bundle in device memory (copy, zero, relocate), the
 * input and output layouts of docs/bundle.md, and strata_run. Device memory
 * is reached only through the HAL's mem_write / mem_read, in runs of up to
 * kChunk bytes staged on the stack. */
#include "strata_rt_internal.h"

enum { kChunk = 256 };

/* Sequential writes to device memory, staged kChunk bytes at a time. */
typedef struct dev_writer {
  strata_device* dev;
  uint64_t addr; /* device address of buf[0] */
  uint32_t n;
  int failed;
  uint8_t buf[kChunk];
} dev_writer;

static void writer_flush(dev_writer* w) {
  if (w->n == 0u || w->failed) return;
  if (w->dev->hal.mem_write(w->dev->hal.ctx, w->addr, w->buf, w->n) != 0) w->failed = 1;
  w->addr += w->n;
  w->n = 0;
}

static void writer_put(dev_writer* w, uint8_t byte) {
  w->buf[w->n++] = byte;
  if (w->n == kChunk) writer_flush(w);
}

static strata_status hal_failed(strata_device* dev, const char* what, uint64_t addr) {
  strata_text t;
  strata_fail(&dev->error, STRATA_E_HAL, what);
  t.buf = dev->error.text;
  t.len = strata_strlen(t.buf);
  strata_text_str(&t, " device memory at ");
  strata_text_hex(&t, addr);
  strata_text_str(&t, " failed");
  return STRATA_E_HAL;
}

/* ---- loading ----------------------------------------------------------------------------- */

static void field_set(uint8_t* instr, uint32_t lsb, uint32_t width, uint64_t v) {
  for (uint32_t i = 0; i < width; ++i) {
    const uint32_t b = lsb + i;
    const uint8_t mask = (uint8_t)(1u << (b % 8u));
    instr[b / 8u] = (uint8_t)(((v >> i) & 1u) != 0u ? instr[b / 8u] | mask : instr[b / 8u] & ~mask);
  }
}

/* Every relocated field can hold base + its offset: checked before anything
 * is written, so a placement that cannot work changes no device memory. */
static strata_status check_relocations(strata_device* dev, const strata_bundle* b, uint64_t base) {
  const uint8_t* table = b->data + strata_le32(b->data + STRATA_BH_RELOC_TABLE);
  for (uint32_t i = 0; i < b->reloc_count; ++i) {
    const uint8_t* e = table + (uint64_t)i * STRATA_BUNDLE_RELOC_BYTES;
    const uint32_t index = strata_le32(e + STRATA_BL_INDEX);
    const uint32_t lsb = strata_le16(e + STRATA_BL_LSB), width = strata_le16(e + STRATA_BL_WIDTH);
    const uint64_t value = base + strata_field_get(strata_bundle_instruction(b, index), lsb, width);
    if (value < base || (width < 64u && (value >> width) != 0u)) {
      strata_text t;
      strata_fail(&dev->error, STRATA_E_PLACEMENT, "the block at ");
      t.buf = dev->error.text;
      t.len = strata_strlen(t.buf);
      strata_text_hex(&t, base);
      strata_text_str(&t, " puts an address of instruction ");
      strata_text_u64(&t, index);
      strata_text_str(&t, " beyond its ");
      strata_text_u64(&t, width);
      strata_text_str(&t, "-bit field");
      return STRATA_E_PLACEMENT;
    }
  }
  return STRATA_OK;
}

/* The program with every relocated field holding base + offset, instruction
 * by instruction (the relocation table is in instruction order). */
static strata_status load_program(strata_device* dev, const strata_bundle* b, uint64_t base) {
  const uint8_t* table = b->data + strata_le32(b->data + STRATA_BH_RELOC_TABLE);
  uint32_t next = 0; /* relocation entry */
  for (uint32_t index = 0; index < b->instructions; ++index) {
    uint8_t instr[64];
    const uint8_t* src = strata_bundle_instruction(b, index);
    for (int i = 0; i < 64; ++i) instr[i] = src[i];
    for (; next < b->reloc_count; ++next) {
      const uint8_t* e = table + (uint64_t)next * STRATA_BUNDLE_RELOC_BYTES;
      if (strata_le32(e + STRATA_BL_INDEX) != index) break;
      const uint32_t lsb = strata_le16(e + STRATA_BL_LSB), width = strata_le16(e + STRATA_BL_WIDTH);
      field_set(instr, lsb, width, base + strata_field_get(instr, lsb, width));
    }
    const uint64_t at = base + (uint64_t)index * 64u;
    if (dev->hal.mem_write(dev->hal.ctx, at, instr, 64u) != 0)
      return hal_failed(dev, "writing", at);
  }
  return STRATA_OK;
}

strata_status strata_load(strata_device* dev, const strata_bundle* b, uint64_t addr, uint64_t bytes,
                          strata_network* net) {
  if (dev == 0) return STRATA_E_ARGUMENT;
  if (b == 0 || net == 0 || b->data == 0) {
    return strata_fail(&dev->error, STRATA_E_ARGUMENT, "strata_load: no bundle or network");
  }
  net->dev = 0;
  net->bundle = 0;
  strata_status s = strata_check_config(dev, b);
  if (s != STRATA_OK) return s;
  if (addr % b->block_align != 0u) {
    return strata_fail_u64(&dev->error, STRATA_E_PLACEMENT,
                           "the block's device address is not a multiple of ", b->block_align,
                           " bytes");
  }
  if (bytes < b->block_bytes || addr + b->block_bytes < addr) {
    return strata_fail_u64(&dev->error, STRATA_E_PLACEMENT, "the bundle needs ", b->block_bytes,
                           " bytes of device memory, fewer were given");
  }
  s = check_relocations(dev, b, addr);
  if (s != STRATA_OK) return s;
  const uint8_t* regions = b->data + strata_le32(b->data + STRATA_BH_REGION_TABLE);
  static const uint8_t kZero[kChunk] = {0};
  for (uint32_t r = 0; r < b->region_count; ++r) {
    const uint8_t* e = regions + (uint64_t)r * STRATA_BUNDLE_REGION_BYTES;
    const uint32_t kind = strata_le32(e + STRATA_BR_KIND), flags = strata_le32(e + STRATA_BR_FLAGS);
    const uint64_t at = addr + strata_le64(e + STRATA_BR_OFFSET);
    const uint64_t size = strata_le64(e + STRATA_BR_SIZE);
    if (kind == STRATA_REGION_PROGRAM) continue; /* load_program relocates it */
    if ((flags & STRATA_REGION_CONTENTS) != 0u) {
      const uint8_t* src = b->data + strata_le64(e + STRATA_BR_CONTENT);
      if (dev->hal.mem_write(dev->hal.ctx, at, src, (size_t)size) != 0) {
        return hal_failed(dev, "writing", at);
      }
    } else if ((flags & STRATA_REGION_ZERO) != 0u) {
      for (uint64_t done = 0; done < size; done += kChunk) {
        const uint64_t n = size - done < kChunk ? size - done : kChunk;
        if (dev->hal.mem_write(dev->hal.ctx, at + done, kZero, (size_t)n) != 0) {
          return hal_failed(dev, "zeroing", at + done);
        }
      }
    }
  }
  s = load_program(dev, b, addr);
  if (s != STRATA_OK) return s;
  net->dev = dev;
  net->bundle = b;
  net->base = addr;
  return STRATA_OK;
}

/* ---- inputs and outputs ------------------------------------------------------------------ */

/* One image's input in its layout; `values` NULL writes an image of zeros.
 * Indices are 32-bit (a tensor holds at most 2^28 elements, checked by the
 * parser): a soft CPU without 64-bit multiplies walks them quickly. */
strata_status strata_write_input(strata_network* net, uint32_t image, const int8_t* values) {
  if (net == 0 || net->dev == 0 || net->bundle == 0) return STRATA_E_NOT_LOADED;
  const strata_tensor_info* t = &net->bundle->input;
  strata_device* dev = net->dev;
  if (image >= t->images) {
    return strata_fail_u64(&dev->error, STRATA_E_ARGUMENT, "input image ", image,
                           " is beyond the program's batch");
  }
  const uint32_t n = net->bundle->hw.lanes, c_count = t->c, w = t->w;
  const uint32_t plane = t->h * t->w;
  dev_writer wr;
  wr.dev = dev;
  wr.addr = net->base + t->addr[image];
  wr.n = 0;
  wr.failed = 0;
  if (t->layout == STRATA_INPUT_FEATURES) {
    const uint32_t elements = c_count * plane, bytes = t->groups * n;
    for (uint32_t f = 0; f < bytes; ++f) {
      writer_put(&wr, f < elements && values != 0 ? (uint8_t)values[f] : (uint8_t)0u);
    }
  } else {
    const int reordered = t->layout == STRATA_INPUT_REORDERED;
    const uint32_t cols = reordered ? t->cols : w;
    /* Per lane of a word group: the channel it holds and (reordered) its
     * tap's column offset; worked out once per group, not per byte. */
    uint32_t lane_c[STRATA_MAX_LANES], lane_kx[STRATA_MAX_LANES];
    for (uint32_t y = 0; y < t->h; ++y) {
      const uint32_t row = y * w;
      for (uint32_t g = 0; g < t->groups; ++g) {
        for (uint32_t lane = 0; lane < n; ++lane) {
          const uint32_t idx = g * n + lane;
          lane_kx[lane] = reordered ? idx / c_count : 0u;
          lane_c[lane] = idx - lane_kx[lane] * c_count;
        }
        for (uint32_t x = 0; x < cols; ++x) {
          for (uint32_t lane = 0; lane < n; ++lane) {
            const uint32_t c = lane_c[lane];
            int in = c < c_count;
            uint32_t ix = x;
            if (reordered) { /* word lanes hold kernel x C taps of one output column */
              const int64_t col = (int64_t)x * t->stride - (int64_t)t->pad + lane_kx[lane];
              in = lane_kx[lane] < t->kernel && col >= 0 && col < (int64_t)w;
              ix = (uint32_t)col;
            }
            writer_put(&wr, in && values != 0 ? (uint8_t)values[c * plane + row + ix] : 0u);
          }
        }
      }
    }
  }
  writer_flush(&wr);
  if (wr.failed) return hal_failed(dev, "writing the input to", net->base + t->addr[image]);
  return STRATA_OK;
}

strata_status strata_read_output(strata_network* net, uint32_t image, int8_t* values) {
  return strata_read_output_at(net, image, 0u, values);
}

strata_status strata_read_output_at(strata_network* net, uint32_t image, uint32_t output,
                                    int8_t* values) {
  if (net == 0 || net->dev == 0 || net->bundle == 0) return STRATA_E_NOT_LOADED;
  strata_device* dev = net->dev;
  if (output >= net->bundle->output_count) {
    return strata_fail_u64(&dev->error, STRATA_E_ARGUMENT, "output ", output,
                           " is beyond the network's outputs");
  }
  strata_tensor_info info;
  strata_bundle_output(net->bundle, output, &info);
  const strata_tensor_info* t = &info;
  const uint32_t n = net->bundle->hw.lanes;
  if (values == 0 || image >= net->bundle->batch) {
    return strata_fail_u64(&dev->error, STRATA_E_ARGUMENT, "output image ", image,
                           " is beyond the program's batch");
  }
  uint8_t buf[kChunk];
  if (t->layout == STRATA_OUTPUT_NEURONS) {
    /* Neuron o of image i at byte o * N + i: one N-byte word per neuron. */
    const uint64_t base = net->base + t->addr[0];
    for (uint32_t o = 0; o < t->map_c; ++o) {
      if (dev->hal.mem_read(dev->hal.ctx, base + (uint64_t)o * n, buf, n) != 0) {
        return hal_failed(dev, "reading the output from", base + (uint64_t)o * n);
      }
      values[o] = (int8_t)buf[image];
    }
    return STRATA_OK;
  }
  /* Words read in address order. A map is [group][row][col]: byte k is lane
   * k % N of pixel (k / N) % (H * W) of group k / (N * H * W). A rows output is
   * [row][group][col]: lane k % N of column (k / N) % W of group (k / (N * W)) %
   * groups of row k / (N * W * groups). */
  const int rows = t->layout == STRATA_OUTPUT_ROWS;
  const uint32_t plane = t->map_h * t->map_w;
  const uint64_t base = net->base + t->addr[image];
  const uint32_t bytes = t->groups * plane * n;
  uint32_t lane = 0, pixel = 0, group = 0, x = 0, y = 0;
  for (uint32_t done = 0; done < bytes; done += kChunk) {
    const uint32_t len = bytes - done < kChunk ? bytes - done : kChunk;
    if (dev->hal.mem_read(dev->hal.ctx, base + done, buf, len) != 0) {
      return hal_failed(dev, "reading the output from", base + done);
    }
    for (uint32_t i = 0; i < len; ++i) {
      const uint32_t c = group * n + lane;
      if (c < t->map_c) values[c * plane + (rows ? y * t->map_w + x : pixel)] = (int8_t)buf[i];
      if (++lane < n) continue;
      lane = 0;
      if (!rows) {
        if (++pixel == plane) {
          pixel = 0;
          ++group;
        }
      } else if (++x == t->map_w) {
        x = 0;
        if (++group == t->groups) {
          group = 0;
          ++y;
        }
      }
    }
  }
  return STRATA_OK;
}

strata_status strata_run(strata_network* net, const int8_t* input, uint64_t input_values,
                         int8_t* output, uint64_t output_values, uint32_t images) {
  if (net == 0 || net->dev == 0 || net->bundle == 0) return STRATA_E_NOT_LOADED;
  strata_device* dev = net->dev;
  const strata_bundle* b = net->bundle;
  const uint64_t in_each = strata_input_elements(b), out_each = strata_output_elements(b);
  if (images < 1u || images > b->batch) {
    return strata_fail_u64(&dev->error, STRATA_E_ARGUMENT, "strata_run: ", images,
                           " images, the program runs 1..batch");
  }
  if (input == 0 || output == 0 || input_values != images * in_each ||
      output_values != images * out_each) {
    return strata_fail(&dev->error, STRATA_E_ARGUMENT,
                       "strata_run: the input and output hold images x the tensor's elements");
  }
  for (uint32_t i = 0; i < b->batch; ++i) {
    /* Images past `images` run on zeros: the program computes its whole batch. */
    const strata_status s = strata_write_input(net, i, i < images ? input + i * in_each : 0);
    if (s != STRATA_OK) return s;
  }
  strata_status s = strata_start(dev, net->base, b->instructions);
  if (s == STRATA_OK) s = strata_wait(dev, b);
  if (s != STRATA_OK) {
    strata_recover(dev);
    return s;
  }
  for (uint32_t i = 0; i < images; ++i) {
    s = strata_read_output(net, i, output + i * out_each);
    if (s != STRATA_OK) return s;
  }
  return STRATA_OK;
}
