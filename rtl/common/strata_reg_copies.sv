// Copies of one register bit for a signal that reaches blocks placed far
// apart (a reset, a run or abort flag): every copy loads d_i (0 in
// reset), so the copies are equal at all times, and
// each copy drives the blocks of one client only. The placer puts each copy
// beside its client, so no single flip-flop's net crosses the die.
//
// Each copy is a one-bit register in a generate block of its own, marked
// `keep`: Yosys merges the bits of one multi-bit register that load the same
// value, `keep` or not, but not kept cells of separate blocks
// (scripts/synth/flow.py sets `keep` on the cells that drive `keep` wires;
// test synth_Ecp5Copies). Simulation starts every copy at 0, as an FPGA
// powers its flip-flops up, so the first clock edge, before rst_ni has been
// sampled, already sees the reset value.
// Latency: q_o follows d_i one cycle later.
module strata_reg_copies #(
  parameter int unsigned Copies = 2  // copies, >= 1
) (
  input  logic              clk_i,   // clock
  input  logic              rst_ni,  // synchronous reset, active low
  input  logic              d_i,     // next value of every copy
  output logic [Copies-1:0] q_o      // the copies
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

`ifndef SYNTHESIS
  initial begin
    assert (Copies >= 1) else $fatal(1, "strata_reg_copies: Copies must be >= 1");
  end
`endif

endmodule : strata_reg_copies
