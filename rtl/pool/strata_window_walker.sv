// SPDX-License-Identifier: Apache-2.0
// Window walker of strata_window_gen: walks the output window positions of
// a frame (oy, ox) in row-major order and issues, one per cycle, the
// line-buffer column reads that shift each window into the window register,
// with what travels with each column (in-image flag, emit, row-start clear,
// frame flags, position and the window's valid tap rows).
//
// For each output row (window top row wy = oy * s - pt, pt the top padding)
// the walker reads column c of rows wy .. wy + k - 1 in one cycle. Only
// shifts that complete a window at wx = ox * s - pl (pl the left padding) are
// emitted; the shifts that only fill the register (k - 1 - pl at each row
// start) are not, and with s > k the columns
// between two windows are skipped (the column address jumps). Along each
// dimension another window follows the one starting at `start` exactly when
// start < lim (pool_out_size one step at a time, no division, floor or ceil):
// floor: start + s + k <= dim + pad after; ceil: start + k < dim + pad after
// and start + s < dim.
//
// Ports: check_i, limits_i and start_i are the three setup cycles after the
// configuration handshake that derive the per-frame limits from registers;
// run_i lets the walk go. A column is issued (issue_o, a column-queue
// reservation) only with a credit of the column queue behind it (credit_i)
// and once it is in the line buffer (the write position wr_x_i, wr_y_i has
// passed it). rd_addr_o and wy_o (its top row) address the line buffer; push_o and
// col_meta_o give the column two cycles after its issue, when the line buffer's
// output register holds it (stages 1 and 2 never stall).
// Timing: every per-cycle decision reads a register: emit counter,
// last-window flags, column-in-image flag, and the column-ready flag,
// computed a cycle ahead for the current column and for the position the
// next issue moves to (adv_q: col + 1, col + 1 + skip or the next row's
// column 0, kept for every state of the walk with its in-image flag and the
// last-column flag after the next jump). Every per-window or per-row update
// is an adder with its flag's compare in parallel, and a registered flag's
// assertion checks it against its definition. The issue decision is four
// flip-flops.
`include "strata_assert.svh"
`include "strata_window_types.svh"

