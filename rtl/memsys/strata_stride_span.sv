// SPDX-License-Identifier: Apache-2.0
// Span of a strided 2-D transfer for the load and store engines' range
// check (strata_xfer_check): (rows - 1) x the 24-bit external row stride, as
// two DSP products of the stride's halves (16 x 12 bits each, so each fits
// one 18 x 18 multiplier): span = lo_o + (hi_o << 12). The caller adds them
// into its range end (one adder, not a third product).
//
// Both registers of each multiplier are the DSP's own (strata_dsp_mul): the
// input registers load while load_i is high, the output register every
// cycle, so no route to the DSP and back shares a cycle. The engines hold
// load_i high while idle, so the edge that takes an instruction loads its
// fields and the products are valid one cycle later until the next load.
// Latency: the products of the operands loaded at an edge show after the
// next edge (and stay while load_i is low).
module strata_stride_span #(
  parameter int unsigned RowsWidth   = strata_isa_pkg::LoadRowsWidth,          // rows field bits
  parameter int unsigned StrideWidth = strata_isa_pkg::LoadExtRowStrideWidth,  // stride field bits
  // The stride splits at bit SplitLsb (its low half: one 18 x 18 DSP with the rows).
  localparam int unsigned SplitLsb   = 12,
  localparam int unsigned LoWidth    = RowsWidth + SplitLsb,
  localparam int unsigned HiWidth    = RowsWidth + StrideWidth - SplitLsb
) (
  input  logic                   clk_i,      // clock
  input  logic                   load_i,     // the input registers load rows_m1_i, stride_i
  input  logic [RowsWidth-1:0]   rows_m1_i,  // rows - 1
  input  logic [StrideWidth-1:0] stride_i,   // external row stride (bytes)
  output logic [LoWidth-1:0]     lo_o,       // (rows - 1) * stride[11:0]
  output logic [HiWidth-1:0]     hi_o        // (rows - 1) * stride[23:12]
);

  strata_dsp_mul #(
    .AWidth  (RowsWidth),
    .BWidth  (SplitLsb),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_lo (
    .clk_i    (clk_i),
    .ce_in_i  (load_i),
    .ce_out_i (1'b1),
    .a_i      (rows_m1_i),
    .b_i      (stride_i[SplitLsb-1:0]),
    .p_o      (lo_o)
  );

  strata_dsp_mul #(
    .AWidth  (RowsWidth),
    .BWidth  (StrideWidth - SplitLsb),
    .ASigned (1'b0),
    .BSigned (1'b0)
  ) u_hi (
    .clk_i    (clk_i),
    .ce_in_i  (load_i),
    .ce_out_i (1'b1),
    .a_i      (rows_m1_i),
    .b_i      (stride_i[StrideWidth-1:SplitLsb]),
    .p_o      (hi_o)
  );

`ifndef SYNTHESIS
  initial begin
    assert (StrideWidth > SplitLsb)
      else $fatal(1, "strata_stride_span: the stride must be wider than %0d bits", SplitLsb);
  end
`endif

endmodule : strata_stride_span
