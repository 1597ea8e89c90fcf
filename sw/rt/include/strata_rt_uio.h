/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt under Linux user space through UIO (docs/board.md): the
 * accelerator's registers are map 0 of a UIO device (/dev/uioN, bound by the
 * device tree's generic-uio node), its interrupt is the UIO file's read(),
 * and device memory is a DMA buffer of the u-dma-buf driver (/dev/udmabufN),
 * opened with O_SYNC so that the CPU's mapping is not cached and no cache
 * maintenance is needed. Hosted only (POSIX). */
#ifndef STRATA_RT_UIO_H
#define STRATA_RT_UIO_H

#include <stddef.h>
#include <stdint.h>

#include "strata_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_uio {
  int uio_fd; /* the UIO device of the registers */
  int irq_fd; /* the UIO device of the interrupt: read() waits for it */
  int dma_fd;
  volatile uint32_t* regs; /* map 0 of the UIO device */
  size_t regs_bytes;
  uint8_t* dma;      /* the DMA buffer in this process */
  uint64_t dma_addr; /* its device (physical) address */
  uint64_t dma_bytes;
} strata_uio;

/* Opens the UIO device `uio` ("uio0") whose map 0 is the register window,
 * the UIO device `irq` that delivers the interrupt (the same one where the
 * device tree gives the node its interrupt, as docs/board.md's does) and the
 * DMA buffer `dma` ("udmabuf0"): the window's size from
 * <sysfs>/class/uio/<uio>/maps/map0/size, the buffer's address and size from
 * <sysfs>/class/u-dma-buf/<dma>/phys_addr and size; the devices are
 * <dev>/<name>. `sysfs` and `dev` are "/sys" and "/dev" on a board (other
 * roots serve a simulated device). On failure returns -1 with one line in
 * `err` naming the file and the reason. */
int strata_uio_open(strata_uio* u, const char* sysfs, const char* dev, const char* uio,
                    const char* irq, const char* dma, char* err, size_t err_bytes);
void strata_uio_close(strata_uio* u);

/* A HAL over `u` (wait_irq: microseconds). */
strata_hal strata_uio_hal(strata_uio* u);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_RT_UIO_H */
