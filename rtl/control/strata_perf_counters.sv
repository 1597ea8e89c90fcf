// SPDX-License-Identifier: Apache-2.0
// Performance counters: NumCounters 64-bit counters, each adding its
// increment (0..2^IncWidth - 1) every cycle while enable_i is high.
// clear_i zeroes all of them (the controller pulses it at START); clear wins
// over counting in the same cycle. Increments are registered once before the
// adders (so long strobe paths from the engines end in a flip-flop), which
// delays every count by one cycle: a run's counts are final one cycle after
// enable_i falls, before software can read them.
// Counters wrap at 2^64 (not reachable in practice).
module strata_perf_counters #(
  parameter int unsigned NumCounters = strata_csr_pkg::NumPerfCounters,  // counters
  parameter int unsigned IncWidth    = 16                                // increment bits
) (
  input  logic                                clk_i,     // clock
  input  logic                                rst_ni,    // synchronous reset, active low
  input  logic                                clear_i,   // zero every counter
  input  logic                                enable_i,  // count this cycle's increments
  input  logic [NumCounters-1:0][IncWidth-1:0] inc_i,    // increment per counter
  output logic [NumCounters*64-1:0]           count_o    // counter c at bits [64c +: 64]
);

  logic [NumCounters-1:0][IncWidth-1:0] inc_d, inc_q;
  logic [NumCounters-1:0][63:0]         count_d, count_q;

  assign inc_d = (enable_i && !clear_i) ? inc_i : '0;

  for (genvar c = 0; c < NumCounters; c++) begin : g_counter
    assign count_d[c] = clear_i ? 64'd0 : count_q[c] + 64'(inc_q[c]);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) inc_q <= '0;
    else         inc_q <= inc_d;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) count_q <= '0;
    else         count_q <= count_d;
  end

  assign count_o = count_q;

`ifndef SYNTHESIS
  initial begin
    assert (NumCounters >= 1 && IncWidth >= 1 && IncWidth <= 32)
      else $fatal(1, "strata_perf_counters: NumCounters >= 1, IncWidth 1..32");
  end
`endif

endmodule : strata_perf_counters