module strata_window_walker #(
  parameter int unsigned MaxKernel     = strata_cfg_pkg::MaxKernel,      // largest kernel side
  parameter int unsigned MaxImageWidth = strata_cfg_pkg::MaxImageWidth,  // line-buffer row length
  parameter int unsigned DimWidth      = 16,  // bits of H, W, oy, ox
  parameter int unsigned StrideWidth   = 4,   // bits of the stride
  localparam int unsigned KernelWidth = $clog2(MaxKernel + 1),
  localparam int unsigned AddrWidth   = $clog2(MaxImageWidth),
  localparam int unsigned PosWidth    = DimWidth + 2,  // signed image coordinates, padding < 0
  localparam type col_meta_t = `STRATA_WINDOW_COL_META_T(MaxKernel, DimWidth)
) (
  input  logic                       clk_i,             // clock
  input  logic                       rst_ni,            // synchronous reset, active low
  // Frame state and configuration (registered in strata_window_gen).
  input  logic                       check_i,           // setup 1: first derived values
  input  logic                       limits_i,          // setup 2: next-window limits
  input  logic                       start_i,           // setup 3: flags of the first window
  input  logic                       run_i,             // walking
  input  logic [DimWidth-1:0]        height_i,          // H
  input  logic [DimWidth-1:0]        width_i,           // W
  input  logic [KernelWidth-1:0]     kernel_i,          // k
  input  logic [StrideWidth-1:0]     stride_i,          // s
  input  logic [KernelWidth-1:0]     pad_top_i,         // pt, padding rows above the image
  input  logic [KernelWidth-1:0]     pad_left_i,        // pl, padding columns left of it
  input  logic [KernelWidth-1:0]     pad_bottom_i,      // pb, padding rows below it
  input  logic [KernelWidth-1:0]     pad_right_i,       // pr, padding columns right of it
  input  logic                       ceil_i,            // ceil mode
  // Write side.
  input  logic [DimWidth-1:0]        wr_x_i,            // column of the next pixel to arrive
  input  logic [DimWidth-1:0]        wr_y_i,            // row of the next pixel to arrive
  output logic signed [PosWidth-1:0] h_last_o,          // H - 1 (from the check cycle on)
  output logic signed [PosWidth-1:0] wy_o,              // window top row
  output logic signed [PosWidth-1:0] free_lim_o,        // wy + Rows: rows the write side may fill
  output logic                       row_walk_o,        // this issue starts the next output row
  output logic                       walk_done_o,       // every column of the frame issued
  output logic                       walk_done_next_o,  // walk_done_o of the next cycle
  // Column issue and line-buffer read.
  input  logic                       credit_i,          // the column queue has a free slot
  output logic                       issue_o,           // a column is issued (slot reserved)
  output logic [AddrWidth-1:0]       rd_addr_o,         // line-buffer word read (every cycle)
  output logic                       reads_pending_o,   // issued columns not yet pushed
  // The column read two cycles after its issue, with its flags.
  output logic                       push_o,            // the line buffer's output holds it
  output col_meta_t                  col_meta_o         // its flags, tap rows and position
);

  localparam int unsigned SlotWidth = $clog2(MaxKernel + 1);
  localparam int unsigned Rows      = 2 ** SlotWidth;
  // Column compares of the readiness flags: a column the walker reads never
  // exceeds W + k - 2 (asserted) and the write column is below W, so a few
  // bits hold both (short carry chains).
  localparam int unsigned ColWidth  = $clog2(MaxImageWidth + MaxKernel + 1);

  typedef logic signed [PosWidth-1:0] pos_t;

  function automatic pos_t pos_of(logic [DimWidth-1:0] v);
    return pos_t'({2'b00, v});
  endfunction

  function automatic pos_t min_pos(pos_t a, pos_t b);
    return (a < b) ? a : b;
  endfunction

  // ---------------------------------------------------------------------------
  // Registers.

  // Per-frame constants of the walker (setup cycles). Along each dimension,
  // with pa, pb the padding before and after (top and bottom, left and
  // right) and windows starting at m * s - pa, another window follows the one
  // starting at `start` exactly when start < lim (pool_out_size one step at
  // a time, no division):
  //   floor: start + s + k <= dim + pb      -> lim = dim + pb - k - s + 1
  //   ceil:  start + k < dim + pb (still counted by ceil((dim + pa + pb - k) / s))
  //          and start + s < dim (starts inside the input or its padding before)
  //                                         -> lim = min(dim + pb - k, dim - s)
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
  // (registered, see "Issue").
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
  // at wx = -pl, i.e. !(s - pl < w_lim); sp = s - pl) at a row start.
  logic                   jump_last_d, jump_last_q, row_jump_last_d, row_jump_last_q;
  pos_t                   w_lim_ms2_d, w_lim_ms2_q, sp_d, sp_q;
  logic                   row_start_d, row_start_q;
  logic                   walk_done_d, walk_done_q;

  // What travels with a column read: column inside the image, the shift
  // completes a window (emit), clear the window register first (row start),
  // frame flags, position; the window's top row in stage 1, turned into its
  // valid tap rows on the way to stage 2 (col_meta_t).
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

  // Stage 1: the line buffer's RAMs hold the column read (one cycle after
  // the issue); stage 2: the line buffer's output register holds it (two
  // cycles after). Stages 1 and 2 never stall.
  logic     s1_valid_q, s2_valid_q;
  s1_meta_t s1_meta_d, s1_meta_q;
  col_meta_t s2_meta_d, s2_meta_q;

  pos_t k, s, pt, pl, pb, pr, h, w, wr_y;
  assign k    = pos_t'(kernel_i);
  assign s    = pos_t'(stride_i);
  assign pt   = pos_t'(pad_top_i);
  assign pl   = pos_t'(pad_left_i);
  assign pb   = pos_t'(pad_bottom_i);
  assign pr   = pos_t'(pad_right_i);
  assign h    = pos_of(height_i);
  assign w    = pos_of(width_i);
  assign wr_y = pos_of(wr_y_i);

  // ---------------------------------------------------------------------------
  // Issue: every decision reads registers.

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
  assign wr_x_n    = col_t'(wr_x_i);
  assign emit      = (emit_cnt_q == '0);
  assign col_ready = col_avail(col_n, y_low_q, col_in_q, wr_x_n, wr_y);

  assign issue     = run_i && credit_i && !walk_done_q && col_ok_q;

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
  // Next state: the setup cycles, then an issue moves the walk on.

  always_comb begin
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
    emit_cnt_d       = emit_cnt_q;
    oy_d             = oy_q;
    ox_d             = ox_q;
    col_in_d         = col_in_q;
    last_col_d       = last_col_q;
    last_row_d       = last_row_q;
    row_start_d      = row_start_q;
    walk_done_d      = walk_done_q;

    if (check_i) begin
      h_lim_d     = h + pb - k;  // ceil candidate a (floor: before "- s + 1")
      w_lim_d     = w + pr - k;
      h_lim_ms_d  = h - s;       // ceil candidate b
      w_lim_ms_d  = w - s;
      sp_d        = s - pl;
      skip_d      = (s > k) ? s - k : pos_t'(0);
      h_last_d    = h - pos_t'(1);
      w_m1_d      = w - pos_t'(1);
      first_cnt_d = kernel_i - KernelWidth'(1) - pad_left_i;
      step_cnt_d  = ((s < k) ? KernelWidth'(stride_i) : kernel_i) - KernelWidth'(1);
      wy_d        = -pt;
      wx_d        = -pl;
      col_d       = '0;
      bot_d       = k - pos_t'(1) - pt;
      bot_s_d     = k - pos_t'(1) - pt + s;
      free_lim_d  = pos_t'(Rows) - pt;
      oy_d        = '0;
      ox_d        = '0;
      col_in_d    = 1'b1;
      row_start_d = 1'b1;
      walk_done_d = 1'b0;
    end
    if (limits_i) begin
      h_lim_d     = ceil_i ? min_pos(h_lim_q, h_lim_ms_q) : h_lim_q - s + pos_t'(1);
      w_lim_d     = ceil_i ? min_pos(w_lim_q, w_lim_ms_q) : w_lim_q - s + pos_t'(1);
      h_last_ms_d = h_last_q - s;
      // The first window's last-column flag !(wx < w_lim) at wx = -pl, from
      // the limit's candidates (ceil: below both; floor: -pl < w_lim - s + 1,
      // i.e. s - pl <= w_lim), so start_i's adv_q reads it from a flip-flop,
      // not from a compare of w_lim_q.
      first_last_col_d = ceil_i ? !((wx_q < w_lim_q) && (wx_q < w_lim_ms_q))
                                : !(sp_q <= w_lim_q);
      y_low_d     = min_pos(bot_q, h_last_q);
      y_low_nx_d  = min_pos(bot_s_q, h_last_q);
      emit_cnt_d  = first_cnt_q;
      col_inc_d   = col_t'(1);
      col_jump_d  = col_t'(skip_q) + col_t'(1);
      skip1_d     = col_t'(skip_q) + col_t'(1);
      nxt_in_d    = w_m1_q > pos_t'(0);
      w_gt1_d     = w_m1_q > pos_t'(0);
    end
    if (start_i) begin
      h_lim_ms_d       = h_lim_q - s;
      w_lim_ms_d       = w_lim_q - s;
      w_lim_ms2_d      = w_lim_q - (s <<< 1);
      row_jump_last_d  = !(sp_q < w_lim_q);
      jump_last_d      = !(sp_q < w_lim_q);
      last_col_d       = first_last_col_q;
      last_row_d       = !(wy_q < h_lim_q);
      adv_d            = adv_row;
    end

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
        // image (ceil: start + s < W; floor: start + s <= W + pr - k < W),
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
        wx_d        = -pl;
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

  // ---------------------------------------------------------------------------
  // Flip-flops.

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
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
    end else begin
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
    end
  end

  // Datapath registers: no reset, no enable (the stages never stall),
  // qualified by the valid bits above.
  always_ff @(posedge clk_i) begin
    s1_meta_q <= s1_meta_d;
    s2_meta_q <= s2_meta_d;
  end

  // ---------------------------------------------------------------------------
  // Outputs.

  assign row_walk_o       = issue && emit && last_col_q && !last_row_q;
  assign walk_done_o      = walk_done_q;
  assign walk_done_next_o = walk_done_d;
  assign issue_o          = issue;
  assign h_last_o         = h_last_q;
  assign wy_o             = wy_q;
  assign free_lim_o       = free_lim_q;
  assign rd_addr_o        = col_q[AddrWidth-1:0];
  assign reads_pending_o  = s1_valid_q || s2_valid_q;
  assign push_o           = s2_valid_q;
  assign col_meta_o       = s2_meta_q;

  // ---------------------------------------------------------------------------
  // Assertions.

  // The registered readiness never runs ahead of the write side (checked
  // at full width), and the columns fit the short compares.
  `STRATA_ASSERT(wg_col_ok_safe, clk_i, rst_ni, !run_i || walk_done_q || !col_ok_q
                 || !col_in_q || (wr_y > y_low_q)
                 || ((wr_y == y_low_q) && (pos_of(wr_x_i) > col_q)))
  `STRATA_ASSERT(wg_col_width, clk_i, rst_ni, !run_i || walk_done_q
                 || (col_q >= pos_t'(0) && col_q < pos_t'(2 ** ColWidth)))
  // The registered values follow their definitions at every step of the walk.
  `STRATA_ASSERT(wg_walk_values, clk_i, rst_ni, !run_i || walk_done_q
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
                     && (row_jump_last_q == !(-pl < w_lim_q - s))
                     && (first_last_col_q == !(-pl < w_lim_q))
                     && (adv_q == advance(emit, last_col_q, col_inc_q, col_jump_q, nxt_in_q))
                     && (y_low_q == min_pos(wy_q + k - pos_t'(1), h - pos_t'(1)))
                     && (pos_t'(emit_cnt_q) == wx_q + k - pos_t'(1) - col_q)
                     && (col_in_q == (col_q < w))
                     && (last_col_q == !(wx_q < w_lim_q))
                     && (last_row_q == !(wy_q < h_lim_q))))

`ifndef SYNTHESIS
  initial begin
    assert (MaxKernel >= 1) else $fatal(1, "strata_window_walker: MaxKernel must be >= 1");
    assert (MaxImageWidth >= 2 && MaxImageWidth < 2 ** DimWidth)
      else $fatal(1, "strata_window_walker: MaxImageWidth %0d out of range", MaxImageWidth);
    assert (StrideWidth >= 1 && StrideWidth < DimWidth)
      else $fatal(1, "strata_window_walker: StrideWidth %0d out of range", StrideWidth);
  end
`endif

endmodule : strata_window_walker
