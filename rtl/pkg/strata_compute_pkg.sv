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

  // The widths of COMPUTE's fields this package and the engine are sized for
  // (the package precedes strata_isa_pkg in file-name order, so it cannot read
  // the generated ones): strata_compute_decode checks the generated widths
  // against them and refuses to build with a wider field.
  // Geometry (in_h, in_w, in_groups, out_h, out_w, pool_out_h, pool_out_w),
  // word addresses, strides and packed_rows.
  localparam int unsigned DimWidth = 16;
  // A bank or PE index (in_id, dst_id, acc_id).
  localparam int unsigned IdWidth  = 6;
  // An activation-table index (act_table).
  localparam int unsigned ActIdxWidth = 8;
  // A clamp bound (clamp_lo, clamp_hi, post_lo, post_hi): an int8 value.
  localparam int unsigned ClampWidth = strata_cfg_pkg::DataWidth;
  // A window field (kernel, stride, padding: CONV's and pooling's).
  localparam int unsigned WinWidth = 4;

  typedef logic [DimWidth-1:0] dim_t;  // a geometry value, its counter, or a word address
  typedef logic [WinWidth-1:0] tap_t;  // a window field, or a kernel row or column

  // Walker signed address arithmetic: wide enough for in_base - pad_top * in_w
  // (down to -15 * 65535) and every intermediate of a legal walk.
  localparam int unsigned WalkAddrWidth = 24;

  typedef logic signed [WalkAddrWidth-1:0] walk_addr_t;

  // Address walk of one instruction (effective geometry, see above).
  typedef struct packed {
    logic [DimWidth:0]   rows_m1;     // output rows - 1 (POOL: in_groups * in_h - 1)
    logic [DimWidth-1:0] cols_m1;     // output columns - 1
    logic [DimWidth:0]   img_h;       // image rows (taps at rows >= img_h are padding)
    logic [DimWidth-1:0] img_w;       // image columns = bank words between image rows
    tap_t                kernel_h;    // kernel rows (walked taps: the valid rectangle only)
    tap_t                kernel_w;    // kernel columns
    tap_t                stride_h;    // vertical stride
    tap_t                stride_w;    // horizontal stride
    tap_t                pad_top;     // top padding (the bottom needs none: taps end at img_h)
    tap_t                pad_left;    // left padding (the right needs none: taps end at img_w)
    logic [DimWidth-1:0] groups_m1;   // beats per tap - 1 (channel groups)
    logic [DimWidth:0] group_step;    // bank words between two groups of a tap (CONV: in_h * in_w)
    logic [19:0] row_adv;       // bank words between two output rows' first image rows
    logic [19:0] pad_off;       // pad_top * img_w: image row -pad_top is at base - pad_off
    dim_t                base;        // bank word of image row 0, column 0, group 0
    dim_t                cache_base;  // cache word of tap (0, 0), group 0
    logic [DimWidth:0] kw_groups;     // cache words between two tap rows (kernel_w * groups)
    logic [19:0] row_off0;      // pad_top * kernel_w * groups (cache skip of the top padding)
    logic [19:0] row_off_step;  // stride_h * kernel_w * groups
    logic [19:0] col_off0;      // pad_left * groups (cache skip of the left padding)
    logic [19:0] col_off_step;  // stride_w * groups
    dim_t                param_base;  // parameter channel of output row 0 (FC: neuron 0)
    logic                fill;        // acc_in: 4 partial-sum beats before each window
    dim_t                fill_base;   // acc_in: bank word of pixel 0's partial sums (acc_base)
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
    wr_kind_e             kind;          // destination memory
    logic [IdWidth-1:0]   dst_id;        // bank or PE
    dim_t                 base;          // first word
    dim_t                 row_stride;    // words between result rows
    dim_t                 group_stride;  // words between result groups (POOL)
    dim_t                 rows_m1;       // result rows per group - 1 (FC BANK: neurons - 1)
    dim_t                 cols_m1;       // result columns - 1
    dim_t                 groups_m1;     // groups - 1 (POOL: in_groups - 1, else 0)
    dim_t                 neurons_m1;    // PE_TRANSPOSE: neurons - 1
  } wr_cfg_t;

  // Frames of the window generator + pooling unit.
  typedef struct packed {
    logic        enable;        // results pass through the pooling unit
    logic        from_bank;     // POOL: the unit reads the bank stream (no PE array)
    dim_t                  frames_m1;   // frames - 1 (POOL: in_groups - 1)
    dim_t                  height;      // frame rows
    dim_t                  width;       // frame columns
    tap_t                  kernel;      // window side
    tap_t                  stride;      // window step
    tap_t                  pad_top;     // padding rows above the frame
    tap_t                  pad_left;    // padding columns left of the frame
    tap_t                  pad_bottom;  // padding rows below the frame
    tap_t                  pad_right;   // padding columns right of the frame
    logic                  ceil_mode;   // Caffe ceil mode
    logic                  op_avg;      // 1: average, 0: maximum
    logic [ClampWidth-1:0] post_lo;     // clamp after pooling (signed)
    logic [ClampWidth-1:0] post_hi;
  } pool_cfg_t;

  // Everything the engine needs to run one checked instruction.
  typedef struct packed {
    logic        fc;            // FC: one parameter channel per neuron, broadcast
    logic        pool_only;     // POOL: no PE array, no requantisation
    logic        dw;            // DEPTHWISE: windows transposed into the PE array
    logic [ClampWidth-1:0]  clamp_lo;     // requantisation clamp (signed)
    logic [ClampWidth-1:0]  clamp_hi;
    logic                   act_en;       // look the clamped value up in table act_table
    logic [ActIdxWidth-1:0] act_table;
    logic [IdWidth-1:0]     in_id;        // bank of the streamed operand
    logic                   acc_out;      // raw int32 accumulators out, 4 words per result
    logic                   acc_in;       // start values from partial sums instead of the bias
    logic [IdWidth-1:0]     acc_id;       // bank of the partial sums (acc_in)
    dim_t                   packed_rows;  // CONV, sparse build: packed rows per pixel (0: dense)
    walk_cfg_t   walk;
    wr_cfg_t     wr;
    pool_cfg_t   pool;
  } ce_cfg_t;

  // Packed CONV walk (strata_packed_walker): the context of one output pixel,
  // carried with each of its kernel rows, records and beats.
  typedef struct packed {
    walk_addr_t  pbase;      // base + iy0*img_w + ix0 (virtual: tap (0, 0), group 0)
    tap_t        ky_lo;      // valid kernel rows [ky_lo, ky_last]
    tap_t        ky_last;
    tap_t        kx_lo;      // valid kernel columns [kx_lo, kx_last]
    tap_t        kx_last;
    dim_t        ch;         // parameter channel
    logic        row_first;  // the pixel starts an output row
  } packed_px_t;

  // Kinds of the packed walk's records (one valid kernel row of one pixel).
  typedef enum logic [1:0] {
    PackedRange,  // packed rows [start, hi): one beat each
    PackedEmpty,  // no row: one cycle, no beat
    PackedDummy   // the beat of an all-skipped pixel (both words outside)
  } packed_rec_e;

endpackage : strata_compute_pkg
