// SPDX-License-Identifier: Apache-2.0
// Sliding-window generator: turns a row-major stream of pixel vectors of an
// H x W image into the stream of k x k windows of a convolution or pooling
// layer (kernel k, stride s, padding pt / pl / pb / pr above / left of /
// below / right of the image, floor or ceil mode), in row-major order of the
// output position (oy, ox), with a per-tap valid mask for padding.
//
// Frame protocol: a configuration handshake (cfg_*) starts a frame; the block
// then takes exactly H * W pixel vectors and emits Ho * Wo windows, where
// Ho / Wo follow strata::pool_out_size (docs/isa.md, COMPUTE: floor((H + pt +
// pb - k) / s) + 1, or in ceil mode as in Caffe and PyTorch, the last window
// starting inside the input or its top / left padding). The next
// configuration is taken once the frame's last window has left and all its
// pixels have arrived. A configuration outside the legal range (H, W >= 1,
// W <= MaxImageWidth, 1 <= k <= MaxKernel, s >= 1, every pad < k,
// k <= H + pt + pb and k <= W + pl + pr) raises cfg_error_o
// (held until the next configuration); its H * W pixels are then accepted and
// dropped and no window comes out, so the upstream never hangs.
//
// Structure (docs/rtl-blocks.md, "strata_window_gen"): this top holds the
// configuration, its check and the frame state machine, the line buffer and
// the column queue; strata_window_write is the write side,
// strata_window_walker the walker and its read stages, strata_window_reg the
// window register and output. The state reaches them as decoded strobes.
//   write side: pixel (y, x) goes to line-buffer bank y mod Rows, word x. Row
//     y may be written once no window still to come needs row y - Rows.
//   read side: for each output row the walker shifts one kernel column per
//     cycle into a k-column window register, reading column c of rows
//     wy .. wy + k - 1 in one cycle (wy = oy * s - pt). Padding is generated,
//     never stored: a row outside the image or a column >= W is masked (its
//     data and those of the unused taps beyond k are 0 on win_data_o), and
//     the pl left padding columns are put in place by clearing the window
//     register when a row starts. Only shifts that complete a window at
//     wx = ox * s - pl are emitted; the shifts that only fill the register
//     (k - 1 - pl at each row start) are dropped, and with s > k the columns
//     between two windows are skipped (the column address jumps).
//   A column is used as soon as it is in the buffer (the bottom image row of
//     the window has been written up to that column), so output row oy runs
//     concurrently with the arrival of its last input row.
//   Timing: three setup cycles after the configuration handshake check the
//     configuration and derive per-frame limits from registers; afterwards
//     every per-cycle decision reads a register. Walker: emit counter,
//     last-window flags, column-in-image flag, and the column-ready flag,
//     computed a cycle ahead for the current column and for the position
//     the next issue moves to (adv_q: col + 1, col + 1 +
//     skip or the next row's column 0, kept for every state of the walk with
//     its in-image flag and the last-column flag after the next jump).
//     Write side: last-column, rows-left and room (wr_y < wy + Rows) flags;
//     in_ready_o is a flip-flop loaded from the next state and flags, so the
//     producer's handshake starts at a register. Every per-window or per-row
//     update is an adder with its flag's compare in parallel, and a
//     registered flag's assertion checks it against its definition. The
//     output mask, tap count and valid rectangle are registered with the
//     window. The read pipeline (RAM read, line-buffer output register)
//     never stalls: the walker issues a column only with a credit of the
//     column queue behind it (strata_credit_fifo, four slots, one per column
//     read or waiting), and the window register takes columns from that queue. So
//     the output's ready reaches the window register's shift and the queue,
//     never the walker's enable or the line buffer; the issue decision is
//     four flip-flops. The line buffer is read every cycle (a read nobody
//     issued is simply not used).
//
// Latency: a window is presented 6 cycles after the handshake of the last
//   pixel it needs (pointer update, column-ready flag, RAM read, line-buffer
//   output register, column queue, shift); the first input pixel is taken 4
//   cycles after the configuration.
// Throughput: one column per cycle, i.e. one window per cycle at stride 1;
//   an output row takes (k - pl) + (Wo - 1) * min(s, k) cycles; input and
//   output overlap, so a frame takes about max(H * W, sum of row walks) plus
//   the rows of bottom padding after the last input pixel.
// Data of padded and unused taps (ky or kx >= k) is zero and their mask bit 0;
// taps of one window that are valid always form the rectangle
// [ky_lo, ky_hi] x [kx_lo, kx_hi] (the background item 2 padding filter: the conv path
// jumps from (ky, kx_hi) to (ky + 1, kx_lo) and ends the window at
// (ky_hi, kx_hi)), and win_count_o > 0 for every legal configuration.
`include "strata_assert.svh"
`include "strata_window_types.svh"

