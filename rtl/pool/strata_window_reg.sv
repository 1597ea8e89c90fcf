// SPDX-License-Identifier: Apache-2.0
// Window register of strata_window_gen: shifts the columns of the column
// queue into a k-column register (column kx holds tap column kx) and holds
// the output window with its tap mask, tap count, valid rectangle, position
// and frame flags.
//
// Ports: the kernel decode is loaded from kernel_i while load_i (the frame's
// check cycle); the column queue's head (col_valid_i and the col_*_i fields)
// is taken by shift_o; the window leaves on win_valid_o / win_ready_i.
// Latency: a column is shifted in the cycle it heads the queue if the output
// register is free or taken; a window is presented the cycle after the shift
// that completes it. Throughput: one column per cycle.
// The window register is the output register: the tap mask, count and
// rectangle are registered with it (from the window's rows and the
// column-valid bits it is loaded with), so no output is logic behind the
// column-valid bits, and each mask bit gates the Lanes x DataWidth data bits
// of one tap only. "Column kx loads" is a flip-flop copy per tap (col_en_q,
// strata_reg_copies), so no single enable drives the whole window register.
`include "strata_assert.svh"

module strata_window_reg #(
  parameter int unsigned Lanes       = strata_cfg_pkg::Lanes,      // channels per pixel
  parameter int unsigned DataWidth   = strata_cfg_pkg::DataWidth,  // bits per channel
  parameter int unsigned MaxKernel   = strata_cfg_pkg::MaxKernel,  // largest kernel side
  parameter int unsigned DimWidth    = 16,                         // bits of oy, ox
  localparam int unsigned PixelWidth  = Lanes * DataWidth,
  localparam int unsigned Taps        = MaxKernel * MaxKernel,
  localparam int unsigned KernelWidth = $clog2(MaxKernel + 1),
  localparam int unsigned TapIdxWidth = (MaxKernel > 1) ? $clog2(MaxKernel) : 1,
  localparam int unsigned CountWidth  = $clog2(Taps + 1)
) (
  input  logic                          clk_i,        // clock
  input  logic                          rst_ni,       // synchronous reset, active low
  // Kernel decode (a frame constant).
  input  logic                          load_i,       // load the decode of kernel_i
  input  logic [KernelWidth-1:0]        kernel_i,     // k, the frame's kernel side
  // Column queue head.
  input  logic                          col_valid_i,  // a column heads the queue
  output logic                          shift_o,      // it is shifted in (queue pop)
  input  logic [MaxKernel*PixelWidth-1:0] col_i,      // the column, tap row ky at ky
  input  logic                          col_in_i,     // column inside the image
  input  logic                          col_emit_i,   // the shift completes a window
  input  logic                          col_clear_i,  // row start: clear the column-valid bits
  input  logic                          col_first_i,  // first window of the frame
  input  logic                          col_last_i,   // last window of the frame
  input  logic [MaxKernel-1:0]          col_rows_i,   // the window's valid tap rows
  input  logic [DimWidth-1:0]           col_oy_i,     // the window's output row
  input  logic [DimWidth-1:0]           col_ox_i,     // the window's output column
  // Output stream: as strata_window_gen's.
  output logic                          win_valid_o,  // window offered
  input  logic                          win_ready_i,  // window taken
  output logic [Taps*PixelWidth-1:0]    win_data_o,   // tap t = ky*MaxKernel + kx at t*PixelWidth
  output logic [Taps-1:0]               win_mask_o,   // bit t: tap inside the image
  output logic [CountWidth-1:0]         win_count_o,  // number of valid taps
  output logic [TapIdxWidth-1:0]        win_ky_lo_o,  // first valid tap row
  output logic [TapIdxWidth-1:0]        win_ky_hi_o,  // last valid tap row
  output logic [TapIdxWidth-1:0]        win_kx_lo_o,  // first valid tap column
  output logic [TapIdxWidth-1:0]        win_kx_hi_o,  // last valid tap column
  output logic [DimWidth-1:0]           win_oy_o,     // output row
  output logic [DimWidth-1:0]           win_ox_o,     // output column
  output logic                          win_first_o,  // first window of the frame
  output logic                          win_last_o    // last window of the frame
);

  typedef logic [MaxKernel*PixelWidth-1:0] column_t;  // one window column, tap row ky at ky

  // ---------------------------------------------------------------------------
  // Helpers (pure functions of their arguments).

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

  logic shift;

  // Window register (column kx holds tap column kx) and its column-valid bits.
  column_t              win_d [MaxKernel];
  column_t              win_q [MaxKernel];
  logic [MaxKernel-1:0] cols_d, cols_q;
  // Kernel decode per window column, registered in the check cycle (a frame
  // constant): k_at[kx] = (kx + 1 == k) takes the new column, k_in[kx] =
  // (kx + 1 < k) shifts. Column kx of the window register loads only if one
  // of them is set, and no compare with the kernel drives the multiplexers.
  // "Column kx loads" (k_at || k_in) is a flip-flop per tap of the column
  // (col_en_q[kx][ky], strata_reg_copies, checked against the decode): each tap's enable
  // is one LUT of it and the shift's three flip-flop and ready inputs, and
  // drives one tap's PixelWidth flip-flops, not a column's 448 through a
  // shared shift LUT (two long routes in series: to the column enable, then
  // to every clock enable of the column).
  logic [MaxKernel-1:0] k_at_d, k_at_q, k_in_d, k_in_q;
  logic [MaxKernel-1:0][MaxKernel-1:0] col_en_q;  // [kx][ky]: k_at_q[kx] || k_in_q[kx]

  // Output registers (see the header).
  logic                   out_valid_d, out_valid_q;
  logic                   out_first_q, out_last_q;
  logic [MaxKernel-1:0]   out_rows_q;
  logic [DimWidth-1:0]    out_oy_q, out_ox_q;
  logic [Taps-1:0]        out_mask_q;
  logic [CountWidth-1:0]  out_count_q;
  logic [TapIdxWidth-1:0] out_ky_lo_q, out_ky_hi_q, out_kx_lo_q, out_kx_hi_q;

  assign shift   = col_valid_i && (!out_valid_q || win_ready_i);
  assign shift_o = shift;

  // The output valid.
  always_comb begin
    if (shift) begin
      out_valid_d = col_emit_i;
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
  assign base_cols = col_clear_i ? '0 : cols_q;

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
    assign win_d[kx] = k_at_q[kx] ? col_i : right_col;
    always_comb begin
      if (k_at_q[kx]) begin
        cols_d[kx] = col_in_i;
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

  assign k_at_d = load_i ? kernel_at(kernel_i) : k_at_q;
  assign k_in_d = load_i ? kernel_in(kernel_i) : k_in_q;

  // ---------------------------------------------------------------------------
  // Flip-flops.

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
      cols_q      <= '0;
      k_at_q      <= '0;
      k_in_q      <= '0;
    end else begin
      out_valid_q <= out_valid_d;
      if (shift) cols_q <= cols_d;
      k_at_q      <= k_at_d;
      k_in_q      <= k_in_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (shift && col_emit_i) begin
      out_rows_q  <= col_rows_i;
      out_mask_q  <= tap_mask(col_rows_i, cols_d);
      out_count_q <= small_mul(popcount(col_rows_i), popcount(cols_d));
      out_ky_lo_q <= first_set(col_rows_i);
      out_ky_hi_q <= last_set(col_rows_i);
      out_kx_lo_q <= first_set(cols_d);
      out_kx_hi_q <= last_set(cols_d);
      out_oy_q    <= col_oy_i;
      out_ox_q    <= col_ox_i;
      out_first_q <= col_first_i;
      out_last_q  <= col_last_i;
    end
  end

  // ---------------------------------------------------------------------------
  // Outputs.

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
  // The kernel decode is that of the frame's kernel outside the cycle that
  // loads it (the kernel only changes the cycle before).
  `STRATA_ASSERT(wg_kernel_decode, clk_i, rst_ni, load_i
                 || ((k_at_q == kernel_at(kernel_i)) && (k_in_q == kernel_in(kernel_i))))

`ifndef SYNTHESIS
  initial begin
    assert (Lanes >= 1 && DataWidth >= 1) else $fatal(1, "strata_window_reg: empty pixel");
    assert (MaxKernel >= 1) else $fatal(1, "strata_window_reg: MaxKernel must be >= 1");
  end
`endif

endmodule : strata_window_reg
