// SPDX-License-Identifier: Apache-2.0
// Test fixture for scripts/synth/test_flow.py (not part of the design): a
// syntax error (missing semicolon) the flow must report with file and line.
module strata_fixture_syntax (
  input  logic a_i,  // input
  output logic y_o   // output
);
  assign y_o = a_i
endmodule : strata_fixture_syntax
