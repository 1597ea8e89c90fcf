// SPDX-License-Identifier: Apache-2.0
// Fabric multiplier: the exact AWidth x BWidth product of two operands, each
// signed or unsigned, from LUTs and carry chains (no DSP block), with the
// ports, enables and two-cycle latency of strata_dsp_mul. It is the product a
// build places outside its DSP blocks when the device has too few of them
// (strata_pe_mul with Fabric = 1; docs/fpga.md, "The cascade").
//
//   a_i, b_i -> rows, first adder level -> [pair register, ce_in_i]
//            -> remaining adder levels -> [output register, ce_out_i] -> p_o
//
// Latency: p_o = a_i * b_i two cycles after a_i and b_i are presented with
// ce_in_i and ce_out_i high. No reset: the caller's valid bits qualify the
// data. p_o is the full product, two's complement when either operand is
// signed (AWidth + BWidth bits always hold it).
//
// The product is the sum of one row per bit of b: a, extended to the
// product's width, shifted left by the bit's position, kept where the bit is
// one; the row of a signed b's sign bit is subtracted. All sums are modulo
// 2^PWidth, which holds the exact product. The first register sits after the
// first level of a pairwise adder tree rather than at the operands, so each
// cycle holds about half of the tree (int8 x int8: the rows and one 16-bit
// addition, then two 16-bit additions) where operand registers would leave
// the whole tree in the second cycle. The pair register holds a function of
// the operands only, so ce_in_i and ce_out_i act as strata_dsp_mul's input
// and output register enables. Synthesis sees ANDs, additions and one
// subtraction, never `*`, so no DSP block is inferred.
module strata_fabric_mul #(
  parameter int unsigned AWidth  = 8,     // operand a bits
  parameter int unsigned BWidth  = 8,     // operand b bits
  parameter bit          ASigned = 1'b1,  // a is two's complement
  parameter bit          BSigned = 1'b1,  // b is two's complement
  localparam int unsigned PWidth = AWidth + BWidth
) (
  input  logic              clk_i,     // clock
  input  logic              ce_in_i,   // the pair register loads
  input  logic              ce_out_i,  // the output register loads
  input  logic [AWidth-1:0] a_i,       // operand a
  input  logic [BWidth-1:0] b_i,       // operand b
  output logic [PWidth-1:0] p_o        // registered product
);

  localparam int unsigned Pairs = (BWidth + 1) / 2;  // first-level sums

  typedef logic [PWidth-1:0] prod_t;

  // a extended to the product's width (sign or zero bits above it).
  prod_t a_ext;
  assign a_ext = ASigned ? prod_t'($signed(a_i)) : prod_t'(a_i);

  // Row i: a shifted by i where b's bit i is one.
  function automatic prod_t row(int unsigned i, prod_t a, logic [BWidth-1:0] b);
    return b[i] ? (a << i) : '0;
  endfunction

  // First level: pair k = row 2k + row 2k+1 (row 2k alone for the last pair
  // of an odd BWidth); a signed b's top row is subtracted.
  prod_t [Pairs-1:0] pair_d, pair_q;

  always_comb begin
    for (int unsigned k = 0; k < Pairs; k++) begin
      pair_d[k] = row(2 * k, a_ext, b_i);
      if (2 * k + 1 < BWidth) begin
        if (BSigned && 2 * k + 1 == BWidth - 1) pair_d[k] = pair_d[k] - row(2 * k + 1, a_ext, b_i);
        else                                    pair_d[k] = pair_d[k] + row(2 * k + 1, a_ext, b_i);
      end else if (BSigned) begin  // odd BWidth: row 2k is the sign row
        pair_d[k] = prod_t'(0) - pair_d[k];
      end
    end
  end

  // Remaining levels: a balanced tree over the registered pairs (stride w
  // adds pair k + w into pair k), then the output register.
  prod_t [Pairs-1:0] sum;
  prod_t             p_q;

  always_comb begin
    sum = pair_q;
    for (int unsigned w = 1; w < Pairs; w = 2 * w) begin
      for (int unsigned k = 0; k + w < Pairs; k = k + 2 * w) begin
        sum[k] = sum[k] + sum[k + w];
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (ce_in_i)  pair_q <= pair_d;
    if (ce_out_i) p_q    <= sum[0];
  end

  assign p_o = p_q;

`ifndef SYNTHESIS
  initial begin
    assert (AWidth >= 1 && BWidth >= 1)
      else $fatal(1, "strata_fabric_mul: operand widths must be >= 1");
  end
`endif

endmodule : strata_fabric_mul
