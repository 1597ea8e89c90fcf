// SPDX-License-Identifier: Apache-2.0
// Bench wrapper of strata_fabric_mul: one instance per operand shape side by
// side (slice v of p_o), all fed from the same operand and enable inputs (the
// low AWidth / BWidth bits of a_i / b_i), so one Verilated model checks every
// shape against the C++ bench's products. The shapes cover both operand
// kinds, odd and even BWidth (a signed b's sign row paired or alone) and the
// one-bit edge.
module strata_fabric_mul_tb_top #(
  localparam int unsigned Variants = 7,
  localparam int unsigned Slice    = 32  // p_o bits per variant (>= AWidth + BWidth)
) (
  input  logic                      clk_i,     // clock
  input  logic                      rst_ni,    // unused (the multiplier has no reset)
  input  logic                      ce_in_i,   // every variant's ce_in_i
  input  logic                      ce_out_i,  // every variant's ce_out_i
  input  logic [15:0]               a_i,       // operand a (low AWidth bits per variant)
  input  logic [15:0]               b_i,       // operand b (low BWidth bits per variant)
  output logic [Variants*Slice-1:0] p_o        // products, zero above AWidth + BWidth
);

  // Variant v: the C++ bench's kShapes table.
  localparam int unsigned KAWidth  [Variants] = '{8, 7, 16, 9, 5, 1, 3};
  localparam int unsigned KBWidth  [Variants] = '{8, 9, 12, 5, 16, 1, 1};
  localparam bit          KASigned [Variants] = '{1, 0, 0, 1, 1, 1, 0};
  localparam bit          KBSigned [Variants] = '{1, 1, 0, 0, 1, 1, 1};

  logic unused_rst;
  assign unused_rst = rst_ni;

  for (genvar v = 0; v < Variants; v++) begin : g_variant
    localparam int unsigned Aw = KAWidth[v];
    localparam int unsigned Bw = KBWidth[v];
    logic [Aw+Bw-1:0] p;

    strata_fabric_mul #(
      .AWidth  (Aw),
      .BWidth  (Bw),
      .ASigned (KASigned[v]),
      .BSigned (KBSigned[v])
    ) u_mul (
      .clk_i    (clk_i),
      .ce_in_i  (ce_in_i),
      .ce_out_i (ce_out_i),
      .a_i      (a_i[Aw-1:0]),
      .b_i      (b_i[Bw-1:0]),
      .p_o      (p)
    );

    assign p_o[v*Slice +: Slice] = Slice'(p);
  end

  logic unused_ab;
  assign unused_ab = ^{a_i, b_i};

endmodule : strata_fabric_mul_tb_top
