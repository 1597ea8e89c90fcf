// SPDX-License-Identifier: Apache-2.0
// Avg-pool unit (background item 2 "avg-pool unit: adder array + divider array that
// divides by the number of elements actually in the window"): per lane
//   y = floor((2 * sum + n) / (2 * n))   (strata::avg_round)
// over the n valid taps of a window (mask bits set; n >= 1).
//
// Adder array: a pipelined adder tree (strata_pool_tree, Op = PoolAvg) sums
// the valid taps; n = popcount(mask) travels alongside.
// Divider array, without a divider: with u = sum + 2^(D-1) * n (the sum of
// the taps offset to unsigned, u in [0, (2^D - 1) n]) and x = 2u + n,
//   y + 2^(D-1) = floor(x / (2n)) = (x * R[n]) >> F,
//   R[n] = ceil(2^F / (2n)) from a Kernel^2-entry table, F = XBits + L,
// where x < 2^XBits and 2^L >= 2 * Kernel^2. This is exact for every x, n
// (Granlund-Montgomery: R[n] = (2^F + e) / 2n with 0 <= e < 2n <= 2^L, so
// x * R[n] / 2^F = x / 2n + x e / (2n 2^F) and the error term stays below
// 1 / 2n, too small to cross the next integer); the bench checks every
// reachable (sum, n) pair against strata::avg_round. One multiplier per lane
// (13 x 18 bits for 3x3 windows), inputs and product registered so synthesis
// places both register levels inside the DSP block. Subtracting 2^(D-1)
// again is an inversion of the top bit of the 8-bit quotient.
//
// Latency: max(1, ceil(log2(Kernel^2))) tree stages + 2 (6 for 3x3).
// Throughput: one window per cycle.
`include "strata_assert.svh"

module strata_avgpool #(
  parameter int unsigned Lanes     = strata_cfg_pkg::Lanes,          // channels in parallel
  parameter int unsigned DataWidth = strata_cfg_pkg::DataWidth,      // signed element bits (D)
  parameter int unsigned Kernel    = strata_cfg_pkg::MaxPoolKernel,  // window side (taps k x k)
  parameter int unsigned UserWidth = 1,                              // sideband bits
  localparam int unsigned Taps = Kernel * Kernel
) (
  input  logic                           clk_i,        // clock
  input  logic                           rst_ni,       // synchronous reset, active low
  input  logic                           in_valid_i,   // window offered
  output logic                           in_ready_o,   // window taken
  input  logic [Taps*Lanes*DataWidth-1:0] in_taps_i,   // tap t = ky*Kernel + kx, lane l at
                                                       // (t*Lanes + l)*DataWidth
  input  logic [Taps-1:0]                in_mask_i,    // bit t: tap inside the image (one at least)
  input  logic [UserWidth-1:0]           in_user_i,    // sideband, carried along
  output logic                           out_valid_o,  // pooled pixel vector offered
  input  logic                           out_ready_i,  // pooled pixel vector taken
  output logic [Lanes*DataWidth-1:0]     out_data_o,   // lane l at l*DataWidth
  output logic [UserWidth-1:0]           out_user_o    // sideband of this window
);

  localparam int unsigned CountWidth = $clog2(Taps + 1);
  localparam int unsigned SumWidth   = DataWidth + ((Taps > 1) ? $clog2(Taps) : 0);
  localparam int unsigned XBits      = $clog2(2 * (2 ** DataWidth - 1) * Taps + Taps + 1);
  localparam int unsigned L          = $clog2(2 * Taps);
  localparam int unsigned F          = XBits + L;
  localparam int unsigned RWidth     = F;  // R[1] = 2^(F-1)
  localparam int unsigned PWidth     = XBits + RWidth;

  typedef logic [RWidth-1:0] recip_t;

  // ceil(2^F / (2n)); evaluated at elaboration only (table contents).
  function automatic recip_t recip(int unsigned n);
    longint unsigned num, den;
    num = longint'(1) << F;
    den = 2 * longint'(n);
    return recip_t'((num + den - 1) / den);
  endfunction

  function automatic logic [CountWidth-1:0] popcount(logic [Taps-1:0] v);
    logic [CountWidth-1:0] n;
    n = '0;
    for (int unsigned i = 0; i < Taps; i++) n += CountWidth'(v[i]);
    return n;
  endfunction

  // ---------------------------------------------------------------------------
  // Adder array.

  logic                                tree_valid, tree_ready;
  logic [Lanes*SumWidth-1:0]           tree_sum;
  logic [CountWidth+UserWidth-1:0]     tree_user;

  strata_pool_tree #(
    .Op        (strata_pkg::PoolAvg),
    .Lanes     (Lanes),
    .InWidth   (DataWidth),
    .Taps      (Taps),
    .OutWidth  (SumWidth),
    .UserWidth (CountWidth + UserWidth)
  ) u_adders (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready_o),
    .in_taps_i   (in_taps_i),
    .in_mask_i   (in_mask_i),
    .in_user_i   ({popcount(in_mask_i), in_user_i}),
    .out_valid_o (tree_valid),
    .out_ready_i (tree_ready),
    .out_data_o  (tree_sum),
    .out_user_o  (tree_user)
  );

  // ---------------------------------------------------------------------------
  // Reciprocal table (a Taps + 1 entry ROM; R[0] = 0 is never used).

  recip_t recip_rom [Taps+1];
  assign recip_rom[0] = '0;
  for (genvar n = 1; n <= Taps; n++) begin : g_recip
    localparam recip_t R = recip(n);
    assign recip_rom[n] = R;
  end

  // ---------------------------------------------------------------------------
  // Divider array: stage A registers the multiplier operands, stage B the
  // product, both inside the DSP block (strata_dsp_mul, one per lane).

  logic                  a_valid_q, a_ready, b_valid_q, b_ready;
  logic [CountWidth-1:0] tree_n;
  logic [UserWidth-1:0]  a_user_q, b_user_q;
  logic [XBits-1:0]      x_d [Lanes];
  recip_t                r_d;
  logic [PWidth-1:0]     p_q [Lanes];

  assign tree_n     = tree_user[UserWidth +: CountWidth];
  assign b_ready    = !b_valid_q || out_ready_i;
  assign a_ready    = !a_valid_q || b_ready;
  assign tree_ready = a_ready;

  // x = 2u + n = 2 sum + (2^D + 1) n: one adder of the doubled sum and
  // (2^D + 1) n feeds the DSP, and (2^D + 1) n is n written twice ({n, n} in
  // D-bit halves) whenever n < 2^D, i.e. Taps < 2^D (else a constant
  // multiple). x is in [0, 2^XBits) (every tap is >= -2^(D-1)), so the sum
  // modulo 2^XBits is x itself.
  logic [XBits-1:0] n_offset;  // (2^D + 1) n

  if (CountWidth <= DataWidth) begin : g_offset_pattern
    assign n_offset = XBits'({DataWidth'(tree_n), DataWidth'(tree_n)});
  end else begin : g_offset_mul
    assign n_offset = XBits'(tree_n) * XBits'(2 ** DataWidth + 1);
  end

  always_comb begin
    for (int unsigned ln = 0; ln < Lanes; ln++) begin
      logic [XBits-1:0] sum2;  // 2 sum, modulo 2^XBits
      sum2    = XBits'($signed({tree_sum[ln*SumWidth +: SumWidth], 1'b0}));
      x_d[ln] = sum2 + n_offset;
    end
  end

  assign r_d = recip_rom[tree_n];

  for (genvar ln = 0; ln < Lanes; ln++) begin : g_div
    strata_dsp_mul #(
      .AWidth  (XBits),
      .BWidth  (RWidth),
      .ASigned (1'b0),
      .BSigned (1'b0)
    ) u_mul (
      .clk_i    (clk_i),
      .ce_in_i  (a_ready),  // a_valid_q qualifies the operands
      .ce_out_i (b_ready),  // b_valid_q qualifies the product
      .a_i      (x_d[ln]),
      .b_i      (r_d),
      .p_o      (p_q[ln])
    );
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      a_valid_q <= 1'b0;
      b_valid_q <= 1'b0;
    end else begin
      if (a_ready) a_valid_q <= tree_valid;
      if (b_ready) b_valid_q <= a_valid_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (a_ready) a_user_q <= tree_user[UserWidth-1:0];
    if (b_ready) b_user_q <= a_user_q;
  end

  // q = p >> F is in [0, 2^D - 1]; y = q - 2^(D-1) flips its top bit. The
  // product bits below F are the discarded fraction; those above q are zero.
  for (genvar ln = 0; ln < Lanes; ln++) begin : g_out
    logic [DataWidth-1:0]          q;
    logic [PWidth-F-DataWidth-1:0] q_high;
    logic                          unused_fraction;
    assign q               = p_q[ln][F +: DataWidth];
    assign q_high          = p_q[ln][PWidth-1:F+DataWidth];
    assign unused_fraction = ^p_q[ln][F-1:0];
    assign out_data_o[ln*DataWidth +: DataWidth] = {~q[DataWidth-1], q[DataWidth-2:0]};
    `STRATA_ASSERT(avg_quotient_range, clk_i, rst_ni, !b_valid_q || (q_high == '0))
  end

  assign out_valid_o = b_valid_q;
  assign out_user_o  = b_user_q;

  // ---------------------------------------------------------------------------
  // Assertions.

  `STRATA_ASSERT_STREAM(avg_in, clk_i, rst_ni, in_valid_i, in_ready_o,
                        {in_taps_i, in_mask_i, in_user_i})
  `STRATA_ASSERT_STREAM(avg_out, clk_i, rst_ni, out_valid_o, out_ready_i,
                        {out_data_o, out_user_o})
  // An empty window has no average; the window generator never sends one.
  `STRATA_ASSERT(avg_nonempty, clk_i, rst_ni, !in_valid_i || (in_mask_i != '0))

`ifndef SYNTHESIS
  initial begin
    assert (Kernel >= 1 && Lanes >= 1 && DataWidth >= 2)
      else $fatal(1, "strata_avgpool: Kernel, Lanes >= 1 and DataWidth >= 2 required");
    assert (F < 63) else $fatal(1, "strata_avgpool: reciprocal precision %0d too large", F);
  end
`endif

endmodule : strata_avgpool
