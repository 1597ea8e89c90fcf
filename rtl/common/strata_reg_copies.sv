// SPDX-License-Identifier: Apache-2.0
// Timing-only replication: copies of one register bit for a signal that
// reaches blocks placed far apart (a reset, a run, start or abort flag, a
// write enable). Every copy loads d_i (0 in reset), so the copies are equal
// at all times, and each copy drives the blocks of one client only: the
// placer puts each copy beside its client, so no single flip-flop's net
// crosses the die. Logically the copies are one register; they exist for
// placement alone, and every replicated flag of the design goes through
// this block so that the replication is visible in one place.
//
// mirror_i is the value the copies stand for: the design's own register or
// state decode that the copies replicate (`state_q == StRun`, a FIFO's full
// flag). It has no hardware; in simulation every copy is checked equal to it
// once the copies have been loaded (assertion reg_copies_mirror, below),
// so a d_i that does not follow the state it claims to copy fails the first
// bench that reaches the difference.
//
// Each copy is a one-bit register in a generate block of its own, marked
// `keep`: Yosys merges the bits of one multi-bit register that load the same
// value, `keep` or not, but not kept cells of separate blocks
// (scripts/synth/flow.py sets `keep` on the cells that drive `keep` wires;
// test synth_Ecp5Copies). Simulation starts every copy at 0, as an FPGA
// powers its flip-flops up, so the first clock edge, before rst_ni has been
// sampled, already sees the reset value.
// Latency: q_o follows d_i one cycle later.
`include "strata_assert.svh"

module strata_reg_copies #(
  parameter int unsigned Copies = 2  // copies, >= 1
) (
  input  logic              clk_i,     // clock
  input  logic              rst_ni,    // synchronous reset, active low
  input  logic              d_i,       // next value of every copy
  input  logic              mirror_i,  // what the copies equal (checked in simulation only)
  output logic [Copies-1:0] q_o        // the copies
);

  for (genvar c = 0; c < Copies; c++) begin : g_copy
    (* keep *) logic copy_q;

    always_ff @(posedge clk_i) begin
      if (!rst_ni) copy_q <= 1'b0;
      else         copy_q <= d_i;
    end

`ifndef SYNTHESIS
    initial copy_q = 1'b0;
`endif

    assign q_o[c] = copy_q;
  end

  // The check starts once every copy has been loaded from d_i (from the
  // second clock edge on: before it, a copy holds its power-up 0 and an
  // unreset mirror its power-up value), and skips the first cycle after a
  // reset (a copy loaded in reset holds 0, whatever the mirrored state's
  // reset value).
`ifndef SYNTHESIS
  logic loaded_q;  // a clock edge has loaded the copies (simulation only)

  initial loaded_q = 1'b0;

  always_ff @(posedge clk_i) loaded_q <= 1'b1;
`endif

  `STRATA_ASSERT(reg_copies_mirror, clk_i, rst_ni,
                 !loaded_q || !$past(rst_ni) || q_o == {Copies{mirror_i}})

`ifndef SYNTHESIS
  initial begin
    assert (Copies >= 1) else $fatal(1, "strata_reg_copies: Copies must be >= 1");
  end
`endif

endmodule : strata_reg_copies
