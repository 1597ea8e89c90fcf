/* SPDX-License-Identifier: Apache-2.0 */
/* strata_rt: the driver library of the Strata accelerator (docs/board.md).
 *
 * C11, one header, no allocation: every object is the caller's, and nothing
 * in the load or run path calls malloc, printf or any other part of a C
 * library (freestanding on a soft CPU, hosted on Linux alike). The hardware
 * is reached only through a strata_hal, a small table of functions: 32-bit
 * register read and write, device-memory write and read, and optionally a
 * wait for the interrupt and a cache synchronisation. Backends: the Verilated accelerator (sim/,
 * `strata run --backend rtl`, `strata bench`), memory-mapped registers on
 * bare metal (strata_rt_mmio.h) and Linux user space through UIO and a DMA
 * buffer (strata_rt_uio.h).
 *
 * A typical run:
 *   strata_device dev;   strata_bundle b;   strata_network net;
 *   strata_open(&dev, &hal);                              identity, configuration
 *   strata_bundle_parse(&b, bytes, size, &dev.error);     checks every field
 *   strata_load(&dev, &b, block_addr, block_bytes, &net); configuration, copy, relocate
 *   strata_run(&net, input, in_bytes, output, out_bytes, 1);
 * Every call returns STRATA_OK or a status, and leaves the details in
 * dev.error (status, the accelerator's error code and failing instruction,
 * one line of text). After any error the device is ready for the next run:
 * strata_run recovers by itself, strata_recover does it explicitly.
 */
#ifndef STRATA_RT_H
#define STRATA_RT_H

#include <stddef.h>
#include <stdint.h>

#include "strata_bundle.h"
#include "strata_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum strata_status {
  STRATA_OK = 0,
  STRATA_E_ARGUMENT = 1,  /* a NULL pointer, a size that does not match, an image count */
  STRATA_E_BUNDLE = 2,    /* the bundle is malformed (the message says which field) */
  STRATA_E_NO_DEVICE = 3, /* the ID register is not 'STRA' */
  STRATA_E_CONFIG = 4,    /* the bundle was compiled for other hardware (the field named) */
  STRATA_E_PLACEMENT = 5, /* the block does not fit the memory given, or is misaligned */
  STRATA_E_HAL = 6,       /* a hardware-access call failed */
  STRATA_E_HARDWARE = 7,  /* the accelerator stopped with an error code */
  STRATA_E_TIMEOUT = 8,   /* no interrupt within the timeout (the run was aborted) */
  STRATA_E_NOT_LOADED = 9 /* strata_run on a network that is not loaded on this device */
} strata_status;

/* The status's name ("STRATA_E_CONFIG"). */
const char* strata_status_name(strata_status status);

#define STRATA_ERROR_TEXT_BYTES 240u

/* The last error of a device (or of a bundle parse). */
typedef struct strata_error {
  strata_status status;
  uint32_t hw_code;  /* STRATA_E_HARDWARE: ERROR_CODE.CODE (strata_hw_error) */
  uint32_t hw_index; /* STRATA_E_HARDWARE: ERROR_CODE.INDEX, the failing instruction */
  char text[STRATA_ERROR_TEXT_BYTES]; /* one line, NUL-terminated */
} strata_error;

/* Hardware access. `ctx` is passed back to every function. */
typedef struct strata_hal {
  void* ctx;
  uint32_t (*read32)(void* ctx, uint32_t offset); /* register at byte offset */
  void (*write32)(void* ctx, uint32_t offset, uint32_t value);
  /* Device memory: the bytes at device address `addr`, as the accelerator's
   * AXI master sees them. Return 0, or non-zero when the range is not device
   * memory. */
  int (*mem_write)(void* ctx, uint64_t addr, const void* src, size_t bytes);
  int (*mem_read)(void* ctx, uint64_t addr, void* dst, size_t bytes);
  /* Optional (NULL where CPU and accelerator see memory coherently): make the
   * CPU's writes visible to the accelerator (for_device = 1, before every
   * START) or the accelerator's writes visible to the CPU (0, after every
   * run), e.g. by writing back and invalidating data caches. */
  void (*sync)(void* ctx, int for_device);
  /* Waits until the interrupt line is high or `timeout` (in the backend's
   * unit: cycles in simulation, microseconds elsewhere) has passed; returns 1
   * (interrupt), 0 (timeout) or < 0 (failure). NULL: strata_wait polls
   * STATUS.BUSY, at most `timeout` reads. */
  int (*wait_irq)(void* ctx, uint64_t timeout);
} strata_hal;

/* What the configuration registers say. */
typedef struct strata_hw_info {
  uint32_t version, pes, lanes, banks, bank_depth, cache_depth, param_depth;
  uint32_t axi_data_width, max_kernel, max_pool_kernel, max_image_width, sparse;
  uint32_t act_tables; /* activation tables (bundle: those the program uses) */
} strata_hw_info;

typedef struct strata_device {
  strata_hal hal;
  strata_hw_info hw;
  uint32_t fine_grain; /* CTRL.FINE_GRAIN of each run (default 1) */
  uint64_t timeout;    /* the wait of each run, in the HAL's unit (default 2^32) */
  strata_error error;  /* the last error */
} strata_device;

