// SPDX-License-Identifier: Apache-2.0
// Bench wrapper of strata_fifo: one instance per (Depth, OutReg, WeCopies) variant side
// by side, each with its own ports (bit or slice v of the packed vectors), so
// one Verilated model checks every variant against the same C++ queue model.
module strata_fifo_tb_top #(
  parameter int unsigned Width = 16,  // payload bits of every variant
  localparam int unsigned Variants = 11,
  localparam int unsigned CountWidth = 4  // wide enough for the deepest (8)
) (
  input  logic                           clk_i,        // clock
  input  logic                           rst_ni,       // synchronous reset, active low
  input  logic [Variants-1:0]            in_valid_i,   // per variant
  output logic [Variants-1:0]            in_ready_o,
  input  logic [Variants*Width-1:0]      in_data_i,
  output logic [Variants-1:0]            out_valid_o,
  input  logic [Variants-1:0]            out_ready_i,
  output logic [Variants*Width-1:0]      out_data_o,
  output logic [Variants*CountWidth-1:0] count_o
);

  // Variant v: Depth KDepth[v], OutReg KOutReg[v], WeCopies KWeCopies[v]
  // (the C++ bench's table).
  localparam int unsigned KDepth   [Variants] = '{1, 1, 2, 2, 3, 3, 4, 5, 8, 2, 3};
  localparam bit          KOutReg  [Variants] = '{0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0};
  localparam int unsigned KWeCopies[Variants] = '{1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 5};

  for (genvar v = 0; v < Variants; v++) begin : g_variant
    localparam int unsigned Cw = $clog2(KDepth[v] + 1);
    logic [Cw-1:0] count;

    strata_fifo #(
      .Width    (Width),
      .Depth    (KDepth[v]),
      .OutReg   (KOutReg[v]),
      .WeCopies (KWeCopies[v])
    ) u_fifo (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (in_valid_i[v]),
      .in_ready_o  (in_ready_o[v]),
      .in_data_i   (in_data_i[v*Width +: Width]),
      .out_valid_o (out_valid_o[v]),
      .out_ready_i (out_ready_i[v]),
      .out_data_o  (out_data_o[v*Width +: Width]),
      .count_o     (count)
    );

    assign count_o[v*CountWidth +: CountWidth] = CountWidth'(count);
  end

endmodule : strata_fifo_tb_top
