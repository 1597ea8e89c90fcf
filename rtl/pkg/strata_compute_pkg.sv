// SPDX-License-Identifier: Apache-2.0
// Types shared by the blocks of the COMPUTE engine (strata_compute_engine):
// the decoded, checked form of one COMPUTE instruction as the decoder
// (strata_compute_decode) hands it to the address walker (strata_conv_walker),
// the destination writer (strata_dst_writer) and the datapath.
//
// All three modes run on one walker (docs/rtl-blocks.md, "Compute engine"):
// FC is a 1x1 convolution over an out_h x 1 "image" whose rows are in_groups
// words apart, POOL a 1x1 convolution over in_groups * in_h rows of in_w
// words; the decoder fills in the effective geometry, so the walker has no
// mode of its own.
package strata_compute_pkg;

  // Walker signed address arithmetic: wide enough for in_base - pad_top * in_w
  // (down to -15 * 65535) and every intermediate of a legal walk.
  localparam int unsigned WalkAddrWidth = 24;

  typedef logic signed [WalkAddrWidth-1:0] walk_addr_t;

  // Address walk of one instruction (effective geometry, see above).
  typedef struct packed {
    logic [16:0] rows_m1;       // output rows - 1 (POOL: in_groups * in_h - 1)
    logic [15:0] cols_m1;       // output columns - 1
    logic [16:0] img_h;         // image rows (taps at rows >= img_h are padding)
    logic [15:0] img_w;         // image columns = bank words between image rows
    logic [3:0]  kernel_h;      // kernel rows (walked taps: the valid rectangle only)
    logic [3:0]  kernel_w;      // kernel columns
    logic [3:0]  stride_h;      // vertical stride
    logic [3:0]  stride_w;      // horizontal stride
    logic [3:0]  pad_top;       // top padding (the bottom needs none: taps end at img_h)
    logic [3:0]  pad_left;      // left padding (the right needs none: taps end at img_w)
    logic [15:0] groups_m1;     // beats per tap - 1 (channel groups)
    logic [16:0] group_step;    // bank words between two groups of a tap (CONV: in_h * in_w)
    logic [19:0] row_adv;       // bank words between two output rows' first image rows
    logic [19:0] pad_off;       // pad_top * img_w: image row -pad_top is at base - pad_off
    logic [15:0] base;          // bank word of image row 0, column 0, group 0
    logic [15:0] cache_base;    // cache word of tap (0, 0), group 0
    logic [16:0] kw_groups;     // cache words between two tap rows (kernel_w * groups)
    logic [19:0] row_off0;      // pad_top * kernel_w * groups (cache skip of the top padding)
    logic [19:0] row_off_step;  // stride_h * kernel_w * groups
    logic [19:0] col_off0;      // pad_left * groups (cache skip of the left padding)
    logic [19:0] col_off_step;  // stride_w * groups
    logic [15:0] param_base;    // parameter channel of output row 0 (FC: neuron 0)
    logic        fill;          // acc_in: 4 partial-sum beats before each window
    logic [15:0] fill_base;     // acc_in: bank word of pixel 0's partial sums (acc_base)
  } walk_cfg_t;

  // Destination kinds (the ISA's compute_dst values).
  typedef enum logic [1:0] {
    WrBank      = 2'd0,  // a bank
    WrPeCache   = 2'd1,  // one PE's cache
    WrTranspose = 2'd2   // FC: N neurons transposed into every PE's cache
  } wr_kind_e;

  // Result writes of one instruction: result (g, r, c) goes to word
  // base + g * group_stride + r * row_stride + c; PE_TRANSPOSE collects N
  // results (neurons) and writes word base + o / N of every PE.
  typedef struct packed {
    wr_kind_e    kind;          // destination memory
    logic [5:0]  dst_id;        // bank or PE
    logic [15:0] base;          // first word
    logic [15:0] row_stride;    // words between result rows
    logic [15:0] group_stride;  // words between result groups (POOL)
    logic [15:0] rows_m1;       // result rows per group - 1 (FC BANK: neurons - 1)
    logic [15:0] cols_m1;       // result columns - 1
    logic [15:0] groups_m1;     // groups - 1 (POOL: in_groups - 1, else 0)
    logic [15:0] neurons_m1;    // PE_TRANSPOSE: neurons - 1
  } wr_cfg_t;

  // Frames of the window generator + pooling unit.
  typedef struct packed {
    logic        enable;        // results pass through the pooling unit
    logic        from_bank;     // POOL: the unit reads the bank stream (no PE array)
    logic [15:0] frames_m1;     // frames - 1 (POOL: in_groups - 1)
    logic [15:0] height;        // frame rows
    logic [15:0] width;         // frame columns
    logic [3:0]  kernel;        // window side
    logic [3:0]  stride;        // window step
    logic [3:0]  pad_top;       // padding rows above the frame
    logic [3:0]  pad_left;      // padding columns left of the frame
    logic [3:0]  pad_bottom;    // padding rows below the frame
    logic [3:0]  pad_right;     // padding columns right of the frame
    logic        ceil_mode;     // Caffe ceil mode
    logic        op_avg;        // 1: average, 0: maximum
    logic [7:0]  post_lo;       // clamp after pooling (signed)
    logic [7:0]  post_hi;
  } pool_cfg_t;

  // Everything the engine needs to run one checked instruction.
  typedef struct packed {
    logic        fc;            // FC: one parameter channel per neuron, broadcast
    logic        pool_only;     // POOL: no PE array, no requantisation
    logic        dw;            // DEPTHWISE: windows transposed into the PE array
    logic [7:0]  clamp_lo;      // requantisation clamp (signed)
    logic [7:0]  clamp_hi;
    logic        act_en;        // look the clamped value up in activation table act_table
    logic [7:0]  act_table;
    logic [5:0]  in_id;         // bank of the streamed operand
    logic        acc_out;       // raw int32 accumulators out, 4 words per result
    logic        acc_in;        // start values from partial sums instead of the bias
    logic [5:0]  acc_id;        // bank of the partial sums (acc_in)
    logic [15:0] packed_rows;   // CONV on a sparse build: packed rows per pixel (0: dense walk)
    walk_cfg_t   walk;
    wr_cfg_t     wr;
    pool_cfg_t   pool;
  } ce_cfg_t;

  // Packed CONV walk (strata_packed_walker): the context of one output pixel,
  // carried with each of its kernel rows, records and beats.
  typedef struct packed {
    walk_addr_t  pbase;      // base + iy0*img_w + ix0 (virtual: tap (0, 0), group 0)
    logic [3:0]  ky_lo;      // valid kernel rows [ky_lo, ky_last]
    logic [3:0]  ky_last;
    logic [3:0]  kx_lo;      // valid kernel columns [kx_lo, kx_last]
    logic [3:0]  kx_last;
    logic [15:0] ch;         // parameter channel
    logic        row_first;  // the pixel starts an output row
  } packed_px_t;

  // Kinds of the packed walk's records (one valid kernel row of one pixel).
  typedef enum logic [1:0] {
    PackedRange,  // packed rows [start, hi): one beat each
    PackedEmpty,  // no row: one cycle, no beat
    PackedDummy   // the beat of an all-skipped pixel (both words outside)
  } packed_rec_e;

endpackage : strata_compute_pkg
