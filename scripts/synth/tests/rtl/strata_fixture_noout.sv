// SPDX-License-Identifier: Apache-2.0
// Test fixture for scripts/synth/test_flow.py (not part of the design): a
// module without outputs, which the harness cannot observe.
module strata_fixture_noout (
  input  logic clk_i,  // clock
  input  logic a_i     // input
);
endmodule : strata_fixture_noout
