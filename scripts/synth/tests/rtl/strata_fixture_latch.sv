// SPDX-License-Identifier: Apache-2.0
// Test fixture for scripts/synth/test_flow.py (not part of the design): an
// incomplete always_comb that infers a latch, which the flow must reject.
module strata_fixture_latch (
  input  logic       clk_i,   // clock
  input  logic       en_i,    // latch enable
  input  logic [3:0] d_i,     // data
  output logic [3:0] q_o      // registered latch output
);
  logic [3:0] held;

  always_comb begin
    if (en_i) held = d_i;
  end

  always_ff @(posedge clk_i) q_o <= held;
endmodule : strata_fixture_latch
