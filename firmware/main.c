/* SPDX-License-Identifier: Apache-2.0 */
/* Strata firmware (docs/board.md): runs the bundles and images of its payload
 * (strata_payload.h) on the accelerator through the driver library strata_rt,
 * and prints per image the output class, an output checksum, the
 * accelerator's cycles (PERF_CYCLES), the whole run's cycles on the CPU's
 * timer, and the output bytes. Built against LiteX's generated headers and
 * libraries (firmware/Makefile); the same source runs in the SoC simulation
 * (payload in the ROM, exit code through the simulation's CSR) and on the
 * ULX3S (payload in main RAM, loaded by litex_term).
 *
 * Memory: the payload is read in place; each bundle's block goes to
 * BLOCK_ADDR in main RAM; outputs are written to OUTPUT_ADDR. The CPU's L2
 * cache is written back before every start and dropped after every run
 * (the accelerator's DRAM port bypasses it). */
#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>
#include <libbase/uart.h>
#include <stdint.h>
#include <stdio.h>
#include <system.h>

#include "strata_payload.h"
#include "strata_rt.h"
#include "strata_rt_mmio.h"

#ifndef STRATA_PAYLOAD_ADDR
#error "STRATA_PAYLOAD_ADDR: where the payload is (firmware/Makefile)"
#endif
#define BLOCK_ADDR (MAIN_RAM_BASE + 0x01000000u) /* 16 MiB in: past firmware and payload */
#define BLOCK_BYTES (MAIN_RAM_SIZE - 0x01000000u)
#define OUTPUT_ADDR (MAIN_RAM_BASE + 0x00C00000u) /* outputs of one run (up to 4 MiB) */
#define RUN_TIMEOUT 200000000u                    /* wait-loop iterations */

static volatile int strata_irq_seen;

/* The accelerator's level interrupt: masked at the device until the next start. */
static void strata_isr(void) {
  ((volatile uint32_t*)STRATA_BASE)[STRATA_REG_IRQ_ENABLE / 4u] = 0;
  strata_irq_seen = 1;
}

static int wait_irq(uint64_t timeout) {
  for (uint64_t i = 0; i < timeout && !strata_irq_seen; ++i) {
  }
  const int seen = strata_irq_seen;
  strata_irq_seen = 0;
  return seen;
}

static void sync_caches(int for_device) {
  if (!for_device) flush_cpu_dcache();
  flush_l2_cache();
}

static void timer_start(void) {
  timer0_en_write(0);
  timer0_reload_write(0);
  timer0_load_write(0xffffffffu);
  timer0_en_write(1);
}

static uint32_t timer_now(void) {
  timer0_update_value_write(1);
  return 0xffffffffu - timer0_value_read();
}

static uint32_t fnv1a32(const int8_t* v, uint64_t n) {
  uint32_t h = 2166136261u;
  for (uint64_t i = 0; i < n; ++i) {
    h ^= (uint8_t)v[i];
    h *= 16777619u;
  }
  return h;
}

static int expected_errors, unexpected;

static void report_error(const char* what, const strata_device* dev) {
  printf("%s: %s: %s\n", what, strata_status_name(dev->error.status), dev->error.text);
}

/* Runs image `i` of `images` on `net`; prints its line. Returns the status. */
static strata_status run_image(strata_network* net, const int8_t* images, uint32_t i) {
  const strata_bundle* b = net->bundle;
  const uint64_t in_n = strata_input_elements(b), out_n = strata_output_elements(b);
  int8_t* out = (int8_t*)OUTPUT_ADDR;
  const uint32_t t0 = timer_now();
  const strata_status s = strata_run(net, images + i * in_n, in_n, out, out_n, 1);
  const uint32_t t1 = timer_now();
  if (s != STRATA_OK) return s;
  uint64_t counters[STRATA_PERF_COUNTERS];
  strata_read_counters(net->dev, counters);
  uint64_t best = 0;
  for (uint64_t k = 1; k < out_n; ++k) {
    if (out[k] > out[best]) best = k;
  }
  printf("image %lu: class %lu checksum 0x%08lx cycles %lu run %lu output ", (unsigned long)i,
         (unsigned long)best, (unsigned long)fnv1a32(out, out_n),
         (unsigned long)counters[STRATA_PERF_CYCLES_INDEX], (unsigned long)(t1 - t0));
  for (uint64_t k = 0; k < out_n; ++k) printf("%02x", (unsigned)(uint8_t)out[k]);
  printf("\n");
  return STRATA_OK;
}

/* The first parameter region of a bundle: [offset, offset + size) in its block. */
static int parameter_region(const strata_bundle* b, uint64_t* offset, uint64_t* size) {
  const uint8_t* table = b->data + strata_le32(b->data + STRATA_BH_REGION_TABLE);
  for (uint32_t r = 0; r < b->region_count; ++r) {
    const uint8_t* e = table + r * STRATA_BUNDLE_REGION_BYTES;
    if (strata_le32(e + STRATA_BR_KIND) == STRATA_REGION_PARAMETERS) {
      *offset = strata_le64(e + STRATA_BR_OFFSET);
      *size = strata_le64(e + STRATA_BR_SIZE);
      return 1;
    }
  }
  return 0;
}

static void finish(int code) {
  printf("strata: done: %d expected errors, %d unexpected results\n", expected_errors, unexpected);
#ifdef CSR_SIM_EXIT_BASE
  sim_exit_code_write((uint32_t)code);
#endif
  for (;;) {
  }
}

