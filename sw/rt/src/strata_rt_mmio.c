/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt on bare metal (strata_rt_mmio.h): volatile register accesses and
 * byte copies to and from the CPU's view of device memory. */
#include "strata_rt_mmio.h"

static uint32_t mmio_read32(void* ctx, uint32_t offset) {
  const strata_mmio* m = (const strata_mmio*)ctx;
  return m->regs[offset / 4u];
}

static void mmio_write32(void* ctx, uint32_t offset, uint32_t value) {
  const strata_mmio* m = (const strata_mmio*)ctx;
  m->regs[offset / 4u] = value;
}

/* The CPU pointer of [addr, addr + bytes), or 0 outside the device memory. */
static uint8_t* cpu_ptr(const strata_mmio* m, uint64_t addr, size_t bytes) {
  if (addr < m->dev_base || addr - m->dev_base > m->dev_bytes ||
      bytes > m->dev_bytes - (addr - m->dev_base)) {
    return 0;
  }
  return (uint8_t*)(m->cpu_base + (uintptr_t)(addr - m->dev_base));
}

static int mmio_mem_write(void* ctx, uint64_t addr, const void* src, size_t bytes) {
  uint8_t* dst = cpu_ptr((const strata_mmio*)ctx, addr, bytes);
  if (dst == 0) return -1;
  const uint8_t* s = (const uint8_t*)src;
  for (size_t i = 0; i < bytes; ++i) dst[i] = s[i];
  return 0;
}

static int mmio_mem_read(void* ctx, uint64_t addr, void* dst, size_t bytes) {
  const uint8_t* src = cpu_ptr((const strata_mmio*)ctx, addr, bytes);
  if (src == 0) return -1;
  uint8_t* d = (uint8_t*)dst;
  for (size_t i = 0; i < bytes; ++i) d[i] = src[i];
  return 0;
}

static int mmio_wait_irq(void* ctx, uint64_t timeout) {
  return ((const strata_mmio*)ctx)->wait_irq(timeout);
}

static void mmio_sync(void* ctx, int for_device) { ((const strata_mmio*)ctx)->sync(for_device); }

strata_hal strata_mmio_hal(strata_mmio* m) {
  strata_hal h;
  h.ctx = m;
  h.read32 = mmio_read32;
  h.write32 = mmio_write32;
  h.mem_write = mmio_mem_write;
  h.mem_read = mmio_mem_read;
  h.wait_irq = m->wait_irq != 0 ? mmio_wait_irq : 0;
  h.sync = m->sync != 0 ? mmio_sync : 0;
  return h;
}
