/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt under Linux UIO (strata_rt_uio.h). */
#define _POSIX_C_SOURCE 200809L
#include "strata_rt_uio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fail(char* err, size_t n, const char* what, const char* path) {
  snprintf(err, n, "%s: %s: %s", path, what, strerror(errno != 0 ? errno : EINVAL));
  return -1;
}

/* One number (decimal or 0x hex) from a sysfs attribute. */
static int read_number(const char* path, uint64_t* value, char* err, size_t n) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return fail(err, n, "cannot open", path);
  char text[64] = {0};
  const size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  char* end = NULL;
  errno = 0;
  const unsigned long long v = strtoull(text, &end, 0);
  if (got == 0 || end == text || errno != 0 || (*end != '\0' && *end != '\n')) {
    errno = EINVAL;
    return fail(err, n, "not a number", path);
  }
  *value = (uint64_t)v;
  return 0;
}

int strata_uio_open(strata_uio* u, const char* sysfs, const char* dev, const char* uio,
                    const char* irq, const char* dma, char* err, size_t err_bytes) {
  char path[512];
  uint64_t regs_bytes = 0;
  memset(u, 0, sizeof *u);
  u->uio_fd = -1;
  u->irq_fd = -1;
  u->dma_fd = -1;
  snprintf(path, sizeof path, "%s/class/uio/%s/maps/map0/size", sysfs, uio);
  if (read_number(path, &regs_bytes, err, err_bytes) != 0) return -1;
  snprintf(path, sizeof path, "%s/class/u-dma-buf/%s/phys_addr", sysfs, dma);
  if (read_number(path, &u->dma_addr, err, err_bytes) != 0) return -1;
  snprintf(path, sizeof path, "%s/class/u-dma-buf/%s/size", sysfs, dma);
  if (read_number(path, &u->dma_bytes, err, err_bytes) != 0) return -1;
  if (regs_bytes < 0x200u) {
    errno = EINVAL;
    return fail(err, err_bytes, "the register window is smaller than the register map", path);
  }
  snprintf(path, sizeof path, "%s/%s", dev, uio);
  u->uio_fd = open(path, O_RDWR | O_CLOEXEC);
  if (u->uio_fd < 0) return fail(err, err_bytes, "cannot open", path);
  void* regs = mmap(NULL, (size_t)regs_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, u->uio_fd, 0);
  if (regs == MAP_FAILED) {
    fail(err, err_bytes, "cannot map the registers (map 0)", path);
    strata_uio_close(u);
    return -1;
  }
  u->regs = (volatile uint32_t*)regs;
  u->regs_bytes = (size_t)regs_bytes;
  if (strcmp(irq, uio) == 0) {
    u->irq_fd = dup(u->uio_fd);
  } else {
    snprintf(path, sizeof path, "%s/%s", dev, irq);
    u->irq_fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  }
  if (u->irq_fd < 0) {
    fail(err, err_bytes, "cannot open the interrupt's device", path);
    strata_uio_close(u);
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s", dev, dma);
  u->dma_fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC); /* O_SYNC: an uncached mapping */
  if (u->dma_fd < 0) {
    fail(err, err_bytes, "cannot open", path);
    strata_uio_close(u);
    return -1;
  }
  void* buf = mmap(NULL, (size_t)u->dma_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, u->dma_fd, 0);
  if (buf == MAP_FAILED) {
    fail(err, err_bytes, "cannot map the DMA buffer", path);
    strata_uio_close(u);
    return -1;
  }
  u->dma = (uint8_t*)buf;
  return 0;
}

void strata_uio_close(strata_uio* u) {
  if (u->dma != NULL) munmap(u->dma, (size_t)u->dma_bytes);
  if (u->regs != NULL) munmap((void*)u->regs, u->regs_bytes);
  if (u->dma_fd >= 0) close(u->dma_fd);
  if (u->irq_fd >= 0) close(u->irq_fd);
  if (u->uio_fd >= 0) close(u->uio_fd);
  u->dma = NULL;
  u->regs = NULL;
  u->dma_fd = u->irq_fd = u->uio_fd = -1;
}

static uint32_t uio_read32(void* ctx, uint32_t offset) {
  return ((strata_uio*)ctx)->regs[offset / 4u];
}

static void uio_write32(void* ctx, uint32_t offset, uint32_t value) {
  ((strata_uio*)ctx)->regs[offset / 4u] = value;
}

static uint8_t* dma_ptr(strata_uio* u, uint64_t addr, size_t bytes) {
  if (addr < u->dma_addr || addr - u->dma_addr > u->dma_bytes ||
      bytes > u->dma_bytes - (addr - u->dma_addr)) {
    return NULL;
  }
  return u->dma + (addr - u->dma_addr);
}

static int uio_mem_write(void* ctx, uint64_t addr, const void* src, size_t bytes) {
  uint8_t* p = dma_ptr((strata_uio*)ctx, addr, bytes);
  if (p == NULL) return -1;
  memcpy(p, src, bytes);
  return 0;
}

static int uio_mem_read(void* ctx, uint64_t addr, void* dst, size_t bytes) {
  const uint8_t* p = dma_ptr((strata_uio*)ctx, addr, bytes);
  if (p == NULL) return -1;
  memcpy(dst, p, bytes);
  return 0;
}

/* UIO: writing 1 unmasks the interrupt, read() returns its count once it came. */
static int uio_wait_irq(void* ctx, uint64_t timeout_us) {
  strata_uio* u = (strata_uio*)ctx;
  const uint32_t unmask = 1;
  if (write(u->irq_fd, &unmask, sizeof unmask) != (ssize_t)sizeof unmask) return -1;
  struct pollfd p = {u->irq_fd, POLLIN, 0};
  const uint64_t ms = timeout_us / 1000u + 1u;
  const int r = poll(&p, 1, ms > 0x7fffffffu ? 0x7fffffff : (int)ms);
  if (r < 0) return -1;
  if (r == 0) return 0;
  uint32_t count = 0;
  if (read(u->irq_fd, &count, sizeof count) != (ssize_t)sizeof count) return -1;
  return 1;
}

strata_hal strata_uio_hal(strata_uio* u) {
  strata_hal h;
  h.ctx = u;
  h.read32 = uio_read32;
  h.write32 = uio_write32;
  h.mem_write = uio_mem_write;
  h.mem_read = uio_mem_read;
  h.wait_irq = uio_wait_irq;
  h.sync = NULL;
  return h;
}
