/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt's hardware access on bare metal: the registers are a memory-mapped
 * window, device memory is the CPU's own memory (at a fixed offset from the
 * device's addresses), and cache maintenance and the wait for the interrupt
 * are the firmware's functions (firmware/, docs/board.md). */
#ifndef STRATA_RT_MMIO_H
#define STRATA_RT_MMIO_H

#include <stdint.h>

#include "strata_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_mmio {
  volatile uint32_t* regs; /* the register window (byte offset 0 = ID) */
  /* The CPU address of device address a is a - dev_base + cpu_base (both 0
   * where the accelerator's master sees the CPU's address map). */
  uintptr_t cpu_base;
  uint64_t dev_base;
  uint64_t dev_bytes; /* device memory the driver may use from dev_base */
  /* Optional: cache maintenance (strata_hal.sync) and the wait for the
   * interrupt (strata_hal.wait_irq, timeout in the firmware's unit). */
  void (*sync)(int for_device);
  int (*wait_irq)(uint64_t timeout);
} strata_mmio;

/* A HAL over `m`, which must outlive it. */
strata_hal strata_mmio_hal(strata_mmio* m);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_RT_MMIO_H */