module strata_window_gen #(
  parameter int unsigned Lanes         = strata_cfg_pkg::Lanes,          // channels per pixel
  parameter int unsigned DataWidth     = strata_cfg_pkg::DataWidth,      // bits per channel
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,      // largest kernel side
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // line-buffer row length
  parameter int unsigned DimWidth      = 16,  // bits of H, W, oy, ox (H up to 2^DimWidth - 1)
  parameter int unsigned StrideWidth   = 4,   // bits of the stride (network format: 1..8)
  localparam int unsigned PixelWidth  = Lanes * DataWidth,
  localparam int unsigned Taps        = MaxKernel * MaxKernel,
  localparam int unsigned KernelWidth = $clog2(MaxKernel + 1),
  localparam int unsigned TapIdxWidth = (MaxKernel > 1) ? $clog2(MaxKernel) : 1,
  localparam int unsigned CountWidth  = $clog2(Taps + 1)
) (
  input  logic                       clk_i,             // clock
  input  logic                       rst_ni,            // synchronous reset, active low
  // Frame configuration (one handshake per frame).
  input  logic                       cfg_valid_i,       // a frame configuration is offered
  output logic                       cfg_ready_o,       // idle: the configuration is taken
  input  logic [DimWidth-1:0]        cfg_height_i,      // H, image rows
  input  logic [DimWidth-1:0]        cfg_width_i,       // W, image columns (<= MaxImageWidth)
  input  logic [KernelWidth-1:0]     cfg_kernel_i,      // k, window side (1..MaxKernel)
  input  logic [StrideWidth-1:0]     cfg_stride_i,      // s, window step (>= 1)
  input  logic [KernelWidth-1:0]     cfg_pad_top_i,     // pt, padding rows above (< k)
  input  logic [KernelWidth-1:0]     cfg_pad_left_i,    // pl, padding columns left (< k)
  input  logic [KernelWidth-1:0]     cfg_pad_bottom_i,  // pb, padding rows below (< k)
  input  logic [KernelWidth-1:0]     cfg_pad_right_i,   // pr, padding columns right (< k)
  input  logic                       cfg_ceil_i,        // 1: ceil mode, 0: floor mode
  output logic                       cfg_error_o,       // last configuration illegal: frame dropped
  output logic                       busy_o,            // a frame is in progress
  // Input stream: the image's pixel vectors, row-major.
  input  logic                       in_valid_i,        // pixel vector offered
  output logic                       in_ready_o,        // pixel vector taken
  input  logic [PixelWidth-1:0]      in_data_i,         // lane l at [l*DataWidth +: DataWidth]
  // Output stream: windows in row-major order of (oy, ox).
  output logic                       win_valid_o,       // window offered
  input  logic                       win_ready_i,       // window taken
  output logic [Taps*PixelWidth-1:0] win_data_o,        // tap t = ky*MaxKernel + kx at t*PixelWidth
  output logic [Taps-1:0]            win_mask_o,        // bit t: tap inside the image
  output logic [CountWidth-1:0]      win_count_o,       // valid taps, >= 1 (n of the average)
  output logic [TapIdxWidth-1:0]     win_ky_lo_o,       // first valid tap row
  output logic [TapIdxWidth-1:0]     win_ky_hi_o,       // last valid tap row
  output logic [TapIdxWidth-1:0]     win_kx_lo_o,       // first valid tap column
  output logic [TapIdxWidth-1:0]     win_kx_hi_o,       // last valid tap column
  output logic [DimWidth-1:0]        win_oy_o,          // output row
  output logic [DimWidth-1:0]        win_ox_o,          // output column
  output logic                       win_first_o,       // first window of the frame
  output logic                       win_last_o         // last window of the frame
);

  localparam int unsigned SlotWidth = $clog2(MaxKernel + 1);
  localparam int unsigned AddrWidth = $clog2(MaxImageWidth);
  localparam int unsigned PosWidth  = DimWidth + 2;  // signed image coordinates, padding < 0

  typedef logic signed [PosWidth-1:0] pos_t;
  typedef logic [MaxKernel*PixelWidth-1:0] column_t;  // one window column, tap row ky at ky

  typedef enum logic [2:0] {
    StIdle,    // waiting for a configuration
    StCheck,   // setup 1: legality, first derived values
    StLimits,  // setup 2: next-window limits
    StStart,   // setup 3: flags of the first window
    StRun,     // taking pixels and emitting windows
    StDrain    // illegal configuration: taking and dropping the frame's pixels
  } state_e;

  // ---------------------------------------------------------------------------
  // Registers.

  state_e state_d, state_q;
  logic   err_d, err_q;

  // Frame configuration, as taken at the handshake.
  logic [DimWidth-1:0]    height_d, height_q, width_d, width_q;
  logic [KernelWidth-1:0] kernel_d, kernel_q;
  logic [KernelWidth-1:0] pad_top_d, pad_top_q, pad_left_d, pad_left_q;
  logic [KernelWidth-1:0] pad_bottom_d, pad_bottom_q, pad_right_d, pad_right_q;
  // pt + pb and pl + pr, registered with the configuration, so the check
  // below subtracts one register from k, not two.
  logic [KernelWidth:0]   pad_tb_d, pad_tb_q, pad_lr_d, pad_lr_q;
  logic [StrideWidth-1:0] stride_d, stride_q;
  logic                   ceil_d, ceil_q;

  // ---------------------------------------------------------------------------
  // Configuration check (registered configuration).

  pos_t h, w;
  logic cfg_ok, kernel_fits, cfg_fire;
  // k - pt - pb, k - pl - pr in a few bits: "k <= H + pt + pb" becomes one
  // compare with H.
  logic signed [KernelWidth+2:0] k_minus_tb, k_minus_lr;

  assign h = pos_t'({2'b00, height_q});
  assign w = pos_t'({2'b00, width_q});

  if (2 ** KernelWidth - 1 > MaxKernel) begin : g_kernel_check
    assign kernel_fits = (32'(kernel_q) <= MaxKernel);
  end else begin : g_kernel_any
    assign kernel_fits = 1'b1;  // every encodable kernel side is supported
  end

  assign k_minus_tb = $signed({3'b000, kernel_q}) - $signed({2'b00, pad_tb_q});
  assign k_minus_lr = $signed({3'b000, kernel_q}) - $signed({2'b00, pad_lr_q});
  assign cfg_ok = (height_q != '0) && (width_q != '0) && (32'(width_q) <= MaxImageWidth)
               && (kernel_q != '0) && kernel_fits && (stride_q != '0)
               && (pad_top_q < kernel_q) && (pad_left_q < kernel_q)
               && (pad_bottom_q < kernel_q) && (pad_right_q < kernel_q)
               && (pos_t'(k_minus_tb) <= h) && (pos_t'(k_minus_lr) <= w);

  assign cfg_ready_o = (state_q == StIdle);
  assign cfg_fire    = cfg_valid_i && cfg_ready_o;

  // ---------------------------------------------------------------------------
  // Sub-blocks.

  logic [DimWidth-1:0] wr_x, wr_y;
  logic                wr_more, lb_we;
  pos_t                h_last, wy, free_lim;
  logic [AddrWidth-1:0] rd_addr;  // line-buffer word the walker reads
  logic                row_walk, walk_done, walk_done_next, issue, reads_pending;
  logic                col_credit, col_valid, shift, out_valid;

  strata_window_write #(
    .MaxKernel   (MaxKernel),
    .DimWidth    (DimWidth),
    .StrideWidth (StrideWidth)
  ) u_write (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .start_i          (cfg_fire),
    .check_i          (state_q == StCheck),
    .run_i            (state_q == StRun),
    .drain_i          (state_q == StDrain),
    .run_next_i       (state_d == StRun),
    .drain_next_i     (state_d == StDrain),
    .height_i         (height_q),
    .width_i          (width_q),
    .stride_i         (stride_q),
    .pad_top_i        (pad_top_q),
    .h_last_i         (h_last),
    .row_walk_i       (row_walk),
    .walk_done_i      (walk_done),
    .walk_done_next_i (walk_done_next),
    .wy_i             (wy),
    .free_lim_i       (free_lim),
    .in_valid_i       (in_valid_i),
    .in_ready_o       (in_ready_o),
    .lb_we_o          (lb_we),
    .wr_x_o           (wr_x),
    .wr_y_o           (wr_y),
    .wr_more_o        (wr_more)
  );

  // What travels with a column read to the window register.
  typedef `STRATA_WINDOW_COL_META_T(MaxKernel, DimWidth) col_meta_t;

  // A column in the column queue: its flags and its data.
  typedef struct packed {
    col_meta_t meta;
    column_t   col;
  } queued_col_t;

  logic        push;
  col_meta_t   push_meta;
  queued_col_t cq;  // head of the column queue

  strata_window_walker #(
    .MaxKernel     (MaxKernel),
    .MaxImageWidth (MaxImageWidth),
    .DimWidth      (DimWidth),
    .StrideWidth   (StrideWidth)
  ) u_walker (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .check_i          (state_q == StCheck),
    .limits_i         (state_q == StLimits),
    .start_i          (state_q == StStart),
    .run_i            (state_q == StRun),
    .height_i         (height_q),
    .width_i          (width_q),
    .kernel_i         (kernel_q),
    .stride_i         (stride_q),
    .pad_top_i        (pad_top_q),
    .pad_left_i       (pad_left_q),
    .pad_bottom_i     (pad_bottom_q),
    .pad_right_i      (pad_right_q),
    .ceil_i           (ceil_q),
    .wr_x_i           (wr_x),
    .wr_y_i           (wr_y),
    .h_last_o         (h_last),
    .wy_o             (wy),
    .free_lim_o       (free_lim),
    .row_walk_o       (row_walk),
    .walk_done_o      (walk_done),
    .walk_done_next_o (walk_done_next),
    .credit_i         (col_credit),
    .issue_o          (issue),
    .rd_addr_o        (rd_addr),
    .reads_pending_o  (reads_pending),
    .push_o           (push),
    .col_meta_o       (push_meta)
  );

  // Line buffer: stage 1, its RAMs hold the column read (one cycle after the
  // issue); stage 2, its output register holds it (two cycles after); then
  // the column waits in the column queue (reserved at the issue) until the
  // window register shifts it in. Stages 1 and 2 never stall.
  localparam int unsigned ColQueueDepth = 4;  // issue -> push takes 2 cycles: full rate
  column_t lb_col;

  strata_line_buffer #(
    .Lanes         (Lanes),
    .DataWidth     (DataWidth),
    .MaxKernel     (MaxKernel),
    .MaxImageWidth (MaxImageWidth)
  ) u_line_buffer (
    .clk_i   (clk_i),
    .we_i    (lb_we),
    .wslot_i (wr_y[SlotWidth-1:0]),
    .waddr_i (wr_x[AddrWidth-1:0]),
    .wdata_i (in_data_i),
    .re_i    (1'b1),        // every cycle: stage 1 never stalls
    .load_i  (1'b1),        // stage 2 neither
    .raddr_i (rd_addr),
    .rtop_i  (wy[SlotWidth-1:0]),
    .rcol_o  (lb_col)
  );

  strata_credit_fifo #(
    .T     (queued_col_t),
    .Depth (ColQueueDepth)
  ) u_col_queue (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .credit_o    (col_credit),
    .reserve_i   (issue),
    .push_i      (push),
    .push_data_i (queued_col_t'{meta: push_meta, col: lb_col}),
    .out_valid_o (col_valid),
    .out_ready_i (shift),
    .out_data_o  (cq)
  );

  strata_window_reg #(
    .Lanes     (Lanes),
    .DataWidth (DataWidth),
    .MaxKernel (MaxKernel),
    .DimWidth  (DimWidth)
  ) u_window_reg (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .load_i      (state_q == StCheck),
    .kernel_i    (kernel_q),
    .col_valid_i (col_valid),
    .shift_o     (shift),
    .col_i       (cq.col),
    .col_in_i    (cq.meta.col_in),
    .col_emit_i  (cq.meta.emit),
    .col_clear_i (cq.meta.clear),
    .col_first_i (cq.meta.first),
    .col_last_i  (cq.meta.last),
    .col_rows_i  (cq.meta.rows),
    .col_oy_i    (cq.meta.oy),
    .col_ox_i    (cq.meta.ox),
    .win_valid_o (out_valid),
    .win_ready_i (win_ready_i),
    .win_data_o  (win_data_o),
    .win_mask_o  (win_mask_o),
    .win_count_o (win_count_o),
    .win_ky_lo_o (win_ky_lo_o),
    .win_ky_hi_o (win_ky_hi_o),
    .win_kx_lo_o (win_kx_lo_o),
    .win_kx_hi_o (win_kx_hi_o),
    .win_oy_o    (win_oy_o),
    .win_ox_o    (win_ox_o),
    .win_first_o (win_first_o),
    .win_last_o  (win_last_o)
  );

  // ---------------------------------------------------------------------------
  // Next state.

  always_comb begin
    state_d      = state_q;
    err_d        = err_q;
    height_d     = height_q;
    width_d      = width_q;
    kernel_d     = kernel_q;
    stride_d     = stride_q;
    pad_top_d    = pad_top_q;
    pad_left_d   = pad_left_q;
    pad_bottom_d = pad_bottom_q;
    pad_right_d  = pad_right_q;
    pad_tb_d     = pad_tb_q;
    pad_lr_d     = pad_lr_q;
    ceil_d       = ceil_q;

    unique case (state_q)
      StIdle: begin
        if (cfg_fire) begin
          height_d     = cfg_height_i;
          width_d      = cfg_width_i;
          kernel_d     = cfg_kernel_i;
          stride_d     = cfg_stride_i;
          pad_top_d    = cfg_pad_top_i;
          pad_left_d   = cfg_pad_left_i;
          pad_bottom_d = cfg_pad_bottom_i;
          pad_right_d  = cfg_pad_right_i;
          pad_tb_d     = (KernelWidth + 1)'(cfg_pad_top_i) + (KernelWidth + 1)'(cfg_pad_bottom_i);
          pad_lr_d     = (KernelWidth + 1)'(cfg_pad_left_i) + (KernelWidth + 1)'(cfg_pad_right_i);
          ceil_d       = cfg_ceil_i;
          state_d      = StCheck;
        end
      end
      StCheck: begin
        err_d = !cfg_ok;
        if (cfg_ok) begin
          state_d = StLimits;
        end else if ((height_q != '0) && (width_q != '0)) begin
          state_d = StDrain;
        end else begin
          state_d = StIdle;
        end
      end
      StLimits: state_d = StStart;
      StStart:  state_d = StRun;
      StRun: begin
        if (walk_done && !reads_pending && !col_valid && !out_valid && !wr_more) begin
          state_d = StIdle;
        end
      end
      StDrain: begin
        if (!wr_more) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  // ---------------------------------------------------------------------------
  // Flip-flops.

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      err_q        <= 1'b0;
      height_q     <= '0;
      width_q      <= '0;
      kernel_q     <= '0;
      stride_q     <= '0;
      pad_top_q    <= '0;
      pad_left_q   <= '0;
      pad_bottom_q <= '0;
      pad_right_q  <= '0;
      pad_tb_q     <= '0;
      pad_lr_q     <= '0;
      ceil_q       <= 1'b0;
    end else begin
      state_q      <= state_d;
      err_q        <= err_d;
      height_q     <= height_d;
      width_q      <= width_d;
      kernel_q     <= kernel_d;
      stride_q     <= stride_d;
      pad_top_q    <= pad_top_d;
      pad_left_q   <= pad_left_d;
      pad_bottom_q <= pad_bottom_d;
      pad_right_q  <= pad_right_d;
      pad_tb_q     <= pad_tb_d;
      pad_lr_q     <= pad_lr_d;
      ceil_q       <= ceil_d;
    end
  end

  // ---------------------------------------------------------------------------
  // Outputs.

  assign cfg_error_o = err_q;
  assign busy_o      = (state_q != StIdle);
  assign win_valid_o = out_valid;

  // ---------------------------------------------------------------------------
  // Assertions.

  `STRATA_ASSERT_STREAM(wg_cfg, clk_i, rst_ni, cfg_valid_i, cfg_ready_o,
                        {cfg_height_i, cfg_width_i, cfg_kernel_i, cfg_stride_i, cfg_pad_top_i,
                         cfg_pad_left_i, cfg_pad_bottom_i, cfg_pad_right_i, cfg_ceil_i})
  // The pads' sums follow the pads (loaded with them at the handshake).
  `STRATA_ASSERT(wg_pad_sums, clk_i, rst_ni,
                 pad_tb_q == (KernelWidth + 1)'(pad_top_q) + (KernelWidth + 1)'(pad_bottom_q)
                 && pad_lr_q == (KernelWidth + 1)'(pad_left_q) + (KernelWidth + 1)'(pad_right_q))
  `STRATA_ASSERT_STREAM(wg_in, clk_i, rst_ni, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT_STREAM(wg_win, clk_i, rst_ni, win_valid_o, win_ready_i,
                        {win_data_o, win_mask_o, win_oy_o, win_ox_o, win_first_o, win_last_o})

`ifndef SYNTHESIS
  initial begin
    assert (Lanes >= 1 && DataWidth >= 1) else $fatal(1, "strata_window_gen: empty pixel");
    assert (MaxKernel >= 1) else $fatal(1, "strata_window_gen: MaxKernel must be >= 1");
    assert (MaxImageWidth >= 2 && MaxImageWidth < 2 ** DimWidth)
      else $fatal(1, "strata_window_gen: MaxImageWidth %0d out of range", MaxImageWidth);
    assert (StrideWidth >= 1 && StrideWidth < DimWidth)
      else $fatal(1, "strata_window_gen: StrideWidth %0d out of range", StrideWidth);
  end
`endif

endmodule : strata_window_gen
