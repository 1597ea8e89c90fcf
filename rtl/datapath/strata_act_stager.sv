// SPDX-License-Identifier: Apache-2.0
// Multiplexer-based activation stager for sparse (packed) weights.
//
// Offline, zero weights are squeezed out of the time axis of a dense weight
// schedule W[t][lane]: a non-zero weight moves one cycle earlier in its own
// lane (lookahead) or one cycle earlier into a neighbouring lane (lookaside)
// when that slot is free; a dense cycle whose weights all moved disappears.
// A packed cycle therefore multiplies weights of dense cycles b and b + 1, and
// each lane must pick the activation its weight was meant for. The 2-deep
// activation window of the packed cycle, {current = act[b], next = act[b+1]},
// comes in on window_i; each lane's 2-bit select code, stored beside its weight,
// picks one of four sources (lanes wrap around, so lane 0's lower neighbour is
// lane Lanes-1):
//   SelCur  (2'b00)  current[m]          weight not moved (also: zero weight)
//   SelNext (2'b01)  next[m]             lookahead: from the next cycle, same lane
//   SelUp   (2'b10)  next[(m+1) % Lanes] lookaside: from the next cycle, lane m+1
//   SelDown (2'b11)  next[(m-1) % Lanes] lookaside: from the next cycle, lane m-1
// Combinational (no register, no clock): the PE takes act_o into its
// multiplier's activation input register, so that on an FPGA that register is
// the DSP block's own, like the weight side's. One window per cycle. Cost: one
// 4:1 multiplexer level per lane and 2 control-plane bits per weight.
// The window travels in the beat rather than in a register here: skipping a
// dense cycle advances the window by two vectors in one cycle, so the stager
// stays stateless and the PE array in lockstep.
module strata_act_stager
  import strata_cfg_pkg::DataWidth;
#(
  parameter int unsigned Lanes = strata_cfg_pkg::Lanes,  // multiplier lanes, >= 1
  localparam int unsigned SelWidth = 2                    // select code bits per lane
) (
  input  logic [1:0][Lanes-1:0][DataWidth-1:0] window_i, // [0] current, [1] next vector
  input  logic [Lanes-1:0][SelWidth-1:0]       sel_i,    // per-lane select code
  output logic [Lanes-1:0][DataWidth-1:0]      act_o     // staged activations
);

  typedef enum logic [SelWidth-1:0] {
    SelCur  = 2'b00,
    SelNext = 2'b01,
    SelUp   = 2'b10,
    SelDown = 2'b11
  } sel_e;

  for (genvar m = 0; m < Lanes; m++) begin : g_lane
    localparam int unsigned Up   = (m + 1) % Lanes;
    localparam int unsigned Down = (m + Lanes - 1) % Lanes;

    always_comb begin
      unique case (sel_e'(sel_i[m]))
        SelCur:  act_o[m] = window_i[0][m];
        SelNext: act_o[m] = window_i[1][m];
        SelUp:   act_o[m] = window_i[1][Up];
        SelDown: act_o[m] = window_i[1][Down];
        default: act_o[m] = window_i[0][m];
      endcase
    end
  end

`ifndef SYNTHESIS
  initial begin
    assert (Lanes >= 1) else $fatal(1, "strata_act_stager: Lanes must be >= 1");
  end
`endif

endmodule : strata_act_stager
