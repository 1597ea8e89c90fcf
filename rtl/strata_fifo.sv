// Synchronous valid/ready FIFO (first word fall-through).
// Throughput: one push and one pop per cycle while not full. in_ready_o
// depends only on the fill level (no combinational ready path), so Depth = 2
// is a full-throughput register slice that cuts every path, valid and ready.
// in_ready_o ("not full") and out_valid_o ("not empty") are flip-flops of
// their own, loaded from the next fill level: a handshake that depends on
// them starts at a register, not at a comparison of the count. Their next
// values are selected by push and pop from comparisons of the present count
// (one LUT after the handshakes), not computed from the next count (an adder
// carry chain after them).
// Latency: a pushed word is visible at the output the cycle after the push.
// Storage is a register array: for shallow queues, not for bulk buffers.
`include "strata_assert.svh"

module strata_fifo #(
  parameter int unsigned Width = 8,  // payload bits
  parameter int unsigned Depth = 2,  // entries, >= 1
  localparam int unsigned CountWidth = $clog2(Depth + 1)
) (
  input  logic                  clk_i,      // clock
  input  logic                  rst_ni,     // synchronous reset, active low
  input  logic                  in_valid_i, // upstream has a word
  output logic                  in_ready_o, // FIFO not full
  input  logic [Width-1:0]      in_data_i,  // word pushed when valid && ready
  output logic                  out_valid_o,// FIFO not empty
  input  logic                  out_ready_i,// downstream takes the word
  output logic [Width-1:0]      out_data_o, // oldest word
  output logic [CountWidth-1:0] count_o     // words stored
);

  localparam int unsigned PtrWidth = (Depth > 1) ? $clog2(Depth) : 1;

  logic [Width-1:0]      mem_q [Depth];
  logic [PtrWidth-1:0]   wptr_d, wptr_q, rptr_d, rptr_q;
  logic [CountWidth-1:0] count_d, count_q;
  logic push, pop;
  logic in_ready_q, out_valid_q;  // count_q < Depth, count_q != 0

  assign in_ready_o  = in_ready_q;
  assign out_valid_o = out_valid_q;
  assign out_data_o  = mem_q[rptr_q];
  assign count_o     = count_q;
  assign push = in_valid_i && in_ready_o;
  assign pop  = out_valid_o && out_ready_i;

  function automatic logic [PtrWidth-1:0] next_ptr(logic [PtrWidth-1:0] p);
    return (32'(p) == Depth - 1) ? '0 : p + PtrWidth'(1);
  endfunction

  // Flags of the next count: unchanged when push == pop; a push makes the
  // FIFO non-empty and full if one entry was free; a pop makes it not full
  // and empty if it held one word.
  logic in_ready_d, out_valid_d;

  always_comb begin
    wptr_d  = push ? next_ptr(wptr_q) : wptr_q;
    rptr_d  = pop ? next_ptr(rptr_q) : rptr_q;
    count_d = count_q + CountWidth'(push) - CountWidth'(pop);
    in_ready_d  = in_ready_q;
    out_valid_d = out_valid_q;
    if (push && !pop) begin
      in_ready_d  = count_q != CountWidth'(Depth - 1);
      out_valid_d = 1'b1;
    end else if (pop && !push) begin
      in_ready_d  = 1'b1;
      out_valid_d = count_q != CountWidth'(1);
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wptr_q      <= '0;
      rptr_q      <= '0;
      count_q     <= '0;
      in_ready_q  <= 1'b1;
      out_valid_q <= 1'b0;
    end else begin
      wptr_q      <= wptr_d;
      rptr_q      <= rptr_d;
      count_q     <= count_d;
      in_ready_q  <= in_ready_d;
      out_valid_q <= out_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (push) mem_q[wptr_q] <= in_data_i;
  end

  `STRATA_ASSERT(fifo_flags, clk_i, rst_ni,
                 in_ready_q == (count_q < CountWidth'(Depth)) && out_valid_q == (count_q != '0))
  `STRATA_ASSERT_STREAM(fifo_in, clk_i, rst_ni, in_valid_i, in_ready_o, in_data_i)
  `STRATA_ASSERT_STREAM(fifo_out, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)

`ifndef SYNTHESIS
  initial begin
    assert (Depth >= 1 && Width >= 1) else $fatal(1, "strata_fifo: Depth and Width must be >= 1");
  end
`endif

endmodule : strata_fifo
