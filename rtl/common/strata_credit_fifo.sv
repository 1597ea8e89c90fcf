// SPDX-License-Identifier: Apache-2.0
// Output buffer of a fixed-latency pipeline that has no stall: credit-based
// back-pressure instead of a global enable.
//
// The pipeline upstream asks for a credit (credit_o) before it accepts a beat
// that will produce a word, reserves it (reserve_i) when the beat is accepted,
// and pushes the word some fixed number of cycles later (push_i); the push is
// never refused because every word in flight or stored holds a reserved slot.
// So out_ready_i reaches neither credit_o nor the pipeline: no combinational
// ready path and no enable fan-out across the datapath. A credit is returned
// when the word leaves on the output stream.
// Sizing: a word reserved at edge 0 and pushed at edge D can be popped at edge
// D + 1, so Depth >= D + 2 keeps one reservation per cycle (full throughput)
// while the output is drained every cycle; a smaller Depth still works but
// throttles. Latency: a pushed word is visible the cycle after the push.
// OutReg = 1: the oldest word leaves a flip-flop (strata_fifo OutReg), same
// latency and capacity.
// credit_o is a flip-flop of its own, loaded from the next reservation count
// (selected by reserve and pop from a comparison of the present count, as in
// strata_fifo: no adder between the handshakes and the flag).
`include "strata_assert.svh"

module strata_credit_fifo #(
  parameter int unsigned Width = 32,  // payload bits of an untyped word (when T is not given)
  parameter type         T = logic [Width-1:0],  // payload type (packed)
  parameter int unsigned Depth = 4,   // slots (credits), >= 1
  parameter bit          OutReg = 1'b0,  // oldest word from a flip-flop (strata_fifo OutReg)
  localparam int unsigned CountWidth = $clog2(Depth + 1)
) (
  input  logic             clk_i,       // clock
  input  logic             rst_ni,      // synchronous reset, active low
  output logic             credit_o,    // a slot is free: a beat may reserve it
  input  logic             reserve_i,   // reserve one slot (only while credit_o)
  input  logic             push_i,      // a reserved word arrives (never refused)
  input  T                 push_data_i, // the word
  output logic             out_valid_o, // a word is stored
  input  logic             out_ready_i, // downstream takes the word
  output T                 out_data_o   // oldest word
);

  logic [CountWidth-1:0] reserved_d, reserved_q;  // slots reserved and not yet popped
  logic [CountWidth-1:0] stored;                  // words in the FIFO
  logic                  fifo_ready;
  logic                  pop;

  logic                  credit_d, credit_q;        // reserved_q < Depth, a flip-flop

  assign credit_o = credit_q;
  assign pop      = out_valid_o && out_ready_i;

  always_comb begin
    reserved_d = reserved_q + CountWidth'(reserve_i) - CountWidth'(pop);
    credit_d   = credit_q;
    if (reserve_i && !pop) credit_d = reserved_q != CountWidth'(Depth - 1);
    if (pop && !reserve_i) credit_d = 1'b1;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      reserved_q <= '0;
      credit_q   <= 1'b1;
    end else begin
      reserved_q <= reserved_d;
      credit_q   <= credit_d;
    end
  end

  strata_fifo #(
    .T      (T),
    .Depth  (Depth),
    .OutReg (OutReg)
  ) u_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (push_i),
    .in_ready_o  (fifo_ready),
    .in_data_i   (push_data_i),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o),
    .count_o     (stored)
  );

  // Credits are never overdrawn, pushes always find room, and no word is
  // pushed that was not reserved.
  `STRATA_ASSERT(credit_flag, clk_i, rst_ni, credit_q == (reserved_q < CountWidth'(Depth)))
  `STRATA_ASSERT(credit_reserve_ok, clk_i, rst_ni, !reserve_i || credit_o)
  `STRATA_ASSERT(credit_push_room, clk_i, rst_ni, !push_i || fifo_ready)
  `STRATA_ASSERT(credit_stored_le_reserved, clk_i, rst_ni, stored <= reserved_q)
  `STRATA_ASSERT_STREAM(credit_out, clk_i, rst_ni, out_valid_o, out_ready_i, out_data_o)

`ifndef SYNTHESIS
  initial begin
    assert ($bits(T) >= 1 && Depth >= 1)
      else $fatal(1, "strata_credit_fifo: the payload and Depth must be >= 1");
  end
`endif

endmodule : strata_credit_fifo