int main(void) {
  irq_setmask(0);
  irq_setie(1);
  uart_init();
  timer_start();
  irq_attach(STRATA_IRQ_INTERRUPT, strata_isr);
  irq_setmask(irq_getmask() | (1u << STRATA_IRQ_INTERRUPT));
  printf("\nstrata firmware\n");

  static strata_mmio mmio;
  mmio.regs = (volatile uint32_t*)STRATA_BASE;
  mmio.cpu_base = BLOCK_ADDR;
  mmio.dev_base = BLOCK_ADDR; /* the accelerator sees main RAM where the CPU does */
  mmio.dev_bytes = BLOCK_BYTES;
  mmio.sync = sync_caches;
  mmio.wait_irq = wait_irq;
  const strata_hal hal = strata_mmio_hal(&mmio);
  static strata_device dev;
  if (strata_open(&dev, &hal) != STRATA_OK) {
    report_error("open", &dev);
    finish(2);
  }
  dev.timeout = RUN_TIMEOUT;
  printf("accelerator: version %lu, P %lu, N %lu, %lu-bit AXI, %s\n", (unsigned long)dev.hw.version,
         (unsigned long)dev.hw.pes, (unsigned long)dev.hw.lanes,
         (unsigned long)dev.hw.axi_data_width, dev.hw.sparse ? "sparse" : "dense");

  const uint8_t* payload = (const uint8_t*)STRATA_PAYLOAD_ADDR;
  if (strata_le32(payload) != STRATA_PAYLOAD_MAGIC ||
      strata_le32(payload + 4) != STRATA_PAYLOAD_VERSION) {
    printf("no payload at 0x%08lx\n", (unsigned long)STRATA_PAYLOAD_ADDR);
    finish(3);
  }
  const uint32_t count = strata_le32(payload + 8);
  static strata_bundle bundle;
  static strata_network net;
  const int8_t* last_images = 0;
  int loaded = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint8_t* e = payload + STRATA_PAYLOAD_HEADER_BYTES + k * STRATA_PAYLOAD_ENTRY_BYTES;
    char name[STRATA_PAYLOAD_NAME_BYTES + 1];
    for (uint32_t i = 0; i <= STRATA_PAYLOAD_NAME_BYTES; ++i) {
      name[i] = i < STRATA_PAYLOAD_NAME_BYTES ? (char)e[i] : '\0';
    }
    const uint32_t kind = strata_le32(e + 32), offset = strata_le32(e + 36);
    const uint32_t size = strata_le32(e + 40), arg = strata_le32(e + 44);
    const uint8_t* data = payload + offset;
    if (kind == STRATA_PAYLOAD_BUNDLE) {
      loaded = 0;
      if (strata_bundle_parse(&bundle, data, size, &dev.error) != STRATA_OK ||
          strata_load(&dev, &bundle, BLOCK_ADDR, BLOCK_BYTES, &net) != STRATA_OK) {
        report_error(name, &dev);
        ++unexpected;
        continue;
      }
      loaded = 1;
      printf("bundle %s: network %s for %s, %lu instructions, block of %lu bytes at 0x%08lx\n",
             name, bundle.network, bundle.config, (unsigned long)bundle.instructions,
             (unsigned long)bundle.block_bytes, (unsigned long)BLOCK_ADDR);
    } else if (kind == STRATA_PAYLOAD_IMAGES) {
      if (!loaded) {
        ++unexpected;
        continue;
      }
      last_images = (const int8_t*)data;
      for (uint32_t i = 0; i < arg; ++i) {
        if (run_image(&net, last_images, i) != STRATA_OK) {
          report_error("run", &dev);
          ++unexpected;
        }
      }
    } else if (kind == STRATA_PAYLOAD_FAULT_READ) {
      uint64_t off = 0, bytes = 0;
      if (!loaded || last_images == 0 || !parameter_region(&bundle, &off, &bytes)) {
        ++unexpected;
        continue;
      }
      strata_fault_read_base_write((uint32_t)(BLOCK_ADDR + off));
      strata_fault_read_size_write((uint32_t)bytes);
      const strata_status s = run_image(&net, last_images, 0);
      strata_fault_read_size_write(0);
      if (s == STRATA_E_HARDWARE && dev.error.hw_code == STRATA_HW_ERR_AXI_READ) {
        report_error("fault", &dev);
        ++expected_errors;
      } else {
        printf("fault: not reported (status %s)\n", strata_status_name(s));
        ++unexpected;
      }
      if (run_image(&net, last_images, 0) != STRATA_OK) {
        report_error("after the fault", &dev);
        ++unexpected;
      }
    } else if (kind == STRATA_PAYLOAD_BAD_BUNDLE) {
      static strata_bundle bad;
      if (strata_bundle_parse(&bad, data, size, &dev.error) == STRATA_OK &&
          strata_check_config(&dev, &bad) == STRATA_OK) {
        printf("bad bundle %s: accepted\n", name);
        ++unexpected;
      } else {
        report_error("bad bundle", &dev);
        ++expected_errors;
      }
    } else {
      printf("payload entry %lu: kind %lu is not one\n", (unsigned long)k, (unsigned long)kind);
      ++unexpected;
    }
  }
  finish(unexpected == 0 ? 0 : 1);
  return 0;
}