/* Checks the ID register and reads the configuration registers. */
strata_status strata_open(strata_device* dev, const strata_hal* hal);

/* A tensor of the network: the input or an output of one image. */
typedef struct strata_tensor_info {
  uint32_t layout;  /* strata_input_layout / strata_output_layout */
  uint32_t c, h, w; /* the shape of one image, [C][H][W] */
  uint32_t map_c, map_h, map_w;
  uint32_t groups, rows, cols, kernel, stride, pad;
  float scale;                             /* real value of one int8 step; 0: not known */
  uint32_t images;                         /* entries of addr */
  uint64_t addr[STRATA_BUNDLE_MAX_IMAGES]; /* block offsets */
} strata_tensor_info;

/* A parsed bundle: views into the caller's bytes, which must outlive it. */
typedef struct strata_bundle {
  const uint8_t* data;
  uint64_t size;
  char network[STRATA_BUNDLE_NAME_BYTES + 1];
  char config[STRATA_BUNDLE_NAME_BYTES + 1];
  strata_hw_info hw; /* what the program needs (banks etc.: at most) */
  uint64_t block_bytes;
  uint32_t block_align;
  uint32_t instructions, batch;
  uint32_t region_count, reloc_count;
  strata_tensor_info input;
  strata_tensor_info output; /* output 0: a network's one output */
  uint32_t output_count;     /* 1 .. STRATA_BUNDLE_MAX_OUTPUTS, in the network's order;
                                each one: strata_bundle_output (kept out of this struct,
                                which firmware often holds in a small static RAM) */
} strata_bundle;

/* Checks every field of the bundle (magic, version, CRC, tables inside the
 * file, regions inside the block, relocations inside the program, tensor
 * addresses inside their regions) and fills `b`. */
strata_status strata_bundle_parse(strata_bundle* b, const void* data, uint64_t size,
                                  strata_error* error);

/* Elements of one image's input and of its output 0 / output `output`
 * (C * H * W; 0 for an output the bundle does not have). */
uint64_t strata_input_elements(const strata_bundle* b);
uint64_t strata_output_elements(const strata_bundle* b);
uint64_t strata_output_elements_at(const strata_bundle* b, uint32_t output);

/* Output `output` of a parsed bundle (0 .. output_count - 1; checked by
 * strata_bundle_parse), read from its bytes into `t`; STRATA_E_ARGUMENT for
 * an output the bundle does not have. */
strata_status strata_bundle_output(const strata_bundle* b, uint32_t output, strata_tensor_info* t);

/* A bundle loaded on a device. */
typedef struct strata_network {
  strata_device* dev;
  const strata_bundle* bundle;
  uint64_t base; /* device address of the block */
} strata_network;

/* Compares the bundle's configuration with the device's (STRATA_E_CONFIG
 * names the first field that differs). */
strata_status strata_check_config(strata_device* dev, const strata_bundle* b);

/* Places the bundle's block at device address `addr` (a multiple of
 * b->block_align) in `bytes` bytes of device memory: checks the
 * configuration, copies the regions with contents, zeroes the scratch
 * regions and relocates the program. */
strata_status strata_load(strata_device* dev, const strata_bundle* b, uint64_t addr, uint64_t bytes,
                          strata_network* net);

/* Runs `images` images (1..batch): writes the inputs (`images` x
 * strata_input_elements int8 values, C-contiguous), starts the program,
 * waits, and reads output 0 (`images` x strata_output_elements; the others:
 * strata_read_output_at after the run). */
strata_status strata_run(strata_network* net, const int8_t* input, uint64_t input_values,
                         int8_t* output, uint64_t output_values, uint32_t images);

/* The steps of strata_run, for tools and tests. */
strata_status strata_write_input(strata_network* net, uint32_t image, const int8_t* values);
strata_status strata_read_output(strata_network* net, uint32_t image, int8_t* values);
/* Output `output` (0 .. output_count - 1) of image `image`:
 * strata_output_elements_at values; STRATA_E_ARGUMENT for an output or image
 * the bundle does not have. */
strata_status strata_read_output_at(strata_network* net, uint32_t image, uint32_t output,
                                    int8_t* values);
strata_status strata_start(strata_device* dev, uint64_t instr_base, uint32_t instr_limit);
/* Waits for the end of the run started last; STRATA_E_HARDWARE or
 * STRATA_E_TIMEOUT with the details in dev->error (`bundle`, if not NULL,
 * names the failing instruction's opcode and layer). */
strata_status strata_wait(strata_device* dev, const strata_bundle* bundle);

/* Leaves the device idle with no interrupt pending: a run still busy is
 * aborted (a START while busy stops it with BUSY_START). */
strata_status strata_recover(strata_device* dev);

/* The performance counters of the last run (STRATA_PERF_COUNTERS values in
 * the order of STRATA_PERF_*_INDEX). */
strata_status strata_read_counters(strata_device* dev, uint64_t counters[STRATA_PERF_COUNTERS]);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_RT_H */
