// SPDX-License-Identifier: Apache-2.0
// Bench wrapper of strata_pe_mul: adds what the multiplier has no need for but
// a bench does, a reset and a valid bit that travels with the operand pair
// (valid_i marks the cycle the pair is presented), so the bench can check the
// latency exactly. Nothing here touches the data path. Fabric selects the
// multiplier's LUT build (strata_fabric_mul) as strata_pe's fabric lanes do.
module strata_pe_mul_tb_top
  import strata_pkg::*;
#(
  parameter bit Fabric = 1'b0  // strata_pe_mul's Fabric
) (
  input  logic                        clk_i,    // clock
  input  logic                        rst_ni,   // sync reset, active low (valid pipe)
  input  logic                        valid_i,  // a pair is presented this cycle
  input  data_t                       a_i,      // operand a
  input  data_t                       b_i,      // operand b
  output logic                        valid_o,  // p_o holds the product of a marked pair
  output logic signed [ProdWidth-1:0] p_o       // product
);

  logic [1:0] valid_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) valid_q <= '0;
    else         valid_q <= {valid_q[0], valid_i};
  end

  assign valid_o = valid_q[1];

  strata_pe_mul #(
    .Fabric (Fabric)
  ) u_mul (
    .clk_i (clk_i),
    .a_i   (a_i),
    .b_i   (b_i),
    .p_o   (p_o)
  );

endmodule : strata_pe_mul_tb_top
