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
module strata_stride_span (
  input  logic        clk_i,      // clock
  input  logic        load_i,     // the input registers load rows_m1_i, stride_i
  input  logic [15:0] rows_m1_i,  // rows - 1
  input  logic [23:0] stride_i,   // external row stride (bytes)
  output logic [27:0] lo_o,       // (rows - 1) * stride[11:0]
  output logic [27:0] hi_o        // (rows - 1) * stride[23:12]
);

  strata_dsp_mul #(.AWidth (16), .BWidth (12), .ASigned (1'b0), .BSigned (1'b0)) u_lo (
    .clk_i    (clk_i),
    .ce_in_i  (load_i),
    .ce_out_i (1'b1),
    .a_i      (rows_m1_i),
    .b_i      (stride_i[11:0]),
    .p_o      (lo_o)
  );

  strata_dsp_mul #(.AWidth (16), .BWidth (12), .ASigned (1'b0), .BSigned (1'b0)) u_hi (
    .clk_i    (clk_i),
    .ce_in_i  (load_i),
    .ce_out_i (1'b1),
    .a_i      (rows_m1_i),
    .b_i      (stride_i[23:12]),
    .p_o      (hi_o)
  );

endmodule : strata_stride_span
