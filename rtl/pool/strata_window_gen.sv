// Sliding-window generator: turns a row-major stream of pixel vectors of an
// H x W image into the stream of k x k windows of a convolution or pooling
// layer (kernel k, stride s, pad p, floor or ceil mode), in row-major order of
// the output position (oy, ox), with a per-tap valid mask for padding.
//
// Frame protocol: a configuration handshake (cfg_*) starts a frame; the block
// then takes exactly H * W pixel vectors and emits Ho * Wo windows, where
// Ho / Wo follow strata::pool_out_size (ceil as in Caffe: the last window
// starts inside the input or its left padding; floor equals
// strata::conv_out_size). The next configuration is taken once the frame's
// last window has left and all its pixels have arrived. A configuration
// outside the legal range (H, W >= 1, W <= MaxImageWidth, 1 <= k <=
// MaxKernel, s >= 1, p < k, k <= H + 2p and k <= W + 2p) raises cfg_error_o
// (held until the next configuration); its H * W pixels are then accepted and
// dropped and no window comes out, so the upstream never hangs.
//
// Structure (docs/rtl-blocks.md, "Window generator / line buffer"):
//   write side: pixel (y, x) goes to line-buffer bank y mod Rows, word x. Row
//     y may be written once no window still to come needs row y - Rows.
//   read side: for each output row the walker shifts one kernel column per
//     cycle into a k-column window register, reading column c of rows
//     wy .. wy + k - 1 in one cycle (wy = oy * s - p). Padding is generated,
//     never stored: a row outside the image or a column >= W is masked, and
//     the p left padding columns are put in place by clearing the window
//     register when a row starts. Only shifts that complete a window at
//     wx = ox * s - p are emitted; the shifts that only fill the register
//     (k - 1 - p at each row start) are dropped, and with s > k the columns
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
//     column queue behind it (strata_credit_fifo, a slot per column read or
//     waiting), and the window register takes columns from that queue. So
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
//   an output row takes (k - p) + (Wo - 1) * min(s, k) cycles; input and
//   output overlap, so a frame takes about max(H * W, sum of row walks) plus
//   the rows of bottom padding after the last input pixel.
// Data of padded and unused taps (ky or kx >= k) is zero and their mask bit 0;
// taps of one window that are valid always form the rectangle
// [ky_lo, ky_hi] x [kx_lo, kx_hi] (the seeds/001 padding filter: the conv path
// jumps from (ky, kx_hi) to (ky + 1, kx_lo) and ends the window at
// (ky_hi, kx_hi)), and win_count_o > 0 for every legal configuration.
`include "strata_assert.svh"

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
  input  logic                         clk_i,         // clock
  input  logic                         rst_ni,        // synchronous reset, active low
  // Frame configuration (one handshake per frame).
  input  logic                         cfg_valid_i,   // a frame configuration is offered
  output logic                         cfg_ready_o,   // idle: the configuration is taken
  input  logic [DimWidth-1:0]          cfg_height_i,  // H, image rows
  input  logic [DimWidth-1:0]          cfg_width_i,   // W, image columns (<= MaxImageWidth)
  input  logic [KernelWidth-1:0]       cfg_kernel_i,  // k, window side (1..MaxKernel)
  input  logic [StrideWidth-1:0]       cfg_stride_i,  // s, window step (>= 1)
  input  logic [KernelWidth-1:0]       cfg_pad_i,     // p, padding on each side (< k)
  input  logic                         cfg_ceil_i,    // 1: ceil mode, 0: floor mode
  output logic                         cfg_error_o,   // last configuration illegal (frame dropped)
  output logic                         busy_o,        // a frame is in progress
  // Input stream: the image's pixel vectors, row-major.
  input  logic                         in_valid_i,    // pixel vector offered
  output logic                         in_ready_o,    // pixel vector taken
  input  logic [PixelWidth-1:0]        in_data_i,     // lane l at [l*DataWidth +: DataWidth]
  // Output stream: windows in row-major order of (oy, ox).
  output logic                         win_valid_o,   // window offered
  input  logic                         win_ready_i,   // window taken
  output logic [Taps*PixelWidth-1:0]   win_data_o,    // tap t = ky*MaxKernel + kx at t*PixelWidth
  output logic [Taps-1:0]              win_mask_o,    // bit t: tap inside the image
  output logic [CountWidth-1:0]        win_count_o,   // number of valid taps (n of the average)
  output logic [TapIdxWidth-1:0]       win_ky_lo_o,   // first valid tap row
  output logic [TapIdxWidth-1:0]       win_ky_hi_o,   // last valid tap row
  output logic [TapIdxWidth-1:0]       win_kx_lo_o,   // first valid tap column
  output logic [TapIdxWidth-1:0]       win_kx_hi_o,   // last valid tap column
  output logic [DimWidth-1:0]          win_oy_o,      // output row
  output logic [DimWidth-1:0]          win_ox_o,      // output column
  output logic                         win_first_o,   // first window of the frame
  output logic                         win_last_o     // last window of the frame
);

  localparam int unsigned SlotWidth = $clog2(MaxKernel + 1);
  localparam int unsigned Rows      = 2 ** SlotWidth;
  localparam int unsigned AddrWidth = $clog2(MaxImageWidth);
  localparam int unsigned PosWidth  = DimWidth + 2;  // signed image coordinates, padding < 0
  // Column compares of the readiness flags: a column the walker reads never
  // exceeds W + k - 2 (asserted) and the write column is below W, so a few
  // bits hold both (short carry chains).
  localparam int unsigned ColWidth  = $clog2(MaxImageWidth + MaxKernel + 1);

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
  // Helpers (pure functions of their arguments).

  function automatic pos_t pos_of(logic [DimWidth-1:0] v);
    return pos_t'({2'b00, v});
  endfunction

  function automatic pos_t min_pos(pos_t a, pos_t b);
    return (a < b) ? a : b;
  endfunction

  function automatic logic [KernelWidth-1:0] popcount(logic [MaxKernel-1:0] v);
    logic [KernelWidth-1:0] n;
    n = '0;
    for (int unsigned i = 0; i < MaxKernel; i++) n += KernelWidth'(v[i]);
    return n;
  endfunction

  function automatic logic [TapIdxWidth-1:0] first_set(logic [MaxKernel-1:0] v);
    logic [TapIdxWidth-1:0] idx;
    idx = '0;
    for (int i = MaxKernel - 1; i >= 0; i--) begin
      if (v[i]) idx = TapIdxWidth'(i);
    end
    return idx;
  endfunction

  function automatic logic [TapIdxWidth-1:0] last_set(logic [MaxKernel-1:0] v);
    logic [TapIdxWidth-1:0] idx;
    idx = '0;
    for (int unsigned i = 0; i < MaxKernel; i++) begin
      if (v[i]) idx = TapIdxWidth'(i);
    end
    return idx;
  endfunction

  // Window columns kx with kx + 1 == kv (the column shifted in) and with
  // kx + 1 < kv (the columns that shift).
  function automatic logic [MaxKernel-1:0] kernel_at(logic [KernelWidth-1:0] kv);
    logic [MaxKernel-1:0] m;
    for (int unsigned kx = 0; kx < MaxKernel; kx++) m[kx] = (32'(kx) + 32'd1 == 32'(kv));
    return m;
  endfunction

  function automatic logic [MaxKernel-1:0] kernel_in(logic [KernelWidth-1:0] kv);
    logic [MaxKernel-1:0] m;
    for (int unsigned kx = 0; kx < MaxKernel; kx++) m[kx] = (32'(kx) + 32'd1 < 32'(kv));
    return m;
  endfunction

  // Tap t = ky * MaxKernel + kx is valid iff its row and its column are.
  function automatic logic [Taps-1:0] tap_mask(logic [MaxKernel-1:0] rows,
                                               logic [MaxKernel-1:0] cols);
    logic [Taps-1:0] m;
    for (int unsigned ky = 0; ky < MaxKernel; ky++) begin
      for (int unsigned kx = 0; kx < MaxKernel; kx++) m[ky*MaxKernel + kx] = rows[ky] && cols[kx];
    end
    return m;
  endfunction

  // a * b for small a, b, as shift-and-add (a tap count: LUTs, not a DSP).
  function automatic logic [CountWidth-1:0] small_mul(logic [KernelWidth-1:0] a,
                                                      logic [KernelWidth-1:0] b);
    logic [CountWidth-1:0] r;
    r = '0;
    for (int unsigned i = 0; i < KernelWidth; i++) begin
      if (a[i]) r += CountWidth'(b) << i;
    end
    return r;
  endfunction

  // ---------------------------------------------------------------------------
  // Registers.

  state_e state_d, state_q;
  logic   err_d, err_q;

  // Frame configuration, as taken at the handshake.
  logic [DimWidth-1:0]    height_d, height_q, width_d, width_q;
  logic [KernelWidth-1:0] kernel_d, kernel_q, pad_d, pad_q;
  logic [StrideWidth-1:0] stride_d, stride_q;
  logic                   ceil_d, ceil_q;

  // Write side: position of the next pixel to arrive.
  logic [DimWidth-1:0] wr_x_d, wr_x_q, wr_y_d, wr_y_q;
  // Its registered flags, so in_ready_o and the position update read no
  // compare: x_last = (wr_x == W - 1), more = (wr_y < H), and room_ok =
  // (wr_y < free_lim) with room = free_lim - wr_y >= 0, the rows the write
  // side may still start; w_m2 = W - 2 and w_one = (W == 1) update x_last.
  logic                wr_x_last_d, wr_x_last_q, wr_more_d, wr_more_q, room_ok_d, room_ok_q;
  logic                w_one_d, w_one_q;
  pos_t                room_d, room_q, w_m2_d, w_m2_q;

  // Per-frame constants of the walker (setup cycles). Along each dimension
  // another window follows the one starting at `start` exactly when
  // start < lim (pool_out_size one step at a time, no division):
  //   floor: start + s + k <= dim + p       -> lim = dim + p - k - s + 1
  //   ceil:  start + k < dim + p (still counted by ceil((dim + 2p - k) / s))
  //          and start + s < dim (starts inside the input or left padding)
  //                                         -> lim = min(dim + p - k, dim - s)
  // lim_ms = lim - s answers the same question for the window after next;
  // skip: column jump between windows (s > k); first_cnt / step_cnt: shifts
  // to a row's first window / to the next window, minus one; w_m1 = W - 1:
  // col < w_m1 keeps the next column inside the image.
  pos_t h_lim_d, h_lim_q, w_lim_d, w_lim_q, h_lim_ms_d, h_lim_ms_q, w_lim_ms_d, w_lim_ms_q;
  pos_t skip_d, skip_q, h_last_d, h_last_q, h_last_ms_d, h_last_ms_q;
  pos_t w_m1_d, w_m1_q;
  logic [KernelWidth-1:0] first_cnt_d, first_cnt_q, step_cnt_d, step_cnt_q;
  logic                   first_last_col_d, first_last_col_q;

  // Read walker: window top row wy, window left column wx, next column to
  // shift in (col), shifts left to the next window (emit_cnt), output
  // position (oy, ox). Flags of the current column / window / row: col_in
  // (col < W), last_col, last_row. Per output row: bot = wy + k - 1, its
  // clamp y_low = min(bot, H - 1) (the image row that gates the reads),
  // free_lim = wy + Rows (rows the write side may fill); row_start: clear
  // the window register first.
  pos_t                   wy_d, wy_q, wx_d, wx_q, col_d, col_q;
  pos_t                   bot_d, bot_q, y_low_d, y_low_q, free_lim_d, free_lim_q;
  // Next row's values ahead of time: bot_s = bot + s and its clamp y_low_nx
  // = min(bot_s, H - 1), the next row's y_low.
  pos_t                   bot_s_d, bot_s_q, y_low_nx_d, y_low_nx_q;
  // col_ok: the column the walker issues next is in the line buffer
  // (registered, see "Walker").
  logic                   col_ok_d, col_ok_q;
  logic [KernelWidth-1:0] emit_cnt_d, emit_cnt_q;
  logic [DimWidth-1:0]    oy_d, oy_q, ox_d, ox_q;
  logic                   col_in_d, col_in_q, last_col_d, last_col_q, last_row_d, last_row_q;
  // The columns the walker can move to next, in a few bits (col + 1 and
  // col + 1 + skip), and nxt_in = (col + 1 < W), the in-image flag of both:
  // the column-ready compares read registers, no adder in front of them.
  // skip1 = skip + 1 and w_gt1 = (W > 1) are per-frame constants.
  logic [ColWidth-1:0]    col_inc_d, col_inc_q, col_jump_d, col_jump_q, skip1_d, skip1_q;
  logic                   nxt_in_d, nxt_in_q, w_gt1_d, w_gt1_q;
  // The position the next issue moves the walker to (adv_*): its column, its
  // in-image flag and whether it starts the next row (then y_low_nx is the
  // row that gates it). Kept for the state after every issue, so the
  // column-ready flag of an issue is one compare, not a choice among four.
  typedef struct packed {
    logic                row;
    logic                in;
    logic [ColWidth-1:0] col;
  } adv_t;
  adv_t                   adv_d, adv_q;
  // jump_last = !(wx < w_lim - s): the last-column flag after the next jump
  // (the next window is the row's last), kept per window like last_col;
  // w_lim_ms2 = w_lim - 2s updates it at a jump, row_jump_last (its value
  // at wx = -p, i.e. !(s - p < w_lim); sp = s - p) at a row start.
  logic                   jump_last_d, jump_last_q, row_jump_last_d, row_jump_last_q;
  pos_t                   w_lim_ms2_d, w_lim_ms2_q, sp_d, sp_q;
  logic                   row_start_d, row_start_q;
  logic                   walk_done_d, walk_done_q;

  // What travels with a column read: column inside the image, the shift
  // completes a window (emit), clear the window register first (row start),
  // frame flags, position; the window's top row in stage 1, turned into its
  // valid tap rows on the way to stage 2.
  typedef struct packed {
    logic                col_in;
    logic                emit;
    logic                clear;
    logic                first;
    logic                last;
    pos_t                wy;
    logic [DimWidth-1:0] oy;
    logic [DimWidth-1:0] ox;
  } s1_meta_t;

  typedef struct packed {
    logic                 col_in;
    logic                 emit;
    logic                 clear;
    logic                 first;
    logic                 last;
    logic [MaxKernel-1:0] rows;
    logic [DimWidth-1:0]  oy;
    logic [DimWidth-1:0]  ox;
  } s2_meta_t;

  // Stage 1: the line buffer's RAMs hold the column read (one cycle after
  // the issue); stage 2: the line buffer's output register holds it (two
  // cycles after); then it waits in the column queue (reserved at the issue)
  // until the window register shifts it in. Stages 1 and 2 never stall.
  localparam int unsigned ColQueueDepth = 4;  // issue -> push takes 2 cycles: full rate
  logic     s1_valid_q, s2_valid_q;
  s1_meta_t s1_meta_d, s1_meta_q;
  s2_meta_t s2_meta_d, s2_meta_q;
  logic     col_credit, col_valid, shift;
  // A column in the column queue: its flags and its data.
  typedef struct packed {
    s2_meta_t meta;
    column_t  col;
  } queued_col_t;
  queued_col_t cq;  // head of the column queue

  // Window register (column kx holds tap column kx) and its column-valid bits.
  column_t              win_d [MaxKernel];
  column_t              win_q [MaxKernel];
  logic [MaxKernel-1:0] cols_d, cols_q;
  // Kernel decode per window column, registered in the check cycle (a frame
  // constant): k_at[kx] = (kx + 1 == k) takes the new column, k_in[kx] =
  // (kx + 1 < k) shifts. Column kx of the window register loads only if one
  // of them is set, and no compare with kernel_q drives the multiplexers.
  // "Column kx loads" (k_at || k_in) is a flip-flop per tap of the column
  // (col_en_q[kx][ky], strata_reg_copies, checked against the decode): each tap's enable
  // is one LUT of it and the shift's three flip-flop and ready inputs, and
  // drives one tap's PixelWidth flip-flops, not a column's 448 through a
  // shared shift LUT (two long routes in series: to the column enable, then
  // to every clock enable of the column).
  logic [MaxKernel-1:0] k_at_d, k_at_q, k_in_d, k_in_q;
  logic [MaxKernel-1:0][MaxKernel-1:0] col_en_q;  // [kx][ky]: k_at_q[kx] || k_in_q[kx]

  // Output: the window register is the output register. The tap mask, the
  // tap count and the valid rectangle are registered with it (computed from
  // the window's rows and the column-valid bits it is loaded with), so no
  // output is logic behind the column-valid bits, and each mask bit gates
  // the Lanes x DataWidth data bits of one tap only.
  logic                   out_valid_d, out_valid_q;
  logic                   out_first_q, out_last_q;
  logic [MaxKernel-1:0]   out_rows_q;
  logic [DimWidth-1:0]    out_oy_q, out_ox_q;
  logic [Taps-1:0]        out_mask_q;
  logic [CountWidth-1:0]  out_count_q;
  logic [TapIdxWidth-1:0] out_ky_lo_q, out_ky_hi_q, out_kx_lo_q, out_kx_hi_q;

  // ---------------------------------------------------------------------------
  // Configuration values as signed positions (registered configuration).

  pos_t k, s, p, h, w, wr_x, wr_y;
  logic cfg_ok, kernel_fits, cfg_fire;
  // k - 2p in a few bits: "k <= H + 2p" becomes one compare with H.
  logic signed [KernelWidth+2:0] k_minus_2p;

  always_comb begin
    k    = pos_t'(kernel_q);
    s    = pos_t'(stride_q);
    p    = pos_t'(pad_q);
    h    = pos_of(height_q);
    w    = pos_of(width_q);
    wr_x = pos_of(wr_x_q);
    wr_y = pos_of(wr_y_q);
  end

  if (2 ** KernelWidth - 1 > MaxKernel) begin : g_kernel_check
    assign kernel_fits = (32'(kernel_q) <= MaxKernel);
  end else begin : g_kernel_any
    assign kernel_fits = 1'b1;  // every encodable kernel side is supported
  end

  assign k_minus_2p = $signed({3'b000, kernel_q}) - $signed({2'b00, pad_q, 1'b0});
  assign cfg_ok = (height_q != '0) && (width_q != '0) && (32'(width_q) <= MaxImageWidth)
               && (kernel_q != '0) && kernel_fits && (stride_q != '0) && (pad_q < kernel_q)
               && (pos_t'(k_minus_2p) <= h) && (pos_t'(k_minus_2p) <= w);

  assign cfg_ready_o = (state_q == StIdle);
  assign cfg_fire    = cfg_valid_i && cfg_ready_o;

  // ---------------------------------------------------------------------------
  // Walker (issue stage): every decision reads registers.

  logic emit, col_ready, issue;

  typedef logic [ColWidth-1:0] col_t;

  // Column col may be read once the window's lowest image row holds it.
  function automatic logic col_avail(col_t c, pos_t ylow, logic in_image, col_t x, pos_t y);
    return !in_image || (y > ylow) || ((y == ylow) && (x > c));
  endfunction

  // Where the walker moves at its next issue, given the state it is in: a
  // window's last shift of a row's last window starts the next row, another
  // window's last shift jumps, any other shift goes on by one column.
  function automatic adv_t advance(logic emit_now, logic last_col_now, col_t inc, col_t jump,
                                   logic nxt_in);
    adv_t a;
    a.row = emit_now && last_col_now;
    a.in  = a.row || nxt_in;
    a.col = a.row ? col_t'(0) : (emit_now ? jump : inc);
    return a;
  endfunction

  col_t col_n, wr_x_n;
  assign col_n     = col_t'(col_q);
  assign wr_x_n    = col_t'(wr_x_q);
  assign emit      = (emit_cnt_q == '0);
  assign col_ready = col_avail(col_n, y_low_q, col_in_q, wr_x_n, wr_y);

  assign shift     = col_valid && (!out_valid_q || win_ready_i);
  assign issue     = (state_q == StRun) && col_credit && !walk_done_q && col_ok_q;

  // col_ok_q is col_ready one cycle ahead, so the issue decision (which
  // enables every walker register) waits for no compare: the position an
  // issue moves to (adv_q, a register) and the current one are each
  // compared with the write position of this cycle (a pixel arriving now is
  // seen one cycle later: readiness only grows within a frame, so a late
  // view is safe), and the issue picks one.
  logic ok_same, ok_adv;
  assign ok_same   = col_ready;
  assign ok_adv    = !adv_q.in
                  || (adv_q.row ? (wr_y > y_low_nx_q) : (wr_y > y_low_q))
                  || ((adv_q.row ? (wr_y == y_low_nx_q) : (wr_y == y_low_q))
                      && (wr_x_n > adv_q.col));
  assign col_ok_d  = issue ? ok_adv : ok_same;

  // The next adv_q for each way an issue can move the walker, from
  // registers: the new state's emit flag (the counter reaches 0), last-column
  // flag, and candidate columns (the same sums the column registers take).
  col_t inc_inc, jump_inc, jump_jump;
  logic inc_in, jump_in, jump_last;
  adv_t adv_inc, adv_jump, adv_row;
  assign inc_inc   = col_inc_q + col_t'(1);
  assign jump_inc  = col_jump_q + col_t'(1);
  assign jump_jump = col_jump_q + skip1_q;
  assign inc_in    = col_inc_q < col_t'(w_m1_q);
  assign jump_in   = col_jump_q < col_t'(w_m1_q);
  assign jump_last = jump_last_q;
  assign adv_inc   = advance(emit_cnt_q == KernelWidth'(1), last_col_q, inc_inc, jump_inc, inc_in);
  assign adv_jump  = advance(step_cnt_q == '0, jump_last, jump_inc, jump_jump, jump_in);
  assign adv_row   = advance(first_cnt_q == '0, first_last_col_q, col_t'(1), skip1_q, w_gt1_q);

  always_comb begin
    s1_meta_d.col_in = col_in_q;
    s1_meta_d.emit   = emit;
    s1_meta_d.clear  = row_start_q;
    s1_meta_d.first  = (oy_q == '0) && (ox_q == '0);
    s1_meta_d.last   = last_row_q && last_col_q;
    s1_meta_d.wy     = wy_q;
    s1_meta_d.oy     = oy_q;
    s1_meta_d.ox     = ox_q;

    s2_meta_d.col_in = s1_meta_q.col_in;
    s2_meta_d.emit   = s1_meta_q.emit;
    s2_meta_d.clear  = s1_meta_q.clear;
    s2_meta_d.first  = s1_meta_q.first;
    s2_meta_d.last   = s1_meta_q.last;
    s2_meta_d.oy     = s1_meta_q.oy;
    s2_meta_d.ox     = s1_meta_q.ox;
    for (int unsigned ky = 0; ky < MaxKernel; ky++) begin
      s2_meta_d.rows[ky] = (pos_t'(ky) < k) && (s1_meta_q.wy + pos_t'(ky) >= pos_t'(0))
                        && (s1_meta_q.wy + pos_t'(ky) < h);
    end
  end

  // ---------------------------------------------------------------------------
  // Write side.

  logic in_fire, lb_we, row_in, row_walk;

  // The write side's flags for each outcome of its own events (a pixel
  // taken, in_fire; an input row completed, row_in), so in_ready_q's next
  // value takes in_fire at its last LUT: ready_if_fire / ready_if_hold
  // (kept, so synthesis keeps the split; asserted to equal write_ready of
  // the next flags) do not wait for the producer's valid, so its route is
  // not followed by the row-end carry chain and the room logic. The room
  // flags: rows left after a row end of the walker alone (room_ok_walk) or
  // with one of the input (room_ok_row: one fewer row, and s more if the
  // walker's row ends too).
  logic wr_more_hold, wr_more_fire, room_ok_walk, room_ok_row;
  (* keep *) logic ready_if_fire, ready_if_hold;

  always_comb begin
    wr_more_hold = (state_q == StCheck) ? height_q != '0 : wr_more_q;
    wr_more_fire = wr_x_last_q ? wr_y < h_last_q : wr_more_hold;
    room_ok_walk = row_walk || ((state_q == StCheck) ? pos_t'(Rows) > p : room_ok_q);
    room_ok_row  = row_walk ? room_ok_q || (stride_q > StrideWidth'(1)) : room_q > pos_t'(1);
  end

  assign ready_if_hold = write_ready(state_d, wr_more_hold, walk_done_d, room_ok_walk);
  assign ready_if_fire = write_ready(state_d, wr_more_fire, walk_done_d,
                                     (wr_x_last_q && state_q == StRun) ? room_ok_row : room_ok_walk);

  // Ready for a pixel: running with rows left and room for them (or the walk
  // done), or draining the rows left. in_ready_q is loaded with this of the
  // next state and flags (asserted equal to it of the present ones), so the
  // producer's handshake starts at a flip-flop, not at the state decode
  // (no route to the producer's handshake and back in one cycle).
  function automatic logic write_ready(state_e st, logic more, logic done, logic ok);
    if (st == StRun)   return more && (done || ok);
    if (st == StDrain) return more;
    return 1'b0;
  endfunction

  logic in_ready_q;
  assign in_ready_o = in_ready_q;
  assign in_fire    = in_valid_i && in_ready_o;
  assign row_in   = in_fire && wr_x_last_q && (state_q == StRun);
  assign row_walk = issue && emit && last_col_q && !last_row_q;
  assign lb_we   = in_fire && (state_q == StRun);

  // ---------------------------------------------------------------------------
  // Line buffer.

  column_t lb_col;

  strata_line_buffer #(
    .Lanes         (Lanes),
    .DataWidth     (DataWidth),
    .MaxKernel     (MaxKernel),
    .MaxImageWidth (MaxImageWidth)
  ) u_line_buffer (
    .clk_i   (clk_i),
    .we_i    (lb_we),
    .wslot_i (wr_y_q[SlotWidth-1:0]),
    .waddr_i (wr_x_q[AddrWidth-1:0]),
    .wdata_i (in_data_i),
    .re_i    (1'b1),        // every cycle: stage 1 never stalls
    .load_i  (1'b1),        // stage 2 neither
    .raddr_i (col_q[AddrWidth-1:0]),
    .rtop_i  (wy_q[SlotWidth-1:0]),
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
    .push_i      (s2_valid_q),
    .push_data_i (queued_col_t'{meta: s2_meta_q, col: lb_col}),
    .out_valid_o (col_valid),
    .out_ready_i (shift),
    .out_data_o  (cq)
  );

  // ---------------------------------------------------------------------------
  // Next state.

  always_comb begin
    state_d          = state_q;
    err_d            = err_q;
    height_d         = height_q;
    width_d          = width_q;
    kernel_d         = kernel_q;
    stride_d         = stride_q;
    pad_d            = pad_q;
    ceil_d           = ceil_q;
    wr_x_d           = wr_x_q;
    wr_y_d           = wr_y_q;
    h_lim_d          = h_lim_q;
    w_lim_d          = w_lim_q;
    h_lim_ms_d       = h_lim_ms_q;
    w_lim_ms_d       = w_lim_ms_q;
    skip_d           = skip_q;
    h_last_d         = h_last_q;
    h_last_ms_d      = h_last_ms_q;
    w_m1_d           = w_m1_q;
    first_cnt_d      = first_cnt_q;
    step_cnt_d       = step_cnt_q;
    first_last_col_d = first_last_col_q;
    wy_d             = wy_q;
    wx_d             = wx_q;
    col_d            = col_q;
    bot_d            = bot_q;
    bot_s_d          = bot_s_q;
    y_low_nx_d       = y_low_nx_q;
    col_inc_d        = col_inc_q;
    col_jump_d       = col_jump_q;
    skip1_d          = skip1_q;
    nxt_in_d         = nxt_in_q;
    w_gt1_d          = w_gt1_q;
    adv_d            = adv_q;
    jump_last_d      = jump_last_q;
    row_jump_last_d  = row_jump_last_q;
    w_lim_ms2_d      = w_lim_ms2_q;
    sp_d             = sp_q;
    y_low_d          = y_low_q;
    free_lim_d       = free_lim_q;
    wr_x_last_d      = wr_x_last_q;
    room_d           = room_q;
    w_one_d          = w_one_q;
    w_m2_d           = w_m2_q;
    emit_cnt_d       = emit_cnt_q;
    oy_d             = oy_q;
    ox_d             = ox_q;
    col_in_d         = col_in_q;
    last_col_d       = last_col_q;
    last_row_d       = last_row_q;
    row_start_d      = row_start_q;
    walk_done_d      = walk_done_q;

    unique case (state_q)
      StIdle: begin
        if (cfg_fire) begin
          height_d = cfg_height_i;
          width_d  = cfg_width_i;
          kernel_d = cfg_kernel_i;
          stride_d = cfg_stride_i;
          pad_d    = cfg_pad_i;
          ceil_d   = cfg_ceil_i;
          wr_x_d   = '0;
          wr_y_d   = '0;
          state_d  = StCheck;
        end
      end
      StCheck: begin
        err_d       = !cfg_ok;
        h_lim_d     = h + p - k;  // ceil candidate a (floor: before "- s + 1")
        w_lim_d     = w + p - k;
        h_lim_ms_d  = h - s;      // ceil candidate b
        w_lim_ms_d  = w - s;
        sp_d        = s - p;
        skip_d      = (s > k) ? s - k : pos_t'(0);
        h_last_d    = h - pos_t'(1);
        w_m1_d      = w - pos_t'(1);
        first_cnt_d = kernel_q - KernelWidth'(1) - pad_q;
        step_cnt_d  = ((s < k) ? KernelWidth'(stride_q) : kernel_q) - KernelWidth'(1);
        wy_d        = -p;
        wx_d        = -p;
        col_d       = '0;
        bot_d       = k - pos_t'(1) - p;
        bot_s_d     = k - pos_t'(1) - p + s;
        free_lim_d  = pos_t'(Rows) - p;
        room_d      = pos_t'(Rows) - p;
        wr_x_last_d = width_q == DimWidth'(1);
        w_one_d     = width_q == DimWidth'(1);
        w_m2_d      = w - pos_t'(2);
        oy_d        = '0;
        ox_d        = '0;
        col_in_d    = 1'b1;
        row_start_d = 1'b1;
        walk_done_d = 1'b0;
        if (cfg_ok) begin
          state_d = StLimits;
        end else if ((height_q != '0) && (width_q != '0)) begin
          state_d = StDrain;
        end else begin
          state_d = StIdle;
        end
      end
      StLimits: begin
        h_lim_d     = ceil_q ? min_pos(h_lim_q, h_lim_ms_q) : h_lim_q - s + pos_t'(1);
        w_lim_d     = ceil_q ? min_pos(w_lim_q, w_lim_ms_q) : w_lim_q - s + pos_t'(1);
        h_last_ms_d = h_last_q - s;
        // The first window's last-column flag !(wx < w_lim) at wx = -p, from
        // the limit's candidates (ceil: below both; floor: -p < w_lim - s + 1,
        // i.e. s - p <= w_lim), so StStart's adv_q reads it from a flip-flop,
        // not from a compare of w_lim_q.
        first_last_col_d = ceil_q ? !((wx_q < w_lim_q) && (wx_q < w_lim_ms_q))
                                  : !(sp_q <= w_lim_q);
        y_low_d     = min_pos(bot_q, h_last_q);
        y_low_nx_d  = min_pos(bot_s_q, h_last_q);
        emit_cnt_d  = first_cnt_q;
        col_inc_d   = col_t'(1);
        col_jump_d  = col_t'(skip_q) + col_t'(1);
        skip1_d     = col_t'(skip_q) + col_t'(1);
        nxt_in_d    = w_m1_q > pos_t'(0);
        w_gt1_d     = w_m1_q > pos_t'(0);
        state_d     = StStart;
      end
      StStart: begin
        h_lim_ms_d       = h_lim_q - s;
        w_lim_ms_d       = w_lim_q - s;
        w_lim_ms2_d      = w_lim_q - (s <<< 1);
        row_jump_last_d  = !(sp_q < w_lim_q);
        jump_last_d      = !(sp_q < w_lim_q);
        last_col_d       = first_last_col_q;
        last_row_d       = !(wy_q < h_lim_q);
        adv_d            = adv_row;
        state_d          = StRun;
      end
      StRun: begin
        if (walk_done_q && !s1_valid_q && !s2_valid_q && !col_valid && !out_valid_q &&
            !wr_more_q) begin
          state_d = StIdle;
        end
      end
      StDrain: begin
        if (!wr_more_q) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase

    if (in_fire) begin
      if (wr_x_last_q) begin
        wr_x_d      = '0;
        wr_y_d      = wr_y_q + DimWidth'(1);
        wr_x_last_d = w_one_q;
      end else begin
        wr_x_d      = wr_x_q + DimWidth'(1);
        wr_x_last_d = wr_x == w_m2_q;
      end
    end

    // The rows the write side may start: one fewer when an input row is
    // complete, s more when the walker starts its next output row. room >= 0
    // (asserted), so with s >= 1 a walker row start always leaves room.
    // The three sums are of registers only; the two events select one.
    if (row_in || row_walk) begin
      unique case ({row_in, row_walk})
        2'b10:   room_d = room_q - pos_t'(1);
        2'b01:   room_d = room_q + s;
        default: room_d = room_q + s - pos_t'(1);
      endcase
    end
    wr_more_d = in_fire ? wr_more_fire : wr_more_hold;
    room_ok_d = row_in ? room_ok_row : room_ok_walk;

    // Each update: an adder for the new position, the compare that gives
    // its flag on the old one in parallel.
    if (issue) begin
      row_start_d = 1'b0;
      if (!emit) begin
        col_d      = col_q + pos_t'(1);
        col_inc_d  = inc_inc;
        col_jump_d = jump_inc;
        col_in_d   = nxt_in_q;
        nxt_in_d   = inc_in;
        emit_cnt_d = emit_cnt_q - KernelWidth'(1);
        adv_d      = adv_inc;
      end else if (!last_col_q) begin
        wx_d        = wx_q + s;
        ox_d        = ox_q + DimWidth'(1);
        col_d       = col_q + pos_t'(1) + skip_q;
        col_inc_d   = jump_inc;
        col_jump_d  = jump_jump;
        // Same test as without a jump: a following window starts inside the
        // image (ceil: start + s < W; floor: start + s <= W + p - k < W),
        // so after a jump (skip > 0) both col + 1 + skip < W and
        // col < W - 1 hold.
        col_in_d    = nxt_in_q;
        nxt_in_d    = jump_in;
        emit_cnt_d  = step_cnt_q;
        last_col_d  = jump_last;
        jump_last_d = !(wx_q < w_lim_ms2_q);
        adv_d       = adv_jump;
      end else if (!last_row_q) begin
        wy_d        = wy_q + s;
        oy_d        = oy_q + DimWidth'(1);
        wx_d        = -p;
        ox_d        = '0;
        col_d       = '0;
        col_inc_d   = col_t'(1);
        col_jump_d  = skip1_q;
        col_in_d    = 1'b1;
        nxt_in_d    = w_gt1_q;
        emit_cnt_d  = first_cnt_q;
        adv_d       = adv_row;
        jump_last_d = row_jump_last_q;
        last_col_d  = first_last_col_q;
        last_row_d  = !(wy_q < h_lim_ms_q);
        bot_d       = bot_s_q;
        bot_s_d     = bot_s_q + s;
        y_low_nx_d  = (bot_s_q < h_last_ms_q) ? bot_s_q + s : h_last_q;
        y_low_d     = y_low_nx_q;
        free_lim_d  = free_lim_q + s;
        row_start_d = 1'b1;
      end else begin
        walk_done_d = 1'b1;
      end
    end
  end

  // Stage valid bits and the output valid.
  always_comb begin
    if (shift) begin
      out_valid_d = cq.meta.emit;
    end else if (win_ready_i) begin
      out_valid_d = 1'b0;
    end else begin
      out_valid_d = out_valid_q;
    end
  end

  // Shift one column in at position k - 1; positions >= k keep their
  // (invalid) contents. A row start first clears every column-valid bit:
  // the p left padding columns are then in place without a cycle each.
  logic [MaxKernel-1:0] base_cols;
  assign base_cols = cq.meta.clear ? '0 : cols_q;

  for (genvar kx = 0; kx < MaxKernel; kx++) begin : g_win_col
    column_t right_col;   // column kx + 1 (this column itself for the last one)
    logic    right_valid;
    if (kx + 1 < MaxKernel) begin : g_inner
      assign right_col   = win_q[kx+1];
      assign right_valid = base_cols[kx+1];
    end else begin : g_edge
      assign right_col   = win_q[kx];
      assign right_valid = base_cols[kx];
    end
    // The taps load only under col_en_q (k_at || k_in), so win_d has no hold
    // branch: a hold branch is a feedback Yosys turns into a clock enable,
    // which then reads k_at_q / k_in_q beside col_en_q (a far route to the
    // tap enable, then another to the window register's clock enables).
    // k_at_q alone selects the taps' data; k_in_q only cols_d.
    assign win_d[kx] = k_at_q[kx] ? cq.col : right_col;
    always_comb begin
      if (k_at_q[kx]) begin
        cols_d[kx] = cq.meta.col_in;
      end else if (k_in_q[kx]) begin
        cols_d[kx] = right_valid;
      end else begin
        cols_d[kx] = base_cols[kx];
      end
    end
    strata_reg_copies #(.Copies (MaxKernel)) u_col_en (
      .clk_i    (clk_i),
      .rst_ni   (rst_ni),
      .d_i      (k_at_d[kx] || k_in_d[kx]),
      .mirror_i (k_at_q[kx] || k_in_q[kx]),
      .q_o      (col_en_q[kx])
    );

    for (genvar ky = 0; ky < MaxKernel; ky++) begin : g_tap
      always_ff @(posedge clk_i) begin
        if (shift && col_en_q[kx][ky]) begin
          win_q[kx][ky*PixelWidth +: PixelWidth] <= win_d[kx][ky*PixelWidth +: PixelWidth];
        end
      end
    end
  end

  assign k_at_d = (state_q == StCheck) ? kernel_at(kernel_q) : k_at_q;
  assign k_in_d = (state_q == StCheck) ? kernel_in(kernel_q) : k_in_q;

  // ---------------------------------------------------------------------------
  // Flip-flops.

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q          <= StIdle;
      in_ready_q       <= 1'b0;
      err_q            <= 1'b0;
      height_q         <= '0;
      width_q          <= '0;
      kernel_q         <= '0;
      stride_q         <= '0;
      pad_q            <= '0;
      ceil_q           <= 1'b0;
      wr_x_q           <= '0;
      wr_y_q           <= '0;
      h_lim_q          <= '0;
      w_lim_q          <= '0;
      h_lim_ms_q       <= '0;
      w_lim_ms_q       <= '0;
      skip_q           <= '0;
      h_last_q         <= '0;
      h_last_ms_q      <= '0;
      w_m1_q           <= '0;
      first_cnt_q      <= '0;
      step_cnt_q       <= '0;
      first_last_col_q <= 1'b0;
      wy_q             <= '0;
      wx_q             <= '0;
      col_q            <= '0;
      bot_q            <= '0;
      bot_s_q          <= '0;
      y_low_nx_q       <= '0;
      col_inc_q        <= '0;
      col_jump_q       <= '0;
      skip1_q          <= '0;
      nxt_in_q         <= 1'b0;
      w_gt1_q          <= 1'b0;
      adv_q            <= '0;
      jump_last_q      <= 1'b0;
      row_jump_last_q  <= 1'b0;
      w_lim_ms2_q      <= '0;
      sp_q             <= '0;
      col_ok_q         <= 1'b0;
      y_low_q          <= '0;
      free_lim_q       <= '0;
      wr_x_last_q      <= 1'b0;
      wr_more_q        <= 1'b0;
      room_ok_q        <= 1'b0;
      room_q           <= '0;
      w_one_q          <= 1'b0;
      w_m2_q           <= '0;
      emit_cnt_q       <= '0;
      oy_q             <= '0;
      ox_q             <= '0;
      col_in_q         <= 1'b0;
      last_col_q       <= 1'b0;
      last_row_q       <= 1'b0;
      row_start_q      <= 1'b1;
      walk_done_q      <= 1'b1;
      s1_valid_q       <= 1'b0;
      s2_valid_q       <= 1'b0;
      out_valid_q      <= 1'b0;
      cols_q           <= '0;
      k_at_q           <= '0;
      k_in_q           <= '0;
    end else begin
      state_q          <= state_d;
      in_ready_q       <= in_fire ? ready_if_fire : ready_if_hold;
      err_q            <= err_d;
      height_q         <= height_d;
      width_q          <= width_d;
      kernel_q         <= kernel_d;
      stride_q         <= stride_d;
      pad_q            <= pad_d;
      ceil_q           <= ceil_d;
      wr_x_q           <= wr_x_d;
      wr_y_q           <= wr_y_d;
      h_lim_q          <= h_lim_d;
      w_lim_q          <= w_lim_d;
      h_lim_ms_q       <= h_lim_ms_d;
      w_lim_ms_q       <= w_lim_ms_d;
      skip_q           <= skip_d;
      h_last_q         <= h_last_d;
      h_last_ms_q      <= h_last_ms_d;
      w_m1_q           <= w_m1_d;
      first_cnt_q      <= first_cnt_d;
      step_cnt_q       <= step_cnt_d;
      first_last_col_q <= first_last_col_d;
      wy_q             <= wy_d;
      wx_q             <= wx_d;
      col_q            <= col_d;
      bot_q            <= bot_d;
      bot_s_q          <= bot_s_d;
      y_low_nx_q       <= y_low_nx_d;
      col_inc_q        <= col_inc_d;
      col_jump_q       <= col_jump_d;
      skip1_q          <= skip1_d;
      nxt_in_q         <= nxt_in_d;
      w_gt1_q          <= w_gt1_d;
      adv_q            <= adv_d;
      jump_last_q      <= jump_last_d;
      row_jump_last_q  <= row_jump_last_d;
      w_lim_ms2_q      <= w_lim_ms2_d;
      sp_q             <= sp_d;
      col_ok_q         <= col_ok_d;
      y_low_q          <= y_low_d;
      free_lim_q       <= free_lim_d;
      wr_x_last_q      <= wr_x_last_d;
      wr_more_q        <= wr_more_d;
      room_ok_q        <= room_ok_d;
      room_q           <= room_d;
      w_one_q          <= w_one_d;
      w_m2_q           <= w_m2_d;
      emit_cnt_q       <= emit_cnt_d;
      oy_q             <= oy_d;
      ox_q             <= ox_d;
      col_in_q         <= col_in_d;
      last_col_q       <= last_col_d;
      last_row_q       <= last_row_d;
      row_start_q      <= row_start_d;
      walk_done_q      <= walk_done_d;
      s1_valid_q       <= issue;
      s2_valid_q       <= s1_valid_q;
      out_valid_q      <= out_valid_d;
      if (shift) cols_q <= cols_d;
      k_at_q           <= k_at_d;
      k_in_q           <= k_in_d;
    end
  end

  // Datapath registers: no reset, no enable (the stages never stall),
  // qualified by the valid bits above.
  always_ff @(posedge clk_i) begin
    s1_meta_q <= s1_meta_d;
    s2_meta_q <= s2_meta_d;
  end

  always_ff @(posedge clk_i) begin
    if (shift && cq.meta.emit) begin
      out_rows_q  <= cq.meta.rows;
      out_mask_q  <= tap_mask(cq.meta.rows, cols_d);
      out_count_q <= small_mul(popcount(cq.meta.rows), popcount(cols_d));
      out_ky_lo_q <= first_set(cq.meta.rows);
      out_ky_hi_q <= last_set(cq.meta.rows);
      out_kx_lo_q <= first_set(cols_d);
      out_kx_hi_q <= last_set(cols_d);
      out_oy_q    <= cq.meta.oy;
      out_ox_q    <= cq.meta.ox;
      out_first_q <= cq.meta.first;
      out_last_q  <= cq.meta.last;
    end
  end

  // ---------------------------------------------------------------------------
  // Outputs.

  assign cfg_error_o = err_q;
  assign busy_o      = (state_q != StIdle);
  assign win_valid_o = out_valid_q;
  assign win_oy_o    = out_oy_q;
  assign win_ox_o    = out_ox_q;
  assign win_first_o = out_first_q;
  assign win_last_o  = out_last_q;
  assign win_count_o = out_count_q;
  assign win_ky_lo_o = out_ky_lo_q;
  assign win_ky_hi_o = out_ky_hi_q;
  assign win_kx_lo_o = out_kx_lo_q;
  assign win_kx_hi_o = out_kx_hi_q;
  assign win_mask_o  = out_mask_q;

  always_comb begin
    for (int unsigned ky = 0; ky < MaxKernel; ky++) begin
      for (int unsigned kx = 0; kx < MaxKernel; kx++) begin
        win_data_o[(ky*MaxKernel + kx)*PixelWidth +: PixelWidth] =
            out_mask_q[ky*MaxKernel + kx] ? win_q[kx][ky*PixelWidth +: PixelWidth] : '0;
      end
    end
  end

  // ---------------------------------------------------------------------------
  // Assertions.

  `STRATA_ASSERT_STREAM(wg_cfg, clk_i, rst_ni, cfg_valid_i, cfg_ready_o,
                        {cfg_height_i, cfg_width_i, cfg_kernel_i, cfg_stride_i, cfg_pad_i,
                         cfg_ceil_i})
  `STRATA_ASSERT_STREAM(wg_in, clk_i, rst_ni, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT_STREAM(wg_win, clk_i, rst_ni, win_valid_o, win_ready_i,
                        {win_data_o, win_mask_o, win_oy_o, win_ox_o, win_first_o, win_last_o})
  // The registered mask, count and rectangle of the window on the output are
  // those of its rows and column-valid bits.
  `STRATA_ASSERT(wg_out_flags, clk_i, rst_ni, !out_valid_q
                 || ((out_mask_q == tap_mask(out_rows_q, cols_q))
                     && (out_count_q == small_mul(popcount(out_rows_q), popcount(cols_q)))
                     && (out_ky_lo_q == first_set(out_rows_q))
                     && (out_ky_hi_q == last_set(out_rows_q))
                     && (out_kx_lo_q == first_set(cols_q))
                     && (out_kx_hi_q == last_set(cols_q))))
  // Every emitted window holds at least one image pixel (legal configurations).
  `STRATA_ASSERT(wg_win_nonempty, clk_i, rst_ni, !win_valid_o || (win_mask_o != '0))
  // The line buffer never overwrites a row a pending window still needs.
  `STRATA_ASSERT(wg_no_overwrite, clk_i, rst_ni,
                 !lb_we || walk_done_q || (wr_y < wy_q + pos_t'(Rows)))
  // The write side's registered flags follow their definitions.
  `STRATA_ASSERT(wg_write_flags, clk_i, rst_ni, ((state_q != StRun) && (state_q != StDrain))
                 || ((wr_x_last_q == (wr_x_q == width_q - DimWidth'(1)))
                     && (wr_more_q == (wr_y_q < height_q))
                     && (w_one_q == (width_q == DimWidth'(1)))
                     && (w_m2_q == w - pos_t'(2))))
  `STRATA_ASSERT(wg_in_ready_next, clk_i, rst_ni,
                 (in_fire ? ready_if_fire : ready_if_hold) ==
                 write_ready(state_d, wr_more_d, walk_done_d, room_ok_d))
  `STRATA_ASSERT(wg_in_ready, clk_i, rst_ni,
                 in_ready_q == write_ready(state_q, wr_more_q, walk_done_q, room_ok_q))
  `STRATA_ASSERT(wg_room, clk_i, rst_ni, (state_q != StRun) || walk_done_q
                 || ((room_q == free_lim_q - wr_y) && (room_q >= pos_t'(0))
                     && (room_ok_q == (wr_y < free_lim_q))))
  // The registered readiness never runs ahead of the write side (checked
  // at full width), and the columns fit the short compares.
  `STRATA_ASSERT(wg_col_ok_safe, clk_i, rst_ni, (state_q != StRun) || walk_done_q || !col_ok_q
                 || !col_in_q || (wr_y > y_low_q) || ((wr_y == y_low_q) && (wr_x > col_q)))
  `STRATA_ASSERT(wg_col_width, clk_i, rst_ni, (state_q != StRun) || walk_done_q
                 || (col_q >= pos_t'(0) && col_q < pos_t'(2 ** ColWidth)))
  // The kernel decode is that of the frame's kernel.
  `STRATA_ASSERT(wg_kernel_decode, clk_i, rst_ni, (state_q != StRun)
                 || ((k_at_q == kernel_at(kernel_q)) && (k_in_q == kernel_in(kernel_q))))
  // The registered values follow their definitions at every step of the walk.
  `STRATA_ASSERT(wg_walk_values, clk_i, rst_ni, (state_q != StRun) || walk_done_q
                 || ((free_lim_q == wy_q + pos_t'(Rows))
                     && (bot_q == wy_q + k - pos_t'(1))
                     && (bot_s_q == bot_q + s)
                     && (y_low_nx_q == min_pos(bot_s_q, h - pos_t'(1)))
                     && (col_inc_q == col_t'(col_q + pos_t'(1)))
                     && (col_jump_q == col_t'(col_q + pos_t'(1) + skip_q))
                     && (skip1_q == col_t'(skip_q + pos_t'(1)))
                     && (nxt_in_q == (col_q < w_m1_q))
                     && (w_gt1_q == (w > pos_t'(1)))
                     && (jump_last_q == !(wx_q < w_lim_q - s))
                     && (row_jump_last_q == !(-p < w_lim_q - s))
                     && (first_last_col_q == !(-p < w_lim_q))
                     && (adv_q == advance(emit, last_col_q, col_inc_q, col_jump_q, nxt_in_q))
                     && (y_low_q == min_pos(wy_q + k - pos_t'(1), h - pos_t'(1)))
                     && (pos_t'(emit_cnt_q) == wx_q + k - pos_t'(1) - col_q)
                     && (col_in_q == (col_q < w))
                     && (last_col_q == !(wx_q < w_lim_q))
                     && (last_row_q == !(wy_q < h_lim_q))))

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
