// SPDX-License-Identifier: Apache-2.0
// PE multiplier: one int8 x int8 -> 16-bit signed product with its input and
// output registers, written so that an FPGA's DSP block holds all of them.
//
//   a_i, b_i -> [input registers] -> multiply -> [output register] -> p_o
//
// Latency: p_o = a_i * b_i two cycles after a_i and b_i are presented.
// Throughput: one product per cycle. No reset, no enable: the caller's valid
// bits qualify the data (the registers always load).
//
// Fabric = 0: the registers and the multiply are strata_dsp_mul's (int8 x
// int8, both signed, enables tied high): on ECP5 one MULT18X18D with
// REG_INPUTA/B and REG_OUTPUT, so each PE's copy of the broadcast operand
// stays in its own DSP (as fabric flip-flops, the identical operand registers
// of all PEs of an array would merge into one); elsewhere behavioural
// registers around `*`.
// Fabric = 1: strata_fabric_mul, the same product and latency from LUTs and
// carry chains (its first register holds partial sums, not the operands), for
// a build with more products than its device has DSP blocks.
module strata_pe_mul
  import strata_cfg_pkg::DataWidth;
  import strata_pkg::*;
#(
  parameter bit Fabric = 1'b0  // 1: the product in LUTs, not a DSP block
) (
  input  logic                        clk_i,  // clock
  input  data_t                       a_i,    // operand a (registered here)
  input  data_t                       b_i,    // operand b (registered here)
  output logic signed [ProdWidth-1:0] p_o     // registered product
);

  logic [ProdWidth-1:0] p;

  if (Fabric) begin : g_fabric
    strata_fabric_mul #(
      .AWidth  (DataWidth),
      .BWidth  (DataWidth),
      .ASigned (1'b1),
      .BSigned (1'b1)
    ) u_fabric (
      .clk_i    (clk_i),
      .ce_in_i  (1'b1),
      .ce_out_i (1'b1),
      .a_i      (a_i),
      .b_i      (b_i),
      .p_o      (p)
    );
  end else begin : g_dsp
    strata_dsp_mul #(
      .AWidth  (DataWidth),
      .BWidth  (DataWidth),
      .ASigned (1'b1),
      .BSigned (1'b1)
    ) u_dsp (
      .clk_i    (clk_i),
      .ce_in_i  (1'b1),
      .ce_out_i (1'b1),
      .a_i      (a_i),
      .b_i      (b_i),
      .p_o      (p)
    );
  end

  assign p_o = signed'(p);

endmodule : strata_pe_mul
