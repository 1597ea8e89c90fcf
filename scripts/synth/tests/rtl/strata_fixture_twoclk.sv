// SPDX-License-Identifier: Apache-2.0
// Test fixture for scripts/synth/test_flow.py (not part of the design): two
// clock inputs; the harness drives exactly one clock (clk_i).
module strata_fixture_twoclk (
  input  logic clk_i,      // clock
  input  logic aux_clk_i,  // second clock
  input  logic a_i,        // data
  output logic y_o         // data, registered on aux_clk_i
);
  always_ff @(posedge aux_clk_i) y_o <= a_i;
endmodule : strata_fixture_twoclk
